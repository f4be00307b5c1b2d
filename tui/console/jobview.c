/* The jobs and libraries panels' filter and sort, and the count words
 * (jobview.h). */
#define _GNU_SOURCE /* qsort_r */
#include "jobview.h"
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "numtext.h"
#include "progress.h"

const char *tui_job_sort_name(tui_job_sort s)
{
	static const char *const names[JOB_SORT__COUNT] = {"unfinished", "phase", "progress", "newest"};

	return s >= 0 && s < JOB_SORT__COUNT ? names[s] : "?";
}

/* Case-insensitive (ASCII) search of NEEDLE (LEN bytes) in HAY. */
static bool contains(const char *hay, const char *needle, size_t len)
{
	size_t i, j, n = strlen(hay);

	if (len == 0)
		return true;
	for (i = 0; i + len <= n; i++) {
		for (j = 0; j < len; j++)
			if (tolower((unsigned char)hay[i + j]) != tolower((unsigned char)needle[j]))
				break;
		if (j == len)
			return true;
	}
	return false;
}

bool tui_words_in(const char *text, const char *filter)
{
	const char *p = filter;

	while (*p) {
		size_t len;

		while (*p == ' ')
			p++;
		len = strcspn(p, " ");
		if (len > 0 && !contains(text, p, len))
			return false;
		p += len;
	}
	return true;
}

bool tui_job_matches(const cleanup_mon_job *v, const char *filter)
{
	const cleanup_job *j = &v->job;
	bool server = strcmp(j->kind, "remove-server") == 0;
	char text[CLEANUP_NAME_SIZE + 256];

	if (!filter || !*filter)
		return true;
	snprintf(text, sizeof text, "%" PRId64 " %s %s %" PRId64 " %s %s %s", j->id, j->kind, server ? "srv" : "lib",
	         server ? j->server_id : j->library_id, j->target_name, j->phase, v->runner_app);
	return tui_words_in(text, filter);
}

static int phase_rank(const char *phase)
{
	static const char *const order[] = {"finalizing", "draining", "collecting", "paused", "completed", "cancelled"};
	size_t i;

	for (i = 0; i < sizeof order / sizeof order[0]; i++)
		if (strcmp(phase, order[i]) == 0)
			return (int)i;
	return (int)(sizeof order / sizeof order[0]);
}

/* Settled share in [0, 1]; unknown totals and unfinished collecting sort as 0. */
static double share(const cleanup_job *j)
{
	int64_t total = tui_progress_total(j), done = tui_progress_done(j);

	if (total <= 0)
		return strcmp(j->phase, "completed") == 0 ? 1.0 : 0.0;
	return done >= total ? 1.0 : (double)done / (double)total;
}

/* -1, 0 or 1 as A sorts before, with or after B. */
static int compare_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/* What a view sorts: the jobs or the libraries, and by what. */
typedef struct view_ctx {
	const cleanup_mon_job *jobs; /* NULL: the libraries */
	const cleanup_mon_library *libs;
	int sort; /* a tui_job_sort or a tui_lib_sort */
} view_ctx;

/* The indexes of the first MAX of CTX's N rows that FILTER keeps, in OUT
 * sorted by COMPARE; returns their count. */
static size_t view(size_t *out, size_t max, size_t n, const char *filter,
                   int (*compare)(const void *a, const void *b, void *ctx), view_ctx *ctx)
{
	size_t i, k = 0;

	for (i = 0; i < n && k < max; i++)
		if (ctx->jobs ? tui_job_matches(&ctx->jobs[i], filter) : tui_lib_matches(&ctx->libs[i], filter))
			out[k++] = i;
	qsort_r(out, k, sizeof *out, compare, ctx);
	return k;
}

static int compare(const void *a, const void *b, void *arg)
{
	const view_ctx *ctx = arg;
	const cleanup_job *x = &ctx->jobs[*(const size_t *)a].job, *y = &ctx->jobs[*(const size_t *)b].job;
	int c = 0;

	if (ctx->sort == JOB_SORT_UNFINISHED) {
		c = compare_i64(cleanup_job_phase_is_final(x->phase), cleanup_job_phase_is_final(y->phase));
	} else if (ctx->sort == JOB_SORT_PHASE) {
		c = compare_i64(phase_rank(x->phase), phase_rank(y->phase));
	} else if (ctx->sort == JOB_SORT_PROGRESS) {
		double sx = share(x), sy = share(y);

		c = (sx > sy) - (sx < sy);
	}
	return c ? c : compare_i64(y->id, x->id); /* then newest first */
}

size_t tui_jobs_view(size_t *out, size_t max, const cleanup_mon_job *jobs, size_t n, const char *filter,
                     tui_job_sort sort)
{
	view_ctx ctx = {jobs, NULL, (int)sort};

	return view(out, max, n, filter, compare, &ctx);
}

/* ---- libraries ------------------------------------------------------ */

const char *tui_lib_sort_name(tui_lib_sort s)
{
	static const char *const names[LIB_SORT__COUNT] = {"server", "name", "items", "count state"};

	return s >= 0 && s < LIB_SORT__COUNT ? names[s] : "?";
}

tui_count_kind tui_count_kind_of(const char *state, const char *reason)
{
	if (strcmp(state, "unwatched") == 0 || !*state)
		return COUNT_COUNTER;
	if (strcmp(state, "fresh") == 0)
		return COUNT_FRESH;
	if (strcmp(state, "dirty") == 0)
		return COUNT_STALE;
	if (strcmp(state, "expired") == 0)
		return COUNT_EXPIRED;
	if (strcmp(state, "withheld") == 0) {
		if (strncmp(reason, "building", 8) == 0)
			return COUNT_BUILDING;
		if (strncmp(reason, "restart required", 16) == 0)
			return COUNT_RESTART;
		return COUNT_WITHHELD;
	}
	return COUNT_UNKNOWN;
}

const char *tui_count_state_text(char *buf, size_t len, const cleanup_mon_library *l)
{
	static const char *const words[] = {"counter", "fresh", "~stale", "expired", "building", "restart"};
	tui_count_kind k = tui_count_kind_of(l->count_state, l->count_reason);

	if (k == COUNT_WITHHELD) {
		/* the reason's first word: "capacity", "busy", ... */
		size_t w = strcspn(l->count_reason, ": ,");

		snprintf(buf, len, "withheld%s%.*s", w ? ": " : "", (int)(w < 24 ? w : 24), l->count_reason);
	} else if (k == COUNT_UNKNOWN) {
		snprintf(buf, len, "%.24s", l->count_state);
	} else {
		snprintf(buf, len, "%s", words[k]);
	}
	return buf;
}

const char *tui_count_items_text(char *buf, size_t len, const cleanup_mon_library *l,
                                 const char *(*num)(char *, size_t, int64_t))
{
	tui_count_kind k = tui_count_kind_of(l->count_state, l->count_reason);
	char n[32];

	if (l->row.item_count < 0 || k == COUNT_BUILDING || k == COUNT_RESTART || k == COUNT_WITHHELD)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s%s", k == COUNT_STALE || k == COUNT_EXPIRED ? "~" : "", num(n, sizeof n, l->row.item_count));
	return buf;
}

bool tui_lib_matches(const cleanup_mon_library *l, const char *filter)
{
	char text[CLEANUP_NAME_SIZE + 256], state[48];

	if (!filter || !*filter)
		return true;
	tui_count_state_text(state, sizeof state, l);
	snprintf(text, sizeof text, "%" PRId64 " srv %" PRId64 " %s %.20s %.40s", l->row.id, l->row.server_id, l->row.name,
	         l->row.admission, state);
	if (l->row.job_id > 0) {
		size_t k = strlen(text);

		snprintf(text + k, sizeof text - k, " job %" PRId64 " %s %s", l->row.job_id, l->job_kind, l->job_phase);
	}
	return tui_words_in(text, filter);
}

/* Count states, worst first (LIB_SORT_COUNT). */
static int count_rank(const cleanup_mon_library *l)
{
	static const int rank[] = {
		[COUNT_RESTART] = 0, [COUNT_WITHHELD] = 1, [COUNT_UNKNOWN] = 2, [COUNT_BUILDING] = 3,
		[COUNT_EXPIRED] = 4, [COUNT_STALE] = 5,    [COUNT_FRESH] = 6,   [COUNT_COUNTER] = 7,
	};

	return rank[tui_count_kind_of(l->count_state, l->count_reason)];
}

/* A library's items for LIB_SORT_ITEMS: -1 while its count is not known. */
static int64_t sort_items(const cleanup_mon_library *l)
{
	return tui_count_kind_of(l->count_state, l->count_reason) >= COUNT_BUILDING ? -1 : l->row.item_count;
}

static int compare_libs(const void *a, const void *b, void *arg)
{
	const view_ctx *ctx = arg;
	const cleanup_mon_library *x = &ctx->libs[*(const size_t *)a], *y = &ctx->libs[*(const size_t *)b];
	int c = 0;

	if (ctx->sort == LIB_SORT_NAME)
		c = strcasecmp(x->row.name, y->row.name);
	else if (ctx->sort == LIB_SORT_ITEMS)
		c = compare_i64(sort_items(y), sort_items(x)); /* most first */
	else if (ctx->sort == LIB_SORT_COUNT)
		c = compare_i64(count_rank(x), count_rank(y));
	if (!c)
		c = compare_i64(x->row.server_id, y->row.server_id);
	return c ? c : compare_i64(x->row.id, y->row.id);
}

size_t tui_libs_view(size_t *out, size_t max, const cleanup_mon_library *libs, size_t n, const char *filter,
                     tui_lib_sort sort)
{
	view_ctx ctx = {NULL, libs, (int)sort};

	return view(out, max, n, filter, compare_libs, &ctx);
}

/* The columns' widths, each with the blank before it. */
#define COL_STEP 6
#define COL_COUNTER 5
#define COL_LOCK 8
#define COL_DUR 8
#define COL_AT 9
#define COL_GAP 7

int tui_step_cols_width(const tui_step_cols *c, int cursor_w, int end_w)
{
	int w = COL_STEP + 1 + c->action_w + COL_AT + COL_GAP, k;

	for (k = 0; k < TUI_STEP_COUNTERS; k++)
		if (c->counters & (1u << k))
			w += COL_COUNTER;
	w += c->lock ? COL_LOCK : 0;
	w += c->dur ? COL_DUR : 0;
	w += c->runner ? TUI_STEP_RUNNER_W + 1 : c->tag ? TUI_RUNNER_TAG_W + 1 : 0;
	w += c->cursor ? cursor_w : c->cursor_end ? end_w : 0;
	return w;
}

tui_step_cols tui_step_columns(int w, int cursor_w, int end_w)
{
	/* the counters in the order they give way: CLM, DEP, KEPT, RET, ABS, MOV */
	static const int counter_order[] = {7, 6, 5, 4, 3, 2};
	tui_step_cols c;
	int step;

	memset(&c, 0, sizeof c);
	c.dur = c.runner = c.cursor = c.lock = true;
	c.action_w = 12;
	c.counters = (1u << TUI_STEP_COUNTERS) - 1;
	for (step = 0; tui_step_cols_width(&c, cursor_w, end_w) > w && step < 13; step++) {
		switch (step) {
		case 0: /* the full runner: a short tag */
			c.runner = false;
			c.tag = true;
			break;
		case 1:
			c.dur = false;
			break;
		case 2: /* the whole cursor: its end */
			c.cursor = false;
			c.cursor_end = true;
			break;
		case 3:
		case 4:
		case 5:
		case 6:
		case 7:
		case 8:
			c.counters &= ~(1u << counter_order[step - 3]);
			break;
		case 9:
			c.action_w = 8;
			break;
		case 10:
			c.lock = false;
			break;
		case 11:
			c.cursor_end = false;
			break;
		default:
			c.tag = false;
			break;
		}
	}
	/* the duration back, when it fits after all */
	if (!c.dur && tui_step_cols_width(&c, cursor_w, end_w) + COL_DUR <= w)
		c.dur = true;
	c.width = tui_step_cols_width(&c, cursor_w, end_w);
	return c;
}

const cleanup_mon_step *tui_step_prev(const cleanup_mon_step *steps, size_t n, const cleanup_mon_step *s)
{
	size_t i, at = (size_t)(s - steps);

	if (at + 1 < n && steps[at + 1].step_no == s->step_no - 1)
		return &steps[at + 1];
	for (i = 0; i < n; i++) /* a page with a hole, or out of order */
		if (steps[i].step_no == s->step_no - 1)
			return &steps[i];
	return NULL;
}

unsigned tui_step_gap(const cleanup_mon_step *prev, const cleanup_mon_step *s, double threshold_s)
{
	unsigned why = 0;

	if (s->gap_s >= threshold_s)
		why |= TUI_GAP_TIME;
	if (!prev)
		return why;
	if (s->runner_pid > 0 || prev->runner_pid > 0) {
		char a[40], b[40];

		tui_runner_tag(a, sizeof a, prev->runner_pid, prev->runner_app);
		tui_runner_tag(b, sizeof b, s->runner_pid, s->runner_app);
		if (strcmp(a, b) != 0)
			why |= TUI_GAP_RUNNER;
	}
	if (prev->library_id > 0 && prev->library_id == s->library_id && prev->pass_no == s->pass_no &&
	    prev->cursor_to >= 0 && s->cursor_from >= 0 && prev->cursor_to != s->cursor_from)
		why |= TUI_GAP_CURSOR;
	return why;
}

/* "2m13s" as the GAP column says it, "0.4s" below 10 s. */
static const char *gap_age(char *buf, size_t len, double s)
{
	if (s >= 0 && s < 10)
		snprintf(buf, len, "%.1fs", s);
	else
		tui_duration_text(buf, len, s);
	return buf;
}

const char *tui_step_gap_text(char *buf, size_t len, const cleanup_mon_step *prev, const cleanup_mon_step *s,
                              unsigned why)
{
	char a[40], b[40], age[32];
	size_t l;

	buf[0] = '\0';
	if (why & TUI_GAP_RUNNER) {
		tui_runner_tag(a, sizeof a, prev->runner_pid, prev->runner_app);
		tui_runner_tag(b, sizeof b, s->runner_pid, s->runner_app);
		snprintf(buf, len, "runner changed: %s -> %s after %s", a, b, gap_age(age, sizeof age, s->gap_s));
	} else if (why & TUI_GAP_TIME) {
		tui_runner_tag(b, sizeof b, s->runner_pid, s->runner_app);
		snprintf(buf, len, "stopped %s, same runner %s", gap_age(age, sizeof age, s->gap_s),
		         prev ? b : "(the step before is not read)");
		if (!prev)
			snprintf(buf, len, "stopped %s before it", gap_age(age, sizeof age, s->gap_s));
	}
	if (why & TUI_GAP_CURSOR) {
		l = strlen(buf);
		snprintf(buf + l, len - l, "%scursor did not continue: step %d ended at %s, step %d began at %s (library %" PRId64
		         ")", l ? "; " : "", prev->step_no, tui_count_text(a, sizeof a, prev->cursor_to), s->step_no,
		         tui_count_text(b, sizeof b, s->cursor_from), s->library_id);
	}
	return buf;
}

int tui_step_find_gap(const cleanup_mon_step *steps, size_t n, int from_no, int dir, double threshold_s,
                      unsigned *why)
{
	int best = -1;
	size_t i;

	*why = 0;
	for (i = 0; i < n; i++) {
		const cleanup_mon_step *s = &steps[i];
		unsigned w;

		if (dir < 0 ? s->step_no >= from_no : s->step_no <= from_no)
			continue;
		if (best >= 0 && (dir < 0 ? s->step_no <= steps[best].step_no : s->step_no >= steps[best].step_no))
			continue;
		w = tui_step_gap(tui_step_prev(steps, n, s), s, threshold_s);
		if (w) {
			best = (int)i;
			*why = w;
		}
	}
	return best;
}

const char *tui_runner_tag(char *buf, size_t len, int pid, const char *app)
{
	const char *verb = app ? strrchr(app, ':') : NULL;
	char v[4] = "";

	if (pid <= 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (app && strncmp(app, "cleanupctl:", 11) == 0 && verb) {
		verb++;
		if (strcmp(verb, "console") == 0)
			snprintf(v, sizeof v, "con");
		else if (strncmp(verb, "worker", 6) == 0 || strstr(app, ":worker"))
			snprintf(v, sizeof v, "wkr");
		else
			snprintf(v, sizeof v, "%.3s", verb);
	} else if (app) {
		size_t k;

		for (k = 0; k < 3 && app[k]; k++)
			v[k] = (unsigned char)app[k] >= 0x21 && (unsigned char)app[k] < 0x7f ? app[k] : '?';
		v[k] = '\0';
	}
	snprintf(buf, len, "%s%s%d", v, v[0] ? " " : "", pid);
	return buf;
}

int tui_follow_row(const int *keys, int n, int key, int row)
{
	int i;

	for (i = 0; key != 0 && i < n; i++)
		if (keys[i] == key)
			return i;
	if (n <= 0 || row < 0)
		return 0;
	return row < n ? row : n - 1;
}

/* Helpers shared by the commands: option values, id parsing, connecting,
 * error output and the human formats of a job. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cleanup/install.h"
#include "cleanup/sandbox.h"
#include "cli.h"
#include "numtext.h"
#include "ops.h"
#include "progress.h"
#include "sanitize.h"

void cli_json_string(FILE *f, const char *s)
{
	size_t n, i = 0;

	s = s ? s : "";
	n = strlen(s);
	fputc('"', f);
	while (i < n) {
		int32_t cp;
		size_t l = tui_utf8_next(s + i, n - i, &cp);

		if (cp < 0)
			fputs("\\ufffd", f); /* not UTF-8: the replacement character */
		else if (cp == '"')
			fputs("\\\"", f);
		else if (cp == '\\')
			fputs("\\\\", f);
		else if (cp == '\n')
			fputs("\\n", f);
		else if (cp == '\t')
			fputs("\\t", f);
		else if (cp == '\r')
			fputs("\\r", f);
		else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029)
			fprintf(f, "\\u%04x", (unsigned)cp); /* controls: escaped, so a terminal never sees them */
		else
			fwrite(s + i, 1, l, f);
		i += l;
	}
	fputc('"', f);
}

void cli_json_string_or_null(FILE *f, const char *s)
{
	if (s)
		cli_json_string(f, s);
	else
		fputs("null", f);
}

void cli_json_error(FILE *f, const cleanup_error *err, int code, const char *status)
{
	fprintf(f, "{\"status\": ");
	cli_json_string(f, status ? status : cleanup_status_name(err->status));
	fprintf(f, ", \"exit_code\": %d, \"sqlstate\": ", code);
	cli_json_string(f, err->sqlstate);
	fprintf(f, ", \"message\": ");
	cli_json_string(f, err->message);
	fprintf(f, ", \"detail\": ");
	cli_json_string(f, err->detail);
	fprintf(f, ", \"hint\": ");
	cli_json_string(f, err->hint);
	fprintf(f, ", \"context\": ");
	cli_json_string(f, err->context);
	fputc('}', f);
}

/* Prints ERR (see cli_fail) with exit code CODE and status name NAME. */
static int fail_with(const cli_ctx *ctx, const cleanup_error *err, int code, const char *name)
{

	/* The message may quote server text or the user's value: sanitized. */
	fprintf(stderr, "cleanupctl: %s", tui_op_error_prefix(err->status, TUI_FRONT_CLI));
	tui_fputs_safe(err->message, stderr);
	fputc('\n', stderr);
	if (err->detail[0]) {
		fputs("  detail: ", stderr);
		tui_fputs_safe(err->detail, stderr);
		fputc('\n', stderr);
	}
	if (err->hint[0]) {
		fputs("  hint: ", stderr);
		tui_fputs_safe(err->hint, stderr);
		fputc('\n', stderr);
	}
	if (ctx->json) {
		printf("{\"error\": ");
		cli_json_error(stdout, err, code, name);
		printf("}\n");
	}
	return code;
}

void cli_json_doc(FILE *f, const char *json)
{
	size_t l;
	int32_t cp;

	for (json = json ? json : "null"; (l = tui_utf8_at(json, &cp)) > 0; json += l) {
		/* Outside strings valid JSON is ASCII; inside, \uXXXX means the same
		 * character. Controls PostgreSQL leaves raw (DEL, C1, bidi) and bad
		 * bytes (there should be none: the database is UTF-8) are escaped. */
		if (cp < 0)
			fputs("\\ufffd", f);
		else if (cp != '\n' && (tui_unsafe_codepoint(cp) || cp == 0x2028 || cp == 0x2029))
			fprintf(f, "\\u%04x", (unsigned)cp);
		else
			fwrite(json, 1, l, f);
	}
}

int cli_fail(const cli_ctx *ctx, const cleanup_error *err)
{
	return fail_with(ctx, err, tui_op_exit_code(err->status, false), cleanup_status_name(err->status));
}

int cli_fail_interrupted(const cli_ctx *ctx, const cleanup_error *cause, const char *what)
{
	cleanup_error e;

	cleanup_error_clear(&e);
	e.status = cause->status;
	memcpy(e.sqlstate, cause->sqlstate, sizeof e.sqlstate);
	snprintf(e.message, sizeof e.message, "interrupted: %s cancelled by %s; its transaction rolled back", what,
	         cli_interrupt_name());
	snprintf(e.detail, sizeof e.detail, "%s", cause->message);
	memcpy(e.hint, cause->hint, sizeof e.hint);
	memcpy(e.context, cause->context, sizeof e.context);
	return fail_with(ctx, &e, EXIT_INTERRUPTED, "interrupted");
}

int cli_fail_or_interrupted(const cli_ctx *ctx, const cleanup_error *err, const char *what)
{
	return cli_interrupts() > 0 ? cli_fail_interrupted(ctx, err, what) : cli_fail(ctx, err);
}

/* ERR's hint: "usage: cleanupctl CMD [SUB] ..." from the table (no CMD:
 * none). */
static void usage_hint(cleanup_error *err, const cli_command *cmd, const cli_subcommand *sub)
{
	char name[64];
	const char *prefix = "usage: ";
	size_t n = strlen(prefix);

	if (!cmd)
		return;
	snprintf(name, sizeof name, "cleanupctl %s%s%s", cmd->name, sub ? " " : "", sub ? sub->name : "");
	snprintf(err->hint, sizeof err->hint, "%s", prefix);
	cli_usage_line(err->hint + n, sizeof err->hint - n, name, sub ? sub->usage : cmd->usage,
	               sub ? sub->options : cmd->options);
}

int cli_usage(const cli_ctx *ctx, const cli_command *cmd, const char *fmt, ...)
{
	cleanup_error err;
	va_list ap;

	cleanup_error_clear(&err);
	err.status = CLEANUP_EINVAL;
	va_start(ap, fmt);
	vsnprintf(err.message, sizeof err.message, fmt, ap);
	va_end(ap);
	usage_hint(&err, cmd, NULL);
	return cli_fail(ctx, &err);
}

const char *cli_int_syntax(const char *s, int64_t min, int64_t max, int64_t *out)
{
	return tui_op_int_syntax(s, min, max, out);
}

bool cli_parse_int(const cli_ctx *ctx, const char *opt, const char *s, int64_t min, int64_t max,
                   int64_t *out)
{
	char msg[512];

	if (!tui_op_parse_int(out, msg, sizeof msg, opt, s, min, max)) {
		cli_usage(ctx, NULL, "%s", msg);
		return false;
	}
	return true;
}

const char *cli_seconds_syntax(const char *s, double min, double max, double *out)
{
	return tui_seconds_syntax(s, min, max, out); /* one rule with the console's (numtext.h) */
}

bool cli_parse_id(const cli_ctx *ctx, const char *what, const char *s, int64_t *out)
{
	return cli_parse_int(ctx, what, s, 1, INT64_MAX, out);
}

/* The value given with option argv[I] ("--x=V" or "--x V"), or "". */
/* Without --db and without a libpq environment naming a server, a running
 * sandbox (default directory) is used: the README's commands need no flags. */
static const char *default_conninfo(char *buf, size_t len)
{
	cleanup_sandbox sb;
	cleanup_error err;

	static const char *const vars[] = {"PGHOST", "PGHOSTADDR", "PGDATABASE", "PGSERVICE", "PGPORT", NULL};
	int i;

	for (i = 0; vars[i]; i++)
		if (getenv(vars[i]) && *getenv(vars[i]))
			return NULL;
	if (cleanup_sandbox_init(&sb, NULL, &err) != CLEANUP_OK || !sb.running)
		return NULL;
	cleanup_sandbox_conninfo(&sb, NULL, buf, len);
	return buf;
}

void cli_job_app_name(cli_ctx *ctx, int64_t job_id, const char *verb)
{
	static char buf[64];

	if (job_id > 0)
		tui_job_app_name(buf, sizeof buf, job_id, verb);
	else
		snprintf(buf, sizeof buf, "cleanupctl:job:%s", verb);
	ctx->app_name = buf;
}

int cli_connect(cli_ctx *ctx, cleanup_engine **out, bool check_schema)
{
	static char sandbox_conninfo[CLEANUP_PATH_MAX + 128];
	cleanup_error err;
	int rc;

	if (!ctx->db)
		ctx->db = default_conninfo(sandbox_conninfo, sizeof sandbox_conninfo);
	rc = cleanup_engine_open(out, ctx->db, ctx->app_name, &err);
	/* The user did not type this conninfo on this command line: say where
	 * it came from (the message shows it redacted, as it shows --db). */
	if (rc == CLEANUP_ECONN && ctx->db_from)
		cleanup_error_hint(&err, "the conninfo came from %s (no --db given): correct or unset %s, or pass --db "
		                   "CONNINFO",
		                   ctx->db_from, ctx->db_from);
	if (rc == CLEANUP_OK && check_schema) {
		rc = cleanup_schema_check(*out, &err);
		if (rc != CLEANUP_OK) {
			cleanup_engine_close(*out);
			*out = NULL;
		}
	}
	return rc == CLEANUP_OK ? 0 : cli_fail(ctx, &err);
}

int cli_untimed_begin(cli_ctx *ctx, cleanup_engine **out, bool check_schema)
{
	int rc;

	if (ctx->timeout_s < 0)
		cleanup_engine_defaults(0, 0);
	if ((rc = cli_connect(ctx, out, check_schema)))
		return rc;
	cli_interrupt_begin(*out, false);
	return 0;
}

int cli_untimed_end(const cli_ctx *ctx, cleanup_engine *e, int rc, const cleanup_error *err, const char *what)
{
	cli_interrupt_end();
	if (rc == CLEANUP_OK)
		return 0;
	rc = cli_fail_or_interrupted(ctx, err, what);
	cleanup_engine_close(e);
	return rc;
}

const char *cli_count(char *buf, size_t len, int64_t n)
{
	return tui_count_text(buf, len, n);
}

static const char *target_word(const cleanup_job *job)
{
	return strcmp(job->kind, "remove-server") == 0 ? "server" : "library";
}

void cli_print_job_line(FILE *f, const cleanup_job *job)
{
	char line[CLEANUP_NAME_SIZE + 256];

	fprintf(f, "%s\n", tui_op_job_line(line, sizeof line, job));
}

void cli_print_job_detail(FILE *f, const cleanup_job *job)
{
	char a[32], b[32], t1[64], t2[64], name[CLEANUP_NAME_SIZE];

	/* Every text field comes from the database: sanitized (sanitize.h). */
	fprintf(f, "job %" PRId64 "\n", job->id);
	fprintf(f, "  kind          %s (%s)\n", tui_sanitize(t1, sizeof t1, job->kind),
	        tui_sanitize(t2, sizeof t2, job->mode));
	fprintf(f, "  target        %s %" PRId64 " (%s) on server %" PRId64 "\n", target_word(job),
	        strcmp(job->kind, "remove-server") == 0 ? job->server_id : job->library_id,
	        tui_sanitize(name, sizeof name, job->target_name), job->server_id);
	fprintf(f, "  phase         %s\n", tui_sanitize(t1, sizeof t1, job->phase));
	fprintf(f, "  step / pass   %d / %d\n", job->step_no, job->pass_no);
	{
		/* Who runs it now, its last step and ETA, or NO RUNNER */
		char live[CLEANUP_NAME_SIZE + 400];

		if (tui_job_live_text(live, sizeof live, job)[0])
			fprintf(f, "  runner        %s\n", live);
	}
	if (strcmp(job->kind, "prune") == 0) {
		fprintf(f, "  manifest      %s IDs", cli_count(a, sizeof a, job->manifest_count));
		if (job->expected_count >= 0)
			fprintf(f, ", sealed with expected %s", cli_count(b, sizeof b, job->expected_count));
		else
			fprintf(f, ", not sealed");
		fputc('\n', f);
	}
	if (job->high_water_id >= 0)
		fprintf(f, "  high-water id %" PRId64 "\n", job->high_water_id);
	if (job->claimed > 0 || job->retries_deleted > 0 || job->previews_deleted > 0 || job->collections_deleted > 0 ||
	    job->sync_status_deleted > 0 || job->history_detached > 0)
		fprintf(f,
		        "  dependents    %" PRId64 " item retries, %" PRId64 " identity review previews, %" PRId64
		        " collections, %" PRId64 " sync status deleted; %" PRId64 " history records detached\n"
		        "  claims        %" PRId64 " claimed, %" PRId64 " released, %" PRId64 " in flight\n",
		        job->retries_deleted, job->previews_deleted, job->collections_deleted, job->sync_status_deleted,
		        job->history_detached, job->claimed, job->released, job->claimed - job->released);
	if (job->total_estimate >= 0)
		fprintf(f, "  in scope      %s items when sealed\n", cli_count(a, sizeof a, job->total_estimate));
	if (job->key_order && job->pass_no == 1 && strcmp(job->phase, "draining") == 0) {
		/* Pass 1 of a prune in external-ID order (schema 12). */
		char key[600];

		fprintf(f, "  cursor        library %" PRId64 ", external ID %s\n", job->cursor_library_id,
		        job->key_cursor[0] ? tui_sanitize(key, sizeof key, job->key_cursor) : "(start)");
	} else {
		fprintf(f, "  cursor        library %" PRId64 ", id %" PRId64 "\n", job->cursor_library_id, job->cursor_id);
	}
	fprintf(f, "  counters      examined %" PRId64 ", visited %" PRId64 ", deleted %" PRId64 ", moved %" PRId64
	           ", absent %" PRId64 ", retained %" PRId64 ", kept %" PRId64 "\n",
	        job->examined, job->visited, job->deleted, job->moved, job->absent, job->retained, job->kept);
	if (job->scope_count >= 0) {
		/* T7: every row in scope at the seal (or creation) ends in one
		 * counter; "so far" until the job completes. */
		int64_t sum = job->deleted + job->kept + job->moved + job->absent;
		int done = strcmp(job->phase, "completed") == 0;

		fprintf(f,
		        "  ledger        %" PRId64 " in scope = %" PRId64 " deleted + %" PRId64 " kept + %" PRId64
		        " moved + %" PRId64 " absent (%" PRId64 " moved, %" PRId64 " absent before a step reached them)%s\n",
		        job->scope_count, job->deleted, job->kept, job->moved, job->absent, job->moved_early, job->absent_early,
		        done ? (sum == job->scope_count ? ": holds" : ": DOES NOT HOLD") : ", so far");
	}
	if (job->blocked_since[0]) {
		fprintf(f, "  blocked since %s: ", tui_sanitize(t1, sizeof t1, job->blocked_since));
		tui_fputs_safe(job->blocked_text[0] ? job->blocked_text : "(holder gone)", f);
		fputc('\n', f);
	}
	if (strcmp(job->kind, "prune") != 0)
		fprintf(f, "  parents       %d libraries deleted, %d servers deleted\n", job->libraries_deleted,
		        job->servers_deleted);
	fprintf(f, "  busy retries  %" PRId64 "\n", job->busy_retries);
	if (job->last_error[0]) {
		fputs("  last error    ", f);
		tui_fputs_safe(job->last_error, f);
		fputc('\n', f);
	}
	fprintf(f, "  created       %s\n", tui_sanitize(t1, sizeof t1, job->created_at));
	if (job->sealed_at[0])
		fprintf(f, "  sealed        %s\n", tui_sanitize(t1, sizeof t1, job->sealed_at));
	fprintf(f, "  updated       %s\n", tui_sanitize(t1, sizeof t1, job->updated_at));
	if (job->finished_at[0])
		fprintf(f, "  finished      %s\n", tui_sanitize(t1, sizeof t1, job->finished_at));
	if (job->purged_at[0])
		fprintf(f, "  purged        %s: manifest, retained rows and step records removed (cleanupctl purge)\n",
		        tui_sanitize(t1, sizeof t1, job->purged_at));
}

/* --- Ctrl-C (see cli.h) --------------------------------------------------- */

static volatile sig_atomic_t interrupt_count;
static volatile sig_atomic_t interrupt_flag;
static volatile sig_atomic_t interrupt_finish_first;
/* The first signal that stopped the command (SIGINT, SIGTERM, SIGHUP). */
static volatile sig_atomic_t interrupt_signal;

/* write(2) of a constant message: async-signal-safe. */
static void say(const char *msg)
{
	ssize_t r = write(STDERR_FILENO, msg, strlen(msg));

	(void)r;
}

static void on_sigint(int sig)
{
	int saved = errno;

	(void)sig;
	if (interrupt_count < 1000)
		interrupt_count++;
	if (interrupt_signal == 0)
		interrupt_signal = SIGINT;
	interrupt_flag = 1;
	if (interrupt_finish_first && interrupt_count == 1) {
		say("\ncleanupctl: interrupted: finishing the current step or batch, then stopping "
		    "(Ctrl-C again cancels it)\n");
	} else if (cleanup_engine_cancel_armed()) {
		say("\ncleanupctl: cancel request sent\n");
	} else {
		say("\ncleanupctl: could not send a cancel request\n");
	}
	errno = saved;
}

/* SIGTERM, SIGHUP (a supervisor stopping the service, a closed terminal):
 * always "finish what is in flight, then stop", never a cancel, however
 * often they come; only a second Ctrl-C cancels. */
static void on_sigterm(int sig)
{
	int saved = errno;

	if (interrupt_count == 0)
		interrupt_count = 1;
	if (interrupt_signal == 0)
		interrupt_signal = sig;
	if (!interrupt_flag)
		say(sig == SIGHUP ? "\ncleanupctl: SIGHUP: finishing the current step or batch, then stopping\n"
		                  : "\ncleanupctl: SIGTERM: finishing the current step or batch, then stopping\n");
	interrupt_flag = 1;
	errno = saved;
}

void cli_interrupt_begin(cleanup_engine *engine, bool finish_first)
{
	struct sigaction sa;

	interrupt_count = 0;
	interrupt_flag = 0;
	interrupt_signal = 0;
	interrupt_finish_first = finish_first;
	cleanup_engine_cancel_arm(engine);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	/* No SA_RESTART: a read of stdin returns, so job append stops at once;
	 * libpq retries its own interrupted waits. */
	sa.sa_flags = 0;
	sigaction(SIGINT, &sa, NULL);
	if (finish_first) {
		/* A command that can stop between steps or batches stops there on
		 * SIGTERM and SIGHUP too, with its summary (exit 130); the others
		 * keep the default action (the server rolls back the statement). */
		sa.sa_handler = on_sigterm;
		sigemptyset(&sa.sa_mask);
		sigaddset(&sa.sa_mask, SIGINT);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
}

void cli_interrupt_end(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	if (interrupt_finish_first) {
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	cleanup_engine_cancel_arm(NULL);
}

int cli_interrupts(void)
{
	return (int)interrupt_count;
}

const char *cli_interrupt_name(void)
{
	switch (interrupt_signal) {
	case SIGTERM:
		return "SIGTERM";
	case SIGHUP:
		return "SIGHUP";
	default:
		return "Ctrl-C";
	}
}

volatile sig_atomic_t *cli_interrupt_flag(void)
{
	return &interrupt_flag;
}

/* --- Command and option tables (cli.h) ------------------------------------ */

const cli_option *cli_option_find(const cli_option *opts, const char *name)
{
	size_t n = strcspn(name, "=");
	int k;

	for (k = 0; opts && opts[k].name; k++)
		if (strlen(opts[k].name) == n && strncmp(opts[k].name, name, n) == 0)
			return &opts[k];
	return NULL;
}

/* The global options (main.c parses them with the words that are not
 * theirs passed through to the command). Here, not in cli_commands.c, so
 * that a program testing the parser does not link every command. */
#define G(field) offsetof(cli_globals, field)
const cli_option cli_global_options[] = {
	{"--db", "CONNINFO", "the database (libpq conninfo or URI); else $CLEANUPCTL_DB, else the libpq environment, "
	                     "else a running sandbox", NULL, CLI_STRING, G(db), 0, 0, CLI_SECRET, NULL,
	 "a conninfo, e.g. --db 'host=/tmp dbname=cleanup_lab'"},
	CLI_ROW_FLAG("--json", "one JSON document on stdout (docs/json.md), errors included", cli_globals, json, CLI_AGAIN),
	CLI_ROW_FLAG("--quiet", "no progress chatter (also -q)", cli_globals, quiet, CLI_AGAIN),
	CLI_ROW_FLAG("-q", "the same as --quiet", cli_globals, quiet, CLI_ALIAS | CLI_AGAIN),
	{"--timeout", "SECONDS", "the statement timeout of every transaction, 0 (none) to 86400; default 60, 300 for "
	                         "job step, job run and worker; lock_timeout is 10 s or this if less (docs/fleet.md)",
	 NULL, CLI_INT, G(timeout), 0, 86400, 0, NULL, "a number of seconds, 0 (none) to 86400"},
	CLI_ROW_FLAG("--help", "usage; after a command, that command's (also -h)", cli_globals, help, CLI_AGAIN),
	CLI_ROW_FLAG("-h", "the same as --help", cli_globals, help, CLI_ALIAS | CLI_AGAIN),
	CLI_ROW_FLAG("--version", "the program, schema and libpq versions", cli_globals, version, CLI_AGAIN),
	CLI_ROW_END,
};
#undef G

/* Words of a space-separated list: the K-th into BUF; false past the end. */
static bool list_word(const char *list, int k, char *buf, size_t len)
{
	const char *p = list;
	size_t w;

	for (;;) {
		while (*p == ' ')
			p++;
		w = strcspn(p, " ");
		if (w == 0)
			return false;
		if (k-- == 0) {
			snprintf(buf, len, "%.*s", (int)w, p);
			return true;
		}
		p += w;
	}
}

/* "a or b", "a, b or c": the words of LIST for a message. */
static const char *list_or(char *buf, size_t len, const char *list)
{
	char w[64];
	int k, n = 0;
	size_t at = 0;

	while (list_word(list, n, w, sizeof w))
		n++;
	buf[0] = '\0';
	for (k = 0; k < n && at < len; k++) {
		list_word(list, k, w, sizeof w);
		at += (size_t)snprintf(buf + at, len - at, "%s%s", k == 0 ? "" : k == n - 1 ? " or " : ", ", w);
	}
	return buf;
}

/* Checks VALUE (V) of option O and writes it into OUT; false with MSG. */
static bool parse_value(const cli_option *o, const char *v, void *out, char *msg, size_t len)
{
	char *field = (char *)out + o->off;

	switch (o->type) {
	case CLI_FLAG:
		*(bool *)(void *)field = true;
		return true;
	case CLI_INT:
	case CLI_INTS: {
		int64_t n;

		if (!tui_op_parse_int(&n, msg, len, o->name, v, o->min, o->max))
			return false;
		if (o->type == CLI_INT) {
			*(int64_t *)(void *)field = n;
		} else {
			cli_ints *l = (cli_ints *)(void *)field;

			if (l->n >= l->cap) {
				snprintf(msg, len, "at most %zu %s options", l->cap, o->name);
				return false;
			}
			l->v[l->n++] = n;
		}
		return true;
	}
	case CLI_DECIMAL: {
		double d = 0, lo = (double)o->min / 1000, hi = (double)o->max / 1000;
		const char *why = cli_seconds_syntax(v, lo, hi, &d);
		char rule[128];

		if (!why && (o->flags & CLI_ABOVE_MIN) && !(d > lo))
			why = "out of range";
		if (why) {
			const char *sec = "a decimal number of seconds: ";

			/* a rate is no number of seconds: the syntax part alone */
			if (strncmp(why, sec, strlen(sec)) == 0 && (!o->rule || !strstr(o->rule, "second")))
				why += strlen(sec);
			if (!o->rule)
				snprintf(rule, sizeof rule, "must be a number from %g to %g", lo, hi);
			snprintf(msg, len, "%s %s, not \"%.200s\": %s", o->name, o->rule ? o->rule : rule, v, why);
			return false;
		}
		*(double *)(void *)field = d;
		return true;
	}
	case CLI_STRING:
		if (o->max > 0 && strlen(v) > (size_t)o->max) {
			snprintf(msg, len, "%s takes at most %" PRId64 " bytes, not %zu", o->name, o->max, strlen(v));
			return false;
		}
		*(const char **)(void *)field = v;
		return true;
	case CLI_ENUM: {
		char w[64], words[256];
		int k;

		for (k = 0; list_word(o->complete, k, w, sizeof w); k++)
			if (strcmp(w, v) == 0) {
				*(const char **)(void *)field = v;
				return true;
			}
		snprintf(msg, len, "%s must be %s, not \"%.200s\"", o->name, list_or(words, sizeof words, o->complete), v);
		return false;
	}
	case CLI_ONOFF:
		if (strcmp(v, "on") == 0 || strcmp(v, "off") == 0) {
			*(int *)(void *)field = strcmp(v, "on") == 0;
			return true;
		}
		snprintf(msg, len, "%s must be on or off, not \"%.200s\"", o->name, v);
		return false;
	}
	snprintf(msg, len, "%s: no parser for this option", o->name);
	return false;
}

/* A value as a message may show it: redacted when it may hold a password. */
static const char *shown(char *buf, size_t len, const cli_option *o, const char *v)
{
	if (o->flags & CLI_SECRET)
		return cleanup_conninfo_redact(buf, len, v);
	snprintf(buf, len, "%.200s", v);
	return buf;
}

bool cli_parse_argv(const cli_option *opts, int argc, char **argv, int first, int maxpos, void *out, cli_args *a,
                    char *msg, size_t len)
{
	const char *first_value[64] = {0};
	char **rest = a->rest;
	bool options = true;
	int i;

	memset(a, 0, sizeof *a);
	a->rest = rest;
	msg[0] = '\0';
	if (maxpos > CLI_POS_MAX)
		maxpos = CLI_POS_MAX;
	for (i = first; i < argc; i++) {
		const char *w = argv[i], *v = NULL, *eq;
		const cli_option *o;
		int k;

		if (options && strcmp(w, "--") == 0) {
			options = false;
			continue;
		}
		o = options && w[0] == '-' && w[1] ? cli_option_find(opts, w) : NULL;
		if (!o && rest) {
			rest[a->nrest++] = argv[i];
			continue;
		}
		if (!o) {
			if ((options && strncmp(w, "--", 2) == 0) || a->npos >= maxpos) {
				snprintf(msg, len, "unexpected argument \"%.200s\"", w);
				return false;
			}
			a->pos[a->npos++] = w;
			continue;
		}
		k = (int)(o - opts);
		eq = strchr(w, '=');
		if (o->type == CLI_FLAG) {
			if (eq) {
				snprintf(msg, len, "%s takes no value, not \"%.200s\"", o->name, w);
				return false;
			}
			v = o->name;
		} else if (eq) {
			v = eq + 1;
		} else if (i + 1 < argc && (!(o->flags & CLI_OPTIONAL) || argv[i + 1][0] != '-')) {
			v = argv[++i];
		} else if (!(o->flags & CLI_OPTIONAL)) {
			snprintf(msg, len, "%s needs %s", o->name, o->needs ? o->needs : "a value");
			return false;
		}
		if (k < 64 && (a->given >> k & 1) && o->type != CLI_INTS && !(o->flags & CLI_AGAIN)) {
			char b1[256], b2[256];

			if (o->type == CLI_FLAG)
				snprintf(msg, len, "%s given twice: an option is given once, it never silently wins", o->name);
			else
				snprintf(msg, len,
				         "%s given twice (\"%s\", then \"%s\"): an option is given once, it never silently wins",
				         o->name, shown(b1, sizeof b1, o, first_value[k] ? first_value[k] : ""),
				         shown(b2, sizeof b2, o, v ? v : ""));
			return false;
		}
		if (k < 64) {
			a->given |= (uint64_t)1 << k;
			first_value[k] = v;
		}
		if (v && !parse_value(o, v, out, msg, len))
			return false;
	}
	return true;
}

bool cli_given(const cli_args *a, const cli_option *opts, const char *name)
{
	const cli_option *o = cli_option_find(opts, name);

	return o && (o - opts) < 64 && (a->given >> (o - opts) & 1);
}

const char *cli_usage_line(char *buf, size_t len, const char *name, const char *usage, const cli_option *opts)
{
	size_t at;
	int k;

	at = (size_t)snprintf(buf, len, "%s%s%s", name, usage && *usage ? " " : "", usage ? usage : "");
	for (k = 0; opts && opts[k].name && at < len; k++) {
		const cli_option *o = &opts[k];
		bool req = o->flags & CLI_REQUIRED;

		if (o->flags & CLI_ALIAS)
			continue;
		if (!o->arg)
			at += (size_t)snprintf(buf + at, len - at, " [%s]", o->name);
		else if (o->flags & CLI_OPTIONAL)
			at += (size_t)snprintf(buf + at, len - at, " [%s [%s]]", o->name, o->arg);
		else
			at += (size_t)snprintf(buf + at, len - at, " %s%s %s%s%s", req ? "" : "[", o->name, o->arg,
			                       req ? "" : "]", o->type == CLI_INTS ? "..." : "");
	}
	return buf;
}

bool cli_parse_options(const cli_ctx *ctx, const cli_command *cmd, const cli_subcommand *sub, int argc,
                       char **argv, int first, int maxpos, void *out, cli_args *a)
{
	cleanup_error err;

	cleanup_error_clear(&err);
	a->rest = NULL; /* a command's words: all its own */
	if (cli_parse_argv(sub ? sub->options : cmd->options, argc, argv, first, maxpos, out, a, err.message,
	                   sizeof err.message))
		return true;
	err.status = CLEANUP_EINVAL;
	usage_hint(&err, cmd, sub);
	cli_fail(ctx, &err);
	return false;
}

int cli_exec(cli_ctx *ctx, const cli_command *cmd, int argc, char **argv)
{
	void *opts = NULL;
	cli_args a;
	int rc;

	if (cmd->exec_argv)
		return cmd->exec_argv(ctx, argc, argv);
	if (cmd->size > 0) {
		if (!(opts = calloc(1, cmd->size))) {
			fprintf(stderr, "cleanupctl: out of memory\n");
			return EXIT_ERROR;
		}
		if (cmd->defaults)
			memcpy(opts, cmd->defaults, cmd->size);
	}
	if (cli_parse_options(ctx, cmd, NULL, argc, argv, 1, cmd->maxpos, opts, &a))
		rc = cmd->exec(ctx, opts, &a);
	else
		rc = EXIT_USAGE;
	free(opts);
	return rc;
}

/* Prints the words of P, each after a space, from column COL on, wrapped
 * at 78 columns onto lines that start with CONT spaces (never before the
 * first word). Returns the column reached. */
static int print_wrapped(FILE *f, const char *p, int col, int cont)
{
	int first = col;

	while (*p) {
		size_t w;

		while (*p == ' ')
			p++;
		w = strcspn(p, " ");
		if (w == 0)
			break;
		if (col > first && col + 1 + (int)w > 78)
			col = fprintf(f, "\n%*s", cont, "") - 1;
		col += fprintf(f, " %.*s", (int)w, p);
		p += w;
	}
	return col;
}

/* The options of a table, one a row: "  --x ARG   help" (the help wrapped
 * at 78 columns under itself). */
static void print_options(FILE *f, const cli_option *opts)
{
	int k, width = 0;

	for (k = 0; opts && opts[k].name; k++) {
		int w = (int)strlen(opts[k].name) + (opts[k].arg ? 1 + (int)strlen(opts[k].arg) : 0);

		if (w > width)
			width = w;
	}
	if (width > 28)
		width = 28;
	for (k = 0; opts && opts[k].name; k++) {
		const char *p = opts[k].help;
		char head[128];
		int col, indent = 2 + width + 2;

		snprintf(head, sizeof head, "%s%s%s", opts[k].name, opts[k].arg ? " " : "", opts[k].arg ? opts[k].arg : "");
		col = fprintf(f, "  %-*s", width, head);
		if (col > indent - 2) {
			fputc('\n', f);
			col = fprintf(f, "%*s", indent - 2, "");
		}
		col += fprintf(f, " ");
		print_wrapped(f, p, col, indent - 1);
		fputc('\n', f);
	}
}

void cli_print_help(FILE *f, const cli_command *cmd, const cli_subcommand *subs)
{
	char line[1024], name[64];

	snprintf(name, sizeof name, "cleanupctl %s", cmd->name);
	fprintf(f, "usage: %s\n  %s\n", cli_usage_line(line, sizeof line, name, cmd->usage, cmd->options),
	        cmd->summary);
	if (cmd->options && cmd->options[0].name) {
		fputs("\noptions:\n", f);
		print_options(f, cmd->options);
	}
	if (subs) {
		fputc('\n', f);
		cli_print_subcommands(f, cmd->name, subs);
	}
}

const cli_subcommand *cli_subcommand_find(const cli_subcommand *subs, const char *name)
{
	int i;

	for (i = 0; subs && subs[i].name; i++)
		if (strcmp(subs[i].name, name) == 0)
			return &subs[i];
	return NULL;
}

void cli_print_subcommands(FILE *f, const char *cmd, const cli_subcommand *subs)
{
	int i;

	/* "  job NAME USAGE" wrapped at 78 columns under the first argument,
	 * then the summary, indented. */
	for (i = 0; subs[i].name; i++) {
		char line[1024];
		const char *p = cli_usage_line(line, sizeof line, "", subs[i].usage, subs[i].options);
		int indent = fprintf(f, "  %s %s", cmd, subs[i].name);

		print_wrapped(f, p, indent, indent);
		fprintf(f, "\n      %s\n", subs[i].summary);
	}
}

/* --- --wait (cli.h) ---------------------------------------------------------- */

void cli_wait_begin(cli_wait *w, double seconds)
{
	tui_op_wait_begin(w, seconds, "--wait");
}

bool cli_wait_again(cli_wait *w, cleanup_error *err)
{
	return tui_op_wait_again(w, err);
}

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

const char *cli_opt(int argc, char **argv, int *i, const char *name, bool *missing)
{
	size_t n = strlen(name);

	*missing = false;
	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = true;
		return NULL;
	}
	(*i)++;
	return argv[*i];
}

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
	size_t n, i = 0;

	json = json ? json : "null";
	n = strlen(json);
	while (i < n) {
		int32_t cp;
		size_t l = tui_utf8_next(json + i, n - i, &cp);

		/* Outside strings valid JSON is ASCII; inside, \uXXXX means the same
		 * character. Controls PostgreSQL leaves raw (DEL, C1, bidi) and bad
		 * bytes (there should be none: the database is UTF-8) are escaped. */
		if (cp < 0)
			fputs("\\ufffd", f);
		else if (cp != '\n' && (tui_unsafe_codepoint(cp) || cp == 0x2028 || cp == 0x2029))
			fprintf(f, "\\u%04x", (unsigned)cp);
		else
			fwrite(json + i, 1, l, f);
		i += l;
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

int cli_usage(const cli_ctx *ctx, const cli_command *cmd, const char *fmt, ...)
{
	cleanup_error err;
	va_list ap;

	cleanup_error_clear(&err);
	err.status = CLEANUP_EINVAL;
	va_start(ap, fmt);
	vsnprintf(err.message, sizeof err.message, fmt, ap);
	va_end(ap);
	if (cmd)
		snprintf(err.hint, sizeof err.hint, "usage: cleanupctl %s %s", cmd->name, cmd->usage);
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
static const char *opt_value(int argc, char **argv, int i)
{
	const char *eq = strchr(argv[i], '=');

	if (eq)
		return eq + 1;
	if (i + 1 < argc && argv[i + 1][0] != '-')
		return argv[i + 1];
	return "";
}

bool cli_no_repeats(const cli_ctx *ctx, const cli_command *cmd, int argc, char **argv, int first)
{
	int i, k;

	for (i = first; i < argc; i++) {
		size_t n;

		if (strncmp(argv[i], "--", 2) != 0 || argv[i][2] == '\0' || argv[i][2] == '=')
			continue;
		n = strcspn(argv[i], "=");
		for (k = first; k < i; k++) {
			if (strncmp(argv[k], argv[i], n) == 0 && (argv[k][n] == '\0' || argv[k][n] == '=')) {
				cli_usage(ctx, cmd,
				          "%.*s given twice (\"%s\", then \"%s\"): an option is given once, it never "
				          "silently wins",
				          (int)n, argv[i], opt_value(argc, argv, k), opt_value(argc, argv, i));
				return false;
			}
		}
	}
	return true;
}

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
		/* Issue 21: who runs it now, its last step and ETA, or NO RUNNER */
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

bool cli_parse_options(const cli_ctx *ctx, const cli_command *cmd, const cli_option *opts, int argc, char **argv,
                       int first, const char **values, const char **pos, int maxpos, int *npos)
{
	int i;

	*npos = 0;
	if (!cli_no_repeats(ctx, cmd, argc, argv, first))
		return false;
	for (i = first; i < argc; i++) {
		const cli_option *o = strncmp(argv[i], "--", 2) == 0 ? cli_option_find(opts, argv[i]) : NULL;
		bool missing = false;
		const char *v;

		if (!o) {
			if (strncmp(argv[i], "--", 2) == 0 || *npos >= maxpos) {
				cli_usage(ctx, cmd, "unexpected argument \"%s\"", argv[i]);
				return false;
			}
			pos[(*npos)++] = argv[i];
			continue;
		}
		if (!o->arg) {
			if (strcmp(argv[i], o->name) != 0) {
				cli_usage(ctx, cmd, "%s takes no value, not \"%s\"", o->name, argv[i]);
				return false;
			}
			v = o->name;
		} else if (!(v = cli_opt(argc, argv, &i, o->name, &missing))) {
			cli_usage(ctx, cmd, "%s needs a value", argv[i]);
			return false;
		}
		values[o - opts] = v;
	}
	return true;
}

void cli_print_subcommands(FILE *f, const char *cmd, const cli_subcommand *subs)
{
	int i;

	/* "  job NAME USAGE" wrapped at 78 columns under the first argument,
	 * then the summary, indented. */
	for (i = 0; subs[i].name; i++) {
		const char *p = subs[i].usage;
		int indent = fprintf(f, "  %s %s", cmd, subs[i].name), col = indent;

		while (*p) {
			size_t w;

			while (*p == ' ')
				p++;
			w = strcspn(p, " ");
			if (w == 0)
				break;
			if (col > indent && col + 1 + (int)w > 78)
				col = fprintf(f, "\n%*s", indent, "") - 1;
			col += fprintf(f, " %.*s", (int)w, p);
			p += w;
		}
		fprintf(f, "\n      %s\n", subs[i].summary);
	}
}

/* --- the options of the commands that take steps (cli.h) --------------------- */

int cli_step_option(const cli_ctx *ctx, const cli_command *cmd, unsigned accept, int argc, char **argv, int *i,
                    cli_step_opts *o)
{
	static const struct {
		unsigned kind;
		const char *name;
		int64_t min, max;
	} ints[] = {
		{CLI_STEP_OPT_TIMEOUT, "--timeout", 0, 86400},
		{CLI_STEP_OPT_BUSY, "--max-busy", 1, 1000000},
		{CLI_STEP_OPT_BUSY, "--backoff-max", 1, 60000},
	};
	int64_t *const dest[] = {&o->timeout, &o->max_busy, &o->backoff_max};
	bool missing = false;
	const char *v;
	size_t k;

	for (k = 0; k < sizeof ints / sizeof ints[0] && !missing; k++)
		if ((accept & ints[k].kind) && (v = cli_opt(argc, argv, i, ints[k].name, &missing)))
			return cli_parse_int(ctx, ints[k].name, v, ints[k].min, ints[k].max, dest[k]) ? 1 : -1;
	if (!missing && (accept & CLI_STEP_OPT_SYNC) &&
	    (v = cli_opt(argc, argv, i, "--synchronous-commit", &missing))) {
		if (strcmp(v, "on") == 0 || strcmp(v, "off") == 0) {
			o->sync = strcmp(v, "on") == 0;
			return 1;
		}
		cli_usage(ctx, cmd, "--synchronous-commit must be on or off, not \"%s\"", v);
		return -1;
	}
	if (missing) {
		cli_usage(ctx, cmd, "%s needs a value", argv[*i]);
		return -1;
	}
	return 0;
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

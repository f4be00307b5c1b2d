/* cleanupctl job SUBCOMMAND: create, append, seal, pause, resume, cancel,
 * show (here) and step, run (cmd_job_step.c). Each subcommand is a
 * descriptor with its option table (cmd_job_subcommands, at the end): the
 * dispatcher, `job --help`, the man page and the shell completions all
 * read it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cleanup/job.h"
#include "cleanup/report.h"
#include "cli.h"
#include "ops.h"

/* Ends a job action: the error, the job's document (--json), or the
 * operation layer's success message of ACTION (ACT_NONE: a creation),
 * the same words the console shows (ops.h, tui_op_done_text). */
static int finish_job(cli_ctx *ctx, cleanup_engine *e, int rc, cleanup_job *job, cleanup_error *err,
                      tui_action action)
{
	int code = EXIT_DONE;
	char text[CLEANUP_NAME_SIZE + 512];

	if (rc != CLEANUP_OK) {
		code = cli_fail(ctx, err);
	} else if (ctx->json) {
		cli_json_doc(stdout, job->json);
		putchar('\n');
	} else {
		printf("%s\n", action == ACT_NONE ? tui_op_created_text(text, sizeof text, job)
		                                  : tui_op_done_text(text, sizeof text, action, job));
	}
	cleanup_job_reset(job);
	cleanup_engine_close(e);
	return code;
}

typedef struct create_opts {
	int64_t library, server;
	const char *mode;
	double wait;
} create_opts;

static const cli_option create_options[] = {
	CLI_ROW_INT("--library", "ID", "prune, remove-library: the library", create_opts, library, 1, INT64_MAX),
	CLI_ROW_INT("--server", "ID", "remove-server: the server", create_opts, server, 1, INT64_MAX),
	{"--mode", "MODE", "remove-library: bounded or single-transaction, the old one-transaction "
	                   "cascade, for comparisons only (default: install --default-mode, bounded)",
	 "bounded single-transaction", CLI_ENUM, offsetof(create_opts, mode), 0, 0, 0, NULL, NULL},
	CLI_WAIT_ROW(create_opts, wait),
	CLI_ROW_END,
};

/* The descriptor of job subcommand NAME (argv[0]): its usage in errors. */
static const cli_subcommand *sub_of(const char *name)
{
	return cli_subcommand_find(cmd_job_subcommands, name);
}

int cli_job_args(cli_ctx *ctx, int argc, char **argv, int64_t *id, void *out, cli_args *a)
{
	if (argc < 2)
		return cli_usage(ctx, &cmd_job_entry, "job %s needs a job id", argv[0]);
	if (!cli_parse_id(ctx, "job id", argv[1], id) ||
	    !cli_parse_options(ctx, &cmd_job_entry, sub_of(argv[0]), argc, argv, 2, 0, out, a))
		return EXIT_USAGE;
	return 0;
}

static int job_create(cli_ctx *ctx, int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : NULL, *want, *other;
	create_opts o = {0, 0, NULL, 0};
	cleanup_engine *e = NULL;
	cleanup_error err;
	cleanup_job job;
	cli_wait w;
	cli_args a;
	bool server;
	int rc;

	if (!kind || (strcmp(kind, "prune") && strcmp(kind, "remove-library") && strcmp(kind, "remove-server")))
		return cli_usage(ctx, &cmd_job_entry, "job create needs prune, remove-library or remove-server, not \"%s\"",
		                 kind ? kind : "");
	server = strcmp(kind, "remove-server") == 0;
	want = server ? "--server" : "--library";
	other = server ? "--library" : "--server";
	if (!cli_parse_options(ctx, &cmd_job_entry, sub_of(argv[0]), argc, argv, 2, 0, &o, &a))
		return EXIT_USAGE;
	if (cli_given(&a, create_options, other))
		return cli_usage(ctx, &cmd_job_entry, "unexpected argument \"%s\"", other);
	if (!cli_given(&a, create_options, want))
		return cli_usage(ctx, &cmd_job_entry, "job create %s needs %s ID", kind, want);
	cli_job_app_name(ctx, 0, "create");
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	cli_wait_begin(&w, o.wait);
	do
		rc = tui_op_create(&job, e, kind, server ? o.server : o.library, o.mode, &err);
	while (rc != CLEANUP_OK && cli_wait_again(&w, &err));
	return finish_job(ctx, e, rc, &job, &err, ACT_NONE);
}

/* Reads up to MAX lines of stdin into IDS (malloc'd strings), validating
 * each: a bad line stops the read with EINVAL naming its line number, so
 * nothing of its chunk is sent. *LINE_NO counts lines read so far. A UTF-8
 * byte-order mark at the start of line 1 (an editor's, not the writer's)
 * is such a bad line: kept, it would become part of the first ID, which
 * then matches no item and protects nothing. */
static int read_chunk(char **ids, size_t max, size_t *n, size_t *line_no, bool *eof, char **linebuf,
                      size_t *cap, cleanup_error *err)
{
	char why[128], shown[96], *line;
	ssize_t len;

	*n = 0;
	while (*n < max) {
		len = getline(linebuf, cap, stdin);
		if (len < 0) {
			*eof = true;
			return CLEANUP_OK;
		}
		line = *linebuf;
		(*line_no)++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (*line_no == 1 && len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
			int rc = cleanup_error_set(err, CLEANUP_EINVAL,
			                           "line 1 of stdin starts with a UTF-8 byte-order mark (EF BB BF): a "
			                           "byte-order mark is not part of an external ID; save the file without BOM");

			cleanup_error_hint(err, "e.g. sed -i '1s/^\\xEF\\xBB\\xBF//' FILE; nothing was appended");
			return rc;
		}
		if (cleanup_external_id_check(line, (size_t)len, why, sizeof why) != CLEANUP_OK) {
			int rc = cleanup_error_set(err, CLEANUP_EINVAL, "line %zu of stdin: external ID %s %s", *line_no,
			                           cleanup_quote_id(shown, sizeof shown, line, (size_t)len), why);

			cleanup_error_hint(err, "IDs are non-empty, at most %d bytes of UTF-8, without control characters, "
			                   "one a line", CLEANUP_EXTERNAL_ID_MAX);
			return rc;
		}
		if (!(ids[*n] = strdup(line)))
			return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		(*n)++;
	}
	return CLEANUP_OK;
}

static int job_append(cli_ctx *ctx, int argc, char **argv)
{
	enum { CHUNK = CLEANUP_APPEND_MAX * CLEANUP_APPEND_WINDOW };
	cleanup_append_totals t = {0, 0, 0, -1};
	cleanup_engine *e = NULL;
	cleanup_error err;
	char **chunk = NULL, *linebuf = NULL;
	size_t n = 0, i, line_no = 0, cap = 0;
	bool eof = false;
	int64_t id;
	size_t unsent = 0;
	int rc = CLEANUP_OK, code;

	if (argc < 2)
		return cli_usage(ctx, &cmd_job_entry, "job append needs a job id");
	if (!cli_parse_id(ctx, "job id", argv[1], &id))
		return EXIT_USAGE;
	if (argc - 2 > CLEANUP_APPEND_MAX)
		return cli_usage(ctx, &cmd_job_entry,
		                 "too many external IDs in one call: %d; the limit is %d (stream more on stdin, one a line); "
		                 "nothing was appended",
		                 argc - 2, CLEANUP_APPEND_MAX);
	cli_job_app_name(ctx, id, "append");
	if ((code = cli_connect(ctx, &e, true)))
		return code;
	cleanup_error_clear(&err);
	/* Ctrl-C: the first finishes the batch being sent and stops (what was
	 * read and not sent is dropped: appends are idempotent, run it again);
	 * the second cancels the batch being sent (it rolls back). */
	cli_interrupt_begin(e, true);
	if (argc > 2) {
		rc = cleanup_job_append_many(&t, e, id, (const char *const *)argv + 2, (size_t)(argc - 2), &err);
	} else {
		/* One ID a line on stdin, validated as read, sent in calls of 128
		 * that share round trips (CLEANUP_APPEND_WINDOW calls a chunk). */
		if (isatty(STDIN_FILENO) && !ctx->quiet)
			fprintf(stderr, "reading external IDs from stdin, one a line; end with Ctrl-D\n");
		chunk = calloc(CHUNK, sizeof *chunk);
		if (!chunk)
			rc = cleanup_error_set(&err, CLEANUP_ENOMEM, "out of memory");
		while (rc == CLEANUP_OK && !eof && !*cli_interrupt_flag()) {
			int rrc = read_chunk(chunk, CHUNK, &n, &line_no, &eof, &linebuf, &cap, &err);

			/* Send what was read before a bad line? No: its chunk is
			 * dropped whole, so the stop is at a call boundary. The same
			 * after a Ctrl-C during the read (getline fails with EINTR). */
			if (rrc != CLEANUP_OK)
				rc = rrc;
			else if (*cli_interrupt_flag())
				unsent = n;
			else if (n > 0 || t.calls == 0)
				rc = cleanup_job_append_many(&t, e, id, (const char *const *)chunk, n, &err);
			for (i = 0; i < n; i++)
				free(chunk[i]);
			n = 0;
		}
		free(chunk);
		free(linebuf);
		if (rc != CLEANUP_OK && t.calls > 0)
			snprintf(err.detail, sizeof err.detail,
			         "%" PRId64 " earlier calls (%" PRId64 " new IDs) committed before this failure; the failing "
			         "call changed nothing; appends are idempotent, so fix the input and run it again",
			         t.calls, t.added);
	}
	cli_interrupt_end();
	if (rc != CLEANUP_OK) {
		code = cli_fail_or_interrupted(ctx, &err, "the append call being sent");
	} else {
		code = cli_interrupts() > 0 ? EXIT_INTERRUPTED : EXIT_DONE;
		if (ctx->json)
			printf("{\"id\": %" PRId64 ", \"added\": %" PRId64 ", \"duplicates\": %" PRId64 ", \"calls\": %" PRId64
			       ", \"manifest_count\": %" PRId64 ", \"interrupted\": %s}\n",
			       id, t.added, t.duplicates, t.calls, t.manifest_count, cli_interrupts() > 0 ? "true" : "false");
		else
			printf("job %" PRId64 ": %" PRId64 " new, %" PRId64 " duplicate in %" PRId64
			       " call%s; manifest holds %" PRId64 " IDs%s%s%s\n",
			       id, t.added, t.duplicates, t.calls, t.calls == 1 ? "" : "s", t.manifest_count,
			       cli_interrupts() > 0 ? "; interrupted by " : "", cli_interrupts() > 0 ? cli_interrupt_name() : "",
			       cli_interrupts() > 0 ? ": the rest of the input was not read" : "");
		if (cli_interrupts() > 0 && unsent > 0 && !ctx->json)
			fprintf(stderr, "cleanupctl: %zu IDs read after the last call were not sent\n", unsent);
	}
	cleanup_engine_close(e);
	return code;
}

typedef struct seal_opts {
	int64_t expected;
	double wait;
} seal_opts;

static const cli_option seal_options[] = {
	{"--expected", "N", "the unique count of the complete traversal (required)", NULL, CLI_INT,
	 offsetof(seal_opts, expected), 0, INT64_MAX, CLI_REQUIRED, NULL, NULL},
	CLI_WAIT_ROW(seal_opts, wait),
	CLI_ROW_END,
};

/* Seals job ID with EXPECTED (ACTION ACT_SEAL) or moves it (pause,
 * resume, cancel), retrying a busy answer for WAIT seconds; ends as
 * finish_job. */
static int job_act(cli_ctx *ctx, int64_t id, tui_action action, int64_t expected, double wait)
{
	cleanup_engine *e = NULL;
	cleanup_error err;
	cleanup_job job;
	cli_wait w;
	int rc;

	cli_job_app_name(ctx, id, tui_action_name(action));
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	cli_wait_begin(&w, wait);
	do
		rc = action == ACT_SEAL ? tui_op_seal(&job, e, id, expected, &err)
		                        : tui_op_transition(&job, e, id, action, &err);
	while (rc != CLEANUP_OK && cli_wait_again(&w, &err));
	return finish_job(ctx, e, rc, &job, &err, action);
}

static int job_seal(cli_ctx *ctx, int argc, char **argv)
{
	seal_opts o = {-1, 0};
	cli_args a;
	int64_t id;
	int rc;

	if (argc < 2)
		return cli_usage(ctx, &cmd_job_entry, "job seal needs a job id and --expected N");
	if ((rc = cli_job_args(ctx, argc, argv, &id, &o, &a)))
		return rc;
	if (o.expected < 0)
		return cli_usage(ctx, &cmd_job_entry,
		                 "job seal needs --expected N: the unique count of the complete traversal");
	return job_act(ctx, id, ACT_SEAL, o.expected, o.wait);
}

typedef struct transition_opts {
	double wait;
} transition_opts;

static const cli_option transition_options[] = {
	CLI_WAIT_ROW(transition_opts, wait),
	CLI_ROW_END,
};

static int job_transition(cli_ctx *ctx, int argc, char **argv)
{
	transition_opts o = {0};
	cli_args a;
	int64_t id;

	if (argc < 2)
		return cli_usage(ctx, &cmd_job_entry, "job %s needs exactly one job id", argv[0]);
	if (!cli_parse_options(ctx, &cmd_job_entry, sub_of(argv[0]), argc, argv, 1, 1, &o, &a))
		return EXIT_USAGE;
	if (a.npos != 1)
		return cli_usage(ctx, &cmd_job_entry, "job %s needs exactly one job id", argv[0]);
	if (!cli_parse_id(ctx, "job id", a.pos[0], &id))
		return EXIT_USAGE;
	return job_act(ctx, id, tui_action_from_name(argv[0]), 0, o.wait);
}

static const cli_option show_options[] = {
	CLI_ROW_ONLY_INT("--steps", "N", "show the N most recent steps (0 to 1000, default 10)", 0, 1000),
	CLI_ROW_END,
};

static int job_show(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_engine *e = NULL;
	cleanup_error err;
	cleanup_job job;
	char *json = NULL;
	int64_t id, steps = 10;
	cli_args a;
	int rc;

	if ((rc = cli_job_args(ctx, argc, argv, &id, &steps, &a)))
		return rc;
	cli_job_app_name(ctx, id, "show");
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	if (ctx->json) {
		rc = cleanup_job_show_json(&json, e, id, (int)steps, &err);
		if (rc == CLEANUP_OK) {
			cli_json_doc(stdout, json);
			putchar('\n');
		}
		free(json);
	} else {
		rc = cleanup_job_get(&job, e, id, &err);
		if (rc == CLEANUP_OK) {
			cli_print_job_detail(stdout, &job);
			cli_print_job_steps(stdout, e, id, (int)steps);
			cleanup_job_reset(&job);
		}
	}
	cleanup_engine_close(e);
	return rc == CLEANUP_OK ? EXIT_DONE : cli_fail(ctx, &err);
}

static const cli_option no_options[] = {
	CLI_ROW_END,
};

const cli_subcommand cmd_job_subcommands[] = {
	{"create", "prune|remove-library|remove-server",
	 "create a job: prune collects the seen-ID manifest; a removal closes admission now", create_options,
	 job_create},
	{"append", "JOB [EXTERNAL_ID...]", "add IDs (at most 128), or one a line on stdin", no_options, job_append},
	{"seal", "JOB", "seal with the traversal's unique count; fences", seal_options, job_seal},
	{"step", "JOB", "take one bounded step (or N)", cmd_job_step_options, cmd_job_step},
	{"run", "JOB", "step until done, stopped or out of budget; options: docs/steps.md, Settings",
	 cmd_job_run_options, cmd_job_run},
	{"pause", "JOB", "pause a collecting job", transition_options, job_transition},
	{"resume", "JOB", "resume a paused job", transition_options, job_transition},
	{"cancel", "JOB", "cancel a job until its first deletion (admission reopens)", transition_options,
	 job_transition},
	{"show", "JOB", "the job and its recent steps", show_options, job_show},
	{NULL, NULL, NULL, NULL, NULL},
};

static int exec_job(cli_ctx *ctx, int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";
	int i;

	for (i = 0; cmd_job_subcommands[i].name; i++)
		if (strcmp(sub, cmd_job_subcommands[i].name) == 0)
			return cmd_job_subcommands[i].exec(ctx, argc - 1, argv + 1);
	return cli_usage(ctx, &cmd_job_entry, "unknown job subcommand \"%s\"", sub);
}

/* Each subcommand parses its own words (cmd_job_subcommands). */
const cli_command cmd_job_entry = {
	.name = "job",
	.usage = "create|append|seal|step|run|pause|resume|cancel|show ...",
	.summary = "drive one cleanup job (see README: The CLI)",
	.exec_argv = exec_job,
};

/* cleanupctl job SUBCOMMAND: create, append, seal, pause, resume, cancel,
 * show (here) and step, run (cmd_job_step.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cleanup/job.h"
#include "cleanup/report.h"
#include "cli.h"

static int finish_job(cli_ctx *ctx, cleanup_engine *e, int rc, cleanup_job *job, cleanup_error *err,
                      const char *verb)
{
	int code = EXIT_DONE;

	if (rc != CLEANUP_OK) {
		code = cli_fail(ctx, err);
	} else if (ctx->json) {
		cli_json_doc(stdout, job->json);
		putchar('\n');
	} else {
		if (verb)
			printf("%s ", verb);
		cli_print_job_line(stdout, job);
	}
	cleanup_job_reset(job);
	cleanup_engine_close(e);
	return code;
}

static int job_create(cli_ctx *ctx, int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : NULL, *mode = NULL, *want;
	int64_t target = 0;
	bool have = false;
	cleanup_engine *e = NULL;
	cleanup_error err;
	cleanup_job job;
	int i, rc;

	if (!kind || (strcmp(kind, "prune") && strcmp(kind, "remove-library") && strcmp(kind, "remove-server")))
		return cli_usage(ctx, &cmd_job_entry, "job create needs prune, remove-library or remove-server, not \"%s\"",
		                 kind ? kind : "");
	want = strcmp(kind, "remove-server") == 0 ? "--server" : "--library";
	if (!cli_no_repeats(ctx, &cmd_job_entry, argc, argv, 2))
		return EXIT_USAGE;
	for (i = 2; i < argc; i++) {
		bool missing = false;
		const char *v;

		if ((v = cli_opt(argc, argv, &i, want, &missing))) {
			if (!cli_parse_id(ctx, want, v, &target))
				return EXIT_USAGE;
			have = true;
		} else if ((v = cli_opt(argc, argv, &i, "--mode", &missing))) {
			if (strcmp(v, "bounded") && strcmp(v, "single-transaction"))
				return cli_usage(ctx, &cmd_job_entry, "--mode must be bounded or single-transaction, not \"%s\"", v);
			mode = v;
		} else {
			return cli_usage(ctx, &cmd_job_entry, missing ? "%s needs a value" : "unexpected argument \"%s\"",
			                 argv[i]);
		}
	}
	if (!have)
		return cli_usage(ctx, &cmd_job_entry, "job create %s needs %s ID", kind, want);
	cli_job_app_name(ctx, 0, "create");
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	rc = cleanup_job_create(&job, e, kind, target, mode, &err);
	return finish_job(ctx, e, rc, &job, &err, "created");
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
		code = cli_interrupts() > 0 ? cli_fail_interrupted(ctx, &err, "the append call being sent") : cli_fail(ctx, &err);
	} else {
		code = cli_interrupts() > 0 ? EXIT_INTERRUPTED : EXIT_DONE;
		if (ctx->json)
			printf("{\"id\": %" PRId64 ", \"added\": %" PRId64 ", \"duplicates\": %" PRId64 ", \"calls\": %" PRId64
			       ", \"manifest_count\": %" PRId64 ", \"interrupted\": %s}\n",
			       id, t.added, t.duplicates, t.calls, t.manifest_count, cli_interrupts() > 0 ? "true" : "false");
		else
			printf("job %" PRId64 ": %" PRId64 " new, %" PRId64 " duplicate in %" PRId64
			       " call%s; manifest holds %" PRId64 " IDs%s\n",
			       id, t.added, t.duplicates, t.calls, t.calls == 1 ? "" : "s", t.manifest_count,
			       cli_interrupts() > 0 ? "; interrupted by Ctrl-C: the rest of the input was not read" : "");
		if (cli_interrupts() > 0 && unsent > 0 && !ctx->json)
			fprintf(stderr, "cleanupctl: %zu IDs read after the last call were not sent\n", unsent);
	}
	cleanup_engine_close(e);
	return code;
}

static int job_seal(cli_ctx *ctx, int argc, char **argv)
{
	int64_t id, expected = -1;
	cleanup_engine *e = NULL;
	cleanup_error err;
	cleanup_job job;
	int i, rc;

	if (argc < 2 || !cli_parse_id(ctx, "job id", argv[1], &id))
		return argc < 2 ? cli_usage(ctx, &cmd_job_entry, "job seal needs a job id and --expected N") : EXIT_USAGE;
	if (!cli_no_repeats(ctx, &cmd_job_entry, argc, argv, 2))
		return EXIT_USAGE;
	for (i = 2; i < argc; i++) {
		bool missing = false;
		const char *v = cli_opt(argc, argv, &i, "--expected", &missing);

		if (!v)
			return cli_usage(ctx, &cmd_job_entry, missing ? "%s needs a value" : "unexpected argument \"%s\"",
			                 argv[i]);
		if (!cli_parse_int(ctx, "--expected", v, 0, INT64_MAX, &expected))
			return EXIT_USAGE;
	}
	if (expected < 0)
		return cli_usage(ctx, &cmd_job_entry,
		                 "job seal needs --expected N: the unique count of the complete traversal");
	cli_job_app_name(ctx, id, "seal");
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	rc = cleanup_job_seal(&job, e, id, expected, &err);
	return finish_job(ctx, e, rc, &job, &err, "sealed");
}

static int job_transition(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_engine *e = NULL;
	cleanup_error err;
	cleanup_job job;
	int64_t id;
	int rc;

	if (argc != 2)
		return cli_usage(ctx, &cmd_job_entry, "job %s needs exactly one job id", argv[0]);
	if (!cli_parse_id(ctx, "job id", argv[1], &id))
		return EXIT_USAGE;
	cli_job_app_name(ctx, id, argv[0]);
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	rc = cleanup_job_transition(&job, e, id, argv[0], &err);
	return finish_job(ctx, e, rc, &job, &err,
	                  strcmp(argv[0], "pause") == 0 ? "paused" : strcmp(argv[0], "resume") == 0 ? "resumed" : "cancelled");
}

static int job_show(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_engine *e = NULL;
	cleanup_error err;
	cleanup_job job;
	char *json = NULL;
	int64_t id, steps = 10;
	int i, rc;

	if (argc < 2 || !cli_parse_id(ctx, "job id", argv[1], &id))
		return argc < 2 ? cli_usage(ctx, &cmd_job_entry, "job show needs a job id") : EXIT_USAGE;
	if (!cli_no_repeats(ctx, &cmd_job_entry, argc, argv, 2))
		return EXIT_USAGE;
	for (i = 2; i < argc; i++) {
		bool missing = false;
		const char *v = cli_opt(argc, argv, &i, "--steps", &missing);

		if (!v)
			return cli_usage(ctx, &cmd_job_entry, missing ? "%s needs a value" : "unexpected argument \"%s\"",
			                 argv[i]);
		if (!cli_parse_int(ctx, "--steps", v, 0, 1000, &steps))
			return EXIT_USAGE;
	}
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

static int exec_job(cli_ctx *ctx, int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";

	if (strcmp(sub, "create") == 0)
		return job_create(ctx, argc - 1, argv + 1);
	if (strcmp(sub, "append") == 0)
		return job_append(ctx, argc - 1, argv + 1);
	if (strcmp(sub, "seal") == 0)
		return job_seal(ctx, argc - 1, argv + 1);
	if (strcmp(sub, "pause") == 0 || strcmp(sub, "resume") == 0 || strcmp(sub, "cancel") == 0)
		return job_transition(ctx, argc - 1, argv + 1);
	if (strcmp(sub, "show") == 0)
		return job_show(ctx, argc - 1, argv + 1);
	if (strcmp(sub, "step") == 0)
		return cmd_job_step(ctx, argc - 1, argv + 1);
	if (strcmp(sub, "run") == 0)
		return cmd_job_run(ctx, argc - 1, argv + 1);
	return cli_usage(ctx, &cmd_job_entry, "unknown job subcommand \"%s\"", sub);
}

const cli_command cmd_job_entry = {
	"job",
	"create|append|seal|step|run|pause|resume|cancel|show ...",
	"drive one cleanup job (see README: The CLI)",
	exec_job,
};

const char cmd_job_help[] =
	"  job create prune --library ID           start collecting the seen-ID manifest\n"
	"  job create remove-library --library ID [--mode single-transaction]\n"
	"                                          remove a library (admission closes now);\n"
	"                                          single-transaction: the old one-transaction\n"
	"                                          cascade, for comparisons only\n"
	"  job create remove-server --server ID    remove a server and its libraries\n"
	"  job append JOB [EXTERNAL_ID...]         add IDs (at most 128), or one a line on stdin\n"
	"  job seal JOB --expected N               seal with the traversal's unique count; fences\n"
	"  job step JOB [--steps N] [--replay STEP_NO] [--preview]\n"
	"           [--timeout SECONDS] [--synchronous-commit on|off]\n"
	"  job run JOB [--max-steps N] [--deadline SECONDS] [--max-busy N]\n"
	"          [--backoff-max MS] [--reconnect N] [--timeout SECONDS]\n"
	"          [--synchronous-commit on|off] [--no-pipeline]\n"
	"                                          options: docs/steps.md, Settings\n"
	"  job pause|resume JOB                    collecting jobs only\n"
	"  job cancel JOB                          collecting or paused jobs only\n"
	"  job show JOB [--steps N]                the job and its recent steps\n";

/* cleanupctl job step / job run: bounded steps of a draining job, one at a
 * time (step, with --replay and --preview) or until done (run, with
 * progress on a terminal), and the recent-steps table of `job show`. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cleanup/job.h"
#include "cleanup/runner.h"
#include "cleanup/step.h"
#include "cli.h"
#include "ops.h"
#include "progress.h"
#include "sanitize.h"

/* Optional statement timeout (B1): --timeout SECONDS, default
 * TUI_OP_STATEMENT_TIMEOUT_S (300, as the console's actions). */
static int apply_timeout(cli_ctx *ctx, cleanup_engine *e, int64_t seconds)
{
	cleanup_error err;

	/* The global --timeout (main.c) wins over the default; 0 is none. */
	if (ctx->timeout_s >= 0)
		seconds = ctx->timeout_s;
	if (seconds >= 0 && cleanup_engine_set_timeout(e, (int)(seconds * 1000), &err) != CLEANUP_OK)
		return cli_fail(ctx, &err);
	return 0;
}

/* --synchronous-commit on|off (docs/steps.md, "Settings"): SYNC 1 or 0,
 * -1 when not given (the session's). */
static int apply_sync(cli_ctx *ctx, cleanup_engine *e, int sync)
{
	cleanup_error err;

	if (sync >= 0 && cleanup_step_set_synchronous_commit(e, sync == 1, &err) != CLEANUP_OK)
		return cli_fail(ctx, &err);
	return 0;
}

static void print_step_line(FILE *f, const cleanup_step_result *s)
{
	/* Actions, phases and external IDs come from the database: sanitized. */
	char action[64], from[600], to[600], phase[64];

	tui_sanitize(action, sizeof action, s->action);
	tui_sanitize(phase, sizeof phase, s->phase_after);
	if (s->preview)
		fprintf(f, "preview of step %d", s->step_no);
	else if (s->replayed)
		fprintf(f, "step %d (recorded, replayed; nothing was done)", s->step_no);
	else
		fprintf(f, "step %d", s->step_no);
	fprintf(f, ": %s, pass %d", action, s->pass_no);
	if (s->library_id > 0)
		fprintf(f, ", library %" PRId64, s->library_id);
	fputc('\n', f);
	if (strcmp(s->action, "final-check") == 0)
		fprintf(f, "  checked %d rows (external IDs after \"%s\" up to \"%s\") for eligible survivors\n", s->checked,
		        tui_sanitize(from, sizeof from, s->check_from), tui_sanitize(to, sizeof to, s->check_to));
	else if (strcmp(s->action, "single-transaction") == 0)
		fprintf(f, "  %s %d rows of the library in one transaction\n", s->preview ? "would delete" : "deleted",
		        s->deleted);
	else if (s->examined > 0 || strcmp(s->action, "drain") == 0 || strcmp(s->action, "pass") == 0) {
		/* The range the step walked: external IDs in a prune's first
		 * pass in key order (schema 12: check_from/check_to), else ids. */
		char range[1300];

		if (strcmp(s->action, "drain") == 0 && (s->check_from[0] || s->check_to[0]))
			snprintf(range, sizeof range, "external IDs after \"%s\" up to \"%s\"",
			         tui_sanitize(from, sizeof from, s->check_from), tui_sanitize(to, sizeof to, s->check_to));
		else
			snprintf(range, sizeof range, "ids %" PRId64 "..%" PRId64, s->cursor_from, s->cursor_to);
		fprintf(f, "  %s %d rows (%s): kept %d seen; %s %d candidates: %s %d, moved %d, absent %d, retained %d\n",
		        s->preview ? "would examine" : "examined", s->examined, range, s->kept,
		        s->preview ? "would visit" : "visited", s->visited, s->preview ? "would delete" : "deleted",
		        s->deleted, s->moved, s->absent, s->retained);
	}
	if (s->claimed || s->released || s->claims_in_flight)
		fprintf(f, "  claims: %d new, %d items deleted with their dependents, %d in flight\n", s->claimed,
		        s->released, s->claims_in_flight);
	if (s->retries_deleted || s->previews_deleted)
		fprintf(f, "  dependents %s: %d item retries, %d identity review previews\n",
		        s->preview ? "would go" : "deleted", s->retries_deleted, s->previews_deleted);
	if (s->collections_deleted || s->sync_status_deleted || s->history_detached)
		fprintf(f, "  library dependents: %s %d collections, %d sync status; %s %d history records\n",
		        s->preview ? "would delete" : "deleted", s->collections_deleted, s->sync_status_deleted,
		        s->preview ? "would detach" : "detached", s->history_detached);
	if (s->libraries_deleted || s->servers_deleted)
		fprintf(f, "  %s %d %s, %d %s\n", s->preview ? "would delete" : "deleted", s->libraries_deleted,
		        s->libraries_deleted == 1 ? "library" : "libraries", s->servers_deleted,
		        s->servers_deleted == 1 ? "server" : "servers");
	if (!s->preview) {
		fprintf(f, "  %d mutations, %.3f ms, locks held %.3f ms", s->mutations, s->duration_ms, s->lock_hold_ms);
		if (s->parent_lock_ms >= 0)
			fprintf(f, ", parent row lock %.3f ms", s->parent_lock_ms);
		fputc('\n', f);
	}
	fprintf(f, "  phase after: %s\n", phase);
}

/* {"job": JOB, "steps": [STEP...], "interrupted": BOOL}: one document for
 * every form of job step; INTERRUPTED tells that a Ctrl-C stopped a
 * --steps loop after the steps listed. */
static void print_steps_json(const cleanup_job *job, const cleanup_step_result *steps, int n, bool interrupted)
{
	int i;

	printf("{\"job\": ");
	cli_json_doc(stdout, job && job->json ? job->json : "null");
	printf(", \"steps\": [");
	for (i = 0; i < n; i++) {
		printf("%s", i ? ", " : "");
		cli_json_doc(stdout, steps[i].json ? steps[i].json : "null");
	}
	printf("], \"interrupted\": %s}\n", interrupted ? "true" : "false");
}

typedef struct step_opts {
	cli_step_opts so;
	int64_t steps, replay;
	bool preview;
	double wait; /* --wait: busy answers retried until then */
} step_opts;

const cli_option cmd_job_step_options[] = {
	CLI_ROW_INT("--steps", "N", "take up to N steps in a row (1 to 100000)", step_opts, steps, 1, 100000),
	CLI_ROW_INT("--replay", "STEP_NO", "show the recorded result of step STEP_NO again (changes nothing)", step_opts,
	            replay, 1, INT32_MAX),
	CLI_ROW_FLAG("--preview", "what the next step would do, rolled back (changes nothing)", step_opts, preview, 0),
	CLI_WAIT_ROW(step_opts, wait),
	CLI_STEP_TIMEOUT_ROW(step_opts),
	CLI_STEP_SYNC_ROW(step_opts, "the step transactions' synchronous_commit"),
	CLI_ROW_END,
};

/* After a Ctrl-C, SIGTERM or SIGHUP stopped `job step --steps N` (human output only): how
 * many steps this command committed (N) and the job's step as the
 * database has it, on F (stdout after a finished step, stderr after a
 * cancelled one), even with --quiet. */
static void print_interrupted_steps(FILE *f, const cli_ctx *ctx, cleanup_engine *e, int64_t id, int n)
{
	cleanup_job j;
	cleanup_error err;

	if (ctx->json)
		return;
	memset(&j, 0, sizeof j);
	if (cleanup_job_get(&j, e, id, &err) == CLEANUP_OK)
		fprintf(f,
		        "job %" PRId64 ": interrupted by %s after %d step%s of this command; the job is at step %d as "
		        "the database has it; cleanupctl job step %" PRId64 " continues\n",
		        id, cli_interrupt_name(), n, n == 1 ? "" : "s", j.step_no, id);
	else
		fprintf(f, "job %" PRId64 ": interrupted by %s after %d step%s of this command\n", id,
		        cli_interrupt_name(), n, n == 1 ? "" : "s");
	cleanup_job_reset(&j);
}

int cmd_job_step(cli_ctx *ctx, int argc, char **argv)
{
	step_opts o = {{TUI_OP_STATEMENT_TIMEOUT_S, -1, 0, 0}, 1, 0, false, 0};
	int64_t id;
	cli_wait w;
	cleanup_step_result *steps = NULL;
	cleanup_engine *e = NULL;
	cleanup_error err;
	cleanup_job job;
	bool interrupted = false;
	cli_args a;
	int i, n = 0, rc = CLEANUP_OK, code;

	memset(&job, 0, sizeof job);
	if ((code = cli_job_args(ctx, argc, argv, &id, &o, &a)))
		return code;
	if ((o.replay > 0) + o.preview + cli_given(&a, cmd_job_step_options, "--steps") > 1)
		return cli_usage(ctx, &cmd_job_entry, "job step takes one of --steps, --replay and --preview");

	/* application_name, so the console's lock panel maps backends to jobs. */
	cli_job_app_name(ctx, id, o.replay ? "replay" : o.preview ? "preview" : "step");
	if ((code = cli_connect(ctx, &e, true)))
		return code;
	if ((code = apply_timeout(ctx, e, o.so.timeout)) || (code = apply_sync(ctx, e, o.so.sync))) {
		cleanup_engine_close(e);
		return code;
	}
	steps = calloc((size_t)(o.replay || o.preview ? 1 : o.steps), sizeof *steps);
	if (!steps) {
		cleanup_engine_close(e);
		fprintf(stderr, "cleanupctl: out of memory\n");
		return EXIT_ERROR;
	}

	if (o.replay) {
		rc = cleanup_job_step_replay(&steps[0], e, id, (int32_t)o.replay, &err);
		n = rc == CLEANUP_OK;
	} else if (o.preview) {
		rc = tui_op_preview(&steps[0], e, id, &err);
		n = rc == CLEANUP_OK;
	} else {
		/* The job's last committed step, then exactly the next ones.
		 * Ctrl-C as in job run: the first lets the step running commit and
		 * stops before the next; the second cancels the step running (it
		 * rolls back). */
		/* One runner per job: job step drives the job through the job
		 * driver (cleanup/runner.h) like job run and the console, holding
		 * its runner lease while it steps; a job another runner holds is
		 * busy at once, naming it (exit 3). */
		cleanup_runner_opts ro;
		cleanup_runner *r = NULL;

		memset(&ro, 0, sizeof ro);
		ro.claim_grace_s = -1;
		rc = cleanup_runner_open(&r, e, id, &ro, NULL, &err);
		cli_interrupt_begin(e, true);
		for (i = 0; rc == CLEANUP_OK && i < o.steps && !*cli_interrupt_flag(); i++) {
			/* --wait: each step retries a busy answer until the deadline
			 * (bounded backoff), then the busy error stands (exit 3). */
			cli_wait_begin(&w, o.wait);
			do
				rc = cleanup_runner_step(r, &steps[n], &err);
			while (rc != CLEANUP_OK && !*cli_interrupt_flag() && cli_wait_again(&w, &err));
			if (rc != CLEANUP_OK)
				break;
			n++;
			if (!ctx->json && !ctx->quiet)
				print_step_line(stdout, &steps[n - 1]);
			if (strcmp(steps[n - 1].phase_after, "completed") == 0)
				break;
		}
		cli_interrupt_end();
		cleanup_runner_close(r, NULL, NULL);
		/* A Ctrl-C during the last step asked for (or the one that
		 * completed the job) stopped nothing: the loop was ending anyway. */
		if (cli_interrupts() > 0)
			interrupted = rc != CLEANUP_OK ||
			              (n < o.steps && !(n > 0 && strcmp(steps[n - 1].phase_after, "completed") == 0));
		if (rc != CLEANUP_OK && n > 0 && !ctx->json)
			fprintf(stderr, "cleanupctl: %d step%s committed before this failure\n", n, n == 1 ? "" : "s");
	}
	if ((o.replay || o.preview) && rc == CLEANUP_OK && !ctx->json && !ctx->quiet)
		print_step_line(stdout, &steps[0]);

	if (rc != CLEANUP_OK) {
		code = interrupted ? cli_fail_interrupted(ctx, &err, "the step running") : cli_fail(ctx, &err);
		if (interrupted)
			print_interrupted_steps(stderr, ctx, e, id, n);
	} else {
		code = tui_op_exit_code(CLEANUP_OK, interrupted);
		if (ctx->json) {
			cleanup_job_reset(&job);
			rc = cleanup_job_get(&job, e, id, &err);
			if (rc != CLEANUP_OK)
				code = cli_fail(ctx, &err);
			else
				print_steps_json(&job, steps, n, interrupted);
		} else if (interrupted) {
			print_interrupted_steps(stdout, ctx, e, id, n);
		}
	}
	cleanup_step_results_free(steps, (size_t)(o.replay || o.preview ? 1 : o.steps));
	cleanup_job_reset(&job);
	cleanup_engine_close(e);
	return code;
}

/* --- job run ------------------------------------------------------------- */

/* What the run shows on a terminal: the job after each step and the steps
 * it committed (their start, end and settled rows), from which the shared
 * progress line (progress.h) takes the same pace window as the console's
 * monitor does with SQL: the steps of the last 60 s, up to now. */
typedef struct run_view {
	bool tty;
	bool quiet;
	double last_draw;
	tui_step_window steps;
	double max_rate;        /* --max-rate: steps per second, 0: no limit */
	double next_step_at;    /* monotonic: when the throttle lets the next step go */
} run_view;

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fmt_duration(char *buf, size_t len, double s)
{
	long t = s < 0 || !isfinite(s) ? 0 : (long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
	else
		snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

/* The progress line: "job N: " and the shared line (rows settled of the
 * rows in scope, pace, ETA), then step, pass, phase and time elapsed. */
static void draw_progress(run_view *v, const cleanup_run_progress *p, bool final)
{
	char line[256], el[32];

	fmt_duration(el, sizeof el, p->elapsed_s);
	fprintf(stderr, "\r\033[Kjob %" PRId64 ": %s", p->job->id,
	        tui_run_progress_text(line, sizeof line, p->job, &v->steps, wall_s(), (int)getpid()));
	fprintf(stderr, ", step %d, pass %d, %s, %s elapsed", p->job->step_no,
	        p->step ? p->step->pass_no : p->job->pass_no, p->job->phase, el);
	if (p->busy_retries > 0)
		fprintf(stderr, ", %d busy", p->busy_retries);
	if (final)
		fputc('\n', stderr);
	fflush(stderr);
}

static double view_rate(void *arg)
{
	const run_view *v = arg;

	return v->max_rate;
}

static bool view_interrupted(void *arg)
{
	(void)arg;
	return *cli_interrupt_flag() != 0;
}

/* Sleeps until the throttle lets the next step go (--max-rate), in naps of
 * at most 50 ms so that a Ctrl-C is seen (ops.h, the same as the
 * console's runs); false when interrupted. */
static bool throttle(run_view *v)
{
	return tui_op_throttle_sleep(&v->next_step_at, view_rate, view_interrupted, v, 0.05);
}

static bool run_callback(const cleanup_run_progress *p, void *arg)
{
	run_view *v = arg;

	if (p->step) {
		double end = wall_s();
		const cleanup_step_result *s = p->step;

		tui_step_window_add(&v->steps, end - s->duration_ms / 1000.0, end,
		                    (int64_t)s->deleted + s->moved + s->absent + s->kept);
	}
	if (v->tty && !v->quiet &&
	    /* At most ten redraws a second, and always the last step. */
	    (p->elapsed_s - v->last_draw >= 0.1 || (p->step && strcmp(p->step->phase_after, "completed") == 0))) {
		draw_progress(v, p, false);
		v->last_draw = p->elapsed_s;
	}
	if (p->step && strcmp(p->step->phase_after, "completed") != 0)
		return throttle(v);
	return true;
}

typedef struct run_opts {
	cli_step_opts so;
	int64_t max_steps, reconnects;
	double deadline, max_rate;
	bool no_pipeline;
} run_opts;

const cli_option cmd_job_run_options[] = {
	CLI_ROW_INT("--max-steps", "N", "stop after N steps", run_opts, max_steps, 1, INT32_MAX),
	{"--deadline", "SECONDS", "stop after SECONDS (after the current step)", NULL, CLI_DECIMAL,
	 offsetof(run_opts, deadline), 0, 7 * 86400 * 1000LL, CLI_ABOVE_MIN,
	 "must be a number of seconds above 0 and at most 604800", NULL},
	CLI_STEP_BUSY_ROWS(run_opts, "give up after N busy retries in a row (exit 3)",
	                   "the longest wait between busy retries"),
	CLI_ROW_INT("--reconnect", "N", "reconnect at most N times after a lost connection", run_opts, reconnects, 0,
	            1000),
	CLI_STEP_TIMEOUT_ROW(run_opts),
	CLI_STEP_SYNC_ROW(run_opts, "the step transactions' synchronous_commit"),
	CLI_ROW_FLAG("--no-pipeline", "one round trip per step, no pipelining", run_opts, no_pipeline, 0),
	{"--max-rate", "STEPS", "at most STEPS steps a second (a throttle to watch a demo run; 0.1 to 1000)", NULL,
	 CLI_DECIMAL, offsetof(run_opts, max_rate), 100, 1000000, 0,
	 "must be a number of steps a second from 0.1 to 1000", NULL},
	CLI_ROW_END,
};

int cmd_job_run(cli_ctx *ctx, int argc, char **argv)
{
	/* A run's drain steps commit asynchronously unless told otherwise: a
	 * lost step is lost whole and runs again (S7), and completing and
	 * parent-deleting steps always commit synchronously, so what a run
	 * reports as done is durable (docs/steps.md, Settings). */
	run_opts o = {{TUI_OP_STATEMENT_TIMEOUT_S, 0, 100, 1000}, 0, 0, 0, 0, false};
	int64_t id;
	cleanup_run_opts opts;
	cleanup_run_summary sum;
	cleanup_engine *e = NULL;
	cleanup_error err;
	run_view view;
	bool interrupted;
	cli_args a;
	int rc, code;

	if ((code = cli_job_args(ctx, argc, argv, &id, &o, &a)))
		return code;

	cli_job_app_name(ctx, id, "run");
	if ((code = cli_connect(ctx, &e, true)))
		return code;
	/* The step commit mode is the run's (opts.step_commit below): set at
	 * its start and again on every reconnect's new session. */
	if ((code = apply_timeout(ctx, e, o.so.timeout))) {
		cleanup_engine_close(e);
		return code;
	}
	memset(&view, 0, sizeof view);
	view.tty = !ctx->json && isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
	view.quiet = ctx->quiet;
	view.max_rate = o.max_rate;
	{
		/* the job must exist before the run says anything */
		cleanup_job j;

		if (cleanup_job_get(&j, e, id, &err) != CLEANUP_OK) {
			cleanup_engine_close(e);
			return cli_fail(ctx, &err);
		}
		cleanup_job_reset(&j);
	}
	/* what every run shares with the console's (ops.h): asynchronous
	 * drain steps, one step at a time when throttled */
	tui_op_run_opts_init(&opts, o.max_rate);
	opts.max_steps = (int)o.max_steps;
	opts.deadline_s = o.deadline;
	opts.backoff_max_ms = (int)o.so.backoff_max;
	opts.max_busy_retries = (int)o.so.max_busy;
	opts.max_reconnects = (int)o.reconnects;
	opts.no_pipeline = opts.no_pipeline || o.no_pipeline;
	if (o.so.sync == 1)
		opts.step_commit = CLEANUP_STEP_COMMIT_SYNC;
	opts.callback = run_callback;
	opts.callback_arg = &view;

	opts.interrupt = cli_interrupt_flag();

	/* Ctrl-C: the first finishes the current step and stops; the second
	 * cancels the step running (it rolls back). */
	cli_interrupt_begin(e, true);
	rc = tui_op_run(&sum, e, id, &opts, &err);
	cli_interrupt_end();
	/* A Ctrl-C during the step that completed the job stops nothing. */
	interrupted = cli_interrupts() > 0 && !sum.completed;
	if (view.tty && !view.quiet && sum.steps > 0) {
		cleanup_run_progress p;

		memset(&p, 0, sizeof p);
		p.job = &sum.job;
		p.steps_done = sum.steps;
		p.busy_retries = sum.busy_retries;
		p.elapsed_s = sum.elapsed_s;
		draw_progress(&view, &p, true);
	}

	if (ctx->json) {
		/* One document: the summary, with the error when the run failed. */
		printf("{\"job\": ");
		cli_json_doc(stdout, sum.job.json && *sum.job.json ? sum.job.json : "null");
		/* steps_taken, not steps: in job step and job show "steps" is the
		 * array of step records (docs/json.md, version 2). */
		printf(", \"steps_taken\": %d, \"busy_retries\": %d, \"reconnects\": %d, \"replayed\": %d, "
		       "\"lost_steps\": %d, \"verified\": %s, \"interrupted\": %s, "
		       "\"elapsed_s\": %.3f, \"completed\": %s, \"stopped\": %s, \"stop_reason\": ",
		       sum.steps, sum.busy_retries, sum.reconnects,
		       sum.replayed, sum.lost_steps, sum.verified ? "true" : "false", interrupted ? "true" : "false",
		       sum.elapsed_s, sum.completed ? "true" : "false", sum.stopped ? "true" : "false");
		cli_json_string(stdout, sum.stop_reason);
		/* what stopped it: "SIGINT" (Ctrl-C), "SIGTERM", "SIGHUP", or null */
		printf(", \"signal\": ");
		if (interrupted)
			cli_json_string(stdout, strcmp(cli_interrupt_name(), "Ctrl-C") == 0 ? "SIGINT" : cli_interrupt_name());
		else
			printf("null");
		if (rc != CLEANUP_OK) {
			printf(", \"error\": ");
			cli_json_error(stdout, &err, tui_op_exit_code(err.status, interrupted),
			               interrupted ? "interrupted" : NULL);
		}
		printf("}\n");
	}
	if (rc != CLEANUP_OK) {
		bool json = ctx->json;
		char line[512];

		ctx->json = false; /* the document above already carries the error */
		code = cli_fail(ctx, &err);
		ctx->json = json;
		fprintf(stderr, "cleanupctl: %s\n", cli_run_summary_text(line, sizeof line, id, &sum, true));
		if (interrupted)
			code = EXIT_INTERRUPTED;
	} else {
		code = tui_op_exit_code(CLEANUP_OK, interrupted);
		if (!ctx->json && (!ctx->quiet || interrupted)) {
			char line[512];

			printf("%s", cli_run_summary_text(line, sizeof line, id, &sum, false));
			if (interrupted)
				printf(" (stopped by %s after the step in flight; cleanupctl job run %" PRId64 " continues)", cli_interrupt_name(),
				       id);
			printf("\n");
		}
	}
	cleanup_job_reset(&sum.job);
	cleanup_engine_close(e);
	return code;
}

const char *cli_run_summary_text(char *buf, size_t len, int64_t id, const cleanup_run_summary *sum, bool failed)
{
	char a[32], phase[64], lost[200] = "";
	size_t o;

	if (sum->lost_steps > 0)
		snprintf(lost, sizeof lost,
		         "; %d acknowledged step%s did not survive (asynchronous commit, server crash): %s again", sum->lost_steps,
		         sum->lost_steps == 1 ? "" : "s", sum->lost_steps == 1 ? "it runs" : "they run");
	tui_sanitize(phase, sizeof phase, sum->job.phase);
	if (failed && !sum->verified) {
		snprintf(buf, len,
		         "job %" PRId64 ": %d step%s acknowledged by this run, up to step %d, not confirmed: the database "
		         "could not be reached (an asynchronous commit may lose acknowledged steps in a server crash)%s; "
		         "check with: cleanupctl job show %" PRId64,
		         id, sum->steps, sum->steps == 1 ? "" : "s", (int)sum->acked_step_no, lost, id);
		return buf;
	}
	if (failed) {
		snprintf(buf, len,
		         "job %" PRId64 " is at step %d as the database has it (%d step%s acknowledged by this run%s); it "
		         "resumes from step %d",
		         id, sum->job.step_no, sum->steps, sum->steps == 1 ? "" : "s", lost, sum->job.step_no + 1);
		return buf;
	}
	if (sum->completed && sum->steps == 0 && sum->lost_steps == 0) {
		snprintf(buf, len, "job %" PRId64 " is already completed", id);
		return buf;
	}
	snprintf(buf, len, "job %" PRId64 ": %d step%s in %.2f s, %s; phase %s, step %d, %s deleted in all%s", id,
	         sum->steps, sum->steps == 1 ? "" : "s", sum->elapsed_s, sum->completed ? "completed" : sum->stop_reason,
	         phase, sum->job.step_no, cli_count(a, sizeof a, sum->job.deleted), lost);
	o = strlen(buf);
	if (!sum->verified && o < len)
		snprintf(buf + o, len - o, " (not confirmed: the database could not be reached)");
	return buf;
}

/* --- job show's recent steps ---------------------------------------------- */

void cli_print_job_steps(FILE *f, cleanup_engine *engine, int64_t job_id, int n)
{
	cleanup_step_result *steps = NULL;
	cleanup_error err;
	size_t count = 0, i;

	if (n <= 0)
		return;
	if (cleanup_job_steps_list(&steps, &count, engine, job_id, n, &err) != CLEANUP_OK) {
		fputs("  (steps unavailable: ", f);
		tui_fputs_safe(err.message, f);
		fputs(")\n", f);
		return;
	}
	if (count == 0) {
		fprintf(f, "  no steps yet\n");
		goto out;
	}
	fprintf(f, "  recent steps (newest first)\n");
	fprintf(f, "  %6s %-18s %4s %8s %7s %7s %5s %6s %8s %6s %4s %9s %9s %9s  %s\n", "step", "action", "pass",
	        "examined", "visited", "deleted", "moved", "absent", "retained", "kept", "mut", "ms", "lock ms",
	        "parent ms", "after");
	for (i = 0; i < count; i++) {
		const cleanup_step_result *s = &steps[i];
		char parent[16], action[64], phase[64];

		if (s->parent_lock_ms >= 0)
			snprintf(parent, sizeof parent, "%.3f", s->parent_lock_ms);
		else
			snprintf(parent, sizeof parent, "-");
		fprintf(f, "  %6d %s %4d %8d %7d %7d %5d %6d %8d %6d %4d %9.3f %9.3f %9s  %s\n", s->step_no,
		        tui_sanitize_cell(action, sizeof action, s->action, 18),
		        s->pass_no, s->examined, s->visited, s->deleted, s->moved, s->absent, s->retained, s->kept, s->mutations,
		        s->duration_ms, s->lock_hold_ms, parent, tui_sanitize(phase, sizeof phase, s->phase_after));
	}
out:
	cleanup_step_results_free(steps, count);
}

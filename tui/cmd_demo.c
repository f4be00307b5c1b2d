/* cleanupctl demo: the console on demo data, from the binary alone (the
 * same as `make demo`, scripts/demo.sh): start the sandbox (unless --db
 * names a database), install, seed when there is nothing, create a prune
 * job with a sealed manifest so that there is something to step, start two
 * simulated sync writers, open the console, and stop the writers when it
 * closes. Off a terminal it prints `status` instead and exits 0, so that
 * scripts and CI never hang on it.
 *
 * `cleanupctl demo kill-runner` (issue 11, item 14: a recovery an operator
 * follows from the console alone) also starts a runner of the demo job,
 * `cleanupctl job run JOB --max-rate 1`, and opens the console throttled
 * to the same rate, with the scenario narrated in the log panel: kill the
 * runner (K), see NO RUNNER with the library still closed to writers,
 * resume (r), see the gap and the counters add up. The console narrates
 * what happens to the job as it happens (console.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cleanup/install.h"
#include "cleanup/job.h"
#include "cleanup/report.h"
#include "cleanup/sandbox.h"
#include "cleanup/seed.h"
#include "cli.h"
#include "console.h"

#define DEMO_WRITERS 2

/* The library for the demo job: an open library with items, on a server
 * without an unfinished job, that no prune job has visited yet. -1 when
 * there is none; *JOB gets an unfinished draining job to reuse instead. */
static int64_t pick_library(const cleanup_server_row *sv, size_t ns, const cleanup_library_row *lb, size_t nl,
                            const cleanup_job *jobs, size_t nj, int64_t *items, int64_t *reuse_job)
{
	size_t i, k;

	*reuse_job = -1;
	for (k = 0; k < nj; k++)
		if (strcmp(jobs[k].phase, "draining") == 0 || strcmp(jobs[k].phase, "finalizing") == 0) {
			*reuse_job = jobs[k].id;
			return -1;
		}
	for (i = 0; i < nl; i++) {
		bool busy = false, used = false;

		for (k = 0; k < ns; k++)
			if (sv[k].id == lb[i].server_id && sv[k].job_id > 0)
				busy = true;
		for (k = 0; k < nj; k++)
			if (jobs[k].library_id == lb[i].id)
				used = true;
		if (!busy && !used && strcmp(lb[i].admission, "open") == 0 && lb[i].item_count >= 8) {
			*items = lb[i].item_count;
			return lb[i].id;
		}
	}
	return -1;
}

/* Creates the demo job on LIBRARY: a manifest of the first KEEP_QUARTERS
 * quarters of the seeded external IDs (ext-<library>-<n>), sealed with its
 * count. */
static int create_job(cleanup_job *out, cleanup_engine *e, int64_t library, int64_t items, int keep_quarters,
                      cleanup_error *err)
{
	char *batch[CLEANUP_APPEND_MAX];
	char bufs[CLEANUP_APPEND_MAX][48];
	int64_t keep = items * keep_quarters / 4, n, id;
	cleanup_job job;
	int rc;
	size_t b = 0;

	if (keep > 20000)
		keep = 20000;
	rc = cleanup_job_create(&job, e, "prune", library, NULL, err);
	if (rc != CLEANUP_OK)
		return rc;
	for (n = 1; n <= keep; n++) {
		snprintf(bufs[b], sizeof bufs[b], "ext-%" PRId64 "-%" PRId64, library, n);
		batch[b] = bufs[b];
		if (++b == CLEANUP_APPEND_MAX || n == keep) {
			cleanup_append_result r;

			rc = cleanup_job_append(&r, e, job.id, (const char *const *)batch, b, err);
			if (rc != CLEANUP_OK)
				goto out;
			cleanup_job_reset(&r.job);
			b = 0;
		}
	}
	id = job.id;
	cleanup_job_reset(&job);
	if ((rc = cleanup_job_get(&job, e, id, err)) != CLEANUP_OK)
		return rc;
	rc = cleanup_job_seal(out, e, id, job.manifest_count, err);
out:
	cleanup_job_reset(&job);
	return rc;
}

/* The scenarios `cleanupctl demo NAME` knows. */
static const char *const scenarios[] = {"kill-runner"};

/* Starts `cleanupctl --db CONNINFO job run JOB --max-rate RATE --max-busy
 * 100000` with its output in LOG; it dies with us (PR_SET_PDEATHSIG).
 * Returns its pid (-1 when fork failed). */
static pid_t start_runner(const char *conninfo, int64_t job, const char *rate, const char *log)
{
	char jbuf[24];
	pid_t pid;

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job);
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		int nul = open("/dev/null", O_RDONLY);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		if (nul >= 0)
			dup2(nul, STDIN_FILENO);
		execl("/proc/self/exe", "cleanupctl", "--db", conninfo, "job", "run", jbuf, "--max-rate", rate, "--max-busy",
		      "100000", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Starts `cleanupctl --db CONNINFO writer --rate 4 --server S` with its
 * output in LOG; it dies with us (PR_SET_PDEATHSIG). Returns its pid. */
static pid_t start_writer(const char *conninfo, int64_t server, const char *log)
{
	char sbuf[24];
	pid_t pid;

	snprintf(sbuf, sizeof sbuf, "%" PRId64, server);
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		int nul = open("/dev/null", O_RDONLY);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		if (nul >= 0)
			dup2(nul, STDIN_FILENO);
		execl("/proc/self/exe", "cleanupctl", "--db", conninfo, "writer", "--rate", "4", "--server", sbuf,
		      (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int exec_demo(cli_ctx *ctx, int argc, char **argv)
{
	static char conninfo[CLEANUP_PATH_MAX + 128];
	cleanup_server_row *sv = NULL;
	cleanup_library_row *lb = NULL;
	cleanup_job *jobs = NULL, job;
	size_t ns = 0, nl = 0, nj = 0, i;
	cleanup_engine *e = NULL;
	cleanup_install_result ir;
	cleanup_error err;
	cleanup_sandbox sb;
	pid_t writers[DEMO_WRITERS] = {0};
	char logdir[CLEANUP_PATH_MAX + 8], dbname[128];
	int64_t library, items = 0, reuse = -1, demo_server = -1, demo_job = -1;
	bool tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	int rc = EXIT_ERROR, nw = 0;
	const char *scenario = NULL;
	pid_t runner = -1;
	char narration[1400] = "";

	memset(&job, 0, sizeof job);
	if (argc > 2)
		return cli_usage(ctx, &cmd_demo_entry, "unexpected argument \"%s\"", argv[2]);
	if (argc == 2) {
		for (i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
			if (strcmp(argv[1], scenarios[i]) == 0)
				scenario = scenarios[i];
		if (!scenario)
			return cli_usage(ctx, &cmd_demo_entry, "unknown scenario \"%s\": the scenarios are: kill-runner",
			                 argv[1]);
	}
	snprintf(logdir, sizeof logdir, "/tmp");
	if (!ctx->db) {
		if (cleanup_sandbox_init(&sb, NULL, &err) != CLEANUP_OK || cleanup_sandbox_start(&sb, &err) != CLEANUP_OK)
			return cli_fail(ctx, &err);
		cleanup_sandbox_conninfo(&sb, NULL, conninfo, sizeof conninfo);
		ctx->db = conninfo;
		snprintf(logdir, sizeof logdir, "%s/log", sb.dir);
		fprintf(stderr, "demo: sandbox running (%s)\n", conninfo);
	}
	ctx->app_name = "cleanupctl:demo";
	if ((rc = cli_connect(ctx, &e, false)))
		return rc;
	rc = EXIT_ERROR;
	if (cleanup_install(&ir, e, &err) != CLEANUP_OK)
		goto fail;
	if (cleanup_status_rows(&sv, &ns, &lb, &nl, e, &err) != CLEANUP_OK)
		goto fail;
	if (ns == 0) {
		/* About 3 dependent records per item (issue 7): the console shows
		 * dependents and claims from the first job on. */
		cleanup_seed_spec spec = {3, 3, 20000, 3};
		cleanup_seed_result sr;

		if (cleanup_seed(&sr, e, &spec, &err) != CLEANUP_OK)
			goto fail;
		fprintf(stderr, "demo: seeded %d servers, %d libraries, %" PRId64 " items, %" PRId64 " dependent records\n",
		        sr.servers, sr.libraries, sr.items, sr.dependents);
		free(sv);
		free(lb);
		sv = NULL;
		lb = NULL;
		if (cleanup_status_rows(&sv, &ns, &lb, &nl, e, &err) != CLEANUP_OK)
			goto fail;
	}
	if (cleanup_jobs_list(&jobs, &nj, e, 1000, &err) != CLEANUP_OK)
		goto fail;
	library = pick_library(sv, ns, lb, nl, jobs, nj, &items, &reuse);
	if (reuse > 0) {
		fprintf(stderr, "demo: job %" PRId64 " is still draining: step it in the console\n", reuse);
		for (i = 0; i < nj; i++)
			if (jobs[i].id == reuse)
				demo_server = jobs[i].server_id;
		demo_job = reuse;
	} else if (library > 0) {
		if (create_job(&job, e, library, items, scenario ? 1 : 3, &err) != CLEANUP_OK)
			goto fail;
		demo_server = job.server_id;
		demo_job = job.id;
		fprintf(stderr, "demo: job %" PRId64 " prunes library %" PRId64 " (%s); manifest of %" PRId64 " IDs sealed\n",
		        job.id, library, job.target_name, job.manifest_count);
	} else {
		fprintf(stderr, "demo: every library has had its demo job; remove the sandbox for a fresh demo "
		                "(cleanupctl sandbox stop, then delete its directory)\n");
	}
	snprintf(dbname, sizeof dbname, "%s", cleanup_engine_dbname(e));
	cleanup_engine_close(e);
	e = NULL;
	if (scenario && demo_job <= 0) {
		cleanup_error_set(&err, CLEANUP_EREFUSED,
		                  "demo %s needs a draining job and none could be made: every library has had its demo job",
		                  scenario);
		goto fail;
	}
	if (scenario)
		snprintf(narration, sizeof narration,
		         "demo kill-runner: job %" PRId64 " is run by `cleanupctl job run %" PRId64 " --max-rate 1`, "
		         "one step a second.\n"
		         "1. Enter opens the job: the runner line names its backend; a step arrives every second.\n"
		         "2. K, then y: the runner's backend is terminated; within a second the job says NO RUNNER.\n"
		         "   Its library stays closed to writers meanwhile (the locks panel counts their rejections).\n"
		         "3. r, then the phrase: this console resumes the job (throttled too; :throttle 0 lifts it).\n"
		         "   It goes on at the next step from the last committed cursor (the GAP column: the pause),\n"
		         "   and the counters add up: deleted + kept = the library's items before the job.",
		         demo_job, demo_job);

	if (!tty) {
		char *sargv[] = {"status", NULL};

		if (scenario)
			fprintf(stderr, "demo: %s\n", narration);

		fprintf(stderr, "demo: stdout is not a terminal: printing status instead of opening the console\n");
		rc = cmd_status_entry.exec(ctx, 1, sargv);
		goto out;
	}
	/* Two writers: on the demo job's server (its fenced library rejects them)
	 * and on another server. */
	{
		int64_t targets[DEMO_WRITERS];
		int nt = 0;

		if (demo_server > 0)
			targets[nt++] = demo_server;
		for (i = 0; i < ns && nt < DEMO_WRITERS; i++)
			if (sv[i].id != demo_server)
				targets[nt++] = sv[i].id;
		for (nw = 0; nw < nt; nw++) {
			char log[CLEANUP_PATH_MAX + 80];

			snprintf(log, sizeof log, "%s/writer-%" PRId64 ".log", logdir, targets[nw]);
			writers[nw] = start_writer(ctx->db, targets[nw], log);
			if (writers[nw] > 0)
				fprintf(stderr, "demo: writer on server %" PRId64 " (pid %d, log %s)\n", targets[nw], (int)writers[nw],
				        log);
		}
	}
	if (scenario) {
		char log[CLEANUP_PATH_MAX + 80];

		snprintf(log, sizeof log, "%s/runner-%" PRId64 ".log", logdir, demo_job);
		runner = start_runner(ctx->db, demo_job, "1", log);
		if (runner > 0)
			fprintf(stderr, "demo: runner of job %" PRId64 " (pid %d, log %s)\n", demo_job, (int)runner, log);
	}
	{
		console_opts o;

		memset(&o, 0, sizeof o);
		o.conninfo = ctx->db;
		o.dbname = dbname;
		if (scenario) {
			o.max_rate = 1;
			o.narrate = narration;
			o.narrate_job = demo_job;
		}
		rc = console_run(&o, &err) == 0 ? EXIT_DONE : cli_fail(ctx, &err);
	}
	goto out;
fail:
	rc = cli_fail(ctx, &err);
out:
	if (runner > 0) {
		kill(runner, SIGTERM); /* a run stops after its current step */
		waitpid(runner, NULL, 0);
	}
	for (i = 0; i < DEMO_WRITERS; i++)
		if (writers[i] > 0) {
			kill(writers[i], SIGTERM);
			waitpid(writers[i], NULL, 0);
		}
	cleanup_engine_close(e);
	cleanup_job_reset(&job);
	cleanup_jobs_free(jobs, nj);
	free(sv);
	free(lb);
	return rc;
}

const cli_command cmd_demo_entry = {
	"demo", "[kill-runner]",
	"sandbox + install + seed + writers + console (status when not on a terminal); kill-runner: the recovery demo",
	exec_demo,
};

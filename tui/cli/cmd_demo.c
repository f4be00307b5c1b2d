/* cleanupctl demo: the console on demo data, from the binary alone (the
 * same as `make demo`, scripts/demo.sh): start the sandbox (unless --db
 * names a database), install the engine and then the lab (its own step,
 * cleanup_lab_install: the seeder), seed when there is nothing, create a prune
 * job with a sealed manifest so that there is something to step, start two
 * simulated sync writers, open the console, and stop the writers when it
 * closes. Off a terminal it prints `status` instead and exits 0, so that
 * scripts and CI never hang on it.
 *
 * `cleanupctl demo kill-runner` (a recovery an operator
 * follows from the console alone) also starts a runner of the demo job,
 * `cleanupctl job run JOB --max-rate 1`, and opens the console throttled
 * to the same rate, with the scenario narrated in the log panel: kill the
 * runner (K), see NO RUNNER with the library still closed to writers,
 * resume (r), see the gap and the counters add up. The console narrates
 * what happens to the job as it happens (console.c).
 *
 * `cleanupctl demo server-crash` (only on the demo's own sandbox: it stops
 * that server) starts the same throttled runner; after its third step a
 * conductor process stops the server immediately (SIGQUIT to the
 * postmaster: pg_ctl stop -m immediate), keeps it down for a few seconds
 * (the console says "stale since"), starts it again, and says in the audit
 * log, which the console's log shows, what the job kept: its last committed
 * step (asynchronous commit may lose acknowledged steps). The operator
 * resumes it (r).
 *
 * `cleanupctl demo busy-fence` leaves the demo job unsealed and has a
 * writer's transaction (cleanupctl:writer:holder) hold its library's
 * admission row FOR SHARE, left open; a probe waits for the row FOR UPDATE
 * (what the fence needs), so the locks panel shows the blocking tree with
 * the holder at its root; `cleanupctl job seal` answers busy (exit 3),
 * said in the log; the operator ends the holder (or it commits after two
 * minutes), the log says so, and S seals the job.
 *
 * `cleanupctl demo writer-storm` runs the demo job two steps a second while
 * two writers at 100 writes a second each hammer its server: the locks
 * panel counts the rejections and busy retries, the log keeps the engine's
 * events, and the counters add up at completion.
 *
 * The conductor (server-crash, busy-fence) narrates through audit rows
 * (action "demo SCENARIO"): they reach every open console's log at once.
 *
 * The demo is a client of lab/ and core/ like any other: no libpq and no
 * SQL here (busy-fence's holder and probe are lab/src/hold.c's).
 *
 * Every child `cleanupctl` gets the demo's conninfo in its environment
 * (CLEANUPCTL_DB), never on its command line: a password in --db would
 * otherwise be in /proc/PID/cmdline, which every local user may read. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cleanup/audit.h"
#include "cleanup/hold.h"
#include "cleanup/install.h"
#include "cleanup/job.h"
#include "cleanup/lab.h"
#include "cleanup/report.h"
#include "cleanup/runner.h"
#include "cleanup/sandbox.h"
#include "cleanup/seed.h"
#include "cleanup/writer.h"
#include "cli.h"
#include "console.h"

#define DEMO_WRITERS 2

/* The library for the demo job: an open library with items, on a server
 * without an unfinished job, that no prune job has visited yet. -1 when
 * there is none; *REUSE_JOB gets an unfinished draining job to reuse
 * instead (when REUSE). */
static int64_t pick_library(const cleanup_server_row *sv, size_t ns, const cleanup_library_row *lb, size_t nl,
                            const cleanup_job *jobs, size_t nj, bool reuse, int64_t *items,
                            int64_t *reuse_job)
{
	size_t i, k;

	*reuse_job = -1;
	for (k = 0; k < nj && reuse; k++)
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

/* A scenario's library (each scenario a fresh job on a small library):
 * the newest open library with items, on a server without
 * an unfinished job, that no job has visited yet (the one just seeded for
 * it). -1 when there is none. */
static int64_t pick_fresh_library(const cleanup_server_row *sv, size_t ns, const cleanup_library_row *lb, size_t nl,
                                  const cleanup_job *jobs, size_t nj, int64_t *items)
{
	int64_t best = -1;
	size_t i, k;

	for (i = 0; i < nl; i++) {
		bool ok = strcmp(lb[i].admission, "open") == 0 && lb[i].item_count >= 8 && lb[i].id > best;

		for (k = 0; k < ns && ok; k++)
			if (sv[k].id == lb[i].server_id && sv[k].job_id > 0)
				ok = false;
		for (k = 0; k < nj && ok; k++)
			if (jobs[k].library_id == lb[i].id)
				ok = false;
		if (ok) {
			best = lb[i].id;
			*items = lb[i].item_count;
		}
	}
	return best;
}

/* Creates the demo job on LIBRARY: a manifest of KEEP_QUARTERS quarters of
 * the seeded external IDs (ext-<library>-<n>), spread evenly (n mod 4 below
 * KEEP_QUARTERS, at most 20,000), sealed with its count when SEAL (else
 * left collecting, *OUT the job as appended). Spread, not the first
 * quarter: in the key order a prune walks (text), the first quarter's IDs
 * all come first, so the first steps settled kept rows at a pace the later
 * ones never had, and the ETA (settled rows over that pace) was several
 * times too short. */
static int create_job(cleanup_job *out, cleanup_engine *e, int64_t library, int64_t items, int keep_quarters,
                      bool seal, cleanup_error *err)
{
	char *batch[CLEANUP_APPEND_MAX];
	char bufs[CLEANUP_APPEND_MAX][48];
	int64_t keep = items * keep_quarters / 4, n, id, taken = 0;
	cleanup_job job;
	int rc;
	size_t b = 0;

	if (keep > 20000)
		keep = 20000;
	rc = cleanup_job_create(&job, e, "prune", library, NULL, err);
	if (rc != CLEANUP_OK)
		return rc;
	for (n = 1; n <= items && taken < keep; n++) {
		if (n % 4 >= keep_quarters)
			continue;
		snprintf(bufs[b], sizeof bufs[b], "ext-%" PRId64 "-%" PRId64, library, n);
		batch[b] = bufs[b];
		taken++;
		if (++b == CLEANUP_APPEND_MAX || taken == keep) {
			cleanup_append_result r;

			rc = cleanup_job_append(&r, e, job.id, (const char *const *)batch, b, err);
			if (rc != CLEANUP_OK)
				goto out;
			cleanup_job_reset(&r.job);
			b = 0;
		}
	}
	if (b > 0) {
		cleanup_append_result r;

		rc = cleanup_job_append(&r, e, job.id, (const char *const *)batch, b, err);
		if (rc != CLEANUP_OK)
			goto out;
		cleanup_job_reset(&r.job);
	}
	id = job.id;
	cleanup_job_reset(&job);
	if (!seal)
		return cleanup_job_get(out, e, id, err);
	if ((rc = cleanup_job_get(&job, e, id, err)) != CLEANUP_OK)
		return rc;
	rc = cleanup_job_seal(out, e, id, job.manifest_count, err);
out:
	cleanup_job_reset(&job);
	return rc;
}

/* The scenarios `cleanupctl demo NAME` knows. */
enum { SC_NONE = -1, SC_KILL_RUNNER, SC_SERVER_CRASH, SC_WRITER_STORM, SC_BUSY_FENCE };
const char *const cli_demo_scenarios[] = {"kill-runner", "server-crash", "writer-storm", "busy-fence", NULL};
#define scenarios cli_demo_scenarios

/* server-crash: the step after which the runner is held inside its next
 * step and the server can be stopped, and for how long it stays down (long
 * enough to see "stale since"); with --auto, the notice before the stop. */
#define CRASH_AFTER_STEP 3
#define CRASH_DOWN_S     3
#define CRASH_NOTICE_S   2
/* kill-runner: the step after which the runner is held inside its next
 * one; with --auto, the conductor kills it itself this long after. */
#define KILL_AFTER_STEP 2
#define KILL_AUTO_S     3
/* busy-fence: how long the holder keeps its transaction open, at most
 * (--auto: HOLD_AUTO_S, then it commits). */
#define HOLD_S      120
#define HOLD_AUTO_S 5
/* A scenario's own library: this many items with about
 * one dependent record each, so that a run at one step a second takes
 * about 15 steps and the scenario completes well under a minute. */
#define DEMO_ITEMS      1200
#define DEMO_DEPENDENTS 1
/* The failpoint a scenario's runner has on (sql/functions/012_failpoints.sql):
 * held by the conductor, the runner waits there with its step written and
 * not committed. */
#define DEMO_FAILPOINT "step_before_commit"
/* The presenter's key for the fault (server-crash); not a console key
 * (tui/console/keys.c). */
#define DEMO_FAULT_KEY 'F'

/* The demo's options: --auto, the conductor fires the fault itself
 * (tests, unattended runs). */
typedef struct demo_opts {
	bool autofire;
} demo_opts;

static const cli_option demo_options[] = {
	CLI_ROW_FLAG("--auto",
	             "fire the fault without the presenter: server-crash stops the server itself, kill-runner kills "
	             "its held runner itself, busy-fence's holder commits after 5 s",
	             demo_opts, autofire, 0),
	CLI_ROW_END,
};

/* Set in a conductor by SIGUSR1: the presenter pressed F in the console. */
static volatile sig_atomic_t fault_asked;
static void on_fault(int sig)
{
	(void)sig;
	fault_asked = 1;
}

/* For the demo's children, in the child after fork: redirects stdout and
 * stderr to LOG (appending), stdin from /dev/null, asks for SIGTERM when
 * the parent dies, and puts CONNINFO into CLEANUPCTL_DB, where a
 * `cleanupctl` it executes finds it without --db (main.c): an argv is
 * world-readable in /proc, an environment only to its user and root. When
 * the environment cannot take it the child says so in LOG and exits 127:
 * it never falls back to another database. */
static void child_setup(const char *log, const char *conninfo)
{
	int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	int nul = open("/dev/null", O_RDONLY);

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	if (nul >= 0)
		dup2(nul, STDIN_FILENO);
	if (setenv("CLEANUPCTL_DB", conninfo, 1) != 0) {
		fprintf(stderr, "demo: cannot set CLEANUPCTL_DB for a child: %s\n", strerror(errno));
		_exit(127);
	}
}

/* Forks `cleanupctl ARG...` (the ARGs as execl's: strings, then a null
 * pointer; at most 14) on CONNINFO (in its CLEANUPCTL_DB) with its output
 * in LOG; it dies with us (PR_SET_PDEATHSIG). With FAILPOINT (an int: the
 * last named parameter before ..., which must not be promoted), failpoint
 * DEMO_FAILPOINT is on for its session: the scenario's conductor may hold
 * a runner inside a step (kill-runner, server-crash). Returns its pid (-1
 * when fork failed). */
static pid_t fork_execl(const char *conninfo, const char *log, int failpoint, ...)
{
	const char *argv[16] = {"cleanupctl"};
	size_t n = 1;
	va_list ap;
	pid_t pid;

	va_start(ap, failpoint);
	while (n < sizeof argv / sizeof argv[0] - 1 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		child_setup(log, conninfo);
		if (failpoint) {
			const char *old = getenv("PGOPTIONS");
			char opt[512];

			snprintf(opt, sizeof opt, "%s%s-c cleanup.failpoints=" DEMO_FAILPOINT, old ? old : "",
			         old && *old ? " " : "");
			setenv("PGOPTIONS", opt, 1);
		}
		execv("/proc/self/exe", (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* Starts `cleanupctl job run JOB --max-rate RATE --max-busy 100000`
 * (fork_execl). */
static pid_t start_runner(const char *conninfo, int64_t job, const char *rate, const char *log, bool failpoint)
{
	char jbuf[24];

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job);
	return fork_execl(conninfo, log, failpoint, "job", "run", jbuf, "--max-rate", rate, "--max-busy", "100000",
	                  (char *)NULL);
}

/* Starts `cleanupctl writer --rate RATE --server S` (fork_execl). */
static pid_t start_writer(const char *conninfo, int64_t server, const char *rate, const char *log)
{
	char sbuf[24];

	snprintf(sbuf, sizeof sbuf, "%" PRId64, server);
	return fork_execl(conninfo, log, false, "writer", "--rate", rate, "--server", sbuf, (char *)NULL);
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void clock_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

/* The conductor's narration: TEXT, lines of at most about 70 characters
 * (a log row at 120 columns), each an audit row (action "demo SCENARIO")
 * recorded last line first, so that the log (newest first) shows the first
 * on top; on a connection of its own, opened (and retried for up to 30 s:
 * the server may be starting) when *E is NULL. Every open console shows
 * them at once. Also on stdout (the conductor's log). */
static void say(cleanup_engine **e, const char *conninfo, const char *scenario, int64_t job, const char *text)
{
	char action[41], line[512];
	cleanup_audit_entry a = {NULL, action, job, NULL, line};
	cleanup_error err;
	const char *end = text + strlen(text), *p = end;
	int tries;

	printf("%s\n", text);
	fflush(stdout);
	snprintf(action, sizeof action, "demo %s", scenario);
	while (p > text) {
		const char *q = p;

		while (q > text && q[-1] != '\n')
			q--;
		snprintf(line, sizeof line, "%.*s", (int)(p - q), q);
		p = q > text ? q - 1 : q;
		if (!line[0])
			continue;
		for (tries = 0; tries < 60; tries++) {
			if (!*e && cleanup_engine_open(e, conninfo, "cleanupctl:demo", &err) != CLEANUP_OK) {
				*e = NULL;
				nap_ms(500);
				continue;
			}
			if (cleanup_audit_record(NULL, *e, &a, &err) == CLEANUP_OK)
				break;
			printf("cannot record the narration: %s\n", err.message);
			cleanup_engine_close(*e);
			*e = NULL;
			nap_ms(500);
		}
	}
}

/* The job's last committed step (-1 when it cannot be read); *PHASE gets
 * its phase, CURSOR (when not NULL, CLEN bytes) its cursor: the last
 * external ID taken (a prune), else the last item id. */
static int job_step(cleanup_engine *e, int64_t id, char *phase, size_t len, char *cursor, size_t clen)
{
	cleanup_job job;
	cleanup_error err;
	int step = -1;

	memset(&job, 0, sizeof job);
	if (cleanup_job_get(&job, e, id, &err) == CLEANUP_OK) {
		step = job.step_no;
		snprintf(phase, len, "%s", job.phase);
		if (cursor && job.key_cursor[0])
			snprintf(cursor, clen, "%s", job.key_cursor);
		else if (cursor)
			snprintf(cursor, clen, "%" PRId64, job.cursor_id);
	}
	cleanup_job_reset(&job);
	return step;
}

/* Until job JOB (on *E) has committed step AFTER: its step then, or -1
 * (it is no longer draining, or cannot be read; *PHASE says). */
static int wait_step(cleanup_engine *e, int64_t job, int after, char *phase, size_t len)
{
	int seen;

	for (;;) {
		seen = job_step(e, job, phase, len, NULL, 0);
		if (seen < 0 || strcmp(phase, "draining") != 0)
			return -1;
		if (seen >= after)
			return seen;
		nap_ms(100);
	}
}

/* Holds failpoint DEMO_FAILPOINT on a connection of its own (once a step
 * in flight committed) and waits until JOB's runner waits there: *HOLD
 * and the runner's backend (its pid), or -1 (said through SCENARIO). */
static int hold_runner(cleanup_failpoint_hold **hold, cleanup_engine **e, const char *conninfo,
                       const char *scenario, int64_t job)
{
	cleanup_error err;
	char text[1200];
	int pid = 0, tries;

	if (cleanup_failpoint_hold_start(hold, conninfo, DEMO_FAILPOINT, &err) != CLEANUP_OK) {
		snprintf(text, sizeof text, "cannot hold the runner at failpoint " DEMO_FAILPOINT ": %s", err.message);
		say(e, conninfo, scenario, job, text);
		return -1;
	}
	for (tries = 0; tries < 300 && (pid = cleanup_failpoint_hold_waiter(*hold, &err)) == 0; tries++)
		nap_ms(100);
	if (pid <= 0) {
		snprintf(text, sizeof text, "the runner of job %" PRId64 " did not reach failpoint " DEMO_FAILPOINT ": %s",
		         job, pid < 0 ? err.message : "not within 30 s");
		say(e, conninfo, scenario, job, text);
		cleanup_failpoint_hold_end(*hold);
		*hold = NULL;
		return -1;
	}
	return pid;
}

/* The prologue of the conductors that hold a runner (server-crash,
 * kill-runner): on a connection of their own (*E), waits until job JOB has
 * committed step AFTER, then holds its runner inside the next step
 * (hold_runner: *HOLD). Returns the runner's backend, *SEEN the job's
 * step, CURSOR (when not NULL, CLEN bytes) its cursor; or -1, said through
 * SCENARIO ("job N is PHASE: NONE" when the job stopped draining). */
static int conduct_hold(cleanup_engine **e, cleanup_failpoint_hold **hold, const char *conninfo,
                        const char *scenario, int64_t job, int after, const char *none, int *seen, char *cursor,
                        size_t clen)
{
	cleanup_error err;
	char text[1200], phase[16] = "";
	int held;

	if (cleanup_engine_open(e, conninfo, "cleanupctl:demo", &err) != CLEANUP_OK) {
		*e = NULL;
		printf("demo %s: %s\n", scenario, err.message);
		return -1;
	}
	if (wait_step(*e, job, after, phase, sizeof phase) < 0) {
		snprintf(text, sizeof text, "job %" PRId64 " is %s: %s", job, phase[0] ? phase : "unreadable", none);
		say(e, conninfo, scenario, job, text);
		return -1;
	}
	if ((held = hold_runner(hold, e, conninfo, scenario, job)) < 0)
		return -1;
	*seen = job_step(*e, job, phase, sizeof phase, cursor, clen);
	return held;
}

/* server-crash's conductor (a child process): once job JOB has committed
 * step CRASH_AFTER_STEP, holds its runner inside the next step (failpoint
 * DEMO_FAILPOINT: written, not committed) and says "press F"; on F
 * (SIGUSR1 from the console's demo key), or with AUTO after
 * CRASH_NOTICE_S seconds, stops the sandbox SB immediately (SIGQUIT to the
 * postmaster, as pg_ctl stop -m immediate), keeps it down CRASH_DOWN_S
 * seconds, starts it again and says what the job kept and when the
 * writers are back. Returns the exit code of the child. */
static int conduct_server_crash(cleanup_sandbox *sb, const char *conninfo, int64_t job, bool autofire)
{
	cleanup_engine *e = NULL;
	cleanup_failpoint_hold *hold = NULL;
	cleanup_error err;
	char text[1200], phase[16] = "", at[16], back[16];
	int seen = -1, kept = -1, rc = 1, tries, held;
	int64_t writers = 0;
	bool blocked = false;
	sigset_t term, old;
	pid_t pm;

	if ((held = conduct_hold(&e, &hold, conninfo, "server-crash", job, CRASH_AFTER_STEP, "no crash", &seen, NULL,
	                         0)) < 0)
		goto out;
	if (cleanup_sandbox_status(sb, &err) != CLEANUP_OK || !sb->running || sb->pid <= 0) {
		snprintf(text, sizeof text, "cannot find the sandbox's postmaster: %s",
		         sb->running ? err.message : "not running");
		say(&e, conninfo, "server-crash", job, text);
		goto out;
	}
	pm = (pid_t)sb->pid;
	if (autofire) {
		snprintf(text, sizeof text,
		         "--auto: server stops in %d s\n"
		         "job %" PRId64 " committed step %d; its runner (backend %d) waits\n"
		         "inside step %d, not committed:\n"
		         "stopping the server (immediate) in %d s, for %d s",
		         CRASH_NOTICE_S, job, seen, held, seen + 1, CRASH_NOTICE_S, CRASH_DOWN_S);
		say(&e, conninfo, "server-crash", job, text);
		/* Time for the consoles to show it (and the audience to read it). */
		nap_ms(CRASH_NOTICE_S * 1000L);
	} else {
		snprintf(text, sizeof text,
		         "press F: stop the server\n"
		         "job %" PRId64 " committed step %d; its runner (backend %d) waits\n"
		         "inside step %d, not committed. press F to stop the server (immediate)\n"
		         "for %d s: step %d is lost with it",
		         job, seen, held, seen + 1, CRASH_DOWN_S, seen + 1);
		say(&e, conninfo, "server-crash", job, text);
		while (!fault_asked)
			nap_ms(100);
		snprintf(text, sizeof text, "F: stopping the server (immediate) now, for %d s", CRASH_DOWN_S);
		say(&e, conninfo, "server-crash", job, text);
	}
	cleanup_engine_close(e);
	e = NULL;
	printf("pg_ctl stop -m immediate: SIGQUIT to postmaster %d\n", (int)pm);
	fflush(stdout);
	/* Not interrupted between the stop and the start again. */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigprocmask(SIG_BLOCK, &term, &old);
	blocked = true;
	clock_now(at, sizeof at);
	if (kill(pm, SIGQUIT) != 0) {
		printf("demo server-crash: kill %d: %s\n", (int)pm, strerror(errno));
		goto out;
	}
	for (tries = 0; tries < 300 && cleanup_sandbox_status(sb, &err) == CLEANUP_OK && sb->running; tries++)
		nap_ms(100);
	cleanup_failpoint_hold_end(hold); /* its connection died with the server */
	hold = NULL;
	nap_ms(CRASH_DOWN_S * 1000L);
	if (cleanup_sandbox_start(sb, &err) != CLEANUP_OK) {
		printf("demo server-crash: cannot start the server again: %s\n", err.message);
		goto out;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	blocked = false;
	clock_now(back, sizeof back);
	for (tries = 0; tries < 60 && kept < 0; tries++) {
		if (!e && cleanup_engine_open(&e, conninfo, "cleanupctl:demo", &err) != CLEANUP_OK)
			e = NULL;
		else if ((kept = job_step(e, job, phase, sizeof phase, NULL, 0)) < 0) {
			cleanup_engine_close(e);
			e = NULL;
		}
		if (kept < 0)
			nap_ms(500);
	}
	if (kept >= seen)
		snprintf(text, sizeof text,
		         "server back (down %s-%s): r resumes job %" PRId64 "\n"
		         "job %" PRId64 " stayed at step %d, its last committed step (%d seen)\n"
		         "asynchronous commit lost nothing; step %d, in flight, is done again",
		         at, back, job, job, kept, seen, kept + 1);
	else if (kept >= 0)
		snprintf(text, sizeof text,
		         "server back (down %s-%s): r resumes job %" PRId64 "\n"
		         "job %" PRId64 " stayed at step %d, its last committed step (%d seen)\n"
		         "%d acknowledged step%s lost (asynchronous commit): done again",
		         at, back, job, job, kept, seen, seen - kept, seen - kept == 1 ? "" : "s");
	else
		snprintf(text, sizeof text, "server back (down %s-%s), but job %" PRId64 " cannot be read", at, back,
		         job);
	say(&e, conninfo, "server-crash", job, text);
	rc = kept >= 0 ? 0 : 1;
	/* The writers died with the server's connections and reconnect by
	 * themselves, backing off (lab/src/writer.c): say when they are back. */
	for (tries = 0; tries < 200 && e; tries++) {
		if (cleanup_writer_sessions(&writers, e, &err) == CLEANUP_OK && writers >= DEMO_WRITERS)
			break;
		nap_ms(100);
	}
	clock_now(back, sizeof back);
	if (writers >= DEMO_WRITERS)
		snprintf(text, sizeof text,
		         "writers back: %" PRId64 " reconnected by %s (backoff 0.25-4 s)",
		         writers, back);
	else
		snprintf(text, sizeof text, "writers: %" PRId64 " of %d reconnected within 20 s", writers,
		         DEMO_WRITERS);
	say(&e, conninfo, "server-crash", job, text);
out:
	if (blocked)
		sigprocmask(SIG_SETMASK, &old, NULL);
	cleanup_failpoint_hold_end(hold);
	cleanup_engine_close(e);
	return rc;
}

/* kill-runner's conductor (a child process): once job JOB has committed
 * step KILL_AFTER_STEP, holds its runner inside the next step (failpoint
 * DEMO_FAILPOINT: its rows deleted, not committed) and says "press K";
 * when the runner's backend is gone (K; with AUTO the conductor kills it
 * itself after KILL_AUTO_S seconds) says the step rolled back, the job's
 * step and cursor unchanged, and lets the point go: a resume (r) redoes
 * that step from the same cursor. Returns the exit code of the child. */
static int conduct_kill_runner(const char *conninfo, int64_t job, bool autofire)
{
	cleanup_engine *e = NULL;
	cleanup_failpoint_hold *hold = NULL;
	cleanup_error err;
	char text[1200], phase[16] = "";
	char cursor[264] = "", cursor2[264] = "";
	int rc = 1, seen, after, held, alive = 1, waited;

	if ((held = conduct_hold(&e, &hold, conninfo, "kill-runner", job, KILL_AFTER_STEP, "no runner to kill", &seen,
	                         cursor, sizeof cursor)) < 0)
		goto out;
	snprintf(text, sizeof text,
	         "%s\n"
	         "runner (backend %d) held inside step %d at a failpoint:\n"
	         "its rows deleted, not committed; job %" PRId64 " at step %d, cursor %s\n"
	         "%s step %d rolls back",
	         autofire ? "--auto: it dies in 3 s" : "press K, y: kill it mid-step", held, seen + 1, job, seen, cursor,
	         autofire ? "the demo kills it in a few seconds (--auto):" : "press K, then y, to kill it mid-step:",
	         seen + 1);
	say(&e, conninfo, "kill-runner", job, text);
	for (waited = 0; waited < HOLD_S * 10; waited++) {
		if (autofire && waited == KILL_AUTO_S * 10 && cleanup_job_runner_terminate(e, job, held, &err) != CLEANUP_OK)
			printf("demo kill-runner: %s\n", err.message);
		if ((alive = cleanup_failpoint_hold_backend_alive(hold, held, &err)) != 1)
			break;
		nap_ms(100);
	}
	if (alive != 0) {
		snprintf(text, sizeof text, "the runner was not killed within %d s: letting it go on", HOLD_S);
		say(&e, conninfo, "kill-runner", job, text);
		rc = 0;
		goto out;
	}
	after = job_step(e, job, phase, sizeof phase, cursor2, sizeof cursor2);
	snprintf(text, sizeof text,
	         "step %d rolled back with its runner: its deletions undone\n"
	         "job %" PRId64 " still at step %d, cursor %s (%s)\n"
	         "r, then the phrase: step %d is done again from that cursor",
	         seen + 1, job, after, cursor2,
	         after == seen && strcmp(cursor2, cursor) == 0 ? "unchanged" : "CHANGED: a bug", after + 1);
	say(&e, conninfo, "kill-runner", job, text);
	rc = after == seen && strcmp(cursor2, cursor) == 0 ? 0 : 1;
out:
	cleanup_failpoint_hold_end(hold);
	cleanup_engine_close(e);
	return rc;
}

/* Runs `cleanupctl job seal JOB --expected N` on CONNINFO (in its
 * CLEANUPCTL_DB), its output in LOG; returns its exit code (-1 when it
 * could not run). */
static int run_seal(const char *conninfo, int64_t job, int64_t n, const char *log)
{
	char jbuf[24], nbuf[24];
	int status;
	pid_t pid;

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job);
	snprintf(nbuf, sizeof nbuf, "%" PRId64, n);
	fflush(stdout);
	pid = fork_execl(conninfo, log, false, "job", "seal", jbuf, "--expected", nbuf, (char *)NULL);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* busy-fence's conductor (a child process): a writer's transaction holds
 * LIBRARY's admission row FOR SHARE and stays open; a probe waits for the
 * row FOR UPDATE (what the fence takes), so the blocking tree shows the
 * holder; `job seal JOB --expected N` answers busy (exit 3); then waits
 * until the holder is ended, or commits it after HOLD_S seconds, and says
 * so. Returns the exit code of the child. */
static int conduct_busy_fence(const char *conninfo, int64_t job, int64_t library, int64_t n, const char *log,
                              bool autofire)
{
	cleanup_engine *e = NULL;
	cleanup_admission_hold *hold = NULL;
	cleanup_error err;
	char text[1200], since[16], end[16];
	int rc = 1, seal, holder_pid, waited;

	/* The holder's transaction and the probe behind it (lab/src/hold.c). */
	if (cleanup_admission_hold_start(&hold, conninfo, library, job, &err) != CLEANUP_OK) {
		printf("demo busy-fence: %s\n", err.message);
		goto out;
	}
	holder_pid = cleanup_admission_hold_pid(hold);
	clock_now(since, sizeof since);
	snprintf(text, sizeof text,
	         "writer backend %d (cleanupctl:writer:holder) holds library %" PRId64 "'s\n"
	         "admission row in a transaction left open since %s;\n"
	         "a probe waits for the row FOR UPDATE, as a fence: see the locks tree",
	         holder_pid, library, since);
	say(&e, conninfo, "busy-fence", job, text);
	seal = run_seal(conninfo, job, n, log);
	snprintf(text, sizeof text,
	         "press T: end the holder\n"
	         "`cleanupctl job seal %" PRId64 " --expected %" PRId64 "`: %s (exit %d)\n"
	         "held by backend %d: press T to end the holder (Tab to the locks\n"
	         "panel, backend %d selected, T, type \"terminate %d\"),\n"
	         "or it commits %d s after %s; then S on job %" PRId64 " (count %" PRId64 ") seals it",
	         job, n, seal == 3 ? "busy" : "not busy", seal, holder_pid, holder_pid, holder_pid,
	         autofire ? HOLD_AUTO_S : HOLD_S, since, job, n);
	say(&e, conninfo, "busy-fence", job, text);
	/* Until the holder's connection ends, or HOLD_S seconds. */
	for (waited = 0; waited < (autofire ? HOLD_AUTO_S : HOLD_S) * 10; waited++) {
		if (!cleanup_admission_hold_alive(hold))
			break;
		nap_ms(100);
	}
	clock_now(end, sizeof end);
	if (waited < (autofire ? HOLD_AUTO_S : HOLD_S) * 10)
		snprintf(text, sizeof text,
		         "the holder (backend %d) was ended at %s: rolled back\n"
		         "library %" PRId64 "'s admission row is free: S on job %" PRId64 " (count %" PRId64
		         ") seals it",
		         holder_pid, end, library, job, n);
	else {
		if (cleanup_admission_hold_commit(hold, &err) != CLEANUP_OK)
			printf("demo busy-fence: %s\n", err.message);
		snprintf(text, sizeof text,
		         "the holder (backend %d) committed at %s\n"
		         "library %" PRId64 "'s admission row is free: S on job %" PRId64 " (count %" PRId64
		         ") seals it",
		         holder_pid, end, library, job, n);
	}
	/* The probe got the row once the holder was gone; its answer. */
	cleanup_admission_hold_end(hold);
	hold = NULL;
	say(&e, conninfo, "busy-fence", job, text);
	rc = 0;
out:
	cleanup_admission_hold_end(hold);
	cleanup_engine_close(e);
	return rc;
}

/* Forks a conductor for SCENARIO, its output in LOG; returns its pid. It
 * takes SIGUSR1 as the presenter's F (demo_key): blocked across the fork,
 * so that an F pressed at once is not lost or fatal. */
static pid_t start_conductor(int scenario, cleanup_sandbox *sb, const char *conninfo, int64_t job,
                             int64_t library, int64_t n, const char *log, const char *seal_log, bool autofire)
{
	sigset_t usr1, old;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	pid = fork();
	if (pid == 0) {
		struct sigaction sa;
		int rc;

		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_fault;
		sigaction(SIGUSR1, &sa, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		child_setup(log, conninfo);
		if (scenario == SC_SERVER_CRASH)
			rc = conduct_server_crash(sb, conninfo, job, autofire);
		else if (scenario == SC_KILL_RUNNER)
			rc = conduct_kill_runner(conninfo, job, autofire);
		else
			rc = conduct_busy_fence(conninfo, job, library, n, seal_log, autofire);
		fflush(stdout);
		_exit(rc);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return pid;
}

/* The console's demo key (console_opts.demo_key): F asks the conductor
 * for the fault (SIGUSR1), once. Never blocks. */
typedef struct demo_keys {
	pid_t conductor;
	bool fired;
} demo_keys;

static bool demo_key(void *arg, int key, char *note, size_t len)
{
	demo_keys *d = arg;

	if (key != DEMO_FAULT_KEY)
		return false;
	if (d->fired)
		snprintf(note, len, "demo: F was pressed already: the server is being stopped");
	else if (d->conductor <= 0 || kill(d->conductor, SIGUSR1) != 0)
		snprintf(note, len, "demo: F does nothing: the demo's conductor is not running");
	else {
		d->fired = true;
		snprintf(note, len, "demo: F pressed: the conductor stops the server");
	}
	return true;
}

/* The opening notes of SCENARIO for job JOB (library LIBRARY, manifest of
 * N IDs, on server SERVER) into BUF: what will happen and what to do
 * (AUTOFIRE: the demo fires the fault itself). */
static void narration_text(char *buf, size_t len, int scenario, int64_t job, int64_t library, int64_t n,
                           int64_t server, bool autofire)
{
	switch (scenario) {
	case SC_KILL_RUNNER:
		snprintf(buf, len,
		         "demo kill-runner: job %" PRId64 " (library %" PRId64 ", a fresh one) is run by `cleanupctl job run %" PRId64
		         " --max-rate 1`.\n"
		         "1. Enter opens the job: the runner line names its backend; a step arrives every second.\n"
		         "2. After step %d the demo holds the runner inside its next step (a failpoint): rows deleted,\n"
		         "   not committed. %s\n"
		         "   Within a second the job says NO RUNNER; its library stays closed to writers.\n"
		         "3. The log says the step rolled back: same step number, same cursor.\n"
		         "4. r, then the phrase: this console resumes at that step, from that cursor (:throttle 0 lifts\n"
		         "   the throttle), and the counters add up: deleted + kept = the library's items.",
		         job, library, job, KILL_AFTER_STEP,
		         autofire ? "The demo kills it there (--auto)." : "Press K, then y: the runner dies mid-step.");
		break;
	case SC_SERVER_CRASH:
		snprintf(buf, len,
		         "demo server-crash: job %" PRId64 " (library %" PRId64 ", a fresh one) is run by `cleanupctl job run %" PRId64
		         " --max-rate 1`.\n"
		         "1. After step %d the runner is held inside its next step; %s\n"
		         "   PostgreSQL stops (pg_ctl stop -m immediate) for %d s: the header says \"stale since\".\n"
		         "2. The server starts again, the console and the writers reconnect by themselves; the runner\n"
		         "   died with it: NO RUNNER. The job stays at its last committed step; the step in flight\n"
		         "   is lost and done again (the log says which).\n"
		         "3. r, then the phrase: this console resumes the job (:throttle 0 lifts the throttle).\n"
		         "4. At completion the counters add up: each item outside the manifest deleted once.",
		         job, library, job, CRASH_AFTER_STEP,
		         autofire ? "the demo then stops the server (--auto):" : "press F then to stop the server:",
		         CRASH_DOWN_S);
		break;
	case SC_BUSY_FENCE:
		snprintf(buf, len,
		         "demo busy-fence: job %" PRId64 " prunes library %" PRId64 " (%" PRId64
		         " IDs appended); it is not sealed yet.\n"
		         "1. A writer's transaction holds library %" PRId64 "'s admission row, left open (the log names it).\n"
		         "2. `cleanupctl job seal %" PRId64 " --expected %" PRId64 "` answers busy (exit 3): a fence never waits.\n"
		         "   The locks panel shows the blocking tree: the holder over the fence's lock probe.\n"
		         "3. Press T to end the holder: Tab to the locks panel, select the holder, T, type the phrase\n"
		         "   (or it commits after %d s).\n"
		         "4. S on job %" PRId64 ", count %" PRId64 ": the seal succeeds and the library is fenced.",
		         job, library, n, library, job, n, autofire ? HOLD_AUTO_S : HOLD_S, job, n);
		break;
	case SC_WRITER_STORM:
		snprintf(buf, len,
		         "demo writer-storm: job %" PRId64 " drains library %" PRId64 " (`cleanupctl job run %" PRId64
		         " --max-rate 2`) while\n"
		         "   two writers write 100 times a second each on server %" PRId64
		         ": writes into library %" PRId64 " are rejected.\n"
		         "1. The locks panel counts the rejections and busy retries of the last 60 s, per writer.\n"
		         "2. The log keeps the engine's events (created, sealed, completed) among the storm.\n"
		         "3. At completion the counters add up: each item outside the manifest deleted once.",
		         job, library, job, server, library);
		break;
	default:
		buf[0] = '\0';
	}
}

static int exec_demo(cli_ctx *ctx, void *opts, const cli_args *a)
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
	int64_t library = -1, items = 0, reuse = -1, demo_server = -1, demo_job = -1, demo_library = -1,
	        demo_n = 0;
	bool tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO), own_sandbox = false;
	int rc = EXIT_ERROR, nw = 0, scenario = SC_NONE;
	pid_t runner = -1, conductor = -1;
	char narration[2000] = "";
	bool autofire = ((const demo_opts *)opts)->autofire;
	static demo_keys keys;

	memset(&job, 0, sizeof job);
	memset(&sb, 0, sizeof sb);
	if (a->npos == 1) {
		char known[200] = "";

		for (i = 0; scenarios[i]; i++) {
			if (strcmp(a->pos[0], scenarios[i]) == 0)
				scenario = (int)i;
			snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", scenarios[i]);
		}
		if (scenario == SC_NONE)
			return cli_usage(ctx, &cmd_demo_entry, "unknown scenario \"%s\": the scenarios are: %s", a->pos[0],
			                 known);
	}
	if (autofire && (scenario == SC_NONE || scenario == SC_WRITER_STORM))
		return cli_usage(ctx, &cmd_demo_entry,
		                 "--auto fires a scenario's fault: it applies to kill-runner, server-crash and busy-fence, "
		                 "not to %s",
		                 scenario == SC_NONE ? "the plain demo" : "writer-storm");
	if (scenario == SC_SERVER_CRASH && ctx->db)
		return cli_usage(
		    ctx, &cmd_demo_entry, "%s",
		    "demo server-crash stops the server it runs on: it runs only on the demo's own sandbox "
		    "(without --db and without CLEANUPCTL_DB)");
	snprintf(logdir, sizeof logdir, "/tmp");
	if (!ctx->db) {
		if (cleanup_sandbox_init(&sb, NULL, &err) != CLEANUP_OK ||
		    cleanup_sandbox_start(&sb, &err) != CLEANUP_OK)
			return cli_fail(ctx, &err);
		own_sandbox = true;
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
	/* The lab's own step (its seeder, schema cleanup_lab): the engine's
	 * install never takes it. */
	if (cleanup_lab_install(NULL, e, &err) != CLEANUP_OK)
		goto fail;
	if (cleanup_status_rows(&sv, &ns, &lb, &nl, e, &err) != CLEANUP_OK)
		goto fail;
	if (scenario != SC_NONE || ns == 0) {
		/* A scenario never reuses an earlier one's half-done job: a small
		 * library of its own, on a server of its own (and a second server
		 * for the other writer on an empty database). Else an empty
		 * database gets about 3 dependent records per item (seed 001): the
		 * console shows dependents and claims from the first job on. Seeded
		 * now, and the rows read again. */
		cleanup_seed_spec spec = {3, 3, 20000, 3};
		cleanup_seed_result sr;

		if (scenario != SC_NONE)
			spec = (cleanup_seed_spec){ns == 0 ? 2 : 1, 1, DEMO_ITEMS, DEMO_DEPENDENTS};
		if (cleanup_seed(&sr, e, &spec, &err) != CLEANUP_OK)
			goto fail;
		if (scenario != SC_NONE)
			fprintf(stderr, "demo: seeded a fresh library of %" PRId64 " items for the scenario\n",
			        sr.items / sr.libraries);
		else
			fprintf(stderr,
			        "demo: seeded %d servers, %d libraries, %" PRId64 " items, %" PRId64 " dependent records\n",
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
	if (scenario != SC_NONE)
		library = pick_fresh_library(sv, ns, lb, nl, jobs, nj, &items);
	else
		library = pick_library(sv, ns, lb, nl, jobs, nj, true, &items, &reuse);
	if (reuse > 0) {
		fprintf(stderr, "demo: job %" PRId64 " is still draining: step it in the console\n", reuse);
		for (i = 0; i < nj; i++)
			if (jobs[i].id == reuse) {
				demo_server = jobs[i].server_id;
				demo_library = jobs[i].library_id;
				demo_n = jobs[i].manifest_count;
			}
		demo_job = reuse;
	} else if (library > 0) {
		if (create_job(&job, e, library, items, scenario != SC_NONE ? 1 : 3,
		               scenario != SC_BUSY_FENCE, &err) != CLEANUP_OK)
			goto fail;
		demo_server = job.server_id;
		demo_job = job.id;
		demo_library = library;
		demo_n = job.manifest_count;
		fprintf(stderr,
		        "demo: job %" PRId64 " prunes library %" PRId64 " (%s); manifest of %" PRId64
		        " IDs %s\n",
		        job.id, library, job.target_name, job.manifest_count,
		        scenario == SC_BUSY_FENCE ? "appended, not sealed" : "sealed");
	} else {
		fprintf(stderr,
		        "demo: every library has had its demo job; remove the sandbox for a fresh demo "
		        "(cleanupctl sandbox stop, then delete its directory)\n");
	}
	snprintf(dbname, sizeof dbname, "%s", cleanup_engine_dbname(e));
	cleanup_engine_close(e);
	e = NULL;
	if (scenario != SC_NONE && demo_job <= 0) {
		cleanup_error_set(
		    &err, CLEANUP_EREFUSED,
		    "demo %s needs a fresh library and none was found after seeding one", scenarios[scenario]);
		goto fail;
	}
	narration_text(narration, sizeof narration, scenario, demo_job, demo_library, demo_n, demo_server, autofire);

	if (!tty) {
		char *sargv[] = {"status", NULL};

		if (scenario != SC_NONE)
			fprintf(stderr, "demo: %s\n", narration);

		fprintf(stderr,
		        "demo: stdout is not a terminal: printing status instead of opening the console\n");
		rc = cli_exec(ctx, &cmd_status_entry, 1, sargv);
		goto out;
	}
	/* Two writers: on the demo job's server (its fenced library rejects them)
	 * and on another server; writer-storm: both on the job's server, fast. */
	{
		int64_t targets[DEMO_WRITERS];
		int nt = 0;

		if (scenario == SC_WRITER_STORM && demo_server > 0) {
			for (nt = 0; nt < DEMO_WRITERS; nt++)
				targets[nt] = demo_server;
		} else {
			if (demo_server > 0)
				targets[nt++] = demo_server;
			for (i = 0; i < ns && nt < DEMO_WRITERS; i++)
				if (sv[i].id != demo_server)
					targets[nt++] = sv[i].id;
		}
		for (nw = 0; nw < nt; nw++) {
			char log[CLEANUP_PATH_MAX + 80];

			snprintf(log, sizeof log, "%s/writer-%" PRId64 "-%d.log", logdir, targets[nw],
			         nw + 1);
			writers[nw] = start_writer(ctx->db, targets[nw],
			                           scenario == SC_WRITER_STORM ? "100" : "4", log);
			if (writers[nw] > 0)
				fprintf(stderr, "demo: writer on server %" PRId64 " (pid %d, log %s)\n",
				        targets[nw], (int)writers[nw], log);
		}
	}
	if (scenario == SC_KILL_RUNNER || scenario == SC_SERVER_CRASH || scenario == SC_WRITER_STORM) {
		char log[CLEANUP_PATH_MAX + 80];

		snprintf(log, sizeof log, "%s/runner-%" PRId64 ".log", logdir, demo_job);
		runner = start_runner(ctx->db, demo_job, scenario == SC_WRITER_STORM ? "2" : "1", log,
		                      scenario == SC_KILL_RUNNER || (scenario == SC_SERVER_CRASH && own_sandbox));
		if (runner > 0)
			fprintf(stderr, "demo: runner of job %" PRId64 " (pid %d, log %s)\n", demo_job,
			        (int)runner, log);
	}
	if ((scenario == SC_SERVER_CRASH && own_sandbox) || scenario == SC_BUSY_FENCE || scenario == SC_KILL_RUNNER) {
		char log[CLEANUP_PATH_MAX + 80], slog[CLEANUP_PATH_MAX + 80];

		snprintf(log, sizeof log, "%s/demo-%s.log", logdir, scenarios[scenario]);
		snprintf(slog, sizeof slog, "%s/demo-%s-seal.log", logdir, scenarios[scenario]);
		conductor = start_conductor(scenario, &sb, ctx->db, demo_job, demo_library, demo_n, log, slog, autofire);
		if (conductor > 0)
			fprintf(stderr, "demo: %s conductor (pid %d, log %s)\n", scenarios[scenario],
			        (int)conductor, log);
	}
	{
		console_opts o;

		memset(&o, 0, sizeof o);
		o.conninfo = ctx->db;
		o.dbname = dbname;
		if (scenario != SC_NONE) {
			o.max_rate = scenario == SC_BUSY_FENCE ? 0 : scenario == SC_WRITER_STORM ? 2 : 1;
			o.narrate = narration;
			o.narrate_job = demo_job;
			/* server-crash: F stops the server (the conductor waits for it) */
			if (scenario == SC_SERVER_CRASH && !autofire && conductor > 0) {
				keys.conductor = conductor;
				o.demo_key = demo_key;
				o.demo_arg = &keys;
			}
		}
		rc = console_run(&o, &err) == 0 ? EXIT_DONE : cli_fail(ctx, &err);
	}
	goto out;
fail:
	rc = cli_fail(ctx, &err);
out:
	if (conductor > 0) {
		kill(conductor, SIGTERM); /* blocked while it restarts the server */
		waitpid(conductor, NULL, 0);
	}
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
	"demo", "[kill-runner|server-crash|writer-storm|busy-fence]",
	"sandbox + install + seed + writers + console (status when not on a terminal); a scenario: a recovery demo "
	"narrated in the console's log",
	exec_demo, demo_options, CLI_DEFAULTS(demo_opts, false), .maxpos = 1,
};

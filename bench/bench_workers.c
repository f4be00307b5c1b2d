/* bench_workers: many servers at once. Four prune jobs
 * on four servers (each library ITEMS items, none seen: every item is
 * deleted), run by the real `cleanupctl worker --concurrency R --idle-exit`
 * with R = 1, 2 and 4 runners, each round on a fresh copy of the same
 * template; wall time (median over rounds) and the speedup against one
 * runner. While the worker runs, its runner backends are sampled in
 * pg_stat_activity: how many ran at once and how often one waited for a
 * heavyweight lock (a shared hot row would show as lock waits). After the
 * 4-runner round, the row updates per engine table (pg_stat_user_tables)
 * show whether the rows the steps update are per job. An A/B round runs
 * the 4 runners once more with the jobs' per-row NOTIFY trigger disabled
 * on the copy, to price the NOTIFY queue lock the sampling finds. Each
 * round also runs a control: the same deletions as bare batched DELETE
 * loops in the server, from 1 session and from 4, so that the runners'
 * speedup is read beside what this machine gives PostgreSQL alone.
 *
 *   bench_workers --db CONNINFO [--items N (100000)] [--rounds N (5)] [--quick]
 *
 * Five rounds by default: on this shared machine the same work's wall time
 * moved by up to 1.5x between rounds a minute apart (the control's single
 * session took 7.1-10.8 s), and a median of three moved with it.
 * --quick (or BENCH_QUICK set in the environment): 20,000 items a job, one
 * round. docs/benchmarks-workers.md records the figures. */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include "bench_common.h"
#include "cleanup/install.h"
#include "cleanup/job.h"
#include "cleanup/seed.h"

#define DB_TPL "cleanup_lab_bench_workers_tpl"
#define DB_RUN "cleanup_lab_bench_workers_run"
static const char *const dbs[] = {DB_TPL, DB_RUN, NULL};

#define N_JOBS 4
static const int runner_counts[] = {1, 2, 4};
#define N_COUNTS 3

typedef struct opts {
	const char *db;
	long items;
	int rounds;
	bool quick;
} opts;

static const char *cleanupctl = BENCH_CLEANUPCTL;

static void usage(void)
{
	fprintf(stderr, "usage: bench_workers --db CONNINFO [--items N (100000)] [--rounds N (5)] [--quick] "
	                "[--cleanupctl PATH]\n");
	exit(2);
}

/* The template: four servers of one library of O->items items each, and
 * on each a prune sealed with an empty manifest (every item eligible). */
static void build(const opts *o)
{
	char ci[4096];
	cleanup_install_result ir;
	cleanup_seed_result sr;
	cleanup_seed_spec spec;
	cleanup_engine *e = NULL;
	cleanup_error err;
	PGconn *c;
	size_t i;

	bench_admin(o->db, "db_drop", DB_RUN, NULL);
	bench_admin(o->db, "db_drop", DB_TPL, NULL);
	bench_admin(o->db, "db_create", DB_TPL, NULL);
	bench_conninfo(ci, sizeof ci, o->db, DB_TPL);
	if (cleanup_engine_open(&e, ci, "bench:workers", &err) != CLEANUP_OK)
		bench_fatal_err("connecting", &err);
	if (cleanup_install(&ir, e, &err) != CLEANUP_OK)
		bench_fatal_err("install", &err);
	memset(&spec, 0, sizeof spec);
	spec.servers = N_JOBS;
	spec.libraries = 1;
	spec.items = o->items;
	if (cleanup_seed(&sr, e, &spec, &err) != CLEANUP_OK)
		bench_fatal_err("seed", &err);
	c = bench_open(o->db, DB_TPL, "bench:workers");
	{
		PGresult *r = bench_run(c, "worker_libraries", 0, NULL);

		if (PQntuples(r) != N_JOBS)
			bench_fatal("expected %d libraries, found %d", N_JOBS, PQntuples(r));
		for (i = 0; i < N_JOBS; i++) {
			cleanup_job job;
			int64_t lib = strtoll(PQgetvalue(r, (int)i, 0), NULL, 10), id;

			if (cleanup_job_create(&job, e, "prune", lib, "bounded", &err) != CLEANUP_OK)
				bench_fatal_err("job create", &err);
			id = job.id;
			cleanup_job_reset(&job);
			if (cleanup_job_seal(&job, e, id, 0, &err) != CLEANUP_OK)
				bench_fatal_err("job seal", &err);
			cleanup_job_reset(&job);
		}
		PQclear(r);
	}
	PQclear(bench_run(c, "vacuum", 0, NULL));
	PQclear(bench_run(c, "checkpoint", 0, NULL));
	PQfinish(c);
	cleanup_engine_close(e);
}

/* A fresh copy of the template as DB_RUN, checkpointed; with NO_NOTIFY
 * the jobs' per-row NOTIFY trigger disabled (the A/B measurement). */
static void fresh_copy(const opts *o, bool no_notify)
{
	PGconn *c;

	bench_admin(o->db, "db_drop", DB_RUN, NULL);
	bench_admin(o->db, "db_copy", DB_RUN, DB_TPL);
	c = bench_open(o->db, DB_RUN, "bench:checkpoint");
	if (no_notify) {
		PQclear(bench_run(c, "worker_notify_off", 0, NULL));
		PQclear(bench_run(c, "worker_contract_record", 0, NULL));
	}
	PQclear(bench_run(c, "checkpoint", 0, NULL));
	PQfinish(c);
}

#define MAX_WAIT_KINDS 16

typedef struct round_result {
	double wall_s;
	double server_cpu_s;
	double sampler_cpu_s; /* the sampler's own backend, part of server_cpu_s */
	int max_runners;      /* runner backends active at once, at most */
	long samples, lock_wait_samples;
	/* What the waiting runners waited for: "wait_event relation", counted
	 * per backend and sample. */
	char wait_kind[MAX_WAIT_KINDS][128];
	long wait_count[MAX_WAIT_KINDS];
	int nkinds;
} round_result;

static void count_wait(round_result *out, const char *kind)
{
	char key[128];
	int i;

	snprintf(key, sizeof key, "%s", kind);
	for (i = 0; i < out->nkinds; i++)
		if (strcmp(out->wait_kind[i], key) == 0)
			break;
	if (i == out->nkinds) {
		if (out->nkinds == MAX_WAIT_KINDS)
			return;
		snprintf(out->wait_kind[out->nkinds++], sizeof out->wait_kind[0], "%s", key);
	}
	out->wait_count[i]++;
}

/* Runs `cleanupctl worker --concurrency R --idle-exit` on DB_RUN, sampling
 * its runner backends every 100 ms until it exits; checks the jobs after.
 * The sampler shares the machine with the runners: at 20 ms a sample (the
 * statement re-planned each time, pg_locks read for every runner) it took
 * 1.9 ms of server CPU a sample, a tenth of a core, which a 4-runner round
 * paid out of its two cores and a 1-runner round took from the idle one
 * (docs/benchmarks-workers.md). Prepared, reading pg_locks only for a
 * waiting backend, every 100 ms: under 2% of a core. */
static void run_worker(round_result *out, const opts *o, int runners)
{
	char ci[4096], conc[16];
	PGconn *c;
	PGresult *r;
	double t0, cpu0, scpu0;
	pid_t pid;
	int st;

	memset(out, 0, sizeof *out);
	bench_conninfo(ci, sizeof ci, o->db, DB_RUN);
	c = bench_open(o->db, DB_RUN, "bench:workers:sampler");
	r = PQprepare(c, "sample", bench_sql("worker_sample"), 0, NULL);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		bench_fatal("worker_sample: %s", PQerrorMessage(c));
	PQclear(r);
	snprintf(conc, sizeof conc, "%d", runners);
	cpu0 = bench_server_cpu(c);
	scpu0 = bench_proc_cpu(PQbackendPID(c), false);
	t0 = bench_now();
	pid = fork();
	if (pid < 0)
		bench_fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		int out_fd = open("/dev/null", O_WRONLY);

		if (out_fd < 0 || dup2(out_fd, 1) < 0)
			_exit(127);
		execl(cleanupctl, "cleanupctl", "--quiet", "--db", ci, "worker", "--concurrency", conc, "--idle-exit",
		      "--poll", "0.2", (char *)NULL);
		_exit(127);
	}
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		struct timespec ts = {0, 100 * 1000 * 1000};

		if (w == pid)
			break;
		if (w < 0)
			bench_fatal("waitpid: %s", strerror(errno));
		r = PQexecPrepared(c, "sample", 0, NULL, NULL, NULL, 0);
		if (PQresultStatus(r) != PGRES_TUPLES_OK)
			bench_fatal("worker_sample: %s", PQerrorMessage(c));
		if (PQntuples(r) > 0) {
			int n = atoi(PQgetvalue(r, 0, 0)), j;
			bool waited = false;

			if (n > out->max_runners)
				out->max_runners = n;
			out->samples++;
			for (j = 0; j < PQntuples(r); j++)
				if (strcmp(PQgetvalue(r, j, 1), "t") == 0) {
					waited = true;
					count_wait(out, PQgetvalue(r, j, 2));
				}
			out->lock_wait_samples += waited;
		}
		PQclear(r);
		nanosleep(&ts, NULL);
	}
	out->wall_s = bench_now() - t0;
	out->server_cpu_s = bench_server_cpu(c) - cpu0;
	out->sampler_cpu_s = bench_proc_cpu(PQbackendPID(c), false) - scpu0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		bench_fatal("cleanupctl worker --concurrency %d failed (status %d)", runners, st);
	r = bench_run(c, "worker_jobs_check", 0, NULL);
	if (PQntuples(r) != 1 || atoi(PQgetvalue(r, 0, 0)) != N_JOBS ||
	    strtol(PQgetvalue(r, 0, 1), NULL, 10) != o->items || strtol(PQgetvalue(r, 0, 2), NULL, 10) != o->items ||
	    strcmp(PQgetvalue(r, 0, 4), "t") != 0)
		bench_fatal("after %d runners: %s of %d jobs completed, deleted %s..%s of %ld each, consistent %s", runners,
		            PQgetvalue(r, 0, 0), N_JOBS, PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 2), o->items,
		            PQgetvalue(r, 0, 4));
	PQclear(r);
	PQfinish(c);
}

/* Reads every result of the query sent on C; fatal unless each is a
 * completed command. */
static void control_collect(PGconn *c)
{
	PGresult *r;

	while ((r = PQgetResult(c))) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
			bench_fatal("worker_control_drain: %s", PQerrorMessage(c));
		PQclear(r);
	}
}

/* The control (worker_control_drain.sql): DB_RUN's four libraries emptied
 * by bare batched DELETEs looping in the server, from SESSIONS sessions
 * (1: the libraries in turn; N_JOBS: one each, at once). Sets its wall
 * time and server CPU; fatal unless every item went. */
static void run_control(double *wall_s, double *cpu_s, const opts *o, int sessions)
{
	PGconn *c[N_JOBS], *s;
	PGresult *r;
	char lib[N_JOBS][24];
	double t0, cpu0;
	int i;

	if (sessions != 1 && sessions != N_JOBS)
		bench_fatal("the control runs 1 or %d sessions, not %d", N_JOBS, sessions);
	s = bench_open(o->db, DB_RUN, "bench:workers:control");
	r = bench_run(s, "worker_libraries", 0, NULL);
	if (PQntuples(r) != N_JOBS)
		bench_fatal("expected %d libraries, found %d", N_JOBS, PQntuples(r));
	for (i = 0; i < N_JOBS; i++)
		snprintf(lib[i], sizeof lib[i], "%s", PQgetvalue(r, i, 0));
	PQclear(r);
	for (i = 0; i < sessions; i++)
		c[i] = bench_open(o->db, DB_RUN, "bench:workers:control");
	cpu0 = bench_server_cpu(s);
	t0 = bench_now();
	for (i = 0; i < N_JOBS; i++) {
		PGconn *ci = c[sessions == 1 ? 0 : i];
		const char *p[1] = {lib[i]};

		PQclear(bench_run(ci, "worker_control_library", 1, p));
		/* Simple protocol: the DO block commits every batch. */
		if (!PQsendQuery(ci, bench_sql("worker_control_drain")))
			bench_fatal("worker_control_drain: %s", PQerrorMessage(ci));
		if (sessions == 1)
			control_collect(ci); /* the libraries in turn */
	}
	for (i = 0; sessions > 1 && i < sessions; i++)
		control_collect(c[i]); /* all four ran at once */
	*wall_s = bench_now() - t0;
	*cpu_s = bench_server_cpu(s) - cpu0;
	if (bench_int(s, "worker_control_check", 0, NULL) != 0)
		bench_fatal("the control left items behind");
	for (i = 0; i < sessions; i++)
		PQfinish(c[i]);
	PQfinish(s);
}

/* The row updates per engine table in DB_RUN (after a run). */
static void print_table_stats(const opts *o)
{
	PGconn *c = bench_open(o->db, DB_RUN, "bench:workers:stats");
	PGresult *r;
	int i;

	PQclear(bench_run(c, "worker_stats_flush", 0, NULL));
	r = bench_run(c, "worker_table_stats", 0, NULL);
	printf("  row updates per table in the last 4-runner round (pg_stat_user_tables; rows: count(*)):\n");
	printf("    %-28s %10s %10s %8s %14s\n", "table", "updates", "inserts", "rows", "updates a row");
	for (i = 0; i < PQntuples(r); i++) {
		double upd = atof(PQgetvalue(r, i, 1)), rows = atof(PQgetvalue(r, i, 3));

		printf("    %-28s %10s %10s %8s %14.0f\n", PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 2),
		       PQgetvalue(r, i, 3), rows > 0 ? upd / rows : upd);
	}
	PQclear(r);
	PQfinish(c);
}

static double loadavg1(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

int main(int argc, char **argv)
{
	opts o = {NULL, 100000, 5, false};
	round_result last[N_COUNTS], ab;
	double *walls[N_COUNTS], *cpus[N_COUNTS], med[N_COUNTS], cpu_med[N_COUNTS], *ab_walls, ab_med, load0, load1;
	/* The control (run_control): [0] 1 session, [1] N_JOBS sessions. */
	static const int control_sessions[2] = {1, N_JOBS};
	double *ctl_walls[2], *ctl_cpus[2], ctl_med[2], ctl_cpu_med[2], cpu_growth, ctl_speedup;
	int i, j, k, round;

	bench_name = "bench_workers";
	bench_db_list = dbs;
	bench_t0 = bench_now();
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			o.db = argv[++i];
		else if (strcmp(argv[i], "--items") == 0 && i + 1 < argc)
			o.items = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			o.rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--cleanupctl") == 0 && i + 1 < argc)
			cleanupctl = argv[++i];
		else if (strcmp(argv[i], "--quick") == 0)
			o.quick = true;
		else
			usage();
	}
	if (getenv("BENCH_QUICK") && *getenv("BENCH_QUICK"))
		o.quick = true;
	if (o.quick) {
		o.items = 20000;
		o.rounds = 1;
	}
	if (!o.db || o.items < 1000 || o.items > 10000000 || o.rounds < 1 || o.rounds > 20)
		usage();

	bench_note("building the template: %d servers, one library of %ld items each, a prune of each sealed with "
	           "nothing seen", N_JOBS, o.items);
	build(&o);
	for (k = 0; k < N_COUNTS; k++)
		if (!(walls[k] = calloc((size_t)o.rounds, sizeof *walls[k])) ||
		    !(cpus[k] = calloc((size_t)o.rounds, sizeof *cpus[k])))
			bench_fatal("out of memory");
	for (k = 0; k < 2; k++)
		if (!(ctl_walls[k] = calloc((size_t)o.rounds, sizeof *ctl_walls[k])) ||
		    !(ctl_cpus[k] = calloc((size_t)o.rounds, sizeof *ctl_cpus[k])))
			bench_fatal("out of memory");
	load0 = loadavg1();
	for (round = 0; round < o.rounds; round++) {
		/* Alternate the order of the runner counts between rounds, so
		 * that a drift of the machine's load does not favour one. */
		for (i = 0; i < N_COUNTS; i++) {
			k = round % 2 == 0 ? i : N_COUNTS - 1 - i;
			fresh_copy(&o, false);
			run_worker(&last[k], &o, runner_counts[k]);
			walls[k][round] = last[k].wall_s;
			cpus[k][round] = last[k].server_cpu_s;
			bench_note("round %d, %d runner%s: %.2f s wall, %.2f s server CPU (the sampler's %.2f s), at most %d "
			           "runners at once, lock waits in %ld of %ld samples",
			           round + 1, runner_counts[k], runner_counts[k] == 1 ? "" : "s", last[k].wall_s,
			           last[k].server_cpu_s, last[k].sampler_cpu_s, last[k].max_runners, last[k].lock_wait_samples,
			           last[k].samples);
			for (j = 0; j < last[k].nkinds; j++)
				bench_note("  waiting for %s: %ld backend-samples", last[k].wait_kind[j], last[k].wait_count[j]);
			if (runner_counts[k] == 4 && round == o.rounds - 1)
				print_table_stats(&o);
		}
		/* The control, on fresh copies too, its order alternating. */
		for (i = 0; i < 2; i++) {
			k = round % 2 == 0 ? i : 1 - i;
			fresh_copy(&o, false);
			run_control(&ctl_walls[k][round], &ctl_cpus[k][round], &o, control_sessions[k]);
			bench_note("round %d, control (bare batched DELETEs in the server), %d session%s: %.2f s wall, %.2f s "
			           "server CPU",
			           round + 1, control_sessions[k], control_sessions[k] == 1 ? "" : "s", ctl_walls[k][round],
			           ctl_cpus[k][round]);
		}
	}
	/* A/B: 4 runners without the jobs' per-row NOTIFY, the shared lock
	 * the sampling finds in the step path (docs/benchmarks-workers.md). */
	if (!(ab_walls = calloc((size_t)o.rounds, sizeof *ab_walls)))
		bench_fatal("out of memory");
	for (round = 0; round < o.rounds; round++) {
		fresh_copy(&o, true);
		run_worker(&ab, &o, 4);
		ab_walls[round] = ab.wall_s;
		bench_note("round %d, 4 runners, jobs_notify disabled (A/B): %.2f s wall, %.2f s server CPU, lock waits in "
		           "%ld of %ld samples",
		           round + 1, ab.wall_s, ab.server_cpu_s, ab.lock_wait_samples, ab.samples);
		for (j = 0; j < ab.nkinds; j++)
			bench_note("  waiting for %s: %ld backend-samples", ab.wait_kind[j], ab.wait_count[j]);
	}
	ab_med = bench_quantile(ab_walls, (size_t)o.rounds, 0.5);
	free(ab_walls);
	load1 = loadavg1();
	for (k = 0; k < N_COUNTS; k++) {
		med[k] = bench_quantile(walls[k], (size_t)o.rounds, 0.5);
		cpu_med[k] = bench_quantile(cpus[k], (size_t)o.rounds, 0.5);
	}
	for (k = 0; k < 2; k++) {
		ctl_med[k] = bench_quantile(ctl_walls[k], (size_t)o.rounds, 0.5);
		ctl_cpu_med[k] = bench_quantile(ctl_cpus[k], (size_t)o.rounds, 0.5);
	}

	printf("Workers: %d prune jobs on %d servers, %ld items each (none seen), run by cleanupctl worker "
	       "--idle-exit%s; %d round%s (median wall time); load average %.2f before, %.2f after; %ld cores\n",
	       N_JOBS, N_JOBS, o.items, o.quick ? " (--quick)" : "", o.rounds, o.rounds == 1 ? "" : "s", load0, load1,
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("  %-8s %9s %9s %11s %12s %14s   (server CPU and lock-wait samples: last round)\n", "runners",
	       "wall s", "speedup", "items/s", "server CPU s", "lock waits");
	for (k = 0; k < N_COUNTS; k++)
		printf("  %-8d %9.2f %8.2fx %11.0f %12.2f %8ld/%-5ld\n", runner_counts[k], med[k],
		       med[k] > 0 ? med[0] / med[k] : 0, med[k] > 0 ? (double)(N_JOBS * o.items) / med[k] : 0,
		       last[k].server_cpu_s, last[k].lock_wait_samples, last[k].samples);
	printf("  %-8s %9.2f %8.2fx %11.0f %12.2f %8ld/%-5ld   A/B: 4 runners with jobs_notify disabled\n", "4 (A/B)",
	       ab_med, ab_med > 0 ? med[0] / ab_med : 0, ab_med > 0 ? (double)(N_JOBS * o.items) / ab_med : 0,
	       ab.server_cpu_s, ab.lock_wait_samples, ab.samples);
	cpu_growth = cpu_med[0] > 0 ? 100 * (cpu_med[2] / cpu_med[0] - 1) : 0;
	ctl_speedup = ctl_med[1] > 0 ? ctl_med[0] / ctl_med[1] : 0;
	/* Where the time goes: one runner keeps one backend busy (pipelined
	 * steps) and the rest of the server runs beside it on the other core;
	 * four share both cores and each step costs more CPU. The control is
	 * the same deletions without the engine, on the same copies. */
	printf("  server CPU per round (median): 1 runner %.2f s in %.2f s wall (%.2f cores); 4 runners %.2f s "
	       "(%+.0f%% for the same work)\n",
	       cpu_med[0], med[0], med[0] > 0 ? cpu_med[0] / med[0] : 0, cpu_med[2], cpu_growth);
	printf("  control, the same %ld deletions as bare batched DELETEs looping in the server (128 a transaction, "
	       "no engine):\n    1 session %.2f s (%.2f s server CPU), 4 sessions %.2f s (%.2f s): %.2fx\n",
	       N_JOBS * o.items, ctl_med[0], ctl_cpu_med[0], ctl_med[1], ctl_cpu_med[1], ctl_speedup);
	printf("  target: 4 runners >= 1.8x of 1: %s (%.2fx)\n", med[2] > 0 && med[0] / med[2] >= 1.8 ? "met" : "NOT met",
	       med[2] > 0 ? med[0] / med[2] : 0);
	/* The line scripts/bench.sh gathers into the run's summary. */
	printf("summary: workers (%d jobs on %d servers, median of %d): 2 runners %.2fx, 4 runners %.2fx of 1 "
	       "(target >= 1.8x: %s); 4 runners' server CPU %+.0f%% of 1's; control (bare DELETE loops) 4 sessions "
	       "%.2fx of 1\n",
	       N_JOBS, N_JOBS, o.rounds, med[1] > 0 ? med[0] / med[1] : 0, med[2] > 0 ? med[0] / med[2] : 0,
	       med[2] > 0 && med[0] / med[2] >= 1.8 ? "met" : "NOT met",
	       cpu_growth, ctl_speedup);
	bench_admin(o.db, "db_drop", DB_RUN, NULL);
	bench_admin(o.db, "db_drop", DB_TPL, NULL);
	for (k = 0; k < N_COUNTS; k++) {
		free(walls[k]);
		free(cpus[k]);
	}
	for (k = 0; k < 2; k++) {
		free(ctl_walls[k]);
		free(ctl_cpus[k]);
	}
	return 0;
}

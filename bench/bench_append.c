/* bench_append: manifest loading against COPY, side by
 * side in one run, rounds alternating their order, medians reported.
 *
 *  - `cleanupctl job append JOB` with the IDs on stdin: the real command, as
 *    an operator's collector runs it (calls of at most 128 validated IDs,
 *    each its own transaction, C1; a run of 16 calls shares one WAL flush,
 *    its barrier, before anything is reported);
 *  - the same with CLEANUP_APPEND_FLUSH=call: every call waits for its own
 *    WAL flush (the command before the barrier);
 *  - the same with the session's synchronous_commit = off (PGOPTIONS): the
 *    part of the time that is the calls' own WAL flushes;
 *  - COPY of the same IDs, in the same order, into a table keyed like the
 *    manifest (job_id, external_id), one transaction.
 *
 * Each round starts from an empty manifest and an empty keyed table, after a
 * CHECKPOINT. The IDs are unordered (a traversal's order is not the key's),
 * 20 bytes each. docs/benchmarks.md records the figures. */
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench_common.h"
#include "cleanup/job.h"
#include "cleanup/seed.h"

#define DB_MANIFEST "cleanup_lab_bench_manifest"
static const char *const dbs[] = {DB_MANIFEST, NULL};

typedef struct opts {
	const char *db;
	long ids;
	int rounds;
	bool keep;
} opts;

static void usage(void)
{
	fprintf(stderr, "usage: bench_append --db CONNINFO [--ids N (200000)] [--rounds N (3)] [--cleanupctl PATH] "
	                "[--keep]\n");
	exit(2);
}

/* Writes N IDs, one a line, in a scrambled order, to a new temporary file;
 * returns its path (static) and, in *BLOB, the same lines prefixed with
 * "JOB\t" for COPY (malloc'd). */
static const char *write_ids(long n, char **blob, size_t *bloblen)
{
	static char path[] = "/tmp/bench_append_XXXXXX";
	int fd = mkstemp(path);
	FILE *f;
	size_t cap = (size_t)n * 32 + 64, o = 0;
	long i;

	if (fd < 0 || !(f = fdopen(fd, "w")))
		bench_fatal("cannot create %s: %s", path, strerror(errno));
	*blob = malloc(cap);
	if (!*blob)
		bench_fatal("out of memory");
	for (i = 0; i < n; i++) {
		/* A bijection of 0..2^32 scrambles the order; the index keeps IDs unique. */
		uint32_t h = (uint32_t)((uint64_t)(i + 1) * 2654435761u);
		char id[48];

		snprintf(id, sizeof id, "m-%08" PRIx32 "-%07ld", h, i);
		fprintf(f, "%s\n", id);
		o += (size_t)snprintf(*blob + o, cap - o, "1\t%s\n", id);
	}
	if (fclose(f) != 0)
		bench_fatal("cannot write %s", path);
	*bloblen = o;
	return path;
}

/* The 1, 5 and 15 minute load averages (/proc/loadavg), static. */
static const char *loadavg(void)
{
	static char buf[64];

	return bench_load_avg(buf, sizeof buf);
}

/* The binary timed (--cleanupctl; default the one built beside this). */
static const char *cleanupctl = BENCH_CLEANUPCTL;

/* Server CPU seconds of the last run_append or run_copy (bench_server_cpu). */
static double last_cpu;

/* Runs CLEANUPCTL --quiet --db CI ARGS... (no shell) with stdin from IN
 * (NULL: /dev/null) and stdout discarded, PGOPTIONS set to PGOPT when not
 * NULL, CLEANUP_APPEND_FLUSH=call when EACH; ends the program unless it
 * exits 0. */
static void run_cli_env(const char *ci, const char *in, const char *pgopt, bool each, const char *a1,
                        const char *a2, const char *a3)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		bench_fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		int fin = open(in ? in : "/dev/null", O_RDONLY), out = open("/dev/null", O_WRONLY);

		if (fin < 0 || out < 0 || dup2(fin, 0) < 0 || dup2(out, 1) < 0)
			_exit(127);
		if (pgopt)
			setenv("PGOPTIONS", pgopt, 1);
		else
			unsetenv("PGOPTIONS");
		if (each)
			setenv("CLEANUP_APPEND_FLUSH", "call", 1);
		else
			unsetenv("CLEANUP_APPEND_FLUSH");
		execl(cleanupctl, "cleanupctl", "--quiet", "--db", ci, a1, a2, a3, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		bench_fatal("waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		bench_fatal("%s %s %s %s failed (status %d)", cleanupctl, a1, a2 ? a2 : "", a3 ? a3 : "", st);
}

/* run_cli_env without CLEANUP_APPEND_FLUSH. */
static void run_cli(const char *ci, const char *in, const char *pgopt, const char *a1, const char *a2,
                    const char *a3)
{
	run_cli_env(ci, in, pgopt, false, a1, a2, a3);
}

/* `cleanupctl job append JOB < PATH`, with PGOPTIONS PGOPT when not NULL
 * and CLEANUP_APPEND_FLUSH=call when EACH; returns its wall time in
 * seconds and leaves the server's CPU seconds in last_cpu. C is a
 * connection to the same server, for the CPU reading. */
static double run_append(PGconn *c, const char *ci, int64_t job, const char *path, const char *pgopt, bool each)
{
	double cpu0 = bench_server_cpu(c), t0 = bench_now();
	char jbuf[24];

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job);
	run_cli_env(ci, path, pgopt, each, "job", "append", jbuf);
	t0 = bench_now() - t0;
	last_cpu = bench_server_cpu(c) - cpu0;
	return t0;
}

/* COPY of BLOB into a fresh keyed table; its wall time in seconds. */
static double run_copy(PGconn *c, const char *blob, size_t len, long n)
{
	PGresult *r;
	double t0, cpu0;
	size_t off;

	PQclear(bench_run(c, "copy_drop", 0, NULL));
	PQclear(bench_run(c, "copy_table", 0, NULL));
	PQclear(bench_run(c, "checkpoint", 0, NULL));
	cpu0 = bench_server_cpu(c);
	t0 = bench_now();
	r = PQexec(c, bench_sql("copy_in"));
	if (PQresultStatus(r) != PGRES_COPY_IN)
		bench_fatal("COPY: %s", PQerrorMessage(c));
	PQclear(r);
	for (off = 0; off < len; off += 65536) {
		size_t k = len - off < 65536 ? len - off : 65536;

		if (PQputCopyData(c, blob + off, (int)k) != 1)
			bench_fatal("COPY data: %s", PQerrorMessage(c));
	}
	if (PQputCopyEnd(c, NULL) != 1)
		bench_fatal("COPY end: %s", PQerrorMessage(c));
	r = PQgetResult(c);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		bench_fatal("COPY: %s", PQerrorMessage(c));
	PQclear(r);
	while ((r = PQgetResult(c)))
		PQclear(r);
	t0 = bench_now() - t0;
	last_cpu = bench_server_cpu(c) - cpu0;
	if (bench_int(c, "copy_count", 0, NULL) != n)
		bench_fatal("COPY loaded the wrong number of rows");
	return t0;
}

/* A new prune job on library LIB after cancelling PREV (0: none), with an
 * empty manifest, checkpointed. */
static int64_t new_job(cleanup_engine *e, PGconn *c, int64_t lib, int64_t prev)
{
	cleanup_job job;
	cleanup_error err;
	int64_t id;

	if (prev > 0) {
		if (cleanup_job_transition(&job, e, prev, "cancel", &err) != CLEANUP_OK)
			bench_fatal_err("cancel", &err);
		cleanup_job_reset(&job);
	}
	PQclear(bench_run(c, "manifest_reset", 0, NULL));
	if (cleanup_job_create(&job, e, "prune", lib, "bounded", &err) != CLEANUP_OK)
		bench_fatal_err("job create", &err);
	id = job.id;
	cleanup_job_reset(&job);
	PQclear(bench_run(c, "checkpoint", 0, NULL));
	return id;
}

static void check_manifest(PGconn *c, int64_t job, long n)
{
	char jb[24];
	const char *p[1] = {jb};

	snprintf(jb, sizeof jb, "%" PRId64, job);
	if (bench_int(c, "manifest_count", 1, p) != n)
		bench_fatal("job %s: the manifest does not hold the %ld IDs", jb, n);
}

int main(int argc, char **argv)
{
	opts o = {NULL, 200000, 3, false};
	char ci[4096], *blob = NULL, load0[64];
	size_t bloblen = 0;
	const char *path;
	double *t_cli, *t_each, *t_async, *t_copy, *ratio, *ratio_each, *ratio_async, *c_cli, *c_each, *c_async, *c_copy;
	cleanup_seed_spec spec = {1, 1, 10, 0};
	cleanup_seed_result sr;
	cleanup_engine *e = NULL;
	cleanup_error err;
	PGconn *c;
	int64_t job = 0, lib;
	int i, round;

	bench_name = "bench_append";
	bench_db_list = dbs;
	bench_t0 = 0;
	bench_t0 = bench_now();
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			o.db = argv[++i];
		else if (strcmp(argv[i], "--ids") == 0 && i + 1 < argc)
			o.ids = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			o.rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--cleanupctl") == 0 && i + 1 < argc)
			cleanupctl = argv[++i];
		else if (strcmp(argv[i], "--keep") == 0)
			o.keep = true;
		else
			usage();
	}
	if (!o.db || o.ids < 1 || o.ids > 10000000 || o.rounds < 1 || o.rounds > 20)
		usage();

	bench_admin(o.db, "db_drop", DB_MANIFEST, NULL);
	bench_admin(o.db, "db_create", DB_MANIFEST, NULL);
	bench_conninfo(ci, sizeof ci, o.db, DB_MANIFEST);
	if (cleanup_engine_open(&e, ci, "bench:append", &err) != CLEANUP_OK)
		bench_fatal_err("connecting", &err);
	/* The schema of the binary timed (--cleanupctl compares builds). */
	run_cli(ci, NULL, NULL, "install", NULL, NULL);
	if (cleanup_seed(&sr, e, &spec, &err) != CLEANUP_OK)
		bench_fatal_err("seed", &err);
	c = bench_open(o.db, DB_MANIFEST, "bench:append");
	lib = bench_int(c, "first_library", 0, NULL);
	path = write_ids(o.ids, &blob, &bloblen);

	t_cli = calloc((size_t)o.rounds, sizeof(double));
	t_each = calloc((size_t)o.rounds, sizeof(double));
	t_async = calloc((size_t)o.rounds, sizeof(double));
	t_copy = calloc((size_t)o.rounds, sizeof(double));
	ratio = calloc((size_t)o.rounds, sizeof(double));
	ratio_each = calloc((size_t)o.rounds, sizeof(double));
	ratio_async = calloc((size_t)o.rounds, sizeof(double));
	c_cli = calloc((size_t)o.rounds, sizeof(double));
	c_each = calloc((size_t)o.rounds, sizeof(double));
	c_async = calloc((size_t)o.rounds, sizeof(double));
	c_copy = calloc((size_t)o.rounds, sizeof(double));
	if (!t_cli || !t_each || !t_async || !t_copy || !ratio || !ratio_each || !ratio_async || !c_cli || !c_each ||
	    !c_async || !c_copy)
		bench_fatal("out of memory");
	snprintf(load0, sizeof load0, "%s", loadavg());
	for (round = 0; round < o.rounds; round++) {
		/* COPY before and after the three appends (their mean is the
		 * round's COPY: the load of this shared machine drifts within a
		 * round); the appends' order turns from round to round. */
		double copy1 = run_copy(c, blob, bloblen, o.ids), cpu1 = last_cpu, copy2;
		int k;

		for (k = 0; k < 3; k++) {
			int v = (k + round) % 3;

			job = new_job(e, c, lib, job);
			if (v == 0) {
				t_cli[round] = run_append(c, ci, job, path, NULL, false);
				c_cli[round] = last_cpu;
			} else if (v == 1) {
				t_each[round] = run_append(c, ci, job, path, NULL, true);
				c_each[round] = last_cpu;
			} else {
				t_async[round] = run_append(c, ci, job, path, "-c synchronous_commit=off", false);
				c_async[round] = last_cpu;
			}
			check_manifest(c, job, o.ids);
		}
		copy2 = run_copy(c, blob, bloblen, o.ids);
		t_copy[round] = (copy1 + copy2) / 2;
		c_copy[round] = (cpu1 + last_cpu) / 2;
		ratio[round] = t_cli[round] / t_copy[round];
		ratio_each[round] = t_each[round] / t_copy[round];
		ratio_async[round] = t_async[round] / t_copy[round];
		bench_note("round %d: job append %.2f s, every call flushed %.2f s, synchronous_commit off %.2f s, COPY "
		           "%.2f s (%.2f, %.2f): %.2fx, %.2fx, %.2fx; server CPU %.2f / %.2f / %.2f / %.2f s",
		           round + 1, t_cli[round], t_each[round], t_async[round], t_copy[round], copy1, copy2, ratio[round],
		           ratio_each[round], ratio_async[round], c_cli[round], c_each[round], c_async[round], c_copy[round]);
	}

	printf("binary: %s\n", cleanupctl);
	printf("Manifest loading: %ld IDs (unordered, 20 bytes each), %ld calls of at most %d; %d round%s, medians\n",
	       o.ids, (o.ids + CLEANUP_APPEND_MAX - 1) / CLEANUP_APPEND_MAX, CLEANUP_APPEND_MAX, o.rounds,
	       o.rounds == 1 ? "" : "s");
	printf("  load average: %s at the start, %s at the end\n", load0, loadavg());
	printf("  COPY into a keyed table (job_id, external_id), one transaction: %.2f s\n",
	       bench_quantile(t_copy, (size_t)o.rounds, 0.5));
	printf("  cleanupctl job append JOB < ids (the command as it is):        %.2f s  ratio %.2fx\n",
	       bench_quantile(t_cli, (size_t)o.rounds, 0.5), bench_quantile(ratio, (size_t)o.rounds, 0.5));
	printf("  the same, every call its own WAL flush (CLEANUP_APPEND_FLUSH=call): %.2f s  ratio %.2fx\n",
	       bench_quantile(t_each, (size_t)o.rounds, 0.5), bench_quantile(ratio_each, (size_t)o.rounds, 0.5));
	printf("  the same, session synchronous_commit = off (PGOPTIONS):          %.2f s  ratio %.2fx\n",
	       bench_quantile(t_async, (size_t)o.rounds, 0.5), bench_quantile(ratio_async, (size_t)o.rounds, 0.5));
	printf("  server CPU (postmaster and its processes, all of them): job append %.2f s, every call flushed %.2f s, "
	       "synchronous_commit off %.2f s, COPY %.2f s\n",
	       bench_quantile(c_cli, (size_t)o.rounds, 0.5), bench_quantile(c_each, (size_t)o.rounds, 0.5),
	       bench_quantile(c_async, (size_t)o.rounds, 0.5), bench_quantile(c_copy, (size_t)o.rounds, 0.5));
	printf("  per call: %.3f ms (job append), %.3f ms (every call flushed), %.3f ms (synchronous_commit off)\n",
	       1000 * bench_quantile(t_cli, (size_t)o.rounds, 0.5) / (double)((o.ids + 127) / 128),
	       1000 * bench_quantile(t_each, (size_t)o.rounds, 0.5) / (double)((o.ids + 127) / 128),
	       1000 * bench_quantile(t_async, (size_t)o.rounds, 0.5) / (double)((o.ids + 127) / 128));

	/* The line scripts/bench.sh gathers into the run's summary: the target
	 * (1.5x, docs/benchmarks-append.md), and the server-CPU ratio beside the wall one. */
	printf("summary: manifest loading (job append / COPY, %ld IDs, median of %d): %.2fx, server CPU %.2fx "
	       "(target <= 1.5x: %s)\n",
	       o.ids, o.rounds, bench_quantile(ratio, (size_t)o.rounds, 0.5),
	       bench_quantile(c_copy, (size_t)o.rounds, 0.5) > 0
	           ? bench_quantile(c_cli, (size_t)o.rounds, 0.5) / bench_quantile(c_copy, (size_t)o.rounds, 0.5)
	           : 0,
	       bench_quantile(ratio, (size_t)o.rounds, 0.5) <= 1.5 ? "met" : "NOT met");

	unlink(path);
	free(blob);
	free(t_cli);
	free(t_each);
	free(ratio_each);
	free(c_each);
	free(t_async);
	free(t_copy);
	free(ratio);
	free(ratio_async);
	free(c_cli);
	free(c_async);
	free(c_copy);
	PQfinish(c);
	cleanup_engine_close(e);
	if (!o.keep)
		bench_admin(o.db, "db_drop", DB_MANIFEST, NULL);
	return 0;
}

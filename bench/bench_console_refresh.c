/* bench_console_refresh: what one console refresh costs the database as the
 * inventory grows, and what an idle console costs the machine.
 *
 *  1. Refresh cost at two inventory sizes (default 1M and 10M items, the
 *     big library holding the draining job being watched): the monitor's
 *     own refresh cycle (servers, libraries, jobs, the detail job's steps,
 *     events, contention; sent asynchronously exactly as the console does)
 *     timed over many refreshes, the lock query's cycle, and EXPLAIN
 *     (ANALYZE, BUFFERS) of every refresh query: its execution time and the
 *     shared buffers it touched. Flat means the buffers do not grow with
 *     the items (no query scans inventory).
 *  2. Change latency: a job transition committed by another connection
 *     until the monitor's snapshot shows it, with the periodic refresh set
 *     to a minute (the NOTIFY path alone).
 *  3. Idle CPU: the console (--console PATH, else BUILD/tui/cleanupctl next
 *     to this program; --no-idle skips it) started in tmux on the bench
 *     database, its user+system CPU over --idle-seconds (60).
 *
 * Machines are noisy: compare the two sizes of one run. The program talks
 * to the PostgreSQL given by --db and creates (and drops, unless --keep) the
 * database cleanup_lab_bench_console. Statements of its own come from
 * bench/sql/ (BENCH_SQL_DIR); the refresh queries are the embedded
 * sql/queries/mon_*.sql themselves.
 */
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cleanup/engine.h"
#include "cleanup/install.h"
#include "cleanup/job.h"
#include "cleanup/monitor.h"
#include "cleanup/seed.h"
#include "cleanup/step.h"
#include "sql_bundle.h"

#define BENCH_DB "cleanup_lab_bench_console"

typedef struct opts {
	const char *db;
	int64_t items1, items2;
	int samples;
	int idle_seconds;
	const char *console;
	bool keep;
} opts;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "bench_console_refresh: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static double now_s(void)
{
	return cleanup_monitor_now();
}

/* Reads bench/sql/NAME.sql, replacing {{db}} with BENCH_DB. */
static char *bench_sql(const char *name)
{
	char path[1024], buf[4096], *out;
	FILE *f;
	size_t n;
	const char *p, *q;

	snprintf(path, sizeof path, "%s/%s.sql", BENCH_SQL_DIR, name);
	f = fopen(path, "r");
	if (!f)
		die("cannot read %s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	out = calloc(1, n + sizeof BENCH_DB + 1);
	if (!out)
		die("out of memory");
	p = buf;
	while ((q = strstr(p, "{{db}}")) != NULL) {
		strncat(out, p, (size_t)(q - p));
		strcat(out, BENCH_DB);
		p = q + 6;
	}
	strcat(out, p);
	return out;
}

static void exec_ok(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);

	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		die("%s: %s", sql, PQerrorMessage(c));
	PQclear(r);
}

static void exec_file(PGconn *c, const char *name)
{
	char *sql = bench_sql(name);

	exec_ok(c, sql);
	free(sql);
}

static PGconn *connect_db(const char *conninfo, const char *dbname)
{
	const char *keys[] = {"dbname", "dbname", "application_name", NULL};
	const char *vals[] = {conninfo, dbname, "bench_console_refresh", NULL};
	PGconn *c;

	if (!dbname) {
		keys[1] = "application_name";
		vals[1] = "bench_console_refresh";
		keys[2] = NULL;
		vals[2] = NULL;
	}
	c = PQconnectdbParams(keys, vals, 1);
	if (PQstatus(c) != CONNECTION_OK)
		die("connect: %s", PQerrorMessage(c));
	return c;
}

static char bench_conninfo[2048];

static cleanup_engine *engine(void)
{
	cleanup_engine *e = NULL;
	cleanup_error err;

	if (cleanup_engine_open(&e, bench_conninfo, "bench_console_refresh", &err) != CLEANUP_OK)
		die("engine: %s", err.message);
	return e;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	int i;

	if (n == 0)
		return NAN;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	i = (int)ceil(p / 100.0 * n) - 1;
	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return v[i];
}

typedef struct query_cost {
	const char *name;
	double exec_ms;
	long hit, read;
} query_cost;

#define N_QUERIES 7

typedef struct scale_result {
	int64_t items;
	double refresh_p50, refresh_p95, refresh_max;
	double locks_p50, locks_max;
	int nlocks_samples;
	query_cost q[N_QUERIES];
	double notify_p50, notify_max;
} scale_result;

/* EXPLAIN (ANALYZE, BUFFERS) of the embedded query Q with N params: the
 * execution time and the root node's shared buffers (hit, read). Takes the
 * best of three runs (warm cache). */
static void explain(query_cost *out, PGconn *c, const char *name, enum sql_query_id q, int n, const char *const *params)
{
	const char *text = sql_query_files[q].text;
	size_t len = strlen(text) + 64;
	char *sql = malloc(len);
	int run;

	if (!sql)
		die("out of memory");
	snprintf(sql, len, "EXPLAIN (ANALYZE, BUFFERS) %s", text);
	out->name = name;
	out->exec_ms = 1e9;
	for (run = 0; run < 3; run++) {
		PGresult *r = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
		int i;
		bool got_buffers = false;
		double ms = -1;

		if (PQresultStatus(r) != PGRES_TUPLES_OK)
			die("explain %s: %s", name, PQerrorMessage(c));
		for (i = 0; i < PQntuples(r); i++) {
			const char *line = PQgetvalue(r, i, 0), *b;

			if (!got_buffers && (b = strstr(line, "Buffers: shared"))) {
				const char *h = strstr(b, "hit="), *rd = strstr(b, "read=");

				out->hit = h ? strtol(h + 4, NULL, 10) : 0;
				out->read = rd ? strtol(rd + 5, NULL, 10) : 0;
				got_buffers = true;
			}
			if ((b = strstr(line, "Execution Time:")))
				ms = strtod(b + 15, NULL);
		}
		if (ms >= 0 && ms < out->exec_ms)
			out->exec_ms = ms;
		PQclear(r);
	}
	free(sql);
}

static void measure(scale_result *res, const opts *o, int64_t big_job, int64_t small_job, int64_t items)
{
	cleanup_monitor_opts mo;
	cleanup_monitor *m = NULL;
	cleanup_error err;
	double *ref = calloc((size_t)o->samples, sizeof *ref), *lk = calloc((size_t)o->samples, sizeof *lk);
	double lat[20];
	int i, nref = 0, nlk = 0;
	uint64_t seq;
	double last_locks_at = 0;
	PGconn *c = connect_db(bench_conninfo, NULL);
	cleanup_engine *e = engine();
	char jbuf[24];

	memset(res, 0, sizeof *res);
	res->items = items;
	memset(&mo, 0, sizeof mo);
	mo.conninfo = bench_conninfo;
	mo.app_name = "cleanupctl:console";
	mo.refresh_ms = 100;
	mo.locks_ms = 100;
	if (cleanup_monitor_open(&m, &mo, &err) != CLEANUP_OK)
		die("monitor: %s", err.message);
	cleanup_monitor_set_detail_job(m, big_job);
	seq = 0;
	for (i = 0; i < 10; i++) { /* warm up: connect, prepare, caches */
		if (cleanup_monitor_wait(m, seq, 10000, &err) != CLEANUP_OK)
			die("monitor: %s", err.message);
		seq = cleanup_monitor_snapshot(m)->seq;
	}
	while (nref < o->samples) {
		const cleanup_mon_snapshot *s;
		double before = cleanup_monitor_snapshot(m)->taken_at;

		if (cleanup_monitor_wait(m, seq, 10000, &err) != CLEANUP_OK)
			die("monitor: %s", err.message);
		s = cleanup_monitor_snapshot(m);
		seq = s->seq;
		/* A snapshot is new either from a refresh or from a lock cycle. */
		if (s->locks_at != last_locks_at && s->locks_valid) {
			last_locks_at = s->locks_at;
			if (nlk < o->samples)
				lk[nlk++] = s->locks_ms;
		}
		if (s->taken_at != before) /* a refresh, not a lock cycle */
			ref[nref++] = s->db_ms;
		if (s->detail_job_id != big_job || s->nsteps == 0)
			die("the detail job's steps are missing from the snapshot");
	}
	res->refresh_p50 = pct(ref, nref, 50);
	res->refresh_p95 = pct(ref, nref, 95);
	res->refresh_max = pct(ref, nref, 100);
	res->locks_p50 = pct(lk, nlk, 50);
	res->locks_max = pct(lk, nlk, 100);
	res->nlocks_samples = nlk;

	/* The NOTIFY path alone: periodic refresh one minute. */
	cleanup_monitor_set_interval(m, 60000);
	for (i = 0; i < 20; i++) {
		cleanup_job after;
		const char *want = i % 2 == 0 ? "paused" : "collecting";
		double t0;
		size_t k;
		bool seen = false;

		memset(&after, 0, sizeof after);
		if (cleanup_job_transition(&after, e, small_job, i % 2 == 0 ? "pause" : "resume", &err) != CLEANUP_OK)
			die("transition: %s", err.message);
		cleanup_job_reset(&after);
		t0 = now_s();
		while (!seen) {
			const cleanup_mon_snapshot *s;

			if (cleanup_monitor_wait(m, seq, 10000, &err) != CLEANUP_OK)
				die("waiting for the change: %s", err.message);
			s = cleanup_monitor_snapshot(m);
			seq = s->seq;
			for (k = 0; k < s->njobs; k++)
				if (s->jobs[k].job.id == small_job && strcmp(s->jobs[k].job.phase, want) == 0)
					seen = true;
		}
		lat[i] = (now_s() - t0) * 1000.0;
	}
	res->notify_p50 = pct(lat, 20, 50);
	res->notify_max = pct(lat, 20, 100);
	cleanup_monitor_close(m);

	{
		const char *p500[] = {"500"}, *p2000[] = {"2000"}, *p20[] = {"20"}, *p100[] = {"100", "0"}, *p8[] = {"8"};
		const char *psteps[] = {jbuf, "60"};

		snprintf(jbuf, sizeof jbuf, "%" PRId64, big_job);
		explain(&res->q[0], c, "mon_servers", CLEANUP_Q_MON_SERVERS, 1, p500);
		explain(&res->q[1], c, "mon_libraries", CLEANUP_Q_MON_LIBRARIES, 1, p2000);
		explain(&res->q[2], c, "mon_jobs", CLEANUP_Q_MON_JOBS, 1, p20);
		explain(&res->q[3], c, "mon_steps", CLEANUP_Q_MON_STEPS, 2, psteps);
		/* the first read of the log (no event seen yet): its most expensive */
		explain(&res->q[4], c, "mon_events", CLEANUP_Q_MON_EVENTS, 2, p100);
		explain(&res->q[5], c, "mon_contention", CLEANUP_Q_MON_CONTENTION, 1, p8);
		explain(&res->q[6], c, "locks_tree", CLEANUP_Q_LOCKS_TREE, 0, NULL);
	}
	free(ref);
	free(lk);
	cleanup_engine_close(e);
	PQfinish(c);
}

static int64_t seed_library(cleanup_engine *e, int64_t items)
{
	cleanup_seed_spec spec = {1, 1, items, 0};
	cleanup_seed_result r;
	cleanup_error err;
	double t0 = now_s();

	if (cleanup_seed(&r, e, &spec, &err) != CLEANUP_OK)
		die("seed: %s", err.message);
	printf("  seeded a library of %" PRId64 " items in %.1f s\n", r.items, now_s() - t0);
	fflush(stdout);
	return r.items;
}

/* Appends S to OUT single-quoted for sh (' as '\''). */
static void sh_quote(char *out, size_t len, const char *s)
{
	size_t n = strlen(out);

	if (n + 1 < len)
		out[n++] = '\'';
	for (; *s && n + 5 < len; s++) {
		if (*s == '\'') {
			memcpy(out + n, "'\\''", 4);
			n += 4;
		} else {
			out[n++] = *s;
		}
	}
	if (n + 1 < len)
		out[n++] = '\'';
	out[n] = '\0';
}

/* The console's CPU time over SECONDS of idling on the bench database:
 * started in tmux on a private socket, measured from /proc. */
static void idle_cpu(const opts *o)
{
	char cmd[4096], stat_path[64], line[1024];
	long ticks = sysconf(_SC_CLK_TCK);
	unsigned long ut0, st0, ut1, st1;
	int pid = 0;
	FILE *p;
	double t0, t1;

	char inner[3072] = "exec ", abs_console[4096];

	if (!realpath(o->console, abs_console))
		die("no console at %s: %s", o->console, strerror(errno));
	sh_quote(inner, sizeof inner, abs_console);
	strncat(inner, " --db ", sizeof inner - strlen(inner) - 1);
	sh_quote(inner, sizeof inner, bench_conninfo);
	strncat(inner, " console", sizeof inner - strlen(inner) - 1);
	snprintf(cmd, sizeof cmd, "tmux -L bench-console-%d -f /dev/null new-session -d -x 120 -y 40 ", (int)getpid());
	sh_quote(cmd, sizeof cmd, inner);
	if (system(cmd) != 0)
		die("cannot start the console in tmux");
	snprintf(cmd, sizeof cmd, "tmux -L bench-console-%d list-panes -F '#{pane_pid}'", (int)getpid());
	sleep(3); /* the console connects and draws; the measurement starts after */
	p = popen(cmd, "r");
	if (!p || !fgets(line, sizeof line, p))
		die("the console did not stay up in tmux; run by hand to see why: %s", inner);
	pclose(p);
	pid = atoi(line);
#define READ_STAT(ut, st)                                                                                   \
	do {                                                                                                    \
		FILE *f = fopen(stat_path, "r");                                                                    \
		char *rp;                                                                                           \
		int field;                                                                                          \
		if (!f || !fgets(line, sizeof line, f))                                                             \
			die("cannot read %s", stat_path);                                                               \
		fclose(f);                                                                                          \
		rp = strrchr(line, ')');                                                                            \
		for (field = 2; rp && field < 14; field++)                                                          \
			rp = strchr(rp + 1, ' ');                                                                       \
		if (!rp || sscanf(rp + 1, "%lu %lu", &(ut), &(st)) != 2)                                            \
			die("cannot parse %s", stat_path);                                                              \
	} while (0)
	snprintf(stat_path, sizeof stat_path, "/proc/%d/stat", pid);
	READ_STAT(ut0, st0);
	t0 = now_s();
	sleep((unsigned)o->idle_seconds);
	READ_STAT(ut1, st1);
	t1 = now_s();
	printf("\nidle console (refresh 1 s, locks every 3 s, clock redrawn every second), %.0f s:\n", t1 - t0);
	printf("  user %.2f s, system %.2f s: %.3f%% of one core\n", (double)(ut1 - ut0) / ticks,
	       (double)(st1 - st0) / ticks, (double)(ut1 - ut0 + st1 - st0) / ticks / (t1 - t0) * 100.0);
	snprintf(cmd, sizeof cmd, "tmux -L bench-console-%d kill-server", (int)getpid());
	if (system(cmd) != 0)
		fprintf(stderr, "bench_console_refresh: could not stop the tmux server\n");
}

static void print_scales(const scale_result *r, int n)
{
	int i, k;

	printf("\n%-34s", "items in inventory");
	for (i = 0; i < n; i++)
		printf(" %14" PRId64, r[i].items);
	printf("\n%-34s", "refresh cycle p50 (ms)");
	for (i = 0; i < n; i++)
		printf(" %14.2f", r[i].refresh_p50);
	printf("\n%-34s", "refresh cycle p95 (ms)");
	for (i = 0; i < n; i++)
		printf(" %14.2f", r[i].refresh_p95);
	printf("\n%-34s", "refresh cycle max (ms)");
	for (i = 0; i < n; i++)
		printf(" %14.2f", r[i].refresh_max);
	printf("\n%-34s", "lock query cycle p50 (ms)");
	for (i = 0; i < n; i++)
		printf(" %14.2f", r[i].locks_p50);
	printf("\n%-34s", "lock query cycle max (ms)");
	for (i = 0; i < n; i++)
		printf(" %14.2f", r[i].locks_max);
	printf("\n%-34s", "change via NOTIFY p50 (ms)");
	for (i = 0; i < n; i++)
		printf(" %14.2f", r[i].notify_p50);
	printf("\n%-34s", "change via NOTIFY max (ms)");
	for (i = 0; i < n; i++)
		printf(" %14.2f", r[i].notify_max);
	printf("\n\nEXPLAIN (ANALYZE, BUFFERS), best of 3: execution ms / shared buffers hit+read\n");
	for (k = 0; k < N_QUERIES; k++) {
		printf("%-34s", r[0].q[k].name);
		for (i = 0; i < n; i++) {
			char cell[40];

			snprintf(cell, sizeof cell, "%.3f / %ld", r[i].q[k].exec_ms, r[i].q[k].hit + r[i].q[k].read);
			printf(" %14s", cell);
		}
		printf("\n");
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_console_refresh --db CONNINFO [--items N] [--items2 N] [--samples N]\n"
	                "                             [--console PATH_TO_CLEANUPCTL | --no-idle] [--idle-seconds N] [--keep]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	opts o = {NULL, 1000000, 10000000, 200, 60, NULL, false};
	scale_result res[2];
	PGconn *admin;
	cleanup_engine *e;
	cleanup_install_result ir;
	cleanup_error err;
	cleanup_job job, small;
	cleanup_run_opts ro;
	cleanup_run_summary rs;
	int i;
	int64_t total = 0;
	bool no_idle = false;
	static char found_console[4096];

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			o.db = argv[++i];
		else if (strcmp(argv[i], "--items") == 0 && i + 1 < argc)
			o.items1 = strtoll(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--items2") == 0 && i + 1 < argc)
			o.items2 = strtoll(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
			o.samples = atoi(argv[++i]);
		else if (strcmp(argv[i], "--console") == 0 && i + 1 < argc)
			o.console = argv[++i];
		else if (strcmp(argv[i], "--idle-seconds") == 0 && i + 1 < argc)
			o.idle_seconds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--keep") == 0)
			o.keep = true;
		else if (strcmp(argv[i], "--no-idle") == 0)
			no_idle = true;
		else
			usage();
	}
	if (!o.db || o.items1 < 1 || o.items2 <= o.items1 || o.samples < 10 || o.idle_seconds < 1)
		usage();
	/* make bench passes only --db: the console next to this program
	 * (BUILD/bench/.. /tui/cleanupctl) is measured when tmux is there. */
	if (!o.console && !no_idle) {
		const char *slash = strrchr(argv[0], '/');

		snprintf(found_console, sizeof found_console, "%.*s/../tui/cleanupctl",
		         slash ? (int)(slash - argv[0]) : 1, slash ? argv[0] : ".");
		if (access(found_console, X_OK) == 0 && system("command -v tmux >/dev/null 2>&1") == 0)
			o.console = found_console;
		else
			printf("(no console next to this program or no tmux: idle CPU not measured)\n");
	}
	if (no_idle)
		o.console = NULL;

	admin = connect_db(o.db, NULL);
	{
		char *sql = bench_sql("settings");
		PGresult *r = PQexec(admin, sql);

		free(sql);
		if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
			printf("server: %s\n  fsync %s, synchronous_commit %s, shared_buffers %s\n", PQgetvalue(r, 0, 0),
			       PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 2), PQgetvalue(r, 0, 3));
		PQclear(r);
	}
	exec_file(admin, "db_drop");
	exec_file(admin, "db_create");
	snprintf(bench_conninfo, sizeof bench_conninfo, "%s dbname=%s", o.db, BENCH_DB);
	e = engine();
	if (cleanup_install(&ir, e, &err) != CLEANUP_OK)
		die("install: %s", err.message);

	/* A dashboard of small servers, then the big library with a draining
	 * job that has steps, and a collecting job to toggle. */
	{
		cleanup_seed_spec spec = {3, 3, 1000, 0};
		cleanup_seed_result r;

		if (cleanup_seed(&r, e, &spec, &err) != CLEANUP_OK)
			die("seed: %s", err.message);
		total += r.items;
	}
	printf("\nscale 1\n");
	total += seed_library(e, o.items1);
	{
		PGconn *b = connect_db(bench_conninfo, NULL);
		PGresult *r = PQexec(b, "SELECT max(id) FROM inventory.libraries");
		int64_t big = strtoll(PQgetvalue(r, 0, 0), NULL, 10);

		PQclear(r);
		exec_file(b, "vacuum");
		PQfinish(b);
		if (cleanup_job_create(&job, e, "prune", big, NULL, &err) != CLEANUP_OK ||
		    cleanup_job_seal(&job, e, job.id, 0, &err) != CLEANUP_OK)
			die("job: %s", err.message);
	}
	memset(&ro, 0, sizeof ro);
	ro.max_steps = 60;
	if (cleanup_job_run(&rs, e, job.id, &ro, &err) != CLEANUP_OK)
		die("run: %s", err.message);
	cleanup_job_reset(&rs.job);
	if (cleanup_job_create(&small, e, "prune", 4, NULL, &err) != CLEANUP_OK)
		die("job: %s", err.message);
	measure(&res[0], &o, job.id, small.id, total);

	printf("scale 2\n");
	total += seed_library(e, o.items2 - o.items1);
	{
		PGconn *b = connect_db(bench_conninfo, NULL);

		exec_file(b, "vacuum");
		PQfinish(b);
	}
	measure(&res[1], &o, job.id, small.id, total);
	print_scales(res, 2);
	printf("\nratio of p50 refresh cycles (scale 2 / scale 1): %.2f\n", res[1].refresh_p50 / res[0].refresh_p50);

	if (o.console)
		idle_cpu(&o);
	cleanup_job_reset(&job);
	cleanup_job_reset(&small);
	cleanup_engine_close(e);
	if (!o.keep)
		exec_file(admin, "db_drop");
	PQfinish(admin);
	return 0;
}

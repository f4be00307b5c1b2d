/* bench_count_cache: the benchmark of the count cache of seed 002
 * (docs/count-cache.md).
 *
 *  A. Writers in parallel (2 and 4 threads, a connection each, one library
 *     per thread unless "shared"), each transaction one batch of inserts (1
 *     or 64 rows), for --seconds each case, with synchronous_commit off (the
 *     protocol's CPU cost, not the disk's fsync):
 *       plain SQL, unwatched libraries        (the baseline)
 *       gateway (inventory.write_items), unwatched libraries
 *       gateway, watched libraries            (the cache watches each)
 *       declared plain SQL, watched libraries (BEGIN, inventory.count_declare,
 *                                              INSERT, COMMIT)
 *       gateway, one watched library shared by every thread (batch 1)
 *     Plain SQL without declared locks is refused in a watched library
 *     (CU410), so it has no row of its own. Reported: rows and
 *     transactions a second, and each transaction's latency p50/p99.
 *  B. The cache at scale: --libraries libraries holding --items items in
 *     total (1,000 / 10,000,000; --quick or BENCH_QUICK: 100 / 1,000,000):
 *     a tenth of the items in one big library, the rest spread evenly over
 *     the others. Reported: the cost of a visit (building a 20,000-row page,
 *     nothing to do, repairing a page), the time to a fresh count of the big
 *     library and of a typical one from unwatched, and again after an insert
 *     and after a delete in a middle page;
 *     count_report over every library with 32 watched; against count(*) of
 *     one library and of every library.
 *
 * The program talks to the PostgreSQL given by --db and creates (and drops,
 * unless --keep) the database cleanup_lab_bench_count. Its statements are
 * bench/sql/cc_*.sql. Machines are noisy: compare figures of one run. */
#include "bench_common.h"
#include "cleanup/install.h"
#include "cleanup/lab.h"
#include <pthread.h>

#define DB_COUNT "cleanup_lab_bench_count"
static const char *const dbs[] = {DB_COUNT, NULL};

#define WRITER_LIBS      4     /* per kind: watched, unwatched */
#define WRITER_ITEMS     1000  /* items of each writer library at the start */
#define MAX_LAT          400000
#define VISIT_LIMIT      2000

typedef struct opts {
	const char *db;
	int64_t libraries, items;
	double seconds;
	bool quick, keep, no_writers, no_scale;
} opts;

typedef enum kind { PLAIN, GATEWAY, DECLARED } kind;

typedef struct wcase {
	const char *name;
	kind k;
	bool watched, shared;
	int batch, threads;
	/* results */
	int64_t rows, txns, errors;
	double seconds, p50, p99;
	char first_error[256];
} wcase;

typedef struct worker {
	const opts *o;
	const wcase *c;
	int64_t library;
	int index;
	pthread_barrier_t *start;
	int64_t rows, txns, errors;
	double *lat;
	size_t nlat;
	double elapsed;
	char tag[48]; /* makes external IDs unique across cases and threads */
	char first_error[256];
} worker;

static char *i64(char *buf, int64_t v)
{
	snprintf(buf, 24, "%" PRId64, v);
	return buf;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_count_cache --db CONNINFO [--quick] [--libraries N (1000)] [--items N (10000000)]\n"
	                "                         [--seconds S (4)] [--no-writers] [--no-scale] [--keep]\n"
	                "  --quick (or BENCH_QUICK set): 100 libraries, 1,000,000 items, 2 s a writer case\n");
	exit(2);
}

static double median_of(double *v, size_t n)
{
	return bench_quantile(v, n, 0.5);
}

/* ---- A: writers ---- */

/* Appends the batch of worker W's transaction SEQ to BUF: a text array
 * literal of external IDs (plain) or the gateway's JSON. */
static void batch_text(char *buf, size_t len, const worker *w, int64_t seq)
{
	size_t n = 0;
	int i;

	if (w->c->k == GATEWAY)
		n += (size_t)snprintf(buf + n, len - n, "[");
	else
		n += (size_t)snprintf(buf + n, len - n, "{");
	for (i = 0; i < w->c->batch; i++) {
		if (w->c->k == GATEWAY)
			n += (size_t)snprintf(buf + n, len - n,
			                      "%s{\"op\": \"insert\", \"library_id\": %" PRId64
			                      ", \"external_id\": \"%s-%" PRId64 "-%d\", \"title\": \"bench\"}",
			                      i ? ", " : "", w->library, w->tag, seq, i);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%s-%" PRId64 "-%d", i ? "," : "", w->tag, seq, i);
		if (n >= len - 2)
			bench_fatal("batch too long");
	}
	snprintf(buf + n, len - n, "%s", w->c->k == GATEWAY ? "]" : "}");
}

static bool ok_result(PGresult *r)
{
	return PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
}

static void note_error(worker *w, PGconn *c)
{
	if (w->errors++ == 0) {
		snprintf(w->first_error, sizeof w->first_error, "%s", PQerrorMessage(c));
		w->first_error[strcspn(w->first_error, "\n")] = '\0';
	}
}

static void *worker_main(void *arg)
{
	worker *w = arg;
	char ci[4096], lib[24], *buf;
	const char *keys[] = {"dbname", "application_name", NULL};
	const char *vals[] = {ci, "bench:count-cache-writer", NULL};
	const char *p[2];
	size_t cap = (size_t)w->c->batch * 160 + 64;
	double t0, end, a;
	int64_t seq = 0;
	PGconn *c;

	bench_conninfo(ci, sizeof ci, w->o->db, DB_COUNT);
	c = PQconnectdbParams(keys, vals, 1);
	if (PQstatus(c) != CONNECTION_OK)
		bench_fatal("writer: %s", PQerrorMessage(c));
	PQsetNoticeProcessor(c, bench_quiet, NULL);
	PQclear(bench_run(c, "cc_settings", 0, NULL));
	buf = malloc(cap);
	if (!buf)
		bench_fatal("out of memory");
	i64(lib, w->library);
	pthread_barrier_wait(w->start);
	t0 = bench_now();
	end = t0 + w->o->seconds;
	while ((a = bench_now()) < end) {
		PGresult *r;
		bool ok = true;

		batch_text(buf, cap, w, seq++);
		if (w->c->k == GATEWAY) {
			p[0] = buf;
			r = PQexecParams(c, bench_sql("cc_gateway"), 1, NULL, p, NULL, NULL, 0);
			ok = ok_result(r);
			PQclear(r);
		} else {
			if (w->c->k == DECLARED) {
				r = PQexec(c, "BEGIN");
				PQclear(r);
				p[0] = lib;
				r = PQexecParams(c, bench_sql("cc_declare"), 1, NULL, p, NULL, NULL, 0);
				ok = ok_result(r);
				PQclear(r);
			}
			if (ok) {
				p[0] = lib;
				p[1] = buf;
				r = PQexecParams(c, bench_sql("cc_plain_insert"), 2, NULL, p, NULL, NULL, 0);
				ok = ok_result(r);
				PQclear(r);
			}
			if (w->c->k == DECLARED)
				PQclear(PQexec(c, ok ? "COMMIT" : "ROLLBACK"));
		}
		if (!ok) {
			note_error(w, c);
			if (PQstatus(c) != CONNECTION_OK)
				break;
			continue;
		}
		w->txns++;
		w->rows += w->c->batch;
		if (w->nlat < MAX_LAT)
			w->lat[w->nlat++] = (bench_now() - a) * 1000.0;
	}
	w->elapsed = bench_now() - t0;
	free(buf);
	PQfinish(c);
	return NULL;
}

static void run_writers(wcase *c, const opts *o, const int64_t *unwatched, const int64_t *watched)
{
	pthread_t th[WRITER_LIBS];
	worker w[WRITER_LIBS];
	pthread_barrier_t start;
	double *all = NULL, longest = 0;
	size_t nall = 0;
	int i;

	memset(w, 0, sizeof w);
	/* bench_sql()'s cache is not thread-safe: load what the writers run
	 * before they start; they only look it up. */
	bench_sql("cc_settings");
	bench_sql("cc_gateway");
	bench_sql("cc_declare");
	bench_sql("cc_plain_insert");
	pthread_barrier_init(&start, NULL, (unsigned)c->threads);
	for (i = 0; i < c->threads; i++) {
		w[i].o = o;
		w[i].c = c;
		w[i].index = i;
		w[i].start = &start;
		w[i].library = c->shared ? watched[0] : c->watched ? watched[i] : unwatched[i];
		snprintf(w[i].tag, sizeof w[i].tag, "cc-%d-%d-%d-%d-%d-%d", (int)c->k, c->watched, c->shared, c->threads,
		         c->batch, i);
		w[i].lat = malloc(MAX_LAT * sizeof(double));
		if (!w[i].lat || pthread_create(&th[i], NULL, worker_main, &w[i]) != 0)
			bench_fatal("cannot start writer %d", i);
	}
	for (i = 0; i < c->threads; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&start);
	all = malloc((size_t)c->threads * MAX_LAT * sizeof(double));
	if (!all)
		bench_fatal("out of memory");
	c->rows = c->txns = c->errors = 0;
	for (i = 0; i < c->threads; i++) {
		c->rows += w[i].rows;
		c->txns += w[i].txns;
		c->errors += w[i].errors;
		if (w[i].errors && !c->first_error[0])
			snprintf(c->first_error, sizeof c->first_error, "%s", w[i].first_error);
		memcpy(all + nall, w[i].lat, w[i].nlat * sizeof(double));
		nall += w[i].nlat;
		if (w[i].elapsed > longest)
			longest = w[i].elapsed;
		free(w[i].lat);
	}
	c->seconds = longest;
	c->p50 = bench_quantile(all, nall, 0.5);
	c->p99 = bench_quantile(all, nall, 0.99);
	free(all);
	bench_note("%-36s threads %d batch %2d: %8.0f rows/s %7.0f txn/s p50 %.2f ms p99 %.2f ms%s", c->name,
	           c->threads, c->batch, (double)c->rows / c->seconds, (double)c->txns / c->seconds, c->p50, c->p99,
	           c->errors ? " (errors)" : "");
}

/* ---- B: visits ---- */

typedef struct visit {
	char state[24], action[24];
	int64_t ids_read, count;
	double ms;
} visit;

static visit do_visit(PGconn *c, int64_t library)
{
	char x[24];
	const char *p[1] = {i64(x, library)};
	double t0 = bench_now();
	PGresult *r = bench_run(c, "cc_visit", 1, p);
	visit v;

	v.ms = (bench_now() - t0) * 1000.0;
	snprintf(v.state, sizeof v.state, "%s", PQgetvalue(r, 0, 0));
	snprintf(v.action, sizeof v.action, "%s", PQgetvalue(r, 0, 1));
	v.ids_read = strtoll(PQgetvalue(r, 0, 2), NULL, 10);
	v.count = strtoll(PQgetvalue(r, 0, 3), NULL, 10);
	PQclear(r);
	return v;
}

/* Visits LIBRARY until its count is fresh: the visits made, their total
 * time, the median time of its build visits (*BUILD_MS, 0 when none) and
 * the count. */
typedef struct settle {
	int visits, builds;
	double total_ms, build_ms, max_ms;
	int64_t count;
	char last_action[24];
} settle;

static settle settle_library(PGconn *c, int64_t library)
{
	static double builds[VISIT_LIMIT];
	settle s;

	memset(&s, 0, sizeof s);
	s.count = -1;
	while (s.visits < VISIT_LIMIT) {
		visit v = do_visit(c, library);

		s.visits++;
		s.total_ms += v.ms;
		if (v.ms > s.max_ms)
			s.max_ms = v.ms;
		if (strstr(v.action, "build"))
			builds[s.builds++] = v.ms;
		snprintf(s.last_action, sizeof s.last_action, "%s", v.action);
		if (strcmp(v.state, "fresh") == 0) {
			s.count = v.count;
			break;
		}
		if (strcmp(v.action, "none") == 0 && strcmp(v.state, "withheld") == 0 && s.visits > 3)
			bench_fatal("library %" PRId64 ": count withheld after %d visits (see cleanupctl counts)", library,
			            s.visits);
	}
	s.build_ms = s.builds ? median_of(builds, (size_t)s.builds) : 0;
	return s;
}

static double time_ms(PGconn *c, const char *name, int n, const char *const *p, int64_t *value)
{
	double t0 = bench_now();
	PGresult *r = bench_run(c, name, n, p);

	if (value)
		*value = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return (bench_now() - t0) * 1000.0;
}

/* Median of ROUNDS timings of statement NAME. */
static double median_ms(PGconn *c, const char *name, int n, const char *const *p, int rounds, int64_t *value)
{
	double t[64];
	int i;

	if (rounds > 64)
		rounds = 64;
	for (i = 0; i < rounds; i++)
		t[i] = time_ms(c, name, n, p, value);
	return median_of(t, (size_t)rounds);
}

/* Seeds SERVERS x LIBS libraries of ITEMS items; returns the first new
 * library id (they are consecutive). */
static int64_t seed(PGconn *c, int servers, int libs, int64_t items)
{
	char a[24], b[24], x[24];
	const char *p[3] = {i64(a, servers), i64(b, libs), i64(x, items)};
	int64_t max = bench_int(c, "cc_max_library", 0, NULL);
	double t0 = bench_now();
	PGresult *r = bench_run(c, "cc_seed", 3, p);

	bench_note("seeded %d x %d libraries of %" PRId64 " items in %.1f s: %s", servers, libs, items,
	           bench_now() - t0, PQgetvalue(r, 0, 0));
	PQclear(r);
	return max + 1;
}

static void scale(const opts *o, PGconn *c)
{
	int64_t big_items = o->items / 10, nsmall = o->libraries - 1, per, big, first_small, n, typical;
	int servers = 9, i;
	char x[24];
	const char *p[1];
	settle sb, st, s1, s2, sm;
	double t0, load_s, vac_s, idle[50], idle_small[50], count_big, count_typ, count_all, report_ms, report_32_ms;
	double small_fresh[32];
	int64_t rows = 0, fresh_rows = 0, total;
	char la[128];

	if (nsmall % servers != 0)
		servers = 1;
	per = (o->items - big_items) / nsmall;
	t0 = bench_now();
	big = seed(c, 1, 1, big_items);
	first_small = seed(c, servers, (int)(nsmall / servers), per);
	load_s = bench_now() - t0;
	t0 = bench_now();
	PQclear(bench_run(c, "cc_vacuum", 0, NULL));
	vac_s = bench_now() - t0;
	total = big_items + per * nsmall;
	typical = first_small + nsmall / 2;
	bench_note("loaded %" PRId64 " items in %" PRId64 " libraries in %.1f s, vacuumed in %.1f s", total,
	           o->libraries, load_s, vac_s);

	/* count(*) for comparison. */
	p[0] = i64(x, big);
	count_big = median_ms(c, "cc_count_one", 1, p, 3, &n);
	p[0] = i64(x, typical);
	count_typ = median_ms(c, "cc_count_one", 1, p, 5, &n);
	count_all = time_ms(c, "cc_count_all", 0, NULL, &n);
	report_ms = median_ms(c, "cc_report", 0, NULL, 10, &rows);

	/* The big library, from unwatched to fresh. */
	sb = settle_library(c, big);
	for (i = 0; i < 50; i++)
		idle[i] = do_visit(c, big).ms;
	/* A typical library. */
	st = settle_library(c, typical);
	for (i = 0; i < 50; i++)
		idle_small[i] = do_visit(c, typical).ms;
	/* One insert (lands in the last page), then fresh again. */
	{
		char js[256];
		const char *q[1] = {js};

		snprintf(js, sizeof js,
		         "[{\"op\": \"insert\", \"library_id\": %" PRId64 ", \"external_id\": \"cc-scale-1\"}]", big);
		PQclear(bench_run(c, "cc_gateway", 1, q));
	}
	s1 = settle_library(c, big);
	/* A delete in a middle page, then fresh again. */
	p[0] = i64(x, big);
	PQclear(bench_run(c, "cc_delete_mid", 1, p));
	s2 = settle_library(c, big);
	/* 30 more watched libraries: 32 in all, the registry full. */
	for (i = 0; i < 30; i++) {
		sm = settle_library(c, first_small + i);
		small_fresh[i] = sm.total_ms;
	}
	report_32_ms = median_ms(c, "cc_report", 0, NULL, 10, &rows);
	{
		PGresult *r = bench_run(c, "cc_report", 0, NULL);

		fresh_rows = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
		PQclear(r);
	}
	bench_load_avg(la, sizeof la);

	printf("\nB. The cache at scale: %" PRId64 " libraries, %" PRId64 " items (one library of %" PRId64
	       ", %" PRId64 " of %" PRId64 ")%s; load %.0f s, VACUUM ANALYZE %.0f s; load average now %s\n",
	       o->libraries, total, big_items, nsmall, per, o->quick ? " (--quick)" : "", load_s, vac_s, la);
	printf("  %-58s %10s\n", "", "ms");
	printf("  %-58s %10.1f\n", "count(*) of the big library", count_big);
	printf("  %-58s %10.1f\n", "count(*) of a typical library", count_typ);
	printf("  %-58s %10.1f  (%" PRId64 " items)\n", "count(*) of every library (one per library)", count_all, n);
	printf("  %-58s %10.2f\n", "count_report, every library, nothing watched", report_ms);
	printf("  %-58s %10.2f  (%" PRId64 " rows, %" PRId64 " fresh)\n", "count_report, every library, 32 watched",
	       report_32_ms, rows, fresh_rows);
	printf("  big library, unwatched to fresh: %d visits (%d builds), %.0f ms in all; a build visit %.1f ms "
	       "(median), longest visit %.1f ms; count %" PRId64 "\n",
	       sb.visits, sb.builds, sb.total_ms, sb.build_ms, sb.max_ms, sb.count);
	printf("  typical library, unwatched to fresh: %d visits, %.1f ms in all; 30 more such: median %.1f ms\n",
	       st.visits, st.total_ms, median_of(small_fresh, 30));
	printf("  visit with nothing to do (fresh): big library %.2f ms, typical library %.2f ms (median of 50)\n",
	       median_of(idle, 50), median_of(idle_small, 50));
	printf("  big library after one insert: fresh again in %d visit(s), %.1f ms (%s)\n", s1.visits, s1.total_ms,
	       s1.last_action);
	printf("  big library after a delete in a middle page: fresh again in %d visit(s), %.1f ms\n", s2.visits,
	       s2.total_ms);
}

int main(int argc, char **argv)
{
	opts o = {NULL, 1000, 10000000, 4.0, false, false, false, false};
	bool libs_set = false, items_set = false, secs_set = false;
	char load0[128], load1[128], ci[4096];
	PGconn *c;
	int i;

	bench_name = "bench_count_cache";
	bench_db_list = dbs;
	bench_t0 = bench_now();
	if (getenv("BENCH_QUICK") && getenv("BENCH_QUICK")[0])
		o.quick = true;
	for (i = 1; i < argc; i++) {
		char *end = NULL;

		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
			o.db = argv[++i];
		} else if (strcmp(argv[i], "--libraries") == 0 && i + 1 < argc) {
			o.libraries = strtoll(argv[++i], &end, 10);
			if (!end || *end || o.libraries < 64 || o.libraries > 1000) {
				fprintf(stderr, "bench_count_cache: --libraries %s: expected a number from 64 to 1000\n",
				        argv[i]);
				return 2;
			}
			libs_set = true;
		} else if (strcmp(argv[i], "--items") == 0 && i + 1 < argc) {
			o.items = strtoll(argv[++i], &end, 10);
			if (!end || *end || o.items < 100000 || o.items > 100000000) {
				fprintf(stderr, "bench_count_cache: --items %s: expected a number from 100000 to 100000000\n",
				        argv[i]);
				return 2;
			}
			items_set = true;
		} else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
			o.seconds = strtod(argv[++i], &end);
			if (!end || *end || !(o.seconds >= 0.5 && o.seconds <= 600)) {
				fprintf(stderr, "bench_count_cache: --seconds %s: expected 0.5 to 600\n", argv[i]);
				return 2;
			}
			secs_set = true;
		} else if (strcmp(argv[i], "--quick") == 0) {
			o.quick = true;
		} else if (strcmp(argv[i], "--keep") == 0) {
			o.keep = true;
		} else if (strcmp(argv[i], "--no-writers") == 0) {
			o.no_writers = true;
		} else if (strcmp(argv[i], "--no-scale") == 0) {
			o.no_scale = true;
		} else {
			usage();
		}
	}
	if (!o.db)
		usage();
	if (o.quick) {
		if (!libs_set)
			o.libraries = 100;
		if (!items_set)
			o.items = 1000000;
		if (!secs_set)
			o.seconds = 2.0;
	}

	bench_load_avg(load0, sizeof load0);
	bench_admin(o.db, "cc_db_drop", DB_COUNT, NULL);
	bench_admin(o.db, "cc_db_create", DB_COUNT, NULL);
	bench_conninfo(ci, sizeof ci, o.db, DB_COUNT);
	bench_install(ci, "bench:count-cache");
	c = bench_open(o.db, DB_COUNT, "bench:count-cache");
	printf("Count cache (issue 8): load average at start %s (%ld cores)\n", load0, sysconf(_SC_NPROCESSORS_ONLN));

	if (!o.no_writers) {
		int64_t first = seed(c, 1, 2 * WRITER_LIBS, WRITER_ITEMS), unwatched[WRITER_LIBS], watched[WRITER_LIBS];
		static wcase cases[] = {
		    {"plain SQL, unwatched", PLAIN, false, false, 1, 2, 0, 0, 0, 0, 0, 0, ""},
		    {"gateway, unwatched", GATEWAY, false, false, 1, 2, 0, 0, 0, 0, 0, 0, ""},
		    {"gateway, watched", GATEWAY, true, false, 1, 2, 0, 0, 0, 0, 0, 0, ""},
		    {"declared plain SQL, watched", DECLARED, true, false, 1, 2, 0, 0, 0, 0, 0, 0, ""},
		    {"gateway, one shared watched library", GATEWAY, true, true, 1, 2, 0, 0, 0, 0, 0, 0, ""},
		    {"plain SQL, unwatched", PLAIN, false, false, 64, 2, 0, 0, 0, 0, 0, 0, ""},
		    {"gateway, unwatched", GATEWAY, false, false, 64, 2, 0, 0, 0, 0, 0, 0, ""},
		    {"gateway, watched", GATEWAY, true, false, 64, 2, 0, 0, 0, 0, 0, 0, ""},
		    {"declared plain SQL, watched", DECLARED, true, false, 64, 2, 0, 0, 0, 0, 0, 0, ""},
		};
		enum { NCASES = sizeof cases / sizeof cases[0] };
		static wcase run[2 * NCASES];
		int t, k, nrun = 0;

		for (i = 0; i < WRITER_LIBS; i++) {
			unwatched[i] = first + i;
			watched[i] = first + WRITER_LIBS + i;
			settle_library(c, watched[i]);
		}
		for (t = 2; t <= 4; t += 2) {
			for (k = 0; k < (int)NCASES; k++) {
				run[nrun] = cases[k];
				run[nrun].threads = t;
				run_writers(&run[nrun], &o, unwatched, watched);
				nrun++;
			}
		}
		bench_load_avg(load1, sizeof load1);
		printf("\nA. Writers in parallel, a connection each, %.1f s a case, synchronous_commit off; "
		       "each transaction one batch of inserts; load average after: %s\n",
		       o.seconds, load1);
		printf("  %-36s %7s %5s %10s %9s %9s %9s %8s\n", "writer", "threads", "batch", "rows/s", "txn/s",
		       "p50 ms", "p99 ms", "vs plain");
		for (k = 0; k < nrun; k++) {
			const wcase *b = NULL;
			int j;

			for (j = 0; j < nrun; j++)
				if (run[j].k == PLAIN && run[j].threads == run[k].threads && run[j].batch == run[k].batch)
					b = &run[j];
			printf("  %-36s %7d %5d %10.0f %9.0f %9.2f %9.2f %7.2fx%s%s\n", run[k].name, run[k].threads,
			       run[k].batch, (double)run[k].rows / run[k].seconds, (double)run[k].txns / run[k].seconds,
			       run[k].p50, run[k].p99,
			       b && run[k].rows ? ((double)b->rows / b->seconds) / ((double)run[k].rows / run[k].seconds)
			                        : 0.0,
			       run[k].errors ? "  errors: " : "", run[k].errors ? run[k].first_error : "");
		}
		printf("  (vs plain: the plain SQL writer's rows/s over this one's, same threads and batch)\n");
		fflush(stdout);
		/* The scale part watches 32 libraries of its own. */
		PQclear(bench_run(c, "cc_release_all", 0, NULL));
	}
	if (!o.no_scale)
		scale(&o, c);
	PQfinish(c);
	if (!o.keep)
		bench_admin(o.db, "cc_db_drop", DB_COUNT, NULL);
	return 0;
}

/* bench_writers: what the engine's guards cost a sync
 * writer. One writer connection per side, side by side in one run:
 *
 *   engine   a database with the engine installed (cleanupctl install's
 *            schema, every guard trigger of inventory.items on)
 *   none     a copy of it (CREATE DATABASE ... TEMPLATE) whose
 *            inventory.items has every user trigger disabled: the same
 *            table, indexes, CHECK constraints and foreign keys, none of
 *            the engine's admission, counters, count cache or claim guards
 *
 * Four kinds of statement, each its own autocommit transaction, and two
 * cases of two writers, written by a sync writer (prepared, extended
 * protocol) into an open library that no job collects for, fences or
 * watches (the common case):
 *
 *   insert   one row (INSERT ... VALUES)
 *   batch    100 rows in one statement (INSERT ... SELECT unnest($2))
 *   update   one row's title, in place
 *   move     one row to the other library of the same server
 *   pairs    two writer connections side by side, each a transaction of
 *            10 single-row inserts at a time: both into the first
 *            library, then one into each library (what the per-library
 *            counter row costs two writers of one library: the second
 *            one's update of the counter row waits for the first one's
 *            commit); their "tps" are inserts a second
 *
 * Each round runs every kind on both sides, the side that goes first
 * alternating from round to round; per side and kind the round's
 * transactions a second (wall) and the server's CPU per statement
 * (/proc, every process of the sandbox: steadier than wall time on a
 * loaded machine). Reported: medians over the rounds, and the ratio
 * engine / none (median of the rounds' ratios) for both figures.
 * synchronous_commit is off for the writers unless --sync-commit: the
 * guards' CPU is what is measured, not the disk's flush.
 *
 *   bench_writers --db CONNINFO [--rounds N (5)] [--statements N (2000)]
 *                 [--items N (20000)] [--sync-commit] [--keep]
 *
 * Creates (and drops, unless --keep) cleanup_lab_bench_writers and
 * cleanup_lab_bench_writers_none. Statements: bench/sql/wr_*.sql. */
#include "bench_common.h"
#include "cleanup/install.h"
#include "cleanup/lab.h"
#include <poll.h>

#define DB_ENGINE "cleanup_lab_bench_writers"
#define DB_NONE   "cleanup_lab_bench_writers_none"
static const char *const dbs[] = {DB_ENGINE, DB_NONE, NULL};

#define MAX_ROUNDS 50
#define BATCH      100
#define PAIR_TXN   10 /* the pair cases: single-row inserts a transaction */

enum { K_INSERT, K_BATCH, K_UPDATE, K_MOVE, K_PAIR_ONE, K_PAIR_TWO, NKINDS };
static const char *const kind_name[NKINDS] = {"single-row insert",      "100-row batch insert",
                                              "update in place",        "move between libraries",
                                              "2 writers, one library", "2 writers, two libraries"};
static const char *const kind_sql[NKINDS] = {"wr_insert", "wr_insert_batch", "wr_update",
                                             "wr_move",   "wr_insert",       "wr_insert"};
/* The targets (engine / none, transactions a second). */
static const double kind_target[NKINDS] = {0.85, 0.97, 0, 0, 0, 0};

typedef struct opts {
	const char *db;
	int rounds;
	int64_t statements, items;
	bool sync_commit, keep;
} opts;

typedef struct side {
	const char *name, *db;
	PGconn *c, *c2; /* c2: the second writer of the pair cases */
	int64_t lib_a, lib_b, lo, hi;
	double tps[NKINDS][MAX_ROUNDS], cpu_us[NKINDS][MAX_ROUNDS];
	int waited[NKINDS]; /* the pair cases: rounds whose wait probe waited */
} side;

static void usage(void)
{
	fprintf(stderr, "usage: bench_writers --db CONNINFO [--rounds N (5)] [--statements N (2000)] [--items N (20000)]\n"
	                "                     [--sync-commit] [--keep]\n");
	exit(2);
}

static void prepare(PGconn *c, const char *name, int n)
{
	PGresult *r = PQprepare(c, name, bench_sql(name), n, NULL);

	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		bench_fatal("prepare %s: %s", name, PQerrorMessage(c));
	PQclear(r);
}

static void open_side(side *s, const opts *o)
{
	const char *p[1] = {o->sync_commit ? "on" : "off"};
	PGresult *r;
	int k;

	s->c = bench_open(o->db, s->db, "bench:writer");
	PQclear(bench_run(s->c, "wr_settings", 1, p));
	r = bench_run(s->c, "wr_libraries", 0, NULL);
	if (PQntuples(r) != 2)
		bench_fatal("%s: expected two libraries", s->db);
	s->lib_a = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	s->lo = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
	s->hi = strtoll(PQgetvalue(r, 0, 2), NULL, 10);
	s->lib_b = strtoll(PQgetvalue(r, 1, 0), NULL, 10);
	PQclear(r);
	for (k = 0; k <= K_MOVE; k++)
		prepare(s->c, kind_sql[k], k == K_MOVE ? 3 : 2);
	s->c2 = bench_open(o->db, s->db, "bench:writer2");
	PQclear(bench_run(s->c2, "wr_settings", 1, p));
	prepare(s->c2, "wr_insert", 2);
}

/* One step of the pair cases: each writer queues (pipeline mode) one
 * transaction of PAIR_TXN single-row inserts, into the first library (or
 * writer 2 into the second one), before either result is read: the
 * server runs the two transactions side by side, and writer 2 of one
 * library waits at its first insert until writer 1 commits. */
static void run_pair(side *s, int k, int round, int64_t i)
{
	PGconn *conn[2] = {s->c, s->c2};
	char lib[24], id[48];
	const char *p[2];
	int w, j;

	for (w = 0; w < 2; w++) {
		snprintf(lib, sizeof lib, "%" PRId64, k == K_PAIR_TWO && w ? s->lib_b : s->lib_a);
		p[0] = lib;
		p[1] = id;
		if (!PQenterPipelineMode(conn[w]) || !PQsendQueryParams(conn[w], "BEGIN", 0, NULL, NULL, NULL, NULL, 0))
			bench_fatal("BEGIN (writer %d) on %s: %s", w + 1, s->name, PQerrorMessage(conn[w]));
		for (j = 0; j < PAIR_TXN; j++) {
			snprintf(id, sizeof id, "wp-%d-%d-%d-%" PRId64 "-%d", k, round, w, i, j);
			if (!PQsendQueryPrepared(conn[w], "wr_insert", 2, p, NULL, NULL, 0))
				bench_fatal("wr_insert (writer %d) on %s: %s", w + 1, s->name, PQerrorMessage(conn[w]));
		}
		if (!PQsendQueryParams(conn[w], "COMMIT", 0, NULL, NULL, NULL, NULL, 0) || !PQpipelineSync(conn[w]))
			bench_fatal("COMMIT (writer %d) on %s: %s", w + 1, s->name, PQerrorMessage(conn[w]));
	}
	for (w = 0; w < 2; w++) {
		for (;;) {
			PGresult *r = PQgetResult(conn[w]);
			ExecStatusType st;

			if (!r) {
				if (PQstatus(conn[w]) == CONNECTION_BAD)
					bench_fatal("writer %d on %s: %s", w + 1, s->name, PQerrorMessage(conn[w]));
				continue; /* the end of one queued statement's results */
			}
			st = PQresultStatus(r);
			PQclear(r);
			if (st == PGRES_PIPELINE_SYNC)
				break;
			if (st != PGRES_COMMAND_OK)
				bench_fatal("writer %d's transaction on %s: %s", w + 1, s->name, PQerrorMessage(conn[w]));
		}
		if (!PQexitPipelineMode(conn[w]))
			bench_fatal("writer %d on %s: %s", w + 1, s->name, PQerrorMessage(conn[w]));
	}
}

/* BEGIN or COMMIT on side S's first writer. */
static void txn(side *s, const char *cmd)
{
	PGresult *r = PQexec(s->c, cmd);

	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		bench_fatal("%s on %s: %s", cmd, s->name, PQerrorMessage(s->c));
	PQclear(r);
}

/* The pair cases' wait probe: writer 1 inserts one row and keeps its
 * transaction open; writer 2's single-row insert (autocommit) either
 * completes within a second or waits for writer 1's commit. Returns
 * whether it waited. */
static bool wait_probe(side *s, int k, int round)
{
	char lib[24], id[48];
	const char *p[2] = {lib, id};
	struct pollfd pfd = {PQsocket(s->c2), POLLIN, 0};
	double t0 = bench_now();
	bool waited = true;
	PGresult *r;

	txn(s, "BEGIN");
	snprintf(lib, sizeof lib, "%" PRId64, s->lib_a);
	snprintf(id, sizeof id, "wq-%d-%d-1", k, round);
	r = PQexecPrepared(s->c, "wr_insert", 2, p, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		bench_fatal("wr_insert (writer 1) on %s: %s", s->name, PQerrorMessage(s->c));
	PQclear(r);
	snprintf(lib, sizeof lib, "%" PRId64, k == K_PAIR_TWO ? s->lib_b : s->lib_a);
	snprintf(id, sizeof id, "wq-%d-%d-2", k, round);
	if (!PQsendQueryPrepared(s->c2, "wr_insert", 2, p, NULL, NULL, 0))
		bench_fatal("wr_insert (writer 2) on %s: %s", s->name, PQerrorMessage(s->c2));
	while (bench_now() - t0 < 1.0) {
		if (poll(&pfd, 1, 50) > 0 && !PQconsumeInput(s->c2))
			bench_fatal("writer 2 on %s: %s", s->name, PQerrorMessage(s->c2));
		if (!PQisBusy(s->c2)) {
			waited = false;
			break;
		}
	}
	txn(s, "COMMIT");
	while ((r = PQgetResult(s->c2)) != NULL) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
			bench_fatal("wr_insert (writer 2) on %s: %s", s->name, PQerrorMessage(s->c2));
		PQclear(r);
	}
	return waited;
}

/* One case: N statements of kind K on side S in round ROUND (the pair
 * cases: N steps of two statements). */
static void run_case(side *s, int k, int round, int64_t n, unsigned *seed)
{
	static char buf[BATCH * 48 + 16];
	char a[24], b[24], x[24];
	const char *p[3];
	double t0, cpu0, wall, cpu;
	int64_t i;
	int j;

	cpu0 = bench_server_cpu(s->c);
	t0 = bench_now();
	for (i = 0; i < n; i++) {
		PGresult *r;

		if (k == K_PAIR_ONE || k == K_PAIR_TWO) {
			run_pair(s, k, round, i);
			continue;
		}
		switch (k) {
		case K_INSERT:
			snprintf(a, sizeof a, "%" PRId64, s->lib_a);
			snprintf(buf, sizeof buf, "wr-%d-%" PRId64, round, i);
			p[0] = a;
			p[1] = buf;
			break;
		case K_BATCH: {
			size_t len = 0;

			snprintf(a, sizeof a, "%" PRId64, s->lib_a);
			buf[len++] = '{';
			for (j = 0; j < BATCH; j++)
				len += (size_t)snprintf(buf + len, sizeof buf - len, "%swb-%d-%" PRId64 "-%d", j ? "," : "",
				                        round, i, j);
			snprintf(buf + len, sizeof buf - len, "}");
			p[0] = a;
			p[1] = buf;
			break;
		}
		case K_UPDATE:
			snprintf(a, sizeof a, "%" PRId64, s->lo + (int64_t)(rand_r(seed) % (unsigned)(s->hi - s->lo + 1)));
			snprintf(buf, sizeof buf, "retitled %d %" PRId64, round, i);
			p[0] = a;
			p[1] = buf;
			break;
		default:
			snprintf(a, sizeof a, "%" PRId64, s->lo + (int64_t)(rand_r(seed) % (unsigned)(s->hi - s->lo + 1)));
			snprintf(b, sizeof b, "%" PRId64, s->lib_a);
			snprintf(x, sizeof x, "%" PRId64, s->lib_b);
			p[0] = a;
			p[1] = b;
			p[2] = x;
			break;
		}
		r = PQexecPrepared(s->c, kind_sql[k], k == K_MOVE ? 3 : 2, p, NULL, NULL, 0);
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
			bench_fatal("%s on %s: %s", kind_sql[k], s->name, PQerrorMessage(s->c));
		PQclear(r);
	}
	wall = bench_now() - t0;
	cpu = bench_server_cpu(s->c) - cpu0;
	if ((k == K_PAIR_ONE || k == K_PAIR_TWO) && wait_probe(s, k, round))
		s->waited[k]++;
	if (k == K_PAIR_ONE || k == K_PAIR_TWO)
		n *= 2 * PAIR_TXN; /* rows: the tps column counts inserts a second */
	s->tps[k][round] = (double)n / wall;
	s->cpu_us[k][round] = cpu0 >= 0 ? cpu * 1e6 / (double)n : 0;
}

static double median(const double *v, int n)
{
	double t[MAX_ROUNDS];

	memcpy(t, v, (size_t)n * sizeof *v);
	return bench_quantile(t, (size_t)n, 0.5);
}

int main(int argc, char **argv)
{
	opts o = {NULL, 5, 2000, 20000, false, false};
	side sides[2] = {{"engine", DB_ENGINE, NULL, NULL, 0, 0, 0, 0, {{0}}, {{0}}, {0}},
	                 {"none", DB_NONE, NULL, NULL, 0, 0, 0, 0, {{0}}, {{0}}, {0}}};
	char load0[128], load1[128], ci[4096], x[24], y[24];
	const char *p[2];
	unsigned seed = 22;
	PGconn *c;
	int i, k, round;

	bench_name = "bench_writers";
	bench_db_list = dbs;
	bench_t0 = bench_now();
	for (i = 1; i < argc; i++) {
		char *end = NULL;

		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
			o.db = argv[++i];
		} else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			o.rounds = (int)strtol(argv[++i], &end, 10);
			if (!end || *end || o.rounds < 1 || o.rounds > MAX_ROUNDS)
				usage();
		} else if (strcmp(argv[i], "--statements") == 0 && i + 1 < argc) {
			o.statements = strtoll(argv[++i], &end, 10);
			if (!end || *end || o.statements < 100 || o.statements > 10000000)
				usage();
		} else if (strcmp(argv[i], "--items") == 0 && i + 1 < argc) {
			o.items = strtoll(argv[++i], &end, 10);
			if (!end || *end || o.items < 1000 || o.items > 10000000)
				usage();
		} else if (strcmp(argv[i], "--sync-commit") == 0) {
			o.sync_commit = true;
		} else if (strcmp(argv[i], "--keep") == 0) {
			o.keep = true;
		} else {
			usage();
		}
	}
	if (!o.db)
		usage();

	bench_load_avg(load0, sizeof load0);
	bench_admin(o.db, "wr_db_drop", DB_NONE, NULL);
	bench_admin(o.db, "wr_db_drop", DB_ENGINE, NULL);
	bench_admin(o.db, "wr_db_create", DB_ENGINE, NULL);
	bench_conninfo(ci, sizeof ci, o.db, DB_ENGINE);
	bench_install(ci, "bench:writers");
	c = bench_open(o.db, DB_ENGINE, "bench:writers");
	snprintf(x, sizeof x, "%d", 2);
	snprintf(y, sizeof y, "%" PRId64, o.items);
	p[0] = x;
	p[1] = y;
	PQclear(bench_run(c, "wr_seed", 2, p));
	PQclear(bench_run(c, "wr_vacuum", 0, NULL));
	PQfinish(c);
	bench_admin(o.db, "wr_db_copy", DB_NONE, DB_ENGINE);
	c = bench_open(o.db, DB_NONE, "bench:writers");
	PQclear(bench_run(c, "wr_strip", 0, NULL));
	PQfinish(c);
	for (i = 0; i < 2; i++)
		open_side(&sides[i], &o);

	printf("Sync writers with and without the engine's guards (issue 22, item 2): load average at start %s "
	       "(%ld cores)\n",
	       load0, sysconf(_SC_NPROCESSORS_ONLN));
	printf("  %d rounds; a case: %" PRId64 " statements (batches: %" PRId64 " of %d rows); synchronous_commit %s\n",
	       o.rounds, o.statements, o.statements / 10, BATCH, o.sync_commit ? "on" : "off");
	for (round = 0; round < o.rounds; round++) {
		for (k = 0; k < NKINDS; k++) {
			int64_t n = k == K_BATCH                         ? o.statements / 10
			            : k == K_PAIR_ONE || k == K_PAIR_TWO ? o.statements / (2 * PAIR_TXN)
			                                                 : o.statements;

			for (i = 0; i < 2; i++) {
				side *s = &sides[(i + round + k) % 2];

				run_case(s, k, round, n, &seed);
			}
			bench_note("round %d %-24s engine %7.0f tps %6.0f us/stmt   none %7.0f tps %6.0f us/stmt", round + 1,
			           kind_name[k], sides[0].tps[k][round], sides[0].cpu_us[k][round], sides[1].tps[k][round],
			           sides[1].cpu_us[k][round]);
		}
	}
	bench_load_avg(load1, sizeof load1);
	printf("\n  medians over %d rounds (load average at the end %s); ratio = engine / none of the same round\n",
	       o.rounds, load1);
	printf("  %-24s %12s %12s %8s %8s   %14s %14s %8s\n", "statement", "engine tps", "none tps", "ratio", "target",
	       "engine CPU us", "none CPU us", "ratio");
	for (k = 0; k < NKINDS; k++) {
		double rt[MAX_ROUNDS], rc[MAX_ROUNDS];
		char target[16] = "-";

		for (round = 0; round < o.rounds; round++) {
			rt[round] = sides[0].tps[k][round] / sides[1].tps[k][round];
			rc[round] = sides[1].cpu_us[k][round] > 0 ? sides[0].cpu_us[k][round] / sides[1].cpu_us[k][round] : 0;
		}
		if (kind_target[k] > 0)
			snprintf(target, sizeof target, ">= %.0f%%", kind_target[k] * 100);
		printf("  %-24s %12.0f %12.0f %7.0f%% %8s   %14.0f %14.0f %7.2fx\n", kind_name[k],
		       median(sides[0].tps[k], o.rounds), median(sides[1].tps[k], o.rounds), median(rt, o.rounds) * 100,
		       target, median(sides[0].cpu_us[k], o.rounds), median(sides[1].cpu_us[k], o.rounds),
		       median(rc, o.rounds));
		printf("summary: writer %s with the engine / without: %.0f%% of the tps%s%s (server CPU %.2fx)\n",
		       kind_name[k], median(rt, o.rounds) * 100, kind_target[k] > 0 ? ", target " : "",
		       kind_target[k] > 0 ? target : "", median(rc, o.rounds));
	}
	printf("  wait probe (writer 2's insert while writer 1's transaction, one insert into the first library, is open):\n");
	for (k = K_PAIR_ONE; k <= K_PAIR_TWO; k++)
		printf("summary: %s: writer 2 waited for writer 1's commit in %d of %d rounds with the engine, %d without\n",
		       kind_name[k], sides[0].waited[k], o.rounds, sides[1].waited[k]);
	fflush(stdout);
	for (i = 0; i < 2; i++) {
		PQfinish(sides[i].c);
		PQfinish(sides[i].c2);
	}
	if (!o.keep) {
		bench_admin(o.db, "wr_db_drop", DB_NONE, NULL);
		bench_admin(o.db, "wr_db_drop", DB_ENGINE, NULL);
	}
	return 0;
}

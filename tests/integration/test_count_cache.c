/* The per-library count cache of seed 002 against the real PostgreSQL
 * (INVARIANTS.md K1-K5, docs/count-cache.md): pages of at most 20,000
 * rows, fixed slots taken with SKIP LOCKED, the statement-trigger guard on
 * watched libraries, the mutation gateway and its refusals, synchronous
 * invalidation, the lifecycle with injected time, truncate, and a
 * randomized check that every fresh count equals count(*) under the
 * reader's lock. Each test releases every watch first and uses libraries
 * of its own. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/count_cache.h"
#include "pgtest.h"

static char *conninfo;
static PGconn *c;          /* the test's main connection */
static cleanup_engine *e;  /* visits through the C API */
static int libseq;

static int setup(void **state)
{
	(void)state;
	conninfo = pgtest_fresh_db("count_cache");
	c = pgtest_connect(conninfo, "count-cache-test");
	pgtest_exec(c, "INSERT INTO inventory.media_servers (id, name) VALUES (1, 's1'), (2, 's2')");
	e = pgtest_engine(conninfo);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	cleanup_engine_close(e);
	PQfinish(c);
	free(conninfo);
	return 0;
}

/* Before each test: no library is watched. */
static int reset(void **state)
{
	(void)state;
	pgtest_exec(c, "SELECT cleanup.count_release(slot) FROM cleanup.count_registry WHERE library_id IS NOT NULL");
	return 0;
}

/* A new library of server SERVER with N items (inserted while unwatched);
 * returns its id. */
static int64_t new_library(int server, int n)
{
	int64_t id = pgtest_int(c, "INSERT INTO inventory.libraries (server_id, name) VALUES (%d, 'lib-%d') RETURNING id",
	                        server, ++libseq);

	if (n > 0)
		pgtest_exec(c,
		            "INSERT INTO inventory.items (library_id, external_id) "
		            "SELECT %lld, 'i-%lld-' || g FROM generate_series(1, %d) g",
		            (long long)id, (long long)id, n);
	return id;
}

static cleanup_count_visit visit_at(int64_t lib, const char *now)
{
	cleanup_count_visit v;
	cleanup_error err;

	if (cleanup_count_visit_once(&v, e, lib, now, &err) != CLEANUP_OK)
		fail_msg("visit of library %lld: %s", (long long)lib, err.message);
	return v;
}

static cleanup_count_visit visit(int64_t lib)
{
	return visit_at(lib, NULL);
}

/* Visits until fresh (or stuck); fails unless fresh. */
static cleanup_count_visit settle(int64_t lib)
{
	cleanup_count_visit v;
	cleanup_error err;
	int n = 0;

	if (cleanup_count_settle(&v, &n, e, lib, 100, NULL, &err) != CLEANUP_OK)
		fail_msg("settle %lld: %s", (long long)lib, err.message);
	if (strcmp(v.state, "fresh") != 0)
		fail_msg("library %lld not fresh after %d visits: %s %s", (long long)lib, n, v.state, v.reason);
	return v;
}

static int64_t real_count(PGconn *conn, int64_t lib)
{
	return pgtest_int(conn, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib);
}

static char *report_field(int64_t lib, const char *field)
{
	return pgtest_text(c, "SELECT %s::text FROM cleanup.count_report() WHERE library_id = %lld", field,
	                   (long long)lib);
}

static void assert_state(int64_t lib, const char *state)
{
	char *s = report_field(lib, "state");

	if (!s || strcmp(s, state) != 0) {
		char *why = report_field(lib, "reason");

		fail_msg("library %lld: state %s (%s), expected %s", (long long)lib, s ? s : "NULL", why ? why : "",
		         state);
	}
	free(s);
}

static void assert_reason_has(int64_t lib, const char *needle)
{
	char *s = report_field(lib, "reason");

	if (!s || !strstr(s, needle))
		fail_msg("library %lld: reason \"%s\" lacks \"%s\"", (long long)lib, s ? s : "", needle);
	free(s);
}

/* K1: a sparse library of at most 20,000 items completes in one visit
 * after the watch; 45,000 items take pages of 20,000, 20,000 and the
 * rest, each visit reading at most 20,001 ids. */
static void test_K1_pages_are_row_counted(void **state)
{
	int64_t small = new_library(1, 0), big = new_library(1, 45000);
	cleanup_count_visit v;

	(void)state;
	/* Sparse ids: 3 items far apart, plus the full page of 20,000. */
	pgtest_exec(c, "INSERT INTO inventory.items (id, library_id, external_id) VALUES "
	               "(1000000001, %lld, 'a'), (1500000000, %lld, 'b'), (1900000000, %lld, 'c')",
	            (long long)small, (long long)small, (long long)small);
	v = visit(small);
	assert_string_equal(v.action, "watch");
	assert_string_equal(v.state, "withheld");
	v = visit(small);
	assert_string_equal(v.action, "build");
	assert_string_equal(v.state, "fresh");
	assert_int_equal(v.count, 3);
	assert_int_equal(v.pages, 1);

	visit(big);
	v = visit(big);
	assert_string_equal(v.action, "build");
	assert_int_equal(v.ids_read, 20001);
	assert_string_equal(v.state, "withheld");
	assert_non_null(strstr(v.reason, "building"));
	v = visit(big);
	assert_int_equal(v.ids_read, 20001);
	assert_string_equal(v.state, "withheld");
	v = visit(big);
	assert_int_equal(v.ids_read, 5000);
	assert_string_equal(v.state, "fresh");
	assert_int_equal(v.count, 45000);
	assert_int_equal(v.pages, 3);
	assert_int_equal(pgtest_int(c, "SELECT max(item_count) FROM cleanup.count_summaries s JOIN cleanup.count_registry r "
	                               "ON r.slot = s.registry_slot WHERE r.library_id = %lld",
	                            (long long)big),
	                 20000);
	/* A library of exactly 20,000 items: one full page, then an empty last page. */
	{
		int64_t exact = new_library(1, 20000);

		visit(exact);
		v = settle(exact);
		assert_int_equal(v.count, 20000);
	}
}

/* K1: a page that grows past 20,000 rows is split on repair; its
 * remainder is dirty and repaired by a later visit. */
static void test_K1_growing_page_is_split(void **state)
{
	int64_t lib = new_library(1, 19990);
	cleanup_count_visit v;

	(void)state;
	visit(lib);
	v = settle(lib);
	assert_int_equal(v.pages, 1);
	/* 30 more rows in the last page, through the declared locks. */
	pgtest_begin(c, "SELECT cleanup.count_declare(ARRAY[%lld::bigint])", (long long)lib);
	pgtest_exec(c, "INSERT INTO inventory.items (library_id, external_id) SELECT %lld, 'grow-' || g "
	               "FROM generate_series(1, 30) g",
	            (long long)lib);
	pgtest_exec(c, "COMMIT");
	assert_state(lib, "dirty");
	v = visit(lib);
	assert_string_equal(v.action, "split");
	assert_int_equal(v.ids_read, 20001);
	assert_int_equal(v.pages, 2);
	assert_int_equal(v.dirty_pages, 1);
	assert_string_equal(v.state, "dirty");
	v = visit(lib);
	assert_string_equal(v.action, "repair");
	assert_string_equal(v.state, "fresh");
	assert_int_equal(v.count, 20020);
	assert_int_equal(v.count, real_count(c, lib));
}

/* K3: a write to a watched library without its lock is refused (CU410)
 * with a hint naming the gateway, and nothing changes; a move with only
 * one side's lock is refused; with both it is accepted; unwatched
 * libraries keep accepting plain SQL. Locks in descending order: CU112. */
static void test_K3_guard_needs_every_library_lock(void **state)
{
	int64_t a = new_library(1, 10), b = new_library(1, 10), plain = new_library(1, 10);
	int64_t before = real_count(c, a);

	(void)state;
	visit(a);
	settle(a);
	visit(b);
	settle(b);
	/* No lock. */
	pgtest_fails(c, "CU410", "watched by the count cache",
	             "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'nolock')",
	             (long long)a);
	assert_int_equal(real_count(c, a), before);
	pgtest_fails(c, "CU410", NULL, "UPDATE inventory.items SET title = 't' WHERE library_id = %lld", (long long)a);
	pgtest_fails(c, "CU410", NULL, "DELETE FROM inventory.items WHERE library_id = %lld", (long long)a);
	/* Some locks: a move a -> b with only a's lock. */
	pgtest_begin(c, "SELECT cleanup.count_declare(ARRAY[%lld::bigint])", (long long)a);
	pgtest_fails(c, "CU410", NULL,
	             "UPDATE inventory.items SET library_id = %lld WHERE id = "
	             "(SELECT min(id) FROM inventory.items WHERE library_id = %lld)",
	             (long long)b, (long long)a);
	pgtest_exec(c, "ROLLBACK");
	/* All locks. */
	pgtest_begin(c, "SELECT cleanup.count_declare(ARRAY[%lld, %lld]::bigint[])", (long long)a, (long long)b);
	pgtest_exec(c, "UPDATE inventory.items SET library_id = %lld WHERE id = "
	               "(SELECT min(id) FROM inventory.items WHERE library_id = %lld)",
	            (long long)b, (long long)a);
	pgtest_exec(c, "COMMIT");
	assert_int_equal(real_count(c, a), before - 1);
	assert_state(a, "dirty");
	assert_state(b, "dirty");
	assert_int_equal(settle(a).count, before - 1);
	assert_int_equal(settle(b).count, 11);
	/* An unwatched library: plain SQL as before. */
	pgtest_exec(c, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'plain')", (long long)plain);
	/* Descending declarations, in one list or across calls. */
	pgtest_fails(c, "CU112", "ascending order",
	             "SELECT cleanup.count_declare(ARRAY[%lld, %lld]::bigint[])",
	             (long long)b, (long long)a);
	pgtest_begin(c, "SELECT cleanup.count_declare(ARRAY[%lld::bigint])", (long long)b);
	pgtest_fails(c, "CU112", NULL, "SELECT cleanup.count_declare(ARRAY[%lld::bigint])", (long long)a);
	pgtest_exec(c, "ROLLBACK");
}

/* The gateway's bad input: refused before any work with CU110/CU111 and
 * nothing changed; a membership mismatch refuses the whole batch (CU411). */
static void test_gateway_refuses_bad_batches(void **state)
{
	int64_t a = new_library(1, 5), b = new_library(1, 5);
	int64_t item = pgtest_int(c, "SELECT min(id) FROM inventory.items WHERE library_id = %lld", (long long)a);
	/* Each batch (%lld: library a) with its code and what its message says. */
	static const struct {
		const char *batch, *code, *says;
	} bad[] = {
		{"(SELECT jsonb_agg(jsonb_build_object('op', 'insert', 'library_id', %lld, 'external_id', 'x' || g)) "
		 "FROM generate_series(1, 129) g)",
		 "CU110", "129 operations"},
		{"jsonb_build_array(jsonb_build_object('op', 'insert', 'library_id', %lld, 'external_id', 'x', "
		 "'title', repeat('t', 70000)))",
		 "CU110", "bytes"},
		{"'[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"x\", \"colour\": \"red\"}]'", "CU110",
		 "colour"},
		/* Every unknown field, named in order; the external-ID rule named. */
		{"'[{\"op\": \"delete\", \"item_id\": 1, \"expected_library_id\": %lld, \"size\": 1, "
		 "\"colour\": \"red\"}]'",
		 "CU110", "operation 1 (delete): unknown field(s) colour, size"},
		{"jsonb_build_array(jsonb_build_object('op', 'insert', 'library_id', %lld, 'external_id', 'a' || chr(7)))",
		 "CU110", "operation 1 (insert): external_id contains a control character"},
		{"'[{\"op\": \"insert\", \"library_id\": 999999, \"external_id\": \"x\"}]'", "CU111",
		 "library 999999 does not exist"},
		{"'[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"x\", "
		 "\"updated_at\": \"1970-01-01T00:00:00Z\"}]'",
		 "CU110", "out of range"},
		{"'[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"x\", \"updated_at\": \"2024-02-31\"}]'",
		 "CU110", NULL},
		{"'[{\"op\": \"frobnicate\"}]'", "CU110", NULL},
		{"'{}'", "CU110", NULL},
	};
	char *fp = pgtest_fingerprint(c), *fp2;
	char msg[512];
	size_t i;

	(void)state;
	visit(a);
	settle(a);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char sql[512];

		snprintf(sql, sizeof sql, bad[i].batch, (long long)a);
		assert_string_equal(pgtest_fail(c, msg, sizeof msg, "SELECT cleanup.write_items(%s)", sql), bad[i].code);
		if (bad[i].says && !strstr(msg, bad[i].says))
			fail_msg("batch %zu: \"%s\" does not say \"%s\"", i, msg, bad[i].says);
	}
	/* Mismatch: the insert before it in the batch is rolled back too. */
	pgtest_fails(c, "CU411", "membership mismatch",
	             "SELECT cleanup.write_items('[{\"op\": \"insert\", \"library_id\": %lld, "
	             "\"external_id\": \"rolled-back\"}, {\"op\": \"delete\", \"item_id\": %lld, "
	             "\"expected_library_id\": %lld}]')",
	             (long long)a, (long long)item, (long long)b);
	fp2 = pgtest_fingerprint(c);
	assert_string_equal(fp, fp2);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE external_id = 'rolled-back'"), 0);
	assert_state(a, "fresh");
	/* The same batch with the right membership applies whole. */
	pgtest_exec(c,
	            "SELECT cleanup.write_items('[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"kept\"}, "
	            "{\"op\": \"replace\", \"item_id\": %lld, \"expected_library_id\": %lld, \"library_id\": %lld, "
	            "\"title\": \"moved\", \"media_type\": \"show\", \"updated_at\": \"2025-01-01T00:00:00Z\"}]')",
	            (long long)a, (long long)item, (long long)a, (long long)b);
	assert_int_equal(pgtest_int(c, "SELECT library_id FROM inventory.items WHERE id = %lld", (long long)item), b);
	assert_int_equal(settle(a).count, 5);
	free(fp);
	free(fp2);
}

/* K2: with all 32 registry slots taken (by 31 watches and one free slot
 * another transaction holds), a new watch is withheld for capacity, not
 * given a wrong count; once a slot is free again, the watch starts. */
static void test_K2_capacity_withholds_counts(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "slot-holder");
	int64_t libs[31], extra = new_library(2, 3), late = new_library(2, 3);
	cleanup_count_visit v;
	int i;

	(void)state;
	for (i = 0; i < 31; i++) {
		libs[i] = new_library(2, 1);
		assert_string_equal(visit(libs[i]).action, "watch");
	}
	/* The last free slot, locked by another transaction: SKIP LOCKED passes it. */
	pgtest_begin(o, "SELECT slot FROM cleanup.count_registry WHERE library_id IS NULL FOR UPDATE");
	v = visit(extra);
	assert_string_equal(v.state, "withheld");
	assert_non_null(strstr(v.reason, "capacity"));
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.count_registry WHERE library_id = %lld",
	                            (long long)extra),
	                 0);
	assert_state(extra, "unwatched");
	pgtest_exec(o, "ROLLBACK");
	v = visit(extra);
	assert_string_equal(v.action, "watch");
	/* Now all 32 are in use: withheld again, for the next library. */
	v = visit(late);
	assert_string_equal(v.state, "withheld");
	assert_non_null(strstr(v.reason, "32 registry slots"));
	PQfinish(o);
}

/* K2: summary slots exhausted: a page that cannot get a slot withholds the
 * count and leaves the coverage as it was. */
static void test_K2_summary_capacity_withholds(void **state)
{
	int64_t lib = new_library(2, 10), filler = new_library(2, 0);
	cleanup_count_visit v;

	(void)state;
	visit(lib);
	/* Occupy every summary slot with another watch's pages (bookkeeping only). */
	pgtest_exec(c, "WITH r AS (SELECT slot FROM cleanup.count_registry WHERE library_id IS NULL ORDER BY slot LIMIT 1) "
	               "UPDATE cleanup.count_registry SET library_id = %lld, allocated_at = now(), last_visit_at = now() "
	               "WHERE slot = (SELECT slot FROM r)",
	            (long long)filler);
	pgtest_exec(c, "UPDATE cleanup.count_summaries s SET registry_slot = r.slot, epoch = r.epoch, lo = s.slot * 10, "
	               "hi = s.slot * 10 + 10, item_count = 0 FROM cleanup.count_registry r "
	               "WHERE s.registry_slot IS NULL AND r.library_id = %lld",
	            (long long)filler);
	v = visit(lib);
	assert_string_equal(v.state, "withheld");
	assert_non_null(strstr(v.reason, "128 summary slots"));
	assert_int_equal(v.pages, 0);
	pgtest_exec(c, "SELECT cleanup.count_release(slot) FROM cleanup.count_registry WHERE library_id = %lld",
	            (long long)filler);
	assert_int_equal(settle(lib).count, 10);
}

/* Reclaim: another library's watch is reclaimed only after seven idle
 * (injected) days and only when its library lock is free without waiting. */
static void test_K2_reclaim_after_seven_days_with_free_lock(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "lock-holder");
	int64_t libs[32], newcomer = new_library(2, 2);
	cleanup_count_visit v;
	char now[64];
	int i;

	(void)state;
	for (i = 0; i < 32; i++) {
		libs[i] = new_library(2, 1);
		snprintf(now, sizeof now, "2030-01-01 00:%02d:00+00", i);
		visit_at(libs[i], now);
	}
	/* Six days later: nothing is idle long enough. */
	v = visit_at(newcomer, "2030-01-07 00:00:00+00");
	assert_string_equal(v.state, "withheld");
	assert_non_null(strstr(v.reason, "capacity"));
	/* Eight days later, but the oldest library's lock is held: the next one goes. */
	pgtest_begin(o, "SELECT cleanup.count_declare(ARRAY[%lld::bigint])", (long long)libs[0]);
	v = visit_at(newcomer, "2030-01-09 00:00:00+00");
	assert_string_equal(v.action, "watch");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.count_registry WHERE library_id = %lld",
	                            (long long)libs[0]),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.count_registry WHERE library_id = %lld",
	                            (long long)libs[1]),
	                 0);
	pgtest_exec(o, "ROLLBACK");
	PQfinish(o);
}

/* Lifecycle reasons of the selected library: age (not visited for seven
 * days) and a clock that moved backwards restart it, and say so. */
static void test_K5_selected_library_age_and_clock_restart(void **state)
{
	int64_t lib = new_library(1, 4);
	cleanup_count_visit v;
	char *t;

	(void)state;
	visit_at(lib, "2030-01-01 00:00:00+00");
	v = visit_at(lib, "2030-01-01 00:01:00+00");
	assert_string_equal(v.state, "fresh");
	v = visit_at(lib, "2030-01-09 00:00:00+00");
	assert_string_equal(v.action, "restart+build");
	t = report_field(lib, "last_restart");
	assert_non_null(strstr(t, "age"));
	free(t);
	v = visit_at(lib, "2030-01-08 00:00:00+00");
	assert_string_equal(v.action, "restart+build");
	t = report_field(lib, "last_restart");
	assert_non_null(strstr(t, "clock moved backwards"));
	free(t);
	/* Expiry: a count not confirmed within the hour is expired, then verified. */
	assert_text_equal(pgtest_text(c, "SELECT state FROM cleanup.count_report('2030-01-08 02:00:00+00') "
	                                   "WHERE library_id = %lld",
	                                (long long)lib),
	                    "expired");
	v = visit_at(lib, "2030-01-08 02:00:00+00");
	assert_string_equal(v.action, "verify");
	assert_text_equal(pgtest_text(c, "SELECT state FROM cleanup.count_report('2030-01-08 02:00:01+00') "
	                                   "WHERE library_id = %lld",
	                                (long long)lib),
	                    "fresh");
}

/* K5: an empty page is released; an insert into its range forces a
 * conservative rebuild. */
static void test_K5_insert_into_released_gap_forces_rebuild(void **state)
{
	int64_t lib = new_library(1, 0);
	cleanup_count_visit v;

	(void)state;
	/* 50,000 sparse ids; the first 20,000 go in one statement below. */
	pgtest_exec(c, "INSERT INTO inventory.items (id, library_id, external_id) "
	               "SELECT 5000000 + g * 2, %lld, 'gap-' || g FROM generate_series(1, 50000) g",
	            (long long)lib);
	visit(lib);
	settle(lib);
	/* Delete every row of the first page, through the gateway's locks. */
	pgtest_begin(c, "SELECT cleanup.count_declare(ARRAY[%lld::bigint])", (long long)lib);
	pgtest_exec(c, "DELETE FROM inventory.items WHERE library_id = %lld AND id <= 5040000", (long long)lib);
	pgtest_exec(c, "COMMIT");
	/* That was 20,000 rows in one statement: an overflow, a restart. */
	assert_state(lib, "withheld");
	assert_reason_has(lib, "overflow");
	settle(lib);
	/* 30,000 left: a first page of 20,000 and a last one. Small gateway
	 * batches (no overflow) keep the pages and mark them dirty. */
	pgtest_exec(c, "SELECT cleanup.write_items((SELECT jsonb_agg(jsonb_build_object('op', 'delete', 'item_id', id, "
	               "'expected_library_id', library_id)) FROM (SELECT id, library_id FROM inventory.items "
	               "WHERE library_id = %lld ORDER BY id LIMIT 100) x))",
	            (long long)lib);
	pgtest_exec(c, "SELECT cleanup.write_items((SELECT jsonb_agg(jsonb_build_object('op', 'insert', 'library_id', "
	               "%lld, 'external_id', 'more-' || g)) FROM generate_series(1, 100) g))",
	            (long long)lib);
	v = settle(lib);
	assert_int_equal(v.count, real_count(c, lib));
	/* Now: make a non-last page empty and release it. */
	{
		int64_t lo = pgtest_int(c, "SELECT s.lo FROM cleanup.count_summaries s JOIN cleanup.count_registry r "
		                           "ON r.slot = s.registry_slot WHERE r.library_id = %lld ORDER BY s.lo LIMIT 1",
		                        (long long)lib);
		int64_t hi = pgtest_int(c, "SELECT s.hi FROM cleanup.count_summaries s JOIN cleanup.count_registry r "
		                           "ON r.slot = s.registry_slot WHERE r.library_id = %lld ORDER BY s.lo LIMIT 1",
		                        (long long)lib);
		int k;

		(void)lo;
		for (k = 0; k < 200; k++) {
			if (pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld AND id <= %lld",
			               (long long)lib, (long long)hi) == 0)
				break;
			pgtest_exec(c, "SELECT cleanup.write_items((SELECT jsonb_agg(jsonb_build_object('op', 'delete', "
			               "'item_id', id, 'expected_library_id', library_id)) FROM (SELECT id, library_id "
			               "FROM inventory.items WHERE library_id = %lld AND id <= %lld ORDER BY id LIMIT 128) x))",
			            (long long)lib, (long long)hi);
		}
		v = visit(lib);
		assert_string_equal(v.action, "release");
		v = settle(lib);
		assert_int_equal(v.count, real_count(c, lib));
		/* An insert into the released range (an explicit id) forces a rebuild. */
		pgtest_exec(c, "SELECT cleanup.write_items('[{\"op\": \"insert\", \"library_id\": %lld, "
		               "\"external_id\": \"into-gap\"}]')",
		            (long long)lib);
		pgtest_begin(c, "SELECT cleanup.count_declare(ARRAY[%lld::bigint])", (long long)lib);
		pgtest_exec(c, "UPDATE inventory.items SET id = id WHERE false");
		pgtest_exec(c, "INSERT INTO inventory.items (id, library_id, external_id) VALUES (%lld, %lld, 'gap-item')",
		            (long long)(hi - 1), (long long)lib);
		pgtest_exec(c, "COMMIT");
		assert_state(lib, "withheld");
		assert_reason_has(lib, "released empty range");
		v = visit(lib);
		assert_string_equal(v.action, "restart+build");
		v = settle(lib);
		assert_int_equal(v.count, real_count(c, lib));
	}
}

/* K5: TRUNCATE through the owner's bypass restarts every watched library
 * in its own transaction. */
static void test_K5_truncate_invalidates_every_watched_library(void **state)
{
	PGconn *t = pgtest_connect(conninfo, "truncate");
	int64_t a = new_library(1, 3), b = new_library(1, 3);

	(void)state;
	visit(a);
	settle(a);
	visit(b);
	settle(b);
	pgtest_exec(t, "SET cleanup.allow_truncate = on");
	pgtest_begin(t, "TRUNCATE inventory.items CASCADE");
	pgtest_exec(t, "ROLLBACK");
	assert_state(a, "fresh");
	pgtest_exec(t, "TRUNCATE inventory.items CASCADE");
	assert_state(a, "withheld");
	assert_reason_has(a, "truncate");
	assert_state(b, "withheld");
	assert_reason_has(b, "truncate");
	assert_int_equal(settle(a).count, 0);
	assert_int_equal(settle(b).count, 0);
	PQfinish(t);
}

/* K5: a write whose statement trigger did not run (disabled) leaves a
 * declared revision unapplied: the library restarts, and later writes do
 * not clear it; a clean page that changed behind the guard's back is a
 * mismatch found by the next verification, sticky until the rebuild. */
static void test_K5_missing_application_and_mismatch_are_sticky(void **state)
{
	int64_t lib = new_library(1, 5);
	cleanup_count_visit v;
	char *t;

	(void)state;
	visit(lib);
	settle(lib);
	pgtest_exec(c, "ALTER TABLE inventory.items DISABLE TRIGGER items_admit_insert");
	pgtest_exec(c, "SELECT cleanup.write_items('[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"m1\"}]')",
	            (long long)lib);
	pgtest_exec(c, "ALTER TABLE inventory.items ENABLE TRIGGER items_admit_insert");
	assert_state(lib, "withheld");
	assert_reason_has(lib, "missing application");
	pgtest_exec(c, "SELECT cleanup.write_items('[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"m2\"}]')",
	            (long long)lib);
	assert_reason_has(lib, "missing application");
	v = visit(lib);
	assert_string_equal(v.action, "restart+build");
	assert_int_equal(settle(lib).count, 7);

	/* Behind the guard's back (replica role skips triggers): found by verification. */
	pgtest_exec(c, "SET session_replication_role = replica");
	pgtest_exec(c, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'ghost')", (long long)lib);
	pgtest_exec(c, "SET session_replication_role = origin");
	/* Undetectable until the page is verified again (an hour later). */
	assert_string_equal(visit(lib).state, "fresh");
	t = pgtest_text(c, "SELECT (clock_timestamp() + interval '2 hours')::text");
	v = visit_at(lib, t);
	free(t);
	assert_string_equal(v.action, "mismatch");
	assert_state(lib, "withheld");
	assert_reason_has(lib, "mismatch");
	pgtest_exec(c, "SELECT cleanup.write_items('[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"m3\"}]')",
	            (long long)lib);
	assert_reason_has(lib, "mismatch");
	v = settle(lib);
	assert_int_equal(v.count, real_count(c, lib));
}

/* Two writers of different libraries commit concurrently; a second writer
 * of the same library waits for the first (pg_blocking_pids); a move locks
 * both sides before any row changes. */
static void test_K3_writers_of_other_libraries_do_not_wait(void **state)
{
	PGconn *w1 = pgtest_connect(conninfo, "writer-1"), *w2 = pgtest_connect(conninfo, "writer-2");
	int64_t a = new_library(1, 3), b = new_library(1, 3), d = new_library(1, 3);
	int64_t item = pgtest_int(c, "SELECT min(id) FROM inventory.items WHERE library_id = %lld", (long long)a);

	(void)state;
	visit(a);
	settle(a);
	visit(b);
	settle(b);
	pgtest_begin(w1, "SELECT cleanup.write_items('[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"w1\"}]')",
	             (long long)a);
	/* Another library: not blocked, commits while w1 is open. */
	pgtest_exec(w2, "SELECT cleanup.write_items('[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"w2\"}]')",
	            (long long)b);
	/* The same library: waits for w1. */
	pgtest_send(w2, "SELECT cleanup.write_items('[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"w3\"}]')",
	            (long long)a);
	pgtest_wait_blocked(c, PQbackendPID(w2), 5000);
	pgtest_exec(w1, "COMMIT");
	assert_string_equal(pgtest_finish(w2), "");
	assert_int_equal(settle(a).count, 5);

	/* A move a -> d waits while d's lock is held, with no row changed yet. */
	pgtest_begin(w1, "SELECT cleanup.count_declare(ARRAY[%lld::bigint])", (long long)d);
	pgtest_send(w2, "SELECT cleanup.write_items('[{\"op\": \"replace\", \"item_id\": %lld, \"expected_library_id\": %lld, "
	                "\"library_id\": %lld, \"title\": \"moved\", \"media_type\": \"movie\"}]')",
	            (long long)item, (long long)a, (long long)d);
	pgtest_wait_blocked(c, PQbackendPID(w2), 5000);
	assert_int_equal(pgtest_int(c, "SELECT library_id FROM inventory.items WHERE id = %lld", (long long)item), a);
	/* The mover holds a's lock already: a visit of a is busy, not wrong. */
	{
		cleanup_count_visit v = visit(a);

		assert_string_equal(v.state, "withheld");
		assert_non_null(strstr(v.reason, "busy"));
	}
	pgtest_exec(w1, "COMMIT");
	assert_string_equal(pgtest_finish(w2), "");
	assert_int_equal(pgtest_int(c, "SELECT library_id FROM inventory.items WHERE id = %lld", (long long)item), d);
	assert_int_equal(settle(a).count, 4);
	pgtest_close_all(w1, w2, NULL);
}

/* A reader holds the library lock through measurement and publication: a
 * writer of that library waits, then commits, and the cache is dirty. */
static void test_K4_reader_publishes_while_writer_waits(void **state)
{
	PGconn *r = pgtest_connect(conninfo, "reader"), *w = pgtest_connect(conninfo, "writer");
	int64_t lib = new_library(1, 8);

	(void)state;
	visit(lib);
	pgtest_exec(r, "BEGIN");
	assert_text_equal(pgtest_text(r, "SELECT cleanup.count_visit(%lld) ->> 'state'", (long long)lib), "fresh");
	pgtest_send(w, "SELECT cleanup.write_items('[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"late\"}]')",
	            (long long)lib);
	pgtest_wait_blocked(c, PQbackendPID(w), 5000);
	/* Published under the lock: the count equals count(*) in the reader's transaction. */
	assert_int_equal(pgtest_int(r, "SELECT published_count FROM cleanup.count_registry WHERE library_id = %lld",
	                            (long long)lib),
	                 real_count(r, lib));
	pgtest_exec(r, "COMMIT");
	assert_string_equal(pgtest_finish(w), "");
	assert_state(lib, "dirty");
	assert_int_equal(settle(lib).count, 9);
	pgtest_close_all(r, w, NULL);
}

/* A rollback undoes the revision, the dirty marks and the rows together. */
static void test_K4_rollback_undoes_invalidation(void **state)
{
	int64_t lib = new_library(1, 2);
	char *rev;

	(void)state;
	visit(lib);
	settle(lib);
	rev = report_field(lib, "revision");
	pgtest_begin(c, "SELECT cleanup.write_items('[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"rb\"}]')",
	             (long long)lib);
	pgtest_exec(c, "ROLLBACK");
	assert_state(lib, "fresh");
	assert_text_equal(report_field(lib, "revision"), rev);
	free(rev);
}

/* Cleanup steps hold the library lock: a prune of a watched library passes
 * the guard and invalidates its pages; the cache follows. */
static void test_K3_cleanup_steps_pass_the_guard(void **state)
{
	int64_t lib = new_library(2, 300), job;
	cleanup_count_visit v;

	(void)state;
	visit(lib);
	settle(lib);
	job = pgtest_job_create(c, "prune", lib);
	pgtest_exec(c, "SELECT cleanup.job_append(%lld, ARRAY(SELECT external_id FROM inventory.items "
	               "WHERE library_id = %lld ORDER BY id LIMIT 100))",
	            (long long)job, (long long)lib);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 100)", (long long)job);
	while (pgtest_int(c, "SELECT count(*) FROM cleanup.jobs WHERE id = %lld AND phase NOT IN ('completed')",
	                  (long long)job) > 0)
		pgtest_exec(c, "SELECT cleanup.job_step(id, step_no + 1) FROM cleanup.jobs WHERE id = %lld", (long long)job);
	assert_int_equal(real_count(c, lib), 100);
	v = settle(lib);
	assert_int_equal(v.count, 100);
}

/* The randomized check: gateway writes on one connection interleave with
 * visits on another; whenever a visit says fresh, its count equals
 * count(*) read in the visit's own transaction, under its library lock. */
static void test_K4_random_fresh_counts_equal_count_star(void **state)
{
	PGconn *w = pgtest_connect(conninfo, "random-writer"), *r = pgtest_connect(conninfo, "random-reader");
	int64_t libs[3];
	uint64_t x = 0x2545F4914F6CDD1DULL;
	int i, fresh = 0;

	(void)state;
	for (i = 0; i < 3; i++) {
		libs[i] = new_library(1, 50 + i * 10);
		visit(libs[i]);
	}
	for (i = 0; i < 300; i++) {
		int64_t lib, other;
		int op;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		lib = libs[x % 3];
		other = libs[(x / 3) % 3];
		op = (int)((x / 9) % 4);
		if (op == 0)
			pgtest_send(w, "SELECT cleanup.write_items((SELECT jsonb_agg(jsonb_build_object('op', 'insert', "
			               "'library_id', %lld, 'external_id', 'r-%d-' || g)) FROM generate_series(1, %d) g))",
			            (long long)lib, i, (int)(x % 5) + 1);
		else if (op == 1)
			pgtest_send(w, "SELECT cleanup.write_items(coalesce((SELECT jsonb_agg(jsonb_build_object('op', 'delete', "
			               "'item_id', id, 'expected_library_id', library_id)) FROM (SELECT id, library_id "
			               "FROM inventory.items WHERE library_id = %lld ORDER BY random() LIMIT 2) s), "
			               "'[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"refill-%d\"}]'))",
			            (long long)lib, (long long)lib, i);
		else if (op == 2)
			pgtest_send(w, "SELECT cleanup.write_items(coalesce((SELECT jsonb_agg(jsonb_build_object('op', 'replace', "
			               "'item_id', id, 'expected_library_id', library_id, 'library_id', %lld, 'title', 'mv', "
			               "'media_type', 'movie')) FROM (SELECT id, library_id FROM inventory.items "
			               "WHERE library_id = %lld ORDER BY random() LIMIT 3) s), "
			               "'[{\"op\": \"insert\", \"library_id\": %lld, \"external_id\": \"refill-%d\"}]'))",
			            (long long)other, (long long)lib, (long long)lib, i);
		else
			pgtest_send(w, "SELECT 1");
		pgtest_exec(r, "BEGIN");
		{
			char *st = pgtest_text(r, "SELECT cleanup.count_visit(%lld) ->> 'state'", (long long)libs[(x / 36) % 3]);

			if (strcmp(st, "fresh") == 0) {
				int64_t lib2 = libs[(x / 36) % 3];

				fresh++;
				assert_int_equal(pgtest_int(r, "SELECT published_count FROM cleanup.count_registry "
				                               "WHERE library_id = %lld",
				                            (long long)lib2),
				                 real_count(r, lib2));
			}
			free(st);
		}
		pgtest_exec(r, "COMMIT");
		assert_string_equal(pgtest_finish(w), "");
	}
	fprintf(stderr, "randomized: 300 rounds, %d fresh publications checked\n", fresh);
	assert_true(fresh > 10);
	for (i = 0; i < 3; i++)
		assert_int_equal(settle(libs[i]).count, real_count(c, libs[i]));
	pgtest_close_all(w, r, NULL);
}

PGTEST_MAIN(cmocka_unit_test_setup(test_K1_pages_are_row_counted, reset),
            cmocka_unit_test_setup(test_K1_growing_page_is_split, reset),
            cmocka_unit_test_setup(test_K3_guard_needs_every_library_lock, reset),
            cmocka_unit_test_setup(test_gateway_refuses_bad_batches, reset),
            cmocka_unit_test_setup(test_K2_capacity_withholds_counts, reset),
            cmocka_unit_test_setup(test_K2_summary_capacity_withholds, reset),
            cmocka_unit_test_setup(test_K2_reclaim_after_seven_days_with_free_lock, reset),
            cmocka_unit_test_setup(test_K5_selected_library_age_and_clock_restart, reset),
            cmocka_unit_test_setup(test_K5_insert_into_released_gap_forces_rebuild, reset),
            cmocka_unit_test_setup(test_K5_truncate_invalidates_every_watched_library, reset),
            cmocka_unit_test_setup(test_K5_missing_application_and_mismatch_are_sticky, reset),
            cmocka_unit_test_setup(test_K3_writers_of_other_libraries_do_not_wait, reset),
            cmocka_unit_test_setup(test_K4_reader_publishes_while_writer_waits, reset),
            cmocka_unit_test_setup(test_K4_rollback_undoes_invalidation, reset),
            cmocka_unit_test_setup(test_K3_cleanup_steps_pass_the_guard, reset),
            cmocka_unit_test_setup(test_K4_random_fresh_counts_equal_count_star, reset))

/* Two-connection tests of the admission guards and the seal fence
 * (A1-A6, C6) against the real PostgreSQL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pgtest.h"

PGTEST_DB_GROUP(conninfo, pgtest_seeded_db("admission", 2, 2, 10))

/* A2: a writer holding its admission FOR SHARE lock makes seal exit 3, and
 * the seal changes nothing. */
static void test_A2_seal_busy_while_writer_admitted(void **state)
{
	PGconn *w = pgtest_connect(conninfo, "writer");
	PGconn *o = pgtest_connect(conninfo, "observer");
	char *out = NULL;
	int64_t job;
	int rc;

	(void)state;
	job = pgtest_job_create(o, "prune", 1);
	pgtest_begin(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (1, 'in-flight')");
	rc = pgtest_cli(&out, conninfo, "job seal %lld --expected 0", (long long)job);
	assert_int_equal(rc, 3);
	assert_non_null(strstr(out, "retry later"));
	free(out);
	assert_text_equal(pgtest_text(o, "SELECT phase FROM cleanup.jobs WHERE id = %lld", (long long)job),
	                    "collecting");
	assert_text_equal(pgtest_text(o, "SELECT state FROM cleanup.library_admission WHERE library_id = 1"),
	                    "open");
	pgtest_exec(w, "COMMIT");

	/* C6: once the writer committed, the seal fences the library. */
	rc = pgtest_sh(NULL, "'%s' --db \"%s\" job seal %lld --expected 0", pgtest_cleanupctl(), conninfo,
	               (long long)job);
	assert_int_equal(rc, 0);
	assert_text_equal(pgtest_text(o, "SELECT state FROM cleanup.library_admission WHERE library_id = 1"),
	                    "draining");
	assert_int_equal(pgtest_int(o, "SELECT high_water_id FROM cleanup.jobs WHERE id = %lld", (long long)job),
	                 pgtest_int(o, "SELECT max(id) FROM inventory.items WHERE library_id = 1"));

	/* A1, A6: inserts into the sealed library fail, other servers accept. */
	pgtest_fails(w, "CUA01", NULL, "INSERT INTO inventory.items (library_id, external_id) VALUES (1, 'late')");
	pgtest_exec(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (3, 'other-server')");
	pgtest_close_all(w, o, NULL);
}

/* The state the admission tests start from: no unfinished job, every
 * admission row open. */
static int reopen(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "reopen");

	(void)state;
	pgtest_exec(c, "UPDATE cleanup.library_admission SET state = 'open', job_id = NULL");
	pgtest_exec(c, "UPDATE cleanup.server_admission SET state = 'open', job_id = NULL");
	pgtest_exec(c, "UPDATE cleanup.jobs SET phase = 'cancelled' WHERE phase NOT IN ('completed', 'cancelled')");
	PQfinish(c);
	return 0;
}

/* A1, A3: against a draining library, inserts and updates that stay in it
 * fail with CUA01 naming the library; moves into it fail; a move out of it
 * into an open library of the same server is allowed, and it moves the
 * count (it is not a deletion). */
static void test_A3_moves_out_allowed_in_and_stay_rejected(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "writer");
	char msg[512], *before, *after;
	int64_t item, job, n1, n2;

	(void)state;
	job = pgtest_draining_prune(c, 1);
	item = pgtest_int(c, "SELECT min(id) FROM inventory.items WHERE library_id = 1");
	before = pgtest_fingerprint(c);
	assert_string_equal(pgtest_fail(c, msg, sizeof msg,
	                                "INSERT INTO inventory.items (library_id, external_id) VALUES (1, 'new')"),
	                    "CUA01");
	assert_non_null(strstr(msg, "library 1 (Movies) is draining"));
	assert_non_null(strstr(msg, "admits no writes"));
	assert_string_equal(pgtest_fail(c, msg, sizeof msg,
	                                "UPDATE inventory.items SET title = 'edited' WHERE id = %lld", (long long)item),
	                    "CUA01");
	pgtest_fails(c, "CUA01", NULL,
	             "UPDATE inventory.items SET library_id = 1 WHERE library_id = 2 AND "
	             "external_id = 'ext-2-1'");
	after = pgtest_fingerprint(c);
	assert_string_equal(before, after);

	/* Out of the draining library into open library 2 (same server). */
	n1 = pgtest_int(c, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = 1");
	n2 = pgtest_int(c, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = 2");
	pgtest_exec(c, "UPDATE inventory.items SET library_id = 2 WHERE id = %lld", (long long)item);
	assert_int_equal(pgtest_int(c, "SELECT library_id FROM inventory.items WHERE id = %lld", (long long)item), 2);
	assert_int_equal(pgtest_int(c, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = 1"), n1 - 1);
	assert_int_equal(pgtest_int(c, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = 2"), n2 + 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = 1"), n1 - 1);
	/* Not a deletion: the job's counters did not move. */
	assert_int_equal(pgtest_int(c, "SELECT deleted + moved FROM cleanup.jobs WHERE id = %lld", (long long)job), 0);
	free(before);
	free(after);
	PQfinish(c);
}

/* A4: item id and external_id are immutable; an item cannot move to a
 * library of another server; a library cannot change server. */
static void test_A4_identity_is_immutable(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "writer");

	(void)state;
	pgtest_refused(c, "CUA04",
	               "UPDATE inventory.items SET external_id = 'renamed' WHERE external_id = 'ext-2-2'",
	               "immutable", NULL);
	pgtest_refused(c, "CUA04",
	               "UPDATE inventory.items SET id = id + 100000 WHERE external_id = 'ext-2-2'", NULL);
	pgtest_refused(c, "CUA03", "UPDATE inventory.items SET library_id = 3 WHERE external_id = 'ext-2-2'",
	               "to library 3 of another server", NULL);
	pgtest_refused(c, "CUA04", "UPDATE inventory.libraries SET server_id = 2 WHERE id = 2", NULL);
	pgtest_refused(c, "CUA04", "UPDATE inventory.media_servers SET id = 77 WHERE id = 2", NULL);
	/* Ordinary edits of an open library's items are fine. */
	pgtest_exec(c, "UPDATE inventory.items SET title = 'ok' WHERE external_id = 'ext-2-2'");
	PQfinish(c);
}

/* A1: a missing parent is rejected: the foreign key fires first (23503,
 * naming the library id); an item whose library lost its admission row
 * gets CUA02; a library of a missing server gets CUA02 from the server
 * admission check. */
static void test_A1_missing_parents(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "writer");
	char msg[512];

	(void)state;
	assert_string_equal(pgtest_fail(c, msg, sizeof msg,
	                                "INSERT INTO inventory.items (library_id, external_id) VALUES (424242, 'x')"),
	                    "23503");
	pgtest_fails(c, "CUA02", "server 424242",
	             "INSERT INTO inventory.libraries (server_id, name) VALUES (424242, 'x')");
	pgtest_begin(c, "DELETE FROM cleanup.library_admission WHERE library_id = 4");
	pgtest_fails(c, "CUA02", "library 4", "INSERT INTO inventory.items (library_id, external_id) VALUES (4, 'x')");
	pgtest_exec(c, "ROLLBACK");
	PQfinish(c);
}

/* A2 from the writer's side: while a fence is in flight (a transaction
 * holding the admission row FOR UPDATE), a writer is refused at once with
 * 55P03 and never waits; after the fence rolls back it is admitted. */
static void test_A2_writer_never_waits_behind_a_fence(void **state)
{
	PGconn *f = pgtest_connect(conninfo, "fence");
	PGconn *w = pgtest_connect(conninfo, "writer");

	(void)state;
	pgtest_begin(f, "SELECT 1 FROM cleanup.library_admission WHERE library_id = 2 FOR UPDATE");
	pgtest_fails(w, "55P03", "library 2 is being fenced",
	             "INSERT INTO inventory.items (library_id, external_id) VALUES (2, 'w')");
	/* Libraries outside the fence keep accepting writes (A6). */
	pgtest_exec(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (1, 'w-open')");
	pgtest_exec(f, "ROLLBACK");
	pgtest_exec(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (2, 'w')");
	pgtest_close_all(f, w, NULL);
}

/* A5, A6: a server being removed admits no new library and no item writes
 * in any of its libraries; the other server accepts both throughout. */
static void test_A5_draining_server_admits_no_new_library(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "writer");
	char msg[512];

	(void)state;
	pgtest_exec(c, "SELECT cleanup.job_create('remove-server', 2)");
	assert_string_equal(pgtest_fail(c, msg, sizeof msg,
	                                "INSERT INTO inventory.libraries (server_id, name) VALUES (2, 'Fresh')"),
	                    "CUA01");
	assert_non_null(strstr(msg, "server 2 is draining"));
	pgtest_fails(c, "CUA01", NULL, "INSERT INTO inventory.items (library_id, external_id) VALUES (4, 'x')");
	pgtest_exec(c, "INSERT INTO inventory.libraries (server_id, name) VALUES (1, 'Fresh')");
	pgtest_exec(c, "INSERT INTO inventory.items (library_id, external_id) "
	               "SELECT id, 'fresh-1' FROM inventory.libraries WHERE name = 'Fresh'");
	PQfinish(c);
}

/* A1 holds for set-based writers too: one INSERT ... SELECT spanning an
 * open and a draining library fails whole. */
static void test_A1_bulk_statement_is_all_or_nothing(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "writer");

	(void)state;
	pgtest_draining_prune(c, 2);
	pgtest_refused(c, "CUA01",
	               "INSERT INTO inventory.items (library_id, external_id) "
	               "SELECT 1 + g % 2, 'bulk-' || g FROM generate_series(1, 100) g",
	               NULL);
	PQfinish(c);
}

/* S12: TRUNCATE skips the row and statement guards, so it is refused on
 * every inventory table; an owner's explicit session setting bypasses it. */
static void test_S12_truncate_is_refused(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "owner");
	int64_t items = pgtest_int(c, "SELECT count(*) FROM inventory.items");

	(void)state;
	pgtest_fails(c, "CUA05", "inventory.items", "TRUNCATE inventory.items CASCADE");
	pgtest_fails(c, "CUA05", NULL, "TRUNCATE inventory.libraries CASCADE");
	pgtest_fails(c, "CUA05", NULL, "TRUNCATE inventory.media_servers CASCADE");
	/* The dependent tables too (seed 001): their guards are row and
	 * statement triggers as well. */
	pgtest_fails(c, "CUA05", NULL, "TRUNCATE inventory.item_retries");
	pgtest_fails(c, "CUA05", NULL, "TRUNCATE inventory.library_collections");
	pgtest_fails(c, "CUA05", NULL, "TRUNCATE inventory.classification_history");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items"), items);
	pgtest_begin(c, "SET LOCAL cleanup.allow_truncate = on");
	pgtest_exec(c, "TRUNCATE inventory.items CASCADE");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items"), 0);
	pgtest_exec(c, "ROLLBACK");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items"), items);
	PQfinish(c);
}

PGTEST_MAIN(cmocka_unit_test(test_A2_seal_busy_while_writer_admitted),
            cmocka_unit_test_setup(test_A3_moves_out_allowed_in_and_stay_rejected, reopen),
            cmocka_unit_test_setup(test_A4_identity_is_immutable, reopen),
            cmocka_unit_test_setup(test_A1_missing_parents, reopen),
            cmocka_unit_test_setup(test_A2_writer_never_waits_behind_a_fence, reopen),
            cmocka_unit_test_setup(test_A5_draining_server_admits_no_new_library, reopen),
            cmocka_unit_test_setup(test_A1_bulk_statement_is_all_or_nothing, reopen),
            cmocka_unit_test(test_S12_truncate_is_refused))

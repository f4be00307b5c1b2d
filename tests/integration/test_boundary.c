/* The boundary with the least-trusted login (T1-T8, docs/security.md):
 * every attack a sync writer login could make with nothing but the grants
 * of cleanup_writer, tried here as a real non-superuser login in that role.
 * Each test failed on the main of 2026-12-03 (before migration 013):
 *   T1  a writer set claimed_by = J on items of another server's library and
 *       the next step of job J deleted them; a mark naming a job that does
 *       not exist made a later removal fail every step with CUA10;
 *   T3  a writer's LOCK TABLE made create, seal and step busy with nobody
 *       named; an idle transaction after inventory.count_declare wedged a
 *       removal's finalize step in a lock timeout, nobody named;
 *   T4  one row held FOR UPDATE made a prune start a new pass at every
 *       step; a held claimed item made `job run` commit empty steps;
 *   T5  an operator of the writer's own ahead of pg_catalog switched the
 *       external-ID rule off; ids outside the engine's key space and IDs
 *       with edge spaces or invisible characters were accepted; locks
 *       declared inside a savepoint were refused (CU410);
 *   C9  a dependent written while a prune collected did not protect its
 *       item;
 *   T7  rows moved out before a step reached them were in no counter;
 *   T8  the audit kept no database role and no row for a parent delete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/install.h"
#include "cleanup/job.h"
#include "pgtest.h"

#define WRITER "t_bnd_writer"
#define RUNNER "t_bnd_runner"

static char *conninfo;   /* as postgres (superuser) */
static char *as_writer;  /* the same database as t_bnd_writer */
static char *as_runner;

static int setup(void **state)
{
	(void)state;
	/* 3 servers x 2 libraries x 300 items: server 1 = libraries 1, 2;
	 * server 2 = 3, 4; server 3 = 5, 6. */
	conninfo = pgtest_seeded_db("boundary", 3, 2, 300);
	as_writer = pgtest_login_as(conninfo, WRITER, CLEANUP_ROLE_WRITER);
	as_runner = pgtest_login_as(conninfo, RUNNER, CLEANUP_ROLE_RUNNER);
	return 0;
}

PGTEST_DB_TEARDOWN(conninfo, as_writer, as_runner)

/* Fails the test unless TEXT contains NEEDLE, printing TEXT. */
static void assert_contains(const char *text, const char *needle)
{
	if (!text || !strstr(text, needle)) {
		fprintf(stderr, "expected \"%s\" in:\n%s\n", needle, text ? text : "(null)");
		fail();
	}
}

/* OUT (a busy command's output, pgtest_cli_out) names NEEDLE and, when
 * not NULL, EXTRA; frees OUT. */
static void busy_names(char *out, const char *needle, const char *extra)
{
	assert_contains(out, needle);
	if (extra)
		assert_contains(out, extra);
	free(out);
}

/* Library LIB of the seed's layout: its first item id. */
static int64_t first_item(PGconn *c, int64_t lib)
{
	return pgtest_int(c, "SELECT min(id) FROM inventory.items WHERE library_id = %lld", (long long)lib);
}

/* A remove-library job of LIB whose first item carries N retry rows, one
 * step taken: that item is claimed, its dependents partly drained (N >
 * 128), the claim in flight. Returns the job id; *ITEM is the item. */
static int64_t removal_with_claim(PGconn *c, int64_t lib, int n, int64_t *item)
{
	int64_t job;

	*item = first_item(c, lib);
	pgtest_exec(c, "INSERT INTO inventory.item_retries (item_id, reason) SELECT %lld, 'r' || g FROM generate_series(1, %d) g",
	            (long long)*item, n);
	job = pgtest_job_create(c, "remove-library", lib);
	pgtest_exec(c, "SELECT cleanup.job_step(%lld, 1)", (long long)job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_claims WHERE job_id = %lld AND item_id = %lld",
	                            (long long)job, (long long)*item),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT claimed_by FROM inventory.items WHERE id = %lld", (long long)*item), job);
	return job;
}

/* The job's ledger (T7) holds: every row in scope is deleted, kept, moved
 * or absent, once, and the step records add up (moved_early included). */
static void assert_ledger(PGconn *c, int64_t job)
{
	assert_text_equal(pgtest_text(c, "SELECT phase FROM cleanup.jobs WHERE id = %lld", (long long)job), "completed");
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.jobs WHERE id = %lld AND scope_count IS NOT NULL "
	                            "AND scope_count = deleted + kept + moved + absent",
	                            (long long)job),
	                 1);
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND visited + released "
	                            "+ moved_early + absent_early <> deleted + moved + absent + retained + claimed",
	                            (long long)job),
	                 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.events WHERE job_id = %lld AND kind = 'ledger'",
	                            (long long)job),
	                 0);
}

/* The writer W lets go (COMMIT): a run completes JOB and its ledger holds
 * (assert_ledger). */
static void release_then_complete(PGconn *w, PGconn *c, int64_t job)
{
	pgtest_exec(w, "COMMIT");
	pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)job);
	assert_ledger(c, job);
}

/* T1: a writer login can neither set a claim (update or insert) nor clear
 * or change one; writing claimed_by back unchanged (an ORM saving the row
 * it read) stays allowed. */
static void test_T1_writer_cannot_set_change_or_clear_a_claim(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t1"), *w = pgtest_connect(as_writer, "t1-writer");
	int64_t job, item;

	(void)state;
	pgtest_fails(w, "CUA12", NULL, "UPDATE inventory.items SET claimed_by = 1 WHERE library_id = 3");
	pgtest_fails(w, "CUA12", NULL,
	             "INSERT INTO inventory.items (library_id, external_id, claimed_by) "
	             "VALUES (3, 'forged-claim', 1)");
	pgtest_exec(w, "UPDATE inventory.items SET claimed_by = claimed_by, title = 'orm' WHERE library_id = 3");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE claimed_by IS NOT NULL"), 0);

	/* A real claim in flight: nobody but the job touches it. */
	job = removal_with_claim(c, 4, 300, &item);
	pgtest_fails(w, "CUA10", NULL, "UPDATE inventory.items SET claimed_by = NULL WHERE id = %lld", (long long)item);
	pgtest_fails(w, "CUA10", NULL, "UPDATE inventory.items SET claimed_by = 1 WHERE id = %lld", (long long)item);
	pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)item), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_claims WHERE job_id = %lld", (long long)job), 0);
	assert_ledger(c, job);
	pgtest_close_all(w, c, NULL);
}

/* T1, T2: a claim mark no step made (a forged one, written around the
 * guards as only an owner can now, or left from before migration 013)
 * never brings an item into a job's drain: job J does not delete the
 * marked items of another server's library, and a mark naming a job that
 * does not exist does not wedge a later removal of its library. */
static void test_T1_T2_forged_marks_neither_delete_nor_wedge(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t1-forged");
	int64_t srv = pgtest_new_server(c, "t1-forged-a"), other = pgtest_new_server(c, "t1-forged-b");
	int64_t lib = pgtest_new_library(c, srv, "t1-forged-target", 300);
	int64_t victim = pgtest_new_library(c, other, "t1-forged-victim", 300);
	int64_t wedge = pgtest_new_library(c, other, "t1-forged-wedge", 50);
	int64_t job, job2;

	(void)state;
	job = pgtest_job_create(c, "remove-library", lib);
	pgtest_exec(c, "SET session_replication_role = replica");
	pgtest_exec(c, "UPDATE inventory.items SET claimed_by = %lld WHERE library_id = %lld AND id %% 30 = 0",
	            (long long)job, (long long)victim);
	pgtest_exec(c, "UPDATE inventory.items SET claimed_by = 999999 WHERE library_id = %lld", (long long)wedge);
	pgtest_exec(c, "RESET session_replication_role");

	pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)victim),
	                 300);
	assert_ledger(c, job);

	job2 = pgtest_job_create(c, "remove-library", wedge);
	pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)job2);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)wedge), 0);
	assert_ledger(c, job2);
	PQfinish(c);
}

/* T1: a claim is deleted only while its item is the version the claim
 * wrote, in the job's scope: a claimed item moved out (around the guards)
 * is released as moved and kept with its dependents; one changed in place
 * is released as retained and judged again by a later pass. */
static void test_T1_claim_rechecked_for_scope_and_version(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t1-recheck");
	int64_t srv = pgtest_new_server(c, "t1-recheck");
	int64_t lib = pgtest_new_library(c, srv, "t1-recheck-a", 200);
	int64_t away = pgtest_new_library(c, srv, "t1-recheck-b", 10);
	int64_t job, item, n;

	(void)state;
	job = removal_with_claim(c, lib, 300, &item);
	n = pgtest_int(c, "SELECT count(*) FROM inventory.item_retries WHERE item_id = %lld", (long long)item);
	pgtest_exec(c, "SET session_replication_role = replica");
	pgtest_exec(c, "UPDATE inventory.items SET library_id = %lld WHERE id = %lld", (long long)away, (long long)item);
	pgtest_exec(c, "RESET session_replication_role");
	pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld AND library_id = %lld",
	                            (long long)item, (long long)away),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.item_retries WHERE item_id = %lld", (long long)item),
	                 n);
	assert_int_equal(pgtest_int(c, "SELECT released FROM cleanup.jobs WHERE id = %lld", (long long)job), 1);

	/* Changed in place: released as retained, then deleted by a later pass. */
	{
		int64_t lib2 = pgtest_new_library(c, pgtest_new_server(c, "t1-recheck-2"), "t1-recheck-c", 200);
		int64_t job2 = removal_with_claim(c, lib2, 300, &item);

		pgtest_exec(c, "SET session_replication_role = replica");
		pgtest_exec(c, "UPDATE inventory.items SET title = 'changed under the claim' WHERE id = %lld", (long long)item);
		pgtest_exec(c, "RESET session_replication_role");
		pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)job2);
		assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)item), 0);
		assert_true(pgtest_int(c, "SELECT pass_no FROM cleanup.jobs WHERE id = %lld", (long long)job2) >= 2);
		assert_ledger(c, job2);
	}
	PQfinish(c);
}

/* T3: a writer's LOCK TABLE (its UPDATE grant allows ACCESS EXCLUSIVE)
 * makes create, seal and step busy (exit 3) at once, naming the writer's
 * backend and role, and changes nothing. */
static void test_T3_table_lock_busy_names_holder(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t3"), *w = pgtest_connect(as_writer, "t3-writer");
	int64_t srv = pgtest_new_server(c, "t3-srv"), srv2 = pgtest_new_server(c, "t3-srv2");
	int64_t lib = pgtest_new_library(c, srv, "t3-a", 100), lib2 = pgtest_new_library(c, srv2, "t3-b", 100);
	int64_t collecting, draining, pid;
	char *fp;
	char needle[64];

	(void)state;
	collecting = pgtest_job_create(c, "prune", lib);
	draining = pgtest_job_create(c, "remove-library", lib2);
	pid = pgtest_int(w, "SELECT pg_backend_pid()");
	snprintf(needle, sizeof needle, "pid %lld", (long long)pid);
	fp = pgtest_fingerprint(c);
	pgtest_begin(w, "LOCK TABLE inventory.items IN ACCESS EXCLUSIVE MODE");

	busy_names(pgtest_cli_out(3, conninfo, "job create prune --library 6"), needle, WRITER);
	busy_names(pgtest_cli_out(3, conninfo, "job seal %lld --expected 0", (long long)collecting), needle, NULL);
	busy_names(pgtest_cli_out(3, conninfo, "job step %lld", (long long)draining), needle,
	           "AccessExclusiveLock on inventory.items");
	pgtest_exec(w, "ROLLBACK");
	/* A LOCK TABLE on the libraries made status hang with no timeout:
	 * the reports wait 2 s, then answer busy naming the holder (the
	 * engine looks the holders up after a lock timeout). */
	pgtest_begin(w, "LOCK TABLE inventory.libraries IN ACCESS EXCLUSIVE MODE");
	busy_names(pgtest_cli_out(3, conninfo, "status"), needle, "AccessExclusiveLock on inventory.libraries");
	busy_names(pgtest_cli_out(3, conninfo, "counts --no-visit"), needle, NULL);
	pgtest_exec(w, "ROLLBACK");
	pgtest_unchanged(c, fp);
	pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)draining);
	pgtest_cli_expect(0, conninfo, "--quiet job cancel %lld", (long long)collecting);
	pgtest_close_all(w, c, NULL);
}

/* T3: a writer that declared its count-cache locks and went idle makes the
 * removal's finalize step busy, naming it, instead of a lock timeout that
 * names nobody; and the declaration bounded its idle transaction. */
static void test_T3_idle_declared_writer_named_at_finalize(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t3-declare"), *w = pgtest_connect(as_writer, "t3-declare-writer");
	int64_t srv = pgtest_new_server(c, "t3-declare"), lib = pgtest_new_library(c, srv, "t3-declare", 150), job, pid;
	char *v;
	char needle[64];

	(void)state;
	pid = pgtest_int(w, "SELECT pg_backend_pid()");
	snprintf(needle, sizeof needle, "pid %lld", (long long)pid);
	job = pgtest_job_create(c, "remove-library", lib);
	pgtest_begin(w, "SELECT inventory.count_declare(ARRAY[%lld]::bigint[])", (long long)lib);
	v = pgtest_text(w, "SHOW idle_in_transaction_session_timeout");
	assert_string_equal(v, "1min");
	free(v);

	busy_names(pgtest_cli_out(3, conninfo, "job run %lld --max-busy 2", (long long)job), needle,
	           "declared write lock");
	assert_text_equal(pgtest_text(c, "SELECT phase FROM cleanup.jobs WHERE id = %lld", (long long)job),
	                    "finalizing");
	release_then_complete(w, c, job);
	pgtest_close_all(w, c, NULL);
}

/* T4: a row a writer holds FOR UPDATE delays a prune, never multiplies its
 * work: once only that row is left, the step is busy (exit 3, holder
 * named, nothing committed) instead of a new pass at every step; the job
 * says who blocks it; when the writer lets go, the job completes. */
static void test_T4_held_row_backs_off_instead_of_passing(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t4"), *w = pgtest_connect(as_writer, "t4-writer");
	int64_t srv = pgtest_new_server(c, "t4"), lib = pgtest_new_library(c, srv, "t4", 300), job, held, pid, steps;
	char *out = NULL;
	char needle[64];

	(void)state;
	job = pgtest_job_create(c, "prune", lib);
	pgtest_exec(c, "SELECT cleanup.job_append(%lld, ARRAY(SELECT 't4-' || g FROM generate_series(1, 100) g))",
	            (long long)job);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 100)", (long long)job);
	held = pgtest_int(c, "SELECT id FROM inventory.items WHERE library_id = %lld AND external_id = 't4-250'",
	                  (long long)lib);
	pid = pgtest_int(w, "SELECT pg_backend_pid()");
	snprintf(needle, sizeof needle, "pid %lld", (long long)pid);
	pgtest_begin(w, "SELECT 1 FROM inventory.items WHERE id = %lld FOR UPDATE", (long long)held);

	busy_names(pgtest_cli_out(3, conninfo, "job run %lld --max-busy 3 --max-steps 200", (long long)job), needle,
	           NULL);
	assert_true(pgtest_int(c, "SELECT pass_no FROM cleanup.jobs WHERE id = %lld", (long long)job) <= 2);
	steps = pgtest_int(c, "SELECT step_no FROM cleanup.jobs WHERE id = %lld", (long long)job);
	assert_true(steps < 10);
	/* Named in the job itself (status, job show, the console). */
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.jobs j, jsonb_array_elements(j.blocked_by) h "
	                            "WHERE j.id = %lld AND (h->>'pid')::int = %lld AND h->>'role' = '" WRITER "'",
	                            (long long)job, (long long)pid),
	                 1);
	assert_int_equal(pgtest_cli(&out, conninfo, "--json job show %lld", (long long)job), 0);
	assert_contains(out, "\"blocked\"");
	assert_contains(out, WRITER);
	free(out);
	{
		char line[64];

		assert_int_equal(pgtest_cli(&out, conninfo, "status"), 0);
		snprintf(line, sizeof line, "job %lld blocked since", (long long)job);
		assert_contains(out, line);
		assert_contains(out, needle);
		free(out);
	}

	pgtest_exec(w, "COMMIT");
	pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)held), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.jobs WHERE id = %lld AND blocked_since IS NULL",
	                            (long long)job),
	                 1);
	assert_ledger(c, job);
	pgtest_close_all(w, c, NULL);
}

/* T4: a claimed item held FOR SHARE by a writer makes the step busy, not an
 * empty committed step after another. */
static void test_T4_held_claim_is_busy_not_empty_steps(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t4-claim"), *w = pgtest_connect(as_writer, "t4-claim-writer");
	int64_t srv = pgtest_new_server(c, "t4-claim"), lib = pgtest_new_library(c, srv, "t4-claim", 150), job, item, pid;
	char needle[64];

	(void)state;
	job = removal_with_claim(c, lib, 300, &item);
	pid = pgtest_int(w, "SELECT pg_backend_pid()");
	snprintf(needle, sizeof needle, "pid %lld", (long long)pid);
	pgtest_begin(w, "SELECT 1 FROM inventory.items WHERE id = %lld FOR SHARE", (long long)item);
	busy_names(pgtest_cli_out(3, conninfo, "job run %lld --max-busy 3 --max-steps 100", (long long)job), needle,
	           NULL);
	assert_int_equal(pgtest_int(c, "SELECT step_no FROM cleanup.jobs WHERE id = %lld", (long long)job), 1);
	release_then_complete(w, c, job);
	pgtest_close_all(w, c, NULL);
}

/* The pid of W as "pid N" in NEEDLE (64 bytes). */
static void pid_needle(PGconn *w, char *needle)
{
	snprintf(needle, 64, "pid %lld", (long long)pgtest_int(w, "SELECT pg_backend_pid()"));
}

/* W (in a transaction) locks the rows of inventory TABLE whose COLUMN is
 * ID FOR UPDATE inside a savepoint it then releases: the rows' xmax is a
 * subtransaction id, which no pg_locks row shows (cleanup.xid_pids). */
static void hold_in_savepoint(PGconn *w, const char *table, const char *column, int64_t id)
{
	pgtest_exec(w, "SAVEPOINT s");
	pgtest_exec(w, "SELECT 1 FROM inventory.%s WHERE %s = %lld FOR UPDATE", table, column, (long long)id);
	pgtest_exec(w, "RELEASE s");
}

/* T3/T4: a dependent a writer login holds is skipped, never waited for.
 * On the main of 2026-12-04 a retry held FOR UPDATE (which needs no lock
 * of its item) made every step wait 5 s for the lock timeout and answer
 * busy naming nobody. Now the prune deletes everything else, retains the
 * item, and once only it is left the step is busy at once naming the
 * writer, in two passes and a handful of steps; the same for a preview
 * held inside the writer's own savepoint (a subtransaction's id in the
 * row's xmax). When the writer lets go, the job completes exactly. */
static void test_T4_held_dependent_skipped_and_named(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t4-dep"), *w = pgtest_connect(as_writer, "t4-dep-writer");
	int64_t srv = pgtest_new_server(c, "t4-dep"), lib = pgtest_new_library(c, srv, "t4-dep", 300), job, item, item2;
	char needle[64];
	char *out;

	(void)state;
	item = pgtest_int(c, "SELECT id FROM inventory.items WHERE library_id = %lld AND external_id = 't4-dep-250'",
	                  (long long)lib);
	item2 = pgtest_int(c, "SELECT id FROM inventory.items WHERE library_id = %lld AND external_id = 't4-dep-270'",
	                   (long long)lib);
	/* Dependents on every unseen item, so that each goes through the
	 * in-step dependents delete. */
	pgtest_exec(c, "INSERT INTO inventory.item_retries (item_id, reason) SELECT i.id, 'r' || g "
	               "FROM inventory.items i, generate_series(1, 2) g WHERE i.library_id = %lld ORDER BY i.id, g",
	            (long long)lib);
	pgtest_exec(c, "INSERT INTO inventory.identity_review_previews (item_id, candidate) "
	               "SELECT id, 'c' FROM inventory.items WHERE library_id = %lld ORDER BY id",
	            (long long)lib);
	job = pgtest_job_create(c, "prune", lib);
	pgtest_exec(c, "SELECT cleanup.job_append(%lld, ARRAY(SELECT 't4-dep-' || g FROM generate_series(1, 100) g))",
	            (long long)job);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 100)", (long long)job);
	pid_needle(w, needle);
	pgtest_begin(w, "SELECT 1 FROM inventory.item_retries WHERE item_id = %lld ORDER BY id LIMIT 1 FOR UPDATE",
	             (long long)item);
	hold_in_savepoint(w, "identity_review_previews", "item_id", item2);

	out = pgtest_cli_out(3, conninfo, "job run %lld --max-busy 2 --max-steps 200", (long long)job);
	assert_contains(out, needle);
	assert_contains(out, "its item retry");
	free(out);
	/* Everything else went; two passes, a handful of steps. */
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib),
	                 102);
	assert_true(pgtest_int(c, "SELECT pass_no FROM cleanup.jobs WHERE id = %lld", (long long)job) <= 2);
	assert_true(pgtest_int(c, "SELECT step_no FROM cleanup.jobs WHERE id = %lld", (long long)job) < 12);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.jobs j, jsonb_array_elements(j.blocked_by) h "
	                               "WHERE j.id = %lld AND (h->>'pid')::int = %lld AND h->>'role' = '" WRITER "'",
	                            (long long)job, (long long)PQbackendPID(w)),
	                 1);
	/* The retry goes: the preview held in the savepoint is named now. */
	pgtest_exec(w, "ROLLBACK");
	pgtest_begin(w, "SELECT 1");
	hold_in_savepoint(w, "identity_review_previews", "item_id", item2);
	out = pgtest_cli_out(3, conninfo, "job run %lld --max-busy 2 --max-steps 200", (long long)job);
	assert_contains(out, needle);
	assert_contains(out, "its identity review preview");
	free(out);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)item), 0);
	release_then_complete(w, c, job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib),
	                 100);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.identity_review_previews WHERE item_id = %lld",
	                            (long long)item2),
	                 0);
	pgtest_close_all(w, c, NULL);
}

/* T4: a claimed item (300 retries: drained over several steps) one of
 * whose retries a writer holds: the drain deletes the other 299 without
 * waiting, then the step is busy naming the writer, nothing committed;
 * when the writer lets go, the job completes. */
static void test_T4_held_dependent_of_a_claim_named(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t4-cdep"), *w = pgtest_connect(as_writer, "t4-cdep-writer");
	int64_t srv = pgtest_new_server(c, "t4-cdep"), lib = pgtest_new_library(c, srv, "t4-cdep", 150), job, item;
	char needle[64];
	char *out;

	(void)state;
	job = removal_with_claim(c, lib, 300, &item);
	pid_needle(w, needle);
	pgtest_begin(w, "SELECT 1 FROM inventory.item_retries WHERE item_id = %lld ORDER BY id DESC LIMIT 1 FOR UPDATE",
	             (long long)item);
	out = pgtest_cli_out(3, conninfo, "job run %lld --max-busy 2 --max-steps 100", (long long)job);
	assert_contains(out, needle);
	assert_contains(out, "its item retry");
	free(out);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.item_retries WHERE item_id = %lld", (long long)item),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_claims WHERE job_id = %lld", (long long)job), 1);
	assert_true(pgtest_int(c, "SELECT max(mutations) FROM cleanup.job_steps WHERE job_id = %lld", (long long)job) <=
	            128);
	release_then_complete(w, c, job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 0);
	pgtest_close_all(w, c, NULL);
}

/* T3: a removal whose library's own dependents a writer holds (a
 * collection FOR UPDATE, a history record inside a savepoint): the other
 * collections and records go without waiting, then the step is busy
 * naming the writer (the main of 2026-12-04 waited for the lock timeout
 * at every step and said "held by a transaction that has ended since");
 * the library stays until the writer lets go. */
static void test_T3_held_library_dependent_named(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t3-ldep"), *w = pgtest_connect(as_writer, "t3-ldep-writer");
	int64_t srv = pgtest_new_server(c, "t3-ldep"), lib = pgtest_new_library(c, srv, "t3-ldep", 50), job, coll, hist;
	char needle[64];
	char *out;

	(void)state;
	pgtest_exec(c, "INSERT INTO inventory.library_collections (library_id, name) "
	               "SELECT %lld, 'c' || g FROM generate_series(1, 40) g",
	            (long long)lib);
	pgtest_exec(c, "INSERT INTO inventory.classification_history (library_id, status) "
	               "SELECT %lld, 'completed' FROM generate_series(1, 30) g",
	            (long long)lib);
	coll = pgtest_int(c, "SELECT min(id) + 7 FROM inventory.library_collections WHERE library_id = %lld",
	                  (long long)lib);
	hist = pgtest_int(c, "SELECT max(id) FROM inventory.classification_history WHERE library_id = %lld",
	                  (long long)lib);
	pid_needle(w, needle);
	pgtest_begin(w, "SELECT 1 FROM inventory.library_collections WHERE id = %lld FOR UPDATE", (long long)coll);
	hold_in_savepoint(w, "classification_history", "id", hist);
	job = pgtest_job_create(c, "remove-library", lib);

	out = pgtest_cli_out(3, conninfo, "job run %lld --max-busy 2 --max-steps 100", (long long)job);
	assert_contains(out, needle);
	assert_contains(out, "collection");
	free(out);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.library_collections WHERE library_id = %lld",
	                            (long long)lib),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.classification_history WHERE library_id = %lld",
	                            (long long)lib),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 1);
	assert_text_equal(pgtest_text(c, "SELECT phase FROM cleanup.jobs WHERE id = %lld", (long long)job), "finalizing");
	/* The collection goes: the history record held in the savepoint is
	 * named now. */
	pgtest_exec(w, "ROLLBACK");
	pgtest_begin(w, "SELECT 1");
	hold_in_savepoint(w, "classification_history", "id", hist);
	out = pgtest_cli_out(3, conninfo, "job run %lld --max-busy 2 --max-steps 100", (long long)job);
	assert_contains(out, needle);
	assert_contains(out, "history record");
	free(out);
	release_then_complete(w, c, job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 0);
	pgtest_close_all(w, c, NULL);
}

/* T3: the locks the engine's own writer triggers take (a dependent's
 * item and library FOR SHARE, the admission rows) are named when they
 * make a job busy. On the main of 2026-12-04 the triggers took them NOWAIT
 * inside EXCEPTION blocks, so the row's xmax was a subtransaction's id,
 * and a removal's create answered "held by a transaction that has ended
 * since" of a writer that was alive; a writer made busy by a fence
 * (taken the same way) was told the same of the job. */
static void test_T3_writer_trigger_locks_are_named(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t3-trg"), *w = pgtest_connect(as_writer, "t3-trg-writer");
	int64_t srv = pgtest_new_server(c, "t3-trg"), lib = pgtest_new_library(c, srv, "t3-trg", 20), lib2, item, job;
	char needle[64], sql[256];
	char *out;
	PGresult *r;

	(void)state;
	lib2 = pgtest_new_library(c, srv, "t3-trg2", 20);
	item = pgtest_int(c, "SELECT min(id) FROM inventory.items WHERE library_id = %lld", (long long)lib);
	pid_needle(w, needle);
	pgtest_begin(w, "INSERT INTO inventory.item_retries (item_id, reason) VALUES (%lld, 'w')", (long long)item);
	out = pgtest_cli_out(3, conninfo, "job create remove-library --library %lld", (long long)lib);
	assert_contains(out, needle);
	assert_contains(out, WRITER);
	free(out);
	pgtest_exec(w, "ROLLBACK");
	/* The other way round: a job's fence makes the writer busy, naming
	 * the job's transaction. */
	job = pgtest_job_create(c, "prune", lib2);
	pgtest_begin(c, "SELECT cleanup.lock_parent_row('library admission', %lld)", (long long)lib2);
	snprintf(sql, sizeof sql, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'x')",
	         (long long)lib2);
	r = PQexec(w, sql);
	assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "55P03");
	pid_needle(c, needle);
	assert_contains(PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL), needle);
	assert_contains(PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL), "the admission row of library");
	PQclear(r);
	pgtest_exec(c, "ROLLBACK");
	pgtest_cli_expect(0, conninfo, "--quiet job cancel %lld", (long long)job);
	pgtest_close_all(w, c, NULL);
}

/* T3, A1: a library's item count is striped (migration 019). Two writer
 * logins inserting and updating in one library do not wait for each other
 * (on the main of 2026-12-04 the second waited for the first's commit on
 * the one counter row: here its lock_timeout would fail it). A prune of
 * the library with a seen row moved out while it drains (A3, T7) then
 * counts every stripe: the counts are exact afterwards. */
static void test_T3_library_count_never_makes_writers_or_steps_wait(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t3-cnt"), *w1 = pgtest_connect(as_writer, "t3-cnt-w1"),
	       *w2 = pgtest_connect(as_writer, "t3-cnt-w2");
	int64_t srv = pgtest_new_server(c, "t3-cnt"), lib = pgtest_new_library(c, srv, "t3-cnt", 200), lib2, job, s1;

	(void)state;
	lib2 = pgtest_new_library(c, srv, "t3-cnt2", 10);
	pgtest_exec(w2, "SET lock_timeout = '2s'");
	pgtest_begin(w1, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 't3-cnt-w1')", (long long)lib);
	pgtest_exec(w2, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 't3-cnt-w2')", (long long)lib);
	pgtest_exec(w2, "UPDATE inventory.items SET title = 'x' WHERE library_id = %lld AND external_id = 't3-cnt-3'",
	            (long long)lib);
	pgtest_exec(w1, "COMMIT");
	assert_true(pgtest_int(c, "SELECT count(*) FROM cleanup.library_stats WHERE library_id = %lld", (long long)lib) >=
	            2);
	assert_int_equal(pgtest_int(c, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = %lld",
	                            (long long)lib),
	                 202);

	job = pgtest_job_create(c, "prune", lib);
	pgtest_exec(c, "SELECT cleanup.job_append(%lld, ARRAY(SELECT 't3-cnt-' || g FROM generate_series(1, 100) g))",
	            (long long)job);
	pgtest_exec(c, "SELECT cleanup.job_append(%lld, ARRAY['t3-cnt-w1', 't3-cnt-w2'])", (long long)job);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 102)", (long long)job);
	s1 = pgtest_int(c, "SELECT deleted FROM cleanup.job_step(%lld, 1)", (long long)job);
	assert_true(s1 > 0);
	/* A3: a move out of the draining library while a second writer
	 * inserts into lib2: each holds a stripe of lib2's count. */
	pgtest_begin(w1, "UPDATE inventory.items SET library_id = %lld WHERE library_id = %lld AND external_id = 't3-cnt-99'",
	             (long long)lib2, (long long)lib);
	pgtest_exec(w2, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 't3-cnt2-w2')", (long long)lib2);
	pgtest_exec(w1, "COMMIT");
	pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)job);
	assert_ledger(c, job);
	assert_int_equal(pgtest_int(c, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = %lld",
	                            (long long)lib),
	                 pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib));
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib),
	                 101);
	assert_int_equal(pgtest_int(c, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = %lld",
	                            (long long)lib2),
	                 12);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib2),
	                 12);
	pgtest_close_all(w1, w2, c, NULL);
}

/* T5: every function of the engine's schemas pins its search_path, or has
 * a SQL-standard body bound when it was created. */
static void test_T5_every_engine_function_pins_search_path(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t5-walk");
	char *bad;

	(void)state;
	bad = pgtest_text(c, "SELECT string_agg(p.oid::regprocedure::text, ', ') FROM pg_proc p "
	                     "WHERE p.pronamespace IN ('cleanup'::regnamespace, 'inventory'::regnamespace) "
	                     "AND p.prosqlbody IS NULL "
	                     "AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig), false)");
	if (bad)
		fprintf(stderr, "functions without a pinned search_path: %s\n", bad);
	assert_null(bad);
	/* A SQL-standard body that reads a table pins its columns: a later
	 * migration's ALTER TABLE ... DROP COLUMN would fail (CI hit it in
	 * the upgrade-from-009 test). Those bodies stay table-free. */
	bad = pgtest_text(c, "SELECT string_agg(DISTINCT p.oid::regprocedure::text, ', ') FROM pg_proc p "
	                     "JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid "
	                     "AND d.refclassid = 'pg_class'::regclass "
	                     "WHERE p.pronamespace IN ('cleanup'::regnamespace, 'inventory'::regnamespace) "
	                     "AND p.prosqlbody IS NOT NULL");
	if (bad)
		fprintf(stderr, "SQL-standard bodies that depend on a relation: %s\n", bad);
	assert_null(bad);
	assert_true(pgtest_int(c, "SELECT count(*) FROM pg_proc WHERE pronamespace = 'cleanup'::regnamespace") > 100);
	PQfinish(c);
}

/* T5: a writer with a schema of its own puts an operator ~ there, ahead of
 * pg_catalog, to switch the external-ID rule off for its inserts: the rule
 * still holds (its body was bound when it was created). */
static void test_T5_callers_search_path_cannot_change_the_id_rule(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t5"), *w;

	(void)state;
	pgtest_exec(c, "DROP SCHEMA IF EXISTS t_bnd_evil CASCADE");
	pgtest_exec(c, "CREATE SCHEMA t_bnd_evil AUTHORIZATION " WRITER);
	w = pgtest_connect(as_writer, "t5-writer");
	pgtest_exec(w, "CREATE FUNCTION t_bnd_evil.never(text, text) RETURNS boolean LANGUAGE sql AS 'SELECT false'");
	pgtest_exec(w, "CREATE OPERATOR t_bnd_evil.~ (LEFTARG = text, RIGHTARG = text, FUNCTION = t_bnd_evil.never)");
	pgtest_exec(w, "CREATE FUNCTION t_bnd_evil.octet_length(text) RETURNS int LANGUAGE sql AS 'SELECT 1'");
	pgtest_exec(w, "SET search_path = t_bnd_evil, pg_catalog");
	pgtest_fails(w, "23514", NULL,
	             "INSERT INTO inventory.items (library_id, external_id) "
	             "VALUES (3, E'evil\\ttab')");
	pgtest_fails(w, "23514", NULL,
	             "INSERT INTO inventory.items (library_id, external_id) "
	             "VALUES (3, 'evil-trailing ')");
	PQfinish(w);
	pgtest_exec(c, "DROP SCHEMA t_bnd_evil CASCADE");
	PQfinish(c);
}

/* C10: one ID rule on both sides: spaces at either end and invisible
 * characters are refused by the inventory (the writer's insert), the
 * manifest (job_append) and the C pre-check alike; an inner space is not. */
static void test_C10_id_rule_refuses_edge_spaces_and_invisibles(void **state)
{
	static const char *const bad[] = {"abc ",        " abc",          "a\xc2\xa0" "b",   "a\xe2\x80\x8b" "b",
	                                  "a\xe2\x80\xae" "b", "\xef\xbb\xbf" "abc", "a\xe2\x81\xa6" "b", "a\xe3\x80\x80" "b",
	                                  "a\xf3\xa0\x80\x81" "b"};
	PGconn *c = pgtest_connect(conninfo, "c10"), *w = pgtest_connect(as_writer, "c10-writer");
	int64_t srv = pgtest_new_server(c, "c10"), lib = pgtest_new_library(c, srv, "c10", 1), job;
	size_t i;
	char why[128];

	(void)state;
	job = pgtest_job_create(c, "prune", lib);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *lit = PQescapeLiteral(c, bad[i], strlen(bad[i]));

		assert_non_null(lit);
		pgtest_fails(w, "23514", NULL,
		             "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, %s)",
		             (long long)lib, lit);
		pgtest_fails(c, "CU101", NULL, "SELECT cleanup.job_append(%lld, ARRAY[%s])", (long long)job, lit);
		assert_int_equal(cleanup_external_id_check(bad[i], strlen(bad[i]), why, sizeof why), CLEANUP_EINVAL);
		PQfreemem(lit);
	}
	pgtest_exec(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'inner space ok')",
	            (long long)lib);
	pgtest_exec(c, "SELECT cleanup.job_append(%lld, ARRAY['inner space ok'])", (long long)job);
	assert_int_equal(cleanup_external_id_check("inner space ok", 14, why, sizeof why), CLEANUP_OK);
	pgtest_exec(c, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)job);
	pgtest_close_all(w, c, NULL);
}

/* C10: the inventory's CHECK (the rule written out, migration 020) and
 * cleanup.external_id_problem (the rule with its messages, job_append's
 * check) agree on every ID of a corpus: each code point of the Basic
 * Multilingual Plane but the surrogates, the planes' ends and the tag
 * block, each alone, inside, first and last of an ID, and the edges of
 * the length limit. A CHECK passes an expression that is NULL. */
static void test_C10_check_and_rule_agree(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "c10-agree");
	char *expr, *disagree;

	(void)state;
	expr = pgtest_text(c, "SELECT substring(pg_get_constraintdef(oid) FROM '^CHECK \\((.*)\\)( NOT VALID)?$') "
	                      "FROM pg_constraint WHERE conrelid = 'inventory.items'::regclass "
	                      "AND conname = 'items_external_id_rule'");
	assert_non_null(expr);
	/* The CHECK is the rule written out, no function call (its
	 * preparation at every statement was the cost, migration 020). */
	assert_null(strstr(expr, "external_id_problem"));
	pgtest_exec(c, "CREATE TEMP TABLE id_corpus AS "
	               "WITH cp AS (SELECT g FROM generate_series(1, 65535) g WHERE g NOT BETWEEN 55296 AND 57343 "
	               "            UNION ALL SELECT g FROM generate_series(917504, 917631) g "
	               "            UNION ALL VALUES (65536), (131071), (1114111), (128512)) "
	               "SELECT x FROM cp, LATERAL (VALUES (chr(g)), ('a' || chr(g) || 'b'), (chr(g) || 'ab'), "
	               "                                  ('ab' || chr(g))) v(x) "
	               "UNION ALL VALUES (''), (' '), ('a'), (repeat('x', 256)), (repeat('x', 257)), "
	               "                 (repeat('é', 128)), (repeat('é', 129)), ('a b'), ('  a'), ('a  ')");
	pgtest_exec(c, "CREATE TEMP VIEW id_corpus_check AS SELECT x, coalesce((%s), true) AS check_passes "
	               "FROM (SELECT x AS external_id, x FROM id_corpus) s",
	            expr);
	disagree = pgtest_text(c, "SELECT coalesce(string_agg(format('%%L: CHECK %%s, rule %%s', x, check_passes, "
	                          "cleanup.external_id_problem(x)), '; '), '') FROM (SELECT * FROM id_corpus_check "
	                          "WHERE check_passes IS DISTINCT FROM (cleanup.external_id_problem(x) IS NULL) LIMIT 5) d");
	if (disagree[0]) {
		fprintf(stderr, "the CHECK and the rule disagree: %s\n", disagree);
		fail();
	}
	/* The corpus holds IDs each side refuses and accepts. */
	assert_true(pgtest_int(c, "SELECT count(*) FROM id_corpus_check WHERE NOT check_passes") > 1000);
	assert_true(pgtest_int(c, "SELECT count(*) FROM id_corpus_check WHERE check_passes") > 200000);
	free(disagree);
	free(expr);
	PQfinish(c);
}

/* T5: ids outside the engine's key space are refused at the door. */
static void test_T5_ids_outside_the_key_space_are_refused(void **state)
{
	static const char *const inserts[] = {
		"INSERT INTO inventory.items (id, library_id, external_id) VALUES (0, 3, 'key-zero')",
		"INSERT INTO inventory.items (id, library_id, external_id) VALUES (-9223372036854775808, 3, 'key-min')",
		"INSERT INTO inventory.items (id, library_id, external_id) VALUES (9223372036854775807, 3, 'key-max')",
		"INSERT INTO inventory.libraries (id, server_id, name) VALUES (1099511627776, 2, 'key-lib')",
	};
	PGconn *w = pgtest_connect(as_writer, "t5-keys");
	size_t i;

	(void)state;
	for (i = 0; i < sizeof inserts / sizeof *inserts; i++)
		pgtest_fails(w, "23514", NULL, "%s", inserts[i]);
	PQfinish(w);
}

/* T5 (writers as they really write): count-cache locks declared inside a
 * savepoint that is released hold for the rest of the transaction, as the
 * gateway's do; a savepoint rolled back takes its locks with it. */
static void test_T5_declared_locks_inside_savepoints(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t5-savepoint"), *w = pgtest_connect(as_writer, "t5-savepoint-writer");
	int64_t srv = pgtest_new_server(c, "t5-savepoint"), lib = pgtest_new_library(c, srv, "t5-savepoint", 20);

	(void)state;
	/* Watch the library: plain writes to it now need declared locks. */
	pgtest_exec(c, "SELECT cleanup.count_visit(%lld)", (long long)lib);
	pgtest_fails(w, "CU410", NULL,
	             "UPDATE inventory.items SET title = 'x' WHERE library_id = %lld",
	             (long long)lib);

	pgtest_begin(w, "SAVEPOINT orm_1");
	pgtest_exec(w, "SELECT inventory.count_declare(ARRAY[%lld]::bigint[])", (long long)lib);
	pgtest_exec(w, "RELEASE SAVEPOINT orm_1");
	pgtest_exec(w, "SAVEPOINT orm_2");
	pgtest_exec(w, "UPDATE inventory.items SET title = 'released savepoint' WHERE library_id = %lld", (long long)lib);
	pgtest_exec(w, "RELEASE SAVEPOINT orm_2");
	pgtest_exec(w, "COMMIT");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE title = 'released savepoint'"), 20);

	pgtest_begin(w, "SAVEPOINT orm_1");
	pgtest_exec(w, "SELECT inventory.count_declare(ARRAY[%lld]::bigint[])", (long long)lib);
	pgtest_exec(w, "ROLLBACK TO SAVEPOINT orm_1");
	pgtest_fails(w, "CU410", NULL,
	             "UPDATE inventory.items SET title = 'rolled back' WHERE library_id = %lld",
	             (long long)lib);
	pgtest_exec(w, "ROLLBACK");

	pgtest_begin(w, "SAVEPOINT orm_1");
	pgtest_exec(w,
	            "SELECT inventory.write_items(jsonb_build_array(jsonb_build_object('op', 'insert', 'library_id', %lld, "
	            "'external_id', 't5-gateway')))",
	            (long long)lib);
	pgtest_exec(w, "RELEASE SAVEPOINT orm_1");
	pgtest_exec(w, "COMMIT");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE external_id = 't5-gateway'"), 1);
	pgtest_close_all(w, c, NULL);
}

/* C9 for dependents: a dependent row written while a prune collects is an
 * accepted write about its item: the item is protected, never pruned,
 * and the dependent stays. */
static void test_C9_dependent_written_while_collecting_protects_its_item(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "c9"), *w = pgtest_connect(as_writer, "c9-writer");
	int64_t srv = pgtest_new_server(c, "c9"), lib = pgtest_new_library(c, srv, "c9", 200), job, item;

	(void)state;
	job = pgtest_job_create(c, "prune", lib);
	item = pgtest_int(c, "SELECT id FROM inventory.items WHERE library_id = %lld AND external_id = 'c9-150'",
	                  (long long)lib);
	pgtest_exec(w, "INSERT INTO inventory.item_retries (item_id, reason) VALUES (%lld, 'written while collecting')",
	            (long long)item);
	/* The traversal saw c9-1..c9-100 (it began before the retry row). */
	pgtest_exec(c, "SELECT cleanup.job_append(%lld, ARRAY(SELECT 'c9-' || g FROM generate_series(1, 100) g))",
	            (long long)job);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 100)", (long long)job);
	pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)item), 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.item_retries WHERE item_id = %lld", (long long)item),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib), 101);
	assert_ledger(c, job);
	pgtest_close_all(w, c, NULL);
}

/* T7: a prune while a writer moves rows out of the fenced library, some
 * before a step reached them, some after: at completion every row in
 * scope at the seal is deleted, kept, moved or absent, once; the early
 * moves are counted apart; job show prints the identity. */
static void test_T7_every_row_accounted_while_writers_move_rows_out(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t7"), *w = pgtest_connect(as_writer, "t7-writer");
	int64_t srv = pgtest_new_server(c, "t7"), lib = pgtest_new_library(c, srv, "t7", 600);
	int64_t out_lib = pgtest_new_library(c, srv, "t7-out", 0);
	int64_t job, early, moved;
	char *out = NULL;

	(void)state;
	job = pgtest_job_create(c, "prune", lib);
	pgtest_exec(c,
	            "SELECT cleanup.job_append(%lld, ARRAY(SELECT 't7-' || g FROM generate_series(1, 600) g WHERE g %% 3 = 0 "
	            "ORDER BY g LIMIT 128))",
	            (long long)job);
	pgtest_exec(c,
	            "SELECT cleanup.job_append(%lld, ARRAY(SELECT 't7-' || g FROM generate_series(1, 600) g WHERE g %% 3 = 0 "
	            "ORDER BY g OFFSET 128))",
	            (long long)job);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 200)", (long long)job);
	assert_int_equal(pgtest_int(c, "SELECT scope_count FROM cleanup.jobs WHERE id = %lld", (long long)job), 600);
	/* Before any step: 10 unseen and 5 seen rows leave (A3). */
	pgtest_exec(w,
	            "UPDATE inventory.items SET library_id = %lld WHERE library_id = %lld AND external_id IN "
	            "(SELECT 't7-' || g FROM generate_series(590, 600) g WHERE g %% 3 <> 0 "
	            "UNION ALL SELECT 't7-' || g FROM generate_series(585, 600) g WHERE g %% 3 = 0)",
	            (long long)out_lib, (long long)lib);
	early = pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)out_lib);
	assert_true(early >= 12);
	pgtest_cli_expect(0, conninfo, "--quiet job step %lld --steps 2", (long long)job);
	/* Between steps: rows on both sides of the cursor leave (those the
	 * steps deleted already are not there to move). */
	moved = pgtest_int(w,
	                   "WITH u AS (UPDATE inventory.items SET library_id = %lld WHERE library_id = %lld AND external_id IN "
	                   "('t7-3', 't7-6', 't7-30', 't7-300', 't7-301', 't7-302', 't7-570', 't7-571') RETURNING 1) "
	                   "SELECT count(*) FROM u",
	                   (long long)out_lib, (long long)lib);
	assert_true(moved >= 4);
	pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)job);
	assert_ledger(c, job);
	assert_true(pgtest_int(c, "SELECT moved_early FROM cleanup.jobs WHERE id = %lld", (long long)job) >= early);
	assert_int_equal(pgtest_cli(&out, conninfo, "job show %lld", (long long)job), 0);
	assert_contains(out, "ledger");
	assert_contains(out, "holds");
	free(out);
	/* Nothing that moved out was deleted. */
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)out_lib),
	                 early + moved);
	pgtest_close_all(w, c, NULL);
}

/* T7: a DELETE that is not a step's (the site's own prune: the writer
 * login has no DELETE) from a library no job drains records nothing; one
 * from a draining library records the rows no step has reached, which the
 * job counts absent early; one while a fence holds the library's
 * admission row is busy and deletes nothing. The first needs only the
 * admission row, not the rows' ids and keys (items_after_delete; 172-340 ms a
 * 200,000-row DELETE before: docs/benchmarks.md, "A site's own bulk
 * DELETE"). */
static void test_T7_deletes_recorded_only_where_a_job_drains(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t7d"), *f = pgtest_connect(conninfo, "t7d-fence");
	int64_t srv = pgtest_new_server(c, "t7d"), lib = pgtest_new_library(c, srv, "t7d", 600);
	int64_t job;

	(void)state;
	/* Open: nothing recorded, the count follows. */
	pgtest_exec(c, "DELETE FROM inventory.items WHERE library_id = %lld AND external_id IN ('t7d-1', 't7d-2')",
	            (long long)lib);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_departures"), 0);
	assert_int_equal(pgtest_int(c, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = %lld",
	                            (long long)lib),
	                 598);

	/* A fence in progress holds the admission row: busy, nothing deleted. */
	pgtest_exec(f, "BEGIN");
	pgtest_exec(f, "SELECT 1 FROM cleanup.library_admission WHERE library_id = %lld FOR UPDATE", (long long)lib);
	pgtest_fails(c, "55P03", "fenced", "DELETE FROM inventory.items WHERE library_id = %lld AND external_id = 't7d-4'",
	             (long long)lib);
	pgtest_exec(f, "ROLLBACK");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib),
	                 598);

	/* Draining: every third row seen (3, 6, ..., 600). Before any step,
	 * 4 unseen and 2 seen rows go; each is recorded for the job. */
	job = pgtest_job_create(c, "prune", lib);
	pgtest_exec(c,
	            "SELECT cleanup.job_append(%lld, ARRAY(SELECT 't7d-' || g FROM generate_series(1, 600) g "
	            "WHERE g %% 3 = 0 ORDER BY g LIMIT 128))",
	            (long long)job);
	pgtest_exec(c,
	            "SELECT cleanup.job_append(%lld, ARRAY(SELECT 't7d-' || g FROM generate_series(1, 600) g "
	            "WHERE g %% 3 = 0 ORDER BY g OFFSET 128))",
	            (long long)job);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 200)", (long long)job);
	pgtest_exec(c,
	            "DELETE FROM inventory.items WHERE library_id = %lld AND external_id IN "
	            "('t7d-590', 't7d-592', 't7d-593', 't7d-595', 't7d-591', 't7d-594')",
	            (long long)lib);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_departures WHERE job_id = %lld AND kind = 'deleted'",
	                            (long long)job),
	                 6);
	pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)job);
	assert_ledger(c, job);
	assert_int_equal(pgtest_int(c, "SELECT absent_early FROM cleanup.jobs WHERE id = %lld", (long long)job), 6);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib),
	                 198);
	pgtest_close_all(c, f, NULL);
}

/* T8: the audit names the login role beside the operator it was told, and
 * every parent delete of the engine is an audit row. */
static void test_T8_audit_names_role_and_parent_deletes(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t8");
	int64_t srv = pgtest_new_server(c, "t8"), lib = pgtest_new_library(c, srv, "t8", 10), job;
	char *out = NULL;

	(void)state;
	assert_int_equal(
	    pgtest_cli(&out, as_runner, "--json job create remove-library --library %lld", (long long)lib),
	    0);
	free(out);
	job = pgtest_int(c, "SELECT max(id) FROM cleanup.jobs WHERE library_id = %lld", (long long)lib);
	pgtest_cli_expect(0, as_runner, "--quiet job run %lld", (long long)job);
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.audit WHERE job_id = %lld AND action = 'delete-library' "
	                            "AND db_role = '" RUNNER "'",
	                            (long long)job),
	                 1);
	/* An operator action the console audits: the operator name it was
	 * told, and the login role beside it. */
	{
		PGconn *r = pgtest_connect(as_runner, "t8-runner");

		pgtest_exec(r, "SELECT cleanup.audit_record('alice', 'cancel', %lld, 'cancel job', 'refused')", (long long)job);
		PQfinish(r);
	}
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.audit WHERE job_id = %lld AND os_user = 'alice' "
	                            "AND db_role = '" RUNNER "'",
	                            (long long)job),
	                 1);
	PQfinish(c);
}

/* A role that may only connect sees and does nothing: no inventory, no
 * engine state or function, no engine table to lock; the advisory locks
 * any role can take (the engine's locks once were such) hold up nothing. */
static void test_connect_only_role_sees_and_does_nothing(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "connect-only"), *n;
	char *as_nobody = pgtest_with_user(conninfo, "t_bnd_nobody");
	int64_t srv = pgtest_new_server(c, "nobody"), lib = pgtest_new_library(c, srv, "nobody", 50), job;

	(void)state;
	pgtest_exec(c,
	            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 't_bnd_nobody') THEN "
	            "BEGIN CREATE ROLE t_bnd_nobody LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END; "
	            "END IF; END $$");
	n = pgtest_connect(as_nobody, "nobody");
	pgtest_fails(n, "42501", NULL, "SELECT count(*) FROM inventory.items");
	pgtest_fails(n, "42501", NULL, "SELECT count(*) FROM cleanup.jobs");
	pgtest_fails(n, "42501", NULL, "SELECT cleanup.status_json()");
	pgtest_fails(n, "42501", NULL, "SELECT cleanup.job_step(1, 1)");
	pgtest_fails(n, "42501", NULL, "SELECT inventory.count_declare(ARRAY[1]::bigint[])");
	pgtest_exec(n, "BEGIN");
	pgtest_fails(n, "42501", NULL, "LOCK TABLE cleanup.engine_locks IN ACCESS EXCLUSIVE MODE");
	pgtest_exec(n, "ROLLBACK");
	/* Advisory keys in every form the engine once used: nothing waits. */
	pgtest_begin(n, "SELECT pg_advisory_xact_lock((1::bigint << 40) | %lld), pg_advisory_xact_lock((2::bigint << 40) | %lld), "
	                "pg_advisory_xact_lock(1668050546, 1)",
	             (long long)srv, (long long)lib);
	job = pgtest_job_create(c, "remove-library", lib);
	pgtest_cli_expect(0, conninfo, "--quiet job run %lld", (long long)job);
	assert_ledger(c, job);
	pgtest_exec(n, "ROLLBACK");
	PQfinish(n);
	free(as_nobody);
	PQfinish(c);
}

/* T3: install gives writer logins bounded waits and idle transactions in
 * the installed database, and keeps a setting an operator made. */
static void test_T3_install_gives_writer_logins_bounded_waits(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "t3-install");
	cleanup_engine *e;
	cleanup_install_result r;
	cleanup_error err;
	char *v;

	(void)state;
	pgtest_exec(c,
	            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 't_bnd_writer2') THEN "
	            "BEGIN CREATE ROLE t_bnd_writer2 LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END; "
	            "END IF; END $$");
	pgtest_exec(c, "GRANT cleanup_writer TO t_bnd_writer2");
	pgtest_exec(c, "ALTER ROLE t_bnd_writer2 RESET ALL");
	pgtest_exec(c, "ALTER ROLE t_bnd_writer2 SET lock_timeout = '3s'");
	/* An install that applies the definitions (an upgrade: the bundle
	 * recorded is not this binary's) gives writer logins their waits. */
	pgtest_exec(c, "UPDATE cleanup.schema_info SET bundle_sha256 = 'an-older-bundle'");
	e = pgtest_engine(conninfo);
	assert_int_equal(cleanup_install(&r, e, &err), CLEANUP_OK);
	assert_true(r.functions_applied);
	cleanup_engine_close(e);
	{
		char *as_w2 = pgtest_with_user(conninfo, "t_bnd_writer2");
		PGconn *w = pgtest_connect(as_w2, "t3-install-writer");

		v = pgtest_text(w, "SHOW idle_in_transaction_session_timeout");
		assert_string_equal(v, "1min");
		free(v);
		v = pgtest_text(w, "SHOW lock_timeout");
		assert_string_equal(v, "3s");   /* the operator's, kept */
		free(v);
		PQfinish(w);
		free(as_w2);
	}
	PQfinish(c);
}

PGTEST_MAIN(cmocka_unit_test(test_T1_writer_cannot_set_change_or_clear_a_claim),
            cmocka_unit_test(test_T1_T2_forged_marks_neither_delete_nor_wedge),
            cmocka_unit_test(test_T1_claim_rechecked_for_scope_and_version),
            cmocka_unit_test(test_T3_table_lock_busy_names_holder),
            cmocka_unit_test(test_T3_idle_declared_writer_named_at_finalize),
            cmocka_unit_test(test_T4_held_row_backs_off_instead_of_passing),
            cmocka_unit_test(test_T4_held_claim_is_busy_not_empty_steps),
            cmocka_unit_test(test_T4_held_dependent_skipped_and_named),
            cmocka_unit_test(test_T4_held_dependent_of_a_claim_named),
            cmocka_unit_test(test_T3_held_library_dependent_named),
            cmocka_unit_test(test_T3_writer_trigger_locks_are_named),
            cmocka_unit_test(test_T3_library_count_never_makes_writers_or_steps_wait),
            cmocka_unit_test(test_T5_every_engine_function_pins_search_path),
            cmocka_unit_test(test_T5_callers_search_path_cannot_change_the_id_rule),
            cmocka_unit_test(test_C10_id_rule_refuses_edge_spaces_and_invisibles),
            cmocka_unit_test(test_C10_check_and_rule_agree),
            cmocka_unit_test(test_T5_ids_outside_the_key_space_are_refused),
            cmocka_unit_test(test_T5_declared_locks_inside_savepoints),
            cmocka_unit_test(test_C9_dependent_written_while_collecting_protects_its_item),
            cmocka_unit_test(test_T7_every_row_accounted_while_writers_move_rows_out),
            cmocka_unit_test(test_T7_deletes_recorded_only_where_a_job_drains),
            cmocka_unit_test(test_T8_audit_names_role_and_parent_deletes),
            cmocka_unit_test(test_connect_only_role_sees_and_does_nothing),
            cmocka_unit_test(test_T3_install_gives_writer_logins_bounded_waits))

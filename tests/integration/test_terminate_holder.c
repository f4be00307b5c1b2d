/* T3: the console's "terminate this holder"
 * (cleanup_locks_terminate_holder, sql/functions/087_terminate_holder.sql).
 * The re-check is server-side, in the statement that terminates: a pid
 * that holds up no cleanup job is refused and stays alive; a pid that a
 * job's session waits for, or that holds what a busy job needs, is ended.
 * Every call writes one audit row naming the holder. A read-only
 * connection ends nothing. Synchronisation by pg_blocking_pids() and
 * pg_stat_activity only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/install.h"
#include "cleanup/job.h"
#include "cleanup/locks.h"
#include "pgtest.h"

PGTEST_DB_GROUP(conninfo, pgtest_seeded_db("terminate_holder", 2, 2, 5))

/* o observes, e is the engine that terminates (per test). */
PGTEST_OBSERVER(conninfo)

static int64_t audit_rows(void)
{
	return pgtest_int(o, "SELECT count(*) FROM cleanup.audit WHERE action = 'terminate-holder'");
}

static int alive(int pid)
{
	return (int)pgtest_int(o, "SELECT count(*) FROM pg_stat_activity WHERE pid = %d", pid);
}

/* Terminating PID through E (as USER, confirmation "terminate") ends it
 * on behalf of job JOB: not refused, terminated, and gone as O sees it.
 * The outcome into *OUT. */
static void expect_ended(cleanup_holder_outcome *out, int pid, const char *user, int64_t job)
{
	cleanup_error err;

	assert_int_equal(cleanup_locks_terminate_holder(out, e, pid, user, "terminate", &err), CLEANUP_OK);
	assert_false(out->refused);
	assert_true(out->terminated);
	assert_int_equal(out->job_id, job);
	assert_int_equal(alive(pid), 0);
}

/* An idle-in-transaction session with a row locked, but no job waits for
 * it: refused, still alive, audited as refused with the holder named. */
static void test_refuses_pid_that_blocks_nothing(void **state)
{
	PGconn *holder = pgtest_connect(conninfo, "idle-holder");
	cleanup_holder_outcome out;
	cleanup_error err;
	int hpid = PQbackendPID(holder);
	int64_t before = audit_rows();

	(void)state;
	pgtest_begin(holder, "SELECT 1 FROM inventory.libraries WHERE id = 1 FOR UPDATE");
	assert_int_equal(cleanup_locks_terminate_holder(&out, e, hpid, "alice", "terminate 1", &err), CLEANUP_OK);
	assert_true(out.refused);
	assert_false(out.terminated);
	assert_int_equal(out.job_id, -1);
	assert_non_null(strstr(out.outcome, "refused: pid"));
	assert_non_null(strstr(out.outcome, "holds up no cleanup job now"));
	assert_non_null(strstr(out.outcome, "application idle-holder"));
	assert_int_equal(alive(hpid), 1);
	assert_int_equal(audit_rows(), before + 1);
	assert_text_equal(pgtest_text(o, "SELECT os_user || '|' || confirmation || '|' || left(outcome, 8) FROM cleanup.audit "
	                                 "WHERE id = %lld",
	                              (long long)out.audit_id),
	                  "alice|terminate 1|refused:");
	/* A pid that is no backend at all: refused, audited. */
	assert_int_equal(cleanup_locks_terminate_holder(&out, e, 999999, NULL, NULL, &err), CLEANUP_OK);
	assert_true(out.refused);
	assert_non_null(strstr(out.outcome, "no other client backend"));
	/* Nor this session itself. */
	assert_int_equal(cleanup_locks_terminate_holder(&out, e, cleanup_engine_backend_pid(e), NULL, NULL, &err),
	                 CLEANUP_OK);
	assert_true(out.refused);
	assert_int_equal(audit_rows(), before + 3);
	pgtest_exec(holder, "ROLLBACK");
	PQfinish(holder);
}

/* A job's session waits for a row lock the holder has: ended, audited
 * with the job, and the waiting session goes on. */
static void test_ends_holder_a_job_session_waits_for(void **state)
{
	PGconn *holder = pgtest_connect(conninfo, "psql");
	PGconn *waiter = pgtest_connect(conninfo, "cleanupctl:job:42:step");
	cleanup_holder_outcome out;
	int hpid = PQbackendPID(holder);
	int64_t item = pgtest_int(o, "SELECT min(id) FROM inventory.items");

	(void)state;
	pgtest_begin(holder, "SELECT 1 FROM inventory.items WHERE id = %lld FOR UPDATE", (long long)item);
	pgtest_send_blocked(o, waiter, "SELECT 1 FROM inventory.items WHERE id = %lld FOR UPDATE", (long long)item);
	expect_ended(&out, hpid, "bob", 42);
	assert_non_null(strstr(out.outcome, "done: terminated: pid"));
	assert_non_null(strstr(out.outcome, "waits for"));
	assert_string_equal(pgtest_finish(waiter), "");
	assert_int_equal(pgtest_int(o, "SELECT job_id FROM cleanup.audit WHERE id = %lld", (long long)out.audit_id), 42);
	pgtest_close_all(holder, waiter, NULL);
}

/* A job marked busy (job_note_busy, as its runner does after a busy
 * answer) whose row a session holds: ended; once the holder is gone the
 * same call refuses (nothing is held up any more). A read-only connection
 * ends nothing and records nothing. */
static void test_ends_holder_of_busy_job_then_refuses(void **state)
{
	PGconn *holder = pgtest_connect(conninfo, "psql");
	PGconn *ro = pgtest_connect(conninfo, "readonly-console");
	cleanup_holder_outcome out;
	cleanup_error err;
	int hpid = PQbackendPID(holder);
	int64_t job = pgtest_job_create(o, "prune", 2), before;

	(void)state;
	pgtest_begin(holder, "SELECT 1 FROM cleanup.jobs WHERE id = %lld FOR UPDATE", (long long)job);
	pgtest_exec(o, "SELECT cleanup.job_note_busy(%lld, 'busy: test')", (long long)job);
	before = audit_rows();
	pgtest_exec(ro, "SET default_transaction_read_only = on");
	pgtest_fails(ro, "25006", NULL, "SELECT * FROM cleanup.terminate_holder(%d, 'u', 'y')", hpid);
	assert_int_equal(alive(hpid), 1);
	assert_int_equal(audit_rows(), before);

	expect_ended(&out, hpid, NULL, job);
	{
		char want[64];

		snprintf(want, sizeof want, "the row of job %lld, which job %lld waits for", (long long)job, (long long)job);
		assert_non_null(strstr(out.outcome, want));
	}
	assert_non_null(strstr(out.outcome, "role "));
	assert_non_null(strstr(out.outcome, "idle in transaction"));
	/* Again: the pid is gone, nothing to end. */
	assert_int_equal(cleanup_locks_terminate_holder(&out, e, hpid, NULL, "terminate", &err), CLEANUP_OK);
	assert_true(out.refused);
	assert_int_equal(audit_rows(), before + 2);
	pgtest_close_all(holder, ro, NULL);
}

/* T3 at the seal: a writer's open transaction holds the admission row the
 * seal needs; the seal answers busy at once and changes nothing (A2), and
 * the operator's terminate-holder ends the writer, naming the admission
 * row and the job (before, it refused: "holds up no cleanup job", since a
 * collecting job did not count); the next seal goes through. */
static void test_ends_writer_a_refused_seal_names(void **state)
{
	PGconn *w = pgtest_connect(conninfo, "sync-writer");
	cleanup_holder_outcome out;
	cleanup_job job;
	cleanup_error err;
	int wpid = PQbackendPID(w);
	int64_t id = pgtest_job_create(o, "prune", 3);
	char want[96];

	(void)state;
	pgtest_begin(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (3, 'in-flight')");
	assert_int_equal(cleanup_job_seal(&job, e, id, 0, &err), CLEANUP_EBUSY);
	cleanup_job_reset(&job);
	if (!strstr(err.detail, "held by pid"))
		fail_msg("the busy seal does not name its holder: %s / %s", err.message, err.detail);
	expect_ended(&out, wpid, NULL, id);
	snprintf(want, sizeof want, "which job %lld waits for", (long long)id);
	if (!strstr(out.outcome, "holds the admission row of library 3") || !strstr(out.outcome, want))
		fail_msg("outcome \"%s\" does not name the admission row and \"%s\"", out.outcome, want);
	/* The holder gone, the seal goes through. */
	assert_int_equal(cleanup_job_seal(&job, e, id, 0, &err), CLEANUP_OK);
	assert_string_equal(job.phase, "draining");
	cleanup_job_reset(&job);
	pgtest_exec(o, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)id);
	PQfinish(w);
}

/* Two sync writer logins (members of the writer role, not superusers)
 * each leave an update in library 4 open: both hold its admission row
 * FOR SHARE, a multixact. The seal is refused naming both; ending the
 * first leaves the second named; ending the second lets the seal through.
 * The writers misbehave as a real one can, with no privilege beyond the
 * writer role's. */
static void test_ends_writer_logins_sharing_the_admission_row(void **state)
{
	char *as_writer;
	PGconn *w[2];
	int pid[2], i;
	cleanup_holder_outcome out;
	cleanup_job job;
	cleanup_error err;
	int64_t id;
	char want[64];

	(void)state;
	pgtest_login_role(o, "th_writer", CLEANUP_ROLE_WRITER);
	as_writer = pgtest_with_user(conninfo, "th_writer");
	id = pgtest_job_create(o, "prune", 4);
	for (i = 0; i < 2; i++) {
		w[i] = pgtest_connect(as_writer, i ? "sync-writer-b" : "sync-writer-a");
		pid[i] = PQbackendPID(w[i]);
		assert_int_equal(pgtest_int(w[i], "SELECT count(*) FROM pg_roles WHERE rolname = current_user AND rolsuper"), 0);
		pgtest_exec(w[i], "BEGIN");
		/* An update of its own item (an insert would also queue on the
		 * library's counter behind the other writer). */
		pgtest_exec(w[i], "SET statement_timeout = '20s'");
		pgtest_exec(w[i],
		            "UPDATE inventory.items SET title = 'open-%d' WHERE id = "
		            "(SELECT id FROM inventory.items WHERE library_id = 4 ORDER BY id OFFSET %d LIMIT 1)",
		            i, i);
	}
	assert_int_equal(cleanup_job_seal(&job, e, id, 0, &err), CLEANUP_EBUSY);
	cleanup_job_reset(&job);
	for (i = 0; i < 2; i++) {
		snprintf(want, sizeof want, "pid %d (role th_writer", pid[i]);
		if (!strstr(err.detail, want))
			fail_msg("the busy seal does not name writer %d (%s): %s", i, want, err.detail);
	}
	expect_ended(&out, pid[0], NULL, id);
	if (!strstr(out.outcome, "holds the admission row of library 4"))
		fail_msg("outcome \"%s\" does not name the admission row", out.outcome);
	/* The second still holds the row: still busy, and it alone is named. */
	assert_int_equal(cleanup_job_seal(&job, e, id, 0, &err), CLEANUP_EBUSY);
	cleanup_job_reset(&job);
	snprintf(want, sizeof want, "pid %d (role th_writer", pid[1]);
	if (!strstr(err.detail, want))
		fail_msg("the second busy seal does not name writer b (%s): %s", want, err.detail);
	snprintf(want, sizeof want, "pid %d ", pid[0]);
	if (strstr(err.detail, want))
		fail_msg("the ended writer is still named: %s", err.detail);
	expect_ended(&out, pid[1], NULL, id);
	assert_int_equal(cleanup_job_seal(&job, e, id, 0, &err), CLEANUP_OK);
	assert_string_equal(job.phase, "draining");
	cleanup_job_reset(&job);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM inventory.items WHERE library_id = 4 AND title LIKE 'open-%%'"), 0);
	pgtest_exec(o, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)id);
	for (i = 0; i < 2; i++)
		PQfinish(w[i]);
	free(as_writer);
}

PGTEST_MAIN(PGTEST_WITH_OBSERVER(test_refuses_pid_that_blocks_nothing),
            PGTEST_WITH_OBSERVER(test_ends_holder_a_job_session_waits_for),
            PGTEST_WITH_OBSERVER(test_ends_holder_of_busy_job_then_refuses),
            PGTEST_WITH_OBSERVER(test_ends_writer_a_refused_seal_names),
            PGTEST_WITH_OBSERVER(test_ends_writer_logins_sharing_the_admission_row))

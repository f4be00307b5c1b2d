/* The lock view against the real PostgreSQL: two (and three) sessions
 * contend for a row or an engine advisory lock, and cleanup_locks_snapshot,
 * `cleanupctl locks` and `cleanupctl locks --json` show the blocking pair
 * with the right pids, blocked_by, what is waited for, and the job id from
 * application_name. Synchronisation by pg_blocking_pids() only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/install.h"
#include "cleanup/locks.h"
#include "pgtest.h"

PGTEST_DB_GROUP(conninfo, pgtest_seeded_db("locks", 1, 2, 5))

static const cleanup_lock_row *find(const cleanup_lock_row *rows, size_t n, int pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rows[i].pid == pid)
			return &rows[i];
	return NULL;
}

static void snapshot(cleanup_lock_row **rows, size_t *n)
{
	cleanup_engine *e = pgtest_engine(conninfo);
	cleanup_error err;

	if (cleanup_locks_snapshot(rows, n, e, &err) != CLEANUP_OK)
		fail_msg("locks snapshot: %s", err.message);
	/* The engine's own backend is never listed. */
	assert_null(find(*rows, *n, cleanup_engine_backend_pid(e)));
	cleanup_engine_close(e);
}

/* A job's step holds a row lock; a writer waits for it. */
static void test_locks_shows_row_lock_blocking_pair(void **state)
{
	PGconn *holder = pgtest_connect(conninfo, "cleanupctl:job:42:step");
	PGconn *waiter = pgtest_connect(conninfo, "cleanupctl:writer:all");
	PGconn *observer = pgtest_connect(conninfo, "observer");
	int hpid = PQbackendPID(holder), wpid = PQbackendPID(waiter);
	int64_t item = pgtest_int(observer, "SELECT min(id) FROM inventory.items");
	cleanup_lock_row *rows = NULL;
	const cleanup_lock_row *h, *w;
	size_t n = 0, order[16];
	int depth[16];
	char *out = NULL;

	(void)state;
	pgtest_begin(holder, "UPDATE inventory.items SET title = 'held' WHERE id = %lld", (long long)item);
	pgtest_send(waiter, "UPDATE inventory.items SET title = 'waiting' WHERE id = %lld", (long long)item);
	pgtest_wait_blocked(observer, wpid, 10000);

	snapshot(&rows, &n);
	h = find(rows, n, hpid);
	w = find(rows, n, wpid);
	assert_non_null(h);
	assert_non_null(w);
	/* An idle backend of another application, blocking nobody: not listed. */
	assert_null(find(rows, n, PQbackendPID(observer)));

	assert_int_equal(h->job_id, 42);
	assert_int_equal(h->nblocked_by, 0);
	assert_string_equal(h->application_name, "cleanupctl:job:42:step");
	assert_string_equal(h->state, "idle in transaction");
	assert_true(h->xact_age_ms >= 0);
	assert_true(h->wait_ms < 0);
	assert_string_equal(h->mode, "");

	assert_int_equal(w->job_id, -1);
	assert_int_equal(w->nblocked_by, 1);
	assert_int_equal(w->blocked_by[0], hpid);
	assert_true(cleanup_lock_blocked_by(w, hpid));
	assert_string_equal(w->state, "active");
	assert_string_equal(w->wait_event_type, "Lock");
	assert_string_equal(w->wait_event, "transactionid");
	assert_string_equal(w->locktype, "transactionid");
	assert_string_equal(w->mode, "ShareLock");
	assert_string_equal(w->relation, "inventory.items"); /* from the tuple lock it holds */
	assert_true(w->wait_ms >= 0);
	assert_non_null(strstr(w->query, "UPDATE inventory.items SET title = 'waiting'"));

	/* The tree: the holder, then the waiter under it. */
	assert_true(n <= 16);
	assert_int_equal(cleanup_locks_tree(order, depth, rows, n), 1);
	for (size_t i = 0; i < n; i++) {
		if (rows[order[i]].pid == hpid) {
			assert_int_equal(depth[i], 0);
			assert_true(i + 1 < n);
			assert_int_equal(rows[order[i + 1]].pid, wpid);
			assert_int_equal(depth[i + 1], 1);
		}
	}
	free(rows);

	/* The CLI: the tree in text, and the same facts in --json. */
	assert_int_equal(pgtest_sh(&out, "'%s' --db \"%s\" locks", pgtest_cleanupctl(), conninfo), 0);
	{
		char want[64];

		snprintf(want, sizeof want, "\n%d ", hpid);
		assert_non_null(strstr(out, want));
		snprintf(want, sizeof want, "\u2514\u2500 %d ", wpid);
		assert_non_null(strstr(out, want));
		assert_true(strstr(out, want) > strstr(out, "cleanupctl:job:42:step"));
	}
	assert_non_null(strstr(out, "[job 42]"));
	assert_non_null(strstr(out, "ShareLock on transactionid (inventory.items)"));
	assert_non_null(strstr(out, "1 blocked"));
	free(out);
	assert_int_equal(pgtest_sh(&out,
	                           "'%s' --db \"%s\" --json locks | jq -r '.blocked, "
	                           "(.backends[] | select(.pid == %d) | \"\\(.blocked_by[0]) \\(.mode) \\(.job_id)\"), "
	                           "(.backends[] | select(.pid == %d) | \"\\(.job_id) \\(.blocked_by | length)\")'",
	                           pgtest_cleanupctl(), conninfo, wpid, hpid),
	                 0);
	{
		char want[128];

		snprintf(want, sizeof want, "1\n%d ShareLock null\n42 0\n", hpid);
		assert_string_equal(out, want);
	}
	free(out);

	/* Released: the waiter's update goes through; both stay listed as
	 * cleanupctl backends, blocking nobody. */
	pgtest_exec(holder, "COMMIT");
	assert_string_equal(pgtest_finish(waiter), "");
	snapshot(&rows, &n);
	h = find(rows, n, hpid);
	w = find(rows, n, wpid);
	assert_non_null(h);
	assert_non_null(w);
	assert_int_equal(w->nblocked_by, 0);
	assert_string_equal(w->mode, "");
	assert_true(w->wait_ms < 0);
	free(rows);
	pgtest_close_all(holder, waiter, observer, NULL);
}

/* The engine's advisory locks are named: coordinator of a server, library. */
static void test_locks_names_engine_advisory_locks(void **state)
{
	PGconn *holder = pgtest_connect(conninfo, "cleanupctl:job:7:run");
	PGconn *w1 = pgtest_connect(conninfo, "psql");
	PGconn *w2 = pgtest_connect(conninfo, "psql");
	PGconn *observer = pgtest_connect(conninfo, "observer");
	cleanup_lock_row *rows = NULL;
	const cleanup_lock_row *r;
	size_t n = 0;

	(void)state;
	pgtest_begin(holder, "SELECT pg_advisory_xact_lock(cleanup.coordinator_key(3))");
	pgtest_exec(holder, "SELECT pg_advisory_xact_lock(cleanup.library_key(1099511627775))");
	pgtest_send(w1, "SELECT pg_advisory_xact_lock(cleanup.coordinator_key(3))");
	pgtest_send(w2, "SELECT pg_advisory_xact_lock(cleanup.library_key(1099511627775))");
	pgtest_wait_blocked(observer, PQbackendPID(w1), 10000);
	pgtest_wait_blocked(observer, PQbackendPID(w2), 10000);

	snapshot(&rows, &n);
	r = find(rows, n, PQbackendPID(w1));
	assert_non_null(r);
	assert_string_equal(r->locktype, "advisory");
	assert_string_equal(r->mode, "ExclusiveLock");
	assert_string_equal(r->relation, "coordinator of server 3");
	assert_int_equal(r->blocked_by[0], PQbackendPID(holder));
	r = find(rows, n, PQbackendPID(w2));
	assert_non_null(r);
	assert_string_equal(r->relation, "library 1099511627775");
	r = find(rows, n, PQbackendPID(holder));
	assert_non_null(r);
	assert_int_equal(r->job_id, 7);
	free(rows);

	pgtest_exec(holder, "COMMIT");
	assert_string_equal(pgtest_finish(w1), "");
	assert_string_equal(pgtest_finish(w2), "");
	pgtest_close_all(holder, w1, w2, observer, NULL);
}

/* A chain of three: the tuple-lock waiter sits under the first waiter. */
static void test_locks_chain_of_three(void **state)
{
	PGconn *a = pgtest_connect(conninfo, "cleanupctl:job:9:step");
	PGconn *b = pgtest_connect(conninfo, "writer-b");
	PGconn *c = pgtest_connect(conninfo, "writer-c");
	PGconn *observer = pgtest_connect(conninfo, "observer");
	int64_t item = pgtest_int(observer, "SELECT max(id) FROM inventory.items");
	cleanup_lock_row *rows = NULL;
	size_t n = 0, order[16], i;
	int depth[16], seen = 0;

	(void)state;
	pgtest_begin(a, "SELECT 1 FROM inventory.items WHERE id = %lld FOR UPDATE", (long long)item);
	pgtest_send_blocked(observer, b, "SELECT 1 FROM inventory.items WHERE id = %lld FOR UPDATE", (long long)item);
	pgtest_send_blocked(observer, c, "SELECT 1 FROM inventory.items WHERE id = %lld FOR UPDATE", (long long)item);

	snapshot(&rows, &n);
	assert_true(n >= 3 && n <= 16);
	assert_int_equal(cleanup_locks_tree(order, depth, rows, n), 2);
	for (i = 0; i < n; i++) {
		int pid = rows[order[i]].pid;

		if (pid == PQbackendPID(a)) {
			assert_int_equal(depth[i], 0);
			seen |= 1;
		} else if (pid == PQbackendPID(b)) {
			assert_int_equal(depth[i], 1);
			assert_true(seen & 1);
			seen |= 2;
		} else if (pid == PQbackendPID(c)) {
			/* c waits for b's tuple lock (or for a's transaction). */
			assert_true(depth[i] >= 1);
			assert_true(seen & 1);
			seen |= 4;
		}
	}
	assert_int_equal(seen, 7);
	free(rows);
	pgtest_exec(a, "COMMIT");
	assert_string_equal(pgtest_finish(b), "");
	assert_string_equal(pgtest_finish(c), "");
	pgtest_close_all(a, b, c, observer, NULL);
}

/* T3 for the least-privileged on-call login: a console login (member of
 * cleanup_console only: no superuser, no pg_read_all_stats) sees the sync
 * writers that hold up cleanup though they are other roles' sessions. Two
 * writer logins (cleanup_writer) contend for an item row: writer A's
 * update stays open (idle in transaction), writer B waits for it. The
 * console login's lock view lists both with their state and the blocking
 * pair, and its holders list (what T acts on) names A by role; the query
 * text of another role's session stays hidden from it, as PostgreSQL hides
 * it; `cleanupctl locks --json` run as that login says the same. */
static void test_T3_console_login_sees_other_roles_holders(void **state)
{
	PGconn *o = pgtest_connect(conninfo, "observer");
	PGconn *a, *b, *con;
	char *as_a, *as_b, *as_console, *out = NULL;
	int64_t item = pgtest_int(o, "SELECT min(id) FROM inventory.items");
	int apid, bpid;
	char want[160];

	(void)state;
	pgtest_login_role(o, "lk_writer_a", CLEANUP_ROLE_WRITER);
	pgtest_login_role(o, "lk_writer_b", CLEANUP_ROLE_WRITER);
	pgtest_login_role(o, "lk_oncall", CLEANUP_ROLE_CONSOLE);
	as_a = pgtest_with_user(conninfo, "lk_writer_a");
	as_b = pgtest_with_user(conninfo, "lk_writer_b");
	as_console = pgtest_with_user(conninfo, "lk_oncall");
	a = pgtest_connect(as_a, "sync-a");
	b = pgtest_connect(as_b, "sync-b");
	con = pgtest_connect(as_console, "oncall");
	apid = PQbackendPID(a);
	bpid = PQbackendPID(b);
	assert_int_equal(pgtest_int(con, "SELECT count(*) FROM pg_roles WHERE rolname = current_user AND (rolsuper "
	                                 "OR pg_has_role(current_user, 'pg_read_all_stats', 'USAGE'))"),
	                 0);
	pgtest_exec(a, "BEGIN");
	pgtest_exec(a, "UPDATE inventory.items SET title = 'held by a' WHERE id = %lld", (long long)item);
	pgtest_send(b, "UPDATE inventory.items SET title = 'waiting b' WHERE id = %lld", (long long)item);
	pgtest_wait_blocked(o, bpid, 10000);
	/* What the login may read of pg_stat_activity itself: nothing of them. */
	assert_int_equal(pgtest_int(con, "SELECT count(*) FROM pg_stat_activity WHERE pid IN (%d, %d) AND state IS NOT NULL",
	                            apid, bpid),
	                 0);

	/* The lock view as that login: the pair, states, the wait; no text. */
	assert_int_equal(pgtest_int(con,
	                            "SELECT count(*) FROM cleanup.locks_tree() t WHERE (t.pid = %d AND t.state = "
	                            "'idle in transaction' AND t.query = '<insufficient privilege>') OR (t.pid = %d AND "
	                            "t.blocked_by = ARRAY[%d] AND t.state = 'active' AND t.wait_event_type = 'Lock' AND "
	                            "t.query = '<insufficient privilege>')",
	                            apid, bpid, apid),
	                 2);
	/* The holders T acts on, as that login: A, by role, holding the items. */
	assert_int_equal(pgtest_int(con,
	                            "SELECT count(*) FROM cleanup.idle_holders(0) h WHERE h.pid = %d AND h.role = "
	                            "'lk_writer_a' AND h.state = 'idle in transaction' AND h.idle AND h.holds LIKE "
	                            "'%%on inventory.items%%'",
	                            apid),
	                 1);
	/* A superuser still reads the text. */
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM cleanup.locks_tree() WHERE pid = %d AND query LIKE "
	                               "'UPDATE inventory.items SET title = ''waiting b''%%'",
	                            bpid),
	                 1);
	/* The CLI as that login. */
	assert_int_equal(pgtest_sh(&out,
	                           "'%s' --db \"%s\" --json locks | jq -r '.blocked, (.backends[] | "
	                           "select(.pid == %d) | \"\\(.blocked_by[0]) \\(.query)\")'",
	                           pgtest_cleanupctl(), as_console, bpid),
	                 0);
	snprintf(want, sizeof want, "1\n%d <insufficient privilege>\n", apid);
	assert_string_equal(out, want);
	free(out);

	pgtest_exec(a, "ROLLBACK");
	assert_string_equal(pgtest_finish(b), "");
	PQfinish(a);
	PQfinish(b);
	PQfinish(con);
	PQfinish(o);
	free(as_a);
	free(as_b);
	free(as_console);
}

PGTEST_MAIN(cmocka_unit_test(test_locks_shows_row_lock_blocking_pair),
            cmocka_unit_test(test_locks_names_engine_advisory_locks),
            cmocka_unit_test(test_locks_chain_of_three),
            cmocka_unit_test(test_T3_console_login_sees_other_roles_holders))

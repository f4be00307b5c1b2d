/* The audit trail of operator actions (cleanup/audit.h) against the real
 * PostgreSQL: rows carry the OS user, the connection's application_name,
 * the action, job, confirmation and outcome; recording notifies consoles;
 * over-long texts are cut, never lost; an empty action is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/audit.h"
#include "pgtest.h"

PGTEST_DB_GROUP(conninfo, pgtest_fresh_db("audit"))
PGTEST_OBSERVER(conninfo)

static void test_audit_row_written_with_application_name(void **state)
{
	PGconn *listener = pgtest_connect(conninfo, "listener");
	cleanup_engine *console = NULL;
	cleanup_error err;
	cleanup_audit_entry a = {0};
	cleanup_audit_row *rows = NULL;
	PGnotify *n;
	size_t nrows = 0;
	int64_t id = -1;
	char *v;

	(void)state;
	pgtest_exec(listener, "LISTEN cleanup_events");
	assert_int_equal(cleanup_engine_open(&console, conninfo, "cleanupctl:job:7:console", &err), CLEANUP_OK);
	a.action = "step";
	a.job_id = 7;
	a.confirmation = "7";
	a.outcome = "done: step 3 deleted 12";
	assert_int_equal(cleanup_audit_record(&id, console, &a, &err), CLEANUP_OK);
	assert_true(id > 0);

	v = pgtest_text(listener, "SELECT application_name FROM cleanup.audit WHERE id = %lld", (long long)id);
	assert_string_equal(v, "cleanupctl:job:7:console");
	free(v);
	v = pgtest_text(listener, "SELECT os_user FROM cleanup.audit WHERE id = %lld", (long long)id);
	assert_string_equal(v, cleanup_audit_os_user());
	free(v);
	v = pgtest_text(listener, "SELECT format('%%s|%%s|%%s|%%s', action, job_id, confirmation, outcome) "
	                          "FROM cleanup.audit WHERE id = %lld",
	                (long long)id);
	assert_string_equal(v, "step|7|7|done: step 3 deleted 12");
	free(v);
	assert_int_equal(pgtest_int(listener, "SELECT count(*) FROM cleanup.audit WHERE id = %lld "
	                                      "AND at > now() - interval '1 minute'",
	                            (long long)id),
	                 1);

	/* The console hears about it. */
	PQconsumeInput(listener);
	n = PQnotifies(listener);
	assert_non_null(n);
	assert_string_equal(n->relname, "cleanup_events");
	assert_string_equal(n->extra, "7");
	PQfreemem(n);

	/* Read back, newest first; a refusal without a job. */
	a.action = "remove-library";
	a.job_id = -1;
	a.confirmation = "Movis";
	a.outcome = "not confirmed: typed \"Movis\", expected \"Movies\"; nothing was done";
	assert_int_equal(cleanup_audit_record(NULL, console, &a, &err), CLEANUP_OK);
	assert_int_equal(cleanup_audit_recent(&rows, &nrows, console, 10, &err), CLEANUP_OK);
	assert_int_equal(nrows, 2);
	assert_string_equal(rows[0].action, "remove-library");
	assert_int_equal(rows[0].job_id, -1);
	assert_string_equal(rows[0].confirmation, "Movis");
	assert_string_equal(rows[1].action, "step");
	assert_int_equal(rows[1].job_id, 7);
	free(rows);
	cleanup_engine_close(console);
	PQfinish(listener);
}

static void test_audit_long_outcome_is_cut_not_lost(void **state)
{
	cleanup_audit_entry a = {0};
	cleanup_error err;
	char *big = malloc(5000);
	int64_t id;

	(void)state;
	memset(big, 'x', 4999);
	big[4999] = '\0';
	a.action = "seal";
	a.job_id = 3;
	a.outcome = big;
	a.confirmation = big;
	assert_int_equal(cleanup_audit_record(&id, e, &a, &err), CLEANUP_OK);
	assert_int_equal(pgtest_int(o, "SELECT length(outcome) FROM cleanup.audit WHERE id = %lld", (long long)id),
	                 2000);
	assert_int_equal(
		pgtest_int(o, "SELECT length(confirmation) FROM cleanup.audit WHERE id = %lld", (long long)id), 400);
	free(big);
}

static void test_audit_needs_an_action(void **state)
{
	cleanup_audit_entry a = {0};
	cleanup_error err;
	int64_t before = pgtest_int(o, "SELECT count(*) FROM cleanup.audit");

	(void)state;
	a.action = "";
	a.job_id = -1;
	assert_int_equal(cleanup_audit_record(NULL, e, &a, &err), CLEANUP_EINVAL);
	assert_int_equal(pgtest_int(o, "SELECT count(*) FROM cleanup.audit"), before);
	/* The server function refuses too, with a named SQLSTATE. */
	pgtest_fails(o, "CU101", NULL, "SELECT cleanup.audit_record('u', '', NULL, NULL, 'x')");
}

PGTEST_MAIN(cmocka_unit_test(test_audit_row_written_with_application_name),
            PGTEST_WITH_OBSERVER(test_audit_long_outcome_is_cut_not_lost),
            PGTEST_WITH_OBSERVER(test_audit_needs_an_action))

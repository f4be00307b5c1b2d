/* Two-connection tests of the admission guards and the seal fence
 * (A1-A6, C6) against the real PostgreSQL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pgtest.h"

static char *conninfo;

static int setup(void **state)
{
	PGconn *c;

	(void)state;
	conninfo = pgtest_fresh_db("admission");
	c = pgtest_connect(conninfo, "setup");
	pgtest_exec(c, "SELECT cleanup.seed_demo(2, 2, 10)");
	PQfinish(c);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(conninfo);
	return 0;
}

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
	job = pgtest_int(o, "SELECT id FROM cleanup.job_create('prune', 1)");
	pgtest_exec(w, "BEGIN");
	pgtest_exec(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (1, 'in-flight')");
	rc = pgtest_sh(&out, "'%s' --db \"%s\" job seal %lld --expected 0 2>&1", pgtest_cleanupctl(), conninfo,
	               (long long)job);
	assert_int_equal(rc, 3);
	assert_non_null(strstr(out, "retry later"));
	free(out);
	assert_string_equal(pgtest_text(o, "SELECT phase FROM cleanup.jobs WHERE id = %lld", (long long)job),
	                    "collecting");
	assert_string_equal(pgtest_text(o, "SELECT state FROM cleanup.library_admission WHERE library_id = 1"),
	                    "open");
	pgtest_exec(w, "COMMIT");

	/* C6: once the writer committed, the seal fences the library. */
	rc = pgtest_sh(NULL, "'%s' --db \"%s\" job seal %lld --expected 0", pgtest_cleanupctl(), conninfo,
	               (long long)job);
	assert_int_equal(rc, 0);
	assert_string_equal(pgtest_text(o, "SELECT state FROM cleanup.library_admission WHERE library_id = 1"),
	                    "draining");
	assert_int_equal(pgtest_int(o, "SELECT high_water_id FROM cleanup.jobs WHERE id = %lld", (long long)job),
	                 pgtest_int(o, "SELECT max(id) FROM inventory.items WHERE library_id = 1"));

	/* A1, A6: inserts into the sealed library fail, other servers accept. */
	assert_string_equal(pgtest_fail(w, NULL, 0,
	                                "INSERT INTO inventory.items (library_id, external_id) VALUES (1, 'late')"),
	                    "CUA01");
	pgtest_exec(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (3, 'other-server')");
	PQfinish(w);
	PQfinish(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_A2_seal_busy_while_writer_admitted),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

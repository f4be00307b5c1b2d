/* The plan phase's dependency check (seed 004 section 3.1): a job whose
 * deletes would cascade through, or be restricted by, a foreign key the
 * protocol does not drain is refused before anything is fenced (exit 4,
 * naming the reference), so inventory is never drained towards a parent
 * delete that must fail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pgtest.h"

PGTEST_DB_GROUP(conninfo, pgtest_seeded_db("plan", 2, 2, 10))

static int cli(char **out, const char *args)
{
	return pgtest_sh(out, "'%s' --db \"%s\" %s 2>&1", pgtest_cleanupctl(), conninfo, args);
}

static void assert_untouched(PGconn *c)
{
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.jobs"), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.library_admission WHERE state <> 'open'"), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.server_admission WHERE state <> 'open'"), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items"), 40);
}

static void test_S11_restricting_reference_to_a_parent_refuses_removal(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "ddl");
	char *out = NULL;

	(void)state;
	pgtest_exec(c, "CREATE TABLE public.lib_notes (id int, library_id bigint REFERENCES inventory.libraries)");
	assert_int_equal(cli(&out, "job create remove-library --library 2"), 4);
	assert_non_null(strstr(out, "public.lib_notes(library_id) -> inventory.libraries ON DELETE no action"));
	free(out);
	assert_int_equal(cli(&out, "job create remove-server --server 1"), 4);
	assert_non_null(strstr(out, "lib_notes"));
	free(out);
	assert_untouched(c);

	/* A prune deletes items only: a reference to libraries does not matter. */
	assert_int_equal(cli(NULL, "job create prune --library 2"), 0);
	pgtest_exec(c, "SELECT cleanup.job_transition(id, 'cancel') FROM cleanup.jobs");
	pgtest_exec(c, "DELETE FROM cleanup.events");
	pgtest_exec(c, "DROP TABLE public.lib_notes");
	PQfinish(c);
}

static void test_S1_cascading_reference_to_items_refuses_every_kind(void **state)
{
	PGconn *c = pgtest_connect(conninfo, "ddl");
	char *out = NULL;
	int64_t jobs;

	(void)state;
	jobs = pgtest_int(c, "SELECT count(*) FROM cleanup.jobs");
	pgtest_exec(c, "CREATE TABLE public.retries (id int, item_id bigint"
	               " REFERENCES inventory.items ON DELETE CASCADE)");
	assert_int_equal(cli(&out, "job create prune --library 3"), 4);
	assert_non_null(strstr(out, "ON DELETE cascade"));
	assert_non_null(strstr(out, "cleanupctl deps"));
	free(out);
	assert_int_equal(cli(NULL, "job create remove-library --library 3"), 4);
	assert_int_equal(cli(NULL, "--json job create remove-server --server 2"), 4);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.jobs"), jobs);

	/* A collecting prune created before the reference is refused at seal. */
	pgtest_exec(c, "DROP TABLE public.retries");
	assert_int_equal(cli(NULL, "job create prune --library 3"), 0);
	pgtest_exec(c, "CREATE TABLE public.retries (id int, item_id bigint"
	               " REFERENCES inventory.items ON DELETE CASCADE)");
	assert_int_equal(cli(&out, "job seal 2 --expected 0"), 4);
	free(out);
	assert_text_equal(pgtest_text(c, "SELECT phase FROM cleanup.jobs WHERE id = 2"), "collecting");
	assert_text_equal(pgtest_text(c, "SELECT state FROM cleanup.library_admission WHERE library_id = 3"), "open");
	pgtest_exec(c, "DROP TABLE public.retries");
	assert_int_equal(cli(NULL, "job seal 2 --expected 0"), 0);
	PQfinish(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_S11_restricting_reference_to_a_parent_refuses_removal),
		cmocka_unit_test(test_S1_cascading_reference_to_items_refuses_every_kind),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

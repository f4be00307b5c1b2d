/* Foreign-key dependency evidence (seed 001): transitive references,
 * actions, referencing indexes, cycles, limits and the fingerprint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/deps.h"
#include "pgtest.h"

static char *conninfo;

static int setup(void **state)
{
	PGconn *c;

	(void)state;
	conninfo = pgtest_fresh_db("deps");
	c = pgtest_connect(conninfo, "setup");
	pgtest_exec(c, "CREATE TABLE public.item_retries (id serial PRIMARY KEY,"
	               " item_id bigint REFERENCES inventory.items ON DELETE CASCADE)");
	pgtest_exec(c, "CREATE TABLE public.retry_notes (id serial PRIMARY KEY, retry_id int REFERENCES item_retries)");
	pgtest_exec(c, "CREATE TABLE public.cyc_a (id int PRIMARY KEY, b_id int,"
	               " lib bigint REFERENCES inventory.libraries ON DELETE SET NULL)");
	pgtest_exec(c, "CREATE TABLE public.cyc_b (id int PRIMARY KEY, a_id int REFERENCES cyc_a)");
	pgtest_exec(c, "ALTER TABLE cyc_a ADD CONSTRAINT cyc_a_b FOREIGN KEY (b_id) REFERENCES cyc_b");
	PQfinish(c);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(conninfo);
	return 0;
}

static const cleanup_dep_edge *find(const cleanup_dep_edge *e, size_t n, const char *constraint)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(e[i].constraint_name, constraint) == 0)
			return &e[i];
	return NULL;
}

static void test_deps_graph_and_fingerprint(void **state)
{
	cleanup_engine *e = pgtest_engine(conninfo);
	PGconn *c = pgtest_connect(conninfo, "ddl");
	cleanup_dep_edge *edges = NULL;
	const cleanup_dep_edge *d;
	char fp1[65], fp2[65], fp3[65], *json = NULL;
	cleanup_error err;
	size_t n = 0;

	(void)state;
	assert_int_equal(cleanup_deps(&edges, &n, &json, fp1, e, 16, 64, &err), CLEANUP_OK);
	d = find(edges, n, "item_retries_item_id_fkey");
	assert_non_null(d);
	assert_string_equal(d->on_delete, "cascade");
	assert_false(d->has_index);
	assert_non_null(strstr(d->disposition, "cascade"));
	d = find(edges, n, "retry_notes_retry_id_fkey"); /* transitive: depth 2 */
	assert_non_null(d);
	assert_int_equal(d->depth, 2);
	d = find(edges, n, "cyc_a_b");
	assert_non_null(d);
	assert_true(d->cycle);
	d = find(edges, n, "items_library_id_fkey");
	assert_non_null(d);
	assert_string_equal(d->on_delete, "restrict");
	assert_true(d->has_index);
	assert_non_null(strstr(json, "\"kind\": \"cycle\""));
	free(edges);
	free(json);

	/* The fingerprint excludes capture time, and changes with the evidence. */
	assert_int_equal(cleanup_deps(&edges, &n, NULL, fp2, e, 16, 64, &err), CLEANUP_OK);
	free(edges);
	assert_string_equal(fp1, fp2);
	pgtest_exec(c, "CREATE INDEX item_retries_item ON item_retries (item_id)");
	assert_int_equal(cleanup_deps(&edges, &n, NULL, fp3, e, 16, 64, &err), CLEANUP_OK);
	assert_string_not_equal(fp1, fp3);
	assert_true(find(edges, n, "item_retries_item_id_fkey")->has_index);
	free(edges);

	/* A depth limit is a recorded gap, not a silent truncation. */
	assert_int_equal(cleanup_deps(&edges, &n, &json, NULL, e, 1, 64, &err), CLEANUP_OK);
	assert_null(find(edges, n, "retry_notes_retry_id_fkey"));
	assert_non_null(strstr(json, "depth-limit"));
	free(edges);
	free(json);

	assert_int_equal(cleanup_deps(&edges, &n, NULL, NULL, e, 0, 64, &err), CLEANUP_EINVAL);
	PQfinish(c);
	cleanup_engine_close(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deps_graph_and_fingerprint),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

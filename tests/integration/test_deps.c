/* Foreign-key dependency evidence (seed 001): transitive references,
 * actions, referencing indexes, cycles, limits and the fingerprint; the
 * bounded walk (a 13-table chain with 3 keys per level: linear in edges,
 * gaps named), enforcement (disabled RI triggers), index evidence
 * (present / unproven / absent), row security, and the offline report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cleanup/deps.h"
#include "pgtest.h"

static char *conninfo;

static int setup(void **state)
{
	PGconn *c;

	(void)state;
	conninfo = pgtest_fresh_db("deps");
	c = pgtest_connect(conninfo, "setup");
	pgtest_exec(c, "CREATE TABLE public.ext_retries (id serial PRIMARY KEY,"
	               " item_id bigint REFERENCES inventory.items ON DELETE CASCADE)");
	pgtest_exec(c, "CREATE TABLE public.retry_notes (id serial PRIMARY KEY, retry_id int REFERENCES ext_retries)");
	pgtest_exec(c, "CREATE TABLE public.cyc_a (id int PRIMARY KEY, b_id int,"
	               " lib bigint REFERENCES inventory.libraries ON DELETE SET NULL)");
	pgtest_exec(c, "CREATE TABLE public.cyc_b (id int PRIMARY KEY, a_id int REFERENCES cyc_a)");
	pgtest_exec(c, "ALTER TABLE cyc_a ADD CONSTRAINT cyc_a_b FOREIGN KEY (b_id) REFERENCES cyc_b");
	PQfinish(c);
	return 0;
}

PGTEST_DB_TEARDOWN(conninfo)

static const cleanup_dep_edge *find(const cleanup_dep_edge *e, size_t n, const char *constraint)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(e[i].constraint_name, constraint) == 0)
			return &e[i];
	return NULL;
}

/* The catalog evidence with MAX_DEPTH and MAX_TABLES and the default edge
 * and time limits: *EDGES (free() it), *JSON and FINGERPRINT when not NULL. */
static int deps(cleanup_dep_edge **edges, size_t *n, char **json, char *fingerprint, cleanup_engine *e,
                int max_depth, int max_tables, cleanup_error *err)
{
	cleanup_dep_limits l = CLEANUP_DEP_LIMITS_DEFAULT;
	cleanup_dep_report r;
	int rc;

	*edges = NULL;
	*n = 0;
	if (json)
		*json = NULL;
	l.max_depth = max_depth;
	l.max_tables = max_tables;
	if ((rc = cleanup_deps_read(&r, e, &l, err)) == CLEANUP_OK) {
		*edges = r.edges;
		*n = r.n;
		r.edges = NULL;
		if (fingerprint)
			memcpy(fingerprint, r.fingerprint, sizeof r.fingerprint);
		if (json) {
			*json = r.json;
			r.json = NULL;
		}
	}
	cleanup_deps_report_free(&r);
	return rc;
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
	assert_int_equal(deps(&edges, &n, &json, fp1, e, 16, 64, &err), CLEANUP_OK);
	d = find(edges, n, "ext_retries_item_id_fkey");
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
	assert_int_equal(deps(&edges, &n, NULL, fp2, e, 16, 64, &err), CLEANUP_OK);
	free(edges);
	assert_string_equal(fp1, fp2);
	pgtest_exec(c, "CREATE INDEX ext_retries_item ON ext_retries (item_id)");
	assert_int_equal(deps(&edges, &n, NULL, fp3, e, 16, 64, &err), CLEANUP_OK);
	assert_string_not_equal(fp1, fp3);
	assert_true(find(edges, n, "ext_retries_item_id_fkey")->has_index);
	free(edges);

	/* A depth limit is a recorded gap, not a silent truncation. */
	assert_int_equal(deps(&edges, &n, &json, NULL, e, 1, 64, &err), CLEANUP_OK);
	assert_null(find(edges, n, "retry_notes_retry_id_fkey"));
	assert_non_null(strstr(json, "depth-limit"));
	free(edges);
	free(json);

	assert_int_equal(deps(&edges, &n, NULL, NULL, e, 0, 64, &err), CLEANUP_EINVAL);
	PQfinish(c);
	cleanup_engine_close(e);
}

/* A database of a test's own (pgtest_fresh_db) with a DDL connection and
 * an engine on it. */
typedef struct {
	char *db;
	PGconn *c;
	cleanup_engine *e;
} own_db;

static own_db own_db_open(const char *name)
{
	own_db d;

	d.db = pgtest_fresh_db(name);
	d.c = pgtest_connect(d.db, "ddl");
	d.e = pgtest_engine(d.db);
	return d;
}

static void own_db_close(own_db *d)
{
	PQfinish(d->c);
	cleanup_engine_close(d->e);
	free(d->db);
}

/* A fresh read of the evidence into *R (with LIM) on OWN; returns the
 * edge of public.previews' key to the items. */
static const cleanup_dep_edge *previews_edge(cleanup_dep_report *r, own_db *own, const cleanup_dep_limits *lim)
{
	cleanup_error err;

	assert_int_equal(cleanup_deps_read(r, own->e, lim, &err), CLEANUP_OK);
	return find(r->edges, r->n, "previews_item_id_fkey");
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1000.0 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static const cleanup_dep_gap *find_gap(const cleanup_dep_report *r, const char *kind)
{
	size_t i;

	for (i = 0; i < r->ngaps; i++)
		if (strcmp(r->gaps[i].kind, kind) == 0)
			return &r->gaps[i];
	return NULL;
}

static size_t count_between(const cleanup_dep_report *r, const char *from, const char *to)
{
	size_t i, k = 0;

	for (i = 0; i < r->n; i++)
		k += strcmp(r->edges[i].referencing, from) == 0 && strcmp(r->edges[i].referenced, to) == 0;
	return k;
}

/* Defect: the old walk enumerated paths (82 s at depth 16 on this graph,
 * no gap recorded). The walk visits each table once: under a second with
 * the default limits, every parallel key an edge, the loop named as a
 * cycle gap, and each limit reached a gap naming what it left out. */
static void test_deps_13x3_chain_depth16_under_a_second_names_gaps(void **state)
{
	own_db own = own_db_open("deps_chain");
	cleanup_dep_limits lim = CLEANUP_DEP_LIMITS_DEFAULT;
	cleanup_dep_report r;
	const cleanup_dep_gap *g;
	cleanup_error err;
	struct timespec t0;
	double ms;

	(void)state;
	pgtest_exec(own.c, "DO $$ DECLARE k int; prev text := 'inventory.items'; BEGIN FOR k IN 1..13 LOOP"
	                 " EXECUTE format('CREATE TABLE public.chain_%%s (id bigint PRIMARY KEY, a bigint REFERENCES %%s,"
	                 " b bigint REFERENCES %%s, c bigint REFERENCES %%s)', lpad(k::text, 2, '0'), prev, prev, prev);"
	                 " prev := format('public.chain_%%s', lpad(k::text, 2, '0')); END LOOP; END $$");
	/* A loop back from the end of the chain to its start. */
	pgtest_exec(own.c, "ALTER TABLE public.chain_01 ADD COLUMN z bigint REFERENCES public.chain_13");

	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(cleanup_deps_read(&r, own.e, &lim, &err), CLEANUP_OK);
	ms = ms_since(&t0);
	printf("bench: deps on the 13x3 chain, depth 16, default limits: %.1f ms (server walk %.1f ms), %zu edges\n",
	       ms, r.elapsed_ms, r.n);
	assert_true(ms < 1000.0);
	assert_int_equal(r.n, 3 * 13 + 1 + 9); /* 39 chain keys, the loop, 4 inventory/engine keys, 5 dependents */
	assert_int_equal(count_between(&r, "public.chain_02", "public.chain_01"), 3);
	assert_int_equal(count_between(&r, "public.chain_13", "public.chain_12"), 3);
	g = find_gap(&r, "cycle");
	assert_non_null(g);
	assert_non_null(strstr(g->summary, "public.chain_01 -> public.chain_02"));
	assert_non_null(strstr(g->summary, "chain_01_z_fkey"));
	assert_null(find_gap(&r, "table-limit"));
	assert_non_null(strstr(r.json, "\"gaps\": [{"));
	cleanup_deps_report_free(&r);

	/* Each limit is a gap naming what it left out. */
	lim.max_tables = 8;
	assert_int_equal(cleanup_deps_read(&r, own.e, &lim, &err), CLEANUP_OK);
	g = find_gap(&r, "table-limit");
	assert_non_null(g);
	assert_non_null(strstr(g->summary, "public.chain_"));
	assert_non_null(strstr(r.json, "\"constraints_total\""));
	cleanup_deps_report_free(&r);
	lim.max_tables = 64;
	lim.max_depth = 5;
	assert_int_equal(cleanup_deps_read(&r, own.e, &lim, &err), CLEANUP_OK);
	g = find_gap(&r, "depth-limit");
	assert_non_null(g);
	assert_non_null(strstr(g->summary, "public.chain_06.chain_06_a_fkey"));
	cleanup_deps_report_free(&r);
	lim.max_depth = 16;
	lim.max_edges = 10;
	assert_int_equal(cleanup_deps_read(&r, own.e, &lim, &err), CLEANUP_OK);
	assert_int_equal(r.n, 10);
	g = find_gap(&r, "edge-limit");
	assert_non_null(g);
	assert_non_null(strstr(g->summary, "public.chain_"));
	cleanup_deps_report_free(&r);
	lim.max_edges = 0;
	assert_int_equal(cleanup_deps_read(&r, own.e, &lim, &err), CLEANUP_EINVAL);
	assert_non_null(strstr(err.message, "max edges 0"));
	cleanup_deps_report_free(&r);

	own_db_close(&own);
}

/* Defect: ALTER TABLE ... DISABLE TRIGGER ALL switched a key off without
 * changing the evidence or its fingerprint. Also: index evidence is
 * present / unproven / absent, and row security is evidence. */
static void test_deps_disabled_ri_triggers_change_evidence_and_fingerprint(void **state)
{
	own_db own = own_db_open("deps_enforce");
	cleanup_dep_limits lim = CLEANUP_DEP_LIMITS_DEFAULT;
	cleanup_dep_report r;
	const cleanup_dep_edge *d;
	char fp0[65], fp1[65];
	cleanup_error err;

	(void)state;
	pgtest_exec(own.c, "CREATE TABLE public.previews (id int PRIMARY KEY, item_id bigint REFERENCES inventory.items)");
	d = previews_edge(&r, &own, &lim);
	assert_non_null(d);
	assert_true(d->enforced);
	assert_true(d->validated);
	assert_string_equal(d->index_status, "absent");
	assert_false(d->row_security);
	assert_non_null(strstr(d->ri_triggers, "public.previews RI_FKey_check_ins enabled"));
	assert_non_null(strstr(d->ri_triggers, "inventory.items RI_FKey_noaction_del enabled"));
	memcpy(fp0, r.fingerprint, sizeof fp0);
	cleanup_deps_report_free(&r);

	pgtest_exec(own.c, "ALTER TABLE public.previews DISABLE TRIGGER ALL");
	d = previews_edge(&r, &own, &lim);
	assert_false(d->enforced);
	assert_non_null(strstr(d->ri_triggers, "public.previews RI_FKey_check_ins disabled"));
	assert_string_not_equal(r.fingerprint, fp0);
	cleanup_deps_report_free(&r);
	pgtest_exec(own.c, "ALTER TABLE public.previews ENABLE TRIGGER ALL");
	assert_int_equal(cleanup_deps_read(&r, own.e, &lim, &err), CLEANUP_OK);
	assert_string_equal(r.fingerprint, fp0);
	cleanup_deps_report_free(&r);

	/* Only the referenced side's action trigger, replica-only: not enforced. */
	pgtest_exec(own.c, "DO $$ DECLARE t text; BEGIN SELECT tgname INTO t FROM pg_trigger"
	                 " WHERE tgconstraint = (SELECT oid FROM pg_constraint WHERE conname = 'previews_item_id_fkey')"
	                 " AND tgrelid = 'inventory.items'::regclass AND tgtype & 8 = 8;"
	                 " EXECUTE format('ALTER TABLE inventory.items ENABLE REPLICA TRIGGER %%I', t); END $$");
	d = previews_edge(&r, &own, &lim);
	assert_false(d->enforced);
	assert_non_null(strstr(d->ri_triggers, "replica-only"));
	assert_string_not_equal(r.fingerprint, fp0);
	cleanup_deps_report_free(&r);

	/* A hash index is another strategy: unproven, not absent. */
	pgtest_exec(own.c, "CREATE INDEX previews_hash ON public.previews USING hash (item_id)");
	d = previews_edge(&r, &own, &lim);
	assert_string_equal(d->index_status, "unproven");
	assert_false(d->has_index);
	memcpy(fp1, r.fingerprint, sizeof fp1);
	cleanup_deps_report_free(&r);
	pgtest_exec(own.c, "CREATE INDEX previews_item ON public.previews (item_id) WHERE item_id > 0");
	assert_string_equal(previews_edge(&r, &own, &lim)->index_status, "unproven");
	cleanup_deps_report_free(&r);
	pgtest_exec(own.c, "CREATE INDEX previews_item_full ON public.previews (item_id, id)");
	d = previews_edge(&r, &own, &lim);
	assert_string_equal(d->index_status, "present");
	assert_string_equal(d->index_name, "public.previews_item_full");
	cleanup_deps_report_free(&r);

	/* Row security is evidence too. */
	pgtest_exec(own.c, "ALTER TABLE public.previews ENABLE ROW LEVEL SECURITY");
	d = previews_edge(&r, &own, &lim);
	assert_true(d->row_security);
	assert_false(d->force_row_security);
	assert_string_not_equal(r.fingerprint, fp1);
	cleanup_deps_report_free(&r);

	own_db_close(&own);
}

/* The offline report: the project's own sql/ without a database, with
 * its parser's limits; the parser on composite, named, ALTER TABLE and
 * quoted keys, skipping strings and function bodies. */
static void test_deps_offline_reads_sql_without_a_database(void **state)
{
	static const char sql[] =
		"-- CREATE TABLE in a comment: public.fake (x int REFERENCES inventory.items)\n"
		"CREATE TABLE IF NOT EXISTS lab.retries (id int PRIMARY KEY,\n"
		"  item_id bigint NOT NULL CONSTRAINT retries_item REFERENCES inventory.items (id) ON DELETE CASCADE,\n"
		"  note text DEFAULT 'REFERENCES inventory.libraries',\n"
		"  a int, b int, FOREIGN KEY (a, b) REFERENCES lab.pairs (x, y) ON UPDATE CASCADE ON DELETE SET NULL);\n"
		"CREATE FUNCTION f() RETURNS void LANGUAGE sql AS $f$ CREATE TABLE x.y (i int REFERENCES inventory.items) $f$;\n"
		"ALTER TABLE ONLY lab.pairs ADD CONSTRAINT \"Pairs Lib\" FOREIGN KEY (lib) REFERENCES inventory.libraries,\n"
		"  ADD COLUMN srv bigint REFERENCES inventory.media_servers ON DELETE RESTRICT;\n";
	cleanup_dep_edge *edges = NULL;
	cleanup_dep_limits lim = CLEANUP_DEP_LIMITS_DEFAULT;
	cleanup_dep_report r;
	const cleanup_dep_edge *d;
	cleanup_error err;
	size_t n = 0;

	(void)state;
	assert_int_equal(cleanup_deps_parse_sql(&edges, &n, "t.sql", sql, &err), CLEANUP_OK);
	assert_int_equal(n, 4);
	d = find(edges, n, "retries_item");
	assert_non_null(d);
	assert_string_equal(d->referencing, "lab.retries");
	assert_string_equal(d->referenced, "inventory.items");
	assert_string_equal(d->on_delete, "cascade");
	d = find(edges, n, "retries_a_b_fkey");
	assert_non_null(d);
	assert_string_equal(d->referencing_columns, "a, b");
	assert_string_equal(d->referenced_columns, "x, y");
	assert_string_equal(d->on_delete, "set null");
	d = find(edges, n, "Pairs Lib");
	assert_non_null(d);
	assert_string_equal(d->referencing, "lab.pairs");
	assert_string_equal(d->referenced_columns, "primary key");
	d = find(edges, n, "pairs_srv_fkey");
	assert_non_null(d);
	assert_string_equal(d->on_delete, "restrict");
	free(edges);

	/* The embedded bundle: the inventory's own keys, no database. */
	assert_int_equal(cleanup_deps_offline(&r, NULL, &lim, &err), CLEANUP_OK);
	assert_true(r.offline);
	d = find(r.edges, r.n, "items_library_id_fkey");
	assert_non_null(d);
	assert_string_equal(d->referencing, "inventory.items");
	assert_string_equal(d->referenced, "inventory.libraries");
	assert_string_equal(d->on_delete, "restrict");
	assert_string_equal(d->index_status, "not assessed");
	assert_non_null(strstr(r.json, "\"parser_limits\""));
	assert_non_null(strstr(r.json, "\"source\": \"offline\""));
	assert_int_equal(strlen(r.fingerprint), 64);
	cleanup_deps_report_free(&r);

	/* The source tree's sql/, when the tests know where it is. */
	if (getenv("CLEANUP_SOURCE_DIR")) {
		char dir[4096];
		char fp[65];

		snprintf(dir, sizeof dir, "%s/sql", getenv("CLEANUP_SOURCE_DIR"));
		assert_int_equal(cleanup_deps_offline(&r, dir, &lim, &err), CLEANUP_OK);
		assert_non_null(find(r.edges, r.n, "items_library_id_fkey"));
		memcpy(fp, r.fingerprint, sizeof fp);
		cleanup_deps_report_free(&r);
		assert_int_equal(cleanup_deps_offline(&r, dir, &lim, &err), CLEANUP_OK);
		assert_string_equal(r.fingerprint, fp); /* no capture time in it */
		cleanup_deps_report_free(&r);
	}
	assert_int_equal(cleanup_deps_offline(&r, "/nonexistent/sql", &lim, &err), CLEANUP_EINVAL);
	assert_non_null(strstr(err.message, "/nonexistent/sql"));
	cleanup_deps_report_free(&r);
}

PGTEST_MAIN(cmocka_unit_test(test_deps_graph_and_fingerprint),
            cmocka_unit_test(test_deps_13x3_chain_depth16_under_a_second_names_gaps),
            cmocka_unit_test(test_deps_disabled_ri_triggers_change_evidence_and_fingerprint),
            cmocka_unit_test(test_deps_offline_reads_sql_without_a_database))

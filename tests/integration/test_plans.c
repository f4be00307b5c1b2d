/* The plans of every statement a step runs are bounded by
 * the step's budget whatever the statistics say. Real steps run on real data
 * (three servers, nine libraries, item ids interleaved across libraries,
 * a prune with a writer holding rows in flight and 60 items with
 * dependents that its steps claim, a remove-library, a remove-server) in a session with auto_explain loaded; every plan, nested
 * ones included, arrives as a notice in JSON with its actual row counts.
 * The server itself walks each plan (jsonb_path_query) and this test fails
 * on:
 *   - a Seq Scan on inventory.items or cleanup.manifest;
 *   - a hashed SubPlan over inventory.items, cleanup.manifest or
 *     cleanup.job_retained (it reads its whole input once, e.g. a job's
 *     whole manifest; one over the few libraries of a server is bounded
 *     by the rows rule);
 *   - a node that reads more rows (Actual Rows plus rows removed by filters,
 *     times Actual Loops) than the step may read. Bounds and their reasons:
 *       drain and pass steps  1,024: a step examines at most 1,024 rows of
 *                             its range (S1, docs/steps.md "Budget");
 *                             everything else it does handles at most its
 *                             128 candidates;
 *       final-check pages    10,001: a page reads 10,000 items in external
 *                             ID order and the manifest entries of that key
 *                             range, one past its end for the merge;
 *       finalize steps       10,000: the emptiness check reads at most
 *                             10,000 leftover ids (and after a drain none);
 *       console refreshes     2,000: the events window (the 2,000 newest
 *                             events) is the largest read of a refresh;
 *                             everything else reads job rows, libraries
 *                             and step records by key (the step-rate
 *                             sparkline's first read: 20,000 records).
 * Once on data that was never analyzed (autovacuum off for the test tables,
 * and checked afterwards in pg_stat_user_tables), once after ANALYZE. The
 * console's refresh queries (sql/queries/mon_*.sql) run in the same
 * databases, mid-job and afterwards, with custom and generic plans.
 *
 * Every violation fails the test, except the pending cases of
 * pending_060[] (found after the plan fix, reported to the
 * lead): they are printed as EXCUSED, and fail the test with
 * CLEANUP_PLANS_STRICT=1. The statements of sql/functions/060_step.sql
 * whose plans were left to the statistics before that fix (the drain
 * discovery hashed the job's manifest and read the whole library range;
 * the final check's page read the manifest past its bound) are listed in
 * known_060[]: CLEANUP_PLANS_STRICT=0 excuses them too, for looking at an
 * older engine (at commit 086c8b8, before the fix: 762 violations
 * unanalyzed, 557 analyzed; after it: none). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pgtest.h"

#define BOUND_STEP     1024
#define BOUND_PAGE     10001
#define BOUND_FINALIZE 10000
#define BOUND_CONSOLE  2000

/* Sizes: library 1 (the prune's) holds BIG_ITEMS, three final-check pages;
 * the eight others SMALL_ITEMS each, ids interleaved with library 1's. */
#define BIG_ITEMS   30000
#define SMALL_ITEMS 2500
/* Tables of another application in the same database (make_db). */
#define NEIGHBOUR_TABLES 1000

/* Fragments of the 060 statements whose plans went wrong before the plan
 * fix (the drain's discovery, the pass's discovery, the final
 * check's page): CLEANUP_PLANS_STRICT=0 reports their violations only. */
static const char *const known_060[] = {
	"FILTER (WHERE NOT c.seen)",
	"FILTER (WHERE NOT q.seen)",
	"ORDER BY i.external_id LIMIT 10000",
	NULL,
};

/* Plans received as notices: JSON documents, malloc'd. */
typedef struct plan_docs {
	char **doc;
	size_t n, cap;
} plan_docs;

/* What one scenario found. */
typedef struct findings {
	const char *scenario;
	int statements;       /* plans checked */
	int drains;           /* drain steps whose plans read inventory.items (not vacuous) */
	int pages;            /* final-check steps run */
	int console;          /* console plans checked */
	int known, unknown;   /* violations: excused by the setting, enforced */
	int pending;          /* pending cases seen (excused or not) */
	double max_drain;     /* most rows one node on inventory.items read in a drain step */
} findings;

static void on_notice(void *arg, const PGresult *res)
{
	plan_docs *p = arg;
	const char *m = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *brace;

	if (!m || strncmp(m, "duration:", 9) != 0 || !(brace = strchr(m, '{')))
		return;
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->doc = realloc(p->doc, p->cap * sizeof *p->doc);
		assert_non_null(p->doc);
	}
	p->doc[p->n] = strdup(brace);
	assert_non_null(p->doc[p->n]);
	p->n++;
}

static void docs_clear(plan_docs *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->doc[i]);
	p->n = 0;
}

/* CLEANUP_PLANS_STRICT: "1" enforces everything (pending cases too); "0"
 * reports the old known cases (known_060) and the pending ones; unset
 * enforces all but the pending cases. */
static const char *strict_setting(void)
{
	const char *v = getenv("CLEANUP_PLANS_STRICT");

	return v ? v : "";
}

/* Cases found after a plan fix and not yet fixed: reported as PENDING by
 * default, enforced with CLEANUP_PLANS_STRICT=1 (a fragment of the
 * statement, and the relation of the violating node). None today: the one
 * found after the plan fix (the pass steps' "resolved" DELETE of
 * cleanup.job_retained read all of the job's retained rows, by a Seq Scan,
 * then by an index scan on job_id alone) probes each row by its full key
 * since. */
static const char *const pending_060[][2] = {
	{NULL, NULL},
};

static bool is_known(const char *query)
{
	int i;

	for (i = 0; known_060[i]; i++)
		if (strstr(query, known_060[i]))
			return true;
	return false;
}

static bool is_pending(const char *query, const char *rel)
{
	int i;

	for (i = 0; pending_060[i][0]; i++)
		if (strstr(query, pending_060[i][0]) && strcmp(rel, pending_060[i][1]) == 0)
			return true;
	return false;
}

/* One line of query text: whitespace runs squashed, at most 110 chars. */
static void squash(char *out, size_t outlen, const char *q)
{
	size_t o = 0;
	bool space = false;

	for (; *q && o + 4 < outlen; q++) {
		if (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r') {
			space = o > 0;
			continue;
		}
		if (space)
			out[o++] = ' ';
		space = false;
		out[o++] = *q;
		if (o >= 110) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
	}
	out[o] = '\0';
}

/* The server walks the plans in P: one row per violating node (query text,
 * node, relation, rows read, reason; hashed subplans over growing tables),
 * and the most rows any node on inventory.items read. */
static const char check_sql[] =
	"WITH docs AS (SELECT d, ord FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(d, ord)), "
	"nodes AS (SELECT ord, d->>'Query Text' AS q, n "
	"            FROM docs, jsonb_path_query(d->'Plan', 'strict $.**') AS n "
	"           WHERE jsonb_typeof(n) = 'object' AND n ? 'Node Type'), "
	"r AS (SELECT ord, q, n, n->>'Node Type' AS node, "
	"             coalesce(n->>'Schema', '') || CASE WHEN n ? 'Relation Name' THEN '.' || (n->>'Relation Name') "
	"                                              ELSE '' END AS rel, "
	"             ((n->>'Actual Rows')::numeric + coalesce((n->>'Rows Removed by Filter')::numeric, 0) "
	"              + coalesce((n->>'Rows Removed by Index Recheck')::numeric, 0) "
	"              + coalesce((n->>'Rows Removed by Join Filter')::numeric, 0)) "
	"             * (n->>'Actual Loops')::numeric AS rows_read "
	"        FROM nodes), "
	/* A hashed subplan shows as "hashed SubPlan N" in its parent's
	 * expressions (log_verbose); its node carries "Subplan Name". */
	"hashed AS (SELECT DISTINCT ord, m[1] AS name "
	"             FROM docs, regexp_matches((d->'Plan')::text, 'hashed (SubPlan [0-9]+)', 'g') AS m), "
	"hashed_rels AS (SELECT h.ord, min(r.q) AS q, h.name, "
	"                       string_agg(DISTINCT (s->>'Schema') || '.' || (s->>'Relation Name'), ', ') AS rels "
	"                  FROM hashed h JOIN r ON r.ord = h.ord AND r.n->>'Subplan Name' = h.name, "
	"                       jsonb_path_query(r.n, 'strict $.**') AS s "
	"                 WHERE jsonb_typeof(s) = 'object' AND s ? 'Relation Name' "
	"                 GROUP BY h.ord, h.name) "
	"SELECT 'v', q, node, rel, round(rows_read)::text, "
	"       CASE WHEN node = 'Seq Scan' AND rel IN ('inventory.items', 'cleanup.manifest') "
	"            THEN 'sequential scan' ELSE 'rows over the bound' END "
	"  FROM r "
	" WHERE (node = 'Seq Scan' AND rel IN ('inventory.items', 'cleanup.manifest')) "
	"    OR rows_read > $2::numeric "
	"UNION ALL "
	"SELECT 'h', q, name, rels, '', 'hashed subplan' FROM hashed_rels "
	" WHERE rels ~ '(inventory[.]items|cleanup[.]manifest|cleanup[.]job_retained)' "
	"UNION ALL "
	"SELECT 'd', '', '', '', coalesce(max(round(rows_read)), 0)::text, '' FROM r "
	" WHERE rel = 'inventory.items'";

/* Checks the plans collected in P against BOUND; WHAT names them, ACTION
 * the step's action ("" for the console). Known violations are printed the
 * first few times, unknown ones always. */
static void check_plans(findings *f, PGconn *checker, plan_docs *p, long bound, const char *what,
                        const char *action)
{
	bool drain = strcmp(action, "drain") == 0, reads_items = false;
	size_t i, len = 2;
	char *arr, *o, bbuf[24], line[160];
	const char *params[2];
	PGresult *res;
	int r;

	for (i = 0; i < p->n; i++) {
		len += strlen(p->doc[i]) + 1;
		if (strstr(p->doc[i], "\"Schema\": \"inventory\"") && strstr(p->doc[i], "\"Relation Name\": \"items\""))
			reads_items = true;
	}
	if (drain && reads_items)
		f->drains++;
	if (strcmp(action, "final-check") == 0)
		f->pages++;
	arr = malloc(len + 1);
	assert_non_null(arr);
	o = arr;
	*o++ = '[';
	for (i = 0; i < p->n; i++) {
		if (i)
			*o++ = ',';
		memcpy(o, p->doc[i], strlen(p->doc[i]));
		o += strlen(p->doc[i]);
	}
	*o++ = ']';
	*o = '\0';
	snprintf(bbuf, sizeof bbuf, "%ld", bound);
	params[0] = arr;
	params[1] = bbuf;
	res = PQexecParams(checker, check_sql, 2, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		fail_msg("checking the plans of %s: %s", what, PQerrorMessage(checker));
	f->statements += (int)p->n;
	for (r = 0; r < PQntuples(res); r++) {
		const char *kind = PQgetvalue(res, r, 0), *q = PQgetvalue(res, r, 1);
		bool known;

		if (kind[0] == 'd') {
			double v = atof(PQgetvalue(res, r, 4));

			if (drain && v > f->max_drain)
				f->max_drain = v;
			continue;
		}
		{
			const char *st = strict_setting();
			bool pending = kind[0] == 'v' && is_pending(q, PQgetvalue(res, r, 3));

			f->pending += pending;
			/* Excused: pending cases unless "1"; old known cases with "0". */
			known = (pending && strcmp(st, "1") != 0) || (strcmp(st, "0") == 0 && is_known(q));
		}
		if (known)
			f->known++;
		else
			f->unknown++;
		if (known && f->known > 12) {
			if (f->known == 13)
				printf("EXCUSED %s: ... (further excused violations counted, not printed)\n", f->scenario);
			continue;
		}
		squash(line, sizeof line, q);
		if (kind[0] == 'h')
			printf("%s %s: hashed %s over %s in: %s\n", known ? "EXCUSED (060)" : "VIOLATION", what,
			       PQgetvalue(res, r, 2), PQgetvalue(res, r, 3), line);
		else
			printf("%s %s: %s %s read %s rows (bound %ld): %s in: %s\n", known ? "EXCUSED (060)" : "VIOLATION",
			       what, PQgetvalue(res, r, 2), PQgetvalue(res, r, 3), PQgetvalue(res, r, 4), bound,
			       PQgetvalue(res, r, 5), line);
	}
	PQclear(res);
	free(arr);
	docs_clear(p);
}

/* A session that sends every plan, nested ones included, as a notice. */
static PGconn *explain_session(const char *ci, plan_docs *docs)
{
	PGconn *c = pgtest_connect(ci, "plans");

	/* The schema contract is computed once after DDL (the reloptions
	 * below): let that happen before plans are collected, it is catalog
	 * work outside any step's budget. */
	pgtest_exec(c, "SELECT cleanup.contract_assert()");
	pgtest_exec(c, "LOAD 'auto_explain'");
	pgtest_exec(c, "SET auto_explain.log_min_duration = 0");
	pgtest_exec(c, "SET auto_explain.log_nested_statements = on");
	pgtest_exec(c, "SET auto_explain.log_format = 'json'");
	pgtest_exec(c, "SET auto_explain.log_level = 'notice'");
	pgtest_exec(c, "SET auto_explain.log_analyze = on");
	pgtest_exec(c, "SET auto_explain.log_timing = off");
	pgtest_exec(c, "SET auto_explain.log_verbose = on");
	pgtest_exec(c, "SET client_min_messages = notice");
	PQsetNoticeReceiver(c, on_notice, docs);
	return c;
}

/* Three servers of three libraries, library ids interleaved across servers
 * (1, 4, 7 on server 1; 2, 5, 8 on server 2; 3, 6, 9 on server 3), item ids
 * interleaved across libraries; autovacuum off for the engine's and the
 * inventory's tables. Beside them another application's schema of
 * NEIGHBOUR_TABLES tables, each with a primary key, a foreign key and a
 * CHECK: 3,000 constraints, more than a drain step may read, so a step or
 * a refresh that scans pg_constraint (or another catalog other than by an
 * index) fails the rows rule. The engine's own catalog reads go by index
 * (cleanup.has_unknown_references, through pg_depend). */
static char *make_db(const char *name)
{
	char *ci = pgtest_fresh_db(name);
	PGconn *c = pgtest_connect(ci, "setup");

	pgtest_exec(c, "DO $$ DECLARE r record; BEGIN "
	               "FOR r IN SELECT c.oid::regclass AS t FROM pg_class c "
	               "          WHERE c.relnamespace IN ('cleanup'::regnamespace, 'inventory'::regnamespace) "
	               "            AND c.relkind = 'r' LOOP "
	               "  EXECUTE format('ALTER TABLE %%s SET (autovacuum_enabled = off)', r.t); "
	               "END LOOP; END $$");
	pgtest_exec(c, "CREATE SCHEMA neighbour");
	pgtest_exec(c, "DO $$ BEGIN FOR i IN 1..%d LOOP "
	               "  EXECUTE format('CREATE TABLE neighbour.t%%s (id int PRIMARY KEY, "
	               "                  up int REFERENCES neighbour.t%%s (id), v text CHECK (v <> ''''))', "
	               "                 i, greatest(i - 1, 1)); "
	               "END LOOP; END $$",
	            NEIGHBOUR_TABLES);
	assert_true(pgtest_int(c, "SELECT count(*) FROM pg_constraint") > 3 * NEIGHBOUR_TABLES);
	pgtest_exec(c, "INSERT INTO inventory.media_servers (name) SELECT 'srv-' || g FROM generate_series(1, 3) g");
	pgtest_exec(c, "INSERT INTO inventory.libraries (server_id, name) "
	               "SELECT s, format('lib-%%s-%%s', s, k) FROM generate_series(1, 3) k, generate_series(1, 3) s "
	               "ORDER BY k, s");
	pgtest_exec(c,
	            "INSERT INTO inventory.items (library_id, external_id, title) "
	            "SELECT l.id, format('ext-%%s-%%s', l.id, g), 'T' "
	            "  FROM generate_series(1, %d) g "
	            "  JOIN inventory.libraries l ON g <= CASE WHEN l.id = 1 THEN %d ELSE %d END "
	            " ORDER BY g, l.id",
	            BIG_ITEMS, BIG_ITEMS, SMALL_ITEMS);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items"), BIG_ITEMS + 8 * SMALL_ITEMS);
	PQfinish(c);
	return ci;
}

/* The console's refresh queries (sql/queries/mon_*.sql), with the
 * parameters the monitor passes ("JOB": the job shown) and their bounds:
 * the events window (2,000), and the step-rate sparkline's first read,
 * which takes at most 20,000 step records by design. A mon_*.sql file not
 * listed here fails the test: add it, so every refresh query is checked. */
typedef struct console_query {
	const char *file;
	int n;
	const char *p1, *p2, *p3;
	long bound;
} console_query;

static const console_query console_queries[] = {
	{"mon_contention", 1, "200", NULL, NULL, BOUND_CONSOLE},
	/* busy retries apart, 10 x the limit (the monitor's default 100 and 1,000) */
	{"mon_events", 3, "100", "0", "1000", BOUND_CONSOLE},
	/* holders idle in a transaction for 10 s (T3): catalog and statistics views only */
	{"mon_idle_xact", 1, "10", NULL, NULL, BOUND_CONSOLE},
	{"mon_jobs", 1, "200", NULL, NULL, BOUND_CONSOLE},
	{"mon_libraries", 1, "200", NULL, NULL, BOUND_CONSOLE},
	{"mon_servers", 1, "200", NULL, NULL, BOUND_CONSOLE},
	{"mon_steps", 2, "JOB", "2147483647", NULL, BOUND_CONSOLE}, /* the newest page, as the console reads most */
	{"mon_step_rate", 2, "JOB", "-1", NULL, 20000},
	{NULL, 0, NULL, NULL, NULL, 0},
};

/* The text of sql/queries/NAME.sql (malloc'd), NULL when there is none. */
static char *query_text(const char *name)
{
	const char *src = getenv("CLEANUP_SOURCE_DIR");
	char path[4096], *sql;
	FILE *fp;
	long len;

	assert_non_null(src);
	snprintf(path, sizeof path, "%s/sql/queries/%s.sql", src, name);
	if (!(fp = fopen(path, "rb")))
		return NULL;
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	len = ftell(fp);
	assert_true(len > 0);
	rewind(fp);
	sql = calloc(1, (size_t)len + 1);
	assert_non_null(sql);
	assert_int_equal(fread(sql, 1, (size_t)len, fp), (size_t)len);
	fclose(fp);
	return sql;
}

/* Every console query listed is checked; none exists unlisted. */
static void assert_console_queries_listed(void)
{
	char *out = NULL, *line, *save = NULL;
	int i;
	bool listed;

	assert_int_equal(pgtest_sh(&out, "cd \"$CLEANUP_SOURCE_DIR/sql/queries\" && ls mon_*.sql"), 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *dot = strstr(line, ".sql");

		if (dot)
			*dot = '\0';
		if (strcmp(line, "mon_listen") == 0)
			continue;
		listed = false;
		for (i = 0; console_queries[i].file; i++)
			listed = listed || strcmp(console_queries[i].file, line) == 0;
		if (!listed)
			fail_msg("console query %s.sql is not in console_queries[] of test_plans.c: add it with its "
			         "parameters and bound",
			         line);
	}
	free(out);
}

/* Runs every console refresh query with custom and with generic plans and
 * checks them. */
static void check_console(findings *f, PGconn *x, PGconn *checker, plan_docs *docs, int64_t job,
                          const char *when)
{
	char what[96], jbuf[24];
	int i, generic;

	assert_console_queries_listed();
	snprintf(jbuf, sizeof jbuf, "%" PRId64, job);
	for (i = 0; console_queries[i].file; i++) {
		const console_query *cq = &console_queries[i];
		char *sql = query_text(cq->file);

		if (!sql)
			fail_msg("sql/queries/%s.sql is missing", cq->file);
		for (generic = 0; generic < 2; generic++) {
			const char *params[3];
			PGresult *res;

			params[0] = strcmp(cq->p1, "JOB") == 0 ? jbuf : cq->p1;
			params[1] = cq->p2;
			params[2] = cq->p3;
			pgtest_exec(x, "SET plan_cache_mode = %s", generic ? "force_generic_plan" : "auto");
			docs_clear(docs);
			res = PQprepare(x, "mon", sql, cq->n, NULL);
			if (PQresultStatus(res) != PGRES_COMMAND_OK)
				fail_msg("%s: %s", cq->file, PQerrorMessage(x));
			PQclear(res);
			res = PQexecPrepared(x, "mon", cq->n, params, NULL, NULL, 0);
			if (PQresultStatus(res) != PGRES_TUPLES_OK)
				fail_msg("%s: %s (its parameters in console_queries[] of test_plans.c may be out of date)",
				         cq->file, PQerrorMessage(x));
			PQclear(res);
			pgtest_exec(x, "DEALLOCATE mon");
			snprintf(what, sizeof what, "%s console %s (%s, %s plan)", f->scenario, cq->file, when,
			         generic ? "generic" : "custom");
			f->console += (int)docs->n;
			check_plans(f, checker, docs, cq->bound, what, "");
		}
		free(sql);
	}
	pgtest_exec(x, "SET plan_cache_mode = auto");
}

/* Runs job JOB step by step in session X, checking each step's plans. With
 * LOCKER (a writer holding rows of the library in flight), lets it commit
 * once the job reaches its second pass. With CONSOLE_AT, checks the
 * console's queries before that step. With LEASE (a runner lease token,
 * else 0), each step renews it, as a runner's steps do; without one, the
 * step checks that no runner holds the job. Returns the number of steps. */
static int run_job(findings *f, PGconn *x, PGconn *checker, plan_docs *docs, int64_t job, PGconn **locker,
                   int console_at, int64_t lease)
{
	char what[96];
	int step;

	for (step = 1; step < 5000; step++) {
		char *state = pgtest_text(checker, "SELECT phase || ' ' || pass_no FROM cleanup.jobs WHERE id = %" PRId64,
		                          job);
		char *res, action[32] = "";
		long bound;

		if (strncmp(state, "completed", 9) == 0) {
			free(state);
			return step - 1;
		}
		if (locker && *locker && atoi(strchr(state, ' ') + 1) > 1) {
			pgtest_exec(*locker, "COMMIT");
			PQfinish(*locker);
			*locker = NULL;
		}
		free(state);
		if (step == console_at)
			check_console(f, x, checker, docs, job, "mid-job");
		docs_clear(docs);
		res = lease ? pgtest_text(x, "SELECT action FROM cleanup.job_step(%" PRId64 ", %d, 0, %" PRId64 ")", job,
		                          step, lease)
		            : pgtest_text(x, "SELECT action FROM cleanup.job_step(%" PRId64 ", %d)", job, step);
		snprintf(action, sizeof action, "%s", res);
		free(res);
		bound = strcmp(action, "final-check") == 0                                        ? BOUND_PAGE
		        : strcmp(action, "drain") == 0 || strcmp(action, "pass") == 0 ? BOUND_STEP
		                                                                         : BOUND_FINALIZE;
		snprintf(what, sizeof what, "%s job %" PRId64 " step %d (%s)", f->scenario, job, step, action);
		check_plans(f, checker, docs, bound, what, action);
	}
	fail_msg("job %" PRId64 " did not complete in 5000 steps", job);
	return -1;
}

/* The whole scenario on database NAME, ANALYZEd after loading when ANALYZED. */
static void scenario(const char *name, bool analyzed)
{
	findings f = {analyzed ? "analyzed" : "unanalyzed", 0, 0, 0, 0, 0, 0, 0, 0};
	char *ci = make_db(name);
	PGconn *setup = pgtest_connect(ci, "setup"), *checker = pgtest_connect(ci, "checker"), *locker, *x;
	plan_docs docs = {NULL, 0, 0};
	int64_t prune, remove_lib, remove_srv;
	int steps;

	/* Dependents (seed 001) of 60 unseen items of library 1 (written before
	 * the job fences it), outside the writer's rows below: three retries each, and a preview for every
	 * second one. Their steps delete the few that fit a step's budget with
	 * their dependents and claim the rest, drain the dependents and delete
	 * the items, so both statements of cleanup.step_drain (the dependents'
	 * DELETE, the UPDATE of the claims) and cleanup.claims_drain are
	 * checked too. */
	pgtest_exec(setup, "INSERT INTO inventory.item_retries (item_id, reason) "
	                   "SELECT i.id, 'retry ' || k FROM (SELECT id FROM inventory.items WHERE library_id = 1 "
	                   "AND id %% 2 = 1 ORDER BY id LIMIT 60) i, generate_series(1, 3) k");
	pgtest_exec(setup, "INSERT INTO inventory.identity_review_previews (item_id, candidate) "
	                   "SELECT i.id, 'candidate' FROM (SELECT id FROM inventory.items WHERE library_id = 1 "
	                   "AND id %% 2 = 1 ORDER BY id LIMIT 60) i WHERE i.id %% 4 = 1");
	/* The prune of library 1 (server 1): every second item seen, plus 1,000
	 * IDs that match no item (sorted among the real ones) and a run of
	 * 3,000 that match none and sort before every item (the first pass in
	 * external-ID order walks past them 1,024 manifest keys at a time,
	 * schema 12), 128 a call. */
	prune = pgtest_int(setup, "SELECT (cleanup.job_create('prune', 1, 'bounded')).id");
	pgtest_exec(setup,
	            "SELECT count(cleanup.job_append(%" PRId64 ", ids)) FROM ("
	            "  SELECT array_agg(x ORDER BY x) AS ids FROM ("
	            "    SELECT x, row_number() OVER (ORDER BY x) AS rn FROM ("
	            "      SELECT external_id AS x FROM inventory.items WHERE library_id = 1 AND id %% 2 = 0"
	            "      UNION ALL SELECT format('ext-1-%%s-gone', g) FROM generate_series(1, 1000) g"
	            "      UNION ALL SELECT format('ext-1-0-gone-%%s', g) FROM generate_series(1, 3000) g) s) t"
	            "  GROUP BY (rn - 1) / 128) q",
	            prune);
	pgtest_exec(setup,
	            "SELECT cleanup.job_seal(%" PRId64 ", (SELECT count(*) FROM cleanup.manifest WHERE job_id = %" PRId64
	            "))",
	            prune, prune);
	/* Events for the console's window: more than it reads. */
	pgtest_exec(setup, "INSERT INTO cleanup.events (job_id, kind, message) "
	                   "SELECT NULL, (ARRAY['busy', 'rejected', 'note'])[1 + g %% 3], 'event ' || g "
	                   "  FROM generate_series(1, 50000) g");
	if (analyzed)
		pgtest_exec(setup, "ANALYZE");

	/* A writer in flight: 2,000 unseen rows of library 1 locked until the
	 * job reaches its second pass; the first pass retains them, and the
	 * pass steps then walk more retained rows than a step may read. */
	locker = pgtest_connect(ci, "writer");
	pgtest_exec(locker, "BEGIN");
	pgtest_exec(locker, "SELECT 1 FROM (SELECT id FROM inventory.items WHERE library_id = 1 AND id %% 2 = 1 "
	                    "ORDER BY id OFFSET 6000 LIMIT 2000) q JOIN inventory.items i USING (id) FOR UPDATE OF i");

	x = explain_session(ci, &docs);
	steps = run_job(&f, x, checker, &docs, prune, &locker, 20, 0);
	assert_null(locker);
	assert_int_equal(pgtest_int(checker, "SELECT deleted FROM cleanup.jobs WHERE id = %" PRId64, prune),
	                 BIG_ITEMS / 2);
	assert_true(pgtest_int(checker, "SELECT max(pass_no) FROM cleanup.job_steps WHERE job_id = %" PRId64, prune) >
	            1);
	/* The 60 items with dependents: those that fit what their step's
	 * plain deletes left of the budget were deleted with their dependents
	 * in it, the rest claimed, drained and deleted; both happen here. */
	assert_in_range(pgtest_int(checker, "SELECT claimed FROM cleanup.jobs WHERE id = %" PRId64, prune), 1, 59);
	assert_int_equal(pgtest_int(checker, "SELECT count(*) FROM inventory.item_retries"), 0);
	printf("%s: prune of library 1 in %d steps\n", f.scenario, steps);

	/* A remove-library of library 5 (server 2): drain, then finalize, under
	 * a runner lease (its renewal is part of the statement that locks the
	 * job row: cleanup.runner_step_check). */
	remove_lib = pgtest_int(setup, "SELECT (cleanup.job_create('remove-library', 5, 'bounded')).id");
	assert_int_equal(pgtest_int(setup,
	                            "SELECT claimed::int FROM cleanup.runner_open(%" PRId64
	                            ", 4242, 'plans', 1, 'test_plans', true, 3600, NULL, false)",
	                            remove_lib),
	                 1);
	steps = run_job(&f, x, checker, &docs, remove_lib, NULL, 0, 4242);
	assert_int_equal(pgtest_int(checker, "SELECT count(*) FROM inventory.libraries WHERE id = 5"), 0);
	/* Every step renewed the lease: the last one recorded its number. */
	assert_int_equal(pgtest_int(checker, "SELECT last_step FROM cleanup.job_runners WHERE job_id = %" PRId64,
	                            remove_lib),
	                 steps);
	printf("%s: remove-library 5 in %d steps\n", f.scenario, steps);

	/* A remove-server of server 3: three libraries, then the server. */
	remove_srv = pgtest_int(setup, "SELECT (cleanup.job_create('remove-server', 3, 'bounded')).id");
	steps = run_job(&f, x, checker, &docs, remove_srv, NULL, 10, 0);
	assert_int_equal(pgtest_int(checker, "SELECT count(*) FROM inventory.media_servers WHERE id = 3"), 0);
	printf("%s: remove-server 3 in %d steps\n", f.scenario, steps);

	check_console(&f, x, checker, &docs, prune, "after the jobs");

	if (!analyzed) {
		/* Nothing analyzed these tables meanwhile: the plans above were
		 * made without statistics. */
		assert_int_equal(pgtest_int(checker,
		                            "SELECT count(*) FROM pg_stat_user_tables "
		                            " WHERE relid IN ('inventory.items'::regclass, 'cleanup.manifest'::regclass) "
		                            "   AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)"),
		                 0);
		assert_int_equal(pgtest_int(checker, "SELECT count(*) FROM pg_class WHERE oid IN ('inventory.items'::regclass, "
		                                     "'cleanup.manifest'::regclass) AND reltuples >= 0"),
		                 0);
	}

	printf("%s: %d plans checked (%d console), %d drain steps reading inventory.items, %d final-check pages; "
	       "a drain step's node on inventory.items read at most %.0f rows (bound %d); violations: %d excused "
	       "(060), %d enforced\n",
	       f.scenario, f.statements, f.console, f.drains, f.pages, f.max_drain, BOUND_STEP, f.known, f.unknown);
	fflush(stdout);
	/* The test saw what it claims to check. */
	assert_true(f.drains > 100);
	assert_true(f.pages >= 2);
	assert_true(f.console >= 12);
	docs_clear(&docs);
	free(docs.doc);
	PQfinish(x);
	PQfinish(checker);
	PQfinish(setup);
	free(ci);
	if (f.known > 0)
		printf("%s: %d violations in 060 statements excused (%s; CLEANUP_PLANS_STRICT=1 enforces them)\n",
		       f.scenario, f.known, f.pending ? "pending: the retained pass's job_retained scan" : "old known cases");
	assert_int_equal(f.unknown, 0);
}

static void test_B1_step_plans_bounded_on_unanalyzed_data(void **state)
{
	(void)state;
	scenario("plans_fresh", false);
}

static void test_B1_step_plans_bounded_on_analyzed_data(void **state)
{
	(void)state;
	scenario("plans_analyzed", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_B1_step_plans_bounded_on_unanalyzed_data),
		cmocka_unit_test(test_B1_step_plans_bounded_on_analyzed_data),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Dependents (seed 001; INVARIANTS D1-D6) against the real
 * server: dispositions known and unknown, the one budget of 128 domain
 * mutations with hundreds of dependents per item (asserted from the step
 * records), claims (a move before the claim keeps the item and all its
 * dependents; a claimed item's writes are refused; claims resume through a
 * new connection), dependent admission while draining (nothing enters
 * between the last dependent deletion and the parent deletion), and the
 * history detachment that keeps names, errors and audit payloads. */
#include "test_step_support.h"

PGTEST_DB_SETUP(ci, pgtest_fresh_db("dependents"))

/* Dependents of the items of library LIB, with a spread: item n (its
 * number in the external ID) gets n % 4 retries and n % 3 previews, and
 * every item whose number is a multiple of HEAVY (0: none) gets 300 retries
 * and 40 previews more. */
static void add_item_dependents(PGconn *c, int64_t lib, int heavy)
{
	pgtest_exec(c,
	            "INSERT INTO inventory.item_retries (item_id, reason) "
	            "SELECT i.id, 'retry ' || g FROM inventory.items i, "
	            "LATERAL generate_series(1, substring(i.external_id from '([0-9]+)$')::int %% 4 "
	            "  + CASE WHEN %d > 0 AND substring(i.external_id from '([0-9]+)$')::int %% %d = 0 THEN 300 ELSE 0 END) g "
	            "WHERE i.library_id = %lld ORDER BY i.id, g",
	            heavy, heavy > 0 ? heavy : 1, (long long)lib);
	pgtest_exec(c,
	            "INSERT INTO inventory.identity_review_previews (item_id, candidate, score) "
	            "SELECT i.id, 'candidate ' || g, 0.5 FROM inventory.items i, "
	            "LATERAL generate_series(1, substring(i.external_id from '([0-9]+)$')::int %% 3 "
	            "  + CASE WHEN %d > 0 AND substring(i.external_id from '([0-9]+)$')::int %% %d = 0 THEN 40 ELSE 0 END) g "
	            "WHERE i.library_id = %lld ORDER BY i.id, g",
	            heavy, heavy > 0 ? heavy : 1, (long long)lib);
}

/* Dependents of library LIB itself: 200 collections, a sync status, and
 * history rows (completed, failed with an error, running with a name
 * already kept), each with an audit payload. */
static void add_library_dependents(PGconn *c, int64_t lib)
{
	pgtest_exec(c, "INSERT INTO inventory.library_collections (library_id, name) "
	               "SELECT %lld, 'collection ' || g FROM generate_series(1, 200) g",
	            (long long)lib);
	pgtest_exec(c, "INSERT INTO inventory.library_sync_status (library_id, state) VALUES (%lld, 'idle')",
	            (long long)lib);
	pgtest_exec(c,
	            "INSERT INTO inventory.classification_history (library_id, library_name, status, error, payload) "
	            "SELECT %lld, CASE WHEN g %% 3 = 2 THEN 'kept name' END, "
	            "       (ARRAY['completed', 'failed', 'running'])[g %% 3 + 1], "
	            "       CASE WHEN g %% 3 = 1 THEN 'disk full' END, jsonb_build_object('run', g) "
	            "FROM generate_series(1, 150) g",
	            (long long)lib);
}

/* Runs the next step of JOB through SQL; returns its action (static). */
static const char *next_step(PGconn *c, int64_t job)
{
	static char action[64];
	char *a = pgtest_text(c, "SELECT action FROM cleanup.job_step(%lld, %lld)", (long long)job,
	                      (long long)job_int(c, job, "step_no") + 1);

	snprintf(action, sizeof action, "%s", a ? a : "");
	free(a);
	return action;
}

/* D1: known references (the lab's dependents) are accepted at plan and in
 * every step; a new reference without a disposition is refused at plan
 * (CU404, exit 4, nothing fenced), and a step refuses it before any
 * mutation even when it is RESTRICT. */
static void test_D1_known_references_accepted_unknown_refused(void **state)
{
	PGconn *c = conn("d1"), *dba = conn("d1-dba");
	int64_t srv, lib, job, step;
	char *before;

	(void)state;
	lib = new_server_library(c, "d1", 300, &srv);
	add_item_dependents(c, lib, 0);
	add_library_dependents(c, lib);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.reference_dispositions"), 9);
	job = sealed_prune(c, lib, "d1", 300, 2);
	assert_string_equal(next_step(c, job), "drain");

	/* A RESTRICT reference nobody recorded: the step refuses, CU404. */
	pgtest_exec(dba, "CREATE TABLE public.d1_notes (item_id bigint REFERENCES inventory.items ON DELETE RESTRICT)");
	pgtest_exec(dba, "SELECT cleanup.contract_record()");   /* even with a contract that contains it */
	before = pgtest_fingerprint(c);
	step = job_int(c, job, "step_no");
	pgtest_fails(c, "CU404", "public.d1_notes(item_id) -> inventory.items ON DELETE restrict",
	             "SELECT cleanup.job_step(%lld, %lld)", (long long)job,
	             (long long)step + 1);
	pgtest_unchanged(c, before);

	/* At plan: a removal of another server is refused before fencing. */
	lib = new_server_library(c, "d1b", 10, &srv);
	pgtest_fails(c, "CU404", NULL, "SELECT cleanup.job_create('remove-library', %lld)", (long long)lib);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.library_admission WHERE library_id = %lld "
	                               "AND state = 'open'", (long long)lib),
	                 1);
	pgtest_exec(dba, "DROP TABLE public.d1_notes");
	assert_int_equal(ctl(NULL, "install"), 0);
	run_to_completion(c, job);
	assert_steps_consistent(c, job);
	pgtest_close_all(c, dba, NULL);
}

/* D1, bad input: a disposition for a table that does not exist, for a
 * cascade, for a reference outside the inventory or one the engine does
 * not carry out: CU102 (exit 2 class), naming the value, nothing recorded. */
static void test_D1_bad_dispositions_are_refused(void **state)
{
	/* Each refused disposition and what its message says. */
	static const struct {
		const char *table, *constraint, *disposition, *says[2];
	} bad[] = {
	    {"public.nope", "x", "delete-with-item", {"\"public.nope\"", "no such table"}},
	    {"public.d1_cascade", "d1_cascade_item_id_fkey", "delete-with-item", {"ON DELETE CASCADE"}},
	    {"public.d1_ref", "d1_ref_o_fkey", "delete-with-item", {"not a foreign key into the inventory"}},
	    {"public.d1_ref", "d1_ref_item_id_fkey", "delete-with-item", {"does not carry it out"}},
	    {"inventory.item_retries", "item_retries_item_id_fkey", "detach-and-keep", {NULL}},
	};
	PGconn *c = conn("d1-bad");
	char msg[1024];
	size_t i, j;
	char *before, *after;

	(void)state;
	pgtest_exec(c, "CREATE TABLE public.d1_cascade (item_id bigint REFERENCES inventory.items ON DELETE CASCADE)");
	pgtest_exec(c, "CREATE TABLE public.d1_other (id int PRIMARY KEY)");
	pgtest_exec(c, "CREATE TABLE public.d1_ref (o int REFERENCES public.d1_other, "
	               "item_id bigint REFERENCES inventory.items ON DELETE RESTRICT)");
	before = pgtest_text(c, "SELECT string_agg(d::text, ';' ORDER BY constraint_oid) FROM cleanup.reference_dispositions d");
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_string_equal(pgtest_fail(c, msg, sizeof msg,
		                                "SELECT cleanup.record_disposition('%s', '%s', '%s')",
		                                bad[i].table, bad[i].constraint, bad[i].disposition),
		                    "CU102");
		for (j = 0; j < 2 && bad[i].says[j]; j++)
			assert_non_null(strstr(msg, bad[i].says[j]));
	}
	after = pgtest_text(c, "SELECT string_agg(d::text, ';' ORDER BY constraint_oid) FROM cleanup.reference_dispositions d");
	assert_string_equal(before, after);
	free(before);
	free(after);
	/* And install refuses to record a contract with them (exit 4). */
	assert_int_equal(ctl(NULL, "install"), 4);
	pgtest_exec(c, "DROP TABLE public.d1_cascade, public.d1_ref, public.d1_other");
	assert_int_equal(ctl(NULL, "install"), 0);
	PQfinish(c);
}

/* D1's check as every step runs it, cleanup.has_unknown_references,
 * finds a foreign key through the catalog's dependencies (by index), not
 * by a scan of pg_constraint (docs/benchmarks.md, "Catalog reads a
 * step"). It must find every kind the scan finds: each case below is
 * asked of it and of the scan's definition, written out, for a prune's
 * tables and a removal's, and each has the answer it must have. */
static void test_D1_every_unknown_reference_found_without_a_catalog_scan(void **state)
{
	/* Each DDL adds one reference into the inventory nobody recorded;
	 * PRUNE, REMOVAL: whether a prune's tables (items) and a removal's
	 * (items, libraries) then have an unknown reference. */
	static const struct {
		const char *what, *ddl;
		bool prune, removal;
	} cases[] = {
	    {"nothing new", NULL, false, false},
	    {"a RESTRICT key", "CREATE TABLE public.k1 (item_id bigint REFERENCES inventory.items ON DELETE RESTRICT)",
	     true, true},
	    {"a key NOT VALID",
	     "CREATE TABLE public.k1 (item_id bigint); ALTER TABLE public.k1 ADD FOREIGN KEY (item_id) "
	     "REFERENCES inventory.items NOT VALID",
	     true, true},
	    {"a SET NULL key", "CREATE TABLE public.k1 (item_id bigint REFERENCES inventory.items ON DELETE SET NULL)",
	     true, true},
	    {"a two-column key",
	     "CREATE TABLE public.k1 (lib bigint, ext text, FOREIGN KEY (lib, ext) "
	     "REFERENCES inventory.items (library_id, external_id))",
	     true, true},
	    {"a partitioned table's key",
	     "CREATE TABLE public.k1 (item_id bigint REFERENCES inventory.items, n int) PARTITION BY RANGE (n); "
	     "CREATE TABLE public.k1_a PARTITION OF public.k1 FOR VALUES FROM (0) TO (10); "
	     "CREATE TABLE public.k1_b PARTITION OF public.k1 FOR VALUES FROM (10) TO (20)",
	     true, true},
	    {"a key into libraries only", "CREATE TABLE public.k1 (lib bigint REFERENCES inventory.libraries)", false,
	     true},
	    {"a key of another application's table", "CREATE TABLE public.k1 (id int PRIMARY KEY, up int REFERENCES public.k1)",
	     false, false},
	};
	static const char *const tables[2] = {"ARRAY['inventory.items'::regclass]",
	                                      "ARRAY['inventory.items'::regclass, 'inventory.libraries'::regclass]"};
	PGconn *c = conn("d1-found");
	size_t i, t;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (cases[i].ddl)
			pgtest_exec(c, "%s", cases[i].ddl);
		for (t = 0; t < 2; t++) {
			char *got = pgtest_text(
			    c,
			    "SELECT cleanup.has_unknown_references(%s)::text || ' ' || EXISTS ("
			    "  SELECT 1 FROM pg_constraint c WHERE c.contype = 'f' AND c.confrelid = ANY (%s) "
			    "     AND (c.confdeltype NOT IN ('a', 'r') OR NOT EXISTS ("
			    "          SELECT 1 FROM cleanup.reference_dispositions d WHERE d.constraint_oid = c.oid)))::text",
			    tables[t], tables[t]);
			bool want = t == 0 ? cases[i].prune : cases[i].removal;

			printf("%s, %s: %s\n", cases[i].what, t == 0 ? "prune" : "removal", got);
			assert_string_equal(got, want ? "true true" : "false false");
			free(got);
		}
		pgtest_exec(c, "DROP TABLE IF EXISTS public.k1");
	}
	assert_int_equal(ctl(NULL, "install"), 0);
	PQfinish(c);
}

/* D2: a prune whose items have 0 to 343 dependents: every step's recorded
 * domain mutations are at most 128 (and one step reaches 128), an item with
 * hundreds of dependents is claimed in one step, drained across the next
 * ones and deleted last; the result is the ground truth: unseen items and
 * exactly their dependents gone, seen items and all of theirs intact. */
static void test_D2_prune_with_hundreds_of_dependents_stays_in_budget(void **state)
{
	PGconn *c = conn("d2");
	int64_t srv, lib, job, seen_retries, seen_previews, unseen_retries, unseen_previews;

	(void)state;
	lib = new_server_library(c, "d2", 1000, &srv);
	add_item_dependents(c, lib, 97);
	job = sealed_prune(c, lib, "d2", 1000, 2);
	unseen_retries = pgtest_int(c, "SELECT count(*) FROM inventory.item_retries r JOIN inventory.items i ON i.id = r.item_id "
	                               "WHERE i.library_id = %lld AND substring(i.external_id from '([0-9]+)$')::int %% 2 = 1",
	                            (long long)lib);
	unseen_previews = pgtest_int(c, "SELECT count(*) FROM inventory.identity_review_previews r JOIN inventory.items i "
	                                "ON i.id = r.item_id WHERE i.library_id = %lld "
	                                "AND substring(i.external_id from '([0-9]+)$')::int %% 2 = 1",
	                             (long long)lib);
	seen_retries = pgtest_int(c, "SELECT count(*) FROM inventory.item_retries") - unseen_retries;
	seen_previews = pgtest_int(c, "SELECT count(*) FROM inventory.identity_review_previews") - unseen_previews;
	assert_true(unseen_retries > 300 * 5);

	run_to_completion(c, job);
	assert_steps_consistent(c, job);
	assert_int_equal(pgtest_int(c, "SELECT max(mutations) FROM cleanup.job_steps WHERE job_id = %lld", (long long)job),
	                 128);
	/* Ground truth. */
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib), 500);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld "
	                               "AND substring(external_id from '([0-9]+)$')::int %% 2 = 1", (long long)lib),
	                 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.item_retries"), seen_retries);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.identity_review_previews"), seen_previews);
	assert_int_equal(job_int(c, job, "deleted"), 500);
	assert_int_equal(job_int(c, job, "retries_deleted"), unseen_retries);
	assert_int_equal(job_int(c, job, "previews_deleted"), unseen_previews);
	assert_int_equal(job_int(c, job, "claimed"), job_int(c, job, "released"));
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE claimed_by IS NOT NULL"), 0);
	/* Items with 300+ dependents (97, 291, ...: odd multiples of 97 are
	 * unseen) needed steps where claims stayed in flight. */
	assert_true(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND action = 'drain-claims' "
	                          "AND claims_in_flight > 0", (long long)job) >= 5);
	/* job show says it in text and JSON. */
	{
		char *out = NULL;
		char want[160];

		assert_int_equal(ctl(&out, "job show %lld", (long long)job), 0);
		snprintf(want, sizeof want, "%lld item retries", (long long)unseen_retries);
		assert_non_null(strstr(out, want));
		assert_non_null(strstr(out, "0 in flight"));
		free(out);
		assert_int_equal(ctl(&out, "--json job show %lld", (long long)job), 0);
		snprintf(want, sizeof want, "\"item_retries\": %lld", (long long)unseen_retries);
		assert_non_null(strstr(out, want));
		free(out);
	}
	/* The step JSON names the kinds. */
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps s WHERE job_id = %lld "
	                               "AND (cleanup.step_json(s)->'mutations_by_kind'->>'item_retries')::int <> s.retries_deleted",
	                            (long long)job),
	                 0);
	PQfinish(c);
}

/* D2 (and seed 001's reservation): an item whose dependents fit what its
 * step's plain deletes leave of the budget goes with them in that step,
 * under the step's row lock, unclaimed; only what does not fit is
 * claimed, and a step takes as many candidates as the budget covers at
 * what an item has cost the job so far. 1,000 items with 0 to 3 retries
 * and 0 to 2 previews each: the first step takes 128 candidates and
 * claims the items with dependents it cannot fit; the later steps claim
 * few. Before, every unseen item with a dependent was claimed. */
static void test_D2_dependents_that_fit_go_in_their_step_unclaimed(void **state)
{
	PGconn *c = conn("d2fit");
	int64_t srv, lib, job, with_deps, first_claims, later_claims;

	(void)state;
	lib = new_server_library(c, "d2fit", 1000, &srv);
	add_item_dependents(c, lib, 0);
	job = sealed_prune(c, lib, "d2fit", 1000, 2);
	with_deps = pgtest_int(c, "SELECT count(*) FROM inventory.items i WHERE i.library_id = %lld "
	                          "AND substring(i.external_id from '([0-9]+)$')::int %% 2 = 1 "
	                          "AND (EXISTS (SELECT 1 FROM inventory.item_retries r WHERE r.item_id = i.id) "
	                          "     OR EXISTS (SELECT 1 FROM inventory.identity_review_previews p WHERE p.item_id = i.id))",
	                       (long long)lib);
	assert_true(with_deps > 300);

	run_to_completion(c, job);
	assert_steps_consistent(c, job);
	assert_true(pgtest_int(c, "SELECT max(mutations) FROM cleanup.job_steps WHERE job_id = %lld", (long long)job) <=
	            128);
	assert_int_equal(job_int(c, job, "deleted"), 500);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld "
	                               "AND substring(external_id from '([0-9]+)$')::int %% 2 = 1", (long long)lib),
	                 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.item_retries r JOIN inventory.items i "
	                               "ON i.id = r.item_id WHERE i.library_id = %lld "
	                               "AND substring(i.external_id from '([0-9]+)$')::int %% 2 = 1", (long long)lib),
	                 0);
	assert_int_equal(job_int(c, job, "claimed"), job_int(c, job, "released"));
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE claimed_by IS NOT NULL"), 0);
	first_claims = pgtest_int(c, "SELECT claimed FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 1",
	                          (long long)job);
	later_claims = pgtest_int(c, "SELECT coalesce(sum(claimed), 0) FROM cleanup.job_steps "
	                             "WHERE job_id = %lld AND step_no > 1", (long long)job);
	printf("d2fit: %lld unseen items with dependents, claimed %lld in step 1 and %lld after\n",
	       (long long)with_deps, (long long)first_claims, (long long)later_claims);
	/* Step 1 deleted items with dependents unclaimed, and claimed the rest
	 * of its batch's. */
	assert_true(pgtest_int(c, "SELECT retries_deleted + previews_deleted FROM cleanup.job_steps "
	                          "WHERE job_id = %lld AND step_no = 1", (long long)job) > 0);
	assert_true(first_claims > 0);
	/* The later steps, their batches sized by the job's cost per item,
	 * claimed few of the rest: at most one in ten. */
	assert_true(later_claims * 10 <= with_deps - first_claims);
	/* Steps that deleted dependents and claimed nothing: the common case. */
	assert_true(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND visited > 0 "
	                          "AND claimed = 0 AND retries_deleted + previews_deleted > 0", (long long)job) >= 3);
	PQfinish(c);
}

/* D3: an unseen item moved out of the draining library (into an open one
 * of the same server) before a step claimed it keeps all its dependents. */
static void test_D3_move_before_claim_keeps_dependents(void **state)
{
	PGconn *c = conn("d3");
	int64_t srv, lib, other, job, item, deps;

	(void)state;
	lib = new_server_library(c, "d3", 400, &srv);
	other = pgtest_new_library(c, srv, "d3-other", 0);
	add_item_dependents(c, lib, 97);
	job = sealed_prune(c, lib, "d3", 400, 2);
	item = pgtest_int(c, "SELECT id FROM inventory.items WHERE library_id = %lld AND external_id = 'd3-291'",
	                  (long long)lib);
	deps = pgtest_int(c, "SELECT (SELECT count(*) FROM inventory.item_retries WHERE item_id = %lld) + "
	                     "(SELECT count(*) FROM inventory.identity_review_previews WHERE item_id = %lld)",
	                  (long long)item, (long long)item);
	assert_true(deps > 300);
	pgtest_exec(c, "UPDATE inventory.items SET library_id = %lld WHERE id = %lld", (long long)other, (long long)item);
	run_to_completion(c, job);
	assert_steps_consistent(c, job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld AND library_id = %lld",
	                            (long long)item, (long long)other),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT (SELECT count(*) FROM inventory.item_retries WHERE item_id = %lld) + "
	                               "(SELECT count(*) FROM inventory.identity_review_previews WHERE item_id = %lld)",
	                            (long long)item, (long long)item),
	                 deps);
	assert_int_equal(job_int(c, job, "deleted"), 199);   /* 200 unseen, one moved away before the job saw it */
	PQfinish(c);
}

/* D4: a claimed item (claimed in one step, its 300+ dependents drained
 * over the next) refuses updates, moves, deletes, new dependents and a
 * writer's deletion of its dependents (CUA10, nothing changed); the claim
 * survives the connection, and a new one finishes the job exactly. */
static void test_D4_claimed_item_refuses_writes_and_resumes(void **state)
{
	PGconn *c = conn("d4"), *w = conn("d4-writer");
	int64_t srv, lib, other, job, item, retry;
	/* The writes to the claimed item and its dependents, each refused:
	 * SQL of one or two ids (A, then B). */
	const struct {
		const char *sql;
		const int64_t *a, *b;
	} refused[] = {
		{"UPDATE inventory.items SET library_id = %lld WHERE id = %lld", &other, &item},
		{"DELETE FROM inventory.items WHERE id = %lld", &item, &item},
		{"INSERT INTO inventory.item_retries (item_id, reason) VALUES (%lld, 'w')", &item, &item},
		{"INSERT INTO inventory.identity_review_previews (item_id, candidate) VALUES (%lld, 'w')", &item, &item},
		{"DELETE FROM inventory.item_retries WHERE id = %lld", &retry, &retry},
		{"UPDATE inventory.item_retries SET attempt = 2 WHERE id = %lld", &retry, &retry},
	};
	size_t i;
	int n;

	(void)state;
	lib = new_server_library(c, "d4", 200, &srv);
	other = pgtest_new_library(c, srv, "d4-other", 0);
	add_item_dependents(c, lib, 97);
	/* Only item 97 is unseen: everything else is in the manifest. */
	job = pgtest_job_create(c, "prune", lib);
	pgtest_exec(c, "SELECT cleanup.job_append(%lld, ARRAY(SELECT 'd4-' || g FROM generate_series(1, 128) g WHERE g <> 97))",
	            (long long)job);
	pgtest_exec(c, "SELECT cleanup.job_append(%lld, ARRAY(SELECT 'd4-' || g FROM generate_series(129, 200) g))",
	            (long long)job);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 199)", (long long)job);
	item = pgtest_int(c, "SELECT id FROM inventory.items WHERE external_id = 'd4-97'");
	assert_string_equal(next_step(c, job), "drain");
	assert_int_equal(pgtest_int(c, "SELECT claimed_by FROM inventory.items WHERE id = %lld", (long long)item), job);
	assert_true(pgtest_int(c, "SELECT claims_in_flight FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 1",
	                       (long long)job) == 1);
	retry = pgtest_int(c, "SELECT min(id) FROM inventory.item_retries WHERE item_id = %lld", (long long)item);
	assert_true(retry > 0);

	pgtest_fails(w, "CUA10", "claimed by cleanup job",
	             "UPDATE inventory.items SET title = 'x' WHERE id = %lld",
	             (long long)item);
	for (i = 0; i < sizeof refused / sizeof *refused; i++)
		pgtest_fails(w, "CUA10", NULL, refused[i].sql, (long long)*refused[i].a, (long long)*refused[i].b);
	/* A writer in REPEATABLE READ whose snapshot predates the claim
	 * cannot update the item either (the claim wrote its row). */
	PQfinish(c);

	/* A new connection resumes the claim. */
	c = conn("d4-resume");
	n = 0;
	while (strcmp(job_phase(c, job), "completed") != 0 && n++ < 50)
		next_step(c, job);
	assert_string_equal(job_phase(c, job), "completed");
	assert_steps_consistent(c, job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)item), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib), 199);
	assert_job_counts(c, job, "claimed, released, deleted", "1, 1, 1");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.item_retries WHERE item_id = %lld", (long long)item),
	                 0);
	pgtest_close_all(c, w, NULL);
}

/* D4 in REPEATABLE READ: a writer whose snapshot was taken before the
 * claim committed cannot update the claimed item nor add a dependent for
 * it (serialization failure, 40001, where READ COMMITTED gets CUA10). */
static void test_D4_claim_holds_against_repeatable_read_writers(void **state)
{
	PGconn *c = conn("d4rr"), *w = conn("d4rr-writer"), *w2 = conn("d4rr-writer2");
	int64_t srv, lib, job, item;

	(void)state;
	lib = new_server_library(c, "d4rr", 100, &srv);
	add_item_dependents(c, lib, 97);
	job = pgtest_job_create(c, "prune", lib);
	pgtest_exec(c, "SELECT cleanup.job_append(%lld, ARRAY(SELECT 'd4rr-' || g FROM generate_series(1, 100) g WHERE g <> 97))",
	            (long long)job);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 99)", (long long)job);
	item = pgtest_int(c, "SELECT id FROM inventory.items WHERE external_id = 'd4rr-97'");
	pgtest_exec(w, "BEGIN ISOLATION LEVEL REPEATABLE READ");
	pgtest_exec(w2, "BEGIN ISOLATION LEVEL REPEATABLE READ");
	assert_int_equal(pgtest_int(w, "SELECT count(*) FROM inventory.items WHERE id = %lld AND claimed_by IS NULL",
	                            (long long)item),
	                 1);
	assert_int_equal(pgtest_int(w2, "SELECT count(*) FROM inventory.items WHERE id = %lld AND claimed_by IS NULL",
	                            (long long)item),
	                 1);
	assert_string_equal(next_step(c, job), "drain");
	assert_int_equal(pgtest_int(c, "SELECT claimed_by FROM inventory.items WHERE id = %lld", (long long)item), job);
	pgtest_fails(w, "40001", NULL, "UPDATE inventory.items SET title = 'rr' WHERE id = %lld", (long long)item);
	pgtest_fails(w2, "40001", NULL,
	             "INSERT INTO inventory.item_retries (item_id, reason) VALUES (%lld, 'rr')",
	             (long long)item);
	pgtest_exec(w, "ROLLBACK");
	pgtest_exec(w2, "ROLLBACK");
	/* A fresh snapshot sees the claim: CUA10. */
	pgtest_fails(w, "CUA10", NULL,
	             "INSERT INTO inventory.item_retries (item_id, reason) VALUES (%lld, 'rr')",
	             (long long)item);
	assert_int_equal(ctl(NULL, "job run %lld", (long long)job), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)item), 0);
	pgtest_close_all(c, w, w2, NULL);
}

/* Each of the N statements SQL (one %lld: library LIB) is refused on W:
 * CUA11, no dependent of a draining library is written. */
static void dependents_refused(PGconn *w, int64_t lib, const char *const *sql, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		pgtest_fails(w, "CUA11", NULL, sql[i], (long long)lib);
}

/* D5, D6, item 6: a remove-library with items, item dependents and
 * library dependents: while it drains, no dependent enters (CUA11); the
 * library's own dependents are drained under the same budget after its
 * items; at the last moment before the parent delete (the preview says
 * the next step deletes the library) nothing can enter either, and a
 * writer holding the library row makes the parent delete busy, never
 * waiting. History is detached with its values kept. */
static void test_D5_D6_remove_library_with_dependents(void **state)
{
	/* Writes of dependents of the draining library (one %lld: the library). */
	static const char *const while_draining[] = {
		"UPDATE inventory.classification_history SET error = 'x' WHERE library_id = %lld",
		"DELETE FROM inventory.library_sync_status WHERE library_id = %lld",
		("INSERT INTO inventory.item_retries (item_id, reason) "
		 "SELECT min(id), 'late' FROM inventory.items WHERE library_id = %lld"),
	};
	static const char *const at_the_last_moment[] = {
		"INSERT INTO inventory.library_collections (library_id, name) VALUES (%lld, 'last moment')",
		"INSERT INTO inventory.library_sync_status (library_id, state) VALUES (%lld, 'syncing')",
		"INSERT INTO inventory.classification_history (library_id, status) VALUES (%lld, 'queued')",
	};
	PGconn *c = conn("d5"), *w = conn("d5-writer");
	int64_t srv, lib, keep, job, n;
	char *payloads_before, *payloads_after;

	(void)state;
	lib = new_server_library(c, "d5", 600, &srv);
	keep = pgtest_new_library(c, srv, "d5-keep", 50);
	add_item_dependents(c, lib, 97);
	add_item_dependents(c, keep, 0);
	add_library_dependents(c, lib);
	add_library_dependents(c, keep);
	payloads_before = pgtest_text(c, "SELECT string_agg(payload::text, ',' ORDER BY id) FROM inventory.classification_history "
	                                 "WHERE library_id = %lld", (long long)lib);
	job = pgtest_job_create(c, "remove-library", lib);

	pgtest_fails(w, "CUA11", "inventory.library_collections",
	             "INSERT INTO inventory.library_collections (library_id, name) "
	             "VALUES (%lld, 'late')", (long long)lib);
	dependents_refused(w, lib, while_draining, sizeof while_draining / sizeof *while_draining);
	/* The kept library is open. */
	pgtest_exec(w, "INSERT INTO inventory.library_collections (library_id, name) VALUES (%lld, 'fine')", (long long)keep);

	/* Step until the next step would delete the parent. */
	n = 0;
	while (n++ < 400) {
		char *next = pgtest_text(c, "SELECT action FROM cleanup.job_step_preview(%lld)", (long long)job);
		int last = strcmp(next, "delete-library") == 0;

		free(next);
		if (last)
			break;
		next_step(c, job);
	}
	assert_string_equal(job_phase(c, job), "finalizing");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.library_collections WHERE library_id = %lld",
	                            (long long)lib),
	                 0);
	assert_true(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld "
	                          "AND action = 'drain-library-dependents'", (long long)job) >= 3);
	/* Nothing enters now. */
	dependents_refused(w, lib, at_the_last_moment, sizeof at_the_last_moment / sizeof *at_the_last_moment);
	/* A writer holding the library row: the parent delete is busy. */
	pgtest_begin(w, "SELECT 1 FROM inventory.libraries WHERE id = %lld FOR KEY SHARE", (long long)lib);
	pgtest_fails(c, "55P03", NULL,
	             "SELECT cleanup.job_step(%lld, %lld)", (long long)job,
	             (long long)job_int(c, job, "step_no") + 1);
	pgtest_exec(w, "ROLLBACK");
	assert_string_equal(next_step(c, job), "delete-library");
	assert_string_equal(job_phase(c, job), "completed");
	assert_steps_consistent(c, job);
	assert_int_equal(pgtest_int(c, "SELECT (max(parent_lock_ms) < 1000)::int FROM cleanup.job_steps WHERE job_id = %lld",
	                            (long long)job),
	                 1);

	/* Ground truth. */
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 0);
	assert_job_counts(c, job, "deleted, collections_deleted, sync_status_deleted, history_detached",
	                  "600, 200, 1, 150");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.library_collections WHERE library_id = %lld",
	                            (long long)keep),
	                 201);
	/* D6: detached, never deleted; names, errors, payloads kept. */
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.classification_history WHERE library_id IS NULL"), 150);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.classification_history WHERE library_id IS NULL "
	                               "AND library_name = 'kept name'"),
	                 50);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.classification_history WHERE library_id IS NULL "
	                               "AND library_name = 'd5'"),
	                 100);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.classification_history WHERE library_id IS NULL "
	                               "AND error = 'disk full' AND status_before_detach = 'failed'"),
	                 50);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.classification_history WHERE library_id IS NULL "
	                               "AND status = 'failed' AND detached_at IS NOT NULL"),
	                 150);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.classification_history WHERE library_id IS NULL "
	                               "AND status_before_detach = 'completed' AND error = 'library deleted'"),
	                 50);
	payloads_after = pgtest_text(c, "SELECT string_agg(payload::text, ',' ORDER BY id) FROM inventory.classification_history "
	                                "WHERE library_id IS NULL");
	assert_string_equal(payloads_before, payloads_after);
	free(payloads_before);
	free(payloads_after);
	pgtest_close_all(c, w, NULL);
}

/* D2, item 6: a remove-server with two libraries of items with dependents
 * and library dependents: every step within the budget, everything of the
 * server gone, the history detached. */
static void test_D2_remove_server_with_dependents(void **state)
{
	PGconn *c = conn("d2s");
	int64_t srv, a, b, job;

	(void)state;
	srv = pgtest_new_server(c, "d2s");
	a = pgtest_new_library(c, srv, "d2s-a", 300);
	b = pgtest_new_library(c, srv, "d2s-b", 300);
	add_item_dependents(c, a, 97);
	add_item_dependents(c, b, 50);
	add_library_dependents(c, a);
	add_library_dependents(c, b);
	job = pgtest_job_create(c, "remove-server", srv);
	run_to_completion(c, job);
	assert_steps_consistent(c, job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.media_servers WHERE id = %lld", (long long)srv), 0);
	assert_job_counts(c, job, "deleted, collections_deleted, history_detached, libraries_deleted",
	                  "600, 400, 300, 2");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND mutations > 128",
	                            (long long)job),
	                 0);
	PQfinish(c);
}

PGTEST_MAIN(cmocka_unit_test(test_D1_known_references_accepted_unknown_refused),
            cmocka_unit_test(test_D1_bad_dispositions_are_refused),
            cmocka_unit_test(test_D1_every_unknown_reference_found_without_a_catalog_scan),
            cmocka_unit_test(test_D2_prune_with_hundreds_of_dependents_stays_in_budget),
            cmocka_unit_test(test_D2_dependents_that_fit_go_in_their_step_unclaimed),
            cmocka_unit_test(test_D3_move_before_claim_keeps_dependents),
            cmocka_unit_test(test_D4_claimed_item_refuses_writes_and_resumes),
            cmocka_unit_test(test_D4_claim_holds_against_repeatable_read_writers),
            cmocka_unit_test(test_D5_D6_remove_library_with_dependents),
            cmocka_unit_test(test_D2_remove_server_with_dependents))

/* Bounded steps of prune jobs against the real PostgreSQL, with concurrent
 * writers on other connections (S1-S9, A1, A3, A6). Rows are changed
 * between a step's discovery and its re-read deterministically with the
 * test-only hook: the step waits on an advisory lock this test holds
 * (docs/steps.md, "Failpoints"). */
#include "test_step_support.h"

#define HOOK_ENV "PGOPTIONS='-c cleanup.test_hook=after_discovery'"

PGTEST_DB_SETUP(ci, pgtest_fresh_db("step_prune"))

/* application_name of `job step JOB` (cmd_job_step.c). */
static const char *step_app(int64_t job)
{
	static char app[64];

	snprintf(app, sizeof app, "cleanupctl:job:%lld:step", (long long)job);
	return app;
}

/* Item ID of library LIB named EXT, inserted on W with the triggers off
 * (session_replication_role = replica): a row that got past the guards. */
static void insert_past_guards(PGconn *w, int64_t id, int64_t lib, const char *ext)
{
	pgtest_exec(w, "SET session_replication_role = replica");
	pgtest_exec(w, "INSERT INTO inventory.items (id, library_id, external_id) VALUES (%lld, %lld, '%s')",
	            (long long)id, (long long)lib, ext);
	pgtest_exec(w, "RESET session_replication_role");
}

/* S3, S6, S7, S9: a prune deletes exactly the unseen items at or below the
 * high-water id, keeps every seen one, completes only after the final
 * check, reopens admission, and its counters equal the ground truth; three
 * processes (new connections) share the work. */
static void test_S6_S9_prune_counters_equal_ground_truth(void **state)
{
	PGconn *c = conn("truth");
	int64_t srv, lib, job, eligible, seen;

	(void)state;
	job = new_sealed_prune(c, "truth", 1000, 3, &lib, &srv);
	seen = job_int(c, job, "manifest_count");
	assert_int_equal(seen, 333);
	eligible = pgtest_int(c,
	                      "SELECT count(*) FROM inventory.items i WHERE library_id = %lld AND NOT EXISTS "
	                      "(SELECT 1 FROM cleanup.manifest m WHERE m.job_id = %lld AND m.external_id = i.external_id)",
	                      (long long)lib, (long long)job);
	assert_int_equal(eligible, 667);

	/* S9: each process resumes from the last committed step. */
	assert_int_equal(ctl(NULL, "job run %lld --max-steps 3", (long long)job), 0);
	assert_int_equal(job_int(c, job, "step_no"), 3);
	assert_int_equal(ctl(NULL, "job step %lld --steps 2", (long long)job), 0);
	assert_int_equal(job_int(c, job, "step_no"), 5);
	assert_string_equal(job_phase(c, job), "draining");
	expect_ctl(0, "\"completed\": true", "--json job run %lld", (long long)job);

	assert_string_equal(job_phase(c, job), "completed");
	assert_int_equal(job_int(c, job, "deleted"), eligible);
	assert_int_equal(job_int(c, job, "kept"), seen);
	/* Every row examined once; only the candidates were visited (S1). */
	assert_int_equal(job_int(c, job, "examined"), 1000);
	assert_int_equal(job_int(c, job, "visited"), eligible);
	assert_int_equal(job_int(c, job, "moved") + job_int(c, job, "absent") + job_int(c, job, "retained"), 0);
	/* Every seen item is still there, nothing else is. */
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib), seen);
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.manifest m WHERE m.job_id = %lld AND NOT EXISTS "
	                            "(SELECT 1 FROM inventory.items i WHERE i.library_id = %lld AND i.external_id = m.external_id)",
	                            (long long)job, (long long)lib),
	                 0);
	/* S6: completion came from a final check, and admission is open again. */
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND action = 'final-check' "
	                            "AND phase_after = 'completed'",
	                            (long long)job),
	                 1);
	assert_text_equal(pgtest_text(c, "SELECT state FROM cleanup.library_admission WHERE library_id = %lld",
	                                (long long)lib),
	                    "open");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_retained WHERE job_id = %lld", (long long)job), 0);
	assert_int_equal(pgtest_int(c, "SELECT sum(item_count) FROM cleanup.library_stats WHERE library_id = %lld",
	                            (long long)lib),
	                 seen);
	assert_steps_consistent(c, job);
	PQfinish(c);
}

/* A1, A6: while a prune drains, inserts into its library fail with CUA01;
 * another library of the same server and another server accept writes,
 * also while a step of the job is in flight (held by the hook). */
static void test_A1_A6_writes_while_draining(void **state)
{
	PGconn *c = conn("a1"), *w = conn("writer"), *h = conn("hook");
	int64_t srv, lib, sib, other, job;
	int pid, rc;
	char *out = NULL;

	(void)state;
	lib = new_server_library(c, "a1", 300, &srv);
	sib = pgtest_new_library(c, srv, "a1-sibling", 3);
	other = pgtest_new_library(c, pgtest_new_server(c, "a1-other"), "a1-other", 3);
	job = sealed_prune(c, lib, "a1", 300, 2);

	pgtest_fails(w, "CUA01", NULL,
	             "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'late')",
	             (long long)lib);
	pgtest_exec(h, "SELECT pg_advisory_lock(cleanup.test_hook_key())");
	pid = ctl_spawn(HOOK_ENV, "job step %lld", (long long)job);
	pgtest_wait_app_blocked(c, step_app(job), 10000);
	/* The step holds its locks now; unaffected writers do not wait. */
	pgtest_exec(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'during-step')", (long long)sib);
	pgtest_exec(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'during-step')", (long long)other);
	pgtest_exec(w, "UPDATE inventory.items SET title = 'edited' WHERE library_id = %lld", (long long)sib);
	pgtest_fails(w, "CUA01", NULL,
	             "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'late2')",
	             (long long)lib);
	pgtest_exec(h, "SELECT pg_advisory_unlock(cleanup.test_hook_key())");
	rc = pgtest_wait(pid, &out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "step 1"));
	free(out);
	run_to_completion(c, job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE external_id = 'during-step'"), 2);
	/* Admission reopened: the library accepts writes again. */
	pgtest_exec(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'after')", (long long)lib);
	assert_steps_consistent(c, job);
	pgtest_close_all(c, w, h, NULL);
}

/* A3, S4, T7: a move out of the draining library while a step runs is
 * busy (moves out land between steps); between steps, a row the steps have
 * not reached yet moves out, is counted as moved (before a step reached
 * it), never as deleted, and lives on in its new library. A move into the
 * draining library is rejected. */
static void test_A3_S4_move_out_counted_as_moved(void **state)
{
	PGconn *c = conn("a3"), *w = conn("writer"), *h = conn("hook");
	int64_t srv, lib, sib, job, victim, step_deleted;
	int pid;

	(void)state;
	lib = new_server_library(c, "a3", 200, &srv);
	sib = pgtest_new_library(c, srv, "a3-sibling", 2);
	job = sealed_prune(c, lib, "a3", 200, 0); /* nothing seen: every row eligible */
	victim = pgtest_int(c, "SELECT min(id) FROM inventory.items WHERE library_id = %lld", (long long)lib);

	/* A3: moving a row into the draining library fails. */
	pgtest_fails(w, "CUA01", NULL,
	             "UPDATE inventory.items SET library_id = %lld WHERE library_id = %lld "
	             "AND external_id = 'a3-sibling-1'",
	             (long long)lib, (long long)sib);

	pgtest_exec(h, "SELECT pg_advisory_lock(cleanup.test_hook_key())");
	pid = ctl_spawn(HOOK_ENV, "job step %lld", (long long)job);
	pgtest_wait_app_blocked(c, step_app(job), 10000);
	/* T7: a move out of the fenced library while a step runs is busy (it
	 * lands between steps, where the cursor says whether a step reached
	 * the row); the step deletes the row it discovered. */
	pgtest_fails(w, "55P03", NULL,
	             "UPDATE inventory.items SET library_id = %lld WHERE id = %lld",
	             (long long)sib, (long long)victim);
	pgtest_exec(h, "SELECT pg_advisory_unlock(cleanup.test_hook_key())");
	assert_int_equal(pgtest_wait(pid, NULL), 0);
	step_deleted = pgtest_int(c, "SELECT deleted FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 1",
	                          (long long)job);
	assert_int_equal(step_deleted, 128);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)victim), 0);

	/* A3: between steps, moving a row the steps have not reached yet out
	 * into an open library is allowed: moved before a step reached it. */
	victim = pgtest_int(c,
	                    "SELECT id FROM inventory.items WHERE library_id = %lld ORDER BY external_id DESC LIMIT 1",
	                    (long long)lib);
	pgtest_exec(w, "UPDATE inventory.items SET library_id = %lld WHERE id = %lld", (long long)sib, (long long)victim);
	run_to_completion(c, job);
	assert_job_counts(c, job, "moved, moved_early, deleted", "1, 1, 199");
	assert_int_equal(pgtest_int(c, "SELECT library_id FROM inventory.items WHERE id = %lld", (long long)victim), sib);
	assert_int_equal(job_int(c, job, "scope_count"),
	                 job_int(c, job, "deleted") + job_int(c, job, "kept") + job_int(c, job, "moved") +
	                     job_int(c, job, "absent"));
	assert_steps_consistent(c, job);
	pgtest_close_all(c, w, h, NULL);
}

/* S3, S5: an UPDATE between discovery and delete changes the row's xmin:
 * the step retains it (S3: never deleted on a stale view); a later pass
 * revisits and deletes it. The UPDATE bypasses the admission triggers
 * (session_replication_role = replica), standing for a writer outside the
 * guarded family: exactly what the xmin check is for (seed 000). */
static void test_S3_S5_changed_xmin_is_retained(void **state)
{
	PGconn *c = conn("s5"), *w = conn("writer"), *h = conn("hook");
	int64_t srv, lib, job, victim;
	int pid;

	(void)state;
	job = new_sealed_prune(c, "s5", 200, 2, &lib, &srv);
	victim = pgtest_int(c, "SELECT id FROM inventory.items WHERE library_id = %lld AND external_id = 's5-3'",
	                    (long long)lib);

	pgtest_exec(h, "SELECT pg_advisory_lock(cleanup.test_hook_key())");
	pid = ctl_spawn(HOOK_ENV, "job step %lld", (long long)job);
	pgtest_wait_app_blocked(c, step_app(job), 10000);
	pgtest_exec(w, "SET session_replication_role = replica");
	pgtest_exec(w, "UPDATE inventory.items SET title = 'changed after discovery' WHERE id = %lld", (long long)victim);
	pgtest_exec(w, "RESET session_replication_role");
	pgtest_exec(h, "SELECT pg_advisory_unlock(cleanup.test_hook_key())");
	assert_int_equal(pgtest_wait(pid, NULL), 0);

	assert_int_equal(pgtest_int(c, "SELECT retained FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 1",
	                            (long long)job),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)victim), 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_retained WHERE job_id = %lld AND item_id = %lld",
	                            (long long)job, (long long)victim),
	                 1);

	run_to_completion(c, job);
	/* A pass after the walk visited the retained row and deleted it. */
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND action = 'pass' "
	                            "AND pass_no = 2 AND deleted = 1",
	                            (long long)job),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)victim), 0);
	assert_job_counts(c, job, "deleted, kept, retained", "100, 100, 1");
	assert_steps_consistent(c, job);
	pgtest_close_all(c, w, h, NULL);
}

/* S5, S6, T4: a row a writer holds (SELECT ... FOR UPDATE, allowed in a
 * draining library) is skipped by SKIP LOCKED, retained and never treated
 * as done: the pass that finds it still held is busy (no new pass at every
 * step: T4) and the job does not complete until the writer lets go. */
static void test_S5_S6_row_held_by_writer_blocks_completion(void **state)
{
	PGconn *c = conn("held"), *w = conn("writer");
	int64_t srv, lib, job, victim;

	(void)state;
	job = new_sealed_prune(c, "held", 150, 0, &lib, &srv);
	victim = pgtest_int(c, "SELECT id FROM inventory.items WHERE library_id = %lld AND external_id = 'held-7'",
	                    (long long)lib);
	pgtest_begin(w, "SELECT 1 FROM inventory.items WHERE id = %lld FOR UPDATE", (long long)victim);

	assert_int_equal(ctl(NULL, "job run %lld --max-steps 8 --max-busy 3 --backoff-max 20", (long long)job), 3);
	assert_string_equal(job_phase(c, job), "draining");
	assert_int_equal(job_int(c, job, "pass_no"), 2);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)victim), 1);
	assert_int_equal(job_int(c, job, "deleted"), 149);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND phase_after = 'completed'",
	                            (long long)job),
	                 0);

	pgtest_exec(w, "COMMIT");
	run_to_completion(c, job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)victim), 0);
	assert_int_equal(job_int(c, job, "deleted"), 150);
	assert_steps_consistent(c, job);
	pgtest_close_all(c, w, NULL);
}

/* S8: replaying a committed step returns its record and changes nothing,
 * through the CLI and through a retry of the same step number (a lost
 * answer); a step number from the future is refused. */
static void test_S8_replay_returns_record_and_deletes_nothing(void **state)
{
	PGconn *c = conn("s8");
	int64_t srv, lib, job;
	char *before, *after, *out = NULL;
	char expect[64];

	(void)state;
	job = new_sealed_prune(c, "s8", 400, 4, &lib, &srv);
	assert_int_equal(ctl(NULL, "job step %lld --steps 3", (long long)job), 0);

	before = pgtest_fingerprint(c);
	assert_int_equal(ctl(&out, "--json job step %lld --replay 2", (long long)job), 0);
	assert_non_null(strstr(out, "\"replayed\": true"));
	snprintf(expect, sizeof expect, "\"deleted\": %lld",
	         (long long)pgtest_int(c, "SELECT deleted FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 2",
	                               (long long)job));
	assert_non_null(strstr(out, expect));
	assert_non_null(strstr(out, "\"step_no\": 2"));
	free(out);
	/* A retry of step 2 after a lost answer: the record, not a new step. */
	assert_int_equal(pgtest_int(c, "SELECT step_no FROM cleanup.job_step(%lld, 2)", (long long)job), 2);
	assert_int_equal(pgtest_int(c, "SELECT deleted FROM cleanup.job_step(%lld, 2)", (long long)job),
	                 pgtest_int(c, "SELECT deleted FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 2",
	                            (long long)job));
	after = pgtest_fingerprint(c);
	assert_string_equal(before, after);
	assert_int_equal(job_int(c, job, "step_no"), 3);

	/* Not yet committed: nothing to replay (exit 1); a future number: exit 2 semantics. */
	assert_int_equal(ctl(NULL, "job step %lld --replay 9", (long long)job), 1);
	pgtest_fails(c, "CU101", NULL, "SELECT * FROM cleanup.job_step(%lld, 9)", (long long)job);
	pgtest_fails(c, "CU101", NULL, "SELECT * FROM cleanup.job_step(%lld, 0)", (long long)job);
	free(after);
	pgtest_unchanged(c, before);
	PQfinish(c);
}

/* The preview runs the next step's selection and checks read-only: it
 * changes nothing and predicts what the step then does. */
static void test_preview_mutates_nothing(void **state)
{
	PGconn *c = conn("preview");
	int64_t srv, lib, job;
	char *out = NULL;
	char expect[64];

	(void)state;
	job = new_sealed_prune(c, "preview", 300, 3, &lib, &srv);
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);

	ctl_changes_nothing(c, &out, 0, "--json job step %lld --preview", (long long)job);
	assert_non_null(strstr(out, "\"preview\": true"));
	assert_non_null(strstr(out, "\"step_no\": 2"));
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld", (long long)job), 1);

	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	snprintf(expect, sizeof expect, "\"deleted\": %lld",
	         (long long)pgtest_int(c, "SELECT deleted FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 2",
	                               (long long)job));
	assert_non_null(strstr(out, expect));
	snprintf(expect, sizeof expect, "\"kept\": %lld",
	         (long long)pgtest_int(c, "SELECT kept FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 2",
	                               (long long)job));
	assert_non_null(strstr(out, expect));
	free(out);
	PQfinish(c);
}

/* A step of a job in another phase is refused with exit 4 and changes
 * nothing; run of a completed job has nothing to do (exit 0). */
static void test_step_of_other_phase_exits_4(void **state)
{
	PGconn *c = conn("phase");
	int64_t srv, lib, job, done;

	(void)state;
	lib = new_server_library(c, "phase", 10, &srv);
	job = pgtest_job_create(c, "prune", lib);
	ctl_changes_nothing(c, NULL, 4, "job step %lld", (long long)job);
	ctl_changes_nothing(c, NULL, 4, "job run %lld", (long long)job);
	ctl_changes_nothing(c, NULL, 4, "job step %lld --preview", (long long)job);
	pgtest_exec(c, "SELECT cleanup.job_transition(%lld, 'cancel')", (long long)job);
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 4);

	done = sealed_prune(c, lib, "phase", 10, 1);
	run_to_completion(c, done);
	assert_int_equal(ctl(NULL, "job step %lld", (long long)done), 4);
	assert_int_equal(ctl(NULL, "job run %lld", (long long)done), 0);
	assert_int_equal(ctl(NULL, "job step 999999"), 1);
	PQfinish(c);
}

/* L1, A2: a step never waits: while another cleanup transaction holds the
 * server's coordinator lock, `job step` exits 3 and changes nothing; `job
 * run` retries with backoff, records its busy answers, and gives up with
 * exit 3 after --max-busy; once the lock is free it completes. */
static void test_L1_busy_exits_3_and_is_recorded(void **state)
{
	PGconn *c = conn("busy"), *o = conn("other-cleanup");
	int64_t srv, lib, job;

	(void)state;
	job = new_sealed_prune(c, "busy", 50, 5, &lib, &srv);
	/* Another cleanup transaction: the coordinator's row lock. */
	pgtest_begin(o, "SELECT cleanup.lock_coordinator(%lld)", (long long)srv);

	ctl_changes_nothing(c, NULL, 3, "job step %lld", (long long)job);

	assert_int_equal(ctl(NULL, "job run %lld --max-busy 3 --backoff-max 20", (long long)job), 3);
	assert_job_counts(c, job, "step_no, busy_retries", "0, 3");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.events WHERE job_id = %lld AND kind = 'busy'",
	                            (long long)job),
	                 3);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.jobs WHERE id = %lld AND "
	                               "strpos(last_error, 'coordinator') > 0",
	                            (long long)job),
	                 1);

	pgtest_exec(o, "COMMIT");
	run_to_completion(c, job);
	pgtest_close_all(c, o, NULL);
}

/* S6: the final absence check finds an eligible row that slipped past the
 * guards (inserted with triggers off while the job was finalizing): the job
 * does not complete; another pass deletes the row, then it completes. */
static void test_S6_final_check_finds_survivor(void **state)
{
	PGconn *c = conn("s6"), *w = conn("bypass");
	int64_t srv, lib, job, hole;
	int guard = 0;

	(void)state;
	job = new_sealed_prune(c, "s6", 300, 2, &lib, &srv);
	while (strcmp(job_phase(c, job), "draining") == 0 && guard++ < 20)
		assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	assert_string_equal(job_phase(c, job), "finalizing");

	/* An id at or below the high-water mark that the drain deleted. */
	hole = pgtest_int(c, "SELECT min(id) + 1 FROM inventory.items WHERE library_id = %lld", (long long)lib);
	insert_past_guards(w, hole, lib, "s6-survivor");

	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	assert_string_equal(job_phase(c, job), "draining");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.events WHERE job_id = %lld AND kind = 'final-check'",
	                            (long long)job),
	                 1);
	run_to_completion(c, job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)hole), 0);
	assert_job_counts(c, job, "deleted, kept", "151, 150");
	assert_steps_consistent(c, job);
	pgtest_close_all(c, w, NULL);
}

/* S6 over several pages: the final absence check reads the library in
 * pages of 10,000 items in external ID order, merged with the manifest, and
 * remembers where it stopped. An eligible row planted (triggers bypassed)
 * in the second page after the first page was found clean is found: the
 * job goes back to draining, a pass deletes the row, and the check starts
 * again from the first page before the job completes. */
static void test_S6_final_check_pages_find_late_survivor(void **state)
{
	PGconn *c = conn("s6p"), *w = conn("bypass");
	int64_t srv, lib, job, hole;
	int from, guard = 0;
	char *got;

	(void)state;
	lib = new_server_library(c, "s6p", 10500, &srv);
	job = pgtest_job_create(c, "prune", lib);
	for (from = 1; from <= 10500; from += 128)
		pgtest_exec(c,
		            "SELECT cleanup.job_append(%lld, ARRAY(SELECT 's6p-' || g FROM generate_series(%d, %d) g "
		            "WHERE g <> 5))",
		            (long long)job, from, from + 127 < 10500 ? from + 127 : 10500);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 10499)", (long long)job);
	hole = pgtest_int(c, "SELECT id FROM inventory.items WHERE external_id = 's6p-5'");
	while (strcmp(job_phase(c, job), "draining") == 0 && guard++ < 30)
		assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	assert_string_equal(job_phase(c, job), "finalizing");
	assert_int_equal(job_int(c, job, "deleted"), 1);

	/* Page 1: the first 10,000 external IDs, clean; the position is kept. */
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	assert_string_equal(job_phase(c, job), "finalizing");
	assert_string_equal((got = pgtest_text(c,
	                                       "SELECT concat_ws(' ', action, checked, check_from = '', check_to = "
	                                       "(SELECT external_id FROM inventory.items WHERE library_id = %lld "
	                                       "ORDER BY external_id OFFSET 9999 LIMIT 1)) FROM cleanup.job_steps "
	                                       "WHERE job_id = %lld ORDER BY step_no DESC LIMIT 1",
	                                       (long long)lib, (long long)job)),
	                    "final-check 10000 t t");
	free(got);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.jobs WHERE id = %lld AND check_cursor IS NOT NULL",
	                            (long long)job),
	                 1);

	/* A row that got past the guards, sorting after everything checked. */
	insert_past_guards(w, hole, lib, "zz-survivor");

	/* Page 2 finds it: no completion (S6), another pass. */
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	assert_string_equal(job_phase(c, job), "draining");
	assert_int_equal(job_int(c, job, "pass_no"), 2);
	assert_null(pgtest_text(c, "SELECT check_cursor FROM cleanup.jobs WHERE id = %lld", (long long)job));
	assert_int_equal(pgtest_int(c,
	                            "SELECT checked FROM cleanup.job_steps WHERE job_id = %lld ORDER BY step_no DESC LIMIT 1",
	                            (long long)job),
	                 500);

	run_to_completion(c, job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE id = %lld", (long long)hole), 0);
	assert_job_counts(c, job, "deleted, kept", "2, 10499");
	/* The check started over: two first pages, and it completed on a page
	 * of the 499 items after the first 10,000. */
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND action = 'final-check' "
	                            "AND check_from = ''",
	                            (long long)job),
	                 2);
	assert_int_equal(pgtest_int(c,
	                            "SELECT checked FROM cleanup.job_steps WHERE job_id = %lld AND phase_after = 'completed'",
	                            (long long)job),
	                 499);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib), 10499);
	assert_steps_consistent(c, job);
	pgtest_close_all(c, w, NULL);
}

/* The pid of a blocked backend named APP other than NOT_PID. */
static int blocked_other_than(PGconn *c, const char *app, int not_pid)
{
	int pid, tries = 0;

	do
		pid = pgtest_wait_app_blocked(c, app, 10000);
	while (pid == not_pid && ++tries < 2000);
	assert_int_not_equal(pid, not_pid);
	return pid;
}

/* S9, S7: `job run --reconnect` survives its backend being terminated
 * mid-step, both in its first (synchronous) step and while the pipelined
 * next step is in flight: the lost steps roll back whole, the run
 * reconnects, reads the last committed step and continues; every eligible
 * item is deleted once, every seen item kept. */
static void test_S9_run_reconnects_after_terminated_backend(void **state)
{
	PGconn *c = conn("reconnect"), *h = conn("hook");
	int64_t srv, lib, job;
	char app[64], *out = NULL;
	int pid, first, second;

	(void)state;
	job = new_sealed_prune(c, "reconnect", 1000, 2, &lib, &srv);
	snprintf(app, sizeof app, "cleanupctl:job:%lld:run", (long long)job);

	pgtest_exec(h, "SELECT pg_advisory_lock(cleanup.test_hook_key())");
	pid = ctl_spawn(HOOK_ENV, "--json job run %lld --reconnect 5", (long long)job);
	first = pgtest_wait_app_blocked(c, app, 10000);
	pgtest_exec(c, "SELECT pg_terminate_backend(%d)", first);
	second = blocked_other_than(c, app, first);

	/* Let one step commit and take the hook back at once: the pipelined
	 * step already sent waits on it, and is lost with its backend. */
	pgtest_send(h, "SELECT pg_advisory_unlock(cleanup.test_hook_key()); SELECT pg_advisory_lock(cleanup.test_hook_key())");
	assert_string_equal(pgtest_finish(h), "");
	assert_int_equal(pgtest_wait_app_blocked(c, app, 10000), second);
	assert_true(job_int(c, job, "step_no") >= 1);
	pgtest_exec(c, "SELECT pg_terminate_backend(%d)", second);
	blocked_other_than(c, app, second);
	pgtest_exec(h, "SELECT pg_advisory_unlock(cleanup.test_hook_key())");

	assert_int_equal(pgtest_wait(pid, &out), 0);
	assert_non_null(strstr(out, "\"reconnects\": 2"));
	assert_non_null(strstr(out, "\"completed\": true"));
	free(out);
	assert_string_equal(job_phase(c, job), "completed");
	assert_job_counts(c, job, "deleted, kept, examined, visited", "500, 500, 1000, 500");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib), 500);
	assert_steps_consistent(c, job);
	pgtest_close_all(c, h, NULL);
}

/* The item numbers of test_S1_examined_rows_bound_and_candidate_budget
 * that were NOT seen: two stray ones, a dense block of 300 and one more. */
#define S1_UNSEEN "(g IN (1100, 1400, 2800) OR g BETWEEN 2001 AND 2300)"

/* step_no's (examined, visited, kept, deleted, mutations) of job JOB as
 * "e v k d m". */
static char *step_counts(PGconn *c, int64_t job, int step_no)
{
	return pgtest_text(c,
	                   "SELECT concat_ws(' ', examined, visited, kept, deleted, mutations) FROM cleanup.job_steps "
	                   "WHERE job_id = %lld AND step_no = %d",
	                   (long long)job, step_no);
}

/* S1 (seed 000: the budget bounds visited candidates and deleted rows, not
 * rows examined): a step passes over seen rows without visiting them, up to
 * 1024 rows of its range, and stops after its 128th candidate with the
 * cursor on it. 3000 items, 303 unseen: a step of only seen rows (1024
 * examined, nothing visited), one that hits the 1024 bound with 50
 * candidates, one stopped by the 128th candidate after 128 rows, and the
 * rest of the range. Every step stays within 128 visits, 128 mutations and
 * 1024 rows examined; the counters equal the ground truth. The preview
 * predicts the same batch. A prune's first pass walks external-ID order
 * (schema 12): the external IDs are zero-padded ("s1x-0001"), so that their
 * order is the items' and the batches fall where the ids say; the cursor
 * is the external ID of the last row taken. */
static void test_S1_examined_rows_bound_and_candidate_budget(void **state)
{
	PGconn *c = conn("s1-examined");
	int64_t srv, lib, job, id2176;
	char *out = NULL, *got;
	int from;

	(void)state;
	lib = new_server_library(c, "s1x", 0, &srv);
	pgtest_exec(c,
	            "INSERT INTO inventory.items (library_id, external_id) "
	            "SELECT %lld, 's1x-' || lpad(g::text, 4, '0') FROM generate_series(1, 3000) g ORDER BY g",
	            (long long)lib);
	job = pgtest_job_create(c, "prune", lib);
	for (from = 1; from <= 3000; from += 128)
		pgtest_exec(c,
		            "SELECT cleanup.job_append(%lld, ARRAY(SELECT 's1x-' || lpad(g::text, 4, '0') "
		            "FROM generate_series(%d, %d) g WHERE NOT " S1_UNSEEN "))",
		            (long long)job, from, from + 127 < 3000 ? from + 127 : 3000);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.manifest WHERE job_id = %lld", (long long)job), 2697);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 2697)", (long long)job);
	id2176 = pgtest_int(c, "SELECT id FROM inventory.items WHERE external_id = 's1x-2176'");
	assert_string_equal((got = pgtest_text(c, "SELECT key_cursor FROM cleanup.jobs WHERE id = %lld", (long long)job)),
	                    "");
	free(got);

	/* The preview predicts step 1: 1024 rows passed over, nothing visited. */
	assert_int_equal(ctl(&out, "--json job step %lld --preview", (long long)job), 0);
	assert_non_null(strstr(out, "\"examined\": 1024"));
	assert_non_null(strstr(out, "\"visited\": 0"));
	assert_non_null(strstr(out, "\"kept\": 1024"));
	free(out);

	assert_int_equal(ctl(&out, "job step %lld --steps 3", (long long)job), 0);
	assert_non_null(strstr(out, "examined 1024 rows"));
	/* The steps print the key range they walked. */
	assert_non_null(strstr(out, "examined 1024 rows (external IDs after \"\" up to \"s1x-1024\")"));
	assert_non_null(strstr(out, "examined 128 rows (external IDs after \"s1x-2048\" up to \"s1x-2176\")"));
	free(out);
	/* Step 1: items 1..1024, all seen. Step 2: 1025..2048, the 1024 bound,
	 * 50 candidates (1100, 1400, 2001..2048). Step 3: 2049..2176, stopped
	 * after its 128th candidate; the cursor is on that candidate. */
	assert_string_equal((got = step_counts(c, job, 1)), "1024 0 1024 0 0");
	free(got);
	assert_string_equal((got = step_counts(c, job, 2)), "1024 50 974 50 50");
	free(got);
	assert_string_equal((got = step_counts(c, job, 3)), "128 128 0 128 128");
	free(got);
	assert_string_equal((got = pgtest_text(c, "SELECT check_from || ' > ' || check_to FROM cleanup.job_steps "
	                                          "WHERE job_id = %lld AND step_no = 3",
	                                          (long long)job)),
	                    "s1x-2048 > s1x-2176");
	free(got);
	assert_string_equal((got = pgtest_text(c, "SELECT key_cursor FROM cleanup.jobs WHERE id = %lld", (long long)job)),
	                    "s1x-2176");
	free(got);
	/* The id cursor is not used in this pass. */
	assert_int_equal(job_int(c, job, "cursor_id"), 0);
	/* Nothing past the cursor was touched: 2177..2300 and 2800 remain. */
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld AND id > %lld",
	                            (long long)lib, (long long)id2176),
	                 824);

	run_to_completion(c, job);
	/* Step 4: the rest of the range, 2177..3000, 125 candidates. */
	assert_string_equal((got = step_counts(c, job, 4)), "824 125 699 125 125");
	free(got);
	assert_job_counts(c, job, "examined, visited, deleted, kept", "3000, 303, 303, 2697");
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM inventory.items WHERE library_id = %lld AND "
	                            "substr(external_id, 5)::int IN (SELECT g FROM generate_series(1, 3000) g WHERE " S1_UNSEEN ")",
	                            (long long)lib),
	                 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib), 2697);
	assert_steps_consistent(c, job);
	PQfinish(c);
}

/* S1: across everything this file ran, no recorded step visited more than
 * 128 candidates, made more than 128 domain mutations or examined more than
 * 1024 rows; steps did examine more rows than they visited. */
static void test_S1_budget_of_every_step(void **state)
{
	PGconn *c = conn("s1");

	(void)state;
	assert_true(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps") > 20);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps "
	                               "WHERE mutations > 128 OR visited > 128 OR examined > 1024"),
	                 0);
	assert_in_range(pgtest_int(c, "SELECT max(mutations) FROM cleanup.job_steps"), 1, 128);
	assert_int_equal(pgtest_int(c, "SELECT max(visited) FROM cleanup.job_steps"), 128);
	assert_int_equal(pgtest_int(c, "SELECT max(examined) FROM cleanup.job_steps"), 1024);
	/* The schema holds the bounds too: a step record beyond them is refused. */
	pgtest_fails(c, "23514", NULL,
	             "INSERT INTO cleanup.job_steps (job_id, step_no, action, pass_no, examined, visited, "
	             "deleted, phase_after, started_at) SELECT min(id), 999999, 'drain', 1, 129, 129, 129, "
	             "'draining', now() FROM cleanup.jobs");
	pgtest_fails(c, "23514", NULL,
	             "INSERT INTO cleanup.job_steps (job_id, step_no, action, pass_no, examined, visited, "
	             "kept, deleted, phase_after, started_at) SELECT min(id), 999999, 'drain', 1, 1025, 1, "
	             "1024, 1, 'draining', now() FROM cleanup.jobs");
	PQfinish(c);
}

PGTEST_MAIN(cmocka_unit_test(test_S6_S9_prune_counters_equal_ground_truth),
            cmocka_unit_test(test_A1_A6_writes_while_draining),
            cmocka_unit_test(test_A3_S4_move_out_counted_as_moved),
            cmocka_unit_test(test_S3_S5_changed_xmin_is_retained),
            cmocka_unit_test(test_S5_S6_row_held_by_writer_blocks_completion),
            cmocka_unit_test(test_S8_replay_returns_record_and_deletes_nothing),
            cmocka_unit_test(test_preview_mutates_nothing),
            cmocka_unit_test(test_step_of_other_phase_exits_4),
            cmocka_unit_test(test_L1_busy_exits_3_and_is_recorded),
            cmocka_unit_test(test_S6_final_check_finds_survivor),
            cmocka_unit_test(test_S6_final_check_pages_find_late_survivor),
            cmocka_unit_test(test_S9_run_reconnects_after_terminated_backend),
            cmocka_unit_test(test_S1_examined_rows_bound_and_candidate_budget),
            cmocka_unit_test(test_S1_budget_of_every_step))

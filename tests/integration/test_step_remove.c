/* Library and server removal in bounded steps against the real PostgreSQL
 * (S10-S13, A2, A5): drain, then one parent per short step under its row
 * lock, re-checked under that lock; parent guards outside the protocol;
 * recovery of a crash between drain and finalize; the single-transaction
 * comparison mode. */
#include "test_step_support.h"

PGTEST_DB_SETUP(ci, pgtest_fresh_db("step_remove"))

/* Steps JOB one at a time until its phase is no longer PHASE (at most
 * LIMIT steps). */
static void step_while(PGconn *c, int64_t job, const char *phase, int limit)
{
	while (strcmp(job_phase(c, job), phase) == 0 && limit-- > 0)
		assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	assert_true(strcmp(job_phase(c, job), phase) != 0);
}

/* S10, S11: remove-library drains every item, then deletes the empty
 * library, its admission and count rows in one short final step that
 * records how long it held the parent row lock. The server and its other
 * libraries are untouched. */
static void test_S10_remove_library_end_state(void **state)
{
	PGconn *c = conn("rl");
	int64_t srv, lib, sib, job;

	(void)state;
	lib = new_server_library(c, "rl", 500, &srv);
	sib = pgtest_new_library(c, srv, "rl-sibling", 5);
	job = pgtest_job_create(c, "remove-library", lib);
	assert_int_equal(ctl(NULL, "job run %lld", (long long)job), 0);

	assert_string_equal(job_phase(c, job), "completed");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.library_admission WHERE library_id = %lld",
	                            (long long)lib),
	                 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.library_stats WHERE library_id = %lld", (long long)lib),
	                 0);
	assert_job_counts(c, job, "deleted, libraries_deleted, servers_deleted", "500, 1, 0");
	/* Four drain steps (128, 128, 128, 116), then the parent alone. */
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND action = 'drain'",
	                            (long long)job),
	                 4);
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 5 "
	                            "AND action = 'delete-library' AND libraries_deleted = 1 AND deleted = 0 "
	                            "AND mutations = 1 AND parent_lock_ms >= 0 AND phase_after = 'completed'",
	                            (long long)job),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT max(mutations) FROM cleanup.job_steps WHERE job_id = %lld", (long long)job),
	                 128);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.media_servers WHERE id = %lld", (long long)srv), 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)sib), 5);
	assert_text_equal(pgtest_text(c, "SELECT state FROM cleanup.server_admission WHERE server_id = %lld",
	                                (long long)srv),
	                    "open");
	assert_steps_consistent(c, job);
	PQfinish(c);
}

/* S10, A5: remove-server drains the items of every library (ascending
 * ids), then deletes the empty libraries one per step in ascending order,
 * then the empty server with its admission row. While it runs the server
 * admits no new library; other servers are untouched. */
static void test_S10_A5_remove_server_one_parent_per_step(void **state)
{
	PGconn *c = conn("rs"), *w = conn("writer");
	int64_t srv, other, libs[3], job;
	int i;

	(void)state;
	srv = pgtest_new_server(c, "rs");
	other = pgtest_new_server(c, "rs-other");
	libs[0] = pgtest_new_library(c, srv, "rs-a", 130);
	libs[1] = pgtest_new_library(c, srv, "rs-b", 0);
	libs[2] = pgtest_new_library(c, srv, "rs-c", 40);
	pgtest_new_library(c, other, "rs-other", 7);
	job = pgtest_job_create(c, "remove-server", srv);

	pgtest_fails(w, "CUA01", NULL,
	             "INSERT INTO inventory.libraries (server_id, name) VALUES (%lld, 'late library')",
	             (long long)srv);
	pgtest_exec(w, "INSERT INTO inventory.libraries (server_id, name) VALUES (%lld, 'fine')", (long long)other);

	step_while(c, job, "draining", 10);
	assert_string_equal(job_phase(c, job), "finalizing");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items i JOIN inventory.libraries l ON l.id = i.library_id "
	                               "WHERE l.server_id = %lld",
	                            (long long)srv),
	                 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE server_id = %lld", (long long)srv), 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
		assert_int_equal(pgtest_int(c, "SELECT library_id FROM cleanup.job_steps WHERE job_id = %lld AND step_no = %lld",
		                            (long long)job, (long long)job_int(c, job, "step_no")),
		                 libs[i]);
		assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE server_id = %lld", (long long)srv),
		                 2 - i);
		assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.media_servers WHERE id = %lld", (long long)srv), 1);
	}
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	assert_string_equal(job_phase(c, job), "completed");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.media_servers WHERE id = %lld", (long long)srv), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.server_admission WHERE server_id = %lld", (long long)srv),
	                 0);
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND action = 'delete-server' "
	                            "AND servers_deleted = 1 AND parent_lock_ms >= 0",
	                            (long long)job),
	                 1);
	assert_job_counts(c, job, "deleted, libraries_deleted, servers_deleted", "170, 3, 1");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE server_id = %lld", (long long)other), 2);
	assert_steps_consistent(c, job);
	pgtest_close_all(c, w, NULL);
}

/* S12: deleting a library or a server outside the cleanup protocol fails,
 * even when it is empty, also while a removal job of it is finalizing
 * (the guard wants this backend to hold the coordinator and library locks). */
static void test_S12_delete_outside_protocol_fails_even_when_empty(void **state)
{
	PGconn *c = conn("s12"), *w = conn("intruder");
	int64_t srv, lib, empty_srv, job;

	(void)state;
	lib = new_server_library(c, "s12", 0, &srv);
	empty_srv = pgtest_new_server(c, "s12-empty");
	pgtest_fails(w, "CUA05", NULL, "DELETE FROM inventory.libraries WHERE id = %lld", (long long)lib);
	pgtest_fails(w, "CUA05", NULL, "DELETE FROM inventory.media_servers WHERE id = %lld", (long long)empty_srv);

	job = pgtest_job_create(c, "remove-library", lib);
	step_while(c, job, "draining", 3);
	assert_string_equal(job_phase(c, job), "finalizing");
	pgtest_fails(w, "CUA05", NULL, "DELETE FROM inventory.libraries WHERE id = %lld", (long long)lib);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 1);
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 0);
	pgtest_close_all(c, w, NULL);
}

/* S11: the final step re-checks emptiness under the parent's row lock. An
 * item that got in while the job was finalizing (triggers bypassed) stops
 * the parent delete (never a cascade); another pass drains it, then the
 * library goes. */
static void test_S11_finalize_rechecks_emptiness_under_lock(void **state)
{
	PGconn *c = conn("s11"), *w = conn("bypass");
	int64_t srv, lib, job;

	(void)state;
	job = new_removal(c, "s11", 200, &lib, &srv);
	step_while(c, job, "draining", 5);
	pgtest_exec(w, "SET session_replication_role = replica");
	pgtest_exec(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'sneaked-in')", (long long)lib);
	pgtest_exec(w, "RESET session_replication_role");

	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	assert_string_equal(job_phase(c, job), "draining");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE external_id = 'sneaked-in'"), 1);
	assert_int_equal(job_int(c, job, "libraries_deleted"), 0);

	run_to_completion(c, job);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE external_id = 'sneaked-in'"), 0);
	assert_int_equal(job_int(c, job, "deleted"), 201);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 0);
	assert_steps_consistent(c, job);
	pgtest_close_all(c, w, NULL);
}

/* S11: the final parent delete against child inserts. While the final
 * step's transaction is open (library row locked and deleted), an insert
 * into the library waits for that one short step only (its foreign-key
 * check), then fails (23503): no orphan, no cascade; a sibling library
 * accepts writes meanwhile. A
 * transaction holding the library row FOR KEY SHARE (as a foreign-key check
 * does) makes the final step busy (exit 3, nothing changed): it never waits
 * with the parent row lock requested. */
static void test_S11_parent_delete_vs_inflight_child_insert(void **state)
{
	PGconn *c = conn("inflight"), *f = conn("finalizer"), *w = conn("writer");
	int64_t srv, lib, sib, job, next;

	(void)state;
	lib = new_server_library(c, "inflight", 20, &srv);
	sib = pgtest_new_library(c, srv, "inflight-sibling", 1);
	job = pgtest_job_create(c, "remove-library", lib);
	step_while(c, job, "draining", 3);

	/* A holder of the parent row: the final step does not wait for it. */
	pgtest_begin(w, "SELECT 1 FROM inventory.libraries WHERE id = %lld FOR KEY SHARE", (long long)lib);
	ctl_changes_nothing(c, NULL, 3, "job step %lld", (long long)job);
	pgtest_exec(w, "COMMIT");

	/* The final step in flight (held open here): a child insert's
	 * foreign-key check waits for it, only for it, then finds no parent. */
	next = job_int(c, job, "step_no") + 1;
	pgtest_exec(f, "BEGIN");
	assert_text_equal(pgtest_text(f, "SELECT action FROM cleanup.job_step(%lld, %lld)", (long long)job, (long long)next),
	                    "delete-library");
	pgtest_send_blocked(c, w, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'x')", (long long)lib);
	assert_int_equal(pgtest_int(c, "SELECT (pg_blocking_pids(%d) = ARRAY[%d])::int", PQbackendPID(w), PQbackendPID(f)), 1);
	pgtest_exec(c, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'sibling-ok')", (long long)sib);
	pgtest_exec(f, "COMMIT");
	assert_string_equal(pgtest_finish(w), "23503");
	pgtest_fails(w, "23503", NULL,
	             "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'y')",
	             (long long)lib);
	assert_string_equal(job_phase(c, job), "completed");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 0);
	assert_int_equal(
	    pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)sib), 2);
	pgtest_close_all(c, f, w, NULL);
}

/* S13: the process stops after the drain (here: --max-steps); the empty
 * parent is left with the job finalizing; a new process on a new
 * connection finalizes it with one step. */
static void test_S13_crash_between_drain_and_finalize(void **state)
{
	PGconn *c = conn("s13");
	int64_t srv, lib, job;

	(void)state;
	job = new_removal(c, "s13", 256, &lib, &srv);
	/* 256 items: two full steps, one that finds the range exhausted. */
	assert_int_equal(ctl(NULL, "job run %lld --max-steps 3", (long long)job), 0);
	assert_string_equal(job_phase(c, job), "finalizing");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib), 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 1);
	assert_text_equal(pgtest_text(c, "SELECT state FROM cleanup.library_admission WHERE library_id = %lld",
	                                (long long)lib),
	                    "draining");
	/* The preview of the finalize step predicts the parent delete, changing nothing. */
	{
		char *out = NULL;

		ctl_changes_nothing(c, &out, 0, "job step %lld --preview", (long long)job);
		assert_non_null(strstr(out, "delete-library"));
		assert_non_null(strstr(out, "would delete 1 library"));
		free(out);
	}

	run_to_completion(c, job);
	assert_int_equal(job_int(c, job, "step_no"), 4);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 0);
	assert_steps_consistent(c, job);
	PQfinish(c);
}

/* S5, L1, T4: remove-server with rows held by writers in two libraries:
 * the walk retains them, the next pass visits both libraries (their locks
 * taken in ascending order) and, while both are held, is busy instead of
 * starting a pass at every step (T4); the libraries are not deleted before
 * they are empty; once the writers are done the pass deletes the rows and
 * the removal completes. */
static void test_S5_remove_server_retained_across_libraries(void **state)
{
	PGconn *c = conn("rs-held"), *w1 = conn("writer-1"), *w2 = conn("writer-2");
	int64_t srv, a, b, job;

	(void)state;
	srv = pgtest_new_server(c, "rs-held");
	a = pgtest_new_library(c, srv, "rs-held-a", 50);
	b = pgtest_new_library(c, srv, "rs-held-b", 50);
	job = pgtest_job_create(c, "remove-server", srv);
	pgtest_begin(w1, "SELECT 1 FROM inventory.items WHERE library_id = %lld AND external_id = 'rs-held-a-9' FOR UPDATE",
	             (long long)a);
	pgtest_begin(w2, "SELECT 1 FROM inventory.items WHERE library_id = %lld AND external_id = 'rs-held-b-9' FOR UPDATE",
	             (long long)b);

	assert_int_equal(ctl(NULL, "job run %lld --max-steps 8 --max-busy 3 --backoff-max 20", (long long)job), 3);
	assert_string_equal(job_phase(c, job), "draining");
	assert_job_counts(c, job, "deleted, pass_no", "98, 2");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_retained WHERE job_id = %lld", (long long)job), 2);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND action = 'pass'",
	                            (long long)job),
	                 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE server_id = %lld", (long long)srv), 2);

	pgtest_exec(w1, "COMMIT");
	pgtest_exec(w2, "COMMIT");
	run_to_completion(c, job);
	assert_job_counts(c, job, "deleted, libraries_deleted, servers_deleted", "100, 2, 1");
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.media_servers WHERE id = %lld", (long long)srv), 0);
	assert_steps_consistent(c, job);
	pgtest_close_all(c, w1, w2, NULL);
}

/* A2: creating a removal job fences at once; an admitted writer in flight
 * makes the create busy (exit 3) with nothing changed, and the writer's row
 * is drained once it committed and the create went through. */
static void test_A2_fence_vs_admitted_writer(void **state)
{
	PGconn *c = conn("fence"), *w = conn("writer");
	int64_t srv, lib, job;

	(void)state;
	lib = new_server_library(c, "fence", 10, &srv);
	pgtest_begin(w, "INSERT INTO inventory.items (library_id, external_id) VALUES (%lld, 'in-flight')", (long long)lib);
	ctl_changes_nothing(c, NULL, 3, "job create remove-library --library %lld", (long long)lib);
	pgtest_exec(w, "COMMIT");

	job = pgtest_job_create(c, "remove-library", lib);
	assert_int_equal(ctl(NULL, "job run %lld", (long long)job), 0);
	assert_int_equal(job_int(c, job, "deleted"), 11);
	assert_int_equal(
	    pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE external_id = 'in-flight'"), 0);
	pgtest_close_all(c, w, NULL);
}

/* Comparison mode: single-transaction does the old behaviour in one step
 * (every item and the library, under the library row lock throughout); the
 * record says so, and it is the only kind of step allowed past 128
 * mutations. */
static void test_single_transaction_mode(void **state)
{
	PGconn *c = conn("single");
	int64_t srv, lib, job;
	char *out = NULL;

	(void)state;
	lib = new_server_library(c, "single", 700, &srv);
	assert_int_equal(ctl(&out, "--json job create remove-library --library %lld --mode single-transaction",
	                     (long long)lib),
	                 0);
	job = pgtest_int(c, "SELECT max(id) FROM cleanup.jobs WHERE library_id = %lld", (long long)lib);
	free(out);
	run_to_completion(c, job);
	assert_int_equal(job_int(c, job, "step_no"), 1);
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND action = 'single-transaction' "
	                            "AND deleted = 700 AND libraries_deleted = 1 AND mutations = 701 AND parent_lock_ms > 0",
	                            (long long)job),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.libraries WHERE id = %lld", (long long)lib), 0);
	/* The exception is for this mode only: the budget holds for every other step. */
	pgtest_fails(c, "23514", NULL,
	             "INSERT INTO cleanup.job_steps (job_id, step_no, action, pass_no, mutations, phase_after, "
	             "started_at) VALUES (%lld, 99, 'drain', 1, 129, 'draining', now())",
	             (long long)job);
	PQfinish(c);
}

PGTEST_MAIN(cmocka_unit_test(test_S10_remove_library_end_state),
            cmocka_unit_test(test_S10_A5_remove_server_one_parent_per_step),
            cmocka_unit_test(test_S12_delete_outside_protocol_fails_even_when_empty),
            cmocka_unit_test(test_S11_finalize_rechecks_emptiness_under_lock),
            cmocka_unit_test(test_S11_parent_delete_vs_inflight_child_insert),
            cmocka_unit_test(test_S13_crash_between_drain_and_finalize),
            cmocka_unit_test(test_S5_remove_server_retained_across_libraries),
            cmocka_unit_test(test_A2_fence_vs_admitted_writer),
            cmocka_unit_test(test_single_transaction_mode))

/* Who ran each step, and how often steps notify
 * (migration 010_step_runner.sql): every recorded step names the
 * backend and application_name of the session that committed it, a replay
 * keeps them; a job's steps notify cleanup_jobs only when they change its
 * phase or pass or when its last step notification is 100 ms old, while
 * every other change of the job still notifies. Against the real
 * PostgreSQL; notifications are counted on a LISTENing connection. */
#include <time.h>
#include "test_step_support.h"
#include "cleanup/install.h"

PGTEST_DB_SETUP(ci, pgtest_fresh_db("step_runner"))

/* Runs step STEP_NO of JOB on connection C (its own transaction); returns
 * the step_no of the returned row. */
static int64_t step_on(PGconn *c, int64_t job, int step_no)
{
	return pgtest_int(c, "SELECT step_no FROM cleanup.job_step(%lld, %d)", (long long)job, step_no);
}

/* "pid app" of recorded step STEP_NO of JOB, as the table holds it
 * (caller frees). */
static char *recorded_runner(PGconn *c, int64_t job, int step_no)
{
	return pgtest_text(c,
	                   "SELECT coalesce(runner_pid::text, 'NULL') || ' ' || coalesce(runner_app, 'NULL') "
	                   "FROM cleanup.job_steps WHERE job_id = %lld AND step_no = %d",
	                   (long long)job, step_no);
}

/* Asserts that the one-value query FMT on C returns WANT. */
static __attribute__((format(printf, 3, 4))) void expect_text(PGconn *c, const char *want, const char *fmt, ...)
{
	char sql[1024];
	char *got;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof sql, fmt, ap);
	va_end(ap);
	got = pgtest_text(c, "%s", sql);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* "pid app" of connection C as a step would record it. */
static void runner_of(char *buf, size_t len, PGconn *c, const char *app)
{
	snprintf(buf, len, "%d %s", PQbackendPID(c), app);
}

/* Notifications on channel cleanup_jobs that LISTENER has received so far
 * (after one round trip, so that everything committed before is
 * delivered); the payload of the last one into LAST when not NULL. */
static int drain(PGconn *listener, char *last, size_t lastlen)
{
	PGnotify *n;
	int count = 0;

	pgtest_exec(listener, "SELECT 1");
	PQconsumeInput(listener);
	while ((n = PQnotifies(listener)) != NULL) {
		if (strcmp(n->relname, "cleanup_jobs") == 0) {
			count++;
			if (last)
				snprintf(last, lastlen, "%s", n->extra);
		}
		PQfreemem(n);
	}
	return count;
}

/* Every step row names the connection that committed it: two connections
 * with different application names take turns, a step run by cleanupctl
 * names cleanupctl's session, and replays (through job_step with a
 * committed number, from the other connection, and job_step_replay) return
 * the original runner and change no row. */
static void test_step_rows_name_the_connection_that_took_them(void **state)
{
	PGconn *obs = conn("observer"), *a = conn("runner-alpha"), *b = conn("runner-beta");
	int64_t lib, job;
	char want_a[96], want_b[96], want_ctl[64], want_json[128], *got, *before, *after, *out = NULL;
	int i;

	(void)state;
	lib = pgtest_new_library(obs, pgtest_new_server(obs, "who"), "who", 700);
	job = sealed_prune(obs, lib, "who", 700, 0);
	runner_of(want_a, sizeof want_a, a, "runner-alpha");
	runner_of(want_b, sizeof want_b, b, "runner-beta");

	/* Steps 1-4 alternate between the two connections. */
	for (i = 1; i <= 4; i++)
		assert_int_equal(step_on(i % 2 ? a : b, job, i), i);
	for (i = 1; i <= 4; i++) {
		got = recorded_runner(obs, job, i);
		assert_string_equal(got, i % 2 ? want_a : want_b);
		free(got);
	}
	/* Step 5 by cleanupctl: its own session and application_name. */
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	snprintf(want_ctl, sizeof want_ctl, "cleanupctl:job:%lld:step", (long long)job); /* cmd_job_step.c */
	expect_text(obs, want_ctl,
	            "SELECT runner_app FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 5 "
	            "AND runner_pid NOT IN (%d, %d) AND runner_pid > 0",
	            (long long)job, PQbackendPID(a), PQbackendPID(b));
	before = pgtest_text(obs,
	                     "SELECT string_agg(step_no || ':' || runner_pid || ':' || runner_app || ':' || xact_id, ',' "
	                     "ORDER BY step_no) FROM cleanup.job_steps WHERE job_id = %lld",
	                     (long long)job);

	/* Replays, from the connection that did not run the step: the
	 * recorded runner comes back, nothing is rewritten. */
	expect_text(b, want_a, "SELECT runner_pid || ' ' || runner_app FROM cleanup.job_step(%lld, 1)", (long long)job);
	expect_text(a, want_b, "SELECT runner_pid || ' ' || runner_app FROM cleanup.job_step(%lld, 2)", (long long)job);
	expect_text(b, want_a, "SELECT runner_pid || ' ' || runner_app FROM cleanup.job_step_replay(%lld, 3)",
	            (long long)job);
	assert_int_equal(ctl(&out, "--json job step %lld --replay 4", (long long)job), 0);
	/* The step document names its runner too (docs/json.md). */
	snprintf(want_json, sizeof want_json, "\"runner\": {\"pid\": %d, \"application\": \"runner-beta\"}",
	         PQbackendPID(b));
	if (!strstr(out, want_json))
		fail_msg("job step --replay 4 --json lacks %s: %s", want_json, out);
	free(out);
	after = pgtest_text(obs,
	                    "SELECT string_agg(step_no || ':' || runner_pid || ':' || runner_app || ':' || xact_id, ',' "
	                    "ORDER BY step_no) FROM cleanup.job_steps WHERE job_id = %lld",
	                    (long long)job);
	assert_string_equal(after, before);
	free(before);
	free(after);
	assert_int_equal(job_int(obs, job, "step_no"), 5);
	assert_steps_consistent(obs, job);
	pgtest_close_all(a, b, obs, NULL);
}

/* runner_app is bounded (64 characters, a CHECK) and '' for a session
 * without an application_name; a preview records nothing. */
static void test_runner_app_is_bounded(void **state)
{
	PGconn *obs = conn("observer"), *r = conn("");
	int64_t lib, job;

	(void)state;
	lib = pgtest_new_library(obs, pgtest_new_server(obs, "bound"), "bound", 200);
	job = sealed_prune(obs, lib, "bound", 200, 0);
	pgtest_exec(r, "SET application_name = ''");
	assert_int_equal(step_on(r, job, 1), 1);
	expect_text(obs, "[]", "SELECT '[' || runner_app || ']' FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 1",
	            (long long)job);
	expect_text(obs, "true",
	            "SELECT (runner_pid IS NULL AND runner_app IS NULL)::text FROM cleanup.job_step_preview(%lld)",
	            (long long)job);
	pgtest_fails(obs, "23514", NULL,
	             "UPDATE cleanup.job_steps SET runner_app = repeat('x', 65) "
	             "WHERE job_id = %lld AND step_no = 1",
	             (long long)job);
	pgtest_close_all(r, obs, NULL);
}

/* A step notifies only when notified_at moves (its last value 100 ms old)
 * or the phase or pass changes; any other change of the job notifies
 * whatever notified_at says. notified_at is put an hour into the future to
 * hold it still, an hour into the past to make it due: no timing. */
static void test_steps_notify_only_when_due_or_phase_changes(void **state)
{
	PGconn *obs = conn("observer"), *l = conn("listener"), *r = conn("runner");
	int64_t lib, job, transitions;
	char last[256], *v;
	int i, n, step, first;

	(void)state;
	lib = pgtest_new_library(obs, pgtest_new_server(obs, "quiet"), "quiet", 1000);
	job = sealed_prune(obs, lib, "quiet", 1000, 0);
	pgtest_exec(l, "LISTEN cleanup_jobs");
	pgtest_exec(obs, "UPDATE cleanup.jobs SET notified_at = clock_timestamp() + interval '1 hour' WHERE id = %lld",
	            (long long)job);
	drain(l, NULL, 0);

	/* Not due: three steps, no notification (each notified before). */
	for (step = 1; step <= 3; step++)
		assert_int_equal(step_on(r, job, step), step);
	assert_int_equal(drain(l, NULL, 0), 0);

	/* A change that is not a step notifies at once. */
	pgtest_exec(r, "SELECT cleanup.job_note_busy(%lld, 'busy: test')", (long long)job);
	assert_int_equal(drain(l, last, sizeof last), 1);

	/* Due: the next step notifies once and moves notified_at. */
	pgtest_exec(obs, "UPDATE cleanup.jobs SET notified_at = clock_timestamp() - interval '1 hour' WHERE id = %lld",
	            (long long)job);
	drain(l, NULL, 0);
	assert_int_equal(step_on(r, job, step), step);
	assert_int_equal(drain(l, last, sizeof last), 1);
	v = pgtest_text(obs, "SELECT format('\"step_no\" : %%s', step_no) FROM cleanup.jobs WHERE id = %lld",
	                (long long)job);
	assert_non_null(strstr(last, v));
	free(v);
	assert_int_equal(pgtest_int(obs, "SELECT (clock_timestamp() - notified_at < interval '1 minute')::int "
	                                 "FROM cleanup.jobs WHERE id = %lld",
	                            (long long)job),
	                 1);
	step++;

	/* Not due again: the rest of the job notifies exactly at its phase
	 * and pass changes, the completing step among them. */
	pgtest_exec(obs, "UPDATE cleanup.jobs SET notified_at = clock_timestamp() + interval '1 hour' WHERE id = %lld",
	            (long long)job);
	drain(l, NULL, 0);
	first = step;
	for (i = 0; i < 100 && strcmp(job_phase(obs, job), "completed") != 0; i++, step++)
		assert_int_equal(step_on(r, job, step), step);
	assert_string_equal(job_phase(obs, job), "completed");
	/* Step k changed the job's phase when its phase_after differs from
	 * step k-1's, its pass when step k+1 (or the job) has another. */
	transitions = pgtest_int(obs,
	                         "SELECT count(*) FROM (SELECT step_no, phase_after, pass_no, "
	                         "lag(phase_after) OVER w AS prev_phase, "
	                         "lead(pass_no, 1, (SELECT pass_no FROM cleanup.jobs WHERE id = %lld)) OVER w AS next_pass "
	                         "FROM cleanup.job_steps WHERE job_id = %lld WINDOW w AS (ORDER BY step_no)) s "
	                         "WHERE step_no >= %d AND (phase_after IS DISTINCT FROM prev_phase OR next_pass <> pass_no)",
	                         (long long)job, (long long)job, first);
	assert_true(transitions >= 1);
	n = drain(l, last, sizeof last);
	assert_int_equal(n, transitions);
	assert_non_null(strstr(last, "\"completed\""));
	pgtest_close_all(r, l, obs, NULL);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A running job (cleanupctl job run, ~160 steps) notifies at most about
 * once per 100 ms of its run plus its phase changes, not once a step; and
 * it does notify while it runs longer than that. */
static void test_a_run_notifies_about_every_100_ms(void **state)
{
	PGconn *obs = conn("observer"), *l = conn("listener");
	int64_t lib, job, steps, span, longest;
	double t0, ms;
	int n;

	(void)state;
	lib = pgtest_new_library(obs, pgtest_new_server(obs, "run"), "run", 20000);
	job = sealed_prune(obs, lib, "run", 20000, 0);
	pgtest_exec(l, "LISTEN cleanup_jobs");
	drain(l, NULL, 0);
	t0 = now_s();
	assert_int_equal(ctl(NULL, "job run %lld", (long long)job), 0);
	ms = (now_s() - t0) * 1000.0;
	n = drain(l, NULL, 0);
	steps = job_int(obs, job, "step_no");
	assert_string_equal(job_phase(obs, job), "completed");
	/* While steps ran (their recorded span), a notification at least
	 * every 100 ms plus one step; halved for slack. */
	span = pgtest_int(obs,
	                  "SELECT (extract(epoch FROM max(started_at) - min(started_at)) * 1000)::bigint "
	                  "FROM cleanup.job_steps WHERE job_id = %lld",
	                  (long long)job);
	longest = pgtest_int(obs, "SELECT ceil(max(duration_ms))::bigint FROM cleanup.job_steps WHERE job_id = %lld",
	                     (long long)job);
	print_message("# %lld steps in %.0f ms (steps over %lld ms, the longest %lld ms), %d notifications\n",
	              (long long)steps, ms, (long long)span, (long long)longest, n);
	/* At most: the first step (notified_at NULL), one per 100 ms, the
	 * phase changes (finalizing, completed), with slack. */
	assert_true(n <= (int)(ms / 100.0) + 5);
	assert_true(n < steps);
	assert_true(n >= 2 && n >= (int)(span / (100 + longest) / 2));
	pgtest_close_all(l, obs, NULL);
}

/* An upgrade from schema 009 (the columns and the trigger condition as
 * they were): install applies migration 010 and every later one; steps
 * recorded before keep NULL runners, new steps record theirs and notify
 * coalesced. Migration 012 (a prune's first pass in external-ID order):
 * a sealed prune that has not stepped yet starts in key order; one that
 * has stepped goes on in id order, from its id cursor. */
static void test_upgrade_from_009_adds_runner_and_notified_at(void **state)
{
	char *old = pgtest_fresh_db("step_runner_009");
	PGconn *c = pgtest_connect(old, "observer");
	int64_t lib, job, lib2, job2;
	char *out = NULL, *def;
	char *saved = ci;

	(void)state;
	ci = old;
	lib = pgtest_new_library(c, pgtest_new_server(c, "up"), "up", 600);
	job = sealed_prune(c, lib, "up", 600, 0);
	assert_int_equal(step_on(c, job, 1), 1);
	lib2 = pgtest_new_library(c, pgtest_new_server(c, "up2"), "up2", 300);
	job2 = sealed_prune(c, lib2, "up2", 300, 2);
	/* Back to 009: migration 010's columns gone, 009's trigger condition,
	 * and what later migrations add (011: jobs.purged_at and its index;
	 * 012: the key cursor). */
	pgtest_exec(c, "ALTER TABLE cleanup.jobs DROP COLUMN key_cursor, DROP COLUMN key_bound, "
	               "DROP COLUMN key_bound_end");
	pgtest_exec(c, "ALTER TABLE cleanup.jobs DROP COLUMN purged_at");
	pgtest_exec(c, "DROP TRIGGER jobs_notify_update ON cleanup.jobs");
	pgtest_exec(c, "ALTER TABLE cleanup.jobs DROP COLUMN notified_at");
	pgtest_exec(c, "ALTER TABLE cleanup.job_steps DROP COLUMN runner_pid, DROP COLUMN runner_app");
	pgtest_exec(c, "CREATE TRIGGER jobs_notify_update AFTER UPDATE ON cleanup.jobs FOR EACH ROW "
	               "WHEN (OLD.manifest_count = NEW.manifest_count OR OLD.updated_at IS DISTINCT FROM NEW.updated_at "
	               "OR OLD.phase IS DISTINCT FROM NEW.phase OR OLD.step_no IS DISTINCT FROM NEW.step_no) "
	               "EXECUTE FUNCTION cleanup.jobs_notify()");
	pgtest_exec(c, "UPDATE cleanup.schema_info SET version = 9, bundle_sha256 = 'bundle-of-009'");

	assert_int_equal(ctl(&out, "--json install"), 0);
	/* 010 and every later migration (011_retention, ...), counted in
	 * sql/schema: numbers may have gaps (one reserved for a branch). */
	{
		char want[64], *n = NULL;

		assert_int_equal(pgtest_sh(&n, "ls \"$CLEANUP_SOURCE_DIR\"/sql/schema | awk -F_ '$1 + 0 > 9' | wc -l"), 0);
		snprintf(want, sizeof want, "\"migrations_applied\": %d", atoi(n));
		free(n);
		assert_non_null(strstr(out, want));
	}
	free(out);
	assert_int_equal(pgtest_int(c, "SELECT version FROM cleanup.schema_info"), cleanup_schema_version());
	def = pgtest_text(c, "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'jobs_notify_update'");
	assert_non_null(strstr(def, "notified_at"));
	free(def);
	/* The old step: no runner recorded; a new one: cleanupctl's. */
	def = recorded_runner(c, job, 1);
	assert_string_equal(def, "NULL NULL");
	free(def);
	/* 012: the prune that has stepped stays in id order, the other
	 * starts in key order. */
	assert_int_equal(pgtest_int(c, "SELECT (key_cursor IS NULL)::int FROM cleanup.jobs WHERE id = %lld",
	                            (long long)job),
	                 1);
	def = pgtest_text(c, "SELECT key_cursor FROM cleanup.jobs WHERE id = %lld", (long long)job2);
	assert_string_equal(def, "");
	free(def);
	assert_int_equal(ctl(NULL, "job step %lld", (long long)job), 0);
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 2 "
	                            "AND runner_pid > 0 AND runner_app LIKE 'cleanupctl:job:%%'",
	                            (long long)job),
	                 1);
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 2 "
	                            "AND check_to IS NULL AND cursor_to > 0",
	                            (long long)job),
	                 1);
	assert_int_equal(ctl(NULL, "job run %lld", (long long)job2), 0);
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND step_no = 1 "
	                            "AND check_from = '' AND check_to IS NOT NULL",
	                            (long long)job2),
	                 1);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM inventory.items WHERE library_id = %lld", (long long)lib2),
	                 150);
	assert_steps_consistent(c, job2);
	assert_int_equal(pgtest_int(c, "SELECT (notified_at IS NOT NULL)::int FROM cleanup.jobs WHERE id = %lld",
	                            (long long)job),
	                 1);
	/* Nothing left to repair. */
	expect_ctl(0, "\"changed\": false", "--json install");
	assert_steps_consistent(c, job);
	ci = saved;
	PQfinish(c);
	free(old);
}

PGTEST_MAIN(cmocka_unit_test(test_step_rows_name_the_connection_that_took_them),
            cmocka_unit_test(test_runner_app_is_bounded),
            cmocka_unit_test(test_steps_notify_only_when_due_or_phase_changes),
            cmocka_unit_test(test_a_run_notifies_about_every_100_ms),
            cmocka_unit_test(test_upgrade_from_009_adds_runner_and_notified_at))

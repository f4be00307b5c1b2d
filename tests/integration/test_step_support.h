/* Fixtures shared by the step engine's integration tests (test_step_*.c):
 * servers, libraries and items with known external IDs, sealed prune jobs,
 * the real cleanupctl binary against the test database, and the checks
 * every test ends with (the budget of every recorded step). */
#ifndef TEST_STEP_SUPPORT_H
#define TEST_STEP_SUPPORT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pgtest.h"

/* The test database of this file (set by the group setup). */
static char *ci;

static __attribute__((unused)) PGconn *conn(const char *app)
{
	return pgtest_connect(ci, app);
}

/* A new media server NAME with one library NAME of N items
 * (pgtest_new_server, pgtest_new_library); returns the library id, the
 * server id into *SRV. */
static __attribute__((unused)) int64_t new_server_library(PGconn *c, const char *name, int n, int64_t *srv)
{
	*srv = pgtest_new_server(c, name);
	return pgtest_new_library(c, *srv, name, n);
}

/* A prune job of library LIB (named NAME, N items) whose manifest holds
 * every item whose number is a multiple of EVERY (EVERY 0: none), sealed.
 * Returns the job id. */
static __attribute__((unused)) int64_t sealed_prune(PGconn *c, int64_t lib, const char *name, int n, int every)
{
	int64_t job = pgtest_job_create(c, "prune", lib);
	int from;

	for (from = 1; every > 0 && from <= n; from += 128 * every)
		pgtest_exec(c,
		            "SELECT cleanup.job_append(%lld, ARRAY(SELECT '%s-' || g FROM generate_series(%d, %d) g "
		            "WHERE g %% %d = 0))",
		            (long long)job, name, from, from + 128 * every - 1 < n ? from + 128 * every - 1 : n, every);
	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, (SELECT count(*) FROM cleanup.manifest WHERE job_id = %lld))",
	            (long long)job, (long long)job);
	return job;
}

/* new_server_library(NAME, N) and a sealed_prune() of it (EVERY);
 * returns the job id, the library into *LIB and the server into *SRV. */
static __attribute__((unused)) int64_t new_sealed_prune(PGconn *c, const char *name, int n, int every, int64_t *lib,
                                                        int64_t *srv)
{
	*lib = new_server_library(c, name, n, srv);
	return sealed_prune(c, *lib, name, n, every);
}

/* new_server_library(NAME, N) and a remove-library job of it; returns the
 * job id, the library into *LIB and the server into *SRV. */
static __attribute__((unused)) int64_t new_removal(PGconn *c, const char *name, int n, int64_t *lib, int64_t *srv)
{
	*lib = new_server_library(c, name, n, srv);
	return pgtest_job_create(c, "remove-library", *lib);
}

/* Runs "cleanupctl --db CI ARGS" (printf-style ARGS); stdout into *OUT
 * when OUT is not NULL, stderr to the test log. Returns the exit status. */
static __attribute__((format(printf, 2, 3), unused)) int ctl(char **out, const char *fmt, ...)
{
	char args[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	return pgtest_sh(out, "'%s' --db \"%s\" %s", pgtest_cleanupctl(), ci, args);
}

/* Runs ctl() expecting exit STATUS and SAYS in its output (stdout). */
static __attribute__((format(printf, 3, 4), unused)) void expect_ctl(int status, const char *says,
                                                                     const char *fmt, ...)
{
	char args[1024], *out = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	assert_int_equal(ctl(&out, "%s", args), status);
	assert_non_null(strstr(out, says));
	free(out);
}

/* Runs "cleanupctl --db CI ARGS" like ctl(), fails the test unless it
 * exits STATUS, and asserts that the data is as it was before
 * (pgtest_fingerprint): a refusal or a preview changes nothing. */
static __attribute__((format(printf, 4, 5), unused)) void
ctl_changes_nothing(PGconn *c, char **out, int status, const char *fmt, ...)
{
	char args[1024];
	char *before = pgtest_fingerprint(c);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	assert_int_equal(ctl(out, "%s", args), status);
	pgtest_unchanged(c, before);
}

/* Starts "cleanupctl --db CI ARGS" in the background with ENV (e.g.
 * "PGOPTIONS='-c cleanup.test_hook=after_discovery'", or ""). */
static __attribute__((format(printf, 2, 3), unused)) int ctl_spawn(const char *env, const char *fmt, ...)
{
	char args[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof args, fmt, ap);
	va_end(ap);
	return pgtest_spawn("%s '%s' --db \"%s\" %s", env, pgtest_cleanupctl(), ci, args);
}

/* A column of job JOB as an integer. */
static __attribute__((unused)) int64_t job_int(PGconn *c, int64_t job, const char *col)
{
	return pgtest_int(c, "SELECT %s FROM cleanup.jobs WHERE id = %lld", col, (long long)job);
}

/* The columns COLS of job JOB (a comma-separated list of cleanup.jobs
 * columns) have the values EXPECTED (comma-separated, in that order). */
static __attribute__((unused)) void assert_job_counts(PGconn *c, int64_t job, const char *cols,
                                                      const char *expected)
{
	assert_text_equal(pgtest_text(c, "SELECT concat_ws(', ', %s) FROM cleanup.jobs WHERE id = %lld", cols,
	                              (long long)job),
	                  expected);
}

/* Phase of job JOB (static buffer). */
static __attribute__((unused)) const char *job_phase(PGconn *c, int64_t job)
{
	static char phase[32];
	char *p = pgtest_text(c, "SELECT phase FROM cleanup.jobs WHERE id = %lld", (long long)job);

	snprintf(phase, sizeof phase, "%s", p ? p : "");
	free(p);
	return phase;
}

/* "cleanupctl job run JOB" exits 0 and the job is completed. */
static __attribute__((unused)) void run_to_completion(PGconn *c, int64_t job)
{
	assert_int_equal(ctl(NULL, "job run %lld", (long long)job), 0);
	assert_string_equal(job_phase(c, job), "completed");
}

/* The next step of JOB refuses: exit 4, "schema contract drift" naming
 * COMPONENT, and nothing changed (the data's fingerprint, the job's step
 * number). Its output (stdout and stderr) into *OUT when OUT is not NULL. */
static __attribute__((unused)) void expect_step_drift(PGconn *c, int64_t job, const char *component,
                                                      char **out)
{
	int64_t step = job_int(c, job, "step_no");
	char *text = NULL;

	ctl_changes_nothing(c, &text, 4, "job step %lld 2>&1", (long long)job);
	assert_non_null(strstr(text, "schema contract drift"));
	assert_non_null(strstr(text, component));
	assert_int_equal(job_int(c, job, "step_no"), step);
	if (out)
		*out = text;
	else
		free(text);
}

/* S1, S7, D2: every recorded step of JOB stays within the budget (at most
 * 128 candidates visited, 128 domain mutations and 1024 rows examined), its
 * counts add up (every visited candidate has one verdict, a claim among
 * them; every released claim ended in a deletion; every examined row was
 * visited or kept; the mutations are the sum of the kinds), the steps are numbered 1..step_no without gaps, and
 * the job's counters are the sums of its steps' counts. */
static __attribute__((unused)) void assert_steps_consistent(PGconn *c, int64_t job)
{
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld AND action <> 'single-transaction' "
	                            "AND (mutations > 128 OR visited > 128 OR examined > 1024)",
	                            (long long)job),
	                 0);
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld "
	                            "AND (visited + released + moved_early + absent_early <> "
                            "deleted + moved + absent + retained + claimed "
	                            "OR examined <> visited + kept OR (action <> 'single-transaction' AND mutations <> "
	                            "deleted + retries_deleted + previews_deleted + collections_deleted + "
	                            "sync_status_deleted + history_detached + libraries_deleted + servers_deleted))",
	                            (long long)job),
	                 0);
	assert_int_equal(pgtest_int(c, "SELECT count(*) FROM cleanup.job_steps WHERE job_id = %lld", (long long)job),
	                 job_int(c, job, "step_no"));
	assert_int_equal(pgtest_int(c, "SELECT coalesce(max(step_no), 0) FROM cleanup.job_steps WHERE job_id = %lld",
	                            (long long)job),
	                 job_int(c, job, "step_no"));
	assert_int_equal(pgtest_int(c,
	                            "SELECT count(*) FROM cleanup.jobs j, LATERAL (SELECT sum(examined) e, sum(visited) v, "
	                            "sum(deleted) d, sum(moved) m, sum(absent) a, sum(retained) r, sum(kept) k, "
	                            "sum(libraries_deleted) l, sum(servers_deleted) s, sum(claimed) c, sum(released) rl, "
	                            "sum(retries_deleted) rd, sum(previews_deleted) pd, sum(collections_deleted) cd, "
	                            "sum(sync_status_deleted) sd, sum(history_detached) hd FROM cleanup.job_steps "
	                            "WHERE job_id = j.id) t "
	                            "WHERE j.id = %lld AND (j.examined, j.visited, j.deleted, j.moved, j.absent, j.retained, "
	                            "j.kept, j.libraries_deleted, j.servers_deleted, j.claimed, j.released, j.retries_deleted, "
	                            "j.previews_deleted, j.collections_deleted, j.sync_status_deleted, j.history_detached) = "
	                            "(t.e, t.v, t.d, t.m, t.a, t.r, t.k, t.l, t.s, t.c, t.rl, t.rd, t.pd, t.cd, t.sd, t.hd)",
	                            (long long)job),
	                 1);
}

#endif

/* Integration-test helpers (see pgtest.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cleanup/install.h"
#include "cleanup/lab.h"
#include "cleanup/sandbox.h"
#include "pgtest.h"

static char *vformat(const char *fmt, va_list ap)
{
	va_list cp;
	int n;
	char *s;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	s = malloc((size_t)n + 1);
	assert_non_null(s);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

/* VAR = FMT and the arguments that follow it in this variadic function,
 * formatted (vformat, malloc'd). */
#define FORMAT_ARGS(var, fmt)                \
	do {                                 \
		va_list args_;               \
                                             \
		va_start(args_, fmt);        \
		(var) = vformat(fmt, args_); \
		va_end(args_);               \
	} while (0)

char *pgtest_conninfo(const char *db)
{
	const char *dir = getenv("CLEANUP_TEST_SANDBOX");
	cleanup_sandbox sb;
	cleanup_error err;
	char buf[CLEANUP_PATH_MAX + 128];

	if (!dir) {
		fprintf(stderr, "CLEANUP_TEST_SANDBOX is not set: run the tests through ctest\n");
		fail();
	}
	if (cleanup_sandbox_init(&sb, dir, &err) != CLEANUP_OK) {
		fprintf(stderr, "sandbox: %s\n", err.message);
		fail();
	}
	cleanup_sandbox_conninfo(&sb, db, buf, sizeof buf);
	return strdup(buf);
}

PGconn *pgtest_connect(const char *conninfo, const char *app)
{
	const char *keys[] = {"dbname", "application_name", NULL};
	const char *vals[] = {conninfo, app ? app : "pgtest", NULL};
	PGconn *c = PQconnectdbParams(keys, vals, 1);

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "connect %s: %s\n", conninfo, PQerrorMessage(c));
		fail();
	}
	return c;
}

cleanup_engine *pgtest_engine(const char *conninfo)
{
	cleanup_engine *e = NULL;
	cleanup_error err;

	if (cleanup_engine_open(&e, conninfo, "pgtest-engine", &err) != CLEANUP_OK) {
		fprintf(stderr, "engine: %s\n", err.message);
		fail();
	}
	return e;
}

char *pgtest_fresh_db(const char *name)
{
	char *admin = pgtest_conninfo("postgres");
	char db[64], *conninfo;
	PGconn *c = pgtest_connect(admin, "pgtest-admin");
	cleanup_engine *e;
	cleanup_install_result r;
	cleanup_error err;

	snprintf(db, sizeof db, "cleanup_lab_t_%s", name);
	pgtest_exec(c, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
	pgtest_exec(c, "CREATE DATABASE %s", db);
	PQfinish(c);
	free(admin);
	conninfo = pgtest_conninfo(db);
	e = pgtest_engine(conninfo);
	if (cleanup_install(&r, e, &err) != CLEANUP_OK) {
		fprintf(stderr, "install: %s (%s)\n", err.message, err.context);
		fail();
	}
	/* The lab's own step: the tests seed with cleanup_lab.seed_demo. */
	if (cleanup_lab_install(NULL, e, &err) != CLEANUP_OK) {
		fprintf(stderr, "lab install: %s (%s)\n", err.message, err.context);
		fail();
	}
	cleanup_engine_close(e);
	return conninfo;
}

char *pgtest_seeded_db(const char *name, int servers, int libraries, int items)
{
	char *conninfo = pgtest_fresh_db(name);
	PGconn *c = pgtest_connect(conninfo, "pgtest-seed");

	pgtest_exec(c, "SELECT cleanup_lab.seed_demo(%d, %d, %d)", servers, libraries, items);
	PQfinish(c);
	return conninfo;
}

void pgtest_exec(PGconn *c, const char *fmt, ...)
{
	char *sql;
	PGresult *r;

	FORMAT_ARGS(sql, fmt);
	r = PQexec(c, sql);
	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
		fprintf(stderr, "SQL failed: %s\n  %s", sql, PQerrorMessage(c));
		PQclear(r);
		free(sql);
		fail();
	}
	PQclear(r);
	free(sql);
}

const char *pgtest_fail(PGconn *c, char *msg, size_t msglen, const char *fmt, ...)
{
	static char state[6];
	char *sql;
	PGresult *r;
	const char *s, *m;

	FORMAT_ARGS(sql, fmt);
	r = PQexec(c, sql);
	if (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK) {
		fprintf(stderr, "SQL succeeded but should have failed: %s\n", sql);
		PQclear(r);
		free(sql);
		fail();
	}
	s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
	snprintf(state, sizeof state, "%s", s ? s : "");
	if (msg)
		snprintf(msg, msglen, "%s", m ? m : "");
	PQclear(r);
	free(sql);
	return state;
}

static PGresult *query(PGconn *c, const char *fmt, va_list ap)
{
	char *sql = vformat(fmt, ap);
	PGresult *r = PQexec(c, sql);

	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1) {
		fprintf(stderr, "query failed or returned no row: %s\n  %s", sql, PQerrorMessage(c));
		PQclear(r);
		free(sql);
		fail();
	}
	free(sql);
	return r;
}

char *pgtest_text(PGconn *c, const char *fmt, ...)
{
	va_list ap;
	PGresult *r;
	char *v;

	va_start(ap, fmt);
	r = query(c, fmt, ap);
	va_end(ap);
	v = PQgetisnull(r, 0, 0) ? NULL : strdup(PQgetvalue(r, 0, 0));
	PQclear(r);
	return v;
}

int64_t pgtest_int(PGconn *c, const char *fmt, ...)
{
	va_list ap;
	PGresult *r;
	int64_t v;

	va_start(ap, fmt);
	r = query(c, fmt, ap);
	va_end(ap);
	v = PQgetisnull(r, 0, 0) ? -1 : strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

void pgtest_send(PGconn *c, const char *fmt, ...)
{
	char *sql;

	FORMAT_ARGS(sql, fmt);
	if (!PQsendQuery(c, sql)) {
		fprintf(stderr, "send failed: %s: %s", sql, PQerrorMessage(c));
		free(sql);
		fail();
	}
	free(sql);
}

const char *pgtest_finish(PGconn *c)
{
	static char state[6];
	PGresult *r;

	state[0] = '\0';
	while ((r = PQgetResult(c)) != NULL) {
		if (PQresultStatus(r) == PGRES_FATAL_ERROR) {
			const char *s = PQresultErrorField(r, PG_DIAG_SQLSTATE);

			snprintf(state, sizeof state, "%s", s ? s : "?????");
		}
		PQclear(r);
	}
	return state;
}

void pgtest_wait_blocked(PGconn *observer, int pid, int timeout_ms)
{
	struct timespec t = {0, 2 * 1000 * 1000};
	int waited = 0;

	while (waited < timeout_ms) {
		if (pgtest_int(observer, "SELECT cardinality(pg_blocking_pids(%d))", pid) > 0)
			return;
		nanosleep(&t, NULL);
		waited += 2;
	}
	fprintf(stderr, "backend %d was not blocked within %d ms\n", pid, timeout_ms);
	fail();
}

void pgtest_wait_gone(PGconn *observer, int pid, int timeout_ms)
{
	struct timespec t = {0, 2 * 1000 * 1000};
	int waited = 0;

	while (waited < timeout_ms) {
		if (pgtest_int(observer, "SELECT count(*) FROM pg_stat_activity WHERE pid = %d", pid) == 0)
			return;
		nanosleep(&t, NULL);
		waited += 2;
	}
	fprintf(stderr, "backend %d did not end within %d ms\n", pid, timeout_ms);
	fail();
}

int pgtest_sh(char **out, const char *fmt, ...)
{
	va_list ap;
	char *cmd, buf[4096];
	FILE *p;
	size_t len = 0, n;
	char *acc = NULL;
	int st;

	va_start(ap, fmt);
	cmd = vformat(fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
		char *grown = realloc(acc, len + n + 1);

		assert_non_null(grown);
		acc = grown;
		memcpy(acc + len, buf, n);
		len += n;
		acc[len] = '\0';
	}
	st = pclose(p);
	free(cmd);
	if (out)
		*out = acc ? acc : strdup("");
	else
		free(acc);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

const char *pgtest_cleanupctl(void)
{
	const char *p = getenv("CLEANUPCTL");

	if (!p) {
		fprintf(stderr, "CLEANUPCTL is not set: run the tests through ctest\n");
		fail();
	}
	return p;
}

void pgtest_refused(PGconn *c, const char *state, const char *sql, ...)
{
	char msg[1024], *before, *after;
	const char *frag;
	va_list ap;

	before = pgtest_fingerprint(c);
	assert_string_equal(pgtest_fail(c, msg, sizeof msg, "%s", sql), state);
	va_start(ap, sql);
	while ((frag = va_arg(ap, const char *)) != NULL) {
		if (!strstr(msg, frag))
			fprintf(stderr, "message \"%s\" lacks \"%s\"\n", msg, frag);
		assert_non_null(strstr(msg, frag));
	}
	va_end(ap);
	after = pgtest_fingerprint(c);
	assert_string_equal(before, after);
	free(before);
	free(after);
}

int pgtest_cli(char **out, const char *conninfo, const char *fmt, ...)
{
	char *args;
	int rc;

	FORMAT_ARGS(args, fmt);
	rc = pgtest_sh(out, "'%s' --db \"%s\" %s 2>&1", pgtest_cleanupctl(), conninfo, args);
	free(args);
	return rc;
}

void pgtest_cli_expect(int status, const char *conninfo, const char *fmt, ...)
{
	char *args;

	FORMAT_ARGS(args, fmt);
	free(pgtest_cli_out(status, conninfo, "%s", args));
	free(args);
}

char *pgtest_fingerprint(PGconn *c)
{
	return pgtest_text(
		c, "SELECT md5(concat_ws('|',"
		   " (SELECT string_agg(format('%%s', j.*), ',' ORDER BY j.id) FROM cleanup.jobs j),"
		   " (SELECT string_agg(m.job_id || ':' || m.external_id, ',' ORDER BY m.job_id, m.external_id)"
		   "    FROM cleanup.manifest m),"
		   " (SELECT string_agg(format('%%s', a.*), ',' ORDER BY a.library_id) FROM cleanup.library_admission a),"
		   " (SELECT string_agg(format('%%s', a.*), ',' ORDER BY a.server_id) FROM cleanup.server_admission a),"
		   " (SELECT string_agg(format('%%s', s.*), ',' ORDER BY s.library_id, s.stripe) FROM cleanup.library_stats s),"
		   " (SELECT count(*) FROM cleanup.events),"
		   " (SELECT string_agg(format('%%s', i.*), ',' ORDER BY i.id) FROM inventory.items i),"
		   " (SELECT string_agg(format('%%s', l.*), ',' ORDER BY l.id) FROM inventory.libraries l),"
		   " (SELECT string_agg(format('%%s', s.*), ',' ORDER BY s.id) FROM inventory.media_servers s)))");
}

/* Output files of spawned commands, by pid. */
#define PGTEST_SPAWN_MAX 16
static struct {
	int pid;
	char path[64];
} spawned[PGTEST_SPAWN_MAX];

int pgtest_spawn(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int pid, fd, slot;

	va_start(ap, fmt);
	cmd = vformat(fmt, ap);
	va_end(ap);
	for (slot = 0; slot < PGTEST_SPAWN_MAX && spawned[slot].pid; slot++)
		;
	assert_true(slot < PGTEST_SPAWN_MAX);
	snprintf(spawned[slot].path, sizeof spawned[slot].path, "/tmp/pgtest-spawn-XXXXXX");
	fd = mkstemp(spawned[slot].path);
	assert_true(fd >= 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fd);
	free(cmd);
	spawned[slot].pid = pid;
	return pid;
}

int pgtest_wait(int pid, char **out)
{
	int st, slot;

	for (slot = 0; slot < PGTEST_SPAWN_MAX && spawned[slot].pid != pid; slot++)
		;
	assert_true(slot < PGTEST_SPAWN_MAX);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (out) {
		FILE *f = fopen(spawned[slot].path, "r");
		long len;

		assert_non_null(f);
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		fseek(f, 0, SEEK_SET);
		*out = calloc(1, (size_t)len + 1);
		assert_non_null(*out);
		if (len > 0)
			assert_int_equal(fread(*out, 1, (size_t)len, f), (size_t)len);
		fclose(f);
	}
	unlink(spawned[slot].path);
	spawned[slot].pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int pgtest_wait_app_blocked(PGconn *observer, const char *app, int timeout_ms)
{
	struct timespec t = {0, 5 * 1000 * 1000};
	const char *params[1] = {app};
	int waited = 0;

	while (waited < timeout_ms) {
		PGresult *r = PQexecParams(observer,
		                           "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
		                           " AND application_name = $1"
		                           " AND cardinality(pg_blocking_pids(pid)) > 0",
		                           1, NULL, params, NULL, NULL, 0);
		int pid = 0;

		if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0)
			pid = atoi(PQgetvalue(r, 0, 0));
		PQclear(r);
		if (pid > 0)
			return pid;
		nanosleep(&t, NULL);
		waited += 5;
	}
	fprintf(stderr, "no backend named %s was blocked within %d ms\n", app, timeout_ms);
	fail();
	return 0;
}

char *pgtest_with_user(const char *conninfo, const char *user)
{
	size_t n = strlen(conninfo) + strlen(user) + 8;
	char *s = malloc(n);

	assert_non_null(s);
	snprintf(s, n, "%s user=%s", conninfo, user);
	return s;
}

void pgtest_login_role(PGconn *c, const char *name, const char *group)
{
	pgtest_exec(c,
	            "DO $$ BEGIN "
	            "  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '%s') THEN "
	            "    BEGIN CREATE ROLE %s LOGIN; "
	            "    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END; "
	            "  END IF; END $$",
	            name, name);
	pgtest_exec(c, "GRANT %s TO %s", group, name);
}

void pgtest_begin(PGconn *c, const char *fmt, ...)
{
	char *sql;

	FORMAT_ARGS(sql, fmt);
	pgtest_exec(c, "BEGIN");
	pgtest_exec(c, "%s", sql);
	free(sql);
}

void pgtest_send_blocked(PGconn *observer, PGconn *waiter, const char *fmt, ...)
{
	char *sql;

	FORMAT_ARGS(sql, fmt);
	pgtest_send(waiter, "%s", sql);
	free(sql);
	pgtest_wait_blocked(observer, PQbackendPID(waiter), 10000);
}

void pgtest_close_all(PGconn *c, ...)
{
	va_list ap;

	va_start(ap, c);
	for (; c; c = va_arg(ap, PGconn *))
		PQfinish(c);
	va_end(ap);
}

cleanup_engine *pgtest_engine_as(const char *conninfo, const char *app)
{
	cleanup_engine *e = NULL;
	cleanup_error err;

	if (cleanup_engine_open(&e, conninfo, app, &err) != CLEANUP_OK)
		fail_msg("engine %s: %s", app, err.message);
	return e;
}

char *pgtest_login_as(const char *conninfo, const char *name, const char *group)
{
	PGconn *c = pgtest_connect(conninfo, "setup");

	pgtest_login_role(c, name, group);
	PQfinish(c);
	return pgtest_with_user(conninfo, name);
}

void pgtest_unchanged(PGconn *c, char *before)
{
	char *after = pgtest_fingerprint(c);

	assert_string_equal(before, after);
	free(before);
	free(after);
}

void pgtest_fails(PGconn *c, const char *state, const char *fragment, const char *fmt, ...)
{
	char *sql, msg[1024];
	const char *got;

	FORMAT_ARGS(sql, fmt);
	got = pgtest_fail(c, msg, sizeof msg, "%s", sql);
	if (strcmp(got, state) != 0 || (fragment && !strstr(msg, fragment))) {
		fprintf(stderr, "%s\n  failed with %s \"%s\"; expected %s%s%s%s\n", sql, got, msg, state,
		        fragment ? " naming \"" : "", fragment ? fragment : "", fragment ? "\"" : "");
		free(sql);
		fail();
	}
	free(sql);
}

int64_t pgtest_new_server(PGconn *c, const char *name)
{
	return pgtest_int(c, "INSERT INTO inventory.media_servers (name) VALUES ('%s') RETURNING id", name);
}

int64_t pgtest_new_library(PGconn *c, int64_t server, const char *name, int n)
{
	int64_t lib = pgtest_int(c, "INSERT INTO inventory.libraries (server_id, name) VALUES (%lld, '%s') RETURNING id",
	                         (long long)server, name);

	if (n > 0)
		pgtest_exec(c,
		            "INSERT INTO inventory.items (library_id, external_id) "
		            "SELECT %lld, '%s-' || g FROM generate_series(1, %d) g ORDER BY g",
		            (long long)lib, name, n);
	return lib;
}

int64_t pgtest_job_create(PGconn *c, const char *kind, int64_t target)
{
	return pgtest_int(c, "SELECT id FROM cleanup.job_create('%s', %lld)", kind, (long long)target);
}

char *pgtest_cli_out(int status, const char *conninfo, const char *fmt, ...)
{
	char *args, *out = NULL;
	int rc;

	FORMAT_ARGS(args, fmt);
	rc = pgtest_cli(&out, conninfo, "%s", args);
	if (rc != status)
		fprintf(stderr, "cleanupctl %s: exit %d, expected %d:\n%s\n", args, rc, status, out);
	free(args);
	assert_int_equal(rc, status);
	return out;
}

int64_t pgtest_draining_prune(PGconn *c, int64_t lib)
{
	int64_t job = pgtest_job_create(c, "prune", lib);

	pgtest_exec(c, "SELECT cleanup.job_seal(%lld, 0)", (long long)job);
	return job;
}

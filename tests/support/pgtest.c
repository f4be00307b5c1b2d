/* Integration-test helpers (see pgtest.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cleanup/install.h"
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
	cleanup_engine_close(e);
	return conninfo;
}

void pgtest_exec(PGconn *c, const char *fmt, ...)
{
	va_list ap;
	char *sql;
	PGresult *r;

	va_start(ap, fmt);
	sql = vformat(fmt, ap);
	va_end(ap);
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
	va_list ap;
	char *sql;
	PGresult *r;
	const char *s, *m;

	va_start(ap, fmt);
	sql = vformat(fmt, ap);
	va_end(ap);
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
	va_list ap;
	char *sql;

	va_start(ap, fmt);
	sql = vformat(fmt, ap);
	va_end(ap);
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

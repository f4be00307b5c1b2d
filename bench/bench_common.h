/* Helpers shared by the benchmark programs
 * (bench_append.c, bench_shapes.c): messages, timing, the SQL of bench/sql/
 * (one statement a file), admin statements whose database names come from
 * the program's fixed list, plain libpq calls that end the program on error,
 * and percentiles. Static functions in a header: each bench program is one
 * translation unit (bench/CMakeLists.txt builds every C file of bench/ alone). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"
#include "cleanup/install.h"
#include "cleanup/lab.h"

/* Set by the program: its name for messages, its fixed database names. */
static const char *bench_name = "bench";
static const char *const *bench_db_list;
static double bench_t0;

static __attribute__((unused)) double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 - bench_t0;
}

/* Prints a message and ends the program with status 1: a benchmark that
 * cannot set up its data has nothing to report. */
static void bench_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn, unused));
static void bench_fatal(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", bench_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

/* Progress on stderr, stamped with seconds since the start. */
static void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void bench_note(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[%7.1f s] ", bench_now());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

static __attribute__((unused)) void bench_fatal_err(const char *what, const cleanup_error *err)
{
	bench_fatal("%s: %s%s%s%s", what, err->message, err->context[0] ? " (while " : "", err->context,
	            err->context[0] ? ")" : "");
}

/* ---- SQL of bench/sql/, one statement a file, read once ---- */

typedef struct bench_sql_text {
	char name[48];
	char *text;
} bench_sql_text;

static bench_sql_text bench_sql_cache[48];
/* Where bench_sql() reads from; a program may point it elsewhere before its
 * first statement (bench_cleanup --sql-dir). */
static const char *bench_sql_dir = BENCH_SQL_DIR;

/* The text of bench/sql/NAME.sql (cached; never freed). */
static const char *bench_sql(const char *name)
{
	char path[4096];
	FILE *f;
	long len;
	size_t i;
	char *text;

	for (i = 0; i < sizeof bench_sql_cache / sizeof bench_sql_cache[0] && bench_sql_cache[i].text; i++)
		if (strcmp(bench_sql_cache[i].name, name) == 0)
			return bench_sql_cache[i].text;
	if (i == sizeof bench_sql_cache / sizeof bench_sql_cache[0])
		bench_fatal("too many SQL files");
	snprintf(path, sizeof path, "%s/%s.sql", bench_sql_dir, name);
	f = fopen(path, "rb");
	if (!f)
		bench_fatal("cannot open %s: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		bench_fatal("cannot read %s", path);
	text = calloc(1, (size_t)len + 1);
	if (!text || fread(text, 1, (size_t)len, f) != (size_t)len)
		bench_fatal("cannot read %s", path);
	fclose(f);
	snprintf(bench_sql_cache[i].name, sizeof bench_sql_cache[i].name, "%s", name);
	bench_sql_cache[i].text = text;
	return text;
}

static bool bench_known_db(const char *db)
{
	int i;

	for (i = 0; db && bench_db_list && bench_db_list[i]; i++)
		if (strcmp(bench_db_list[i], db) == 0)
			return true;
	return false;
}

/* The text of admin statement NAME with {{db}} and {{template}} replaced by
 * DB and TPL, which must be in the program's fixed list (malloc'd). */
static char *bench_admin_sql(const char *name, const char *db, const char *tpl)
{
	const char *src = bench_sql(name), *p;
	size_t cap = strlen(src) + 256, n = 0;
	char *out = malloc(cap);

	if (!out || !bench_known_db(db) || (tpl && !bench_known_db(tpl)))
		bench_fatal("database name outside the fixed list (or out of memory)");
	for (p = src; *p;) {
		if (strncmp(p, "{{db}}", 6) == 0) {
			n += (size_t)snprintf(out + n, cap - n, "%s", db);
			p += 6;
		} else if (strncmp(p, "{{template}}", 12) == 0) {
			if (!tpl)
				bench_fatal("%s.sql needs a template", name);
			n += (size_t)snprintf(out + n, cap - n, "%s", tpl);
			p += 12;
		} else {
			out[n++] = *p++;
		}
		if (n + 80 >= cap)
			bench_fatal("statement %s too long", name);
	}
	out[n] = '\0';
	return out;
}

/* ---- plain libpq ---- */

static void bench_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* Conninfo SERVER with database DB (the last value of a keyword wins). */
static void bench_conninfo(char *buf, size_t len, const char *server, const char *db)
{
	snprintf(buf, len, "%s dbname=%s", server, db);
}

static PGconn *bench_open(const char *server, const char *db, const char *app)
{
	char ci[4096];
	const char *keys[] = {"dbname", "application_name", NULL};
	const char *vals[] = {ci, app, NULL};
	PGconn *c;

	bench_conninfo(ci, sizeof ci, server, db);
	c = PQconnectdbParams(keys, vals, 1);
	if (PQstatus(c) != CONNECTION_OK)
		bench_fatal("cannot connect to %s: %s", db, PQerrorMessage(c));
	PQsetNoticeProcessor(c, bench_quiet, NULL);
	return c;
}

/* Runs bench statement NAME with N text parameters; fatal on error.
 * Returns the result (PQclear it). */
/* Installs the engine and the lab (whose cleanup_lab.seed_demo the
 * benchmarks seed with) into database CI, as application APP. */
static __attribute__((unused)) void bench_install(const char *ci, const char *app)
{
	cleanup_install_result ir;
	cleanup_engine *e = NULL;
	cleanup_error err;

	if (cleanup_engine_open(&e, ci, app, &err) != CLEANUP_OK)
		bench_fatal_err("connecting", &err);
	if (cleanup_install(&ir, e, &err) != CLEANUP_OK)
		bench_fatal_err("install", &err);
	if (cleanup_lab_install(NULL, e, &err) != CLEANUP_OK)
		bench_fatal_err("installing the lab", &err);
	cleanup_engine_close(e);
}

static PGresult *bench_run(PGconn *c, const char *name, int n, const char *const *params)
{
	PGresult *r = PQexecParams(c, bench_sql(name), n, NULL, params, NULL, NULL, 0);

	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		bench_fatal("%s: %s", name, PQerrorMessage(c));
	return r;
}

/* Runs NAME and returns the first column of its first row as an integer. */
static __attribute__((unused)) int64_t bench_int(PGconn *c, const char *name, int n, const char *const *params)
{
	PGresult *r = bench_run(c, name, n, params);
	int64_t v;

	if (PQntuples(r) < 1 || PQgetisnull(r, 0, 0))
		bench_fatal("%s returned no value", name);
	v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

/* Runs admin statement NAME on database DB (template TPL, may be NULL)
 * through the server's postgres database. */
static __attribute__((unused)) void bench_admin(const char *server, const char *name, const char *db,
                                                const char *tpl)
{
	PGconn *c = bench_open(server, "postgres", "bench:admin");
	char *sql = bench_admin_sql(name, db, tpl);
	PGresult *r = PQexec(c, sql);

	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		bench_fatal("%s (%s): %s", name, db, PQerrorMessage(c));
	PQclear(r);
	free(sql);
	PQfinish(c);
}

/* ---- the machine ---- */

/* The load average (/proc/loadavg: 1, 5 and 15 minutes) into BUF (LEN
 * bytes), "?" when it cannot be read: every figure is printed beside it,
 * since this machine's load decides how far absolute times can be read.
 * Returns BUF. */
static __attribute__((unused)) char *bench_load_avg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double a, b, c;

	if (f && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
		snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
	else
		snprintf(buf, len, "?");
	if (f)
		fclose(f);
	return buf;
}

/* ---- server CPU ---- */

/* utime + stime (+ cutime + cstime with CHILDREN) of process PID in
 * seconds, from /proc/PID/stat; 0 when it is gone. */
static double bench_proc_cpu(long pid, bool children)
{
	char path[64], buf[1024], *p;
	unsigned long long v[4];
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Fields after the command name (which may hold spaces): state is 3,
	 * utime 14, stime 15, cutime 16, cstime 17. */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &v[0], &v[1], &v[2],
	           &v[3]) != 4)
		return 0;
	return (double)(v[0] + v[1] + (children ? v[2] + v[3] : 0)) / (double)sysconf(_SC_CLK_TCK);
}

/* CPU seconds used so far by the PostgreSQL server of connection C (its
 * postmaster, the postmaster's live children, and the children it has
 * reaped): the server runs on this machine (the bench sandbox). Differences
 * of two readings measure the server's work, steadier than wall time on a
 * loaded machine. -1 when /proc cannot tell. */
static __attribute__((unused)) double bench_server_cpu(PGconn *c)
{
	char path[64], line[256];
	long pm = -1, pid;
	double total;
	FILE *f;
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof path, "/proc/%d/status", PQbackendPID(c));
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "PPid: %ld", &pm) == 1)
			break;
	fclose(f);
	if (pm <= 1)
		return -1;
	total = bench_proc_cpu(pm, true);
	if (!(d = opendir("/proc")))
		return -1;
	while ((de = readdir(d))) {
		long ppid = -1;

		pid = strtol(de->d_name, NULL, 10);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%ld/status", pid);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "PPid: %ld", &ppid) == 1)
				break;
		fclose(f);
		if (ppid == pm)
			total += bench_proc_cpu(pid, false);
	}
	closedir(d);
	return total;
}

/* ---- figures ---- */

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The Q-quantile (0..1, nearest rank) of V[0..N), sorting V in place; 0
 * when N is 0. */
static __attribute__((unused)) double bench_quantile(double *v, size_t n, double q)
{
	size_t k;

	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, bench_cmp_double);
	k = (size_t)(q * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

#endif

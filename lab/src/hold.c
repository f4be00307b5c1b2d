/* busy-fence's admission holder (cleanup/hold.h): two libpq connections of
 * the lab's own, with the statements of lab/sql/queries/hold_*.sql. */
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include "cleanup/engine.h"
#include "cleanup/hold.h"
#include "lab_int.h"

struct cleanup_admission_hold {
	PGconn *holder;
	PGconn *probe;
};

/* Connects to CONNINFO as APP into *OUT; fills ERR when it fails. */
static int hold_connect(PGconn **out, const char *conninfo, const char *app, cleanup_error *err)
{
	const char *keys[] = {"dbname", "application_name", NULL};
	const char *vals[] = {conninfo, app, NULL};
	PGconn *c = PQconnectdbParams(keys, vals, 1);
	char msg[CLEANUP_ERR_TEXT];

	*out = NULL;
	if (c && PQstatus(c) == CONNECTION_OK) {
		*out = c;
		return CLEANUP_OK;
	}
	snprintf(msg, sizeof msg, "%s", c ? PQerrorMessage(c) : "out of memory");
	cleanup_conninfo_scrub(msg, sizeof msg, conninfo);
	PQfinish(c);
	return cleanup_error_set(err, CLEANUP_ECONN, "cannot connect as %s: %s", app, msg);
}

/* Runs SQL on C with LIBRARY as $1 (none when LIBRARY < 0). */
static int hold_run(PGconn *c, const char *sql, int64_t library, const char *what, cleanup_error *err)
{
	char buf[24];
	const char *params[1] = {buf};
	PGresult *r;
	int rc = CLEANUP_OK;

	snprintf(buf, sizeof buf, "%" PRId64, library);
	r = PQexecParams(c, sql, library >= 0 ? 1 : 0, NULL, library >= 0 ? params : NULL, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		rc = cleanup_error_set(err, CLEANUP_ERROR, "%s: %s", what, PQerrorMessage(c));
	PQclear(r);
	return rc;
}

int cleanup_admission_hold_start(cleanup_admission_hold **out, const char *conninfo, int64_t library, int64_t job,
                                 cleanup_error *err)
{
	cleanup_admission_hold *h = calloc(1, sizeof *h);
	char lib[24], probe_app[64];
	const char *params[1] = {lib};
	int rc;

	*out = NULL;
	if (!h)
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	/* The probe is the demo's, not a session of JOB: the console's
	 * terminate-holder (T) counts a job waiting for its seal as held up by
	 * whoever holds the admission row (087_terminate_holder.sql). */
	(void)job;
	snprintf(probe_app, sizeof probe_app, "cleanupctl:fence-probe");
	if ((rc = hold_connect(&h->holder, conninfo, "cleanupctl:writer:holder", err)) != CLEANUP_OK ||
	    (rc = hold_connect(&h->probe, conninfo, probe_app, err)) != CLEANUP_OK)
		goto out;
	if ((rc = hold_run(h->holder, "BEGIN", -1, "holder", err)) != CLEANUP_OK ||
	    (rc = hold_run(h->holder, lab_sql_query_files[CLEANUP_LAB_Q_HOLD_ADMISSION].text, library,
	                   "holder", err)) != CLEANUP_OK)
		goto out;
	snprintf(lib, sizeof lib, "%" PRId64, library);
	if (!PQsendQueryParams(h->probe, lab_sql_query_files[CLEANUP_LAB_Q_HOLD_PROBE].text, 1, NULL, params,
	                       NULL, NULL, 0)) {
		rc = cleanup_error_set(err, CLEANUP_ERROR, "probe: %s", PQerrorMessage(h->probe));
		goto out;
	}
	*out = h;
	h = NULL;
out:
	if (h) {
		PQfinish(h->holder);
		PQfinish(h->probe);
		free(h);
	}
	return rc;
}

int cleanup_admission_hold_pid(const cleanup_admission_hold *h)
{
	return PQbackendPID(h->holder);
}

bool cleanup_admission_hold_alive(cleanup_admission_hold *h)
{
	return PQconsumeInput(h->holder) && PQstatus(h->holder) == CONNECTION_OK;
}

int cleanup_admission_hold_commit(cleanup_admission_hold *h, cleanup_error *err)
{
	return hold_run(h->holder, "COMMIT", -1, "holder", err);
}

void cleanup_admission_hold_end(cleanup_admission_hold *h)
{
	PGresult *r;

	if (!h)
		return;
	PQfinish(h->holder);
	while ((r = PQgetResult(h->probe)) != NULL)
		PQclear(r);
	PQfinish(h->probe);
	free(h);
}

/* ---- the failpoint holder (kill-runner, server-crash) ------------------ */

struct cleanup_failpoint_hold {
	PGconn *c;
};

/* Runs lab statement Q on C with the one text parameter P; *OUT gets the
 * first column of the first row as an int (when OUT). */
static int hold_value(PGconn *c, enum lab_sql_query_id q, const char *p, int *out, cleanup_error *err)
{
	const char *params[1] = {p};
	PGresult *r = PQexecParams(c, lab_sql_query_files[q].text, p ? 1 : 0, NULL, p ? params : NULL, NULL, NULL, 0);
	int rc = CLEANUP_OK;

	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1)
		rc = cleanup_error_set(err, PQstatus(c) == CONNECTION_OK ? CLEANUP_ERROR : CLEANUP_ECONN,
		                       "failpoint holder: %s", PQerrorMessage(c));
	else if (out)
		*out = atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	return rc;
}

int cleanup_failpoint_hold_start(cleanup_failpoint_hold **out, const char *conninfo, const char *name,
                                 cleanup_error *err)
{
	cleanup_failpoint_hold *h = calloc(1, sizeof *h);
	int rc;

	*out = NULL;
	if (!h)
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	if ((rc = hold_connect(&h->c, conninfo, "cleanupctl:demo:failpoint", err)) != CLEANUP_OK ||
	    (rc = hold_value(h->c, CLEANUP_LAB_Q_HOLD_FAILPOINT, name, NULL, err)) != CLEANUP_OK) {
		PQfinish(h->c);
		free(h);
		return rc;
	}
	*out = h;
	return CLEANUP_OK;
}

int cleanup_failpoint_hold_waiter(cleanup_failpoint_hold *h, cleanup_error *err)
{
	int pid = 0;

	if (hold_value(h->c, CLEANUP_LAB_Q_HOLD_FAILPOINT_WAITER, NULL, &pid, err) != CLEANUP_OK)
		return -1;
	return pid;
}

int cleanup_failpoint_hold_backend_alive(cleanup_failpoint_hold *h, int pid, cleanup_error *err)
{
	char buf[16];
	int n = 0;

	snprintf(buf, sizeof buf, "%d", pid);
	if (hold_value(h->c, CLEANUP_LAB_Q_HOLD_BACKEND_ALIVE, buf, &n, err) != CLEANUP_OK)
		return -1;
	return n > 0;
}

void cleanup_failpoint_hold_end(cleanup_failpoint_hold *h)
{
	if (!h)
		return;
	PQfinish(h->c);
	free(h);
}

/* The engine side of cleanupctl worker: the list of runnable jobs that no
 * runner holds (cleanup/worker.h). Claiming and running stay with the
 * runner lease and the run loop (runner.c): a worker is their client. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/worker.h"
#include "engine_int.h"

#define WORKER_MAX_SERVERS 1000

/* Writes the PostgreSQL array literal of V[0..N) into a malloc'd string
 * ("{}" when N is 0); NULL when out of memory. */
static char *id_array(const int64_t *v, size_t n)
{
	size_t cap = 3 + n * 21, o = 0, i;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	s[o++] = '{';
	for (i = 0; i < n; i++)
		o += (size_t)snprintf(s + o, cap - o, "%s%" PRId64, i ? "," : "", v[i]);
	snprintf(s + o, cap - o, "}");
	return s;
}

int cleanup_worker_candidates(cleanup_worker_candidate **out, size_t *n, cleanup_engine *e, const int64_t *servers,
                              size_t nservers, int limit, cleanup_error *err)
{
	cleanup_worker_candidate *list = NULL;
	PGresult *res = NULL;
	char lbuf[16], *arr = NULL;
	const char *params[2];
	int rc, i, nt;

	*out = NULL;
	*n = 0;
	if (limit < 1 || limit > 10000)
		return cleanup_error_set(err, CLEANUP_EINVAL, "the candidate limit must be from 1 to 10000, not %d", limit);
	if (nservers > WORKER_MAX_SERVERS)
		return cleanup_error_set(err, CLEANUP_EINVAL, "at most %d servers, not %zu", WORKER_MAX_SERVERS, nservers);
	if (!(arr = id_array(servers, nservers)))
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory listing runnable jobs");
	snprintf(lbuf, sizeof lbuf, "%d", limit);
	params[0] = arr;
	params[1] = lbuf;
	rc = engine_query(&res, e, CLEANUP_Q_WORKER_CANDIDATES, 2, params, "listing runnable jobs", err);
	if (rc != CLEANUP_OK)
		goto out;
	nt = PQntuples(res);
	if (nt == 0)
		goto out;
	if (!(list = calloc((size_t)nt, sizeof *list))) {
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory listing runnable jobs");
		goto out;
	}
	for (i = 0; i < nt; i++) {
		list[i].job_id = col_int64(res, i, "id");
		list[i].server_id = col_int64(res, i, "server_id");
		col_copy(list[i].kind, sizeof list[i].kind, res, i, "kind");
		col_copy(list[i].phase, sizeof list[i].phase, res, i, "phase");
	}
	*out = list;
	*n = (size_t)nt;
out:
	PQclear(res);
	free(arr);
	return rc;
}

int cleanup_worker_servers_missing(int64_t *missing, cleanup_engine *e, const int64_t *servers, size_t nservers,
                                   cleanup_error *err)
{
	PGresult *res = NULL;
	const char *params[1];
	char *arr = NULL;
	int rc;

	*missing = 0;
	if (nservers < 1 || nservers > WORKER_MAX_SERVERS)
		return cleanup_error_set(err, CLEANUP_EINVAL, "from 1 to %d servers, not %zu", WORKER_MAX_SERVERS, nservers);
	if (!(arr = id_array(servers, nservers)))
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory checking servers");
	params[0] = arr;
	rc = engine_query(&res, e, CLEANUP_Q_WORKER_SERVERS, 1, params, "checking the servers given", err);
	if (rc == CLEANUP_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
		*missing = col_int64(res, 0, "missing");
	PQclear(res);
	free(arr);
	return rc;
}

int cleanup_worker_retry_ms(int failures, int base_ms, int max_ms)
{
	long long ms = base_ms > 0 ? base_ms : 1;
	int i;

	for (i = 1; i < failures && ms < max_ms; i++)
		ms *= 2;
	return ms > max_ms ? max_ms : (int)ms;
}

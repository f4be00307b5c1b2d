/* Lock contention now: the snapshot of blocked, blocking and cleanupctl
 * backends (sql/queries/locks_tree.sql), its JSON form, and the ordering of
 * the rows as a blocking tree for display. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/audit.h"
#include "engine_int.h"
#include "rowmap_int.h"
#include "locks_int.h"

int64_t cleanup_locks_job_id(const char *app)
{
	static const char prefix[] = "cleanupctl:job:";
	const char *p;
	int64_t id = 0;
	int digits = 0;

	if (!app || strncmp(app, prefix, sizeof prefix - 1) != 0)
		return -1;
	for (p = app + sizeof prefix - 1; *p >= '0' && *p <= '9'; p++) {
		if (++digits > 18)
			return -1;
		id = id * 10 + (*p - '0');
	}
	if (digits == 0 || (*p != '\0' && *p != ':') || id <= 0)
		return -1;
	return id;
}

int cleanup_lock_blocked_by(const cleanup_lock_row *row, int pid)
{
	int i;

	for (i = 0; i < row->nblocked_by; i++)
		if (row->blocked_by[i] == pid)
			return 1;
	return 0;
}

/* Parses a PostgreSQL int[] literal "{1,2,3}" into ROW->blocked_by. */
static void parse_pids(cleanup_lock_row *row, const char *s)
{
	row->nblocked_by = 0;
	if (*s == '{')
		s++;
	while (*s && *s != '}' && row->nblocked_by < CLEANUP_LOCK_MAX_BLOCKERS) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s)
			break;
		if (v > 0 && !cleanup_lock_blocked_by(row, (int)v))
			row->blocked_by[row->nblocked_by++] = (int)v;
		s = end;
		if (*s == ',')
			s++;
	}
}

static const engine_col lock_cols[] = {
	ROW_INT(cleanup_lock_row, pid, -1),
	ROW_TEXT(cleanup_lock_row, application_name),
	ROW_TEXT(cleanup_lock_row, state),
	ROW_TEXT(cleanup_lock_row, wait_event_type),
	ROW_TEXT(cleanup_lock_row, wait_event),
	ROW_TEXT(cleanup_lock_row, locktype),
	ROW_TEXT(cleanup_lock_row, mode),
	ROW_TEXT(cleanup_lock_row, relation),
	ROW_TEXT(cleanup_lock_row, query),
	ROW_DBL(cleanup_lock_row, xact_age_ms, -1),
	ROW_DBL(cleanup_lock_row, wait_ms, -1),
	/* Older definitions lack the runner columns: none then. */
	ROW_I64(cleanup_lock_row, runs_job),
};

static void lock_rest(void *elem, const PGresult *res, int i)
{
	cleanup_lock_row *r = elem;

	parse_pids(r, col_text(res, i, "blocked_by"));
	r->job_id = cleanup_locks_job_id(r->application_name);
	if (r->runs_job > 0 && PQfnumber(res, "runner_since") >= 0) {
		/* "YYYY-MM-DD HH:MM:SS" of the timestamptz text. */
		col_copy(r->runner_since, sizeof r->runner_since, res, i, "runner_since");
		r->runner_since[19 < sizeof r->runner_since ? 19 : 0] = '\0';
	}
}

int locks_rows_from_result(cleanup_lock_row **out, size_t *n, const PGresult *res)
{
	void *rows;
	int rc;

	*out = NULL;
	*n = 0;
	if (!res || PQresultStatus(res) != PGRES_TUPLES_OK || PQfnumber(res, "pid") < 0 ||
	    PQfnumber(res, "blocked_by") < 0)
		return CLEANUP_ERROR;
	if (PQntuples(res) == 0)
		return CLEANUP_OK;
	rc = engine_rows_map(&rows, n, sizeof **out, lock_cols, ROW_COUNT(lock_cols), lock_rest, res, -1, NULL);
	*out = rows;
	return rc;
}

int cleanup_locks_snapshot(cleanup_lock_row **out, size_t *n, cleanup_engine *e, cleanup_error *err)
{
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	rc = engine_query(&res, e, CLEANUP_Q_LOCKS_TREE, 0, NULL, "reading lock contention", err);
	if (rc != CLEANUP_OK)
		return rc;
	rc = locks_rows_from_result(out, n, res);
	PQclear(res);
	if (rc == CLEANUP_ENOMEM)
		return cleanup_error_set(err, rc, "out of memory reading lock contention");
	if (rc != CLEANUP_OK)
		return cleanup_error_set(err, rc, "the lock query returned unexpected columns");
	return CLEANUP_OK;
}

int cleanup_locks_json(char **out, cleanup_engine *e, cleanup_error *err)
{
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	rc = engine_query_one(&res, e, CLEANUP_Q_LOCKS_TREE_JSON, 0, NULL, "reading lock contention", "the lock query",
	                      err);
	if (rc != CLEANUP_OK)
		return rc;
	*out = engine_strdup(PQgetvalue(res, 0, 0), err);
	PQclear(res);
	return *out ? CLEANUP_OK : CLEANUP_ENOMEM;
}

static const engine_col outcome_cols[] = {
	ROW_FLAG(cleanup_holder_outcome, terminated),
	ROW_FLAG(cleanup_holder_outcome, refused),
	ROW_I64(cleanup_holder_outcome, job_id),
	ROW_I64(cleanup_holder_outcome, audit_id),
	ROW_TEXT(cleanup_holder_outcome, outcome),
};

int cleanup_locks_terminate_holder(cleanup_holder_outcome *out, cleanup_engine *e, int pid, const char *os_user,
                                   const char *confirmation, cleanup_error *err)
{
	char pbuf[16];
	const char *params[3];
	PGresult *res = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	out->job_id = -1;
	out->audit_id = -1;
	if (pid <= 0)
		return cleanup_error_set(err, CLEANUP_EINVAL, "backend pid %d is not valid", pid);
	snprintf(pbuf, sizeof pbuf, "%d", pid);
	params[0] = pbuf;
	params[1] = os_user ? os_user : cleanup_audit_os_user();
	params[2] = confirmation;
	rc = engine_query_one(&res, e, CLEANUP_Q_HOLDER_TERMINATE, 3, params, "terminating a holder",
	                      "terminate-holder", err);
	if (rc != CLEANUP_OK)
		return rc;
	engine_row_map(out, outcome_cols, ROW_COUNT(outcome_cols), res, 0);
	PQclear(res);
	return CLEANUP_OK;
}

/* Index of the first listed row (other than SELF) that blocks ROW, or N. */
static size_t first_blocker(const cleanup_lock_row *rows, size_t n, size_t self)
{
	int b;
	size_t k;

	for (b = 0; b < rows[self].nblocked_by; b++)
		for (k = 0; k < n; k++)
			if (k != self && rows[k].pid == rows[self].blocked_by[b])
				return k;
	return n;
}

/* The root of row I's tree (I itself for a root), or N when I sits on a
 * cycle. */
static size_t tree_root(const size_t *parent, size_t n, size_t i)
{
	size_t steps;

	for (steps = 0; parent[i] < n; steps++) {
		if (steps >= n)
			return n;
		i = parent[i];
	}
	return i;
}

/* Appends row I and, depth first, the rows whose parent it is. */
static void visit(size_t *order, int *depth, size_t *pos, unsigned char *done, const size_t *parent,
                  const cleanup_lock_row *rows, size_t n, size_t i, int d)
{
	size_t k;

	done[i] = 1;
	order[*pos] = i;
	depth[*pos] = d;
	(*pos)++;
	for (k = 0; k < n; k++)
		if (!done[k] && parent[k] == i)
			visit(order, depth, pos, done, parent, rows, n, k, d + 1);
}

size_t cleanup_locks_tree(size_t *order, int *depth, const cleanup_lock_row *rows, size_t n)
{
	size_t *parent = NULL, i, pos = 0, blocked = 0;
	unsigned char *done = NULL, *blocks = NULL;
	double *longest = NULL;

	if (n == 0)
		return 0;
	parent = malloc(n * sizeof *parent);
	done = calloc(n, 1);
	blocks = calloc(n, 1);
	longest = malloc(n * sizeof *longest);
	if (!parent || !done || !blocks || !longest) {
		/* No memory for the tree: list the rows flat, in their order. */
		for (i = 0; i < n; i++) {
			order[i] = i;
			depth[i] = 0;
		}
		free(parent);
		free(done);
		free(blocks);
		free(longest);
		return 0;
	}
	for (i = 0; i < n; i++) {
		parent[i] = first_blocker(rows, n, i);
		longest[i] = -1;
		if (parent[i] < n)
			blocked++;
	}
	for (i = 0; i < n; i++) {
		size_t r = tree_root(parent, n, i);

		if (r < n && r != i) {
			blocks[r] = 1;
			if (rows[i].wait_ms > longest[r])
				longest[r] = rows[i].wait_ms;
		}
	}
	/* The trees first, the one whose waiter has waited longest first (a
	 * holder that stalls a job for a minute before a writer that blocks
	 * another for a millisecond), then in list order: what an operator
	 * ends sits on the first row, whatever its pid. */
	for (;;) {
		size_t best = n;

		for (i = 0; i < n; i++)
			if (parent[i] == n && blocks[i] && !done[i] &&
			    (best == n || longest[i] > longest[best]))
				best = i;
		if (best == n)
			break;
		visit(order, depth, &pos, done, parent, rows, n, best, 0);
	}
	/* Then what sits on a cycle (a deadlock about to be detected), cut at
	 * its first row; then the backends that neither wait nor block. */
	for (i = 0; i < n; i++)
		if (parent[i] < n && !done[i])
			visit(order, depth, &pos, done, parent, rows, n, i, 0);
	for (i = 0; i < n; i++)
		if (!done[i])
			visit(order, depth, &pos, done, parent, rows, n, i, 0);
	free(parent);
	free(done);
	free(blocks);
	free(longest);
	return blocked;
}

/* Jobs up to sealing: thin wrappers over the engine functions in
 * sql/functions/030_jobs.sql, plus the client-side external ID check that
 * keeps bad input off the wire. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/job.h"
#include "engine_int.h"
#include "rowmap_int.h"
#include "job_int.h"

void cleanup_job_reset(cleanup_job *job)
{
	if (!job)
		return;
	free(job->json);
	memset(job, 0, sizeof *job);
}

int cleanup_job_phase_is_final(const char *phase)
{
	return phase && (strcmp(phase, "completed") == 0 || strcmp(phase, "cancelled") == 0);
}

/* The columns of a job row (cleanup.jobs plus what the readers add; a
 * reader that lacks one leaves its default). */
static const engine_col job_cols[] = {
	ROW_I64(cleanup_job, id),
	ROW_TEXT(cleanup_job, kind),
	ROW_TEXT(cleanup_job, mode),
	ROW_I64(cleanup_job, server_id),
	ROW_I64(cleanup_job, library_id),
	ROW_TEXT(cleanup_job, target_name),
	ROW_TEXT(cleanup_job, phase),
	ROW_I32(cleanup_job, step_no),
	ROW_I32(cleanup_job, pass_no),
	ROW_I64(cleanup_job, examined),
	ROW_I64(cleanup_job, visited),
	ROW_I64(cleanup_job, deleted),
	ROW_I64(cleanup_job, moved),
	ROW_I64(cleanup_job, absent),
	ROW_I64(cleanup_job, retained),
	ROW_I64(cleanup_job, kept),
	ROW_I32(cleanup_job, libraries_deleted),
	ROW_I32(cleanup_job, servers_deleted),
	ROW_I64(cleanup_job, claimed),
	ROW_I64(cleanup_job, released),
	ROW_I64(cleanup_job, retries_deleted),
	ROW_I64(cleanup_job, previews_deleted),
	ROW_I64(cleanup_job, collections_deleted),
	ROW_I64(cleanup_job, sync_status_deleted),
	ROW_I64(cleanup_job, history_detached),
	ROW_I64(cleanup_job, manifest_count),
	ROW_I64(cleanup_job, expected_count),
	ROW_I64(cleanup_job, high_water_id),
	ROW_I64(cleanup_job, cursor_library_id),
	ROW_I64(cleanup_job, cursor_id),
	ROW_TEXT(cleanup_job, key_cursor),
	ROW_I64(cleanup_job, total_estimate),
	ROW_I64(cleanup_job, busy_retries),
	ROW_I64_OR(cleanup_job, scope_count, -1),
	ROW_I64_OR(cleanup_job, moved_early, 0),
	ROW_I64_OR(cleanup_job, absent_early, 0),
	ROW_TEXT(cleanup_job, blocked_since),
	ROW_TEXT(cleanup_job, blocked_text),
	ROW_TEXT(cleanup_job, last_error),
	ROW_TEXT(cleanup_job, created_at),
	ROW_TEXT(cleanup_job, sealed_at),
	ROW_TEXT(cleanup_job, updated_at),
	ROW_TEXT(cleanup_job, finished_at),
	ROW_TEXT(cleanup_job, purged_at),
	ROW_INT(cleanup_job, live_runner_pid, 0),
	ROW_TEXT(cleanup_job, live_runner_host),
	ROW_INT(cleanup_job, live_runner_os_pid, 0),
	ROW_TEXT(cleanup_job, live_runner_app),
	ROW_BOOL(cleanup_job, live_no_runner),
	ROW_DBL(cleanup_job, live_closed_s, -1),
	ROW_DBL(cleanup_job, live_last_step_age_s, -1),
	ROW_DBL(cleanup_job, live_pace, -1),
	ROW_DBL(cleanup_job, live_eta_s, -1),
};

/* What the table cannot say: whether the job walks by key. */
static void job_key_order(void *elem, const PGresult *res, int row)
{
	int c = PQfnumber(res, "key_cursor");

	((cleanup_job *)elem)->key_order = c >= 0 && !PQgetisnull(res, row, c);
}

void job_fields_from_row(cleanup_job *job, const PGresult *res, int row)
{
	memset(job, 0, sizeof *job);
	engine_row_map(job, job_cols, ROW_COUNT(job_cols), res, row);
	job_key_order(job, res, row);
}

/* Fills JOB from row ROW of RES (columns of cleanup.jobs plus json). */
static int job_from_row(cleanup_job *job, const PGresult *res, int row, cleanup_error *err)
{
	job_fields_from_row(job, res, row);
	job->json = engine_strdup(col_text(res, row, "json"), err);
	return job->json ? CLEANUP_OK : CLEANUP_ENOMEM;
}

/* Runs a query returning one job row into *OUT (zeroed without one). */
static int one_job(cleanup_job *out, cleanup_engine *e, enum sql_query_id q, int n,
                   const char *const *params, const char *context, cleanup_error *err)
{
	PGresult *res = NULL;
	int rc = engine_query(&res, e, q, n, params, context, err);

	memset(out, 0, sizeof *out);
	if (rc == CLEANUP_OK)
		rc = PQntuples(res) == 1 ? job_from_row(out, res, 0, err)
		                         : cleanup_error_set(err, CLEANUP_ENOTFOUND, "%s: no such job", context);
	PQclear(res);
	return rc;
}

/* Runs Q for job JOB_ID (ARG, when not NULL, its second parameter) into
 * *OUT, in the context "WHAT job N". */
static int job_call(cleanup_job *out, cleanup_engine *e, enum sql_query_id q, int64_t job_id, const char *arg,
                    const char *what, cleanup_error *err)
{
	char jbuf[24], ctx[96];
	const char *params[2] = {jbuf, arg};

	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	snprintf(ctx, sizeof ctx, "%s job %s", what, jbuf);
	return one_job(out, e, q, arg ? 2 : 1, params, ctx, err);
}

int cleanup_job_create(cleanup_job *out, cleanup_engine *e, const char *kind, int64_t target,
                       const char *mode, cleanup_error *err)
{
	char tbuf[24], ctx[96];
	const char *params[3];

	snprintf(tbuf, sizeof tbuf, "%" PRId64, target);
	snprintf(ctx, sizeof ctx, "creating a %s job for %s", kind, tbuf);
	params[0] = kind;
	params[1] = tbuf;
	params[2] = mode;
	return one_job(out, e, CLEANUP_Q_JOB_CREATE, 3, params, ctx, err);
}

int cleanup_job_get(cleanup_job *out, cleanup_engine *e, int64_t job_id, cleanup_error *err)
{
	int rc = job_call(out, e, CLEANUP_Q_JOB_GET, job_id, NULL, "reading", err);

	if (rc == CLEANUP_ENOTFOUND)
		cleanup_error_set(err, rc, "job %" PRId64 " does not exist", job_id);
	return rc;
}

/* Length of the valid UTF-8 sequence at S (at most N bytes), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	} else if ((s[0] & 0xE0) == 0xC0) {
		len = 2;
		c = s[0] & 0x1F;
	} else if ((s[0] & 0xF0) == 0xE0) {
		len = 3;
		c = s[0] & 0x0F;
	} else if ((s[0] & 0xF8) == 0xF0) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
	if ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
		return 0;
	*cp = c;
	return len;
}

char *cleanup_quote_id(char *buf, size_t buflen, const char *id, size_t len)
{
	const unsigned char *s = (const unsigned char *)(id ? id : "");
	size_t i = 0, o = 0, k;
	char piece[16];
	uint32_t cp;

	if (buflen == 0)
		return buf;
	if (buflen < 8) {
		buf[0] = '\0';
		return buf;
	}
	buf[o++] = '"';
	while (i < len) {
		k = utf8_seq(s + i, len - i, &cp);
		if (k == 0) {
			/* Not UTF-8: show the byte, go on with the next one. */
			snprintf(piece, sizeof piece, "\\x%02x", s[i]);
			k = 1;
		} else if (cp == '\t')
			snprintf(piece, sizeof piece, "\\t");
		else if (cp == '\n')
			snprintf(piece, sizeof piece, "\\n");
		else if (cp == '\r')
			snprintf(piece, sizeof piece, "\\r");
		else if (cp == '\\' || cp == '"')
			snprintf(piece, sizeof piece, "\\%c", (char)cp);
		else if (cp < 0x20 || cp == 0x7F)
			snprintf(piece, sizeof piece, "\\x%02x", (unsigned)cp);
		else if (cp >= 0x80 && cp <= 0x9F)
			snprintf(piece, sizeof piece, "\\u%04x", (unsigned)cp);
		else {
			memcpy(piece, s + i, k);
			piece[k] = '\0';
		}
		/* Room for this piece, the closing quote, "..." and the NUL. */
		if (o + strlen(piece) + 5 > buflen) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(buf + o, piece, strlen(piece));
		o += strlen(piece);
		i += k;
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

/* True for the characters the rule calls invisible: spaces other than
 * U+0020, zero-width, format and bidirectional control characters,
 * fillers. The same list as cleanup.external_id_problem
 * (sql/schema/013_boundary.sql). */
bool cleanup_external_id_invisible(uint32_t cp)
{
	static const uint32_t ranges[][2] = {
		{0x00A0, 0x00A0}, {0x00AD, 0x00AD}, {0x034F, 0x034F}, {0x061C, 0x061C}, {0x115F, 0x1160},
		{0x1680, 0x1680}, {0x17B4, 0x17B5}, {0x180B, 0x180F}, {0x2000, 0x200F}, {0x2028, 0x202F},
		{0x205F, 0x206F}, {0x3000, 0x3000}, {0x3164, 0x3164}, {0xFEFF, 0xFEFF}, {0xFFA0, 0xFFA0},
		{0xFFF9, 0xFFFB}, {0xE0000, 0xE007F},
	};
	size_t i;

	for (i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
		if (cp >= ranges[i][0] && cp <= ranges[i][1])
			return true;
	return false;
}

int cleanup_external_id_check(const char *id, size_t len, char *why, size_t whylen)
{
	const unsigned char *s = (const unsigned char *)id;
	size_t i = 0, k;
	uint32_t cp;
	char tmp[128];

	if (!why) {
		why = tmp;
		whylen = sizeof tmp;
	}
	if (!id || len == 0) {
		snprintf(why, whylen, "must not be empty");
		return CLEANUP_EINVAL;
	}
	if (len > CLEANUP_EXTERNAL_ID_MAX) {
		snprintf(why, whylen, "is %zu bytes long; the limit is %d", len, CLEANUP_EXTERNAL_ID_MAX);
		return CLEANUP_EINVAL;
	}
	while (i < len) {
		if (s[i] == 0) {
			snprintf(why, whylen, "contains a NUL byte at offset %zu", i);
			return CLEANUP_EINVAL;
		}
		k = utf8_seq(s + i, len - i, &cp);
		if (k == 0) {
			snprintf(why, whylen, "is not valid UTF-8 (byte 0x%02X at offset %zu)", s[i], i);
			return CLEANUP_EINVAL;
		}
		if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)) {
			snprintf(why, whylen, "contains a control character (U+%04X at offset %zu)", (unsigned)cp, i);
			return CLEANUP_EINVAL;
		}
		i += k;
	}
	/* The rules in the order the server's definition applies them. */
	if (s[0] == ' ' || s[len - 1] == ' ') {
		snprintf(why, whylen, "has a space at its start or end");
		return CLEANUP_EINVAL;
	}
	for (i = 0; i < len; i += k) {
		k = utf8_seq(s + i, len - i, &cp);
		if (cleanup_external_id_invisible(cp)) {
			snprintf(why, whylen,
			         "contains an invisible character (U+%04X at offset %zu: a space other than U+0020, a "
			         "zero-width, format or bidirectional control character, or a filler)",
			         (unsigned)cp, i);
			return CLEANUP_EINVAL;
		}
	}
	return CLEANUP_OK;
}

/* Validates IDS[0..N) client-side; EINVAL naming the first bad one. */
static int check_ids(const char *const *ids, size_t n, cleanup_error *err)
{
	char why[128], shown[96];
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		size_t len = ids[i] ? strlen(ids[i]) : 0;

		if (cleanup_external_id_check(ids[i], len, why, sizeof why) != CLEANUP_OK) {
			rc = cleanup_error_set(err, CLEANUP_EINVAL, "external ID #%zu (%s) %s; nothing was appended", i + 1,
			                       cleanup_quote_id(shown, sizeof shown, ids[i], len), why);
			cleanup_error_hint(err, "IDs are non-empty, at most %d bytes of UTF-8, without control characters",
			                   CLEANUP_EXTERNAL_ID_MAX);
			return rc;
		}
	}
	return CLEANUP_OK;
}

int cleanup_job_append(cleanup_append_result *out, cleanup_engine *e, int64_t job_id,
                       const char *const *ids, size_t n, cleanup_error *err)
{
	char jbuf[24], ctx[64];
	const char *params[2];
	PGresult *res = NULL;
	char *array = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	if (n > CLEANUP_APPEND_MAX)
		return cleanup_error_set(err, CLEANUP_EINVAL,
		                         "too many external IDs in one call: %zu; the limit is %d; nothing was appended",
		                         n, CLEANUP_APPEND_MAX);
	if ((rc = check_ids(ids, n, err)) != CLEANUP_OK)
		return rc;
	array = format_text_array(ids, n);
	if (!array)
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	snprintf(ctx, sizeof ctx, "appending to job %s", jbuf);
	params[0] = jbuf;
	params[1] = array;
	rc = engine_query(&res, e, CLEANUP_Q_JOB_APPEND, 2, params, ctx, err);
	if (rc == CLEANUP_OK) {
		rc = job_from_row(&out->job, res, 0, err);
		out->added = (int)col_int64(res, 0, "added");
		out->duplicates = (int)col_int64(res, 0, "duplicates");
	}
	PQclear(res);
	free(array);
	return rc;
}

/* Reads the answer to one pipelined call: its result (*OUT, or NULL) and
 * the sync that ends it. ECONN when the connection went away. */
static int pipeline_read_call(PGresult **out, PGconn *conn)
{
	PGresult *r;

	*out = NULL;
	while ((r = PQgetResult(conn)) != NULL) {
		if (!*out)
			*out = r;
		else
			PQclear(r);
	}
	if (PQstatus(conn) == CONNECTION_BAD)
		return CLEANUP_ECONN;
	r = PQgetResult(conn);
	if (!r || PQresultStatus(r) != PGRES_PIPELINE_SYNC) {
		PQclear(r);
		return PQstatus(conn) == CONNECTION_BAD ? CLEANUP_ECONN : CLEANUP_ERROR;
	}
	PQclear(r);
	return CLEANUP_OK;
}

/* Calls in flight: CLEANUP_APPEND_WINDOW, or $CLEANUP_APPEND_WINDOW (1 to
 * 64; 1 means one round trip per call, for comparisons). */
static size_t append_window(void)
{
	const char *v = getenv("CLEANUP_APPEND_WINDOW");
	long w = v && *v ? strtol(v, NULL, 10) : CLEANUP_APPEND_WINDOW;

	return w < 1 ? 1 : w > 64 ? 64 : (size_t)w;
}

/* True when every call of a run waits for its own WAL flush
 * ($CLEANUP_APPEND_FLUSH=call), as before the run's flush barrier. */
static bool append_flush_each_call(void)
{
	const char *v = getenv("CLEANUP_APPEND_FLUSH");

	return v && strcmp(v, "call") == 0;
}

/* The flush barrier after a failed call of a run: one empty synchronous
 * call (job_append_lean.sql, prepared as NAME) for job JBUF. Every call
 * writes WAL (the job row's lock and update), so its synchronous commit
 * waits for the WAL up to its commit record, which follows every earlier
 * commit of the session. OK when those are durable. */
static int append_flush(cleanup_engine *e, const char *name, const char *jbuf, const char *ctx, cleanup_error *err)
{
	const char *params[2] = {jbuf, "{}"};
	PGresult *res = NULL;
	int st;

	if (!PQsendQueryPrepared(e->conn, name, 2, params, NULL, NULL, 0) || !PQpipelineSync(e->conn))
		return engine_error_from_result(err, e, NULL, ctx);
	st = pipeline_read_call(&res, e->conn);
	if (st == CLEANUP_OK && res && PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		st = CLEANUP_OK;
	else
		st = engine_error_from_result(err, e, res, ctx);
	PQclear(res);
	return st;
}

/* Behind a pooler: one call after the other, each its own transaction
 * with its settings and a synchronous commit (engine_query), no pipeline:
 * a pooler may hand each pipelined transaction to another server
 * connection. Same totals as the pipelined run. */
static int append_many_pooled(cleanup_append_totals *totals, cleanup_engine *e, const char *jbuf,
                              const char *const *ids, size_t n, const char *ctx, cleanup_error *err)
{
	size_t ncalls = n == 0 ? 1 : (n + CLEANUP_APPEND_MAX - 1) / CLEANUP_APPEND_MAX, k;
	int rc = CLEANUP_OK;

	for (k = 0; k < ncalls; k++) {
		size_t from = k * CLEANUP_APPEND_MAX;
		size_t cnt = n - from < CLEANUP_APPEND_MAX ? n - from : CLEANUP_APPEND_MAX;
		char *array = format_text_array(ids + from, n == 0 ? 0 : cnt);
		const char *params[2] = {jbuf, array};
		PGresult *res = NULL;

		if (!array)
			return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		rc = engine_query(&res, e, CLEANUP_Q_JOB_APPEND_LEAN, 2, params, ctx, err);
		free(array);
		if (rc == CLEANUP_OK && PQntuples(res) == 1) {
			totals->calls++;
			totals->added += col_int64(res, 0, "added");
			totals->duplicates += col_int64(res, 0, "duplicates");
			totals->manifest_count = col_int64(res, 0, "manifest_count");
		} else if (rc == CLEANUP_OK) {
			rc = cleanup_error_set(err, CLEANUP_ERROR, "%s: no answer", ctx);
		}
		PQclear(res);
		if (rc != CLEANUP_OK)
			break;
	}
	return rc;
}

int cleanup_job_append_many(cleanup_append_totals *totals, cleanup_engine *e, int64_t job_id,
                            const char *const *ids, size_t n, cleanup_error *err)
{
	char jbuf[24], ctx[64], sync_name[32], async_name[32];
	size_t ncalls = n == 0 ? 1 : (n + CLEANUP_APPEND_MAX - 1) / CLEANUP_APPEND_MAX;
	size_t sent = 0, done = 0, window = append_window();
	bool each = append_flush_each_call(), broken = false, last_ok = false;
	cleanup_append_totals run = {0, 0, 0, -1};
	int rc = CLEANUP_OK, first = CLEANUP_OK;
	PGconn *conn;

	if ((rc = check_ids(ids, n, err)) != CLEANUP_OK)
		return rc;
	if (!e || !e->conn)
		return cleanup_error_set(err, CLEANUP_ECONN, "not connected");
	conn = e->conn;
	snprintf(jbuf, sizeof jbuf, "%" PRId64, job_id);
	snprintf(ctx, sizeof ctx, "appending to job %s", jbuf);
	if (e->pooled)
		return append_many_pooled(totals, e, jbuf, ids, n, ctx, err);
	/* The lean statements: counts, no JSON document per call. Every call
	 * but the last commits asynchronously; the last one's synchronous
	 * commit is the run's flush barrier (or, with CLEANUP_APPEND_FLUSH=call,
	 * every call is synchronous). */
	if ((rc = engine_prepare(e, CLEANUP_Q_JOB_APPEND_LEAN, 2, ctx, err)) != CLEANUP_OK)
		return rc;
	if (!each && (rc = engine_prepare(e, CLEANUP_Q_JOB_APPEND_ASYNC, 2, ctx, err)) != CLEANUP_OK)
		return rc;
	engine_statement_name(sync_name, sizeof sync_name, CLEANUP_Q_JOB_APPEND_LEAN);
	engine_statement_name(async_name, sizeof async_name, CLEANUP_Q_JOB_APPEND_ASYNC);
	if (!PQenterPipelineMode(conn))
		return engine_error_from_result(err, e, NULL, ctx);
	while (done < sent || (first == CLEANUP_OK && sent < ncalls)) {
		/* Keep up to a window of calls in flight; each ends with a sync,
		 * so each is its own transaction. The window bounds what the
		 * server has to buffer for us, so neither side blocks on a full
		 * socket. */
		while (first == CLEANUP_OK && sent < ncalls && sent - done < window) {
			size_t from = sent * CLEANUP_APPEND_MAX;
			size_t cnt = n - from < CLEANUP_APPEND_MAX ? n - from : CLEANUP_APPEND_MAX;
			const char *params[2];
			char *array = format_text_array(ids + from, n == 0 ? 0 : cnt);
			int ok;

			if (!array) {
				first = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
				break;
			}
			params[0] = jbuf;
			params[1] = array;
			ok = PQsendQueryPrepared(conn, each || sent + 1 == ncalls ? sync_name : async_name, 2, params, NULL,
			                         NULL, 0) &&
			     PQpipelineSync(conn);
			free(array);
			if (!ok) {
				first = engine_error_from_result(err, e, NULL, ctx);
				break;
			}
			sent++;
		}
		if (done == sent)
			break;
		{
			PGresult *res = NULL;
			int st = pipeline_read_call(&res, conn);

			if (st == CLEANUP_OK && res && PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1) {
				run.calls++;
				run.added += col_int64(res, 0, "added");
				run.duplicates += col_int64(res, 0, "duplicates");
				run.manifest_count = col_int64(res, 0, "manifest_count");
				if (done + 1 == ncalls)
					last_ok = true;
			} else if (first == CLEANUP_OK) {
				first = engine_error_from_result(err, e, res, ctx);
			}
			PQclear(res);
			done++;
			if (st == CLEANUP_ECONN) {
				if (first == CLEANUP_OK)
					first = engine_error_from_result(err, e, NULL, ctx);
				broken = true;
				break;
			}
		}
	}
	/* Nothing of the run counts before it is durable. The last call's
	 * synchronous commit made every earlier one so; when it did not commit
	 * (a call failed), an empty synchronous call does, and when that fails
	 * too, the run's calls are not counted: they committed, but a server
	 * crash could still lose them (a rerun is idempotent). */
	if (!broken && !each && !last_ok && run.calls > 0) {
		char fctx[80];
		cleanup_error scratch;

		/* The run's first failure stays the one reported. */
		cleanup_error_clear(&scratch);
		snprintf(fctx, sizeof fctx, "flushing the appends to job %s", jbuf);
		if (append_flush(e, sync_name, jbuf, fctx, first == CLEANUP_OK ? err : &scratch) != CLEANUP_OK) {
			run.calls = run.added = run.duplicates = 0;
			run.manifest_count = -1;
		}
	}
	if (!broken) {
		totals->calls += run.calls;
		totals->added += run.added;
		totals->duplicates += run.duplicates;
		if (run.manifest_count >= 0)
			totals->manifest_count = run.manifest_count;
		if (!PQexitPipelineMode(conn) && first == CLEANUP_OK)
			first = engine_error_from_result(err, e, NULL, ctx);
	}
	return first;
}

int cleanup_job_seal(cleanup_job *out, cleanup_engine *e, int64_t job_id, int64_t expected,
                     cleanup_error *err)
{
	char xbuf[24];

	snprintf(xbuf, sizeof xbuf, "%" PRId64, expected);
	return job_call(out, e, CLEANUP_Q_JOB_SEAL, job_id, xbuf, "sealing", err);
}

int cleanup_job_transition(cleanup_job *out, cleanup_engine *e, int64_t job_id, const char *action,
                           cleanup_error *err)
{
	char what[48];

	snprintf(what, sizeof what, "%s of", action);
	return job_call(out, e, CLEANUP_Q_JOB_TRANSITION, job_id, action, what, err);
}

int cleanup_jobs_list(cleanup_job **out, size_t *n, cleanup_engine *e, int limit, cleanup_error *err)
{
	char lbuf[16];
	const char *params[1] = {lbuf};
	PGresult *res = NULL;
	void *rows = NULL;
	size_t i;
	int rc;

	*out = NULL;
	*n = 0;
	snprintf(lbuf, sizeof lbuf, "%d", limit);
	rc = engine_query(&res, e, CLEANUP_Q_JOBS_LIST, 1, params, "listing jobs", err);
	if (rc == CLEANUP_OK)
		rc = engine_rows_map(&rows, n, sizeof **out, job_cols, ROW_COUNT(job_cols), job_key_order, res, -1, err);
	*out = rows;
	for (i = 0; rc == CLEANUP_OK && i < *n; i++)
		if (!((*out)[i].json = engine_strdup(col_text(res, (int)i, "json"), err)))
			rc = CLEANUP_ENOMEM;
	if (rc != CLEANUP_OK) {
		cleanup_jobs_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	PQclear(res);
	return rc;
}

void cleanup_jobs_free(cleanup_job *jobs, size_t n)
{
	size_t i;

	for (i = 0; jobs && i < n; i++)
		cleanup_job_reset(&jobs[i]);
	free(jobs);
}

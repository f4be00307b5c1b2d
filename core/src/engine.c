/* The engine handle: one libpq connection, named queries prepared lazily,
 * and the translation of libpq failures into cleanup_error records. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_int.h"

/* --- Secrets in a conninfo ------------------------------------------------
 * A conninfo may carry a password (password=..., sslpassword=..., or a
 * URI's user:password@). Every message that echoes a conninfo shows it
 * through cleanup_conninfo_redact(), and libpq's own messages about it
 * through cleanup_conninfo_scrub(). The scanners below find the secrets by
 * libpq's grammar (fe-connect.c: conninfo_parse, conninfo_uri_parse_options)
 * so that strings libpq rejects are covered too. */

#define MAX_SECRETS 8

/* Where a secret's value lies in the conninfo text. */
typedef struct secret_span {
	size_t off, len;
} secret_span;

/* Stores span OFF, LEN of a string of TOTAL bytes as SP[*N]. The last slot
 * runs to the end of the string, so that secrets past MAX_SECRETS are
 * masked too; returns false when the scan must stop there. */
static bool add_span(secret_span *sp, size_t *n, size_t off, size_t len, size_t total)
{
	sp[*n].off = off;
	sp[*n].len = *n == MAX_SECRETS - 1 ? total - off : len;
	return ++*n < MAX_SECRETS;
}

static bool is_secret_key(const char *key, size_t n)
{
	return (n == 8 && strncmp(key, "password", 8) == 0) || (n == 11 && strncmp(key, "sslpassword", 11) == 0);
}

static bool is_uri(const char *s)
{
	return strncmp(s, "postgresql://", 13) == 0 || strncmp(s, "postgres://", 11) == 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes S (N bytes) into OUT (N + 1 bytes): what libpq makes of
 * a URI component. A bad escape is kept as it is. */
static void percent_decode(char *out, const char *s, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexval((unsigned char)s[i + 1]) >= 0 &&
		    hexval((unsigned char)s[i + 2]) >= 0) {
			out[o++] = (char)(hexval((unsigned char)s[i + 1]) * 16 + hexval((unsigned char)s[i + 2]));
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
}

/* The secrets of a URI: the password of user:password@ and the values of
 * password= and sslpassword= query parameters (keys percent-decoded, as
 * libpq does). Returns how many spans were stored in SP. */
static size_t uri_secrets(secret_span *sp, const char *s)
{
	size_t n = 0, i, at, pre = strncmp(s, "postgresql://", 13) == 0 ? 13 : 11;
	const char *q;

	/* libpq: the credentials end at the first '@' before any '/'. */
	for (at = pre; s[at] && s[at] != '@' && s[at] != '/'; at++)
		;
	if (s[at] == '@') {
		for (i = pre; i < at && s[i] != ':'; i++)
			;
		if (i < at)
			add_span(sp, &n, i + 1, at - i - 1, strlen(s));
	}
	q = strchr(s + (s[at] == '@' ? at + 1 : pre), '?');
	while (q && n < MAX_SECRETS) {
		const char *k = q + 1, *eq, *end = k + strcspn(k, "&");
		char key[32];

		eq = memchr(k, '=', (size_t)(end - k));
		if (eq && (size_t)(eq - k) < sizeof key) {
			percent_decode(key, k, (size_t)(eq - k));
			if (is_secret_key(key, strlen(key)) &&
			    !add_span(sp, &n, (size_t)(eq + 1 - s), (size_t)(end - eq - 1), strlen(s)))
				break;
		}
		q = *end ? end : NULL;
	}
	return n;
}

/* The secrets of a key=value conninfo, by libpq's rules: whitespace around
 * '=', values either single-quoted or up to whitespace, backslash escapes
 * the next character. When the string stops following the grammar (a key
 * without '='), everything after that key is treated as secret: libpq
 * rejects the string, and what follows could be a password. */
static size_t kv_secrets(secret_span *sp, const char *s)
{
	size_t n = 0, i = 0, len = strlen(s);

	while (n < MAX_SECRETS) {
		size_t k, kend, v;

		while (i < len && isspace((unsigned char)s[i]))
			i++;
		if (i >= len)
			break;
		k = i;
		while (i < len && s[i] != '=' && !isspace((unsigned char)s[i]))
			i++;
		kend = i;
		while (i < len && isspace((unsigned char)s[i]))
			i++;
		if (i >= len || s[i] != '=') {
			/* libpq's message quotes the key only; what follows it
			 * could be a password, so it is masked. */
			if (i < len)
				add_span(sp, &n, i, len - i, len);
			break;
		}
		i++;
		while (i < len && isspace((unsigned char)s[i]))
			i++;
		v = i;
		if (i < len && s[i] == '\'') {
			for (i++; i < len && s[i] != '\''; i++)
				if (s[i] == '\\' && i + 1 < len)
					i++;
			if (i < len)
				i++;
		} else {
			for (; i < len && !isspace((unsigned char)s[i]); i++)
				if (s[i] == '\\' && i + 1 < len)
					i++;
		}
		if (is_secret_key(s + k, kend - k) && !add_span(sp, &n, v, i - v, len))
			break;
	}
	return n;
}

/* The secret spans of CONNINFO (none for a bare database name). */
static size_t conninfo_secrets(secret_span *sp, const char *conninfo)
{
	if (!conninfo || !*conninfo)
		return 0;
	if (is_uri(conninfo))
		return uri_secrets(sp, conninfo);
	return strchr(conninfo, '=') ? kv_secrets(sp, conninfo) : 0;
}

const char *cleanup_conninfo_redact(char *buf, size_t len, const char *conninfo)
{
	secret_span sp[MAX_SECRETS];
	size_t n, i, pos = 0, o = 0, total;
	char *tmp;

	if (!buf || len == 0)
		return buf;
	conninfo = conninfo ? conninfo : "";
	n = conninfo_secrets(sp, conninfo);
	total = strlen(conninfo) + 3 * n + 1;
	if (!(tmp = malloc(total))) {
		/* No memory to show it safely: show nothing of it. */
		cleanup_text_copy(buf, len, n ? "(conninfo with a password)" : conninfo);
		return buf;
	}
	for (i = 0; i < n; i++) {
		memcpy(tmp + o, conninfo + pos, sp[i].off - pos);
		o += sp[i].off - pos;
		memcpy(tmp + o, "***", 3);
		o += 3;
		pos = sp[i].off + sp[i].len;
	}
	strcpy(tmp + o, conninfo + pos);
	cleanup_text_copy(buf, len, tmp);
	free(tmp);
	return buf;
}

/* True when SECRET (N > 0 bytes) occurs in MSG (ML bytes). */
static bool contains(const char *msg, size_t ml, const char *secret, size_t n)
{
	size_t i;

	for (i = 0; i + n <= ml; i++)
		if (memcmp(msg + i, secret, n) == 0)
			return true;
	return false;
}

/* Replaces every occurrence of SECRET (N bytes) in MSG with "***". */
static void scrub_one(char *msg, size_t len, const char *secret, size_t n)
{
	size_t ml = strlen(msg), o = 0, i = 0;
	char *tmp;

	if (n == 0 || !contains(msg, ml, secret, n))
		return;
	if (!(tmp = malloc(ml * 3 + 1))) {
		/* No memory to rewrite it: withhold the message, never show it. */
		cleanup_text_copy(msg, len, "(message withheld: it quotes a password)");
		return;
	}
	while (i < ml) {
		if (i + n <= ml && memcmp(msg + i, secret, n) == 0) {
			memcpy(tmp + o, "***", 3);
			o += 3;
			i += n;
		} else {
			tmp[o++] = msg[i++];
		}
	}
	tmp[o] = '\0';
	cleanup_text_copy(msg, len, tmp);
	free(tmp);
}

void cleanup_conninfo_scrub(char *msg, size_t len, const char *conninfo)
{
	secret_span sp[MAX_SECRETS];
	PQconninfoOption *opts = NULL, *o;
	size_t n, i;
	char *dec;

	if (!msg || len == 0 || (n = conninfo_secrets(sp, conninfo)) == 0)
		return;
	/* The values as libpq decoded them, when it can parse the string. */
	if ((opts = PQconninfoParse(conninfo, NULL)) != NULL) {
		for (o = opts; o->keyword; o++)
			if (o->val && is_secret_key(o->keyword, strlen(o->keyword)))
				scrub_one(msg, len, o->val, strlen(o->val));
		PQconninfoFree(opts);
	}
	for (i = 0; i < n; i++) {
		/* The raw text, and its percent-decoded form (URI). */
		scrub_one(msg, len, conninfo + sp[i].off, sp[i].len);
		if ((dec = malloc(sp[i].len + 1)) != NULL) {
			percent_decode(dec, conninfo + sp[i].off, sp[i].len);
			scrub_one(msg, len, dec, strlen(dec));
			free(dec);
		}
	}
}

int cleanup_libpq_version(void)
{
	return PQlibVersion();
}

char *engine_strdup(const char *s, cleanup_error *err)
{
	char *p = strdup(s ? s : "");

	if (!p)
		cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	return p;
}

/* Fills KEYS/VALS (ENGINE_CONN_PARAMS entries at the most, NULL-ended)
 * with what every connection of E asks libpq for: the default connect
 * timeout, E's conninfo, its application name, UTF8. Keywords are
 * processed in order, later ones win: the timeout (unless
 * PGCONNECT_TIMEOUT says otherwise) goes before the caller's conninfo so
 * that the conninfo can override it. An empty dbname entry would override
 * PGDATABASE: leave it out then. */
static void conn_params(const cleanup_engine *e, const char **keys, const char **vals)
{
	int k = 0;

	if (!getenv("PGCONNECT_TIMEOUT")) {
		keys[k] = "connect_timeout";
		vals[k++] = ENGINE_CONNECT_TIMEOUT;
	}
	if (e->conninfo && *e->conninfo) {
		keys[k] = "dbname";
		vals[k++] = e->conninfo;
	}
	keys[k] = e->app_name_fixed ? "application_name" : "fallback_application_name";
	vals[k++] = e->app_name;
	keys[k] = "client_encoding";
	vals[k++] = "UTF8";
	keys[k] = NULL;
	vals[k] = NULL;
}

/* Fills ERR from CONN's failure to connect, the conninfo and libpq's
 * message redacted, and finishes CONN. Returns CLEANUP_ECONN. */
static int connect_failed(const cleanup_engine *e, PGconn *conn, cleanup_error *err)
{
	char msg[CLEANUP_ERR_TEXT], shown[CLEANUP_ERR_TEXT / 2];
	size_t l;

	/* Neither the conninfo nor libpq's message about it may show a
	 * password (docs/security.md): both are redacted here, before the
	 * error reaches stderr, --json, the console or a log. */
	cleanup_text_copy(msg, sizeof msg, conn ? PQerrorMessage(conn) : "out of memory");
	cleanup_conninfo_scrub(msg, sizeof msg, e->conninfo);
	l = strlen(msg);
	while (l > 0 && (msg[l - 1] == '\n' || msg[l - 1] == ' '))
		msg[--l] = '\0';
	if (conn)
		PQfinish(conn);
	cleanup_conninfo_redact(shown, sizeof shown, e->conninfo);
	cleanup_error_set(err, CLEANUP_ECONN, "cannot connect to the database (%s): %s",
	                  e->conninfo && *e->conninfo ? shown : "libpq environment", msg);
	cleanup_error_hint(err, "pass --db CONNINFO, or start the sandbox: cleanupctl sandbox start");
	return CLEANUP_ECONN;
}

static void quiet_notices(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* E's connection is up: notices stay quiet (the engine reports what
 * matters through its results), and nothing is prepared on it yet. */
static void connected(cleanup_engine *e)
{
	PQsetNoticeProcessor(e->conn, quiet_notices, NULL);
	memset(e->prepared, 0, sizeof e->prepared);
	e->probed = e->pooled = e->standby = false;
	e->server_pid = 0;
}

int engine_probe_result(cleanup_engine *e, const PGresult *res, cleanup_error *err)
{
	const char *force = getenv("CLEANUP_ASSUME_POOLED");
	int rc = engine_check_result(e, res, "identifying the server", err);

	if (rc != CLEANUP_OK)
		return rc;
	if (PQntuples(res) != 1)
		return cleanup_error_set(err, CLEANUP_ERROR, "identifying the server: no answer");
	e->server_pid = (int)col_int64(res, 0, "pid");
	e->standby = strcmp(col_text(res, 0, "standby"), "t") == 0;
	/* A pooler answers the startup itself: the BackendKeyData pid libpq
	 * got is its own (PgBouncer makes one up), not the server's. A direct
	 * connection's always matches. CLEANUP_ASSUME_POOLED=1 takes the
	 * pooled path on a direct connection (tests, benchmarks). */
	e->pooled = e->server_pid != PQbackendPID(e->conn) || (force && strcmp(force, "1") == 0);
	e->probed = true;
	return CLEANUP_OK;
}

/* How often a statement that only sets (or reads) settings is sent again
 * when the role's own statement_timeout ended it (57014): until our
 * timeouts are in force, the first statement of a session or transaction
 * runs under the role's (a DBA's 20ms is shorter than a busy machine's
 * scheduling delay). Nothing else ran: sending it again is safe. */
#define SETTINGS_ATTEMPTS 8

static bool timed_out(const cleanup_error *err)
{
	return err && strcmp(err->sqlstate, "57014") == 0;
}

int engine_script_settings(cleanup_engine *e, const char *sql, const char *context, cleanup_error *err)
{
	int rc = CLEANUP_OK, attempt;

	for (attempt = 0; attempt < SETTINGS_ATTEMPTS; attempt++) {
		rc = engine_script(e, sql, context, err);
		if (rc == CLEANUP_OK || !timed_out(err) || !cleanup_engine_ok(e))
			return rc;
		if (PQtransactionStatus(e->conn) == PQTRANS_INERROR)
			PQclear(PQexec(e->conn, "ROLLBACK"));
	}
	return rc;
}

int engine_begin(cleanup_engine *e, const char *begin_sql, const char *context, cleanup_error *err)
{
	char sql[256];

	snprintf(sql, sizeof sql, "%s; SET LOCAL statement_timeout = %d; SET LOCAL lock_timeout = %d", begin_sql,
	         e->timeout_ms > 0 ? e->timeout_ms : 0, e->lock_timeout_ms > 0 ? e->lock_timeout_ms : 0);
	return engine_script_settings(e, sql, context, err);
}

/* The session settings of a direct connection (its session ends with the
 * engine: nothing stays behind). Behind a pooler: none, engine_query sets
 * them per transaction. */
static int apply_session(cleanup_engine *e, cleanup_error *err)
{
	char sql[256];

	if (e->pooled || !e->conn)
		return CLEANUP_OK;
	snprintf(sql, sizeof sql, "SET statement_timeout = %d; SET lock_timeout = %d%s%s",
	         e->timeout_ms > 0 ? e->timeout_ms : 0, e->lock_timeout_ms > 0 ? e->lock_timeout_ms : 0,
	         e->step_sync < 0 ? "" : e->step_sync ? "; SET cleanup.step_synchronous_commit = on"
	                                               : "; SET cleanup.step_synchronous_commit = off",
	         e->read_only ? "; SET default_transaction_read_only = on" : "");
	return engine_script_settings(e, sql, "setting the session's timeouts", err);
}

/* Identifies the server of E's new connection, then sets a direct
 * session up. */
static int probe(cleanup_engine *e, cleanup_error *err)
{
	PGresult *res;
	int rc = CLEANUP_OK, attempt;

	for (attempt = 0; attempt < SETTINGS_ATTEMPTS; attempt++) {
		res = PQexec(e->conn, ENGINE_PROBE_SQL);
		rc = engine_probe_result(e, res, err);
		PQclear(res);
		if (rc == CLEANUP_OK || !timed_out(err) || !cleanup_engine_ok(e))
			break;
	}
	if (rc == CLEANUP_OK)
		rc = apply_session(e, err);
	return rc;
}

static int connect_now(cleanup_engine *e, cleanup_error *err)
{
	const char *keys[ENGINE_CONN_PARAMS], *vals[ENGINE_CONN_PARAMS];
	PGconn *conn;
	int rc;

	conn_params(e, keys, vals);
	conn = PQconnectdbParams(keys, vals, 1);
	if (!conn)
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory connecting");
	if (PQstatus(conn) != CONNECTION_OK)
		return connect_failed(e, conn, err);
	e->conn = conn;
	connected(e);
	if ((rc = probe(e, err)) != CLEANUP_OK) {
		PQfinish(e->conn);
		e->conn = NULL;
	}
	return rc;
}

int engine_connect_start(cleanup_engine *e, cleanup_error *err)
{
	const char *keys[ENGINE_CONN_PARAMS], *vals[ENGINE_CONN_PARAMS];
	PGconn *conn;

	engine_disconnect(e);
	conn_params(e, keys, vals);
	conn = PQconnectStartParams(keys, vals, 1);
	if (!conn || PQstatus(conn) == CONNECTION_BAD)
		return connect_failed(e, conn, err);
	e->conn = conn;
	return CLEANUP_OK;
}

PostgresPollingStatusType engine_connect_poll(cleanup_engine *e, cleanup_error *err)
{
	PostgresPollingStatusType st;

	if (!e->conn) {
		cleanup_error_set(err, CLEANUP_ECONN, "not connecting");
		return PGRES_POLLING_FAILED;
	}
	st = PQconnectPoll(e->conn);
	if (st == PGRES_POLLING_FAILED) {
		connect_failed(e, e->conn, err);
		e->conn = NULL;
	} else if (st == PGRES_POLLING_OK) {
		connected(e);
	}
	return st;
}

void engine_disconnect(cleanup_engine *e)
{
	if (e->conn)
		PQfinish(e->conn);
	e->conn = NULL;
	memset(e->prepared, 0, sizeof e->prepared);
}

static int default_statement_ms = CLEANUP_DEFAULT_STATEMENT_TIMEOUT_MS;
static int default_lock_ms = CLEANUP_DEFAULT_LOCK_TIMEOUT_MS;

void cleanup_engine_defaults(int statement_timeout_ms, int lock_timeout_ms)
{
	if (statement_timeout_ms >= 0)
		default_statement_ms = statement_timeout_ms;
	if (lock_timeout_ms >= 0)
		default_lock_ms = lock_timeout_ms;
}

int engine_new(cleanup_engine **out, const char *conninfo, const char *app_name, cleanup_error *err)
{
	cleanup_engine *e;

	*out = NULL;
	e = calloc(1, sizeof *e);
	if (!e)
		return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
	e->timeout_ms = default_statement_ms;
	e->lock_timeout_ms = default_lock_ms;
	e->step_sync = -1;
	if ((conninfo && *conninfo && !(e->conninfo = engine_strdup(conninfo, err))) ||
	    !(e->app_name = engine_strdup(app_name ? app_name : "cleanupctl", err))) {
		cleanup_engine_close(e);
		return CLEANUP_ENOMEM;
	}
	*out = e;
	return CLEANUP_OK;
}

/* The armed cancel key (see cleanup_engine_cancel_arm). A signal handler
 * reads armed_cancel; the main flow sets it to NULL before freeing the old
 * key, so the handler sees NULL or a live key, never freed memory (the
 * process is single-threaded where this is used, as in psql). */
static PGcancel *volatile armed_cancel;
static cleanup_engine *armed_engine;

/* Replaces the armed key with one for E's connection (none for NULL). */
static void cancel_retake(cleanup_engine *e)
{
	PGcancel *old = armed_cancel;

	armed_cancel = NULL;
	PQfreeCancel(old);
	if (e && e->conn)
		armed_cancel = PQgetCancel(e->conn);
}

int cleanup_engine_cancel_arm(cleanup_engine *e)
{
	armed_engine = e;
	cancel_retake(e);
	return !e || armed_cancel ? CLEANUP_OK : CLEANUP_ERROR;
}

bool cleanup_engine_cancel_armed(void)
{
	PGcancel *c = armed_cancel;
	char errbuf[256];

	return c && PQcancel(c, errbuf, (int)sizeof errbuf) == 1;
}

int cleanup_engine_open(cleanup_engine **out, const char *conninfo, const char *app_name,
                        cleanup_error *err)
{
	cleanup_engine *e = NULL;
	int rc;

	*out = NULL;
	cleanup_error_clear(err);
	rc = engine_new(&e, conninfo, app_name, err);
	if (rc != CLEANUP_OK)
		goto out;
	rc = connect_now(e, err);
	if (rc == CLEANUP_OK) {
		*out = e;
		e = NULL;
	}
out:
	cleanup_engine_close(e);
	return rc;
}

void cleanup_engine_close(cleanup_engine *e)
{
	if (!e)
		return;
	if (armed_engine == e)
		cleanup_engine_cancel_arm(NULL);
	if (e->conn)
		PQfinish(e->conn);
	free(e->conninfo);
	free(e->app_name);
	free(e);
}

int cleanup_engine_reconnect(cleanup_engine *e, cleanup_error *err)
{
	int rc;

	if (armed_engine == e)
		cancel_retake(NULL);
	engine_disconnect(e);
	rc = connect_now(e, err); /* the session settings again, when direct */
	if (rc == CLEANUP_OK && armed_engine == e)
		cancel_retake(e);
	return rc;
}

bool cleanup_engine_pooled(const cleanup_engine *e)
{
	return e && e->pooled;
}

bool cleanup_engine_standby(const cleanup_engine *e)
{
	return e && e->standby;
}

int cleanup_engine_recheck(cleanup_engine *e, cleanup_error *err)
{
	PGresult *res;
	int rc;

	if (!e || !e->conn)
		return cleanup_error_set(err, CLEANUP_ECONN, "not connected");
	for (int attempt = 0; attempt < SETTINGS_ATTEMPTS; attempt++) {
		res = PQexec(e->conn, ENGINE_PROBE_SQL);
		rc = engine_probe_result(e, res, err);
		PQclear(res);
		if (rc == CLEANUP_OK || !timed_out(err) || !cleanup_engine_ok(e))
			break;
	}
	return rc;
}

bool cleanup_engine_ok(const cleanup_engine *e)
{
	return e && e->conn && PQstatus(e->conn) == CONNECTION_OK;
}

const char *cleanup_engine_dbname(const cleanup_engine *e)
{
	return e && e->conn ? PQdb(e->conn) : "";
}

int cleanup_engine_backend_pid(const cleanup_engine *e)
{
	return e && e->conn ? PQbackendPID(e->conn) : 0;
}

/* A busy answer that names nobody (a lock timeout: "canceling statement
 * due to lock timeout", no detail) gets the holders of the inventory's and
 * the engine's tables as its detail (T3: every busy answer names its
 * holder), looked up on E's connection when it is idle (an autocommit
 * statement failed; a transaction in error cannot ask). Best effort: any
 * failure leaves ERR as it was. */
static void name_lock_timeout_holders(cleanup_engine *e, cleanup_error *err)
{
	PGresult *res;
	const char *text;

	if (!err || err->detail[0] || !e || !e->conn || PQstatus(e->conn) != CONNECTION_OK ||
	    PQtransactionStatus(e->conn) != PQTRANS_IDLE || PQpipelineStatus(e->conn) != PQ_PIPELINE_OFF)
		return;
	res = PQexec(e->conn, "SELECT CASE WHEN b <> '[]' THEN cleanup.holders_text(b) END FROM cleanup.lock_blockers() b");
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0)) {
		text = PQgetvalue(res, 0, 0);
		if (*text)
			snprintf(err->detail, sizeof err->detail, "held by %s", text);
	}
	PQclear(res);
}

int engine_error_from_result(cleanup_error *err, cleanup_engine *e, const PGresult *res,
                             const char *context)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	int status;

	status = state && *state ? cleanup_status_from_sqlstate(state) : CLEANUP_ERROR;
	/* No SQLSTATE and libpq's own words for a server that went away: the
	 * connection status may not say so yet (a send that failed first). */
	if ((!state || !*state) && e && e->conn && strstr(PQerrorMessage(e->conn), "server closed the connection"))
		status = CLEANUP_ECONN;
	if ((e && e->conn && PQstatus(e->conn) == CONNECTION_BAD) || status == CLEANUP_ECONN) {
		/* The backend was terminated or the server went away (57P0x, class
		 * 08, or no answer at all). Say so plainly, with what we were
		 * doing: the interrupted transaction did not commit. */
		if (!msg || !*msg)
			msg = e && e->conn ? PQerrorMessage(e->conn) : "";
		status = CLEANUP_ECONN;
		cleanup_error_set(err, status, "lost the connection to the database%s%s: %s",
		                  context && *context ? " while " : "", context ? context : "",
		                  msg && *msg ? msg : "no reply from the server");
		if (err) {
			char *nl;

			snprintf(err->sqlstate, sizeof err->sqlstate, "%s", state ? state : "");
			/* libpq's message may run over several lines: keep the first. */
			if ((nl = strchr(err->message, '\n')) != NULL)
				*nl = '\0';
			snprintf(err->hint, sizeof err->hint, "%s",
			         "an interrupted transaction is rolled back by the server; job commands are safe to "
			         "repeat (check with: cleanupctl job show JOB)");
		}
	} else {
		if (!msg || !*msg)
			msg = res ? PQresultErrorMessage(res) : (e && e->conn ? PQerrorMessage(e->conn) : "");
		if (status == CLEANUP_EREADONLY)
			/* 25006: a write on a read-only server. Say which kind, in
			 * words of our own, with the server's message as detail. */
			cleanup_error_set(err, status, "the server is %s: it takes no writes%s%s",
			                  e && e->standby ? "a hot standby (read-only, in recovery)"
			                                  : "read-only (default_transaction_read_only or a read-only transaction)",
			                  context && *context ? " (" : "", context && *context ? context : "");
		else
			cleanup_error_set(err, status, "%s", msg && *msg ? msg : "unknown database error");
		if (err && status == CLEANUP_EREADONLY) {
			size_t l = strlen(err->message);

			if (context && *context && l + 1 < sizeof err->message) {
				err->message[l] = ')';
				err->message[l + 1] = '\0';
			}
			snprintf(err->sqlstate, sizeof err->sqlstate, "%s", state ? state : "");
			cleanup_text_copy(err->detail, sizeof err->detail, msg);
			cleanup_error_hint(err, "%s", e && e->standby
			                                  ? "run write commands against the primary (a host list with "
			                                    "target_session_attrs=read-write picks it); reads work here"
			                                  : "connect without a read-only setting");
		} else if (err) {
			snprintf(err->sqlstate, sizeof err->sqlstate, "%s", state ? state : "");
			cleanup_text_copy(err->detail, sizeof err->detail, detail);
			cleanup_text_copy(err->hint, sizeof err->hint, hint);
			if (status == CLEANUP_EBUSY && state && strcmp(state, "55P03") == 0)
				name_lock_timeout_holders(e, err);
		}
	}
	if (err) {
		size_t l = strlen(err->message);

		while (l > 0 && (err->message[l - 1] == '\n' || err->message[l - 1] == ' '))
			err->message[--l] = '\0';
		cleanup_text_copy(err->context, sizeof err->context, context);
	}
	return status;
}

void engine_statement_name(char *buf, size_t len, enum sql_query_id q)
{
	snprintf(buf, len, "cq_%d", (int)q);
}

int engine_check_result(cleanup_engine *e, const PGresult *res, const char *context, cleanup_error *err)
{
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
		return CLEANUP_OK;
	return engine_error_from_result(err, e, res, context);
}

int engine_prepare_result(cleanup_engine *e, enum sql_query_id q, const PGresult *res, const char *context,
                          cleanup_error *err)
{
	int rc = engine_check_result(e, res, context, err);

	if (rc == CLEANUP_OK)
		e->prepared[q] = true;
	return rc;
}

int engine_prepare(cleanup_engine *e, enum sql_query_id q, int n, const char *context, cleanup_error *err)
{
	char name[32];
	PGresult *res;
	int rc;

	if (e->prepared[q])
		return CLEANUP_OK;
	engine_statement_name(name, sizeof name, q);
	res = PQprepare(e->conn, name, sql_query_files[q].text, n, NULL);
	rc = engine_prepare_result(e, q, res, context, err);
	PQclear(res);
	return rc;
}

int engine_send_prepare(cleanup_engine *e, enum sql_query_id q, int n, const char *context, cleanup_error *err)
{
	char name[32];

	if (!e || !e->conn)
		return cleanup_error_set(err, CLEANUP_ECONN, "not connected");
	engine_statement_name(name, sizeof name, q);
	if (!PQsendPrepare(e->conn, name, sql_query_files[q].text, n, NULL))
		return engine_error_from_result(err, e, NULL, context);
	return CLEANUP_OK;
}

int engine_send_query(cleanup_engine *e, enum sql_query_id q, int n, const char *const *params,
                      const char *context, cleanup_error *err)
{
	char name[32];

	if (!e || !e->conn)
		return cleanup_error_set(err, CLEANUP_ECONN, "not connected");
	if (e->pooled) {
		/* No named statements behind a pooler: an unnamed one. */
		if (!PQsendQueryParams(e->conn, sql_query_files[q].text, n, NULL, params, NULL, NULL, 0))
			return engine_error_from_result(err, e, NULL, context);
		return CLEANUP_OK;
	}
	if (!e->prepared[q])
		return cleanup_error_set(err, CLEANUP_ERROR, "%s: query %s is not prepared on this connection",
		                         context ? context : "sending a query", sql_query_files[q].name);
	engine_statement_name(name, sizeof name, q);
	if (!PQsendQueryPrepared(e->conn, name, n, params, NULL, NULL, 0))
		return engine_error_from_result(err, e, NULL, context);
	return CLEANUP_OK;
}

int engine_send_script(cleanup_engine *e, const char *sql, const char *context, cleanup_error *err)
{
	if (!e || !e->conn)
		return cleanup_error_set(err, CLEANUP_ECONN, "not connected");
	if (!PQsendQuery(e->conn, sql))
		return engine_error_from_result(err, e, NULL, context);
	return CLEANUP_OK;
}

/* The per-transaction settings of a pooled engine: set_config(..., true)
 * lasts until the transaction ends, so nothing stays on the pooler's
 * server connection. $1 statement_timeout, $2 lock_timeout, $3 the step
 * commit mode ('' the server's), and for a read-only engine the
 * transaction is made read-only (allowed before or after a snapshot). */
#define TX_SETTINGS_SQL                                                                                    \
	"SELECT pg_catalog.set_config('statement_timeout', $1, true), pg_catalog.set_config('lock_timeout', $2, " \
	"true), pg_catalog.set_config('cleanup.step_synchronous_commit', $3, true)"
#define TX_SETTINGS_RO_SQL TX_SETTINGS_SQL ", pg_catalog.set_config('transaction_read_only', 'on', true)"

/* Sends E's per-transaction settings (pipeline mode, no Sync). */
static bool send_tx_settings(cleanup_engine *e)
{
	char st[16], lt[16];
	const char *params[3] = {st, lt, e->step_sync < 0 ? "" : e->step_sync ? "on" : "off"};

	snprintf(st, sizeof st, "%d", e->timeout_ms > 0 ? e->timeout_ms : 0);
	snprintf(lt, sizeof lt, "%d", e->lock_timeout_ms > 0 ? e->lock_timeout_ms : 0);
	return PQsendQueryParams(e->conn, e->read_only ? TX_SETTINGS_RO_SQL : TX_SETTINGS_SQL, 3, NULL, params, NULL,
	                         NULL, 0) == 1;
}

/* Behind a pooler: query Q as an unnamed statement after the settings, in
 * one pipeline with one Sync: one round trip, one transaction (or part of
 * the caller's open one). */
static int pooled_query_once(PGresult **out, bool *settings_timed_out, cleanup_engine *e, enum sql_query_id q, int n,
                             const char *const *params, const char *context, cleanup_error *err)
{
	PGconn *c = e->conn;
	PGresult *res, *keep = NULL;
	int rc = CLEANUP_OK, nulls = 0;
	bool failed = false;

	*settings_timed_out = false;
	if (!PQenterPipelineMode(c))
		return engine_error_from_result(err, e, NULL, context);
	if (!send_tx_settings(e) ||
	    !PQsendQueryParams(c, sql_query_files[q].text, n, NULL, params, NULL, NULL, 0) || !PQpipelineSync(c)) {
		rc = engine_error_from_result(err, e, NULL, context);
		PQexitPipelineMode(c);
		return rc;
	}
	for (;;) {
		res = PQgetResult(c);
		if (!res) {
			if (PQstatus(c) == CONNECTION_BAD || ++nulls > 2) {
				if (!failed)
					rc = engine_error_from_result(err, e, NULL, context);
				failed = true;
				break;
			}
			continue;
		}
		if (PQresultStatus(res) == PGRES_PIPELINE_SYNC) {
			PQclear(res);
			break;
		}
		if (PQresultStatus(res) != PGRES_PIPELINE_ABORTED) {
			ExecStatusType st = PQresultStatus(res);

			if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
				if (!failed) {
					rc = engine_error_from_result(err, e, res, context);
					*settings_timed_out = nulls == 0 && timed_out(err);
				}
				failed = true;
			} else if (nulls == 1 && !keep) {
				keep = res; /* the query's result (the settings' came first) */
				res = NULL;
			}
		}
		PQclear(res);
	}
	PQexitPipelineMode(c);
	if (rc == CLEANUP_OK && !keep)
		rc = cleanup_error_set(err, CLEANUP_ERROR, "%s: no result", context ? context : "a query");
	if (rc != CLEANUP_OK) {
		PQclear(keep);
		return rc;
	}
	*out = keep;
	return CLEANUP_OK;
}

/* pooled_query_once, sent again when the role's statement_timeout ended
 * the settings statement (nothing else ran) outside a transaction block. */
static int pooled_query(PGresult **out, cleanup_engine *e, enum sql_query_id q, int n, const char *const *params,
                        const char *context, cleanup_error *err)
{
	bool again = false;
	int rc = CLEANUP_OK, attempt;

	for (attempt = 0; attempt < SETTINGS_ATTEMPTS; attempt++) {
		rc = pooled_query_once(out, &again, e, q, n, params, context, err);
		if (rc == CLEANUP_OK || !again || !cleanup_engine_ok(e) || PQtransactionStatus(e->conn) != PQTRANS_IDLE)
			break;
	}
	return rc;
}

int engine_query(PGresult **out, cleanup_engine *e, enum sql_query_id q, int n,
                 const char *const *params, const char *context, cleanup_error *err)
{
	char name[32];
	PGresult *res = NULL;
	int rc;

	*out = NULL;
	if (!e || !e->conn)
		return cleanup_error_set(err, CLEANUP_ECONN, "not connected");
	if (e->pooled)
		return pooled_query(out, e, q, n, params, context, err);
	rc = engine_prepare(e, q, n, context, err);
	if (rc != CLEANUP_OK)
		return rc;
	engine_statement_name(name, sizeof name, q);
	res = PQexecPrepared(e->conn, name, n, params, NULL, NULL, 0);
	rc = engine_check_result(e, res, context, err);
	if (rc != CLEANUP_OK) {
		PQclear(res);
		return rc;
	}
	*out = res;
	return CLEANUP_OK;
}

int engine_command(cleanup_engine *e, enum sql_query_id q, int n, const char *const *params, const char *context,
                   cleanup_error *err)
{
	PGresult *res = NULL;
	int rc = engine_query(&res, e, q, n, params, context, err);

	PQclear(res);
	return rc;
}

int engine_query_one(PGresult **out, cleanup_engine *e, enum sql_query_id q, int n, const char *const *params,
                     const char *context, const char *what, cleanup_error *err)
{
	int rc = engine_query(out, e, q, n, params, context, err), rows;

	if (rc != CLEANUP_OK)
		return rc;
	if ((rows = PQntuples(*out)) == 1)
		return CLEANUP_OK;
	PQclear(*out);
	*out = NULL;
	return cleanup_error_set(err, CLEANUP_ERROR, "%s returned %d rows, expected 1", what, rows);
}

int engine_script(cleanup_engine *e, const char *sql, const char *context, cleanup_error *err)
{
	PGresult *res;
	int rc;

	if (!e || !e->conn)
		return cleanup_error_set(err, CLEANUP_ECONN, "not connected");
	res = PQexec(e->conn, sql);
	rc = engine_check_result(e, res, context, err);
	PQclear(res);
	return rc;
}

int cleanup_engine_exec(cleanup_engine *e, const char *text, cleanup_error *err)
{
	return engine_script(e, text, text, err);
}

void engine_timeout_sql(char *buf, size_t len, int timeout_ms, bool local)
{
	snprintf(buf, len, "SET %sstatement_timeout = %d", local ? "LOCAL " : "", timeout_ms > 0 ? timeout_ms : 0);
}

/* Sets SETTING (statement_timeout, lock_timeout; WHAT in a refusal) to
 * TIMEOUT_MS and records it in *FIELD: for the session on a direct
 * connection; behind a pooler each transaction sets it (engine_query). */
static int set_timeout_setting(cleanup_engine *e, int *field, const char *setting, const char *what,
                               int timeout_ms, cleanup_error *err)
{
	char sql[64], ctx[48];
	int rc;

	if (timeout_ms < 0)
		return cleanup_error_set(err, CLEANUP_EINVAL, "%s %d ms is negative", what, timeout_ms);
	if (!e->pooled) {
		snprintf(sql, sizeof sql, "SET %s = %d", setting, timeout_ms);
		snprintf(ctx, sizeof ctx, "setting %s", setting);
		if ((rc = engine_script(e, sql, ctx, err)) != CLEANUP_OK)
			return rc;
	}
	*field = timeout_ms;
	return CLEANUP_OK;
}

int cleanup_engine_set_timeout(cleanup_engine *e, int timeout_ms, cleanup_error *err)
{
	return set_timeout_setting(e, &e->timeout_ms, "statement_timeout", "timeout", timeout_ms, err);
}

int cleanup_engine_set_lock_timeout(cleanup_engine *e, int timeout_ms, cleanup_error *err)
{
	return set_timeout_setting(e, &e->lock_timeout_ms, "lock_timeout", "lock timeout", timeout_ms, err);
}

double col_number(const PGresult *res, int row, const char *name, double dflt)
{
	int c = PQfnumber(res, name);

	if (c < 0 || row >= PQntuples(res) || PQgetisnull(res, row, c))
		return dflt;
	return strtod(PQgetvalue(res, row, c), NULL);
}

const char *col_text(const PGresult *res, int row, const char *name)
{
	int c = PQfnumber(res, name);

	if (c < 0 || row >= PQntuples(res) || PQgetisnull(res, row, c))
		return "";
	return PQgetvalue(res, row, c);
}

int64_t col_int64(const PGresult *res, int row, const char *name)
{
	int c = PQfnumber(res, name);

	if (c < 0 || row >= PQntuples(res) || PQgetisnull(res, row, c))
		return -1;
	return strtoll(PQgetvalue(res, row, c), NULL, 10);
}

void col_copy(char *dst, size_t len, const PGresult *res, int row, const char *name)
{
	cleanup_text_copy(dst, len, col_text(res, row, name));
}

char *format_text_array(const char *const *items, size_t n)
{
	size_t cap = 3, i;
	char *buf, *p;

	for (i = 0; i < n; i++)
		cap += 3 + 2 * strlen(items[i]);
	buf = malloc(cap);
	if (!buf)
		return NULL;
	p = buf;
	*p++ = '{';
	for (i = 0; i < n; i++) {
		const char *s;

		if (i)
			*p++ = ',';
		*p++ = '"';
		for (s = items[i]; *s; s++) {
			if (*s == '"' || *s == '\\')
				*p++ = '\\';
			*p++ = *s;
		}
		*p++ = '"';
	}
	*p++ = '}';
	*p = '\0';
	return buf;
}

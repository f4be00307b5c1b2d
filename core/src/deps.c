/* Dependency evidence: from the catalog through
 * cleanup.dependency_evidence() (sql/functions/090_deps.sql), or offline
 * from the foreign keys declared in the project's sql/ files, walked here
 * with the same bounded breadth-first traversal. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "cleanup/clock.h"
#include "cleanup/deps.h"
#include "engine_int.h"
#include "rowmap_int.h"
#include "strbuf_int.h"

static const char *const roots[] = {"inventory.media_servers", "inventory.libraries", "inventory.items"};
#define NROOTS 3

const char *const cleanup_deps_parser_limits[] = {
	"reads CREATE TABLE column REFERENCES and table FOREIGN KEY clauses and ALTER TABLE ... ADD [CONSTRAINT] "
	"FOREIGN KEY / ADD COLUMN ... REFERENCES, in file order (schema/ then functions/)",
	"skips function bodies, DO blocks and every other dollar-quoted or string text: tables created by "
	"dynamic SQL are not seen",
	"does not apply DROP TABLE, DROP CONSTRAINT, RENAME, SET SCHEMA or CREATE TABLE ... PARTITION OF / AS / "
	"LIKE / INHERITS: the snapshot may list keys the database no longer has, and miss inherited ones",
	"an unqualified table name is resolved to the one declared table of that name; otherwise it stays as "
	"written (unknown)",
	"a constraint without a name gets PostgreSQL's usual default (<table>_<columns>_fkey), not verified",
	"referenced columns omitted in the source are reported as the primary key, not resolved",
	"infers no validation, enforcement (triggers), indexes, row security or execution readiness: those need "
	"the catalog assessment (cleanupctl deps without --offline)",
	NULL,
};

int cleanup_deps_check_limits(const cleanup_dep_limits *l, cleanup_error *err)
{
	if (l->max_depth < 1 || l->max_depth > 64)
		return cleanup_error_set(err, CLEANUP_EINVAL, "max depth %d out of range (1-64)", l->max_depth);
	if (l->max_tables < 1 || l->max_tables > 1024)
		return cleanup_error_set(err, CLEANUP_EINVAL, "max tables %d out of range (1-1024)", l->max_tables);
	if (l->max_edges < 1 || l->max_edges > 100000)
		return cleanup_error_set(err, CLEANUP_EINVAL, "max edges %d out of range (1-100000)", l->max_edges);
	if (l->max_ms < 1 || l->max_ms > 600000)
		return cleanup_error_set(err, CLEANUP_EINVAL, "max time %d ms out of range (1-600000)", l->max_ms);
	return CLEANUP_OK;
}

void cleanup_deps_report_free(cleanup_dep_report *r)
{
	if (!r)
		return;
	free(r->edges);
	free(r->gaps);
	free(r->json);
	memset(r, 0, sizeof *r);
}

static const engine_col edge_cols[] = {
	ROW_INT(cleanup_dep_edge, depth, -1),
	ROW_TEXT(cleanup_dep_edge, constraint_name),
	ROW_TEXT(cleanup_dep_edge, referencing),
	ROW_TEXT(cleanup_dep_edge, referencing_columns),
	ROW_TEXT(cleanup_dep_edge, referenced),
	ROW_TEXT(cleanup_dep_edge, referenced_columns),
	ROW_TEXT(cleanup_dep_edge, on_delete),
	ROW_BOOL_AS(cleanup_dep_edge, deferrable, "is_deferrable"),
	ROW_BOOL(cleanup_dep_edge, validated),
	ROW_BOOL(cleanup_dep_edge, enforced),
	ROW_BOOL(cleanup_dep_edge, has_index),
	ROW_TEXT(cleanup_dep_edge, index_status),
	ROW_TEXT(cleanup_dep_edge, index_name),
	ROW_TEXT(cleanup_dep_edge, triggers),
	ROW_TEXT(cleanup_dep_edge, ri_triggers),
	ROW_BOOL(cleanup_dep_edge, row_security),
	ROW_BOOL(cleanup_dep_edge, force_row_security),
	ROW_BOOL(cleanup_dep_edge, cycle),
	ROW_TEXT(cleanup_dep_edge, disposition),
};

static const engine_col gap_cols[] = {
	ROW_TEXT(cleanup_dep_gap, kind),
	ROW_TEXT(cleanup_dep_gap, summary),
};

/* The catalog: one call builds the document (walk and assessment in one
 * snapshot); the edges and gaps are then read out of that same document. */
int cleanup_deps_read(cleanup_dep_report *out, cleanup_engine *e, const cleanup_dep_limits *l, cleanup_error *err)
{
	char b[4][16];
	const char *params[4] = {b[0], b[1], b[2], b[3]};
	const char *doc[1];
	PGresult *res = NULL;
	void *rows;
	int rc;

	memset(out, 0, sizeof *out);
	if ((rc = cleanup_deps_check_limits(l, err)))
		return rc;
	snprintf(b[0], sizeof b[0], "%d", l->max_depth);
	snprintf(b[1], sizeof b[1], "%d", l->max_tables);
	snprintf(b[2], sizeof b[2], "%d", l->max_edges);
	snprintf(b[3], sizeof b[3], "%d", l->max_ms);
	snprintf(out->source, sizeof out->source, "catalog");
	if ((rc = engine_query(&res, e, CLEANUP_Q_DEPS_JSON, 4, params, "building dependency evidence", err)))
		return rc;
	snprintf(out->fingerprint, sizeof out->fingerprint, "%s", col_text(res, 0, "fingerprint"));
	out->elapsed_ms = strtod(col_text(res, 0, "elapsed_ms"), NULL);
	if (!(out->json = engine_strdup(col_text(res, 0, "json"), err))) {
		rc = CLEANUP_ENOMEM;
		goto out;
	}
	PQclear(res);
	res = NULL;
	doc[0] = out->json;
	if ((rc = engine_query_rows(&rows, &out->n, sizeof *out->edges, edge_cols, ROW_COUNT(edge_cols), e,
	                            CLEANUP_Q_DEPS_EDGES, 1, doc, "reading dependency edges", err)))
		goto out;
	out->edges = rows;
	if ((rc = engine_query_rows(&rows, &out->ngaps, sizeof *out->gaps, gap_cols, ROW_COUNT(gap_cols), e,
	                            CLEANUP_Q_DEPS_GAPS, 1, doc, "reading dependency gaps", err)))
		goto out;
	out->gaps = rows;
out:
	PQclear(res);
	return rc;
}

/* ---- Offline: a small tokenizer and parser for the project's sql/ ---- */

enum tok_kind { T_END, T_WORD, T_QIDENT, T_OTHER, T_SKIP };

typedef struct tok {
	enum tok_kind kind;
	char text[128];   /* words lower-cased; quoted identifiers as written; T_OTHER one char */
	int line;
} tok;

typedef struct lexer {
	const char *p;
	int line;
} lexer;

/* The next token; strings, dollar-quoted bodies and numbers are T_SKIP. */
static void lex(lexer *lx, tok *t)
{
	const char *p = lx->p;
	size_t j = 0;

	for (;;) {
		while (*p && isspace((unsigned char)*p)) {
			if (*p == '\n')
				lx->line++;
			p++;
		}
		if (p[0] == '-' && p[1] == '-') {
			while (*p && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			int nest = 1;

			for (p += 2; *p && nest; p++) {
				if (*p == '\n')
					lx->line++;
				if (p[0] == '/' && p[1] == '*')
					nest++, p++;
				else if (p[0] == '*' && p[1] == '/')
					nest--, p++;
			}
		} else {
			break;
		}
	}
	t->line = lx->line;
	t->text[0] = '\0';
	if (!*p) {
		t->kind = T_END;
	} else if (*p == '\'' || ((*p == 'E' || *p == 'e') && p[1] == '\'')) {
		bool esc = *p != '\'';

		p += esc ? 2 : 1;
		for (; *p; p++) {
			if (*p == '\n')
				lx->line++;
			if (esc && *p == '\\' && p[1]) {
				p++;
			} else if (*p == '\'') {
				if (p[1] == '\'')
					p++;
				else
					break;
			}
		}
		if (*p)
			p++;
		t->kind = T_SKIP;
	} else if (*p == '$' && (p[1] == '$' || isalpha((unsigned char)p[1]) || p[1] == '_')) {
		const char *q = p + 1;
		size_t taglen;

		while (*q && (isalnum((unsigned char)*q) || *q == '_'))
			q++;
		if (*q != '$') {
			p++;
			t->kind = T_OTHER;
			snprintf(t->text, sizeof t->text, "$");
		} else {
			taglen = (size_t)(q - p) + 1;
			for (q++; *q; q++) {
				if (*q == '\n')
					lx->line++;
				if (*q == '$' && strncmp(q, p, taglen) == 0)
					break;
			}
			p = *q ? q + taglen : q;
			t->kind = T_SKIP;
		}
	} else if (*p == '"') {
		for (p++; *p; p++) {
			if (*p == '"') {
				if (p[1] != '"')
					break;
				p++;
			}
			if (j + 1 < sizeof t->text)
				t->text[j++] = *p;
		}
		if (*p)
			p++;
		t->text[j] = '\0';
		t->kind = T_QIDENT;
	} else if (isalpha((unsigned char)*p) || *p == '_' || (unsigned char)*p >= 0x80) {
		while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '$' || (unsigned char)*p >= 0x80)) {
			if (j + 1 < sizeof t->text)
				t->text[j++] = (char)tolower((unsigned char)*p);
			p++;
		}
		t->text[j] = '\0';
		t->kind = T_WORD;
	} else if (isdigit((unsigned char)*p)) {
		while (*p && (isalnum((unsigned char)*p) || *p == '.'))
			p++;
		t->kind = T_SKIP;
	} else {
		t->text[0] = *p++;
		t->text[1] = '\0';
		t->kind = T_OTHER;
	}
	lx->p = p;
}

typedef struct parser {
	lexer lx;
	tok t;                 /* current token */
	const char *name;
	cleanup_dep_edge **edges;
	size_t *n, cap;
	int rc;
	cleanup_error *err;
} parser;

static void next(parser *ps)
{
	lex(&ps->lx, &ps->t);
}

static bool is_word(const parser *ps, const char *w)
{
	return ps->t.kind == T_WORD && strcmp(ps->t.text, w) == 0;
}

static bool is_char(const parser *ps, char c)
{
	return ps->t.kind == T_OTHER && ps->t.text[0] == c;
}

static bool accept(parser *ps, const char *w)
{
	if (!is_word(ps, w))
		return false;
	next(ps);
	return true;
}

static bool is_ident(const parser *ps)
{
	return ps->t.kind == T_WORD || ps->t.kind == T_QIDENT;
}

/* [schema.]name into BUF. False if the current token is no identifier. */
static bool qname(parser *ps, char *buf, size_t len)
{
	if (!is_ident(ps))
		return false;
	snprintf(buf, len, "%s", ps->t.text);
	next(ps);
	if (is_char(ps, '.')) {
		next(ps);
		if (is_ident(ps)) {
			size_t l = strlen(buf);

			snprintf(buf + l, len - l, ".%s", ps->t.text);
			next(ps);
		}
	}
	return true;
}

/* "(a, b)" into "a, b" (at most LEN); consumes through ')'. */
static bool column_list(parser *ps, char *buf, size_t len)
{
	size_t l = 0;

	buf[0] = '\0';
	if (!is_char(ps, '('))
		return false;
	for (next(ps); ps->t.kind != T_END && !is_char(ps, ')'); next(ps)) {
		if (is_ident(ps))
			l += (size_t)snprintf(buf + l, l < len ? len - l : 0, "%s%s", l ? ", " : "", ps->t.text);
		if (l >= len)
			l = len - 1;
	}
	if (is_char(ps, ')'))
		next(ps);
	return true;
}

/* Counts the token at hand's parentheses into *DEPTH (0: the level the
 * element began at); true when it ends the element: the ')' closing that
 * level, or ',' or ';' at it. */
static bool element_end(parser *ps, int *depth)
{
	if (is_char(ps, '('))
		(*depth)++;
	else if (is_char(ps, ')')) {
		if (*depth == 0)
			return true;
		(*depth)--;
	} else if (*depth == 0 && (is_char(ps, ',') || is_char(ps, ';')))
		return true;
	return false;
}

/* Skips to the ')' closing the current level (not consumed) or ',' at
 * this level, or ';'. */
static void skip_element(parser *ps)
{
	int depth = 0;

	for (; ps->t.kind != T_END; next(ps))
		if (element_end(ps, &depth) || is_char(ps, ';'))
			return;
}

static cleanup_dep_edge *new_edge(parser *ps)
{
	cleanup_dep_edge *e;

	if (*ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 32;
		cleanup_dep_edge *g = realloc(*ps->edges, cap * sizeof *g);

		if (!g) {
			ps->rc = cleanup_error_set(ps->err, CLEANUP_ENOMEM, "out of memory");
			return NULL;
		}
		*ps->edges = g;
		ps->cap = cap;
	}
	e = &(*ps->edges)[(*ps->n)++];
	memset(e, 0, sizeof *e);
	e->depth = -1;
	return e;
}

static const char *action(parser *ps)
{
	if (accept(ps, "cascade"))
		return "cascade";
	if (accept(ps, "restrict"))
		return "restrict";
	if (accept(ps, "no")) {
		accept(ps, "action");
		return "no action";
	}
	if (accept(ps, "set")) {
		const char *a = accept(ps, "null") ? "set null" : accept(ps, "default") ? "set default" : "unknown";
		char ignore[8];

		if (is_char(ps, '('))
			column_list(ps, ignore, sizeof ignore);
		return a;
	}
	return "unknown";
}

/* REFERENCES target [(cols)] [MATCH x] [ON DELETE a] [ON UPDATE a]
 * [[NOT] DEFERRABLE] [INITIALLY x]: fills E from the current token
 * (REFERENCES already consumed). */
static void references(parser *ps, cleanup_dep_edge *e)
{
	snprintf(e->on_delete, sizeof e->on_delete, "no action");
	if (!qname(ps, e->referenced, sizeof e->referenced))
		snprintf(e->referenced, sizeof e->referenced, "?");
	if (!column_list(ps, e->referenced_columns, sizeof e->referenced_columns))
		snprintf(e->referenced_columns, sizeof e->referenced_columns, "primary key");
	for (;;) {
		if (accept(ps, "match")) {
			next(ps);
		} else if (accept(ps, "on")) {
			if (accept(ps, "delete"))
				snprintf(e->on_delete, sizeof e->on_delete, "%s", action(ps));
			else if (accept(ps, "update"))
				action(ps);
		} else if (accept(ps, "deferrable")) {
			e->deferrable = true;
		} else if (is_word(ps, "not")) {
			next(ps);
			if (accept(ps, "deferrable"))
				e->deferrable = false;
		} else if (accept(ps, "initially")) {
			next(ps);
		} else {
			break;
		}
	}
}

static void default_name(cleanup_dep_edge *e)
{
	const char *rel = strrchr(e->referencing, '.');
	char cols[200];
	size_t i;

	snprintf(cols, sizeof cols, "%s", e->referencing_columns);
	for (i = 0; cols[i]; i++)
		if (cols[i] == ',' || cols[i] == ' ')
			cols[i] = '_';
	/* "a, b" became "a__b": squeeze */
	for (i = 0; cols[i]; i++)
		while (cols[i] == '_' && cols[i + 1] == '_')
			memmove(cols + i, cols + i + 1, strlen(cols + i));
	snprintf(e->constraint_name, sizeof e->constraint_name, "%.*s_%.*s_fkey", 28,
	         rel ? rel + 1 : e->referencing, 28, cols);
}

/* Names edge E (CNAME, or the name PostgreSQL gives it) and where it is
 * declared (LINE of the file being parsed). */
static void edge_declared(const parser *ps, cleanup_dep_edge *e, const char *cname, int line)
{
	if (cname[0])
		snprintf(e->constraint_name, sizeof e->constraint_name, "%s", cname);
	else
		default_name(e);
	snprintf(e->disposition, sizeof e->disposition, "%s:%d", ps->name, line);
}

/* One element of a CREATE TABLE list, or one ALTER TABLE ADD action
 * (after ADD). TABLE is the referencing table. */
static void table_element(parser *ps, const char *table, int line, bool alter)
{
	char cname[64] = "", col[128] = "";
	cleanup_dep_edge *e;

	if (accept(ps, "constraint")) {
		if (is_ident(ps)) {
			snprintf(cname, sizeof cname, "%.63s", ps->t.text);
			next(ps);
		}
	}
	if (accept(ps, "foreign")) {
		accept(ps, "key");
		if (!(e = new_edge(ps)))
			return;
		snprintf(e->referencing, sizeof e->referencing, "%s", table);
		column_list(ps, e->referencing_columns, sizeof e->referencing_columns);
		if (accept(ps, "references"))
			references(ps, e);
		edge_declared(ps, e, cname, line);
		skip_element(ps);
		return;
	}
	if (cname[0] || is_word(ps, "primary") || is_word(ps, "unique") || is_word(ps, "check") ||
	    is_word(ps, "exclude") || is_word(ps, "like")) {
		skip_element(ps);
		return;
	}
	if (alter) {
		accept(ps, "column");
		if (accept(ps, "if")) {
			accept(ps, "not");
			accept(ps, "exists");
		}
	}
	if (!is_ident(ps)) {
		skip_element(ps);
		return;
	}
	snprintf(col, sizeof col, "%s", ps->t.text);
	next(ps);
	/* The column's type and constraints: look for REFERENCES at this level. */
	for (;;) {
		int depth = 0;

		cname[0] = '\0';
		for (; ps->t.kind != T_END; next(ps)) {
			if (element_end(ps, &depth))
				return;
			if (depth == 0 && is_word(ps, "constraint")) {
				next(ps);
				if (is_ident(ps))
					snprintf(cname, sizeof cname, "%.63s", ps->t.text);
			} else if (depth == 0 && is_word(ps, "references"))
				break;
		}
		if (ps->t.kind == T_END)
			return;
		next(ps);
		if (!(e = new_edge(ps)))
			return;
		snprintf(e->referencing, sizeof e->referencing, "%s", table);
		snprintf(e->referencing_columns, sizeof e->referencing_columns, "%s", col);
		references(ps, e);
		edge_declared(ps, e, cname, line);
	}
}

int cleanup_deps_parse_sql(cleanup_dep_edge **edges, size_t *n, const char *name, const char *sql,
                           cleanup_error *err)
{
	parser ps;
	char table[130];

	memset(&ps, 0, sizeof ps);
	ps.lx.p = sql;
	ps.lx.line = 1;
	ps.name = name;
	ps.edges = edges;
	ps.n = n;
	ps.cap = *n;
	ps.err = err;
	next(&ps);
	while (ps.t.kind != T_END && ps.rc == CLEANUP_OK) {
		int line = ps.t.line;

		if (accept(&ps, "create")) {
			if (accept(&ps, "or"))
				accept(&ps, "replace");
			if (!accept(&ps, "global"))
				accept(&ps, "local");
			if (!accept(&ps, "temporary") && !accept(&ps, "temp"))
				accept(&ps, "unlogged");
			if (accept(&ps, "table")) {
				if (accept(&ps, "if")) {
					accept(&ps, "not");
					accept(&ps, "exists");
				}
				if (qname(&ps, table, sizeof table) && is_char(&ps, '(')) {
					next(&ps);
					while (ps.t.kind != T_END && !is_char(&ps, ')') && !is_char(&ps, ';') &&
					       ps.rc == CLEANUP_OK) {
						table_element(&ps, table, ps.t.line, false);
						if (is_char(&ps, ','))
							next(&ps);
					}
				}
			}
		} else if (accept(&ps, "alter")) {
			if (accept(&ps, "table")) {
				if (accept(&ps, "if"))
					accept(&ps, "exists");
				accept(&ps, "only");
				if (qname(&ps, table, sizeof table)) {
					while (ps.t.kind != T_END && !is_char(&ps, ';') && ps.rc == CLEANUP_OK) {
						if (accept(&ps, "add"))
							table_element(&ps, table, line, true);
						else
							skip_element(&ps);
						if (is_char(&ps, ',') || is_char(&ps, ')'))
							next(&ps);
					}
				}
			}
		}
		/* The rest of the statement. */
		while (ps.t.kind != T_END && !is_char(&ps, ';'))
			next(&ps);
		if (is_char(&ps, ';'))
			next(&ps);
	}
	return ps.rc;
}

/* ---- SHA-256 (FIPS 180-4), for the offline fingerprint ---- */

typedef struct sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t nbuf;
} sha256;

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(sha256 *s, const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 64; i++)
		w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 7] +
		       (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10));
	a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
	s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

static void sha256_hex(char out[65], const char *data, size_t len)
{
	static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	sha256 s;
	unsigned char tail[128];
	size_t full = len - len % 64, rest = len % 64, tl;
	uint64_t bits = (uint64_t)len * 8;
	int i;

	memcpy(s.h, h0, sizeof h0);
	for (size_t o = 0; o < full; o += 64)
		sha256_block(&s, (const unsigned char *)data + o);
	memset(tail, 0, sizeof tail);
	if (rest)
		memcpy(tail, data + full, rest);
	tail[rest] = 0x80;
	tl = rest + 1 + 8 <= 64 ? 64 : 128;
	for (i = 0; i < 8; i++)
		tail[tl - 1 - i] = (unsigned char)(bits >> (8 * i));
	sha256_block(&s, tail);
	if (tl == 128)
		sha256_block(&s, tail + 64);
	for (i = 0; i < 8; i++)
		snprintf(out + 8 * i, 9, "%08x", (unsigned)s.h[i]);
}

/* ---- The offline JSON document (strbuf_int.h) ---- */

/* A JSON string: controls, quotes and backslashes escaped; bytes >= 0x80
 * as they are (cli_json_doc repairs invalid UTF-8 on output). */
static void sb_json(strbuf *b, const char *s)
{
	strbuf_put(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			char esc[2] = {'\\', (char)c};

			strbuf_put(b, esc, 2);
		} else if (c < 0x20 || c == 0x7f) {
			strbuf_printf(b, "\\u%04x", c);
		} else {
			strbuf_put(b, s, 1);
		}
	}
	strbuf_put(b, "\"", 1);
}

/* "a, b" as a JSON array of strings. */
static void sb_json_list(strbuf *b, const char *s)
{
	bool first = true;

	strbuf_put(b, "[", 1);
	while (*s) {
		char item[256];
		size_t j = 0;

		while (*s == ' ' || *s == ',')
			s++;
		while (*s && *s != ',' && j + 1 < sizeof item)
			item[j++] = *s++;
		while (*s && *s != ',')
			s++;
		item[j] = '\0';
		if (!j)
			continue;
		if (!first)
			strbuf_put(b, ", ", 2);
		sb_json(b, item);
		first = false;
	}
	strbuf_put(b, "]", 1);
}

/* ---- The offline walk ---- */

static double now_ms(void)
{
	return cleanup_clock_mono() * 1000.0;
}

static int find_name(char (*names)[130], size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

static int add_gap(cleanup_dep_report *r, size_t *cap, const char *kind, const char *fmt, ...)
{
	char text[2048];
	va_list ap;

	if (r->ngaps == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		cleanup_dep_gap *g = realloc(r->gaps, c * sizeof *g);

		if (!g)
			return CLEANUP_ENOMEM;
		r->gaps = g;
		*cap = c;
	}
	snprintf(r->gaps[r->ngaps].kind, sizeof r->gaps[r->ngaps].kind, "%s", kind);
	/* Identifiers are UTF-8: a summary too long for its field is cut at a
	 * character boundary, not in the middle of a name's character. */
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	cleanup_text_copy(r->gaps[r->ngaps].summary, sizeof r->gaps[r->ngaps].summary, text);
	r->ngaps++;
	return CLEANUP_OK;
}

/* Appends NAME to the ", "-separated list BUF (first five, then "..."). */
static void list_add(char *buf, size_t len, int *count, const char *name)
{
	size_t l = strlen(buf);
	char item[400];

	/* A name that does not fit is cut at a character boundary. */
	if (*count < 5) {
		snprintf(item, sizeof item, "%s%s", *count ? ", " : "", name);
		cleanup_text_copy(buf + l, len - l, item);
	} else if (*count == 5) {
		cleanup_text_copy(buf + l, len - l, ", ...");
	}
	(*count)++;
}

/* Prepends "NAME -> " to the loop path PATH (LEN bytes). Returns false and
 * leaves PATH unchanged when the result would not fit: a loop path is cut
 * at a name, never inside one. */
static bool path_prepend(char *path, size_t len, const char *name)
{
	size_t a = strlen(name), b = strlen(path);

	if (a + 4 + b >= len)
		return false;
	memmove(path + a + 4, path, b + 1);
	memcpy(path, name, a);
	memcpy(path + a, " -> ", 4);
	return true;
}

/* Walks ALL (parsed, depth -1) breadth-first from the roots under L: the
 * walked edges go to R->edges in walk order, cycles and limits to
 * R->gaps. Same rules as cleanup.dependency_evidence(). */
static int walk_offline(cleanup_dep_report *r, cleanup_dep_edge *all, size_t nall, const cleanup_dep_limits *l,
                        cleanup_error *err)
{
	char (*visited)[130] = NULL;
	int *first = NULL, *last = NULL, *q = NULL, *qe = NULL, *qp = NULL;
	bool *cand = NULL, *taken = NULL, *left = NULL;
	size_t nvis = NROOTS, frontier_lo = 0, frontier_hi = NROOTS, gcap = 0, i, j;
	int depth = 0, ntables = 0, rc = CLEANUP_OK;
	int lo_n = 0, lo_c = 0, le_n = 0, dl_n = 0;
	char lo_tables[600] = "", le_cons[600] = "", dl_cons[600] = "";
	double t0 = now_ms();
	bool timed_out = false;

	visited = calloc(nall + NROOTS, sizeof *visited);
	first = calloc(nall + NROOTS, sizeof *first);
	last = calloc(nall + NROOTS, sizeof *last);
	q = calloc(nall + NROOTS, sizeof *q);
	qe = calloc(nall + NROOTS, sizeof *qe);
	qp = calloc(nall + NROOTS, sizeof *qp);
	cand = calloc(nall + 1, sizeof *cand);
	taken = calloc(nall + 1, sizeof *taken);
	left = calloc(nall + 1, sizeof *left);
	r->edges = calloc(nall + 1, sizeof *r->edges);
	if (!visited || !first || !last || !q || !qe || !qp || !cand || !taken || !left || !r->edges) {
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < NROOTS; i++) {
		snprintf(visited[i], sizeof visited[i], "%s", roots[i]);
		first[i] = -1;
	}
	while (frontier_lo < frontier_hi) {
		if (depth >= l->max_depth) {
			for (j = 0; j < nall; j++) {
				int p = find_name(visited, nvis, all[j].referenced);

				if (p >= (int)frontier_lo && p < (int)frontier_hi) {
					char nm[200];

					snprintf(nm, sizeof nm, "%s.%s", all[j].referencing, all[j].constraint_name);
					list_add(dl_cons, sizeof dl_cons, &dl_n, nm);
				}
			}
			if (dl_n && (rc = add_gap(r, &gcap, "depth-limit",
			                          "depth limit %d: %d constraint(s) into %zu table(s) at depth %d not walked (%s)",
			                          l->max_depth, dl_n, frontier_hi - frontier_lo, depth, dl_cons)))
				goto oom;
			break;
		}
		if (now_ms() - t0 > l->max_ms) {
			timed_out = true;
			break;
		}
		for (i = frontier_lo; i < frontier_hi; i++) {
			first[i] = -1;
			for (j = 0; j < nall; j++) {
				cleanup_dep_edge *e;
				int c;
				char nm[200];

				if (strcmp(all[j].referenced, visited[i]) != 0)
					continue;
				snprintf(nm, sizeof nm, "%s.%s", all[j].referencing, all[j].constraint_name);
				if ((int)r->n >= l->max_edges) {
					list_add(le_cons, sizeof le_cons, &le_n, nm);
					continue;
				}
				c = find_name(visited, nvis, all[j].referencing);
				if (c < 0 && ntables >= l->max_tables) {
					size_t z;

					for (z = 0; z < j && !(left[z] && strcmp(all[z].referencing, all[j].referencing) == 0); z++)
						;
					if (z == j)
						list_add(lo_tables, sizeof lo_tables, &lo_n, all[j].referencing);
					left[j] = true;
					lo_c++;
					continue;
				}
				if (c < 0) {
					snprintf(visited[nvis], sizeof visited[nvis], "%s", all[j].referencing);
					first[nvis] = -1;
					nvis++;
					ntables++;
				} else {
					cand[r->n] = true;
				}
				e = &r->edges[r->n];
				*e = all[j];
				e->depth = depth + 1;
				if (first[i] < 0)
					first[i] = (int)r->n;
				last[i] = (int)r->n;
				r->n++;
			}
		}
		frontier_lo = frontier_hi;
		frontier_hi = nvis;
		depth++;
	}
	/* Loops: as in 090_deps.sql, a BFS from every reached child of a
	 * candidate edge; edges are contiguous per parent (first/last). */
	for (i = 0; i < r->n && !timed_out; i++) {
		int c, nq = 1, qi, k;
		char path[600] = "";

		if (!cand[i] || taken[i])
			continue;
		if (now_ms() - t0 > l->max_ms) {
			timed_out = true;
			break;
		}
		c = find_name(visited, nvis, r->edges[i].referencing);
		q[0] = c;
		qe[0] = -1;
		qp[0] = -1;
		for (qi = 0; qi < nq; qi++) {
			int f = first[q[qi]];

			if (f < 0)
				continue;
			for (k = f; k <= last[q[qi]]; k++) {
				int ch = find_name(visited, nvis, r->edges[k].referencing), z;

				for (z = 0; z < nq && q[z] != ch; z++)
					;
				if (z == nq) {
					q[nq] = ch;
					qe[nq] = k;
					qp[nq] = qi;
					nq++;
				}
			}
		}
		/* Every candidate edge into C: P reachable from C closes a loop;
		 * one gap per child, parallel closing keys counted on it. */
		int more = 0;
		size_t closer = 0;
		bool cut = false;

		for (j = i; j < r->n; j++) {
			int p, z;

			if (!cand[j] || taken[j] || strcmp(r->edges[j].referencing, visited[c]) != 0)
				continue;
			p = find_name(visited, nvis, r->edges[j].referenced);
			for (z = 0; z < nq && q[z] != p; z++)
				;
			taken[j] = true;
			if (z == nq)
				continue;
			r->edges[j].cycle = true;
			if (path[0]) {
				more++;
				continue;
			}
			closer = j;
			snprintf(path, sizeof path, "%s", visited[p]);
			while (z > 0) {
				r->edges[qe[z]].cycle = true;
				z = qp[z];
				if (!cut && !path_prepend(path, sizeof path, visited[q[z]]))
					cut = true;
			}
			if (cut)
				path_prepend(path, sizeof path, "...");
		}
		if (path[0] &&
		    (rc = add_gap(r, &gcap, "cycle",
		                  "cycle: %s -> %s (closed by constraint %s.%s%s); the loop is not followed again, "
		                  "no drain order is implied", path, visited[c], r->edges[closer].referencing,
		                  r->edges[closer].constraint_name, more ? " and others" : "")))
			goto oom;
	}
	if (lo_c && (rc = add_gap(r, &gcap, "table-limit",
	                          "table limit %d: %d table(s) not walked (%s), %d constraint(s) left out",
	                          l->max_tables, lo_n, lo_tables, lo_c)))
		goto oom;
	if (le_n && (rc = add_gap(r, &gcap, "edge-limit", "edge limit %d: %d constraint(s) not walked (%s)",
	                          l->max_edges, le_n, le_cons)))
		goto oom;
	if (timed_out && (rc = add_gap(r, &gcap, "time-limit", "time limit %d ms: stopped at depth %d; %zu table(s) "
	                               "not expanded", l->max_ms, depth, frontier_hi - frontier_lo)))
		goto oom;
	for (i = 0; i < r->n; i++) {
		cleanup_dep_edge *e = &r->edges[i];
		char declared[96];
		bool root = false;

		snprintf(declared, sizeof declared, "%s", e->disposition);
		for (j = 0; j < NROOTS; j++)
			root = root || strcmp(e->referencing, roots[j]) == 0;
		snprintf(e->index_status, sizeof e->index_status, "not assessed");
		if (root)
			snprintf(e->disposition, sizeof e->disposition, "inventory: drained by cleanup steps");
		else if (strncmp(e->referencing, "cleanup.", 8) == 0)
			snprintf(e->disposition, sizeof e->disposition,
			         "engine bookkeeping: removed with its parent by the finalize step");
		else if (strcmp(e->on_delete, "cascade") == 0)
			snprintf(e->disposition, sizeof e->disposition, "unresolved: implicit cascade would do uncounted work");
		else if (strncmp(e->on_delete, "set ", 4) == 0)
			snprintf(e->disposition, sizeof e->disposition, "unresolved: detach (counts as a mutation) or delete");
		else if (strcmp(e->on_delete, "no action") == 0 || strcmp(e->on_delete, "restrict") == 0)
			snprintf(e->disposition, sizeof e->disposition, "unresolved: must be drained before its parent");
		else
			snprintf(e->disposition, sizeof e->disposition, "unresolved: unknown action");
		/* Where it was declared travels in ri_triggers' place (offline
		 * has no triggers): "declared in FILE:LINE". */
		snprintf(e->ri_triggers, sizeof e->ri_triggers, "declared in %s", declared);
	}
	r->elapsed_ms = now_ms() - t0;
	goto out;
oom:
	if (rc == CLEANUP_ENOMEM)
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
out:
	free(visited);
	free(first);
	free(last);
	free(q);
	free(qe);
	free(qp);
	free(cand);
	free(taken);
	free(left);
	return rc;
}

/* Qualifies unqualified names that match exactly one declared table. */
static void resolve_names(cleanup_dep_edge *all, size_t n)
{
	size_t i, j;

	for (i = 0; i < n * 2; i++) {
		char *name = i < n ? all[i].referencing : all[i - n].referenced;
		const char *hit = NULL;
		int hits = 0;

		if (strchr(name, '.'))
			continue;
		for (j = 0; j < n; j++) {
			const char *cands[2] = {all[j].referencing, all[j].referenced};

			for (int k = 0; k < 2; k++) {
				const char *dot = strchr(cands[k], '.');

				if (dot && strcmp(dot + 1, name) == 0 && (!hit || strcmp(hit, cands[k]) != 0)) {
					hit = cands[k];
					hits++;
				}
			}
		}
		if (hits == 1) {
			char q[130];

			snprintf(q, sizeof q, "%s", hit);
			memcpy(name, q, 130);
		}
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the .sql files of DIR/SUB (sorted) and parses each. */
static int parse_dir(cleanup_dep_edge **all, size_t *n, const char *dir, const char *sub, strbuf *files,
                     cleanup_error *err)
{
	char path[4096], name[512];
	char **names = NULL;
	size_t nn = 0, cap = 0, i;
	DIR *d;
	struct dirent *de;
	int rc = CLEANUP_OK;

	snprintf(path, sizeof path, "%s/%s", dir, sub);
	if (!(d = opendir(path)))
		return cleanup_error_set(err, CLEANUP_EINVAL, "--sql-dir %s: cannot read %s/: %s (expected the project's "
		                         "sql/ directory with schema/ and functions/)", dir, sub, strerror(errno));
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l < 5 || strcmp(de->d_name + l - 4, ".sql") != 0)
			continue;
		if (nn == cap) {
			char **g = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof *g);

			if (!g) {
				rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
				goto out;
			}
			names = g;
		}
		if (!(names[nn] = strdup(de->d_name))) {
			rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
			goto out;
		}
		nn++;
	}
	if (nn)
		qsort(names, nn, sizeof *names, cmp_str);
	for (i = 0; i < nn && rc == CLEANUP_OK; i++) {
		FILE *f;
		char *text = NULL;
		long len;

		snprintf(path, sizeof path, "%s/%s/%s", dir, sub, names[i]);
		snprintf(name, sizeof name, "%s/%s", sub, names[i]);
		if (!(f = fopen(path, "rb"))) {
			rc = cleanup_error_set(err, CLEANUP_ERROR, "cannot read %s: %s", path, strerror(errno));
			break;
		}
		if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && len < 16L * 1024 * 1024 &&
		    fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)len + 1)) &&
		    fread(text, 1, (size_t)len, f) == (size_t)len) {
			text[len] = '\0';
			rc = cleanup_deps_parse_sql(all, n, name, text, err);
			strbuf_printf(files, "%s%s", files->len ? ", " : "", name);
		} else {
			rc = cleanup_error_set(err, CLEANUP_ERROR, "cannot read %s (at most 16 MB)", path);
		}
		free(text);
		fclose(f);
	}
out:
	for (i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

/* The offline JSON document and its fingerprint (over roots, edges, gaps,
 * limits and parser_limits, not elapsed_ms). */
static int offline_json(cleanup_dep_report *r, const cleanup_dep_limits *l, const char *source, cleanup_error *err)
{
	strbuf core = {0}, doc = {0};
	size_t i, j, reftables = 0;
	int rc = CLEANUP_OK;

	for (i = 0; i < r->n; i++) {
		bool seen = strncmp(r->edges[i].referencing, "inventory.", 10) == 0 &&
		            (strcmp(r->edges[i].referencing, roots[0]) == 0 || strcmp(r->edges[i].referencing, roots[1]) == 0 ||
		             strcmp(r->edges[i].referencing, roots[2]) == 0);

		for (j = 0; j < i && !seen; j++)
			seen = strcmp(r->edges[j].referencing, r->edges[i].referencing) == 0;
		reftables += !seen;
	}

	strbuf_printf(&core, "\"roots\": [\"%s\", \"%s\", \"%s\"], \"edges\": [", roots[0], roots[1], roots[2]);
	for (i = 0; i < r->n; i++) {
		const cleanup_dep_edge *e = &r->edges[i];

		strbuf_printf(&core, "%s{\"depth\": %d, \"constraint_name\": ", i ? ", " : "", e->depth);
		sb_json(&core, e->constraint_name);
		strbuf_put(&core, ", \"referencing\": ", 17);
		sb_json(&core, e->referencing);
		strbuf_put(&core, ", \"referencing_columns\": ", 25);
		sb_json_list(&core, e->referencing_columns);
		strbuf_put(&core, ", \"referenced\": ", 16);
		sb_json(&core, e->referenced);
		strbuf_put(&core, ", \"referenced_columns\": ", 24);
		sb_json_list(&core, e->referenced_columns);
		strbuf_put(&core, ", \"on_delete\": ", 15);
		sb_json(&core, e->on_delete);
		strbuf_printf(&core, ", \"is_deferrable\": %s, \"declared_in\": ", e->deferrable ? "true" : "false");
		sb_json(&core, e->ri_triggers + strlen("declared in "));
		strbuf_printf(&core, ", \"validated\": null, \"enforced\": null, \"has_index\": null, "
		                 "\"index_status\": \"not assessed\", \"cycle\": %s, \"disposition\": ",
		          e->cycle ? "true" : "false");
		sb_json(&core, e->disposition);
		strbuf_put(&core, "}", 1);
	}
	strbuf_put(&core, "], \"gaps\": [", 12);
	for (i = 0; i < r->ngaps; i++) {
		strbuf_printf(&core, "%s{\"kind\": ", i ? ", " : "");
		sb_json(&core, r->gaps[i].kind);
		strbuf_put(&core, ", \"summary\": ", 13);
		sb_json(&core, r->gaps[i].summary);
		strbuf_put(&core, "}", 1);
	}
	strbuf_printf(&core, "], \"limits\": {\"max_depth\": %d, \"max_tables\": %d, \"max_edges\": %d, \"max_ms\": %d}, "
	                 "\"parser_limits\": [", l->max_depth, l->max_tables, l->max_edges, l->max_ms);
	for (i = 0; cleanup_deps_parser_limits[i]; i++) {
		if (i)
			strbuf_put(&core, ", ", 2);
		sb_json(&core, cleanup_deps_parser_limits[i]);
	}
	strbuf_put(&core, "]", 1);
	if (core.oom) {
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		goto out;
	}
	sha256_hex(r->fingerprint, core.s, core.len);
	strbuf_put(&doc, "{\"source\": \"offline\", \"files\": ", 31);
	sb_json(&doc, source);
	strbuf_put(&doc, ", ", 2);
	strbuf_put(&doc, core.s, core.len);
	strbuf_printf(&doc, ", \"referencing_tables\": %zu, \"fingerprint\": \"%s\", \"fingerprint_covers\": [\"roots\", "
	                "\"edges\", \"gaps\", \"limits\", \"parser_limits\"], \"elapsed_ms\": %.1f}",
	          reftables, r->fingerprint, r->elapsed_ms);
	if (doc.oom) {
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		goto out;
	}
	r->json = doc.s;
	doc.s = NULL;
out:
	free(core.s);
	free(doc.s);
	return rc;
}

int cleanup_deps_offline(cleanup_dep_report *out, const char *sql_dir, const cleanup_dep_limits *l,
                         cleanup_error *err)
{
	cleanup_dep_edge *all = NULL;
	size_t n = 0;
	strbuf files = {0};
	int rc, i;

	memset(out, 0, sizeof *out);
	out->offline = true;
	if ((rc = cleanup_deps_check_limits(l, err)))
		return rc;
	if (sql_dir) {
		struct stat st;

		if (stat(sql_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
			rc = cleanup_error_set(err, CLEANUP_EINVAL, "--sql-dir %s: not a directory", sql_dir);
			goto out;
		}
		if ((rc = parse_dir(&all, &n, sql_dir, "schema", &files, err)) ||
		    (rc = parse_dir(&all, &n, sql_dir, "functions", &files, err)))
			goto out;
		snprintf(out->source, sizeof out->source, "%s: %s", sql_dir, files.s ? files.s : "");
	} else {
		for (i = 0; i < sql_schema_count && rc == CLEANUP_OK; i++) {
			char name[300];

			snprintf(name, sizeof name, "schema/%s.sql", sql_schema_files[i].name);
			rc = cleanup_deps_parse_sql(&all, &n, name, sql_schema_files[i].text, err);
		}
		for (i = 0; i < sql_function_count && rc == CLEANUP_OK; i++) {
			char name[300];

			snprintf(name, sizeof name, "functions/%s.sql", sql_function_files[i].name);
			rc = cleanup_deps_parse_sql(&all, &n, name, sql_function_files[i].text, err);
		}
		if (rc)
			goto out;
		snprintf(out->source, sizeof out->source, "the embedded sql/ bundle (%d schema and %d function files, "
		         "sha256 %.12s)", sql_schema_count, sql_function_count, sql_bundle_sha256);
	}
	if (files.oom) {
		rc = cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		goto out;
	}
	resolve_names(all, n);
	if ((rc = walk_offline(out, all, n, l, err)))
		goto out;
	rc = offline_json(out, l, out->source, err);
out:
	free(all);
	free(files.s);
	return rc;
}

/* Foreign-key dependency evidence (seed 001): the declared foreign-key graph
 * reachable from the inventory tables, walked breadth-first with a visited
 * set under limits on depth, tables, edges and time; cycles and every limit
 * reached are recorded as gaps naming what was left out. From the catalog:
 * delete actions, validation, enforcement (the constraint's RI triggers and
 * their enabled state), referencing indexes, user triggers, row security and
 * a fingerprint. Offline: the same walk over the foreign keys declared in
 * the project's sql/ files, with the parser's limits stated. Evidence only:
 * it proposes dispositions and never deletes or runs SQL built from the
 * graph. */
#ifndef CLEANUP_DEPS_H
#define CLEANUP_DEPS_H

#include <stdbool.h>
#include <stddef.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

typedef struct cleanup_dep_edge {
	int depth;                  /* hops from the nearest inventory root */
	char constraint_name[64];
	char referencing[130];      /* schema.table */
	char referencing_columns[200];
	char referenced[130];
	char referenced_columns[200];
	char on_delete[16];         /* no action, restrict, cascade, set null, set default, unknown */
	bool deferrable;
	bool validated;             /* convalidated; offline: false (not assessed) */
	bool enforced;              /* every RI trigger fires in ordinary sessions */
	bool has_index;             /* a valid, ready, nonpartial B-tree leading with the FK columns */
	char index_status[16];      /* present, unproven, absent; offline: "not assessed" */
	char index_name[130];
	char triggers[200];         /* user triggers on the referencing table, with state */
	char ri_triggers[400];      /* the constraint's RI triggers: table, function, state */
	bool row_security;          /* relrowsecurity of the referencing table */
	bool force_row_security;    /* relforcerowsecurity */
	bool cycle;                 /* on a loop the walk found */
	char disposition[96];       /* proposed; unresolved ones need a domain decision */
} cleanup_dep_edge;

/* A gap: a cycle or a limit reached, naming what was left out. */
typedef struct cleanup_dep_gap {
	char kind[16];              /* cycle, depth-limit, table-limit, edge-limit, time-limit */
	char summary[600];
} cleanup_dep_gap;

typedef struct cleanup_dep_limits {
	int max_depth;              /* 1-64, default 16 */
	int max_tables;             /* 1-1024, default 64 */
	int max_edges;              /* 1-100000, default 4096 */
	int max_ms;                 /* 1-600000, default 2000 */
} cleanup_dep_limits;

#define CLEANUP_DEP_LIMITS_DEFAULT {16, 64, 4096, 2000}

typedef struct cleanup_dep_report {
	cleanup_dep_edge *edges;    /* malloc'd, n of them */
	size_t n;
	cleanup_dep_gap *gaps;      /* malloc'd, ngaps of them */
	size_t ngaps;
	char *json;                 /* the evidence document, malloc'd */
	char fingerprint[65];       /* SHA-256 over roots, edges, gaps, limits */
	double elapsed_ms;          /* as measured by the walker; not fingerprinted */
	bool offline;
	char source[512];           /* "catalog" or the sql/ files read */
} cleanup_dep_report;

/* The parser limits of the offline report, one sentence each, NULL
 * terminated (also in its JSON as "parser_limits"). */
extern const char *const cleanup_deps_parser_limits[];

/* Checks LIMITS' ranges; CLEANUP_EINVAL naming the value and range. */
int cleanup_deps_check_limits(const cleanup_dep_limits *limits, cleanup_error *err);

/* Reads the evidence from the catalog of ENGINE's database into *OUT (free
 * it with cleanup_deps_report_free, also on failure). Catalog queries only,
 * fixed text with parameters. */
int cleanup_deps_read(cleanup_dep_report *out, cleanup_engine *engine, const cleanup_dep_limits *limits,
                      cleanup_error *err);

/* The offline report: no database. Parses the CREATE TABLE / ALTER TABLE
 * foreign keys of the sql/ files in SQL_DIR (schema/ then functions/, each
 * sorted), or of the embedded bundle when SQL_DIR is NULL, and walks them
 * under LIMITS. */
int cleanup_deps_offline(cleanup_dep_report *out, const char *sql_dir, const cleanup_dep_limits *limits,
                         cleanup_error *err);

/* Parses one SQL text (NAME for messages) and appends its foreign keys to
 * the edge list *EDGES (*N of them) (malloc'd; depth -1, not yet walked). For tests
 * and the fuzzer. */
int cleanup_deps_parse_sql(cleanup_dep_edge **edges, size_t *n, const char *name, const char *sql,
                           cleanup_error *err);

void cleanup_deps_report_free(cleanup_dep_report *r);

#endif

/* Foreign-key dependency evidence (seed 001): the declared foreign-key graph
 * reachable from the inventory tables, with delete actions, validation,
 * referencing indexes and triggers, cycles and limit gaps, and a
 * fingerprint. Evidence only: it proposes dispositions and never deletes. */
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
	char on_delete[16];         /* no action, restrict, cascade, set null, set default */
	bool deferrable;
	bool validated;
	bool has_index;             /* a valid B-tree leading with the FK columns */
	char index_name[130];
	char triggers[200];         /* user triggers on the referencing table */
	bool cycle;
	char disposition[96];       /* proposed; unresolved ones need a domain decision */
} cleanup_dep_edge;

/* Walks at most MAX_DEPTH hops (1-64) and MAX_TABLES referencing tables
 * (1-1024). *EDGES is a malloc'd array of *N edges (free() it). *JSON, when
 * not NULL, receives the server-built evidence document (malloc'd) and
 * FINGERPRINT (65 bytes) its SHA-256 fingerprint. */
int cleanup_deps(cleanup_dep_edge **edges, size_t *n, char **json, char *fingerprint,
                 cleanup_engine *engine, int max_depth, int max_tables, cleanup_error *err);

#endif

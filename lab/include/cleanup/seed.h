/* Demo data: servers, libraries and items created with set-based SQL. */
#ifndef CLEANUP_SEED_H
#define CLEANUP_SEED_H

#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

typedef struct cleanup_seed_spec {
	int servers;            /* new servers */
	int libraries;          /* libraries per server */
	int64_t items;          /* items per library */
	int dependents;         /* dependent records per item, on average (0-50; seed 001) */
} cleanup_seed_spec;

typedef struct cleanup_seed_result {
	int servers;
	int libraries;
	int64_t items;
	int64_t dependents;     /* dependent records of every kind */
	double seconds;
} cleanup_seed_result;

/* Installs the lab (cleanup_lab_install) when needed, then adds SPEC's
 * servers, libraries and items in one transaction. Names are
 * unique ("server-N", "library-N-M"); external IDs are "ext-<library>-<n>". */
int cleanup_seed(cleanup_seed_result *out, cleanup_engine *engine, const cleanup_seed_spec *spec,
                 cleanup_error *err);

#endif

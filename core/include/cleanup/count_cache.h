/* The per-library item-count cache of seed 002 (docs/count-cache.md):
 * bounded visits that count a watched library in pages of at most 20,000
 * rows, and the report of every library's cached count with its state.
 *
 * The cache lives in the database (sql/functions/075_count_cache.sql);
 * this module runs its visits and reads its report. A visit is one
 * transaction on the engine's connection; no transaction spans visits.
 * Not thread-safe (one engine, one thread). */
#ifndef CLEANUP_COUNT_CACHE_H
#define CLEANUP_COUNT_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

/* A library's cache state: "fresh" (count is the library's count),
 * "dirty" (published, but changed since), "expired" (not confirmed by a
 * visit within the freshness window), "withheld" (no count; reason says
 * why: building, restart required, busy, capacity), "unwatched". */
#define CLEANUP_COUNT_STATE_LEN 12
#define CLEANUP_COUNT_REASON_LEN 320

/* What one visit did and the library's state after it. */
typedef struct cleanup_count_visit {
	int64_t library_id;
	int slot;                 /* registry slot, 0 when none */
	char state[CLEANUP_COUNT_STATE_LEN];
	char reason[CLEANUP_COUNT_REASON_LEN]; /* "" when fresh */
	char action[24];          /* watch, build, repair, split, release, verify, restart..., mismatch, none */
	int64_t ids_read;         /* ids read by the visit (at most 20,001) */
	int64_t count;            /* -1 unless fresh */
	int64_t published_count;  /* -1 when none */
	int64_t revision, epoch, pages, dirty_pages;
} cleanup_count_visit;

/* One library in the report. */
typedef struct cleanup_count_row {
	int64_t library_id, server_id;
	char name[CLEANUP_NAME_SIZE];
	int slot;                 /* 0 when unwatched */
	char state[CLEANUP_COUNT_STATE_LEN];
	char reason[CLEANUP_COUNT_REASON_LEN];
	int64_t count;            /* -1 unless fresh */
	int64_t published_count;  /* -1 when never published */
	int64_t revision, applied_revision, epoch, pages, dirty_pages;
	double visit_age_s;       /* seconds since the last visit, -1 when none */
	char last_restart[200];   /* why the current epoch began, "" when unwatched */
} cleanup_count_row;

/* Runs one visit of LIBRARY_ID (it starts a watch when there is none).
 * NOW: an ISO 8601 timestamp to inject (tests), or NULL for the clock.
 * A withheld count is not a failure (OUT->state says so). Fails with
 * CLEANUP_ENOTFOUND when the library does not exist; OUT is filled on
 * success only. */
int cleanup_count_visit_once(cleanup_count_visit *out, cleanup_engine *engine, int64_t library_id,
                             const char *now, cleanup_error *err);

/* Visits LIBRARY_ID until its state is fresh, or a visit changed nothing
 * (withheld for capacity or busy, nothing left to do), or MAX_VISITS
 * visits were made. *OUT is the last visit; *VISITS (may be NULL) their
 * number. Fails as cleanup_count_visit_once(). */
int cleanup_count_settle(cleanup_count_visit *out, int *visits, cleanup_engine *engine, int64_t library_id,
                         int max_visits, const char *now, cleanup_error *err);

/* Every library with its cache state at NOW (NULL: the clock), in server
 * and id order. *OUT is malloc'd (free() it), *N its length. */
int cleanup_count_report(cleanup_count_row **out, size_t *n, cleanup_engine *engine, const char *now,
                         cleanup_error *err);

#endif

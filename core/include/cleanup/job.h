/* Durable cleanup jobs: create, collect the seen-ID manifest, seal, pause,
 * resume, cancel, and read them back.
 *
 * Each call is one transaction on the server (a function in sql/functions/);
 * refusals come back as CLEANUP_EREFUSED, lock contention as CLEANUP_EBUSY,
 * both with the server's message in the error record.
 */
#ifndef CLEANUP_JOB_H
#define CLEANUP_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cleanup/engine.h"
#include "cleanup/error.h"

/* Limits of one append call (C1). */
#define CLEANUP_APPEND_MAX 128
#define CLEANUP_EXTERNAL_ID_MAX 256 /* bytes of UTF-8 */

/* A job row as the engine reports it. Strings are NUL-terminated and
 * truncated to fit; -1 stands for SQL NULL in the int64 fields that may
 * be NULL. json is the server-built JSON document of the row (PRODUCT.md
 * keys), owned by the struct: release with cleanup_job_reset(). */
typedef struct cleanup_job {
	int64_t id;
	char kind[24];          /* prune, remove-library, remove-server */
	char mode[24];          /* bounded, single-transaction */
	int64_t server_id;
	int64_t library_id;     /* -1 for remove-server */
	char target_name[CLEANUP_NAME_SIZE];
	char phase[16];         /* collecting, paused, draining, finalizing, completed, cancelled */
	int32_t step_no;
	int32_t pass_no;
	int64_t examined;       /* rows passed by its steps: visited + kept */
	int64_t visited, deleted, moved, absent, retained, kept;
	int32_t libraries_deleted, servers_deleted;
	/* Seed 001: claims (claimed - released are in flight) and the dependent
	 * records deleted or detached, by kind. */
	int64_t claimed, released;
	int64_t retries_deleted, previews_deleted, collections_deleted, sync_status_deleted, history_detached;
	int64_t manifest_count;
	int64_t expected_count; /* -1 until sealed */
	int64_t high_water_id;  /* -1 until sealed */
	int64_t cursor_library_id;
	int64_t cursor_id;      /* pass 1 in id order: the last item id taken */
	/* Pass 1 of a prune in external-ID order (schema 12, key_order set):
	 * the last external ID taken ("" before the first step); cursor_id
	 * stays 0 in that pass. key_order is 0 for removals and for a prune
	 * sealed before schema 12, whose pass 1 walks ids. */
	int key_order;
	char key_cursor[264];
	int64_t total_estimate; /* items in scope when sealed, -1 before */
	/* Schema 13 (T7): the rows in scope at the seal (a removal: at its
	 * creation), -1 when unknown (older jobs); at completion scope_count =
	 * deleted + kept + moved + absent. moved_early and absent_early: rows
	 * that left the scope before a step reached them (in moved, absent). */
	int64_t scope_count, moved_early, absent_early;
	/* T3: since when and by whom the job is held up (its runner's last busy
	 * answer; "" when it is not): who, in one line of text. */
	char blocked_since[40];
	char blocked_text[1024];
	int64_t busy_retries;
	char last_error[512];
	char created_at[40], sealed_at[40], updated_at[40], finished_at[40];
	char purged_at[40];     /* when `cleanupctl purge` removed its manifest and step records; "" when not */
	/* Who runs it now and how it goes (cleanup.job_live_json),
	 * read by cleanup_jobs_list() and cleanup_job_get(); elsewhere pid 0,
	 * "" and -1. The runner is the session holding its runner lease. */
	int live_runner_pid;    /* 0: nobody runs it */
	char live_runner_host[64];  /* the host its process runs on */
	int live_runner_os_pid;     /* its OS process id there (what to stop), 0 when unknown */
	char live_runner_app[64];   /* its application_name */
	bool live_no_runner;    /* draining or finalizing (library closed) and nobody runs it */
	double live_closed_s;   /* seconds since its library (server) was closed to writers, -1: not closed */
	double live_last_step_age_s; /* seconds since its newest step ended, -1: no step */
	double live_pace;       /* the current runner's pace in rows a second, -1: unknown */
	double live_eta_s;      /* at that pace, -1: unknown */
	char *json;
} cleanup_job;

/* Frees what JOB owns (its json) and zeroes it. Accepts NULL. */
void cleanup_job_reset(cleanup_job *job);

/* True when PHASE is completed or cancelled. */
int cleanup_job_phase_is_final(const char *phase);

/* Creates a job. KIND is "prune", "remove-library" or "remove-server";
 * TARGET is the library id (server id for remove-server); MODE is NULL or
 * "bounded", or "single-transaction" (remove-library only, comparison
 * mode). Fills *OUT on success. EREFUSED when the server already has an
 * unfinished job; EBUSY when its coordinator or admission row is locked. */
int cleanup_job_create(cleanup_job *out, cleanup_engine *engine, const char *kind, int64_t target,
                       const char *mode, cleanup_error *err);

/* Reads job JOB_ID into *OUT. ENOTFOUND when there is no such job. */
int cleanup_job_get(cleanup_job *out, cleanup_engine *engine, int64_t job_id, cleanup_error *err);

/* The result of one append call. */
typedef struct cleanup_append_result {
	int added;       /* IDs new to the manifest */
	int duplicates;  /* IDs it already held (C2) */
	cleanup_job job; /* the job after the call */
} cleanup_append_result;

/* Appends N (at most CLEANUP_APPEND_MAX) external IDs to the manifest of
 * collecting prune job JOB_ID, all or nothing. Every ID is validated first
 * with cleanup_external_id_check(); the first bad one fails the call with
 * EINVAL before anything is sent. Release OUT->job with cleanup_job_reset. */
int cleanup_job_append(cleanup_append_result *out, cleanup_engine *engine, int64_t job_id,
                       const char *const *ids, size_t n, cleanup_error *err);

/* Totals of a run of append calls. */
typedef struct cleanup_append_totals {
	int64_t calls;          /* calls that committed */
	int64_t added;          /* IDs new to the manifest */
	int64_t duplicates;     /* IDs it already held */
	int64_t manifest_count; /* the manifest's size after the last committed call, -1 before */
} cleanup_append_totals;

/* Appends N external IDs (any number) to collecting prune job JOB_ID in
 * calls of at most CLEANUP_APPEND_MAX, each its own transaction, all or
 * nothing per call (C1). Every ID is validated before anything is sent.
 * The calls share round trips: up to CLEANUP_APPEND_WINDOW of them (or
 * $CLEANUP_APPEND_WINDOW, 1 to 64) are in flight at once (libpq pipeline
 * mode). They also share WAL flushes: every call but the last commits
 * without waiting for its flush, and the last one's synchronous commit
 * flushes them all (after a failed call, an empty synchronous call does),
 * so the run is durable when this returns ($CLEANUP_APPEND_FLUSH=call:
 * every call waits for its own flush). After the first failing call no
 * further call is sent; calls already in flight finish, are flushed and
 * are counted. Adds what
 * committed durably to *TOTALS (the caller zeroes it once) and returns
 * the first failure; when the connection is lost, the run's calls are not
 * added (they may have committed; a rerun is idempotent). N == 0 sends
 * one empty call, which checks the job. */
#define CLEANUP_APPEND_WINDOW 16
int cleanup_job_append_many(cleanup_append_totals *totals, cleanup_engine *engine, int64_t job_id,
                            const char *const *ids, size_t n, cleanup_error *err);

/* Checks one external ID against the manifest rules (C10, the same as the
 * inventory's): non-empty, at most CLEANUP_EXTERNAL_ID_MAX bytes, valid
 * UTF-8, no control characters (C0, DEL, C1), no space (U+0020) at either
 * end, no invisible character (cleanup_external_id_invisible). Returns 0
 * when good, else CLEANUP_EINVAL with the rule broken written to WHY
 * (WHYLEN bytes, may be NULL). Pure; no database. */
int cleanup_external_id_check(const char *id, size_t len, char *why, size_t whylen);

/* True for a character the external-ID rule refuses as invisible: U+00A0,
 * U+00AD, U+034F, U+061C, U+115F-U+1160, U+1680, U+17B4-U+17B5,
 * U+180B-U+180F, U+2000-U+200F, U+2028-U+202F, U+205F-U+206F, U+3000,
 * U+3164, U+FEFF, U+FFA0, U+FFF9-U+FFFB, U+E0000-U+E007F (spaces other
 * than U+0020, zero-width, format and bidirectional controls, fillers). */
bool cleanup_external_id_invisible(uint32_t cp);

/* Writes a printable, quoted form of the LEN bytes at ID into BUF (BUFLEN
 * bytes, always NUL-terminated) for messages: printable text as is,
 * control characters, backslashes and bytes that are not valid UTF-8 as
 * escapes (\t, \x1b, \u0085, \\), cut with "..." when it does not fit.
 * Returns BUF. Pure. */
char *cleanup_quote_id(char *buf, size_t buflen, const char *id, size_t len);

/* Seals prune job JOB_ID with its EXPECTED unique count (C3): fences the
 * library, records the high-water ID and moves the job to draining.
 * EREFUSED when the count differs or the phase is not collecting; EBUSY when
 * a sync writer holds the library's admission row. */
int cleanup_job_seal(cleanup_job *out, cleanup_engine *engine, int64_t job_id, int64_t expected,
                     cleanup_error *err);

/* ACTION is "pause", "resume" or "cancel" (C8). */
int cleanup_job_transition(cleanup_job *out, cleanup_engine *engine, int64_t job_id,
                           const char *action, cleanup_error *err);

/* The unfinished jobs and the most recent finished ones, the unfinished
 * first, newest first within each, at most LIMIT recent ones
 * plus every unfinished one. Each carries its live fields (runner, last
 * step, ETA). *OUT is a calloc'd array of *N jobs: release with
 * cleanup_jobs_free(*OUT, *N). */
int cleanup_jobs_list(cleanup_job **out, size_t *n, cleanup_engine *engine, int limit,
                      cleanup_error *err);

/* Frees an array from cleanup_jobs_list(). Accepts NULL. */
void cleanup_jobs_free(cleanup_job *jobs, size_t n);

#endif

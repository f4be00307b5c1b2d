/* A disposable local PostgreSQL cluster for demos and tests.
 *
 * initdb + pg_ctl on a data directory the caller chooses; Unix socket only
 * (listen_addresses = ''), trust authentication for the socket, which lives
 * in a private directory. Run as root, the server runs as an unprivileged
 * user (postgres, else nobody) and the data lives where that user can reach
 * it. Start and stop are idempotent.
 */
#ifndef CLEANUP_SANDBOX_H
#define CLEANUP_SANDBOX_H

#include <stdbool.h>
#include "cleanup/error.h"

#define CLEANUP_SANDBOX_DB "cleanup_lab"
#define CLEANUP_SANDBOX_PORT 54329
#define CLEANUP_PATH_MAX 4096

typedef struct cleanup_sandbox {
	char dir[CLEANUP_PATH_MAX];      /* what the user chose (absolute) */
	char datadir[CLEANUP_PATH_MAX];  /* PGDATA */
	char sockdir[CLEANUP_PATH_MAX];  /* unix_socket_directories (< 100 bytes) */
	char bindir[CLEANUP_PATH_MAX];   /* PostgreSQL server binaries */
	char logfile[CLEANUP_PATH_MAX];
	char run_as[64];                 /* OS user running the server */
	int port;
	bool running;
	bool initialized;
	int pid;                         /* postmaster pid when running */
} cleanup_sandbox;

/* The default directory: $CLEANUP_SANDBOX_DIR, else .sandbox in the source
 * tree this binary was built from. Writes into BUF (LEN bytes). */
void cleanup_sandbox_default_dir(char *buf, size_t len);

/* Resolves paths for DIR (NULL: the default) and finds the PostgreSQL
 * binaries (pg_config --bindir, then /usr/lib/postgresql/N/bin, newest
 * first). ERROR with a clear message when no server binaries exist. */
int cleanup_sandbox_init(cleanup_sandbox *out, const char *dir, cleanup_error *err);

/* initdb when needed, start when not running, wait until it accepts
 * connections, create the cleanup_lab database when missing. Idempotent. */
int cleanup_sandbox_start(cleanup_sandbox *sb, cleanup_error *err);

/* Fast shutdown when running. Idempotent. */
int cleanup_sandbox_stop(cleanup_sandbox *sb, cleanup_error *err);

/* Fills sb->running / sb->pid / sb->initialized. */
int cleanup_sandbox_status(cleanup_sandbox *sb, cleanup_error *err);

/* The conninfo for DBNAME (NULL: cleanup_lab) into BUF. */
void cleanup_sandbox_conninfo(const cleanup_sandbox *sb, const char *dbname, char *buf, size_t len);

#endif

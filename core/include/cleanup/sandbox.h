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

/* The Unix socket path limit: sun_path holds 108 bytes with the NUL, and
 * the server's socket is SOCKDIR + "/.s.PGSQL.<port>". */
#define CLEANUP_SOCKET_PATH_MAX 107
/* PostgreSQL's own path limit (MAXPGPATH 1024) leaves this much for DIR. */
#define CLEANUP_SANDBOX_DIR_MAX 900

/* Computes the paths of a sandbox in absolute directory DIR into SB (dir,
 * datadir, logfile, sockdir; port = CLEANUP_SANDBOX_PORT). REACHABLE says
 * whether the server's user can enter DIR: when it cannot, the cluster
 * lives in /tmp/cleanupctl-<hash of DIR> instead. The socket directory is
 * <base>/sock unless the socket path would pass CLEANUP_SOCKET_PATH_MAX;
 * then it is /tmp/cleanupctl-sock-<hash>. EINVAL when DIR is not absolute
 * or longer than CLEANUP_SANDBOX_DIR_MAX. Pure: touches nothing. */
int cleanup_sandbox_layout(cleanup_sandbox *sb, const char *dir, bool reachable, cleanup_error *err);

/* The default directory: $CLEANUP_SANDBOX_DIR, else .sandbox in the source
 * tree this binary was built from. Writes into BUF (LEN bytes). */
void cleanup_sandbox_default_dir(char *buf, size_t len);

/* Resolves paths for DIR (NULL: the default) and finds the PostgreSQL
 * binaries: $PG_BINDIR when set (an error when it lacks initdb, pg_ctl or
 * postgres), else pg_config --bindir, else /usr/lib/postgresql/N/bin,
 * newest first. ERROR with a clear message when no server binaries exist. */
int cleanup_sandbox_init(cleanup_sandbox *out, const char *dir, cleanup_error *err);

/* initdb when needed, start when not running, wait until it accepts
 * connections, create the cleanup_lab database when missing. Idempotent. */
int cleanup_sandbox_start(cleanup_sandbox *sb, cleanup_error *err);

/* Fast shutdown when running. Idempotent. */
int cleanup_sandbox_stop(cleanup_sandbox *sb, cleanup_error *err);

/* Fills sb->running / sb->pid / sb->initialized. A postmaster.pid whose
 * process is gone, a zombie or not a postgres process (a stale file after
 * kill -9, or a reused pid) counts as not running. */
int cleanup_sandbox_status(cleanup_sandbox *sb, cleanup_error *err);

/* The conninfo for DBNAME (NULL: cleanup_lab) into BUF. */
void cleanup_sandbox_conninfo(const cleanup_sandbox *sb, const char *dbname, char *buf, size_t len);

#endif

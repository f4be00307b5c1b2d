/* A disposable local PostgreSQL cluster for demos and tests.
 *
 * initdb + pg_ctl on a data directory the caller chooses; Unix socket only
 * (listen_addresses = ''), trust authentication for the socket, which lives
 * in a private directory. Run as root, the server runs as an unprivileged
 * user (postgres, else nobody) and the data lives where that user can reach
 * it. Start and stop are idempotent.
 *
 * Trust: no directory is created, handed over or chmod-ed by a path someone
 * else could have planted. Directories under /tmp are made by mkdtemp and
 * remembered in DIR/cleanupctl.state; every directory handed to the
 * server's user is opened without following symlinks, checked (owner, not
 * group or world writable) and changed through its descriptor. Paths are
 * quoted for postgresql.conf and for the conninfo.
 */
#ifndef CLEANUP_SANDBOX_H
#define CLEANUP_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include "cleanup/error.h"

#define CLEANUP_SANDBOX_DB "cleanup_lab"
#define CLEANUP_SANDBOX_PORT 54329
#define CLEANUP_PATH_MAX 4096
/* The state file in DIR naming the private directories under /tmp. */
#define CLEANUP_SANDBOX_STATE "cleanupctl.state"
/* mkdtemp templates of those directories. */
#define CLEANUP_SANDBOX_TMP_BASE "/tmp/cleanupctl-XXXXXX"
#define CLEANUP_SANDBOX_TMP_SOCK "/tmp/cleanupctl-sock-XXXXXX"

typedef struct cleanup_sandbox {
	char dir[CLEANUP_PATH_MAX];      /* what the user chose (absolute) */
	char base[CLEANUP_PATH_MAX];     /* holds data/ and log/: DIR or private_base; "" until start makes it */
	char datadir[CLEANUP_PATH_MAX];  /* PGDATA ("" while base is "") */
	char sockdir[CLEANUP_PATH_MAX];  /* unix_socket_directories ("" until start makes it) */
	char bindir[CLEANUP_PATH_MAX];   /* PostgreSQL server binaries */
	char logfile[CLEANUP_PATH_MAX];  /* "" while base is "" */
	char private_base[64];           /* a mkdtemp'd /tmp/cleanupctl-XXXXXX, or "" */
	char private_sock[64];           /* a mkdtemp'd /tmp/cleanupctl-sock-XXXXXX, or "" */
	char run_as[64];                 /* OS user running the server */
	int port;
	bool reachable;                  /* the server's user can enter DIR */
	bool running;
	bool initialized;
	int pid;                         /* postmaster pid when running */
} cleanup_sandbox;

/* The Unix socket path limit: sun_path holds 108 bytes with the NUL, and
 * the server's socket is SOCKDIR + "/.s.PGSQL.<port>". */
#define CLEANUP_SOCKET_PATH_MAX 107
/* PostgreSQL's own path limit (MAXPGPATH 1024) leaves this much for DIR. */
#define CLEANUP_SANDBOX_DIR_MAX 900

/* Computes the paths of a sandbox in absolute directory DIR into SB.
 * PRIVATE_BASE and PRIVATE_SOCK (NULL or "" when none) are the private
 * directories recorded in DIR's state file. The cluster (data/, log/)
 * lives in PRIVATE_BASE when set, else in DIR when REACHABLE (the server's
 * user can enter DIR), else nowhere yet: base, datadir and logfile stay ""
 * until start makes a private directory. The socket directory is
 * <base>/sock when the socket path fits CLEANUP_SOCKET_PATH_MAX and base
 * holds no comma (libpq's host is a comma-separated list), else
 * PRIVATE_SOCK, else "" (start makes one). EINVAL, naming the rule and
 * the real length, when DIR is not absolute, holds a control character,
 * is longer than CLEANUP_SANDBOX_DIR_MAX, or when the socket path would
 * pass the socket limit. Pure: touches nothing. */
int cleanup_sandbox_layout(cleanup_sandbox *sb, const char *dir, bool reachable, const char *private_base,
                           const char *private_sock, cleanup_error *err);

/* The default directory: $CLEANUP_SANDBOX_DIR, else .sandbox in the source
 * tree this binary was built from. Writes into BUF (LEN bytes). */
void cleanup_sandbox_default_dir(char *buf, size_t len);

/* Resolves paths for DIR (NULL: the default; relative to the current
 * directory) and finds the PostgreSQL binaries: $PG_BINDIR when set (an
 * error when it lacks initdb, pg_ctl or postgres), else pg_config
 * --bindir, else /usr/lib/postgresql/N/bin, newest first. Reads DIR's
 * state file; EREFUSED when it, or a private directory it names, is a
 * symlink, owned by an unexpected user or group/world writable. EINVAL
 * (with the real byte length) for a DIR that is too long. ERROR with a
 * clear message when no server binaries exist. Creates nothing. */
int cleanup_sandbox_init(cleanup_sandbox *out, const char *dir, cleanup_error *err);

/* Creates what is missing (DIR, private directories under /tmp made by
 * mkdtemp and recorded in DIR's state file, data/, log/, sock/), hands
 * them to the server's user through their descriptors, initdb when
 * needed, start when not running, wait until it accepts connections,
 * create the cleanup_lab database when missing. Idempotent. EREFUSED,
 * touching nothing of it, when a directory to hand over exists as a
 * symlink, is owned by another user than us or the server's user, or is
 * group or world writable; also when a component of DIR is a symlink
 * owned by another user than us or root. */
int cleanup_sandbox_start(cleanup_sandbox *sb, cleanup_error *err);

/* Fast shutdown when running. Idempotent. */
int cleanup_sandbox_stop(cleanup_sandbox *sb, cleanup_error *err);

/* Fills sb->running / sb->pid / sb->initialized. A postmaster.pid whose
 * process is gone, a zombie or not a postgres process (a stale file after
 * kill -9, or a reused pid) counts as not running. */
int cleanup_sandbox_status(cleanup_sandbox *sb, cleanup_error *err);

/* The conninfo for DBNAME (NULL: cleanup_lab) into BUF: the socket
 * directory as a quoted libpq value (' and \ backslash-escaped), DBNAME
 * quoted when it is not a plain word. Truncated to LEN. */
void cleanup_sandbox_conninfo(const cleanup_sandbox *sb, const char *dbname, char *buf, size_t len);

/* The text of the cluster's cleanupctl.conf for SB into BUF (LEN bytes):
 * listen_addresses, port, unix_socket_directories and friends. The socket
 * directory is a double-quoted list element ("" doubled) inside a
 * postgresql.conf string (' doubled, \ doubled, control bytes as octal
 * escapes). EINVAL when BUF is too small. Pure. */
int cleanup_sandbox_conf_text(char *buf, size_t len, const cleanup_sandbox *sb, cleanup_error *err);

#endif

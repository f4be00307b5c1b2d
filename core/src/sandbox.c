/* The disposable sandbox cluster: initdb and pg_ctl run as an unprivileged
 * user, Unix socket only, in a directory that user can reach.
 *
 * Paths: DIR is what the user chose. The cluster lives in DIR/data when the
 * server's user can traverse DIR; otherwise (root running in a folder the
 * postgres user cannot enter, as in a CI clone under /root) it lives in
 * /tmp/cleanupctl-<hash of DIR>. The socket directory must keep the socket
 * path under the 107-byte limit, so it moves to /tmp when DIR is long. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cleanup/sandbox.h"
#include "config.h"
#include "engine_int.h"

void cleanup_sandbox_default_dir(char *buf, size_t len)
{
	const char *env = getenv("CLEANUP_SANDBOX_DIR");

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else
		snprintf(buf, len, "%s/.sandbox", CLEANUP_SOURCE_DIR);
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static bool is_exec(const char *dir, const char *prog)
{
	char path[CLEANUP_PATH_MAX];

	snprintf(path, sizeof path, "%s/%s", dir, prog);
	return access(path, X_OK) == 0;
}

static bool good_bindir(const char *dir)
{
	return is_exec(dir, "initdb") && is_exec(dir, "pg_ctl") && is_exec(dir, "postgres");
}

/* $PG_BINDIR (when set it must be right), else pg_config --bindir, then
 * /usr/lib/postgresql/N/bin (newest first). */
static int find_bindir(char *out, size_t len, cleanup_error *err)
{
	const char *env = getenv("PG_BINDIR");
	const char *cfgs[] = {CLEANUP_PG_CONFIG, "pg_config", NULL};
	glob_t g;
	int i, best = -1, bestv = -1, rc;

	if (env && *env) {
		if (good_bindir(env)) {
			snprintf(out, len, "%s", env);
			return CLEANUP_OK;
		}
		rc = cleanup_error_set(err, CLEANUP_ERROR,
		                       "PG_BINDIR=%s does not hold the PostgreSQL server binaries initdb, pg_ctl and postgres",
		                       env);
		cleanup_error_hint(err, "point PG_BINDIR at e.g. /usr/lib/postgresql/15/bin, or unset it");
		return rc;
	}
	for (i = 0; cfgs[i]; i++) {
		char cmd[CLEANUP_PATH_MAX + 32], line[CLEANUP_PATH_MAX];
		FILE *p;

		if (!*cfgs[i])
			continue;
		snprintf(cmd, sizeof cmd, "'%s' --bindir 2>/dev/null", cfgs[i]);
		p = popen(cmd, "r");
		if (!p)
			continue;
		line[0] = '\0';
		if (fgets(line, sizeof line, p))
			line[strcspn(line, "\n")] = '\0';
		pclose(p);
		if (*line && good_bindir(line)) {
			snprintf(out, len, "%s", line);
			return CLEANUP_OK;
		}
	}
	if (glob("/usr/lib/postgresql/*/bin", 0, NULL, &g) == 0) {
		for (i = 0; i < (int)g.gl_pathc; i++) {
			int v = atoi(g.gl_pathv[i] + strlen("/usr/lib/postgresql/"));

			if (v > bestv && good_bindir(g.gl_pathv[i])) {
				bestv = v;
				best = i;
			}
		}
		if (best >= 0)
			snprintf(out, len, "%s", g.gl_pathv[best]);
		globfree(&g);
		if (best >= 0)
			return CLEANUP_OK;
	}
	rc = cleanup_error_set(err, CLEANUP_ERROR,
	                       "no PostgreSQL server binaries found: PG_BINDIR is not set, pg_config --bindir names no "
	                       "directory with initdb, pg_ctl and postgres, and /usr/lib/postgresql/*/bin has none");
	cleanup_error_hint(err, "install them (apt-get install postgresql-15), or set PG_BINDIR to their directory");
	return rc;
}

/* The unprivileged account that runs the server when we are root. */
static struct passwd *server_user(void)
{
	struct passwd *pw;

	if (geteuid() != 0)
		return getpwuid(geteuid());
	pw = getpwnam("postgres");
	if (!pw)
		pw = getpwnam("nobody");
	return pw;
}

/* Drops to PW in a child process (no-op when not root). */
static int drop_to(const struct passwd *pw)
{
	if (geteuid() != 0)
		return 0;
	if (setgid(pw->pw_gid) != 0 || initgroups(pw->pw_name, pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
		return -1;
	setenv("HOME", pw->pw_dir, 1);
	setenv("USER", pw->pw_name, 1);
	return 0;
}

/* True when PW can traverse to DIR: the nearest existing ancestor of DIR
 * (DIR itself when it exists) is searchable by PW. `start` creates what is
 * missing and hands it to PW. Checked in a child that drops privileges. */
static bool user_can_reach(const struct passwd *pw, const char *path)
{
	char dir[CLEANUP_PATH_MAX];
	struct stat st_buf;
	pid_t pid;
	int st;

	snprintf(dir, sizeof dir, "%s", path);
	while (stat(dir, &st_buf) != 0) {
		char *slash = strrchr(dir, '/');

		if (!slash || slash == dir)
			return true;
		*slash = '\0';
	}
	if (geteuid() != 0)
		return access(dir, X_OK) == 0;
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		if (drop_to(pw) != 0)
			_exit(2);
		_exit(access(dir, X_OK) == 0 ? 0 : 1);
	}
	if (waitpid(pid, &st, 0) < 0)
		return false;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char tmp[CLEANUP_PATH_MAX];
	char *p;

	snprintf(tmp, sizeof tmp, "%s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	}
	if (mkdir(tmp, mode) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* Creates DIR (mode MODE) owned by PW. */
static int own_dir(const char *dir, mode_t mode, const struct passwd *pw, cleanup_error *err)
{
	if (mkdir_p(dir, mode) != 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot create directory %s: %s", dir, strerror(errno));
	if (geteuid() == 0 && chown(dir, pw->pw_uid, pw->pw_gid) != 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot hand %s to user %s: %s", dir, pw->pw_name,
		                         strerror(errno));
	if (chmod(dir, mode) != 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot chmod %s: %s", dir, strerror(errno));
	return CLEANUP_OK;
}

int cleanup_sandbox_layout(cleanup_sandbox *sb, const char *dir, bool reachable, cleanup_error *err)
{
	char base[CLEANUP_SANDBOX_DIR_MAX + 1];
	size_t dlen = dir ? strlen(dir) : 0;
	uint64_t h;

	if (!dir || dir[0] != '/')
		return cleanup_error_set(err, CLEANUP_EINVAL, "sandbox directory \"%s\" is not an absolute path",
		                         dir ? dir : "");
	if (dlen > CLEANUP_SANDBOX_DIR_MAX)
		return cleanup_error_set(err, CLEANUP_EINVAL,
		                         "sandbox directory is %zu bytes long; the limit is %d (PostgreSQL's path limit): %.80s...",
		                         dlen, CLEANUP_SANDBOX_DIR_MAX, dir);
	snprintf(sb->dir, sizeof sb->dir, "%s", dir);
	/* "/a/b/" and "/a/b" are the same sandbox. */
	while (dlen > 1 && sb->dir[dlen - 1] == '/')
		sb->dir[--dlen] = '\0';
	sb->port = CLEANUP_SANDBOX_PORT;
	h = fnv1a(sb->dir);
	if (reachable)
		memcpy(base, sb->dir, dlen + 1); /* dlen <= CLEANUP_SANDBOX_DIR_MAX */
	else
		snprintf(base, sizeof base, "/tmp/cleanupctl-%016" PRIx64, h);
	snprintf(sb->datadir, sizeof sb->datadir, "%s/data", base);
	snprintf(sb->logfile, sizeof sb->logfile, "%s/log/postgres.log", base);
	/* base + "/sock" + "/.s.PGSQL.NNNNN" must fit the socket path limit. */
	if (strlen(base) + strlen("/sock/.s.PGSQL.") + 5 <= CLEANUP_SOCKET_PATH_MAX)
		snprintf(sb->sockdir, sizeof sb->sockdir, "%s/sock", base);
	else
		snprintf(sb->sockdir, sizeof sb->sockdir, "/tmp/cleanupctl-sock-%016" PRIx64, h);
	return CLEANUP_OK;
}

int cleanup_sandbox_init(cleanup_sandbox *sb, const char *dir, cleanup_error *err)
{
	char chosen[CLEANUP_PATH_MAX / 2], absdir[CLEANUP_PATH_MAX];
	struct passwd *pw;
	int rc;

	memset(sb, 0, sizeof *sb);
	cleanup_error_clear(err);
	if (dir && *dir)
		snprintf(chosen, sizeof chosen, "%s", dir);
	else
		cleanup_sandbox_default_dir(chosen, sizeof chosen);
	if (chosen[0] != '/') {
		char cwd[CLEANUP_PATH_MAX / 2 - 2];

		if (!getcwd(cwd, sizeof cwd))
			return cleanup_error_set(err, CLEANUP_ERROR, "cannot read the current directory: %s", strerror(errno));
		if (strlen(cwd) + strlen(chosen) + 2 > sizeof absdir)
			return cleanup_error_set(err, CLEANUP_EINVAL, "sandbox directory %.200s is too long", chosen);
		snprintf(absdir, sizeof absdir, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, chosen);
	} else {
		snprintf(absdir, sizeof absdir, "%s", chosen);
	}
	pw = server_user();
	if (!pw)
		return cleanup_error_set(err, CLEANUP_ERROR, "no unprivileged user (postgres or nobody) to run the server as");
	if ((rc = cleanup_sandbox_layout(sb, absdir, user_can_reach(pw, absdir), err)) != CLEANUP_OK)
		return rc;
	snprintf(sb->run_as, sizeof sb->run_as, "%s", pw->pw_name);
	if ((rc = find_bindir(sb->bindir, sizeof sb->bindir, err)) != CLEANUP_OK)
		return rc;
	return cleanup_sandbox_status(sb, err);
}

/* Runs ARGV as the server user, output appended to LOG (or /dev/null).
 * Returns the exit status, or -1 when it could not run. */
static int run_as(const cleanup_sandbox *sb, char *const argv[], const char *log)
{
	struct passwd *pw = getpwnam(sb->run_as);
	pid_t pid;
	int st;

	if (!pw)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd, nul;

		/* Open the log as the server's user: pg_ctl reopens it later. */
		if (drop_to(pw) != 0)
			_exit(126);
		fd = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0600);
		nul = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (nul >= 0)
			dup2(nul, 0);
		/* The server must not inherit our terminal's process group signals. */
		setsid();
		/* A caller's libpq environment (PGPORT=..., even empty) must not
		 * reach initdb, pg_ctl or the server. */
		{
			static const char *const vars[] = {"PGDATA", "PGPORT", "PGHOST", "PGHOSTADDR", "PGDATABASE",
			                                   "PGUSER", "PGSERVICE", "PGOPTIONS", "PGTZ", NULL};
			int v;

			for (v = 0; vars[v]; v++)
				unsetenv(vars[v]);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* True when PID is a live (not zombie) postgres process. Where /proc is
 * not readable, a process that exists counts. */
static bool postmaster_alive(pid_t pid)
{
	char path[64], buf[512];
	char *rp;
	FILE *f;
	size_t n;

	if (kill(pid, 0) != 0 && errno != EPERM)
		return false;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return access("/proc/self/stat", R_OK) != 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) S ...": the command name is in parentheses, the state
	 * follows the last ')'. */
	rp = strrchr(buf, ')');
	if (!rp || rp[1] != ' ' || rp[2] == 'Z' || rp[2] == 'X')
		return false;
	return strstr(buf, "(postgres)") != NULL;
}

int cleanup_sandbox_status(cleanup_sandbox *sb, cleanup_error *err)
{
	char path[CLEANUP_PATH_MAX + 32];
	FILE *f;
	long pid = 0;

	(void)err; /* reading state cannot fail; the parameter keeps the API uniform */

	snprintf(path, sizeof path, "%s/PG_VERSION", sb->datadir);
	sb->initialized = access(path, F_OK) == 0;
	sb->running = false;
	sb->pid = 0;
	snprintf(path, sizeof path, "%s/postmaster.pid", sb->datadir);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &pid) == 1 && pid > 0 && postmaster_alive((pid_t)pid)) {
			sb->running = true;
			sb->pid = (int)pid;
		}
		fclose(f);
	}
	return CLEANUP_OK;
}

static int write_conf(const cleanup_sandbox *sb, const struct passwd *pw, cleanup_error *err)
{
	char path[CLEANUP_PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof path, "%s/cleanupctl.conf", sb->datadir);
	f = fopen(path, "w");
	if (!f)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot write %s: %s", path, strerror(errno));
	fprintf(f,
	        "# Written by cleanupctl sandbox start; rewritten at every start.\n"
	        "listen_addresses = ''\n"
	        "port = %d\n"
	        "unix_socket_directories = '%s'\n"
	        "unix_socket_permissions = 0700\n"
	        "max_connections = 100\n"
	        "log_min_messages = warning\n"
	        "log_line_prefix = '%%m [%%p] %%a '\n",
	        sb->port, sb->sockdir);
	fclose(f);
	if (geteuid() == 0 && chown(path, pw->pw_uid, pw->pw_gid) != 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot chown %s: %s", path, strerror(errno));
	return CLEANUP_OK;
}

static int initdb(cleanup_sandbox *sb, const struct passwd *pw, cleanup_error *err)
{
	char prog[CLEANUP_PATH_MAX + 16], path[CLEANUP_PATH_MAX + 32];
	char *argv[] = {prog, "-D", sb->datadir, "-U", "postgres", "-A", "trust", "-E", "UTF8",
	                "--locale=C", "--no-sync", NULL};
	FILE *f;
	int rc;

	snprintf(prog, sizeof prog, "%s/initdb", sb->bindir);
	rc = run_as(sb, argv, sb->logfile);
	if (rc != 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "initdb failed (exit %d); see %s", rc, sb->logfile);
	snprintf(path, sizeof path, "%s/postgresql.conf", sb->datadir);
	f = fopen(path, "a");
	if (!f)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot append to %s: %s", path, strerror(errno));
	fprintf(f, "\ninclude_if_exists = 'cleanupctl.conf'\n");
	fclose(f);
	(void)pw;
	return CLEANUP_OK;
}

/* Creates the sandbox database when missing, through the engine. */
static int ensure_database(const cleanup_sandbox *sb, cleanup_error *err)
{
	char conninfo[CLEANUP_PATH_MAX + 128];
	cleanup_engine *e = NULL;
	PGresult *res = NULL;
	int rc;

	cleanup_sandbox_conninfo(sb, "postgres", conninfo, sizeof conninfo);
	rc = cleanup_engine_open(&e, conninfo, "cleanupctl sandbox", err);
	if (rc != CLEANUP_OK)
		return rc;
	rc = engine_query(&res, e, CLEANUP_Q_SANDBOX_DB_EXISTS, 0, NULL, "looking for the sandbox database", err);
	if (rc == CLEANUP_OK && PQntuples(res) == 0) {
		PQclear(res);
		res = NULL;
		rc = engine_query(&res, e, CLEANUP_Q_SANDBOX_DB_CREATE, 0, NULL, "creating the sandbox database", err);
	}
	PQclear(res);
	cleanup_engine_close(e);
	return rc;
}

/* The pid in a postmaster.pid whose server is not running, or 0. */
static pid_t stale_postmaster(const cleanup_sandbox *sb)
{
	char path[CLEANUP_PATH_MAX + 32];
	long pid = 0;
	FILE *f;

	snprintf(path, sizeof path, "%s/postmaster.pid", sb->datadir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1 || pid <= 0)
		pid = 0;
	fclose(f);
	return pid > 0 && !postmaster_alive((pid_t)pid) ? (pid_t)pid : 0;
}

/* Waits (at most 30 s) until the process named by a stale postmaster.pid
 * is gone: the server refuses to start while that pid exists. */
static int wait_stale_postmaster(const cleanup_sandbox *sb, cleanup_error *err)
{
	struct timespec pause = {0, 100 * 1000 * 1000};
	pid_t pid;
	int i;

	for (i = 0; i < 300; i++) {
		pid = stale_postmaster(sb);
		if (pid == 0 || (kill(pid, 0) != 0 && errno == ESRCH))
			return CLEANUP_OK;
		nanosleep(&pause, NULL);
	}
	return cleanup_error_set(err, CLEANUP_ERROR,
	                         "%s/postmaster.pid names process %d, which is not a running server but still exists "
	                         "(a zombie its parent has not reaped, or a reused pid); PostgreSQL will not start until "
	                         "it is gone",
	                         sb->datadir, (int)pid);
}

int cleanup_sandbox_start(cleanup_sandbox *sb, cleanup_error *err)
{
	struct passwd *pw = getpwnam(sb->run_as);
	char prog[CLEANUP_PATH_MAX + 16], base[CLEANUP_PATH_MAX];
	char *argv[] = {prog, "start", "-w", "-t", "60", "-D", sb->datadir, "-l", sb->logfile, NULL};
	char *slash;
	int rc, attempt;

	if (!pw)
		return cleanup_error_set(err, CLEANUP_ERROR, "user %s does not exist", sb->run_as);
	/* Only directories of our own are handed to the server's user; an
	 * existing DIR (say /tmp) keeps its owner and mode. */
	if (mkdir_p(sb->dir, 0755) != 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot create sandbox directory %s: %s", sb->dir,
		                         strerror(errno));
	snprintf(base, sizeof base, "%s", sb->logfile);
	slash = strrchr(base, '/');
	if (slash)
		*slash = '\0';
	if ((rc = own_dir(base, 0700, pw, err)) || (rc = own_dir(sb->sockdir, 0700, pw, err)))
		return rc;
	cleanup_sandbox_status(sb, err);
	if (!sb->initialized) {
		if ((rc = own_dir(sb->datadir, 0700, pw, err)) || (rc = initdb(sb, pw, err)))
			return rc;
		sb->initialized = true;
	}
	if (!sb->running) {
		if ((rc = write_conf(sb, pw, err)))
			return rc;
		snprintf(prog, sizeof prog, "%s/pg_ctl", sb->bindir);
		/* After a kill -9 of the server its postmaster.pid is stale. The
		 * server ignores it once that pid is gone, but a killed postmaster
		 * stays a zombie until its parent (often init) reaps it, and its
		 * orphaned backends may hold the old shared memory a moment
		 * longer: wait for the zombie, then try the start a bounded
		 * number of times. */
		if ((rc = wait_stale_postmaster(sb, err)) != CLEANUP_OK)
			return rc;
		for (attempt = 0; (rc = run_as(sb, argv, sb->logfile)) != 0 && attempt < 10; attempt++) {
			struct timespec pause = {0, 200 * 1000 * 1000};

			cleanup_sandbox_status(sb, err);
			if (sb->running)
				break;
			nanosleep(&pause, NULL);
		}
		cleanup_sandbox_status(sb, err);
		if (rc != 0 && !sb->running)
			return cleanup_error_set(err, CLEANUP_ERROR, "pg_ctl start failed (exit %d); see %s", rc,
			                         sb->logfile);
	}
	return ensure_database(sb, err);
}

int cleanup_sandbox_stop(cleanup_sandbox *sb, cleanup_error *err)
{
	char prog[CLEANUP_PATH_MAX + 16];
	char *argv[] = {prog, "stop", "-w", "-t", "60", "-m", "fast", "-D", sb->datadir, NULL};
	int rc;

	cleanup_sandbox_status(sb, err);
	if (!sb->running)
		return CLEANUP_OK;
	snprintf(prog, sizeof prog, "%s/pg_ctl", sb->bindir);
	rc = run_as(sb, argv, sb->logfile);
	cleanup_sandbox_status(sb, err);
	if (rc != 0 && sb->running)
		return cleanup_error_set(err, CLEANUP_ERROR, "pg_ctl stop failed (exit %d); see %s", rc, sb->logfile);
	return CLEANUP_OK;
}

void cleanup_sandbox_conninfo(const cleanup_sandbox *sb, const char *dbname, char *buf, size_t len)
{
	snprintf(buf, len, "host='%s' port=%d dbname=%s user=postgres", sb->sockdir, sb->port,
	         dbname ? dbname : CLEANUP_SANDBOX_DB);
}

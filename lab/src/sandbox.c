/* The disposable sandbox cluster: initdb and pg_ctl run as an unprivileged
 * user, Unix socket only, in a directory that user can reach.
 *
 * Paths: DIR is what the user chose. The cluster lives in DIR/data when the
 * server's user can traverse DIR; otherwise (root running in a folder the
 * postgres user cannot enter, as in a CI clone under /root) it lives in a
 * private /tmp/cleanupctl-XXXXXX made by mkdtemp. The socket directory must
 * keep the socket path under the 107-byte limit, so when DIR is long it is
 * a private /tmp/cleanupctl-sock-XXXXXX. Private directories are recorded
 * in DIR/cleanupctl.state, so status and stop find them again.
 *
 * Trust, when run as root: nothing predictable under /tmp, and nothing is
 * chown-ed or chmod-ed by a path someone else could have planted. Every
 * directory handed to the server's user is opened with O_NOFOLLOW, checked
 * with fstat (ours or the server user's, not group or world writable) and
 * changed with fchown/fchmod; files inside the cluster are written by a
 * child running as the server's user; initdb and pg_ctl run in the base
 * directory with relative paths, so DIR never reaches pg_ctl's shell. */
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
#include "lab_int.h"

/* The source tree this binary was built from, when it runs from that
 * build tree (a checkout): CMake writes the source directory into
 * <build>/CLEANUP_CHECKOUT_FILE, the parent of every build-tree program's
 * directory; an installed binary has no such file there. Sets BUF and
 * returns true when the file is found and names a directory that still
 * exists; nothing about the source tree is compiled into the binary. */
static bool checkout_source_dir(char *buf, size_t len)
{
	char exe[CLEANUP_PATH_MAX], line[CLEANUP_PATH_MAX], *slash;
	struct stat st;
	ssize_t n;
	FILE *f;
	bool found = false;

	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0 || (size_t)n >= sizeof exe - 1)
		return false;
	exe[n] = '\0';
	if (!(slash = strrchr(exe, '/')))
		return false;
	*slash = '\0'; /* the program's directory */
	if (!(slash = strrchr(exe, '/')))
		return false;
	*slash = '\0'; /* its parent: the build directory in a build tree */
	if (strlen(exe) + sizeof "/" CLEANUP_CHECKOUT_FILE > sizeof line)
		return false;
	snprintf(line, sizeof line, "%s/%s", exe, CLEANUP_CHECKOUT_FILE);
	f = fopen(line, "r");
	if (!f)
		return false;
	if (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		found = line[0] == '/' && stat(line, &st) == 0 && S_ISDIR(st.st_mode);
	}
	fclose(f);
	if (found)
		snprintf(buf, len, "%s", line);
	return found;
}

void cleanup_sandbox_default_dir(char *buf, size_t len)
{
	const char *env = getenv("CLEANUP_SANDBOX_DIR"), *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char src[CLEANUP_PATH_MAX];

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	if (checkout_source_dir(src, sizeof src)) {
		snprintf(buf, len, "%s/.sandbox", src);
		return;
	}
	/* Installed: the XDG state directory (relative values are ignored, as
	 * the XDG spec says). */
	if (state && state[0] == '/') {
		snprintf(buf, len, "%s/cleanupctl/sandbox", state);
		return;
	}
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());

		home = pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : NULL;
	}
	if (home)
		snprintf(buf, len, "%s/.local/state/cleanupctl/sandbox", home);
	else
		snprintf(buf, len, ".sandbox"); /* no home: the current directory */
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


/* ---- Quoting ------------------------------------------------------------ */

/* Output into a fixed buffer that keeps counting past its end, so callers
 * can tell truncation (n >= len), as with snprintf. */
typedef struct outbuf {
	char *buf;
	size_t len;
	size_t n;
} outbuf;

static void out_ch(outbuf *o, char c)
{
	if (o->n + 1 < o->len)
		o->buf[o->n] = c;
	o->n++;
	if (o->len)
		o->buf[o->n < o->len ? o->n : o->len - 1] = '\0';
}

static void out_str(outbuf *o, const char *s)
{
	for (; *s; s++)
		out_ch(o, *s);
}

/* One byte inside a postgresql.conf string literal: ' doubled, \ doubled,
 * control bytes as the octal escapes the configuration scanner reads (a
 * raw newline cannot appear in a literal). */
static void out_conf_byte(outbuf *o, unsigned char c)
{
	char oct[8];

	if (c == '\'') {
		out_str(o, "''");
	} else if (c == '\\') {
		out_str(o, "\\\\");
	} else if (c < 0x20 || c == 0x7f) {
		snprintf(oct, sizeof oct, "\\%03o", c);
		out_str(o, oct);
	} else {
		out_ch(o, (char)c);
	}
}

/* S as the only element of a list setting (unix_socket_directories): a
 * double-quoted element with "" for ", inside a conf string literal. */
static void out_conf_list_element(outbuf *o, const char *s)
{
	out_ch(o, '\'');
	out_conf_byte(o, '"');
	for (; *s; s++) {
		if (*s == '"')
			out_conf_byte(o, '"');
		out_conf_byte(o, (unsigned char)*s);
	}
	out_conf_byte(o, '"');
	out_ch(o, '\'');
}

/* S as a libpq conninfo value: single-quoted, ' and \ backslash-escaped. */
static void out_conninfo_value(outbuf *o, const char *s)
{
	out_ch(o, '\'');
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			out_ch(o, '\\');
		out_ch(o, *s);
	}
	out_ch(o, '\'');
}

static bool plain_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

void cleanup_sandbox_conninfo(const cleanup_sandbox *sb, const char *dbname, char *buf, size_t len)
{
	outbuf o = {buf, len, 0};
	char port[32];

	if (len)
		buf[0] = '\0';
	if (!dbname)
		dbname = CLEANUP_SANDBOX_DB;
	out_str(&o, "host=");
	out_conninfo_value(&o, sb->sockdir);
	snprintf(port, sizeof port, " port=%d dbname=", sb->port);
	out_str(&o, port);
	if (plain_word(dbname))
		out_str(&o, dbname);
	else
		out_conninfo_value(&o, dbname);
	out_str(&o, " user=postgres");
}

int cleanup_sandbox_conf_text(char *buf, size_t len, const cleanup_sandbox *sb, cleanup_error *err)
{
	outbuf o = {buf, len, 0};
	char port[32];

	if (len)
		buf[0] = '\0';
	snprintf(port, sizeof port, "port = %d\n", sb->port);
	out_str(&o, "# Written by cleanupctl sandbox start; rewritten at every start.\n"
	            "listen_addresses = ''\n");
	out_str(&o, port);
	out_str(&o, "unix_socket_directories = ");
	out_conf_list_element(&o, sb->sockdir);
	out_str(&o, "\n"
	            "unix_socket_permissions = 0700\n"
	            "max_connections = 100\n"
	            "log_min_messages = warning\n"
	            "log_line_prefix = '%m [%p] %a '\n");
	if (o.n >= len)
		return cleanup_error_set(err, CLEANUP_EINVAL, "the sandbox configuration needs %zu bytes; the buffer holds %zu",
		                         o.n + 1, len);
	return CLEANUP_OK;
}

/* ---- Layout ------------------------------------------------------------- */

/* The length of the server's socket path in SOCKDIR. */
static size_t socket_path_len(const char *sockdir, int port)
{
	return strlen(sockdir) + (size_t)snprintf(NULL, 0, "/.s.PGSQL.%d", port);
}

static int dir_too_long(cleanup_error *err, size_t len, const char *how, const char *dir)
{
	int rc = cleanup_error_set(err, CLEANUP_EINVAL,
	                           "sandbox directory is %zu bytes long%s; the limit is %d bytes (PostgreSQL's path limit, "
	                           "MAXPGPATH 1024, less room for the cluster's own files): %.80s...",
	                           len, how, CLEANUP_SANDBOX_DIR_MAX, dir);

	cleanup_error_hint(err, "choose a shorter --dir");
	return rc;
}

int cleanup_sandbox_layout(cleanup_sandbox *sb, const char *dir, bool reachable, const char *private_base,
                           const char *private_sock, cleanup_error *err)
{
	char base[CLEANUP_SANDBOX_DIR_MAX + 1];
	const char *src;
	size_t dlen, i;

	if (!dir || dir[0] != '/')
		return cleanup_error_set(err, CLEANUP_EINVAL, "sandbox directory \"%s\" is not an absolute path",
		                         dir ? dir : "");
	dlen = strlen(dir);
	if (dlen > CLEANUP_SANDBOX_DIR_MAX)
		return dir_too_long(err, dlen, "", dir);
	for (i = 0; i < dlen; i++)
		if ((unsigned char)dir[i] < 0x20 || dir[i] == 0x7f)
			return cleanup_error_set(err, CLEANUP_EINVAL,
			                         "sandbox directory holds a control character (byte 0x%02x at offset %zu); a "
			                         "sandbox directory must not hold control characters",
			                         (unsigned char)dir[i], i);
	if (!private_base)
		private_base = "";
	if (!private_sock)
		private_sock = "";
	if (strlen(private_base) >= sizeof sb->private_base || strlen(private_sock) >= sizeof sb->private_sock)
		return cleanup_error_set(err, CLEANUP_EINVAL, "a private sandbox directory name is longer than %zu bytes",
		                         sizeof sb->private_base - 1);
	snprintf(sb->dir, sizeof sb->dir, "%s", dir);
	/* "/a/b/" and "/a/b" are the same sandbox. */
	while (dlen > 1 && sb->dir[dlen - 1] == '/')
		sb->dir[--dlen] = '\0';
	snprintf(sb->private_base, sizeof sb->private_base, "%s", private_base);
	snprintf(sb->private_sock, sizeof sb->private_sock, "%s", private_sock);
	sb->port = CLEANUP_SANDBOX_PORT;
	sb->reachable = reachable;
	src = *private_base ? private_base : reachable ? sb->dir : "";
	memcpy(base, src, strlen(src) + 1); /* at most CLEANUP_SANDBOX_DIR_MAX bytes, checked above */
	memcpy(sb->base, base, strlen(base) + 1);
	sb->datadir[0] = sb->logfile[0] = sb->sockdir[0] = '\0';
	if (*base) {
		snprintf(sb->datadir, sizeof sb->datadir, "%s/data", base);
		snprintf(sb->logfile, sizeof sb->logfile, "%s/log/postgres.log", base);
		/* base + "/sock" + "/.s.PGSQL.NNNNN" must fit the socket path
		 * limit, and libpq reads a comma in host as a list separator
		 * (with no way to escape it). */
		if (strlen(base) + strlen("/sock") + socket_path_len("", sb->port) <= CLEANUP_SOCKET_PATH_MAX &&
		    !strchr(base, ','))
			snprintf(sb->sockdir, sizeof sb->sockdir, "%s/sock", base);
	}
	if (!sb->sockdir[0] && *private_sock)
		snprintf(sb->sockdir, sizeof sb->sockdir, "%s", private_sock);
	if (sb->sockdir[0] && socket_path_len(sb->sockdir, sb->port) > CLEANUP_SOCKET_PATH_MAX)
		return cleanup_error_set(err, CLEANUP_EINVAL,
		                         "the server's socket path %s/.s.PGSQL.%d would be %zu bytes long; a Unix socket "
		                         "path holds at most %d bytes (sun_path)",
		                         sb->sockdir, sb->port, socket_path_len(sb->sockdir, sb->port),
		                         CLEANUP_SOCKET_PATH_MAX);
	return CLEANUP_OK;
}

/* ---- Directories we hand over ------------------------------------------- */

static void refuse_hint(cleanup_error *err)
{
	cleanup_error_hint(err, "another user may have planted it: look at what it is, remove it, and start again");
}

/* A user's name for messages. */
static const char *user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, len, "%s (uid %u)", pw->pw_name, (unsigned)uid);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
	return buf;
}

/* EREFUSED unless ST (of PATH) is a directory owned by us or by PW and not
 * group or world writable. */
static int check_dir(const struct stat *st, const char *path, const struct passwd *pw, cleanup_error *err)
{
	char owner[96];
	int rc = CLEANUP_OK;

	if (!S_ISDIR(st->st_mode))
		rc = cleanup_error_set(err, CLEANUP_EREFUSED, "%s is not a directory", path);
	else if (st->st_uid != geteuid() && st->st_uid != pw->pw_uid)
		rc = cleanup_error_set(err, CLEANUP_EREFUSED, "%s is owned by %s, not by uid %u or the server's user %s",
		                       path, user_name(st->st_uid, owner, sizeof owner), (unsigned)geteuid(),
		                       pw->pw_name);
	else if (st->st_mode & (S_IWGRP | S_IWOTH))
		rc = cleanup_error_set(err, CLEANUP_EREFUSED, "%s is group or world writable (mode %04o)", path,
		                       (unsigned)(st->st_mode & 07777));
	if (rc != CLEANUP_OK)
		refuse_hint(err);
	return rc;
}

/* Opens directory NAME in PARENTFD (PATH names it in messages) without
 * following a symlink into *OUT. ENOTFOUND (no message needed) when it does
 * not exist; EREFUSED when it is a symlink or not a directory. */
static int open_nofollow(int *out, int parentfd, const char *name, const char *path, cleanup_error *err)
{
	struct stat st;
	int fd, e, rc;

	*out = -1;
	fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		*out = fd;
		return CLEANUP_OK;
	}
	e = errno;
	if (e == ENOENT)
		return cleanup_error_set(err, CLEANUP_ENOTFOUND, "%s does not exist", path);
	if ((e == ELOOP || e == ENOTDIR) && fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			rc = cleanup_error_set(err, CLEANUP_EREFUSED,
			                       "%s is a symbolic link; cleanupctl does not follow links where it makes "
			                       "directories for the server",
			                       path);
		else
			rc = cleanup_error_set(err, CLEANUP_EREFUSED, "%s exists and is not a directory", path);
		refuse_hint(err);
		return rc;
	}
	return cleanup_error_set(err, CLEANUP_ERROR, "cannot open directory %s: %s", path, strerror(e));
}

/* Checks the open directory FD (PATH) and hands it to PW with mode 0700
 * through the descriptor: fchown when root, fchmod. */
static int check_and_hand_over(int fd, const char *path, const struct passwd *pw, cleanup_error *err)
{
	struct stat st;
	int rc;

	if (fstat(fd, &st) != 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot stat %s: %s", path, strerror(errno));
	if ((rc = check_dir(&st, path, pw, err)) != CLEANUP_OK)
		return rc;
	if (geteuid() == 0 && fchown(fd, pw->pw_uid, pw->pw_gid) != 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot hand %s to user %s: %s", path, pw->pw_name,
		                         strerror(errno));
	if (fchmod(fd, 0700) != 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot chmod %s: %s", path, strerror(errno));
	return CLEANUP_OK;
}

/* Makes directory NAME in PARENTFD (BASE/NAME in messages) unless it
 * exists, then checks it and hands it to PW. */
static int own_subdir(int parentfd, const char *base, const char *name, const struct passwd *pw,
                      cleanup_error *err)
{
	char path[CLEANUP_PATH_MAX + 32];
	int fd = -1, rc;

	snprintf(path, sizeof path, "%s/%s", base, name);
	if (mkdirat(parentfd, name, 0700) != 0 && errno != EEXIST) {
		rc = cleanup_error_set(err, CLEANUP_ERROR, "cannot create directory %s: %s", path, strerror(errno));
		goto out;
	}
	if ((rc = open_nofollow(&fd, parentfd, name, path, err)) != CLEANUP_OK) {
		if (rc == CLEANUP_ENOTFOUND) /* removed under our feet */
			rc = cleanup_error_set(err, CLEANUP_ERROR, "directory %s vanished as it was made", path);
		goto out;
	}
	rc = check_and_hand_over(fd, path, pw, err);
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The private directory PATH (in/out, CAP bytes) under /tmp: when PATH is
 * "" or no longer exists, a new one made from TEMPLATE by mkdtemp (*MADE
 * set). Checked and handed to PW; its descriptor into *OUT (NULL: closed). */
static int own_private_dir(int *out, char *path, size_t cap, const char *template, const struct passwd *pw,
                           bool *made, cleanup_error *err)
{
	char fresh[64];
	int fd = -1, rc = CLEANUP_OK;

	if (out)
		*out = -1;
	if (*path) {
		rc = open_nofollow(&fd, AT_FDCWD, path, path, err);
		if (rc == CLEANUP_ENOTFOUND) { /* a reboot or tmp cleaner removed it */
			cleanup_error_clear(err);
			path[0] = '\0';
			rc = CLEANUP_OK;
		} else if (rc != CLEANUP_OK) {
			goto out;
		}
	}
	if (!*path) {
		snprintf(fresh, sizeof fresh, "%s", template);
		if (!mkdtemp(fresh)) {
			rc = cleanup_error_set(err, CLEANUP_ERROR, "cannot make a private directory %s: %s", template,
			                       strerror(errno));
			goto out;
		}
		snprintf(path, cap, "%s", fresh);
		*made = true;
		if ((rc = open_nofollow(&fd, AT_FDCWD, path, path, err)) != CLEANUP_OK)
			goto out;
	}
	if ((rc = check_and_hand_over(fd, path, pw, err)) != CLEANUP_OK)
		goto out;
	if (out) {
		*out = fd;
		fd = -1;
	}
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* OK when the private directory PATH ("" for none) is gone or passes
 * check_dir; EREFUSED otherwise. Changes nothing. */
static int check_private_dir(const char *path, const struct passwd *pw, cleanup_error *err)
{
	struct stat st;
	int fd = -1, rc;

	if (!*path)
		return CLEANUP_OK;
	rc = open_nofollow(&fd, AT_FDCWD, path, path, err);
	if (rc == CLEANUP_ENOTFOUND) {
		cleanup_error_clear(err);
		return CLEANUP_OK;
	}
	if (rc != CLEANUP_OK)
		return rc;
	if (fstat(fd, &st) != 0)
		rc = cleanup_error_set(err, CLEANUP_ERROR, "cannot stat %s: %s", path, strerror(errno));
	else
		rc = check_dir(&st, path, pw, err);
	close(fd);
	return rc;
}

/* Opens directory PATH (absolute) into *OUT, making missing components
 * (0755). A component that is a symlink is followed only when it belongs
 * to us or to root (the rule of the kernel's protected_symlinks): a link
 * another user planted is refused. DIR itself keeps its owner and mode. */
static int open_dir_path(int *out, const char *path, cleanup_error *err)
{
	char buf[CLEANUP_PATH_MAX], owner[96];
	char *comp, *next;
	struct stat st;
	int fd, nfd, e, rc = CLEANUP_OK;

	*out = -1;
	snprintf(buf, sizeof buf, "%s", path);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot open /: %s", strerror(errno));
	for (comp = buf; comp; comp = next) {
		int upto;

		while (*comp == '/')
			comp++;
		if (!*comp)
			break;
		next = strchr(comp, '/');
		if (next)
			*next++ = '\0';
		upto = (int)(comp - buf + (ptrdiff_t)strlen(comp));
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT) {
			if (mkdirat(fd, comp, 0755) != 0 && errno != EEXIST) {
				rc = cleanup_error_set(err, CLEANUP_ERROR, "cannot create sandbox directory %.*s: %s", upto, path,
				                       strerror(errno));
				goto out;
			}
			nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		e = errno;
		if (nfd < 0 && (e == ELOOP || e == ENOTDIR) && fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode)) {
			if (st.st_uid != 0 && st.st_uid != geteuid()) {
				rc = cleanup_error_set(err, CLEANUP_EREFUSED,
				                       "%.*s is a symbolic link owned by %s; cleanupctl follows links in the "
				                       "sandbox directory's path only when they belong to root or to uid %u",
				                       upto, path, user_name(st.st_uid, owner, sizeof owner),
				                       (unsigned)geteuid());
				refuse_hint(err);
				goto out;
			}
			nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			e = errno;
		}
		if (nfd < 0) {
			rc = cleanup_error_set(err, CLEANUP_ERROR, "cannot open sandbox directory %.*s: %s", upto, path,
			                       strerror(e));
			goto out;
		}
		close(fd);
		fd = nfd;
	}
	*out = fd;
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ---- The state file ----------------------------------------------------- */

/* True when PATH has the form of TEMPLATE, its X's letters or digits. */
static bool private_name_ok(const char *path, const char *template)
{
	size_t n = strlen(template) - 6, i;

	if (strlen(path) != strlen(template) || strncmp(path, template, n) != 0)
		return false;
	for (i = n; path[i]; i++)
		if (!((path[i] >= 'a' && path[i] <= 'z') || (path[i] >= 'A' && path[i] <= 'Z') ||
		      (path[i] >= '0' && path[i] <= '9')))
			return false;
	return true;
}

/* Reads DIR's state file into BASE and SOCK (each 64 bytes; "" when not
 * recorded). No file: both "". EREFUSED when the file is a symlink, not a
 * regular file, not ours (or root's), group or world writable, or holds a
 * line cleanupctl does not write. */
static int read_state(const char *dir, char *base, char *sock, cleanup_error *err)
{
	char path[CLEANUP_PATH_MAX + 32], text[1024], owner[96];
	char *line, *next;
	struct stat st;
	ssize_t n;
	int fd, rc = CLEANUP_OK, lineno = 0;

	base[0] = sock[0] = '\0';
	snprintf(path, sizeof path, "%s/%s", dir, CLEANUP_SANDBOX_STATE);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return CLEANUP_OK;
		if (errno == ELOOP) {
			rc = cleanup_error_set(err, CLEANUP_EREFUSED, "sandbox state file %s is a symbolic link", path);
			refuse_hint(err);
			return rc;
		}
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot read %s: %s", path, strerror(errno));
	}
	if (fstat(fd, &st) != 0) {
		rc = cleanup_error_set(err, CLEANUP_ERROR, "cannot stat %s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		rc = cleanup_error_set(err, CLEANUP_EREFUSED,
		                       "sandbox state file %s must be a regular file of uid %u or root, not group or world "
		                       "writable; it is %s, owned by %s, mode %04o",
		                       path, (unsigned)geteuid(), S_ISREG(st.st_mode) ? "a regular file" : "not a regular file",
		                       user_name(st.st_uid, owner, sizeof owner), (unsigned)(st.st_mode & 07777));
		refuse_hint(err);
		goto out;
	}
	n = read(fd, text, sizeof text);
	if (n < 0 || (size_t)n >= sizeof text) {
		rc = n < 0 ? cleanup_error_set(err, CLEANUP_ERROR, "cannot read %s: %s", path, strerror(errno))
		           : cleanup_error_set(err, CLEANUP_EREFUSED, "sandbox state file %s is longer than cleanupctl "
		                               "writes it", path);
		goto out;
	}
	text[n] = '\0';
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (!*line || *line == '#')
			continue;
		if (strncmp(line, "base=", 5) == 0 && private_name_ok(line + 5, CLEANUP_SANDBOX_TMP_BASE)) {
			snprintf(base, 64, "%s", line + 5);
		} else if (strncmp(line, "sock=", 5) == 0 && private_name_ok(line + 5, CLEANUP_SANDBOX_TMP_SOCK)) {
			snprintf(sock, 64, "%s", line + 5);
		} else {
			rc = cleanup_error_set(err, CLEANUP_EREFUSED,
			                       "sandbox state file %s, line %d: \"%.80s\" is not a private directory "
			                       "cleanupctl makes (%s or %s)",
			                       path, lineno, line, CLEANUP_SANDBOX_TMP_BASE, CLEANUP_SANDBOX_TMP_SOCK);
			cleanup_error_hint(err, "delete %s if you did not write it; the sandbox then starts afresh", path);
			goto out;
		}
	}
out:
	close(fd);
	return rc;
}

/* Writes SB's private directories into the state file in DIRFD (the
 * sandbox directory), through a new file renamed into place. */
static int write_state(int dirfd, const cleanup_sandbox *sb, cleanup_error *err)
{
	static const char tmp[] = "." CLEANUP_SANDBOX_STATE ".new";
	char text[256];
	int fd, len, rc = CLEANUP_OK;
	ssize_t w;

	len = snprintf(text, sizeof text,
	               "# Private directories of the cleanupctl sandbox in this directory.\n%s%s%s%s%s%s",
	               *sb->private_base ? "base=" : "", sb->private_base, *sb->private_base ? "\n" : "",
	               *sb->private_sock ? "sock=" : "", sb->private_sock, *sb->private_sock ? "\n" : "");
	if (unlinkat(dirfd, tmp, 0) != 0 && errno != ENOENT)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot remove %s/%s: %s", sb->dir, tmp, strerror(errno));
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot write %s/%s: %s", sb->dir, tmp, strerror(errno));
	w = write(fd, text, (size_t)len);
	if (w != len)
		rc = cleanup_error_set(err, CLEANUP_ERROR, "cannot write %s/%s: %s", sb->dir, tmp,
		                       w < 0 ? strerror(errno) : "short write");
	if (close(fd) != 0 && rc == CLEANUP_OK)
		rc = cleanup_error_set(err, CLEANUP_ERROR, "cannot write %s/%s: %s", sb->dir, tmp, strerror(errno));
	if (rc == CLEANUP_OK && renameat(dirfd, tmp, dirfd, CLEANUP_SANDBOX_STATE) != 0)
		rc = cleanup_error_set(err, CLEANUP_ERROR, "cannot rename %s/%s to %s: %s", sb->dir, tmp,
		                       CLEANUP_SANDBOX_STATE, strerror(errno));
	return rc;
}

/* ---- Init --------------------------------------------------------------- */

int cleanup_sandbox_init(cleanup_sandbox *sb, const char *dir, cleanup_error *err)
{
	char deflt[CLEANUP_PATH_MAX], cwd[CLEANUP_PATH_MAX], base[64], sock[64];
	const char *env = getenv("CLEANUP_SANDBOX_DIR"), *given;
	char *absdir = NULL;
	struct passwd *pw;
	int rc;

	memset(sb, 0, sizeof *sb);
	cleanup_error_clear(err);
	if (dir && *dir) {
		given = dir;
	} else if (env && *env) {
		given = env;
	} else {
		cleanup_sandbox_default_dir(deflt, sizeof deflt);
		given = deflt;
	}
	/* Lengths are measured on what was given, never on a truncated copy. */
	if (given[0] != '/') {
		size_t need;

		if (!getcwd(cwd, sizeof cwd))
			return cleanup_error_set(err, CLEANUP_ERROR, "cannot read the current directory: %s", strerror(errno));
		if (strcmp(cwd, "/") == 0)
			cwd[0] = '\0';
		need = strlen(cwd) + 1 + strlen(given);
		if (need > CLEANUP_SANDBOX_DIR_MAX)
			return dir_too_long(err, need, " once made absolute", given);
		absdir = malloc(need + 1);
		if (!absdir)
			return cleanup_error_set(err, CLEANUP_ENOMEM, "out of memory");
		memcpy(absdir, cwd, strlen(cwd));
		absdir[strlen(cwd)] = '/';
		memcpy(absdir + strlen(cwd) + 1, given, strlen(given) + 1);
		given = absdir;
	}
	pw = server_user();
	if (!pw) {
		rc = cleanup_error_set(err, CLEANUP_ERROR, "no unprivileged user (postgres or nobody) to run the server as");
		goto out;
	}
	/* Once to validate DIR (length, characters), then with its state. */
	if ((rc = cleanup_sandbox_layout(sb, given, false, NULL, NULL, err)) != CLEANUP_OK)
		goto out;
	if ((rc = read_state(sb->dir, base, sock, err)) != CLEANUP_OK)
		goto out;
	if ((rc = cleanup_sandbox_layout(sb, given, user_can_reach(pw, sb->dir), base, sock, err)) != CLEANUP_OK)
		goto out;
	if ((rc = check_private_dir(sb->private_base, pw, err)) != CLEANUP_OK ||
	    (rc = check_private_dir(sb->private_sock, pw, err)) != CLEANUP_OK)
		goto out;
	snprintf(sb->run_as, sizeof sb->run_as, "%s", pw->pw_name);
	if ((rc = find_bindir(sb->bindir, sizeof sb->bindir, err)) != CLEANUP_OK)
		goto out;
	rc = cleanup_sandbox_status(sb, err);
out:
	free(absdir);
	return rc;
}

/* ---- Running things as the server's user -------------------------------- */

/* Runs ARGV as the server user in SB's base directory, output appended to
 * LOG (relative to that directory; NULL: /dev/null). Returns the exit
 * status, or -1 when it could not run. */
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
		/* Relative paths from here on: DIR never reaches pg_ctl's shell
		 * command line, whatever characters it holds. */
		if (chdir(sb->base) != 0)
			_exit(125);
		fd = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
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

/* Writes TEXT to REL (relative to SB's base directory; appended when
 * APPEND, else replaced) in a child running as PW: a file inside the
 * server's directories is never opened by root. */
static int write_as(const cleanup_sandbox *sb, const struct passwd *pw, const char *rel, const char *text,
                    bool append, cleanup_error *err)
{
	pid_t pid;
	int st, code;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot fork to write %s/%s: %s", sb->base, rel,
		                         strerror(errno));
	if (pid == 0) {
		size_t off = 0, n = strlen(text);
		int fd;

		if (drop_to(pw) != 0)
			_exit(255);
		if (chdir(sb->base) != 0)
			_exit(errno & 0xff);
		fd = open(rel, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0600);
		if (fd < 0)
			_exit(errno & 0xff);
		while (off < n) {
			ssize_t w = write(fd, text + off, n - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				_exit(errno & 0xff);
			off += (size_t)w;
		}
		_exit(close(fd) == 0 ? 0 : errno & 0xff);
	}
	if (waitpid(pid, &st, 0) < 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "cannot wait for the writer of %s/%s: %s", sb->base, rel,
		                         strerror(errno));
	code = WIFEXITED(st) ? WEXITSTATUS(st) : 254;
	if (code == 0)
		return CLEANUP_OK;
	return cleanup_error_set(err, CLEANUP_ERROR, "cannot write %s/%s as user %s: %s", sb->base, rel, pw->pw_name,
	                         code == 255 ? "cannot switch to that user"
	                         : code == 254 ? "the writer died"
	                                       : strerror(code));
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

/* The pid in SB's postmaster.pid (not following a symlink), or 0. */
static long read_postmaster_pid(const cleanup_sandbox *sb)
{
	char path[CLEANUP_PATH_MAX + 32], text[32];
	long pid = 0;
	ssize_t n;
	int fd;

	if (!sb->datadir[0])
		return 0;
	snprintf(path, sizeof path, "%s/postmaster.pid", sb->datadir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof text - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	if (sscanf(text, "%ld", &pid) != 1 || pid <= 0 || pid > INT_MAX)
		return 0;
	return pid;
}

int cleanup_sandbox_status(cleanup_sandbox *sb, cleanup_error *err)
{
	char path[CLEANUP_PATH_MAX + 32];
	long pid;

	(void)err; /* reading state cannot fail; the parameter keeps the API uniform */

	sb->running = false;
	sb->pid = 0;
	sb->initialized = false;
	if (!sb->datadir[0])
		return CLEANUP_OK;
	snprintf(path, sizeof path, "%s/PG_VERSION", sb->datadir);
	sb->initialized = access(path, F_OK) == 0;
	pid = read_postmaster_pid(sb);
	if (pid > 0 && postmaster_alive((pid_t)pid)) {
		sb->running = true;
		sb->pid = (int)pid;
	}
	return CLEANUP_OK;
}

static int write_conf(const cleanup_sandbox *sb, const struct passwd *pw, cleanup_error *err)
{
	char text[2 * CLEANUP_PATH_MAX + 1024];
	int rc;

	if ((rc = cleanup_sandbox_conf_text(text, sizeof text, sb, err)) != CLEANUP_OK)
		return rc;
	return write_as(sb, pw, "data/cleanupctl.conf", text, false, err);
}

static int initdb(cleanup_sandbox *sb, const struct passwd *pw, cleanup_error *err)
{
	char prog[CLEANUP_PATH_MAX + 16];
	char *argv[] = {prog, "-D", "data", "-U", "postgres", "-A", "trust", "-E", "UTF8",
	                "--locale=C", "--no-sync", NULL};
	int rc;

	snprintf(prog, sizeof prog, "%s/initdb", sb->bindir);
	rc = run_as(sb, argv, "log/postgres.log");
	if (rc != 0)
		return cleanup_error_set(err, CLEANUP_ERROR, "initdb failed (exit %d); see %s", rc, sb->logfile);
	return write_as(sb, pw, "data/postgresql.conf", "\ninclude_if_exists = 'cleanupctl.conf'\n", true, err);
}

/* Creates the sandbox database when missing, through the engine. */
static int ensure_database(const cleanup_sandbox *sb, cleanup_error *err)
{
	char conninfo[2 * CLEANUP_PATH_MAX + 128];
	cleanup_engine *e = NULL;
	cleanup_rows *rows = NULL;
	int rc;

	cleanup_sandbox_conninfo(sb, "postgres", conninfo, sizeof conninfo);
	rc = cleanup_engine_open(&e, conninfo, "cleanupctl sandbox", err);
	if (rc != CLEANUP_OK)
		return rc;
	rc = lab_query(&rows, e, CLEANUP_LAB_Q_SANDBOX_DB_EXISTS, 0, NULL, "looking for the sandbox database",
	               err);
	if (rc == CLEANUP_OK && cleanup_rows_count(rows) == 0) {
		cleanup_rows_free(rows);
		rows = NULL;
		rc = lab_query(&rows, e, CLEANUP_LAB_Q_SANDBOX_DB_CREATE, 0, NULL,
		               "creating the sandbox database", err);
	}
	cleanup_rows_free(rows);
	cleanup_engine_close(e);
	return rc;
}

/* The pid in a postmaster.pid whose server is not running, or 0. */
static pid_t stale_postmaster(const cleanup_sandbox *sb)
{
	long pid = read_postmaster_pid(sb);

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

/* Makes and hands over SB's directories: DIR (kept as it is), the private
 * ones under /tmp (recorded in DIR's state file), then log/, sock/ and
 * data/ in the base directory. */
static int make_dirs(cleanup_sandbox *sb, const struct passwd *pw, cleanup_error *err)
{
	char pbase[sizeof sb->private_base], psock[sizeof sb->private_sock], sock_in_base[CLEANUP_PATH_MAX + 8];
	char dir[CLEANUP_SANDBOX_DIR_MAX + 1];
	int dirfd = -1, basefd = -1, rc;
	bool made_base = false, made_sock = false, recorded = false;

	/* layout rewrites sb->dir: it must not read from it at the same time. */
	if (strlen(sb->dir) >= sizeof dir)
		return cleanup_error_set(err, CLEANUP_EINVAL, "sandbox directory %.80s... is too long", sb->dir);
	memcpy(dir, sb->dir, strlen(sb->dir) + 1);
	if ((rc = open_dir_path(&dirfd, dir, err)) != CLEANUP_OK)
		goto out;
	memcpy(pbase, sb->private_base, sizeof pbase);
	memcpy(psock, sb->private_sock, sizeof psock);
	if (*pbase || !sb->reachable) {
		if ((rc = own_private_dir(&basefd, pbase, sizeof pbase, CLEANUP_SANDBOX_TMP_BASE, pw, &made_base, err)))
			goto out;
	}
	if ((rc = cleanup_sandbox_layout(sb, dir, sb->reachable, pbase, psock, err)) != CLEANUP_OK)
		goto out;
	if (!sb->sockdir[0] || *psock) {
		/* A recorded private socket directory is checked even when
		 * layout no longer needs it: it may come back into use. */
		if ((rc = own_private_dir(NULL, psock, sizeof psock, CLEANUP_SANDBOX_TMP_SOCK, pw, &made_sock, err)))
			goto out;
		if ((rc = cleanup_sandbox_layout(sb, dir, sb->reachable, pbase, psock, err)) != CLEANUP_OK)
			goto out;
	}
	if ((made_base || made_sock) && (rc = write_state(dirfd, sb, err)) != CLEANUP_OK)
		goto out;
	recorded = true;
	snprintf(sock_in_base, sizeof sock_in_base, "%s/sock", sb->base);
	if ((rc = own_subdir(basefd >= 0 ? basefd : dirfd, sb->base, "log", pw, err)) != CLEANUP_OK)
		goto out;
	if (strcmp(sb->sockdir, sock_in_base) == 0 &&
	    (rc = own_subdir(basefd >= 0 ? basefd : dirfd, sb->base, "sock", pw, err)) != CLEANUP_OK)
		goto out;
	rc = own_subdir(basefd >= 0 ? basefd : dirfd, sb->base, "data", pw, err);
out:
	/* A private directory no state file names would be lost: remove it
	 * (still empty, and only its owner or root can touch it in /tmp). */
	if (!recorded && made_base)
		rmdir(pbase);
	if (!recorded && made_sock)
		rmdir(psock);
	if (basefd >= 0)
		close(basefd);
	if (dirfd >= 0)
		close(dirfd);
	return rc;
}

int cleanup_sandbox_start(cleanup_sandbox *sb, cleanup_error *err)
{
	struct passwd *pw = getpwnam(sb->run_as);
	char prog[CLEANUP_PATH_MAX + 16];
	char *argv[] = {prog, "start", "-w", "-t", "60", "-D", "data", "-l", "log/postgres.log", NULL};
	int rc, attempt;

	if (!pw)
		return cleanup_error_set(err, CLEANUP_ERROR, "user %s does not exist", sb->run_as);
	if ((rc = make_dirs(sb, pw, err)) != CLEANUP_OK)
		return rc;
	cleanup_sandbox_status(sb, err);
	if (!sb->initialized) {
		if ((rc = initdb(sb, pw, err)))
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
		for (attempt = 0; (rc = run_as(sb, argv, "log/postgres.log")) != 0 && attempt < 10; attempt++) {
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
	/* A fast stop ends with a shutdown checkpoint, which also finishes
	 * the spread checkpoint in progress: after a test run that made
	 * hundreds of databases on a busy disk, its sync phase alone took
	 * 69 s (20,086 files), so pg_ctl's default 60 s is too short. */
	char *argv[] = {prog, "stop", "-w", "-t", "600", "-m", "fast", "-D", "data", NULL};
	int rc;

	cleanup_sandbox_status(sb, err);
	if (!sb->running)
		return CLEANUP_OK;
	snprintf(prog, sizeof prog, "%s/pg_ctl", sb->bindir);
	rc = run_as(sb, argv, "log/postgres.log");
	cleanup_sandbox_status(sb, err);
	if (rc != 0 && sb->running)
		return cleanup_error_set(err, CLEANUP_ERROR, "pg_ctl stop failed (exit %d); see %s", rc, sb->logfile);
	return CLEANUP_OK;
}

/* Unit tests of the quoting of paths the sandbox writes: the conninfo it
 * prints (parsed back by libpq's documented grammar: keyword = value, a
 * value single-quoted with \' and \\ inside; tests/cli/test_sandbox_quote.sh
 * has libpq itself read it) and the postgresql.conf
 * line naming the socket directory (single quotes doubled, backslashes
 * doubled, the list element double-quoted). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "cleanup/sandbox.h"
#include "test_main.h"

/* The value of KEYWORD in CONNINFO, read by libpq's conninfo grammar
 * (libpq itself stays inside the engine), into BUF. */
static void conninfo_value(const char *conninfo, const char *keyword, char *buf, size_t len)
{
	const char *p = conninfo;
	size_t klen = strlen(keyword);

	buf[0] = '\0';
	while (*p) {
		const char *key = p;
		size_t n = 0;
		bool match;

		while (*p == ' ')
			p++;
		key = p;
		while (*p && *p != '=' && *p != ' ')
			p++;
		match = (size_t)(p - key) == klen && strncmp(key, keyword, klen) == 0;
		if (*p != '=')
			fail_msg("no '=' after a keyword in %s", conninfo);
		p++;
		if (*p == '\'') {
			for (p++; *p && *p != '\''; p++) {
				if (*p == '\\' && p[1])
					p++;
				if (match && n + 1 < len)
					buf[n++] = *p;
			}
			if (*p != '\'')
				fail_msg("unterminated quoted value in %s", conninfo);
			p++;
		} else {
			for (; *p && *p != ' '; p++) {
				if (*p == '\\' && p[1])
					p++;
				if (match && n + 1 < len)
					buf[n++] = *p;
			}
		}
		if (match)
			buf[n] = '\0';
		if (*p && *p != ' ')
			fail_msg("garbage after a value in %s", conninfo);
	}
}

/* Whatever the socket directory holds, libpq reads back exactly it. */
static void test_conninfo_round_trips_every_path(void **state)
{
	static const char *const dirs[] = {
		"/w/sb/sock", "/w/it's a dir/sock", "/w/back\\slash/sock", "/w/'\\'\\\\''/sock", "/w/a=b c/sock",
		"/w/\"dq\" $x `y`/sock",
	};
	char conninfo[CLEANUP_PATH_MAX], got[CLEANUP_PATH_MAX];
	cleanup_sandbox sb;
	size_t i;

	(void)state;
	memset(&sb, 0, sizeof sb);
	sb.port = CLEANUP_SANDBOX_PORT;
	for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(sb.sockdir, sizeof sb.sockdir, "%s", dirs[i]);
		cleanup_sandbox_conninfo(&sb, NULL, conninfo, sizeof conninfo);
		conninfo_value(conninfo, "host", got, sizeof got);
		assert_string_equal(got, dirs[i]);
		conninfo_value(conninfo, "dbname", got, sizeof got);
		assert_string_equal(got, CLEANUP_SANDBOX_DB);
		conninfo_value(conninfo, "port", got, sizeof got);
		assert_string_equal(got, "54329");
		/* A database name that is not a plain word is quoted too. */
		cleanup_sandbox_conninfo(&sb, "it's db", conninfo, sizeof conninfo);
		conninfo_value(conninfo, "dbname", got, sizeof got);
		assert_string_equal(got, "it's db");
	}
	snprintf(sb.sockdir, sizeof sb.sockdir, "/w/it's a dir/sock");
	cleanup_sandbox_conninfo(&sb, NULL, conninfo, sizeof conninfo);
	assert_string_equal(conninfo, "host='/w/it\\'s a dir/sock' port=54329 dbname=cleanup_lab user=postgres");
}

/* The unix_socket_directories line of cleanupctl.conf. */
static void socket_line(const char *sockdir, char *buf, size_t len)
{
	char text[4 * CLEANUP_PATH_MAX];
	cleanup_sandbox sb;
	cleanup_error err;
	const char *line, *end;

	memset(&sb, 0, sizeof sb);
	sb.port = CLEANUP_SANDBOX_PORT;
	snprintf(sb.sockdir, sizeof sb.sockdir, "%s", sockdir);
	assert_int_equal(cleanup_sandbox_conf_text(text, sizeof text, &sb, &err), CLEANUP_OK);
	line = strstr(text, "unix_socket_directories = ");
	assert_non_null(line);
	end = strchr(line, '\n');
	assert_non_null(end);
	snprintf(buf, len, "%.*s", (int)(end - line), line);
}

static void test_conf_quotes_the_socket_directory(void **state)
{
	char line[CLEANUP_PATH_MAX];

	(void)state;
	socket_line("/w/sb/sock", line, sizeof line);
	assert_string_equal(line, "unix_socket_directories = '\"/w/sb/sock\"'");
	socket_line("/w/it's a dir/sock", line, sizeof line);
	assert_string_equal(line, "unix_socket_directories = '\"/w/it''s a dir/sock\"'");
	socket_line("/w/back\\slash/sock", line, sizeof line);
	assert_string_equal(line, "unix_socket_directories = '\"/w/back\\\\slash/sock\"'");
	/* A double quote inside the list element is doubled; a comma stays
	 * inside the quoted element instead of splitting the list. */
	socket_line("/w/\"q\",x/sock", line, sizeof line);
	assert_string_equal(line, "unix_socket_directories = '\"/w/\"\"q\"\",x/sock\"'");
	/* Control bytes become octal escapes: a literal cannot hold them. */
	socket_line("/w/a\nb", line, sizeof line);
	assert_string_equal(line, "unix_socket_directories = '\"/w/a\\012b\"'");
}

static void test_conf_text_refuses_a_short_buffer(void **state)
{
	char small[40];
	cleanup_sandbox sb;
	cleanup_error err;

	(void)state;
	memset(&sb, 0, sizeof sb);
	snprintf(sb.sockdir, sizeof sb.sockdir, "/w/sb/sock");
	assert_int_equal(cleanup_sandbox_conf_text(small, sizeof small, &sb, &err), CLEANUP_EINVAL);
	assert_true(strlen(small) < sizeof small);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_conninfo_round_trips_every_path),
          cmocka_unit_test(test_conf_quotes_the_socket_directory),
          cmocka_unit_test(test_conf_text_refuses_a_short_buffer),)

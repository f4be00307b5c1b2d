/* Unit tests of conninfo redaction (core/src/engine.c, docs/security.md):
 * a password written in --db never reaches a message. Both conninfo forms
 * (key=value and URI), quoted and escaped values, query parameters,
 * sslpassword, strings libpq rejects, and libpq's own messages quoting
 * them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "cleanup/engine.h"
#include "test_main.h"

static void check(const char *in, const char *want)
{
	char buf[512];

	cleanup_conninfo_redact(buf, sizeof buf, in);
	if (strcmp(buf, want) != 0)
		fail_msg("redact(\"%s\") = \"%s\", want \"%s\"", in, buf, want);
}

static void test_key_value_passwords_are_masked(void **state)
{
	(void)state;
	check("host=/tmp dbname=lab", "host=/tmp dbname=lab");
	check("host=db password=secret dbname=lab", "host=db password=*** dbname=lab");
	check("password=secret", "password=***");
	check("host=db password = 'se cret' user=u", "host=db password = *** user=u");
	check("password='it\\'s secret' host=h", "password=*** host=h");
	check("password=se\\ cret host=h", "password=*** host=h");
	check("sslpassword=keypass sslkey=/k", "sslpassword=*** sslkey=/k");
	check("host=h password=a password=b", "host=h password=*** password=***");
	/* "passfile" names a file, not a secret. */
	check("passfile=/home/u/.pgpass", "passfile=/home/u/.pgpass");
}

static void test_uri_passwords_are_masked(void **state)
{
	(void)state;
	check("postgresql://u@h/db", "postgresql://u@h/db");
	check("postgresql://u:secret@h/db", "postgresql://u:***@h/db");
	check("postgres://u:secret@h:5433/db?sslmode=require", "postgres://u:***@h:5433/db?sslmode=require");
	check("postgresql://h/db?user=u&password=secret&sslmode=disable",
	      "postgresql://h/db?user=u&password=***&sslmode=disable");
	check("postgresql://h/db?p%61ssword=secret", "postgresql://h/db?p%61ssword=***");
	check("postgresql://u:p%40ss@h/db", "postgresql://u:***@h/db");
	check("postgresql://h/db", "postgresql://h/db");
}

/* More secrets than the scanner keeps spans for: the rest of the string
 * is masked from the last one on, never shown. */
static void test_many_secrets_are_all_masked(void **state)
{
	char in[1024] = "host=h", out[1024];
	int i;

	(void)state;
	for (i = 0; i < 12; i++)
		snprintf(in + strlen(in), sizeof in - strlen(in), " password=secret%d", i);
	cleanup_conninfo_redact(out, sizeof out, in);
	assert_null(strstr(out, "secret"));
	assert_non_null(strstr(out, "host=h password=***"));
	snprintf(in, sizeof in, "postgresql://u:secret@h/db?");
	for (i = 0; i < 12; i++)
		snprintf(in + strlen(in), sizeof in - strlen(in), "password=secret%d&", i);
	cleanup_conninfo_redact(out, sizeof out, in);
	assert_null(strstr(out, "secret"));
}

static void test_bare_names_and_nothing(void **state)
{
	char buf[8];

	(void)state;
	check("cleanup_lab", "cleanup_lab");
	check("", "");
	check(NULL, "");
	/* A small buffer still never shows the secret. */
	cleanup_conninfo_redact(buf, sizeof buf, "password=secretsecret");
	assert_null(strstr(buf, "secret"));
}

/* Strings libpq rejects: what might be a password is masked anyway. */
static void test_unparsable_strings_hide_what_follows(void **state)
{
	static const struct {
		const char *conninfo, *hidden, *kept; /* kept: NULL, nothing to look for */
	} cases[] = {
		{"host=h password secret", "secret", "host=h"},
		{"host=h password='unterminated secret", "secret", NULL},
		{"postgresql://u:sec%zzret@h/db", "sec", NULL},
	};
	char buf[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cleanup_conninfo_redact(buf, sizeof buf, cases[i].conninfo);
		assert_null(strstr(buf, cases[i].hidden));
		if (cases[i].kept)
			assert_non_null(strstr(buf, cases[i].kept));
	}
}

static void test_libpq_messages_are_scrubbed(void **state)
{
	/* A libpq message about CONNINFO, scrubbed: HIDDEN is gone (NULL:
	 * nothing to look for), SHOWN is in it, or (whole) all of it. */
	static const struct {
		const char *msg, *conninfo, *hidden, *shown;
		bool whole;
	} cases[] = {
		{"invalid percent-encoded token: \"sec%zzret\"", "postgresql://u:sec%zzret@h/db", "sec",
		 "invalid percent-encoded token", false},
		/* The decoded form of a URI password too. */
		{"password p@ss was refused", "postgresql://u:p%40ss@h/db", NULL, "password *** was refused", true},
		/* And the unescaped form of a quoted value. */
		{"saw it's secret", "password='it\\'s secret'", "secret", NULL, false},
		/* No secret in the conninfo: the message is left alone. */
		{"host db not found", "host=db dbname=x", NULL, "host db not found", true},
	};
	char msg[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(msg, sizeof msg, "%s", cases[i].msg);
		cleanup_conninfo_scrub(msg, sizeof msg, cases[i].conninfo);
		if (cases[i].hidden)
			assert_null(strstr(msg, cases[i].hidden));
		if (cases[i].whole)
			assert_string_equal(msg, cases[i].shown);
		else if (cases[i].shown)
			assert_non_null(strstr(msg, cases[i].shown));
	}
}

static void test_libpq_version(void **state)
{
	(void)state;
	/* MAJOR * 10000 + MINOR, PostgreSQL 10 or later. */
	assert_true(cleanup_libpq_version() >= 100000);
}

TEST_MAIN(NULL, NULL,
          cmocka_unit_test(test_key_value_passwords_are_masked),
          cmocka_unit_test(test_uri_passwords_are_masked),
          cmocka_unit_test(test_many_secrets_are_all_masked),
          cmocka_unit_test(test_bare_names_and_nothing),
          cmocka_unit_test(test_unparsable_strings_hide_what_follows),
          cmocka_unit_test(test_libpq_messages_are_scrubbed),
          cmocka_unit_test(test_libpq_version),)

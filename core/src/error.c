/* Error records and the one place where SQLSTATEs become statuses and
 * statuses become exit codes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cleanup/error.h"

/* The length of the longest prefix of S (N bytes) no longer than MAX that
 * does not end inside a multi-byte UTF-8 character: when the byte at MAX
 * continues a character, back off to that character's first byte. */
static size_t utf8_prefix(const char *s, size_t n, size_t max)
{
	size_t k = max;

	if (max >= n)
		return n;
	while (k > 0 && max - k < 3 && ((unsigned char)s[k] & 0xC0) == 0x80)
		k--;
	/* s[k] is the first byte of the character at the cut only when it is a
	 * lead byte; after three continuation bytes it is not one of ours. */
	return ((unsigned char)s[k] & 0xC0) == 0xC0 ? k : max;
}

size_t cleanup_text_copy(char *dst, size_t len, const char *src)
{
	size_t n;

	if (!dst || len == 0)
		return 0;
	src = src ? src : "";
	n = utf8_prefix(src, strlen(src), len - 1);
	memmove(dst, src, n);
	dst[n] = '\0';
	return n;
}

/* After vsnprintf into BUF (LEN bytes) wanted WANT bytes: when the text was
 * cut, cut it back to a character boundary. */
static void utf8_fix_cut(char *buf, size_t len, int want)
{
	size_t have = strlen(buf);

	if (want > 0 && (size_t)want > have && have + 1 == len) {
		/* The cut fell at HAVE; the byte there is gone, so look at what
		 * is left: drop a trailing lead byte and its partial sequence. */
		size_t k = have, back = 0;

		while (k > 0 && back < 3 && ((unsigned char)buf[k - 1] & 0xC0) == 0x80) {
			k--;
			back++;
		}
		if (k > 0 && ((unsigned char)buf[k - 1] & 0xC0) == 0xC0) {
			unsigned char lead = (unsigned char)buf[k - 1];
			size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;

			if (back + 1 < need)
				buf[k - 1] = '\0';
		}
	}
}

void cleanup_error_clear(cleanup_error *err)
{
	if (err)
		memset(err, 0, sizeof *err);
}

int cleanup_error_set(cleanup_error *err, int status, const char *fmt, ...)
{
	va_list ap;
	int want;

	if (!err)
		return status;
	cleanup_error_clear(err);
	err->status = status;
	va_start(ap, fmt);
	want = vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
	utf8_fix_cut(err->message, sizeof err->message, want);
	return status;
}

void cleanup_error_hint(cleanup_error *err, const char *fmt, ...)
{
	va_list ap;
	int want;

	if (!err)
		return;
	va_start(ap, fmt);
	want = vsnprintf(err->hint, sizeof err->hint, fmt, ap);
	va_end(ap);
	utf8_fix_cut(err->hint, sizeof err->hint, want);
}

int cleanup_status_from_sqlstate(const char *s)
{
	if (!s || strlen(s) != 5)
		return CLEANUP_ERROR;
	if (strcmp(s, "55P03") == 0)
		return CLEANUP_EBUSY;
	if (strcmp(s, "CU001") == 0)
		return CLEANUP_ENOTFOUND;
	if (strncmp(s, "CU1", 3) == 0 || strcmp(s, "22021") == 0 || strcmp(s, "22P05") == 0)
		return CLEANUP_EINVAL;
	if (strncmp(s, "CU4", 3) == 0 || strncmp(s, "CUA", 3) == 0)
		return CLEANUP_EREFUSED;
	if (strncmp(s, "08", 2) == 0 || strcmp(s, "57P01") == 0 || strcmp(s, "57P02") == 0 ||
	    strcmp(s, "57P03") == 0)
		return CLEANUP_ECONN;
	/* A write on a read-only server (a hot standby): exit 5. */
	if (strcmp(s, "25006") == 0)
		return CLEANUP_EREADONLY;
	/* A deadlock or serialization failure is contention too: retry. */
	if (strcmp(s, "40P01") == 0 || strcmp(s, "40001") == 0)
		return CLEANUP_EBUSY;
	return CLEANUP_ERROR;
}

int cleanup_exit_code(int status)
{
	switch (status) {
	case CLEANUP_OK:
		return 0;
	case CLEANUP_EINVAL:
		return 2;
	case CLEANUP_EBUSY:
		return 3;
	case CLEANUP_EREFUSED:
		return 4;
	case CLEANUP_EREADONLY:
		return 5;
	default:
		return 1;
	}
}

const char *cleanup_status_name(int status)
{
	switch (status) {
	case CLEANUP_OK:
		return "ok";
	case CLEANUP_EINVAL:
		return "invalid";
	case CLEANUP_EBUSY:
		return "busy";
	case CLEANUP_EREFUSED:
		return "refused";
	case CLEANUP_ENOTFOUND:
		return "not-found";
	case CLEANUP_ECONN:
		return "connection";
	case CLEANUP_ENOMEM:
		return "out-of-memory";
	case CLEANUP_EREADONLY:
		return "read-only-server";
	default:
		return "error";
	}
}

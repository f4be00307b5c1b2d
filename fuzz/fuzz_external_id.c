/* Fuzz target: the external-ID rule (cleanup_external_id_check, job.h) and
 * the quoting of IDs in messages (cleanup_quote_id).
 *
 * The input is one ID, all of its bytes. Properties:
 *  - the verdict equals an independent reference of the rule (non-empty,
 *    at most CLEANUP_EXTERNAL_ID_MAX bytes, well-formed UTF-8 by the
 *    Unicode table of byte sequences, no NUL, C0, DEL or C1 character),
 *    and a refusal names the rule the reference found broken first;
 *  - WHY is always NUL-terminated inside WHYLEN bytes, whatever WHYLEN;
 *  - nothing past LEN is read (the driver passes an exact-size copy);
 *  - the quoted form is clean UTF-8 within BUFLEN bytes, and unquoting it
 *    gives the ID back (a prefix of it when the quote was cut with "...").
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/error.h"
#include "cleanup/job.h"
#include "fuzz.h"

enum ref_verdict { REF_OK, REF_EMPTY, REF_LONG, REF_NUL, REF_UTF8, REF_CONTROL, REF_EDGE_SPACE, REF_INVISIBLE };

/* The invisible characters, as the rule's statement lists them (job.h),
 * written again here: spaces other than U+0020, zero-width, format and
 * bidirectional controls, fillers. */
static bool ref_invisible(uint32_t cp)
{
	return cp == 0x00A0 || cp == 0x00AD || cp == 0x034F || cp == 0x061C || (cp >= 0x115F && cp <= 0x1160) ||
	       cp == 0x1680 || (cp >= 0x17B4 && cp <= 0x17B5) || (cp >= 0x180B && cp <= 0x180F) ||
	       (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) || (cp >= 0x205F && cp <= 0x206F) ||
	       cp == 0x3000 || cp == 0x3164 || cp == 0xFEFF || cp == 0xFFA0 || (cp >= 0xFFF9 && cp <= 0xFFFB) ||
	       (cp >= 0xE0000 && cp <= 0xE007F);
}

/* The rule, written from its statement in job.h, not from job.c. *AT gets
 * the byte offset of the first character that breaks it. */
static enum ref_verdict reference(const uint8_t *s, size_t len, size_t *at)
{
	size_t i = 0;

	*at = 0;
	if (len == 0)
		return REF_EMPTY;
	if (len > CLEANUP_EXTERNAL_ID_MAX)
		return REF_LONG;
	while (i < len) {
		uint32_t cp;
		size_t k;

		*at = i;
		if (s[i] == 0)
			return REF_NUL;
		k = fuzz_utf8_char(s + i, len - i, &cp);
		if (k == 0)
			return REF_UTF8;
		if (fuzz_is_control(cp))
			return REF_CONTROL;
		i += k;
	}
	/* After the whole ID is known clean, as the server's rule orders it. */
	if (s[0] == ' ' || s[len - 1] == ' ') {
		*at = s[0] == ' ' ? 0 : len - 1;
		return REF_EDGE_SPACE;
	}
	for (i = 0; i < len;) {
		uint32_t cp;
		size_t k = fuzz_utf8_char(s + i, len - i, &cp);

		*at = i;
		if (ref_invisible(cp))
			return REF_INVISIBLE;
		i += k;
	}
	return REF_OK;
}

/* A word of the rule that a refusal for V must contain. */
static const char *rule_word(enum ref_verdict v)
{
	switch (v) {
	case REF_EMPTY:
		return "empty";
	case REF_LONG:
		return "256";
	case REF_NUL:
		return "NUL";
	case REF_UTF8:
		return "UTF-8";
	case REF_CONTROL:
		return "control";
	case REF_EDGE_SPACE:
		return "space at its start or end";
	case REF_INVISIBLE:
		return "invisible";
	default:
		return "";
	}
}

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Undoes cleanup_quote_id's escapes: Q (without its quotes, QLEN bytes)
 * into OUT (room for QLEN bytes). Returns the length, or -1 when Q holds
 * something the quoting never writes. */
static long unquote(const uint8_t *q, size_t qlen, uint8_t *out)
{
	size_t i = 0, o = 0;

	while (i < qlen) {
		if (q[i] != '\\') {
			out[o++] = q[i++];
			continue;
		}
		if (i + 1 >= qlen)
			return -1;
		switch (q[i + 1]) {
		case 't':
			out[o++] = '\t';
			i += 2;
			break;
		case 'n':
			out[o++] = '\n';
			i += 2;
			break;
		case 'r':
			out[o++] = '\r';
			i += 2;
			break;
		case '\\':
		case '"':
			out[o++] = q[i + 1];
			i += 2;
			break;
		case 'x':
			if (i + 3 >= qlen || hexval(q[i + 2]) < 0 || hexval(q[i + 3]) < 0)
				return -1;
			out[o++] = (uint8_t)(hexval(q[i + 2]) * 16 + hexval(q[i + 3]));
			i += 4;
			break;
		case 'u': { /* \u0080 .. \u009f: a C1 character, two bytes of UTF-8 */
			int v;

			if (i + 5 >= qlen || q[i + 2] != '0' || q[i + 3] != '0' || hexval(q[i + 4]) < 0 ||
			    hexval(q[i + 5]) < 0)
				return -1;
			v = hexval(q[i + 4]) * 16 + hexval(q[i + 5]);
			if (v < 0x80 || v > 0x9F)
				return -1;
			out[o++] = 0xC2;
			out[o++] = (uint8_t)v;
			i += 6;
			break;
		}
		default:
			return -1;
		}
	}
	return (long)o;
}

static void check_quote(const uint8_t *id, size_t len, size_t buflen)
{
	/* An exact-size buffer: a write past BUFLEN is a heap overflow. */
	char *buf = malloc(buflen ? buflen : 1);
	uint8_t *back = NULL;
	size_t qlen;
	long n;
	bool cut;

	if (!buf)
		fuzz_fail("out of memory");
	if (buflen == 0) {
		cleanup_quote_id(buf, 0, (const char *)id, len);
		goto out;
	}
	cleanup_quote_id(buf, buflen, (const char *)id, len);
	qlen = strnlen(buf, buflen);
	if (qlen >= buflen)
		fuzz_fail("quote_id: no NUL within %zu bytes", buflen);
	if (buflen < 8) {
		if (qlen != 0)
			fuzz_fail("quote_id: buffer of %zu bytes holds \"%s\", expected \"\"", buflen, buf);
		goto out;
	}
	if (!fuzz_clean_utf8((const uint8_t *)buf, qlen))
		fuzz_fail("quote_id: the quoted form is not clean UTF-8");
	if (qlen < 2 || buf[0] != '"' || buf[qlen - 1] != '"')
		fuzz_fail("quote_id: \"%s\" is not in quotes", buf);
	/* "..." before the closing quote marks a cut; an ID may end in "..."
	 * itself, so a cut is also recognised by what unquoting gives. */
	back = malloc(qlen);
	if (!back)
		fuzz_fail("out of memory");
	n = unquote((const uint8_t *)buf + 1, qlen - 2, back);
	if (n == (long)len && memcmp(back, id, len) == 0)
		goto out; /* whole */
	cut = qlen >= 5 && memcmp(buf + qlen - 4, "...\"", 4) == 0;
	if (!cut)
		fuzz_fail("quote_id: \"%s\" does not unquote to the ID (%zu-byte buffer)", buf, buflen);
	n = unquote((const uint8_t *)buf + 1, qlen - 5, back);
	if (n < 0 || (size_t)n > len || memcmp(back, id, (size_t)n) != 0)
		fuzz_fail("quote_id: cut quote \"%s\" is not a prefix of the ID", buf);
	/* Only a short buffer may cut: each byte takes at most 6 (\u0085). */
	if (buflen >= 6 * len + 8)
		fuzz_fail("quote_id: cut within a %zu-byte buffer for a %zu-byte ID", buflen, len);
out:
	free(back);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[160], *small = NULL;
	enum ref_verdict want;
	size_t at, whylen;
	int rc;

	fuzz_set_input(data, size);
	want = reference(data, size, &at);

	rc = cleanup_external_id_check((const char *)data, size, why, sizeof why);
	if ((rc == CLEANUP_OK) != (want == REF_OK))
		fuzz_fail("validator says %s, the reference says %s (rule \"%s\" at offset %zu)",
		          rc == CLEANUP_OK ? "valid" : why, want == REF_OK ? "valid" : "invalid", rule_word(want), at);
	if (rc != CLEANUP_OK && rc != CLEANUP_EINVAL)
		fuzz_fail("validator returned %d, neither CLEANUP_OK nor CLEANUP_EINVAL", rc);
	if (want != REF_OK) {
		if (strnlen(why, sizeof why) == sizeof why || !why[0])
			fuzz_fail("refusal without a NUL-terminated reason");
		if (!strstr(why, rule_word(want)))
			fuzz_fail("refusal \"%s\" does not name the rule the reference found broken (%s at offset %zu)", why,
			          rule_word(want), at);
	}
	/* Without WHY, and with WHY of every small size. */
	if (cleanup_external_id_check((const char *)data, size, NULL, 0) != rc)
		fuzz_fail("the verdict changes without WHY");
	whylen = size % 24;
	small = malloc(whylen ? whylen : 1);
	if (!small)
		fuzz_fail("out of memory");
	if (cleanup_external_id_check((const char *)data, size, small, whylen) != rc)
		fuzz_fail("the verdict changes with a %zu-byte WHY", whylen);
	if (rc != CLEANUP_OK && whylen > 0 && strnlen(small, whylen) >= whylen)
		fuzz_fail("reason not NUL-terminated within %zu bytes", whylen);
	free(small);

	/* The quoting: a buffer that fits, and one that may cut. */
	check_quote(data, size, 6 * size + 8);
	check_quote(data, size, size > 0 ? (size_t)data[0] % 64 : 0);
	return 0;
}

/* Terminal-safe text: one definition, used by every human-readable output
 * that prints text from the database, a file or the user (the CLI's tables
 * and messages, the console's cells).
 *
 * Library, server and job names, external IDs and server messages are
 * written by any writer. Printed raw, an ESC or a C1 control (U+009B is a
 * one-character CSI) could move the cursor, rewrite earlier output, set the
 * window title or, on some terminals, answer back. So before text reaches a
 * terminal, each of these becomes '?':
 *   - C0 controls U+0000-U+001F (including TAB, CR and LF: a name never
 *     spans lines) and DEL U+007F;
 *   - C1 controls U+0080-U+009F;
 *   - bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069)
 *     and the line/paragraph separators U+2028, U+2029, which reorder or
 *     break what the operator reads;
 *   - bytes that are not valid UTF-8 (stray continuation bytes, overlong
 *     forms, surrogates, code points above U+10FFFF, truncated sequences):
 *     one '?' per byte.
 * Everything else, printable UTF-8 included, passes unchanged. The rule
 * does not depend on the locale. JSON output is escaped instead (see
 * cli_json_string), never sanitized.
 */
#ifndef CLEANUP_TUI_SANITIZE_H
#define CLEANUP_TUI_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Decodes one character of S (N >= 1 bytes available). Returns its length
 * in bytes (>= 1) and sets *CP to its code point, or to -1 when the bytes
 * at S are not valid UTF-8 (then the length is 1: one bad byte). */
size_t tui_utf8_next(const char *s, size_t n, int32_t *cp);

/* tui_utf8_next() for a NUL-terminated S: the length of the character at S,
 * 0 at the end of the string. A loop over S's characters:
 *     for (; (l = tui_utf8_at(s, &cp)) > 0; s += l) */
size_t tui_utf8_at(const char *s, int32_t *cp);

/* True when code point CP (or -1, a bad byte) must not reach a terminal
 * as it is (the list above). */
bool tui_unsafe_codepoint(int32_t cp);

/* Copies S (NULL: "") into BUF (LEN > 0 bytes, always NUL-terminated) with
 * every unsafe character or bad byte replaced by '?', cut at a character
 * boundary when BUF is too small. Returns BUF. */
const char *tui_sanitize(char *buf, size_t len, const char *s);

/* The terminal columns code point CP takes, by a built-in table that does
 * not depend on the locale (Unicode 14): 0 for combining marks and other
 * zero-width characters (general categories Mn, Me, Cf; Hangul medial
 * vowels), 2 for East Asian Wide and Fullwidth characters (CJK, Hangul
 * syllables, most emoji), else 1. An unsafe code point or a bad byte (-1)
 * is 1: it is drawn as '?'. */
int tui_char_width(int32_t cp);

/* The columns S (NULL: "") takes once sanitized. */
size_t tui_text_width(const char *s);

/* tui_sanitize() for a table cell: as much of S as fits in WIDTH terminal
 * columns, then padded with spaces to WIDTH columns (WIDTH 0: no padding,
 * no cut). Counts display width (tui_char_width), not bytes: a multi-byte
 * name is never cut inside a character, a wide character that would
 * overhang the cell is left out (and its column padded), and combining
 * marks stay with the character they follow. BUF (LEN bytes) bounds the
 * copy too, always at a character boundary; CLEANUP_NAME_SIZE bytes hold
 * any name whole. Returns BUF. */
const char *tui_sanitize_cell(char *buf, size_t len, const char *s, size_t width);

/* tui_sanitize_cell() without the padding: at most WIDTH columns of S (0:
 * no cut), for a name inside a sentence ("library 7 \"...\" closed to
 * writers") where printf's "%.60s" would cut bytes, not characters.
 * Returns BUF. */
const char *tui_sanitize_cut(char *buf, size_t len, const char *s, size_t width);

/* Writes S sanitized to F. */
void tui_fputs_safe(const char *s, FILE *f);

/* True when S holds no unsafe character or bad byte. */
bool tui_is_safe(const char *s);

#endif

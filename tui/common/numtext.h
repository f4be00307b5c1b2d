/* Numbers as both front ends write and read them: a count with thousands
 * separators ("12,345"), and the syntax of a number of seconds (the
 * CLI's --wait / --max-rate and the console's :refresh, :throttle and
 * :wait). The CLI's cli_count and cli_seconds_syntax are these. Pure.
 */
#ifndef CLEANUP_TUI_NUMTEXT_H
#define CLEANUP_TUI_NUMTEXT_H

#include <stddef.h>
#include <stdint.h>

/* N with a comma every three digits, into BUF (plain digits when BUF is
 * too small for the commas). Returns BUF. */
const char *tui_count_text(char *buf, size_t len, int64_t n);

/* NULL with *OUT when S is a decimal number of seconds (digits with an
 * optional fraction: no sign, space, exponent or hex) from MIN to MAX;
 * else what is wrong with it ("an empty value", "out of range", ...). */
const char *tui_seconds_syntax(const char *s, double min, double max, double *out);

#endif

/* Sparklines for the job detail panel: a series of values drawn as one row
 * of block characters (UTF-8 "▁▂▃▄▅▆▇█") or, without UTF-8, ASCII
 * (" .:-=+*#"). Pure.
 */
#ifndef CLEANUP_TUI_SPARKLINE_H
#define CLEANUP_TUI_SPARKLINE_H

#include <stdbool.h>
#include <stddef.h>

/* Draws the last WIDTH of the N values VALS (oldest first) into OUT (OUTLEN
 * bytes, NUL-terminated), scaled from 0 to their maximum; fewer values than
 * WIDTH are right-aligned after blanks. Negative or NaN values are gaps
 * (blank). A value above zero never draws as blank. Returns the number of
 * cells drawn (WIDTH, or fewer when OUTLEN is too small). *MAX_OUT (may be
 * NULL) gets the maximum used for scaling. */
int sparkline_render(char *out, size_t outlen, const double *vals, size_t n, int width, bool utf8,
                     double *max_out);

/* Counts events per time bucket: OUT (WIDTH entries, oldest first) gets the
 * number of TIMES (seconds, any order) falling in each of the WIDTH buckets
 * of BUCKET_S seconds that end at NOW, divided by BUCKET_S (a rate per
 * second). Times outside the window are ignored. Pure. */
void sparkline_rate_buckets(double *out, int width, const double *times, size_t n, double now,
                            double bucket_s);

#endif

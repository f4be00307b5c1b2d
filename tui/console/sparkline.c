/* Sparklines (sparkline.h). */
#include "sparkline.h"
#include <math.h>
#include <string.h>

static const char *const blocks[8] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
                                      "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88"};
static const char ascii[] = " .:-=+*#";

int sparkline_render(char *out, size_t outlen, const double *vals, size_t n, int width, bool utf8,
                     double *max_out)
{
	size_t first = n > (size_t)(width > 0 ? width : 0) ? n - (size_t)width : 0, i, pos = 0;
	int pad = width - (int)(n - first), cells = 0, c;
	double max = 0;
	char ascii_cell[2] = {0, 0};

	if (outlen == 0)
		return 0;
	out[0] = '\0';
	if (width <= 0)
		return 0;
	for (i = first; i < n; i++)
		if (!isnan(vals[i]) && vals[i] > max)
			max = vals[i];
	if (max_out)
		*max_out = max;
	for (c = 0; c < width; c++) {
		const char *cell = " ";
		size_t len;

		if (c >= pad) {
			double v = vals[first + (size_t)(c - pad)];

			if (!isnan(v) && v >= 0) {
				/* 0 draws as the lowest block; anything above 0 at least one up. */
				int level = max > 0 ? (int)lround(v / max * 7.0) : 0;

				if (v > 0 && level == 0)
					level = 1;
				if (level > 7)
					level = 7;
				if (utf8) {
					cell = blocks[level];
				} else {
					ascii_cell[0] = v > 0 ? ascii[level] : '_';
					cell = ascii_cell;
				}
			}
		}
		len = strlen(cell);
		if (pos + len + 1 > outlen)
			break;
		memcpy(out + pos, cell, len);
		pos += len;
		cells++;
	}
	out[pos] = '\0';
	return cells;
}

void sparkline_rate_buckets(double *out, int width, const double *times, size_t n, double now,
                            double bucket_s)
{
	double start = now - width * bucket_s;
	size_t i;
	int b;

	for (b = 0; b < width; b++)
		out[b] = 0;
	if (width <= 0 || bucket_s <= 0)
		return;
	for (i = 0; i < n; i++) {
		if (isnan(times[i]) || times[i] < start || times[i] > now)
			continue;
		b = (int)((times[i] - start) / bucket_s);
		if (b >= width)
			b = width - 1;
		out[b] += 1.0 / bucket_s;
	}
}

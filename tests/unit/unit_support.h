/* Helpers shared by the unit test programs (tests/support holds those the
 * integration tests share too): a private temporary directory (made in a
 * group setup, removed with all it holds in the group teardown), a file
 * written into it, and the monotonic clock in seconds. Include after
 * cmocka.h. */
#ifndef UNIT_SUPPORT_H
#define UNIT_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Makes the directory DIR, a mkdtemp template ending in XXXXXX that becomes
 * its name; 0, or -1 as a failed cmocka setup. */
static inline int files_dir_make(char *dir)
{
	return mkdtemp(dir) ? 0 : -1;
}

/* Removes the directory DIR and everything in it; 0, or -1 as a failed
 * cmocka teardown. */
static inline int files_dir_remove(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Writes TEXT to the file PATH (created or truncated). */
static inline void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The monotonic clock, in seconds. */
static inline double mono_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif

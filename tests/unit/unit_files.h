/* Files of the unit tests that read files: a private temporary directory
 * (made in a group setup, removed with all it holds in the group teardown)
 * and a file written into it. Include after cmocka.h. */
#ifndef UNIT_FILES_H
#define UNIT_FILES_H

#include <stdio.h>
#include <stdlib.h>

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

#endif

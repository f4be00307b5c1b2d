/* Test-only fault injection points in C (see failpoint_int.h): a point
 * named in CLEANUP_FAILPOINTS stops the process with SIGSTOP. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "failpoint_int.h"

bool failpoint_enabled(const char *name)
{
	const char *list = getenv("CLEANUP_FAILPOINTS");
	size_t n = strlen(name);
	const char *p;

	if (!list || !*list)
		return false;
	for (p = list; *p;) {
		size_t len = strcspn(p, ",");

		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

void failpoint(const char *name)
{
	if (!failpoint_enabled(name))
		return;
	fprintf(stderr, "cleanupctl: failpoint %s reached: stopping (SIGSTOP)\n", name);
	fflush(stderr);
	raise(SIGSTOP);
}

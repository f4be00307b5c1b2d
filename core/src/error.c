/* Error records and the one place where SQLSTATEs become statuses and
 * statuses become exit codes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cleanup/error.h"

void cleanup_error_clear(cleanup_error *err)
{
	if (err)
		memset(err, 0, sizeof *err);
}

int cleanup_error_set(cleanup_error *err, int status, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return status;
	cleanup_error_clear(err);
	err->status = status;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
	return status;
}

void cleanup_error_hint(cleanup_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof err->hint, fmt, ap);
	va_end(ap);
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
	default:
		return "error";
	}
}

/* Demo data through cleanup.seed_demo() (sql/functions/050_seed.sql). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cleanup/seed.h"
#include "engine_int.h"

int cleanup_seed(cleanup_seed_result *out, cleanup_engine *e, const cleanup_seed_spec *spec,
                 cleanup_error *err)
{
	char sb[16], lb[16], ib[24], db[16];
	const char *params[4] = {sb, lb, ib, db};
	struct timespec t0, t1;
	PGresult *res = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	snprintf(sb, sizeof sb, "%d", spec->servers);
	snprintf(lb, sizeof lb, "%d", spec->libraries);
	snprintf(ib, sizeof ib, "%" PRId64, spec->items);
	snprintf(db, sizeof db, "%d", spec->dependents);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = engine_query(&res, e, CLEANUP_Q_SEED, 4, params, "seeding demo data", err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc != CLEANUP_OK)
		return rc;
	out->servers = (int)col_int64(res, 0, "servers");
	out->libraries = (int)col_int64(res, 0, "libraries");
	out->items = col_int64(res, 0, "items");
	out->dependents = col_int64(res, 0, "dependents");
	out->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	PQclear(res);
	return CLEANUP_OK;
}

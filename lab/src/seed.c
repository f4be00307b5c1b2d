/* Demo data through cleanup_lab.seed_demo() (lab/sql/functions/010_seed_demo.sql). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cleanup/clock.h"
#include "cleanup/lab.h"
#include "cleanup/seed.h"
#include "lab_int.h"

int cleanup_seed(cleanup_seed_result *out, cleanup_engine *e, const cleanup_seed_spec *spec,
                 cleanup_error *err)
{
	char sb[16], lb[16], ib[24], db[16];
	const char *params[4] = {sb, lb, ib, db};
	double t0;
	cleanup_rows *rows = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	/* The seeder is the lab's: its definitions go in first (a no-op when
	 * this lab bundle is installed already). */
	if ((rc = cleanup_lab_install(NULL, e, err)) != CLEANUP_OK)
		return rc;
	snprintf(sb, sizeof sb, "%d", spec->servers);
	snprintf(lb, sizeof lb, "%d", spec->libraries);
	snprintf(ib, sizeof ib, "%" PRId64, spec->items);
	snprintf(db, sizeof db, "%d", spec->dependents);
	t0 = cleanup_clock_mono();
	rc = lab_query(&rows, e, CLEANUP_LAB_Q_SEED, 4, params, "seeding demo data", err);
	if (rc != CLEANUP_OK)
		return rc;
	out->servers = (int)cleanup_rows_int64(rows, 0, "servers");
	out->libraries = (int)cleanup_rows_int64(rows, 0, "libraries");
	out->items = cleanup_rows_int64(rows, 0, "items");
	out->dependents = cleanup_rows_int64(rows, 0, "dependents");
	out->seconds = cleanup_clock_mono() - t0;
	cleanup_rows_free(rows);
	return CLEANUP_OK;
}

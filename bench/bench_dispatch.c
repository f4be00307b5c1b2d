/* bench_dispatch: what the step engine's dispatcher costs
 * (seed 001). cleanup.step_exec hands the job row and the step record to one
 * function per mode (INOUT composites) instead of running the mode inline.
 * This program times that hand-over alone: N calls of a mode function that
 * does the cheapest real mode's assignments, against the same assignments
 * inline, alternating, in rounds; it prints microseconds per step. Compare
 * them with a step's duration (docs/benchmarks.md: 3-9 ms at the median).
 *
 *   bench_dispatch --db CONNINFO [--calls N (20000)] [--rounds N (5)]
 */
#include "bench_common.h"
#include "cleanup/install.h"

#define DB_DISPATCH "cleanup_lab_bench_dispatch"

static void usage(void)
{
	fprintf(stderr, "usage: bench_dispatch --db CONNINFO [--calls N (20000)] [--rounds N (5)]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const char *const dbs[] = {DB_DISPATCH, NULL};
	const char *server = NULL;
	long calls = 20000;
	int rounds = 5, i, r;
	double split[20], inline_us[20], diff[20];
	char ci[2048], nbuf[24];
	cleanup_engine *e = NULL;
	cleanup_install_result ir;
	cleanup_error err;
	PGconn *c;

	bench_name = "bench_dispatch";
	bench_db_list = dbs;
	bench_t0 = bench_now();
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			server = argv[++i];
		else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
			calls = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else
			usage();
	}
	if (!server || calls < 100 || calls > 10000000 || rounds < 1 || rounds > 20)
		usage();

	bench_admin(server, "db_drop", DB_DISPATCH, NULL);
	bench_admin(server, "db_create", DB_DISPATCH, NULL);
	bench_conninfo(ci, sizeof ci, server, DB_DISPATCH);
	if (cleanup_engine_open(&e, ci, "bench:dispatch", &err) != CLEANUP_OK)
		bench_fatal_err("connecting", &err);
	if (cleanup_install(&ir, e, &err) != CLEANUP_OK)
		bench_fatal_err("install", &err);
	cleanup_engine_close(e);
	c = bench_open(server, DB_DISPATCH, "bench:dispatch");
	PQclear(bench_run(c, "dispatch_mode", 0, NULL));
	PQclear(bench_run(c, "dispatch_loop", 0, NULL));
	snprintf(nbuf, sizeof nbuf, "%ld", calls);
	for (r = 0; r < rounds; r++) {
		const char *p_split[2] = {nbuf, "true"}, *p_inline[2] = {nbuf, "false"};
		PGresult *a, *b;

		/* Alternate the order, so neither side always runs warm. */
		if (r % 2 == 0) {
			a = bench_run(c, "dispatch_run", 2, p_split);
			b = bench_run(c, "dispatch_run", 2, p_inline);
		} else {
			b = bench_run(c, "dispatch_run", 2, p_inline);
			a = bench_run(c, "dispatch_run", 2, p_split);
		}
		split[r] = strtod(PQgetvalue(a, 0, 0), NULL);
		inline_us[r] = strtod(PQgetvalue(b, 0, 0), NULL);
		diff[r] = split[r] - inline_us[r];
		PQclear(a);
		PQclear(b);
		printf("  round %d: through a mode function %.2f us, inline %.2f us per step\n", r + 1, split[r],
		       inline_us[r]);
	}
	printf("dispatcher (issue 7, item 8): %ld calls x %d rounds; the hand-over to a mode function costs "
	       "%.2f us per step at the median (p99 %.2f us), against a step's 3-9 ms at the median "
	       "(docs/benchmarks.md): %.3f%% of a 3 ms step\n",
	       calls, rounds, bench_quantile(diff, (size_t)rounds, 0.5), bench_quantile(diff, (size_t)rounds, 0.99),
	       100.0 * bench_quantile(diff, (size_t)rounds, 0.5) / 3000.0);
	PQfinish(c);
	bench_admin(server, "db_drop", DB_DISPATCH, NULL);
	return 0;
}

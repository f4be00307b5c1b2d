/* cleanupctl status: servers, libraries and jobs at a glance. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/report.h"
#include "cli.h"

static void print_jobs_table(const cleanup_job *jobs, size_t n)
{
	char a[32], b[32];
	size_t i;

	printf("%-6s %-15s %-8s %-24s %-11s %6s  %s\n", "JOB", "KIND", "SERVER", "TARGET", "PHASE", "STEP",
	       "PROGRESS");
	for (i = 0; i < n; i++) {
		const cleanup_job *j = &jobs[i];
		char target[40];

		snprintf(target, sizeof target, "%s %" PRId64 " %.16s",
		         strcmp(j->kind, "remove-server") == 0 ? "srv" : "lib",
		         strcmp(j->kind, "remove-server") == 0 ? j->server_id : j->library_id, j->target_name);
		printf("%-6" PRId64 " %-15s %-8" PRId64 " %-24s %-11s %6d  ", j->id, j->kind, j->server_id, target,
		       j->phase, j->step_no);
		if (strcmp(j->phase, "collecting") == 0 || strcmp(j->phase, "paused") == 0)
			printf("manifest %s IDs\n", cli_count(a, sizeof a, j->manifest_count));
		else
			printf("visited %s of %s, deleted %s\n", cli_count(a, sizeof a, j->visited),
			       j->total_estimate >= 0 ? cli_count(b, sizeof b, j->total_estimate) : "?",
			       cli_count(b, sizeof b, j->deleted));
	}
	if (n == 0)
		printf("(no jobs)\n");
}

static int exec_status(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_server_row *sv = NULL;
	cleanup_library_row *lb = NULL;
	cleanup_job *jobs = NULL;
	size_t ns = 0, nl = 0, nj = 0, i, k;
	cleanup_engine *e = NULL;
	cleanup_error err;
	char *json = NULL;
	char a[32];
	int rc;

	if (argc > 1)
		return cli_usage(ctx, &cmd_status_entry, "unexpected argument \"%s\"", argv[1]);
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	if (ctx->json) {
		if (cleanup_status_json(&json, e, &err) != CLEANUP_OK)
			goto fail;
		printf("%s\n", json);
		goto done;
	}
	if (cleanup_status_rows(&sv, &ns, &lb, &nl, e, &err) != CLEANUP_OK ||
	    cleanup_jobs_list(&jobs, &nj, e, 10, &err) != CLEANUP_OK)
		goto fail;
	printf("database %s\n\n", cleanup_engine_dbname(e));
	printf("%-7s %-24s %-10s %5s %12s  %s\n", "SERVER", "NAME", "ADMISSION", "LIBS", "ITEMS", "JOB");
	for (i = 0; i < ns; i++) {
		char job[24] = "-";

		if (sv[i].job_id > 0)
			snprintf(job, sizeof job, "%" PRId64, sv[i].job_id);
		printf("%-7" PRId64 " %-24.24s %-10s %5d %12s  %s\n", sv[i].id, sv[i].name, sv[i].admission,
		       sv[i].library_count, cli_count(a, sizeof a, sv[i].item_count), job);
		for (k = 0; k < nl; k++) {
			if (lb[k].server_id != sv[i].id)
				continue;
			snprintf(job, sizeof job, "-");
			if (lb[k].job_id > 0)
				snprintf(job, sizeof job, "%" PRId64, lb[k].job_id);
			printf("  lib %-4" PRId64 "%-23.23s %-10s %5s %12s  %s\n", lb[k].id, lb[k].name, lb[k].admission,
			       "", cli_count(a, sizeof a, lb[k].item_count), job);
		}
	}
	if (ns == 0)
		printf("(no servers: cleanupctl seed creates demo data)\n");
	printf("\n");
	print_jobs_table(jobs, nj);
done:
	free(json);
	free(sv);
	free(lb);
	cleanup_jobs_free(jobs, nj);
	cleanup_engine_close(e);
	return EXIT_DONE;
fail:
	rc = cli_fail(ctx, &err);
	free(sv);
	free(lb);
	cleanup_jobs_free(jobs, nj);
	cleanup_engine_close(e);
	return rc;
}

const cli_command cmd_status_entry = {
	"status", "", "servers, libraries, jobs at a glance", exec_status,
};

static int exec_jobs(cli_ctx *ctx, int argc, char **argv)
{
	cleanup_job *jobs = NULL;
	cleanup_engine *e = NULL;
	cleanup_error err;
	char *json = NULL;
	size_t n = 0;
	int64_t limit = 50;
	int rc, i;

	for (i = 1; i < argc; i++) {
		bool missing;
		const char *v = cli_opt(argc, argv, &i, "--limit", &missing);

		if (!v)
			return cli_usage(ctx, &cmd_jobs_entry, missing ? "%s needs a value" : "unexpected argument \"%s\"",
			                 argv[i]);
		if (!cli_parse_int(ctx, "--limit", v, 1, 1000, &limit))
			return EXIT_USAGE;
	}
	if ((rc = cli_connect(ctx, &e, true)))
		return rc;
	if (ctx->json)
		rc = cleanup_jobs_json(&json, e, (int)limit, &err);
	else
		rc = cleanup_jobs_list(&jobs, &n, e, (int)limit, &err);
	if (rc != CLEANUP_OK) {
		rc = cli_fail(ctx, &err);
	} else {
		if (json)
			printf("%s\n", json);
		else
			print_jobs_table(jobs, n);
		rc = EXIT_DONE;
	}
	free(json);
	cleanup_jobs_free(jobs, n);
	cleanup_engine_close(e);
	return rc;
}

const cli_command cmd_jobs_entry = {
	"jobs", "[--limit N]", "unfinished jobs and the most recent ones", exec_jobs,
};

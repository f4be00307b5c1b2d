/* Helpers shared by the commands: option values, id parsing, connecting,
 * error output and the human formats of a job. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cleanup/install.h"
#include "cleanup/sandbox.h"
#include "cli.h"

const char *cli_opt(int argc, char **argv, int *i, const char *name, bool *missing)
{
	size_t n = strlen(name);

	*missing = false;
	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = true;
		return NULL;
	}
	(*i)++;
	return argv[*i];
}

void cli_json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

int cli_fail(const cli_ctx *ctx, const cleanup_error *err)
{
	int code = cleanup_exit_code(err->status);

	fprintf(stderr, "cleanupctl: %s%s%s\n", err->status == CLEANUP_EBUSY ? "busy, retry later: " : "",
	        err->status == CLEANUP_EREFUSED ? "refused: " : "", err->message);
	if (err->detail[0])
		fprintf(stderr, "  detail: %s\n", err->detail);
	if (err->hint[0])
		fprintf(stderr, "  hint: %s\n", err->hint);
	if (ctx->json) {
		printf("{\"error\": {\"status\": ");
		cli_json_string(stdout, cleanup_status_name(err->status));
		printf(", \"exit_code\": %d, \"sqlstate\": ", code);
		cli_json_string(stdout, err->sqlstate);
		printf(", \"message\": ");
		cli_json_string(stdout, err->message);
		printf(", \"detail\": ");
		cli_json_string(stdout, err->detail);
		printf(", \"hint\": ");
		cli_json_string(stdout, err->hint);
		printf(", \"context\": ");
		cli_json_string(stdout, err->context);
		printf("}}\n");
	}
	return code;
}

int cli_usage(const cli_ctx *ctx, const cli_command *cmd, const char *fmt, ...)
{
	cleanup_error err;
	va_list ap;

	cleanup_error_clear(&err);
	err.status = CLEANUP_EINVAL;
	va_start(ap, fmt);
	vsnprintf(err.message, sizeof err.message, fmt, ap);
	va_end(ap);
	if (cmd)
		snprintf(err.hint, sizeof err.hint, "usage: cleanupctl %s %s", cmd->name, cmd->usage);
	return cli_fail(ctx, &err);
}

bool cli_parse_int(const cli_ctx *ctx, const char *opt, const char *s, int64_t min, int64_t max,
                   int64_t *out)
{
	char *end = NULL;
	long long v;

	errno = 0;
	v = s ? strtoll(s, &end, 10) : 0;
	if (!s || !*s || errno || *end || v < min || v > max) {
		cli_usage(ctx, NULL, "%s must be an integer from %" PRId64 " to %" PRId64 ", not \"%s\"", opt, min,
		          max, s ? s : "");
		return false;
	}
	*out = v;
	return true;
}

bool cli_parse_id(const cli_ctx *ctx, const char *what, const char *s, int64_t *out)
{
	return cli_parse_int(ctx, what, s, 1, INT64_MAX, out);
}

/* Without --db and without a libpq environment naming a server, a running
 * sandbox (default directory) is used: the README's commands need no flags. */
static const char *default_conninfo(char *buf, size_t len)
{
	cleanup_sandbox sb;
	cleanup_error err;

	static const char *const vars[] = {"PGHOST", "PGHOSTADDR", "PGDATABASE", "PGSERVICE", "PGPORT", NULL};
	int i;

	for (i = 0; vars[i]; i++)
		if (getenv(vars[i]) && *getenv(vars[i]))
			return NULL;
	if (cleanup_sandbox_init(&sb, NULL, &err) != CLEANUP_OK || !sb.running)
		return NULL;
	cleanup_sandbox_conninfo(&sb, NULL, buf, len);
	return buf;
}

void cli_job_app_name(cli_ctx *ctx, int64_t job_id, const char *verb)
{
	static char buf[64];

	if (job_id > 0)
		snprintf(buf, sizeof buf, "cleanupctl:job:%" PRId64 ":%s", job_id, verb);
	else
		snprintf(buf, sizeof buf, "cleanupctl:job:%s", verb);
	ctx->app_name = buf;
}

int cli_connect(cli_ctx *ctx, cleanup_engine **out, bool check_schema)
{
	static char sandbox_conninfo[CLEANUP_PATH_MAX + 128];
	cleanup_error err;
	int rc;

	if (!ctx->db)
		ctx->db = default_conninfo(sandbox_conninfo, sizeof sandbox_conninfo);
	rc = cleanup_engine_open(out, ctx->db, ctx->app_name, &err);
	if (rc == CLEANUP_OK && check_schema) {
		rc = cleanup_schema_check(*out, &err);
		if (rc != CLEANUP_OK) {
			cleanup_engine_close(*out);
			*out = NULL;
		}
	}
	return rc == CLEANUP_OK ? 0 : cli_fail(ctx, &err);
}

const char *cli_count(char *buf, size_t len, int64_t n)
{
	char tmp[32];
	size_t i, j = 0, l;
	int neg = n < 0;

	snprintf(tmp, sizeof tmp, "%" PRId64, neg ? -n : n);
	l = strlen(tmp);
	if (len < l + l / 3 + 2) {
		snprintf(buf, len, "%" PRId64, n);
		return buf;
	}
	if (neg)
		buf[j++] = '-';
	for (i = 0; i < l; i++) {
		if (i && (l - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
	return buf;
}

static const char *target_word(const cleanup_job *job)
{
	return strcmp(job->kind, "remove-server") == 0 ? "server" : "library";
}

void cli_print_job_line(FILE *f, const cleanup_job *job)
{
	fprintf(f, "job %" PRId64 ": %s of %s %" PRId64 " (%s), phase %s, step %d\n", job->id, job->kind,
	        target_word(job), strcmp(job->kind, "remove-server") == 0 ? job->server_id : job->library_id,
	        job->target_name, job->phase, job->step_no);
}

void cli_print_job_detail(FILE *f, const cleanup_job *job)
{
	char a[32], b[32];

	fprintf(f, "job %" PRId64 "\n", job->id);
	fprintf(f, "  kind          %s (%s)\n", job->kind, job->mode);
	fprintf(f, "  target        %s %" PRId64 " (%s) on server %" PRId64 "\n", target_word(job),
	        strcmp(job->kind, "remove-server") == 0 ? job->server_id : job->library_id, job->target_name,
	        job->server_id);
	fprintf(f, "  phase         %s\n", job->phase);
	fprintf(f, "  step / pass   %d / %d\n", job->step_no, job->pass_no);
	if (strcmp(job->kind, "prune") == 0) {
		fprintf(f, "  manifest      %s IDs", cli_count(a, sizeof a, job->manifest_count));
		if (job->expected_count >= 0)
			fprintf(f, ", sealed with expected %s", cli_count(b, sizeof b, job->expected_count));
		else
			fprintf(f, ", not sealed");
		fputc('\n', f);
	}
	if (job->high_water_id >= 0)
		fprintf(f, "  high-water id %" PRId64 "\n", job->high_water_id);
	if (job->total_estimate >= 0)
		fprintf(f, "  in scope      %s items when sealed\n", cli_count(a, sizeof a, job->total_estimate));
	fprintf(f, "  cursor        library %" PRId64 ", id %" PRId64 "\n", job->cursor_library_id, job->cursor_id);
	fprintf(f, "  counters      examined %" PRId64 ", visited %" PRId64 ", deleted %" PRId64 ", moved %" PRId64
	           ", absent %" PRId64 ", retained %" PRId64 ", kept %" PRId64 "\n",
	        job->examined, job->visited, job->deleted, job->moved, job->absent, job->retained, job->kept);
	if (strcmp(job->kind, "prune") != 0)
		fprintf(f, "  parents       %d libraries deleted, %d servers deleted\n", job->libraries_deleted,
		        job->servers_deleted);
	fprintf(f, "  busy retries  %" PRId64 "\n", job->busy_retries);
	if (job->last_error[0])
		fprintf(f, "  last error    %s\n", job->last_error);
	fprintf(f, "  created       %s\n", job->created_at);
	if (job->sealed_at[0])
		fprintf(f, "  sealed        %s\n", job->sealed_at);
	fprintf(f, "  updated       %s\n", job->updated_at);
	if (job->finished_at[0])
		fprintf(f, "  finished      %s\n", job->finished_at);
}

/* bench_rss: flat client memory. The peak (VmHWM) and
 * steady (median VmRSS over the second half of the samples) resident set
 * of the real `cleanupctl job run` on a prune and of `cleanupctl console`
 * (on a pseudo-terminal, refreshing every 500 ms) against a database of
 * one library of N items, for each N of the size list: the target is
 * under 20 MB and flat from 1 million to 10 million items. /proc/PID/status
 * is sampled every 20 ms.
 *
 *   bench_rss --db CONNINFO [--sizes 1000000,10000000] [--seconds S (10)] [--quick]
 *
 * --quick (or BENCH_QUICK set in the environment): sizes 1,000,000 and
 * 2,000,000. The job run is bounded by --deadline S (a prune of ten
 * million items is not run to its end: memory is what is measured); the
 * console runs S seconds. docs/benchmarks-workers.md records the figures. */
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include "bench_common.h"
#include "cleanup/install.h"
#include "cleanup/job.h"
#include "cleanup/seed.h"

#define DB_RSS "cleanup_lab_bench_rss"
static const char *const dbs[] = {DB_RSS, NULL};
#define MAX_SIZES 8
#define MAX_SAMPLES 100000

static const char *cleanupctl = BENCH_CLEANUPCTL;

typedef struct opts {
	const char *db;
	long sizes[MAX_SIZES];
	int nsizes;
	double seconds;
	bool quick;
} opts;

typedef struct rss {
	double peak_mb;   /* VmHWM at the last sample */
	double steady_mb; /* median VmRSS of the second half of the samples */
	double first_mb;  /* VmRSS of the first sample after start-up (1 s) */
	long samples;
	int64_t steps;    /* job run: the job's committed steps after it */
	int64_t seen;     /* console: samples in which its backends were connected */
} rss;

static void usage(void)
{
	fprintf(stderr, "usage: bench_rss --db CONNINFO [--sizes N,N,...] [--seconds S (10)] [--quick] "
	                "[--cleanupctl PATH]\n");
	exit(2);
}

/* VmHWM and VmRSS of PID in kB; false when it is gone. */
static bool read_status(pid_t pid, long *hwm, long *vmrss)
{
	char path[64], line[256];
	FILE *f;
	int got = 0;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
	if (!(f = fopen(path, "r")))
		return false;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "VmHWM: %ld kB", hwm) == 1)
			got++;
		else if (sscanf(line, "VmRSS: %ld kB", vmrss) == 1)
			got++;
	}
	fclose(f);
	return got == 2;
}

/* The sampler: every 20 ms until PID exits or END (bench_now seconds)
 * passes; drains FD (a pty master, -1 for none) meanwhile. The steady
 * figure is the median of the second half of the samples, or of all of
 * them with ALL. Returns true when PID is still running at END. */
static bool sample(rss *out, pid_t pid, int fd, double end, bool all)
{
	static double v[MAX_SAMPLES];
	long n = 0, hwm = 0, vm = 0, last_hwm = 0;
	double t0 = bench_now();
	bool alive = true;

	memset(out, 0, sizeof *out);
	while (bench_now() < end) {
		struct pollfd p = {fd, POLLIN, 0};
		int st;

		if (waitpid(pid, &st, WNOHANG) == pid) {
			alive = false;
			break;
		}
		if (read_status(pid, &hwm, &vm)) {
			last_hwm = hwm;
			if (n < MAX_SAMPLES)
				v[n++] = (double)vm / 1024.0;
			if (out->first_mb == 0 && bench_now() - t0 >= 1.0)
				out->first_mb = (double)vm / 1024.0;
		}
		if (fd >= 0 && poll(&p, 1, 20) > 0) {
			char buf[65536];

			if (read(fd, buf, sizeof buf) <= 0)
				fd = -1;
		} else if (fd < 0) {
			struct timespec ts = {0, 20 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
	}
	out->samples = n;
	out->peak_mb = (double)last_hwm / 1024.0;
	if (n > 1)
		out->steady_mb = all ? bench_quantile(v, (size_t)n, 0.5)
		                     : bench_quantile(v + n / 2, (size_t)(n - n / 2), 0.5);
	return alive;
}

/* Ends PID: SIGTERM, then SIGKILL after 3 s. */
static void end_child(pid_t pid)
{
	double t = bench_now();
	int st;

	kill(pid, SIGTERM);
	while (waitpid(pid, &st, WNOHANG) != pid) {
		struct timespec ts = {0, 20 * 1000 * 1000};

		if (bench_now() - t > 3) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return;
		}
		nanosleep(&ts, NULL);
	}
}

/* A database of one library of N items and a prune of it sealed with
 * nothing seen; returns the job id. */
static int64_t build(const opts *o, long n)
{
	char ci[4096];
	cleanup_install_result ir;
	cleanup_seed_result sr;
	cleanup_seed_spec spec;
	cleanup_engine *e = NULL;
	cleanup_error err;
	cleanup_job job;
	PGconn *c;
	int64_t id;

	bench_admin(o->db, "db_drop", DB_RSS, NULL);
	bench_admin(o->db, "db_create", DB_RSS, NULL);
	bench_conninfo(ci, sizeof ci, o->db, DB_RSS);
	if (cleanup_engine_open(&e, ci, "bench:rss", &err) != CLEANUP_OK)
		bench_fatal_err("connecting", &err);
	if (cleanup_install(&ir, e, &err) != CLEANUP_OK)
		bench_fatal_err("install", &err);
	memset(&spec, 0, sizeof spec);
	spec.servers = 1;
	spec.libraries = 1;
	spec.items = n;
	if (cleanup_seed(&sr, e, &spec, &err) != CLEANUP_OK)
		bench_fatal_err("seed", &err);
	if (cleanup_job_create(&job, e, "prune", 1, "bounded", &err) != CLEANUP_OK)
		bench_fatal_err("job create", &err);
	id = job.id;
	cleanup_job_reset(&job);
	if (cleanup_job_seal(&job, e, id, 0, &err) != CLEANUP_OK)
		bench_fatal_err("job seal", &err);
	cleanup_job_reset(&job);
	cleanup_engine_close(e);
	c = bench_open(o->db, DB_RSS, "bench:rss");
	PQclear(bench_run(c, "vacuum", 0, NULL));
	PQclear(bench_run(c, "checkpoint", 0, NULL));
	PQfinish(c);
	return id;
}

/* `cleanupctl --quiet job run JOB --deadline S`, output discarded. */
static void measure_run(rss *out, const opts *o, int64_t job)
{
	char ci[4096], jbuf[24], dl[32];
	pid_t pid;

	bench_conninfo(ci, sizeof ci, o->db, DB_RSS);
	snprintf(jbuf, sizeof jbuf, "%" PRId64, job);
	snprintf(dl, sizeof dl, "%.0f", o->seconds);
	pid = fork();
	if (pid < 0)
		bench_fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(127);
		execl(cleanupctl, "cleanupctl", "--quiet", "--db", ci, "job", "run", jbuf, "--deadline", dl, (char *)NULL);
		_exit(127);
	}
	if (sample(out, pid, -1, bench_now() + o->seconds + 30, false))
		end_child(pid);
	{
		/* It ran: steps were committed (else the figure is of a
		 * program that failed at start). */
		PGconn *c = bench_open(o->db, DB_RSS, "bench:rss:check");
		const char *p[1] = {jbuf};
		int64_t steps = bench_int(c, "rss_job_steps", 1, p);

		PQfinish(c);
		if (steps < 1)
			bench_fatal("job run %s committed no step", jbuf);
		out->steps = steps;
	}
}

/* `cleanupctl console --readonly --refresh 500` on a 160x48 pty for S s. */
static void measure_console(rss *out, const opts *o)
{
	struct winsize ws = {48, 160, 0, 0};
	char ci[4096];
	int master = -1;
	pid_t pid;

	bench_conninfo(ci, sizeof ci, o->db, DB_RSS);
	pid = forkpty(&master, NULL, NULL, &ws);
	if (pid < 0)
		bench_fatal("forkpty: %s", strerror(errno));
	if (pid == 0) {
		setenv("TERM", "xterm-256color", 1);
		execl(cleanupctl, "cleanupctl", "--db", ci, "console", "--readonly", "--refresh", "500", (char *)NULL);
		_exit(127);
	}
	{
		/* Half way: the console's connections are there (it is drawing
		 * data, not an error). */
		PGconn *c = bench_open(o->db, DB_RSS, "bench:rss:check");

		if (!sample(out, pid, master, bench_now() + o->seconds / 2, false))
			bench_fatal("the console ended early");
		out->seen = bench_int(c, "rss_console_backends", 0, NULL);
		PQfinish(c);
		if (out->seen < 1)
			bench_fatal("the console has no connection to %s", DB_RSS);
	}
	{
		rss second;
		long first_samples = out->samples;

		/* The second half: its median is the steady figure; the peak is
		 * the process's own high-water mark, of the whole run. */
		if (!sample(&second, pid, master, bench_now() + o->seconds / 2, true))
			bench_fatal("the console ended early");
		second.samples += first_samples;
		second.seen = out->seen;
		second.first_mb = out->first_mb;
		*out = second;
	}
	end_child(pid);
	close(master);
}

int main(int argc, char **argv)
{
	opts o;
	rss run[MAX_SIZES], con[MAX_SIZES];
	int i, k;

	memset(&o, 0, sizeof o);
	o.seconds = 10;
	bench_name = "bench_rss";
	bench_db_list = dbs;
	bench_t0 = bench_now();
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
			o.db = argv[++i];
		} else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
			char *s = argv[++i], *end;

			o.nsizes = 0;
			while (*s && o.nsizes < MAX_SIZES) {
				o.sizes[o.nsizes++] = strtol(s, &end, 10);
				if (end == s || (*end && *end != ','))
					usage();
				s = *end ? end + 1 : end;
			}
		} else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
			o.seconds = atof(argv[++i]);
		} else if (strcmp(argv[i], "--cleanupctl") == 0 && i + 1 < argc) {
			cleanupctl = argv[++i];
		} else if (strcmp(argv[i], "--quick") == 0) {
			o.quick = true;
		} else {
			usage();
		}
	}
	if (getenv("BENCH_QUICK") && *getenv("BENCH_QUICK"))
		o.quick = true;
	if (o.nsizes == 0) {
		o.sizes[0] = 1000000;
		o.sizes[1] = o.quick ? 2000000 : 10000000;
		o.nsizes = 2;
	}
	if (!o.db || o.seconds < 2 || o.seconds > 600)
		usage();
	for (k = 0; k < o.nsizes; k++)
		if (o.sizes[k] < 1000 || o.sizes[k] > 100000000)
			usage();

	for (k = 0; k < o.nsizes; k++) {
		int64_t job;

		bench_note("building one library of %ld items and a prune of it", o.sizes[k]);
		job = build(&o, o.sizes[k]);
		bench_note("job run for %.0f s", o.seconds);
		measure_run(&run[k], &o, job);
		bench_note("job run: peak %.1f MB, steady %.1f MB (%ld samples), %" PRId64 " steps committed",
		           run[k].peak_mb, run[k].steady_mb, run[k].samples, run[k].steps);
		bench_note("console for %.0f s", o.seconds);
		measure_console(&con[k], &o);
		bench_note("console: peak %.1f MB, steady %.1f MB (%ld samples), %" PRId64 " connections of it seen",
		           con[k].peak_mb, con[k].steady_mb, con[k].samples, con[k].seen);
	}
	bench_admin(o.db, "db_drop", DB_RSS, NULL);

	printf("Client memory (issue 10, item 6): cleanupctl job run (a prune, --deadline %.0f) and cleanupctl console "
	       "(--refresh 500, %.0f s on a 160x48 pty); VmHWM / median VmRSS of the second half, sampled every 20 ms%s\n",
	       o.seconds, o.seconds, o.quick ? " (--quick sizes)" : "");
	printf("  %12s %14s %16s %14s %16s\n", "items", "run peak MB", "run steady MB", "console peak", "console steady");
	for (k = 0; k < o.nsizes; k++)
		printf("  %12ld %14.1f %16.1f %14.1f %16.1f\n", o.sizes[k], run[k].peak_mb, run[k].steady_mb, con[k].peak_mb,
		       con[k].steady_mb);
	{
		double worst = 0, grow_run = run[0].peak_mb > 0 ? run[o.nsizes - 1].peak_mb / run[0].peak_mb : 0,
		       grow_con = con[0].peak_mb > 0 ? con[o.nsizes - 1].peak_mb / con[0].peak_mb : 0;

		for (k = 0; k < o.nsizes; k++) {
			if (run[k].peak_mb > worst)
				worst = run[k].peak_mb;
			if (con[k].peak_mb > worst)
				worst = con[k].peak_mb;
		}
		printf("  largest peak %.1f MB (target < 20: %s); peak at %ld / at %ld items: job run %.2fx, console %.2fx "
		       "(flat: within 1.10x: %s)\n",
		       worst, worst < 20 ? "met" : "NOT met", o.sizes[o.nsizes - 1], o.sizes[0], grow_run, grow_con,
		       grow_run <= 1.10 && grow_con <= 1.10 ? "yes" : "NO");
		/* The line scripts/bench.sh gathers into the run's summary. */
		printf("summary: client RSS (%ld to %ld items): largest peak %.1f MB (target < 20 MB: %s), "
		       "growth job run %.2fx, console %.2fx (flat: %s)\n",
		       o.sizes[0], o.sizes[o.nsizes - 1], worst, worst < 20 ? "met" : "NOT met", grow_run, grow_con,
		       grow_run <= 1.10 && grow_con <= 1.10 ? "yes" : "NO");
	}
	return 0;
}

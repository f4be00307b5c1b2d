/* Driving a cleanup_monitor from an integration test: its poll loop run
 * (service, then poll its socket or its next timer, at most 50 ms at a
 * time) until a predicate holds for its snapshot. Header only. */
#ifndef MONTEST_H
#define MONTEST_H

#include "cleanup/monitor.h"
#include "pgtest.h"
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>

typedef bool (*snap_pred)(const cleanup_mon_snapshot *s, void *arg);

/* The row of job ID in snapshot S, or NULL. */
static inline const cleanup_mon_job *montest_find_job(const cleanup_mon_snapshot *s, int64_t id)
{
	size_t i;

	for (i = 0; i < s->njobs; i++)
		if (s->jobs[i].job.id == id)
			return &s->jobs[i];
	return NULL;
}

/* Drives M's poll loop until PRED holds for its snapshot (returns the
 * elapsed milliseconds) or TIMEOUT_MS passes (fails the test, naming
 * WHAT, the monitor's state and its last error). */
static inline double montest_drive_until(cleanup_monitor *m, snap_pred pred, void *arg, int timeout_ms,
                                         const char *what)
{
	double start = cleanup_monitor_now(), now = start;

	for (;;) {
		struct pollfd p;
		short ev = 0;
		int fd, t;

		cleanup_monitor_service(m, now);
		now = cleanup_monitor_now();
		if (pred(cleanup_monitor_snapshot(m), arg))
			return (now - start) * 1000.0;
		if ((now - start) * 1000.0 > timeout_ms) {
			fprintf(stderr, "timed out after %d ms waiting for %s (state %d, error \"%s\")\n",
			        timeout_ms, what, (int)cleanup_monitor_get_state(m),
			        cleanup_monitor_last_error(m));
			fail();
		}
		fd = cleanup_monitor_fd(m, &ev);
		t = cleanup_monitor_timeout_ms(m, now);
		if (t > 50)
			t = 50;
		p.fd = fd;
		p.events = ev;
		p.revents = 0;
		poll(&p, fd >= 0 ? 1 : 0, t);
		now = cleanup_monitor_now();
	}
}

#endif

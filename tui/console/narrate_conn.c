/* The console narrates its own connection in its log panel:
 * the monitor's connection lost (and why), the reconnect attempts, the
 * reconnect (after how long), a part of the dashboard going stale because
 * its refresh query hit the statement timeout, and the part coming back.
 * These are console notes (the log's "console" column, each starting
 * "this console:"), never audit rows: they say what this console saw of
 * its own data source, which no other session can record. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "console_int.h"

static const char *const part_names[CONSOLE_PARTS] = {"servers", "libraries", "jobs", "steps", "log", "contention"};

const char *console_part_name(int k)
{
	return k >= 0 && k < CONSOLE_PARTS ? part_names[k] : "?";
}

/* A reconnect attempt worth a line: the first, then the 4th, 8th, 16th...
 * (the backoff doubles, so the log gets a few lines, not one a second). */
static bool attempt_worth_noting(int n)
{
	return n == 1 || (n >= 4 && (n & (n - 1)) == 0);
}

static void note(console *c, theme_role role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void note(console *c, theme_role role, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	console_note_add(c, role, text);
}

/* The cause of a lost connection from the engine's record E, short
 * enough for the log's line: the engine's "lost the connection to the
 * database while DOING: CAUSE" becomes CAUSE (the line already says the
 * connection was lost), with the SQLSTATE when the server sent one; the
 * first line only (libpq adds "This probably means..."). */
static void loss_cause(char *buf, size_t len, const cleanup_error *e)
{
	static const char lead[] = "lost the connection to the database";
	const char *m = e->message, *colon = strstr(m, ": ");

	if (strncmp(m, lead, sizeof lead - 1) == 0 && colon)
		m = colon + 2;
	snprintf(buf, len, "%s%s%s%.*s", e->sqlstate[0] ? "SQLSTATE " : "", e->sqlstate, e->sqlstate[0] ? ": " : "",
	         (int)strcspn(m, "\n"), *m ? m : "no reason given");
}

/* The connection: lost, reconnecting, reconnected. */
static void narrate_link(console *c, double wall)
{
	cleanup_monitor_state st = cleanup_monitor_get_state(c->mon);
	double rows_at = 0;
	bool stale = cleanup_monitor_stale(c->mon, &rows_at);
	int attempts = cleanup_monitor_attempts(c->mon);
	char at[16];

	if (stale && !c->conn_lost) {
		const cleanup_error *e = cleanup_monitor_last_error_record(c->mon);
		char why[300];

		c->conn_lost = true;
		c->conn_lost_at = wall;
		c->conn_attempt_noted = 0;
		loss_cause(why, sizeof why, e);
		note(c, ROLE_DANGER, "this console: connection lost (%s); the panels show the rows of %s", why,
		     console_clock(at, sizeof at, rows_at));
	}
	if (!c->conn_lost)
		return;
	/* An attempt in progress; or connected again before an attempt was
	 * seen (a fast reconnect), still loading its first snapshot. */
	if (stale && (st == CLEANUP_MON_CONNECTING ? attempts > c->conn_attempt_noted
	                                           : st == CLEANUP_MON_READY && c->conn_attempt_noted == 0)) {
		int n = st == CLEANUP_MON_CONNECTING ? attempts : 1;

		if (attempt_worth_noting(n)) {
			const char *why = cleanup_monitor_last_error(c->mon);

			if (n == 1)
				note(c, ROLE_WARNING, "this console: reconnecting (attempt 1)");
			else
				note(c, ROLE_WARNING, "this console: reconnecting (attempt %d, down for %.0f s; last: %.200s)", n,
				     wall - c->conn_lost_at, why && *why ? why : "?");
		}
		c->conn_attempt_noted = n;
	}
	if (!stale && st == CLEANUP_MON_READY) {
		c->conn_lost = false;
		note(c, ROLE_OK, "this console: reconnected after %.0f s (backend %d); the panels are current again",
		     wall - c->conn_lost_at, cleanup_monitor_backend_pid(c->mon));
	}
}

/* The parts whose refresh query timed out, from each new snapshot. */
static void narrate_parts(console *c, double wall)
{
	const cleanup_mon_snapshot *s = cleanup_monitor_snapshot(c->mon);
	int k, timeout_ms = cleanup_monitor_query_timeout_ms(c->mon);
	char at[16], limit[32];

	if (s->seq == c->parts_seq)
		return;
	c->parts_seq = s->seq;
	if (timeout_ms > 0)
		snprintf(limit, sizeof limit, "%g s", timeout_ms / 1000.0);
	else
		snprintf(limit, sizeof limit, "none set");
	for (k = 0; k < CONSOLE_PARTS; k++) {
		unsigned bit = 1u << k;

		if ((s->stale_parts & bit) && !(c->parts_stale & bit)) {
			c->parts_stale |= bit;
			c->part_since[k] = s->stale_parts_at; /* the age of the rows shown */
			note(c, ROLE_WARNING,
			     "this console: %s stale: its refresh query hit the statement timeout (%s; a lock or a slow "
			     "database); showing rows of %s",
			     part_names[k], limit, console_clock(at, sizeof at, s->stale_parts_at));
		} else if (!(s->stale_parts & bit) && (c->parts_stale & bit)) {
			c->parts_stale &= ~bit;
			note(c, ROLE_OK, "this console: %s current again (its rows were stale for %.0f s)",
			     part_names[k], wall - c->part_since[k]);
		}
	}
}

void console_narrate_connection(console *c, double wall)
{
	narrate_link(c, wall);
	narrate_parts(c, wall);
}

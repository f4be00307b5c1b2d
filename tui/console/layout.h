/* The console's layout: a pure function from the terminal's size to the
 * rectangles of the header, the panels and the footer. Unit-tested for many
 * sizes (tests/unit/test_layout.c): every visible rectangle lies on the
 * screen, none overlaps another, together they cover the screen, and below
 * TUI_MIN_COLS x TUI_MIN_ROWS the layout says the terminal is too small.
 */
#ifndef CLEANUP_TUI_LAYOUT_H
#define CLEANUP_TUI_LAYOUT_H

#include <stdbool.h>

#define TUI_MIN_COLS 80
#define TUI_MIN_ROWS 24
#define TUI_WIDE_COLS 200 /* from here on: two columns (the jobs panel keeps at least
                           * the 120 columns it has at 120: a wider terminal never
                           * shows less) */

typedef struct tui_rect {
	int y, x, h, w; /* h == 0 or w == 0: not shown */
} tui_rect;

typedef enum tui_panel_id {
	PANEL_SERVERS,
	PANEL_LIBRARIES,
	PANEL_JOBS,
	PANEL_DETAIL,
	PANEL_LOCKS,
	PANEL_LOG,
	PANEL__COUNT
} tui_panel_id;

typedef struct tui_layout {
	int cols, rows;
	bool too_small;            /* nothing but a message fits */
	bool wide;                 /* two-column arrangement */
	bool zoomed;               /* the detail panel fills the body */
	tui_rect header;           /* first row */
	tui_rect footer;           /* last row: key hints, messages, the command line */
	tui_rect panels[PANEL__COUNT];
} tui_layout;

/* Computes the layout of a COLS x ROWS terminal. With ZOOM_DETAIL the job
 * detail panel takes the whole body (the others are hidden). Pure. */
void tui_layout_compute(tui_layout *out, int cols, int rows, bool zoom_detail);

/* True when panel P is shown in L. */
bool tui_layout_visible(const tui_layout *l, tui_panel_id p);

/* The panels whose rows are stale (dimmed, titled
 * "~stale"): all of them when DISCONNECTED (the monitor lost its
 * connection and shows its last snapshot), else those whose part is in
 * STALE_PARTS (CLEANUP_MON_PART_* bits: servers, libraries, jobs, steps
 * -> detail, events -> log, contention -> locks), and the locks panel
 * when LOCKS_STALE (its query failed; it shows the last tree). Bit p is
 * panel p. Pure. */
unsigned tui_stale_panels(unsigned stale_parts, bool disconnected, bool locks_stale);

/* The panel's name for titles and messages ("servers", "jobs", ...). */
const char *tui_panel_name(tui_panel_id p);

/* The header row's parts, laid out by a pure function (the
 * connection stays on the header at 80 columns, whatever the badges
 * say; other parts give way first). Each part comes in up to
 * TUI_HDR_VARIANTS variants, longest first (the caller renders them; the
 * layout sees their display widths only). Giving way is one sequence of
 * steps over all the parts: the step of rank give[v] takes part p from
 * variant v to v + 1, or hides it after its last variant; lower ranks go
 * first, and among equal ranks the part further right. A part marked
 * KEEP is never hidden: once the sequence reaches its rank CUT[k], its
 * last variant is cut (from its start) to the columns left, down to
 * CUT_MIN[k] (two stages: a soft minimum, then a hard one); columns left
 * over at the end go back to a part cut. Parts are placed left to
 * right in their order, GAP columns before each one shown (none before
 * the first), except a RIGHT part, which is right-aligned with its GAP
 * before it. */
#define TUI_HDR_VARIANTS 4
#define TUI_HDR_PARTS 16
typedef struct tui_hdr_part {
	int nvar;                   /* variants (1 .. TUI_HDR_VARIANTS) */
	int w[TUI_HDR_VARIANTS];    /* their display widths */
	int give[TUI_HDR_VARIANTS]; /* rank of the step that leaves variant v */
	int gap;                    /* blank columns before it */
	bool keep;                  /* never hidden: cut in two stages */
	int cut[2], cut_min[2];     /* from rank cut[k], down to cut_min[k] columns */
	bool right;                 /* right-aligned (at most one part) */
} tui_hdr_part;

typedef struct tui_hdr_place {
	int var;                    /* the variant shown, -1: hidden */
	int x, w;                   /* its columns (w may be below the variant's width: cut) */
} tui_hdr_place;

/* Lays out the N parts (at most TUI_HDR_PARTS) on a header of COLS
 * columns into OUT: every part shown lies within 0 .. COLS, none
 * overlaps another. Pure. */
void tui_header_layout(tui_hdr_place *out, const tui_hdr_part *parts, int n, int cols);

/* The console's header parts, in their order on the row. */
typedef enum tui_hdr_id {
	HDR_TITLE,      /* "cleanupctl console" */
	HDR_CLOCK,
	HDR_REFRESH,    /* "refresh 1s" */
	HDR_DBMS,       /* "db 1.2 ms" */
	HDR_NO_RUNNER,  /* the alarm: long, " NO RUNNER: lib 11 15m ", " NO RUNNER " */
	HDR_PAUSED,
	HDR_READONLY,
	HDR_STANDBY,    /* long, " standby " */
	HDR_POOLER,
	HDR_RUNNING,
	HDR_THROTTLE,
	HDR_STALE,      /* the alarm: long, " stale since T: reconnecting ", " stale T " */
	HDR_LOADING,    /* "loading...", "connecting...": before the first snapshot */
	HDR_WHERE,      /* full, "PG" and short path, no version, no user; then cut from its start */
	HDR_CMDLINE,    /* "cmdline: readline", right-aligned */
	HDR__COUNT
} tui_hdr_id;

/* The header of COLS columns: NVAR[id] variants of part id (0: absent),
 * W[id][v] their display widths, into OUT[id]. The order of giving way:
 * the connection's long path and "PostgreSQL", the query time, the
 * title, the version, the user; the connection cut to 28 columns (its
 * port and database); the backend, the pooler badge, the interval; the
 * alarms (NO RUNNER, stale, standby) in a shorter form; the clock,
 * RUNNING, THROTTLE; the connection cut to 16; the alarms in their
 * shortest form; PAUSED, READ-ONLY and standby. The alarms and the
 * connection are never hidden: at 80 columns and more every one of them
 * shows (tests/unit/test_layout.c). Pure. */
void tui_header_plan(tui_hdr_place *out, const int w[HDR__COUNT][TUI_HDR_VARIANTS], const int nvar[HDR__COUNT],
                     int cols);

#endif

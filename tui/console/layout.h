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

#endif

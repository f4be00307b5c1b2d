/* Key dispatch (keys.h). Pure: curses is included only for its key codes. */
#include "keys.h"
#include <curses.h>

#define CTRL(c) ((c) & 0x1f)

static const key_help table[] = {
	{"j / Down", "move down", CMD_DOWN},
	{"k / Up", "move up", CMD_UP},
	{"PgDn / PgUp", "move a page", CMD_PAGE_DOWN},
	{"g / G", "first / last row", CMD_HOME},
	{"Tab / S-Tab", "next / previous panel", CMD_NEXT_PANEL},
	{"Enter", "open: job detail (jobs), its job (servers, libraries)", CMD_OPEN},
	{"Esc", "close the detail or this help", CMD_CLOSE},
	{"?", "this help (j/k, PgUp/PgDn scroll it; other keys close it)", CMD_HELP},
	{"p", "pause the display (PAUSED; header and clock go on)", CMD_PAUSE_DISPLAY},
	{"+ / -", "refresh less / more often", CMD_SLOWER},
	{"^L", "redraw and refresh now", CMD_REDRAW},
	{":", "command line (step 12, pause 12, help, ...)", CMD_CMDLINE},
	{"/", "filter the jobs, or the libraries / search the log when focused; Esc clears", CMD_FILTER},
	{"o", "sort: jobs unfinished/phase/progress/newest; libraries server/name/items/count", CMD_SORT},
	{"f", "log: one kind only (lifecycle, audit, busy, console), again for all", CMD_LOG_KIND},
	{"] / [", "step history: next / previous gap (a stop, another runner, a cursor jump)", CMD_NEXT_GAP},
	{"q", "quit (during a run: asks, then stops it after its current step)", CMD_QUIT},
	{"s", "step the selected job once", CMD_STEP},
	{"r", "run the selected job until done or stopped", CMD_RUN},
	{"t", "stop the run after its current step", CMD_STOP_RUN},
	{"P", "pause a collecting job / resume a paused one", CMD_PAUSE_JOB},
	{"x", "cancel the selected job (until its first step deletes a row)", CMD_CANCEL},
	{"S", "seal the manifest: type the expected count", CMD_SEAL},
	{"v", "preview the next step (changes nothing)", CMD_PREVIEW},
	{"D", "remove the selected library or server (creates a job)", CMD_REMOVE},
	{"K", "kill the selected job's runner (terminate its backend; it resumes)", CMD_KILL_RUNNER},
	{"T", "terminate the holder that blocks a cleanup job: the selected backend in the locks panel, else the "
	      "one the selected job's busy answer names (asks, typed; audited)",
	 CMD_TERMINATE_HOLDER},
};

const key_help *keys_help_table(size_t *n)
{
	*n = sizeof table / sizeof table[0];
	return table;
}

bool keys_is_action(tui_cmd cmd)
{
	return cmd >= CMD_STEP && cmd <= CMD_REMOVE;
}

static tui_cmd plain(int key)
{
	switch (key) {
	case 'q':
	case 'Q':
		return CMD_QUIT;
	case 'k':
	case KEY_UP:
		return CMD_UP;
	case 'j':
	case KEY_DOWN:
		return CMD_DOWN;
	case KEY_PPAGE:
	case CTRL('b'):
		return CMD_PAGE_UP;
	case KEY_NPAGE:
	case CTRL('f'):
	case ' ':
		return CMD_PAGE_DOWN;
	case 'g':
	case KEY_HOME:
		return CMD_HOME;
	case 'G':
	case KEY_END:
		return CMD_END;
	case '\t':
	case KEY_RIGHT:
		return CMD_NEXT_PANEL;
	case KEY_BTAB:
	case KEY_LEFT:
		return CMD_PREV_PANEL;
	case '\n':
	case '\r':
	case KEY_ENTER:
		return CMD_OPEN;
	case 27:
		return CMD_CLOSE;
	case '?':
	case KEY_F(1):
		return CMD_HELP;
	case 'p':
		return CMD_PAUSE_DISPLAY;
	case '+':
		return CMD_SLOWER;
	case '-':
		return CMD_FASTER;
	case CTRL('l'):
		return CMD_REDRAW;
	case ':':
		return CMD_CMDLINE;
	case '/':
		return CMD_FILTER;
	case 'o':
		return CMD_SORT;
	case 'f':
		return CMD_LOG_KIND;
	case ']':
		return CMD_NEXT_GAP;
	case '[':
		return CMD_PREV_GAP;
	case 's':
		return CMD_STEP;
	case 'r':
		return CMD_RUN;
	case 't':
		return CMD_STOP_RUN;
	case 'P':
		return CMD_PAUSE_JOB;
	case 'x':
		return CMD_CANCEL;
	case 'S':
		return CMD_SEAL;
	case 'v':
		return CMD_PREVIEW;
	case 'D':
		return CMD_REMOVE;
	case 'K':
		return CMD_KILL_RUNNER;
	case 'T':
		return CMD_TERMINATE_HOLDER;
	default:
		return CMD_NONE;
	}
}

tui_cmd keys_dispatch(int key, bool readonly)
{
	tui_cmd c = plain(key);

	if (readonly && keys_is_action(c))
		return CMD_NONE;
	return c;
}

int keys_next_interval(int ms, int dir)
{
	static const int ladder[] = {250, 500, 1000, 2000, 5000, 10000, 30000, 60000};
	const int n = (int)(sizeof ladder / sizeof ladder[0]);
	int i;

	if (dir > 0) {
		for (i = 0; i < n; i++)
			if (ladder[i] > ms)
				return ladder[i];
		return ladder[n - 1];
	}
	for (i = n - 1; i >= 0; i--)
		if (ladder[i] < ms)
			return ladder[i];
	return ladder[0];
}

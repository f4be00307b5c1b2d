/* The one list routine of the console's panels (console_int.h,
 * console_list): selection, scrolling and highlight, as htop's Panel does
 * for its panels; each panel only draws its rows. */
#include "console_int.h"

theme_role console_row_role(bool sel, theme_role role)
{
	return sel ? ROLE_SELECTION : role;
}

int console_list(console *c, tui_panel_id p, tui_rect r, int nrows, int sel_row, console_row_fn row, void *ctx)
{
	int i;

	if (r.h < 1)
		return 0;
	console_scroll(c, p, nrows, r.h);
	for (i = 0; i < r.h && c->top[p] + i < nrows; i++) {
		int k = c->top[p] + i, y = r.y + i;
		bool sel = k == sel_row;

		if (sel) {
			attrset(theme_attr(ROLE_SELECTION));
			mvhline(y, r.x, ' ', r.w);
		}
		row(c, k, y, r, sel, ctx);
	}
	return i;
}

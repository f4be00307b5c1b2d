/* The console's command line (see cmdline.h): GNU readline through its
 * callback interface, or the built-in line editor. Compiled twice by
 * tui/CMakeLists.txt: into cleanupctl (readline when HAVE_READLINE) and
 * into cleanupctl-norl (CLEANUP_NO_READLINE: always the built-in editor).
 *
 * Readline never touches the terminal here: keys reach it only through
 * rl_getc_function from a queue that cmdline_feed() fills (curses key codes
 * become the escape sequences bound below), its redisplay only records
 * the line for cmdline_render(), its streams are /dev/null, and terminal
 * preparation, signal handling and environment changes are switched off.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config.h"
#include "cmdline.h"
#include "xdg.h"

#if defined(HAVE_READLINE) && !defined(CLEANUP_NO_READLINE)
#define USE_READLINE 1
#include <readline/history.h>
#include <readline/readline.h>
#endif

/* State shared by both backends. */
static struct {
	bool open;          /* cmdline_open() called and not closed */
	int state;          /* CMDLINE_* */
	char prompt[64];
	cmdline_complete_fn complete;
	void *arg;
	char result[LINEEDIT_MAX];
	char message[512];
	size_t hscroll;     /* byte offset of the first visible character */
	bool history_loaded;
	char history_path[4096];
} cl;

int cmdline_history_path(char *buf, size_t len)
{
	return tui_xdg_path(buf, len, TUI_XDG_STATE, "history");
}

/* mkdir -p of the directory holding PATH (mode 0700 for new ones). */
static int make_parent_dirs(const char *path)
{
	char dir[4096];
	char *p;

	snprintf(dir, sizeof dir, "%s", path);
	p = strrchr(dir, '/');
	if (!p || p == dir)
		return 0;
	*p = '\0';
	for (p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

static void set_matches_message(char **items, size_t n)
{
	size_t i, used = 0;

	cl.message[0] = '\0';
	for (i = 0; i < n && used + 4 < sizeof cl.message; i++) {
		int w = snprintf(cl.message + used, sizeof cl.message - used, "%s%s", i ? "  " : "", items[i]);

		if (w < 0 || (size_t)w >= sizeof cl.message - used) {
			snprintf(cl.message + used, sizeof cl.message - used, "  ...");
			break;
		}
		used += (size_t)w;
	}
}

#ifdef USE_READLINE
/* ---- GNU readline backend ---- */

#define QUEUE_MAX 64
static int queue[QUEUE_MAX];
static int qhead, qlen;
static FILE *null_in, *null_out;
static bool rl_ready;
static char shown[LINEEDIT_MAX]; /* the line as the last redisplay saw it */
static size_t shown_point;
static char shown_prompt[128];   /* readline's own prompt while searching (^R), else "" */
static lineedit_candidates rl_cands;
static size_t rl_cand_next;

static void push(int c)
{
	if (qlen < QUEUE_MAX)
		queue[(qhead + qlen++) % QUEUE_MAX] = c;
}

static int getc_fed(FILE *f)
{
	int c;

	(void)f;
	if (qlen == 0)
		return 0; /* never happens: cmdline_feed() calls readline only with input queued */
	c = queue[qhead];
	qhead = (qhead + 1) % QUEUE_MAX;
	qlen--;
	return c;
}

static int input_available(void)
{
	return qlen > 0;
}

static void record_line(void)
{
	size_t n = rl_line_buffer ? strlen(rl_line_buffer) : 0;

	if (n >= sizeof shown)
		n = sizeof shown - 1;
	if (n)
		memcpy(shown, rl_line_buffer, n);
	shown[n] = '\0';
	shown_point = rl_point < 0 ? 0 : (size_t)rl_point > n ? n : (size_t)rl_point;
	/* During an incremental search readline shows "(reverse-i-search)`x': ". */
	if (RL_ISSTATE(RL_STATE_ISEARCH | RL_STATE_NSEARCH) && rl_display_prompt)
		snprintf(shown_prompt, sizeof shown_prompt, "%s", rl_display_prompt);
	else
		shown_prompt[0] = '\0';
}

static void prep_term(int meta)
{
	(void)meta;
}

static void deprep_term(void)
{
}

static void line_done(char *line)
{
	if (!line) {
		cl.state = CMDLINE_CANCELLED;
	} else {
		HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
		const char *p;

		snprintf(cl.result, sizeof cl.result, "%s", line);
		cl.state = CMDLINE_SUBMITTED;
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		if (*p && (!last || strcmp(last->line, line) != 0))
			add_history(line);
		free(line);
	}
	rl_callback_handler_remove();
}

/* Readline's completion: our callback's candidates for the word. */
static char *candidate_generator(const char *text, int state)
{
	size_t len = strlen(text);

	if (state == 0)
		rl_cand_next = 0;
	while (rl_cand_next < rl_cands.n) {
		const char *c = rl_cands.items[rl_cand_next++];

		if (strncmp(c, text, len) == 0)
			return strdup(c);
	}
	return NULL;
}

static char **attempted_completion(const char *text, int start, int end)
{
	char before[LINEEDIT_MAX];
	size_t n = (size_t)end < sizeof before ? (size_t)end : sizeof before - 1;

	rl_attempted_completion_over = 1; /* never fall back to file names */
	lineedit_candidates_free(&rl_cands);
	cl.message[0] = '\0';
	if (!cl.complete)
		return NULL;
	memcpy(before, rl_line_buffer, n);
	before[n] = '\0';
	cl.complete(&rl_cands, before, (size_t)start, text, cl.arg);
	return rl_completion_matches(text, candidate_generator);
}

static void display_matches(char **matches, int n, int max_len)
{
	(void)max_len;
	/* matches[0] is the common prefix; the candidates follow. */
	set_matches_message(matches + 1, (size_t)n);
}

static void bind_keys(Keymap map)
{
	rl_bind_keyseq_in_map("\033[D", rl_backward_char, map);
	rl_bind_keyseq_in_map("\033[C", rl_forward_char, map);
	rl_bind_keyseq_in_map("\033[A", rl_get_previous_history, map);
	rl_bind_keyseq_in_map("\033[B", rl_get_next_history, map);
	rl_bind_keyseq_in_map("\033[H", rl_beg_of_line, map);
	rl_bind_keyseq_in_map("\033[F", rl_end_of_line, map);
	rl_bind_keyseq_in_map("\033[3~", rl_delete, map);
}

static int rl_setup(void)
{
	if (rl_ready)
		return 0;
	null_in = fopen("/dev/null", "r");
	null_out = fopen("/dev/null", "w");
	if (!null_in || !null_out)
		return -1;
	rl_readline_name = "cleanupctl";
	rl_instream = null_in;
	rl_outstream = null_out;
	rl_catch_signals = 0;
	rl_catch_sigwinch = 0;
	rl_change_environment = 0;
	rl_getc_function = getc_fed;
	rl_input_available_hook = input_available;
	rl_redisplay_function = record_line;
	rl_prep_term_function = prep_term;
	rl_deprep_term_function = deprep_term;
	rl_attempted_completion_function = attempted_completion;
	rl_completion_display_matches_hook = display_matches;
	rl_completer_word_break_characters = (char *)" \t";
	rl_initialize(); /* reads ~/.inputrc once; our bindings go on top */
	rl_variable_bind("bell-style", "none");
	rl_variable_bind("show-all-if-ambiguous", "on");
	rl_variable_bind("page-completions", "off");
	rl_variable_bind("enable-bracketed-paste", "off");
	rl_variable_bind("horizontal-scroll-mode", "on");
	bind_keys(emacs_standard_keymap);
	bind_keys(vi_insertion_keymap);
	bind_keys(vi_movement_keymap);
	using_history();
	stifle_history(LINEEDIT_HISTORY_MAX);
	rl_ready = true;
	return 0;
}

static void load_history(void)
{
	if (cl.history_path[0])
		read_history(cl.history_path);
	using_history(); /* browsing starts after the newest entry */
}

static void save_history(void)
{
	char tmp[4200];

	if (!cl.history_path[0] || make_parent_dirs(cl.history_path) != 0)
		return;
	snprintf(tmp, sizeof tmp, "%s.tmp", cl.history_path);
	if (write_history(tmp) == 0)
		rename(tmp, cl.history_path);
	else
		unlink(tmp);
}

static int backend_open(void)
{
	if (rl_setup() != 0)
		return -1;
	qhead = qlen = 0;
	shown[0] = '\0';
	shown_point = 0;
	rl_callback_handler_install(cl.prompt, line_done);
	record_line();
	return 0;
}

/* The curses keys readline is fed as the bytes a terminal sends for them. */
static const struct {
	int key;
	const char *seq;
} key_seqs[] = {
	{KEY_LEFT, "\033[D"}, {KEY_RIGHT, "\033[C"}, {KEY_UP, "\033[A"}, {KEY_DOWN, "\033[B"},
	{KEY_HOME, "\033[H"}, {KEY_END, "\033[F"},   {KEY_DC, "\033[3~"}, {KEY_BACKSPACE, "\177"},
	{KEY_ENTER, "\r"},
};

static int backend_feed(int key)
{
	char one[2] = "";
	const char *seq = NULL;
	size_t k;
	int i;

	/* During a search (^R), Esc ends it keeping the line found (^J is
	 * readline's other isearch terminator) and ^G aborts it; elsewhere
	 * both cancel the command line. */
	if (RL_ISSTATE(RL_STATE_ISEARCH | RL_STATE_NSEARCH)) {
		if (key == 27)
			key = '\n';
	} else if (key == 27 || key == ('g' & 0x1f)) {
		key = 'c' & 0x1f;
	}
	if (key == ('c' & 0x1f)) {
		rl_callback_handler_remove();
		cl.state = CMDLINE_CANCELLED;
		return cl.state;
	}
	for (k = 0; k < sizeof key_seqs / sizeof key_seqs[0] && !seq; k++)
		if (key_seqs[k].key == key)
			seq = key_seqs[k].seq;
	if (!seq) {
		if (key < 1 || key > 0xFF)
			return cl.state; /* KEY_RESIZE, function keys: not ours */
		one[0] = (char)key;
		seq = one;
	}
	for (i = 0; seq[i]; i++)
		push((unsigned char)seq[i]);
	while (qlen > 0 && cl.state == CMDLINE_ACTIVE)
		rl_callback_read_char();
	qhead = qlen = 0;
	if (cl.state == CMDLINE_SUBMITTED)
		save_history();
	if (cl.state == CMDLINE_ACTIVE)
		record_line();
	return cl.state;
}

static void backend_close(void)
{
	if (cl.state == CMDLINE_ACTIVE)
		rl_callback_handler_remove();
	lineedit_candidates_free(&rl_cands);
}

static const char *backend_text(void)
{
	return shown;
}

static const char *backend_prompt(void)
{
	return shown_prompt[0] ? shown_prompt : cl.prompt;
}

static size_t backend_cursor(void)
{
	return shown_point;
}

static size_t backend_history_count(void)
{
	return (size_t)history_length;
}

static void backend_shutdown(void)
{
	clear_history();
	lineedit_candidates_free(&rl_cands);
}

const char *cmdline_backend(void)
{
	return "readline";
}

#else
/* ---- built-in line editor backend ---- */

static lineedit le;
static bool le_ready;

static void load_history(void)
{
	if (cl.history_path[0])
		lineedit_history_load(&le, cl.history_path);
}

static void save_history(void)
{
	if (cl.history_path[0] && make_parent_dirs(cl.history_path) == 0)
		lineedit_history_save(&le, cl.history_path);
}

static int backend_open(void)
{
	if (!le_ready) {
		lineedit_init(&le);
		le_ready = true;
	}
	lineedit_reset(&le);
	return 0;
}

static int backend_feed(int key)
{
	lineedit_candidates m;

	switch (lineedit_key(&le, key)) {
	case LE_SUBMIT:
		snprintf(cl.result, sizeof cl.result, "%s", lineedit_text(&le));
		lineedit_history_add(&le, cl.result);
		save_history();
		cl.state = CMDLINE_SUBMITTED;
		break;
	case LE_CANCEL:
		cl.state = CMDLINE_CANCELLED;
		break;
	case LE_COMPLETE:
		cl.message[0] = '\0';
		if (cl.complete && lineedit_complete(&le, cl.complete, cl.arg, &m) > 1)
			set_matches_message(m.items, m.n);
		if (cl.complete)
			lineedit_candidates_free(&m);
		break;
	default:
		break;
	}
	return cl.state;
}

static void backend_close(void)
{
}

static const char *backend_text(void)
{
	return le_ready ? lineedit_text(&le) : "";
}

static const char *backend_prompt(void)
{
	return cl.prompt;
}

static size_t backend_cursor(void)
{
	return le_ready ? lineedit_cursor(&le) : 0;
}

static size_t backend_history_count(void)
{
	return le_ready ? lineedit_history_count(&le) : 0;
}

static void backend_shutdown(void)
{
	if (le_ready)
		lineedit_free(&le);
	le_ready = false;
}

const char *cmdline_backend(void)
{
	return "builtin";
}
#endif

/* ---- common ---- */

int cmdline_open(const char *prompt, cmdline_complete_fn complete, void *arg)
{
	cmdline_close();
	snprintf(cl.prompt, sizeof cl.prompt, "%s", prompt ? prompt : ":");
	cl.complete = complete;
	cl.arg = arg;
	cl.result[0] = '\0';
	cl.message[0] = '\0';
	cl.hscroll = 0;
	cl.state = CMDLINE_ACTIVE;
	if (!cl.history_loaded) {
		/* Set up the backend first: the history loads into it. */
		if (backend_open() != 0)
			return -1;
		if (cmdline_history_path(cl.history_path, sizeof cl.history_path) != 0)
			cl.history_path[0] = '\0';
		load_history();
		cl.history_loaded = true;
	} else if (backend_open() != 0) {
		return -1;
	}
	cl.open = true;
	return 0;
}

int cmdline_feed(int key)
{
	if (!cl.open)
		return CMDLINE_CANCELLED;
	if (cl.state != CMDLINE_ACTIVE)
		return cl.state;
	if (key != KEY_RESIZE)
		cl.message[0] = '\0'; /* a completion hint lasts until the next key */
	return backend_feed(key);
}

const char *cmdline_result(void)
{
	return cl.state == CMDLINE_SUBMITTED ? cl.result : "";
}

bool cmdline_active(void)
{
	return cl.open && cl.state == CMDLINE_ACTIVE;
}

const char *cmdline_text(void)
{
	return cl.open ? backend_text() : "";
}

size_t cmdline_cursor(void)
{
	return cl.open ? backend_cursor() : 0;
}

const char *cmdline_message(void)
{
	return cl.message;
}

size_t cmdline_history_count(void)
{
	return backend_history_count();
}

void cmdline_close(void)
{
	if (!cl.open)
		return;
	backend_close();
	cl.open = false;
}

void cmdline_shutdown(void)
{
	cmdline_close();
	backend_shutdown();
	cl.history_loaded = false;
}

/* Byte offset of the character before POS in S. */
static size_t prev_boundary(const char *s, size_t pos)
{
	if (pos == 0)
		return 0;
	pos--;
	while (pos > 0 && ((unsigned char)s[pos] & 0xC0) == 0x80)
		pos--;
	return pos;
}

void cmdline_render(WINDOW *w, int y, int x, int width, attr_t prompt_attr, attr_t text_attr)
{
	const char *text = cmdline_text(), *prompt = backend_prompt(), *p;
	size_t len = strlen(text), cur = cmdline_cursor(), end;
	int pw, avail, used, col;

	if (!w || width < 2)
		return;
	if (cur > len)
		cur = len;
	/* The prompt, cut to leave at least a few columns for the text. */
	pw = lineedit_width(prompt, strlen(prompt));
	if (pw > width / 2)
		pw = 0;
	wattrset(w, (int)prompt_attr);
	if (pw > 0)
		mvwaddstr(w, y, x, prompt);
	wattrset(w, (int)text_attr);
	avail = width - pw;

	/* Scroll: keep the cursor inside [hscroll, hscroll + avail - 1],
	 * with a third of the field of context when it jumps back. */
	if (cl.hscroll > len)
		cl.hscroll = 0;
	if (cur < cl.hscroll) {
		cl.hscroll = cur;
		while (cl.hscroll > 0 &&
		       lineedit_width(text + prev_boundary(text, cl.hscroll), cur - prev_boundary(text, cl.hscroll)) <=
		           avail / 3)
			cl.hscroll = prev_boundary(text, cl.hscroll);
	}
	while (cl.hscroll < cur && lineedit_width(text + cl.hscroll, cur - cl.hscroll) > avail - 1)
		cl.hscroll += lineedit_char_len(text + cl.hscroll);

	/* The visible characters: as many whole ones as fit. */
	p = text + cl.hscroll;
	end = cl.hscroll;
	used = 0;
	while (end < len) {
		size_t l = lineedit_char_len(text + end);
		int cw = lineedit_width(text + end, l);

		if (used + cw > avail)
			break;
		used += cw;
		end += l;
	}
	wmove(w, y, x + pw);
	if (end > cl.hscroll)
		waddnstr(w, p, (int)(end - cl.hscroll));
	for (col = used; col < avail; col++)
		waddch(w, ' ');
	wattrset(w, A_NORMAL);
	wmove(w, y, x + pw + lineedit_width(p, cur - cl.hscroll));
}

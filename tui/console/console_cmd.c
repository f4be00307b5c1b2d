/* The console's command line (`:`): commands that mirror the CLI (step 12,
 * run 12, pause 12, resume 12, cancel 12, seal 12 N, preview 12, show 12,
 * remove-library 5, remove-server 2, kill-runner 12) plus the console's own (stop, theme
 * NAME, refresh SECONDS, help, quit). Actions go through the same
 * confirmations as their keys. Tab completes commands, job ids, library
 * and server ids and theme names. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "numtext.h"
#include "cmdline.h"
#include "config.h"
#include "console_int.h"
#include "ops.h"
#include "xdg.h"

typedef enum arg_kind { ARG_NONE, ARG_JOB, ARG_JOB_COUNT, ARG_LIBRARY, ARG_SERVER, ARG_THEME, ARG_SECONDS } arg_kind;

typedef struct console_command {
	const char *name;
	arg_kind arg;
	tui_action action; /* ACT_NONE: the console's own */
	const char *usage;
} console_command;

static const console_command commands[] = {
	{"step", ARG_JOB, ACT_STEP, "step JOB"},
	{"run", ARG_JOB, ACT_RUN, "run JOB"},
	{"stop", ARG_NONE, ACT_NONE, "stop"},
	{"pause", ARG_JOB, ACT_PAUSE, "pause JOB"},
	{"resume", ARG_JOB, ACT_RESUME, "resume JOB"},
	{"cancel", ARG_JOB, ACT_CANCEL, "cancel JOB"},
	{"seal", ARG_JOB_COUNT, ACT_SEAL, "seal JOB EXPECTED_COUNT"},
	{"preview", ARG_JOB, ACT_PREVIEW, "preview JOB"},
	{"remove-library", ARG_LIBRARY, ACT_REMOVE_LIBRARY, "remove-library LIBRARY_ID"},
	{"remove-server", ARG_SERVER, ACT_REMOVE_SERVER, "remove-server SERVER_ID"},
	{"kill-runner", ARG_JOB, ACT_KILL_RUNNER, "kill-runner JOB"},
	{"show", ARG_JOB, ACT_NONE, "show JOB"},
	{"theme", ARG_THEME, ACT_NONE, "theme NAME"},
	{"refresh", ARG_SECONDS, ACT_NONE, "refresh SECONDS"},
	{"throttle", ARG_SECONDS, ACT_NONE, "throttle STEPS_PER_SECOND (0: none)"},
	{"wait", ARG_SECONDS, ACT_NONE, "wait SECONDS (retry busy answers that long; 0: none)"},
	{"help", ARG_NONE, ACT_NONE, "help"},
	{"quit", ARG_NONE, ACT_NONE, "quit"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const console_command *find_command(const char *name)
{
	size_t i;

	if (strcmp(name, "q") == 0)
		name = "quit";
	for (i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static bool is_action(const console_command *cmd)
{
	return cmd->action != ACT_NONE || strcmp(cmd->name, "stop") == 0;
}

const char *console_cmd_usage(size_t i, bool *action)
{
	if (i >= N_COMMANDS)
		return NULL;
	if (action)
		*action = is_action(&commands[i]);
	return commands[i].usage;
}

/* ---- completion ------------------------------------------------------- */

static void add_id(lineedit_candidates *out, int64_t id)
{
	char buf[24];

	snprintf(buf, sizeof buf, "%" PRId64, id);
	lineedit_candidates_add(out, buf);
}

static void add_themes(lineedit_candidates *out)
{
	static const char *const builtin[] = {"dark", "light", "high-contrast", "monochrome"};
	char dir[1024];
	const char *dirs[2];
	size_t i;
	int d;

	for (i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
		lineedit_candidates_add(out, builtin[i]);
	/* Where theme_load_named looks first. */
	tui_xdg_path(dir, sizeof dir, TUI_XDG_CONFIG, "themes");
	dirs[0] = dir;
	dirs[1] = CLEANUP_THEME_DIR;
	for (d = 0; d < 2; d++) {
		DIR *dp = opendir(dirs[d]);
		struct dirent *de;

		if (!dp)
			continue;
		while ((de = readdir(dp)) != NULL) {
			size_t l = strlen(de->d_name);
			char name[256];

			if (l > 6 && l < sizeof name && strcmp(de->d_name + l - 6, ".theme") == 0) {
				memcpy(name, de->d_name, l - 6);
				name[l - 6] = '\0';
				for (i = 0; i < out->n; i++)
					if (strcmp(out->items[i], name) == 0)
						break;
				if (i == out->n)
					lineedit_candidates_add(out, name);
			}
		}
		closedir(dp);
	}
}

static void complete(lineedit_candidates *out, const char *line, size_t word_start, const char *word, void *arg)
{
	console *c = arg;
	const cleanup_mon_snapshot *s = c->snap;
	char first[32];
	const console_command *cmd;
	size_t i, l = 0;

	(void)word;
	while (line[l] == ' ')
		l++;
	if (word_start <= l) {
		for (i = 0; i < N_COMMANDS; i++)
			if (!c->opts.readonly || !is_action(&commands[i]))
				lineedit_candidates_add(out, commands[i].name);
		return;
	}
	for (i = 0; line[l + i] && line[l + i] != ' ' && i + 1 < sizeof first; i++)
		first[i] = line[l + i];
	first[i] = '\0';
	cmd = find_command(first);
	if (!cmd)
		return;
	switch (cmd->arg) {
	case ARG_JOB:
	case ARG_JOB_COUNT:
		/* only the job id (the first argument) completes */
		if (strchr(line + l + strlen(first) + 1, ' ') && cmd->arg == ARG_JOB_COUNT)
			break;
		for (i = 0; i < s->njobs; i++)
			if (!cleanup_job_phase_is_final(s->jobs[i].job.phase))
				add_id(out, s->jobs[i].job.id);
		for (i = 0; i < s->njobs; i++)
			if (cleanup_job_phase_is_final(s->jobs[i].job.phase))
				add_id(out, s->jobs[i].job.id);
		break;
	case ARG_LIBRARY:
		for (i = 0; i < s->nlibraries; i++)
			add_id(out, s->libraries[i].row.id);
		break;
	case ARG_SERVER:
		for (i = 0; i < s->nservers; i++)
			add_id(out, s->servers[i].row.id);
		break;
	case ARG_THEME:
		add_themes(out);
		break;
	default:
		break;
	}
}

/* ---- parsing ---------------------------------------------------------- */

static double set_refresh(console *c, double sec)
{
	cleanup_monitor_set_interval(c->mon, (int)(sec * 1000 + 0.5));
	return cleanup_monitor_interval(c->mon) / 1000.0;
}

static double set_throttle(console *c, double rate)
{
	actions_set_max_rate(c->act, rate);
	return rate;
}

static double set_wait(console *c, double sec)
{
	actions_set_wait(c->act, sec);
	return sec;
}

/* :refresh, :throttle and :wait: their argument's range (or 0 when ZERO_OFF:
 * none), what sets it (returning the value in force), and what each says
 * then: ON with that value when above 0, else OFF. */
static const struct seconds_command {
	const char *name, *unit;
	double min, max;
	bool zero_off;
	double (*set)(console *c, double value);
	const char *on, *off;
} seconds_commands[] = {
	{"refresh", "seconds", 0.1, 60, false, set_refresh, "refresh every %g s", NULL},
	/* the rule of job run --max-rate, and 0 for none */
	{"throttle", "steps a second", 0.1, 1000, true, set_throttle, "runs from this console: at most %g steps a second",
	 "runs from this console: no throttle"},
	/* the CLI's --wait rule: seconds from 0 to 86400 */
	{"wait", "seconds", 0, 86400, false, set_wait,
	 "actions from this console: a busy answer is retried for up to %g s (t stops the wait)",
	 "actions from this console: a busy answer is shown at once"},
};

/* Runs :refresh, :throttle or :wait (CMD): its one argument by the CLI's
 * rule for seconds (tui_seconds_syntax, numtext.h: digits with an optional
 * fraction) in the command's range, or a message naming the range, the
 * value and the rule broken. */
static void set_seconds(console *c, const console_command *cmd, char **argv, int argc)
{
	const struct seconds_command *s = seconds_commands;
	const char *why;
	double v = 0;

	while (strcmp(s->name, cmd->name) != 0)
		s++;
	if (argc != 2) {
		console_message(c, ROLE_WARNING, "%s needs %s: %s", cmd->name, s->unit, cmd->usage);
		return;
	}
	why = tui_seconds_syntax(argv[1], s->zero_off ? 0 : s->min, s->max, &v);
	if (!why && s->zero_off && v > 0 && v < s->min)
		why = "out of range";
	if (why) {
		console_message(c, ROLE_WARNING, "%s takes %s%s from %g to %g, not \"%s\": %s", cmd->name,
		                s->zero_off ? "0 (none) or " : "", s->unit, s->min, s->max, argv[1], why);
		return;
	}
	v = s->set(c, v);
	if (v > 0 || !s->off)
		console_message(c, ROLE_INFO, s->on, v);
	else
		console_message(c, ROLE_INFO, "%s", s->off);
}

static void run_command(console *c, const console_command *cmd, char **argv, int argc)
{
	int64_t id = 0, count = 0;
	confirm_target t;

	if (c->opts.readonly && is_action(cmd)) {
		console_message(c, ROLE_WARNING, "read-only console: %s is not available", cmd->name);
		return;
	}
	if (cmd->arg == ARG_NONE && argc > 1) {
		console_message(c, ROLE_WARNING, "%s takes no argument (got \"%s\")", cmd->name, argv[1]);
		return;
	}
	if (cmd->arg == ARG_JOB || cmd->arg == ARG_JOB_COUNT || cmd->arg == ARG_LIBRARY || cmd->arg == ARG_SERVER) {
		const char *what = cmd->arg == ARG_LIBRARY ? "library id" : cmd->arg == ARG_SERVER ? "server id" : "job id";

		char msg[1024];

		/* the CLI's id rule and words (ops.h): "+5", "5x", "-1" refused alike */
		if (argc < 2) {
			console_message(c, ROLE_WARNING, "%s needs a %s: %s", cmd->name, what, cmd->usage);
			return;
		}
		if (!console_parse_id_arg(&id, msg, sizeof msg, cmd->name, what, argv[1], cmd->usage)) {
			console_message(c, ROLE_WARNING, "%s", msg);
			return;
		}
		if (cmd->arg == ARG_JOB_COUNT) {
			char why[512];

			if (argc < 3) {
				console_message(c, ROLE_WARNING,
				                "seal needs the expected unique count of the complete traversal: %s", cmd->usage);
				return;
			}
			if (!tui_op_parse_int(&count, why, sizeof why, "the expected count", argv[2], 0, INT64_MAX)) {
				console_message(c, ROLE_WARNING, "seal: %s (usage: %s)", why, cmd->usage);
				return;
			}
		}
		if (argc > (cmd->arg == ARG_JOB_COUNT ? 3 : 2)) {
			console_message(c, ROLE_WARNING, "too many arguments: %s", cmd->usage);
			return;
		}
	}

	if (cmd->action == ACT_REMOVE_LIBRARY || cmd->action == ACT_REMOVE_SERVER) {
		if (console_fill_remove_target(c, cmd->action, id, &t))
			console_request_action(c, &t);
		return;
	}
	if (cmd->action != ACT_NONE || strcmp(cmd->name, "show") == 0) {
		const cleanup_mon_job *v = console_find_job(c, id);

		if (!v) {
			console_message(c, ROLE_WARNING, "job %" PRId64 " is not on the dashboard (unknown, or finished long ago); nothing done",
			                id);
			return;
		}
		console_select_job(c, id);
		if (strcmp(cmd->name, "show") == 0) {
			c->focus = PANEL_DETAIL;
			c->zoom = true;
			console_relayout(c);
			return;
		}
		console_fill_job_target(c, cmd->action, v, &t);
		if (cmd->action == ACT_SEAL)
			t.seal_count = count;
		console_request_action(c, &t);
		return;
	}
	if (strcmp(cmd->name, "stop") == 0) {
		console_stop_run(c);
	} else if (strcmp(cmd->name, "theme") == 0) {
		theme t2;
		char err[256];

		if (argc != 2) {
			console_message(c, ROLE_WARNING, "theme needs a name: %s", cmd->usage);
			return;
		}
		if (theme_load_named(&t2, argv[1], err, sizeof err) != 0) {
			console_message(c, ROLE_WARNING, "theme not changed: %s", err);
			return;
		}
		c->t = t2;
		theme_apply(&c->t);
		bkgdset(theme_attr(ROLE_NORMAL));
		clearok(curscr, TRUE);
		console_message(c, ROLE_OK, "theme %s%s", argv[1], theme_is_monochrome() ? " (monochrome: NO_COLOR or no colours)" : "");
	} else if (cmd->arg == ARG_SECONDS) {
		set_seconds(c, cmd, argv, argc);
	} else if (strcmp(cmd->name, "help") == 0) {
		c->help = true;
		c->help_top = 0;
	} else if (strcmp(cmd->name, "quit") == 0) {
		console_quit(c);
	}
}

void console_execute(console *c, const char *line)
{
	char buf[512], *argv[8], *p, *save = NULL;
	int argc = 0;
	const console_command *cmd;

	snprintf(buf, sizeof buf, "%s", line);
	for (p = strtok_r(buf, " \t", &save); p && argc < 8; p = strtok_r(NULL, " \t", &save))
		argv[argc++] = p;
	if (argc == 0)
		return;
	cmd = find_command(argv[0]);
	if (!cmd) {
		console_message(c, ROLE_WARNING, "unknown command \"%s\": try help (Tab completes)", argv[0]);
		return;
	}
	run_command(c, cmd, argv, argc);
}

/* ---- the line itself -------------------------------------------------- */

void console_cmdline_open(console *c)
{
	if (cmdline_open(":", complete, c) != 0) {
		console_message(c, ROLE_DANGER, "the command line could not start (%s)", cmdline_backend());
		return;
	}
	c->cmdline = true;
}

void console_cmdline_key(console *c, int key)
{
	int r = cmdline_feed(key);

	if (r == CMDLINE_ACTIVE) {
		const char *m = cmdline_message();

		if (m && *m)
			console_message(c, ROLE_DIM, "%s", m);
		return;
	}
	c->cmdline = false;
	if (r == CMDLINE_SUBMITTED) {
		char line[512];

		snprintf(line, sizeof line, "%s", cmdline_result());
		cmdline_close();
		console_execute(c, line);
	} else {
		cmdline_close();
	}
}

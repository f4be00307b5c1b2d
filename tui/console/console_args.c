/* The arguments of the console's `:` commands, read by the CLI's rules
 * and reported in the CLI's words (ops.h), so that "+5", "5x" or "-1"
 * mean the same in both front ends. Pure (unit_test_ops links it). */
#include <stdio.h>
#include "console_int.h"
#include "ops.h"

bool console_parse_id_arg(int64_t *out, char *msg, size_t len, const char *cmd, const char *what, const char *s,
                          const char *usage)
{
	char why[512];

	if (tui_op_parse_id(out, why, sizeof why, what, s))
		return true;
	snprintf(msg, len, "%s: %s (usage: %s)", cmd, why, usage);
	return false;
}

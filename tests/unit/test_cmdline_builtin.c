/* The console's command line built with the built-in line editor
 * (CLEANUP_NO_READLINE, as in cleanupctl-norl); the cases are in
 * test_cmdline_cases.h. */
#define EXPECT_BACKEND "builtin"
#include "test_cmdline_cases.h"

/* The console's command line built with GNU readline (as in cleanupctl):
 * readline takes the keys the test feeds, never reads or writes the
 * terminal, and returns the line; the cases are in test_cmdline_cases.h.
 * Without readline in the build (WITH_READLINE=OFF) this checks the
 * built-in editor again. */
#include "config.h"
#if defined(HAVE_READLINE)
#define EXPECT_BACKEND "readline"
#define EXPECT_READLINE 1
#else
#define EXPECT_BACKEND "builtin"
#endif
#include "test_cmdline_cases.h"

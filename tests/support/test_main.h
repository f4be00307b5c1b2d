/* main() of a cmocka test program: one group of the test cases given
 * (cmocka_unit_test() entries, a trailing comma allowed) with the group
 * setup and teardown SETUP_FN and TEARDOWN_FN (NULL for none). Needs only
 * cmocka, so any test program may use it. */
#ifndef TEST_MAIN_H
#define TEST_MAIN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#define TEST_MAIN(setup_fn, teardown_fn, ...)                                                                \
	int main(void)                                                                                       \
	{                                                                                                    \
		const struct CMUnitTest tests[] = {__VA_ARGS__};                                             \
		return cmocka_run_group_tests(tests, setup_fn, teardown_fn);                                 \
	}

#endif

/* What the fuzz targets (fuzz_*.c) and the built-in driver (driver.c)
 * share: libFuzzer's entry points, how a target reports a broken property,
 * and a few pure helpers the targets use as independent references.
 *
 * A target is built twice over: with clang's libFuzzer when the compiler
 * has it (make fuzz), and always with driver.c, which replays the corpus
 * (the unit ctest) or runs random mutations of it (make fuzz with gcc).
 */
#ifndef CLEANUP_FUZZ_H
#define CLEANUP_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry points. Every target defines the first; the second is
 * optional (the driver calls it when it is defined). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Reports a broken property: prints "property failed: ..." and the input
 * being run (as far as the target knows it) to file descriptor 2, then
 * abort()s, so that libFuzzer or the driver saves the input as a crash
 * file. Never returns. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* A property that another module's known, reported bug breaks (ID names it,
 * e.g. "cli-int-lenient"). The first time each ID is seen it is printed to
 * file descriptor 2 with the input; the run goes on. With FUZZ_STRICT=1 in
 * the environment it is a failure like fuzz_fail(). Returns nothing. */
void fuzz_known_bug(const char *id, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The input fuzz_fail() shows: targets call this first thing in
 * LLVMFuzzerTestOneInput. DATA is not copied; it must stay valid for the
 * call. */
void fuzz_set_input(const uint8_t *data, size_t size);

/* Length of the well-formed UTF-8 character at S (N bytes available), per
 * the Unicode Standard's table 3-7 of well-formed byte sequences; 0 when S
 * does not start one. *CP gets the code point. A reference written apart
 * from the project's decoders on purpose. */
size_t fuzz_utf8_char(const uint8_t *s, size_t n, uint32_t *cp);

/* Encodes CP (not a surrogate) as UTF-8 into OUT (room for 4 bytes);
 * returns the length. */
size_t fuzz_utf8_encode(uint32_t cp, uint8_t *out);

/* True for the control characters the project refuses: C0, DEL and C1. */
bool fuzz_is_control(uint32_t cp);

/* True when the N bytes at S are well-formed UTF-8 without control
 * characters (and so without NUL). */
bool fuzz_clean_utf8(const uint8_t *s, size_t n);

#endif

/* Private to core/: a growing NUL-terminated string (the offline
 * dependency document, a read-only conninfo). Start from {0}; a failed
 * allocation sets oom and makes every later append a no-op; the owner
 * frees s. */
#ifndef CLEANUP_STRBUF_INT_H
#define CLEANUP_STRBUF_INT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct strbuf {
	char *s;
	size_t len, cap;
	bool oom;
} strbuf;

/* Appends the N bytes at S. */
void strbuf_put(strbuf *b, const char *s, size_t n);

/* Appends printf(FMT, ...), cut at 1023 bytes. */
void strbuf_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

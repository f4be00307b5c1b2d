/* The built-in fuzz driver: a main() for a fuzz target when clang's
 * libFuzzer is not used. It takes a subset of libFuzzer's options, so that
 * fuzz/run.sh drives both the same way:
 *
 *   fuzz_TARGET [-runs=N] [-seed=S] [-max_len=N] [-dict=FILE]
 *               [-artifact_prefix=DIR/] [CORPUS_DIR_OR_FILE ...]
 *
 * It first replays every corpus file (files of a directory in name order),
 * then runs N inputs made by mutating corpus inputs at random (default
 * 1,000,000, or $FUZZ_RUNS; -runs=0 only replays). There is no coverage
 * feedback: the mutations (bit flips, interesting bytes, insertions,
 * deletions, copies, splices, dictionary words, UTF-8 characters, long
 * runs) stay within -max_len (default 4096) bytes. The seed is printed
 * (default: from the clock), so a run can be repeated exactly. When a
 * property fails (abort) or a sanitizer reports, the input is written to
 * ARTIFACT_PREFIX "crash-TARGET-HASH" before the process dies. At the end
 * it prints the number of executions and executions per second.
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "fuzz.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_SANITIZER_CALLBACK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_SANITIZER_CALLBACK 1
#endif
#endif
#ifdef HAVE_SANITIZER_CALLBACK
#include <sanitizer/common_interface_defs.h>
#endif

/* Optional in a target. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

typedef struct blob {
	uint8_t *data;
	size_t size;
} blob;

typedef struct blobs {
	blob *items;
	size_t n, cap;
} blobs;

static struct {
	const char *target;       /* "theme" for fuzz_theme */
	char artifact_prefix[1024];
	const uint8_t *data;      /* the input being run */
	size_t size;
} cur;

/* ---- the crash file -------------------------------------------------- */

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* Writes the current input to the crash file. Async-signal-safe: only
 * write(2), open(2) and formatting into a local buffer. */
static void save_crash(void)
{
	static const char hex[] = "0123456789abcdef";
	char path[1200];
	size_t o = 0, i;
	uint32_t h;
	int fd;

	if (!cur.data && cur.size)
		return;
	h = fnv1a(cur.data, cur.size);
	for (i = 0; cur.artifact_prefix[i] && o < 1024; i++)
		path[o++] = cur.artifact_prefix[i];
	for (i = 0; "crash-"[i]; i++)
		path[o++] = "crash-"[i];
	for (i = 0; cur.target[i] && o < 1180; i++)
		path[o++] = cur.target[i];
	path[o++] = '-';
	for (i = 0; i < 8; i++)
		path[o++] = hex[(h >> (28 - 4 * i)) & 0xF];
	path[o] = '\0';
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		size_t done = 0;

		while (done < cur.size) {
			ssize_t w = write(fd, cur.data + done, cur.size - done);

			if (w <= 0)
				break;
			done += (size_t)w;
		}
		close(fd);
		(void)!write(2, "fuzz: the input was saved as ", 29);
		(void)!write(2, path, o);
		(void)!write(2, "\n", 1);
	}
}

static void on_fatal_signal(int sig)
{
	save_crash();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- randomness ------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64: small, fast, and the same sequence everywhere. */
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A number in [0, N); N > 0. */
static size_t below(size_t n)
{
	return (size_t)(rnd() % n);
}

/* ---- corpus and dictionary ------------------------------------------ */

static int blobs_add(blobs *b, const uint8_t *data, size_t size)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		blob *grown = realloc(b->items, cap * sizeof *grown);

		if (!grown)
			return -1;
		b->items = grown;
		b->cap = cap;
	}
	b->items[b->n].data = malloc(size ? size : 1);
	if (!b->items[b->n].data)
		return -1;
	if (size)
		memcpy(b->items[b->n].data, data, size);
	b->items[b->n].size = size;
	b->n++;
	return 0;
}

static void blobs_free(blobs *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		free(b->items[i].data);
	free(b->items);
	memset(b, 0, sizeof *b);
}

/* Reads the file PATH (at most MAX bytes are kept) into B. */
static int read_file(blobs *b, const char *path, size_t max)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n;
	int rc = -1;

	if (!f) {
		dprintf(2, "fuzz: %s: %s\n", path, strerror(errno));
		goto out;
	}
	buf = malloc(max + 1);
	if (!buf)
		goto out;
	n = fread(buf, 1, max, f);
	if (ferror(f)) {
		dprintf(2, "fuzz: %s: read error\n", path);
		goto out;
	}
	rc = blobs_add(b, buf, n);
out:
	free(buf);
	if (f)
		fclose(f);
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the file PATH, or every regular file of the directory PATH in name
 * order (not recursive), to B. */
static int load_corpus(blobs *b, const char *path, size_t max)
{
	struct stat st;
	DIR *d = NULL;
	struct dirent *e;
	char **names = NULL, full[4096];
	size_t n = 0, cap = 0, i;
	int rc = -1;

	if (stat(path, &st) != 0) {
		dprintf(2, "fuzz: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return read_file(b, path, max);
	d = opendir(path);
	if (!d) {
		dprintf(2, "fuzz: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **grown;

			cap = cap ? cap * 2 : 64;
			grown = realloc(names, cap * sizeof *grown);
			if (!grown)
				goto out;
			names = grown;
		}
		names[n] = strdup(e->d_name);
		if (!names[n])
			goto out;
		n++;
	}
	qsort(names, n, sizeof *names, cmp_names);
	for (i = 0; i < n; i++) {
		snprintf(full, sizeof full, "%s/%s", path, names[i]);
		if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (read_file(b, full, max) != 0)
			goto out;
	}
	rc = 0;
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

/* Reads a libFuzzer dictionary: one entry a line, [name=]"value" with
 * \\, \" and \xNN escapes; # comments and blank lines skipped. */
static int load_dict(blobs *dict, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int line_no = 0, rc = 0;

	if (!f) {
		dprintf(2, "fuzz: dictionary %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof line, f)) {
		uint8_t val[512];
		size_t n = 0;
		char *p = strchr(line, '"');

		line_no++;
		if (line[strspn(line, " \t\r\n")] == '#' || line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (!p) {
			dprintf(2, "fuzz: dictionary %s line %d: no quoted value\n", path, line_no);
			rc = -1;
			break;
		}
		for (p++; *p && *p != '"' && n < sizeof val; p++) {
			if (*p == '\\' && p[1] == 'x' && p[2] && p[3]) {
				char hx[3] = {p[2], p[3], 0};

				val[n++] = (uint8_t)strtoul(hx, NULL, 16);
				p += 3;
			} else if (*p == '\\' && p[1]) {
				val[n++] = (uint8_t)*++p;
			} else {
				val[n++] = (uint8_t)*p;
			}
		}
		if (n > 0 && blobs_add(dict, val, n) != 0) {
			rc = -1;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* ---- mutations ------------------------------------------------------- */

static const uint8_t interesting[] = {0x00, 0x01, 0x07, '\t', '\n', '\r', 0x1B, ' ', '"', '#', '-', '0',
                                      '9',  '=',  '\\', 0x7F, 0x80, 0x85, 0x9B, 0x9F, 0xA0, 0xBF, 0xC0,
                                      0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFE, 0xFF};

static const uint32_t interesting_cps[] = {0x80,   0x85,   0x9B,   0x9F,   0xA0,   0xE9,    0x7FF,
                                           0x800,  0x2028, 0x200B, 0xD7FF, 0xE000, 0xFEFF,  0xFFFD,
                                           0xFFFF, 0x10000, 0x1F600, 0x10FFFF};

/* Inserts N bytes SRC at POS of BUF (*SIZE bytes, room for MAX); cut to fit. */
static void insert_at(uint8_t *buf, size_t *size, size_t max, size_t pos, const uint8_t *src, size_t n)
{
	if (*size >= max)
		return;
	if (n > max - *size)
		n = max - *size;
	memmove(buf + pos + n, buf + pos, *size - pos);
	memmove(buf + pos, src, n);
	*size += n;
}

/* Applies one random mutation to BUF (*SIZE bytes, at most MAX). */
static void mutate_once(uint8_t *buf, size_t *size, size_t max, const blobs *corpus, const blobs *dict)
{
	uint8_t tmp[4096];
	size_t pos, n;

	switch (below(14)) {
	case 0: /* flip a bit */
		if (*size)
			buf[below(*size)] ^= (uint8_t)(1u << below(8));
		break;
	case 1: /* a random byte */
		if (*size)
			buf[below(*size)] = (uint8_t)rnd();
		break;
	case 2: /* an interesting byte, over or in between */
		pos = below(*size + 1);
		if (pos < *size && below(2))
			buf[pos] = interesting[below(sizeof interesting)];
		else
			insert_at(buf, size, max, pos, &interesting[below(sizeof interesting)], 1);
		break;
	case 3: /* insert random bytes */
		n = 1 + below(8);
		for (pos = 0; pos < n; pos++)
			tmp[pos] = (uint8_t)rnd();
		insert_at(buf, size, max, below(*size + 1), tmp, n);
		break;
	case 4: /* delete a range */
		if (*size) {
			pos = below(*size);
			n = 1 + below(*size - pos < 16 ? *size - pos : 16);
			memmove(buf + pos, buf + pos + n, *size - pos - n);
			*size -= n;
		}
		break;
	case 5: /* copy a range of the input to elsewhere in it */
		if (*size) {
			pos = below(*size);
			n = 1 + below(*size - pos);
			if (n > sizeof tmp)
				n = sizeof tmp;
			memcpy(tmp, buf + pos, n);
			insert_at(buf, size, max, below(*size + 1), tmp, n);
		}
		break;
	case 6: /* splice: a range of another corpus input */
		if (corpus->n) {
			const blob *o = &corpus->items[below(corpus->n)];

			if (o->size) {
				pos = below(o->size);
				n = 1 + below(o->size - pos);
				if (n > sizeof tmp)
					n = sizeof tmp;
				insert_at(buf, size, max, below(*size + 1), o->data + pos, n);
			}
		}
		break;
	case 7: /* insert a dictionary word */
	case 8:
		if (dict->n) {
			const blob *w = &dict->items[below(dict->n)];

			insert_at(buf, size, max, below(*size + 1), w->data, w->size);
		}
		break;
	case 9: /* overwrite with a dictionary word */
		if (dict->n && *size) {
			const blob *w = &dict->items[below(dict->n)];

			pos = below(*size);
			n = w->size < *size - pos ? w->size : *size - pos;
			memcpy(buf + pos, w->data, n);
		}
		break;
	case 10: { /* a UTF-8 character: interesting or random */
		uint32_t cp = below(2) ? interesting_cps[below(sizeof interesting_cps / sizeof interesting_cps[0])]
		                       : (uint32_t)below(0x110000);

		if (cp >= 0xD800 && cp <= 0xDFFF)
			cp = 0xFFFD;
		n = fuzz_utf8_encode(cp, tmp);
		insert_at(buf, size, max, below(*size + 1), tmp, n);
		break;
	}
	case 11: /* a long run of one byte: length limits */
		n = 1 + below(below(4) ? 300 : 1100);
		if (n > sizeof tmp)
			n = sizeof tmp;
		memset(tmp, *size && below(2) ? buf[below(*size)] : interesting[below(sizeof interesting)], n);
		insert_at(buf, size, max, below(*size + 1), tmp, n);
		break;
	case 12: /* truncate */
		if (*size)
			*size = below(*size);
		break;
	default: /* a byte one up or down, or two bytes swapped */
		if (*size) {
			pos = below(*size);
			if (below(2)) {
				buf[pos] = (uint8_t)(buf[pos] + (below(2) ? 1 : 0xFF));
			} else {
				size_t q = below(*size);
				uint8_t c = buf[pos];

				buf[pos] = buf[q];
				buf[q] = c;
			}
		}
		break;
	}
}

/* ---- main ------------------------------------------------------------ */

static void run_one(const uint8_t *data, size_t size)
{
	/* An exact-size copy: reading past the end is a heap overflow. */
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy) {
		dprintf(2, "fuzz: out of memory\n");
		exit(1);
	}
	if (size)
		memcpy(copy, data, size);
	cur.data = copy;
	cur.size = size;
	LLVMFuzzerTestOneInput(copy, size);
	cur.data = NULL;
	cur.size = 0;
	free(copy);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	blobs corpus = {0}, dict = {0};
	uint64_t runs = 1000000, seed = 0, max_len = 4096, v, i;
	const char *base, *env;
	uint8_t *buf = NULL;
	double t0, elapsed;
	int a, rc = 1;

	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	cur.target = strncmp(base, "fuzz_", 5) == 0 ? base + 5 : base;
	env = getenv("FUZZ_RUNS");
	if (env && *env && parse_u64(env, &runs) != 0) {
		dprintf(2, "fuzz: FUZZ_RUNS must be a number of runs, not \"%s\"\n", env);
		return 2;
	}
	for (a = 1; a < argc; a++) {
		const char *arg = argv[a];

		if (strncmp(arg, "-runs=", 6) == 0 && parse_u64(arg + 6, &v) == 0) {
			runs = v;
		} else if (strncmp(arg, "-seed=", 6) == 0 && parse_u64(arg + 6, &v) == 0) {
			seed = v;
		} else if (strncmp(arg, "-max_len=", 9) == 0 && parse_u64(arg + 9, &v) == 0 && v > 0 && v <= 1 << 20) {
			max_len = v;
		} else if (strncmp(arg, "-dict=", 6) == 0) {
			if (load_dict(&dict, arg + 6) != 0)
				goto out;
		} else if (strncmp(arg, "-artifact_prefix=", 17) == 0) {
			snprintf(cur.artifact_prefix, sizeof cur.artifact_prefix, "%s", arg + 17);
		} else if (arg[0] == '-') {
			dprintf(2,
			        "fuzz: unknown option \"%s\"\n"
			        "usage: %s [-runs=N] [-seed=S] [-max_len=N] [-dict=FILE] [-artifact_prefix=P] "
			        "[CORPUS_DIR_OR_FILE ...]\n",
			        arg, argv[0]);
			rc = 2;
			goto out;
		}
	}
	if (seed == 0)
		seed = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
	rng_state = seed;

	signal(SIGABRT, on_fatal_signal);
	signal(SIGSEGV, on_fatal_signal);
	signal(SIGBUS, on_fatal_signal);
	signal(SIGFPE, on_fatal_signal);
#ifdef HAVE_SANITIZER_CALLBACK
	__sanitizer_set_death_callback(save_crash);
#endif
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);

	for (a = 1; a < argc; a++)
		if (argv[a][0] != '-' && load_corpus(&corpus, argv[a], (size_t)max_len) != 0)
			goto out;

	dprintf(2, "fuzz_%s: seed %" PRIu64 " (-seed=%" PRIu64 " repeats this run), %zu corpus inputs, %" PRIu64
	           " random runs of at most %" PRIu64 " bytes\n",
	        cur.target, seed, seed, corpus.n, runs, max_len);
	t0 = now_s();
	for (i = 0; i < corpus.n; i++)
		run_one(corpus.items[i].data, corpus.items[i].size);

	buf = malloc((size_t)max_len);
	if (!buf)
		goto out;
	for (i = 0; i < runs; i++) {
		size_t size = 0, k, nmut;

		if (corpus.n && below(32) != 0) {
			const blob *b = &corpus.items[below(corpus.n)];

			size = b->size < max_len ? b->size : (size_t)max_len;
			memcpy(buf, b->data, size);
		} else {
			size = below(65);
			for (k = 0; k < size; k++)
				buf[k] = (uint8_t)rnd();
		}
		nmut = 1 + below(below(4) ? 4 : 16);
		for (k = 0; k < nmut; k++)
			mutate_once(buf, &size, (size_t)max_len, &corpus, &dict);
		run_one(buf, size);
	}
	elapsed = now_s() - t0;
	dprintf(2, "fuzz_%s: done: %" PRIu64 " executions (%zu corpus + %" PRIu64 " random) in %.1f s, %.0f exec/s\n",
	        cur.target, (uint64_t)corpus.n + runs, corpus.n, runs, elapsed,
	        elapsed > 0 ? (double)((uint64_t)corpus.n + runs) / elapsed : 0.0);
	rc = 0;
out:
	free(buf);
	blobs_free(&corpus);
	blobs_free(&dict);
	return rc;
}

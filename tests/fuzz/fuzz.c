/*
 * fuzz.c - the input as a file, for the libFuzzer targets of tests/fuzz.
 *
 * The readers under test take a path (and safetensors maps the file),
 * so each input goes to a memfd: no disk, no temporary names to clean
 * up, and one descriptor for the whole run.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

static int fd = -1;
static char path[40];

void fuzz_abort(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

int fuzz_starts(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

const char *fuzz_file(const uint8_t *data, size_t size)
{
	if (fd < 0) {
		if ((fd = memfd_create("fuzz-input", MFD_CLOEXEC)) < 0)
			fuzz_abort("memfd_create: %s", strerror(errno));
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	/* truncate first: a shorter input must not keep the old tail */
	if (ftruncate(fd, 0))
		fuzz_abort("ftruncate %s: %s", path, strerror(errno));
	if (size && pwrite(fd, data, size, 0) != (ssize_t)size)
		fuzz_abort("write %zu bytes to %s: %s", size, path,
		           strerror(errno));
	return path;
}

/*
 * idx.c - reading the MNIST-style IDX files (gzip-compressed) that
 * Debian's dataset-fashion-mnist ships, with zlib.
 *
 * An IDX file is a big-endian header: two zero bytes, a type byte (0x08
 * for unsigned bytes, the only type these data sets use), the number of
 * dimensions, then one 32-bit size per dimension, then the data.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "idx.h"

static int fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Reads exactly n bytes; -1 on a short read or an error. */
static int read_all(gzFile f, void *buf, size_t n)
{
	unsigned char *p = buf;

	while (n) {
		unsigned chunk = n > (1u << 30) ? 1u << 30 : (unsigned)n;
		int got = gzread(f, p, chunk);

		if (got <= 0)
			return -1;
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

/* Bytes of the first read of the data; each later read doubles them. */
#define DATA_CHUNK (1u << 20)

/* Reads the `total` data bytes into out->data.  The buffer grows as the
 * bytes arrive (1 MiB, then doubling) instead of taking what the header
 * announces up front: a file of a few bytes can announce 16 EiB. */
static int read_data(gzFile f, idx_array *out, size_t total,
                     const char *path, char *err, size_t errlen)
{
	size_t have = 0, cap = total < DATA_CHUNK ? total : DATA_CHUNK;
	unsigned char *p;

	for (;;) {
		if (!(p = realloc(out->data, cap ? cap : 1)))
			return fail(err, errlen, "%s: out of memory for %zu "
			            "bytes", path, cap);
		out->data = p;
		if (read_all(f, p + have, cap - have))
			return fail(err, errlen, "%s: truncated: fewer than the "
			            "%zu bytes its header announces", path,
			            total);
		if ((have = cap) == total)
			return 0;
		cap = total - cap > cap ? 2 * cap : total;
	}
}

static uint32_t be32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

int idx_read(const char *path, idx_array *out, char *err, size_t errlen)
{
	unsigned char head[4], dim[4];
	gzFile f;
	size_t total = 1, i;
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (!(f = gzopen(path, "rb")))
		return fail(err, errlen, "%s: %s", path,
		            errno ? strerror(errno) : "cannot open");
	if (read_all(f, head, 4)) {
		fail(err, errlen, "%s: truncated header", path);
		goto out;
	}
	if (head[0] || head[1] || head[2] != 0x08 || !head[3] ||
	    head[3] > IDX_MAX_DIMS) {
		fail(err, errlen, "%s: not an IDX file of unsigned bytes "
		     "(magic %02x%02x%02x%02x)", path, head[0], head[1],
		     head[2], head[3]);
		goto out;
	}
	out->ndim = head[3];
	for (i = 0; i < out->ndim; i++) {
		if (read_all(f, dim, 4)) {
			fail(err, errlen, "%s: truncated header", path);
			goto out;
		}
		out->shape[i] = be32(dim);
		if (out->shape[i] && total > SIZE_MAX / out->shape[i]) {
			fail(err, errlen, "%s: sizes overflow", path);
			goto out;
		}
		total *= out->shape[i];
	}
	if (read_data(f, out, total, path, err, errlen))
		goto out;
	out->size = total;
	rc = 0;
out:
	gzclose(f);
	if (rc)
		idx_free(out);
	return rc;
}

void idx_free(idx_array *a)
{
	free(a->data);
	memset(a, 0, sizeof *a);
}

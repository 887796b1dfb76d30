/*
 * idx.h - IDX (MNIST format) files, gzip-compressed, read with zlib.
 */
#ifndef IDX_H
#define IDX_H

#include <stddef.h>
#include <stdint.h>

#define IDX_MAX_DIMS 4

typedef struct idx_array {
	size_t ndim;
	uint32_t shape[IDX_MAX_DIMS];
	size_t size;          /* bytes of data */
	unsigned char *data;  /* owned */
} idx_array;

/* Reads a (gzipped or plain) IDX file of unsigned bytes.  0, or -1 with
 * a message in err naming the file and what is wrong. */
int idx_read(const char *path, idx_array *out, char *err, size_t errlen);
void idx_free(idx_array *a);

#endif

/*
 * fuzz_idx.c - libFuzzer target: the input as an IDX file for the
 * Fashion-MNIST example's idx_read (examples/fashion_mnist/idx.c).
 *
 * zlib reads gzip'd and plain files alike, so an input whose gzip
 * framing a mutation broke still reaches the IDX header checks.  What
 * must hold: a refused file is refused with a message naming it; an
 * accepted one holds exactly the bytes its shape announces, every one
 * of them readable.
 */
#include "config.h"

#include "idx.h" /* examples/fashion_mnist */
#include "fuzz.h"

/* keeps the loop below from being optimized away */
static volatile unsigned sink;

static void check_read(const idx_array *a)
{
	size_t i, n = 1;
	unsigned sum = 0;

	if (a->ndim < 1 || a->ndim > IDX_MAX_DIMS)
		fuzz_abort("read with %zu dimensions", a->ndim);
	for (i = 0; i < a->ndim; i++)
		n *= a->shape[i];
	if (n != a->size || !a->data)
		fuzz_abort("shape announces %zu bytes, read %zu", n, a->size);
	/* touch every byte: ASan checks the buffer is that large */
	for (i = 0; i < a->size; i++)
		sum += a->data[i];
	sink = sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	char err[512] = "";
	idx_array a;

	if (!idx_read(path, &a, err, sizeof err))
		check_read(&a);
	else if (!fuzz_starts(err, path))
		fuzz_abort("refused without naming the file: '%s'", err);
	idx_free(&a);
	return 0;
}

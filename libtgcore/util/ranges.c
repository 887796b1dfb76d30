/*
 * util/ranges.c - byte ranges of a file in order, for the readers that
 * check a layout (safetensors: the tensors tile the data; GGUF: no two
 * overlap).
 */
#include "config.h"

#include <stdlib.h>

#include "core.h"

static int range_cmp(const void *a, const void *b)
{
	const tg_range *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

void tg_ranges_sort(tg_range *r, size_t n)
{
	if (n > 1)
		qsort(r, n, sizeof *r, range_cmp);
}

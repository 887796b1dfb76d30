/*
 * engine/search_scratch.c - the scratch buffers a BEAM search runs its
 * candidates on (tinygrad's search.py allocates its own rawbufs too):
 * one like each of the kernel's buffers, filled with fixed-seed random
 * values small enough that no sum overflows, so that a search is
 * repeatable; the outputs' first contents kept where the kernel reads
 * them (an assign) to be restored before each checked run.  Separate
 * from the search (search.c): what a candidate runs on does not depend
 * on which candidates there are.
 */
#include "config.h"

#include <stdlib.h>

#include "engine/engine.h"
#include "device/device.h"
#include "ir/ir.h"
#include "engine/search.h"

static uint64_t rnd(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Element i of a host array of kind dt as a double. */
double tg_beam_elem(tg_dtype dt, const void *p, size_t i)
{
	switch (dt) {
	case TG_FLOAT32: return ((const float *)p)[i];
	case TG_FLOAT64: return ((const double *)p)[i];
	case TG_FLOAT16: return tg_f16_value(((const uint16_t *)p)[i]);
	case TG_BFLOAT16: return tg_bf16_value(((const uint16_t *)p)[i]);
	case TG_BOOL: case TG_UINT8: return ((const uint8_t *)p)[i];
	case TG_INT8: return ((const int8_t *)p)[i];
	case TG_INT16: return ((const int16_t *)p)[i];
	case TG_UINT16: return ((const uint16_t *)p)[i];
	case TG_INT32: return ((const int32_t *)p)[i];
	case TG_UINT32: return ((const uint32_t *)p)[i];
	case TG_INT64: return (double)((const int64_t *)p)[i];
	default: return (double)((const uint64_t *)p)[i];
	}
}

/* Values in [-1, 1) for floats (exact in every float kind), 0..7 for
 * integers, 0/1 for bool: nothing overflows a short sum. */
static void fill(tg_dtype dt, void *p, size_t n, uint64_t *st)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t r = rnd(st);
		double f = (double)(int)(r % 256) / 128.0 - 1.0;
		int64_t k = (int64_t)(r % 8);
		switch (dt) {
		case TG_FLOAT32: ((float *)p)[i] = (float)f; break;
		case TG_FLOAT64: ((double *)p)[i] = f; break;
		case TG_FLOAT16: ((uint16_t *)p)[i] = tg_f16_bits(f); break;
		case TG_BFLOAT16: ((uint16_t *)p)[i] = tg_bf16_bits(f); break;
		case TG_BOOL: ((uint8_t *)p)[i] = (uint8_t)(k & 1); break;
		case TG_INT8: case TG_UINT8: ((uint8_t *)p)[i] = (uint8_t)k; break;
		case TG_INT16: case TG_UINT16:
			((uint16_t *)p)[i] = (uint16_t)k;
			break;
		case TG_INT32: case TG_UINT32:
			((uint32_t *)p)[i] = (uint32_t)k;
			break;
		default: ((uint64_t *)p)[i] = (uint64_t)k; break;
		}
	}
}

/* Whether the AST loads one of its outputs, buffers 0..nouts-1 (an
 * assign); 1 when it cannot tell (out of memory). */
int tg_beam_loads_output(const tg_uop *ast, size_t nouts)
{
	size_t n;
	tg_uop **order = tg_ast_toposort(ast, &n);
	int r = !order;

	for (size_t i = 0; order && i < n && !r; i++)
		r = order[i]->op == TG_LOAD &&
		    (size_t)tg_ast_buf(order[i]) < nouts;
	free(order);
	return r;
}

/* Scratch buffers like the item's, every one filled with random
 * values (an output may be read too: an assign). */
int tg_beam_make_scratch(search *s, tg_buffer *const *like)
{
	uint64_t st = 0x7467636f7265u;  /* fixed: a search is repeatable */

	if (!(s->bufs = calloc(s->nbufs, sizeof *s->bufs)) ||
	    !(s->ref = calloc(s->nbufs, sizeof *s->ref)) ||
	    !(s->init = calloc(s->nbufs, sizeof *s->init)))
		return tg_error_oom("beam");
	for (size_t i = 0; i < s->nbufs; i++) {
		tg_dtype dt = tg_buffer_dtype(like[i]);
		size_t n = tg_buffer_count(like[i]);
		void *h = malloc(tg_buffer_nbytes(like[i]) + 1);
		int rc;
		if (!h)
			return tg_error_oom("beam");
		fill(dt, h, n, &st);
		s->bufs[i] = tg_buffer_new(s->dev, n, dt);
		rc = s->bufs[i] ? tg_buffer_copyin(s->bufs[i], h,
		                                   tg_buffer_nbytes(like[i]))
		                : tg_last_status();
		if (i < s->nouts && s->reads_out)
			s->init[i] = h;
		else
			free(h);
		if (rc)
			return rc;
	}
	return TG_OK;
}

/* The outputs back to their first contents, before a checked run of a
 * kernel that reads them (the others overwrite them whole). */
int tg_beam_reset_outputs(search *s)
{
	for (size_t i = 0; s->reads_out && i < s->nouts && i < s->nbufs;
	     i++) {
		int rc = tg_buffer_copyin(s->bufs[i], s->init[i],
		                          tg_buffer_nbytes(s->bufs[i]));
		if (rc)
			return rc;
	}
	return TG_OK;
}

void tg_beam_free_scratch(search *s)
{
	for (size_t i = 0; i < s->nbufs; i++) {
		if (s->bufs)
			tg_buffer_unref(s->bufs[i]);
		if (s->ref)
			free(s->ref[i]);
		if (s->init)
			free(s->init[i]);
	}
	free(s->bufs);
	free(s->ref);
	free(s->init);
}

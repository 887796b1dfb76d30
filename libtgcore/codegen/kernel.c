/*
 * codegen/kernel.c - optimizations of a kernel's plan (tinygrad's
 * codegen/kernel.py: apply_opt and hand_coded_optimizations, mid-2024),
 * for a device without work groups: UPCAST and UNROLL only.
 *
 * An opt splits an axis's extent s into s/amt, still a launch index
 * (global axis) or a loop (reduce axis), and amt copies of the kernel
 * body that lowering emits with the inner index as a constant.  UPCAST
 * gives each thread a block of outputs with one accumulator each;
 * UNROLL does amt steps of a reduce per loop iteration.
 *
 * The heuristics, in order (each documented at its function):
 *  1. register blocking: upcast by 4 up to two global axes along which
 *     an input is broadcast (a matmul's output rows and columns);
 *  2. unroll the innermost reduce loop: whole when 4 or shorter, else
 *     by 4 when 4 divides it;
 *  3. when nothing was applied, upcast the last global axis by 4.
 * Budgets for a CPU's 16 vector registers: at most 16 copies from
 * upcasts and 64 in all (tinygrad allows 256 upcasted elements on GPUs,
 * whose threads are cheap and whose register files are large).
 */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

#define SPLIT 4          /* tinygrad's default upcast and unroll */
#define MAX_BLOCK 16     /* copies from upcasts of global axes */
#define MAX_COPIES 64    /* copies in all */

static const char *const opt_names[] = {
	[TG_OPT_UPCAST] = "UPCAST", [TG_OPT_UNROLL] = "UNROLL",
	[TG_OPT_LOCAL] = "LOCAL", [TG_OPT_GROUP] = "GROUP",
	[TG_OPT_GROUPTOP] = "GROUPTOP", [TG_OPT_NOLOCALS] = "NOLOCALS",
	[TG_OPT_PADTO] = "PADTO",
};
static_assert(sizeof opt_names / sizeof *opt_names == TG_OPT_PADTO + 1,
              "one name per opt");

static int64_t left(const tg_kplan *p, size_t ax)
{
	return p->full[ax] / p->upcast[ax];
}

static int64_t copies(const tg_kplan *p, int reduce)
{
	int64_t c = 1;

	for (size_t i = 0; i < p->ndim; i++)
		if (reduce < 0 || !!(p->reduce_axes & (1u << i)) == reduce)
			c *= p->upcast[i];
	return c;
}

int tg_kplan_apply_opt(tg_kplan *p, tg_opt o)
{
	int red;
	int64_t s, amt;

	if (o.op < 0 || o.op > TG_OPT_PADTO)
		return tg_error(TG_EINVAL, "opt: unknown op %d", o.op);
	if (o.op != TG_OPT_UPCAST && o.op != TG_OPT_UNROLL)
		return tg_error(TG_EUNSUPPORTED, "opt: %s needs work groups",
		                opt_names[o.op]);
	if (o.axis < 0 || (size_t)o.axis >= p->ndim)
		return tg_error(TG_EINVAL, "opt: %s axis %d of %zu",
		                opt_names[o.op], o.axis, p->ndim);
	red = !!(p->reduce_axes & (1u << o.axis));
	if (red != (o.op == TG_OPT_UNROLL))
		return tg_error(TG_EINVAL, "opt: %s on %s axis %d",
		                opt_names[o.op], red ? "reduce" : "global",
		                o.axis);
	s = left(p, (size_t)o.axis);
	amt = o.amt ? o.amt : s;
	if (amt < 2 || s % amt)
		return tg_error(TG_EINVAL,
		                "opt: %s(%d,%lld) does not split %lld",
		                opt_names[o.op], o.axis, (long long)o.amt,
		                (long long)s);
	if (p->nopts == TG_MAX_OPTS || copies(p, -1) * amt > TG_MAX_EXPAND)
		return tg_error(TG_EINVAL,
		                "opt: %s(%d,%lld): more than %d opts or %d "
		                "copies", opt_names[o.op], o.axis,
		                (long long)o.amt, TG_MAX_OPTS, TG_MAX_EXPAND);
	p->upcast[o.axis] *= amt;
	p->opts[p->nopts++] = o;
	tg_kplan_update(p);
	return TG_OK;
}

void tg_kplan_format_opts(const tg_kplan *p, char *buf, size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < p->nopts && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s(%d,%lld)",
		                      i ? " " : "", opt_names[p->opts[i].op],
		                      p->opts[i].axis,
		                      (long long)p->opts[i].amt);
}

/* The stride of st's last view on axis ax, or -1 when symbolic. */
static int64_t stride(const tg_st *st, size_t ax)
{
	tg_sint s = st->views[st->nviews - 1]->strides[ax];

	return tg_sint_is_int(s) ? s.c : -1;
}

/* Whether st is broadcast (stride 0) along an axis upcast already: a
 * buffer that is, is not blocked again (tinygrad's check). */
static int broadcast_upcast(const tg_kplan *p, const tg_st *st)
{
	for (size_t i = 0; i < p->ndim; i++)
		if (p->upcast[i] > 1 && stride(st, i) == 0)
			return 1;
	return 0;
}

/* The global axis to block next: one split by SPLIT along which some
 * LOAD is broadcast, preferring (as tinygrad) the fewest buffers moving
 * along it, then the smallest strides.  -1 when none. */
static int block_axis(const tg_kplan *p, tg_ast *const *order, size_t n)
{
	int best = -1;
	int64_t bkey[2] = { 0, 0 };

	for (size_t g = 0; g < p->nglobal; g++) {
		uint32_t ax = p->gaxes[g];
		int64_t key[2] = { 0, 0 };
		int bcast = 0;
		if (p->upcast[ax] > 1 || left(p, ax) % SPLIT)
			continue;
		for (size_t i = 0; i < n; i++) {
			const tg_ast *a = order[i];
			if (a->kind != TG_AST_LOAD && a->kind != TG_AST_STORE)
				continue;
			int64_t s = stride(a->st, ax);
			if (a->kind == TG_AST_LOAD && s == 0 &&
			    !broadcast_upcast(p, a->st))
				bcast = 1;
			key[0] += s != 0;
			key[1] += s > 0 ? s : 0;
		}
		if (bcast && (best < 0 || key[0] < bkey[0] ||
		              (key[0] == bkey[0] && key[1] < bkey[1]))) {
			best = (int)ax;
			memcpy(bkey, key, sizeof key);
		}
	}
	return best;
}

/* 1. Register blocking: each thread computes a SPLIT x SPLIT block of a
 * matmul's outputs, reusing every loaded element SPLIT times. */
static int opt_block(tg_kplan *p, tg_ast *const *order, size_t n)
{
	int ax, rc;

	for (int k = 0; k < 2 && copies(p, 0) * SPLIT <= MAX_BLOCK; k++) {
		if ((ax = block_axis(p, order, n)) < 0)
			break;
		if ((rc = tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_UPCAST, ax,
		                                          SPLIT })))
			return rc;
	}
	return TG_OK;
}

/* 2. Unroll the innermost reduce loop (tinygrad unrolls up to 32 whole;
 * on a CPU short loops are the ones worth removing). */
static int opt_unroll(tg_kplan *p)
{
	uint32_t ax;
	int64_t s;

	if (p->nred == 0)
		return TG_OK;
	ax = p->raxes[p->nred - 1];
	s = left(p, ax);
	if (s <= SPLIT && copies(p, -1) * s <= MAX_COPIES)
		return tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_UNROLL, (int)ax,
		                                       0 });
	if (s % SPLIT == 0 && copies(p, -1) * SPLIT <= MAX_COPIES)
		return tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_UNROLL, (int)ax,
		                                       SPLIT });
	return TG_OK;
}

/* 3. Nothing applied: SPLIT outputs per thread along the last global
 * axis (consecutive in memory for contiguous outputs, so the compiler
 * can vectorize them). */
static int opt_upcast_last(tg_kplan *p)
{
	uint32_t ax;

	if (p->nopts || p->nglobal == 0)
		return TG_OK;
	ax = p->gaxes[p->nglobal - 1];
	if (left(p, ax) % SPLIT)
		return TG_OK;
	return tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_UPCAST, (int)ax, SPLIT });
}

int tg_kplan_hand_opt(tg_kplan *p, tg_ast *const *order, size_t n)
{
	int rc;

	for (size_t i = 0; i < p->ndim; i++)
		if (p->full[i] == 0)
			return TG_OK;  /* refused by lowering anyway */
	if ((rc = opt_block(p, order, n)) || (rc = opt_unroll(p)) ||
	    (rc = opt_upcast_last(p)))
		return tg_error_prefix("opt: kernel %s", p->name);
	return TG_OK;
}

/*
 * codegen/reduce.c - accumulators (tinygrad's DEFINE_ACC and PHI of
 * do_reduce in uopgraph.py), run by tg_codegen after the expander.
 *
 * The expander leaves each reduce as REDUCE(v0, .., vk-1, ranges...):
 * the values one thread folds per iteration of its loops, in loop
 * order.  Here the fold becomes PHI(acc, ((acc op v0) op v1) ..) over a
 * DEFINE_ACC reset before the loops: the accumulator first, then the
 * values in order, as the NOOPT kernel adds them one iteration at a
 * time, so an unrolled float sum keeps its bits.
 */
#include "config.h"

#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

typedef struct rd_ctx {
	int nacc;  /* accumulators made: each gets its own number, so two
	              of one type over one loop never intern to one node */
	tg_ptrmap init;  /* reduce passes: REDUCE -> its LOAD of the last
	                    pass's partial */
} rd_ctx;

/* The reduce's identity: 0 for ADD, the dtype's least value for MAX. */
static tg_scalar reduce_init(const tg_uop *red)
{
	tg_scalar init;

	if (red->arg.v.i == TG_ADD)
		init.u = 0;
	else
		init = tg_dtype_min(tg_type_scalar(red->dtype));
	return init;
}

/* DEFINE_ACC(init, ranges...) of REDUCE red with k values. */
static tg_uop *new_acc(tg_rw *rw, const tg_uop *red, size_t k)
{
	rd_ctx *c = rw->ctx;
	tg_uop *src[1 + TG_MAX_DIMS];
	size_t nr = red->nsrc - k;
	tg_arg a = { .v.i = c->nacc++ };

	src[0] = tg_ptrmap_get(&c->init, red);
	if (!src[0])
		src[0] = tg_uop_const(rw->ir, red->dtype, reduce_init(red));
	memcpy(src + 1, red->src + k, nr * sizeof *src);
	return tg_uop_new(rw->ir, TG_DEFINE_ACC, red->dtype, src, 1 + nr, &a);
}

/* The fused form of a float sum's chain from `v` down to `acc`: each
 * link ADD(prev, MUL(a, b)) becomes MULACC(a, b, prev).  NULL when
 * nothing fuses or the chain is not reduce_acc's. */
static tg_uop *fuse_chain(tg_ir *ir, tg_uop *v, tg_uop *acc, int depth)
{
	tg_uop *prev, *t;

	if (v == acc || depth > TG_MAX_EXPAND * 4 || v->op == TG_MAX ||
	    !(prev = tg_acc_link_prev(v)))
		return NULL;
	t = fuse_chain(ir, prev, acc, depth + 1);
	if (!t && prev != acc && tg_ir_status(ir))
		return NULL;
	if (v->op == TG_ADD && v->src[1]->op == TG_MUL)
		return tg_uop_alu(ir, TG_MULACC, v->src[1]->src[0],
		                  v->src[1]->src[1], t ? t : prev);
	if (!t)
		return NULL;
	return v->op == TG_ADD ? tg_uop_alu(ir, TG_ADD, t, v->src[1], NULL)
	                       : tg_uop_alu(ir, TG_MULACC, v->src[0],
	                                    v->src[1], t);
}

/* Whether a reduce's sum fuses its products (float32 and float64). */
static int fused_sum(const tg_uop *red)
{
	unsigned s = tg_type_scalar(red->dtype);

	return red->arg.v.i == TG_ADD && (s == TG_FLOAT32 || s == TG_FLOAT64);
}

/* REDUCE(v0..vk-1 | ranges) -> PHI(acc, ((acc op v0) op v1) ..);
 * without ranges (a reduce unrolled whole), v0 op v1 op .. with no
 * accumulator, except that a float sum starts from 0 and fuses its
 * products at once, as fuse_phi fuses NOOPT's loop: (0 + a0*b0) + a1*b1
 * -> mulacc(a1, b1, mulacc(a0, b0, 0)), the same roundings (and the
 * same +0 for a sum of -0 products). */
static tg_uop *reduce_acc(tg_rw *rw, tg_uop **cap)
{
	tg_uop *red = cap[0], *acc = NULL, *zero = NULL, *u, *f;
	size_t k = (size_t)red->arg.b, i = 0;

	if (!k || k > red->nsrc || red->nsrc - k > TG_MAX_DIMS)
		return NULL;
	if (red->nsrc > k && !(acc = new_acc(rw, red, k)))
		return NULL;
	if (!acc && fused_sum(red) &&
	    !(zero = tg_uop_const(rw->ir, red->dtype, reduce_init(red))))
		return NULL;
	u = acc ? acc : zero ? zero : red->src[i++];
	for (; i < k; i++)
		u = tg_uop_alu(rw->ir, (unsigned)red->arg.v.i, u, red->src[i],
		               NULL);
	if (acc)
		return tg_uop2(rw->ir, TG_PHI, red->dtype, acc, u);
	if (zero && (f = fuse_chain(rw->ir, u, zero, 0)))
		return f;
	return tg_ir_status(rw->ir) ? NULL : u;
}

/* PHI(acc, ((acc + a*b) + c*d)) -> PHI(acc, mulacc(c, d, mulacc(a, b,
 * acc))) on float32 and float64 sums: a fused multiply-add per step
 * (tinygrad's MULACC, where the renderer has one; every dialect here
 * has).  NOOPT kernels fuse the same way, so an optimized kernel still
 * equals NOOPT bit for bit.  Run after loop collapse, which reads the
 * plain sums. */
static tg_uop *fuse_phi(tg_rw *rw, tg_uop **cap)
{
	tg_uop *phi = cap[0], *acc = phi->src[0], *v;
	unsigned s = tg_type_scalar(phi->dtype);

	if ((s != TG_FLOAT32 && s != TG_FLOAT64) || acc->op != TG_DEFINE_ACC ||
	    !(v = fuse_chain(rw->ir, phi->src[1], acc, 0)))
		return NULL;
	return tg_uop2(rw->ir, TG_PHI, phi->dtype, acc, v);
}

static const tg_rule fuse_table[] = {
	{ "phi(acc, (acc + a*b) + ..) -> phi(acc, mulacc(a, b, acc) ..)",
	  P_OP(0, TG_PHI), fuse_phi },
};
static tg_ruleset fuse_rules = TG_RULESET("mulacc", fuse_table, NULL);

tg_uop *tg_fuse_mulacc(tg_ir *ir, tg_uop *sink)
{
	return tg_rewrite(ir, sink, &fuse_rules, NULL);
}

/* x + WMMA(a, b, 0) -> WMMA(a, b, x): the instruction adds to its C
 * operand itself (tinygrad's WMMA accumulate fold), so a tile's sum
 * stays in the instruction's registers. */
static tg_uop *wmma_acc(tg_rw *rw, tg_uop **cap)
{
	tg_uop *add = cap[0], *w = add->src[1], *src[3];
	tg_scalar z;

	if (w->op != TG_WMMA || w->nsrc != 3 || w->dtype != add->dtype ||
	    !tg_uop_is_const(w->src[2], &z) || z.u != 0)
		return NULL;
	src[0] = w->src[0];
	src[1] = w->src[1];
	src[2] = add->src[0];
	return tg_uop_new(rw->ir, TG_WMMA, w->dtype, src, 3, &w->arg);
}

static const tg_rule reduce_table[] = {
	{ "reduce(v0..vk-1 | r) -> phi(acc, ((acc op v0) op v1) ..)",
	  P_OP(0, TG_REDUCE), reduce_acc },
	{ "x + wmma(a, b, 0) -> wmma(a, b, x)", P_OP(0, TG_ADD), wmma_acc },
};
static tg_ruleset reduce_rules =
	TG_RULESET("reduce", reduce_table, NULL);

/* The REDUCE a store of a kernel with passes takes: its value, or the
 * partial branch of WHERE(kidx0 < passes-1, partial, op(partial)). */
static tg_uop *stored_reduce(const tg_uop *st)
{
	tg_uop *v = st->src[2];

	if (v->op == TG_WHERE)
		v = v->src[1];
	return v->op == TG_REDUCE && v->nsrc > (uint32_t)v->arg.b ? v : NULL;
}

/* Reduce passes: each REDUCE the stores take starts from what the last
 * pass stored at its place (nothing on the first pass: the identity). */
static int resume_reduces(tg_ir *ir, const tg_uop *sink, tg_uop *pass,
                          tg_ptrmap *init)
{
	tg_uop *later = tg_uop_alu(ir, TG_CMPNE, pass, tg_sym_int(ir, 0),
	                           NULL);  /* a pass after the first */

	for (uint32_t i = 0; i < sink->nsrc; i++) {
		const tg_uop *st = sink->src[i];
		tg_uop *red = st->op == TG_STORE ? stored_reduce(st) : NULL;
		if (!red)
			continue;
		tg_uop *gate = st->nsrc >= 4 ? tg_uop_alu(ir, TG_AND,
		               st->src[3], later, NULL) : later;
		tg_uop *src[4] = { st->src[0], st->src[1], gate,
		                   tg_uop_const(ir, red->dtype,
		                                reduce_init(red)) };
		tg_uop *ld = tg_uop_new(ir, TG_LOAD, red->dtype, src, 4, NULL);
		if (!ld || tg_ptrmap_put(init, red, ld) < 0)
			return tg_ir_status(ir) ? tg_ir_status(ir)
			                        : tg_error_oom("reduce");
	}
	return TG_OK;
}

tg_uop *tg_lower_reduces(tg_ir *ir, tg_uop *sink, const tg_kplan *p)
{
	rd_ctx c = { 0 };
	tg_uop *pass = tg_kplan_pass_idx(ir, p), *r = NULL;

	if (!pass || resume_reduces(ir, sink, pass, &c.init) == TG_OK)
		r = tg_rewrite(ir, sink, &reduce_rules, &c);
	tg_ptrmap_free(&c.init);
	return r;
}

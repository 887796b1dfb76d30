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

	src[0] = tg_uop_const(rw->ir, red->dtype, reduce_init(red));
	memcpy(src + 1, red->src + k, nr * sizeof *src);
	return tg_uop_new(rw->ir, TG_DEFINE_ACC, red->dtype, src, 1 + nr, &a);
}

/* REDUCE(v0..vk-1 | ranges) -> PHI(acc, ((acc op v0) op v1) ..);
 * without ranges, v0 op v1 op .. (no accumulator). */
static tg_uop *reduce_acc(tg_rw *rw, tg_uop **cap)
{
	tg_uop *red = cap[0], *acc = NULL, *u;
	size_t k = (size_t)red->arg.b, i = 0;

	if (!k || k > red->nsrc || red->nsrc - k > TG_MAX_DIMS)
		return NULL;
	if (red->nsrc > k && !(acc = new_acc(rw, red, k)))
		return NULL;
	u = acc ? acc : red->src[i++];
	for (; i < k; i++)
		u = tg_uop_alu(rw->ir, (unsigned)red->arg.v.i, u, red->src[i],
		               NULL);
	return acc ? tg_uop2(rw->ir, TG_PHI, red->dtype, acc, u) : u;
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

static const tg_rule reduce_table[] = {
	{ "reduce(v0..vk-1 | r) -> phi(acc, ((acc op v0) op v1) ..)",
	  P_OP(0, TG_REDUCE), reduce_acc },
};
static tg_ruleset reduce_rules =
	TG_RULESET("reduce", reduce_table, NULL);

tg_uop *tg_lower_reduces(tg_ir *ir, tg_uop *sink)
{
	rd_ctx c = { 0 };

	return tg_rewrite(ir, sink, &reduce_rules, &c);
}

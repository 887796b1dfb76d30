/*
 * codegen/lower.c - from a kernel AST to IR (tinygrad's
 * codegen/lowerer.py): launch indices, loops and one lowering of each
 * AST node.
 *
 * The plan (tg_lower_plan, plan.c) classifies the full shape's axes:
 * reduce axes, global axes (the others), size-1 axes dropped.
 * Conceptually the axes are permuted to [globals | reduces]; since every
 * shape tracker is indexed per axis, the permutation is carried by the
 * index uops handed to tg_st_expr_idxs rather than by rewriting the sts.
 * The last global axis is gidx0 (the fastest-varying launch index), the
 * one before gidx1; when there are more than three global axes the
 * leading ones share gidx2 and are recovered by div/mod.  Reduce axes
 * become RANGE loops, and so do symbolic output axes (outside them):
 * launch sizes never depend on a variable.
 *
 * Opts (opt.c) split an axis into an outer part, which stays a
 * launch index or loop, and an upcast part u: the axis is indexed
 * outer*u + X, X the axis's digit (an EXPAND leaf), and every AST node
 * is lowered once.  The expander (expand.c) then makes one lane per
 * value of the digits a node depends on, and reduce.c turns each REDUCE
 * into an accumulator.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

static int64_t outer(const tg_kplan *p, size_t ax)
{
	return tg_kplan_outer(p, ax);
}

typedef struct lower_state {
	tg_ir *ir;
	const tg_kernel *k;
	const tg_kplan *p;
	tg_uop *base[TG_MAX_DIMS];     /* per axis: gidx, loop or 0 */
	tg_uop *gbase[TG_MAX_DIMS];    /* ... before its local part */
	tg_uop *axis_idx[TG_MAX_DIMS]; /* per axis: base*u + its digit */
	tg_uop *zero;                  /* CONST 0 index */
	tg_uop *ranges[TG_MAX_DIMS];
	size_t nranges;
	uint32_t unrolled;             /* reduce axes with an upcast part */
	tg_uop **val;                  /* by ast id */
	tg_uop *bufs[64];
	tg_uop *store_gate;            /* grouped reduces: group lidx 0 */
	uint32_t *under;               /* by ast id: the axes of the
	                                  reduces the node is under */
	tg_uop *pass;                  /* reduce passes: kidx0, else NULL */
	tg_uop *partial;               /* ... and the REDUCE's value */
} lower_state;

static tg_uop *zero_of(tg_ir *ir, tg_dtype dt)
{
	tg_scalar z;

	z.u = 0;
	return tg_uop_const(ir, dt, z);
}

/* valid, and each of the padded axes in `pad` below its real extent;
 * an output axis where st has 1 is indexed 0, inside the buffer. */
static tg_uop *unpadded(lower_state *ls, const tg_st *st, uint32_t pad,
                        tg_uop *valid)
{
	const tg_kplan *p = ls->p;
	const tg_sint *sh = tg_st_shape(st);

	for (size_t i = 0; i < p->ndim; i++)
		if ((pad & p->padded & (1u << i)) &&
		    ((p->reduce_axes & (1u << i)) || !tg_sint_is(sh[i], 1)))
			valid = tg_uop_alu(ls->ir, TG_AND, valid,
			                   tg_uop_alu(ls->ir, TG_CMPLT,
			                              ls->axis_idx[i],
			                              tg_sym_int(ls->ir,
			                                         p->real[i]),
			                              NULL), NULL);
	return valid;
}

/* (idx, valid) of st at the kernel's indices (0 where st has 1);
 * valid is false on the padding (PADTO) of the axes in `pad`. */
static int st_index(lower_state *ls, const tg_st *st, uint32_t pad,
                    tg_uop **idx, tg_uop **valid)
{
	tg_uop *ix[TG_MAX_DIMS];
	const tg_sint *sh = tg_st_shape(st);
	size_t nd = tg_st_ndim(st), i;
	int rc;

	if (nd != ls->p->ndim)
		return tg_error(TG_EINVAL, "lower: st has %zu dims, kernel %zu",
		                nd, ls->p->ndim);
	for (i = 0; i < nd; i++)
		ix[i] = tg_sint_is(sh[i], 1) ? ls->zero : ls->axis_idx[i];
	if ((rc = tg_st_expr_idxs(ls->ir, st, ix, idx, valid)))
		return rc;
	*valid = unpadded(ls, st, pad, *valid);
	*idx = tg_sym_simplify(ls->ir, *idx);
	*valid = tg_sym_simplify(ls->ir, *valid);
	if (!*idx || !*valid)
		return tg_ir_status(ls->ir) ? tg_ir_status(ls->ir) : TG_ENOMEM;
	return TG_OK;
}

static tg_uop *buf_of(lower_state *ls, int buf, tg_dtype dt, int out)
{
	tg_arg a;

	if (buf < 0 || buf >= 64) {
		tg_error(TG_EUNSUPPORTED, "lower: buffer index %d", buf);
		return NULL;
	}
	if (!ls->bufs[buf]) {
		memset(&a, 0, sizeof a);
		a.v.i = buf;
		a.a = out;
		ls->bufs[buf] = tg_uop0(ls->ir, TG_DEFINE_GLOBAL,
		                        tg_type_ptr(dt, TG_AS_GLOBAL), &a);
	}
	return ls->bufs[buf];
}

/* The index of every axis: outer*u + X with X the axis's digit, an
 * EXPAND leaf in [0, u) that the expander replaces by each lane's
 * value; the outer index alone when the axis has no upcast part. */
static void set_axes(lower_state *ls)
{
	const tg_kplan *p = ls->p;
	tg_ir *ir = ls->ir;

	for (size_t ax = 0; ax < p->ndim; ax++) {
		int64_t u = p->upcast[ax];
		tg_arg a = { .v.i = (int64_t)ax, .a = u };
		tg_uop *x;

		ls->axis_idx[ax] = ls->base[ax];
		if (u == 1)
			continue;
		x = tg_uop0(ir, TG_EXPAND, TG_INDEX, &a);
		ls->axis_idx[ax] = tg_sym_add(ir, tg_sym_muli(ir, ls->base[ax],
		                                              u), x);
		if (p->reduce_axes & ~p->lanes & (1u << ax))
			ls->unrolled |= 1u << ax;
	}
}

static int wmma_operand(lower_state *ls, const tg_uop *x, int is_b,
                        tg_uop **res);

/* REDUCE(value, loops...), arg.v.i the op, arg.a the unrolled axes and
 * arg.b 0: the expander contracts the unrolled lanes into it (arg.b
 * the values then), reduce.c makes the accumulator.  Axes grouped into
 * lanes (p->lanes) stay lanes of it, one partial result each, which a
 * second REDUCE without loops adds in order. */
static tg_uop *lower_reduce(lower_state *ls, const tg_uop *a)
{
	tg_uop *src[1 + TG_MAX_DIMS], *r;
	tg_arg arg = { .v.i = tg_ast_reduce_op(a), .a = ls->unrolled };
	uint32_t lanes = ls->p->lanes & tg_ast_reduce_axes(a);

	src[0] = ls->val[a->src[0]->id];
	if (ls->p->wmma) {  /* WMMA(A, B) of the product's operands */
		const tg_uop *mul = tg_ast_reduced(a);
		int as = ls->p->wmma_asrc;
		tg_uop *ab[2];
		if (wmma_operand(ls, mul->src[as], 0, &ab[0]) ||
		    wmma_operand(ls, mul->src[1 - as], 1, &ab[1]))
			return tg_ir_fail(ls->ir, tg_last_status(), "%s",
			                  tg_last_error());
		src[0] = tg_uop_new(ls->ir, TG_WMMA, a->dtype, ab, 2, NULL);
	}
	memcpy(src + 1, ls->ranges, ls->nranges * sizeof *src);
	r = tg_uop_new(ls->ir, TG_REDUCE, a->dtype, src, 1 + ls->nranges,
	               &arg);
	arg.a = lanes;
	return lanes ? tg_uop_new(ls->ir, TG_REDUCE, a->dtype, &r, 1, &arg)
	             : r;
}

/* SINK of the stores, each distinct one once. */
static tg_uop *lower_sink(lower_state *ls, const tg_uop *a)
{
	tg_uop **src = malloc((a->nsrc ? a->nsrc : 1) * sizeof *src), *r;
	size_t n = 0, k;

	if (!src)
		return tg_ir_fail(ls->ir, TG_ENOMEM,
		                  "lower: out of host memory");
	for (uint32_t i = 0; i < a->nsrc; i++) {
		tg_uop *st = ls->val[a->src[i]->id];
		for (k = 0; k < n && src[k] != st; k++)
			;
		if (k == n)
			src[n++] = st;
	}
	r = tg_uop_new(ls->ir, TG_SINK, TG_VOID, src, n, NULL);
	free(src);
	return r;
}

/* The value of source i of a. */
static tg_uop *src_val(const lower_state *ls, const tg_uop *a, unsigned i)
{
	return ls->val[a->src[i]->id];
}

/* A LOAD or a CONST through its tracker: the value where the tracker
 * is valid, else 0.  A mask that depends on digits stays a gate; the
 * expander decides it per lane. */
static int lower_leaf(lower_state *ls, const tg_uop *a, tg_uop **res)
{
	tg_ir *ir = ls->ir;
	tg_dtype dt = tg_type_scalar(a->dtype);
	tg_uop *idx, *valid, *b = NULL, *v;
	int rc, cb;

	if (a->op == TG_LOAD &&
	    !(b = buf_of(ls, tg_ast_buf(a), dt,
	                 (ls->p->outs >> tg_ast_buf(a)) & 1u)))
		return tg_last_status();
	/* padding reads 0: loads on padded output axes (they would read
	 * past the buffer), loads and constants under a SUM over a padded
	 * reduce axis (they would add); a constant on an output axis's
	 * padding is computed, then not stored */
	if ((rc = st_index(ls, tg_kernel_st(ls->k, a),
	                   ls->under[a->id] |
	                   (a->op == TG_LOAD ? ~ls->p->reduce_axes : 0u),
	                   &idx, &valid)))
		return rc;
	cb = tg_uop_const_bool(valid);
	if (cb == 0)
		*res = zero_of(ir, dt);
	else if (a->op == TG_CONST) {
		v = tg_uop_const(ir, dt, a->arg.v);
		*res = cb == 1 ? v : tg_uop3(ir, TG_WHERE, dt, valid, v,
		                             zero_of(ir, dt));
	} else {
		tg_uop *src[4] = { b, idx, valid, zero_of(ir, dt) };
		*res = tg_uop_new(ir, TG_LOAD, dt, src, cb == 1 ? 2 : 4, NULL);
	}
	return TG_OK;
}

static int lower_store(lower_state *ls, const tg_uop *a, tg_uop **res)
{
	tg_dtype dt = tg_type_scalar(a->src[2]->dtype);
	tg_uop *b = buf_of(ls, tg_ast_buf(a), dt, 1), *idx, *valid;
	int rc;

	if (!b)
		return tg_last_status();
	if ((rc = st_index(ls, tg_kernel_st(ls->k, a), ~ls->p->reduce_axes,
	                   &idx, &valid)))
		return rc;
	/* the padding of output axes is not stored */
	tg_uop *v = src_val(ls, a, 2);
	if (ls->pass && v != ls->partial)  /* the op after the last pass */
		v = tg_uop3(ls->ir, TG_WHERE, v->dtype,
		            tg_uop_alu(ls->ir, TG_CMPLT, ls->pass,
		                       tg_sym_int(ls->ir, ls->pass->arg.a - 1),
		                       NULL), ls->partial, v);
	tg_uop *gate = tg_uop_const_bool(valid) == 1 ? ls->store_gate
	        : !ls->store_gate ? valid
	        : tg_uop_alu(ls->ir, TG_AND, ls->store_gate, valid, NULL);
	tg_uop *src[4] = { b, idx, v, gate };
	*res = tg_uop_new(ls->ir, TG_STORE, TG_VOID, src, gate ? 4 : 3,
	                  NULL);
	return TG_OK;
}

/* AST node a over its sources' lowered values. */
static int lower_node(lower_state *ls, const tg_uop *a, tg_uop **res)
{
	tg_ir *ir = ls->ir;
	unsigned n = tg_op_arity(a->op);
	tg_uop *u = NULL;
	int rc = TG_OK;

	if (n)
		u = tg_uop_alu(ir, a->op, src_val(ls, a, 0),
		               n > 1 ? src_val(ls, a, 1) : NULL,
		               n > 2 ? src_val(ls, a, 2) : NULL);
	else if (a->op == TG_LOAD || a->op == TG_CONST)
		rc = lower_leaf(ls, a, &u);
	else if (a->op == TG_CAST || a->op == TG_BITCAST)
		u = tg_uop1(ir, a->op, a->dtype, src_val(ls, a, 0));
	else if (a->op == TG_REDUCE_AXIS)
		u = ls->partial = lower_reduce(ls, a);
	else if (a->op == TG_STORE)
		rc = lower_store(ls, a, &u);
	else if (a->op == TG_SINK)
		u = lower_sink(ls, a);
	else
		return tg_error(TG_EINVAL, "lower: %s in a kernel AST",
		                tg_op_name(a->op));
	if (rc == TG_OK && !u)
		rc = tg_ir_status(ir) ? tg_ir_status(ir) : TG_ENOMEM;
	if (rc == TG_OK)
		*res = u;
	return rc;
}

/* Work-group axis k's local index: lidx0 is the last of p->laxes. */
static tg_uop *lidx_of(tg_ir *ir, const tg_kplan *p, size_t k)
{
	static const char *const lname[3] = { "lidx0", "lidx1", "lidx2" };
	uint32_t ax = p->laxes[p->nlocal - 1 - k];
	tg_arg a = { .a = p->local[ax] * p->group[ax], .name = lname[k] };

	return tg_uop0(ir, TG_SPECIAL, TG_INDEX, &a);
}

tg_uop *tg_kplan_flat_lidx(tg_ir *ir, const tg_kplan *p, int grouped,
                           int64_t *count)
{
	tg_uop *f = tg_sym_int(ir, 0);

	*count = 1;
	for (size_t i = 0; i < p->nlocal; i++) {
		uint32_t ax = p->laxes[i];
		int64_t n = grouped ? p->group[ax] : p->local[ax];
		if (n == 1)
			continue;
		f = tg_sym_add(ir, tg_sym_muli(ir, f, n),
		               lidx_of(ir, p, p->nlocal - 1 - i));
		*count *= n;
	}
	return f;
}

/* Local indices: a global axis's index becomes gidx*L + lidx, a
 * grouped reduce axis's r*G + lidx (GROUPTOP: lidx*R + r); stores are
 * gated to the first item of the reduce's group. */
static void set_locals(lower_state *ls)
{
	const tg_kplan *p = ls->p;
	tg_ir *ir = ls->ir;

	for (size_t k = 0; k < p->nlocal; k++) {
		uint32_t ax = p->laxes[p->nlocal - 1 - k];
		int64_t n = p->local[ax] * p->group[ax];
		tg_uop *l = lidx_of(ir, p, k), *b = ls->base[ax];
		ls->gbase[ax] = b;
		if (p->grouptop & (1u << ax))
			ls->base[ax] = tg_sym_add(ir, tg_sym_muli(ir, l,
			                                          outer(p, ax)), b);
		else
			ls->base[ax] = tg_sym_add(ir, tg_sym_muli(ir, b, n), l);
		if (p->group[ax] > 1) {
			tg_uop *first = tg_uop_alu(ir, TG_CMPLT, l,
			                           tg_sym_int(ir, 1), NULL);
			ls->store_gate = !ls->store_gate ? first
			        : tg_uop_alu(ir, TG_AND, ls->store_gate, first,
			                     NULL);
		}
	}
}

/* Launch indices for the global axes: the last two are gidx0 and
 * gidx1; the rest come out of gidx2 by div/mod, last fastest. */
static void set_globals(lower_state *ls)
{
	static const char *const gname[3] = { "gidx0", "gidx1", "gidx2" };
	const tg_kplan *p = ls->p;
	tg_ir *ir = ls->ir;
	size_t ng = p->nglobal < 3 ? p->nglobal : 3;
	tg_uop *sp[3];
	int64_t div = 1;

	for (size_t g = 0; g < ng; g++) {
		tg_arg a = { .a = (int64_t)p->global[g], .name = gname[g] };
		sp[g] = tg_uop0(ir, TG_SPECIAL, TG_INDEX, &a);
	}
	for (size_t k = 0; k < p->nglobal; k++) {
		size_t ax_i = p->nglobal - 1 - k;
		uint32_t ax = p->gaxes[ax_i];
		int64_t ext = outer(p, ax);
		if (k < 2 || p->nglobal == 3) {
			ls->base[ax] = sp[k < 2 ? k : 2];
			continue;
		}
		tg_uop *q = div == 1 ? sp[2] : tg_sym_idivi(ir, sp[2], div);
		ls->base[ax] = ax_i == 0 ? q : tg_sym_modi(ir, q, ext);
		div *= ext;
	}
}

/* A loop over axis ax's outer extent (symbolic axes: the variable's
 * expression), number `no`; `reduce` marks a reduce loop. */
static tg_uop *loop(lower_state *ls, uint32_t ax, size_t no, int reduce)
{
	tg_ir *ir = ls->ir;
	tg_arg a = { .v.i = (int64_t)no, .a = reduce };
	int64_t n = ls->pass && ax == ls->p->raxes[0] ? ls->p->rblock
	                                              : outer(ls->p, ax);
	tg_uop *src[2] = { tg_sym_int(ir, 0),
	                   ls->p->sym[ax] ? ls->p->sym[ax]
	                                  : tg_sym_int(ir, n) };

	return tg_uop_new(ir, TG_RANGE, TG_INDEX, src, 2, &a);
}

/* Loops for the symbolic output axes, then for the reduce axes,
 * numbered outermost first. */
static void set_loops(lower_state *ls)
{
	const tg_kplan *p = ls->p;

	for (size_t i = 0; i < p->nloop + p->nred; i++) {
		int red = i >= p->nloop;
		uint32_t ax = red ? p->raxes[i - p->nloop] : p->oaxes[i];

		ls->base[ax] = loop(ls, ax, i, red);
		if (red)
			ls->ranges[ls->nranges++] = ls->base[ax];
	}
	if (ls->pass)  /* the outer reduce loop: pass*B + RANGE(0, B) */
		ls->base[p->raxes[0]] = tg_sym_add(ls->ir, tg_sym_muli(ls->ir,
		                        ls->pass, p->rblock), ls->ranges[0]);
}

tg_uop *tg_kplan_pass_idx(tg_ir *ir, const tg_kplan *p)
{
	tg_arg a = { .name = "kidx0" };

	if (!p || !p->rblock)
		return NULL;
	a.a = tg_kplan_outer(p, p->raxes[0]) / p->rblock;
	return tg_uop0(ir, TG_SPECIAL, TG_INDEX, &a);
}

/* The outer index of every axis: global axes become launch indices,
 * reduce and symbolic axes loops, the rest 0; then the local parts. */
static void set_bases(lower_state *ls)
{
	const tg_kplan *p = ls->p;

	for (size_t i = 0; i < p->ndim; i++)
		ls->base[i] = ls->zero;
	set_globals(ls);
	set_loops(ls);
	set_locals(ls);
	if (p->wmma)  /* K: kthreads tiles per loop step, by N's lanes */
		ls->base[p->tc_ax[2]] = tg_sym_add(ls->ir,
		        tg_sym_muli(ls->ir, ls->base[p->tc_ax[2]],
		                    p->wmma->kthreads), lidx_of(ls->ir, p, 0));
}

/* A plan a matrix instruction's layout holds for (tg_wmma): N's local
 * part is lidx0 and M's lidx1, of the layout's sizes, no groups, and
 * the upcasts of N, M and K hold its digits. */
static int check_wmma(const tg_kplan *p)
{
	const tg_wmma *w = p->wmma;
	uint32_t n = p->tc_ax[0], m = p->tc_ax[1], k = p->tc_ax[2];

	for (size_t i = 0; w && i < p->ndim; i++)
		if (p->group[i] > 1)
			w = NULL;
	if (!p->wmma || (w && p->nlocal >= 2 && p->laxes[p->nlocal - 1] == n &&
	                 p->laxes[p->nlocal - 2] == m &&
	                 p->local[n] == w->nloc && p->local[m] == w->mloc &&
	                 p->upcast[n] % w->nup == 0 &&
	                 p->upcast[m] % w->mup == 0 &&
	                 p->upcast[k] % (w->dims[2] / w->kthreads) == 0))
		return TG_OK;
	return tg_error(TG_EINVAL, "lower: kernel %s: the plan moved the "
	                "lanes of %s", p->name, p->wmma->fn);
}

/* An operand of a matrix instruction, lowered again with its own
 * indices: the axis it is broadcast along indexed 0 (the lane's index
 * there means another axis of this operand, and must not gate it as
 * padding); B read at the columns its fragment holds
 * (wmma_b_column, render/wmma.c); the product's CAST kept. */
/* B's N index: the column the lane's fragment holds, M's local index
 * g read as N's local index g/nup and digit g%nup (N's digit d keeps
 * its part above nup: the upcast tile). */
static tg_uop *wmma_b_column(lower_state *ls)
{
	const tg_kplan *p = ls->p;
	const tg_wmma *w = p->wmma;
	tg_ir *ir = ls->ir;
	uint32_t n = p->tc_ax[0];
	int64_t u = p->upcast[n];
	tg_arg xa = { .v.i = (int64_t)n, .a = u };
	tg_uop *g = lidx_of(ir, p, 1);
	tg_uop *d = tg_uop0(ir, TG_EXPAND, TG_INDEX, &xa);
	tg_uop *col = tg_sym_add(ir, tg_sym_muli(ir, ls->gbase[n], w->nloc),
	                         tg_sym_idivi(ir, g, w->nup));

	return tg_sym_add(ir, tg_sym_add(ir, tg_sym_muli(ir, col, u),
	                  tg_sym_muli(ir, tg_sym_idivi(ir, d, w->nup), w->nup)),
	                  tg_sym_modi(ir, g, w->nup));
}

static int wmma_operand(lower_state *ls, const tg_uop *x, int is_b,
                        tg_uop **res)
{
	const tg_kplan *p = ls->p;
	tg_ir *ir = ls->ir;
	uint32_t n = p->tc_ax[0], m = p->tc_ax[1];
	tg_uop *sn = ls->axis_idx[n], *sm = ls->axis_idx[m];
	int rc;

	ls->axis_idx[is_b ? m : n] = ls->zero;
	if (is_b)
		ls->axis_idx[n] = wmma_b_column(ls);
	rc = lower_leaf(ls, x->op == TG_CAST ? x->src[0] : x, res);
	ls->axis_idx[n] = sn;
	ls->axis_idx[m] = sm;
	if (rc == TG_OK && x->op == TG_CAST)
		*res = tg_uop1(ir, TG_CAST, x->dtype, *res);
	if (rc == TG_OK && !*res)
		rc = tg_ir_status(ir) ? tg_ir_status(ir) : TG_ENOMEM;
	return rc;
}

/* A plan lowering can take: each upcast divides its axis and their
 * product stays within TG_MAX_EXPAND lanes; no axis is empty (the plan
 * dropped it, so the kernel is refused rather than run out of
 * bounds). */
static int check_plan(const tg_kplan *p)
{
	size_t lanes = 1;

	for (size_t i = p->ndim; i-- > 0;) {
		if (p->upcast[i] < 1 || p->full[i] % p->upcast[i] ||
		    lanes * (size_t)p->upcast[i] > TG_MAX_EXPAND)
			return tg_error(TG_EINVAL, "lower: bad upcast %lld on "
			                "axis %zu", (long long)p->upcast[i], i);
		lanes *= (size_t)p->upcast[i];
	}
	for (size_t i = 0; i < p->ndim; i++)
		if (p->full[i] == 0)
			return tg_error(TG_EUNSUPPORTED,
			                "lower: empty kernel (0-size axis %zu)", i);
	return TG_OK;
}

/* under[id]: the reduce axes of every REDUCE_AXIS above node id (users
 * come after their sources in k->order). */
static void mark_under(const tg_kernel *k, uint32_t *under)
{
	for (size_t i = k->n; i-- > 0;) {
		const tg_uop *a = k->order[i];
		uint32_t m = under[a->id] | (a->op == TG_REDUCE_AXIS
		                             ? tg_ast_reduce_axes(a) : 0u);
		for (uint32_t j = 0; j < a->nsrc; j++)
			if (a->src[j]->id <= k->sink->id)
				under[a->src[j]->id] |= m;
	}
}

int tg_lower(const tg_kernel *k, const tg_kplan *p, tg_uop **out)
{
	tg_ir *ir = k->ir;
	lower_state ls = { .ir = ir, .k = k, .p = p };
	int rc;

	if ((rc = check_plan(p)) || (rc = check_wmma(p)))
		return rc;
	ls.zero = tg_sym_int(ir, 0);
	ls.pass = tg_kplan_pass_idx(ir, p);
	set_bases(&ls);
	set_axes(&ls);
	if (tg_ir_status(ir))
		return tg_ir_status(ir);
	/* sources have smaller ids than the sink */
	ls.val = calloc((size_t)k->sink->id + 1, sizeof *ls.val);
	ls.under = calloc((size_t)k->sink->id + 1, sizeof *ls.under);
	if (!ls.val || !ls.under)
		rc = tg_error_oom("lower");
	else if (p->padded)  /* only padding reads it */
		mark_under(k, ls.under);
	for (size_t i = 0; i < k->n && rc == TG_OK; i++)
		rc = lower_node(&ls, k->order[i], &ls.val[k->order[i]->id]);
	if (rc == TG_OK)
		*out = ls.val[k->sink->id];
	free(ls.val);
	free(ls.under);
	return rc;
}

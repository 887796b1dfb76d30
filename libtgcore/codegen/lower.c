/*
 * codegen/lower.c - from a kernel AST to the lowered IR (tinygrad's
 * codegen/lowerer.py, with the kernel's axis bookkeeping of kernel.py in
 * its NOOPT form).
 *
 * The plan (tg_lower_plan) classifies the full shape's axes: reduce axes
 * (those of the REDUCE), global axes (the others), size-1 axes dropped.
 * Conceptually the axes are permuted to [globals | reduces]; since every
 * shape tracker is indexed per axis, the permutation is carried by the
 * index uops handed to tg_st_expr_idxs rather than by rewriting the sts.
 * The last global axis is gidx0 (the fastest-varying launch index), the
 * one before gidx1; when there are more than three global axes the
 * leading ones share gidx2 and are recovered by div/mod.  Reduce axes
 * become RANGE loops.
 *
 * Hand-coded optimizations (UPCAST, UNROLL, LOCAL, GROUP, ...) will edit
 * the plan between tg_lower_plan and tg_lower (see OPTS HOOK in
 * codegen.c); this file then has to learn split and upcasted axes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

int tg_lower_plan(const tg_ast *sink, tg_kplan *p)
{
	tg_sint shape[TG_MAX_DIMS];
	tg_ast **order;
	size_t n, nd, i, len;
	int rc, has_reduce = 0;

	memset(p, 0, sizeof *p);
	if ((rc = tg_ast_full_shape(sink, &nd, shape)))
		return rc;
	for (i = 0; i < nd; i++) {
		if (!tg_sint_is_int(shape[i]))
			return tg_error(TG_EUNSUPPORTED,
			                "lower: symbolic shapes are not supported "
			                "yet");
		p->full[i] = shape[i].c;
	}
	p->ndim = nd;
	if (!(order = tg_ast_toposort(sink, &n)))
		return TG_ENOMEM;
	for (i = 0; i < n; i++) {
		const tg_ast *a = order[i];
		if (a->kind == TG_AST_REDUCE) {
			p->reduce_axes |= a->axes;
			has_reduce = 1;
		}
		if ((a->kind == TG_AST_LOAD || a->kind == TG_AST_STORE) &&
		    a->buf >= 0 && (size_t)a->buf + 1 > p->nbufs)
			p->nbufs = (size_t)a->buf + 1;
		if (a->kind == TG_AST_STORE && a->buf >= 0 && a->buf < 32)
			p->outs |= 1u << a->buf;
	}
	free(order);
	p->has_reduce = has_reduce;
	for (i = 0; i < nd; i++) {
		if (p->full[i] == 1 || p->full[i] == 0)
			continue;  /* size-1 axes index 0 (0-size: see below) */
		if (p->reduce_axes & (1u << i))
			p->raxes[p->nred++] = (uint32_t)i;
		else
			p->gaxes[p->nglobal++] = (uint32_t)i;
	}
	/* launch geometry: gidx0 the last global axis, gidx1 the one
	 * before, gidx2 the product of the rest */
	p->global[0] = p->global[1] = p->global[2] = 1;
	for (i = 0; i < p->nglobal; i++) {
		size_t from_end = p->nglobal - 1 - i;
		size_t g = from_end < 2 ? from_end : 2;
		p->global[g] *= (size_t)p->full[p->gaxes[i]];
	}
	/* the name: "E_"/"r_" then global extents then reduce extents */
	len = (size_t)snprintf(p->name, sizeof p->name, "%s",
	                       has_reduce ? "r" : "E");
	for (i = 0; i < p->nglobal + p->nred && len < sizeof p->name; i++) {
		uint32_t ax = i < p->nglobal ? p->gaxes[i]
		                             : p->raxes[i - p->nglobal];
		len += (size_t)snprintf(p->name + len, sizeof p->name - len,
		                        "_%lld", (long long)p->full[ax]);
	}
	if (p->nglobal + p->nred == 0 && len < sizeof p->name)
		snprintf(p->name + len, sizeof p->name - len, "_1");
	return TG_OK;
}

typedef struct lower_state {
	tg_ir *ir;
	const tg_kplan *p;
	tg_uop *axis_idx[TG_MAX_DIMS]; /* per full-shape axis */
	tg_uop *zero;                  /* CONST 0 index */
	tg_uop *ranges[TG_MAX_DIMS];
	size_t nranges;
	tg_uop **val;                  /* by ast id */
	tg_uop *bufs[64];
	int nacc;
} lower_state;

static tg_uop *zero_of(tg_ir *ir, tg_dtype dt)
{
	tg_scalar z;

	z.u = 0;
	return tg_uop_const(ir, dt, z);
}

/* (idx, valid) of st at the kernel's indices (0 where st has 1). */
static int st_index(lower_state *ls, const tg_st *st, tg_uop **idx,
                    tg_uop **valid)
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
	*idx = tg_sym_simplify(ls->ir, *idx);
	*valid = tg_sym_simplify(ls->ir, *valid);
	if (!*idx || !*valid)
		return tg_ir_status(ls->ir) ? tg_ir_status(ls->ir) : TG_ENOMEM;
	return TG_OK;
}

/* 1 when u is the constant true, 0 when constant false, -1 otherwise. */
static int const_bool(const tg_uop *u)
{
	tg_scalar v;

	if (!tg_uop_is_const(u, &v))
		return -1;
	return v.i != 0;
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

static int lower_node(lower_state *ls, const tg_ast *a, tg_uop **res)
{
	tg_ir *ir = ls->ir;
	tg_uop *s[3] = { NULL, NULL, NULL }, *idx, *valid, *u = NULL;
	int rc, cb;

	for (uint32_t i = 0; i < a->nsrc && i < 3; i++)
		s[i] = ls->val[a->src[i]->id];
	switch (a->kind) {
	case TG_AST_LOAD: {
		tg_uop *b = buf_of(ls, a->buf, a->dtype,
		                   (ls->p->outs >> a->buf) & 1u);
		if (!b)
			return tg_last_status();
		if ((rc = st_index(ls, a->st, &idx, &valid)))
			return rc;
		cb = const_bool(valid);
		if (cb == 0) {
			u = zero_of(ir, a->dtype);
		} else if (cb == 1) {
			tg_uop *src[2] = { b, idx };
			u = tg_uop_new(ir, TG_LOAD, a->dtype, src, 2, NULL);
		} else {
			tg_uop *src[4] = { b, idx, valid, zero_of(ir, a->dtype) };
			u = tg_uop_new(ir, TG_LOAD, a->dtype, src, 4, NULL);
		}
		break;
	}
	case TG_AST_CONST:
		u = tg_uop_const(ir, a->dtype, a->value);
		if (a->st) {
			if ((rc = st_index(ls, a->st, &idx, &valid)))
				return rc;
			cb = const_bool(valid);
			if (cb == 0)
				u = zero_of(ir, a->dtype);
			else if (cb < 0)
				u = tg_uop3(ir, TG_WHERE, a->dtype, valid, u,
				            zero_of(ir, a->dtype));
		}
		break;
	case TG_AST_ALU:
		u = tg_uop_alu(ir, a->op, s[0], a->nsrc > 1 ? s[1] : NULL,
		               a->nsrc > 2 ? s[2] : NULL);
		break;
	case TG_AST_CAST:
		u = tg_uop1(ir, TG_CAST, a->dtype, s[0]);
		break;
	case TG_AST_BITCAST:
		u = tg_uop1(ir, TG_BITCAST, a->dtype, s[0]);
		break;
	case TG_AST_REDUCE: {
		tg_uop *src[1 + TG_MAX_DIMS];
		tg_scalar init;
		tg_arg aa;
		if (a->op != TG_ADD && a->op != TG_MAX)
			return tg_error(TG_EUNSUPPORTED, "lower: REDUCE %s",
			                tg_op_name(a->op));
		if (ls->nranges == 0) {  /* only size-1 axes reduced */
			u = s[0];
			break;
		}
		if (a->op == TG_ADD)
			init.u = 0;
		else
			init = tg_dtype_min(a->dtype);
		src[0] = tg_uop_const(ir, a->dtype, init);
		for (size_t i = 0; i < ls->nranges; i++)
			src[1 + i] = ls->ranges[i];
		memset(&aa, 0, sizeof aa);
		aa.v.i = ls->nacc++;
		tg_uop *acc = tg_uop_new(ir, TG_DEFINE_ACC, a->dtype, src,
		                         1 + ls->nranges, &aa);
		u = tg_uop2(ir, TG_PHI, a->dtype, acc,
		            tg_uop_alu(ir, a->op, acc, s[0], NULL));
		break;
	}
	case TG_AST_STORE: {
		tg_uop *b = buf_of(ls, a->buf, a->dtype, 1);
		if (!b)
			return tg_last_status();
		if ((rc = st_index(ls, a->st, &idx, &valid)))
			return rc;
		tg_uop *src[3] = { b, idx, s[0] };
		u = tg_uop_new(ir, TG_STORE, TG_VOID, src, 3, NULL);
		break;
	}
	case TG_AST_SINK: {
		tg_uop **src = malloc((a->nsrc ? a->nsrc : 1) * sizeof *src);
		if (!src)
			return tg_error_oom("lower");
		for (uint32_t i = 0; i < a->nsrc; i++)
			src[i] = ls->val[a->src[i]->id];
		u = tg_uop_new(ir, TG_SINK, TG_VOID, src, a->nsrc, NULL);
		free(src);
		break;
	}
	default:
		return tg_error(TG_EINVAL, "lower: AST kind %d", a->kind);
	}
	if (!u)
		return tg_ir_status(ir) ? tg_ir_status(ir) : TG_ENOMEM;
	*res = u;
	return TG_OK;
}

int tg_lower(tg_ir *ir, const tg_ast *sink, const tg_kplan *p,
             tg_uop **out)
{
	lower_state ls;
	tg_ast **order = NULL;
	size_t n, i;
	uint32_t maxid = 0;
	int rc = TG_OK;

	memset(&ls, 0, sizeof ls);
	ls.ir = ir;
	ls.p = p;
	ls.zero = tg_sym_int(ir, 0);
	for (i = 0; i < p->ndim; i++)
		ls.axis_idx[i] = ls.zero;
	/* global axes: launch indices */
	if (p->nglobal > 0) {
		static const char *const gname[3] = { "gidx0", "gidx1", "gidx2" };
		size_t ng = p->nglobal < 3 ? p->nglobal : 3;
		tg_uop *sp[3];
		for (size_t g = 0; g < ng; g++) {
			tg_arg a;
			memset(&a, 0, sizeof a);
			a.name = gname[g];
			a.a = (int64_t)p->global[g];
			sp[g] = tg_uop0(ir, TG_SPECIAL, TG_INDEX, &a);
		}
		/* the last two global axes are gidx0 and gidx1; the rest
		 * come out of gidx2 by div/mod, last fastest */
		tg_uop *rest = NULL;
		int64_t div = 1;
		for (size_t k = 0; k < p->nglobal; k++) {
			size_t ax_i = p->nglobal - 1 - k;
			uint32_t ax = p->gaxes[ax_i];
			if (k < 2) {
				ls.axis_idx[ax] = sp[k];
				continue;
			}
			rest = sp[2];
			if (p->nglobal == 3) {
				ls.axis_idx[ax] = rest;
				continue;
			}
			tg_uop *q = div == 1 ? rest : tg_sym_idivi(ir, rest, div);
			ls.axis_idx[ax] = ax_i == 0 ? q
			                  : tg_sym_modi(ir, q, p->full[ax]);
			div *= p->full[ax];
		}
	}
	/* OPTS HOOK: upcasted/unrolled axes would be expanded here. */
	/* reduce axes: loops numbered outermost first */
	for (i = 0; i < p->nred; i++) {
		uint32_t ax = p->raxes[i];
		tg_arg a;
		memset(&a, 0, sizeof a);
		a.v.i = (int64_t)i;
		a.a = 1;
		tg_uop *src[2] = { tg_sym_int(ir, 0), tg_sym_int(ir, p->full[ax]) };
		ls.ranges[ls.nranges++] = ls.axis_idx[ax] =
			tg_uop_new(ir, TG_RANGE, TG_INDEX, src, 2, &a);
	}
	if (tg_ir_status(ir))
		return tg_ir_status(ir);
	/* a 0-size axis: nothing to compute; the plan dropped it, so the
	 * kernel is refused rather than run out of bounds */
	for (i = 0; i < p->ndim; i++)
		if (p->full[i] == 0)
			return tg_error(TG_EUNSUPPORTED,
			                "lower: empty kernel (0-size axis %zu)", i);
	if (!(order = tg_ast_toposort(sink, &n)))
		return TG_ENOMEM;
	for (i = 0; i < n; i++)
		if (order[i]->id > maxid)
			maxid = order[i]->id;
	ls.val = calloc((size_t)maxid + 1, sizeof *ls.val);
	if (!ls.val) {
		rc = tg_error_oom("lower");
		goto done;
	}
	for (i = 0; i < n && rc == TG_OK; i++)
		rc = lower_node(&ls, order[i], &ls.val[order[i]->id]);
	if (rc == TG_OK)
		*out = ls.val[sink->id];
done:
	free(ls.val);
	free(order);
	return rc;
}

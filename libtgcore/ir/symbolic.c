/*
 * symbolic.c - symbolic integer simplification as rewrite rules
 * (tinygrad's symbolic.py, done on IR nodes as its later uopgraph does).
 *
 * Canonical forms the rules keep, so that equal values tend to be one
 * node: a sum is a left-leaning chain of terms ordered by node id with
 * the constant last; a term is `base` or `base*k`; a product has its
 * constant last; constants are distributed over sums.  Every rule is
 * valid under C semantics (IDIV truncates, MOD has the dividend's sign)
 * and for the node's whole range of values (vmin..vmax).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

enum { X, Y, C1, C2, NCAP };

/* -------------------------------------------------------------- helpers */

static tg_uop *cint(tg_ir *ir, int64_t v)
{
	return tg_uop_const_int(ir, TG_INDEX, v);
}

static int is_idx(const tg_uop *u)
{
	return u->dtype == TG_INDEX;
}

static int64_t cval(const tg_uop *u)
{
	return u->arg.v.i;
}

/* ---------------------------------------------------------------- rules */

/* An ALU op on constants -> its value, unless undefined (x/0). */
static tg_uop *fold_const(tg_rw *rw, tg_uop **cap)
{
	tg_uop *u = rw->root;
	tg_scalar in[3], out;
	unsigned i, s = tg_type_scalar(u->op == TG_WHERE ? u->src[1]->dtype
	                                                   : u->src[0]->dtype);

	(void)cap;
	if (tg_type_count(u->dtype) != 1)
		return NULL;
	for (i = 0; i < u->nsrc; i++)
		in[i] = u->src[i]->arg.v;
	if (tg_exec_alu(u->op, s, in, &out))
		return NULL;
	return tg_uop_const(rw->ir, u->dtype, out);
}

/* Any symbolic op whose bounds leave one value -> that value. */
static tg_uop *fold_bounds(tg_rw *rw, tg_uop **cap)
{
	tg_uop *u = rw->root;
	unsigned s = tg_type_scalar(u->dtype);

	(void)cap;
	if (u->vmin != u->vmax || tg_type_count(u->dtype) != 1 ||
	    !(s == TG_BOOL || s == TG_INDEX))
		return NULL;
	return tg_uop_const_int(rw->ir, u->dtype, u->vmin);
}

/* Flattens, groups and orders a sum: (a+2)+(a*3+b) -> (a*4+b)+2. */
static tg_uop *canon_sum(tg_rw *rw, tg_uop **cap)
{
	tg_lin s;

	(void)cap;
	if (tg_lin_of(rw->root, 1, &s))
		return NULL;
	return tg_lin_build(rw->ir, &s);
}

/* Orders the factors of a product by id with the constant last, and
 * distributes a constant over a sum: (a+1)*4 -> a*4+4. */
static tg_uop *canon_mul(tg_rw *rw, tg_uop **cap)
{
	tg_uop *a = cap[X], *b = cap[Y];
	tg_lin s;

	if (a->op == TG_CONST && b->op != TG_CONST)
		return tg_uop_alu(rw->ir, TG_MUL, b, a, NULL);
	if (b->op != TG_CONST) {
		if (a->id > b->id)
			return tg_uop_alu(rw->ir, TG_MUL, b, a, NULL);
		return NULL;
	}
	if (cval(b) == 0)
		return b;
	if (cval(b) == 1)
		return a;
	if (a->op == TG_MUL && a->src[1]->op == TG_CONST) {
		int64_t k;

		if (__builtin_mul_overflow(cval(a->src[1]), cval(b), &k))
			return NULL;
		return tg_uop_alu(rw->ir, TG_MUL, a->src[0], cint(rw->ir, k),
		                  NULL);
	}
	if (a->op != TG_ADD || tg_lin_of(a, cval(b), &s))
		return NULL;
	return tg_lin_build(rw->ir, &s);
}

/* x // c, x % c and x < c for a constant c (symdiv.c). */
static tg_uop *idiv_const(tg_rw *rw, tg_uop **cap)
{
	int64_t c = cval(cap[C1]);

	if (c <= 0 || !is_idx(cap[X]))
		return NULL;
	return c == 1 ? cap[X] : tg_symdiv_idiv(rw->ir, cap[X], c);
}

static tg_uop *mod_const(tg_rw *rw, tg_uop **cap)
{
	int64_t c = cval(cap[C1]);

	if (c <= 0 || !is_idx(cap[X]))
		return NULL;
	return tg_symdiv_mod(rw->ir, cap[X], c);
}

static tg_uop *lt_const(tg_rw *rw, tg_uop **cap)
{
	return is_idx(cap[X]) ? tg_symdiv_lt(rw->ir, cap[X], cval(cap[C1]))
	                      : NULL;
}

/* x // c with c < 0 -> -(x // -c); x % c with c < 0 -> x % -c (C). */
static tg_uop *neg_divisor(tg_rw *rw, tg_uop **cap)
{
	int64_t c = cval(cap[C1]);

	if (c >= 0 || c == INT64_MIN || !is_idx(cap[X]))
		return NULL;
	if (rw->root->op == TG_MOD)
		return tg_sym_modi(rw->ir, cap[X], -c);
	return tg_sym_neg(rw->ir, tg_sym_idivi(rw->ir, cap[X], -c));
}

/* (x//c1)//c2 -> x//(c1*c2) for positive c1, c2. */
static tg_uop *idiv_idiv(tg_rw *rw, tg_uop **cap)
{
	int64_t c1 = cval(cap[C1]), c2 = cval(cap[C2]), c;

	if (c1 <= 0 || c2 <= 0 || __builtin_mul_overflow(c1, c2, &c))
		return NULL;
	return tg_sym_idivi(rw->ir, cap[X], c);
}

/* (x*c1)//c2 -> x*(c1/c2) when c2 | c1; -> x//(c2/c1) when c1 | c2. */
static tg_uop *mul_idiv(tg_rw *rw, tg_uop **cap)
{
	int64_t c1 = cval(cap[C1]), c2 = cval(cap[C2]);

	if (c2 <= 0 || c1 <= 0)
		return NULL;
	if (c1 % c2 == 0)
		return tg_sym_muli(rw->ir, cap[X], c1 / c2);
	if (c2 % c1 == 0)
		return tg_sym_idivi(rw->ir, cap[X], c2 / c1);
	return NULL;
}

/* (x%c1)%c2 -> x%c2 when c2 | c1 (C: both keep the dividend's sign). */
static tg_uop *mod_mod(tg_rw *rw, tg_uop **cap)
{
	int64_t c1 = cval(cap[C1]), c2 = cval(cap[C2]);

	if (c2 <= 0 || c1 <= 0 || c1 % c2)
		return NULL;
	return tg_sym_modi(rw->ir, cap[X], c2);
}

/* (x*c1)%c2 -> 0 when c2 | c1. */
static tg_uop *mul_mod(tg_rw *rw, tg_uop **cap)
{
	int64_t c1 = cval(cap[C1]), c2 = cval(cap[C2]);

	if (c2 == 0 || c1 % c2)
		return NULL;
	return cint(rw->ir, 0);
}

/* x % y with a variable y whose quotient x/y is one value q:
 * x - y*q (C's identity). */
static tg_uop *mod_fixed_quotient(tg_rw *rw, tg_uop **cap)
{
	tg_uop *q = tg_uop_alu(rw->ir, TG_IDIV, cap[X], cap[Y], NULL);

	if (!q || q->vmin != q->vmax || cap[Y]->op == TG_CONST)
		return NULL;
	return tg_sym_sub(rw->ir, cap[X], tg_sym_muli(rw->ir, cap[Y],
	                                               q->vmin));
}

/* x//c < k -> x < k*c when x >= 0 and k >= 1 (then floor == trunc). */
static tg_uop *idiv_lt(tg_rw *rw, tg_uop **cap)
{
	int64_t c = cval(cap[C1]), k = cval(cap[C2]), kc;

	if (c <= 0 || k < 1 || cap[X]->vmin < 0 ||
	    __builtin_mul_overflow(k, c, &kc))
		return NULL;
	return tg_sym_lti(rw->ir, cap[X], kc);
}

/* -x < -y -> y < x. */
static tg_uop *lt_negated(tg_rw *rw, tg_uop **cap)
{
	return tg_sym_lt(rw->ir, cap[Y], cap[X]);
}

/* max(max(x, c1), c2) -> max(x, max(c1, c2)). */
static tg_uop *max_max(tg_rw *rw, tg_uop **cap)
{
	int64_t c1 = cval(cap[C1]), c2 = cval(cap[C2]);

	return tg_sym_max(rw->ir, cap[X], cint(rw->ir, c1 > c2 ? c1 : c2));
}

/* Commutative bool ops keep their operands in id order, as sums do. */
static tg_uop *canon_order(tg_rw *rw, tg_uop **cap)
{
	if (cap[X]->id <= cap[Y]->id)
		return NULL;
	return tg_uop_alu(rw->ir, rw->root->op, cap[Y], cap[X], NULL);
}

static tg_uop *bool_false(tg_rw *rw, tg_uop **cap)
{
	(void)cap;
	return tg_uop_const_int(rw->ir, TG_BOOL, 0);
}

static tg_uop *one(tg_rw *rw, tg_uop **cap)
{
	(void)cap;
	return cint(rw->ir, 1);
}

static tg_uop *zero(tg_rw *rw, tg_uop **cap)
{
	(void)cap;
	return cint(rw->ir, 0);
}

/* max(x, y) -> x when x >= y everywhere; max(x, x) -> x. */
static tg_uop *max_bounds(tg_rw *rw, tg_uop **cap)
{
	(void)rw;
	if (cap[X] == cap[Y] || cap[X]->vmin >= cap[Y]->vmax)
		return cap[X];
	return NULL;
}

/* -x -> x*-1, so that sums group negated terms with the others. */
static tg_uop *neg_mul(tg_rw *rw, tg_uop **cap)
{
	return tg_uop_alu(rw->ir, TG_MUL, cap[X], cint(rw->ir, -1), NULL);
}

static tg_uop *pick_x(tg_rw *rw, tg_uop **cap)
{
	(void)rw;
	return cap[X];
}

/* where(c, x, y) with a constant c -> x or y. */
static tg_uop *where_const(tg_rw *rw, tg_uop **cap)
{
	(void)rw;
	return cval(cap[C1]) ? cap[X] : cap[Y];
}

/* The ops symbolic math uses: bounds may decide them. */
#define SYM_OPS TG_ADD, TG_MUL, TG_IDIV, TG_MOD, TG_MAX, TG_CMPLT, \
	TG_CMPNE, TG_AND, TG_OR, TG_NEG, TG_WHERE

#define IDX TG_DTM(TG_INDEX)
#define BOOL TG_DTM(TG_BOOL)

static const tg_rule rules[] = {
	{ "op(c...) -> c",
	  &(const tg_pat){ .ops = P_OPS(TG_ALU_OPS), .nops = P_NOPS(TG_ALU_OPS),
	                   .srcmode = TG_PSRC_REPEAT,
	                   .src = (const tg_pat *const[]){ P_CONST(P_NOCAP) },
	                   .nsrc = 1 },
	  fold_const },
	{ "x -> c when vmin == vmax",
	  &(const tg_pat){ .ops = P_OPS(SYM_OPS), .nops = P_NOPS(SYM_OPS) },
	  fold_bounds },
	{ "x+0 -> x", P_ALUT_C(P_NOCAP, TG_ADD, IDX, P_ANY(X), P_CONSTV(C1, 0)),
	  pick_x },
	{ "sum -> canonical sum", P_ALUT(P_NOCAP, TG_ADD, IDX, P_ANY(X),
	                                 P_ANY(Y)), canon_sum },
	{ "product -> canonical product",
	  P_ALUT(P_NOCAP, TG_MUL, IDX, P_ANY(X), P_ANY(Y)), canon_mul },
	{ "-x -> x*-1", P_SRC(P_NOCAP, TG_NEG, P_ANYT(X, IDX)), neg_mul },
	{ "x//c, c<0 -> -(x//-c)", P_ALU(P_NOCAP, TG_IDIV, P_ANY(X),
	                                 P_CONST(C1)), neg_divisor },
	{ "x%c, c<0 -> x%-c", P_ALU(P_NOCAP, TG_MOD, P_ANY(X), P_CONST(C1)),
	  neg_divisor },
	{ "(x//c1)//c2 -> x//(c1*c2)",
	  P_ALU(P_NOCAP, TG_IDIV, P_ALU(P_NOCAP, TG_IDIV, P_ANYT(X, IDX),
	                                P_CONST(C1)), P_CONST(C2)),
	  idiv_idiv },
	{ "(x*c1)//c2 -> x*(c1/c2) | x//(c2/c1)",
	  P_ALU(P_NOCAP, TG_IDIV, P_ALU(P_NOCAP, TG_MUL, P_ANYT(X, IDX),
	                                P_CONST(C1)), P_CONST(C2)),
	  mul_idiv },
	{ "x//c -> q + r//c | y//(c/g)",
	  P_ALU(P_NOCAP, TG_IDIV, P_ANY(X), P_CONST(C1)), idiv_const },
	{ "(x%c1)%c2 -> x%c2",
	  P_ALU(P_NOCAP, TG_MOD, P_ALU(P_NOCAP, TG_MOD, P_ANYT(X, IDX),
	                               P_CONST(C1)), P_CONST(C2)),
	  mod_mod },
	{ "(x*c1)%c2 -> 0",
	  P_ALU(P_NOCAP, TG_MOD, P_ALU(P_NOCAP, TG_MUL, P_ANYT(X, IDX),
	                               P_CONST(C1)), P_CONST(C2)),
	  mul_mod },
	{ "x%c -> r%c | g*(y%(c/g))+k",
	  P_ALU(P_NOCAP, TG_MOD, P_ANY(X), P_CONST(C1)), mod_const },
	{ "x//x -> 1", P_ALU(P_NOCAP, TG_IDIV, P_ANYT(X, IDX), P_ANY(X)), one },
	{ "x%x -> 0", P_ALU(P_NOCAP, TG_MOD, P_ANYT(X, IDX), P_ANY(X)), zero },
	{ "x%y -> x-y*q when x//y == q",
	  P_ALU(P_NOCAP, TG_MOD, P_ANYT(X, IDX), P_ANY(Y)),
	  mod_fixed_quotient },
	{ "x<x -> false", P_ALU(P_NOCAP, TG_CMPLT, P_ANYT(X, IDX), P_ANY(X)),
	  bool_false },
	{ "x!=x -> false", P_ALU(P_NOCAP, TG_CMPNE, P_ANYT(X, IDX), P_ANY(X)),
	  bool_false },
	{ "x//c<k -> x<k*c",
	  P_ALU(P_NOCAP, TG_CMPLT, P_ALU(P_NOCAP, TG_IDIV, P_ANYT(X, IDX),
	                                 P_CONST(C1)), P_CONST(C2)),
	  idiv_lt },
	{ "sum<c -> sum'<c'", P_ALU(P_NOCAP, TG_CMPLT, P_ANYT(X, IDX),
	                            P_CONST(C1)), lt_const },
	{ "-x<-y -> y<x",
	  P_ALU(P_NOCAP, TG_CMPLT,
	        P_ALU(P_NOCAP, TG_MUL, P_ANYT(X, IDX), P_CONSTV(P_NOCAP, -1)),
	        P_ALU(P_NOCAP, TG_MUL, P_ANYT(Y, IDX), P_CONSTV(P_NOCAP, -1))),
	  lt_negated },
	{ "max(max(x,c1),c2) -> max(x,max(c1,c2))",
	  P_ALU(P_NOCAP, TG_MAX, P_ALU(P_NOCAP, TG_MAX, P_ANYT(X, IDX),
	                               P_CONST(C1)), P_CONST(C2)),
	  max_max },
	{ "max(x,y) -> x when x >= y",
	  P_ALU_C(P_NOCAP, TG_MAX, P_ANYT(X, IDX), P_ANY(Y)), max_bounds },
	{ "x&x -> x", P_ALUT(P_NOCAP, TG_AND, BOOL, P_ANY(X), P_ANY(X)),
	  pick_x },
	{ "a&b -> b&a in id order",
	  P_ALUT(P_NOCAP, TG_AND, BOOL, P_ANY(X), P_ANY(Y)), canon_order },
	{ "a|b -> b|a in id order",
	  P_ALUT(P_NOCAP, TG_OR, BOOL, P_ANY(X), P_ANY(Y)), canon_order },
	{ "x&true -> x", P_ALUT_C(P_NOCAP, TG_AND, BOOL, P_ANY(X),
	                          P_CONSTV(C1, 1)), pick_x },
	{ "x|x -> x", P_ALUT(P_NOCAP, TG_OR, BOOL, P_ANY(X), P_ANY(X)),
	  pick_x },
	{ "x|false -> x", P_ALUT_C(P_NOCAP, TG_OR, BOOL, P_ANY(X),
	                           P_CONSTV(C1, 0)), pick_x },
	{ "where(c, x, y) -> x | y",
	  P_SRC(P_NOCAP, TG_WHERE, P_CONST(C1), P_ANY(X), P_ANY(Y)),
	  where_const },
	{ "where(c, x, x) -> x",
	  P_SRC(P_NOCAP, TG_WHERE, P_ANY(C1), P_ANY(X), P_ANY(X)), pick_x },
};

tg_ruleset tg_symbolic_rules = TG_RULESET("symbolic", rules, NULL);

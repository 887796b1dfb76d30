/*
 * codegen/collapse.c - loop collapse, run by tg_codegen after the
 * accumulators are made (reduce.c).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

/*
 * Loop collapse (tinygrad's loop_collapse and arange folding of
 * uopgraph.py): a reduce that adds, per iteration of its loop r over
 * [0, N), a value v that does not depend on the loop, gated by a
 * conjunction of conditions each either independent of the loop or
 * linear in r (base + m*r < 0, or its negation, m a nonzero integer),
 * adds v * count, where count is the number of r the gate holds for:
 * max(0, min(N, hi...) - max(0, lo...)).  This makes arange (a cumsum:
 * a REDUCE ADD of a masked CONST) and one-hot style sums O(1) per
 * output element.  Done on the lowered IR as a rule on PHI(acc, body):
 * body is acc + t0 + t1 + ... (one term per unrolled lane, each indexed
 * outer*amt + digit, so an unrolled loop collapses term by term); the
 * terms that collapse leave the loop, the others stay in it, and when
 * none stays the accumulator and its loop disappear.  With several
 * loops the count is the product of per-loop counts (a loop no
 * condition mentions counts its extent).  MAX reduces are untouched.
 */

typedef struct lc_ctx {
	uint64_t *mask;  /* by id: the loops (RANGE arg bits) a node uses */
	uint8_t *known;
	size_t cap;
} lc_ctx;

static uint64_t range_bit(const tg_uop *r)
{
	int64_t n = r->arg.v.i;

	return 1ull << (n >= 0 && n < 63 ? n : 63);
}

/* The loops u depends on (conservative: loop numbers above 62 share a
 * bit).  Memoized by id; ~0 on OOM (depends on everything). */
static uint64_t loops_of(lc_ctx *c, const tg_uop *u)
{
	uint64_t m = 0;

	if (u->id >= c->cap) {
		size_t n = c->cap ? c->cap : 256;
		while (n <= u->id)
			n *= 2;
		uint64_t *mk = realloc(c->mask, n * sizeof *mk);
		if (mk)
			c->mask = mk;
		uint8_t *kn = mk ? realloc(c->known, n) : NULL;
		if (!kn)
			return ~0ull;
		memset(kn + c->cap, 0, n - c->cap);
		c->known = kn;
		c->cap = n;
	}
	if (c->known[u->id])
		return c->mask[u->id];
	if (u->op == TG_RANGE)
		m = range_bit(u);
	for (uint32_t i = 0; i < u->nsrc; i++)
		m |= loops_of(c, u->src[i]);
	c->mask[u->id] = m;
	c->known[u->id] = 1;
	return m;
}

/* What a gate says about the loops, per loop of the accumulator: the
 * lower and upper bounds of r (lo <= r < hi, each >= 0), and the
 * conditions that do not depend on any of them. */
#define LC_MAX_BOUNDS 32
typedef struct lc_gate {
	size_t nr;
	tg_uop *r[TG_MAX_DIMS];
	uint64_t loops;                 /* their bits */
	tg_uop *lo[TG_MAX_DIMS][LC_MAX_BOUNDS];
	tg_uop *hi[TG_MAX_DIMS][LC_MAX_BOUNDS];
	size_t nlo[TG_MAX_DIMS], nhi[TG_MAX_DIMS];
	tg_uop *indep;                  /* AND of the others, or NULL */
} lc_gate;

static int is_true(const tg_uop *u)
{
	return u->op == TG_CONST && u->dtype == TG_BOOL && u->arg.v.i;
}

static int is_false(const tg_uop *u)
{
	return u->op == TG_CONST && u->dtype == TG_BOOL && !u->arg.v.i;
}

/* Adds the terms of the linear sum of x (times mul) to per-loop
 * coefficients k[] and the rest to *base; -1 when x is not linear in
 * the loops (a loop inside a term's base, or too many terms). */
static int lc_split(tg_ir *ir, lc_ctx *c, lc_gate *g, tg_uop *x, int64_t mul,
                    int64_t *k, tg_uop **base)
{
	tg_lin s;

	if (tg_lin_of(x, mul, &s))
		return -1;
	for (size_t i = 0; i < s.n; i++) {
		tg_uop *b = s.t[i].base;
		size_t j;

		for (j = 0; j < g->nr && g->r[j] != b; j++)
			;
		if (j < g->nr) {
			if (__builtin_add_overflow(k[j], s.t[i].k, &k[j]))
				return -1;
			continue;
		}
		if (loops_of(c, b) & g->loops)
			return -1;
		*base = tg_sym_add(ir, *base, tg_sym_muli(ir, b, s.t[i].k));
	}
	*base = tg_sym_addi(ir, *base, s.k);
	return *base ? 0 : -1;
}

/* A condition x < y (pos) or !(x < y) on the loops into g. */
static int lc_cmplt(tg_ir *ir, lc_ctx *c, lc_gate *g, tg_uop *x, tg_uop *y,
                    int pos)
{
	int64_t k[TG_MAX_DIMS] = { 0 }, m, am;
	tg_uop *base = tg_sym_int(ir, 0), *z, *b;
	size_t j, which = g->nr;

	if (x->dtype != TG_INDEX || y->dtype != TG_INDEX ||
	    lc_split(ir, c, g, x, 1, k, &base) ||
	    lc_split(ir, c, g, y, -1, k, &base))
		return -1;
	for (j = 0; j < g->nr; j++) {
		if (!k[j])
			continue;
		if (which < g->nr)
			return -1;  /* two loops in one condition */
		which = j;
	}
	if (which == g->nr)
		return -1;  /* the loops cancel: leave it alone */
	/* base + m*r < 0 (pos) or >= 0 */
	m = k[which];
	if (m == INT64_MIN)
		return -1;
	am = m < 0 ? -m : m;
	if (m > 0)  /* r < ceil(-base/m), or r >= it */
		z = tg_sym_addi(ir, tg_sym_neg(ir, base), m - 1);
	else        /* r >= floor(base/am) + 1, or r < it */
		z = tg_sym_addi(ir, base, am);
	/* floor(z/am) clamped at 0: z clamped first, so C's truncating
	 * division floors */
	b = tg_sym_max(ir, z, tg_sym_int(ir, 0));
	if (am != 1)
		b = tg_sym_idivi(ir, b, am);
	if (!b)
		return -1;
	if ((m > 0) == !!pos) {
		if (g->nhi[which] == LC_MAX_BOUNDS)
			return -1;
		g->hi[which][g->nhi[which]++] = b;
	} else {
		if (g->nlo[which] == LC_MAX_BOUNDS)
			return -1;
		g->lo[which][g->nlo[which]++] = b;
	}
	return 0;
}

/* The condition u (pos) or its negation into g; -1 when it is not a
 * conjunction of conditions linear in one loop or independent of the
 * loops. */
static int lc_cond(tg_ir *ir, lc_ctx *c, lc_gate *g, tg_uop *u, int pos)
{
	if (u->dtype != TG_BOOL)
		return -1;
	if (!(loops_of(c, u) & g->loops)) {
		tg_uop *v = pos ? u : tg_uop2(ir, TG_CMPNE, TG_BOOL, u,
		                              tg_uop_const_int(ir, TG_BOOL, 1));
		g->indep = g->indep ? tg_uop2(ir, TG_AND, TG_BOOL, g->indep, v)
		                    : v;
		return g->indep ? 0 : -1;
	}
	switch (u->op) {
	case TG_CMPNE:  /* x != true is !x; x != false is x */
		for (int i = 0; i < 2; i++) {
			tg_uop *o = u->src[1 - i];
			if (is_true(o))
				return lc_cond(ir, c, g, u->src[i], !pos);
			if (is_false(o))
				return lc_cond(ir, c, g, u->src[i], pos);
		}
		return -1;
	case TG_AND:
		if (!pos)
			return -1;  /* !(a & b) is a disjunction */
		return lc_cond(ir, c, g, u->src[0], 1) ||
		       lc_cond(ir, c, g, u->src[1], 1) ? -1 : 0;
	case TG_CMPLT:
		return lc_cmplt(ir, c, g, u->src[0], u->src[1], pos);
	default:
		return -1;
	}
}

/* How many points of the accumulator's loops the gate holds for. */
static tg_uop *lc_count(tg_ir *ir, const lc_gate *g)
{
	tg_uop *count = tg_sym_int(ir, 1), *zero = tg_sym_int(ir, 0);

	for (size_t j = 0; j < g->nr; j++) {
		tg_uop *n = g->r[j]->src[1], *lo = zero, *hi = n;
		for (size_t i = 0; i < g->nlo[j]; i++)
			lo = tg_sym_max(ir, lo, g->lo[j][i]);
		for (size_t i = 0; i < g->nhi[j]; i++)
			hi = tg_sym_min(ir, hi, g->hi[j][i]);
		count = tg_sym_mul(ir, count,
		                   tg_sym_max(ir, tg_sym_sub(ir, hi, lo), zero));
	}
	if (g->indep && count)
		count = tg_sym_simplify(ir, tg_uop3(ir, TG_WHERE, TG_INDEX,
		                                    g->indep, count, zero));
	return count;
}

/* The sum over the accumulator's loops of one term of its body, or
 * NULL when the term depends on the loops other than through its
 * gate. */
static tg_uop *lc_term(tg_ir *ir, lc_ctx *c, const lc_gate *loops,
                       tg_uop *t)
{
	lc_gate g = *loops;
	tg_uop *val = NULL, *gate = NULL, *count, *load_gate = NULL, *cnt, *sum;
	tg_type dt = t->dtype;
	tg_scalar v;

	if (t->op == TG_WHERE && tg_uop_is_const_int(t->src[2], 0)) {
		gate = t->src[0];
		val = t->src[1];
	} else if (t->op == TG_WHERE && tg_uop_is_const_int(t->src[1], 0)) {
		gate = tg_uop2(ir, TG_CMPNE, TG_BOOL, t->src[0],
		               tg_uop_const_int(ir, TG_BOOL, 1));
		val = t->src[2];
	} else if (t->op == TG_CAST && t->src[0]->dtype == TG_BOOL) {
		gate = t->src[0];
		val = tg_uop_const_int(ir, dt, 1);
	} else if (t->op == TG_LOAD && t->nsrc == 4 &&
	           tg_uop_is_const_int(t->src[3], 0) &&
	           !(loops_of(c, t->src[1]) & g.loops)) {
		/* an element that does not move with the loop, read while
		 * the loop's mask holds: read once when it holds anywhere */
		gate = t->src[2];
		load_gate = t;
	} else if (!(loops_of(c, t) & g.loops)) {
		val = t;  /* the same value every iteration */
	} else {
		return NULL;
	}
	if (!gate && !load_gate)
		gate = tg_uop_const_int(ir, TG_BOOL, 1);
	if (!gate || (val && (loops_of(c, val) & g.loops)) ||
	    lc_cond(ir, c, &g, gate, 1) || !(count = lc_count(ir, &g)))
		return NULL;
	if (load_gate) {
		tg_uop *src[4] = { t->src[0], t->src[1],
		                   tg_sym_lt(ir, tg_sym_int(ir, 0), count),
		                   t->src[3] };
		val = tg_uop_new(ir, TG_LOAD, dt, src, 4, NULL);
	}
	if (tg_uop_is_const_int(count, 1))
		return val;
	cnt = tg_uop1(ir, TG_CAST, dt, count);
	if (tg_uop_is_const_int(val, 1))
		return cnt;
	sum = tg_uop_alu(ir, TG_MUL, val, cnt, NULL);
	/* a float that may be inf or NaN times a count of 0 is NaN where
	 * the loop added nothing */
	if (tg_scalar_is_float(tg_type_scalar(dt)) && !load_gate &&
	    tg_uop_vmin(count) <= 0 &&
	    !(tg_uop_is_const(val, &v) && isfinite(v.f)))
		sum = tg_uop3(ir, TG_WHERE, dt,
		              tg_sym_lt(ir, tg_sym_int(ir, 0), count), sum,
		              tg_uop_const_int(ir, dt, 0));
	return sum;
}

/* PHI(acc, acc + t0 + t1 + ...) -> PHI(acc, acc + the terms that stay
 * in the loop) + the closed forms of the others. */
static tg_uop *loop_collapse(tg_rw *rw, tg_uop **cap)
{
	tg_ir *ir = rw->ir;
	lc_ctx *c = rw->ctx;
	tg_uop *acc = cap[0], *u = cap[1], *terms[TG_MAX_EXPAND + 1];
	tg_uop *keep[TG_MAX_EXPAND + 1], *done[TG_MAX_EXPAND + 1], *res;
	size_t nt = 0, nkeep = 0, ndone = 0;
	unsigned s = tg_type_scalar(acc->dtype);
	lc_gate g;

	if (tg_type_count(acc->dtype) != 1 || s == TG_BOOL ||
	    !(tg_scalar_is_int(s) || tg_scalar_is_float(s)))
		return NULL;
	memset(&g, 0, sizeof g);
	for (uint32_t i = 1; i < acc->nsrc; i++) {
		tg_uop *r = acc->src[i];
		if (r->op != TG_RANGE || r->nsrc != 2 ||
		    !tg_uop_is_const_int(r->src[0], 0) || g.nr == TG_MAX_DIMS)
			return NULL;
		g.r[g.nr++] = r;
		g.loops |= range_bit(r);
	}
	if (!g.nr)
		return NULL;
	/* the body: a left chain of ADDs from the accumulator */
	while (u != acc) {
		if (u->op != TG_ADD || u->dtype != acc->dtype ||
		    nt == TG_ARRAY_LEN(terms))
			return NULL;
		terms[nt++] = u->src[1];
		u = u->src[0];
	}
	/* in loop order: the chain was built from the first lane */
	for (size_t i = nt; i-- > 0;) {
		tg_uop *d = lc_term(ir, c, &g, terms[i]);
		if (tg_ir_status(ir))
			return NULL;
		if (d)
			done[ndone++] = d;
		else
			keep[nkeep++] = terms[i];
	}
	if (!ndone)
		return NULL;
	if (nkeep) {
		u = acc;
		for (size_t i = 0; i < nkeep; i++)
			u = tg_uop_alu(ir, TG_ADD, u, keep[i], NULL);
		res = tg_uop2(ir, TG_PHI, acc->dtype, acc, u);
	} else {
		res = acc->src[0];  /* the initial value */
	}
	for (size_t i = 0; i < ndone; i++)
		res = tg_uop_is_const_int(res, 0) && i == 0 && !nkeep
		      ? done[i] : tg_uop_alu(ir, TG_ADD, res, done[i], NULL);
	return res;
}

static const tg_rule collapse_table[] = {
	{ "acc + where(lo <= r < hi, v, 0) -> acc + v*count",
	  P_SRC(P_NOCAP, TG_PHI, P_OP(0, TG_DEFINE_ACC), P_ANY(1)),
	  loop_collapse },
};
static tg_ruleset collapse_rules =
	TG_RULESET("loop collapse", collapse_table, NULL);

tg_uop *tg_collapse_loops(tg_ir *ir, tg_uop *sink)
{
	lc_ctx c;
	tg_uop *r;

	memset(&c, 0, sizeof c);
	r = tg_rewrite(ir, sink, &collapse_rules, &c);
	free(c.mask);
	free(c.known);
	return r;
}

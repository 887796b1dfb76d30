/*
 * linear.c - index expressions as linear sums: flattening an ADD tree
 * into terms base*k plus a constant, grouping like terms, and building
 * the canonical chain back.  The symbolic rules work on this form.
 */
#include "config.h"

#include <stdlib.h>

#include "ir/ir.h"

#define CVAL(u) ((u)->arg.v.i)

static int add_k(int64_t *acc, int64_t v)
{
	return __builtin_add_overflow(*acc, v, acc) ? -1 : 0;
}

/* Adds one leaf: a constant, base*k, or base*1. */
static int add_leaf(tg_lin *s, tg_uop *u, int64_t mul)
{
	int64_t k = 1;

	if (u->op == TG_CONST || u->vmin == u->vmax) { /* as fold_bounds */
		if (__builtin_mul_overflow(u->vmin, mul, &k))
			return -1;
		return add_k(&s->k, k);
	}
	if (u->op == TG_MUL && u->src[1]->op == TG_CONST) {
		k = CVAL(u->src[1]);
		u = u->src[0];
	}
	if (s->n == TG_LIN_MAX || __builtin_mul_overflow(k, mul, &k))
		return -1;
	s->t[s->n++] = (tg_term){ u, k };
	return 0;
}

/* Flattens the ADD tree under u (index type) into s, times `mul`.
 * -1 when it has too many terms or a coefficient overflows. */
static int flatten(tg_uop *u, int64_t mul, tg_lin *s)
{
	tg_uop *stack[TG_LIN_MAX];
	size_t n = 0;

	stack[n++] = u;
	while (n) {
		u = stack[--n];
		if (u->op == TG_ADD && u->dtype == TG_INDEX) {
			if (n + 2 > TG_LIN_MAX)
				return -1;
			stack[n++] = u->src[1];
			stack[n++] = u->src[0];
		} else if (add_leaf(s, u, mul)) {
			return -1;
		}
	}
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const tg_term *x = a, *y = b;

	return (x->base->id > y->base->id) - (x->base->id < y->base->id);
}

/* x//c*(m*c) + x%c*m -> x*m: C's identity x == c*(x/c) + x%c.  Merges
 * one such pair; 1 when it did. */
static int merge_divmod(tg_lin *s)
{
	size_t i, j;

	for (i = 0; i < s->n; i++) {
		tg_uop *d = s->t[i].base;
		int64_t c;

		if (d->op != TG_IDIV || d->src[1]->op != TG_CONST)
			continue;
		c = CVAL(d->src[1]);
		for (j = 0; c > 0 && j < s->n; j++) {
			tg_uop *m = s->t[j].base;

			if (m->op == TG_MOD && m->src[0] == d->src[0] &&
			    m->src[1] == d->src[1] && s->t[i].k % c == 0 &&
			    s->t[i].k / c == s->t[j].k) {
				s->t[i] = (tg_term){ d->src[0], s->t[j].k };
				s->t[j].k = 0;
				return 1;
			}
		}
	}
	return 0;
}

/* Orders the terms by base id, adds up like terms, drops zeros. */
static int group(tg_lin *s)
{
	size_t i, n;

	do {
		qsort(s->t, s->n, sizeof *s->t, by_id);
		for (i = 0, n = 0; i < s->n; i++) {
			if (n && s->t[n - 1].base == s->t[i].base) {
				if (add_k(&s->t[n - 1].k, s->t[i].k))
					return -1;
			} else {
				s->t[n++] = s->t[i];
			}
		}
		s->n = n;
		for (i = 0, n = 0; i < s->n; i++) {
			if (s->t[i].k)
				s->t[n++] = s->t[i];
		}
		s->n = n;
	} while (merge_divmod(s));
	return 0;
}

static tg_uop *build_term(tg_ir *ir, const tg_term *t)
{
	if (t->k == 1)
		return t->base;
	return tg_uop_alu(ir, TG_MUL, t->base,
	                  tg_uop_const_int(ir, TG_INDEX, t->k), NULL);
}

/* The canonical chain ((t0 + t1) + t2) + k, built without simplifying. */
tg_uop *tg_lin_build(tg_ir *ir, const tg_lin *s)
{
	tg_uop *acc = NULL;
	size_t i;

	for (i = 0; i < s->n; i++) {
		tg_uop *t = build_term(ir, &s->t[i]);

		acc = acc ? tg_uop_alu(ir, TG_ADD, acc, t, NULL) : t;
	}
	if (!acc)
		return tg_uop_const_int(ir, TG_INDEX, s->k);
	if (s->k)
		acc = tg_uop_alu(ir, TG_ADD, acc,
		                 tg_uop_const_int(ir, TG_INDEX, s->k), NULL);
	return acc;
}

int tg_lin_of(tg_uop *u, int64_t mul, tg_lin *s)
{
	s->n = 0;
	s->k = 0;
	return flatten(u, mul, s) || group(s) ? -1 : 0;
}

/* The range of the sum from its terms' bounds; -1 on overflow. */
int tg_lin_bounds(const tg_lin *s, int64_t *lo, int64_t *hi)
{
	__int128 l = s->k, h = s->k, a, b;
	size_t i;

	for (i = 0; i < s->n; i++) {
		a = (__int128)s->t[i].k * s->t[i].base->vmin;
		b = (__int128)s->t[i].k * s->t[i].base->vmax;
		l += a < b ? a : b;
		h += a < b ? b : a;
	}
	if (l < INT64_MIN || h > INT64_MAX)
		return -1;
	*lo = (int64_t)l;
	*hi = (int64_t)h;
	return 0;
}

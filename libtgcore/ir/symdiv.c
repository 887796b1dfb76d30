/*
 * symdiv.c - the symbolic rules for division, modulo and comparison by a
 * constant (tinygrad's symbolic div/mod folding and its "symbolic 2.0"
 * lt rules).  They work on the linear form of the operand (linear.c).
 *
 * IR division is C's: it truncates toward zero.  Rules that reason with
 * floor division (splitting a sum into c*q + r) therefore only fire when
 * the operand is never negative, where the two agree; rules that are
 * exact (every coefficient divisible) fire for any sign.
 */
#include "config.h"

#include "ir/ir.h"

typedef __int128 wide;

static int64_t gcd(int64_t a, int64_t b)
{
	uint64_t x = a < 0 ? -(uint64_t)a : (uint64_t)a;
	uint64_t y = b < 0 ? -(uint64_t)b : (uint64_t)b, t;

	while (y) {
		t = x % y;
		x = y;
		y = t;
	}
	return x > INT64_MAX ? 1 : (int64_t)x;
}

/* floor(a/b) and ceil(a/b) for b > 0. */
static int64_t fdiv(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && a < 0);
}

static int64_t cdiv(int64_t a, int64_t b)
{
	return a / b + (a % b != 0 && a > 0);
}

/* gcd of every coefficient, and of the constant when with_k. */
static int64_t lin_gcd(const tg_lin *s, int with_k)
{
	int64_t g = with_k ? s->k : 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		g = gcd(g, s->t[i].k);
	return g;
}

/* Divides every coefficient and the constant by g (they divide). */
static void scale_down(tg_lin *s, int64_t g)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		s->t[i].k /= g;
	s->k /= g;
}

static void push(tg_lin *s, tg_uop *base, int64_t k)
{
	s->t[s->n++] = (tg_term){ base, k };
}

/* s == g*y + small: y takes the terms g divides (over g) and floor(k/g),
 * small the other terms and k mod g.  With whole == 0 every term is
 * split instead: y gets floor(k_i/g), small k_i mod g. */
static void split_by(const tg_lin *s, int64_t g, int whole, tg_lin *y,
                     tg_lin *small)
{
	size_t i;

	y->n = small->n = 0;
	for (i = 0; i < s->n; i++) {
		int64_t k = s->t[i].k, q = fdiv(k, g);

		if (whole && q * g != k) {
			push(small, s->t[i].base, k);
			continue;
		}
		if (q)
			push(y, s->t[i].base, q);
		if (k - q * g)
			push(small, s->t[i].base, k - q * g);
	}
	y->k = fdiv(s->k, g);
	small->k = s->k - y->k * g;
}

static int is_zero(const tg_lin *s)
{
	return !s->n && !s->k;
}

/* The largest g dividing c (or any g when c is 0) such that s == g*y +
 * small with small always in [0, g); 0 when none.  The candidates are
 * the coefficients' gcds with c. */
static int64_t find_small(const tg_lin *s, int64_t c, tg_lin *y,
                          tg_lin *small)
{
	int64_t best = 0, g, lo, hi;
	tg_lin ty, ts;
	size_t i;

	for (i = 0; i <= s->n; i++) {
		g = i < s->n ? s->t[i].k : lin_gcd(s, 0);
		g = c ? gcd(g, c) : (g < 0 ? -g : g);
		if (g <= best || g <= 1)
			continue;
		split_by(s, g, 1, &ty, &ts);
		if (tg_lin_bounds(&ts, &lo, &hi) || lo < 0 || hi >= g)
			continue;
		best = g;
		*y = ty;
		*small = ts;
	}
	return best;
}

/* x // c == q + r // c when x == c*q + r, x >= 0 and r >= 0 (floor and
 * truncation agree there).  Only whole terms move, so nothing grows. */
static tg_uop *idiv_split(tg_ir *ir, const tg_lin *s, int64_t c)
{
	tg_lin q, r;
	int64_t lo, hi;

	split_by(s, c, 1, &q, &r);
	if (!is_zero(&q) && !tg_lin_bounds(&r, &lo, &hi) && lo >= 0)
		return tg_sym_add(ir, tg_lin_build(ir, &q),
		                  tg_sym_idivi(ir, tg_lin_build(ir, &r), c));
	split_by(s, c, 0, &q, &r);
	if (!tg_lin_bounds(&r, &lo, &hi) && lo >= 0 && hi < c)
		return tg_lin_build(ir, &q);
	return NULL;
}

tg_uop *tg_symdiv_idiv(tg_ir *ir, tg_uop *x, int64_t c)
{
	tg_lin s, y, small;
	int64_t g;
	tg_uop *r;

	if (tg_lin_of(x, 1, &s))
		return NULL;
	if (lin_gcd(&s, 1) % c == 0) {        /* exact for any sign */
		scale_down(&s, c);
		return tg_lin_build(ir, &s);
	}
	if ((g = gcd(lin_gcd(&s, 1), c)) > 1) { /* (g*y)/(g*c') == y/c' */
		scale_down(&s, g);
		return tg_sym_idivi(ir, tg_lin_build(ir, &s), c / g);
	}
	if (x->vmin < 0)
		return NULL;
	if ((r = idiv_split(ir, &s, c)))
		return r;
	if ((g = find_small(&s, c, &y, &small)))  /* (g*y + s)/c, s < g */
		return tg_sym_idivi(ir, tg_lin_build(ir, &y), c / g);
	return NULL;
}

tg_uop *tg_symdiv_mod(tg_ir *ir, tg_uop *x, int64_t c)
{
	tg_lin s, q, r;
	int64_t g, lo = x->vmin / c, hi = x->vmax / c;
	tg_uop *y;

	if (lo == hi)   /* x % c == x - c*(x/c), and x/c is one value */
		return lo ? tg_sym_addi(ir, x, -lo * c) : x;
	if (tg_lin_of(x, 1, &s))
		return NULL;
	if (lin_gcd(&s, 1) % c == 0)
		return tg_sym_int(ir, 0);
	if ((g = gcd(lin_gcd(&s, 1), c)) > 1) { /* (g*y)%(g*c') == g*(y%c') */
		scale_down(&s, g);
		return tg_sym_muli(ir, tg_sym_modi(ir, tg_lin_build(ir, &s),
		                                   c / g), g);
	}
	if (x->vmin < 0)
		return NULL;
	split_by(&s, c, 0, &q, &r);   /* x % c == r % c when r >= 0 */
	if (!is_zero(&q) && !tg_lin_bounds(&r, &lo, &hi) && lo >= 0)
		return tg_sym_modi(ir, tg_lin_build(ir, &r), c);
	if (!(g = find_small(&s, c, &q, &r)))
		return NULL;
	y = tg_sym_modi(ir, tg_lin_build(ir, &q), c / g);
	return tg_sym_add(ir, tg_sym_muli(ir, y, g), tg_lin_build(ir, &r));
}

/* g*y + s < c with 0 <= s <= hi is y < ceil(c/g) whenever no multiple of
 * g lies in (c - hi - 1, c): then s never decides. */
tg_uop *tg_symdiv_lt(tg_ir *ir, tg_uop *x, int64_t c)
{
	tg_lin s, y, small, best;
	int64_t g, lo, hi, y0, bestg = 0;
	size_t i;

	if (tg_lin_of(x, 1, &s) || !s.n)
		return NULL;
	if (s.k) {                    /* sum + k < c -> sum < c - k */
		if (__builtin_sub_overflow(c, s.k, &c))
			return NULL;
		s.k = 0;
		return tg_sym_lti(ir, tg_lin_build(ir, &s), c);
	}
	for (i = 0; i <= s.n; i++) {
		g = i < s.n ? s.t[i].k : lin_gcd(&s, 0);
		g = g < 0 ? -g : g;
		if (g <= 1 || g <= bestg)
			continue;
		split_by(&s, g, 1, &y, &small);
		y0 = cdiv(c, g);
		if (tg_lin_bounds(&small, &lo, &hi) || lo < 0 ||
		    (wide)g * (y0 - 1) + hi >= c)
			continue;
		bestg = g;
		best = y;
	}
	return bestg ? tg_sym_lti(ir, tg_lin_build(ir, &best), cdiv(c, bestg))
	             : NULL;
}

/*
 * bounds.c - value bounds of integer and bool nodes (tinygrad's
 * _min_max), computed once when a node is made.  Symbolic simplification
 * decides divisions, modulos and comparisons with them, so every range
 * here must contain every value the node can take: when the math could
 * wrap, the range is the kind's whole range.
 */
#include "config.h"

#include "ir/ir.h"

typedef __int128 wide;

typedef struct range {
	wide lo, hi;
} range;

/* The whole range of type t's kind; unknown for floats and non-values. */
static range kind_range(tg_type t)
{
	unsigned s = tg_type_scalar(t), bits = tg_scalar_bits(s);
	range r = { INT64_MIN, INT64_MAX };

	if (tg_type_is_ptr(t) || !(s == TG_BOOL || tg_scalar_is_int(s)))
		return r;
	if (tg_scalar_is_unsigned(s) || s == TG_BOOL) {
		r.lo = 0;
		r.hi = bits >= 64 ? INT64_MAX : ((wide)1 << bits) - 1;
	} else if (bits < 64) {
		r.lo = -((wide)1 << (bits - 1));
		r.hi = ((wide)1 << (bits - 1)) - 1;
	}
	return r;
}

static range src_range(const tg_uop *u, unsigned i)
{
	range r = { u->src[i]->vmin, u->src[i]->vmax };

	return r;
}

static wide wmin(wide a, wide b) { return a < b ? a : b; }
static wide wmax(wide a, wide b) { return a > b ? a : b; }

/* The hull of four corner values. */
static range hull4(wide a, wide b, wide c, wide d)
{
	range r;

	r.lo = wmin(wmin(a, b), wmin(c, d));
	r.hi = wmax(wmax(a, b), wmax(c, d));

	return r;
}

/* C division truncates toward zero. */
static wide tdiv(wide a, wide b) { return a / b; }

static range r_add(range a, range b)
{
	range r = { a.lo + b.lo, a.hi + b.hi };

	return r;
}

static range r_mul(range a, range b)
{
	return hull4(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi);
}

/* Truncating division is monotonic in each operand while the divisor
 * keeps its sign, so the corners bound it. */
static range r_idiv(range a, range b, range whole)
{
	if (b.lo <= 0 && b.hi >= 0)
		return whole;
	return hull4(tdiv(a.lo, b.lo), tdiv(a.lo, b.hi), tdiv(a.hi, b.lo),
	             tdiv(a.hi, b.hi));
}

/* C's remainder has the dividend's sign and |r| < |divisor|. */
static range r_mod(range a, range b, range whole)
{
	wide m;
	range r;

	if (b.lo <= 0 && b.hi >= 0)
		return whole;
	m = wmax(b.lo < 0 ? -b.lo : b.lo, b.hi < 0 ? -b.hi : b.hi) - 1;
	r.lo = a.lo >= 0 ? 0 : wmax(a.lo, -m);
	r.hi = a.hi <= 0 ? 0 : wmin(a.hi, m);
	if (a.lo >= 0 && a.hi <= m)
		r.lo = a.lo;   /* a % b == a when 0 <= a < |b| */
	if (a.hi <= 0 && a.lo >= -m)
		r.hi = a.hi;
	return r;
}

static range r_lt(range a, range b)
{
	range r = { 0, 1 };

	if (a.hi < b.lo)
		r.lo = 1;
	else if (a.lo >= b.hi)
		r.hi = 0;
	return r;
}

static range r_ne(range a, range b)
{
	range r = { 0, 1 };

	if (a.hi < b.lo || a.lo > b.hi)
		r.lo = 1;
	else if (a.lo == a.hi && b.lo == b.hi)
		r.hi = 0;   /* the same constant on both sides */
	return r;
}

/* AND/OR/XOR: exact on bools, and for nonnegative ints the result stays
 * below the next power of two (and below the smaller operand for AND). */
static range r_bits(unsigned op, range a, range b, range whole)
{
	range r = whole;
	wide top = 1;

	if (a.lo < 0 || b.lo < 0)
		return whole;
	while (top <= wmax(a.hi, b.hi))
		top <<= 1;
	r.lo = 0;
	r.hi = top - 1;
	if (op == TG_AND)
		r.hi = wmin(a.hi, b.hi);
	if (op == TG_OR)
		r.lo = wmax(a.lo, b.lo);
	if (whole.hi == 1 && op == TG_AND)
		r.lo = a.lo & b.lo;
	if (whole.hi == 1 && op == TG_OR)
		r.hi = a.hi | b.hi;
	return r;
}

/* Shifts by a constant amount of a nonnegative value are monotonic. */
static range r_shift(unsigned op, range a, range b, range whole)
{
	range r;

	if (a.lo < 0 || b.lo != b.hi || b.lo < 0 || b.lo > 62)
		return whole;
	if (op == TG_SHR) {
		r.lo = a.lo >> (int)b.lo;
		r.hi = a.hi >> (int)b.lo;
	} else {
		r.lo = a.lo << (int)b.lo;
		r.hi = a.hi << (int)b.lo;
	}
	return r;
}

static range r_where(range c, range a, range b)
{
	range r = { wmin(a.lo, b.lo), wmax(a.hi, b.hi) };

	if (c.lo == 1)
		return a;
	if (c.hi == 0)
		return b;
	return r;
}

/* A cast keeps the range when it fits in the target kind. */
static range r_cast(const tg_uop *u, range whole)
{
	range a = src_range(u, 0);
	unsigned s = tg_type_scalar(u->src[0]->dtype);

	if (!(s == TG_BOOL || tg_scalar_is_int(s)))
		return whole;
	if (whole.hi == 1 && whole.lo == 0) {
		range r = { a.lo > 0 || a.hi < 0, a.lo != 0 || a.hi != 0 };

		return r;   /* to bool: x != 0 */
	}
	return a;
}

static range alu_range(const tg_uop *u, range whole)
{
	range a = src_range(u, 0), b = u->nsrc > 1 ? src_range(u, 1) : a;
	range neg = { -a.hi, -a.lo };

	switch (u->op) {
	case TG_ADD: return r_add(a, b);
	case TG_MUL: return r_mul(a, b);
	case TG_IDIV: return r_idiv(a, b, whole);
	case TG_MOD: return r_mod(a, b, whole);
	case TG_MAX: return (range){ wmax(a.lo, b.lo), wmax(a.hi, b.hi) };
	case TG_NEG:
		if (whole.hi == 1 && whole.lo == 0)
			return (range){ 1 - a.hi, 1 - a.lo };  /* logical not */
		return neg;
	case TG_CMPLT: return r_lt(a, b);
	case TG_CMPNE: return r_ne(a, b);
	case TG_AND: case TG_OR: case TG_XOR:
		return r_bits(u->op, a, b, whole);
	case TG_SHL: case TG_SHR: return r_shift(u->op, a, b, whole);
	case TG_WHERE: return r_where(a, b, src_range(u, 2));
	case TG_MULACC: return r_add(r_mul(a, b), src_range(u, 2));
	default: return whole;
	}
}

static range op_range(const tg_uop *u, range whole)
{
	switch (u->op) {
	case TG_CONST:
		if (tg_type_scalar(u->dtype) == TG_UINT64 &&
		    u->arg.v.u > INT64_MAX)
			return whole;
		return (range){ u->arg.v.i, u->arg.v.i };
	case TG_DEFINE_VAR:
		return (range){ u->arg.a, u->arg.b };
	case TG_BIND:
		return src_range(u, 0);
	case TG_RANGE: /* [start, end): empty loops pin the start */
		return (range){ u->src[0]->vmin, wmax(u->src[0]->vmin,
		                                      (wide)u->src[1]->vmax - 1) };
	case TG_SPECIAL:
		return (range){ 0, u->arg.a - 1 };
	case TG_EXPAND:  /* a digit ranges like a loop over [0, u) */
		return u->nsrc ? whole : (range){ 0, u->arg.a - 1 };
	case TG_CAST:
		return r_cast(u, whole);
	default:
		return tg_op_arity(u->op) ? alu_range(u, whole) : whole;
	}
}

void tg_uop_set_bounds(tg_uop *u)
{
	range whole = kind_range(u->dtype), r = whole;
	unsigned s = tg_type_scalar(u->dtype);

	if (!tg_type_is_ptr(u->dtype) && (s == TG_BOOL || tg_scalar_is_int(s)))
		r = op_range(u, whole);
	if (r.lo > r.hi || r.lo < whole.lo || r.hi > whole.hi)
		r = whole;   /* the math may wrap in this kind */
	u->vmin = (int64_t)r.lo;
	u->vmax = (int64_t)r.hi;
}

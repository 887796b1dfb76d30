/*
 * codegen/intdiv.c - integer division that never traps: x / 0 = 0 and
 * x % 0 = x, min / -1 = min and min % -1 = 0 (tg.h), the values
 * constant folding gives (ir/alu.c), on every device.
 *
 * C, OpenCL C, CUDA and GLSL leave both cases undefined; x86 CPUs trap
 * (SIGFPE), a C compiler that sees a constant zero emits a trap
 * instruction, and GPUs return whatever their sequence computes.  So a
 * division whose divisor's bounds include 0 (or -1 where the dividend's
 * include the least value) divides by a guarded divisor and selects the
 * defined value:
 *
 *     a / b  ->  ok ? a / (ok ? b : 1) : (b != 0 ? -a : 0)
 *     a % b  ->  ok ? a % (ok ? b : 1) : (b != 0 ? 0 : a)
 *
 * where ok is b != 0 (and b != -1 when the overflow can happen), -a
 * wrapping.  Index arithmetic divides by positive constants, whose
 * bounds exclude both, and is left alone.
 */
#include "config.h"

#include "codegen/codegen.h"
#include "ir/ir.h"

static tg_uop *cint(tg_ir *ir, const tg_uop *like, int64_t v)
{
	return tg_uop_const_int(ir, like->dtype, v);
}

static tg_uop *ne(tg_ir *ir, tg_uop *a, int64_t v)
{
	return tg_uop_alu(ir, TG_CMPNE, a, cint(ir, a, v), NULL);
}

static int is_const(const tg_uop *u, int64_t v)
{
	return u->op == TG_CONST && u->vmin == v && u->vmax == v;
}

/* The kind's least value, for signed kinds of 64 bits or less. */
static int64_t least(unsigned s)
{
	unsigned bits = tg_scalar_bits(s);

	return bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
}

/* Whether d is already a guarded divisor, (b != 0 [&& b != -1]) ? b : 1,
 * which can be neither 0 nor -1 whoever built it. */
static int guarded(const tg_uop *d)
{
	const tg_uop *c, *b;

	if (d->op != TG_WHERE || !is_const(d->src[2], 1))
		return 0;
	c = d->src[0];
	b = d->src[1];
	if (c->op == TG_AND)
		return c->src[0]->op == TG_CMPNE && c->src[0]->src[0] == b &&
		       is_const(c->src[0]->src[1], 0) &&
		       c->src[1]->op == TG_CMPNE && c->src[1]->src[0] == b &&
		       is_const(c->src[1]->src[1], -1);
	return c->op == TG_CMPNE && c->src[0] == b && is_const(c->src[1], 0);
}

static tg_uop *guard(tg_rw *rw, tg_uop **cap)
{
	tg_ir *ir = rw->ir;
	tg_uop *u = cap[0], *a = u->src[0], *b = u->src[1], *ok, *q, *other;
	unsigned s = tg_type_scalar(u->dtype);
	int sgn = !tg_scalar_is_unsigned(s), zero, overflow;

	if (!tg_scalar_is_int(s) || s == TG_BOOL || guarded(b))
		return NULL;
	zero = b->vmin <= 0 && b->vmax >= 0;
	overflow = sgn && b->vmin <= -1 && b->vmax >= -1 &&
	           a->vmin <= least(s);
	if (!zero && !overflow)
		return NULL;
	if (is_const(b, 0))  /* the constant cases: no select */
		return u->op == TG_IDIV ? cint(ir, u, 0) : a;
	if (is_const(b, -1))
		return u->op == TG_IDIV ? tg_uop_alu(ir, TG_NEG, a, NULL, NULL)
		                        : cint(ir, u, 0);
	ok = ne(ir, b, 0);
	if (overflow)
		ok = tg_uop_alu(ir, TG_AND, ok, ne(ir, b, -1), NULL);
	q = tg_uop_alu(ir, u->op, a,
	               tg_uop_alu(ir, TG_WHERE, ok, b, cint(ir, b, 1)), NULL);
	if (u->op == TG_IDIV)
		other = !overflow ? cint(ir, u, 0)
		        : tg_uop_alu(ir, TG_WHERE, ne(ir, b, 0),
		                     tg_uop_alu(ir, TG_NEG, a, NULL, NULL),
		                     cint(ir, u, 0));
	else
		other = !overflow ? a
		        : tg_uop_alu(ir, TG_WHERE, ne(ir, b, 0), cint(ir, u, 0),
		                     a);
	return tg_uop_alu(ir, TG_WHERE, ok, q, other);
}

static const tg_rule intdiv_table[] = {
	{ "a/b, b may be 0 or -1 -> guarded", P_OP(0, TG_IDIV), guard },
	{ "a%b, b may be 0 or -1 -> guarded", P_OP(0, TG_MOD), guard },
};
static tg_ruleset intdiv_rules = TG_RULESET("intdiv", intdiv_table, NULL);

tg_uop *tg_guard_intdiv(tg_ir *ir, tg_uop *sink)
{
	return tg_rewrite(ir, sink, &intdiv_rules, NULL);
}

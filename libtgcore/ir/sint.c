/*
 * sint.c - tg_sint, the integer-or-expression of shapes (tinygrad's
 * sint): plain integer math in the common case, simplified symbolic
 * nodes when a shape holds a variable.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "ir/ir.h"

tg_sint tg_sint_of(tg_uop *u)
{
	tg_sint s = { 0, NULL };

	if (u && u->op == TG_CONST)
		s.c = u->arg.v.i;
	else
		s.u = u;
	return s;
}

tg_uop *tg_sint_uop(tg_ir *ir, tg_sint s)
{
	return s.u ? s.u : tg_sym_int(ir, s.c);
}

int64_t tg_sint_vmin(tg_sint s)
{
	return s.u ? s.u->vmin : s.c;
}

int64_t tg_sint_vmax(tg_sint s)
{
	return s.u ? s.u->vmax : s.c;
}

/* Integer arithmetic with C semantics; -1 on overflow or a zero
 * divisor. */
static int int_op(unsigned op, int64_t a, int64_t b, int64_t *r)
{
	switch (op) {
	case TG_ADD: return __builtin_add_overflow(a, b, r) ? -1 : 0;
	case TG_MUL: return __builtin_mul_overflow(a, b, r) ? -1 : 0;
	case TG_MAX: *r = a > b ? a : b; return 0;
	default: break;
	}
	if (b == 0 || (a == INT64_MIN && b == -1))
		return -1;
	*r = op == TG_IDIV ? a / b : a % b;
	return 0;
}

static tg_uop *sym_op(tg_ir *ir, unsigned op, tg_uop *a, tg_uop *b)
{
	switch (op) {
	case TG_ADD: return tg_sym_add(ir, a, b);
	case TG_MUL: return tg_sym_mul(ir, a, b);
	case TG_IDIV: return tg_sym_idiv(ir, a, b);
	case TG_MOD: return tg_sym_mod(ir, a, b);
	default: return tg_sym_max(ir, a, b);
	}
}

static tg_sint sint_op(tg_ir *ir, unsigned op, tg_sint a, tg_sint b)
{
	tg_sint r = { 0, NULL };
	tg_uop *u;

	if (!a.u && !b.u) {
		if (!int_op(op, a.c, b.c, &r.c))
			return r;
		tg_error(TG_EINVAL, "sint %s: %lld and %lld overflow or divide "
		         "by zero", tg_op_name(op), (long long)a.c,
		         (long long)b.c);
		if (ir)
			tg_ir_fail(ir, TG_EINVAL, "%s", tg_last_error());
		return tg_si(0);
	}
	if (!ir) {
		tg_error(TG_EINTERNAL, "sint %s: symbolic operand without a "
		         "context", tg_op_name(op));
		return tg_si(0);
	}
	u = sym_op(ir, op, tg_sint_uop(ir, a), tg_sint_uop(ir, b));
	return u ? tg_sint_of(u) : tg_si(0);
}

tg_sint tg_sint_add(tg_ir *ir, tg_sint a, tg_sint b)
{
	return sint_op(ir, TG_ADD, a, b);
}

tg_sint tg_sint_sub(tg_ir *ir, tg_sint a, tg_sint b)
{
	int64_t r;

	if (!a.u && !b.u && !__builtin_sub_overflow(a.c, b.c, &r))
		return tg_si(r);
	return sint_op(ir, TG_ADD, a, sint_op(ir, TG_MUL, b, tg_si(-1)));
}

tg_sint tg_sint_mul(tg_ir *ir, tg_sint a, tg_sint b)
{
	return sint_op(ir, TG_MUL, a, b);
}

tg_sint tg_sint_idiv(tg_ir *ir, tg_sint a, tg_sint b)
{
	return sint_op(ir, TG_IDIV, a, b);
}

tg_sint tg_sint_mod(tg_ir *ir, tg_sint a, tg_sint b)
{
	return sint_op(ir, TG_MOD, a, b);
}

tg_sint tg_sint_max(tg_ir *ir, tg_sint a, tg_sint b)
{
	return sint_op(ir, TG_MAX, a, b);
}

tg_sint tg_sint_min(tg_ir *ir, tg_sint a, tg_sint b)
{
	if (!a.u && !b.u)
		return tg_si(a.c < b.c ? a.c : b.c);
	if (!ir)
		return sint_op(NULL, TG_MAX, a, b);   /* reports the error */
	return tg_sint_of(tg_sym_min(ir, tg_sint_uop(ir, a),
	                             tg_sint_uop(ir, b)));
}

const char *tg_sint_format(tg_sint s, char *buf, size_t n)
{
	char *r;

	if (!s.u) {
		snprintf(buf, n, "%lld", (long long)s.c);
		return buf;
	}
	r = tg_sym_render(s.u);
	snprintf(buf, n, "%s", r ? r : "<expr>");
	free(r);
	return buf;
}

/*
 * sym.c - symbolic integers for their users: builders that simplify as
 * they go, substitution, evaluation, variables and binding, rendering to
 * C, and tg_sint (an integer or an expression) for shapes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* ------------------------------------------------------------- builders */

tg_uop *tg_sym_simplify(tg_ir *ir, tg_uop *u)
{
	return tg_rewrite(ir, u, &tg_symbolic_rules, NULL);
}

tg_uop *tg_sym_int(tg_ir *ir, int64_t c)
{
	return tg_uop_const_int(ir, TG_INDEX, c);
}

tg_uop *tg_sym_var(tg_ir *ir, const char *name, int64_t lo, int64_t hi)
{
	tg_arg arg = { .name = name, .a = lo, .b = hi };

	if (!name || !*name)
		return tg_ir_fail(ir, TG_EINVAL, "sym_var: empty name");
	if (lo > hi)
		return tg_ir_fail(ir, TG_EINVAL, "sym_var: %s has bounds "
		                  "[%lld, %lld]: min is above max", name,
		                  (long long)lo, (long long)hi);
	return tg_uop0(ir, TG_DEFINE_VAR, TG_INDEX, &arg);
}

tg_uop *tg_sym_bind(tg_ir *ir, tg_uop *var, int64_t val)
{
	if (!var)
		return NULL;
	if (var->op != TG_DEFINE_VAR)
		return tg_ir_fail(ir, TG_EINVAL, "sym_bind: %%%u is a %s, "
		                  "not a variable", (unsigned)var->id,
		                  tg_op_name(var->op));
	if (val < var->arg.a || val > var->arg.b)
		return tg_ir_fail(ir, TG_EINVAL, "sym_bind: %s=%lld is outside "
		                  "its bounds [%lld, %lld]", var->arg.name,
		                  (long long)val, (long long)var->arg.a,
		                  (long long)var->arg.b);
	return tg_uop2(ir, TG_BIND, TG_INDEX, var, tg_sym_int(ir, val));
}

/* Checks that both operands are of `want` and builds the simplified op. */
static tg_uop *binop(tg_ir *ir, unsigned op, tg_uop *a, tg_uop *b,
                     tg_type want)
{
	char ta[32], tb[32];

	if (!a || !b)
		return NULL;
	if (a->dtype != want || b->dtype != want)
		return tg_ir_fail(ir, TG_EINVAL, "sym %s: operands are %s and "
		                  "%s, not %s", tg_op_name(op),
		                  tg_type_format(a->dtype, ta, sizeof ta),
		                  tg_type_format(b->dtype, tb, sizeof tb),
		                  want == TG_BOOL ? "bool" : "index");
	return tg_sym_simplify(ir, tg_uop_alu(ir, op, a, b, NULL));
}

tg_uop *tg_sym_add(tg_ir *ir, tg_uop *a, tg_uop *b)
{
	return binop(ir, TG_ADD, a, b, TG_INDEX);
}

tg_uop *tg_sym_mul(tg_ir *ir, tg_uop *a, tg_uop *b)
{
	return binop(ir, TG_MUL, a, b, TG_INDEX);
}

tg_uop *tg_sym_neg(tg_ir *ir, tg_uop *a)
{
	return tg_sym_mul(ir, a, tg_sym_int(ir, -1));
}

tg_uop *tg_sym_sub(tg_ir *ir, tg_uop *a, tg_uop *b)
{
	return tg_sym_add(ir, a, tg_sym_neg(ir, b));
}

/* Division and modulo refuse a divisor whose range holds 0: C leaves
 * that undefined. */
static tg_uop *divop(tg_ir *ir, unsigned op, tg_uop *a, tg_uop *b)
{
	char buf[128];

	if (b && b->op == TG_CONST && b->arg.v.i == 0)
		return tg_ir_fail(ir, TG_EINVAL, "sym %s: division by 0",
		                  tg_op_name(op));
	if (b && b->vmin <= 0 && b->vmax >= 0)
		return tg_ir_fail(ir, TG_EINVAL, "sym %s: divisor %s can be 0",
		                  tg_op_name(op), tg_sint_format(tg_sint_of(b),
		                                                 buf, sizeof buf));
	return binop(ir, op, a, b, TG_INDEX);
}

tg_uop *tg_sym_idiv(tg_ir *ir, tg_uop *a, tg_uop *b)
{
	return divop(ir, TG_IDIV, a, b);
}

tg_uop *tg_sym_mod(tg_ir *ir, tg_uop *a, tg_uop *b)
{
	return divop(ir, TG_MOD, a, b);
}

tg_uop *tg_sym_max(tg_ir *ir, tg_uop *a, tg_uop *b)
{
	return binop(ir, TG_MAX, a, b, TG_INDEX);
}

/* min(a, b) == -max(-a, -b), so only MAX needs rules. */
tg_uop *tg_sym_min(tg_ir *ir, tg_uop *a, tg_uop *b)
{
	return tg_sym_neg(ir, tg_sym_max(ir, tg_sym_neg(ir, a),
	                                 tg_sym_neg(ir, b)));
}

tg_uop *tg_sym_lt(tg_ir *ir, tg_uop *a, tg_uop *b)
{
	return binop(ir, TG_CMPLT, a, b, TG_INDEX);
}

tg_uop *tg_sym_ne(tg_ir *ir, tg_uop *a, tg_uop *b)
{
	return binop(ir, TG_CMPNE, a, b, TG_INDEX);
}

/* a >= b is !(a < b), written (a<b) != true as tinygrad does. */
tg_uop *tg_sym_ge(tg_ir *ir, tg_uop *a, tg_uop *b)
{
	return binop(ir, TG_CMPNE, tg_sym_lt(ir, a, b),
	             tg_uop_const_int(ir, TG_BOOL, 1), TG_BOOL);
}

tg_uop *tg_sym_and(tg_ir *ir, tg_uop *a, tg_uop *b)
{
	return binop(ir, TG_AND, a, b, TG_BOOL);
}

tg_uop *tg_sym_addi(tg_ir *ir, tg_uop *a, int64_t b)
{
	return tg_sym_add(ir, a, tg_sym_int(ir, b));
}

tg_uop *tg_sym_muli(tg_ir *ir, tg_uop *a, int64_t b)
{
	return tg_sym_mul(ir, a, tg_sym_int(ir, b));
}

tg_uop *tg_sym_idivi(tg_ir *ir, tg_uop *a, int64_t b)
{
	return tg_sym_idiv(ir, a, tg_sym_int(ir, b));
}

tg_uop *tg_sym_modi(tg_ir *ir, tg_uop *a, int64_t b)
{
	return tg_sym_mod(ir, a, tg_sym_int(ir, b));
}

tg_uop *tg_sym_lti(tg_ir *ir, tg_uop *a, int64_t b)
{
	return tg_sym_lt(ir, a, tg_sym_int(ir, b));
}

/* ---------------------------------------------------- substitute, eval */

tg_uop *tg_sym_substitute(tg_ir *ir, tg_uop *u, tg_uop *const *from,
                          tg_uop *const *to, size_t n)
{
	tg_uop **order, **map, *src[64], *r = NULL;
	size_t cnt, i, j;

	if (!u || !(order = tg_uop_toposort(u, &cnt)))
		return u ? tg_ir_fail(ir, TG_ENOMEM, "sym_substitute: out of "
		                      "host memory") : NULL;
	map = calloc((size_t)u->id + 1, sizeof *map);
	for (i = 0; map && i < cnt; i++) {
		tg_uop *x = order[i];

		for (j = 0; j < n && from[j] != x; j++)
			;
		if (j < n) {
			r = map[x->id] = to[j];
			continue;
		}
		for (j = 0; j < x->nsrc && j < 64; j++)
			src[j] = map[x->src[j]->id];
		r = map[x->id] = x->nsrc > 64 ? x
		                              : tg_uop_replace_src(ir, x, src,
		                                                   x->nsrc);
	}
	if (!map)
		tg_ir_fail(ir, TG_ENOMEM, "sym_substitute: out of host memory");
	free(map);
	free(order);
	return map ? tg_sym_simplify(ir, r) : NULL;
}

/* The value vars/vals give the variable u, checked against its bounds:
 * 0, 1 when none is given, or TG_EINVAL when out of bounds. */
static int var_value(const tg_uop *u, const tg_uop *const *vars,
                     const int64_t *vals, size_t n, int64_t *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (vars[i] == u || (vars[i] && vars[i]->op == TG_DEFINE_VAR &&
		                     !strcmp(vars[i]->arg.name, u->arg.name)))
			break;
	}
	if (i == n)
		return 1;
	if (vals[i] < u->arg.a || vals[i] > u->arg.b)
		return tg_error(TG_EINVAL, "sym_eval: %s=%lld is outside its "
		                "bounds [%lld, %lld]", u->arg.name,
		                (long long)vals[i], (long long)u->arg.a,
		                (long long)u->arg.b);
	*out = vals[i];
	return 0;
}

/* A variable without a value is only an error when something reads it:
 * the variable under a BIND is not read, the BIND's value is. */
static int eval_node(const tg_uop *u, int64_t *val, unsigned char *unset,
                     const tg_uop *const *vars, const int64_t *vals,
                     size_t n)
{
	tg_scalar in[3], r;
	unsigned i, s;
	int st;

	switch (u->op) {
	case TG_CONST: val[u->id] = u->arg.v.i; return 0;
	case TG_DEFINE_VAR:
		st = var_value(u, vars, vals, n, &val[u->id]);
		unset[u->id] = st == 1;
		return st < 0 ? st : 0;
	case TG_BIND: val[u->id] = val[u->src[1]->id]; return 0;
	default: break;
	}
	if (!tg_op_arity(u->op) || u->op == TG_THREEFRY)
		return tg_error(TG_EINVAL, "sym_eval: %s is not symbolic",
		                tg_op_name(u->op));
	for (i = 0; i < u->nsrc; i++) {
		if (unset[u->src[i]->id])
			return tg_error(TG_EINVAL, "sym_eval: variable %s has "
			                "no value", u->src[i]->arg.name);
		in[i].i = val[u->src[i]->id];
	}
	s = tg_type_scalar(u->src[u->op == TG_WHERE]->dtype);
	if (tg_exec_alu(u->op, s, in, &r))
		return tg_error(TG_EINVAL, "sym_eval: %s of %lld and %lld is "
		                "undefined (division by zero?)",
		                tg_op_name(u->op), (long long)in[0].i,
		                (long long)(u->nsrc > 1 ? in[1].i : 0));
	val[u->id] = r.i;
	return 0;
}

int tg_sym_eval(const tg_uop *u, const tg_uop *const *vars,
                const int64_t *vals, size_t n, int64_t *out)
{
	size_t cnt, i, ids = (size_t)u->id + 1;
	tg_uop **order = tg_uop_toposort(u, &cnt);
	int64_t *val = calloc(ids, sizeof *val);
	unsigned char *unset = calloc(ids, 1);
	int st = 0;

	if (!order || !val || !unset)
		st = tg_error_oom("sym_eval");
	for (i = 0; !st && i < cnt; i++)
		st = eval_node(order[i], val, unset, vars, vals, n);
	if (!st && unset[u->id])
		st = tg_error(TG_EINVAL, "sym_eval: variable %s has no value",
		              u->arg.name);
	if (!st)
		*out = val[u->id];
	free(unset);
	free(val);
	free(order);
	return st;
}

/* ----------------------------------------------------- variables, bind */

static int by_name(const void *a, const void *b)
{
	const tg_uop *x = *(tg_uop *const *)a, *y = *(tg_uop *const *)b;
	int c = strcmp(x->arg.name, y->arg.name);

	return c ? c : (x->id > y->id) - (x->id < y->id);
}

int tg_sym_vars(const tg_uop *u, tg_uop_vec *out)
{
	tg_uop **order;
	size_t cnt, i;

	if (!(order = tg_uop_toposort(u, &cnt)))
		return TG_ENOMEM;
	for (i = 0; i < cnt; i++) {
		if (order[i]->op == TG_DEFINE_VAR &&
		    TG_VEC_PUSH(out, order[i])) {
			free(order);
			return tg_error_oom("sym_vars");
		}
	}
	free(order);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, by_name);
	return 0;
}

typedef struct unbind_ctx {
	tg_uop_vec *vars;
	tg_i64_vec *vals;
} unbind_ctx;

static tg_uop *unbind_rule(tg_rw *rw, tg_uop **cap)
{
	unbind_ctx *c = rw->ctx;

	(void)cap;
	if ((c->vars && TG_VEC_PUSH(c->vars, rw->root->src[0])) ||
	    (c->vals && TG_VEC_PUSH(c->vals, rw->root->src[1]->arg.v.i)))
		return tg_ir_fail(rw->ir, TG_ENOMEM, "sym_unbind: out of host "
		                  "memory");
	return rw->root->src[0];
}

static const tg_rule unbind_rules[] = {
	{ "bind(v, c) -> v", P_OP(P_NOCAP, TG_BIND), unbind_rule },
};
static tg_ruleset unbind_set = TG_RULESET("unbind", unbind_rules, NULL);

tg_uop *tg_sym_unbind(tg_ir *ir, tg_uop *u, tg_uop_vec *vars,
                      tg_i64_vec *vals)
{
	unbind_ctx c = { vars, vals };

	return tg_rewrite(ir, u, &unbind_set, &c);
}

/* --------------------------------------------------------------- render */

static const char *const infix[TG_NOPS] = {
	[TG_ADD] = "+", [TG_MUL] = "*", [TG_IDIV] = "/", [TG_MOD] = "%",
	[TG_CMPLT] = "<", [TG_CMPNE] = "!=", [TG_XOR] = "^", [TG_SHL] = "<<",
	[TG_SHR] = ">>", [TG_OR] = "|", [TG_AND] = "&",
};

/* Recursive: symbolic expressions are shallow (one level per op a shape
 * went through). */
static void render(tg_strbuf *sb, const tg_uop *u)
{
	int is_bool = tg_type_scalar(u->dtype) == TG_BOOL;

	switch (u->op) {
	case TG_CONST:
		tg_strbuf_addf(sb, "%lld", (long long)u->arg.v.i);
		return;
	case TG_DEFINE_VAR:
		tg_strbuf_add(sb, u->arg.name);
		return;
	case TG_BIND:
		render(sb, u->src[0]);
		return;
	case TG_NEG:
		tg_strbuf_add(sb, is_bool ? "(!" : "(-");
		render(sb, u->src[0]);
		tg_strbuf_add(sb, ")");
		return;
	case TG_MAX: case TG_WHERE:
		tg_strbuf_add(sb, "(");
		render(sb, u->src[0]);
		if (u->op == TG_MAX) {
			tg_strbuf_add(sb, ">");
			render(sb, u->src[1]);
		}
		tg_strbuf_add(sb, "?");
		render(sb, u->src[u->op == TG_MAX ? 0 : 1]);
		tg_strbuf_add(sb, ":");
		render(sb, u->src[u->op == TG_MAX ? 1 : 2]);
		tg_strbuf_add(sb, ")");
		return;
	case TG_CMPNE:
		if (is_bool && tg_uop_is_const_int(u->src[1], 1) &&
		    tg_type_scalar(u->src[0]->dtype) == TG_BOOL) {
			tg_strbuf_add(sb, "(!");
			render(sb, u->src[0]);
			tg_strbuf_add(sb, ")");
			return;
		}
		break;
	default:
		break;
	}
	if (u->op >= TG_NOPS || !infix[u->op]) {
		tg_strbuf_addf(sb, "<%s>", tg_op_name(u->op));
		return;
	}
	tg_strbuf_add(sb, "(");
	render(sb, u->src[0]);
	if (is_bool && (u->op == TG_AND || u->op == TG_OR))
		tg_strbuf_add(sb, u->op == TG_AND ? "&&" : "||");
	else
		tg_strbuf_add(sb, infix[u->op]);
	render(sb, u->src[1]);
	tg_strbuf_add(sb, ")");
}

char *tg_sym_render(const tg_uop *u)
{
	tg_strbuf sb;
	char *s;

	tg_strbuf_init(&sb);
	render(&sb, u);
	if (!(s = tg_strbuf_finish(&sb)))
		tg_error_oom("sym_render");
	return s;
}

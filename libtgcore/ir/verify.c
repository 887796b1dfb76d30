/*
 * verify.c - checks the invariants a pass must leave behind (QBE's
 * ssacheck): every node's source count and types fit its op, and a
 * linear program defines each value once, after its sources, inside the
 * loops it uses, with loops that nest.  Codegen runs these between
 * passes when VERIFY is set (make check sets it), so a broken invariant
 * is reported by the pass that broke it, not later as TG_EINTERNAL.
 */
#include "config.h"

#include <stdlib.h>

#include "ir/ir.h"

/* The failure of node u in `pass`; returns TG_EINTERNAL. */
static int bad(const char *pass, const tg_uop *u, const char *what)
{
	char tb[48];

	return tg_error(TG_EINTERNAL, "verify after %s: %%%u %s %s: %s",
	                pass, (unsigned)u->id, tg_op_name(u->op),
	                tg_type_format(u->dtype, tb, sizeof tb), what);
}

static int is_bool(tg_type t) { return tg_type_scalar(t) == TG_BOOL; }
static int is_index(const tg_uop *u)
{
	return tg_scalar_is_int(tg_type_scalar(u->dtype)) &&
	       tg_type_count(u->dtype) == 1 && !tg_type_is_ptr(u->dtype);
}

/* ALU ops: operands of one type (WHERE: a bool condition, then two of
 * the result's type), the result bool for comparisons. */
static const char *check_alu(const tg_uop *u)
{
	unsigned n = tg_op_arity(u->op), first = u->op == TG_WHERE;
	tg_type t;

	if (u->nsrc != n)
		return "wrong number of sources";
	if (first && (!is_bool(u->src[0]->dtype) ||
	              tg_type_count(u->src[0]->dtype) !=
	              tg_type_count(u->dtype)))
		return "condition is not bool of the value's width";
	t = u->src[first]->dtype;
	for (unsigned i = first + 1; i < n; i++)
		if (u->src[i]->dtype != t)
			return "operand types differ";
	if (tg_op_flags(u->op) & TG_OPF_CMP)
		return is_bool(u->dtype) &&
		       tg_type_count(u->dtype) == tg_type_count(t) ? NULL
		       : "comparison is not bool";
	return u->dtype == t ? NULL : "result type is not the operands'";
}

static const char *check_mem(const tg_uop *u)
{
	unsigned nmin = u->op == TG_LOAD ? 2 : 3;

	if (u->nsrc < nmin || u->nsrc > 4)
		return "wrong number of sources";
	if (!tg_type_is_ptr(u->src[0]->dtype))
		return "source 0 is not a buffer";
	if (u->src[1]->op == TG_SHAPETRACKER)
		return NULL;  /* a kernel AST's: checked by the ops below */
	if (!is_index(u->src[1]))
		return "index is not an integer";
	if (u->op == TG_STORE)
		return u->nsrc == 4 && !is_bool(u->src[3]->dtype)
		       ? "gate is not bool" : NULL;
	if (u->nsrc == 4 && (!is_bool(u->src[2]->dtype) ||
	                     u->src[3]->dtype != u->dtype))
		return "gate is not bool or the alternative not the value";
	if (tg_type_base(u->dtype) !=
	    tg_type_base(tg_type_deref(u->src[0]->dtype)))
		return "value type is not the buffer's";
	return NULL;
}

static const char *check_acc(const tg_uop *u)
{
	if (u->op == TG_PHI)
		return u->nsrc == 2 && u->src[0]->op == TG_DEFINE_ACC &&
		       u->src[0]->dtype == u->dtype &&
		       u->src[1]->dtype == u->dtype ? NULL
		       : "not (DEFINE_ACC, value) of one type";
	/* a load: reduce passes resume from the last pass's partial (a
	 * lane of a vector load, or lanes as a vector, once vectorized) */
	if (u->nsrc < 1 || u->src[0]->dtype != u->dtype ||
	    (u->src[0]->op != TG_CONST && u->src[0]->op != TG_LOAD &&
	     u->src[0]->op != TG_GEP && u->src[0]->op != TG_VECTORIZE))
		return "initial value is not a CONST or a load of its type";
	for (uint32_t i = 1; i < u->nsrc; i++)
		if (u->src[i]->op != TG_RANGE)
			return "accumulates over a non-RANGE";
	return NULL;
}

static const char *check_vector(const tg_uop *u)
{
	if (u->op == TG_GEP)
		return u->nsrc == 1 && u->arg.v.i >= 0 &&
		       (uint64_t)u->arg.v.i < tg_type_count(u->src[0]->dtype) &&
		       u->dtype == tg_type_vec(u->src[0]->dtype, 1) ? NULL
		       : "lane outside the vector or wrong type";
	if (u->nsrc != tg_type_count(u->dtype))
		return "lanes and sources differ";
	for (uint32_t i = 0; i < u->nsrc; i++)
		if (u->src[i]->dtype != tg_type_vec(u->dtype, 1))
			return "a lane is not of the element type";
	return NULL;
}

/* A kernel AST's tracker nodes and reduce. */
static const char *check_ast(const tg_uop *u)
{
	if (u->op == TG_VIEW)
		return u->arg.a >= 0 &&
		       u->nsrc == 2 * u->arg.a + 1 + (u->arg.b ? 2 * u->arg.a
		                                               : 0)
		       ? NULL : "sources do not fit the ndim";
	if (u->op == TG_SHAPETRACKER) {
		for (uint32_t i = 0; i < u->nsrc; i++)
			if (u->src[i]->op != TG_VIEW)
				return "a source is not a VIEW";
		return u->nsrc ? NULL : "no views";
	}
	return u->nsrc == 1 && u->dtype == u->src[0]->dtype &&
	       (u->arg.v.i == TG_ADD || u->arg.v.i == TG_MAX) && u->arg.a
	       ? NULL : "not an ADD or MAX over some axes of its source";
}

/* The expander's forms: a digit (no sources: the index of axis arg.v.i
 * over [0, arg.a)) or a lane set (arg.a its axes, lanes of its type). */
static const char *check_expand(const tg_uop *u)
{
	if (!u->nsrc)
		return u->dtype == TG_INDEX && u->arg.v.i >= 0 &&
		       u->arg.v.i < 32 && u->arg.a >= 2 ? NULL
		       : "not a digit of an axis (an index below u >= 2)";
	if (u->arg.v.i || u->arg.a <= 0 || u->arg.a > UINT32_MAX ||
	    u->nsrc < 2)
		return "a lane set without axes or lanes";
	for (uint32_t i = 0; i < u->nsrc; i++)
		if (u->src[i]->dtype != u->dtype || u->src[i]->op == TG_EXPAND)
			return "a lane is an EXPAND or not of the set's type";
	return NULL;
}

/* REDUCE(value, RANGE...) with unrolled axes arg.a (arg.b = 0), or
 * REDUCE(v0..vk-1, RANGE...) once contracted (arg.b = k, no axes). */
static const char *check_reduce(const tg_uop *u)
{
	uint32_t k = u->arg.b ? (uint32_t)u->arg.b : 1;

	if ((u->arg.v.i != TG_ADD && u->arg.v.i != TG_MAX) ||
	    u->arg.b < 0 || u->arg.b > u->nsrc || u->nsrc < 1 ||
	    (u->arg.b && u->arg.a) || u->arg.a < 0)
		return "not an ADD or MAX of values over loops";
	for (uint32_t i = 0; i < u->nsrc; i++) {
		if (i >= k && u->src[i]->op != TG_RANGE)
			return "reduces over a non-RANGE";
		if (i < k && u->src[i]->dtype != u->dtype)
			return "a value is not of the reduce's type";
		if (i < k && u->arg.b && u->src[i]->op == TG_EXPAND)
			return "a contracted value is a lane set";
	}
	return NULL;
}

static const char *check_other(const tg_uop *u)
{
	switch (u->op) {
	case TG_CONST:
		return u->nsrc == 0 || (u->nsrc == 1 &&
		       u->src[0]->op == TG_SHAPETRACKER) ? NULL
		       : "sources other than a tracker";
	case TG_RANGE:
		return u->nsrc == 2 && is_index(u->src[0]) &&
		       is_index(u->src[1]) && is_index(u) ? NULL
		       : "bounds are not two integers";
	case TG_SPECIAL: case TG_DEFINE_VAR:
		return u->nsrc == 0 && is_index(u) ? NULL
		       : "not a source-less integer";
	case TG_DEFINE_GLOBAL: case TG_DEFINE_LOCAL:
		return u->nsrc == 0 && tg_type_is_ptr(u->dtype) ? NULL
		       : "not a source-less pointer";
	case TG_CAST: case TG_BITCAST:
		return u->nsrc == 1 ? NULL : "not one source";
	case TG_ENDRANGE:
		return u->nsrc == 1 && u->src[0]->op == TG_RANGE ? NULL
		       : "does not close a RANGE";
	case TG_SINK: case TG_STORE: case TG_BARRIER:
		return u->dtype == TG_VOID ? NULL : "has a value";
	default:
		return NULL;
	}
}

/* What is wrong with u alone, or NULL. */
static const char *check_node(const tg_uop *u)
{
	if (tg_op_arity(u->op))
		return check_alu(u);
	switch (u->op) {
	case TG_LOAD: case TG_STORE: {
		const char *m = check_mem(u);
		return m ? m : u->op == TG_STORE ? check_other(u) : NULL;
	}
	case TG_DEFINE_ACC: case TG_PHI:
		return check_acc(u);
	case TG_GEP: case TG_VECTORIZE:
		return check_vector(u);
	case TG_VIEW: case TG_SHAPETRACKER: case TG_REDUCE_AXIS:
		return check_ast(u);
	case TG_EXPAND:
		return check_expand(u);
	case TG_REDUCE:
		return check_reduce(u);
	default:
		return check_other(u);
	}
}

int tg_uop_verify(const tg_uop *root, const char *pass)
{
	size_t n;
	tg_uop **order = tg_uop_toposort(root, &n);
	int rc = TG_OK;

	if (!order)
		return TG_ENOMEM;
	for (size_t i = 0; i < n && rc == TG_OK; i++) {
		const char *why = check_node(order[i]);
		if (why)
			rc = bad(pass, order[i], why);
	}
	free(order);
	return rc;
}

/* ------------------------------------------------------------ linear */

typedef struct lin_check {
	const char *pass;
	uint8_t *placed;   /* by id */
	uint8_t *open;     /* by id: a RANGE now open */
	const tg_uop **stack;
	size_t depth;
} lin_check;

/* Sources are placed before u (an accumulator's loops open after it)
 * and the loops u reads are open. */
static int check_sources(lin_check *c, const tg_uop *u)
{
	uint32_t nwait = u->op == TG_DEFINE_ACC ? 1 : u->nsrc;

	for (uint32_t k = 0; k < u->nsrc; k++) {
		const tg_uop *s = u->src[k];
		if (k < nwait && !c->placed[s->id])
			return bad(c->pass, u, "a source is placed later");
		if (s->op == TG_RANGE && u->op != TG_DEFINE_ACC &&
		    u->op != TG_ENDRANGE && !c->open[s->id])
			return bad(c->pass, u, "uses a loop that is not open");
	}
	return TG_OK;
}

/* Opens or closes a loop: ENDRANGE must close the innermost. */
static int nest(lin_check *c, const tg_uop *u)
{
	if (u->op == TG_RANGE) {
		c->stack[c->depth++] = u;
		c->open[u->id] = 1;
	} else if (u->op == TG_ENDRANGE) {
		if (c->depth == 0 || c->stack[c->depth - 1] != u->src[0])
			return bad(c->pass, u, "closes a loop that is not "
			           "the innermost open one");
		c->open[u->src[0]->id] = 0;
		c->depth--;
	}
	return TG_OK;
}

static int check_linear(lin_check *c, tg_uop *const *lin, size_t n)
{
	int rc = TG_OK;

	for (size_t i = 0; i < n && rc == TG_OK; i++) {
		const tg_uop *u = lin[i];
		const char *why = check_node(u);
		if (why)
			return bad(c->pass, u, why);
		if (c->placed[u->id])
			return bad(c->pass, u, "defined twice");
		if ((rc = check_sources(c, u)) || (rc = nest(c, u)))
			return rc;
		c->placed[u->id] = 1;
	}
	if (c->depth)
		return bad(c->pass, c->stack[c->depth - 1], "never closed");
	return TG_OK;
}

int tg_linear_verify(tg_uop *const *lin, size_t n, const char *pass)
{
	lin_check c = { .pass = pass };
	uint32_t maxid = 0;
	int rc;

	for (size_t i = 0; i < n; i++) {
		if (lin[i]->id > maxid)
			maxid = lin[i]->id;
		for (uint32_t k = 0; k < lin[i]->nsrc; k++)
			if (lin[i]->src[k]->id > maxid)
				maxid = lin[i]->src[k]->id;
	}
	c.placed = calloc((size_t)maxid + 1, 1);
	c.open = calloc((size_t)maxid + 1, 1);
	c.stack = calloc(n ? n : 1, sizeof *c.stack);
	if (!c.placed || !c.open || !c.stack)
		rc = tg_error_oom("linear_verify");
	else
		rc = check_linear(&c, lin, n);
	free(c.placed);
	free(c.open);
	free(c.stack);
	return rc;
}

/*
 * ast.c - the kernel AST as uops (one IR): the checked builders the
 * scheduler uses, the kernel's full shape, the readable text DEBUG>=3
 * prints, and the decoded view of a kernel that the optimizer and
 * lowering read.
 *
 * The builders are thin: a kernel AST is an ordinary uop graph, interned
 * like any other, so two equal kernels built in one context are one
 * SINK and the method cache keys on that pointer.  What the builders
 * add is type checking, done once where a bad kernel can be blamed on
 * its maker, not later in codegen.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

/* Reports a bad AST: the message always (each refusal says what it
 * refused), the status only when the context has none (the first error
 * sticks).  Returns NULL for `return fail(...)`. */
static tg_uop *fail(tg_ir *ir, int status, const char *fmt, ...)
	TG_PRINTF(3, 4);
static tg_uop *fail(tg_ir *ir, int status, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (tg_ir_status(ir))
		tg_error(status, "%s", msg);
	else
		tg_ir_fail(ir, status, "%s", msg);
	return NULL;
}

/* A NULL source already has its message (from the builder or movement
 * op that failed); the context only remembers that something failed,
 * keeping that message. */
static tg_uop *null_src(tg_ir *ir)
{
	char msg[256];

	if (tg_ir_status(ir))
		return NULL;
	snprintf(msg, sizeof msg, "%s", tg_last_error());
	return tg_ir_fail(ir, tg_last_status() ? tg_last_status() : TG_EINVAL,
	                  "%s", msg);
}

/* 0 when a is a value an operator can take; else -1 with the error
 * recorded in ir. */
static int operand(tg_ir *ir, const tg_uop *a, const char *op)
{
	if (!a) {
		null_src(ir);
		return -1;
	}
	if (a->op == TG_STORE || a->op == TG_SINK) {
		fail(ir, TG_EINVAL, "%s: operand is a %s, not a value", op,
		    tg_op_name(a->op));
		return -1;
	}
	return 0;
}

static int dtype_ok(tg_dtype dt)
{
	return (unsigned)dt < TG_NDTYPES;
}

/* The ndim of the kernel below a: every path down src[0] of a value
 * ends at a LOAD or CONST, whose tracker has the kernel's ndim. */
static size_t ast_ndim(const tg_uop *a)
{
	const tg_uop *st;

	while (a->op != TG_LOAD && a->op != TG_CONST && a->op != TG_STORE)
		a = a->src[0];
	st = tg_ast_st_node(a);
	return (size_t)st->src[st->nsrc - 1]->arg.a;
}

/* The DEFINE_GLOBAL of buffer buf holding dt. */
static tg_uop *global(tg_ir *ir, int buf, tg_dtype dt)
{
	tg_arg a;

	memset(&a, 0, sizeof a);
	a.v.i = buf;
	return tg_uop0(ir, TG_DEFINE_GLOBAL, tg_type_ptr(dt, TG_AS_GLOBAL),
	               &a);
}

/* The tracker node of st (taken: freed here, even on failure). */
static tg_uop *st_node(tg_ir *ir, tg_st *st)
{
	tg_uop *u;

	if (!st)
		return null_src(ir);
	u = tg_st_uop(ir, st);
	tg_st_free(st);
	return u;
}

tg_uop *tg_ast_load(tg_ir *ir, int buf, tg_dtype dt, tg_st *st)
{
	tg_uop *s = st_node(ir, st), *src[2];

	if (!s)
		return NULL;
	if (!dtype_ok(dt))
		return fail(ir, TG_EINVAL, "ast_load: bad dtype %d",
		           (int)dt);
	if (buf < 0)
		return fail(ir, TG_EINVAL, "ast_load: bad buffer index "
		           "%d", buf);
	src[0] = global(ir, buf, dt);
	src[1] = s;
	return tg_uop_new(ir, TG_LOAD, dt, src, 2, NULL);
}

tg_uop *tg_ast_const(tg_ir *ir, tg_dtype dt, tg_scalar v, tg_st *st)
{
	tg_uop *s = st_node(ir, st);
	tg_arg a;

	if (!s)
		return NULL;
	if (!dtype_ok(dt))
		return fail(ir, TG_EINVAL, "ast_const: bad dtype %d",
		           (int)dt);
	/* equal constants must be one node, so store them as the kind
	 * holds them (ints wrapped, floats rounded) */
	memset(&a, 0, sizeof a);
	if (tg_scalar_is_float(dt))
		a.v.f = tg_float_round(v.f, dt);
	else
		a.v = tg_scalar_from_int(v.i, dt);
	return tg_uop_new(ir, TG_CONST, dt, &s, 1, &a);
}

/* The result dtype of op on s[0..n-1], or -1 after recording why the
 * operands do not fit it. */
static int alu_type(tg_ir *ir, unsigned op, tg_uop *const *s, unsigned n)
{
	const char *name = tg_op_name(op);
	unsigned i, first = op == TG_WHERE;
	tg_dtype dt = tg_type_scalar(s[first]->dtype);

	if (op == TG_WHERE && s[0]->dtype != TG_BOOL) {
		fail(ir, TG_EINVAL, "ast_alu: WHERE condition is %s, not "
		    "bool", tg_dtype_name(tg_type_scalar(s[0]->dtype)));
		return -1;
	}
	for (i = first + 1; i < n; i++)
		if (s[i]->dtype != dt) {
			fail(ir, TG_EINVAL, "ast_alu: %s operands %s and %s "
			    "differ", name, tg_dtype_name(dt),
			    tg_dtype_name(tg_type_scalar(s[i]->dtype)));
			return -1;
		}
	if ((tg_op_flags(op) & TG_OPF_INT) && tg_scalar_is_float(dt)) {
		fail(ir, TG_EINVAL, "ast_alu: %s needs int operands, not "
		    "%s", name, tg_dtype_name(dt));
		return -1;
	}
	return tg_op_flags(op) & TG_OPF_CMP ? TG_BOOL : (int)dt;
}

tg_uop *tg_ast_alu(tg_ir *ir, unsigned op, tg_uop *a, tg_uop *b, tg_uop *c)
{
	tg_uop *s[3] = { a, b, c };
	unsigned n = tg_op_arity(op), i;
	int dt;

	if (n == 0)
		return fail(ir, TG_EINVAL, "ast_alu: %s is not an ALU op",
		           tg_op_name(op));
	for (i = 0; i < n; i++)
		if (operand(ir, s[i], "ast_alu"))
			return NULL;
	for (i = n; i < 3; i++)
		if (s[i])
			return fail(ir, TG_EINVAL, "ast_alu: %s takes %u "
			           "operand%s", tg_op_name(op), n,
			           n == 1 ? "" : "s");
	if ((dt = alu_type(ir, op, s, n)) < 0)
		return NULL;
	return tg_uop_new(ir, op, (tg_type)dt, s, n, NULL);
}

/* CAST and BITCAST: one source, a new dtype. */
static tg_uop *convert(tg_ir *ir, unsigned op, tg_uop *a, tg_dtype dt,
                       const char *name)
{
	if (operand(ir, a, name))
		return NULL;
	if (!dtype_ok(dt))
		return fail(ir, TG_EINVAL, "%s: bad dtype %d", name,
		           (int)dt);
	if (op == TG_BITCAST &&
	    tg_dtype_size(dt) != tg_dtype_size(tg_type_scalar(a->dtype)))
		return fail(ir, TG_EINVAL, "%s: %s and %s differ in size",
		           name, tg_dtype_name(tg_type_scalar(a->dtype)),
		           tg_dtype_name(dt));
	return tg_uop1(ir, op, dt, a);
}

tg_uop *tg_ast_cast(tg_ir *ir, tg_uop *a, tg_dtype dt)
{
	return convert(ir, TG_CAST, a, dt, "ast_cast");
}

tg_uop *tg_ast_bitcast(tg_ir *ir, tg_uop *a, tg_dtype dt)
{
	return convert(ir, TG_BITCAST, a, dt, "ast_bitcast");
}

tg_uop *tg_ast_reduce(tg_ir *ir, unsigned op, tg_uop *a, uint32_t axes)
{
	size_t ndim;
	tg_arg arg;

	if (operand(ir, a, "ast_reduce"))
		return NULL;
	if (op != TG_ADD && op != TG_MAX)
		return fail(ir, TG_EINVAL, "ast_reduce: %s is not ADD or "
		           "MAX", tg_op_name(op));
	ndim = ast_ndim(a);
	/* a reduce over nothing is a copy: the scheduler never makes one */
	if (!axes || (ndim < 32 && axes >> ndim))
		return fail(ir, TG_EINVAL, "ast_reduce: axes 0x%x outside "
		           "the %zu dims", (unsigned)axes, ndim);
	memset(&arg, 0, sizeof arg);
	arg.v.i = op;
	arg.a = axes;
	return tg_uop_new(ir, TG_REDUCE_AXIS, a->dtype, &a, 1, &arg);
}

tg_uop *tg_ast_store(tg_ir *ir, int buf, tg_uop *value, tg_st *st)
{
	tg_uop *s = st_node(ir, st), *src[3];

	if (operand(ir, value, "ast_store") || !s)
		return NULL;
	if (buf < 0)
		return fail(ir, TG_EINVAL, "ast_store: bad buffer index "
		           "%d", buf);
	if ((size_t)s->src[s->nsrc - 1]->arg.a != ast_ndim(value))
		return fail(ir, TG_EINVAL, "ast_store: st has %zu dims, "
		           "the value %zu",
		           (size_t)s->src[s->nsrc - 1]->arg.a,
		           ast_ndim(value));
	src[0] = global(ir, buf, tg_type_scalar(value->dtype));
	src[1] = s;
	src[2] = value;
	return tg_uop_new(ir, TG_STORE, TG_VOID, src, 3, NULL);
}

tg_uop *tg_ast_sink(tg_ir *ir, tg_uop *const *stores, size_t n)
{
	size_t i;

	if (n == 0 || n > UINT32_MAX)
		return fail(ir, TG_EINVAL, "ast_sink: %zu stores", n);
	for (i = 0; i < n; i++) {
		if (!stores[i])
			return null_src(ir);
		/* outputs come first, in order: codegen numbers buffers by
		 * this */
		if (stores[i]->op != TG_STORE || tg_ast_buf(stores[i]) != (int)i)
			return fail(ir, TG_EINVAL, "ast_sink: source %zu is "
			           "not a STORE to buf%zu", i, i);
	}
	return tg_uop_new(ir, TG_SINK, TG_VOID, stores, n, NULL);
}

/* ------------------------------------------------------------- reading */

/* Whether u is a node of the AST proper, not part of a tracker (its
 * constants and symbolic index math, TG_INDEX) or a buffer: what the
 * walks and the text show. */
static int is_ast_node(const tg_uop *u)
{
	return u->op != TG_SHAPETRACKER && u->op != TG_VIEW &&
	       u->op != TG_DEFINE_GLOBAL &&
	       !(u->op == TG_CONST && u->nsrc == 0) &&
	       tg_type_scalar(u->dtype) != TG_INDEX;
}

tg_uop **tg_ast_toposort(const tg_uop *sink, size_t *n)
{
	size_t all, k = 0;
	tg_uop **order = tg_uop_toposort(sink, &all);

	if (!order)
		return NULL;
	for (size_t i = 0; i < all; i++)
		if (is_ast_node(order[i]))
			order[k++] = order[i];
	*n = k;
	return order;
}

/* Keeps, per axis, the largest extent (symbolic ones at their maximum,
 * so a symbolic axis wins over a broadcast 1). */
static int widen(size_t *ndim, tg_sint *shape, const tg_uop *view)
{
	size_t i, nd = (size_t)view->arg.a;

	if (*ndim == (size_t)-1) {
		*ndim = nd;
		for (i = 0; i < nd; i++)
			shape[i] = tg_sint_of(view->src[i]);
		return 0;
	}
	if (nd != *ndim)
		return tg_error(TG_EINVAL, "ast_full_shape: sts of %zu and "
		                "%zu dims", *ndim, nd);
	for (i = 0; i < nd; i++)
		if (view->src[i]->vmax > tg_sint_vmax(shape[i]))
			shape[i] = tg_sint_of(view->src[i]);
	return 0;
}

int tg_ast_full_shape(const tg_uop *sink, size_t *ndim, tg_sint *shape)
{
	tg_uop **order;
	size_t n, i, nd = (size_t)-1;
	int rc = 0;

	if (!sink)
		return tg_error(TG_EINVAL, "ast_full_shape: NULL sink");
	if (!(order = tg_ast_toposort(sink, &n)))
		return TG_ENOMEM;
	for (i = 0; i < n && rc == 0; i++)
		if (tg_ast_st_node(order[i])) {
			const tg_uop *st = tg_ast_st_node(order[i]);
			rc = widen(&nd, shape, st->src[st->nsrc - 1]);
		}
	free(order);
	if (rc == 0 && nd == (size_t)-1)
		rc = tg_error(TG_EINVAL, "ast_full_shape: no shape tracker");
	if (rc == 0)
		*ndim = nd;
	return rc;
}

/* What the node is, without its sources. */
static void format_head(tg_strbuf *sb, const tg_uop *a)
{
	unsigned s = tg_type_scalar(a->dtype);
	char buf[64];
	const char *sep = "";

	if (tg_op_arity(a->op))
		tg_strbuf_addf(sb, "ALU %s", tg_op_name(a->op));
	else if (a->op == TG_REDUCE_AXIS)
		tg_strbuf_addf(sb, "REDUCE %s", tg_op_name((unsigned)a->arg.v.i));
	else
		tg_strbuf_add(sb, tg_op_name(a->op));
	if (a->op == TG_STORE)
		s = tg_type_scalar(a->src[2]->dtype);
	if (a->op != TG_SINK)
		tg_strbuf_addf(sb, " %s", tg_dtype_name(s));
	if (a->op == TG_LOAD || a->op == TG_STORE)
		tg_strbuf_addf(sb, " buf%d", tg_ast_buf(a));
	if (a->op == TG_CONST)
		tg_strbuf_addf(sb, " %s", tg_scalar_format(a->arg.v, s, buf,
		                                            sizeof buf));
	if (a->op == TG_REDUCE_AXIS) {
		tg_strbuf_add(sb, " axes(");
		for (unsigned i = 0; i < 32; i++)
			if ((uint64_t)a->arg.a >> i & 1) {
				tg_strbuf_addf(sb, "%s%u", sep, i);
				sep = ",";
			}
		tg_strbuf_add(sb, ")");
	}
}

/* One line; sources by their position in the order (pos maps a node
 * to its position + 1), so the text depends only on the structure. */
static int format_node(tg_strbuf *sb, const tg_uop *a, size_t i,
                       tg_ptrmap *pos)
{
	const tg_uop *stn = tg_ast_st_node(a);
	tg_st *st;
	char *text;

	if (tg_ptrmap_put(pos, a, (void *)(uintptr_t)(i + 1)) < 0)
		return -1;
	tg_strbuf_addf(sb, "%%%zu ", i);
	format_head(sb, a);
	if (stn) {
		st = tg_st_of_uop(stn);
		text = st ? tg_st_format(st) : NULL;
		tg_st_free(st);
		if (!text)
			return -1;
		tg_strbuf_addf(sb, " %s", text);
		free(text);
	}
	for (uint32_t j = 0; j < a->nsrc; j++)
		if (is_ast_node(a->src[j]))
			tg_strbuf_addf(sb, " %%%zu",
			               (size_t)(uintptr_t)tg_ptrmap_get(pos,
			               a->src[j]) - 1);
	tg_strbuf_add(sb, "\n");
	return 0;
}

char *tg_ast_format(const tg_uop *sink)
{
	tg_ptrmap pos = { 0 };
	tg_uop **order;
	size_t n, i;
	tg_strbuf sb;
	char *s = NULL;
	int err = 0;

	if (!(order = tg_ast_toposort(sink, &n)))
		return NULL;
	tg_strbuf_init(&sb);
	for (i = 0; i < n && !err; i++)
		err = format_node(&sb, order[i], i, &pos);
	if (!err)
		s = tg_strbuf_finish(&sb);
	tg_strbuf_release(&sb);
	if (!s)
		tg_error_oom("ast_format");
	tg_ptrmap_free(&pos);
	free(order);
	return s;
}

/* ------------------------------------------------ the decoded kernel */

void tg_kernel_close(tg_kernel *k)
{
	if (!k->st)
		goto out_order;
	for (size_t i = 0; i < k->nid; i++)
		tg_st_free(k->st[i]);
	free(k->st);
out_order:
	free(k->order);
	memset(k, 0, sizeof *k);
}

/* Decodes the tracker of every node of the order that has one. */
static int decode_sts(tg_kernel *k)
{
	k->nid = tg_ir_count(k->ir);
	if (!(k->st = calloc(k->nid, sizeof *k->st)))
		return tg_error_oom("kernel");
	for (size_t i = 0; i < k->n; i++) {
		const tg_uop *u = k->order[i], *stn = tg_ast_st_node(u);
		if (stn && !(k->st[u->id] = tg_st_of_uop(stn)))
			return tg_last_status();
	}
	return TG_OK;
}

/* ------------------------------------------------- merging axes */

/* Fewer axes mean fewer loops and index terms, and a long axis to
 * vectorize where two short ones could not be (a convolution's 20x20
 * image is one axis of 400): tinygrad's simplify_ones and
 * simplify_merge_adjacent, before any opt, so opts name the merged
 * axes. */
typedef struct mg_ctx {
	size_t nd, ng;
	tg_sint full[TG_MAX_DIMS];
	int group[TG_MAX_DIMS];     /* the new axis of each old one */
	uint32_t reduces[TG_MAX_DIMS]; /* the distinct reduce masks */
	size_t nred;
	tg_st **st;                 /* by tracker node id: decoded once */
	const tg_uop **stn;         /* the tracker nodes, nstn of them */
	size_t nstn;
} mg_ctx;

static int full_mask(const tg_view *v, size_t i)
{
	return !v->mask || (tg_sint_is(v->mask[2 * i], 0) &&
	                    tg_sint_eq(v->mask[2 * i + 1], v->shape[i]));
}

/* Whether axis i of view v reads on from the group of axes before it
 * (group[j] for j < i) as one axis: the group's innermost stride (of
 * its last axis longer than 1) is i's extent times i's stride (or both
 * are 0), and neither is masked.  Axes of extent 1 always join. */
static int view_merges(const tg_view *v, const int *group, size_t i)
{
	tg_sint s = v->strides[i], last;
	size_t j = i;

	if (!full_mask(v, i) || !tg_sint_is_int(s) ||
	    !tg_sint_is_int(v->shape[i]))
		return 0;
	if (tg_sint_is(v->shape[i], 1))
		return 1;
	while (j-- > 0 && group[j] == group[i - 1] &&
	       tg_sint_is(v->shape[j], 1))
		;
	if (j == (size_t)-1 || group[j] != group[i - 1])
		return 1;  /* the group is all 1s */
	last = v->strides[j];
	if (!full_mask(v, j) || !tg_sint_is_int(last))
		return 0;
	return s.c ? last.c == v->shape[i].c * s.c : last.c == 0;
}

static int axis_merges(const mg_ctx *c, size_t i)
{
	if (!tg_sint_is_int(c->full[i]) || !tg_sint_is_int(c->full[i - 1]))
		return 0;
	for (size_t r = 0; r < c->nred; r++)
		if (((c->reduces[r] >> i) ^ (c->reduces[r] >> (i - 1))) & 1)
			return 0;
	for (size_t j = 0; j < c->nstn; j++) {
		const tg_st *st = c->st[c->stn[j]->id];
		if (!view_merges(st->views[st->nviews - 1], c->group, i))
			return 0;
	}
	return 1;
}

/* The st of a tracker node, reshaped to the merged axes (its own
 * extents multiplied per group). */
static tg_uop *merged_st(tg_ir *ir, const mg_ctx *c, const tg_st *st)
{
	tg_sint shape[TG_MAX_DIMS];
	const tg_sint *old = tg_st_shape(st);
	tg_st *r;
	tg_uop *u;

	for (size_t g = 0; g < c->ng; g++)
		shape[g] = tg_si(1);
	for (size_t i = 0; i < c->nd; i++)
		shape[c->group[i]] = tg_sint_mul(ir, shape[c->group[i]], old[i]);
	if (!(r = tg_st_reshape(ir, st, c->ng, shape)))
		return NULL;
	u = tg_st_uop(ir, r);
	tg_st_free(r);
	return u;
}

static uint32_t merged_axes(const mg_ctx *c, uint32_t axes)
{
	uint32_t r = 0;

	for (size_t i = 0; i < c->nd; i++)
		if ((axes >> i) & 1)
			r |= 1u << c->group[i];
	return r;
}

/* The AST with every node rebuilt over the merged trackers. */
static tg_uop *rebuild(tg_ir *ir, const mg_ctx *c, tg_uop *sink)
{
	size_t n = 0, nid = tg_ir_count(ir), most = 1;
	tg_uop **all = tg_uop_toposort(sink, &n), **map, **src = NULL;
	tg_uop *r = NULL;

	for (size_t i = 0; all && i < n; i++)
		most = all[i]->nsrc > most ? all[i]->nsrc : most;
	map = calloc(nid ? nid : 1, sizeof *map);
	src = malloc(most * sizeof *src);
	if (!all || !map || !src) {
		tg_ir_fail(ir, TG_ENOMEM, "kernel: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		tg_uop *u = all[i];
		tg_arg a = u->arg;

		if (u->op == TG_SHAPETRACKER) {
			map[u->id] = c->st[u->id]
			             ? merged_st(ir, c, c->st[u->id])
			             : tg_ir_fail(ir, TG_EINTERNAL, "kernel: "
			                          "merging axes: tracker %%%u "
			                          "of no load or store",
			                          (unsigned)u->id);
		} else {
			for (uint32_t j = 0; j < u->nsrc; j++)
				src[j] = map[u->src[j]->id];
			if (u->op == TG_REDUCE_AXIS)
				a.a = merged_axes(c, tg_ast_reduce_axes(u));
			map[u->id] = tg_uop_new(ir, u->op, u->dtype, src, u->nsrc,
			                        &a);
		}
		if (!map[u->id])
			goto out;
	}
	r = map[sink->id];
out:
	free(all);
	free(map);
	free(src);
	return r;
}

/* The AST's trackers into c (by tracker node id, each once) and its
 * reduce masks. */
static int decode(mg_ctx *c, tg_uop *const *order, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const tg_uop *stn = tg_ast_st_node(order[i]);
		if (stn && !c->st[stn->id]) {
			if (!(c->st[stn->id] = tg_st_of_uop(stn)))
				return tg_last_status() ? tg_last_status()
				                        : tg_error_oom("tracker");
			c->stn[c->nstn++] = stn;
		}
		if (order[i]->op == TG_REDUCE_AXIS && c->nred < TG_MAX_DIMS)
			c->reduces[c->nred++] = tg_ast_reduce_axes(order[i]);
	}
	return TG_OK;
}

/* sink with its mergeable axes merged (sink itself when none are), or
 * NULL with the error in ir. */
static tg_uop *merge_axes(tg_ir *ir, tg_uop *sink)
{
	mg_ctx c = { 0 };
	size_t n = 0, i;
	tg_uop **order = tg_ast_toposort(sink, &n), *r = sink;
	int rc;

	c.st = calloc(tg_ir_count(ir), sizeof *c.st);
	c.stn = malloc((n ? n : 1) * sizeof *c.stn);
	if (!order || !c.st || !c.stn)
		rc = tg_error_oom("tables");
	else if (!(rc = tg_ast_full_shape(sink, &c.nd, c.full)))
		rc = decode(&c, order, n);
	if (rc) {
		tg_ir_fail(ir, rc, "kernel: merging axes: %s", tg_last_error());
		r = NULL;
		goto out;
	}
	for (i = 0; i < c.nd; i++) {
		if (i && axis_merges(&c, i))
			c.group[i] = c.group[i - 1];
		else
			c.group[i] = (int)c.ng++;
	}
	if (c.ng < c.nd)
		r = rebuild(ir, &c, sink);
out:
	for (i = 0; i < c.nstn; i++)
		tg_st_free(c.st[c.stn[i]->id]);
	free(c.st);
	free(c.stn);
	free(order);
	return r;
}

int tg_kernel_open(tg_kernel *k, tg_ir *ir, const tg_uop *ast)
{
	int rc;

	memset(k, 0, sizeof *k);
	k->ir = ir;
	if (!(k->sink = tg_uop_import(ir, ast)))
		return tg_ir_status(ir) ? tg_ir_status(ir) : TG_ENOMEM;
	if (k->sink->op != TG_SINK)
		return tg_error(TG_EINVAL, "kernel: the AST's root is a %s, "
		                "not a SINK", tg_op_name(k->sink->op));
	if (!(k->sink = merge_axes(ir, k->sink)))
		return tg_ir_status(ir) ? tg_ir_status(ir) : TG_ENOMEM;
	if (!(k->order = tg_ast_toposort(k->sink, &k->n)))
		return TG_ENOMEM;
	if ((rc = decode_sts(k)))
		tg_kernel_close(k);
	return rc;
}

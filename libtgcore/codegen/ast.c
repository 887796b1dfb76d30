/*
 * ast.c - the kernel AST the scheduler hands to codegen (tinygrad's
 * LazyOp tree): checked builders, the full shape, the canonical text the
 * method cache keys on, and the topological walk.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"

tg_kast *tg_kast_new(void)
{
	tg_kast *k = calloc(1, sizeof *k);

	if (!k) {
		tg_error_oom("kast_new");
		return NULL;
	}
	tg_arena_init(&k->arena);
	return k;
}

void tg_kast_free(tg_kast *k)
{
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->sts.n; i++)
		tg_st_free(k->sts.v[i]);
	TG_VEC_FREE(&k->sts);
	tg_arena_free(&k->arena);
	free(k);
}

/* Records the first error of the kast and sets tg_last_error; returns
 * NULL so a builder can `return fail(...)`. */
static tg_ast *fail(tg_kast *k, int status, const char *fmt, ...)
	TG_PRINTF(3, 4);
static tg_ast *fail(tg_kast *k, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tg_verror(status, fmt, ap);
	va_end(ap);
	if (k->status == TG_OK)
		k->status = status;
	return NULL;
}

/* Out of memory in op: the message is static, the status sticks. */
static tg_ast *oom(tg_kast *k, const char *op)
{
	int status = tg_error_oom(op);

	if (k->status == TG_OK)
		k->status = status;
	return NULL;
}

/* A NULL source already has its message (from the builder or movement op
 * that failed); only make sure the kast remembers that it failed. */
static tg_ast *null_src(tg_kast *k)
{
	if (k->status == TG_OK)
		k->status = tg_last_status() ? tg_last_status() : TG_EINVAL;
	return NULL;
}

/* Takes ownership of st first, so that every exit path frees it with the
 * kast.  0, or -1 (st freed, error recorded) on OOM. */
static int own_st(tg_kast *k, tg_st *st, const char *op)
{
	if (!st || TG_VEC_PUSH(&k->sts, st) == 0)
		return 0;
	tg_st_free(st);
	oom(k, op);
	return -1;
}

/* A zeroed node with room for nsrc sources; the next id. */
static tg_ast *node(tg_kast *k, unsigned kind, tg_dtype dt, uint32_t nsrc,
                    const char *op)
{
	tg_ast *a = tg_arena_alloc(&k->arena, sizeof *a);
	tg_ast **src = nsrc ? tg_arena_alloc(&k->arena, nsrc * sizeof *src)
	                    : NULL;

	if (!a || (nsrc && !src))
		return oom(k, op);
	memset(a, 0, sizeof *a);
	a->kind = (uint8_t)kind;
	a->dtype = dt;
	a->nsrc = nsrc;
	a->src = src;
	a->id = k->count++;
	return a;
}

/* 0 when a is a value an operator can take; else -1, with the NULL
 * passed on or a STORE/SINK refused. */
static int operand(tg_kast *k, const tg_ast *a, const char *op)
{
	if (!a) {
		null_src(k);
		return -1;
	}
	if (a->kind == TG_AST_STORE || a->kind == TG_AST_SINK) {
		fail(k, TG_EINVAL, "%s: operand is a %s, not a value", op,
		     a->kind == TG_AST_STORE ? "STORE" : "SINK");
		return -1;
	}
	return 0;
}

static int dtype_ok(tg_dtype dt)
{
	return (unsigned)dt < TG_NDTYPES;
}

/* The ndim of the kernel below a: every path down src[0] ends at a
 * LOAD or CONST, whose st has the kernel's ndim. */
static size_t ast_ndim(const tg_ast *a)
{
	while (!a->st)
		a = a->src[0];
	return tg_st_ndim(a->st);
}

/* LOAD and CONST share everything but the value. */
static tg_ast *leaf(tg_kast *k, unsigned kind, int buf, tg_dtype dt,
                    tg_st *st, const char *op)
{
	tg_ast *a;

	if (own_st(k, st, op))
		return NULL;
	if (!st)
		return null_src(k);
	if (!dtype_ok(dt))
		return fail(k, TG_EINVAL, "%s: bad dtype %d", op, (int)dt);
	if (kind == TG_AST_LOAD && buf < 0)
		return fail(k, TG_EINVAL, "%s: bad buffer index %d", op, buf);
	if (!(a = node(k, kind, dt, 0, op)))
		return NULL;
	a->buf = buf;
	a->st = st;
	return a;
}

tg_ast *tg_ast_load(tg_kast *k, int buf, tg_dtype dt, tg_st *st)
{
	return leaf(k, TG_AST_LOAD, buf, dt, st, "ast_load");
}

tg_ast *tg_ast_const(tg_kast *k, tg_dtype dt, tg_scalar v, tg_st *st)
{
	tg_ast *a = leaf(k, TG_AST_CONST, 0, dt, st, "ast_const");

	if (!a)
		return NULL;
	/* equal constants must print equal, so store them as the kind
	 * holds them (ints wrapped, floats rounded) */
	if (tg_scalar_is_float(dt))
		a->value.f = tg_float_round(v.f, dt);
	else
		a->value = tg_scalar_from_int(v.i, dt);
	return a;
}

/* The result dtype of op on src[0..n-1], or -1 after recording why the
 * operands do not fit it. */
static int alu_type(tg_kast *k, unsigned op, tg_ast *const *s, unsigned n)
{
	const char *name = tg_op_name(op);
	unsigned i, first = op == TG_WHERE;
	tg_dtype dt = s[first]->dtype;

	if (op == TG_WHERE && s[0]->dtype != TG_BOOL) {
		fail(k, TG_EINVAL, "ast_alu: WHERE condition is %s, not bool",
		     tg_dtype_name(s[0]->dtype));
		return -1;
	}
	for (i = first + 1; i < n; i++)
		if (s[i]->dtype != dt) {
			fail(k, TG_EINVAL, "ast_alu: %s operands %s and %s "
			     "differ", name, tg_dtype_name(dt),
			     tg_dtype_name(s[i]->dtype));
			return -1;
		}
	if ((tg_op_flags(op) & TG_OPF_INT) && tg_scalar_is_float(dt)) {
		fail(k, TG_EINVAL, "ast_alu: %s needs int operands, not %s",
		     name, tg_dtype_name(dt));
		return -1;
	}
	return tg_op_flags(op) & TG_OPF_CMP ? TG_BOOL : (int)dt;
}

tg_ast *tg_ast_alu(tg_kast *k, unsigned op, tg_ast *a, tg_ast *b,
                   tg_ast *c)
{
	tg_ast *s[3] = { a, b, c }, *r;
	unsigned n = tg_op_arity(op), i;
	int dt;

	if (n == 0)
		return fail(k, TG_EINVAL, "ast_alu: %s is not an ALU op",
		            tg_op_name(op));
	for (i = 0; i < n; i++)
		if (operand(k, s[i], "ast_alu"))
			return NULL;
	for (i = n; i < 3; i++)
		if (s[i])
			return fail(k, TG_EINVAL, "ast_alu: %s takes %u "
			            "operand%s", tg_op_name(op), n,
			            n == 1 ? "" : "s");
	if ((dt = alu_type(k, op, s, n)) < 0 ||
	    !(r = node(k, TG_AST_ALU, (tg_dtype)dt, n, "ast_alu")))
		return NULL;
	r->op = (uint16_t)op;
	memcpy(r->src, s, n * sizeof *s);
	return r;
}

/* CAST and BITCAST: one source, a new dtype. */
static tg_ast *convert(tg_kast *k, unsigned kind, tg_ast *a, tg_dtype dt,
                       const char *op)
{
	tg_ast *r;

	if (operand(k, a, op))
		return NULL;
	if (!dtype_ok(dt))
		return fail(k, TG_EINVAL, "%s: bad dtype %d", op, (int)dt);
	if (kind == TG_AST_BITCAST &&
	    tg_dtype_size(dt) != tg_dtype_size(a->dtype))
		return fail(k, TG_EINVAL, "%s: %s and %s differ in size", op,
		            tg_dtype_name(a->dtype), tg_dtype_name(dt));
	if (!(r = node(k, kind, dt, 1, op)))
		return NULL;
	r->src[0] = a;
	return r;
}

tg_ast *tg_ast_cast(tg_kast *k, tg_ast *a, tg_dtype dt)
{
	return convert(k, TG_AST_CAST, a, dt, "ast_cast");
}

tg_ast *tg_ast_bitcast(tg_kast *k, tg_ast *a, tg_dtype dt)
{
	return convert(k, TG_AST_BITCAST, a, dt, "ast_bitcast");
}

tg_ast *tg_ast_reduce(tg_kast *k, unsigned op, tg_ast *a, uint32_t axes)
{
	size_t ndim;
	tg_ast *r;

	if (operand(k, a, "ast_reduce"))
		return NULL;
	if (op != TG_ADD && op != TG_MAX)
		return fail(k, TG_EINVAL, "ast_reduce: %s is not ADD or MAX",
		            tg_op_name(op));
	ndim = ast_ndim(a);
	/* a reduce over nothing is a copy: the scheduler never makes one */
	if (!axes || (ndim < 32 && axes >> ndim))
		return fail(k, TG_EINVAL, "ast_reduce: axes 0x%x outside the "
		            "%zu dims", (unsigned)axes, ndim);
	if (!(r = node(k, TG_AST_REDUCE, a->dtype, 1, "ast_reduce")))
		return NULL;
	r->op = (uint16_t)op;
	r->axes = axes;
	r->src[0] = a;
	return r;
}

tg_ast *tg_ast_store(tg_kast *k, int buf, tg_ast *value, tg_st *st)
{
	tg_ast *r;

	if (own_st(k, st, "ast_store"))
		return NULL;
	if (operand(k, value, "ast_store"))
		return NULL;
	if (!st)
		return null_src(k);
	if (buf < 0)
		return fail(k, TG_EINVAL, "ast_store: bad buffer index %d",
		            buf);
	if (tg_st_ndim(st) != ast_ndim(value))
		return fail(k, TG_EINVAL, "ast_store: st has %zu dims, the "
		            "value %zu", tg_st_ndim(st), ast_ndim(value));
	if (!(r = node(k, TG_AST_STORE, value->dtype, 1, "ast_store")))
		return NULL;
	r->buf = buf;
	r->st = st;
	r->src[0] = value;
	return r;
}

tg_ast *tg_ast_sink(tg_kast *k, tg_ast *const *stores, size_t n)
{
	tg_ast *r;
	size_t i;

	if (n == 0 || n > UINT32_MAX)
		return fail(k, TG_EINVAL, "ast_sink: %zu stores", n);
	for (i = 0; i < n; i++) {
		if (!stores[i])
			return null_src(k);
		/* outputs come first, in order: codegen numbers buffers by
		 * this */
		if (stores[i]->kind != TG_AST_STORE ||
		    stores[i]->buf != (int32_t)i)
			return fail(k, TG_EINVAL, "ast_sink: source %zu "
			            "is not a STORE to buf%zu", i, i);
	}
	if (!(r = node(k, TG_AST_SINK, TG_BOOL, (uint32_t)n, "ast_sink")))
		return NULL;
	memcpy(r->src, stores, n * sizeof *stores);
	return k->sink = r;
}

/* Sources are built before their users, so every node under root has an
 * id no larger than root's: one bitmap of root->id + 1 bits covers the
 * walk (as in tg_uop_toposort). */
typedef struct frame {
	const tg_ast *a;
	uint32_t next;  /* next source to visit */
} frame;

static int seen_test_set(unsigned char *seen, uint32_t id)
{
	unsigned char bit = (unsigned char)(1u << (id % 8));
	int was = (seen[id / 8] & bit) != 0;

	seen[id / 8] |= bit;
	return was;
}

tg_ast **tg_ast_toposort(const tg_ast *sink, size_t *n)
{
	unsigned char *seen = calloc(((size_t)sink->id + 8) / 8, 1);
	TG_VEC(frame) stack = { 0 };
	TG_VEC(tg_ast *) out = { 0 };
	int err = !seen || TG_VEC_PUSH(&stack, ((frame){ sink, 0 }));

	if (seen)
		seen_test_set(seen, sink->id);
	while (!err && stack.n) {
		frame *f = &stack.v[stack.n - 1];
		const tg_ast *s;

		if (f->next == f->a->nsrc) {
			err = TG_VEC_PUSH(&out, (tg_ast *)f->a);
			stack.n--;
			continue;
		}
		s = f->a->src[f->next++];
		if (!seen_test_set(seen, s->id))
			err = TG_VEC_PUSH(&stack, ((frame){ s, 0 }));
	}
	free(seen);
	TG_VEC_FREE(&stack);
	/* the extra NULL keeps a one-node result from being a NULL array */
	if (err || TG_VEC_PUSH(&out, NULL)) {
		TG_VEC_FREE(&out);
		tg_error_oom("ast_toposort");
		return NULL;
	}
	*n = out.n - 1;
	return out.v;
}

/* Keeps, per axis, the largest extent (symbolic ones at their maximum,
 * so a symbolic axis wins over a broadcast 1). */
static int widen(size_t *ndim, tg_sint *shape, const tg_st *st)
{
	const tg_sint *s = tg_st_shape(st);
	size_t i, nd = tg_st_ndim(st);

	if (*ndim == (size_t)-1) {
		*ndim = nd;
		if (nd)
			memcpy(shape, s, nd * sizeof *s);
		return 0;
	}
	if (nd != *ndim)
		return tg_error(TG_EINVAL, "ast_full_shape: sts of %zu and "
		                "%zu dims", *ndim, nd);
	for (i = 0; i < nd; i++)
		if (tg_sint_vmax(s[i]) > tg_sint_vmax(shape[i]))
			shape[i] = s[i];
	return 0;
}

int tg_ast_full_shape(const tg_ast *sink, size_t *ndim, tg_sint *shape)
{
	tg_ast **order;
	size_t n, i, nd = (size_t)-1;
	int rc = 0;

	if (!sink)
		return tg_error(TG_EINVAL, "ast_full_shape: NULL sink");
	if (!(order = tg_ast_toposort(sink, &n)))
		return TG_ENOMEM;
	for (i = 0; i < n && rc == 0; i++)
		if (order[i]->st)
			rc = widen(&nd, shape, order[i]->st);
	free(order);
	if (rc == 0 && nd == (size_t)-1)
		rc = tg_error(TG_EINVAL, "ast_full_shape: no shape tracker");
	if (rc == 0)
		*ndim = nd;
	return rc;
}

static const char *const kind_name[] = {
	"SINK", "STORE", "LOAD", "CONST", "ALU", "CAST", "BITCAST", "REDUCE"
};

/* What the node is, without its sources. */
static void format_head(tg_strbuf *sb, const tg_ast *a)
{
	char buf[64];
	const char *sep = "";
	unsigned i;

	tg_strbuf_add(sb, kind_name[a->kind]);
	if (a->kind == TG_AST_ALU || a->kind == TG_AST_REDUCE)
		tg_strbuf_addf(sb, " %s", tg_op_name(a->op));
	if (a->kind != TG_AST_SINK)
		tg_strbuf_addf(sb, " %s", tg_dtype_name(a->dtype));
	if (a->kind == TG_AST_LOAD || a->kind == TG_AST_STORE)
		tg_strbuf_addf(sb, " buf%d", (int)a->buf);
	if (a->kind == TG_AST_CONST)
		tg_strbuf_addf(sb, " %s", tg_scalar_format(a->value, a->dtype,
		               buf, sizeof buf));
	if (a->kind == TG_AST_REDUCE) {
		tg_strbuf_add(sb, " axes(");
		for (i = 0; i < 32; i++)
			if (a->axes >> i & 1) {
				tg_strbuf_addf(sb, "%s%u", sep, i);
				sep = ",";
			}
		tg_strbuf_add(sb, ")");
	}
}

/* One line; sources by their position in the order, never by id or
 * pointer, so the text depends only on the structure. */
static int format_node(tg_strbuf *sb, const tg_ast *a, size_t pos,
                       const size_t *posof)
{
	char *st;
	uint32_t j;

	tg_strbuf_addf(sb, "%%%zu ", pos);
	format_head(sb, a);
	if (a->st) {
		if (!(st = tg_st_format(a->st)))
			return -1;
		tg_strbuf_addf(sb, " %s", st);
		free(st);
	}
	for (j = 0; j < a->nsrc; j++)
		tg_strbuf_addf(sb, " %%%zu", posof[a->src[j]->id]);
	tg_strbuf_add(sb, "\n");
	return 0;
}

char *tg_ast_format(const tg_ast *sink)
{
	tg_ast **order;
	size_t n, i, *posof;
	tg_strbuf sb;
	char *s = NULL;
	int err = 0;

	if (!(order = tg_ast_toposort(sink, &n)))
		return NULL;
	posof = malloc(((size_t)sink->id + 1) * sizeof *posof);
	tg_strbuf_init(&sb);
	for (i = 0; posof && i < n && !err; i++) {
		posof[order[i]->id] = i;
		err = format_node(&sb, order[i], i, posof);
	}
	if (posof && !err)
		s = tg_strbuf_finish(&sb);
	tg_strbuf_release(&sb);
	if (!s)
		tg_error_oom("ast_format");
	free(posof);
	free(order);
	return s;
}

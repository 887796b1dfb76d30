/*
 * uop.c - the IR node and its context: every node is interned (Lua's
 * internshrstr), so structurally equal nodes are one pointer, and lives
 * in its context's arena until tg_ir_free().
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

struct tg_ir {
	tg_arena arena;
	tg_uop **buckets;
	uint32_t nbuckets;  /* a power of two */
	uint32_t count;     /* nodes, and the next id */
	int status;         /* first error, sticky */
};

enum { MIN_BUCKETS = 256 };

/* ------------------------------------------------------------ op table */

static const struct {
	const char *name;
	unsigned char arity, flags;
} ops[] = {
#define TG_OP_ROW(nm, ar, fl) [TG_##nm] = { #nm, ar, fl },
	TG_OPS(TG_OP_ROW)
#undef TG_OP_ROW
};
_Static_assert(TG_ARRAY_LEN(ops) == TG_NOPS, "one row per op");

const char *tg_op_name(unsigned op)
{
	return op < TG_NOPS ? ops[op].name : "?";
}

unsigned tg_op_arity(unsigned op)
{
	return op < TG_NOPS ? ops[op].arity : 0;
}

unsigned tg_op_flags(unsigned op)
{
	return op < TG_NOPS ? ops[op].flags : 0;
}

/* ------------------------------------------------------------- context */

tg_ir *tg_ir_new(void)
{
	tg_ir *ir = calloc(1, sizeof *ir);

	if (!ir)
		goto fail;
	ir->buckets = calloc(MIN_BUCKETS, sizeof *ir->buckets);
	if (!ir->buckets)
		goto fail;
	ir->nbuckets = MIN_BUCKETS;
	tg_arena_init(&ir->arena);
	return ir;
fail:
	free(ir);
	tg_error_oom("ir_new");
	return NULL;
}

void tg_ir_free(tg_ir *ir)
{
	if (!ir)
		return;
	tg_arena_free(&ir->arena);
	free(ir->buckets);
	free(ir);
}

int tg_ir_status(const tg_ir *ir)
{
	return ir->status;
}

uint32_t tg_ir_count(const tg_ir *ir)
{
	return ir->count;
}

void tg_ir_clear_status(tg_ir *ir)
{
	ir->status = TG_OK;
}

tg_uop *tg_ir_fail(tg_ir *ir, int status, const char *fmt, ...)
{
	va_list ap;

	if (ir->status)
		return NULL;    /* the first error is the one to report */
	va_start(ap, fmt);
	tg_verror(status, fmt, ap);
	va_end(ap);
	ir->status = status;
	return NULL;
}

/* ------------------------------------------------------------- hashing */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15u;
	return h ^ (h >> 31);
}

/* Hashes the node's identity: op, dtype, arg bits and source addresses
 * (sources are interned already, so their address is their identity). */
static uint32_t hash_node(unsigned op, tg_type dt, tg_uop *const *src,
                          size_t nsrc, const tg_arg *arg)
{
	uint64_t h = mix(op, dt);
	size_t i;

	h = mix(h, arg->v.u);
	h = mix(h, (uint64_t)arg->a);
	h = mix(h, (uint64_t)arg->b);
	if (arg->name)
		h = mix(h, tg_hash_str(arg->name));
	for (i = 0; i < nsrc; i++)
		h = mix(h, (uint64_t)(uintptr_t)src[i]);
	/* murmur3's finalizer: the bucket takes the low bits, which the
	 * multiplications above leave poorly mixed */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdu;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53u;
	h ^= h >> 33;
	return (uint32_t)h;
}

static int same_arg(const tg_arg *a, const tg_arg *b)
{
	if (a->v.u != b->v.u || a->a != b->a || a->b != b->b)
		return 0;    /* v compares bitwise: -0.0 is not 0.0 */
	if (!a->name || !b->name)
		return a->name == b->name;
	return strcmp(a->name, b->name) == 0;
}

static int same_node(const tg_uop *u, unsigned op, tg_type dt,
                     tg_uop *const *src, size_t nsrc, const tg_arg *arg)
{
	return u->op == op && u->dtype == dt && u->nsrc == nsrc &&
	       (nsrc == 0 ||
	        memcmp(u->src, src, nsrc * sizeof *src) == 0) &&
	       same_arg(&u->arg, arg);
}

/* Doubles the bucket array; when that fails the old one stays and only
 * lookups get slower (SQLite's hash.c). */
static void rehash(tg_ir *ir)
{
	uint32_t n = ir->nbuckets * 2, i;
	tg_uop **nb = calloc(n, sizeof *nb);
	tg_uop *u, *next;

	if (!nb)
		return;
	for (i = 0; i < ir->nbuckets; i++) {
		for (u = ir->buckets[i]; u; u = next) {
			next = u->next;
			u->next = nb[u->hash & (n - 1)];
			nb[u->hash & (n - 1)] = u;
		}
	}
	free(ir->buckets);
	ir->buckets = nb;
	ir->nbuckets = n;
}

/* --------------------------------------------------------- constructors */

static tg_uop *alloc_node(tg_ir *ir, unsigned op, tg_type dt,
                          tg_uop *const *src, size_t nsrc,
                          const tg_arg *arg)
{
	tg_uop *u = tg_arena_alloc(&ir->arena,
	                           sizeof *u + nsrc * sizeof *src);

	if (!u)
		return NULL;
	u->op = (uint16_t)op;
	u->dtype = dt;
	u->nsrc = (uint32_t)nsrc;
	u->arg = *arg;
	if (arg->name && !(u->arg.name = tg_arena_strdup(&ir->arena,
	                                                  arg->name)))
		return NULL;
	if (nsrc)
		memcpy(u->src, src, nsrc * sizeof *src);
	tg_uop_set_bounds(u);
	return u;
}

tg_uop *tg_uop_new(tg_ir *ir, unsigned op, tg_type dt, tg_uop *const *src,
                   size_t nsrc, const tg_arg *arg)
{
	static const tg_arg zero;
	uint32_t h, b;
	tg_uop *u;
	size_t i;

	if (!arg)
		arg = &zero;
	for (i = 0; i < nsrc; i++) {
		if (!src[i])
			return tg_ir_fail(ir, TG_EINVAL, "uop_new: source "
			                  "%zu of %s is NULL", i, tg_op_name(op));
	}
	if (op >= TG_NOPS || nsrc > UINT32_MAX || ir->count == UINT32_MAX)
		return tg_ir_fail(ir, TG_EINVAL, "uop_new: bad node (op %u, "
		                  "%zu sources)", op, nsrc);
	h = hash_node(op, dt, src, nsrc, arg);
	b = h & (ir->nbuckets - 1);
	for (u = ir->buckets[b]; u; u = u->next) {
		if (u->hash == h && same_node(u, op, dt, src, nsrc, arg))
			return u;
	}
	if (!(u = alloc_node(ir, op, dt, src, nsrc, arg))) {
		tg_error_oom("uop_new");
		ir->status = ir->status ? ir->status : TG_ENOMEM;
		return NULL;
	}
	u->hash = h;
	u->id = ir->count++;
	u->next = ir->buckets[b];
	ir->buckets[b] = u;
	if (ir->count > ir->nbuckets)
		rehash(ir);
	return u;
}

tg_uop *tg_uop0(tg_ir *ir, unsigned op, tg_type dt, const tg_arg *arg)
{
	return tg_uop_new(ir, op, dt, NULL, 0, arg);
}

tg_uop *tg_uop1(tg_ir *ir, unsigned op, tg_type dt, tg_uop *a)
{
	return tg_uop_new(ir, op, dt, &a, 1, NULL);
}

tg_uop *tg_uop2(tg_ir *ir, unsigned op, tg_type dt, tg_uop *a, tg_uop *b)
{
	tg_uop *src[2] = { a, b };

	return tg_uop_new(ir, op, dt, src, 2, NULL);
}

tg_uop *tg_uop3(tg_ir *ir, unsigned op, tg_type dt, tg_uop *a, tg_uop *b,
                tg_uop *c)
{
	tg_uop *src[3] = { a, b, c };

	return tg_uop_new(ir, op, dt, src, 3, NULL);
}

tg_uop *tg_uop_alu(tg_ir *ir, unsigned op, tg_uop *a, tg_uop *b,
                   tg_uop *c)
{
	tg_uop *src[3] = { a, b, c };
	unsigned n = tg_op_arity(op), i;
	tg_type dt;

	if (n == 0)
		return tg_ir_fail(ir, TG_EINVAL, "uop_alu: %s is not an ALU op",
		                  tg_op_name(op));
	for (i = 0; i < n; i++) {
		if (!src[i])   /* tg_uop_new reports it */
			return tg_uop_new(ir, op, TG_VOID, src, n, NULL);
	}
	dt = op == TG_WHERE ? b->dtype : a->dtype;
	if (tg_op_flags(op) & TG_OPF_CMP)
		dt = tg_type_vec(TG_BOOL, tg_type_count(a->dtype));
	return tg_uop_new(ir, op, dt, src, n, NULL);
}

/* The value as the kind stores it: ints wrapped, floats rounded. */
static tg_scalar normalize(tg_scalar v, unsigned s)
{
	if (tg_scalar_is_float(s))
		v.f = tg_float_round(v.f, s);
	else if (s != TG_UINT64 && s != TG_INDEX && s < TG_NDTYPES)
		v = tg_scalar_from_int(v.i, s);
	return v;
}

tg_uop *tg_uop_const(tg_ir *ir, tg_type dt, tg_scalar v)
{
	tg_arg arg = { 0 };

	arg.v = normalize(v, tg_type_scalar(dt));
	return tg_uop0(ir, TG_CONST, dt, &arg);
}

tg_uop *tg_uop_const_int(tg_ir *ir, tg_type dt, int64_t v)
{
	tg_scalar x;

	if (tg_scalar_is_float(tg_type_scalar(dt)))
		x.f = (double)v;
	else
		x.i = v;
	return tg_uop_const(ir, dt, x);
}

tg_uop *tg_uop_const_float(tg_ir *ir, tg_type dt, double v)
{
	unsigned s = tg_type_scalar(dt);
	tg_scalar x;

	if (tg_scalar_is_float(s))
		x.f = v;
	else if (tg_exec_cast((tg_scalar){ .f = v }, TG_FLOAT64, s, &x))
		return tg_ir_fail(ir, TG_EINVAL, "uop_const: %g does not fit "
		                  "in %s", v, tg_dtype_name((tg_dtype)s));
	return tg_uop_const(ir, dt, x);
}

tg_uop *tg_uop_replace_src(tg_ir *ir, tg_uop *u, tg_uop *const *src,
                           size_t nsrc)
{
	if (nsrc == u->nsrc &&
	    (nsrc == 0 || memcmp(u->src, src, nsrc * sizeof *src) == 0))
		return u;
	return tg_uop_new(ir, u->op, u->dtype, src, nsrc, &u->arg);
}

int tg_uop_is_const(const tg_uop *u, tg_scalar *v)
{
	if (!u || u->op != TG_CONST)
		return 0;
	if (v)
		*v = u->arg.v;
	return 1;
}

int tg_uop_is_const_int(const tg_uop *u, int64_t c)
{
	unsigned s;

	if (!u || u->op != TG_CONST)
		return 0;
	s = tg_type_scalar(u->dtype);
	if (tg_scalar_is_float(s))
		return u->arg.v.f == (double)c;
	if (s == TG_UINT64)
		return c >= 0 && u->arg.v.u == (uint64_t)c;
	return u->arg.v.i == c;
}

int tg_uop_const_bool(const tg_uop *u)
{
	tg_scalar v;

	if (!u || !tg_uop_is_const(u, &v))
		return -1;
	return v.i != 0;
}

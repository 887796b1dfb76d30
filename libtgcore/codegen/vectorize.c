/*
 * codegen/vectorize.c - vector load/store folding, run by tg_codegen
 * between lowering and linearization (tinygrad's fold_expanded in
 * uopgraph.py, mid-2024).
 *
 * Lowering expands an upcast axis into one body copy per digit, so an
 * upcast by 4 of a contiguous axis leaves four scalar LOADs of one
 * buffer at idx+0 .. idx+3 and four scalar STOREs likewise.  Here the
 * LOADs that share buffer, gate, alternative and dtype and whose
 * indices are one base plus consecutive constants become one vector
 * LOAD, each old LOAD a GEP of its lane; the STOREs (the SINK's
 * sources) that share buffer, gate and value dtype likewise become one
 * STORE of a VECTORIZE.  Loads whose gates differ (a padded edge) stay
 * apart: the gate is part of the grouping key.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

/* The widest vector formed (C's GCC vectors go to 64 lanes). */
#define VZ_MAXW 64

/* One scalar LOAD or STORE that may join a vector. */
typedef struct vz_mem {
	tg_uop *u;
	uint64_t key[5]; /* buffer, gate, alt, dtype, base (ids + 1) */
	int64_t off;     /* index = base + off */
	size_t pos;      /* STOREs: the position among the SINK's sources */
} vz_mem;

typedef struct vz_ctx {
	unsigned maxw;   /* widest vector to form (a power of 2, <= 64) */
	int aligned;     /* runs must start at a multiple of their width */
	size_t buffer_align; /* bytes every buffer's start is a multiple
	                        of (0: unknown) */
	tg_uop **repl;   /* by id: the GEP a folded LOAD becomes */
	size_t nrepl;
	int64_t nacc;    /* the next accumulator number (vector ones) */
} vz_ctx;

static uint64_t id1(const tg_uop *u)
{
	return u ? (uint64_t)u->id + 1 : 0;
}

/* Scalars GCC has vector types of and the C renderer can name: 2, 4
 * or 8 bytes, not bool (no _Bool vectors) nor bfloat16 (rendered as
 * its bits, with no vector name). */
int tg_vector_scalar_ok(tg_type t)
{
	unsigned s = tg_type_scalar(t), bits;

	if (tg_type_count(t) != 1 || s >= TG_NDTYPES || s == TG_BOOL ||
	    s == TG_BFLOAT16)
		return 0;
	bits = tg_scalar_bits(s);
	return bits == 16 || bits == 32 || bits == 64;
}

/* idx as base + off: the simplifier puts a sum's constant last. */
static void split_index(tg_uop *idx, tg_uop **base, int64_t *off)
{
	tg_scalar v;

	if (idx->op == TG_ADD && tg_uop_is_const(idx->src[1], &v)) {
		*base = idx->src[0];
		*off = v.i;
	} else if (tg_uop_is_const(idx, &v)) {
		*base = NULL;
		*off = v.i;
	} else {
		*base = idx;
		*off = 0;
	}
}

/* Whether base + off is provably a multiple of w: every term's factor
 * and the constant divide by it. */
static int divides(tg_uop *base, int64_t off, unsigned w)
{
	tg_lin s;

	if (base && tg_lin_of(base, 1, &s))
		return 0;
	if (!base) {
		s.n = 0;
		s.k = 0;
	}
	for (size_t i = 0; i < s.n; i++)
		if (s.t[i].k % (int64_t)w)
			return 0;
	return (s.k + off) % (int64_t)w == 0;
}

static int cmp_mem(const void *a, const void *b)
{
	const vz_mem *x = a, *y = b;

	for (int i = 0; i < 5; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	return (x->off > y->off) - (x->off < y->off);
}

/* The width of the run that starts at m[i] (sorted): the widest power
 * of 2 up to maxw, else 0.  Members of a run share the key and have
 * offsets off, off+1, ... */
static unsigned run_at(const vz_ctx *c, const vz_mem *m, size_t n,
                       size_t i)
{
	for (unsigned w = c->maxw; w >= 2; w /= 2) {
		size_t j;
		if (i + w > n)
			continue;
		for (j = 1; j < w; j++)
			if (memcmp(m[i].key, m[i + j].key, sizeof m[i].key) ||
			    m[i + j].off != m[i].off + (int64_t)j)
				break;
		if (j < w)
			continue;
		if (c->aligned) {
			tg_uop *base;
			int64_t off;
			split_index(m[i].u->src[1], &base, &off);
			if (!divides(base, off, w))
				continue;
		}
		return w;
	}
	return 0;
}

/* A LOAD that may fold: scalar, of a buffer the kernel does not write
 * (a vector load moves the reads of its lanes together, which is only
 * safe when no store can come between) unless it is an accumulator's
 * init (reduce passes: read before the item's loops, which its stores
 * follow), with a constant alternative. */
static int foldable_load(const tg_uop *u, int acc_init)
{
	return u->op == TG_LOAD && (u->nsrc == 2 || u->nsrc == 4) &&
	       tg_vector_scalar_ok(u->dtype) &&
	       u->src[0]->op == TG_DEFINE_GLOBAL &&
	       (!u->src[0]->arg.a || acc_init) &&
	       (u->nsrc == 2 || u->src[3]->op == TG_CONST);
}


static void mem_of(vz_mem *m, tg_uop *u, tg_uop *gate, tg_uop *alt,
                   tg_type dt)
{
	tg_uop *base;

	split_index(u->src[1], &base, &m->off);
	m->u = u;
	m->key[0] = id1(u->src[0]);
	m->key[1] = id1(gate);
	m->key[2] = id1(alt);
	m->key[3] = dt;
	m->key[4] = id1(base);
}

/* Adds LOAD u to the runs being planned. */
static void add_load(vz_mem *m, size_t *nm, tg_uop *u)
{
	mem_of(&m[(*nm)++], u, u->nsrc == 4 ? u->src[2] : NULL,
	       u->nsrc == 4 ? u->src[3] : NULL, u->dtype);
}

/* The bytes a vector LOAD of w lanes at index idx is proven aligned
 * to: its own size where the buffer's start is aligned to that and
 * idx is a multiple of w; else 0. */
static int64_t proven_align(const vz_ctx *c, tg_uop *idx, tg_type dt,
                            unsigned w)
{
	size_t bytes = w * tg_dtype_size(tg_type_scalar(dt));
	tg_uop *base;
	int64_t off;

	if (!c->buffer_align || bytes > c->buffer_align)
		return 0;
	split_index(idx, &base, &off);
	return divides(base, off, w) ? (int64_t)bytes : 0;
}

/* The vector LOAD of the run m[0..w) and a GEP per member into
 * c->repl.  arg.a: the alignment proven (proven_align). */
static int fold_loads(tg_ir *ir, vz_ctx *c, const vz_mem *m, unsigned w)
{
	tg_uop *l = m[0].u, *src[4], *vec;
	tg_type vt = tg_type_vec(l->dtype, w);
	tg_arg a = { .a = proven_align(c, l->src[1], l->dtype, w) };

	memcpy(src, l->src, l->nsrc * sizeof *src);
	if (l->nsrc == 4)
		src[3] = tg_uop_const(ir, vt, l->src[3]->arg.v);
	vec = tg_uop_new(ir, TG_LOAD, vt, src, l->nsrc, &a);
	for (unsigned j = 0; j < w; j++) {
		a = (tg_arg){ .v.i = j };
		/* ids below nrepl: the loads predate the plan */
		c->repl[m[j].u->id] = tg_uop_new(ir, TG_GEP, l->dtype, &vec, 1,
		                                 &a);
	}
	return tg_ir_status(ir);
}

/* Groups the foldable LOADs under sink into runs and records their
 * replacements. */
static int plan_loads(tg_ir *ir, vz_ctx *c, tg_uop *sink)
{
	tg_uop **topo;
	vz_mem *m;
	size_t n, nm = 0;
	int rc = TG_OK;

	if (!(topo = tg_uop_toposort(sink, &n))) {
		tg_ir_fail(ir, TG_ENOMEM, "vectorize: out of host memory");
		return TG_ENOMEM;
	}
	c->nrepl = tg_ir_count(ir);
	c->repl = calloc(c->nrepl ? c->nrepl : 1, sizeof *c->repl);
	m = malloc((n ? n : 1) * sizeof *m);
	if (!c->repl || !m) {
		tg_ir_fail(ir, TG_ENOMEM, "vectorize: out of host memory");
		rc = TG_ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < n; i++) {
		tg_uop *u = topo[i];
		if (u->op == TG_DEFINE_ACC && u->arg.v.i >= c->nacc)
			c->nacc = u->arg.v.i + 1;
		if (foldable_load(u, 0))
			add_load(m, &nm, u);
		/* an init is one accumulator's: added once */
		else if (u->op == TG_DEFINE_ACC && u->nsrc &&
		         !foldable_load(u->src[0], 0) &&
		         foldable_load(u->src[0], 1))
			add_load(m, &nm, u->src[0]);
	}
	qsort(m, nm, sizeof *m, cmp_mem);
	for (size_t i = 0; i < nm && rc == TG_OK;) {
		unsigned w = run_at(c, m, nm, i);
		if (w)
			rc = fold_loads(ir, c, m + i, w);
		i += w ? w : 1;
	}
out_free:
	free(m);
	free(topo);
	return rc;
}

/* scalar LOAD -> GEP(vector LOAD, lane), as planned. */
static tg_uop *load_lane(tg_rw *rw, tg_uop **cap)
{
	vz_ctx *c = rw->ctx;
	tg_uop *u = cap[0];

	return u->id < c->nrepl ? c->repl[u->id] : NULL;
}

/* The STORE of the run m[0..w) (sorted by offset): one VECTORIZE of the
 * values at the first index. */
static tg_uop *vector_store(tg_ir *ir, const vz_mem *m, unsigned w)
{
	tg_uop *vals[VZ_MAXW], *src[4], *s = m[0].u;

	for (unsigned j = 0; j < w; j++)
		vals[j] = m[j].u->src[2];
	memcpy(src, s->src, s->nsrc * sizeof *src);
	src[2] = tg_uop_new(ir, TG_VECTORIZE,
	                    tg_type_vec(vals[0]->dtype, w), vals, w, NULL);
	return tg_uop_new(ir, TG_STORE, TG_VOID, src, s->nsrc, NULL);
}

static int vector_op(unsigned op);

/* Whether the values of stores m[0..w) may become one vector computed
 * at once: one op that has a vector form (a PHI: an accumulator), not
 * a lane of a vector already. */
static int lanes_compute(const vz_mem *m, unsigned w)
{
	const tg_uop *x = m[0].u->src[2];

	if (x->op != TG_PHI && !vector_op(x->op))
		return 0;
	for (unsigned j = 1; j < w; j++)
		if (m[j].u->src[2]->op != x->op)
			return 0;
	return 1;
}

/* The width of the strided run at m[i] among the n stores no vector
 * store took (sorted): members of one key whose offsets step by the
 * gap to the next, the widest power of 2 up to maxw; else 0. */
static unsigned strided_at(const vz_ctx *c, const vz_mem *m, size_t n,
                           size_t i)
{
	int64_t gap;
	size_t k = 1;
	unsigned w;

	if (i + 1 >= n || memcmp(m[i].key, m[i + 1].key, sizeof m[i].key))
		return 0;
	gap = m[i + 1].off - m[i].off;
	while (i + k < n && k < c->maxw &&
	       !memcmp(m[i].key, m[i + k].key, sizeof m[i].key) &&
	       m[i + k].off == m[i].off + (int64_t)k * gap)
		k++;
	for (w = 1; 2 * (size_t)w <= k; w *= 2)
		;
	return gap > 1 && w >= 2 && lanes_compute(m + i, w) ? w : 0;
}

/* Stores of one buffer at a constant step (an upcast axis that is not
 * the innermost of the output, as in a convolution's input gradient)
 * stay scalar, but their values become the lanes of one vector,
 * store j storing GEP(VECTORIZE(v0..), j): the vector ALU rules then
 * compute the lanes at once, and their loads fold where contiguous. */
static size_t strided_stores(tg_ir *ir, const vz_ctx *c, vz_mem *m,
                             size_t nm, tg_uop **at)
{
	size_t n = 0, nrun = 0;

	if (c->aligned)  /* CUDA: its lanes are threads, not registers */
		return 0;
	for (size_t i = 0; i < nm; i++)  /* those no vector store took */
		if (!at[m[i].pos] && m[i].u->src[2]->op != TG_GEP)
			m[n++] = m[i];
	for (size_t i = 0; i < n;) {
		unsigned w = strided_at(c, m, n, i);
		tg_uop *vals[VZ_MAXW], *vec, *src[4];

		if (!w) {
			i++;
			continue;
		}
		for (unsigned j = 0; j < w; j++)
			vals[j] = m[i + j].u->src[2];
		vec = tg_uop_new(ir, TG_VECTORIZE,
		                 tg_type_vec(vals[0]->dtype, w), vals, w, NULL);
		for (unsigned j = 0; j < w; j++) {
			tg_uop *st = m[i + j].u;
			tg_arg a = { .v.i = j };

			memcpy(src, st->src, st->nsrc * sizeof *src);
			src[2] = tg_uop_new(ir, TG_GEP, vals[j]->dtype, &vec, 1,
			                    &a);
			at[m[i + j].pos] = tg_uop_new(ir, TG_STORE, TG_VOID, src,
			                              st->nsrc, NULL);
		}
		nrun++;
		i += w;
	}
	return nrun;
}

/* The runs of foldable stores among the sink's sources: at[k] the
 * vector store that takes source k's place, or the sink itself for a
 * source absorbed by an earlier one.  The number of runs. */
static size_t plan_stores(tg_ir *ir, vz_ctx *c, tg_uop *sink, vz_mem *m,
                          tg_uop **at)
{
	size_t nm = 0, nrun = 0;

	for (uint32_t k = 0; k < sink->nsrc; k++) {
		tg_uop *s = sink->src[k];
		if (s->op != TG_STORE || (s->nsrc != 3 && s->nsrc != 4) ||
		    !tg_vector_scalar_ok(s->src[2]->dtype))
			continue;
		mem_of(&m[nm], s, s->nsrc == 4 ? s->src[3] : NULL, NULL,
		       s->src[2]->dtype);
		m[nm++].pos = k;
	}
	qsort(m, nm, sizeof *m, cmp_mem);
	for (size_t i = 0; i < nm;) {
		unsigned w = run_at(c, m, nm, i);
		size_t first = m[i].pos;
		if (!w) {
			i++;
			continue;
		}
		for (unsigned j = 1; j < w; j++)
			if (m[i + j].pos < first)
				first = m[i + j].pos;
		for (unsigned j = 0; j < w; j++)
			at[m[i + j].pos] = sink;
		at[first] = vector_store(ir, m + i, w);
		nrun++;
		i += w;
	}
	return nrun + strided_stores(ir, c, m, nm, at);
}

/* SINK(stores) -> SINK with each run of stores one vector STORE, at
 * the place of its first member. */
static tg_uop *fold_stores(tg_rw *rw, tg_uop **cap)
{
	tg_uop *sink = cap[0], **at, *res = NULL;
	vz_mem *m;
	size_t n = sink->nsrc, nout = 0;

	m = malloc((n ? n : 1) * sizeof *m);
	at = calloc(n ? n : 1, sizeof *at);
	if (!m || !at) {
		tg_ir_fail(rw->ir, TG_ENOMEM, "vectorize: out of host memory");
		goto out_free;
	}
	if (!plan_stores(rw->ir, rw->ctx, sink, m, at) ||
	    tg_ir_status(rw->ir))
		goto out_free;  /* nothing folds (the fixed point), or OOM */
	for (size_t k = 0; k < n; k++)
		if (at[k] != sink)
			at[nout++] = at[k] ? at[k] : sink->src[k];
	res = tg_uop_new(rw->ir, TG_SINK, TG_VOID, at, nout, NULL);
out_free:
	free(m);
	free(at);
	return res;
}

/* VECTORIZE(GEP(x,0), .., GEP(x,n-1)) -> x: a copy stores what it
 * loaded without taking it apart. */
static tg_uop *vec_of_lanes(tg_rw *rw, tg_uop **cap)
{
	tg_uop *v = cap[0], *x = v->src[0]->op == TG_GEP ? v->src[0]->src[0]
	                                                  : NULL;

	(void)rw;
	if (!x || x->dtype != v->dtype)
		return NULL;
	for (uint32_t j = 0; j < v->nsrc; j++)
		if (v->src[j]->op != TG_GEP || v->src[j]->src[0] != x ||
		    v->src[j]->arg.v.i != (int64_t)j)
			return NULL;
	return x;
}

/* ------------------------------------------------------- vector ALUs */

/* ALU ops a vector of lanes may compute at once.  Comparisons and WHERE
 * are left out: their bools have no vector type. */
static int vector_op(unsigned op)
{
	switch (op) {
	case TG_ADD: case TG_MUL: case TG_MULACC: case TG_NEG: case TG_MAX:
	case TG_RECIP: case TG_SQRT: case TG_EXP2: case TG_LOG2: case TG_SIN:
	case TG_IDIV: case TG_MOD: case TG_XOR: case TG_OR: case TG_AND:
	case TG_SHL: case TG_SHR: case TG_CAST:
		return 1;
	default:
		return 0;
	}
}

/* VECTORIZE(lane j of each of v's sources' operand k). */
static tg_uop *lanes_of(tg_ir *ir, tg_uop *const *v, uint32_t n,
                        uint32_t k)
{
	tg_uop *src[VZ_MAXW];

	for (uint32_t j = 0; j < n; j++)
		src[j] = v[j]->src[k];
	return tg_uop_new(ir, TG_VECTORIZE,
	                  tg_type_vec(src[0]->dtype, n), src, n, NULL);
}

/* vectorize(op(a0, b0), .., op(an, bn)) -> op(vectorize(a0..an),
 * vectorize(b0..bn)) (tinygrad's vectorized ALUs; SLP in compilers):
 * an upcast of a contiguous axis computes a vector per op, not a lane
 * per copy.  Lanes that are all one node stay a broadcast. */
static tg_uop *vec_alu(tg_rw *rw, tg_uop **cap)
{
	tg_uop *v = cap[0], *x = v->src[0], *src[3];
	uint32_t n = v->nsrc, j, k;

	if ((!vector_op(x->op) && x->op != TG_CONST) || n > VZ_MAXW ||
	    !tg_vector_scalar_ok(x->dtype))
		return NULL;
	for (j = 1; j < n && v->src[j] == x; j++)
		;
	if (j == n)  /* a broadcast: of a constant, a vector constant */
		return x->op == TG_CONST
		       ? tg_uop_const(rw->ir, v->dtype, x->arg.v) : NULL;
	if (x->op == TG_CONST)
		return NULL;  /* lanes of different constants stay lanes */
	for (j = 1; j < n; j++)
		if (v->src[j]->op != x->op || v->src[j]->dtype != x->dtype ||
		    v->src[j]->nsrc != x->nsrc)
			return NULL;
	for (k = 0; k < x->nsrc; k++) {
		if (!tg_vector_scalar_ok(x->src[k]->dtype))
			return NULL;
		for (j = 1; j < n; j++)
			if (v->src[j]->src[k]->dtype != x->src[k]->dtype)
				return NULL;
	}
	for (k = 0; k < x->nsrc; k++)
		src[k] = lanes_of(rw->ir, v->src, n, k);
	return tg_uop_new(rw->ir, x->op, v->dtype, src, x->nsrc, NULL);
}

/* A chain of reduce.c: links from v down to acc, each ADD/MAX(prev, t)
 * or MULACC(a, b, prev); the links into out[] from the accumulator up.
 * The number of links, or -1 when v is not such a chain. */
static int chain_of(tg_uop *v, const tg_uop *acc, tg_uop **out, int max)
{
	int n = 0;

	while (v != acc) {
		tg_uop *prev = tg_acc_link_prev(v);
		if (n == max || !prev)
			return -1;
		out[n++] = v;
		v = prev;
	}
	for (int i = 0; i < n / 2; i++) {
		tg_uop *t = out[i];
		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
	return n;
}

/* Whether the accumulators of the lanes match: scalar, over one set
 * of loops.  Their inits may differ (reduce passes resume each lane
 * from what the last pass stored). */
static int same_accs(tg_uop *const *phi, uint32_t n)
{
	const tg_uop *a = phi[0]->src[0];

	if (a->op != TG_DEFINE_ACC || tg_type_count(a->dtype) != 1)
		return 0;
	for (uint32_t j = 1; j < n; j++) {
		const tg_uop *b = phi[j]->src[0];
		if (b->op != TG_DEFINE_ACC || b->dtype != a->dtype ||
		    b->nsrc != a->nsrc || b == a ||
		    memcmp(b->src + 1, a->src + 1,
		           (a->nsrc - 1) * sizeof *a->src))
			return 0;
	}
	return 1;
}

/* The vector accumulator's init: the lanes' one constant as a vector,
 * else their inits as one VECTORIZE (vec_of_lanes folds the lanes of
 * one vector load back into it). */
static tg_uop *acc_init(tg_ir *ir, tg_uop *const *phi, uint32_t n,
                        tg_type dt)
{
	tg_uop *src[VZ_MAXW];
	uint32_t same = 1;

	for (uint32_t j = 0; j < n; j++) {
		src[j] = phi[j]->src[0]->src[0];
		same &= src[j] == src[0];
	}
	if (same && src[0]->op == TG_CONST)
		return tg_uop_const(ir, dt, src[0]->arg.v);
	return tg_uop_new(ir, TG_VECTORIZE, dt, src, n, NULL);
}

#define VZ_MAXCHAIN 64

/* vectorize(phi(acc0, (acc0 op t00) op t01), ..) -> phi(vacc, (vacc op
 * vectorize(t00, t10 ..)) op ..): the lanes' accumulators become one
 * vector accumulator, every link one vector op. */
static tg_uop *vec_phi(tg_rw *rw, tg_uop **cap)
{
	vz_ctx *c = rw->ctx;
	tg_uop *v = cap[0], *acc0, *acc, *src[1 + TG_MAX_DIMS], *u, *l[2];
	tg_uop *ch[VZ_MAXW][VZ_MAXCHAIN];
	uint32_t n = v->nsrc, j;
	int len = -1;

	if (n > VZ_MAXW || !tg_vector_scalar_ok(v->src[0]->dtype))
		return NULL;
	for (j = 0; j < n; j++)
		if (v->src[j]->op != TG_PHI)
			return NULL;
	if (!same_accs(v->src, n))
		return NULL;
	for (j = 0; j < n; j++) {
		int m = chain_of(v->src[j]->src[1], v->src[j]->src[0], ch[j],
		                 VZ_MAXCHAIN);
		if (m < 0 || (j && m != len))
			return NULL;
		len = m;
	}
	for (int i = 0; i < len; i++)
		for (j = 1; j < n; j++)
			if (ch[j][i]->op != ch[0][i]->op)
				return NULL;
	acc0 = v->src[0]->src[0];
	src[0] = acc_init(rw->ir, v->src, n, v->dtype);
	memcpy(src + 1, acc0->src + 1, (acc0->nsrc - 1) * sizeof *src);
	acc = tg_uop_new(rw->ir, TG_DEFINE_ACC, v->dtype, src, acc0->nsrc,
	                 &(tg_arg){ .v.i = c->nacc++ });
	u = acc;
	for (int i = 0; i < len; i++) {
		tg_uop *lanes[VZ_MAXW];
		int mul = ch[0][i]->op == TG_MULACC;
		for (j = 0; j < n; j++)
			lanes[j] = ch[j][i];
		for (uint32_t k = 0; k < (mul ? 2u : 1u); k++)
			l[k] = lanes_of(rw->ir, lanes, n, mul ? k : 1);
		u = mul ? tg_uop_alu(rw->ir, TG_MULACC, l[0], l[1], u)
		        : tg_uop_alu(rw->ir, ch[0][i]->op, u, l[0], NULL);
	}
	return tg_uop2(rw->ir, TG_PHI, v->dtype, acc, u);
}

static const tg_rule vectorize_table[] = {
	{ "load(b, i+c) .. load(b, i+c+3) -> gep(load4(b, i+c), lane)",
	  P_OP(0, TG_LOAD), load_lane },
	{ "store(b, i+c, v0) .. store(b, i+c+3, v3) -> "
	  "store(b, i+c, vectorize(v0..v3))",
	  P_OP(0, TG_SINK), fold_stores },
	{ "vectorize(gep(x,0), .., gep(x,n-1)) -> x",
	  P_OP(0, TG_VECTORIZE), vec_of_lanes },
	{ "vectorize(phi(acc0, acc0 op t0), ..) -> "
	  "phi(vacc, vacc op vectorize(t0, ..))",
	  P_OP(0, TG_VECTORIZE), vec_phi },
	{ "vectorize(op(a0, b0), ..) -> op(vectorize(a0, ..), "
	  "vectorize(b0, ..))", P_OP(0, TG_VECTORIZE), vec_alu },
};
static tg_ruleset vectorize_rules =
	TG_RULESET("vectorize", vectorize_table, NULL);

tg_uop *tg_vectorize_mem(tg_ir *ir, tg_uop *sink, unsigned maxw,
                         int aligned, size_t buffer_align)
{
	vz_ctx c;
	tg_uop *r = NULL;

	if (!sink || maxw < 2)
		return sink;
	memset(&c, 0, sizeof c);
	c.maxw = maxw;
	c.aligned = aligned;
	c.buffer_align = buffer_align;
	if (plan_loads(ir, &c, sink) == TG_OK)
		r = tg_rewrite(ir, sink, &vectorize_rules, &c);
	free(c.repl);
	return r;
}

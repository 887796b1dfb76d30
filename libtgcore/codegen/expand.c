/*
 * codegen/expand.c - the expander (tinygrad's do_expand, do_contract
 * and do_reduce of uopgraph.py), run by tg_codegen after lowering.
 *
 * Lowering indexes an axis with an upcast part u as outer*u + X, X the
 * axis's digit (EXPAND without sources), and lowers the body once.
 * Digits occur only in index math: TG_INDEX nodes and the bool masks
 * built from them.  Here each value that depends on digits becomes a
 * lane set, EXPAND(lanes) with arg.a the axes they vary over, lane l
 * holding the digits of those axes, the last axis fastest (the order
 * of the loop an upcast replaces).  Index math is not expanded node by
 * node: a LOAD, STORE or masked WHERE whose index holds digits gets per
 * lane its index with the digits made constants and simplified whole
 * by the symbolic rules, so that it stays base + c (vectorize.c folds
 * runs of those); a mask that becomes constant in a lane decides it,
 * as lowering decides a constant mask.  Values are rebuilt lane by lane
 * and never folded, since folding could change a float's bits.
 *
 * A REDUCE contracts its unrolled axes: per lane of the value's other
 * axes, the lanes over the unrolled axes in loop order become the
 * values of one REDUCE (reduce.c folds them into an accumulator).  A
 * grouped reduce (GROUP, GROUPTOP) goes through shared memory in two
 * stages.  The SINK takes the lanes of its STOREs.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

typedef struct ex_ctx {
	tg_ir *ir;
	const tg_kplan *p;
	uint64_t *memo;     /* by id: KNOWN | the digits under a node */
	size_t cap;
	int64_t dig[TG_MAX_DIMS]; /* per axis, its digit in the lane built */
	int grouped;        /* the plan splits the reduce across a group */
	int ntemp;          /* shared arrays made */
	tg_uop *lf, *gf;    /* grouped: flat local and group item */
	int64_t nl, ng;     /* their counts */
} ex_ctx;

#define KNOWN (1ull << 32)

/* ------------------------------------------------------------- lanes */

/* The axes of lane set u; 0 for any other node. */
static uint32_t lanes_of(const tg_uop *u)
{
	return u->op == TG_EXPAND && u->nsrc ? (uint32_t)u->arg.a : 0;
}

static size_t nlanes(const ex_ctx *c, uint32_t m)
{
	size_t n = 1;

	for (size_t ax = 0; ax < c->p->ndim; ax++)
		if (m & (1u << ax))
			n *= (size_t)c->p->upcast[ax];
	return n;
}

/* Sets the digits of the axes m to those of their lane l. */
static void set_lane(ex_ctx *c, uint32_t m, size_t l)
{
	for (size_t ax = c->p->ndim; ax-- > 0;) {
		if (!(m & (1u << ax)))
			continue;
		c->dig[ax] = (int64_t)(l % (size_t)c->p->upcast[ax]);
		l /= (size_t)c->p->upcast[ax];
	}
}

/* The lane of the axes m that the digits set are in. */
static size_t lane_at(const ex_ctx *c, uint32_t m)
{
	size_t l = 0;

	for (size_t ax = 0; ax < c->p->ndim; ax++)
		if (m & (1u << ax))
			l = l * (size_t)c->p->upcast[ax] + (size_t)c->dig[ax];
	return l;
}

/* Value u in the lane being built: its lane of the axes it varies over
 * (the others' digits do not matter to it). */
static tg_uop *lane(const ex_ctx *c, tg_uop *u)
{
	return lanes_of(u) ? u->src[lane_at(c, lanes_of(u))] : u;
}

/* u's lane sets must have the lanes of their axes, or lane() would
 * read past them. */
static int bad_lanes(const ex_ctx *c, const tg_uop *u)
{
	for (uint32_t i = 0; i < u->nsrc; i++) {
		const tg_uop *s = u->src[i];
		if (TG_NEVER(lanes_of(s) &&
		             ((uint64_t)lanes_of(s) >> c->p->ndim ||
		              s->nsrc != nlanes(c, lanes_of(s))))) {
			tg_ir_fail(c->ir, TG_EINTERNAL, "expand: %%%u has %u "
			           "lanes, not those of its axes",
			           (unsigned)s->id, (unsigned)s->nsrc);
			return 1;
		}
	}
	return 0;
}

/* The lane set of the axes m (lanes[0] alone when m is empty). */
static tg_uop *lane_set(tg_ir *ir, uint32_t m, tg_type dt,
                        tg_uop *const *lanes, size_t n)
{
	tg_arg a = { .a = m };

	return m ? tg_uop_new(ir, TG_EXPAND, dt, lanes, n, &a) : lanes[0];
}

/* --------------------------------------------------------- index math */

/* Whether u may be index math that holds digits: index and bool nodes,
 * but not values (LOADs, lane sets), whose digits are in their lanes. */
static int index_math(const tg_uop *u)
{
	unsigned s = tg_type_scalar(u->dtype);

	if (tg_type_count(u->dtype) != 1 || tg_type_is_ptr(u->dtype) ||
	    (s != TG_INDEX && s != TG_BOOL))
		return 0;
	return u->op != TG_LOAD && !lanes_of(u);
}

static int grow(ex_ctx *c, uint32_t id)
{
	size_t n = c->cap ? c->cap : 256;
	uint64_t *m;

	if (id < c->cap)
		return 0;
	while (n <= id)
		n *= 2;
	if (!(m = realloc(c->memo, n * sizeof *m))) {
		tg_ir_fail(c->ir, TG_ENOMEM, "expand: out of host memory");
		return -1;
	}
	memset(m + c->cap, 0, (n - c->cap) * sizeof *m);
	c->memo = m;
	c->cap = n;
	return 0;
}

/* The axes whose digits occur in index math u (memoized by id). */
static uint32_t digits(ex_ctx *c, const tg_uop *u)
{
	uint32_t m = 0;

	if (!index_math(u))
		return 0;
	if (u->op == TG_EXPAND)
		return 1u << (u->arg.v.i & 31);
	if (grow(c, u->id))
		return 0;
	if (c->memo[u->id])
		return (uint32_t)c->memo[u->id];
	for (uint32_t i = 0; i < u->nsrc; i++)
		m |= digits(c, u->src[i]);
	c->memo[u->id] = KNOWN | m;  /* after the calls: they may move it */
	return m;
}

/* X -> the digit of its axis in the lane being built. */
static tg_uop *digit_value(tg_rw *rw, tg_uop **cap)
{
	ex_ctx *c = rw->ctx;

	if (cap[0]->nsrc)
		return NULL;
	return tg_sym_int(rw->ir, c->dig[cap[0]->arg.v.i & 31]);
}

static const tg_rule lane_table[] = {
	{ "X -> its digit in the lane", P_OP(0, TG_EXPAND), digit_value },
};
static tg_ruleset lane_rules =
	TG_RULESET("expand lane", lane_table, &tg_symbolic_rules);

/* Index math u in the lane being built, simplified. */
static tg_uop *at_lane(ex_ctx *c, tg_uop *u)
{
	return u && digits(c, u) ? tg_rewrite(c->ir, u, &lane_rules, c) : u;
}

/* ------------------------------------------------------ lane by lane */

/* Builds the lane of u for the digits set. */
typedef tg_uop *(*lane_fn)(ex_ctx *c, tg_uop *u);

/* The matched node as lanes of the axes m: f of it in each lane. */
static tg_uop *expand_over(tg_rw *rw, uint32_t m, lane_fn f)
{
	ex_ctx *c = rw->ctx;
	tg_uop *v[TG_MAX_EXPAND], *u = rw->root;
	size_t n = nlanes(c, m);

	if (!m || n > TG_MAX_EXPAND || bad_lanes(c, u))
		return NULL;
	for (size_t l = 0; l < n; l++) {
		set_lane(c, m, l);
		if (!(v[l] = f(c, u)))
			return NULL;
	}
	return lane_set(rw->ir, m, u->dtype, v, n);
}

/* LOAD with its index and gate in the lane: a gate that is constant
 * there drops (true) or makes the lane the alternative (false). */
static tg_uop *load_lane(ex_ctx *c, tg_uop *u)
{
	tg_uop *src[4];
	int cb;

	memcpy(src, u->src, u->nsrc * sizeof *src);
	src[1] = at_lane(c, src[1]);
	if (u->nsrc != 4)
		return tg_uop_new(c->ir, TG_LOAD, u->dtype, src, u->nsrc, NULL);
	src[2] = at_lane(c, src[2]);
	if ((cb = tg_uop_const_bool(src[2])) == 0)
		return src[3];
	return tg_uop_new(c->ir, TG_LOAD, u->dtype, src, cb == 1 ? 2 : 4,
	                  NULL);
}

static tg_uop *expand_load(tg_rw *rw, tg_uop **cap)
{
	uint32_t m = 0;

	if (cap[0]->nsrc < 2 || cap[0]->nsrc > 4)
		return NULL;
	for (uint32_t i = 1; i < cap[0]->nsrc; i++)
		m |= digits(rw->ctx, cap[0]->src[i]);
	return expand_over(rw, m, load_lane);
}

static tg_uop *store_lane(ex_ctx *c, tg_uop *u)
{
	tg_uop *src[4];

	memcpy(src, u->src, u->nsrc * sizeof *src);
	src[1] = at_lane(c, src[1]);
	src[2] = lane(c, src[2]);
	if (u->nsrc == 4)
		src[3] = at_lane(c, src[3]);
	return tg_uop_new(c->ir, TG_STORE, TG_VOID, src, u->nsrc, NULL);
}

static tg_uop *expand_store(tg_rw *rw, tg_uop **cap)
{
	tg_uop *s = cap[0];
	uint32_t m;

	if (s->nsrc < 3 || s->nsrc > 4)
		return NULL;
	m = digits(rw->ctx, s->src[1]) | lanes_of(s->src[2]);
	if (s->nsrc == 4)
		m |= digits(rw->ctx, s->src[3]);
	return expand_over(rw, m, store_lane);
}

/* WHERE(mask, x, y) of a masked CONST: a mask constant in the lane
 * picks x or y. */
static tg_uop *where_lane(ex_ctx *c, tg_uop *u)
{
	tg_uop *cond = at_lane(c, u->src[0]);
	tg_uop *x = lane(c, u->src[1]), *y = lane(c, u->src[2]);
	int cb = tg_uop_const_bool(cond);

	if (cb >= 0)
		return cb ? x : y;
	return tg_uop3(c->ir, TG_WHERE, u->dtype, cond, x, y);
}

static tg_uop *expand_where(tg_rw *rw, tg_uop **cap)
{
	tg_uop *w = cap[0];
	uint32_t m = w->nsrc == 3 ? digits(rw->ctx, w->src[0]) : 0;

	if (!m)
		return NULL;  /* a value condition: any other op */
	m |= lanes_of(w->src[1]) | lanes_of(w->src[2]);
	return expand_over(rw, m, where_lane);
}

/* op over its sources' lanes, built as is (no folding). */
static tg_uop *value_lane(ex_ctx *c, tg_uop *u)
{
	tg_uop *src[3];

	for (uint32_t i = 0; i < u->nsrc; i++)
		src[i] = lane(c, u->src[i]);
	return tg_uop_new(c->ir, u->op, u->dtype, src, u->nsrc, &u->arg);
}

static tg_uop *expand_value(tg_rw *rw, tg_uop **cap)
{
	uint32_t m = 0;

	if (cap[0]->nsrc > 3)
		return NULL;
	for (uint32_t i = 0; i < cap[0]->nsrc; i++)
		m |= lanes_of(cap[0]->src[i]);
	return expand_over(rw, m, value_lane);
}

/* ------------------------------------------------------------ reduces */

/* The partial sums of lanes (GROUP without work groups), v[0..k), as
 * GEP j of VECTORIZE(v): reduce.c makes each an accumulator and
 * vectorize.c one vector accumulator of them (vec_phi), whose lanes
 * are then added in order.  Only where the device has a vector of k
 * such elements (tg_vector_scalar_ok); else they stay scalars. */
static void as_vector_lanes(ex_ctx *c, tg_uop **v, size_t k)
{
	tg_uop *vec;

	if (k < 2 || (k & (k - 1)) || !c->p->caps ||
	    k > (size_t)c->p->caps->max_upcast ||
	    !tg_vector_scalar_ok(v[0]->dtype))
		return;
	vec = tg_uop_new(c->ir, TG_VECTORIZE, tg_type_vec(v[0]->dtype,
	                 (unsigned)k), v, k, NULL);
	for (size_t j = 0; j < k; j++) {
		tg_arg a = { .v.i = (int64_t)j };
		v[j] = tg_uop_new(c->ir, TG_GEP, v[0]->dtype, &vec, 1, &a);
	}
}

/* The contraction of REDUCE(v, ranges...) with unrolled axes U =
 * arg.a: per lane r of v's other axes R, REDUCE(v[r,0], .., v[r,k-1],
 * ranges...) with arg.b = k, the lanes over U in loop order; every
 * digit of U counts, also where v does not depend on it, since the
 * loop added v once per iteration.  Fills out[] (a lane of R each) and
 * returns R; ~0 on error. */
static uint32_t contract(ex_ctx *c, tg_uop *red, tg_uop **out)
{
	tg_uop *v = red->src[0], *src[TG_MAX_EXPAND + TG_MAX_DIMS];
	uint32_t um = (uint32_t)red->arg.a, rm = lanes_of(v) & ~um;
	size_t k = nlanes(c, um), nr = red->nsrc - 1;
	tg_arg a = { .v.i = red->arg.v.i, .b = (int64_t)k };

	if (bad_lanes(c, red))
		return ~0u;
	if ((uint64_t)um >> c->p->ndim || k > TG_MAX_EXPAND ||
	    nr > TG_MAX_DIMS) {
		tg_ir_fail(c->ir, TG_EINTERNAL, "expand: %%%u: a REDUCE of %zu "
		           "lanes over %zu loops", (unsigned)red->id, k, nr);
		return ~0u;
	}
	memcpy(src + k, red->src + 1, nr * sizeof *src);
	for (size_t r = 0; r < nlanes(c, rm); r++) {
		set_lane(c, rm, r);
		for (size_t j = 0; j < k; j++) {
			set_lane(c, um, j);
			src[j] = lane(c, v);
		}
		if (!nr && um && !(um & ~c->p->lanes))
			as_vector_lanes(c, src, k);
		out[r] = tg_uop_new(c->ir, TG_REDUCE, red->dtype, src, k + nr,
		                    &a);
	}
	return rm;
}

static tg_uop *reduce_contract(tg_rw *rw, tg_uop **cap)
{
	tg_uop *lanes[TG_MAX_EXPAND];
	uint32_t m;

	if (cap[0]->arg.b || cap[0]->nsrc < 1 ||
	    (m = contract(rw->ctx, cap[0], lanes)) == ~0u)
		return NULL;
	return lane_set(rw->ir, m, cap[0]->dtype, lanes, nlanes(rw->ctx, m));
}

/* ------------------------------------------------ matrix instructions */

/* Lane x of A or B in the digits set, as the instruction's input: the
 * product's CAST to the sum's type undone. */
static tg_uop *frag_elem(ex_ctx *c, tg_uop *x)
{
	int din = c->p->wmma->dtype_in;
	tg_uop *e = lane(c, x);

	if (e->op == TG_CAST && (int)e->src[0]->dtype == din)
		e = e->src[0];
	if ((int)e->dtype != din)
		return tg_ir_fail(c->ir, TG_EINTERNAL, "expand: %s takes %s, "
		                  "not %%%u", c->p->wmma->fn,
		                  tg_dtype_name((unsigned)din), (unsigned)e->id);
	return e;
}

/* The fragment of x (A or B) of the K step at digit k0 and M tile m0:
 * register r at K digit k0 + kd[r] and, for A, M digit m0 + md[r]. */
static tg_uop *fragment(ex_ctx *c, tg_uop *x, unsigned n, const uint8_t *kd,
                        const uint8_t *md, int64_t k0, int64_t m0)
{
	const tg_kplan *p = c->p;
	tg_uop *v[16];

	for (unsigned r = 0; r < n; r++) {
		c->dig[p->tc_ax[2]] = k0 + kd[r];
		if (md)
			c->dig[p->tc_ax[1]] = m0 + md[r];
		if (!(v[r] = frag_elem(c, x)))
			return NULL;
	}
	c->dig[p->tc_ax[1]] = m0;
	return tg_uop_new(c->ir, TG_VECTORIZE,
	                  tg_type_vec((tg_type)p->wmma->dtype_in, n), v, n,
	                  NULL);
}

/* The REDUCE of the tile of C at N digit n0 and M digit m0 (the digits
 * of the other axes set): one instruction per K step of the unrolled
 * axes um, from a zero sum (reduce.c folds the accumulator in). */
static tg_uop *wmma_tile(ex_ctx *c, const tg_uop *red, uint32_t um)
{
	const tg_kplan *p = c->p;
	const tg_wmma *w = p->wmma;
	const tg_uop *ab = red->src[0];
	tg_uop *st[TG_MAX_EXPAND + TG_MAX_DIMS], *src[3];
	tg_type vt = tg_type_vec((tg_type)w->dtype_out, w->nc);
	tg_arg a = { .v.i = tg_wmma_index(w), .name = w->fn };
	uint32_t kax = p->tc_ax[2], kun = w->dims[2] / w->kthreads;
	int64_t m0 = c->dig[p->tc_ax[1]];
	size_t ns = 0, nr = red->nsrc - 1;
	tg_scalar z = { .u = 0 };

	src[2] = tg_uop_const(c->ir, vt, z);
	for (size_t ul = 0; ul < nlanes(c, um); ul++) {
		set_lane(c, um, ul);
		if (c->dig[kax] % kun)
			continue;
		int64_t k0 = c->dig[kax];
		if (!(src[0] = fragment(c, ab->src[0], w->na, w->a_k, w->a_m,
		                        k0, m0)) ||
		    !(src[1] = fragment(c, ab->src[1], w->nb, w->b_k, NULL, k0,
		                        m0)) ||
		    !(st[ns++] = tg_uop_new(c->ir, TG_WMMA, vt, src, 3, &a)))
			return NULL;
	}
	memcpy(st + ns, red->src + 1, nr * sizeof *st);
	return tg_uop_new(c->ir, TG_REDUCE, vt, st, ns + nr,
	                  &(tg_arg){ .v.i = red->arg.v.i, .b = (int64_t)ns });
}

/* REDUCE(WMMA(a, b) | r) -> lanes: GEP(tile's REDUCE, register) (see
 * tg_expand_upcasts): every lane of C's axes is one register of one
 * tile, the tile's REDUCE built once at its first register. */
static tg_uop *reduce_wmma(tg_rw *rw, tg_uop **cap)
{
	ex_ctx *c = rw->ctx;
	const tg_kplan *p = c->p;
	const tg_wmma *w = p->wmma;
	tg_uop *red = cap[0], *ab = red->src[0], *out[TG_MAX_EXPAND];
	uint32_t nax, max, um, rm;

	if (!w || red->arg.b || ab->op != TG_WMMA || ab->nsrc != 2 ||
	    bad_lanes(c, ab) || bad_lanes(c, red))
		return NULL;
	nax = p->tc_ax[0], max = p->tc_ax[1], um = (uint32_t)red->arg.a;
	rm = (lanes_of(ab->src[0]) | lanes_of(ab->src[1]) | 1u << nax |
	      1u << max) & ~um;
	for (size_t l = 0; l < nlanes(c, rm); l++) {
		set_lane(c, rm, l);
		if (c->dig[nax] % w->nup || c->dig[max] % w->mup)
			continue;
		int64_t n0 = c->dig[nax], m0 = c->dig[max];
		tg_uop *t = wmma_tile(c, red, um);
		if (!t)
			return NULL;
		for (unsigned r = 0; r < w->nc; r++) {
			c->dig[nax] = n0 + w->c_n[r];
			c->dig[max] = m0 + w->c_m[r];
			out[lane_at(c, rm)] = tg_uop_new(c->ir, TG_GEP,
			        (tg_type)w->dtype_out, &t, 1,
			        &(tg_arg){ .v.i = r });
		}
		c->dig[nax] = n0, c->dig[max] = m0;
	}
	return lane_set(rw->ir, rm, red->dtype, out, nlanes(c, rm));
}

/* The shared array of a grouped reduce, n elements of dt, within the
 * device's shared memory. */
static tg_uop *shared_temp(ex_ctx *c, tg_type dt, int64_t n)
{
	const tg_kplan *p = c->p;
	size_t bytes = (size_t)n * tg_dtype_size(tg_type_scalar(dt));
	char name[32];
	tg_arg a = { .a = n, .name = name };  /* the context copies it */

	if (p->caps && bytes > p->caps->shared_max)
		return tg_ir_fail(c->ir, TG_EINVAL, "lower: kernel %s: a "
		                  "grouped reduce needs %zu bytes of shared "
		                  "memory, the device has %zu", p->name, bytes,
		                  p->caps->shared_max);
	snprintf(name, sizeof name, "temp%d", c->ntemp++);
	return tg_uop0(c->ir, TG_DEFINE_LOCAL, tg_type_ptr(dt, TG_AS_LOCAL),
	               &a);
}

/* Where lane s of this thread's item `item` of the group lives:
 * [s][local item][item]. */
static tg_uop *slot(const ex_ctx *c, size_t s, tg_uop *item)
{
	tg_ir *ir = c->ir;

	return tg_sym_add(ir, tg_sym_muli(ir, tg_sym_addi(ir, c->lf,
	                  (int64_t)s * c->nl), c->ng), item);
}

/* Every lane's part to its slot, then one BARRIER over the stores. */
static tg_uop *stage_one(const ex_ctx *c, tg_uop *temp,
                         tg_uop *const *part, size_t n)
{
	tg_uop *st[TG_MAX_EXPAND];

	for (size_t s = 0; s < n; s++) {
		tg_uop *src[3] = { temp, slot(c, s, c->gf), part[s] };
		st[s] = tg_uop_new(c->ir, TG_STORE, TG_VOID, src, 3, NULL);
	}
	return tg_uop_new(c->ir, TG_BARRIER, TG_VOID, st, n, NULL);
}

/* Lane s of the second stage: the group's parts, read after the
 * barrier, reduced over the loop j in item order. */
static tg_uop *stage_two(const ex_ctx *c, const tg_uop *red, tg_uop *temp,
                         tg_uop *bar, tg_uop *j, size_t s)
{
	tg_uop *src[3] = { temp, slot(c, s, j), bar };
	tg_uop *rs[2] = { tg_uop_new(c->ir, TG_LOAD, red->dtype, src, 3,
	                             NULL), j };
	tg_arg a = { .v.i = red->arg.v.i, .b = 1 };

	return tg_uop_new(c->ir, TG_REDUCE, red->dtype, rs, 2, &a);
}

/* The second stage's loop over the group's items: numbered after every
 * reduce loop and the stage loops made before. */
static tg_uop *group_loop(const ex_ctx *c)
{
	tg_arg a = { .v.i = (int64_t)(c->p->nloop + c->p->nred +
	                                 c->ntemp), .a = 1 };
	tg_uop *b[2] = { tg_sym_int(c->ir, 0), tg_sym_int(c->ir, c->ng) };

	return tg_uop_new(c->ir, TG_RANGE, TG_INDEX, b, 2, &a);
}

/* A REDUCE split across a work group (GROUP, GROUPTOP): each thread's
 * part of every lane goes to one shared array, and after one barrier
 * each thread folds its group's parts in order, so every thread holds
 * the result (lowering gated the stores to group item 0). */
static tg_uop *reduce_grouped(tg_rw *rw, tg_uop **cap)
{
	ex_ctx *c = rw->ctx;
	tg_uop *red = cap[0], *part[TG_MAX_EXPAND], *temp, *bar, *j;
	uint32_t m;
	size_t n;

	if (!c->grouped || red->arg.b || red->nsrc < 1 ||
	    (m = contract(c, red, part)) == ~0u)
		return NULL;
	n = nlanes(c, m);
	c->lf = tg_kplan_flat_lidx(c->ir, c->p, 0, &c->nl);
	c->gf = tg_kplan_flat_lidx(c->ir, c->p, 1, &c->ng);
	if (!(temp = shared_temp(c, red->dtype, (int64_t)n * c->nl * c->ng)) ||
	    !(bar = stage_one(c, temp, part, n)) || !(j = group_loop(c)))
		return NULL;
	for (size_t s = 0; s < n; s++)
		part[s] = stage_two(c, red, temp, bar, j, s);
	return lane_set(rw->ir, m, red->dtype, part, n);
}

/* --------------------------------------------------------------- sink */

/* Appends x to v[0..*n) unless it is there. */
static void add_once(tg_uop **v, size_t *n, tg_uop *x)
{
	size_t k;

	for (k = 0; k < *n && v[k] != x; k++)
		;
	if (k == *n)
		v[(*n)++] = x;
}

/* SINK(.., lanes of STOREs, ..) -> SINK of every lane, store by store,
 * each distinct STORE once. */
static tg_uop *flatten_sink(tg_rw *rw, tg_uop **cap)
{
	tg_uop *sink = cap[0], **src, *r;
	size_t n = 0, max = sink->nsrc;

	for (uint32_t i = 0; i < sink->nsrc; i++)
		max += lanes_of(sink->src[i]) ? sink->src[i]->nsrc : 0;
	if (max == sink->nsrc)
		return NULL;
	if (!(src = malloc(max * sizeof *src)))
		return tg_ir_fail(rw->ir, TG_ENOMEM,
		                  "expand: out of host memory");
	for (uint32_t i = 0; i < sink->nsrc; i++) {
		tg_uop *s = sink->src[i];
		if (!lanes_of(s))
			add_once(src, &n, s);
		for (uint32_t l = 0; lanes_of(s) && l < s->nsrc; l++)
			add_once(src, &n, s->src[l]);
	}
	r = tg_uop_new(rw->ir, TG_SINK, TG_VOID, src, n, NULL);
	free(src);
	return r;
}

#define VALUE_OPS TG_ALU_OPS TG_CAST, TG_BITCAST

static const tg_rule expand_table[] = {
	{ "load(b, i(X), m(X), a) -> lanes: load(b, i(d)) | a | "
	  "load(b, i(d), m(d), a)", P_OP(0, TG_LOAD), expand_load },
	{ "store(b, i(X), v, g) -> lanes: store(b, i(d), v[d], g)",
	  P_OP(0, TG_STORE), expand_store },
	{ "where(m(X), x, y) -> lanes: x[d] | y[d] | where(m(d), x[d], y[d])",
	  P_OP(0, TG_WHERE), expand_where },
	{ "op(.., v, ..) -> lanes: op(.., v[d], ..)",
	  &(const tg_pat){ .ops = P_OPS(VALUE_OPS), .nops = P_NOPS(VALUE_OPS),
	                   .cap = 1 },
	  expand_value },
	{ "grouped reduce(v | r) -> lanes: reduce(load(temp, .., "
	  "barrier(store(temp, .., reduce(v[d,0..k-1] | r)))) | j)",
	  P_OP(0, TG_REDUCE), reduce_grouped },
	{ "reduce(wmma(a, b) | r) -> lanes: gep(reduce(wmma(vectorize(a[..]), "
	  "vectorize(b[..]), 0) .. | r), c)", P_OP(0, TG_REDUCE), reduce_wmma },
	{ "reduce(v | r) -> lanes: reduce(v[d,0], .., v[d,k-1] | r)",
	  P_OP(0, TG_REDUCE), reduce_contract },
	{ "sink(.., stores, ..) -> sink(.., stores[0..n-1], ..)",
	  P_OP(0, TG_SINK), flatten_sink },
};
static tg_ruleset expand_rules =
	TG_RULESET("expand", expand_table, NULL);

tg_uop *tg_expand_upcasts(tg_ir *ir, tg_uop *sink, const tg_kplan *p)
{
	ex_ctx c = { .ir = ir, .p = p };
	tg_uop *r;

	for (size_t i = 0; i < p->ndim; i++)
		if (p->group[i] > 1)
			c.grouped = 1;
	r = tg_rewrite(ir, sink, &expand_rules, &c);
	free(c.memo);
	return r;
}

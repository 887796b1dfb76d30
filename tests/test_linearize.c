/*
 * test_linearize.c - the linearizer (codegen/linearize.c).  Small
 * lowered kernels built by hand get their exact orders checked
 * (hoisting, accumulators reset in an outer loop, values that skip a
 * loop of their nest, a grouped two-stage reduce), then the errors,
 * every allocation failing, and a kernel of more than 10,000 uops.
 * Every order is also compared node for node with the pre-change
 * linearizer (linearize_old.h, the oracle): here, on random graphs
 * (fixed seed) and on kernels lowered from ASTs with opts.
 */
#include "config.h"

#include "kasttest.h"
#include "failalloc.h"
#include "linearize_old.h"
#include "irtest.h"  /* after the oracle: its parameter is named ir */

/* ------------------------------------------------- building IR */


static tg_uop *glob(int i)
{
	tg_arg a = { .v.i = i, .a = i == 0 };

	return tg_uop0(ir, TG_DEFINE_GLOBAL,
	               tg_type_ptr(TG_FLOAT32, TG_AS_GLOBAL), &a);
}

static tg_uop *special(const char *name, int64_t n)
{
	tg_arg a = { .name = name, .a = n };

	return tg_uop0(ir, TG_SPECIAL, TG_INDEX, &a);
}

/* Loop number `no` over [lo, hi). */
static tg_uop *range(int64_t no, tg_uop *lo, tg_uop *hi)
{
	tg_arg a = { .v.i = no, .a = 1 };

	return tg_uop_new(ir, TG_RANGE, TG_INDEX, (tg_uop *[]){ lo, hi }, 2,
	                  &a);
}

static tg_uop *add(tg_uop *a, tg_uop *b)
{
	return tg_uop_alu(ir, TG_ADD, a, b, NULL);
}

static tg_uop *mul(tg_uop *a, tg_uop *b)
{
	return tg_uop_alu(ir, TG_MUL, a, b, NULL);
}

static tg_uop *load(tg_uop *buf, tg_uop *i)
{
	return tg_uop2(ir, TG_LOAD, TG_FLOAT32, buf, i);
}

static tg_uop *store(tg_uop *buf, tg_uop *i, tg_uop *v)
{
	return tg_uop3(ir, TG_STORE, TG_VOID, buf, i, v);
}

/* Accumulator number `no`, from 0.0 over the n loops in r. */
static tg_uop *acc(int64_t no, size_t n, tg_uop *const *r)
{
	tg_arg a = { .v.i = no };
	tg_uop *src[4] = { cf(0.0) };

	ck_assert_uint_le(n, 3);
	memcpy(src + 1, r, n * sizeof *r);
	return tg_uop_new(ir, TG_DEFINE_ACC, TG_FLOAT32, src, n + 1, &a);
}

/* a += v: the PHI (its src[1] is the ADD). */
static tg_uop *phi(tg_uop *a, tg_uop *v)
{
	return tg_uop2(ir, TG_PHI, TG_FLOAT32, a, add(a, v));
}

/* The ENDRANGE the linearizer makes for r (nodes are interned). */
static tg_uop *end(tg_uop *r)
{
	return tg_uop1(ir, TG_ENDRANGE, TG_VOID, r);
}

static tg_uop *sink(tg_uop *a)
{
	ck_assert_msg(a != NULL, "%s", tg_last_error());
	return tg_uop1(ir, TG_SINK, TG_VOID, a);
}

/* ------------------------------------------------- the oracle */

/* Linearizes s with both linearizers: the same status, message and
 * program, node for node.  The program (free()), or NULL after an
 * error, whose status is in *rc. */
static tg_uop **lin_both(tg_uop *s, size_t *n, int *rc)
{
	tg_uop **lin, **ref;
	size_t nref;
	char msg[256];
	int rref;

	tg_clear_error();
	rref = old_linearize(ir, s, &ref, &nref);
	snprintf(msg, sizeof msg, "%s", tg_last_error());
	tg_clear_error();
	*rc = tg_linearize(ir, s, &lin, n);
	ck_assert_int_eq(*rc, rref);
	ck_assert_str_eq(tg_last_error(), msg);
	ck_assert_uint_eq(*n, nref);
	for (size_t i = 0; i < nref; i++)
		ck_assert_msg(lin[i] == ref[i], "node %zu: %s %%%u, the old "
		              "order has %s %%%u", i, tg_op_name(lin[i]->op),
		              lin[i]->id, tg_op_name(ref[i]->op), ref[i]->id);
	free(ref);
	return lin;
}

static void expect_order(tg_uop *s, tg_uop *const *want, size_t nwant)
{
	size_t n;
	int rc;
	tg_uop **lin = lin_both(s, &n, &rc);

	ck_assert_msg(rc == TG_OK, "%s", tg_last_error());
	ck_assert_uint_eq(n, nwant);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(lin[i] == want[i], "node %zu: %s %%%u, want "
		              "%s %%%u", i, tg_op_name(lin[i]->op), lin[i]->id,
		              tg_op_name(want[i]->op), want[i]->id);
	free(lin);
}

#define EXPECT_ORDER(s, ...)                                          \
	expect_order((s), (tg_uop *[]){ __VA_ARGS__ },                \
	             sizeof((tg_uop *[]){ __VA_ARGS__ }) / sizeof(tg_uop *))

/* ------------------------------------------------- exact orders */

/* out[g] = 0.5 * sum_r in[g*5 + r]: what needs no loop goes first
 * (in topological order), the accumulator before its loop, the loop
 * closes after the PHI, the scale and store after it. */
START_TEST(reduce_hoists_and_closes)
{
	tg_uop *d0 = glob(0), *d1 = glob(1), *g = special("gidx0", 4);
	tg_uop *r = range(0, ci(0), ci(5)), *a = acc(0, 1, &r);
	tg_uop *base = mul(g, ci(5)), *at = add(base, r), *l = load(d1, at);
	tg_uop *p = phi(a, l), *m = mul(p, cf(0.5));

	EXPECT_ORDER(sink(store(d0, g, m)), d0, g, cf(0.0), ci(0), ci(5), a,
	             d1, base, cf(0.5), r, at, l, p->src[1], p, end(r), m,
	             store(d0, g, m));
}
END_TEST

/* out[o] = sum_i in[o*4 + i], both loops in the kernel: the
 * accumulator is reset inside the outer loop; the store keeps the
 * outer loop open to the end. */
START_TEST(accumulator_reset_in_outer_loop)
{
	tg_uop *d0 = glob(0), *d1 = glob(1);
	tg_uop *ro = range(0, ci(0), ci(3)), *ri = range(1, ci(0), ci(4));
	tg_uop *a = acc(0, 1, &ri), *mo = mul(ro, ci(4)), *at = add(mo, ri);
	tg_uop *l = load(d1, at), *p = phi(a, l), *sv = store(d0, ro, p);

	EXPECT_ORDER(sink(sv), d0, ci(0), ci(3), cf(0.0), ci(4), d1, ro, a,
	             mo, ri, at, l, p->src[1], p, end(ri), sv, end(ro));
}
END_TEST

/* out[o] = sum_{m,i} x[o*5 + i] * w[m*5 + i]: x's index skips loop m
 * and w's skips loop o; each goes in as soon as its loops are open
 * (find_inner), inside the loop it skips. */
START_TEST(values_skip_a_loop)
{
	tg_uop *d0 = glob(0), *d1 = glob(1), *d2 = glob(2);
	tg_uop *ro = range(0, ci(0), ci(3)), *rm = range(1, ci(0), ci(4));
	tg_uop *ri = range(2, ci(0), ci(5)), *a = acc(0, 2,
	                                               (tg_uop *[]){ rm, ri });
	tg_uop *mo = mul(ro, ci(5)), *ax = add(mo, ri), *x = load(d1, ax);
	tg_uop *mm = mul(rm, ci(5)), *aw = add(mm, ri), *w = load(d2, aw);
	tg_uop *xw = mul(x, w), *p = phi(a, xw), *sv = store(d0, ro, p);

	EXPECT_ORDER(sink(sv), d0, ci(0), ci(3), cf(0.0), ci(4), ci(5), d1,
	             d2, ro, a, mo, rm, mm, ri, ax, x, aw, w, xw, p->src[1],
	             p, end(ri), end(rm), sv, end(ro));
}
END_TEST

/* A grouped reduce's two stages: each thread sums its part over loops
 * 0..2 (an index that skips loop 1), stores it in shared memory, and
 * after the barrier loop 3 folds the group's parts.  Loop 3 is ready
 * from the start but opens only after the first stage's nest closed. */
START_TEST(grouped_two_stage_reduce)
{
	tg_arg ta = { .name = "temp0", .a = 16 }, a2 = { .v.i = 1 };
	tg_uop *d0 = glob(0), *d1 = glob(1), *lx = special("lidx0", 16);
	tg_uop *tmp = tg_uop0(ir, TG_DEFINE_LOCAL,
	                      tg_type_ptr(TG_FLOAT32, TG_AS_LOCAL), &ta);
	tg_uop *r[3] = { range(0, ci(0), ci(4)), range(1, ci(0), ci(5)),
	                 range(2, ci(0), ci(3)) };
	tg_uop *j = range(3, ci(0), ci(16)), *a1 = acc(0, 3, r);
	tg_uop *m0 = mul(r[0], ci(15)), *skip = add(m0, r[2]);
	tg_uop *m1 = mul(r[1], ci(3)), *at = add(add(skip, m1), lx);
	tg_uop *l1 = load(d1, at), *p1 = phi(a1, l1);
	tg_uop *st1 = store(tmp, lx, p1);
	tg_uop *bar = tg_uop1(ir, TG_BARRIER, TG_VOID, st1);
	tg_uop *ld2 = tg_uop3(ir, TG_LOAD, TG_FLOAT32, tmp, j, bar);
	tg_uop *a2u = tg_uop_new(ir, TG_DEFINE_ACC, TG_FLOAT32,
	                         (tg_uop *[]){ cf(0.0), j }, 2, &a2);
	tg_uop *p2 = phi(a2u, ld2), *sv = store(d0, ci(0), p2);

	EXPECT_ORDER(sink(sv), d0, ci(0), cf(0.0), ci(16), a2u, tmp, lx,
	             ci(4), ci(5), ci(3), a1, d1, ci(15), r[0], m0, r[1], m1,
	             r[2], skip, at->src[0], at, l1, p1->src[1], p1,
	             end(r[2]), end(r[1]), end(r[0]), st1, bar, j, ld2,
	             p2->src[1], p2, end(j), sv);
}
END_TEST

/* ------------------------------------------------- errors */

START_TEST(no_sink)
{
	tg_uop *stale[1], **lin = stale;  /* must be reset to NULL */
	size_t n = 1;

	ck_assert_int_eq(tg_linearize(ir, NULL, &lin, &n), TG_EINVAL);
	ck_assert_error("linearize: no sink");
	ck_assert_ptr_null(lin);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* A sum of `nloops` loops stored inside all of them. */
static tg_uop *many_loops(int nloops)
{
	tg_uop *v = ci(0);

	for (int i = 0; i < nloops; i++)
		v = add(v, range(i, ci(0), ci(2)));
	return sink(store(glob(0), v, cf(1.0)));
}

/* 64 loops nest (one mask bit each); the 65th is refused. */
START_TEST(at_most_64_loops)
{
	tg_uop **lin;
	size_t n, nend = 0;
	int rc;

	lin = lin_both(many_loops(64), &n, &rc);
	ck_assert_int_eq(rc, TG_OK);
	for (size_t i = 0; i < n; i++)
		nend += lin[i]->op == TG_ENDRANGE;
	ck_assert_uint_eq(nend, 64);
	ck_assert_int_eq(lin[n - 1]->op, TG_ENDRANGE);
	ck_assert_int_eq(lin[n - 1]->src[0]->arg.v.i, 0);
	free(lin);
	ck_assert_ptr_null(lin_both(many_loops(65), &n, &rc));
	ck_assert_int_eq(rc, TG_EUNSUPPORTED);
	ck_assert_error("linearize: more than 64 loops");
}
END_TEST

/* A value that reads an accumulator's final value inside the
 * accumulator's own loop: the loop cannot close (the value needs it)
 * and the value cannot go in (the final value is not there yet).  Left:
 * the scaled final value, the value and the store. */
START_TEST(loops_that_cannot_nest)
{
	tg_uop *r = range(0, ci(0), ci(4)), *a = acc(0, 1, &r);
	tg_uop *p = phi(a, load(glob(1), r)), *q = mul(p, cf(2.0));
	tg_uop *bad = add(q, tg_uop1(ir, TG_CAST, TG_FLOAT32, r));
	tg_uop **lin;
	size_t n;
	int rc;

	lin = lin_both(sink(store(glob(0), ci(0), bad)), &n, &rc);
	ck_assert_ptr_null(lin);
	ck_assert_int_eq(rc, TG_EUNSUPPORTED);
	ck_assert_error("linearize: loops do not nest (3 nodes left)");
}
END_TEST

#ifdef TL_INTERPOSED
/* Linearizes values_skip_a_loop's kernel, built in a new context with
 * no allocation failing (the intern table's failed grows are silent,
 * which would end tl_fail_each's sequence early): the allocation that
 * fails is one of tg_linearize's. */
static int oom_run(void)
{
	long fail_at = tl_fail_at;
	tg_ir *saved = ir;
	tg_uop **lin = NULL, *ro, *rm, *ri, *a, *x, *w, *s;
	size_t n;
	int rc;

	tl_fail_at = -1;
	ir = tg_ir_new();
	ck_assert_ptr_nonnull(ir);
	ro = range(0, ci(0), ci(3));
	rm = range(1, ci(0), ci(4));
	ri = range(2, ci(0), ci(5));
	a = acc(0, 2, (tg_uop *[]){ rm, ri });
	x = load(glob(1), add(mul(ro, ci(5)), ri));
	w = load(glob(2), add(mul(rm, ci(5)), ri));
	s = sink(store(glob(0), ro, phi(a, mul(x, w))));
	tl_n_allocs = 0;
	tl_fail_at = fail_at;
	rc = tg_linearize(ir, s, &lin, &n);
	tl_fail_at = -1;
	ck_assert(rc != TG_OK || n == 25);
	free(lin);
	tg_ir_free(ir);
	ir = saved;
	return rc;
}

START_TEST(every_allocation_can_fail)
{
	tl_fail_each(oom_run, 10);
}
END_TEST
#endif

/* ------------------------------------- random and lowered kernels */

/* Whether lin is a valid program for the graph under s: every node
 * but the SINK once, after its sources; loops nest, each closed once;
 * every node sits inside the loops it uses directly (an accumulator's
 * PHI inside the accumulator's loops). */
static void check_program(tg_uop *s, tg_uop **lin, size_t n)
{
	size_t ntopo, placed = 0, depth = 0;
	tg_uop **topo = tg_uop_toposort(s, &ntopo), *stack[64];
	uint32_t *at = calloc(tg_ir_count(ir), sizeof *at);

	ck_assert(topo && at);
	for (size_t i = 0; i < n; i++) {
		tg_uop *u = lin[i];
		if (u->op == TG_ENDRANGE) {
			ck_assert_uint_gt(depth, 0);
			ck_assert_ptr_eq(u->src[0], stack[--depth]);
			continue;
		}
		ck_assert_uint_eq(at[u->id], 0);
		at[u->id] = (uint32_t)++placed;
		for (uint32_t k = 0; k < u->nsrc; k++) {
			const tg_uop *x = u->src[k];
			int waits = u->op != TG_DEFINE_ACC || k == 0;
			ck_assert(!waits || at[x->id] != 0);
			if (x->op == TG_RANGE && u->op != TG_DEFINE_ACC) {
				size_t d = 0;
				while (d < depth && stack[d] != x)
					d++;
				ck_assert_uint_lt(d, depth);
			}
		}
		if (u->op == TG_RANGE)
			stack[depth++] = u;
	}
	ck_assert_uint_eq(depth, 0);
	ck_assert_uint_eq(placed, ntopo - 1);
	free(at);
	free(topo);
}

static uint64_t seed;

/* xorshift64*: a value below n. */
static uint32_t rnd(uint32_t n)
{
	seed ^= seed >> 12;
	seed ^= seed << 25;
	seed ^= seed >> 27;
	return (uint32_t)((seed * 0x2545f4914f6cdd1dull) >> 32) % n;
}

/* A value of a random graph, with the loops it uses (as the
 * linearizer's exports) and the loops of the accumulators whose final
 * values it reads, by bit in rgraph.ranges. */
typedef struct rval {
	tg_uop *u;
	uint64_t used, after;
} rval;

typedef struct rgraph {
	rval pool[512];      /* values to use */
	size_t npool;
	tg_uop *ranges[8];
	size_t nranges;
	tg_uop *stores[16];  /* 14 at most from rand_node, 2 at the end */
	size_t nstores;
	int nacc;
	int leaky;           /* may make values that cannot nest */
	int loop_stores;     /* may store inside loops */
} rgraph;

/* A value from the pool, the newer ones likelier. */
static rval pick(rgraph *g)
{
	uint32_t n = (uint32_t)g->npool;

	return g->pool[rnd(3) ? n - 1 - rnd(n < 8 ? n : 8) : rnd(n)];
}

static void keep(rgraph *g, tg_uop *u, uint64_t used, uint64_t after)
{
	ck_assert_msg(u != NULL, "%s", tg_last_error());
	if (g->npool < 512)
		g->pool[g->npool++] = (rval){ u, used, after };
}

/* Whether a value that uses `used` and reads final values after
 * `after` may be made: not inside a loop whose accumulator it reads,
 * which cannot nest, except in a leaky graph 1 time in 4 (the
 * linearizers must agree on the refusal too). */
static int may_make(const rgraph *g, uint64_t used, uint64_t after)
{
	return !(used & after) || (g->leaky && !rnd(4));
}

/* Loops numbered as they come, as lowering numbers them (or 1 time in
 * 8 at random, 0..3: equal numbers leave the choice to the topological
 * order), over a constant or (1 in 4) over a value of the pool: a loop
 * whose bounds need another loop, or an accumulator's final value. */
static void rand_range(rgraph *g)
{
	rval hi = rnd(4) ? (rval){ ci(2 + rnd(5)), 0, 0 } : pick(g);
	tg_uop *r = range(rnd(8) ? (int64_t)g->nranges : rnd(4), ci(0), hi.u);
	size_t b = 0;

	while (b < g->nranges && g->ranges[b] != r)  /* interned */
		b++;
	if (b == g->nranges)
		g->ranges[g->nranges++] = r;
	keep(g, r, hi.used | 1ull << b, hi.after);
}

/* An accumulator over one loop or two loops made one after the other
 * (as a reduce's), from 0.0, adding a value; its PHI goes in the pool,
 * a value outside those loops. */
static void rand_acc(rgraph *g)
{
	uint32_t i = rnd((uint32_t)g->nranges);
	uint32_t j = i + 1 < g->nranges ? i + rnd(2) : i;
	tg_uop *r[2] = { g->ranges[i], g->ranges[j] };
	uint64_t loops = 1ull << i | 1ull << j;
	rval v = pick(g);

	if (!may_make(g, v.used | loops, v.after))
		return;
	keep(g, phi(acc(g->nacc++, i == j ? 1 : 2, r), v.u),
	     v.used & ~loops, v.after | loops);
}

/* An ALU, or a store, of two values.  Stores go outside the loops but
 * in 1 graph in 8: a store inside a loop keeps the loop open to the end
 * (the SINK sits in it), so that most graphs with one cannot nest. */
static void rand_binary(rgraph *g, unsigned op)
{
	rval a = pick(g), b = pick(g);

	if (!may_make(g, a.used | b.used, a.after | b.after) ||
	    (op == TG_STORE && (a.used | b.used) && !g->loop_stores))
		return;
	if (op == TG_STORE)
		g->stores[g->nstores++] = store(g->pool[0].u, a.u, b.u);
	else
		keep(g, tg_uop_alu(ir, op, a.u, b.u, NULL), a.used | b.used,
		     a.after | b.after);
}

static void rand_node(rgraph *g)
{
	uint32_t c = rnd(16);
	rval v;

	if (c < 2 && g->nranges < 8)
		rand_range(g);
	else if (c < 4 && g->nranges)
		rand_acc(g);
	else if (c < 6) {
		v = pick(g);
		keep(g, load(g->pool[rnd(2)].u, v.u), v.used, v.after);
	} else if (c < 7 && g->nstores < 14)
		rand_binary(g, TG_STORE);
	else if (c < 8)
		keep(g, ci(rnd(100)), 0, 0);
	else
		rand_binary(g, c < 12 ? TG_ADD : TG_MUL);
}

/* A random lowered kernel: loops, accumulators, loads, ALUs and stores
 * (and, 1 time in 8, a value) under one SINK.  (The pool's first values
 * are the output and input buffers and the launch index.) */
static tg_uop *rand_graph(size_t nodes)
{
	rgraph g = { .leaky = !rnd(8), .loop_stores = !rnd(8) };
	rval v;

	keep(&g, glob(0), 0, 0);
	keep(&g, glob(1), 0, 0);
	keep(&g, special("gidx0", 8), 0, 0);
	keep(&g, ci(1), 0, 0);
	for (size_t i = 0; i < nodes; i++)
		rand_node(&g);
	g.stores[g.nstores++] = store(g.pool[0].u, g.pool[2].u, ci(1));
	v = pick(&g);
	if (!rnd(8) && (!v.used || g.loop_stores))
		g.stores[g.nstores++] = v.u;
	return tg_uop_new(ir, TG_SINK, TG_VOID, g.stores, g.nstores, NULL);
}

/* 3000 random graphs of 10 to 170 nodes, fixed seed: both linearizers
 * agree on each, and each program is valid.  Loops that do not nest
 * are common in random graphs (the greedy choice opens every ready loop
 * by its number, and a PHI or a store whose loops are not exactly the
 * open ones then never goes in); the refusals must agree too, with
 * the count of nodes left. */
START_TEST(random_graphs_match_the_old_order)
{
	size_t ok = 0, refused = 0;

	seed = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 3000; i++) {
		tg_uop **lin, *s;
		size_t n;
		int rc;

		tg_ir_free(ir);
		ir = tg_ir_new();
		ck_assert_ptr_nonnull(ir);
		s = rand_graph(10 + rnd(160));
		lin = lin_both(s, &n, &rc);
		if (rc == TG_OK)
			check_program(s, lin, n);
		ok += rc == TG_OK;
		refused += rc == TG_EUNSUPPORTED;
		free(lin);
	}
	ck_assert_uint_gt(ok, 2000);
	ck_assert_uint_gt(refused, 100);
	ck_assert_uint_eq(ok + refused, 3000);
}
END_TEST

/* Caps of a GPU with work groups and shared memory, for GROUP. */
static const struct tg_renderer_caps gpu_caps = {
	.struct_size = sizeof gpu_caps,
	.dialect = TG_DIALECT_OPENCL,
	.has_local = 1,
	.has_shared = 1,
	.max_upcast = 4,
	.global_max = { SIZE_MAX, SIZE_MAX, SIZE_MAX },
	.local_max = { 256, 256, 64 },
	.local_max_total = 256,
	.shared_max = 32768,
	.dtype_mask = ~0u,
};

/* Lowers sink under opts and folds vector loads as codegen does; the
 * two linearizers agree, and the program is valid. */
static void lowered_matches(const tg_uop *s, const tg_opt *o, size_t no)
{
	tg_kplan p;
	tg_kernel k;
	tg_uop *ls, **lin;
	size_t n;
	int rc;

	ck_assert_msg(tg_kernel_open(&k, ir, s) == TG_OK, "%s",
	              tg_last_error());
	ck_assert_msg(tg_lower_plan(&k, &p) == TG_OK, "%s", tg_last_error());
	p.caps = &gpu_caps;
	for (size_t i = 0; i < no; i++)
		ck_assert_msg(tg_kplan_apply_opt(&p, o[i]) == TG_OK, "%s",
		              tg_last_error());
	ck_assert_msg(tg_lower(&k, &p, &ls) == TG_OK, "%s",
	              tg_last_error());
	tg_kernel_close(&k);
	ls = tg_vectorize_mem(ir, ls, 4, 0, 0);
	ck_assert_msg(ls != NULL, "%s", tg_last_error());
	lin = lin_both(ls, &n, &rc);
	ck_assert_msg(rc == TG_OK, "%s", tg_last_error());
	check_program(ls, lin, n);
	free(lin);
}

/* A 3x3 convolution: out(4,6,6) from in(3,8,8) and w(4,3,3,3) over
 * the full shape (4,6,6,3,3,3), the last three axes reduced. */
static tg_uop *conv(tg_ir *k)
{
	tg_sint sh[6], xs[6], ws[6];
	int64_t full[6] = { 4, 6, 6, 3, 3, 3 };
	int64_t xst[6] = { 0, 8, 1, 64, 8, 1 }, wst[6] = { 27, 0, 0, 9, 3, 1 };
	tg_view *vx, *vw;
	tg_uop *m, *s;

	for (int i = 0; i < 6; i++) {
		sh[i] = tg_si(full[i]);
		xs[i] = tg_si(xst[i]);
		ws[i] = tg_si(wst[i]);
	}
	ck_assert_int_eq(tg_view_new(NULL, 6, sh, xs, tg_si(0), NULL, &vx),
	                 TG_OK);
	ck_assert_int_eq(tg_view_new(NULL, 6, sh, ws, tg_si(0), NULL, &vw),
	                 TG_OK);
	m = tg_ast_alu(k, TG_MUL,
	               tg_ast_load(k, 1, TG_FLOAT32, tg_st_from_views(&vx, 1)),
	               tg_ast_load(k, 2, TG_FLOAT32, tg_st_from_views(&vw, 1)),
	               NULL);
	tg_view_free(vx);
	tg_view_free(vw);
	s = tg_ast_store(k, 0, tg_ast_reduce(k, TG_ADD, m, 7u << 3),
	                 kt_st(6, 4, 6, 6, 1, 1, 1));
	ck_assert_msg(s != NULL, "%s", tg_last_error());
	return tg_ast_sink(k, &s, 1);
}

/* Batch norm's mean: (64,8,20,20) summed over axes 0, 2 and 3 (the
 * last two one axis of 400 in the kernel). */
static tg_uop *mean_of_three_axes(tg_ir *k)
{
	tg_sint sh[4] = { tg_si(64), tg_si(8), tg_si(20), tg_si(20) };
	tg_sint so[4] = { tg_si(1), tg_si(8), tg_si(1), tg_si(1) };
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32,
	                        tg_st_from_shape(NULL, 4, sh));
	tg_uop *s = tg_ast_store(k, 0, tg_ast_reduce(k, TG_ADD, x, 13u),
	                         tg_st_from_shape(NULL, 4, so));

	ck_assert_msg(s != NULL, "%s", tg_last_error());
	return tg_ast_sink(k, &s, 1);
}

/* Kernels the lowering makes (matmuls, a convolution, a grouped
 * reduce over three axes), with and without opts: the orders agree. */
START_TEST(lowered_kernels_match_the_old_order)
{
	static const tg_opt mm[] = { { TG_OPT_UPCAST, 1, 4 },
	                             { TG_OPT_UPCAST, 0, 4 },
	                             { TG_OPT_UNROLL, 2, 4 },
	                             { TG_OPT_LOCAL, 0, 4 } };
	static const tg_opt cv[] = { { TG_OPT_UPCAST, 0, 4 },
	                             { TG_OPT_UNROLL, 5, 3 } };
	static const tg_opt bn[] = { { TG_OPT_GROUPTOP, 0, 16 },
	                             { TG_OPT_UNROLL, 2, 4 } };
	tg_ir *k = tg_ir_new();

	ck_assert_ptr_nonnull(k);
	for (size_t i = 0; i <= 4; i++)
		lowered_matches(kt_matmul(k, 16, 16, 16), mm, i);
	for (size_t i = 0; i <= 2; i++)
		lowered_matches(conv(k), cv, i);
	for (size_t i = 0; i <= 2; i++)
		lowered_matches(mean_of_three_axes(k), bn, i);
	tg_ir_free(k);
}
END_TEST

/* ------------------------------------------------- a big kernel */

/* A kernel of more than 10,000 uops: three nests of three loops, in
 * each many accumulators whose first load's index skips the middle
 * loop and the second's the outer one; all added after the loops and
 * stored. */
START_TEST(ten_thousand_uops)
{
	tg_uop *g = special("gidx0", 64), *d1 = glob(1), *d2 = glob(2);
	tg_uop *r[3][3], *total = cf(0.0), *s, **lin;
	size_t n;
	int rc;

	for (int k = 0; k < 3; k++)
		for (int j = 0; j < 3; j++)
			r[k][j] = range(3 * k + j, ci(0), ci(2 + j + k));
	for (int c = 0; c < 1000; c++) {
		tg_uop **nest = r[c % 3], *a = acc(c, 3, nest);
		tg_uop *x = load(d1, add(add(mul(nest[0], ci(64)), nest[2]),
		                         add(g, ci(c))));
		tg_uop *w = load(d2, add(mul(nest[1], ci(c)), nest[2]));
		total = add(total, phi(a, mul(x, w)));
	}
	s = sink(store(glob(0), g, total));
	lin = lin_both(s, &n, &rc);
	ck_assert_msg(rc == TG_OK, "%s", tg_last_error());
	ck_assert_uint_gt(n, 10000);
	check_program(s, lin, n);
	free(lin);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("linearize");
	TCase *t = tcase_create("orders");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, reduce_hoists_and_closes);
	tcase_add_test(t, accumulator_reset_in_outer_loop);
	tcase_add_test(t, values_skip_a_loop);
	tcase_add_test(t, grouped_two_stage_reduce);
	suite_add_tcase(s, t);
	t = tcase_create("errors");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, no_sink);
	tcase_add_test(t, at_most_64_loops);
	tcase_add_test(t, loops_that_cannot_nest);
#ifdef TL_INTERPOSED
	tcase_add_test(t, every_allocation_can_fail);
#endif
	suite_add_tcase(s, t);
	t = tcase_create("oracle");
	tcase_set_timeout(t, 600);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, random_graphs_match_the_old_order);
	tcase_add_test(t, lowered_kernels_match_the_old_order);
	tcase_add_test(t, ten_thousand_uops);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(suite());
}

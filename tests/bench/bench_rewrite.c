/*
 * bench_rewrite.c - how fast the rewrite engine simplifies index math.
 *
 * Builds, without simplifying, the index and valid expressions a
 * scheduler would make for many kernels (reshapes through div/mod,
 * strides, padding masks), then times:
 *   - interning: building the raw graph (nodes/s),
 *   - the walk alone: tg_rewrite with an empty rule set (the engine's own
 *     cost, the anchor),
 *   - symbolic simplification: tg_rewrite with tg_symbolic_rules.
 * Usage: bench_rewrite [kernels] (default 2000).  Prints one line per
 * figure.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../libtgcore/ir/ir.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static tg_uop *ci(tg_ir *ir, int64_t v)
{
	return tg_uop_const_int(ir, TG_INDEX, v);
}

static tg_uop *alu(tg_ir *ir, unsigned op, tg_uop *a, tg_uop *b)
{
	return tg_uop_alu(ir, op, a, b, NULL);
}

/* One kernel's index: a flat index split into dims by div/mod (a reshape
 * the views could not merge), restrided, plus a padding mask. */
static tg_uop *kernel_index(tg_ir *ir, unsigned k, tg_uop *sink_acc)
{
	char name[32];
	tg_arg g = { .a = 0 }, r = { .a = 0 };
	int64_t d0 = 2 + k % 7, d1 = 3 + k % 5, d2 = 4 + k % 3;
	tg_uop *gi, *ri, *flat, *i0, *i1, *i2, *idx, *valid;

	snprintf(name, sizeof name, "gidx%u", k % 3);
	g.name = name;
	g.b = d0 * d1 * d2 - 1;
	gi = tg_uop0(ir, TG_DEFINE_VAR, TG_INDEX, &g);
	snprintf(name, sizeof name, "ridx%u", k % 4);
	r.name = name;
	r.b = 15 + k % 17;
	ri = tg_uop0(ir, TG_DEFINE_VAR, TG_INDEX, &r);
	flat = alu(ir, TG_ADD, alu(ir, TG_MUL, gi, ci(ir, 1)), ci(ir, 0));
	i0 = alu(ir, TG_IDIV, flat, ci(ir, d1 * d2));
	i1 = alu(ir, TG_MOD, alu(ir, TG_IDIV, flat, ci(ir, d2)), ci(ir, d1));
	i2 = alu(ir, TG_MOD, flat, ci(ir, d2));
	idx = alu(ir, TG_ADD, alu(ir, TG_MUL, i0, ci(ir, d1 * d2 * 16)),
	          alu(ir, TG_MUL, alu(ir, TG_ADD, i1, ci(ir, -1 + k % 2)),
	              ci(ir, d2 * 16)));
	idx = alu(ir, TG_ADD, idx, alu(ir, TG_MUL, i2, ci(ir, 16)));
	idx = alu(ir, TG_ADD, idx, alu(ir, TG_MOD, ri, ci(ir, 64)));
	idx = alu(ir, TG_ADD, alu(ir, TG_MUL, alu(ir, TG_IDIV, idx, ci(ir, 4)),
	                          ci(ir, 4)), alu(ir, TG_MOD, idx, ci(ir, 4)));
	valid = alu(ir, TG_AND, alu(ir, TG_CMPLT, i1, ci(ir, d1 + 1)),
	            alu(ir, TG_CMPLT, alu(ir, TG_MUL, ri, ci(ir, 2)),
	                ci(ir, 2 * r.b + 2)));
	return tg_uop_new(ir, TG_SINK, TG_VOID,
	                  (tg_uop *[]){ sink_acc, idx, valid }, 3, NULL);
}

static tg_uop *never(tg_rw *rw, tg_uop **cap)
{
	(void)rw;
	(void)cap;
	return NULL;
}

/* No UNMUL is ever built here: the rule is indexed but never fires. */
static const tg_rule no_rules[] = {
	{ "never", P_OP(P_NOCAP, TG_UNMUL), never },
};
static tg_ruleset empty_set = TG_RULESET("empty", no_rules, NULL);

int main(int argc, char **argv)
{
	unsigned kernels = argc > 1 ? (unsigned)atoi(argv[1]) : 2000, k;
	tg_ir *ir = tg_ir_new();
	tg_uop *root, *out, **order;
	size_t nodes, nout;
	double t0, t1, t2, t3;

	if (!ir || !kernels)
		return 1;
	t0 = now();
	root = tg_uop0(ir, TG_NOOP, TG_VOID, NULL);
	for (k = 0; k < kernels; k++)
		root = kernel_index(ir, k, root);
	t1 = now();
	nodes = tg_ir_count(ir);
	out = tg_rewrite(ir, root, &empty_set, NULL);
	t2 = now();
	out = tg_rewrite(ir, root, &tg_symbolic_rules, NULL);
	t3 = now();
	if (!out || !(order = tg_uop_toposort(out, &nout))) {
		fprintf(stderr, "bench_rewrite: %s\n", tg_last_error());
		tg_ir_free(ir);
		return 1;
	}
	free(order);
	printf("graph: %u kernels, %zu nodes in, %zu nodes after "
	       "simplification\n", kernels, nodes, nout);
	printf("intern:            %10.0f nodes/s\n", nodes / (t1 - t0));
	printf("rewrite, no rules: %10.0f nodes/s (anchor: the engine's "
	       "walk)\n", nodes / (t2 - t1));
	printf("rewrite, symbolic: %10.0f nodes/s (%.3f s)\n",
	       nodes / (t3 - t2), t3 - t2);
	tg_ir_free(ir);
	return 0;
}

/*
 * codegen/cpu_block.c - the cache blocking of a C kernel, chosen after
 * its opts: launch blocks (tg_kplan_launch_block: gidx0 cut into
 * blocks that each run through every gidx1) and reduce passes
 * (tg_kplan_reduce_block: the outer reduce loop cut into passes whose
 * slice of the inputs stays in the L1 and whose panel stays in the
 * L2).  Lowering and the C dialect read p->lblock and p->rblock.
 * Separate from the opts: neither splits an axis or changes a lane,
 * only the order the work runs in (a PASS opt fixes the pass length;
 * the CPU tile asks tg_kp_pass_length whether its launch order would
 * leave the L2).
 */
#include "config.h"

#include "codegen/codegen.h"
#include "codegen/kplan.h"
#include "ir/ir.h"

#define PASS_SLICE ((int64_t)16 << 10) /* a pass's slice of the input
                                          the block shares: a third of
                                          the L1 */
#define PASS_PANEL ((int64_t)1 << 20) /* a pass's panel of the inputs
                                         that move with gidx0, over a
                                         sweep of gidx0: half of a 2 MiB
                                         L2, so the next gidx1 finds it */

/* ------------------------------------------------------ CPU launch block */

#define BLOCK_INPUTS_MIN ((int64_t)16 << 20) /* inputs past this leave
                                                the last-level cache */
#define BLOCK_KEPT_MIN ((int64_t)8 << 20)    /* and a kept input past
                                                this is read again */
#define BLOCK_BYTES ((int64_t)2 << 20)       /* a block's share of the
                                                input it keeps */

/* Bytes of the buffer region LOAD u spans: the extents of the axes it
 * moves along (all of them where a stride is not one number). */
static int64_t load_span(const tg_kplan *p, const tg_uop *u,
                         const int64_t *rs)
{
	int64_t n = tg_dtype_size(tg_type_scalar(u->dtype));

	for (size_t ax = 0; ax < p->ndim; ax++)
		if (rs[ax] != 0)
			n *= p->full[ax];
	return n;
}

void tg_kplan_launch_block(tg_kplan *p, const tg_kernel *k)
{
	int64_t total = 0, kept = 0, moved = 0, per;
	uint32_t x, y;
	size_t nx = p->global[0];

	p->lblock = 0;
	if (!p->caps || p->caps->dialect != TG_DIALECT_C || !p->has_reduce ||
	    p->nglobal < 2 || p->nlocal || p->nloop)
		return;
	x = p->gaxes[p->nglobal - 1];
	y = p->gaxes[p->nglobal - 2];
	for (size_t i = 0; i < k->n; i++) {
		const tg_uop *u = k->order[i];
		int64_t rs[TG_MAX_DIMS], span;
		if (u->op != TG_LOAD)
			continue;
		tg_kp_real_strides(k, tg_kernel_st(k, u), rs);
		span = load_span(p, u, rs);
		total += span;
		if (rs[y] == 0 && rs[x] != 0)
			kept += span;
		else if (rs[x] == 0 && rs[y] != 0)
			moved += span;
	}
	if (total < BLOCK_INPUTS_MIN || kept < BLOCK_KEPT_MIN || !moved)
		return;
	per = kept / (int64_t)nx;
	for (size_t b = nx / 2; b >= 2; b--)
		if (nx % b == 0 && (int64_t)b * per <= BLOCK_BYTES) {
			/* blocks read `kept` once and `moved` once a block;
			 * without, `kept` is read once per gidx1 */
			if (kept + moved * (int64_t)(nx / b) <
			    kept * (int64_t)p->global[1] / 2)
				p->lblock = b;
			return;
		}
}

/* ---------------------------------------------------- CPU reduce passes */

/* k's one STORE where its reduce can run in passes: the only
 * REDUCE_AXIS, stored in its own dtype (a pass's partial result is
 * exact), to a buffer the kernel does not read. */
const tg_uop *tg_kp_pass_store(const tg_kernel *k)
{
	const tg_uop *red = NULL, *st = k->sink->src[0];

	if (k->sink->nsrc != 1 || st->op != TG_STORE)
		return NULL;
	for (size_t i = 0; i < k->n; i++) {
		const tg_uop *u = k->order[i];
		if (u->op == TG_REDUCE_AXIS && red)
			return NULL;
		if (u->op == TG_REDUCE_AXIS)
			red = u;
		if (u->op == TG_LOAD && tg_ast_buf(u) == tg_ast_buf(st))
			return NULL;
	}
	return red && tg_type_scalar(red->dtype) ==
	              tg_type_scalar(st->src[2]->dtype) ? st : NULL;
}

/* Whether the plan can cut its outer reduce loop: a C kernel with no
 * loops outside it, no lanes of partial sums and that loop neither
 * padded nor symbolic. */
int tg_kp_passes_allowed(const tg_kplan *p)
{
	uint32_t ax = p->raxes[0];

	return p->caps && p->caps->dialect == TG_DIALECT_C && p->nred &&
	       !p->nloop && !p->nlocal && !(p->lanes & p->reduce_axes) &&
	       !(p->padded & (1u << ax)) && !p->sym[ax];
}

/* Bytes an item reads per iteration of the outer reduce loop: into
 * *keep those of the inputs that do not move with gidx0 (the slice the
 * next items, the next gidx0 as the launch runs, read again), into
 * *move those of the inputs that move with gidx0 but not with gidx1,
 * times the extent of gidx0: the panel the next gidx1 reads again.
 * (The whole extent, not a launch block's: the hand-coded opts choose
 * the launch order by this before any block is chosen, and the pass
 * length must not change with the block.) */
static void pass_slices(const tg_kplan *p, const tg_kernel *k,
                        int64_t *keep, int64_t *move)
{
	uint32_t x = p->gaxes[p->nglobal - 1], r = p->raxes[0];
	int64_t sweep = (int64_t)p->global[0];
	int y = p->nglobal > 1 ? (int)p->gaxes[p->nglobal - 2] : -1;

	*keep = *move = 0;
	for (size_t i = 0; i < k->n; i++) {
		const tg_uop *u = k->order[i];
		int64_t rs[TG_MAX_DIMS], n;
		if (u->op != TG_LOAD)
			continue;
		tg_kp_real_strides(k, tg_kernel_st(k, u), rs);
		if (rs[r] == 0)
			continue;
		n = tg_dtype_size(tg_type_scalar(u->dtype));
		for (size_t ax = 0; ax < p->ndim; ax++)
			if (rs[ax] != 0)
				n *= ax == r || !(p->reduce_axes & (1u << ax))
				     ? p->upcast[ax] : p->full[ax];
		if (rs[x] == 0)
			*keep += n;
		else if (y >= 0 && rs[y] == 0)
			*move += n * sweep;
	}
}

/* The heuristic's pass length for plan p as it stands, 0 for one pass:
 * where the whole loop's slice leaves the L1 or its panel the L2, the
 * largest divisor of the loop (up to half) whose slice and panel fit,
 * if it takes TG_KP_PASS_MIN iterations or more.  *by_panel: whether the
 * panel left the L2. */
int64_t tg_kp_pass_length(const tg_kplan *p, const tg_kernel *k,
                          int *by_panel)
{
	int64_t n, keep, move, d;

	*by_panel = 0;
	if (!tg_kp_passes_allowed(p) || !p->pass_ok || !p->nglobal)
		return 0;
	n = tg_kplan_outer(p, p->raxes[0]);
	pass_slices(p, k, &keep, &move);
	*by_panel = n * move > PASS_PANEL;
	if (n * keep <= PASS_SLICE && !*by_panel)
		return 0;
	d = n / 2;
	if (keep && PASS_SLICE / keep < d)
		d = PASS_SLICE / keep;
	if (move && PASS_PANEL / move < d)
		d = PASS_PANEL / move;
	for (; d >= TG_KP_PASS_MIN; d--)
		if (n % d == 0)
			return d;
	return 0;
}

void tg_kplan_reduce_block(tg_kplan *p, const tg_kernel *k, int64_t force)
{
	int64_t n;
	int by_panel;

	p->rblock = p->pass;
	if (p->pass || !tg_kp_passes_allowed(p) || !p->pass_ok)
		return;
	n = tg_kplan_outer(p, p->raxes[0]);
	if (force > 0) {
		if (n % force == 0 && n / force >= 2)
			p->rblock = force;
		return;
	}
	p->rblock = tg_kp_pass_length(p, k, &by_panel);
}

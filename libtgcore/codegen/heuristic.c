/*
 * codegen/heuristic.c - the hand-coded opts (tinygrad's
 * hand_coded_optimizations, mid-2024): what tg_codegen applies when no
 * search chose a kernel's opts.  tg_kplan_hand_opt runs them; in
 * order (each documented at its function):
 *  on CPUs, the register tile of an outer product (opt_cpu_tile,
 *  cpu_tile.c) where the output has a vector axis: the device's tensor
 *  core (TC) where it divides a matmul-shaped kernel, else a tile
 *  fitted to the shape; then the unroll (2.); without a vector axis
 *  the generic ones below;
 *  on GPUs, a matmul-shaped kernel onto the tensor core (opt_gpu_tc),
 *  a matvec grouped by rows (opt_matvec), each then alone, else:
 *  0. on GPUs, a reduce to a small output is grouped (GROUPTOP);
 *  1. register blocking: upcast by 4 up to two global axes along which
 *     an input is broadcast (a matmul's output rows and columns);
 *  2. unroll the innermost reduce loop: whole when 4 or shorter, else
 *     by 4 when 4 divides it;
 *  3. when nothing was applied, upcast the last global axis by 4;
 *  4. on GPUs, local parts for up to three global axes (LOCAL).
 * Budgets for a CPU's 16 vector registers: at most 16 copies from
 * upcasts and 64 in all (tinygrad allows 256 upcasted elements on GPUs,
 * whose threads are cheap and whose register files are large).
 * Separate from cpu_tile.c, tgcore's own opts for a CPU's vectors and
 * caches, which fall back to these where a kernel has no vector axis.
 */
#include "config.h"

#include <string.h>

#include "codegen/codegen.h"
#include "codegen/kplan.h"
#include "ir/ir.h"

#define SPLIT 4          /* tinygrad's default upcast and unroll */
#define MAX_BLOCK 16     /* copies from upcasts of global axes */
#define MAX_COPIES 64    /* copies in all */

/* The stride of st's last view on axis ax, or -1 when symbolic. */
int64_t tg_kp_stride(const tg_st *st, size_t ax)
{
	tg_sint s = st->views[st->nviews - 1]->strides[ax];

	return tg_sint_is_int(s) ? s.c : -1;
}

/* Whether st is broadcast (stride 0) along an axis upcast already: a
 * buffer that is, is not blocked again (tinygrad's check). */
static int broadcast_upcast(const tg_kplan *p, const tg_st *st)
{
	for (size_t i = 0; i < p->ndim; i++)
		if (p->upcast[i] > 1 && tg_kp_stride(st, i) == 0)
			return 1;
	return 0;
}

/* The global axis to block next: one split by SPLIT along which some
 * LOAD is broadcast, preferring (as tinygrad) the fewest buffers moving
 * along it, then the smallest strides.  -1 when none. */
static int block_axis(const tg_kplan *p, const tg_kernel *k)
{
	int best = -1;
	int64_t bkey[2] = { 0, 0 };

	for (size_t g = 0; g < p->nglobal; g++) {
		uint32_t ax = p->gaxes[g];
		int64_t key[2] = { 0, 0 };
		int bcast = 0;
		if (p->upcast[ax] > 1 || tg_kplan_outer(p, ax) % SPLIT)
			continue;
		for (size_t i = 0; i < k->n; i++) {
			const tg_uop *a = k->order[i];
			if (a->op != TG_LOAD && a->op != TG_STORE)
				continue;
			const tg_st *st = tg_kernel_st(k, a);
			int64_t s = tg_kp_stride(st, ax);
			if (a->op == TG_LOAD && s == 0 &&
			    !broadcast_upcast(p, st))
				bcast = 1;
			key[0] += s != 0;
			key[1] += s > 0 ? s : 0;
		}
		if (bcast && (best < 0 || key[0] < bkey[0] ||
		              (key[0] == bkey[0] && key[1] < bkey[1]))) {
			best = (int)ax;
			memcpy(bkey, key, sizeof key);
		}
	}
	return best;
}

/* 1. Register blocking: each thread computes a SPLIT x SPLIT block of a
 * matmul's outputs, reusing every loaded element SPLIT times. */
static int opt_block(tg_kplan *p, const tg_kernel *k)
{
	int ax, rc;

	/* the copies in all stay within what UPCAST allows: a CPU's
	 * reduce read in blocks may be unrolled by 32 already */
	for (int i = 0; i < 2 && tg_kp_copies(p, 0) * SPLIT <= MAX_BLOCK &&
	                tg_kp_copies(p, -1) * SPLIT <= TG_MAX_EXPAND; i++) {
		if ((ax = block_axis(p, k)) < 0)
			break;
		if ((rc = tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_UPCAST, ax,
		                                          SPLIT })))
			return rc;
	}
	return TG_OK;
}

/* 2. Unroll the innermost reduce loop (tinygrad unrolls up to 32 whole;
 * on a CPU short loops are the ones worth removing). */
int tg_kp_opt_unroll(tg_kplan *p)
{
	uint32_t ax;
	int64_t s;

	if (!p->caps || p->nred == 0)
		return TG_OK;
	ax = p->raxes[p->nred - 1];
	s = tg_kplan_outer(p, ax);
	if (p->sym[ax] || (p->lanes >> ax & 1))
		return TG_OK;
	if (s <= SPLIT && tg_kp_copies(p, -1) * s <= MAX_COPIES)
		return tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_UNROLL, (int)ax,
		                                       0 });
	if (s % SPLIT == 0 && tg_kp_copies(p, -1) * SPLIT <= MAX_COPIES)
		return tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_UNROLL, (int)ax,
		                                       SPLIT });
	return TG_OK;
}

/* 3. Nothing applied: SPLIT outputs per thread along the last global
 * axis (consecutive in memory for contiguous outputs, so the compiler
 * can vectorize them). */
static int opt_upcast_last(tg_kplan *p)
{
	uint32_t ax;

	if (p->nopts || p->nglobal == 0)
		return TG_OK;
	ax = p->gaxes[p->nglobal - 1];
	if (tg_kplan_outer(p, ax) % SPLIT)
		return TG_OK;
	return tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_UPCAST, (int)ax, SPLIT });
}

static int has_groups(const tg_kplan *p)
{
	return p->caps && p->caps->has_local && p->caps->has_shared;
}

/* 0. On a GPU, a reduce to a small output (at most 2048 elements over
 * at most two axes) is split across a work group: GROUPTOP by 256 when
 * the output has at most 32 elements, else by 16 (tinygrad's sizes). */
static int opt_group(tg_kplan *p)
{
	static const int64_t big[] = { 256, 16 }, small[] = { 16 };
	int64_t out = 1;
	uint32_t ax;

	if (!has_groups(p) || p->nred == 0 || p->nglobal > 2)
		return TG_OK;
	for (size_t g = 0; g < p->nglobal; g++)
		out *= tg_kplan_outer(p, p->gaxes[g]);
	if (out > 2048)
		return TG_OK;
	ax = p->raxes[0];
	if (p->sym[ax])
		return TG_OK;
	const int64_t *sz = out <= 32 ? big : small;
	for (size_t i = 0; i < (out <= 32 ? 2u : 1u); i++)
		if (tg_kplan_outer(p, ax) % sz[i] == 0 &&
		    (size_t)sz[i] <= p->caps->local_max_total &&
		    tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_GROUPTOP, (int)ax,
		                                    sz[i] }) == TG_OK)
			break;
	tg_clear_error();
	return TG_OK;
}

/* Whether some buffer is broadcast (stride 0) along axis ax. */
static int expand_axis(const tg_kernel *k, size_t ax)
{
	for (size_t i = 0; i < k->n; i++)
		if ((k->order[i]->op == TG_LOAD ||
		     k->order[i]->op == TG_STORE) &&
		    tg_kp_stride(tg_kernel_st(k, k->order[i]), ax) == 0)
			return 1;
	return 0;
}

/* 4. On a GPU, up to three global axes get local parts, at most 128
 * items a group: broadcast axes first (their loads are shared by the
 * group), then the innermost; sizes 32 (outermost axis only), 16, 8,
 * 4, 3, 2, the first that divides (tinygrad's ranking). */
static int opt_locals(tg_kplan *p, const tg_kernel *k)
{
	uint32_t ax_of[TG_MAX_DIMS];
	int64_t amt[TG_MAX_DIMS], size = 1;
	size_t nto = 0, nrank = 0;
	uint32_t rank[TG_MAX_DIMS];

	if (!p->caps || !p->caps->has_local || p->nlocal > 0)
		return TG_OK;
	for (int e = 1; e >= 0; e--)  /* broadcast axes, then the rest */
		for (size_t g = p->nglobal; g-- > 0;)
			if (expand_axis(k, p->gaxes[g]) == e)
				rank[nrank++] = p->gaxes[g];
	for (size_t r = 0; r < nrank && nto < 3; r++) {
		static const int64_t cand[] = { 32, 16, 8, 4, 3, 2 };
		for (size_t c = rank[r] == p->gaxes[0] ? 0 : 1; c < 6; c++)
			if (tg_kplan_outer(p, rank[r]) % cand[c] == 0 &&
			    size * cand[c] <= 128 &&
			    (size_t)(size * cand[c]) <= p->caps->local_max_total) {
				ax_of[nto] = rank[r];
				amt[nto++] = cand[c];
				size *= cand[c];
				break;
			}
	}
	/* a local the device cannot launch (too many groups on another
	 * axis) is left out: the kernel runs without it */
	for (size_t i = 0; i < nto; i++)
		if (tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_LOCAL, (int)ax_of[i],
		                                    amt[i] }))
			tg_clear_error();
	return TG_OK;
}

/* ------------------------------------------------------------ GPU matvec */

#define MV_THREADS 8  /* tinygrad's MV_THREADS_PER_ROW: a row's reduce */
#define MV_BLOCK 4    /* MV_BLOCKSIZE: rows per work group */
#define MV_ROWS 4     /* MV_ROWS_PER_THREAD */

/* Whether st has an axis longer than 1 along which it is broadcast. */
static int has_expanded(const tg_st *st, const int64_t *rs)
{
	for (size_t ax = 0; ax < tg_st_ndim(st); ax++)
		if (rs[ax] == 0 && !tg_sint_is(tg_st_shape(st)[ax], 1))
			return 1;
	return 0;
}

/* tinygrad's matvec heuristic, on a GPU: a SUM of the product of two
 * loads, the first contiguous along the first reduce axis and not both
 * broadcast somewhere (a matrix times a vector, either side).  Each row
 * of the output is reduced by MV_THREADS items of a work group
 * (GROUP), MV_BLOCK rows a group (LOCAL), MV_ROWS rows an item
 * (UPCAST), on the first global axis those divide.  1 when applied, 0
 * when the kernel is not a matvec, or an error. */
static int opt_matvec(tg_kplan *p, const tg_kernel *k)
{
	const tg_uop *a, *b;
	int64_t rs0[TG_MAX_DIMS], rs1[TG_MAX_DIMS];
	uint32_t rax;
	int only;

	if (!has_groups(p) || p->nred == 0 || p->ndim < 2 ||
	    !tg_kp_sum_of_product(k, 0, &a, &b, &only))
		return 0;
	const tg_st *st0 = tg_kernel_st(k, a);
	const tg_st *st1 = tg_kernel_st(k, b);
	tg_kp_real_strides(k, st0, rs0);
	tg_kp_real_strides(k, st1, rs1);
	rax = p->raxes[0];
	if (rs0[rax] != 1 || (has_expanded(st0, rs0) && has_expanded(st1, rs1)) ||
	    tg_kplan_outer(p, rax) % MV_THREADS)
		return 0;
	for (size_t g = 0; g < p->nglobal; g++) {
		uint32_t ax = p->gaxes[g];
		tg_kplan c = *p;
		if (tg_kplan_outer(p, ax) % (MV_BLOCK * MV_ROWS))
			continue;
		/* on a copy: a device whose limits refuse one of the three
		 * gets the generic heuristics */
		if (tg_kplan_apply_opt(&c, (tg_opt){ TG_OPT_GROUP, (int)rax,
		                                     MV_THREADS }) ||
		    tg_kplan_apply_opt(&c, (tg_opt){ TG_OPT_LOCAL, (int)ax,
		                                     MV_BLOCK }) ||
		    tg_kp_upcast(&c, ax, MV_ROWS)) {
			tg_clear_error();
			return 0;
		}
		*p = c;
		return 1;
	}
	return 0;
}

/* tinygrad's first hand-coded opt on a device with work groups: a
 * matmul-shaped kernel onto the device's tensor core (TC(choice,
 * TC_OPT)), then the largest of 4 and 2 that divides M and N upcast,
 * so that a thread runs several instructions on each fragment it
 * loads.  1 when applied. */
static int opt_gpu_tc(tg_kplan *p)
{
	static const int64_t upc[] = { 4, 2 };

	for (size_t c = 0; p->caps && p->caps->has_local && p->tc_use &&
	                   c < p->ntc; c++) {
		tg_kplan t = *p;
		if (tg_kplan_apply_opt(&t, (tg_opt){ TG_OPT_TC, (int)c,
		                                     p->tc_opt })) {
			tg_clear_error();
			continue;
		}
		for (int d = 1; d >= 0; d--)
			for (size_t i = 0; i < TG_ARRAY_LEN(upc); i++) {
				uint32_t ax = p->tc_axes[c][d];
				if (tg_kplan_outer(&t, ax) % upc[i])
					continue;
				if (tg_kplan_apply_opt(&t, (tg_opt){ TG_OPT_UPCAST,
				                       (int)ax, upc[i] }) == TG_OK)
					break;
				tg_clear_error();
			}
		*p = t;
		return 1;
	}
	return 0;
}

int tg_kplan_hand_opt(tg_kplan *p, const tg_kernel *k)
{
	int rc;

	for (size_t i = 0; i < p->ndim; i++)
		if (p->full[i] == 0)
			return TG_OK;  /* refused by lowering anyway */
	if (!(p->caps && p->caps->has_local) && (rc = tg_kp_opt_cpu(p, k)))
		return rc < 0 ? tg_error_prefix("opt: kernel %s", p->name)
		              : TG_OK;
	if (opt_gpu_tc(p) || opt_matvec(p, k))
		return TG_OK;
	if (tg_kp_opt_generic(p, k))
		return tg_error_prefix("opt: kernel %s", p->name);
	return TG_OK;
}

/* tinygrad's hand-coded opts after the tensor core and the matvec. */
int tg_kp_opt_generic(tg_kplan *p, const tg_kernel *k)
{
	return opt_group(p) || opt_block(p, k) || tg_kp_opt_unroll(p) ||
	       opt_upcast_last(p) || opt_locals(p, k) ? -1 : TG_OK;
}

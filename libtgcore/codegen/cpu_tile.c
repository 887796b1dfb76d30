/*
 * codegen/cpu_tile.c - the hand-coded opts of a device without work
 * groups (a CPU), tgcore's own: tinygrad's heuristics know nothing of
 * a CPU's vector registers.  Where the output has a vector axis, the
 * register tile of an outer product (opt_cpu_tile: the device's tensor
 * core where it divides a matmul-shaped kernel, else a tile fitted to
 * the shape) and the launch order that keeps its panels in the caches;
 * without one, a reduce read in blocks unrolled by a block
 * (opt_cpu_period), vector lanes for the reduce (opt_cpu_lanes), tinygrad's
 * heuristics (heuristic.c) and the launch order that reads from L1.
 * tg_kp_opt_cpu runs them for tg_kplan_hand_opt, every tracker's
 * strides read once (tg_kp_real_strides, which the plan and the other
 * heuristics read too).  Separate from heuristic.c: these are sized by
 * the machine's vector width and caches, those by tinygrad's GPUs.
 */
#include "config.h"

#include <stdlib.h>

#include "codegen/codegen.h"
#include "codegen/kplan.h"
#include "ir/ir.h"

/* The strides of st on every axis as the kernel reads memory: through
 * every view of the tracker (tinygrad's real_strides, masks ignored),
 * -1 where an axis's is not one number (a div or mod of the axis). */
void tg_kp_real_strides(const tg_kernel *k, const tg_st *st, int64_t *out)
{
	tg_sint s[TG_MAX_DIMS];
	uint8_t known[TG_MAX_DIMS];
	size_t n = tg_st_ndim(st);

	if (st->nviews > 1 && tg_st_real_strides(k->ir, st, 1, s, known)) {
		tg_ir_clear_status(k->ir);
		tg_clear_error();
		for (size_t ax = 0; ax < n; ax++)
			out[ax] = -1;
		return;
	}
	for (size_t ax = 0; ax < n; ax++)
		out[ax] = st->nviews == 1 ? tg_kp_stride(st, ax)
		          : known[ax] && tg_sint_is_int(s[ax]) ? s[ax].c : -1;
}

/* rs[i]: the real strides of k->order[i] when it is a LOAD or STORE
 * (each tracker's expression is built once per plan). */
typedef int64_t kstrides[TG_MAX_DIMS];

/* Whether every LOAD and STORE of k moves along axis ax by stride 1
 * (STOREs) or by 0 or 1 (LOADs): then lanes along ax are one vector
 * load, store or broadcast each, never a gather. */
static int vector_friendly(const tg_kernel *k, const kstrides *rs,
                           size_t ax)
{
	for (size_t i = 0; i < k->n; i++) {
		const tg_uop *a = k->order[i];
		if (a->op != TG_LOAD && a->op != TG_STORE)
			continue;
		if (rs[i][ax] != 1 && (a->op == TG_STORE || rs[i][ax] != 0))
			return 0;
	}
	return 1;
}

/* Whether the LOADs of k move along axis ax by 0 or 1, at least one by
 * 1, while a STORE does not (a convolution's input gradient along the
 * image, stored with the window's stride): lanes along ax load as one
 * vector and compute as one; vectorize.c then stores them one by one. */
static int loads_vector(const tg_kernel *k, const kstrides *rs, size_t ax)
{
	int one = 0;

	for (size_t i = 0; i < k->n; i++) {
		if (k->order[i]->op != TG_LOAD)
			continue;
		if (rs[i][ax] != 0 && rs[i][ax] != 1)
			return 0;
		one |= rs[i][ax] == 1;
	}
	return one;
}

/* The largest of cand[] that divides s and keeps the copies within
 * budget, else 0. */
static int64_t fitting(const tg_kplan *p, int64_t s, const int64_t *cand,
                       size_t n, int64_t budget)
{
	for (size_t i = 0; i < n; i++)
		if (cand[i] > 1 && s % cand[i] == 0 &&
		    tg_kp_copies(p, -1) * cand[i] <= budget)
			return cand[i];
	return 0;
}

int tg_kp_upcast(tg_kplan *p, uint32_t ax, int64_t amt)
{
	return amt > 1 ? tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_UPCAST,
	                                                  (int)ax, amt })
	               : TG_OK;
}

/* The rows of the tile: a global axis other than the vector axis jax
 * along which some LOAD is broadcast and that some row count divides.
 * Preferred: one along which a LOAD that is a vector along jax is
 * broadcast, so that the rows share that vector and each broadcast the
 * other operand's scalar (a matmul's b along its rows, a convolution's
 * input along its output channels); among those, the one that takes
 * the most rows (the innermost on a tie).  -1 when none. */
static const int64_t tile_rows[] = { 8, 6, 5, 4, 3, 2 };

static int row_axis(const tg_kplan *p, const tg_kernel *k,
                    const kstrides *rs, int jax)
{
	int best[2] = { -1, -1 };  /* [shares the vector], [any] */
	int64_t most[2] = { 0, 0 };

	for (size_t g = p->nglobal; g-- > 0;) {
		uint32_t ax = p->gaxes[g];
		int64_t m = fitting(p, tg_kplan_outer(p, ax), tile_rows,
		                    TG_ARRAY_LEN(tile_rows), INT64_MAX);

		if ((int)ax == jax || p->upcast[ax] > 1 || !m)
			continue;
		for (size_t i = 0; i < k->n; i++) {
			int sh = rs[i][jax] == 1;

			if (k->order[i]->op != TG_LOAD || rs[i][ax] != 0 ||
			    m <= most[sh])
				continue;
			best[sh] = (int)ax;
			most[sh] = m;
		}
	}
	return best[1] >= 0 ? best[1] : best[0];
}

/* The rows axis varies fastest between work-items (SWAP it last in
 * launch order): consecutive tiles then read the same panel of the
 * input broadcast along the rows (a matmul's columns of B), which stays
 * in the cache, and only the small row panels stream in. */
static int stream_rows(tg_kplan *p, int iax)
{
	uint32_t last = p->nglobal ? p->gaxes[p->nglobal - 1] : 0;
	int in = 0;

	for (size_t g = 0; g < p->nglobal; g++)
		in |= (int)p->gaxes[g] == iax;
	if (iax < 0 || !in || (int)last == iax)
		return TG_OK;
	return tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_SWAP, iax, last });
}

/* A tile's rows stream (stream_rows) unless, in the launch order it
 * has, its reduce runs in passes because a sweep of the columns reads
 * a panel of the other input that leaves the L2: then the columns stay
 * innermost, so
 * consecutive tiles share the rows' slice of one input (a matmul's A)
 * in the L1, and a pass's panel of the other (B's rows) stays in the
 * L2 for the next rows.  The passes cut B's reads from memory where
 * streaming the rows could not: B's rows are a power of 2 apart in a
 * square matmul, so a column tile's slice of them shares a few L1
 * sets and never stays there (N=1024: 280 GFLOP/s against 175). */
static int stream_tile_rows(tg_kplan *p, const tg_kernel *k, int iax)
{
	int by_panel;

	return tg_kp_pass_length(p, k, &by_panel) && by_panel
	       ? TG_OK : stream_rows(p, iax);
}

/* Where the vector axis jax has strided stores (a convolution's input
 * gradient: lanes along the image, stored a window apart), the axis
 * along which every STORE is contiguous (the window's offsets) goes
 * innermost in launch order instead of the rows: consecutive work-items
 * then fill the same cache lines, each of which would otherwise be
 * written one lane at a time by work-items far apart, and read back
 * from memory for each. */
static int stream_stores(tg_kplan *p, const tg_kernel *k,
                         const kstrides *rs, int jax)
{
	for (size_t g = p->nglobal; g-- > 0;) {
		uint32_t ax = p->gaxes[g];
		int store = 1;

		if ((int)ax == jax || tg_kplan_outer(p, ax) < 2)
			continue;
		for (size_t i = 0; i < k->n; i++)
			if (k->order[i]->op == TG_STORE)
				store &= rs[i][ax] == 1;
		if (store)
			return stream_rows(p, (int)ax);
	}
	return TG_OK;
}

/* On a CPU, the register tile of an outer product (the microkernel of
 * a matmul or a convolution): the output is computed in vectors of the
 * machine's width along an axis where it is contiguous (the vector
 * axis: one vector of loads, a broadcast, one FMA per lane group), two
 * vectors wide, times up to 8 rows along an axis where an input is
 * broadcast: 16 vector accumulators that each take one FMA per step of
 * the reduce, with one vector load per column and one broadcast per
 * row.  Elementwise kernels get the vector axis alone, 4 vectors a
 * work-item.  jax is the vector axis (vector_friendly).  1 when a tile
 * was made, 0 when the axis takes no vector, or an error. */
static int tile(tg_kplan *p, const tg_kernel *k, const kstrides *rs,
                int jax, int64_t lanes)
{
	int64_t w, m;
	int iax, rc;

	for (w = lanes; w >= 2 && tg_kplan_outer(p, (size_t)jax) % w; w /= 2)
		;
	if (w < 2 || (rc = tg_kp_upcast(p, (uint32_t)jax, w)))
		return w < 2 ? 0 : rc;
	if (!p->has_reduce) {
		m = fitting(p, tg_kplan_outer(p, (size_t)jax),
		            (const int64_t[]){ 4, 2 }, 2, TG_MAX_EXPAND);
		return (rc = tg_kp_upcast(p, (uint32_t)jax, m)) ? rc : 1;
	}
	iax = row_axis(p, k, rs, jax);
	m = fitting(p, tg_kplan_outer(p, (size_t)jax), (const int64_t[]){ 2 },
	            1, TG_MAX_EXPAND / (iax >= 0 ? 8 : 1));
	if ((rc = tg_kp_upcast(p, (uint32_t)jax, m)))
		return rc;
	if (iax >= 0 &&
	    (rc = tg_kp_upcast(p, (uint32_t)iax,
	                       fitting(p, tg_kplan_outer(p, (size_t)iax),
	                               tile_rows, TG_ARRAY_LEN(tile_rows),
	                               TG_MAX_EXPAND))))
		return rc;
	rc = vector_friendly(k, rs, (size_t)jax) ? stream_tile_rows(p, k, iax)
	                                         : stream_stores(p, k, rs, jax);
	return rc ? rc : 1;
}

/* The tile through the device's tensor core, where it divides a
 * matmul-shaped kernel whose N axis is vector-friendly: the same
 * microkernel as tile(), named by one TC opt; then the rows stream as
 * in tile().  1 when applied, 0 when not, or an error. */
static int cpu_tc(tg_kplan *p, const tg_kernel *k, const kstrides *rs)
{
	for (size_t c = 0; p->tc_use && c < p->ntc; c++) {
		tg_kplan t = *p;
		if (!vector_friendly(k, rs, p->tc_axes[c][0]))
			continue;
		if (tg_kplan_apply_opt(&t, (tg_opt){ TG_OPT_TC, (int)c,
		                                     p->tc_opt })) {
			tg_clear_error();
			continue;
		}
		*p = t;
		return stream_tile_rows(p, k, p->tc_axes[c][1]) ? -1 : 1;
	}
	return 0;
}

/* The widest vector a global axis takes (a power of 2 up to lanes that
 * divides it), 1 for none. */
static int64_t vector_width(const tg_kplan *p, uint32_t ax, int64_t lanes)
{
	int64_t w = lanes;

	while (w >= 2 && tg_kplan_outer(p, ax) % w)
		w /= 2;
	return w < 2 ? 1 : w;
}

/* The vector axis of the tile, from the innermost global axis out: the
 * first vector-friendly one that takes a whole vector, else the first
 * whose loads are vectors (loads_vector) that does, else the
 * vector-friendly one that takes the widest; -1 when none. */
static int vector_axis(const tg_kplan *p, const tg_kernel *k,
                       const kstrides *rs, int64_t lanes)
{
	int best = -1, strided = -1;
	int64_t bw = 1;

	for (size_t g = p->nglobal; g-- > 0;) {
		uint32_t ax = p->gaxes[g];
		int64_t w = vector_width(p, ax, lanes);

		if (vector_friendly(k, rs, ax)) {
			if (w == lanes)
				return (int)ax;
			if (w > bw)
				best = (int)ax, bw = w;
		} else if (w == lanes && strided < 0 && p->has_reduce &&
		           loads_vector(k, rs, ax)) {
			strided = (int)ax;
		}
	}
	return strided >= 0 ? strided : best;
}

/* The CPU tile (tile) on the vector axis (vector_axis).  1 when a tile
 * was made, 0 when the kernel has no vector axis, or an error. */
static int opt_cpu_tile(tg_kplan *p, const tg_kernel *k, const kstrides *rs,
                        int64_t lanes)
{
	int jax, rc;

	if (p->nglobal == 0)
		return 0;
	jax = vector_axis(p, k, rs, lanes);
	rc = cpu_tc(p, k, rs);
	if (rc == 0)
		rc = jax < 0 ? 0 : tile(p, k, rs, jax, lanes);
	return rc;
}

/* On a CPU, a kernel whose output has no vector axis but whose
 * innermost reduce loop reads every input contiguously (a dot product
 * per output: a convolution's weight gradient, a matvec, a sum) sums
 * in vector lanes: GROUP(axis, the widest vector that divides it) makes
 * that many partial sums, one vector accumulator, added after the loop.
 * The generic heuristics then block the outputs around it.  The sum's
 * order changes (within rounding, as a GPU's grouped reduce). */
static int opt_cpu_lanes(tg_kplan *p, const tg_kernel *k,
                         const kstrides *rs, int64_t lanes)
{
	uint32_t ax;
	int64_t w;

	if (!p->caps || p->nred == 0)
		return TG_OK;
	ax = p->raxes[p->nred - 1];
	if (p->sym[ax] || p->upcast[ax] > 1 ||  /* unrolled by a block */
	    (w = vector_width(p, ax, lanes)) < 4 ||
	    !loads_vector(k, rs, ax))
		return TG_OK;
	return tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_GROUP, (int)ax, w });
}

#define PERIOD_UNROLL 64  /* copies of the reduce a period may take */
#define PERIOD_COPIES 128 /* copies in all, with the rows: Q5_K's matvec
                             unrolled by 64 times 4 rows took 14 s to
                             compile, by 64 times 2 under 2 s */

static int64_t gcd(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* The period of k's loads along axis ax (tg_st_axis_period): the lcm
 * of theirs, those without one left out; 1 when none has one. */
static int64_t read_period(const tg_kernel *k, size_t ax)
{
	int64_t per = 1;

	for (size_t i = 0; i < k->n; i++) {
		int64_t q;
		if (k->order[i]->op != TG_LOAD)
			continue;
		if (tg_st_axis_period(k->ir, tg_kernel_st(k, k->order[i]), ax,
		                      &q)) {
			tg_ir_clear_status(k->ir);
			tg_clear_error();
			continue;
		}
		if (q > 1)
			per = per / gcd(per, q) * q;
	}
	return per;
}

/* The rows of a block-unrolled reduce: the innermost global axis along
 * which some LOAD is broadcast (a matvec's output rows, which share
 * the vector's loads), upcast by 4 or 2 within PERIOD_COPIES. */
static int period_rows(tg_kplan *p, const tg_kernel *k, const kstrides *rs)
{
	for (size_t g = p->nglobal; g-- > 0;) {
		uint32_t ax = p->gaxes[g];
		int64_t m = fitting(p, tg_kplan_outer(p, ax),
		                    (const int64_t[]){ 4, 2 }, 2, PERIOD_COPIES);

		for (size_t i = 0; m && i < k->n; i++)
			if (k->order[i]->op == TG_LOAD && rs[i][ax] == 0)
				return tg_kp_upcast(p, ax, m);
	}
	return TG_OK;
}

/* A reduce whose loads read its innermost axis in blocks (a block
 * format's weights: the block index is the axis divided by the block's
 * length, its scale's bytes are loaded at it, a nibble plane is chosen
 * by the axis modulo a half block) is unrolled by the largest divisor
 * of that period that divides the loop, up to PERIOD_UNROLL, and its
 * rows are blocked within PERIOD_COPIES: in each iteration the block
 * index is then one value for every copy, so the per-block work (the
 * scale's decode) is computed once for all of them, and each copy's
 * place in the block is a constant that folds its plane's selection.
 * Unrolled by tinygrad's 4 instead, a Q4_0 matvec decoded each scale 8
 * times per block and selected each nibble with two gated loads; by
 * 32, Q6_K's (4 planes in 128 values) still selected them by gates. */
static int opt_cpu_period(tg_kplan *p, const tg_kernel *k,
                          const kstrides *rs)
{
	uint32_t ax;
	int64_t per, s, u;
	int rc;

	if (!p->caps || p->nred == 0)
		return TG_OK;
	ax = p->raxes[p->nred - 1];
	if (p->sym[ax] || p->upcast[ax] > 1 || (p->lanes >> ax & 1) ||
	    (per = read_period(k, ax)) <= 1)
		return TG_OK;
	s = tg_kplan_outer(p, ax);
	for (u = PERIOD_UNROLL; u > 1 && (per % u || s % u ||
	     tg_kp_copies(p, -1) * u > PERIOD_COPIES); u--)
		;
	if (u < 2)
		return TG_OK;
	if ((rc = tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_UNROLL, (int)ax,
	                                          u })))
		return rc;
	return period_rows(p, k, rs);
}

/* Without a tile, the global axis along which the LOADs move least per
 * work-item goes innermost in launch order (a convolution's weight
 * gradient: the window's column, along which one input is broadcast
 * and the other moves by one element), so that consecutive work-items
 * on a thread read what the last one left in L1.  An axis with a
 * stride that is not one number is not chosen. */
static int stream_reads(tg_kplan *p, const tg_kernel *k, const kstrides *rs)
{
	int best = -1;
	int64_t least = INT64_MAX;

	if (!p->has_reduce)  /* each input is read once */
		return TG_OK;
	for (size_t g = 0; g < p->nglobal; g++) {
		uint32_t ax = p->gaxes[g];
		int64_t moved = 0;

		if (tg_kplan_outer(p, ax) < 2)
			continue;
		for (size_t i = 0; i < k->n && moved >= 0; i++) {
			int64_t s = rs[i][ax];
			if (k->order[i]->op != TG_LOAD)
				continue;
			moved = s < 0 ? -1 : moved + s * p->upcast[ax];
		}
		if (moved >= 0 && moved <= least)
			best = (int)ax, least = moved;
	}
	return stream_rows(p, best);
}

/* The CPU's heuristics, every tracker's strides read once: the tile
 * where the output has a vector axis, then the unroll; else the unroll
 * of a reduce read in blocks, lanes for the reduce, tinygrad's
 * heuristics and the launch order that reads from L1.  1 when done, 0 when the device has no vectors (tinygrad's
 * heuristics are to run), or an error. */
int tg_kp_opt_cpu(tg_kplan *p, const tg_kernel *k)
{
	int64_t lanes = p->caps ? p->caps->max_upcast : 4;
	kstrides *rs;
	int rc;

	if (lanes < 2)
		return 0;
	if (!(rs = calloc(k->n ? k->n : 1, sizeof *rs)))
		return tg_error_oom("opt");
	for (size_t i = 0; i < k->n; i++)
		if (k->order[i]->op == TG_LOAD || k->order[i]->op == TG_STORE)
			tg_kp_real_strides(k, tg_kernel_st(k, k->order[i]),
			                   rs[i]);
	rc = opt_cpu_tile(p, k, (const kstrides *)rs, lanes);
	if (rc == 1)
		rc = tg_kp_opt_unroll(p) ? -1 : 1;
	else if (rc == 0)
		rc = opt_cpu_period(p, k, (const kstrides *)rs) ||
		     opt_cpu_lanes(p, k, (const kstrides *)rs, lanes) ||
		     tg_kp_opt_generic(p, k) ||
		     stream_reads(p, k, (const kstrides *)rs) ? -1 : 1;
	free(rs);
	return rc;
}

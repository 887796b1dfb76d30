/*
 * codegen/kernel.c - optimizations of a kernel's plan (tinygrad's
 * codegen/kernel.py: apply_opt and hand_coded_optimizations, mid-2024):
 * UPCAST, UNROLL, PADTO and SWAP everywhere, LOCAL, GROUP, GROUPTOP
 * and NOLOCALS on devices with work groups.
 *
 * The plan (tg_lower_plan) classifies the full shape's axes: reduce
 * axes (those of the REDUCE_AXIS), global axes (the others), size-1
 * axes dropped.  An opt splits an axis's extent s into s/amt, still a
 * launch index (global axis) or a loop (reduce axis), and amt copies of
 * the kernel body: lowering indexes the axis outer*amt + its digit and
 * the expander (expand.c) makes one lane per digit.  UPCAST gives each
 * thread a block of outputs with one accumulator each; UNROLL does amt
 * steps of a reduce per loop iteration.
 *
 * The heuristics, in order (each documented at its function):
 *  on CPUs, the register tile of an outer product (opt_cpu_tile) where
 *  the output has a vector axis: the device's tensor core (TC) where it
 *  divides a matmul-shaped kernel, else a tile fitted to the shape;
 *  then the unroll (2.); without a vector axis the generic ones below;
 *  on GPUs, a matvec is grouped by rows (opt_matvec) and nothing else,
 *  else:
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
 */
#include "config.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "codegen/kplan.h"
#include "ir/ir.h"

#define SPLIT 4          /* tinygrad's default upcast and unroll */
#define MAX_BLOCK 16     /* copies from upcasts of global axes */
#define MAX_COPIES 64    /* copies in all */
#define PASS_SLICE ((int64_t)16 << 10) /* a pass's slice of the input
                                          the block shares: a third of
                                          the L1 */
#define PASS_PANEL ((int64_t)1 << 20) /* a pass's panel of the inputs
                                         that move with gidx0, over a
                                         sweep of gidx0: half of a 2 MiB
                                         L2, so the next gidx1 finds it */

static const char *const opt_names[] = {
	[TG_OPT_UPCAST] = "UPCAST", [TG_OPT_UNROLL] = "UNROLL",
	[TG_OPT_LOCAL] = "LOCAL", [TG_OPT_GROUP] = "GROUP",
	[TG_OPT_GROUPTOP] = "GROUPTOP", [TG_OPT_NOLOCALS] = "NOLOCALS",
	[TG_OPT_PADTO] = "PADTO", [TG_OPT_SWAP] = "SWAP", [TG_OPT_TC] = "TC",
	[TG_OPT_PASS] = "PASS",
};
static_assert(sizeof opt_names / sizeof *opt_names == TG_OPT_LAST + 1,
              "one name per opt");

static int64_t left(const tg_kplan *p, size_t ax)
{
	return tg_kplan_outer(p, ax);
}

/* ------------------------------------------------------------- the plan */

/* The LOAD under u, through one CAST when `cast`; NULL if none. */
static const tg_uop *product_load(const tg_uop *u, int cast)
{
	if (cast && u->op == TG_CAST)
		u = u->src[0];
	return u->op == TG_LOAD ? u : NULL;
}

/* k's first REDUCE_AXIS when it is a SUM of the product of two loads
 * (each maybe under one CAST when `cast`, or the product under one:
 * tinygrad's half matmul multiplies in half and sums in float), its
 * loads in *a and *b and
 * in *only whether it is k's one reduce; else NULL.  The matmul shape
 * that TC and the matvec heuristic look for. */
const tg_uop *tg_kp_sum_of_product(const tg_kernel *k, int cast,
                                   const tg_uop **a, const tg_uop **b,
                                   int *only)
{
	const tg_uop *red = NULL, *mul;

	*only = 1;
	for (size_t i = 0; i < k->n; i++)
		if (k->order[i]->op == TG_REDUCE_AXIS) {
			if (red)
				*only = 0;
			else
				red = k->order[i];
		}
	if (!red || tg_ast_reduce_op(red) != TG_ADD)
		return NULL;
	mul = cast ? tg_ast_reduced(red) : red->src[0];
	if (mul->op != TG_MUL || !(*a = product_load(mul->src[0], cast)) ||
	    !(*b = product_load(mul->src[1], cast)))
		return NULL;
	return red;
}

/* The TC choices with a as A and b as B: N an integer global axis
 * where A is broadcast and B moves, M one where B is broadcast and A
 * moves, K an integer reduce axis where both move; innermost first. */
static void tc_choices(tg_kplan *p, const int64_t *ra, const int64_t *rb,
                       uint8_t asrc)
{
	for (size_t n = p->ndim; n-- > 0;)
		for (size_t m = p->ndim; m-- > 0;)
			for (size_t kx = p->ndim; kx-- > 0;) {
				uint32_t red = p->reduce_axes;
				if (n == m || p->ntc == TG_MAX_TC_CHOICES ||
				    (red >> n) & 1 || (red >> m) & 1 ||
				    !((red >> kx) & 1) || p->sym[n] || p->sym[m] ||
				    p->sym[kx] || ra[n] != 0 || rb[n] == 0 ||
				    rb[m] != 0 || ra[m] == 0 || !ra[kx] || !rb[kx])
					continue;
				p->tc_asrc[p->ntc] = asrc;
				p->tc_axes[p->ntc][0] = (uint8_t)n;
				p->tc_axes[p->ntc][1] = (uint8_t)m;
				p->tc_axes[p->ntc++][2] = (uint8_t)kx;
			}
}

/* The kernel's matmul shape for TC (tinygrad's tensor core match): one
 * REDUCE_AXIS, a SUM, of the product of two loads of one dtype, each
 * maybe cast to the sum's.  Choices with the product's operands in
 * their order, then swapped. */
static void tc_shape(const tg_kernel *k, tg_kplan *p)
{
	const tg_uop *red, *a, *b;
	int64_t ra[TG_MAX_DIMS], rb[TG_MAX_DIMS];
	int only;

	red = tg_kp_sum_of_product(k, 1, &a, &b, &only);
	if (!red || !only || a->dtype != b->dtype ||
	    red->src[0]->dtype != red->dtype)
		return;
	p->tc_dt[0] = (int)a->dtype;
	p->tc_dt[1] = (int)red->dtype;
	tg_kp_real_strides(k, tg_kernel_st(k, a), ra);
	tg_kp_real_strides(k, tg_kernel_st(k, b), rb);
	tc_choices(p, ra, rb, 0);
	tc_choices(p, rb, ra, 1);
}

/* What PADTO may pad (tinygrad's UNSAFE_PAD_OPS check).  Padding reads
 * every leaf as 0 there, so a SUM over a padded reduce axis stays
 * right only when everything under it maps zeros to zero: no op with
 * f(0) != 0, no integer modulo (0 % 0), no nested reduce (its value
 * need not vanish).  Any integer division refuses padding outright:
 * padded lanes are computed, then dropped, and x / 0 traps. */
static int pad_safety(const tg_kernel *k, tg_kplan *p)
{
	uint8_t *unsafe = calloc(k->nid ? k->nid : 1, 1);

	if (!unsafe)
		return tg_error_oom("plan");
	for (size_t i = 0; i < k->n; i++) {
		const tg_uop *a = k->order[i];
		uint8_t u = a->op == TG_MOD || a->op == TG_REDUCE_AXIS ||
		            (tg_op_flags(a->op) & TG_OPF_UNSAFE_PAD);
		if (a->op == TG_IDIV || a->op == TG_MOD)
			p->int_div = 1;
		if (a->op == TG_REDUCE_AXIS &&
		    (tg_ast_reduce_op(a) != TG_ADD ||
		     (a->src[0]->id < k->nid && unsafe[a->src[0]->id])))
			p->pad_unsafe |= tg_ast_reduce_axes(a);
		for (uint32_t j = 0; j < a->nsrc; j++)
			if (a->src[j]->id < k->nid && unsafe[a->src[j]->id])
				u = 1;
		if (a->id < k->nid)
			unsafe[a->id] = u;
	}
	free(unsafe);
	return TG_OK;
}

int tg_lower_plan(const tg_kernel *k, tg_kplan *p)
{
	tg_sint shape[TG_MAX_DIMS];
	size_t nd, i;
	int rc, has_reduce = 0;

	memset(p, 0, sizeof *p);
	if ((rc = tg_ast_full_shape(k->sink, &nd, shape)))
		return rc;
	for (i = 0; i < nd; i++) {
		p->full[i] = p->real[i] = tg_sint_vmax(shape[i]);
		p->sym[i] = shape[i].u;
	}
	p->ndim = nd;
	for (i = 0; i < k->n; i++) {
		const tg_uop *a = k->order[i];
		int buf = a->op == TG_LOAD || a->op == TG_STORE ? tg_ast_buf(a)
		                                                : -1;
		if (a->op == TG_REDUCE_AXIS) {
			p->reduce_axes |= tg_ast_reduce_axes(a);
			has_reduce = 1;
		}
		if (buf >= 0 && (size_t)buf + 1 > p->nbufs)
			p->nbufs = (size_t)buf + 1;
		if (a->op == TG_STORE && buf >= 0 && buf < 32)
			p->outs |= 1u << buf;
	}
	p->has_reduce = has_reduce;
	p->pass_ok = tg_kp_pass_store(k) != NULL;
	if ((rc = pad_safety(k, p)))
		return rc;
	tc_shape(k, p);
	for (i = 0; i < nd; i++) {
		p->upcast[i] = p->local[i] = p->group[i] = 1;
		p->order[i] = (uint8_t)i;
	}
	tg_kplan_update(p);
	return TG_OK;
}

int64_t tg_kplan_outer(const tg_kplan *p, size_t ax)
{
	int64_t kt = p->wmma && ax == p->tc_ax[2] ? p->wmma->kthreads : 1;

	return p->full[ax] / (p->upcast[ax] * p->local[ax] * p->group[ax] * kt);
}

/* An axis's extent in a name: the number, or for a symbolic one its
 * expression's letters and digits, runs of anything else as one '_'
 * ("_pos_1" for (pos+1)). */
static size_t name_extent(const tg_kplan *p, size_t ax, char *buf,
                          size_t len)
{
	char *r;
	size_t n = 0;

	if (!p->sym[ax])
		return (size_t)snprintf(buf, len, "_%lld",
		                        (long long)left(p, ax));
	if (!(r = tg_sym_render(p->sym[ax])))
		return (size_t)snprintf(buf, len, "_s");
	for (const char *c = r; *c && n + 2 < len; c++) {
		int word = isalnum((unsigned char)*c);
		if (word && (n == 0 || !isalnum((unsigned char)c[-1])))
			buf[n++] = '_';
		if (word)
			buf[n++] = *c;
	}
	if (len)
		buf[n < len ? n : len - 1] = 0;
	free(r);
	return n;
}

/* "E_"/"r_", the extents left to launch indices and loops (output
 * loops after the launch indices), then the unrolled and upcasted
 * amounts: "r_128_128_128_4_4_4", "r_4_pos_1". */
static void plan_name(tg_kplan *p)
{
	size_t len, i, nax = p->nglobal + p->nloop + p->nred;

	len = (size_t)snprintf(p->name, sizeof p->name, "%s",
	                       p->has_reduce ? "r" : "E");
	for (i = 0; i < nax && len < sizeof p->name; i++) {
		uint32_t ax = i < p->nglobal ? p->gaxes[i]
		        : i < p->nglobal + p->nloop ? p->oaxes[i - p->nglobal]
		        : p->raxes[i - p->nglobal - p->nloop];
		len += name_extent(p, ax, p->name + len, sizeof p->name - len);
	}
	for (i = 0; i < p->nlocal && len < sizeof p->name; i++)
		len += (size_t)snprintf(p->name + len, sizeof p->name - len,
		                        "_%lld", (long long)(p->local[p->laxes[i]] *
		                                             p->group[p->laxes[i]]));
	/* tinygrad's order: unrolled, then upcasted */
	for (int red = 1; red >= 0; red--)
		for (i = 0; i < p->ndim && len < sizeof p->name; i++) {
			if (p->upcast[i] == 1 ||
			    !!(p->reduce_axes & (1u << i)) != red)
				continue;
			len += (size_t)snprintf(p->name + len, sizeof p->name - len,
			                        "_%lld", (long long)p->upcast[i]);
		}
	if (len == 1)
		snprintf(p->name + len, sizeof p->name - len, "_1");
}

void tg_kplan_update(tg_kplan *p)
{
	size_t i;

	p->nglobal = p->nred = p->nloop = 0;
	for (size_t o = 0; o < p->ndim; o++) {
		i = p->order[o];
		/* size 1 indexes 0 and tg_lower refuses 0; a symbolic axis
		 * stays a loop (its value may be 0 or 1) */
		if (p->full[i] == 0 ||
		    (left(p, i) == 1 && !p->sym[i]))
			continue;
		if (p->reduce_axes & (1u << i))
			p->raxes[p->nred++] = (uint32_t)i;
		else if (p->sym[i])
			p->oaxes[p->nloop++] = (uint32_t)i;
		else
			p->gaxes[p->nglobal++] = (uint32_t)i;
	}
	/* launch geometry: gidx0 the last global axis, gidx1 the one
	 * before, gidx2 the product of the rest */
	p->global[0] = p->global[1] = p->global[2] = 1;
	for (i = 0; i < p->nglobal; i++) {
		size_t from_end = p->nglobal - 1 - i;
		size_t g = from_end < 2 ? from_end : 2;
		p->global[g] *= (size_t)left(p, p->gaxes[i]);
	}
	/* work-group axes: locals of global axes, then groups of reduce
	 * axes (apply_opt keeps them to three) */
	p->nlocal = 0;
	p->local_size[0] = p->local_size[1] = p->local_size[2] = 1;
	for (int red = 0; red < 2; red++)
		for (i = 0; i < p->ndim && p->nlocal < 3; i++)
			if ((red ? p->group[i] : p->local[i]) > 1)
				p->laxes[p->nlocal++] = (uint32_t)i;
	for (i = 0; i < p->nlocal; i++)
		p->local_size[p->nlocal - 1 - i] =
			(size_t)(p->local[p->laxes[i]] * p->group[p->laxes[i]]);
	plan_name(p);
}

/* ------------------------------------------------------------- the opts */

/* Work-items of one group and shared bytes after splitting `amt` more
 * off axis ax into a local index: within the device's limits? */
static int locals_fit(const tg_kplan *p, const tg_opt *o, int64_t amt)
{
	const struct tg_renderer_caps *c = p->caps;
	size_t total = (size_t)amt;

	for (size_t i = 0; i < p->ndim; i++)
		total *= (size_t)(p->local[i] * p->group[i]);
	if (total > c->local_max_total)
		return tg_error(TG_EINVAL, "opt: %s(%d,%lld): a work group of "
		                "%zu items exceeds the device's %zu",
		                opt_names[o->op], o->axis, (long long)o->amt,
		                total, c->local_max_total);
	if (p->local[o->axis] * p->group[o->axis] == 1 && p->nlocal == 3)
		return tg_error(TG_EINVAL, "opt: %s(%d,%lld): more than 3 "
		                "local axes", opt_names[o->op], o->axis,
		                (long long)o->amt);
	return TG_OK;
}

/* Whether the device can take opt o at all. */
static int opt_supported(const tg_kplan *p, const tg_opt *o)
{
	const struct tg_renderer_caps *c = p->caps;

	if (o->op == TG_OPT_UPCAST || o->op == TG_OPT_UNROLL ||
	    o->op == TG_OPT_SWAP || o->op == TG_OPT_PADTO ||
	    o->op == TG_OPT_PASS ||
	    (o->op == TG_OPT_GROUP && !(c && c->has_local)))
		return TG_OK;  /* GROUP without work groups: lanes */
	if (!c || !c->has_local)
		return tg_error(TG_EUNSUPPORTED, "opt: %s needs work groups",
		                opt_names[o->op]);
	if (o->op != TG_OPT_LOCAL && !c->has_shared)
		return tg_error(TG_EUNSUPPORTED, "opt: %s needs shared memory",
		                opt_names[o->op]);
	return TG_OK;
}

int64_t tg_kp_copies(const tg_kplan *p, int reduce)
{
	int64_t c = 1;

	for (size_t i = 0; i < p->ndim; i++)
		if (reduce < 0 || !!(p->reduce_axes & (1u << i)) == reduce)
			c *= p->upcast[i];
	return c;
}

/* With work groups, the number of groups per launch axis is limited
 * (Vulkan's maxComputeWorkGroupCount): global_max / local_max. */
static int groups_fit(const tg_kplan *p, const tg_opt *o)
{
	const struct tg_renderer_caps *c = p->caps;

	if (p->nlocal == 0 || !c)
		return TG_OK;
	for (int k = 0; k < 3; k++) {
		size_t lim = c->local_max[k] ? c->global_max[k] / c->local_max[k]
		                             : c->global_max[k];
		if (p->global[k] > lim)
			return tg_error(TG_EINVAL, "opt: %s(%d,%lld): %zu work "
			                "groups on launch axis %d exceed the "
			                "device's %zu", opt_names[o->op], o->axis,
			                (long long)o->amt, p->global[k], k, lim);
	}
	return TG_OK;
}

/* NOLOCALS (tinygrad's): the kernel keeps one work-item per group; no
 * LOCAL, GROUP or GROUPTOP may come after it, nor may it come after
 * them.  The axis and amount are not read. */
static int apply_nolocals(tg_kplan *p, tg_opt o)
{
	if (p->nlocal || p->nolocals || p->nopts == TG_MAX_OPTS)
		return tg_error(TG_EINVAL, "opt: NOLOCALS %s",
		                p->nlocal ? "after LOCAL, GROUP or GROUPTOP"
		                : p->nolocals ? "twice" : "past the opt limit");
	p->nolocals = 1;
	p->opts[p->nopts++] = o;
	return TG_OK;
}

/* SWAP(a, b): global axes a and b exchange places in launch order. */
static int apply_swap(tg_kplan *p, tg_opt o)
{
	size_t ia = 0, ib = 0, b = (size_t)o.amt;

	if (o.amt < 0 || b >= p->ndim || b == (size_t)o.axis ||
	    ((p->reduce_axes >> o.axis) | (p->reduce_axes >> b)) & 1 ||
	    p->sym[b])
		return tg_error(TG_EINVAL, "opt: SWAP(%d,%lld) needs two "
		                "distinct integer global axes of %zu",
		                o.axis, (long long)o.amt, p->ndim);
	if (p->nopts == TG_MAX_OPTS)
		return tg_error(TG_EINVAL, "opt: SWAP(%d,%lld): more than %d "
		                "opts", o.axis, (long long)o.amt, TG_MAX_OPTS);
	for (size_t i = 0; i < p->ndim; i++) {
		if (p->order[i] == o.axis)
			ia = i;
		if (p->order[i] == b)
			ib = i;
	}
	p->order[ia] = (uint8_t)b;
	p->order[ib] = (uint8_t)o.axis;
	p->opts[p->nopts++] = o;
	tg_kplan_update(p);
	return TG_OK;
}

/* PADTO(ax, amt) (tinygrad's): the axis's extent s rounds up to a
 * multiple of amt, so that later opts can split it; lowering reads the
 * padding as 0 and does not store it.  Only an axis not split yet, by
 * at most 4x the work, never where a result would change (pad_safety).
 */
static int apply_padto(tg_kplan *p, tg_opt o)
{
	uint32_t bit = 1u << o.axis;
	int64_t s = p->full[o.axis], to;

	if (o.amt < 2 || p->nopts == TG_MAX_OPTS)
		return tg_error(TG_EINVAL, "opt: PADTO(%d,%lld) needs an "
		                "amount of at least 2 within %d opts", o.axis,
		                (long long)o.amt, TG_MAX_OPTS);
	if (left(p, (size_t)o.axis) != s || (p->padded & bit))
		return tg_error(TG_EINVAL, "opt: PADTO(%d,%lld): axis %d is "
		                "split or padded already", o.axis,
		                (long long)o.amt, o.axis);
	to = (s + o.amt - 1) / o.amt * o.amt;
	if (to == s || s * 4 <= o.amt)
		return tg_error(TG_EINVAL, "opt: PADTO(%d,%lld): %s %lld",
		                o.axis, (long long)o.amt,
		                to == s ? "nothing to pad on" :
		                "pads to more than 4x the work of", (long long)s);
	if (p->int_div || (p->pad_unsafe & bit))
		return tg_error(TG_EINVAL, "opt: PADTO(%d,%lld): %s", o.axis,
		                (long long)o.amt, p->int_div
		                ? "the kernel divides integers (padded lanes "
		                  "would divide by 0)"
		                : "the reduce over the axis is not a SUM of "
		                  "ops that keep 0 at 0");
	p->full[o.axis] = to;
	p->padded |= bit;
	p->opts[p->nopts++] = o;
	tg_kplan_update(p);
	return TG_OK;
}

/* The first of the device's tensor cores that takes the kernel's
 * dtypes, or -1. */
static int tc_pick(const tg_kplan *p)
{
	const struct tg_renderer_caps *c = p->caps;

	for (int i = 0; c && c->tc && i < c->tensor_cores; i++)
		if (c->tc[i].dtype_in == p->tc_dt[0] &&
		    c->tc[i].dtype_out == p->tc_dt[1])
			return i;
	return -1;
}

/* Axis ax to a multiple of d: already, or padded when amt allows. */
static int tc_fit(tg_kplan *p, tg_opt o, uint32_t ax, uint32_t d)
{
	if (d < 2 || p->full[ax] % d == 0)
		return TG_OK;
	if (o.amt < 2)
		return tg_error(TG_EINVAL, "axis %u of %lld is not a multiple "
		                "of %u (amount 2 pads it)", ax,
		                (long long)p->full[ax], d);
	return apply_padto(p, (tg_opt){ TG_OPT_PADTO, (int)ax, d });
}

/* Whether a matrix instruction can take a choice of axes ax: its
 * lanes are lidx0 (N) and lidx1 (M), so N must come after M among the
 * axes, and no axis may have a local part yet. */
static int wmma_fits(const tg_kplan *p, const tg_wmma *w, const uint8_t *ax)
{
	if (ax[0] < ax[1])
		return tg_error(TG_EUNSUPPORTED, "axis %u (N) comes before "
		                "axis %u (M): %s needs N's local index to be "
		                "lidx0", ax[0], ax[1], w->fn);
	if (p->nlocal)
		return tg_error(TG_EUNSUPPORTED, "the kernel has work-group "
		                "axes already");
	return TG_OK;
}

/* After a matrix instruction, opts that would move its lanes: a local
 * or group part on N, M or K, a group anywhere (it would take lidx0),
 * a local on an axis after M (it would come between N's and M's
 * indices), NOLOCALS, PADTO of its axes. */
static int wmma_refuses(const tg_kplan *p, tg_opt o)
{
	int on_tc = o.axis == p->tc_ax[0] || o.axis == p->tc_ax[1] ||
	            o.axis == p->tc_ax[2];

	if (!p->wmma || !p->tc || o.op == TG_OPT_UPCAST || o.op == TG_OPT_UNROLL ||
	    o.op == TG_OPT_SWAP || o.op == TG_OPT_PASS ||
	    (o.op == TG_OPT_LOCAL && o.axis < p->tc_ax[1]) ||
	    (o.op == TG_OPT_PADTO && !on_tc))
		return TG_OK;
	return tg_error(TG_EINVAL, "opt: %s(%d,%lld) after TC would move "
	                "the lanes of %s", opt_names[o.op], o.axis,
	                (long long)o.amt, p->wmma->fn);
}

/* The core's opts on the plan, recorded as the one TC opt: pads (amt
 * 2), the unroll of K, then each split of N and M. */
static int tc_apply_splits(tg_kplan *p, tg_opt o,
                           const struct tg_tensor_core *t)
{
	const uint8_t *ax = p->tc_axes[o.axis];
	const tg_wmma *w = tg_wmma_find(p->caps->dialect, t);
	uint32_t kun = w ? t->dims[2] / w->kthreads : t->dims[2];
	int rc = TG_OK;

	for (int d = 0; d < 3 && rc == TG_OK; d++)
		rc = tc_fit(p, o, ax[d], t->dims[d]);
	if (rc == TG_OK && w && (rc = wmma_fits(p, w, ax)) == TG_OK) {
		p->wmma = w;  /* K's loop now also steps over kthreads */
		memcpy(p->tc_ax, ax, sizeof p->tc_ax);
		p->wmma_asrc = p->tc_asrc[o.axis];
	}
	p->nopts = 0;
	if (rc == TG_OK && kun > 1)
		rc = tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_UNROLL, ax[2],
		                                     kun });
	for (size_t i = 0; i < t->nsplits && rc == TG_OK; i++) {
		const struct tg_tc_split *sp = &t->splits[i];
		p->nopts = 0;  /* the splits are the TC opt, not opts */
		rc = tg_kplan_apply_opt(p, (tg_opt){
			sp->kind == TG_TC_LOCAL ? TG_OPT_LOCAL : TG_OPT_UPCAST,
			ax[sp->dim], sp->amt });
	}
	return rc;
}

/* TC(choice, tc_opt) (tinygrad's): see TG_OPT_TC. */
static int apply_tc(tg_kplan *p, tg_opt o)
{
	tg_kplan saved = *p;
	int t = tc_pick(p), rc;

	if (p->nopts)
		return tg_error(TG_EINVAL, "opt: TC(%d,%lld) must be the "
		                "first opt", o.axis, (long long)o.amt);
	if (t < 0)
		return tg_error(TG_EUNSUPPORTED, "opt: TC(%d,%lld): %s",
		                o.axis, (long long)o.amt, !p->ntc
		                ? "the kernel is not a matmul-shaped SUM"
		                : "no tensor core of the device takes its "
		                  "dtypes");
	if (o.axis < 0 || (size_t)o.axis >= p->ntc || o.amt < 0 || o.amt > 2)
		return tg_error(TG_EINVAL, "opt: TC(%d,%lld): the kernel has "
		                "%zu axis choices and the amount is 0, 1 or "
		                "2", o.axis, (long long)o.amt, p->ntc);
	if ((rc = tc_apply_splits(p, o, &p->caps->tc[t]))) {
		*p = saved;
		return tg_error_prefix("opt: TC(%d,%lld)", o.axis,
		                       (long long)o.amt);
	}
	p->nopts = 0;
	p->opts[p->nopts++] = o;
	p->tc = t + 1;
	tg_kplan_update(p);
	return TG_OK;
}

/* Whether the loop PASS cut is still the outer reduce loop, whole,
 * and still cut into 2 passes or more. */
static int pass_holds(const tg_kplan *p)
{
	int64_t n;

	if (!tg_kp_passes_allowed(p) || p->raxes[0] != p->pass_axis)
		return 0;
	n = tg_kplan_outer(p, p->pass_axis);
	return n % p->pass == 0 && n / p->pass >= 2;
}

/* PASS(axis, amt): see TG_OPT_PASS. */
static int apply_pass(tg_kplan *p, tg_opt o)
{
	int64_t n;

	if (p->pass)
		return tg_error(TG_EINVAL, "opt: PASS(%d,%lld): the kernel has "
		                "PASS(%u,%lld) already", o.axis, (long long)o.amt,
		                p->pass_axis, (long long)p->pass);
	if (!tg_kp_passes_allowed(p) || !p->pass_ok)
		return tg_error(TG_EUNSUPPORTED, "opt: PASS(%d,%lld): the "
		                "kernel cannot run its reduce in passes (that "
		                "takes a C kernel with one reduce, stored in its "
		                "dtype to a buffer it does not read, its outer "
		                "loop not padded, symbolic or in lanes)", o.axis,
		                (long long)o.amt);
	if ((uint32_t)o.axis != p->raxes[0])
		return tg_error(TG_EINVAL, "opt: PASS(%d,%lld): axis %d is not "
		                "the outer reduce loop (axis %u)", o.axis,
		                (long long)o.amt, o.axis, p->raxes[0]);
	n = tg_kplan_outer(p, (size_t)o.axis);
	if (o.amt < 1 || n % o.amt || n / o.amt < 2)
		return tg_error(TG_EINVAL, "opt: PASS(%d,%lld) does not cut a "
		                "loop of %lld into 2 passes or more", o.axis,
		                (long long)o.amt, (long long)n);
	if (p->nopts == TG_MAX_OPTS)
		return tg_error(TG_EINVAL, "opt: PASS(%d,%lld): more than %d "
		                "opts", o.axis, (long long)o.amt, TG_MAX_OPTS);
	p->pass = o.amt;
	p->pass_axis = (uint32_t)o.axis;
	p->opts[p->nopts++] = o;
	return TG_OK;
}

static int apply_one(tg_kplan *p, tg_opt o);

int tg_kplan_apply_opt(tg_kplan *p, tg_opt o)
{
	tg_kplan saved = *p;
	int rc;

	if (o.op < 0 || o.op > TG_OPT_LAST)
		return tg_error(TG_EINVAL, "opt: unknown op %d", o.op);
	if ((rc = apply_one(p, o)) || !saved.pass || pass_holds(p))
		return rc;
	*p = saved;
	return tg_error(TG_EINVAL, "opt: %s(%d,%lld) after PASS(%u,%lld) "
	                "changes the loop that PASS cuts", opt_names[o.op],
	                o.axis, (long long)o.amt, saved.pass_axis,
	                (long long)saved.pass);
}

static int apply_one(tg_kplan *p, tg_opt o)
{
	tg_kplan saved;
	int red, rc, lanes = o.op == TG_OPT_GROUP &&
	                     !(p->caps && p->caps->has_local);
	int64_t s, amt;

	if (o.op == TG_OPT_TC)
		return apply_tc(p, o);
	if ((rc = opt_supported(p, &o)) || (rc = wmma_refuses(p, o)))
		return rc;
	if (o.op == TG_OPT_NOLOCALS)
		return apply_nolocals(p, o);
	if (p->nolocals && o.op != TG_OPT_UPCAST && o.op != TG_OPT_UNROLL &&
	    o.op != TG_OPT_SWAP && o.op != TG_OPT_PADTO)
		return tg_error(TG_EINVAL, "opt: %s(%d,%lld) after NOLOCALS",
		                opt_names[o.op], o.axis, (long long)o.amt);
	if (o.axis < 0 || (size_t)o.axis >= p->ndim)
		return tg_error(TG_EINVAL, "opt: %s axis %d of %zu",
		                opt_names[o.op], o.axis, p->ndim);
	if (p->sym[o.axis]) {
		char e[64];
		return tg_error(TG_EINVAL, "opt: %s(%d,%lld) on axis %d of "
		                "symbolic size %s", opt_names[o.op], o.axis,
		                (long long)o.amt, o.axis,
		                tg_sint_format(tg_sint_of(p->sym[o.axis]), e,
		                               sizeof e));
	}
	if (o.op == TG_OPT_SWAP)
		return apply_swap(p, o);
	if (o.op == TG_OPT_PADTO)
		return apply_padto(p, o);
	if (o.op == TG_OPT_PASS)
		return apply_pass(p, o);
	red = !!(p->reduce_axes & (1u << o.axis));
	if (red != (o.op == TG_OPT_UNROLL || o.op == TG_OPT_GROUP ||
	            o.op == TG_OPT_GROUPTOP))
		return tg_error(TG_EINVAL, "opt: %s on %s axis %d",
		                opt_names[o.op], red ? "reduce" : "global",
		                o.axis);
	s = left(p, (size_t)o.axis);
	amt = o.amt ? o.amt : s;
	if (amt < 2 || s % amt)
		return tg_error(TG_EINVAL,
		                "opt: %s(%d,%lld) does not split %lld",
		                opt_names[o.op], o.axis, (long long)o.amt,
		                (long long)s);
	if (p->nopts == TG_MAX_OPTS ||
	    ((o.op == TG_OPT_UPCAST || o.op == TG_OPT_UNROLL || lanes) &&
	     tg_kp_copies(p, -1) * amt > TG_MAX_EXPAND))
		return tg_error(TG_EINVAL,
		                "opt: %s(%d,%lld): more than %d opts or %d "
		                "copies", opt_names[o.op], o.axis,
		                (long long)o.amt, TG_MAX_OPTS, TG_MAX_EXPAND);
	if ((o.op == TG_OPT_UNROLL && (p->lanes >> o.axis & 1)) ||
	    (lanes && p->upcast[o.axis] > 1))
		return tg_error(TG_EINVAL, "opt: %s(%d,%lld): axis %d is %s "
		                "already", opt_names[o.op], o.axis,
		                (long long)o.amt, o.axis,
		                p->lanes >> o.axis & 1 ? "grouped into lanes"
		                                       : "unrolled");
	saved = *p;
	if (lanes) {
		/* partial sums in registers: an upcast not contracted into
		 * the reduce (expand.c), added after it */
		p->upcast[o.axis] = amt;
		p->lanes |= 1u << o.axis;
	} else if (o.op == TG_OPT_GROUP || o.op == TG_OPT_GROUPTOP) {
		/* one group split per axis: its digit's place is fixed */
		if (p->group[o.axis] > 1)
			return tg_error(TG_EINVAL, "opt: %s(%d,%lld): axis %d is "
			                "grouped already", opt_names[o.op], o.axis,
			                (long long)o.amt, o.axis);
		if ((rc = locals_fit(p, &o, amt)))
			return rc;
		p->group[o.axis] = amt;
		if (o.op == TG_OPT_GROUPTOP)
			p->grouptop |= 1u << o.axis;
	} else if (o.op == TG_OPT_LOCAL) {
		if ((rc = locals_fit(p, &o, amt)))
			return rc;
		p->local[o.axis] *= amt;
	} else {
		p->upcast[o.axis] *= amt;
	}
	p->opts[p->nopts++] = o;
	tg_kplan_update(p);
	if ((rc = groups_fit(p, &o)))
		*p = saved;  /* the plan is unchanged on error */
	return rc;
}

/* The search's moves (tinygrad's beam actions, with the amounts a CPU
 * vector and its doubles need): per axis, then per op, in this order,
 * so the list is the same on every run. */
static const struct action_space {
	int op;
	int maxaxis;         /* axes 0 .. maxaxis-1 */
	int64_t amt[9];      /* 0 ends the list, except as the first */
	int whole;           /* amt 0 (the whole axis) is a move too */
} actions_space[] = {
	{ TG_OPT_UPCAST, 6, { 2, 3, 4, 5, 7, 8, 16 }, 1 },
	{ TG_OPT_UNROLL, 5, { 2, 4, 7, 8 }, 1 },
	{ TG_OPT_LOCAL, 5, { 2, 3, 4, 8, 13, 16, 29, 32 }, 0 },
	{ TG_OPT_GROUPTOP, 3, { 13, 16, 28, 29, 32, 49, 64, 256 }, 0 },
	{ TG_OPT_GROUP, 3, { 4, 8, 16 }, 1 },
	{ TG_OPT_PADTO, 7, { 32 }, 0 },
};

/* Adds o to out when p takes it (on a copy). */
static size_t try_action(const tg_kplan *p, tg_opt o, tg_opt *out,
                         size_t n, size_t max)
{
	tg_kplan c = *p;

	if (n >= max)
		return n;
	if (tg_kplan_apply_opt(&c, o)) {
		tg_clear_error();
		return n;
	}
	out[n] = o;
	return n + 1;
}

size_t tg_kplan_actions(const tg_kplan *p, tg_opt *out, size_t max)
{
	size_t n = 0;

	for (size_t s = 0; s < sizeof actions_space / sizeof *actions_space;
	     s++) {
		const struct action_space *a = &actions_space[s];
		for (int ax = 0; ax < a->maxaxis && (size_t)ax < p->ndim; ax++) {
			if (a->whole)
				n = try_action(p, (tg_opt){ a->op, ax, 0 }, out, n,
				               max);
			for (int i = 0; i < 9 && a->amt[i]; i++)
				n = try_action(p, (tg_opt){ a->op, ax, a->amt[i] },
				               out, n, max);
		}
	}
	for (size_t c = 0; p->tc_use && c < p->ntc; c++)
		for (int64_t amt = 0; amt <= 2; amt += 2)
			n = try_action(p, (tg_opt){ TG_OPT_TC, (int)c, amt },
			               out, n, max);
	n = try_action(p, (tg_opt){ TG_OPT_NOLOCALS, 0, 0 }, out, n, max);
	for (int64_t amt = TG_KP_PASS_MIN; p->nred && amt <= 512; amt *= 2)
		n = try_action(p, (tg_opt){ TG_OPT_PASS, (int)p->raxes[0], amt },
		               out, n, max);
	for (size_t i = 0; i + 1 < p->nglobal; i++)
		n = try_action(p, (tg_opt){ TG_OPT_SWAP, (int)p->gaxes[i],
		                            p->gaxes[p->nglobal - 1] },
		               out, n, max);
	return n;
}

void tg_opts_format(const tg_opt *opts, size_t nopts, char *buf,
                    size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < nopts && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s(%d,%lld)",
		                      i ? " " : "",
		                      opts[i].op >= 0 && opts[i].op <= TG_OPT_LAST
		                      ? opt_names[opts[i].op] : "?",
		                      opts[i].axis, (long long)opts[i].amt);
}

void tg_kplan_format_opts(const tg_kplan *p, char *buf, size_t len)
{
	tg_opts_format(p->opts, p->nopts, buf, len);
}

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
		if (p->upcast[ax] > 1 || left(p, ax) % SPLIT)
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

	for (int i = 0; i < 2 && tg_kp_copies(p, 0) * SPLIT <= MAX_BLOCK; i++) {
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
	s = left(p, ax);
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
	if (left(p, ax) % SPLIT)
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
		out *= left(p, p->gaxes[g]);
	if (out > 2048)
		return TG_OK;
	ax = p->raxes[0];
	if (p->sym[ax])
		return TG_OK;
	const int64_t *sz = out <= 32 ? big : small;
	for (size_t i = 0; i < (out <= 32 ? 2u : 1u); i++)
		if (left(p, ax) % sz[i] == 0 &&
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
			if (left(p, rank[r]) % cand[c] == 0 &&
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

/* ---------------------------------------------------- CPU register tiles */

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
		int64_t m = fitting(p, left(p, ax), tile_rows,
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

		if ((int)ax == jax || left(p, ax) < 2)
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

	for (w = lanes; w >= 2 && left(p, (size_t)jax) % w; w /= 2)
		;
	if (w < 2 || (rc = tg_kp_upcast(p, (uint32_t)jax, w)))
		return w < 2 ? 0 : rc;
	if (!p->has_reduce) {
		m = fitting(p, left(p, (size_t)jax), (const int64_t[]){ 4, 2 },
		            2, TG_MAX_EXPAND);
		return (rc = tg_kp_upcast(p, (uint32_t)jax, m)) ? rc : 1;
	}
	iax = row_axis(p, k, rs, jax);
	m = fitting(p, left(p, (size_t)jax), (const int64_t[]){ 2 }, 1,
	            TG_MAX_EXPAND / (iax >= 0 ? 8 : 1));
	if ((rc = tg_kp_upcast(p, (uint32_t)jax, m)))
		return rc;
	if (iax >= 0 &&
	    (rc = tg_kp_upcast(p, (uint32_t)iax,
	                       fitting(p, left(p, (size_t)iax), tile_rows,
	                               TG_ARRAY_LEN(tile_rows),
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

	while (w >= 2 && left(p, ax) % w)
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
	if (p->sym[ax] || (w = vector_width(p, ax, lanes)) < 4 ||
	    !loads_vector(k, rs, ax))
		return TG_OK;
	return tg_kplan_apply_opt(p, (tg_opt){ TG_OPT_GROUP, (int)ax, w });
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

		if (left(p, ax) < 2)
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
 * where the output has a vector axis, then the unroll; else lanes for
 * the reduce, tinygrad's heuristics and the launch order that reads
 * from L1.  1 when done, 0 when the device has no vectors (tinygrad's
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
		rc = opt_cpu_lanes(p, k, (const kstrides *)rs, lanes) ||
		     tg_kp_opt_generic(p, k) ||
		     stream_reads(p, k, (const kstrides *)rs) ? -1 : 1;
	free(rs);
	return rc;
}

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
	    left(p, rax) % MV_THREADS)
		return 0;
	for (size_t g = 0; g < p->nglobal; g++) {
		uint32_t ax = p->gaxes[g];
		tg_kplan c = *p;
		if (left(p, ax) % (MV_BLOCK * MV_ROWS))
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
				if (left(&t, ax) % upc[i])
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

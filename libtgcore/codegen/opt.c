/*
 * codegen/opt.c - applying an opt to a kernel's plan (tinygrad's
 * Kernel.apply_opt, mid-2024): UPCAST, UNROLL, PADTO and SWAP
 * everywhere, LOCAL, GROUP, GROUPTOP and NOLOCALS on devices with work
 * groups, TC onto a device's tensor core, PASS on C.
 *
 * An opt splits an axis's extent s into s/amt, still a launch index
 * (global axis) or a loop (reduce axis), and amt copies of the kernel
 * body: lowering indexes the axis outer*amt + its digit and the
 * expander (expand.c) makes one lane per digit.  UPCAST gives each
 * thread a block of outputs with one accumulator each; UNROLL does amt
 * steps of a reduce per loop iteration.
 *
 * Also the search's moves (tg_kplan_actions) and the opts as text.
 * Separate from the heuristics (heuristic.c, cpu_tile.c), which only
 * choose opts: every opt, whether a heuristic, a BEAM search or a test
 * chose it, passes the checks here.
 */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "codegen/codegen.h"
#include "codegen/kplan.h"
#include "ir/ir.h"

static const char *const opt_names[] = {
	[TG_OPT_UPCAST] = "UPCAST", [TG_OPT_UNROLL] = "UNROLL",
	[TG_OPT_LOCAL] = "LOCAL", [TG_OPT_GROUP] = "GROUP",
	[TG_OPT_GROUPTOP] = "GROUPTOP", [TG_OPT_NOLOCALS] = "NOLOCALS",
	[TG_OPT_PADTO] = "PADTO", [TG_OPT_SWAP] = "SWAP", [TG_OPT_TC] = "TC",
	[TG_OPT_PASS] = "PASS",
};
static_assert(sizeof opt_names / sizeof *opt_names == TG_OPT_LAST + 1,
              "one name per opt");

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
	if (tg_kplan_outer(p, (size_t)o.axis) != s || (p->padded & bit))
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

/* What every opt but TC and NOLOCALS must pass: after NOLOCALS, only
 * the opts it allows; an axis of the plan, of integer size. */
static int check_axis(const tg_kplan *p, tg_opt o)
{
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
	return TG_OK;
}

/* What a split (UPCAST, UNROLL, LOCAL, GROUP, GROUPTOP) must pass: an
 * axis of its kind (reduce for UNROLL and the groups), whose extent
 * left the amount divides, within TG_MAX_OPTS opts and TG_MAX_EXPAND
 * copies, not split into lanes one way and unrolled the other.  The
 * amount (amt 0: the whole extent left) into *amt. */
static int check_split(const tg_kplan *p, tg_opt o, int lanes,
                       int64_t *amt)
{
	int red = !!(p->reduce_axes & (1u << o.axis));
	int64_t s;

	if (red != (o.op == TG_OPT_UNROLL || o.op == TG_OPT_GROUP ||
	            o.op == TG_OPT_GROUPTOP))
		return tg_error(TG_EINVAL, "opt: %s on %s axis %d",
		                opt_names[o.op], red ? "reduce" : "global",
		                o.axis);
	s = tg_kplan_outer(p, (size_t)o.axis);
	*amt = o.amt ? o.amt : s;
	if (*amt < 2 || s % *amt)
		return tg_error(TG_EINVAL,
		                "opt: %s(%d,%lld) does not split %lld",
		                opt_names[o.op], o.axis, (long long)o.amt,
		                (long long)s);
	if (p->nopts == TG_MAX_OPTS ||
	    ((o.op == TG_OPT_UPCAST || o.op == TG_OPT_UNROLL || lanes) &&
	     tg_kp_copies(p, -1) * *amt > TG_MAX_EXPAND))
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
	return TG_OK;
}

/* The split of amt off the axis: lanes (GROUP without work groups), a
 * group part, a local part or an upcast.  Errors (plan unchanged): a
 * second group part on the axis, a work group past the device's
 * limits. */
static int apply_split(tg_kplan *p, tg_opt o, int lanes, int64_t amt)
{
	int rc;

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
	return TG_OK;
}

/* One opt on the plan: the checks, then the op's own application. */
static int apply_one(tg_kplan *p, tg_opt o)
{
	tg_kplan saved;
	int rc, lanes = o.op == TG_OPT_GROUP &&
	                !(p->caps && p->caps->has_local);
	int64_t amt = 0;

	if (o.op == TG_OPT_TC)
		return apply_tc(p, o);
	if ((rc = opt_supported(p, &o)) || (rc = wmma_refuses(p, o)))
		return rc;
	if (o.op == TG_OPT_NOLOCALS)
		return apply_nolocals(p, o);
	if ((rc = check_axis(p, o)))
		return rc;
	if (o.op == TG_OPT_SWAP)
		return apply_swap(p, o);
	if (o.op == TG_OPT_PADTO)
		return apply_padto(p, o);
	if (o.op == TG_OPT_PASS)
		return apply_pass(p, o);
	if ((rc = check_split(p, o, lanes, &amt)))
		return rc;
	saved = *p;
	if ((rc = apply_split(p, o, lanes, amt)))
		return rc;
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

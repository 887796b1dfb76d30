/*
 * codegen/plan.c - a kernel's plan before any opt (tinygrad's Kernel
 * as codegen/kernel.py builds it, mid-2024).  tg_lower_plan classifies
 * the full shape's axes: reduce axes (those of the REDUCE_AXIS), global
 * axes (the others), size-1 axes dropped; and notes what the opts will
 * ask of the kernel: its matmul shape for TC (tc_shape), what PADTO may
 * pad (pad_safety), whether its reduce can run in passes.
 * tg_kplan_update recomputes the launch geometry and the kernel's name
 * after each opt.  Separate from the opts (opt.c) and the heuristics
 * that choose them: the plan is the data they all read and change, and
 * lowering (lower.c) reads it to index the axes.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "codegen/kplan.h"
#include "ir/ir.h"

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
		                        (long long)tg_kplan_outer(p, ax));
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
		    (tg_kplan_outer(p, i) == 1 && !p->sym[i]))
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
		p->global[g] *= (size_t)tg_kplan_outer(p, p->gaxes[i]);
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

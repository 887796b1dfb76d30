/*
 * index.c - what a tracker reads: the (index, valid) IR expressions for
 * given per-axis indices (tinygrad's ShapeTracker.expr_idxs), the facts
 * the kernel optimizer derives from them (real strides, unit-stride
 * axes, masked axes, the extent read, the period along an axis), and
 * the symbolic variables in a tracker.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape.h"

/* Variables are interned by name and bounds, so each call returns the
 * same node and callers can find an axis by pointer. */
tg_uop *tg_st_idx_var(tg_ir *ir, const tg_st *st, size_t axis)
{
	int64_t hi = tg_sint_vmax(tg_st_shape(st)[axis]) - 1;
	char name[32];

	if (hi <= 0)  /* one index (or none): tinygrad's Variable is 0 */
		return tg_sym_int(ir, 0);
	snprintf(name, sizeof name, "idx%zu", axis);
	return tg_sym_var(ir, name, 0, hi);
}

static void default_idxs(tg_ir *ir, const tg_st *st, tg_uop **ix)
{
	size_t i;

	for (i = 0; i < tg_st_ndim(st); i++)
		ix[i] = tg_st_idx_var(ir, st, i);
}

/* Per-axis indices of a row-major flat index over shape[ndim]. */
static void unflatten(tg_ir *ir, tg_uop *flat, size_t ndim,
                      const tg_sint *shape, tg_uop **ix)
{
	tg_sint acc = tg_si(1);
	size_t d;

	for (d = ndim; d-- > 0;) {
		tg_uop *q = tg_sym_idiv(ir, flat, tg_sint_uop(ir, acc));

		ix[d] = tg_sym_mod(ir, q, tg_sint_uop(ir, shape[d]));
		acc = tg_sint_mul(ir, acc, shape[d]);
	}
}

/* c as digits of the mixed radix whose place values are place[nd]
 * (outermost first), each digit the nearest quotient, so a negative
 * coefficient borrows from the axis above: 5 - 700 over places
 * (700, 25, 5, 1) is (-1, 0, 1, 0). */
static void signed_digits(int64_t c, size_t nd, const int64_t *place,
                          int64_t *digit)
{
	for (size_t d = 0; d < nd; d++) {
		int64_t q = c / place[d], r = c - q * place[d];

		if (2 * r > place[d])
			q++;
		else if (-2 * r > place[d])
			q--;
		digit[d] = q;
		c -= q * place[d];
	}
}

/* The per-axis indices of the flat index `flat` over m's shape without
 * a division, when they are affine in the same atoms: each term's
 * coefficient (and the constant) is split into signed digits of the
 * shape's places, and every axis's resulting expression must stay in
 * [0, size) over the atoms' bounds, so the digits are exactly what
 * div/mod would give.  A window over a padded tensor (the gradient of
 * a convolution) reads this way: its strides are combinations like
 * "one row up, one kernel column right".  0 when it does not apply. */
static int exact_digits(tg_ir *ir, tg_uop *flat, const tg_view *m,
                        tg_uop **ix)
{
	int64_t place[TG_MAX_DIMS], dig[TG_MAX_DIMS], p = 1, lo, hi;
	int64_t dt[TG_LIN_MAX][TG_MAX_DIMS];
	tg_lin a, e[TG_MAX_DIMS];
	size_t nd = m->ndim, d, j;

	for (d = nd; d-- > 0;) {
		if (!tg_sint_is_int(m->shape[d]) || m->shape[d].c <= 0 ||
		    p > (INT64_C(1) << 40))
			return 0;
		place[d] = p;
		p *= m->shape[d].c;
	}
	if (!nd || tg_lin_of(flat, 1, &a))
		return 0;
	signed_digits(a.k, nd, place, dig);
	for (j = 0; j < a.n; j++)
		signed_digits(a.t[j].k, nd, place, dt[j]);
	for (d = 0; d < nd; d++) {  /* axis d's index, in range */
		e[d].n = 0;
		e[d].k = dig[d];
		for (j = 0; j < a.n; j++)
			if (dt[j][d])
				e[d].t[e[d].n++] = (tg_term){ a.t[j].base, dt[j][d] };
		if (tg_lin_bounds(&e[d], &lo, &hi) || lo < 0 ||
		    hi >= m->shape[d].c)
			return 0;
	}
	for (d = 0; d < nd; d++)
		ix[d] = tg_lin_build(ir, &e[d]);
	return 1;
}

/* Feeds the flat index of each later view into the view before it. */
static int earlier_views(tg_ir *ir, const tg_st *st, tg_uop **idx,
                         tg_uop **valid)
{
	tg_uop *ix[TG_MAX_DIMS];
	tg_view *m;
	size_t k;
	int rc;

	for (k = st->nviews - 1; k-- > 0;) {
		if (tg_uop_vmax(*valid) == 0) {  /* nothing valid: no read */
			*idx = tg_sym_int(ir, -1);
			break;
		}
		if ((rc = tg_view_minify(ir, st->views[k], &m)))
			return rc;
		if (!exact_digits(ir, *idx, m, ix))
			unflatten(ir, *idx, m->ndim, m->shape, ix);
		rc = tg_view_expr(ir, m, ix, *valid, idx, valid);
		tg_view_free(m);
		if (rc)
			return rc;
	}
	return tg_ir_status(ir);
}

/* Failures leave *idx and *valid NULL and the status sticky in ir. */
int tg_st_expr_idxs(tg_ir *ir, const tg_st *st, tg_uop *const *idxs,
                    tg_uop **idx, tg_uop **valid)
{
	tg_uop *ix[TG_MAX_DIMS];
	int rc;

	*idx = *valid = NULL;
	if (!idxs) {
		default_idxs(ir, st, ix);
		idxs = ix;
	}
	rc = tg_view_expr(ir, st->views[st->nviews - 1], idxs, NULL, idx,
	                  valid);
	if (!rc)
		rc = earlier_views(ir, st, idx, valid);
	if (rc)
		*idx = *valid = NULL;
	return rc;
}

int tg_st_expr_node(tg_ir *ir, const tg_st *st, tg_uop *flat,
                    tg_uop **idx, tg_uop **valid)
{
	tg_uop *ix[TG_MAX_DIMS];
	int rc;

	unflatten(ir, flat, tg_st_ndim(st), tg_st_shape(st), ix);
	if ((rc = tg_ir_status(ir))) {
		*idx = *valid = NULL;
		return rc;
	}
	return tg_st_expr_idxs(ir, st, ix, idx, valid);
}

/* Bit i set when the variable of axis i (ix[i]) occurs under u. */
static int axes_of(const tg_uop *u, tg_uop *const *ix, size_t ndim,
                   uint64_t *mask)
{
	tg_uop_vec vars = { 0 };
	size_t i, j;
	int rc;

	if ((rc = tg_sym_vars(u, &vars)))
		return rc;
	for (i = 0; i < vars.n; i++)
		for (j = 0; j < ndim; j++)
			if (vars.v[i] == ix[j])
				*mask |= (uint64_t)1 << j;
	TG_VEC_FREE(&vars);
	return 0;
}

/* The axis whose variable u is, or -1. */
static int axis_of(const tg_uop *u, tg_uop *const *ix, size_t ndim)
{
	size_t i;

	for (i = 0; i < ndim; i++)
		if (u == ix[i] && u->op == TG_DEFINE_VAR)
			return (int)i;
	return -1;
}

/* The axis variable of a product idx_a * s, with s free of axis
 * variables, in *a and s in *stride; 0 when t is no such product. */
static int scaled_axis(tg_uop *t, tg_uop *const *ix, size_t ndim, int *a,
                       tg_sint *stride)
{
	uint64_t other = 0;
	int k;

	if (t->op != TG_MUL)
		return 0;
	for (k = 0; k < 2; k++) {
		*a = axis_of(t->src[k], ix, ndim);
		if (*a < 0)
			continue;
		if (axes_of(t->src[1 - k], ix, ndim, &other) || other)
			return 0;
		*stride = tg_sint_of(t->src[1 - k]);
		return 1;
	}
	return 0;
}

/* One term of the index sum: idx_a or idx_a * s sets stride a;
 * anything else makes the axes it uses unknown. */
static int read_term(tg_uop *t, tg_uop *const *ix, size_t ndim,
                     tg_sint *strides, uint8_t *known, uint64_t *bad)
{
	tg_sint s = tg_si(1);
	int a = axis_of(t, ix, ndim);

	if (a < 0 && !scaled_axis(t, ix, ndim, &a, &s))
		return axes_of(t, ix, ndim, bad);
	strides[a] = s;
	known[a] = 1;
	return 0;
}

/* Walks the ADD tree of u, reading each term. */
static int read_sum(tg_uop *u, tg_uop *const *ix, size_t ndim,
                    tg_sint *strides, uint8_t *known, uint64_t *bad)
{
	int rc;

	if (u->op != TG_ADD)
		return read_term(u, ix, ndim, strides, known, bad);
	if ((rc = read_sum(u->src[0], ix, ndim, strides, known, bad)))
		return rc;
	return read_sum(u->src[1], ix, ndim, strides, known, bad);
}

/* Known strides from the index expression of the whole tracker. */
static int strides_from_expr(tg_ir *ir, const tg_st *st, int ignore_valid,
                             tg_sint *strides, uint8_t *known)
{
	tg_uop *ix[TG_MAX_DIMS], *idx, *valid;
	uint64_t bad = 0, in_idx = 0, in_valid = 0;
	size_t n = tg_st_ndim(st), i;
	int rc;

	default_idxs(ir, st, ix);
	if ((rc = tg_st_expr_idxs(ir, st, ix, &idx, &valid)) ||
	    (rc = read_sum(idx, ix, n, strides, known, &bad)) ||
	    (rc = axes_of(idx, ix, n, &in_idx)) ||
	    (rc = axes_of(valid, ix, n, &in_valid)))
		return rc;
	if (ignore_valid)
		in_valid = 0;
	for (i = 0; i < n; i++) {
		if ((bad | in_valid) >> i & 1) {
			known[i] = 0;
		} else if (!(in_idx >> i & 1)) {
			strides[i] = tg_si(0);
			known[i] = 1;
		}
	}
	return 0;
}

/* One unmasked view states its strides; otherwise they are read off
 * the simplified index expression, as tinygrad does. */
int tg_st_real_strides(tg_ir *ir, const tg_st *st, int ignore_valid,
                       tg_sint *strides, uint8_t *known)
{
	const tg_view *v = st->views[st->nviews - 1];
	size_t i;

	for (i = 0; i < v->ndim; i++) {
		strides[i] = st->nviews == 1 ? v->strides[i] : tg_si(0);
		known[i] = st->nviews == 1 && !v->mask;
	}
	if (st->nviews == 1 && !v->mask)
		return 0;
	return strides_from_expr(ir, st, ignore_valid, strides, known);
}

int tg_st_unit_stride_axes(tg_ir *ir, const tg_st *st, int ignore_valid,
                           uint32_t *axes, size_t *n)
{
	tg_sint strides[TG_MAX_DIMS];
	uint8_t known[TG_MAX_DIMS];
	size_t i;
	int rc;

	*n = 0;
	if ((rc = tg_st_real_strides(ir, st, ignore_valid, strides, known)))
		return rc;
	for (i = 0; i < tg_st_ndim(st); i++)
		if (known[i] && tg_sint_is(strides[i], 1))
			axes[(*n)++] = (uint32_t)i;
	return 0;
}

int tg_st_axis_is_masked(tg_ir *ir, const tg_st *st, size_t axis, int *out)
{
	tg_uop *ix[TG_MAX_DIMS], *idx, *valid;
	uint64_t in_valid = 0;
	int rc;

	*out = 0;
	if (axis >= tg_st_ndim(st))
		return tg_error(TG_EINVAL, "axis_is_masked: axis %zu out of "
		                "range for %zu dims", axis, tg_st_ndim(st));
	default_idxs(ir, st, ix);
	if ((rc = tg_st_expr_idxs(ir, st, ix, &idx, &valid)) ||
	    (rc = axes_of(valid, ix, tg_st_ndim(st), &in_valid)))
		return rc;
	*out = in_valid >> axis & 1;
	return 0;
}

/* The bound of the index expression is what a kernel may read: the
 * buffer it needs, which can be less than the shape's size after a
 * shrink. */
int tg_st_real_size(tg_ir *ir, const tg_st *st, int64_t *out)
{
	tg_uop *idx, *valid;
	int rc;

	*out = 0;
	if (tg_sints_has(tg_st_shape(st), tg_st_ndim(st), 0))
		return 0;
	if ((rc = tg_st_expr_idxs(ir, st, NULL, &idx, &valid)))
		return rc;
	if (tg_uop_vmax(valid) != 0)
		*out = tg_uop_vmax(idx) + 1;
	return 0;
}

/* Orders variables by name, then by creation, so the order is the same
 * in every run (pointers are not). */
static int var_cmp(const void *pa, const void *pb)
{
	const tg_uop *a = *(tg_uop *const *)pa, *b = *(tg_uop *const *)pb;
	int c = strcmp(a->arg.name ? a->arg.name : "",
	               b->arg.name ? b->arg.name : "");

	return c ? c : (a->id > b->id) - (a->id < b->id);
}

/* Sorts v and drops repeated nodes. */
static void sort_unique(tg_uop_vec *v)
{
	size_t i, n = 0;

	if (v->n)
		qsort(v->v, v->n, sizeof *v->v, var_cmp);
	for (i = 0; i < v->n; i++)
		if (!n || v->v[n - 1] != v->v[i])
			v->v[n++] = v->v[i];
	v->n = n;
}

/* Calls fn on every symbolic entry of v (offset, shape, strides,
 * mask), stopping at the first error. */
static int each_sint(const tg_view *v, int (*fn)(tg_uop *, void *),
                     void *ctx)
{
	size_t i, n = v->ndim;
	int rc = v->offset.u ? fn(v->offset.u, ctx) : 0;

	for (i = 0; !rc && i < 4 * n; i++) {
		const tg_sint *s = i < n ? &v->shape[i]
		                   : i < 2 * n ? &v->strides[i - n]
		                   : v->mask ? &v->mask[i - 2 * n] : NULL;

		if (s && s->u)
			rc = fn(s->u, ctx);
	}
	return rc;
}

static int add_vars(tg_uop *u, void *ctx)
{
	return tg_sym_vars(u, ctx);
}

int tg_st_vars(const tg_st *st, tg_uop_vec *out)
{
	size_t i;
	int rc;

	for (i = 0; i < st->nviews; i++)
		if ((rc = each_sint(st->views[i], add_vars, out)))
			return rc;
	sort_unique(out);
	return 0;
}

/* The BIND nodes under u, appended to the vec ctx. */
static int add_binds(tg_uop *u, void *ctx)
{
	tg_uop_vec *binds = ctx;
	size_t n, i;
	tg_uop **all = tg_uop_toposort(u, &n);

	if (!all)
		return tg_error_oom("unbind");
	for (i = 0; i < n; i++)
		if (all[i]->op == TG_BIND && TG_VEC_PUSH(binds, all[i]))
			break;
	free(all);
	return i < n ? tg_error_oom("unbind") : 0;
}

static int bind_cmp(const void *pa, const void *pb)
{
	const tg_uop *a = *(tg_uop *const *)pa, *b = *(tg_uop *const *)pb;

	return var_cmp(&a->src[0], &b->src[0]);
}

/* Sorts the binds by variable, one per variable; a variable bound to
 * two values is an error (tinygrad's merge_dicts). */
static int sort_binds(tg_uop_vec *v)
{
	size_t i, n = 0;
	char b1[128];

	if (v->n)
		qsort(v->v, v->n, sizeof *v->v, bind_cmp);
	for (i = 0; i < v->n; i++) {
		tg_uop *var = v->v[i]->src[0];

		if (n && v->v[n - 1] == v->v[i])
			continue;
		if (n && v->v[n - 1]->src[0] == var)
			return tg_error(TG_EINVAL, "unbind: variable %s is "
			                "bound to two values",
			                tg_sint_format(tg_sint_of(var), b1,
			                               sizeof b1));
		v->v[n++] = v->v[i];
	}
	v->n = n;
	return 0;
}

/* s with its BINDs replaced by their variables. */
static tg_sint unbound(tg_ir *ir, tg_sint s)
{
	return s.u ? tg_sint_of(tg_sym_unbind(ir, s.u, NULL, NULL)) : s;
}

/* v with every BIND replaced by its variable, canonicalized again. */
static int unbind_view(tg_ir *ir, const tg_view *v, tg_view **out)
{
	tg_sint sh[TG_MAX_DIMS], st[TG_MAX_DIMS], m[2 * TG_MAX_DIMS];
	size_t i;

	for (i = 0; i < v->ndim; i++) {
		sh[i] = unbound(ir, v->shape[i]);
		st[i] = unbound(ir, v->strides[i]);
	}
	for (i = 0; v->mask && i < 2 * v->ndim; i++)
		m[i] = unbound(ir, v->mask[i]);
	return tg_view_make(ir, "unbind", v->ndim, sh, st,
	                    unbound(ir, v->offset), v->mask ? m : NULL, out);
}

/* A kernel compiled for an unbound tracker serves every value of its
 * variables; the binds carry this call's values. */
int tg_st_unbind(tg_ir *ir, const tg_st *st, tg_st **out,
                 tg_uop_vec *binds)
{
	tg_view *views[64], **vs = views;
	size_t i, n = 0;
	int rc = 0;

	*out = NULL;
	if (st->nviews > TG_ARRAY_LEN(views) &&
	    !(vs = malloc(st->nviews * sizeof *vs)))
		return tg_error_oom("unbind");
	for (i = 0; !rc && i < st->nviews; i++)
		if (!(rc = unbind_view(ir, st->views[i], &vs[n])))
			n++;
	for (i = 0; binds && !rc && i < st->nviews; i++)
		rc = each_sint(st->views[i], add_binds, binds);
	if (!rc && !(*out = tg_st_from_views(vs, n)))
		rc = tg_last_status();
	for (i = 0; i < n; i++)
		tg_view_free(vs[i]);
	if (vs != views)
		free(vs);
	if (!rc && binds && (rc = sort_binds(binds))) {
		tg_st_free(*out);
		*out = NULL;
	}
	return rc;
}

/* ------------------------------------------------ periods along an axis */

#define PERIOD_MAX 4096  /* longer periods are not worth knowing */

/* How a node moves along one axis variable x: u(x + q) = u(x) + d for
 * every x (q = 0: not that simply; d = 0: u is periodic). */
typedef struct qa {
	int64_t q, d;
} qa;

static int64_t gcd64(int64_t a, int64_t b)
{
	a = a < 0 ? -a : a;
	b = b < 0 ? -b : b;
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* lcm(a, b), 0 when it passes PERIOD_MAX. */
static int64_t lcm64(int64_t a, int64_t b)
{
	int64_t l = a / gcd64(a, b) * b;

	return l > PERIOD_MAX ? 0 : l;
}

/* The form of a source (found earlier in the order). */
static qa form_of(const tg_uop *s, tg_uop *const *order, const qa *f,
                  size_t i)
{
	while (i-- > 0)
		if (order[i] == s)
			return f[i];
	return (qa){ 0, 0 };
}

/* A sum keeps the form: periods meet at their lcm, where the
 * increments add up. */
static qa form_add(qa a, qa b)
{
	int64_t q = lcm64(a.q, b.q);

	return q ? (qa){ q, a.d * (q / a.q) + b.d * (q / b.q) } : (qa){ 0, 0 };
}

/* x // c and x % c of a dividend never negative: after c/g periods
 * (g = gcd(d, c)) the dividend has moved by a multiple of c. */
static qa form_div(const tg_uop *u, qa a)
{
	int64_t c, g;

	if (u->src[1]->op != TG_CONST || u->src[0]->vmin < 0 ||
	    (c = u->src[1]->arg.v.i) <= 0)
		return (qa){ 0, 0 };
	g = a.d ? gcd64(a.d, c) : c;
	if (a.q > PERIOD_MAX / (c / g))
		return (qa){ 0, 0 };
	return (qa){ a.q * (c / g), u->op == TG_MOD ? 0 : a.d / g };
}

/* The form of u from its sources' forms. */
static qa form_node(const tg_uop *u, const tg_uop *x, tg_uop *const *order,
                    const qa *f, size_t i)
{
	qa s[3] = { { 1, 0 }, { 1, 0 }, { 1, 0 } }, all = { 1, 0 };
	size_t j;

	if (u == x)
		return (qa){ 1, 1 };
	for (j = 0; j < u->nsrc && j < 3; j++) {
		s[j] = form_of(u->src[j], order, f, i);
		if (!s[j].q || !(all.q = lcm64(all.q, s[j].q)))
			return (qa){ 0, 0 };
		if (s[j].d)
			all.d = 1;
	}
	if (u->nsrc > 3)
		return (qa){ 0, 0 };
	if (!all.d)   /* a function of periodic values is periodic */
		return (qa){ all.q, 0 };
	switch (u->op) {
	case TG_ADD:
		return form_add(s[0], s[1]);
	case TG_MUL:
		for (j = 0; j < 2; j++)
			if (u->src[1 - j]->op == TG_CONST && !s[1 - j].d)
				return (qa){ s[j].q,
				             s[j].d * u->src[1 - j]->arg.v.i };
		return (qa){ 0, 0 };
	case TG_IDIV:
	case TG_MOD:
		return s[1].d ? (qa){ 0, 0 } : form_div(u, s[0]);
	default:
		return (qa){ 0, 0 };
	}
}

/* The period of u along x: the q of its form, 0 when it has none. */
static int64_t expr_period(const tg_uop *u, const tg_uop *x)
{
	size_t n, i;
	tg_uop **order = tg_uop_toposort(u, &n);
	qa *f = order ? malloc(n * sizeof *f) : NULL;
	int64_t q;

	if (!f) {
		free(order);
		return -1;
	}
	for (i = 0; i < n; i++)
		f[i] = form_node(order[i], x, order, f, i);
	q = f[n - 1].q;
	free(f);
	free(order);
	return q;
}

int tg_st_axis_period(tg_ir *ir, const tg_st *st, size_t axis,
                      int64_t *period)
{
	tg_uop *idx, *valid, *x;
	int64_t a, b;
	int rc;

	*period = 0;
	if (axis >= tg_st_ndim(st))
		return tg_error(TG_EINVAL, "axis_period: axis %zu out of "
		                "range for %zu dims", axis, tg_st_ndim(st));
	x = tg_st_idx_var(ir, st, axis);
	if ((rc = tg_st_expr_idxs(ir, st, NULL, &idx, &valid)))
		return rc;
	if ((a = expr_period(idx, x)) < 0 || (b = expr_period(valid, x)) < 0)
		return tg_error_oom("axis_period");
	*period = a && b ? lcm64(a, b) : 0;
	return 0;
}

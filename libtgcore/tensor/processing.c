/*
 * tensor/processing.c - matmul, the pooling view every convolution and
 * pool is made of (tinygrad's _pool), conv2d, conv_transpose2d, the
 * pools and attention.  All of them are movement ops, a multiply and a
 * reduce, which the scheduler fuses into one kernel each.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"
#include "ir/ir.h"
#include "shape/shape.h"

/* ------------------------------------------------------------ matmul */

/* tinygrad's dot: x (..., n, k) as (..., n, 1, k), w (..., k, m) as
 * (..., 1, m, k), multiplied with broadcasting and summed over k in
 * acc (the lub of the operands when TG_NDTYPES). */
/* The operands of a dot product: both with a dim, the contracted axes
 * equal, the batch axes (all but the last two, right-aligned)
 * broadcastable; checked here so that the message names the operands. */
static int check_dot(const char *op, const tg_tensor *a, const tg_tensor *b)
{
	size_t n1 = a->ndim, n2 = b->ndim, wk = n2 < 2 ? n2 : 2;
	char b1[160], b2[160];
	const char *why = NULL;

	if (!n1 || !n2) {
		tg_t_fail(TG_EINVAL, op, "both operands need at least 1 dim, "
		          "got %s and %s", TG_T_SHAPE(a, b1),
		          TG_T_SHAPE(b, b2));
		return -1;
	}
	if (a->shape[n1 - 1] != b->shape[n2 - wk]) {
		tg_t_fail(TG_EINVAL, op, "shapes %s and %s don't match on the "
		          "contracted axis (%lld vs %lld)", TG_T_SHAPE(a, b1),
		          TG_T_SHAPE(b, b2), (long long)a->shape[n1 - 1],
		          (long long)b->shape[n2 - wk]);
		return -1;
	}
	if (n1 >= TG_MAX_DIMS || n2 >= TG_MAX_DIMS)
		why = "too many dims: %s and %s";
	for (size_t i = 1; !why && n1 >= 2 + i && n2 >= 2 + i; i++) {
		int64_t da = a->shape[n1 - 2 - i], db = b->shape[n2 - 2 - i];

		if (da != db && da != 1 && db != 1)
			why = "shapes %s and %s don't broadcast";
	}
	if (!why)
		return 0;
	tg_t_fail(TG_EINVAL, op, why, TG_T_SHAPE(a, b1), TG_T_SHAPE(b, b2));
	return -1;
}

static tg_tensor *dot_acc(const char *op, const tg_tensor *a,
                          const tg_tensor *b, tg_dtype acc)
{
	int64_t xs[TG_MAX_DIMS], ws[TG_MAX_DIMS];
	size_t n1, n2, one, wk, i, nx = 0, nw = 0;
	tg_tensor *x, *w, *r;
	tg_dtype out;
	int last = -1;

	if (!a || !b || check_dot(op, a, b))
		return NULL;
	n1 = a->ndim;
	n2 = b->ndim;
	wk = n2 < 2 ? n2 : 2;
	one = n1 > 1 && n2 > 1;
	for (i = 0; i + 1 < n1; i++)
		xs[nx++] = a->shape[i];
	if (one)
		xs[nx++] = 1;
	xs[nx++] = a->shape[n1 - 1];
	for (i = 0; i + wk < n2; i++)
		ws[nw++] = b->shape[i];
	if (one)
		ws[nw++] = 1;
	for (i = n2 - wk; i < n2; i++)
		ws[nw++] = b->shape[i];
	out = tg_dtype_lub(tg_tensor_dtype(a), tg_tensor_dtype(b));
	tg_scope_begin();
	x = tg_reshape(a, nx, xs);
	w = tg_transpose(tg_reshape(b, nw, ws), -1, -(int)wk);
	r = tg_mul(x, w);
	if (r && acc != TG_NDTYPES && tg_tensor_dtype(r) != acc)
		r = tg_cast(r, acc);
	r = tg_sum(r, &last, 1, 0);
	if (r && tg_tensor_dtype(r) != (acc != TG_NDTYPES ? acc : out))
		r = tg_cast(r, acc != TG_NDTYPES ? acc : out);
	r = tg_keep(r);
	tg_scope_end();
	if (!r && a && b)
		tg_error_prefix("%s", op);
	return r;
}

tg_tensor *tg_dot(const tg_tensor *a, const tg_tensor *b)
{
	return dot_acc("dot", a, b, TG_NDTYPES);
}

tg_tensor *tg_matmul(const tg_tensor *a, const tg_tensor *b)
{
	return dot_acc("matmul", a, b, TG_NDTYPES);
}

tg_tensor *tg_matmul_acc(const tg_tensor *a, const tg_tensor *b,
                         tg_dtype acc)
{
	if ((int)acc < 0 || acc >= TG_NDTYPES)
		return tg_t_fail(TG_EINVAL, "matmul", "accumulation dtype %d is "
		                 "not a dtype", (int)acc);
	return dot_acc("matmul", a, b, acc);
}

tg_tensor *tg_linear(const tg_tensor *x, const tg_tensor *w,
                     const tg_tensor *bias)
{
	tg_tensor *r;

	if (!x || !w)
		return NULL;
	tg_scope_begin();
	r = w->ndim == 1 ? tg_mul(x, w) : dot_acc("linear", x, w, TG_NDTYPES);
	if (bias)
		r = tg_add(r, bias);
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

/* --------------------------------------------------------------- pool */

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Without overlap (kernel <= stride, no dilation): pad/shrink to o*s,
 * split each axis into (o, s) and keep (o, k).  Shape (..., o..., k...). */
static tg_tensor *pool_simple(const tg_tensor *t, size_t nk, const int64_t *k,
                              const int64_t *s, const int64_t *o)
{
	int64_t p[2 * TG_MAX_DIMS] = { 0 }, r[TG_MAX_DIMS], sh[2 * TG_MAX_DIMS];
	size_t lead = t->ndim - nk, i, n = 0;
	int perm[TG_MAX_DIMS];
	tg_tensor *x;

	for (i = 0; i < nk; i++) {
		int64_t in = t->shape[lead + i];

		p[2 * (lead + i) + 1] = o[i] * s[i] - in; /* < 0 crops */
	}
	x = tg_pad(t, t->ndim, p, 0);
	for (i = 0; i < lead; i++) {
		r[n++] = t->shape[i];
		sh[2 * i] = 0;
		sh[2 * i + 1] = t->shape[i];
	}
	for (i = 0; i < nk; i++) {
		r[n++] = o[i];
		r[n++] = s[i];
	}
	x = tg_reshape(x, n, r);
	for (i = 0; i < nk; i++) {
		sh[2 * (lead + 2 * i)] = 0;
		sh[2 * (lead + 2 * i) + 1] = o[i];
		sh[2 * (lead + 2 * i) + 2] = 0;
		sh[2 * (lead + 2 * i) + 3] = k[i];
	}
	x = tg_shrink(x, n, sh);
	for (i = 0; i < lead; i++)
		perm[i] = (int)i;
	for (i = 0; i < nk; i++) {
		perm[lead + i] = (int)(lead + 2 * i);
		perm[lead + nk + i] = (int)(lead + 2 * i + 1);
	}
	return tg_permute(x, lead + 2 * nk, perm);
}

/* With overlap or dilation: the windows at every position as one view
 * (tg_t_window), then every s-th.  tinygrad repeats the input and
 * slices the windows out with reshapes and shrinks; the map is the same
 * (so are the kernels), but its index math divides by the repeat's
 * period, and the gradient of the repeat is a reduce through three
 * views that divides per element. */
static tg_tensor *pool_overlap(const tg_tensor *t, size_t nk,
                               const int64_t *k, const int64_t *s,
                               const int64_t *d)
{
	int64_t mul[TG_MAX_DIMS];
	size_t lead = t->ndim - nk, i, n = lead + 2 * nk;
	tg_tensor *w = tg_t_window(t, nk, k, d);
	int strided = 0;

	for (i = 0; i < n; i++) {
		int o = i >= lead && i < lead + nk;

		mul[i] = o ? s[i - lead] : 1;
		strided |= o && s[i - lead] > 1;
	}
	return strided ? tg_t_stride(w, n, mul) : w;
}

tg_tensor *tg_t_pool(const tg_tensor *t, size_t nk, const int64_t *k,
                     const int64_t *stride, const int64_t *dilation)
{
	int64_t s[TG_MAX_DIMS], d[TG_MAX_DIMS], o[TG_MAX_DIMS];
	size_t i, lead;
	int overlap = 0;
	tg_tensor *r;
	char b[160];

	if (!t)
		return NULL;
	if (nk > t->ndim || t->ndim + 2 * nk > TG_MAX_DIMS)
		return tg_t_fail(TG_EINVAL, "pool", "cannot pool %s with %zu "
		                 "kernel dims", TG_T_SHAPE(t, b), nk);
	lead = t->ndim - nk;
	for (i = 0; i < nk; i++) {
		int64_t in = t->shape[lead + i];

		s[i] = stride && stride[i] ? stride[i] : 1;
		d[i] = dilation && dilation[i] ? dilation[i] : 1;
		if (k[i] <= 0 || s[i] < 0 || d[i] < 0 ||
		    in - d[i] * (k[i] - 1) <= 0)
			return tg_t_fail(TG_EINVAL, "pool", "kernel %lld (stride "
			                 "%lld, dilation %lld) does not fit axis %zu "
			                 "of %s", (long long)k[i], (long long)s[i],
			                 (long long)d[i], lead + i,
			                 TG_T_SHAPE(t, b));
		o[i] = ceil_div(in - d[i] * (k[i] - 1), s[i]);
		overlap |= k[i] > s[i] || d[i] != 1;
	}
	if (overlap && tg_dims_sym(t->ndim, t->shape))
		return tg_t_fail(TG_EUNSUPPORTED, "pool", "overlapping windows "
		                 "over the symbolic shape %s",
		                 TG_T_SHAPE(t, b));
	tg_scope_begin();
	r = overlap ? pool_overlap(t, nk, k, s, d)
	            : pool_simple(t, nk, k, s, o);
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

/* ------------------------------------------------------- convolutions */

/* The options with their defaults filled in. */
static tg_conv_opts conv_defaults(const tg_conv_opts *o)
{
	tg_conv_opts r;
	int i;

	memset(&r, 0, sizeof r);
	if (o)
		r = *o;
	for (i = 0; i < TG_CONV_MAX_DIMS; i++) {
		r.stride[i] = r.stride[i] ? r.stride[i] : 1;
		r.dilation[i] = r.dilation[i] ? r.dilation[i] : 1;
	}
	r.groups = r.groups ? r.groups : 1;
	return r;
}

/* Pads the last nd axes by p's (before, after) pairs; negative crops. */
static tg_tensor *pad_tail(const tg_tensor *x, size_t nd, const int64_t *p,
                           double value)
{
	int64_t pairs[2 * TG_MAX_DIMS] = { 0 };
	size_t n = x->ndim;

	memcpy(pairs + 2 * (n - nd), p, 2 * nd * sizeof *p);
	return tg_pad(x, n, pairs, value);
}

/* The number of spatial axes of a convolution: the weight's dims past
 * (out, in), 1 to TG_CONV_MAX_DIMS; `want` 0 takes any. */
static int conv_dims(const char *op, const tg_tensor *x, const tg_tensor *w,
                     size_t want)
{
	char b1[160], b2[160];
	size_t nd = w->ndim - 2;

	if (want && (x->ndim != want + 2 || w->ndim != want + 2)) {
		tg_t_fail(TG_EINVAL, op, "input %s and weight %s must be %zu-D",
		          TG_T_SHAPE(x, b1), TG_T_SHAPE(w, b2), want + 2);
		return -1;
	}
	if (w->ndim < 3 || w->ndim > TG_CONV_MAX_DIMS + 2 ||
	    x->ndim != w->ndim) {
		tg_t_fail(TG_EINVAL, op, "input %s and weight %s must both be "
		          "(N,C,...) with 1 to %d spatial axes",
		          TG_T_SHAPE(x, b1), TG_T_SHAPE(w, b2),
		          TG_CONV_MAX_DIMS);
		return -1;
	}
	return (int)nd;
}

static int check_conv(const char *op, const tg_tensor *x, const tg_tensor *w,
                      const tg_tensor *bias, const tg_conv_opts *o,
                      size_t nd, int64_t cin)
{
	char b1[160], b2[160];
	size_t i;

	for (i = 0; i < nd; i++)
		if (o->stride[i] < 1 || o->dilation[i] < 1 || o->groups < 1) {
			tg_t_fail(TG_EINVAL, op, "stride %lld, dilation %lld and "
			          "groups %lld must be positive",
			          (long long)o->stride[i], (long long)o->dilation[i],
			          (long long)o->groups);
			return -1;
		}
	if (x->shape[1] != cin) {
		tg_t_fail(TG_EINVAL, op, "input %s does not match weight %s "
		          "with %lld groups (%lld vs %lld channels)",
		          TG_T_SHAPE(x, b1), TG_T_SHAPE(w, b2),
		          (long long)o->groups, (long long)x->shape[1],
		          (long long)cin);
		return -1;
	}
	if (bias && (bias->ndim != 1)) {
		tg_t_fail(TG_EINVAL, op, "bias %s must be 1-D",
		          TG_T_SHAPE(bias, b1));
		return -1;
	}
	return 0;
}

/* The windows p, (bs, g*cin, o..., k...), as (bs, g, rc, o..., cin,
 * k...): each group's windows once per output channel of the group. */
static tg_tensor *group_windows(tg_tensor *p, size_t nd, int64_t bs,
                                int64_t g, int64_t rc, int64_t cin,
                                const int64_t *k)
{
	int64_t sh[TG_MAX_DIMS];
	int perm[TG_MAX_DIMS];
	size_t i, n = 0;

	/* (bs, g, cin, 1, o..., k...) */
	sh[n++] = bs, sh[n++] = g, sh[n++] = cin, sh[n++] = 1;
	for (i = 0; i < nd; i++)
		sh[n++] = p->shape[2 + i];
	for (i = 0; i < nd; i++)
		sh[n++] = k[i];
	p = tg_reshape(p, n, sh);
	sh[3] = rc;
	p = tg_expand(p, n, sh);
	perm[0] = 0, perm[1] = 1, perm[2] = 3;
	for (i = 0; i < nd; i++)
		perm[3 + i] = (int)(4 + i);
	perm[3 + nd] = 2;
	for (i = 0; i < nd; i++)
		perm[4 + nd + i] = (int)(4 + nd + i);
	return tg_permute(p, n, perm);
}

/* The weight (g*rc, cin, k...) as (1, g, rc, 1..., cin, k...), to
 * multiply group_windows' view. */
static tg_tensor *group_weight(const tg_tensor *w, size_t nd, int64_t g,
                               int64_t rc, int64_t cin)
{
	int64_t wsh[TG_MAX_DIMS];
	size_t i;

	wsh[0] = 1, wsh[1] = g, wsh[2] = rc;
	for (i = 0; i < nd; i++)
		wsh[3 + i] = 1;
	wsh[3 + nd] = cin;
	for (i = 0; i < nd; i++)
		wsh[4 + nd + i] = w->shape[2 + i];
	return tg_reshape(w, 4 + 2 * nd, wsh);
}

/* r (bs, cout, o...) plus the bias (cout) on every position. */
static tg_tensor *add_bias(const char *op, tg_tensor *r,
                           const tg_tensor *bias, size_t nd, int64_t cout)
{
	int64_t sh[TG_MAX_DIMS];
	char b[160];

	if (!bias || !r)
		return r;
	if (bias->shape[0] != cout)
		return tg_t_fail(TG_EINVAL, op, "bias %s for %lld output "
		                 "channels", TG_T_SHAPE(bias, b),
		                 (long long)cout);
	for (size_t i = 0; i < nd + 2; i++)
		sh[i] = i == 1 ? -1 : 1;
	return tg_add(r, tg_reshape(bias, nd + 2, sh));
}

/* tinygrad's conv2d, for any number of spatial axes: the windows
 * (bs, g, cin, 1, o..., k...) expanded over the rc output channels of
 * each group, permuted to (bs, g, rc, o..., cin, k...), times the
 * weight and summed over (cin, k...). */
static tg_tensor *conv_nd(const char *op, const tg_tensor *x,
                          const tg_tensor *w, const tg_tensor *bias,
                          const tg_conv_opts *opts, size_t want)
{
	tg_conv_opts o = conv_defaults(opts);
	int64_t g, rc, cin, bs, sh[TG_MAX_DIMS];
	int red[TG_CONV_MAX_DIMS + 1];
	size_t nd, i;
	tg_tensor *p, *r;
	char b1[160];
	int d;

	if (!x || !w)
		return NULL;
	if ((d = conv_dims(op, x, w, want)) < 0)
		return NULL;
	nd = (size_t)d;
	g = o.groups;
	if (g > 0 && w->shape[0] % g)
		return tg_t_fail(TG_EINVAL, op, "%lld output channels of "
		                 "weight %s don't split into %lld groups",
		                 (long long)w->shape[0], TG_T_SHAPE(w, b1),
		                 (long long)g);
	if (check_conv(op, x, w, bias, &o, nd, w->shape[1] * g))
		return NULL;
	bs = x->shape[0];
	cin = w->shape[1];
	rc = w->shape[0] / g;
	tg_scope_begin();
	p = tg_t_pool(pad_tail(x, nd, o.padding, 0), nd, w->shape + 2,
	              o.stride, o.dilation);
	if (!p) {
		tg_scope_end();
		return tg_error_prefix("%s", op), (tg_tensor *)NULL;
	}
	/* (bs, g*rc, o...) */
	sh[0] = bs, sh[1] = g * rc;
	for (i = 0; i < nd; i++)
		sh[2 + i] = p->shape[2 + i];
	p = group_windows(p, nd, bs, g, rc, cin, w->shape + 2);
	r = tg_mul(p, group_weight(w, nd, g, rc, cin));
	for (i = 0; i <= nd; i++)
		red[i] = -1 - (int)i;
	r = tg_reshape(tg_sum(r, red, nd + 1, 1), nd + 2, sh);
	r = tg_keep(add_bias(op, r, bias, nd, g * rc));
	tg_scope_end();
	return r;
}

tg_tensor *tg_conv(const tg_tensor *x, const tg_tensor *w,
                   const tg_tensor *bias, const tg_conv_opts *opts)
{
	return conv_nd("conv", x, w, bias, opts, 0);
}

tg_tensor *tg_conv2d(const tg_tensor *x, const tg_tensor *w,
                     const tg_tensor *bias, const tg_conv_opts *opts)
{
	return conv_nd("conv2d", x, w, bias, opts, 2);
}

/* Zeros between the input's elements along its last nd axes: each
 * axis h becomes (h, 1) padded to (h, s), merged, and the trailing
 * s - 1 zeros cut, so h * s - (s - 1) long. */
static tg_tensor *dilate_input(const tg_tensor *x, size_t nd,
                               const int64_t *s)
{
	int64_t sh[TG_MAX_DIMS], pairs[2 * TG_MAX_DIMS] = { 0 };
	size_t lead = x->ndim - nd, i, n = 0;
	tg_tensor *r;

	for (i = 0; i < lead; i++)
		sh[n++] = x->shape[i];
	for (i = 0; i < nd; i++) {
		sh[n++] = x->shape[lead + i];
		pairs[2 * n + 1] = s[i] - 1;
		sh[n++] = 1;
	}
	r = tg_pad(tg_reshape(x, n, sh), n, pairs, 0);
	for (i = 0; i < lead; i++) {
		pairs[2 * i] = 0;
		pairs[2 * i + 1] = x->shape[i];
	}
	for (i = 0; i < nd; i++) {
		sh[lead + i] = x->shape[lead + i] * s[i];
		pairs[2 * (lead + i)] = 0;
		pairs[2 * (lead + i) + 1] = sh[lead + i] - (s[i] - 1);
	}
	r = tg_reshape(r, x->ndim, sh);
	return tg_shrink(r, x->ndim, pairs);
}

/* tinygrad's conv_transpose2d, for any number of spatial axes: zeros
 * between the input's elements for the stride, the weight flipped with
 * in/out channels swapped per group, then a convolution with padding
 * (k - 1) * d - p (plus output_padding after). */
static tg_tensor *conv_transpose_nd(const char *op, const tg_tensor *x,
                                    const tg_tensor *w,
                                    const tg_tensor *bias,
                                    const tg_conv_opts *opts, size_t want)
{
	tg_conv_opts o = conv_defaults(opts), c;
	int64_t g, sh[TG_MAX_DIMS];
	int flip[TG_CONV_MAX_DIMS], perm[TG_MAX_DIMS], strided = 0, d;
	size_t nd, i;
	tg_tensor *xx, *ww, *r;
	char b1[160];

	if (!x || !w)
		return NULL;
	if ((d = conv_dims(op, x, w, want)) < 0)
		return NULL;
	nd = (size_t)d;
	g = o.groups;
	if (check_conv(op, x, w, bias, &o, nd, w->shape[0]))
		return NULL;
	if (w->shape[0] % g)
		return tg_t_fail(TG_EINVAL, op, "%lld input channels of weight "
		                 "%s don't split into %lld groups",
		                 (long long)w->shape[0], TG_T_SHAPE(w, b1),
		                 (long long)g);
	tg_scope_begin();
	/* (g, cin/g, cout/g, k...) -> (g, cout/g, cin/g, k...) flipped */
	sh[0] = g, sh[1] = -1;
	perm[0] = 0, perm[1] = 2, perm[2] = 1;
	for (i = 0; i < nd + 1; i++)
		sh[2 + i] = w->shape[1 + i];
	for (i = 0; i < nd; i++) {
		perm[3 + i] = (int)(3 + i);
		flip[i] = (int)(3 + i);
		strided |= o.stride[i] > 1;
	}
	ww = tg_permute(tg_reshape(w, nd + 3, sh), nd + 3, perm);
	ww = tg_flatten(tg_flip(ww, flip, nd), 0, 1);
	xx = strided ? dilate_input(x, nd, o.stride) : (tg_tensor *)x;
	c = o;
	memset(c.stride, 0, sizeof c.stride);
	for (i = 0; i < nd; i++) {
		int64_t base = (w->shape[2 + i] - 1) * o.dilation[i];

		c.padding[2 * i] = base - o.padding[2 * i];
		c.padding[2 * i + 1] = base - o.padding[2 * i + 1] +
		                       o.output_padding[i];
	}
	r = tg_keep(conv_nd(op, xx, ww, bias, &c, nd));
	tg_scope_end();
	return r;
}

tg_tensor *tg_conv_transpose(const tg_tensor *x, const tg_tensor *w,
                             const tg_tensor *bias, const tg_conv_opts *opts)
{
	return conv_transpose_nd("conv_transpose", x, w, bias, opts, 0);
}

tg_tensor *tg_conv_transpose2d(const tg_tensor *x, const tg_tensor *w,
                               const tg_tensor *bias,
                               const tg_conv_opts *opts)
{
	return conv_transpose_nd("conv_transpose2d", x, w, bias, opts, 2);
}

/* ------------------------------------------------------------- pools */

static tg_tensor *pool2d(const char *op, const tg_tensor *x,
                         const int64_t kernel[2], const tg_conv_opts *opts,
                         double pad_value)
{
	tg_conv_opts o = conv_defaults(opts);
	int64_t st[2];
	char b[160];
	int i;

	if (!x)
		return NULL;
	if (x->ndim < 2)
		return tg_t_fail(TG_EINVAL, op, "input %s needs 2 dims",
		                 TG_T_SHAPE(x, b));
	for (i = 0; i < 2; i++)
		st[i] = opts && opts->stride[i] ? opts->stride[i] : kernel[i];
	return tg_t_pool(pad_tail(x, 2, o.padding, pad_value), 2, kernel, st,
	                 o.dilation);
}

tg_tensor *tg_max_pool2d(const tg_tensor *x, const int64_t kernel[2],
                         const tg_conv_opts *opts)
{
	int red[2] = { -1, -2 };
	double lo = -INFINITY;
	tg_tensor *r;

	if (!x || tg_t_null("max_pool2d", "kernel", kernel, 2))
		return NULL;
	if (!tg_dtype_is_float(tg_tensor_dtype(x)))
		lo = tg_dtype_is_unsigned(tg_tensor_dtype(x)) ? 0
		     : tg_tensor_dtype(x) == TG_BOOL ? 0
		     : -ldexp(1, (int)tg_dtype_size(tg_tensor_dtype(x)) * 8 - 1);
	tg_scope_begin();
	r = tg_keep(tg_max(pool2d("max_pool2d", x, kernel, opts, lo), red, 2,
	                   0));
	tg_scope_end();
	return r;
}

tg_tensor *tg_avg_pool2d(const tg_tensor *x, const int64_t kernel[2],
                         const tg_conv_opts *opts, int count_include_pad)
{
	int red[2] = { -1, -2 };
	tg_tensor *r;

	if (!x || tg_t_null("avg_pool2d", "kernel", kernel, 2))
		return NULL;
	tg_scope_begin();
	if (count_include_pad || !opts) {
		r = tg_mean(pool2d("avg_pool2d", x, kernel, opts, 0), red, 2, 0);
	} else {
		tg_tensor *n = tg_sum(pool2d("avg_pool2d", tg_ones_like(x),
		                             kernel, opts, 0), red, 2, 0);

		r = tg_div(tg_sum(pool2d("avg_pool2d", x, kernel, opts, 0), red,
		                  2, 0), n);
	}
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

/* --------------------------------------------------------- attention */

tg_tensor *tg_scaled_dot_product_attention(const tg_tensor *q,
                                           const tg_tensor *k,
                                           const tg_tensor *v,
                                           const tg_tensor *mask,
                                           int is_causal)
{
	tg_tensor *m = (tg_tensor *)mask, *qk, *r;
	tg_dtype acc;
	char b[160];

	if (!q || !k || !v)
		return NULL;
	if (q->ndim < 2 || k->ndim < 2)
		return tg_t_fail(TG_EINVAL, "scaled_dot_product_attention", "q "
		                 "%s and k need at least 2 dims",
		                 TG_T_SHAPE(q, b));
	tg_scope_begin();
	acc = tg_dtype_lub(tg_dtype_lub(tg_tensor_dtype(q), tg_tensor_dtype(k)),
	                   TG_FLOAT32);
	if (is_causal) {
		int64_t s[2] = { q->shape[q->ndim - 2], k->shape[k->ndim - 2] };

		m = tg_tril(tg_ones(tg_tensor_dev(q), TG_BOOL, 2, s), 0);
	}
	/* bool -> 0 / -inf in the accumulation float (tinygrad's
	 * mask.where(0, -inf); explicit tensors: where_s would pick the
	 * dtype from the values) */
	if (m && tg_tensor_dtype(m) == TG_BOOL)
		m = tg_where(m, tg_tensor_scalar(tg_tensor_dev(q), acc, 0),
		             tg_tensor_scalar(tg_tensor_dev(q), acc, -INFINITY));
	qk = dot_acc("scaled_dot_product_attention", q,
	             tg_transpose(k, -2, -1), acc);
	qk = tg_div_s(qk, sqrt((double)q->shape[q->ndim - 1]));
	if (m)
		qk = tg_add(qk, m);
	r = tg_cast(tg_softmax(qk, -1), tg_tensor_dtype(q));
	r = tg_keep(tg_matmul(r, v));
	tg_scope_end();
	return r;
}

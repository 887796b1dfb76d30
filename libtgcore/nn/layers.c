/*
 * nn/layers.c - tinygrad's nn layers (nn/__init__.py): Linear, Conv1d,
 * Conv2d, ConvTranspose2d, BatchNorm, GroupNorm, InstanceNorm,
 * LayerNorm, RMSNorm, Embedding, and the functional batchnorm,
 * layernorm and dropout of its Tensor.
 *
 * A layer struct owns one plain reference to each parameter, taken with
 * tg_tensor_ref inside a private scope, so the caller's scopes never
 * hold (and never drop) a layer's tensors.  Forward passes are tensor
 * expressions built in a private scope whose result is kept, the
 * pattern of every composite op (tensor/tensor.h).
 *
 * Initializations follow PyTorch, as tinygrad does since mid-2024 for
 * Linear; for the convolutions the kaiming_uniform(a = sqrt(5)) of
 * PyTorch (and of older tinygrad) is used, whose bound 1/sqrt(fan_in)
 * counts the input channels of one group.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"

#define SHAPE(t, buf) tg_tensor_shape_str((t), (buf), sizeof(buf))
#define NN_DTYPE tg_dtype_default_float()

/* ------------------------------------------------------------ helpers */

/* A layer-owned reference to t (made inside a scope: the scope's own
 * reference goes at its end, this one stays). */
static tg_tensor *own(tg_tensor *t, int requires_grad)
{
	if (t && requires_grad >= 0)
		tg_set_requires_grad(t, requires_grad);
	return tg_tensor_ref(t);
}

static void drop(tg_tensor **t)
{
	tg_tensor_unref(*t);
	*t = NULL;
}

/* The status of the failure that left a tensor NULL. */
static int failed(void)
{
	int st = tg_last_status();

	return st ? st : TG_EINTERNAL;
}

static int bad(const char *layer, const char *what)
{
	return tg_error(TG_EINVAL, "%s: %s", layer, what);
}

/* Checks a layer argument and its weight before a forward pass. */
static int usable(const char *layer, const void *m, const tg_tensor *w)
{
	if (!m)
		return bad(layer, "no layer (NULL)");
	if (!w)
		return bad(layer, "the layer is not initialized");
	return 0;
}

/* Fails unless x has at least `min` axes and `c` entries on axis `axis`
 * (c < 0: any).  "what" names the entries ("channels", "features"). */
static int check_input(const char *layer, const tg_tensor *x, size_t min,
                       int axis, int64_t c, const char *what)
{
	char b[160];
	int64_t have;

	if (x->ndim < min)
		return tg_error(TG_EINVAL, "%s: input %s has %zu dims, the "
		                "layer needs at least %zu", layer, SHAPE(x, b),
		                x->ndim, min);
	have = tg_tensor_size(x, axis);
	if (c >= 0 && have != c)
		return tg_error(TG_EINVAL, "%s: input %s has %lld %s, the "
		                "layer %lld", layer, SHAPE(x, b),
		                (long long)have, what, (long long)c);
	return 0;
}

/* x * weight + bias with weight and bias (C) on axis 1 of x (tinygrad's
 * per-channel affine of GroupNorm and InstanceNorm). */
static tg_tensor *channel_affine(tg_tensor *x, const tg_tensor *w,
                                 const tg_tensor *b)
{
	int64_t s[TG_MAX_DIMS];
	size_t i;

	if (!x || !w || !b)
		return x;
	s[0] = 1;
	s[1] = -1;
	for (i = 2; i < x->ndim; i++)
		s[i] = 1;
	return tg_add(tg_mul(x, tg_reshape(w, x->ndim, s)),
	              tg_reshape(b, x->ndim, s));
}

/* ------------------------------------------------------------ Linear */

/* tinygrad's Linear since mid-2024 (PyTorch's init): weight and bias
 * uniform in +-1/sqrt(in).  On an error the struct stays zeroed. */
int tg_nn_linear_init(tg_nn_linear *m, tg_dev *dev, int64_t in, int64_t out,
                      int bias)
{
	double b;

	if (!m)
		return bad("linear", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if (in <= 0 || out <= 0)
		return tg_error(TG_EINVAL, "linear: %lld inputs and %lld "
		                "outputs (both must be positive)",
		                (long long)in, (long long)out);
	b = 1 / sqrt((double)in);
	tg_scope_begin();
	m->weight = own(tg_uniform(dev, NN_DTYPE, 2, (int64_t[]){ out, in },
	                           -b, b), -1);
	if (bias && m->weight)
		m->bias = own(tg_uniform(dev, NN_DTYPE, 1, &out, -b, b), -1);
	tg_scope_end();
	if (!m->weight || (bias && !m->bias)) {
		tg_nn_linear_free(m);
		return failed();
	}
	return 0;
}

/* x @ weight^T + bias (tg_linear, which broadcasts over x's leading
 * axes). */
tg_tensor *tg_nn_linear_forward(const tg_nn_linear *m, const tg_tensor *x)
{
	tg_tensor *r;

	if (!x)
		return NULL;
	if (usable("linear", m, m ? m->weight : NULL) ||
	    check_input("linear", x, 1, -1, m->weight->shape[1], "features"))
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_linear(x, tg_transpose(m->weight, 0, 1), m->bias));
	tg_scope_end();
	return r;
}

void tg_nn_linear_free(tg_nn_linear *m)
{
	if (!m)
		return;
	drop(&m->weight);
	drop(&m->bias);
}

/* ------------------------------------------------------ convolutions */

/* Weight kaiming_uniform(a = sqrt(5)) of `shape` and, when asked, a
 * bias (n) uniform within the same bound 1/sqrt(fan_in). */
static int conv_params(tg_dev *dev, size_t ndim, const int64_t *shape,
                       int64_t nbias, tg_tensor **w, tg_tensor **b)
{
	int64_t fan_in = 1;
	double bound;
	size_t i;

	for (i = 1; i < ndim; i++)
		fan_in *= shape[i];
	bound = 1 / sqrt((double)fan_in);
	tg_scope_begin();
	*w = own(tg_kaiming_uniform(dev, NN_DTYPE, ndim, shape, sqrt(5.0)), -1);
	if (b && *w)
		*b = own(tg_uniform(dev, NN_DTYPE, 1, &nbias, -bound, bound),
		         -1);
	tg_scope_end();
	if (*w && (!b || *b))
		return 0;
	drop(w);
	return failed();
}

/* Checks channel counts, kernel and options of a convolution layer and
 * fills *o with the options, zeros replaced by their defaults. */
static int conv_check(const char *layer, int64_t cin, int64_t cout,
                      const int64_t k[2], const tg_conv_opts *opts,
                      tg_conv_opts *o)
{
	int i;

	memset(o, 0, sizeof *o);
	if (opts)
		*o = *opts;
	o->groups = o->groups ? o->groups : 1;
	for (i = 0; i < 2; i++) {
		o->stride[i] = o->stride[i] ? o->stride[i] : 1;
		o->dilation[i] = o->dilation[i] ? o->dilation[i] : 1;
		if (o->stride[i] < 0 || o->dilation[i] < 0)
			return tg_error(TG_EINVAL, "%s: stride %lld and "
			                "dilation %lld must be positive", layer,
			                (long long)o->stride[i],
			                (long long)o->dilation[i]);
	}
	if (cin <= 0 || cout <= 0 || !k || k[0] <= 0 || k[1] <= 0)
		return tg_error(TG_EINVAL, "%s: %lld in and %lld out "
		                "channels, kernel (%lld,%lld) (all must be "
		                "positive)", layer, (long long)cin,
		                (long long)cout,
		                (long long)(k ? k[0] : 0),
		                (long long)(k ? k[1] : 0));
	if (o->groups < 0 || cin % o->groups || cout % o->groups)
		return tg_error(TG_EINVAL, "%s: %lld groups don't divide %lld "
		                "in and %lld out channels", layer,
		                (long long)o->groups, (long long)cin,
		                (long long)cout);
	return 0;
}

/* Conv2d: weight (cout, cin/groups, kh, kw), bias (cout). */
int tg_nn_conv2d_init(tg_nn_conv2d *m, tg_dev *dev, int64_t cin,
                      int64_t cout, const int64_t kernel[2],
                      const tg_conv_opts *opts, int bias)
{
	int st;

	if (!m)
		return bad("conv2d", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if ((st = conv_check("conv2d", cin, cout, kernel, opts, &m->opts)))
		return st;
	st = conv_params(dev, 4, (int64_t[]){ cout, cin / m->opts.groups,
	                                      kernel[0], kernel[1] },
	                 cout, &m->weight, bias ? &m->bias : NULL);
	if (st)
		memset(m, 0, sizeof *m);
	return st;
}

/* Checks the input here so the message names the layer's channel
 * count; tg_conv2d checks the rest (output size, bias). */
tg_tensor *tg_nn_conv2d_forward(const tg_nn_conv2d *m, const tg_tensor *x)
{
	if (!x)
		return NULL;
	if (usable("conv2d", m, m ? m->weight : NULL) ||
	    check_input("conv2d", x, 4, 1,
	                m->weight->shape[1] * m->opts.groups, "channels"))
		return NULL;
	if (x->ndim != 4) {
		char b[160];

		tg_error(TG_EINVAL, "conv2d: input %s must be (N,C,H,W)",
		         SHAPE(x, b));
		return NULL;
	}
	return tg_conv2d(x, m->weight, m->bias, &m->opts);
}

void tg_nn_conv2d_free(tg_nn_conv2d *m)
{
	if (!m)
		return;
	drop(&m->weight);
	drop(&m->bias);
	memset(m, 0, sizeof *m);
}

/* Conv1d keeps PyTorch's 3-D weight (cout, cin/groups, k), so its
 * state dict names and shapes match a PyTorch or tinygrad model; the
 * 1-D options are the W half of a conv2d's. */
int tg_nn_conv1d_init(tg_nn_conv1d *m, tg_dev *dev, int64_t cin,
                      int64_t cout, int64_t k, int64_t stride,
                      int64_t padding, int64_t dilation, int64_t groups,
                      int bias)
{
	tg_conv_opts in = { .stride = { 1, stride },
	                    .dilation = { 1, dilation }, .groups = groups }, o;
	int st;

	if (!m)
		return bad("conv1d", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if ((st = conv_check("conv1d", cin, cout, (int64_t[]){ 1, k }, &in,
	                     &o)))
		return st;
	if (padding < 0)
		return tg_error(TG_EINVAL, "conv1d: padding %lld is negative",
		                (long long)padding);
	st = conv_params(dev, 3, (int64_t[]){ cout, cin / o.groups, k }, cout,
	                 &m->weight, bias ? &m->bias : NULL);
	if (st)
		return st;
	m->stride = o.stride[1];
	m->padding = padding;
	m->dilation = o.dilation[1];
	m->groups = o.groups;
	return 0;
}

/* As a conv2d over (N, C, 1, L) with a (cout, cin/g, 1, k) kernel. */
tg_tensor *tg_nn_conv1d_forward(const tg_nn_conv1d *m, const tg_tensor *x)
{
	tg_conv_opts o;
	const int64_t *ws;
	tg_tensor *r;
	char b[160];

	if (!x)
		return NULL;
	if (usable("conv1d", m, m ? m->weight : NULL) ||
	    check_input("conv1d", x, 3, 1, m->weight->shape[1] * m->groups,
	                "channels"))
		return NULL;
	if (x->ndim != 3)
		return tg_t_fail(TG_EINVAL, "conv1d", "input %s must be "
		                 "(N,C,L)", SHAPE(x, b));
	ws = m->weight->shape;
	o = (tg_conv_opts){ .stride = { 1, m->stride },
	                    .dilation = { 1, m->dilation },
	                    .padding = { 0, 0, m->padding, m->padding },
	                    .groups = m->groups };
	tg_scope_begin();
	r = tg_conv2d(tg_unsqueeze(x, 2),
	              tg_reshape(m->weight, 4, (int64_t[]){ ws[0], ws[1], 1,
	                                                    ws[2] }),
	              m->bias, &o);
	r = tg_keep(tg_squeeze(r, 2));
	tg_scope_end();
	return r;
}

void tg_nn_conv1d_free(tg_nn_conv1d *m)
{
	if (!m)
		return;
	drop(&m->weight);
	drop(&m->bias);
	memset(m, 0, sizeof *m);
}

/* ConvTranspose2d: weight (cin, cout/groups, kh, kw), so fan_in (and
 * the bound) counts cout/groups * kh * kw as in PyTorch. */
int tg_nn_conv_transpose2d_init(tg_nn_conv_transpose2d *m, tg_dev *dev,
                                int64_t cin, int64_t cout,
                                const int64_t kernel[2],
                                const tg_conv_opts *opts, int bias)
{
	int st;

	if (!m)
		return bad("conv_transpose2d", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if ((st = conv_check("conv_transpose2d", cin, cout, kernel, opts,
	                     &m->opts)))
		return st;
	st = conv_params(dev, 4, (int64_t[]){ cin, cout / m->opts.groups,
	                                      kernel[0], kernel[1] },
	                 cout, &m->weight, bias ? &m->bias : NULL);
	if (st)
		memset(m, 0, sizeof *m);
	return st;
}

tg_tensor *tg_nn_conv_transpose2d_forward(const tg_nn_conv_transpose2d *m,
                                          const tg_tensor *x)
{
	char b[160];

	if (!x)
		return NULL;
	if (usable("conv_transpose2d", m, m ? m->weight : NULL) ||
	    check_input("conv_transpose2d", x, 4, 1, m->weight->shape[0],
	                "channels"))
		return NULL;
	if (x->ndim != 4)
		return tg_t_fail(TG_EINVAL, "conv_transpose2d", "input %s must "
		                 "be (N,C,H,W)", SHAPE(x, b));
	return tg_conv_transpose2d(x, m->weight, m->bias, &m->opts);
}

void tg_nn_conv_transpose2d_free(tg_nn_conv_transpose2d *m)
{
	if (!m)
		return;
	drop(&m->weight);
	drop(&m->bias);
	memset(m, 0, sizeof *m);
}

/* ----------------------------------------------------- normalization */

/* tinygrad's Tensor.layernorm over the last n axes. */
tg_tensor *tg_layernorm(const tg_tensor *x, size_t n, double eps)
{
	int ax[TG_MAX_DIMS];
	tg_tensor *y, *r;
	char b[160];
	size_t i;

	if (!x)
		return NULL;
	if (n < 1 || n > x->ndim)
		return tg_t_fail(TG_EINVAL, "layernorm", "%zu axes of an input "
		                 "%s (1 to its %zu dims)", n, SHAPE(x, b),
		                 x->ndim);
	for (i = 0; i < n; i++)
		ax[i] = -1 - (int)i;
	tg_scope_begin();
	y = tg_sub(x, tg_mean(x, ax, n, 1));
	r = tg_mul(y, tg_rsqrt(tg_add_s(tg_mean(tg_mul(y, y), ax, n, 1), eps)));
	tg_keep(r);
	tg_scope_end();
	return r;
}

/* Reshapes a (C) tensor v to broadcast along axis 1 of an ndim input. */
static tg_tensor *on_axis1(const tg_tensor *v, size_t ndim)
{
	int64_t s[TG_MAX_DIMS];
	size_t i;

	for (i = 0; i < ndim; i++)
		s[i] = i == 1 ? -1 : 1;
	return tg_reshape(v, ndim, s);
}

/* Fails unless v is absent (optional) or a (c) vector. */
static int check_vec(const char *what, const tg_tensor *v, int64_t c)
{
	char b[160];

	if (!v || (v->ndim == 1 && v->shape[0] == c))
		return 0;
	return tg_error(TG_EINVAL, "batchnorm: %s %s for %lld channels", what,
	                SHAPE(v, b), (long long)c);
}

/* tinygrad's Tensor.batchnorm with axis 1. */
tg_tensor *tg_batchnorm(const tg_tensor *x, const tg_tensor *weight,
                        const tg_tensor *bias, const tg_tensor *mean,
                        const tg_tensor *invstd)
{
	tg_tensor *r;
	int64_t c;

	if (!x || !mean || !invstd)
		return NULL;
	if (check_input("batchnorm", x, 2, 1, -1, ""))
		return NULL;
	c = x->shape[1];
	if (check_vec("mean", mean, c) || check_vec("weight", weight, c) ||
	    check_vec("bias", bias, c))
		return NULL;
	tg_scope_begin();
	r = tg_sub(x, on_axis1(mean, x->ndim));
	if (weight)
		r = tg_mul(r, on_axis1(weight, x->ndim));
	r = tg_mul(r, invstd->ndim == 1 ? on_axis1(invstd, x->ndim) : invstd);
	if (bias)
		r = tg_add(r, on_axis1(bias, x->ndim));
	tg_keep(r);
	tg_scope_end();
	return r;
}

/* tinygrad's BatchNorm: the running statistics exist (and are listed)
 * even without tracking, as in tinygrad; eval mode then uses their
 * initial zeros and ones. */
int tg_nn_batchnorm_init(tg_nn_batchnorm *m, tg_dev *dev, int64_t features,
                         double eps, double momentum, int affine,
                         int track_running_stats)
{
	int64_t one = 1;

	if (!m)
		return bad("batchnorm", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if (features <= 0)
		return tg_error(TG_EINVAL, "batchnorm: %lld features (must be "
		                "positive)", (long long)features);
	tg_scope_begin();
	if (affine) {
		m->weight = own(tg_ones(dev, NN_DTYPE, 1, &features), -1);
		m->bias = own(tg_zeros(dev, NN_DTYPE, 1, &features), -1);
	}
	m->running_mean = own(tg_zeros(dev, NN_DTYPE, 1, &features), 0);
	m->running_var = own(tg_ones(dev, NN_DTYPE, 1, &features), 0);
	m->num_batches_tracked = own(tg_zeros(dev, NN_DTYPE, 1, &one), 0);
	tg_scope_end();
	if ((affine && (!m->weight || !m->bias)) || !m->running_mean ||
	    !m->running_var || !m->num_batches_tracked) {
		tg_nn_batchnorm_free(m);
		return failed();
	}
	m->eps = eps;
	m->momentum = momentum;
	m->affine = affine != 0;
	m->track_running_stats = track_running_stats != 0;
	return 0;
}

/* stat = (1 - momentum) stat + momentum * factor * v, in stat's dtype. */
static int track(tg_tensor *stat, const tg_tensor *v, double momentum,
                 double factor)
{
	tg_tensor *t = tg_mul_s(tg_detach(v), momentum * factor);

	t = tg_add(tg_mul_s(stat, 1 - momentum), t);
	return tg_assign(stat, tg_cast(t, tg_tensor_dtype(stat)));
}

/* Training: batch statistics, and the running ones updated (lazily).
 * Fills *mean and *invstd (scope-held).  n/(n-1) makes the running
 * variance unbiased, n values per channel: PyTorch refuses n = 1 in
 * training (tinygrad would divide by zero), and so does this. */
static int batch_stats(tg_nn_batchnorm *m, const tg_tensor *x,
                       tg_tensor **mean, tg_tensor **invstd)
{
	int ax[TG_MAX_DIMS];
	int64_t n = tg_tensor_numel(x) / x->shape[1];
	size_t i, k = 0;
	tg_tensor *y, *var;
	char b[160];

	if (n < 2)
		return tg_error(TG_EINVAL, "batchnorm: training needs more "
		                "than one value per channel, input %s",
		                SHAPE(x, b));
	for (i = 0; i < x->ndim; i++)
		if (i != 1)
			ax[k++] = (int)i;
	*mean = tg_mean(x, ax, k, 0);
	/* the mean detached: d(var)/d(mean) = 0 */
	y = tg_sub(x, on_axis1(tg_detach(*mean), x->ndim));
	var = tg_mean(tg_mul(y, y), ax, k, 0);
	*invstd = tg_rsqrt(tg_add_s(var, m->eps));
	if (!*invstd)
		return failed();
	if (!m->track_running_stats)
		return 0;
	if (track(m->running_mean, *mean, m->momentum, 1) ||
	    track(m->running_var, var, m->momentum, (double)n / (n - 1.0)))
		return failed();
	return tg_assign(m->num_batches_tracked,
	                 tg_add_s(m->num_batches_tracked, 1));
}

/* Training: batch statistics (and, when tracking, lazy updates of the
 * running ones); eval: the running statistics.  Either way the
 * result is tg_batchnorm of x. */
tg_tensor *tg_nn_batchnorm_forward(tg_nn_batchnorm *m, const tg_tensor *x)
{
	tg_tensor *mean, *invstd, *r = NULL;
	int64_t c;

	if (!x)
		return NULL;
	if (usable("batchnorm", m, m ? m->running_mean : NULL))
		return NULL;
	c = m->running_mean->shape[0];
	if (check_input("batchnorm", x, 2, 1, c, "channels"))
		return NULL;
	tg_scope_begin();
	if (tg_is_training()) {
		if (batch_stats(m, x, &mean, &invstd))
			goto out;
	} else {
		/* expanded to x's shape first, as tinygrad's, so it fuses */
		mean = m->running_mean;
		invstd = tg_expand(on_axis1(m->running_var, x->ndim), x->ndim,
		                   x->shape);
		invstd = tg_rsqrt(tg_add_s(invstd, m->eps));
	}
	r = tg_keep(tg_batchnorm(x, m->weight, m->bias, mean, invstd));
out:
	tg_scope_end();
	return r;
}

void tg_nn_batchnorm_free(tg_nn_batchnorm *m)
{
	if (!m)
		return;
	drop(&m->weight);
	drop(&m->bias);
	drop(&m->running_mean);
	drop(&m->running_var);
	drop(&m->num_batches_tracked);
	memset(m, 0, sizeof *m);
}

/* Ones and zeros (c) as a per-channel or per-element affine. */
static int affine_params(tg_dev *dev, size_t ndim, const int64_t *shape,
                         tg_tensor **w, tg_tensor **b)
{
	tg_scope_begin();
	*w = own(tg_ones(dev, NN_DTYPE, ndim, shape), -1);
	*b = own(tg_zeros(dev, NN_DTYPE, ndim, shape), -1);
	tg_scope_end();
	if (*w && *b)
		return 0;
	drop(w);
	drop(b);
	return failed();
}

/* GroupNorm: the group count must divide the channels. */
int tg_nn_groupnorm_init(tg_nn_groupnorm *m, tg_dev *dev, int64_t num_groups,
                         int64_t num_channels, double eps, int affine)
{
	if (!m)
		return bad("groupnorm", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if (num_groups <= 0 || num_channels <= 0 || num_channels % num_groups)
		return tg_error(TG_EINVAL, "groupnorm: %lld groups don't "
		                "divide %lld channels", (long long)num_groups,
		                (long long)num_channels);
	m->num_groups = num_groups;
	m->num_channels = num_channels;
	m->eps = eps;
	if (affine && affine_params(dev, 1, &num_channels, &m->weight,
	                            &m->bias)) {
		memset(m, 0, sizeof *m);
		return failed();
	}
	return 0;
}

/* x (N, C, ...) viewed as (N, groups, -1), normalized, viewed back. */
static tg_tensor *norm_groups(const tg_tensor *x, int64_t groups,
                              double eps)
{
	tg_tensor *y = tg_reshape(x, 3, (int64_t[]){ x->shape[0], groups, -1 });

	return tg_reshape(tg_layernorm(y, 1, eps), x->ndim, x->shape);
}

/* tinygrad's: layernorm over (N, groups, -1), then the per-channel
 * affine. */
tg_tensor *tg_nn_groupnorm_forward(const tg_nn_groupnorm *m,
                                   const tg_tensor *x)
{
	tg_tensor *r;

	if (!x)
		return NULL;
	if (!m)
		return tg_t_fail(TG_EINVAL, "groupnorm", "no layer (NULL)");
	if (m->num_groups <= 0)
		return tg_t_fail(TG_EINVAL, "groupnorm", "the layer is not "
		                 "initialized");
	if (check_input("groupnorm", x, 2, 1, m->num_channels, "channels"))
		return NULL;
	tg_scope_begin();
	r = norm_groups(x, m->num_groups, m->eps);
	r = tg_keep(channel_affine(r, m->weight, m->bias));
	tg_scope_end();
	return r;
}

void tg_nn_groupnorm_free(tg_nn_groupnorm *m)
{
	if (!m)
		return;
	drop(&m->weight);
	drop(&m->bias);
	memset(m, 0, sizeof *m);
}

int tg_nn_instancenorm_init(tg_nn_instancenorm *m, tg_dev *dev,
                            int64_t num_features, double eps, int affine)
{
	if (!m)
		return bad("instancenorm", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if (num_features <= 0)
		return tg_error(TG_EINVAL, "instancenorm: %lld features (must "
		                "be positive)", (long long)num_features);
	m->num_features = num_features;
	m->eps = eps;
	if (affine && affine_params(dev, 1, &num_features, &m->weight,
	                            &m->bias)) {
		memset(m, 0, sizeof *m);
		return failed();
	}
	return 0;
}

/* A group norm with one channel per group. */
tg_tensor *tg_nn_instancenorm_forward(const tg_nn_instancenorm *m,
                                      const tg_tensor *x)
{
	tg_tensor *r;

	if (!x)
		return NULL;
	if (!m)
		return tg_t_fail(TG_EINVAL, "instancenorm", "no layer (NULL)");
	if (m->num_features <= 0)
		return tg_t_fail(TG_EINVAL, "instancenorm", "the layer is not "
		                 "initialized");
	if (check_input("instancenorm", x, 2, 1, m->num_features, "channels"))
		return NULL;
	tg_scope_begin();
	r = norm_groups(x, m->num_features, m->eps);
	r = tg_keep(channel_affine(r, m->weight, m->bias));
	tg_scope_end();
	return r;
}

void tg_nn_instancenorm_free(tg_nn_instancenorm *m)
{
	if (!m)
		return;
	drop(&m->weight);
	drop(&m->bias);
	memset(m, 0, sizeof *m);
}

/* LayerNorm over a normalized shape of 1 to 8 positive sizes; the
 * affine parameters have that shape. */
int tg_nn_layernorm_init(tg_nn_layernorm *m, tg_dev *dev, size_t ndim,
                         const int64_t *shape, double eps,
                         int elementwise_affine)
{
	size_t i;

	if (!m)
		return bad("layernorm", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if (ndim < 1 || ndim > TG_ARRAY_LEN(m->shape) || !shape)
		return tg_error(TG_EINVAL, "layernorm: a normalized shape of "
		                "%zu dims (1 to %zu)", ndim,
		                TG_ARRAY_LEN(m->shape));
	for (i = 0; i < ndim; i++)
		if (shape[i] <= 0)
			return tg_error(TG_EINVAL, "layernorm: size %lld in "
			                "the normalized shape",
			                (long long)shape[i]);
	m->ndim = ndim;
	memcpy(m->shape, shape, ndim * sizeof *shape);
	m->eps = eps;
	if (elementwise_affine && affine_params(dev, ndim, shape, &m->weight,
	                                        &m->bias)) {
		memset(m, 0, sizeof *m);
		return failed();
	}
	return 0;
}

/* "(a,b)" of the normalized shape, for messages. */
static const char *nshape(const tg_nn_layernorm *m, char *buf, size_t n)
{
	size_t i, len = 0;

	buf[len++] = '(';
	for (i = 0; i < m->ndim && len < n - 24; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%lld",
		                        i ? "," : "", (long long)m->shape[i]);
	snprintf(buf + len, n - len, m->ndim == 1 ? ",)" : ")");
	return buf;
}

/* The input's trailing axes must equal the normalized shape (an
 * assert in tinygrad, an error here). */
tg_tensor *tg_nn_layernorm_forward(const tg_nn_layernorm *m,
                                   const tg_tensor *x)
{
	char b1[160], b2[200];
	tg_tensor *r;

	if (!x)
		return NULL;
	if (!m || !m->ndim)
		return tg_t_fail(TG_EINVAL, "layernorm", "no layer or not "
		                 "initialized");
	if (x->ndim < m->ndim ||
	    memcmp(x->shape + x->ndim - m->ndim, m->shape,
	           m->ndim * sizeof *m->shape))
		return tg_t_fail(TG_EINVAL, "layernorm", "the last dims of "
		                 "input %s must be the normalized shape %s",
		                 SHAPE(x, b1), nshape(m, b2, sizeof b2));
	tg_scope_begin();
	r = tg_layernorm(x, m->ndim, m->eps);
	if (m->weight && m->bias)
		r = tg_add(tg_mul(r, m->weight), m->bias);
	tg_keep(r);
	tg_scope_end();
	return r;
}

void tg_nn_layernorm_free(tg_nn_layernorm *m)
{
	if (!m)
		return;
	drop(&m->weight);
	drop(&m->bias);
	memset(m, 0, sizeof *m);
}

int tg_nn_rmsnorm_init(tg_nn_rmsnorm *m, tg_dev *dev, int64_t dim, double eps)
{
	if (!m)
		return bad("rmsnorm", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if (dim <= 0)
		return tg_error(TG_EINVAL, "rmsnorm: dim %lld (must be "
		                "positive)", (long long)dim);
	tg_scope_begin();
	m->weight = own(tg_ones(dev, NN_DTYPE, 1, &dim), -1);
	tg_scope_end();
	if (!m->weight)
		return failed();
	m->eps = eps;
	return 0;
}

/* tinygrad's RMSNorm: normalized in float32, cast back to x's dtype,
 * then scaled (the product promotes as any op). */
tg_tensor *tg_nn_rmsnorm_forward(const tg_nn_rmsnorm *m, const tg_tensor *x)
{
	int last = -1;
	tg_tensor *f, *r;

	if (!x)
		return NULL;
	if (usable("rmsnorm", m, m ? m->weight : NULL) ||
	    check_input("rmsnorm", x, 1, -1, m->weight->shape[0], "features"))
		return NULL;
	tg_scope_begin();
	f = tg_cast(x, TG_FLOAT32); /* tinygrad's x.float() */
	r = tg_mul(f, tg_rsqrt(tg_add_s(tg_mean(tg_mul(f, f), &last, 1, 1),
	                                m->eps)));
	r = tg_keep(tg_mul(tg_cast(r, tg_tensor_dtype(x)), m->weight));
	tg_scope_end();
	return r;
}

void tg_nn_rmsnorm_free(tg_nn_rmsnorm *m)
{
	if (!m)
		return;
	drop(&m->weight);
	memset(m, 0, sizeof *m);
}

/* --------------------------------------------------------- Embedding */

/* Embedding: weight glorot_uniform, +-sqrt(6/(vocab + size)). */
int tg_nn_embedding_init(tg_nn_embedding *m, tg_dev *dev, int64_t vocab_size,
                         int64_t embed_size)
{
	if (!m)
		return bad("embedding", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if (vocab_size <= 0 || embed_size <= 0)
		return tg_error(TG_EINVAL, "embedding: vocabulary %lld and "
		                "size %lld (both must be positive)",
		                (long long)vocab_size, (long long)embed_size);
	tg_scope_begin();
	m->weight = own(tg_glorot_uniform(dev, NN_DTYPE, 2,
	                                  (int64_t[]){ vocab_size,
	                                               embed_size }), -1);
	tg_scope_end();
	if (!m->weight)
		return failed();
	m->vocab_size = vocab_size;
	m->embed_size = embed_size;
	return 0;
}

/* tinygrad's: (arange(V) == idx) selects rows of the weight, summed
 * over the vocabulary axis of an (..., V, E) broadcast. */
static tg_tensor *lookup(const tg_nn_embedding *m, const tg_tensor *idx)
{
	int64_t big[TG_MAX_DIMS], s[TG_MAX_DIMS];
	size_t n = idx->ndim, i;
	int ax = -2;
	tg_tensor *ar, *ix, *w;

	for (i = 0; i < n; i++)
		s[i] = big[i] = idx->shape[i];
	big[n] = m->vocab_size;
	big[n + 1] = m->embed_size;
	s[n] = s[n + 1] = 1;
	ar = tg_arange(tg_tensor_dev(m->weight), TG_INT32, 0,
	               (double)m->vocab_size, 1);
	ar = tg_expand(tg_reshape(ar, 2, (int64_t[]){ m->vocab_size, 1 }),
	               n + 2, big);
	ix = tg_expand(tg_reshape(idx, n + 2, s), n + 2, big);
	w = tg_expand(m->weight, n + 2, big);
	return tg_sum(tg_mul(tg_eq(ar, ix), w), &ax, 1, 0);
}

/* Integer indices only (tinygrad would compare floats too); no
 * indices give an empty (..., embed_size) as tinygrad's. */
tg_tensor *tg_nn_embedding_forward(const tg_nn_embedding *m,
                                   const tg_tensor *idx)
{
	int64_t s[TG_MAX_DIMS];
	tg_tensor *r;
	char b[160];

	if (!idx)
		return NULL;
	if (usable("embedding", m, m ? m->weight : NULL))
		return NULL;
	if (!tg_dtype_is_int(tg_tensor_dtype(idx)))
		return tg_t_fail(TG_EINVAL, "embedding", "indices %s are %s, "
		                 "not an int dtype", SHAPE(idx, b),
		                 tg_dtype_name(tg_tensor_dtype(idx)));
	if (idx->ndim + 2 > TG_MAX_DIMS)
		return tg_t_fail(TG_EINVAL, "embedding", "indices %s have too "
		                 "many dims (at most %d)", SHAPE(idx, b),
		                 TG_MAX_DIMS - 2);
	if (tg_tensor_numel(idx) == 0) {
		memcpy(s, idx->shape, idx->ndim * sizeof *s);
		s[idx->ndim] = m->embed_size;
		return tg_empty(tg_tensor_dev(m->weight),
		                tg_tensor_dtype(m->weight), idx->ndim + 1, s);
	}
	tg_scope_begin();
	r = tg_keep(lookup(m, idx));
	tg_scope_end();
	return r;
}

void tg_nn_embedding_free(tg_nn_embedding *m)
{
	if (!m)
		return;
	drop(&m->weight);
	memset(m, 0, sizeof *m);
}

/* ----------------------------------------------------------- dropout */

/* tinygrad's dropout: the mask is rand >= p in the default float, so
 * a fraction p is zeroed; the survivors are scaled by 1/(1-p) so the
 * expectation stays.  p is checked in eval mode too. */
tg_tensor *tg_dropout(const tg_tensor *x, double p)
{
	tg_tensor *keep, *r;

	if (!x)
		return NULL;
	if (!(p >= 0 && p < 1))
		return tg_t_fail(TG_EINVAL, "dropout", "probability %g outside "
		                 "[0, 1)", p);
	if (!tg_is_training() || p == 0)
		return tg_reshape(x, x->ndim, x->shape); /* the same values */
	tg_scope_begin();
	keep = tg_ge_s(tg_rand(tg_tensor_dev(x), tg_dtype_default_float(),
	                       x->ndim, x->shape), p);
	r = tg_keep(tg_mul_s(tg_mul(x, keep), 1 / (1.0 - p)));
	tg_scope_end();
	return r;
}

/* ------------------------------------------------------------ params */

/* Adds t as "prefix.name" ("name" without a prefix); NULL t: nothing. */
static int add(tg_state *s, const char *prefix, const char *name,
               tg_tensor *t)
{
	size_t n;
	char *full;
	int st;

	if (!t)
		return 0;
	if (!prefix || !*prefix)
		return tg_state_add(s, name, t);
	n = strlen(prefix) + strlen(name) + 2;
	if (!(full = malloc(n)))
		return tg_error_oom("nn_params");
	snprintf(full, n, "%s.%s", prefix, name);
	st = tg_state_add(s, full, t);
	free(full);
	return st;
}

/* weight and bias, the parameters every layer but batchnorm has. */
static int add_wb(const char *layer, const void *m, tg_tensor *w,
                  tg_tensor *b, tg_state *s, const char *prefix)
{
	int st;

	if (!m || !s)
		return tg_error(TG_EINVAL, "%s_params: no %s (NULL)", layer,
		                m ? "state" : "layer");
	if ((st = add(s, prefix, "weight", w)))
		return st;
	return add(s, prefix, "bias", b);
}

#define WB_PARAMS(name)                                                  \
	int tg_nn_##name##_params(const tg_nn_##name *m, tg_state *s,       \
	                          const char *prefix)                       \
	{                                                                    \
		return add_wb(#name, m, m ? m->weight : NULL,                \
		              m ? m->bias : NULL, s, prefix);                \
	}
WB_PARAMS(linear)
WB_PARAMS(conv2d)
WB_PARAMS(conv1d)
WB_PARAMS(conv_transpose2d)
WB_PARAMS(groupnorm)
WB_PARAMS(instancenorm)
WB_PARAMS(layernorm)
#undef WB_PARAMS

int tg_nn_rmsnorm_params(const tg_nn_rmsnorm *m, tg_state *s,
                         const char *prefix)
{
	return add_wb("rmsnorm", m, m ? m->weight : NULL, NULL, s, prefix);
}

int tg_nn_embedding_params(const tg_nn_embedding *m, tg_state *s,
                           const char *prefix)
{
	return add_wb("embedding", m, m ? m->weight : NULL, NULL, s, prefix);
}

int tg_nn_batchnorm_params(const tg_nn_batchnorm *m, tg_state *s,
                           const char *prefix)
{
	int st;

	if ((st = add_wb("batchnorm", m, m ? m->weight : NULL,
	                 m ? m->bias : NULL, s, prefix)))
		return st;
	if ((st = add(s, prefix, "running_mean", m->running_mean)) ||
	    (st = add(s, prefix, "running_var", m->running_var)))
		return st;
	return add(s, prefix, "num_batches_tracked", m->num_batches_tracked);
}

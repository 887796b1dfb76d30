/*
 * nn/norm.c - tinygrad's normalization layers: BatchNorm (with running
 * statistics), GroupNorm, InstanceNorm, LayerNorm and RMSNorm, and the
 * functional batchnorm and layernorm of its Tensor.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer.h"

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
		                 "%s (1 to its %zu dims)", n, TG_T_SHAPE(x, b),
		                 x->ndim);
	for (i = 0; i < n; i++)
		ax[i] = -1 - (int)i;
	tg_scope_begin();
	y = tg_sub(x, tg_mean(x, ax, n, 1));
	r = tg_mul(y, tg_rsqrt(tg_add_s(tg_mean(tg_mul(y, y), ax, n, 1), eps)));
	r = tg_keep(r);
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
	                TG_T_SHAPE(v, b), (long long)c);
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
	if (nn_check_input("batchnorm", x, 2, 1, -1, ""))
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
	r = tg_keep(r);
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
		return nn_bad("batchnorm", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if (features <= 0)
		return tg_error(TG_EINVAL, "batchnorm: %lld features (must be "
		                "positive)", (long long)features);
	tg_scope_begin();
	if (affine) {
		m->weight = nn_own(tg_ones(dev, NN_DTYPE, 1, &features), -1);
		m->bias = nn_own(tg_zeros(dev, NN_DTYPE, 1, &features), -1);
	}
	m->running_mean = nn_own(tg_zeros(dev, NN_DTYPE, 1, &features), 0);
	m->running_var = nn_own(tg_ones(dev, NN_DTYPE, 1, &features), 0);
	m->num_batches_tracked = nn_own(tg_zeros(dev, NN_DTYPE, 1, &one), 0);
	tg_scope_end();
	if ((affine && (!m->weight || !m->bias)) || !m->running_mean ||
	    !m->running_var || !m->num_batches_tracked) {
		tg_nn_batchnorm_free(m);
		return nn_failed();
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
		                TG_T_SHAPE(x, b));
	for (i = 0; i < x->ndim; i++)
		if (i != 1)
			ax[k++] = (int)i;
	*mean = tg_mean(x, ax, k, 0);
	/* the mean detached: d(var)/d(mean) = 0 */
	y = tg_sub(x, on_axis1(tg_detach(*mean), x->ndim));
	var = tg_mean(tg_mul(y, y), ax, k, 0);
	*invstd = tg_rsqrt(tg_add_s(var, m->eps));
	if (!*invstd)
		return nn_failed();
	if (!m->track_running_stats)
		return 0;
	if (track(m->running_mean, *mean, m->momentum, 1) ||
	    track(m->running_var, var, m->momentum, (double)n / (n - 1.0)))
		return nn_failed();
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
	if (nn_usable("batchnorm", m, m ? m->running_mean : NULL))
		return NULL;
	c = m->running_mean->shape[0];
	if (nn_check_input("batchnorm", x, 2, 1, c, "channels"))
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
	nn_drop(&m->weight);
	nn_drop(&m->bias);
	nn_drop(&m->running_mean);
	nn_drop(&m->running_var);
	nn_drop(&m->num_batches_tracked);
	memset(m, 0, sizeof *m);
}

/* Ones and zeros (c) as a per-channel or per-element affine. */
static int affine_params(tg_dev *dev, size_t ndim, const int64_t *shape,
                         tg_tensor **w, tg_tensor **b)
{
	tg_scope_begin();
	*w = nn_own(tg_ones(dev, NN_DTYPE, ndim, shape), -1);
	*b = nn_own(tg_zeros(dev, NN_DTYPE, ndim, shape), -1);
	tg_scope_end();
	if (*w && *b)
		return 0;
	nn_drop(w);
	nn_drop(b);
	return nn_failed();
}

/* GroupNorm: the group count must divide the channels. */
int tg_nn_groupnorm_init(tg_nn_groupnorm *m, tg_dev *dev, int64_t num_groups,
                         int64_t num_channels, double eps, int affine)
{
	if (!m)
		return nn_bad("groupnorm", "no layer (NULL)");
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
		return nn_failed();
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
	if (nn_check_input("groupnorm", x, 2, 1, m->num_channels, "channels"))
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
	nn_drop(&m->weight);
	nn_drop(&m->bias);
	memset(m, 0, sizeof *m);
}

int tg_nn_instancenorm_init(tg_nn_instancenorm *m, tg_dev *dev,
                            int64_t num_features, double eps, int affine)
{
	if (!m)
		return nn_bad("instancenorm", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if (num_features <= 0)
		return tg_error(TG_EINVAL, "instancenorm: %lld features (must "
		                "be positive)", (long long)num_features);
	m->num_features = num_features;
	m->eps = eps;
	if (affine && affine_params(dev, 1, &num_features, &m->weight,
	                            &m->bias)) {
		memset(m, 0, sizeof *m);
		return nn_failed();
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
	if (nn_check_input("instancenorm", x, 2, 1, m->num_features,
	                   "channels"))
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
	nn_drop(&m->weight);
	nn_drop(&m->bias);
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
		return nn_bad("layernorm", "no layer (NULL)");
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
		return nn_failed();
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
		                 TG_T_SHAPE(x, b1), nshape(m, b2, sizeof b2));
	tg_scope_begin();
	r = tg_layernorm(x, m->ndim, m->eps);
	if (m->weight && m->bias)
		r = tg_add(tg_mul(r, m->weight), m->bias);
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

/* tinygrad's LayerNorm2d: (N,C,H,W) -> (N,H,W,C), LayerNorm over C,
 * and back. */
tg_tensor *tg_nn_layernorm2d_forward(const tg_nn_layernorm *m,
                                     const tg_tensor *x)
{
	char b1[160];
	tg_tensor *r;

	if (!x)
		return NULL;
	if (!m || !m->ndim)
		return tg_t_fail(TG_EINVAL, "layernorm2d", "no layer or not "
		                 "initialized");
	if (m->ndim != 1 || x->ndim != 4 || x->shape[1] != m->shape[0])
		return tg_t_fail(TG_EINVAL, "layernorm2d", "input %s must be "
		                 "(N,C,H,W) with C the layer's %lld channels "
		                 "(a normalized shape of 1 dim, has %zu)",
		                 TG_T_SHAPE(x, b1), (long long)m->shape[0],
		                 m->ndim);
	tg_scope_begin();
	r = tg_nn_layernorm_forward(m, tg_permute(x, 4, (int[]){ 0, 2, 3, 1 }));
	r = tg_keep(tg_permute(r, 4, (int[]){ 0, 3, 1, 2 }));
	tg_scope_end();
	return r;
}

void tg_nn_layernorm_free(tg_nn_layernorm *m)
{
	if (!m)
		return;
	nn_drop(&m->weight);
	nn_drop(&m->bias);
	memset(m, 0, sizeof *m);
}

int tg_nn_rmsnorm_init(tg_nn_rmsnorm *m, tg_dev *dev, int64_t dim, double eps)
{
	if (!m)
		return nn_bad("rmsnorm", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if (dim <= 0)
		return tg_error(TG_EINVAL, "rmsnorm: dim %lld (must be "
		                "positive)", (long long)dim);
	tg_scope_begin();
	m->weight = nn_own(tg_ones(dev, NN_DTYPE, 1, &dim), -1);
	tg_scope_end();
	if (!m->weight)
		return nn_failed();
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
	if (nn_usable("rmsnorm", m, m ? m->weight : NULL) ||
	    nn_check_input("rmsnorm", x, 1, -1, m->weight->shape[0],
	                   "features"))
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
	nn_drop(&m->weight);
	memset(m, 0, sizeof *m);
}

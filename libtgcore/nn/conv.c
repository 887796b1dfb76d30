/*
 * nn/conv.c - tinygrad's convolution layers: Conv1d, Conv2d,
 * ConvTranspose1d and ConvTranspose2d.  The weight's init is the kaiming_uniform(a =
 * sqrt(5)) of PyTorch (and of older tinygrad), whose bound
 * 1/sqrt(fan_in) counts the input channels of one group.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer.h"

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
	*w = nn_own(tg_kaiming_uniform(dev, NN_DTYPE, ndim, shape, sqrt(5.0)),
	            -1);
	if (b && *w)
		*b = nn_own(tg_uniform(dev, NN_DTYPE, 1, &nbias, -bound, bound),
		         -1);
	tg_scope_end();
	if (*w && (!b || *b))
		return 0;
	nn_drop(w);
	return nn_failed();
}

/* "(3,3)" of a kernel size, for messages. */
static const char *ksize(size_t nd, const int64_t *k, char *buf, size_t n)
{
	size_t i, len = 0;

	buf[len++] = '(';
	for (i = 0; i < nd && len < n - 24; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%lld",
		                        i ? "," : "", (long long)(k ? k[i] : 0));
	snprintf(buf + len, n - len, nd == 1 ? ",)" : ")");
	return buf;
}

/* Checks channel counts, the nd sizes of the kernel and the options of
 * a convolution layer and fills *o with the options, zeros replaced by
 * their defaults. */
static int conv_check(const char *layer, int64_t cin, int64_t cout,
                      size_t nd, const int64_t *k, const tg_conv_opts *opts,
                      tg_conv_opts *o)
{
	char b[128];
	int kbad = !k;
	size_t i;

	memset(o, 0, sizeof *o);
	if (opts)
		*o = *opts;
	o->groups = o->groups ? o->groups : 1;
	for (i = 0; i < TG_CONV_MAX_DIMS; i++) {
		o->stride[i] = o->stride[i] ? o->stride[i] : 1;
		o->dilation[i] = o->dilation[i] ? o->dilation[i] : 1;
		if (o->stride[i] < 0 || o->dilation[i] < 0)
			return tg_error(TG_EINVAL, "%s: stride %lld and "
			                "dilation %lld must be positive", layer,
			                (long long)o->stride[i],
			                (long long)o->dilation[i]);
	}
	for (i = 0; k && i < nd; i++)
		kbad |= k[i] <= 0;
	if (cin <= 0 || cout <= 0 || kbad)
		return tg_error(TG_EINVAL, "%s: %lld in and %lld out "
		                "channels, kernel %s (all must be positive)",
		                layer, (long long)cin, (long long)cout,
		                ksize(nd, k, b, sizeof b));
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
		return nn_bad("conv2d", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if ((st = conv_check("conv2d", cin, cout, 2, kernel, opts,
	                      &m->opts)))
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
	if (nn_usable("conv2d", m, m ? m->weight : NULL) ||
	    nn_check_input("conv2d", x, 4, 1,
	                m->weight->shape[1] * m->opts.groups, "channels"))
		return NULL;
	if (x->ndim != 4) {
		char b[160];

		tg_error(TG_EINVAL, "conv2d: input %s must be (N,C,H,W)",
		         TG_T_SHAPE(x, b));
		return NULL;
	}
	return tg_conv2d(x, m->weight, m->bias, &m->opts);
}

void tg_nn_conv2d_free(tg_nn_conv2d *m)
{
	if (!m)
		return;
	nn_drop(&m->weight);
	nn_drop(&m->bias);
	memset(m, 0, sizeof *m);
}

/* Conv1d keeps PyTorch's 3-D weight (cout, cin/groups, k), so its
 * state dict names and shapes match a PyTorch or tinygrad model. */
int tg_nn_conv1d_init(tg_nn_conv1d *m, tg_dev *dev, int64_t cin,
                      int64_t cout, int64_t k, int64_t stride,
                      int64_t padding, int64_t dilation, int64_t groups,
                      int bias)
{
	tg_conv_opts in = { .stride = { stride }, .dilation = { dilation },
	                    .groups = groups }, o;
	int st;

	if (!m)
		return nn_bad("conv1d", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if ((st = conv_check("conv1d", cin, cout, 1, &k, &in, &o)))
		return st;
	if (padding < 0)
		return tg_error(TG_EINVAL, "conv1d: padding %lld is negative",
		                (long long)padding);
	st = conv_params(dev, 3, (int64_t[]){ cout, cin / o.groups, k }, cout,
	                 &m->weight, bias ? &m->bias : NULL);
	if (st)
		return st;
	m->stride = o.stride[0];
	m->padding = padding;
	m->dilation = o.dilation[0];
	m->groups = o.groups;
	return 0;
}

tg_tensor *tg_nn_conv1d_forward(const tg_nn_conv1d *m, const tg_tensor *x)
{
	char b[160];

	if (!x)
		return NULL;
	if (nn_usable("conv1d", m, m ? m->weight : NULL) ||
	    nn_check_input("conv1d", x, 3, 1, m->weight->shape[1] * m->groups,
	                "channels"))
		return NULL;
	if (x->ndim != 3)
		return tg_t_fail(TG_EINVAL, "conv1d", "input %s must be "
		                 "(N,C,L)", TG_T_SHAPE(x, b));
	return tg_conv(x, m->weight, m->bias,
	               &(tg_conv_opts){ .stride = { m->stride },
	                                .dilation = { m->dilation },
	                                .padding = { m->padding, m->padding },
	                                .groups = m->groups });
}

void tg_nn_conv1d_free(tg_nn_conv1d *m)
{
	if (!m)
		return;
	nn_drop(&m->weight);
	nn_drop(&m->bias);
	memset(m, 0, sizeof *m);
}

/* ConvTranspose1d/2d: weight (cin, cout/groups, k...), so fan_in (and
 * the bound) counts cout/groups * k... as in PyTorch. */
static int convt_init(const char *layer, tg_dev *dev, int64_t cin,
                      int64_t cout, size_t nd, const int64_t *k,
                      const tg_conv_opts *opts, int bias, tg_tensor **w,
                      tg_tensor **b, tg_conv_opts *o)
{
	int64_t shape[2 + TG_CONV_MAX_DIMS];
	int st;

	if ((st = conv_check(layer, cin, cout, nd, k, opts, o)))
		return st;
	shape[0] = cin;
	shape[1] = cout / o->groups;
	memcpy(shape + 2, k, nd * sizeof *k);
	return conv_params(dev, nd + 2, shape, cout, w, bias ? b : NULL);
}

/* The input's checks name the layer's channel count;
 * tg_conv_transpose checks the rest (output size, bias). */
static tg_tensor *convt_forward(const char *layer, const tg_tensor *w,
                                const tg_tensor *bias,
                                const tg_conv_opts *o, const tg_tensor *x,
                                const char *form)
{
	char b[160];

	if (nn_check_input(layer, x, w->ndim, 1, w->shape[0], "channels"))
		return NULL;
	if (x->ndim != w->ndim)
		return tg_t_fail(TG_EINVAL, layer, "input %s must be %s",
		                 TG_T_SHAPE(x, b), form);
	return tg_conv_transpose(x, w, bias, o);
}

int tg_nn_conv_transpose2d_init(tg_nn_conv_transpose2d *m, tg_dev *dev,
                                int64_t cin, int64_t cout,
                                const int64_t kernel[2],
                                const tg_conv_opts *opts, int bias)
{
	int st;

	if (!m)
		return nn_bad("conv_transpose2d", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	st = convt_init("conv_transpose2d", dev, cin, cout, 2, kernel, opts,
	                bias, &m->weight, &m->bias, &m->opts);
	if (st)
		memset(m, 0, sizeof *m);
	return st;
}

tg_tensor *tg_nn_conv_transpose2d_forward(const tg_nn_conv_transpose2d *m,
                                          const tg_tensor *x)
{
	if (!x)
		return NULL;
	if (nn_usable("conv_transpose2d", m, m ? m->weight : NULL))
		return NULL;
	return convt_forward("conv_transpose2d", m->weight, m->bias,
	                     &m->opts, x, "(N,C,H,W)");
}

void tg_nn_conv_transpose2d_free(tg_nn_conv_transpose2d *m)
{
	if (!m)
		return;
	nn_drop(&m->weight);
	nn_drop(&m->bias);
	memset(m, 0, sizeof *m);
}

int tg_nn_conv_transpose1d_init(tg_nn_conv_transpose1d *m, tg_dev *dev,
                                int64_t cin, int64_t cout, int64_t k,
                                const tg_conv_opts *opts, int bias)
{
	int st;

	if (!m)
		return nn_bad("conv_transpose1d", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	st = convt_init("conv_transpose1d", dev, cin, cout, 1, &k, opts, bias,
	                &m->weight, &m->bias, &m->opts);
	if (st)
		memset(m, 0, sizeof *m);
	return st;
}

tg_tensor *tg_nn_conv_transpose1d_forward(const tg_nn_conv_transpose1d *m,
                                          const tg_tensor *x)
{
	if (!x)
		return NULL;
	if (nn_usable("conv_transpose1d", m, m ? m->weight : NULL))
		return NULL;
	return convt_forward("conv_transpose1d", m->weight, m->bias,
	                     &m->opts, x, "(N,C,L)");
}

void tg_nn_conv_transpose1d_free(tg_nn_conv_transpose1d *m)
{
	if (!m)
		return;
	nn_drop(&m->weight);
	nn_drop(&m->bias);
	memset(m, 0, sizeof *m);
}

/*
 * nn/conv.c - tinygrad's convolution layers: Conv1d, Conv2d and
 * ConvTranspose2d.  The weight's init is the kaiming_uniform(a =
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

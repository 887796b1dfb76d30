/*
 * model.c - tinygrad's beautiful_mnist CNN, shared by the example and
 * bench_tensor's training-step row.
 */
#include <string.h>

#include "model.h"

int model_init(model *m, tg_dev *dev, int width)
{
	int64_t k5[2] = { 5, 5 }, k3[2] = { 3, 3 };
	int64_t a = 8 * width, b = 16 * width;

	memset(m, 0, sizeof *m);
	if (tg_nn_conv2d_init(&m->c1, dev, 1, a, k5, NULL, 1) ||
	    tg_nn_conv2d_init(&m->c2, dev, a, a, k5, NULL, 1) ||
	    tg_nn_batchnorm_init(&m->bn1, dev, a, 1e-5, 0.1, 1, 1) ||
	    tg_nn_conv2d_init(&m->c3, dev, a, b, k3, NULL, 1) ||
	    tg_nn_conv2d_init(&m->c4, dev, b, b, k3, NULL, 1) ||
	    tg_nn_batchnorm_init(&m->bn2, dev, b, 1e-5, 0.1, 1, 1) ||
	    tg_nn_linear_init(&m->fc, dev, b * 3 * 3, CLASSES, 1))
		return -1;
	return 0;
}

void model_free(model *m)
{
	tg_nn_conv2d_free(&m->c1);
	tg_nn_conv2d_free(&m->c2);
	tg_nn_conv2d_free(&m->c3);
	tg_nn_conv2d_free(&m->c4);
	tg_nn_batchnorm_free(&m->bn1);
	tg_nn_batchnorm_free(&m->bn2);
	tg_nn_linear_free(&m->fc);
}

/* The parameters and statistics by name (tinygrad's layer names). */
tg_state *model_state(const model *m)
{
	tg_state *s = tg_state_new();

	if (!s || tg_nn_conv2d_params(&m->c1, s, "layers.0") ||
	    tg_nn_conv2d_params(&m->c2, s, "layers.2") ||
	    tg_nn_batchnorm_params(&m->bn1, s, "layers.4") ||
	    tg_nn_conv2d_params(&m->c3, s, "layers.6") ||
	    tg_nn_conv2d_params(&m->c4, s, "layers.8") ||
	    tg_nn_batchnorm_params(&m->bn2, s, "layers.10") ||
	    tg_nn_linear_params(&m->fc, s, "layers.13")) {
		tg_state_free(s);
		return NULL;
	}
	return s;
}

tg_tensor *model_forward(model *m, const tg_tensor *x)
{
	int64_t pool[2] = { 2, 2 };
	tg_tensor *h;

	tg_scope_begin();
	h = tg_relu(tg_nn_conv2d_forward(&m->c1, x));
	h = tg_relu(tg_nn_conv2d_forward(&m->c2, h));
	h = tg_max_pool2d(tg_nn_batchnorm_forward(&m->bn1, h), pool, NULL);
	h = tg_relu(tg_nn_conv2d_forward(&m->c3, h));
	h = tg_relu(tg_nn_conv2d_forward(&m->c4, h));
	h = tg_max_pool2d(tg_nn_batchnorm_forward(&m->bn2, h), pool, NULL);
	h = tg_keep(tg_nn_linear_forward(&m->fc, tg_flatten(h, 1, -1)));
	tg_scope_end();
	return h;
}


int model_train_step(void *ctx, tg_tensor *const *in, size_t nin,
                     tg_tensor **out, size_t nout)
{
	trainer *t = ctx;
	tg_tensor *loss;

	(void)nin, (void)nout;
	loss = tg_sparse_categorical_crossentropy(model_forward(t->m, in[0]),
	                                          in[1], -1, 0);
	if (!loss || tg_optim_zero_grad(t->opt) || tg_backward(loss, NULL) ||
	    tg_optim_step(t->opt, &loss, 1))
		return tg_last_status();
	out[0] = loss;
	return 0;
}

int model_grad_step(void *ctx, tg_tensor *const *in, size_t nin,
                    tg_tensor **out, size_t nout)
{
	trainer *t = ctx;
	tg_tensor *loss;
	size_t i;

	(void)nin;
	if (nout != 1 + t->nparams)
		return tg_set_error(TG_EINVAL, "grad step: %zu outputs for %zu "
		                    "parameters", nout, t->nparams);
	loss = tg_sparse_categorical_crossentropy(model_forward(t->m, in[0]),
	                                          in[1], -1, 0);
	if (!loss || tg_optim_zero_grad(t->opt) || tg_backward(loss, NULL))
		return tg_last_status();
	out[0] = loss;
	for (i = 0; i < t->nparams; i++)
		if (!(out[1 + i] = tg_grad(t->params[i])))
			return tg_set_error(TG_EINVAL, "grad step: parameter "
			                    "%zu got no gradient", i);
	return 0;
}

int model_update_step(void *ctx, tg_tensor *const *in, size_t nin,
                      tg_tensor **out, size_t nout)
{
	trainer *t = ctx;
	size_t i;
	int rc = 0;

	(void)out, (void)nout;
	for (i = 0; i < nin && !rc; i++)
		rc = tg_set_grad(t->params[i], in[i]);
	if (!rc)
		rc = tg_optim_step(t->opt, NULL, 0);
	/* the parameters must not keep this call's inputs */
	for (i = 0; i < nin; i++)
		tg_set_grad(t->params[i], NULL);
	return rc;
}

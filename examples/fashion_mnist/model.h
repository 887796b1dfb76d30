/*
 * model.h - tinygrad's beautiful_mnist CNN: conv-conv-batchnorm-pool,
 * conv-conv-batchnorm-pool, linear, over 28x28 single-channel images.
 */
#ifndef FASHION_MODEL_H
#define FASHION_MODEL_H

#include <tg/tg.h>

#define CLASSES 10

typedef struct model {
	tg_nn_conv2d c1, c2, c3, c4;
	tg_nn_batchnorm bn1, bn2;
	tg_nn_linear fc;
} model;

/* Channels 8*width and 16*width, on dev (NULL: the default device).
 * 0, or -1 with tg_last_error set. */
int model_init(model *m, tg_dev *dev, int width);
void model_free(model *m);
/* The parameters and statistics by name (tinygrad's layer names). */
tg_state *model_state(const model *m);
/* Logits (N, CLASSES) of x (N, 1, 28, 28). */
tg_tensor *model_forward(model *m, const tg_tensor *x);

/* What a training step needs: the model and its optimizer; for the
 * split step (data-parallel), the parameters that get gradients. */
typedef struct trainer {
	model *m;
	tg_optim *opt;
	tg_tensor **params;
	size_t nparams;
} trainer;
/* One training step, as a tg_jit step (ctx: a trainer): in = { images,
 * labels }, out = { loss }; backward and the optimizer's update. */
int model_train_step(void *ctx, tg_tensor *const *in, size_t nin,
                     tg_tensor **out, size_t nout);

/* The same step in two halves, for a gradient all-reduce between them.
 * Gradients: in = { images, labels }, out = { loss, the gradient of
 * each of t->params }.  Update: in = the gradients, out = none. */
int model_grad_step(void *ctx, tg_tensor *const *in, size_t nin,
                    tg_tensor **out, size_t nout);
int model_update_step(void *ctx, tg_tensor *const *in, size_t nin,
                      tg_tensor **out, size_t nout);

#endif

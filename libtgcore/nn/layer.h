/*
 * nn/layer.h - what the nn layers share (internal): parameter
 * ownership, argument checks and the messages they give.
 *
 * A layer struct owns one plain reference to each parameter, taken with
 * tg_tensor_ref inside a private scope, so the caller's scopes never
 * hold (and never drop) a layer's tensors.  Forward passes are tensor
 * expressions built in a private scope whose result is kept, the
 * pattern of every composite op (tensor/tensor.h).  Every name here
 * starts with nn_ or NN_, so none meets a file's own statics.
 */
#ifndef TG_NN_LAYER_H
#define TG_NN_LAYER_H

#include "tensor/tensor.h"

#define NN_DTYPE tg_dtype_default_float()

/* A layer-owned reference to t (made inside a scope: the scope's own
 * reference goes at its end, this one stays). */
static inline tg_tensor *nn_own(tg_tensor *t, int requires_grad)
{
	if (t && requires_grad >= 0)
		tg_set_requires_grad(t, requires_grad);
	return tg_tensor_ref(t);
}

static inline void nn_drop(tg_tensor **t)
{
	tg_tensor_unref(*t);
	*t = NULL;
}

/* The status of the failure that left a tensor NULL. */
static inline int nn_failed(void)
{
	int st = tg_last_status();

	return st ? st : TG_EINTERNAL;
}

static inline int nn_bad(const char *layer, const char *what)
{
	return tg_error(TG_EINVAL, "%s: %s", layer, what);
}

/* Checks a layer argument and its weight before a forward pass. */
static inline int nn_usable(const char *layer, const void *m,
                            const tg_tensor *w)
{
	if (!m)
		return nn_bad(layer, "no layer (NULL)");
	if (!w)
		return nn_bad(layer, "the layer is not initialized");
	return 0;
}

/* Fails unless x has at least `min` axes and `c` entries on axis `axis`
 * (c < 0: any).  "what" names the entries ("channels", "features"). */
static inline int nn_check_input(const char *layer, const tg_tensor *x,
                                 size_t min, int axis, int64_t c,
                                 const char *what)
{
	char b[160];
	int64_t have;

	if (x->ndim < min)
		return tg_error(TG_EINVAL, "%s: input %s has %zu dims, the "
		                "layer needs at least %zu", layer,
		                TG_T_SHAPE(x, b), x->ndim, min);
	have = tg_tensor_size(x, axis);
	if (c >= 0 && have != c)
		return tg_error(TG_EINVAL, "%s: input %s has %lld %s, the "
		                "layer %lld", layer, TG_T_SHAPE(x, b),
		                (long long)have, what, (long long)c);
	return 0;
}

#endif /* TG_NN_LAYER_H */

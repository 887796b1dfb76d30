/*
 * nn/loss.c - the losses of tinygrad's Tensor: sparse categorical
 * cross-entropy (with ignore_index and label smoothing) and binary
 * cross-entropy, from probabilities and from logits.
 */
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"

static int check_labels(const tg_tensor *logits, const tg_tensor *labels)
{
	char b1[160], b2[160];

	if (logits->ndim < 1 || labels->ndim != logits->ndim - 1 ||
	    memcmp(labels->shape, logits->shape,
	           labels->ndim * sizeof *labels->shape)) {
		tg_t_fail(TG_EINVAL, "sparse_categorical_crossentropy", "labels "
		          "%s do not match logits %s (labels need the logits' "
		          "shape without the class axis)",
		          TG_T_SHAPE(labels, b1), TG_T_SHAPE(logits, b2));
		return -1;
	}
	if (!tg_dtype_is_int(tg_tensor_dtype(labels))) {
		tg_t_fail(TG_EINVAL, "sparse_categorical_crossentropy", "labels "
		          "are %s, not an int dtype",
		          tg_dtype_name(tg_tensor_dtype(labels)));
		return -1;
	}
	return 0;
}

/* tinygrad's: the one-hot of the labels (zero rows where a label is
 * ignore_index) picks the log-probabilities; label smoothing mixes in
 * their mean; the sum is over the labels that count. */
tg_tensor *tg_sparse_categorical_crossentropy(const tg_tensor *logits,
                                              const tg_tensor *labels,
                                              int64_t ignore_index,
                                              double label_smoothing)
{
	int64_t c, n, col[2], flat[2], ys[TG_MAX_DIMS];
	int last = -1;
	tg_tensor *lp, *mask, *y, *smooth, *r;

	if (!logits || !labels)
		return NULL;
	if (check_labels(logits, labels))
		return NULL;
	if (label_smoothing < 0 || label_smoothing > 1)
		return tg_t_fail(TG_EINVAL, "sparse_categorical_crossentropy",
		                 "label smoothing %g outside [0, 1]",
		                 label_smoothing);
	c = logits->shape[logits->ndim - 1];
	n = tg_tensor_numel(labels);
	col[0] = n, col[1] = 1;
	flat[0] = n, flat[1] = c;
	memcpy(ys, logits->shape, logits->ndim * sizeof *ys);
	tg_scope_begin();
	lp = tg_log_softmax(logits, -1);
	mask = tg_ne_s(labels, (double)ignore_index);
	y = tg_eq(tg_expand(tg_unsqueeze(tg_arange(tg_tensor_dev(logits),
	                                           TG_INT32, 0, (double)c, 1),
	                                 0), 2, flat),
	          tg_reshape(labels, 2, col));
	y = tg_reshape(tg_mul(y, tg_reshape(mask, 2, col)), logits->ndim, ys);
	smooth = tg_mul_s(tg_sum(tg_mul(tg_mean(lp, &last, 1, 0), mask), NULL,
	                         0, 0), label_smoothing);
	r = tg_add(tg_mul_s(tg_sum(tg_mul(lp, y), NULL, 0, 0),
	                    1 - label_smoothing), smooth);
	r = tg_keep(tg_neg(tg_div(r, tg_sum(mask, NULL, 0, 0))));
	tg_scope_end();
	return r;
}

static int check_same(const char *op, const tg_tensor *a, const tg_tensor *b)
{
	char b1[160], b2[160];

	if (a->ndim != b->ndim ||
	    memcmp(a->shape, b->shape, a->ndim * sizeof *a->shape)) {
		tg_t_fail(TG_EINVAL, op, "predictions %s and targets %s differ",
		          TG_T_SHAPE(a, b1), TG_T_SHAPE(b, b2));
		return -1;
	}
	return 0;
}

/* mean(-y log p - (1 - y) log(1 - p)). */
tg_tensor *tg_binary_crossentropy(const tg_tensor *p, const tg_tensor *y)
{
	tg_tensor *r;

	if (!p || !y || check_same("binary_crossentropy", p, y))
		return NULL;
	tg_scope_begin();
	r = tg_sub(tg_neg(tg_mul(y, tg_log(p))),
	           tg_mul(tg_rsub_s(y, 1), tg_log(tg_rsub_s(p, 1))));
	r = tg_keep(tg_mean(r, NULL, 0, 0));
	tg_scope_end();
	return r;
}

/* The same from logits x, stable: mean(max(x, 0) - y x + log(1 + e^-|x|)). */
tg_tensor *tg_binary_crossentropy_logits(const tg_tensor *x,
                                         const tg_tensor *y)
{
	tg_tensor *r;

	if (!x || !y || check_same("binary_crossentropy_logits", x, y))
		return NULL;
	tg_scope_begin();
	r = tg_log(tg_add_s(tg_exp(tg_neg(tg_abs(x))), 1));
	r = tg_add(tg_sub(tg_maximum_s(x, 0), tg_mul(y, x)), r);
	r = tg_keep(tg_mean(r, NULL, 0, 0));
	tg_scope_end();
	return r;
}

/*
 * nn/linear.c - tinygrad's dense layers: Linear and Embedding, and the
 * functional dropout of its Tensor.  Initializations follow PyTorch, as
 * tinygrad does since mid-2024 for Linear.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer.h"

/* ------------------------------------------------------------ Linear */

/* tinygrad's Linear since mid-2024 (PyTorch's init): weight and bias
 * uniform in +-1/sqrt(in).  On an error the struct stays zeroed. */
int tg_nn_linear_init(tg_nn_linear *m, tg_dev *dev, int64_t in, int64_t out,
                      int bias)
{
	double b;

	if (!m)
		return nn_bad("linear", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if (in <= 0 || out <= 0)
		return tg_error(TG_EINVAL, "linear: %lld inputs and %lld "
		                "outputs (both must be positive)",
		                (long long)in, (long long)out);
	b = 1 / sqrt((double)in);
	tg_scope_begin();
	m->weight = nn_own(tg_uniform(dev, NN_DTYPE, 2, (int64_t[]){ out, in },
	                           -b, b), -1);
	if (bias && m->weight)
		m->bias = nn_own(tg_uniform(dev, NN_DTYPE, 1, &out, -b, b), -1);
	tg_scope_end();
	if (!m->weight || (bias && !m->bias)) {
		tg_nn_linear_free(m);
		return nn_failed();
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
	if (nn_usable("linear", m, m ? m->weight : NULL) ||
	    nn_check_input("linear", x, 1, -1, m->weight->shape[1], "features"))
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
	nn_drop(&m->weight);
	nn_drop(&m->bias);
}

/* --------------------------------------------------------- Embedding */

/* Embedding: weight glorot_uniform, +-sqrt(6/(vocab + size)). */
int tg_nn_embedding_init(tg_nn_embedding *m, tg_dev *dev, int64_t vocab_size,
                         int64_t embed_size)
{
	if (!m)
		return nn_bad("embedding", "no layer (NULL)");
	memset(m, 0, sizeof *m);
	if (vocab_size <= 0 || embed_size <= 0)
		return tg_error(TG_EINVAL, "embedding: vocabulary %lld and "
		                "size %lld (both must be positive)",
		                (long long)vocab_size, (long long)embed_size);
	tg_scope_begin();
	m->weight = nn_own(tg_glorot_uniform(dev, NN_DTYPE, 2,
	                                  (int64_t[]){ vocab_size,
	                                               embed_size }), -1);
	tg_scope_end();
	if (!m->weight)
		return nn_failed();
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
	if (nn_usable("embedding", m, m ? m->weight : NULL))
		return NULL;
	if (!tg_dtype_is_int(tg_tensor_dtype(idx)))
		return tg_t_fail(TG_EINVAL, "embedding", "indices %s are %s, "
		                 "not an int dtype", TG_T_SHAPE(idx, b),
		                 tg_dtype_name(tg_tensor_dtype(idx)));
	if (idx->ndim + 2 > TG_MAX_DIMS)
		return tg_t_fail(TG_EINVAL, "embedding", "indices %s have too "
		                 "many dims (at most %d)", TG_T_SHAPE(idx, b),
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
	nn_drop(&m->weight);
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

/*
 * tensor/tensor_api.h - the tensor API as it will appear in tg/tg.h
 * (issue 4).  It moves into the public header, function by function,
 * as each is implemented and tested, so that tg/tg.h never declares a
 * function the library lacks.  Not installed; included by nothing yet.
 */
#ifndef TG_TENSOR_API_H
#define TG_TENSOR_API_H

#include <tg/tg.h>

/* (The declarations already in tg/tg.h are not repeated here.) */

/* start, start+step, ... below stop (above it when step < 0). */
TG_API tg_tensor *tg_arange(tg_dev *dev, tg_dtype dt, double start,
                            double stop, double step);
/* n x m with ones on the diagonal. */
TG_API tg_tensor *tg_eye(tg_dev *dev, tg_dtype dt, int64_t n, int64_t m);

/* -- random (Threefry2x32 computed on the device: the same numbers on
 * every backend for the same seed and call sequence) -- */
TG_API void tg_manual_seed(uint64_t seed);
/* Uniform in [0, 1). */
TG_API tg_tensor *tg_rand(tg_dev *dev, tg_dtype dt, size_t ndim,
                          const int64_t *shape);
/* Standard normal (Box-Muller). */
TG_API tg_tensor *tg_randn(tg_dev *dev, tg_dtype dt, size_t ndim,
                           const int64_t *shape);
/* Integers in [low, high), int32. */
TG_API tg_tensor *tg_randint(tg_dev *dev, size_t ndim, const int64_t *shape,
                             int64_t low, int64_t high);
TG_API tg_tensor *tg_uniform(tg_dev *dev, tg_dtype dt, size_t ndim,
                             const int64_t *shape, double low, double high);
TG_API tg_tensor *tg_normal(tg_dev *dev, tg_dtype dt, size_t ndim,
                            const int64_t *shape, double mean, double std);
/* Uniform in [-1, 1) scaled by 1/sqrt(numel). */
TG_API tg_tensor *tg_scaled_uniform(tg_dev *dev, tg_dtype dt, size_t ndim,
                                    const int64_t *shape);
TG_API tg_tensor *tg_glorot_uniform(tg_dev *dev, tg_dtype dt, size_t ndim,
                                    const int64_t *shape);
/* PyTorch's kaiming init with leaky-relu slope a (sqrt(5) in nn.Linear). */
TG_API tg_tensor *tg_kaiming_uniform(tg_dev *dev, tg_dtype dt, size_t ndim,
                                     const int64_t *shape, double a);
TG_API tg_tensor *tg_kaiming_normal(tg_dev *dev, tg_dtype dt, size_t ndim,
                                    const int64_t *shape, double a);

/* -- reductions.  axes NULL: every axis (naxes ignored); otherwise the
 * naxes listed (0 reduces nothing).  keepdim keeps reduced axes as 1. -- */
TG_API tg_tensor *tg_sum(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim);
TG_API tg_tensor *tg_prod(const tg_tensor *t, const int *axes, size_t naxes,
                          int keepdim);
TG_API tg_tensor *tg_max(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim);
TG_API tg_tensor *tg_min(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim);
TG_API tg_tensor *tg_mean(const tg_tensor *t, const int *axes, size_t naxes,
                          int keepdim);
/* correction 1 is the sample variance. */
TG_API tg_tensor *tg_var(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim, double correction);
TG_API tg_tensor *tg_std(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim, double correction);
TG_API tg_tensor *tg_any(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim);
TG_API tg_tensor *tg_all(const tg_tensor *t, const int *axes, size_t naxes,
                         int keepdim);
/* One axis, or TG_AXIS_NONE to treat t as flattened. */
#define TG_AXIS_NONE INT32_MIN
/* int32 indices of the first maximum/minimum. */
TG_API tg_tensor *tg_argmax(const tg_tensor *t, int axis, int keepdim);
TG_API tg_tensor *tg_argmin(const tg_tensor *t, int axis, int keepdim);
TG_API tg_tensor *tg_logsumexp(const tg_tensor *t, int axis, int keepdim);
TG_API tg_tensor *tg_softmax(const tg_tensor *t, int axis);
TG_API tg_tensor *tg_log_softmax(const tg_tensor *t, int axis);
TG_API tg_tensor *tg_cumsum(const tg_tensor *t, int axis);

TG_API tg_tensor *tg_transpose(const tg_tensor *t, int d0, int d1);
/* Axes start..end (inclusive) merged into one. */
TG_API tg_tensor *tg_flatten(const tg_tensor *t, int start, int end);
TG_API tg_tensor *tg_unflatten(const tg_tensor *t, int axis, size_t n,
                               const int64_t *sizes);
/* Removes axis (if its size is 1), or every size-1 axis for
 * TG_AXIS_NONE. */
TG_API tg_tensor *tg_squeeze(const tg_tensor *t, int axis);
TG_API tg_tensor *tg_unsqueeze(const tg_tensor *t, int axis);

/* Python's slice for one axis: start:stop:step with defaults. */
typedef struct tg_slice_spec {
	int64_t start, stop, step;
	/* flags: which of start/stop/step were given (others default) */
	unsigned has_start : 1, has_stop : 1, has_step : 1;
	/* an integer index instead of a slice (removes the axis) */
	unsigned is_index : 1;
} tg_slice_spec;
#define TG_SLICE_ALL ((tg_slice_spec){ 0, 0, 1, 0, 0, 0, 0 })
#define TG_SLICE(a, b) ((tg_slice_spec){ (a), (b), 1, 1, 1, 0, 0 })
#define TG_SLICE_STEP(a, b, s) ((tg_slice_spec){ (a), (b), (s), 1, 1, 1, 0 })
#define TG_INDEX_AT(i) ((tg_slice_spec){ (i), 0, 1, 1, 0, 0, 1 })
/* t[s0, s1, ...] for the first n axes (negative indices count from the
 * end, steps may be negative). */
TG_API tg_tensor *tg_slice(const tg_tensor *t, size_t n,
                           const tg_slice_spec *s);
/* out[i][j] = t[index[i][j]][j] along `axis` (torch.gather). */
TG_API tg_tensor *tg_gather(const tg_tensor *t, int axis,
                            const tg_tensor *index);
TG_API tg_tensor *tg_cat(const tg_tensor *const *ts, size_t n, int axis);
TG_API tg_tensor *tg_stack(const tg_tensor *const *ts, size_t n, int axis);
/* Tiles t reps[i] times along axis i (torch.repeat). */
TG_API tg_tensor *tg_repeat(const tg_tensor *t, size_t n,
                            const int64_t *reps);
/* Pieces of `size` along axis (the last may be smaller) into out[]
 * (room for *n on entry; the count on return).  New references. */
TG_API int tg_split(const tg_tensor *t, int64_t size, int axis,
                    tg_tensor **out, size_t *n);
/* Pieces of the given sizes (summing to the axis) into out[nsizes]. */
TG_API int tg_split_sizes(const tg_tensor *t, const int64_t *sizes,
                          size_t nsizes, int axis, tg_tensor **out);
/* `chunks` nearly equal pieces (as torch.chunk) into out (room for
 * chunks); the count in *n. */
TG_API int tg_chunk(const tg_tensor *t, size_t chunks, int axis,
                    tg_tensor **out, size_t *n);
/* Upper/lower triangle of the last two axes from diagonal k. */
TG_API tg_tensor *tg_triu(const tg_tensor *t, int64_t k);
TG_API tg_tensor *tg_tril(const tg_tensor *t, int64_t k);
/* An int tensor of class indices -> (..., num_classes) int32 0/1. */
TG_API tg_tensor *tg_one_hot(const tg_tensor *t, int64_t num_classes);

/* -- processing -- */
/* Batched, broadcasting matrix product (numpy matmul; 1-D operands
 * as vectors). */
TG_API tg_tensor *tg_matmul(const tg_tensor *a, const tg_tensor *b);
TG_API tg_tensor *tg_dot(const tg_tensor *a, const tg_tensor *b);
/* x @ w (+ bias); a 1-D w multiplies elementwise (tinygrad's linear). */
TG_API tg_tensor *tg_linear(const tg_tensor *x, const tg_tensor *w,
                            const tg_tensor *bias);

/* Options of the convolutions and pools; zero-initialize and set what
 * differs (0 strides/dilations mean 1, groups 0 means 1). */
typedef struct tg_conv_opts {
	int64_t stride[2];
	int64_t dilation[2];
	/* (top, bottom, left, right) zero padding */
	int64_t padding[4];
	int64_t groups;
	int64_t output_padding[2]; /* conv_transpose2d only */
} tg_conv_opts;
/* x (N,Cin,H,W), w (Cout,Cin/groups,kh,kw), bias (Cout) or NULL. */
TG_API tg_tensor *tg_conv2d(const tg_tensor *x, const tg_tensor *w,
                            const tg_tensor *bias,
                            const tg_conv_opts *opts);
/* w (Cin,Cout/groups,kh,kw). */
TG_API tg_tensor *tg_conv_transpose2d(const tg_tensor *x,
                                      const tg_tensor *w,
                                      const tg_tensor *bias,
                                      const tg_conv_opts *opts);
/* Pools over the last two axes; stride 0 means the kernel size;
 * opts->padding and dilation apply. count_include_pad for avg. */
TG_API tg_tensor *tg_avg_pool2d(const tg_tensor *x, const int64_t kernel[2],
                                const tg_conv_opts *opts,
                                int count_include_pad);
TG_API tg_tensor *tg_max_pool2d(const tg_tensor *x, const int64_t kernel[2],
                                const tg_conv_opts *opts);
/* softmax(q k^T / sqrt(d) + mask) v; mask (bool: true keeps) or NULL;
 * is_causal masks the upper triangle. */
TG_API tg_tensor *tg_scaled_dot_product_attention(const tg_tensor *q,
                                                  const tg_tensor *k,
                                                  const tg_tensor *v,
                                                  const tg_tensor *mask,
                                                  int is_causal);


#endif /* TG_TENSOR_API_H */

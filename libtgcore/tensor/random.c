/*
 * tensor/random.c - random tensors computed on the device with
 * Threefry2x32 (tinygrad's Tensor.rand and what it builds on), so that a
 * seed and a sequence of calls give the same numbers on every backend.
 *
 * Each call consumes `numel` counter values: counters c..c+h-1 and
 * c+h..c+2h-1 (h = ceil(numel/2)) go through Threefry as the two words
 * of one block keyed by the seed; the first numel of the concatenated
 * output words are the random bits.  The counter lives on each device
 * as a one-element buffer (tinygrad's _rng_counter), not a constant, so
 * that every call of the same shape reuses one compiled kernel.  A draw
 * runs two tiny kernels at once: the counter's advance, in place, and
 * the counters of this draw (c..c+h-1, from the advanced value).  So
 * a JIT capture records both, and every replay draws new numbers,
 * exactly those the same calls would draw eagerly.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensor/tensor.h"
#include "shape/shape.h"

#define TG_PI 3.14159265358979323846

static _Atomic uint64_t rng_seed;
static atomic_flag seeded = ATOMIC_FLAG_INIT;

/* The counter per device: realized uint32 (1,) tensors, owned here.
 * rng_lock guards them and makes a draw and its advance one step. */
static pthread_mutex_t rng_lock = PTHREAD_MUTEX_INITIALIZER;
static TG_VEC(tg_tensor *) counters;

void tg_random_reset(void)
{
	pthread_mutex_lock(&rng_lock);
	for (size_t i = 0; i < counters.n; i++)
		tg_tensor_unref(counters.v[i]);
	TG_VEC_FREE(&counters);
	pthread_mutex_unlock(&rng_lock);
}

void tg_manual_seed(uint64_t seed)
{
	atomic_flag_test_and_set(&seeded);
	atomic_store(&rng_seed, seed);
	tg_random_reset();  /* the counters start again from 0 */
}

/* tinygrad seeds from the clock unless told otherwise. */
static uint64_t seed_now(void)
{
	if (!atomic_flag_test_and_set(&seeded))
		atomic_store(&rng_seed, (uint64_t)time(NULL));
	return atomic_load(&rng_seed);
}

static int check_float(const char *op, tg_dtype dt, size_t ndim,
                       const int64_t *shape)
{
	if (tg_t_null(op, "shape", shape, ndim))
		return -1;
	if (!tg_dtype_is_float(dt)) {
		tg_error(TG_EINVAL, "%s: dtype %s is not a float dtype", op,
		         tg_dtype_name(dt));
		return -1;
	}
	if (ndim > TG_MAX_DIMS - 1) {
		tg_error(TG_EINVAL, "%s: %zu dims (at most %d)", op, ndim,
		         TG_MAX_DIMS - 1);
		return -1;
	}
	return 0;
}

/* The product of the sizes, INT64_MAX where it would overflow (the
 * caller refuses that many elements). */
static int64_t numel_of(size_t ndim, const int64_t *shape)
{
	int64_t n = 1;
	size_t i;

	for (i = 0; i < ndim; i++)
		if (__builtin_mul_overflow(n, shape[i], &n))
			return INT64_MAX;
	return n;
}

/* dev's counter (borrowed; made at 0 on first use).  Under rng_lock. */
static tg_tensor *counter_of(tg_dev *dev)
{
	uint32_t zero = 0;
	int64_t one = 1;
	tg_tensor *c;

	for (size_t i = 0; i < counters.n; i++)
		if (tg_tensor_dev(counters.v[i]) == dev)
			return counters.v[i];
	tg_scope_begin();  /* a reference of our own, in no scope */
	c = tg_tensor_ref(tg_tensor_new(dev, TG_UINT32, 1, &one, &zero));
	tg_scope_end();
	if (!c || tg_realize(c)) {
		tg_tensor_unref(c);
		return NULL;
	}
	if (TG_VEC_PUSH(&counters, c)) {
		tg_tensor_unref(c);
		return tg_error_oom("rand: counter"), NULL;
	}
	return c;
}

/* The counters c..c+half-1 of a draw of num words, realized, and the
 * device's counter advanced by num to c+num (one realize).  The draw's
 * counters are computed from the advanced value less num, never from a
 * read of the counter before the advance: for half = 1, arange + c
 * folds to a view of the counter's buffer, which the in-place advance
 * then overwrites, so a draw of 1 or 2 words used c+num and overlapped
 * the next draw. */
static tg_tensor *draw_counters(tg_dev *dev, int64_t num, int64_t half)
{
	tg_tensor *ctr, *c1 = NULL, *both[2];

	pthread_mutex_lock(&rng_lock);
	if ((ctr = counter_of(dev)) &&
	    !tg_assign(ctr, tg_add_s(ctr, (double)num))) {
		c1 = tg_add(tg_arange(dev, TG_UINT32, 0, (double)half, 1),
		            tg_expand(tg_sub_s(ctr, (double)num), 1, &half));
		both[0] = c1;
		both[1] = ctr;
		if (!c1 || tg_realize_many(both, 2))
			c1 = NULL;
	}
	pthread_mutex_unlock(&rng_lock);
	return c1;
}

/* numel uint32 random words, flat.  On a device group: drawn on its
 * first member and copied to every member (one stream, as on one
 * device, and every replica the same). */
static tg_tensor *random_bits(tg_dev *dev, int64_t num)
{
	int64_t half = (num + 1) / 2, cut[2] = { 0, num };
	tg_tensor *c1, *c2, *x, *key, *lo, *hi;
	const tg_tensor *both[2];

	if (dev && tg_dev_group_size(dev))
		return tg_to(random_bits(tg_dev_group_member(dev, 0), num),
		             dev);
	if (!(dev = dev ? dev : tg_dev_get(NULL)) ||
	    !(c1 = draw_counters(dev, num, half)))
		return NULL;
	c2 = tg_add_s(c1, (double)half);
	x = tg_bitwise_or(tg_lshift_s(tg_cast(c2, TG_UINT64), 32),
	                  tg_cast(c1, TG_UINT64));
	/* the key as an exact 64-bit constant (a double would round it) */
	key = tg_t_wrap(tg_lazy_const(tg_tensor_dev(c1), TG_UINT64,
	                              (tg_scalar){ .u = seed_now() }, 1,
	                              &half));
	x = tg_t_alu(TG_THREEFRY, x, key, NULL);
	lo = tg_cast(tg_bitwise_and_s(x, 4294967295.0), TG_UINT32);
	hi = tg_cast(tg_rshift_s(x, 32), TG_UINT32);
	both[0] = lo;
	both[1] = hi;
	return lo && hi ? tg_shrink(tg_cat(both, 2, 0), 1, cut) : NULL;
}

/* Uniform [0, 1) float32 of `shape`: the top 23 bits as a mantissa of
 * [1, 2), minus one. */
static tg_tensor *rand_f32(const char *op, tg_dev *dev, size_t ndim,
                           const int64_t *shape)
{
	int64_t num = numel_of(ndim, shape);
	tg_tensor *r;

	if (num == 0)
		return tg_zeros(dev, TG_FLOAT32, ndim, shape);
	if (num > INT32_MAX)
		return tg_t_fail(TG_EINVAL, op, "%lld elements (at most %d)",
		                 (long long)num, INT32_MAX);
	r = tg_bitwise_or_s(tg_rshift_s(random_bits(dev, num), 9),
	                    (double)0x3f800000u);
	r = tg_sub_s(tg_bitcast(r, TG_FLOAT32), 1.0);
	return tg_reshape(r, ndim, shape);
}

tg_tensor *tg_rand(tg_dev *dev, tg_dtype dt, size_t ndim,
                   const int64_t *shape)
{
	tg_tensor *r;

	if (check_float("rand", dt, ndim, shape))
		return NULL;
	tg_scope_begin();
	r = tg_keep(tg_cast(rand_f32("rand", dev, ndim, shape), dt));
	tg_scope_end();
	return r;
}

tg_tensor *tg_uniform(tg_dev *dev, tg_dtype dt, size_t ndim,
                      const int64_t *shape, double low, double high)
{
	tg_tensor *r;

	if (check_float("uniform", dt, ndim, shape))
		return NULL;
	tg_scope_begin();
	r = tg_add_s(tg_mul_s(rand_f32("uniform", dev, ndim, shape),
	                      high - low), low);
	r = tg_keep(tg_cast(r, dt));
	tg_scope_end();
	return r;
}

/* Box-Muller over two uniform draws stacked on a new first axis. */
tg_tensor *tg_randn(tg_dev *dev, tg_dtype dt, size_t ndim,
                    const int64_t *shape)
{
	int64_t s2[TG_MAX_DIMS];
	tg_slice_spec first = TG_INDEX_AT(0), second = TG_INDEX_AT(1);
	tg_tensor *src, *r;
	size_t i;

	if (check_float("randn", dt, ndim, shape))
		return NULL;
	s2[0] = 2;
	for (i = 0; i < ndim; i++)
		s2[i + 1] = shape[i];
	tg_scope_begin();
	src = rand_f32("randn", dev, ndim + 1, s2);
	r = tg_cos(tg_mul_s(tg_slice(src, 1, &first), 2 * TG_PI));
	r = tg_mul(r, tg_sqrt(tg_mul_s(tg_log(tg_rsub_s(tg_slice(src, 1,
	                                                         &second),
	                                                1.0)), -2.0)));
	r = tg_keep(tg_cast(r, dt));
	tg_scope_end();
	return r;
}

tg_tensor *tg_normal(tg_dev *dev, tg_dtype dt, size_t ndim,
                     const int64_t *shape, double mean, double std)
{
	tg_tensor *r;

	tg_scope_begin();
	r = tg_keep(tg_add_s(tg_mul_s(tg_randn(dev, dt, ndim, shape), std),
	                     mean));
	tg_scope_end();
	return r;
}

tg_tensor *tg_randint(tg_dev *dev, size_t ndim, const int64_t *shape,
                      int64_t low, int64_t high)
{
	tg_tensor *r;

	if (high <= low || low < INT32_MIN || high > (int64_t)INT32_MAX + 1)
		return tg_t_fail(TG_EINVAL, "randint", "empty or too wide range "
		                 "[%lld, %lld)", (long long)low, (long long)high);
	if (check_float("randint", TG_FLOAT32, ndim, shape))
		return NULL;
	tg_scope_begin();
	/* in float64 so that wide ranges keep every integer reachable */
	r = tg_cast(rand_f32("randint", dev, ndim, shape), TG_FLOAT64);
	r = tg_floor(tg_add_s(tg_mul_s(r, (double)(high - low)), (double)low));
	r = tg_keep(tg_cast(r, TG_INT32));
	tg_scope_end();
	return r;
}

/* The product of the shape after the first axis (fan in). */
static double fan_in(size_t ndim, const int64_t *shape)
{
	return ndim > 1 ? (double)numel_of(ndim - 1, shape + 1) : 1.0;
}

static tg_tensor *scaled(tg_dev *dev, tg_dtype dt, size_t ndim,
                         const int64_t *shape, double bound, int normal)
{
	return normal ? tg_normal(dev, dt, ndim, shape, 0, bound)
	              : tg_uniform(dev, dt, ndim, shape, -bound, bound);
}

tg_tensor *tg_scaled_uniform(tg_dev *dev, tg_dtype dt, size_t ndim,
                             const int64_t *shape)
{
	int64_t n;

	if (tg_t_null("scaled_uniform", "shape", shape, ndim))
		return NULL;
	n = numel_of(ndim, shape);
	return scaled(dev, dt, ndim, shape, n ? 1 / sqrt((double)n) : 1, 0);
}

tg_tensor *tg_glorot_uniform(tg_dev *dev, tg_dtype dt, size_t ndim,
                             const int64_t *shape)
{
	double fans;

	if (tg_t_null("glorot_uniform", "shape", shape, ndim))
		return NULL;
	fans = (ndim ? (double)shape[0] : 1) + fan_in(ndim, shape);
	return scaled(dev, dt, ndim, shape, sqrt(6 / fans), 0);
}

tg_tensor *tg_kaiming_uniform(tg_dev *dev, tg_dtype dt, size_t ndim,
                              const int64_t *shape, double a)
{
	double gain = sqrt(2.0 / (1 + a * a));

	if (tg_t_null("kaiming_uniform", "shape", shape, ndim))
		return NULL;
	return scaled(dev, dt, ndim, shape,
	              sqrt(3.0) * gain / sqrt(fan_in(ndim, shape)), 0);
}

tg_tensor *tg_kaiming_normal(tg_dev *dev, tg_dtype dt, size_t ndim,
                             const int64_t *shape, double a)
{
	double gain = sqrt(2.0 / (1 + a * a));

	if (tg_t_null("kaiming_normal", "shape", shape, ndim))
		return NULL;
	return scaled(dev, dt, ndim, shape, gain / sqrt(fan_in(ndim, shape)),
	              1);
}

/* tinygrad's multinomial: each row's cumulative weights over their
 * total are a CDF; a uniform draw u picks the number of CDF entries
 * <= u, so index i comes with probability w[i] / sum(w).  One draw per
 * (sample, row), all in one rand call. */
tg_tensor *tg_multinomial(const tg_tensor *t, int64_t num_samples,
                          int replacement)
{
	int64_t rows, k, us[3], last[4];
	int ax2 = 2;
	tg_tensor *w, *cw, *cdf, *u, *r;
	char b[160];

	if (!t)
		return NULL;
	if (t->ndim < 1 || t->ndim > 2 || num_samples <= 0)
		return tg_t_fail(TG_EINVAL, "multinomial", "weights %s must be 1-D "
		                 "or 2-D and %lld samples positive",
		                 tg_tensor_shape_str(t, b, sizeof b),
		                 (long long)num_samples);
	if (!replacement && num_samples != 1)
		return tg_t_fail(TG_EINVAL, "multinomial", "%lld samples without "
		                 "replacement (only 1 is supported, as in "
		                 "tinygrad)", (long long)num_samples);
	if (tg_dims_sym(t->ndim, t->shape) || t->shape[t->ndim - 1] == 0)
		return tg_t_fail(TG_EINVAL, "multinomial", "weights %s: no "
		                 "categories or a symbolic shape",
		                 tg_tensor_shape_str(t, b, sizeof b));
	tg_scope_begin();
	w = t->ndim == 1 ? tg_unsqueeze(t, 0) : (tg_tensor *)t;
	rows = w->shape[0];
	k = w->shape[1];
	cw = tg_cast(tg_cumsum(w, 1), TG_FLOAT32);
	memcpy(last, (int64_t[]){ 0, rows, k - 1, k }, sizeof last);
	cdf = tg_div(cw, tg_shrink(cw, 2, last));
	memcpy(us, (int64_t[]){ num_samples, rows, 1 }, sizeof us);
	u = rand_f32("multinomial", tg_tensor_dev(t), 3, us);
	us[2] = k;
	r = tg_sum(tg_ge(tg_expand(u, 3, us), cdf), &ax2, 1, 0);
	r = tg_permute(r, 2, (int[]){ 1, 0 });
	if (t->ndim == 1)
		r = tg_squeeze(r, 0);
	r = tg_keep(tg_cast(r, TG_INT32));
	tg_scope_end();
	return r;
}

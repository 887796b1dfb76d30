/*
 * tensor/tensor.c - the tensor object: references and scopes, creation,
 * movement, casts, copies and getting results out (the parts of
 * tinygrad's Tensor that map one to one onto lazy buffers).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"
#include "ir/ir.h"
#include "shape/shape.h"

/* ------------------------------------------------------------ dtypes */

/* DEFAULT_FLOAT from a snapshot taken now: the op asking is starting
 * (util/config.c parses the value, and gives float32 for one that
 * slipped past its check when the environment changed later). */
tg_dtype tg_dtype_default_float(void)
{
	tg_settings set;

	tg_settings_read(&set);
	return set.default_float;
}

/* ------------------------------------------------------------- scopes */

typedef TG_VEC(tg_tensor *) tensor_vec;

/* The calling thread's open scopes, innermost last. */
static _Thread_local TG_VEC(tensor_vec) scopes;
/* Scopes opened since one could not be (out of memory), innermost
 * first: while any is, no tensor is made, so none can escape the scope
 * its caller thinks holds it; their tg_scope_end closes them. */
static _Thread_local size_t broken;

void tg_scope_begin(void)
{
	tensor_vec empty = { 0 };

	if (broken || TG_VEC_PUSH(&scopes, empty)) {
		broken++;
		tg_error_oom("scope_begin");
	}
}

void tg_scope_end(void)
{
	tensor_vec *s;
	size_t i;

	if (broken) {
		broken--;
		return;
	}
	if (!scopes.n)
		return;
	s = &scopes.v[scopes.n - 1];
	for (i = 0; i < s->n; i++)
		tg_tensor_unref(s->v[i]);
	TG_VEC_FREE(s);
	if (--scopes.n == 0)
		TG_VEC_FREE(&scopes);
}

/* Takes t out of the innermost scope; whether it was there. */
static int scope_remove(const tg_tensor *t)
{
	tensor_vec *s;

	if (!scopes.n)
		return 0;
	s = &scopes.v[scopes.n - 1];
	for (size_t i = s->n; i-- > 0;)
		if (s->v[i] == t) {
			memmove(&s->v[i], &s->v[i + 1],
			        (s->n - i - 1) * sizeof *s->v);
			s->n--;
			return 1;
		}
	return 0;
}

tg_tensor *tg_keep(tg_tensor *t)
{
	if (tg_t_dead(t, "keep"))
		return NULL;
	if (!t || !scopes.n)
		return t;
	/* room in the enclosing scope first: a tensor that cannot move
	 * stays where it is and goes with its scope */
	if (scopes.n > 1) {
		tensor_vec *up = &scopes.v[scopes.n - 2];
		if (TG_VEC_RESERVE(up, up->n + 1)) {
			tg_error_oom("keep");
			return NULL;
		}
	}
	if (scope_remove(t) && scopes.n > 1)  /* reserved above */
		(void)TG_VEC_PUSH(&scopes.v[scopes.n - 2], t);
	return t;
}

void tg_t_discard(tg_tensor *t)
{
	if (!t)
		return;
	scope_remove(t);
	tg_tensor_unref(t);
}

int tg_t_keep_all(tg_tensor **ts, size_t n)
{
	if (scopes.n > 1) {
		tensor_vec *up = &scopes.v[scopes.n - 2];
		if (TG_VEC_RESERVE(up, up->n + n))
			return tg_error_oom("keep");
	}
	for (size_t i = 0; i < n; i++)
		ts[i] = tg_keep(ts[i]);  /* cannot fail: room reserved */
	return TG_OK;
}

tg_tensor *tg_tensor_ref(tg_tensor *t)
{
	if (tg_t_dead(t, "tensor_ref"))
		return NULL;
	if (t)
		atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
	return t;
}

/* ------------------------------------------------------ dead tensors */

/* A tensor whose last reference goes (most often at tg_scope_end, for a
 * tensor the caller forgot to tg_keep) releases its graph at once, but
 * its header waits here, with refs 0, until QUARANTINE later tensors
 * have died: a use of the stale pointer in that window finds refs 0
 * and fails with a message, in every build, instead of reading freed
 * memory (which returned 0 with success).  ASan's heap quarantine does
 * the same for bytes; a header is about 120 bytes, so this holds at
 * most 8 MB. */
enum { QUARANTINE = 65536 };
static tg_tensor *quarantine[QUARANTINE];
static size_t quarantine_next;
static pthread_mutex_t quarantine_lock = PTHREAD_MUTEX_INITIALIZER;

static void bury(tg_tensor *t)
{
	tg_tensor *old;

	pthread_mutex_lock(&quarantine_lock);
	old = quarantine[quarantine_next];
	quarantine[quarantine_next] = t;
	quarantine_next = (quarantine_next + 1) % QUARANTINE;
	pthread_mutex_unlock(&quarantine_lock);
	free(old);
}

int tg_t_dead(const tg_tensor *t, const char *op)
{
	if (!t || atomic_load_explicit(&((tg_tensor *)t)->refs,
	                                memory_order_acquire))
		return 0;
	tg_error(TG_EINVAL, "%s: the tensor was used after its scope ended "
	         "(tg_scope_end or tg_tensor_unref dropped its last "
	         "reference; tg_keep it inside the scope to use it after)",
	         op);
	return 1;
}

void tg_tensor_unref(tg_tensor *t)
{
	uint32_t refs = t ? atomic_load_explicit(&t->refs,
	                                         memory_order_relaxed) : 1;

	if (!refs) {  /* dropped twice: the first drop freed it */
		tg_t_dead(t, "tensor_unref");
		return;
	}
	if (t && atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1) {
		tg_t_grad_release(t);
		tg_lazy_unref(t->lazy);
		t->lazy = NULL;
		bury(t);
	}
}

tg_tensor *tg_t_wrap(tg_lazy *lb)
{
	tg_tensor *t;

	if (!lb)
		return NULL;
	if (broken || !(t = calloc(1, sizeof *t))) {
		tg_lazy_unref(lb);
		tg_error_oom(broken ? "scope_begin" : "tensor");
		return NULL;
	}
	t->refs = 1;
	t->lazy = lb;
	t->requires_grad = -1;
	t->ndim = tg_lazy_ndim(lb);
	tg_lazy_dims(lb, t->shape);
	if (scopes.n && TG_VEC_PUSH(&scopes.v[scopes.n - 1], t)) {
		tg_tensor_unref(t);
		tg_error_oom("tensor");
		return NULL;
	}
	return t;
}

tg_tensor *tg_t_same(const tg_tensor *t)
{
	tg_tensor *r = tg_tensor_ref((tg_tensor *)t);  /* NULL when dead */

	if (r && scopes.n && TG_VEC_PUSH(&scopes.v[scopes.n - 1], r)) {
		tg_tensor_unref(r);
		tg_error_oom("tensor");
		return NULL;
	}
	return r;
}

tg_tensor *tg_t_fail(int status, const char *op, const char *fmt, ...)
{
	char msg[TG_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	tg_error(status, "%s: %s", op, msg);
	return NULL;
}

int tg_t_same_dev(const char *op, const tg_tensor *a, const tg_tensor *b)
{
	if (tg_t_dead(a, op) || tg_t_dead(b, op))
		return -1;
	if (a->lazy->dev == b->lazy->dev)
		return 0;
	tg_error(TG_EINVAL, "%s: tensors on %s and %s (move one with tg_to)",
	         op, tg_dev_name(a->lazy->dev), tg_dev_name(b->lazy->dev));
	return -1;
}

int tg_t_axis(const char *op, int axis, size_t ndim)
{
	long n = ndim ? (long)ndim : 1;

	if (axis < -n || axis >= n) {
		tg_error(TG_EINVAL, "%s: axis %d out of range for %zu dims", op,
		         axis, ndim);
		return -1;
	}
	return axis < 0 ? (int)(axis + n) : axis;
}

/* --------------------------------------------------------- properties */

size_t tg_tensor_ndim(const tg_tensor *t) { return t ? t->ndim : 0; }
const int64_t *tg_tensor_shape(const tg_tensor *t)
{
	return t ? t->shape : NULL;
}
tg_dtype tg_tensor_dtype(const tg_tensor *t)
{
	return !TG_T_BAD(t, "tensor_dtype") ? t->lazy->dtype : TG_NDTYPES;
}
tg_dev *tg_tensor_dev(const tg_tensor *t)
{
	return !TG_T_BAD(t, "tensor_dev") ? t->lazy->dev : NULL;
}

int64_t tg_tensor_size(const tg_tensor *t, int axis)
{
	int a;

	if (!t || t->ndim == 0 ||
	    (a = tg_t_axis("size", axis, t->ndim)) < 0)
		return -1;
	return t->shape[a];
}

int64_t tg_tensor_numel(const tg_tensor *t)
{
	int64_t n = 1;
	size_t i;
	char b[160];

	if (t && tg_dims_sym(t->ndim, t->shape)) {
		tg_error(TG_EINVAL, "numel: the shape %s is symbolic",
		         tg_tensor_shape_str(t, b, sizeof b));
		return -1;
	}
	for (i = 0; t && i < t->ndim; i++)
		if (__builtin_mul_overflow(n, t->shape[i], &n))
			return tg_error(TG_EINVAL, "numel: more than %lld "
			                "elements", (long long)INT64_MAX), -1;
	return t ? n : 0;
}

const char *tg_t_shape_format(size_t ndim, const int64_t *shape, char *buf,
                              size_t n)
{
	size_t i, len = 0;

	if (!n)
		return buf;
	len += (size_t)snprintf(buf, n, "(");
	for (i = 0; i < ndim && len < n; i++) {
		char d[64];

		len += (size_t)snprintf(buf + len, n - len, "%s%s",
		                        i ? "," : "",
		                        tg_dim_str(shape[i], d, sizeof d));
	}
	if (len < n)
		snprintf(buf + len, n - len, ndim == 1 ? ",)" : ")");
	return buf;
}

const char *tg_tensor_shape_str(const tg_tensor *t, char *buf, size_t n)
{
	if (!buf)  /* nothing to write into: say so, as a call returning
	            * text can */
		return "(no buffer)";
	if (n && !t)
		buf[0] = 0;
	return n && t ? tg_t_shape_format(t->ndim, t->shape, buf, n) : buf;
}

/* ----------------------------------------------------------- creation */

/* A Python-style value as a constant of dt (an integer truncated, then
 * wrapped to dt's width as a C cast).  -1 with an error for a value no
 * 64-bit integer holds (NaN, an infinity, 2^64): converting it is
 * undefined in C, and tinygrad's int(nan) raises too. */
static int scalar_of(tg_dtype dt, double v, tg_scalar *s)
{
	if (tg_dtype_is_float(dt)) {
		s->f = tg_float_round(v, dt);
	} else if (dt == TG_BOOL) {
		s->i = v != 0;
	} else if (!(v >= -9223372036854775808.0 &&
	             v < (dt == TG_UINT64 ? 18446744073709551616.0
	                                  : 9223372036854775808.0))) {
		tg_error(TG_EINVAL, "full: %g is not a value of %s (a finite "
		         "number within its 64-bit range)", v,
		         tg_dtype_name(dt));
		return -1;
	} else if (v >= 9223372036854775808.0) {
		s->u = (uint64_t)v;
	} else {
		*s = tg_scalar_from_int((int64_t)v, dt);
	}
	return 0;
}

int tg_t_too_big(const char *op, size_t ndim, const int64_t *shape)
{
	int64_t n = 1;
	size_t i;

	for (i = 0; i < ndim; i++) {
		if (shape[i] < 0 || tg_dim_is_sym(shape[i]) ||
		    !__builtin_mul_overflow(n, shape[i], &n))
			continue;
		tg_error(TG_EINVAL, "%s: more than %lld elements (axis %zu)",
		         op, (long long)INT64_MAX, i);
		return -1;
	}
	return 0;
}

int tg_t_null(const char *op, const char *what, const void *p, size_t n)
{
	if (p || !n)
		return 0;
	tg_error(TG_EINVAL, "%s: %s is NULL (n = %zu)", op, what, n);
	return -1;
}

/* dt and shape for op; sym_ok: symbolic sizes are fine (a broadcast
 * constant needs no memory). */
static int check_shape(const char *op, tg_dtype dt, size_t ndim,
                       const int64_t *shape, int sym_ok)
{
	size_t i;

	if ((unsigned)dt >= TG_NDTYPES)
		return tg_error(TG_EINVAL, "%s: dtype %d is not a dtype", op,
		                (int)dt);
	if (ndim > TG_MAX_DIMS)
		return tg_error(TG_EINVAL, "%s: %zu dims (at most %d)", op,
		                ndim, TG_MAX_DIMS);
	if (tg_t_null(op, "shape", shape, ndim))
		return TG_EINVAL;
	for (i = 0; i < ndim; i++) {
		if (tg_dim_is_sym(shape[i]) && sym_ok) {
			tg_sint s;
			if (tg_dims_decode(1, &shape[i], &s))
				return tg_error_prefix("%s: axis %zu", op, i);
		} else if (tg_dim_is_sym(shape[i])) {
			return tg_error(TG_EINVAL, "%s: axis %zu has a symbolic "
			                "size; memory needs integer sizes", op,
			                i);
		} else if (shape[i] < 0) {
			return tg_error(TG_EINVAL, "%s: negative size %lld on "
			                "axis %zu", op, (long long)shape[i], i);
		}
	}
	return tg_t_too_big(op, ndim, shape) ? TG_EINVAL : 0;
}

static tg_dev *dev_or_default(tg_dev *dev)
{
	return dev ? dev : tg_dev_get(NULL);
}

tg_tensor *tg_empty(tg_dev *dev, tg_dtype dt, size_t ndim,
                    const int64_t *shape)
{
	if (check_shape("empty", dt, ndim, shape, 0) ||
	    !(dev = dev_or_default(dev)))
		return NULL;
	return tg_t_wrap(tg_lazy_empty(dev, dt, ndim, shape));
}

tg_tensor *tg_tensor_new(tg_dev *dev, tg_dtype dt, size_t ndim,
                         const int64_t *shape, const void *data)
{
	tg_tensor *t;
	size_t n;

	if (dev && tg_dev_group_size(dev)) {  /* on the first, then copied */
		tg_tensor *one, *r;

		tg_scope_begin();
		one = tg_tensor_new(tg_dev_group_member(dev, 0), dt, ndim,
		                    shape, data);
		r = tg_keep(tg_to(one, dev));
		tg_scope_end();
		return r;
	}
	t = tg_empty(dev, dt, ndim, shape);

	if (!t || !data || !(n = (size_t)tg_tensor_numel(t)))
		return t;
	if (tg_buffer_copyin(tg_lazy_base(t->lazy)->buf, data,
	                     n * tg_dtype_size(dt))) {
		tg_error_prefix("tensor_new");
		/* an open scope holds t and drops it; else the reference
		 * is ours */
		if (!scopes.n)
			tg_tensor_unref(t);
		return NULL;
	}
	return t;
}

tg_tensor *tg_full(tg_dev *dev, tg_dtype dt, size_t ndim,
                   const int64_t *shape, double value)
{
	tg_scalar s;

	if (check_shape("full", dt, ndim, shape, 1) ||
	    scalar_of(dt, value, &s) || !(dev = dev_or_default(dev)))
		return NULL;
	return tg_t_wrap(tg_lazy_const(dev, dt, s, ndim, shape));
}

tg_tensor *tg_zeros(tg_dev *dev, tg_dtype dt, size_t ndim,
                    const int64_t *shape)
{
	return tg_full(dev, dt, ndim, shape, 0);
}

tg_tensor *tg_ones(tg_dev *dev, tg_dtype dt, size_t ndim,
                   const int64_t *shape)
{
	return tg_full(dev, dt, ndim, shape, 1);
}

tg_tensor *tg_tensor_scalar(tg_dev *dev, tg_dtype dt, double value)
{
	return tg_full(dev, dt, 0, NULL, value);
}

tg_tensor *tg_full_like(const tg_tensor *t, double value)
{
	if (TG_T_BAD(t, "full_like"))
		return NULL;
	return tg_full(t->lazy->dev, t->lazy->dtype, t->ndim, t->shape, value);
}

tg_tensor *tg_zeros_like(const tg_tensor *t) { return tg_full_like(t, 0); }
tg_tensor *tg_ones_like(const tg_tensor *t) { return tg_full_like(t, 1); }

tg_tensor *tg_empty_like(const tg_tensor *t)
{
	if (TG_T_BAD(t, "empty_like"))
		return NULL;
	return tg_empty(t->lazy->dev, t->lazy->dtype, t->ndim, t->shape);
}

/* Constants made inside ops never need a gradient (tinygrad's
 * requires_grad=False), so an op on a requires_grad 0 tensor stays 0. */
static tg_tensor *no_grad(tg_tensor *t)
{
	if (t)
		t->requires_grad = 0;
	return t;
}

tg_tensor *tg_t_const(const tg_tensor *like, tg_dtype dt, double v,
                      size_t ndim, const int64_t *shape)
{
	return !TG_T_BAD(like, "const") ? no_grad(tg_full(like->lazy->dev, dt,
	                                                 ndim, shape, v))
	            : NULL;
}

tg_tensor *tg_t_const_like(const tg_tensor *like, double v)
{
	return no_grad(tg_full_like(like, v));
}

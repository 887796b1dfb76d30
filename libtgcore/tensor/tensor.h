/*
 * tensor/tensor.h - the tensor layer's internal header: the tensor
 * object, scopes, and the few primitives every public op is built from
 * (tinygrad's Tensor over LazyBuffer).  Internal; never installed.
 *
 * Status: everything of tg/tg.h's tensor section is built.
 *
 * tensor.c holds the object, scopes, creation, movement, cast, copy and
 * realize; the other files of tensor/ build the public ops of tg/tg.h
 * from the primitives below and the public movement ops, the way
 * tinygrad's tensor.py builds them from function.py.
 *
 * Writing an op (the pattern every composite op follows):
 *
 *     tg_tensor *tg_softsign(const tg_tensor *t)
 *     {
 *             tg_tensor *r;
 *             if (!t) return NULL;
 *             tg_scope_begin();
 *             r = tg_div(t, tg_add_s(tg_abs(t), 1));
 *             tg_keep(r);      // the result leaves the op's scope
 *             tg_scope_end();  // the temporaries go
 *             return r;        // NULL (error set) if a step failed
 *     }
 *
 * Messages name the public op: a failure inside a composite op is
 * re-prefixed with tg_t_fail/tg_error_prefix when the inner message
 * would confuse ("softsign: ...").
 */
#ifndef TG_TENSOR_H
#define TG_TENSOR_H

#include "lazy/lazy.h"

/* An autograd node (tensor/autograd.c). */
typedef struct tg_fn tg_fn;

struct tg_tensor {
	_Atomic uint32_t refs;  /* caller- and scope-held references */
	tg_lazy *lazy;   /* owned reference */
	size_t ndim;     /* the lazy buffer's shape as integers */
	int64_t shape[TG_MAX_DIMS];
	/* autograd: tinygrad's requires_grad (-1 None, 0, 1), the
	 * gradient (owned reference) and the op that made it (owned) */
	int8_t requires_grad;
	tg_tensor *grad;
	tg_fn *ctx;
};

/* The primitives autograd records (tinygrad's Functions). */
enum tg_fn_kind {
	TG_FN_ALU, TG_FN_RELU, TG_FN_REDUCE, TG_FN_RESHAPE, TG_FN_EXPAND,
	TG_FN_PERMUTE, TG_FN_PAD, TG_FN_SHRINK, TG_FN_STRIDE, TG_FN_CAST,
	TG_FN_BITCAST, TG_FN_CONTIGUOUS, TG_FN_COPY, TG_FN_WINDOW
};

/* Records on `out` (just made from `in` by the primitive `kind`, ALU or
 * reduce `op`, with `arg`: permutation, pads (before, after), shrink
 * pairs, stride steps or the reduce's axis mask) the node its gradient
 * needs, when an input needs one and recording is on.  Returns out
 * (NULL on OOM, out dropped). */
tg_tensor *tg_t_record(tg_tensor *out, int kind, unsigned op,
                       const tg_tensor *const *in, size_t n,
                       const int64_t *arg, size_t narg);
/* Whether t (non-NULL) is a tensor whose last reference is gone: then
 * 1, with an error naming `op` that says it was used after its scope
 * ended.  Every operation that reads a tensor checks this first. */
int tg_t_dead(const tg_tensor *t, const char *op);
/* NULL (propagated) or dead: the op returns NULL. */
#define TG_T_BAD(t, op) (!(t) || tg_t_dead((t), (op)))

/* Drops t's node and gradient (when t is freed). */
void tg_t_grad_release(tg_tensor *t);

/* A new tensor around `lb` (takes that reference; NULL gives NULL),
 * registered in the current scope.  New reference. */
tg_tensor *tg_t_wrap(tg_lazy *lb);

/* t itself for an op that changes nothing (tinygrad returns self): a
 * new reference, held by the current scope as tg_t_wrap's are, so the
 * graph gains no node and gradients reach t directly. */
tg_tensor *tg_t_same(const tg_tensor *t);

/* Drops t, just made by tg_t_wrap and not handed out: out of the open
 * scope that holds it (if any), then its reference. */
void tg_t_discard(tg_tensor *t);

/* Sets the error "<op>: <message>" and returns NULL. */
tg_tensor *tg_t_fail(int status, const char *op, const char *fmt, ...)
	TG_PRINTF(3, 4);

/* 0 when a and b are on one device; else -1 with the message "<op>:
 * tensors on A and B". */
int tg_t_same_dev(const char *op, const tg_tensor *a, const tg_tensor *b);

/* 0, or -1 with the error "<op>: more than INT64_MAX elements" when
 * the integer sizes of shape multiply past int64 (symbolic and
 * negative ones are left to the other checks). */
int tg_t_too_big(const char *op, size_t ndim, const int64_t *shape);
/* 0, or -1 with the error "<op>: <what> is NULL (n = N)" when p is
 * NULL though n, the count of its entries, is not 0: the check every
 * public call that takes an array or an out-pointer makes first. */
int tg_t_null(const char *op, const char *what, const void *p, size_t n);

/* Normalizes a possibly negative axis for ndim; -1 (with a message
 * naming op) when out of range.  ndim 0 accepts 0 and -1 as tinygrad
 * does for scalars. */
int tg_t_axis(const char *op, int axis, size_t ndim);

/* The float type of Python floats and of int division: DEFAULT_FLOAT
 * (float16/half, bfloat16, float32/float, float64/double), else float32.
 * Each call takes a settings snapshot: the op that asks is starting
 * (the compiler below the tensor layer reads no configuration). */
tg_dtype tg_dtype_default_float(void);
/* tg_keep of ts[0..n-1], all or none: TG_ENOMEM (every tensor left in
 * the scope, to go with it) when the enclosing scope cannot take them
 * all. */
int tg_t_keep_all(tg_tensor **ts, size_t n);

/* "(2,3)", "(6,)", "()" into buf (n bytes): tg_tensor_shape_str's
 * text for any shape. */
const char *tg_t_shape_format(size_t ndim, const int64_t *shape, char *buf,
                              size_t n);
/* t's shape as text in the array buf, for messages. */
#define TG_T_SHAPE(t, buf) tg_tensor_shape_str((t), (buf), sizeof(buf))

/* Frees the random counters of every device (tg_shutdown). */
void tg_random_reset(void);

/* ---- primitives (new references; NULL in, NULL out) ---- */

/* The ALU op on same-shape, same-device operands: a, b, c as the op's
 * arity needs (others NULL).  Operand dtypes must be equal (WHERE: a
 * is the bool condition, b and c the values of one dtype); CMPLT and
 * CMPNE give bool.  Callers broadcast and promote first. */
tg_tensor *tg_t_alu(unsigned op, const tg_tensor *a, const tg_tensor *b,
                    const tg_tensor *c);
/* Reduces the axes in the bit mask with TG_ADD or TG_MAX, keeping them
 * as size 1 (keepdim).  Sums of ints accumulate in the tensor's dtype
 * here; tg_sum casts to tg_dtype_sum_acc first. */
tg_tensor *tg_t_reduce(unsigned op, const tg_tensor *t, uint32_t axes);
/* A constant of dtype dt and `shape` on like's device (a broadcast
 * scalar: no memory). */
tg_tensor *tg_t_const(const tg_tensor *like, tg_dtype dt, double v,
                      size_t ndim, const int64_t *shape);
/* The same with like's dtype and shape. */
tg_tensor *tg_t_const_like(const tg_tensor *like, double v);
/* Takes every mul[i]-th element of axis i (negative: from the end).
 * tinygrad's stride, used by slicing with steps. */
tg_tensor *tg_t_stride(const tg_tensor *t, size_t n, const int64_t *mul);

/* The sliding windows of size k[i] and dilation d[i] (>= 1) at every
 * position of the last nk axes, as one view (..., o_1..o_nk,
 * k_1..k_nk) with o = in - d*(k-1) (tg_lazy_as_strided).  Its gradient
 * sums, for each input element, the window slots that read it: the
 * same kind of view over the padded gradient, reduced over k. */
tg_tensor *tg_t_window(const tg_tensor *t, size_t nk, const int64_t *k,
                       const int64_t *d);
/* The row-major strides of t's shape into s[t->ndim]. */
void tg_t_row_major(const tg_tensor *t, int64_t *s);
/* A view of t (row-major) with these shape, strides and offset; not
 * recorded for autograd, so only for gradients (tg_t_window's). */
tg_tensor *tg_t_as_strided(const tg_tensor *t, size_t ndim,
                           const int64_t *shape, const int64_t *strides,
                           int64_t offset);

/* tinygrad's _pool: the sliding windows of kernel k over the last nk
 * axes (stride and dilation per axis, NULL or 0 meaning 1) as a view
 * (..., o_1..o_nk, k_1..k_nk), o = ceil((in - d*(k-1)) / s). */
tg_tensor *tg_t_pool(const tg_tensor *t, size_t nk, const int64_t *k,
                     const int64_t *stride, const int64_t *dilation);

/* The dtype a Python scalar v takes next to a tensor of dtype dt (see
 * "Python scalar" in tg/tg.h). */
tg_dtype tg_t_scalar_dtype(tg_dtype dt, double v);
/* The helpers elementwise.c and unary.c share: a new (scope-held)
 * reference to t's values (NULL in, NULL out); whether t is of a float
 * dtype; a constant of t's dtype and shape (NULL in, NULL out); t cast
 * to the default float unless it is a float already. */
tg_tensor *tg_t_view(const tg_tensor *t);
int tg_t_is_float(const tg_tensor *t);
tg_tensor *tg_t_like(const tg_tensor *t, double v);
tg_tensor *tg_t_floatify(const tg_tensor *t);
/* Broadcasts a and b to one shape (numpy rules) and casts them to
 * their least upper dtype; *ra and *rb get new references.  `op` names the
 * caller in the message "add: shapes (2,3) and (4,) don't broadcast". */
int tg_t_broadcast2(const char *op, const tg_tensor *a, const tg_tensor *b,
                    tg_tensor **ra, tg_tensor **rb);

#endif /* TG_TENSOR_H */

/*
 * lazy/lazy.h - the lazy graph (tinygrad's lazy.py).  Internal.
 *
 * A lazy buffer is a *base* (it will own memory: it has an op and
 * sources, or it is realized and has a buffer) or a *view*: a shape
 * tracker over a base.  Movement ops make views and never copy.
 * Construction folds what tinygrad's lazy layer folds: constants,
 * x+0, x*1, x*0, x//1, double negation, reduces and casts of constants,
 * copies of copies; and equal buffers built twice are one buffer (the
 * lazy cache), so common subexpressions are computed once.
 *
 * Lifetime scheme:
 *  - Lazy buffers are reference counted (tg_lazy_ref/unref).  A view
 *    holds its base; a base holds its sources until it is realized,
 *    then drops them and holds its tg_buffer instead.
 *  - Every function returning a tg_lazy * returns a new reference;
 *    arguments are borrowed.  NULL arguments give NULL (chains are
 *    checked once).
 *  - The lazy cache holds no references: a buffer leaves it when freed.
 *  - All of it is guarded by one lock, so tensors may be built on
 *    several threads.
 */
#ifndef TG_LAZY_H
#define TG_LAZY_H

#include "shape/shape.h"

enum tg_lazy_kind {
	TG_LZ_VIEW,       /* a view of `base` */
	TG_LZ_BUFFER,     /* realized (buf), or memory to be filled */
	TG_LZ_CONST,      /* value; never gets memory unless forced */
	TG_LZ_COPY,       /* src[0] from another device */
	TG_LZ_CONTIGUOUS, /* src[0] laid out row-major in its own memory */
	TG_LZ_ALU,        /* op on src[0..nsrc-1] */
	TG_LZ_CAST,       /* src[0] converted to dtype */
	TG_LZ_BITCAST,    /* src[0]'s bits as dtype */
	TG_LZ_REDUCE,     /* op (TG_ADD, TG_MAX) over axes of src[0] */
	TG_LZ_ASSIGN,     /* src[1] (a realized target) := src[0] */
	TG_LZ_BUFVIEW,    /* src[0]'s memory (a consecutive range of a
	                     realized base) as dtype: a buffer view, no
	                     kernel (tinygrad's VIEW; DISK only) */
	TG_LZ_MULTI       /* one lazy per device of a group (multi): never
	                     scheduled itself, never a source of another
	                     kind */
};

typedef struct tg_multi tg_multi;

typedef struct tg_lazy tg_lazy;
struct tg_lazy {
	_Atomic uint32_t refs;
	uint8_t kind;        /* enum tg_lazy_kind */
	_Atomic uint8_t forced_realize;  /* read by other threads' schedules */
	uint16_t op;         /* ALU: tg_op; REDUCE: TG_ADD/TG_MAX */
	tg_dtype dtype;
	tg_dev *dev;
	tg_st *st;           /* owned; a base's is contiguous */
	tg_lazy *base;       /* views: owned reference; bases: NULL */
	uint32_t nsrc;
	tg_lazy *src[3];     /* owned references (bases, unrealized) */
	tg_scalar value;     /* CONST */
	uint32_t axes;       /* REDUCE: bit mask */
	tg_buffer *buf;      /* BUFFER: owned reference */
	/* tinygrad's contiguous_child: the CONTIGUOUS made from a view of
	 * this base (weak) and the tracker that reads this base through it */
	tg_lazy *cchild;
	tg_st *cchild_st;
	/* ASSIGN through a view (tg_lazy_assign_view): the view of the
	 * target buffer its kernel stores through; NULL: all of it */
	tg_st *assign_st;
	tg_multi *multi;     /* MULTI: owned */
	/* lazy cache */
	uint64_t hash;
	tg_lazy *cache_next;
	uint64_t id;         /* creation order, for stable scheduling */
};

/* The base of lb (lb itself for a base).  Borrowed. */
static inline tg_lazy *tg_lazy_base(const tg_lazy *lb)
{
	return lb->base ? lb->base : (tg_lazy *)lb;
}
static inline const tg_sint *tg_lazy_shape(const tg_lazy *lb)
{
	return tg_st_shape(lb->st);
}
static inline size_t tg_lazy_ndim(const tg_lazy *lb)
{
	return tg_st_ndim(lb->st);
}
/* Elements, symbolic axes at their largest (what memory is sized for). */
int64_t tg_lazy_numel(const tg_lazy *lb);
/* lb's shape as the public int64 sizes (symbolic entries as codes,
 * tg_dim_encode; TG_DIM_INVALID on OOM). */
void tg_lazy_dims(const tg_lazy *lb, int64_t *out);
/* Whether lb's shape has a symbolic entry. */
int tg_lazy_is_sym(const tg_lazy *lb);

tg_lazy *tg_lazy_ref(tg_lazy *lb);
void tg_lazy_unref(tg_lazy *lb);

/* -- creation -- */
tg_lazy *tg_lazy_const(tg_dev *dev, tg_dtype dt, tg_scalar v, size_t ndim,
                       const int64_t *shape);
/* A base over an existing buffer (realized), of `shape`. */
tg_lazy *tg_lazy_from_buffer(tg_buffer *buf, size_t ndim,
                             const int64_t *shape);
/* Memory to be filled later (tinygrad's EMPTY): realized on demand. */
tg_lazy *tg_lazy_empty(tg_dev *dev, tg_dtype dt, size_t ndim,
                       const int64_t *shape);

/* -- compute -- */
tg_lazy *tg_lazy_alu(unsigned op, tg_lazy *a, tg_lazy *b, tg_lazy *c);
tg_lazy *tg_lazy_cast(tg_lazy *a, tg_dtype dt, int bitcast);
/* Reduced axes stay as size 1.  Large reduces split in two. */
tg_lazy *tg_lazy_reduce(unsigned op, tg_lazy *a, uint32_t axes);
/* tg_lazy_reduce, split in two when each output reduces at least
 * `threshold` elements (0: never), and for a multi-device tensor
 * all-reduced as `ring` says (the RING setting, multi_ops.c).  The tensor
 * layer passes the SPLIT_REDUCEOP, REDUCEOP_SPLIT_THRESHOLD and RING
 * settings; tg_lazy_reduce uses tinygrad's defaults. */
#define TG_REDUCE_SPLIT_DEFAULT 32768
#define TG_RING_DEFAULT 1
tg_lazy *tg_lazy_reduce_split(unsigned op, tg_lazy *a, uint32_t axes,
                              int64_t threshold, int ring);
tg_lazy *tg_lazy_contiguous(tg_lazy *a);
/* Whether lb reads all of a base that has memory, in order (a realized
 * buffer, or a view of one that is the same array). */
int tg_lazy_is_plain(const tg_lazy *lb);
/* tinygrad's LazyBuffer.assign: a base computing value (same shape,
 * dtype and device) into the memory of target, which must be plain
 * (tg_lazy_is_plain).  The kernel that computes it reads the target
 * element by element only; kernels of the same schedule that read the
 * target's old value run before it. */
tg_lazy *tg_lazy_assign(tg_lazy *target, tg_lazy *value);
/* Whether view (not plain) reads a realized buffer through one view
 * that a kernel may write through: no mask, no broadcast axis, integer
 * sizes.  0 with the reason in *why otherwise. */
int tg_lazy_writable_view(const tg_lazy *view, const char **why);
/* tinygrad's LazyBuffer.assign to a view of a realized buffer: the
 * buffer's next state (an ASSIGN of its base's shape whose kernel
 * stores value, made contiguous, through the view), returned as that
 * view of it.  view must be tg_lazy_writable_view.  Readers of the
 * buffer see the values once the result is realized. */
tg_lazy *tg_lazy_assign_view(tg_lazy *view, tg_lazy *value);
tg_lazy *tg_lazy_copy(tg_lazy *a, tg_dev *dev);

/* -- movement (arguments as for the tg_st_ ops) -- */
tg_lazy *tg_lazy_reshape(tg_lazy *a, size_t ndim, const int64_t *shape);
tg_lazy *tg_lazy_expand(tg_lazy *a, size_t ndim, const int64_t *shape);
tg_lazy *tg_lazy_permute(tg_lazy *a, size_t n, const uint32_t *axis);
tg_lazy *tg_lazy_pad(tg_lazy *a, size_t n, const int64_t *pairs);
tg_lazy *tg_lazy_shrink(tg_lazy *a, size_t n, const int64_t *pairs);
tg_lazy *tg_lazy_stride(tg_lazy *a, size_t n, const int64_t *mul);
/* A view of shape/strides/offset over a's elements in row-major order
 * (tg_st_as_strided): the sliding windows of tensor/processing.c. */
tg_lazy *tg_lazy_as_strided(tg_lazy *a, size_t ndim, const int64_t *shape,
                            const int64_t *strides, int64_t offset);

/* Whether lb is a constant nobody realized, read without a mask
 * (folding may use its value); *v gets the value. */
int tg_lazy_is_unmasked_const(const tg_lazy *lb, tg_scalar *v);

/* Makes a computed base a BUFFER: it drops its sources (the graph
 * behind it can be freed) and leaves the lazy cache.  The engine calls
 * it when the kernel computing b has run. */
void tg_lazy_mark_realized(tg_lazy *b);

/* Runs fn(ctx) with the lazy graph locked and returns its result:
 * meanwhile no thread takes or drops a reference, so counts are
 * exact.  fn must not call other tg_lazy_ functions but this one: */
int tg_lazy_locked(int (*fn)(void *ctx), void *ctx);
/* Inside tg_lazy_locked: no thread can find lb again (it leaves the
 * lazy cache and stops being a contiguous child).  The memory planner
 * hides what it gives shared memory, so nobody takes a reference to an
 * intermediate whose buffer a later kernel overwrites. */
void tg_lazy_hide_locked(tg_lazy *lb);

/* tinygrad's contiguous_child of a base: the CONTIGUOUS made from a
 * view of it (a new reference, or NULL when there is none) and the
 * tracker that reads the base through it (owned).  The link is weak:
 * it goes when the child dies or is hidden.  Negative on OOM. */
int tg_lazy_child(tg_lazy *base, tg_lazy **child, tg_st **st);
/* Records child as base's contiguous child unless it has one; takes st. */
void tg_lazy_set_child(tg_lazy *base, tg_lazy *child, tg_st *st);

/* -- multi.c: tensors over a device group (tinygrad's MultiLazyBuffer).
 * A MULTI lazy has the group as its device and the whole tensor's
 * shape and dtype; its shards are ordinary lazies, one per member.
 * Every tg_lazy_ op above hands a MULTI operand to multi.c, which does
 * the op shard by shard (resharding, all-reducing or refusing with the
 * reason); operands must all be MULTI on one group. */
struct tg_multi {
	size_t n;        /* = the group's size */
	tg_lazy **lbs;   /* owned: the shard on member i */
	uint8_t *real;   /* 0: shard i stands for zeros (a shrink to
	                    another shard's rows left it out) */
	int axis;        /* the axis split across the members, or -1 when
	                    each holds all of it (replicated) */
};

static inline int tg_lazy_is_multi(const tg_lazy *lb)
{
	return lb && lb->kind == TG_LZ_MULTI;
}
/* a (on one device) split along `axis` over group's members, in order
 * and as evenly as rows allow (the first ones get ceil(rows / n)), or
 * each a copy when axis is -1.  Each shard is its own contiguous
 * buffer.  Refused when a member would get no rows. */
tg_lazy *tg_multi_shard(tg_lazy *a, tg_dev *group, int axis);
/* The MULTI lazy on group over lbs (one per member, in order; new
 * references), split along axis (-1: replicated) with real[] as in
 * struct tg_multi: how the JIT rebuilds a multi-device output. */
tg_lazy *tg_multi_of(tg_dev *group, tg_lazy *const *lbs, int axis,
                     const uint8_t *real);
/* A constant / empty tensor on every member of group (replicated). */
tg_lazy *tg_multi_const(tg_dev *group, tg_dtype dt, tg_scalar v,
                        size_t ndim, const int64_t *shape);
tg_lazy *tg_multi_empty(tg_dev *group, tg_dtype dt, size_t ndim,
                        const int64_t *shape);
tg_lazy *tg_multi_alu(unsigned op, tg_lazy *const *in, size_t n);
tg_lazy *tg_multi_cast(tg_lazy *a, tg_dtype dt, int bitcast);
tg_lazy *tg_multi_reduce(unsigned op, tg_lazy *a, uint32_t axes,
                         int64_t threshold, int ring);
tg_lazy *tg_multi_contiguous(tg_lazy *a);
tg_lazy *tg_multi_assign(tg_lazy *target, tg_lazy *value);
/* To one device: the shards gathered there; to the group: a itself. */
tg_lazy *tg_multi_copy(tg_lazy *a, tg_dev *dev);
/* kind: the lazy.c movement (reshape, expand, pad, shrink: int64 args;
 * permute: uint32; stride: int64 steps). */
enum tg_multi_move { TG_MM_RESHAPE, TG_MM_EXPAND, TG_MM_PAD, TG_MM_SHRINK,
                     TG_MM_PERMUTE, TG_MM_STRIDE };
tg_lazy *tg_multi_move(int kind, tg_lazy *a, size_t n, const void *arg);
/* Appends lb's shards (lb itself when not MULTI), borrowed, to *out
 * (a TG_VEC(tg_lazy *)); TG_ENOMEM on OOM. */
int tg_multi_flatten(tg_lazy *const *lbs, size_t n, tg_lazy ***out,
                     size_t *nout);
void tg_multi_free(tg_multi *m);

/* -- shared by the files of lazy/ only -- */
/* multi.c's helpers, which multi_ops.c shares: a tg_multi of n
 * shards (lbs unset, all real), NULL on OOM; the first real shard; the
 * MULTI lazy over m (taken; its lbs all set), its sharded axis summed
 * over the real shards; each shard's rows of the sharded axis, into
 * b[2i], b[2i+1]; lb shrunk to rows [lo, hi) of axis; a zero of lb's
 * shape on its device (a shard that is not real). */
tg_multi *tg_multi_alloc_(size_t n, int axis);
size_t tg_multi_first_real_(const tg_multi *m);
tg_lazy *tg_multi_wrap_(tg_dev *group, tg_multi *m);
void tg_multi_bounds_(const tg_multi *m, int64_t *b);
tg_lazy *tg_multi_rows_(tg_lazy *lb, int axis, int64_t lo, int64_t hi);
tg_lazy *tg_multi_zeros_like_(const tg_lazy *lb, tg_dtype dt);
/* A MULTI lazy over m (taken) of the group, shape and dtype given. */
tg_lazy *tg_lazy_new_multi_(tg_dev *group, tg_dtype dt, size_t ndim,
                            const int64_t *shape, tg_multi *m);
/* A new base (not yet interned) of kind/op over src (references
 * taken); a 0-size shape gives CONST 0.  NULL on OOM. */
tg_lazy *tg_lazy_new_base_(uint8_t kind, unsigned op, tg_dtype dt,
                           tg_dev *dev, size_t ndim, const tg_sint *shape,
                           tg_lazy *const *src, uint32_t nsrc);
/* Interns a new node: returns its cached twin (dropping lb) or lb. */
tg_lazy *tg_lazy_finish_(tg_lazy *lb);
/* A view of lb's base through st (taken); folds empty views to 0 and
 * identity views to the base. */
tg_lazy *tg_lazy_view_(const tg_lazy *lb, tg_st *st);

#endif /* TG_LAZY_H */

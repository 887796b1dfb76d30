/*
 * test_shape.c - views and shape trackers, ported from tinygrad's
 * test/unit/test_shapetracker.py, test/unit/test_view.py,
 * test/unit/test_shapetracker_math.py and test/test_symbolic_shapetracker.py
 * (at 173064c69c).  Chains of movement ops are checked index by index
 * against the brute-force map of shape_oracle.h, and the views they
 * leave are pinned (count, shape, strides, offset, mask, contiguity).
 */
#include "config.h"

#include "testlib.h"
#include "shape_oracle.h"
#include "failalloc.h"

#define I64(...) ((const int64_t[]){ __VA_ARGS__ })
#define N64(...) (sizeof(I64(__VA_ARGS__)) / sizeof(int64_t))
#define U32(...) ((const uint32_t[]){ __VA_ARGS__ })

/* The op macros act on a local `so_st so` (a CheckingShapeTracker). */
#define NEW(...) ck_assert_int_eq(so_init(&so, N64(__VA_ARGS__), \
                                          I64(__VA_ARGS__)), 0)
#define RESHAPE(...) ck_assert_int_eq(so_reshape(&so, N64(__VA_ARGS__), \
                                                 I64(__VA_ARGS__)), 0)
#define PERMUTE(...) ck_assert_int_eq(so_permute(&so, U32(__VA_ARGS__)), 0)
#define EXPAND(...) ck_assert_int_eq(so_expand(&so, I64(__VA_ARGS__)), 0)
#define PAD(...) ck_assert_int_eq(so_pad(&so, I64(__VA_ARGS__)), 0)
#define SHRINK(...) ck_assert_int_eq(so_shrink(&so, I64(__VA_ARGS__)), 0)
#define STRIDE(...) ck_assert_int_eq(so_stride(&so, I64(__VA_ARGS__)), 0)
#define FLIP(bits) ck_assert_int_eq(so_flip(&so, (bits)), 0)
#define SIMPLIFY() ck_assert_int_eq(so_simplify(&so), 0)
#define SAME() assert_same(&so)
#define NVIEWS() (so.st->nviews)
#define LAST() (so.st->views[so.st->nviews - 1])
#define CONTIGUOUS() tg_st_contiguous(so.st)

/* Field checks on a view against integer lists. */
#define ASSERT_SHAPE(v, ...) assert_ints((v)->shape, (v)->ndim, \
	N64(__VA_ARGS__), I64(__VA_ARGS__), "shape")
#define ASSERT_STRIDES(v, ...) assert_ints((v)->strides, (v)->ndim, \
	N64(__VA_ARGS__), I64(__VA_ARGS__), "strides")
#define ASSERT_MASK(v, ...) do { \
	ck_assert_ptr_nonnull((v)->mask); \
	assert_ints((v)->mask, 2 * (v)->ndim, N64(__VA_ARGS__), \
	            I64(__VA_ARGS__), "mask"); \
} while (0)

static void assert_same(so_st *so)
{
	char msg[512];
	int bad = so_check(so, msg, sizeof msg);
	char *s = bad ? tg_st_format(so->st) : NULL;

	ck_assert_msg(!bad, "%s in %s", msg, s ? s : "?");
}

static void assert_ints(const tg_sint *got, size_t n, size_t nwant,
                        const int64_t *want, const char *what)
{
	char b1[512], b2[512];
	tg_sint w[2 * TG_MAX_DIMS];

	so_sints(nwant, want, w);
	ck_assert_msg(n == nwant && tg_sints_eq(got, w, n),
	              "%s %s, want %s", what,
	              tg_sints_format(got, n, b1, sizeof b1),
	              tg_sints_format(w, nwant, b2, sizeof b2));
}

/* A view from integer lists (strides and mask may be NULL).  Owned by
 * the caller. */
static tg_view *mkview(size_t n, const int64_t *shape,
                       const int64_t *strides, int64_t off,
                       const int64_t *mask)
{
	tg_sint sh[TG_MAX_DIMS], st[TG_MAX_DIMS], m[2 * TG_MAX_DIMS];
	tg_view *v;

	so_sints(n, shape, sh);
	if (strides)
		so_sints(n, strides, st);
	if (mask)
		so_sints(2 * n, mask, m);
	ck_assert_int_eq(tg_view_new(NULL, n, sh, strides ? st : NULL,
	                             tg_si(off), mask ? m : NULL, &v), 0);
	return v;
}

#define VIEW(shape, strides, off, mask) \
	mkview(sizeof(I64 shape) / sizeof(int64_t), I64 shape, \
	       I64 strides, (off), (mask))

/* A tracker of the given views, which it frees. */
static tg_st *mkst(tg_view *a, tg_view *b)
{
	tg_view *vs[2] = { a, b };
	tg_st *st = tg_st_from_views(vs, b ? 2 : 1);

	ck_assert_ptr_nonnull(st);
	tg_view_free(a);
	tg_view_free(b);
	return st;
}

static tg_st *from_shape(size_t n, const int64_t *shape)
{
	/* zeroed: GCC cannot see that so_sints fills the n used (-Werror
	 * stopped this file once it had grown by a test) */
	tg_sint sh[TG_MAX_DIMS] = { tg_si(0) };
	tg_st *st;

	so_sints(n, shape, sh);
	ck_assert_ptr_nonnull(st = tg_st_from_shape(NULL, n, sh));
	return st;
}

#define FROM_SHAPE(...) from_shape(N64(__VA_ARGS__), I64(__VA_ARGS__))

/* Replaces *st by r (an op's result, which must have succeeded). */
static void take(tg_st **st, tg_st *r)
{
	ck_assert_msg(r != NULL, "op failed: %s", tg_last_error());
	tg_st_free(*st);
	*st = r;
}

static void st_reshape(tg_st **st, size_t n, const int64_t *shape)
{
	tg_sint sh[TG_MAX_DIMS];

	so_sints(n, shape, sh);
	take(st, tg_st_reshape(NULL, *st, n, sh));
}

static void st_pairs(tg_st **st, const int64_t *arg, int pad)
{
	tg_sint a[2 * TG_MAX_DIMS];
	size_t n = tg_st_ndim(*st);

	so_sints(2 * n, arg, a);
	take(st, pad ? tg_st_pad(NULL, *st, n, a)
	             : tg_st_shrink(NULL, *st, n, a));
}

#define ST_RESHAPE(st, ...) st_reshape(&(st), N64(__VA_ARGS__), \
                                       I64(__VA_ARGS__))
#define ST_PAD(st, ...) st_pairs(&(st), I64(__VA_ARGS__), 1)
#define ST_SHRINK(st, ...) st_pairs(&(st), I64(__VA_ARGS__), 0)
#define ST_PERMUTE(st, ...) take(&(st), tg_st_permute(NULL, (st), \
	tg_st_ndim(st), U32(__VA_ARGS__)))
#define ST_STRIDE(st, ...) take(&(st), tg_st_stride(NULL, (st), \
	tg_st_ndim(st), I64(__VA_ARGS__)))

/* Whether two trackers read the same offsets at every index
 * (tinygrad's st_equal); both get a context for their expressions. */
static int st_equiv(const tg_st *a, const tg_st *b)
{
	tg_ir *ir = tg_ir_new();
	size_t n = (size_t)tg_st_size(a), i;
	int64_t *ma = malloc(n * sizeof *ma), *mb = malloc(n * sizeof *mb);
	char msg[256];
	int same = tg_st_ndim(a) == tg_st_ndim(b) &&
	           tg_sints_eq(tg_st_shape(a), tg_st_shape(b), tg_st_ndim(a));

	ck_assert_ptr_nonnull(ir);
	if (same) {
		ck_assert_msg(!so_eval(ir, a, ma, msg, sizeof msg), "%s", msg);
		ck_assert_msg(!so_eval(ir, b, mb, msg, sizeof msg), "%s", msg);
		for (i = 0; i < n; i++)
			same &= ma[i] == mb[i];
	}
	free(ma);
	free(mb);
	tg_ir_free(ir);
	return same;
}

/* real_strides as text: "(33,?,1)", '?' for unknown. */
static const char *real_strides(tg_ir *ir, const tg_st *st, int ignore,
                                char *buf, size_t len)
{
	tg_sint s[TG_MAX_DIMS];
	uint8_t known[TG_MAX_DIMS];
	size_t i, n = tg_st_ndim(st), used = 0;
	char one[64];

	ck_assert_int_eq(tg_st_real_strides(ir, st, ignore, s, known), 0);
	used += (size_t)snprintf(buf, len, "(");
	for (i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		                         i ? "," : "", known[i]
		                         ? tg_sint_format(s[i], one, sizeof one)
		                         : "?");
	if (used < len)
		snprintf(buf + used, len - used, n == 1 ? ",)" : ")");
	return buf;
}

#define ASSERT_REAL_STRIDES(ir, st, want) do { \
	char rs_[256]; \
	ck_assert_str_eq(real_strides((ir), (st), 0, rs_, sizeof rs_), \
	                 (want)); \
} while (0)

/* ---------------------------------------------------------- test_view */

START_TEST(view_canonicalizes_full_mask)
{
	tg_view *v = VIEW((2, 2, 2), (4, 2, 1), 0, I64(0, 2, 0, 2, 0, 2));

	ck_assert_ptr_null(v->mask);
	ck_assert_int_eq(v->contiguous, 1);
	tg_view_free(v);
	v = VIEW((4, 3, 2), (1, 4, 10), 0, I64(0, 4, 0, 3, 0, 2));
	ck_assert_ptr_null(v->mask);
	ck_assert_int_eq(v->contiguous, 0);
	tg_view_free(v);
}
END_TEST

START_TEST(view_minify_zero_strided_dims)
{
	tg_view *target = VIEW((2, 2), (30, 2), 7, NULL), *v, *m;
	tg_view *vs[8];
	int i;

	vs[0] = VIEW((2, 1, 2), (30, 0, 2), 7, NULL);
	vs[1] = VIEW((1, 2, 2), (0, 30, 2), 7, NULL);
	vs[2] = VIEW((2, 2, 1), (30, 2, 0), 7, NULL);
	vs[3] = VIEW((2, 1, 1, 2), (30, 0, 0, 2), 7, NULL);
	vs[4] = VIEW((1, 1, 2, 2), (0, 0, 30, 2), 7, NULL);
	vs[5] = VIEW((2, 2, 1, 1), (30, 2, 0, 0), 7, NULL);
	vs[6] = VIEW((1, 2, 2, 1), (0, 30, 2, 0), 7, NULL);
	vs[7] = VIEW((1, 2, 1, 2), (0, 30, 0, 2), 7, NULL);
	for (i = 0; i < 8; i++) {
		v = vs[i];
		ck_assert_int_eq(tg_view_minify(NULL, v, &m), 0);
		ck_assert_msg(tg_view_eq(m, target), "case %d", i);
		tg_view_free(m);
		tg_view_free(v);
	}
	tg_view_free(target);
}
END_TEST

START_TEST(view_empty_mask_contiguous)
{
	tg_view *a = VIEW((2, 2, 2), (4, 2, 1), 0, NULL);
	tg_view *b = VIEW((2, 2, 2), (4, 2, 1), 0, I64(0, 2, 0, 2, 0, 2));

	ck_assert_int_eq(a->contiguous, b->contiguous);
	ck_assert(tg_view_eq(a, b));
	tg_view_free(a);
	tg_view_free(b);
	a = VIEW((1, 1, 1, 4), (0, 0, 0, 1), 0, NULL);
	b = VIEW((1, 1, 1, 4), (0, 0, 0, 1), 0, I64(0, 1, 0, 1, 0, 1, 0, 4));
	ck_assert_int_eq(a->contiguous, 1);
	ck_assert_int_eq(b->contiguous, 1);
	tg_view_free(a);
	tg_view_free(b);
	a = mkview(3, I64(2, 3, 4), NULL, 0, I64(0, 2, 0, 3, 0, 4));
	ck_assert_int_eq(a->contiguous, 1);
	tg_view_free(a);
}
END_TEST

START_TEST(view_create_single_index_mask)
{
	/* axis 0 keeps one index (2): stride 0 and the offset moves there */
	tg_view *v = VIEW((4, 3), (3, 1), 1, I64(2, 3, 0, 2));

	ASSERT_STRIDES(v, 0, 1);
	ck_assert(tg_sint_is(v->offset, 7));
	ASSERT_MASK(v, 2, 3, 0, 2);
	ck_assert_int_eq(v->contiguous, 0);
	tg_view_free(v);
}
END_TEST

START_TEST(view_create_empty_mask_zeroes_strides)
{
	tg_view *v = VIEW((4, 3), (3, 1), 5, I64(2, 2, 0, 3));

	ASSERT_STRIDES(v, 0, 0);
	ck_assert(tg_sint_is(v->offset, 0));
	ASSERT_MASK(v, 0, 0, 0, 0);
	tg_view_free(v);
}
END_TEST

START_TEST(view_create_zero_size)
{
	tg_view *v = VIEW((4, 0, 3), (7, 7, 7), 9, I64(1, 2, 0, 0, 0, 3));

	ASSERT_STRIDES(v, 0, 0, 0);
	ck_assert(tg_sint_is(v->offset, 0));
	ck_assert_ptr_null(v->mask);
	ck_assert_int_eq(v->contiguous, 1);
	ck_assert_int_eq(tg_view_size(v), 0);
	tg_view_free(v);
}
END_TEST

START_TEST(view_format)
{
	tg_view *v = VIEW((2, 3), (3, 1), 0, NULL);
	char *s = tg_view_format(v);

	ck_assert_str_eq(s, "View(shape=(2,3), strides=(3,1), offset=0, "
	                 "mask=None, contiguous=1)");
	free(s);
	tg_view_free(v);
	v = VIEW((5,), (1,), -1, I64(1, 4));
	s = tg_view_format(v);
	ck_assert_str_eq(s, "View(shape=(5,), strides=(1,), offset=-1, "
	                 "mask=((1,4),), contiguous=0)");
	free(s);
	tg_view_free(v);
}
END_TEST

START_TEST(view_copy_and_eq)
{
	tg_view *a = VIEW((4, 3), (1, 4), 2, I64(1, 3, 0, 3)), *b, *c;

	ck_assert_int_eq(tg_view_copy(a, &b), 0);
	ck_assert(tg_view_eq(a, b));
	c = VIEW((4, 3), (1, 4), 3, I64(1, 3, 0, 3));
	ck_assert(!tg_view_eq(a, c));
	tg_view_free(a);
	tg_view_free(b);
	tg_view_free(c);
}
END_TEST

/* ----------------------------------------------- real strides, simplify */

START_TEST(real_doesnt_simplify_1)
{
	tg_ir *ir = tg_ir_new();
	tg_st *st = mkst(VIEW((8, 3, 1, 2, 11, 1), (33, 11, 0, 0, 1, 0), 0,
	                      NULL),
	                 VIEW((8, 6, 11), (66, 11, 1), 0, NULL));
	tg_st *s;

	ASSERT_REAL_STRIDES(ir, st, "(33,?,1)");
	ck_assert_ptr_nonnull(s = tg_st_simplify(ir, st));
	ck_assert_uint_ne(s->nviews, 1);
	ck_assert(st_equiv(st, s));
	tg_st_free(s);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(real_doesnt_simplify_2)
{
	tg_ir *ir = tg_ir_new();
	tg_st *st = mkst(VIEW((2, 2, 4, 3, 3), (72, 9, 18, -3, -1), 8, NULL),
	                 VIEW((4, 4, 3, 3), (36, 9, 3, 1), 0, NULL));
	tg_st *s;

	ASSERT_REAL_STRIDES(ir, st, "(?,18,-3,-1)");
	ck_assert_ptr_nonnull(s = tg_st_simplify(ir, st));
	ck_assert_uint_ne(s->nviews, 1);
	ck_assert(st_equiv(st, s));
	tg_st_free(s);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(real_strides_masked_first_view)
{
	tg_ir *ir = tg_ir_new();
	tg_st *st = mkst(VIEW((2048,), (1,), 0, I64(0, 512)),
	                 VIEW((16, 32, 4), (128, 4, 1), 0, NULL));

	ASSERT_REAL_STRIDES(ir, st, "(?,4,1)");
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

/* The period of a tracker's reads along each axis, as text "(1,32)",
 * '0' for none. */
static const char *periods(tg_ir *ir, const tg_st *st, char *buf,
                           size_t len)
{
	size_t off = 0;

	for (size_t ax = 0; ax < tg_st_ndim(st); ax++) {
		int64_t q;
		ck_assert_int_eq(tg_st_axis_period(ir, st, ax, &q), 0);
		off += (size_t)snprintf(buf + off, len - off, "%s%lld",
		                        ax ? "," : "(", (long long)q);
	}
	snprintf(buf + off, len - off, ")");
	return buf;
}

/* A block format's reads: 16 rows of 64 values, blocks of 32 values in
 * 18 bytes (a 2-byte scale, then 16 bytes whose low and high nibbles
 * are the block's two halves).  The scale is read at the block index
 * (period 32 along the row), a value's byte at its place in the half
 * (period 32 through the half's div and mod); the rows are affine (a
 * row is 2 whole blocks); a plane masked by the half (the nibble
 * planes' views) has the same period; a padded row, a plain one, an
 * axis that is not there. */
START_TEST(axis_period)
{
	tg_ir *ir = tg_ir_new();
	char b[64];
	int64_t q;
	tg_st *scale = mkst(VIEW((32, 32), (18, 0), 0, NULL),
	                    VIEW((16, 64), (64, 1), 0, NULL));
	tg_st *byte = mkst(VIEW((32, 2, 16), (18, 0, 1), 2, NULL),
	                   VIEW((16, 64), (64, 1), 0, NULL));
	tg_st *plane = mkst(VIEW((32, 2, 16), (18, 0, 1), 2,
	                         I64(0, 32, 1, 2, 0, 16)),
	                    VIEW((16, 64), (64, 1), 0, NULL));
	tg_st *pad = mkst(VIEW((16, 64), (60, 1), 0, I64(0, 16, 0, 60)), NULL);
	tg_st *flat = mkst(VIEW((16, 64), (64, 1), 0, NULL), NULL);

	ck_assert_str_eq(periods(ir, scale, b, sizeof b), "(1,32)");
	ck_assert_str_eq(periods(ir, byte, b, sizeof b), "(1,32)");
	ck_assert_str_eq(periods(ir, plane, b, sizeof b), "(1,32)");
	ck_assert_str_eq(periods(ir, pad, b, sizeof b), "(1,0)");
	ck_assert_str_eq(periods(ir, flat, b, sizeof b), "(1,1)");
	ck_assert_int_eq(tg_st_axis_period(ir, flat, 2, &q), TG_EINVAL);
	ck_assert_int_eq(q, 0);
	ck_assert_str_eq(tg_last_error(),
	                 "axis_period: axis 2 out of range for 2 dims");
	tg_st_free(scale);
	tg_st_free(byte);
	tg_st_free(plane);
	tg_st_free(pad);
	tg_st_free(flat);
	tg_ir_free(ir);
}
END_TEST

/* simplify leaves one view whose strides are the real strides */
static void check_real_simplifies(tg_st *st)
{
	tg_ir *ir = tg_ir_new();
	char want[256], got[256];
	tg_st *s;

	real_strides(ir, st, 0, want, sizeof want);
	ck_assert_ptr_nonnull(s = tg_st_simplify(ir, st));
	ck_assert_uint_eq(s->nviews, 1);
	ck_assert_str_eq(real_strides(ir, s, 0, got, sizeof got), want);
	ck_assert(st_equiv(st, s));
	tg_st_free(s);
	tg_st_free(st);
	tg_ir_free(ir);
}

START_TEST(real_simplifies_1)
{
	check_real_simplifies(mkst(
		VIEW((1, 3, 2, 11, 4, 28), (0, 308, 0, 28, 0, 1), 0, NULL),
		VIEW((1, 3, 2, 11, 26, 1, 1, 3),
		     (0, 2464, 0, 112, 1, 0, 0, 29), 0, NULL)));
}
END_TEST

START_TEST(real_simplifies_2)
{
	check_real_simplifies(mkst(
		VIEW((8, 3, 3, 11, 2, 28), (924, 308, 0, 28, 0, 1), 0, NULL),
		VIEW((8, 1, 6, 10, 28, 3, 2, 1),
		     (5544, 0, 0, 56, 1, 1848, 672, 0), 0, NULL)));
}
END_TEST

START_TEST(view_minifies)
{
	tg_view *v = VIEW((10, 10), (10, 1), 0, NULL), *p, *m;

	ck_assert_int_eq(tg_view_minify(NULL, v, &m), 0);
	ck_assert_uint_eq(m->ndim, 1);
	tg_view_free(m);
	ck_assert_int_eq(tg_view_permute(NULL, v, 2, U32(1, 0), &p), 0);
	ck_assert_int_eq(tg_view_minify(NULL, p, &m), 0);
	ck_assert_uint_eq(m->ndim, 2);
	tg_view_free(m);
	tg_view_free(p);
	tg_view_free(v);
	v = mkview(4, I64(10, 10, 10, 10), NULL, 0, NULL);
	ck_assert_int_eq(tg_view_permute(NULL, v, 4, U32(1, 0, 2, 3), &p), 0);
	ck_assert_int_eq(tg_view_minify(NULL, p, &m), 0);
	ck_assert_uint_eq(m->ndim, 3);
	tg_view_free(m);
	tg_view_free(p);
	tg_view_free(v);
}
END_TEST

/* ------------------------------------------------- index expressions 2d */

/* The 25 trackers of TestIndexExpressions2d: a flat buffer shrunk by an
 * offset and reshaped to a 2d base shape. */
static const int64_t base_shapes[5][2] = {
	{ 30, 5 }, { 15, 10 }, { 15, 1 }, { 5, 10 }, { 5, 1 },
};
static const int64_t base_offsets[5] = { 0, 1, 15, 28, 10000 };

typedef void (*xform_fn)(tg_st **st, const int64_t *b);
typedef int64_t (*expect_fn)(const int64_t *i, const int64_t *b);

static tg_uop *idx_var(tg_ir *ir, size_t axis, int64_t lo, int64_t hi)
{
	char name[24];  /* "idx" and any size_t */

	snprintf(name, sizeof name, "idx%zu", axis);
	return lo == hi ? tg_sym_int(ir, lo) : tg_sym_var(ir, name, lo, hi);
}

/* Bounds of the index over the sub-box [lo, hi] stay inside the
 * buffer, and its value at both corners is the formula's. */
static void check_box(tg_ir *ir, const tg_st *st, const int64_t *lo,
                      const int64_t *hi, const int64_t *b, int64_t off,
                      expect_fn fn)
{
	tg_uop *ix[3], *ie, *ve;
	const tg_uop *vars[3];
	int64_t vals[3], got, numel = b[0] * b[1];
	size_t n = tg_st_ndim(st), nv, d;
	int corner;

	for (d = 0; d < n; d++)
		ix[d] = idx_var(ir, d, lo[d], hi[d]);
	ck_assert_int_eq(tg_st_expr_idxs(ir, st, ix, &ie, &ve), 0);
	ck_assert_int_ge(tg_uop_vmin(ie), off);
	ck_assert_int_le(tg_uop_vmax(ie), off + numel - 1);
	for (corner = 0; corner < 2; corner++) {
		const int64_t *at = corner ? hi : lo;

		for (d = 0, nv = 0; d < n; d++) {
			if (ix[d]->op != TG_DEFINE_VAR)
				continue;
			vars[nv] = ix[d];
			vals[nv++] = at[d];
		}
		ck_assert_int_eq(tg_sym_eval(ie, vars, vals, nv, &got), 0);
		ck_assert_int_eq(got, fn(at, b) + off);
	}
}

/* The sub-ranges tinygrad tries per axis. */
static void axis_ranges(int64_t s, int64_t r[5][2])
{
	int64_t m = s - 1;

	r[0][0] = 0, r[0][1] = 0;
	r[1][0] = 0, r[1][1] = m < 1 ? m : 1;
	r[2][0] = 0, r[2][1] = m;
	r[3][0] = m < 3 ? m : 3, r[3][1] = m < 6 ? m : 6;
	r[4][0] = m, r[4][1] = m;
}

static void check_one_2d(tg_st *st, const int64_t *b, int64_t off,
                         expect_fn fn)
{
	tg_ir *ir = tg_ir_new();
	int64_t r[3][5][2], lo[3], hi[3], shape[3];
	size_t n = tg_st_ndim(st), d;
	int k[3] = { 0 }, done = 0;

	for (d = 0; d < n; d++) {
		shape[d] = tg_st_shape(st)[d].c;
		axis_ranges(shape[d], r[d]);
		lo[d] = 0;
		hi[d] = shape[d] - 1;
	}
	check_box(ir, st, lo, hi, b, off, fn);
	while (!done) {
		for (d = 0; d < n; d++) {
			lo[d] = r[d][k[d]][0];
			hi[d] = r[d][k[d]][1];
		}
		check_box(ir, st, lo, hi, b, off, fn);
		for (d = 0; d < n && ++k[d] == 5; d++)
			k[d] = 0;
		done = d == n;
	}
	tg_ir_free(ir);
}

static void check_2d(xform_fn xf, expect_fn fn)
{
	int s, o;

	for (s = 0; s < 5; s++) {
		for (o = 0; o < 5; o++) {
			const int64_t *b = base_shapes[s];
			int64_t off = base_offsets[o], n = b[0] * b[1];
			tg_st *st = FROM_SHAPE(n + off);

			ST_SHRINK(st, off, off + n);
			st_reshape(&st, 2, b);
			if (xf)
				xf(&st, b);
			check_one_2d(st, b, off, fn);
			tg_st_free(st);
		}
	}
}

static int64_t e_noop(const int64_t *i, const int64_t *b)
{
	return i[0] * b[1] + i[1];
}

START_TEST(idx2d_noop)
{
	check_2d(NULL, e_noop);
}
END_TEST

static void x_permute(tg_st **st, const int64_t *b)
{
	(void)b;
	ST_PERMUTE(*st, 1, 0);
}

static int64_t e_permute(const int64_t *i, const int64_t *b)
{
	return i[0] + i[1] * b[1];
}

START_TEST(idx2d_permute)
{
	check_2d(x_permute, e_permute);
}
END_TEST

static void x_reshape(tg_st **st, const int64_t *b)
{
	ST_RESHAPE(*st, b[0], 1, b[1]);
}

static int64_t e_reshape(const int64_t *i, const int64_t *b)
{
	return i[0] * b[1] + i[2];
}

START_TEST(idx2d_reshape)
{
	check_2d(x_reshape, e_reshape);
}
END_TEST

static void x_reshape_expand(tg_st **st, const int64_t *b)
{
	tg_sint sh[3] = { tg_si(b[0]), tg_si(b[1]), tg_si(b[1]) };

	ST_RESHAPE(*st, b[0], 1, b[1]);
	take(st, tg_st_expand(NULL, *st, 3, sh));
}

START_TEST(idx2d_reshape_expand)
{
	check_2d(x_reshape_expand, e_reshape);
}
END_TEST

static void x_permute_reshape_1(tg_st **st, const int64_t *b)
{
	ST_PERMUTE(*st, 1, 0);
	ST_RESHAPE(*st, b[0] / 5, 1, b[1] * 5);
}

static int64_t e_permute_reshape_1(const int64_t *i, const int64_t *b)
{
	int64_t x = i[0] * (b[1] * 5) + i[2];

	return x % b[0] * b[1] + x / b[0];
}

START_TEST(idx2d_permute_reshape_1)
{
	check_2d(x_permute_reshape_1, e_permute_reshape_1);
}
END_TEST

static void x_permute_reshape_2(tg_st **st, const int64_t *b)
{
	ST_PERMUTE(*st, 1, 0);
	ST_RESHAPE(*st, 1, b[0] / 5, b[1] * 5);
}

static int64_t e_permute_reshape_2(const int64_t *i, const int64_t *b)
{
	int64_t x = i[1] * (b[1] * 5) + i[2];

	return x % b[0] * b[1] + x / b[0];
}

START_TEST(idx2d_permute_reshape_2)
{
	check_2d(x_permute_reshape_2, e_permute_reshape_2);
}
END_TEST

/* ----------------------------------------------- reshapes of masked views */

START_TEST(reshaping_splitting)
{
	so_st so;

	NEW(5, 10, 5, 10);
	PERMUTE(1, 0, 3, 2);
	PAD(0, 0, 0, 5, 0, 0, 0, 5);
	RESHAPE(10, 2, 5, 10, 2, 5);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_splitting_1)
{
	so_st so;

	NEW(1, 10, 1);
	PAD(0, 4, 0, 0, 1, 0);
	RESHAPE(5, 5, 2, 2);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_combining_1)
{
	so_st so;

	NEW(2, 1, 10);
	PAD(2, 6, 0, 0, 0, 0);
	RESHAPE(100);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_combining_2)
{
	so_st so;

	NEW(1, 1, 5);
	PAD(3, 6, 0, 0, 0, 5);
	RESHAPE(100);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_combining_3)
{
	so_st so;

	NEW(1, 1, 4);
	PAD(3, 6, 0, 0, 1, 5);
	RESHAPE(100);
	ck_assert_uint_eq(NVIEWS(), 1);
	ASSERT_MASK(LAST(), 31, 35);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_combining_4)
{
	so_st so;

	NEW(1, 1, 5, 5, 1, 1, 5);
	PAD(3, 6, 0, 0, 0, 5, 0, 0, 3, 6, 0, 0, 0, 5);
	RESHAPE(100, 5, 100);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_splitting_combining)
{
	so_st so;

	NEW(1, 5, 5);
	PAD(0, 4, 0, 5, 0, 0);
	RESHAPE(10, 25);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_only_1s)
{
	so_st so;

	NEW(1, 1, 1, 4, 1, 3, 5, 1);
	PAD(0, 4, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
	RESHAPE(5, 6, 3, 5);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	RESHAPE(1, 1, 5, 6, 3, 5, 1, 1);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	RESHAPE(1, 5, 6, 1, 3, 1, 5, 1);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_zero_mask_1)
{
	so_st so;

	NEW(1, 3, 2);
	PAD(0, 0, 0, 3, 0, 0);
	SHRINK(0, 1, 3, 6, 0, 2);
	RESHAPE(3, 2);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	RESHAPE(1, 3, 1, 2, 1);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_zero_mask_2)
{
	so_st so;

	NEW(1, 3, 2);
	PAD(0, 2, 0, 3, 0, 0);
	SHRINK(2, 3, 3, 6, 0, 2);
	RESHAPE(3, 2);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	RESHAPE(1, 3, 1, 2, 1);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_expanded_reshaped)
{
	so_st so;

	NEW(1, 3, 2, 1);
	EXPAND(5, 3, 2, 2);
	PAD(0, 0, 0, 3, 0, 0, 0, 0);
	RESHAPE(5, 2, 3, 2, 2);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_splitting_big)
{
	so_st so;

	NEW(1, 5, 1, 15, 1);
	PAD(0, 0, 0, 5, 0, 0, 0, 15, 0, 0);
	RESHAPE(10, 1, 30);
	PERMUTE(2, 1, 0);
	RESHAPE(2, 3, 5, 2, 5);
	ck_assert_uint_eq(NVIEWS(), 1);
	ASSERT_STRIDES(LAST(), 0, 5, 1, 0, 15);
	ASSERT_MASK(LAST(), 0, 1, 0, 3, 0, 5, 0, 1, 0, 5);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_combining_big)
{
	so_st so;

	NEW(1, 3, 1, 5, 3, 1);
	PAD(0, 0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0);
	RESHAPE(1, 1, 1, 105, 1, 1);
	ck_assert_uint_eq(NVIEWS(), 1);
	ASSERT_STRIDES(LAST(), 0, 0, 0, 1, 0, 0);
	ASSERT_MASK(LAST(), 0, 1, 0, 1, 0, 1, 30, 75, 0, 1, 0, 1);
	ck_assert(tg_sint_is(LAST()->offset, -30));
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_pad_1d)
{
	so_st so;

	NEW(4);
	PAD(2, 2);
	RESHAPE(4, 2);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(reshape_trailing_invalid_ones)
{
	/* a view with nothing valid reshapes to an empty mask */
	tg_st *st = mkst(VIEW((1, 1, 5), (0, 0, 1), -5,
	                      I64(1, 1, 0, 1, 0, 5)), NULL);

	ST_RESHAPE(st, 5);
	ck_assert_uint_eq(st->nviews, 1);
	ASSERT_MASK(st->views[0], 0, 0);
	tg_st_free(st);
}
END_TEST

START_TEST(reshape_stable_diffusion_needs_two_views)
{
	tg_st *st = mkst(VIEW((2, 1920, 32, 32), (1310720, 1024, 32, 1), 0,
	                      I64(0, 2, 0, 1280, 0, 32, 0, 32)), NULL);

	ST_RESHAPE(st, 2, 32, 240, 256);
	ck_assert_uint_eq(st->nviews, 2);
	tg_st_free(st);
}
END_TEST

START_TEST(reshape_doesnt_multiview)
{
	tg_st *st = mkst(VIEW((256, 256, 2, 2, 2, 2, 2, 256, 8, 2),
	                      (0, 8, 0, 4, 0, 0, 2, 16384, 2048, 1), 0, NULL),
	                 NULL);

	ST_RESHAPE(st, 128, 2, 256, 2, 2, 2, 2, 2, 256, 8, 2);
	ck_assert_uint_eq(st->nviews, 1);
	tg_st_free(st);
}
END_TEST

/* ------------------------------------------------- multiview simplify */

START_TEST(simplify_expand_contract_simple)
{
	so_st so;

	NEW(1, 10);
	EXPAND(10, 10);
	RESHAPE(100);
	ck_assert_uint_eq(NVIEWS(), 2);
	RESHAPE(10, 10);
	SIMPLIFY();
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(simplify_expand_contract_different_shape)
{
	so_st so;

	NEW(1, 10);
	EXPAND(10, 10);
	RESHAPE(100);
	ck_assert_uint_eq(NVIEWS(), 2);
	RESHAPE(2, 5, 2, 5);
	SIMPLIFY();
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(simplify_expand_contract_still_complex)
{
	so_st so;

	NEW(1, 10);
	EXPAND(10, 10);
	RESHAPE(100);
	ck_assert_uint_eq(NVIEWS(), 2);
	RESHAPE(5, 20);
	SIMPLIFY();
	ck_assert_uint_eq(NVIEWS(), 2);
	SAME();
	so_free(&so);
}
END_TEST

/* ------------------------------------------------------ complex chains */

START_TEST(complex_add_1s)
{
	so_st so;

	NEW(4, 4);
	PERMUTE(1, 0);
	RESHAPE(1, 4, 1, 4, 1);
	ck_assert(!CONTIGUOUS());
	PERMUTE(0, 3, 2, 1, 4);
	ck_assert(CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(complex_permute_1s_simple)
{
	so_st so;

	NEW(1, 16, 9, 9);
	PERMUTE(1, 0, 2, 3);
	ck_assert(CONTIGUOUS());
	SAME();
	so_free(&so);
	NEW(2, 16, 9, 9);
	PERMUTE(1, 0, 2, 3);
	ck_assert(!CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(complex_remove_1s_simple)
{
	so_st so;

	NEW(1, 16, 1, 1);
	RESHAPE(16);
	ck_assert(CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(complex_remove_1s)
{
	so_st so;

	NEW(1, 4, 1, 4, 1);
	PERMUTE(0, 3, 2, 1, 4);
	RESHAPE(4, 4);
	ck_assert(!CONTIGUOUS());
	PERMUTE(1, 0);
	ck_assert(CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(complex_permute_reshape)
{
	so_st so;

	NEW(4, 4);
	PERMUTE(1, 0);
	RESHAPE(2, 2, 2, 2);
	ck_assert_uint_eq(NVIEWS(), 1);
	ASSERT_STRIDES(LAST(), 2, 1, 8, 4);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(complex_factorize_split)
{
	so_st so;

	NEW(4, 4);
	PERMUTE(1, 0);
	RESHAPE(2, 2, 2, 2);
	PERMUTE(2, 3, 0, 1);
	ck_assert(CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(complex_factorize_combine)
{
	so_st so;

	NEW(4, 4, 4);
	PERMUTE(2, 0, 1);
	RESHAPE(4, 16);
	PERMUTE(1, 0);
	ck_assert(CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(complex_factorize_combine_add_ones)
{
	so_st so;

	NEW(4, 4, 4);
	PERMUTE(2, 0, 1);
	RESHAPE(4, 16, 1, 1);
	PERMUTE(1, 0, 2, 3);
	ck_assert(CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(complex_fancy_factorize)
{
	so_st so;

	NEW(32, 3, 3, 1);
	RESHAPE(8, 4, 3, 3);
	ck_assert_uint_eq(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(complex_super_complex_2_fail)
{
	so_st so;

	NEW(4, 4, 4);
	PERMUTE(2, 0, 1);
	RESHAPE(16, 4);
	ck_assert_uint_ne(NVIEWS(), 1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(complex_work)
{
	so_st so;

	NEW(64, 1024, 4);
	RESHAPE(1, 64, 128, 32);
	PERMUTE(0, 3, 1, 2);
	RESHAPE(1, 32, 1, 64, 128);
	PERMUTE(0, 3, 4, 1, 2);
	ck_assert(CONTIGUOUS());
	so_free(&so);
}
END_TEST

START_TEST(complex_work2)
{
	so_st so;

	NEW(64, 1024, 4);
	RESHAPE(1, 64, 128, 32);
	PERMUTE(0, 3, 1, 2);
	RESHAPE(1, 1, 32, 64, 128);
	PERMUTE(0, 3, 4, 1, 2);
	RESHAPE(64, 1024, 4);
	ck_assert(CONTIGUOUS());
	so_free(&so);
}
END_TEST

/* --------------------------------------------------- single (7,4) ops */

START_TEST(single_reshape)
{
	so_st so;

	NEW(7, 4);
	RESHAPE(7, 1, 4);
	ck_assert(CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(single_permute)
{
	so_st so;

	NEW(7, 4);
	PERMUTE(1, 0);
	ck_assert(!CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(single_shrink)
{
	so_st so;

	NEW(7, 4);
	SHRINK(1, 2, 0, 4);
	ck_assert(!CONTIGUOUS());
	ck_assert(tg_sint_is(LAST()->offset, 4));
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(single_double_permute)
{
	so_st so;

	NEW(7, 4);
	PERMUTE(1, 0);
	PERMUTE(1, 0);
	ck_assert(CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(single_reshape_permute)
{
	so_st so;

	NEW(7, 4);
	RESHAPE(7, 1, 4);
	PERMUTE(0, 1, 2);
	ck_assert(CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(single_reshape_permute_yes)
{
	so_st so;

	NEW(7, 4);
	RESHAPE(7, 1, 4);
	PERMUTE(0, 2, 1);
	ck_assert(CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(single_reshape_permute_no)
{
	so_st so;

	NEW(7, 4);
	RESHAPE(4, 7);
	PERMUTE(1, 0);
	ck_assert(!CONTIGUOUS());
	SAME();
	so_free(&so);
}
END_TEST

/* ----------------------------------------------------- fuzz failures */

START_TEST(fuzz_failure_1)
{
	so_st so;

	NEW(3, 3, 3);
	SHRINK(1, 2, 1, 3, 1, 3);
	RESHAPE(1, 4);
	SHRINK(0, 1, 1, 3);
	SAME();
	SIMPLIFY();
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(fuzz_failure_2)
{
	so_st so;

	NEW(3, 3, 3);
	STRIDE(1, 1, -2);
	RESHAPE(3, 6);
	SHRINK(1, 2, 1, 5);
	STRIDE(1, -1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(fuzz_failure_3)
{
	so_st so;

	NEW(3, 3, 3);
	SHRINK(0, 2, 0, 2, 0, 1);
	PERMUTE(1, 0, 2);
	RESHAPE(4);
	SHRINK(0, 3);
	STRIDE(-1);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(fuzz_failure_4)
{
	so_st so;

	NEW(3, 3, 3);
	RESHAPE(3, 3, 3, 1);
	PAD(0, 0, 0, 0, 0, 0, 1, 1);
	SHRINK(0, 2, 1, 2, 0, 2, 0, 1);
	EXPAND(2, 1, 2, 3);
	SAME();
	so_free(&so);
}
END_TEST

/* ------------------------------------------------------------ masked */

START_TEST(masked_pad_1x1)
{
	so_st so;

	NEW(1, 1);
	PAD(1, 1, 1, 1);
	ASSERT_SHAPE(LAST(), 3, 3);
	ASSERT_STRIDES(LAST(), 0, 0);
	ASSERT_MASK(LAST(), 1, 2, 1, 2);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(masked_pad_2x2)
{
	so_st so;

	NEW(2, 2);
	PAD(1, 1, 1, 1);
	ASSERT_STRIDES(LAST(), 2, 1);
	ck_assert(tg_sint_is(LAST()->offset, -3));
	ASSERT_MASK(LAST(), 1, 3, 1, 3);
	SAME();
	so_free(&so);
}
END_TEST

START_TEST(masked_pad_reshape)
{
	so_st so;

	NEW(1, 2);
	PAD(1, 0, 0, 1);
	RESHAPE(3, 2);
	SAME();
	so_free(&so);
	NEW(1, 2);
	PAD(1, 1, 0, 2);
	RESHAPE(4, 3);
	SAME();
	so_free(&so);
	NEW(1, 1, 1, 2);
	PAD(0, 2, 1, 2, 2, 2, 0, 4);
	RESHAPE(4, 3, 6, 5);
	SAME();
	so_free(&so);
}
END_TEST

/* -------------------------------------------- TestShapeTracker on (7,4) */

/* Runs "op a,b,...; op ..." on so: reshape, permute, expand, pad,
 * shrink, stride. */
static void run_chain(so_st *so, const char *chain)
{
	char buf[256], *save, *cmd, *op, *args;
	int64_t a[2 * TG_MAX_DIMS];
	uint32_t ax[TG_MAX_DIMS];
	size_t n, i;
	int rc;

	snprintf(buf, sizeof buf, "%s", chain);
	for (cmd = strtok_r(buf, ";", &save); cmd;
	     cmd = strtok_r(NULL, ";", &save)) {
		op = cmd + strspn(cmd, " ");
		args = op + strcspn(op, " ");
		*args++ = '\0';
		for (n = 0; *args && n < TG_ARRAY_LEN(a); n++)
			a[n] = strtoll(args, &args, 10), args += *args == ',';
		for (i = 0; i < n; i++)
			ax[i] = (uint32_t)a[i];
		rc = !strcmp(op, "reshape") ? so_reshape(so, n, a)
		   : !strcmp(op, "permute") ? so_permute(so, ax)
		   : !strcmp(op, "expand") ? so_expand(so, a)
		   : !strcmp(op, "pad") ? so_pad(so, a)
		   : !strcmp(op, "shrink") ? so_shrink(so, a)
		   : !strcmp(op, "stride") ? so_stride(so, a) : TG_EINTERNAL;
		ck_assert_msg(rc == 0, "%s: %s", op, tg_last_error());
	}
}

static const struct {
	const char *name, *chain;
} chains74[] = {
	{ "noop", "" },
	{ "simple_split", "permute 1,0; reshape 28" },
	{ "simple_pad", "pad 1,1,1,1" },
	{ "pad_shrink", "pad 1,1,1,1; shrink 0,4,0,4" },
	{ "pad_one_sided", "pad 0,1,0,0" },
	{ "pad_reshape", "pad 0,1,0,0; reshape 32" },
	{ "pad_pad", "pad 1,1,1,1; pad 1,1,1,1" },
	{ "pad_permute", "pad 1,1,2,2; permute 1,0" },
	{ "pad_expand", "reshape 7,4,1; pad 1,1,1,1,0,0; expand 9,6,4" },
	{ "pad_expand_alt", "pad 1,1,1,1; reshape 9,6,1; expand 9,6,4" },
	{ "pad_stride", "pad 1,4,1,3; stride 2,2" },
	{ "pad_stride_neg", "pad 1,2,1,0; stride -1,-1" },
	{ "pad_stride_both", "pad 1,2,1,0; stride -2,-2" },
	{ "shrink_pad", "shrink 0,4,0,4; pad 1,1,1,1" },
	{ "reshape", "reshape 4,7" },
	{ "permute", "permute 1,0" },
	{ "reshape_with_1", "reshape 7,1,4" },
	{ "expand", "reshape 7,1,4; expand 7,2,4" },
	{ "flip_0", "stride -1,1" },
	{ "flip_1", "stride 1,-1" },
	{ "flip_01", "stride -1,-1" },
	{ "slice_0", "shrink 1,7,0,4" },
	{ "slice_1", "shrink 0,7,1,4" },
	{ "slice_1c1", "shrink 0,1,0,1" },
	{ "slice_1c2", "shrink 1,2,1,2" },
	{ "double_permute", "permute 1,0; permute 1,0" },
	{ "slice_permute", "shrink 0,2,2,4; permute 1,0" },
	{ "slice_expand", "shrink 0,2,3,4; expand 2,10" },
	{ "double_stride", "stride 1,2; stride 2,1" },
	{ "stride", "stride 2,1" },
	{ "stride_int", "stride 1,2" },
	{ "stride_2", "stride 2,2" },
	{ "stride_n", "stride -2,1" },
	{ "stride_int_n", "stride -1,2" },
	{ "stride_2_n", "stride -2,-2" },
	{ "reshape_then_permute", "reshape 4,7; permute 1,0" },
	{ "reshape_then_expand", "reshape 4,7; reshape 4,1,7; expand 4,2,7" },
	{ "permute_then_reshape", "permute 1,0; reshape 7,4" },
	{ "expand_then_reshape",
	  "reshape 7,1,4; expand 7,2,4; reshape 4,2,7" },
	{ "combo", "permute 1,0; reshape 7,4; shrink 0,7,1,4; reshape 7,1,3; "
	  "expand 7,2,3; permute 2,0,1" },
};

START_TEST(tracker_7x4)
{
	so_st so;

	NEW(7, 4);
	run_chain(&so, chains74[_i].chain);
	SAME();
	so_free(&so);
}
END_TEST

/* ------------------------------------------------------------ real size */

static int64_t real_size(tg_st *st)
{
	tg_ir *ir = tg_ir_new();
	int64_t n;

	ck_assert_int_eq(tg_st_real_size(ir, st, &n), 0);
	tg_ir_free(ir);
	tg_st_free(st);
	return n;
}

START_TEST(size_simple)
{
	ck_assert_int_eq(real_size(FROM_SHAPE(100, 100)), 100 * 100);
}
END_TEST

START_TEST(size_expand)
{
	tg_st *st = FROM_SHAPE(100, 100);
	tg_sint sh[3] = { tg_si(100), tg_si(100), tg_si(100) };

	ST_RESHAPE(st, 100, 100, 1);
	take(&st, tg_st_expand(NULL, st, 3, sh));
	ck_assert_int_eq(real_size(st), 100 * 100);
}
END_TEST

START_TEST(size_expand_flatten)
{
	tg_st *st = FROM_SHAPE(100, 100);
	tg_sint sh[3] = { tg_si(100), tg_si(100), tg_si(100) };

	ST_RESHAPE(st, 100, 100, 1);
	take(&st, tg_st_expand(NULL, st, 3, sh));
	ST_RESHAPE(st, 100 * 100 * 100);
	ck_assert_int_eq(real_size(st), 100 * 100);
}
END_TEST

START_TEST(size_shrink_axis_0)
{
	tg_st *st = FROM_SHAPE(100, 100);

	ST_SHRINK(st, 0, 50, 0, 100);
	ck_assert_int_eq(real_size(st), 50 * 100);
}
END_TEST

START_TEST(size_shrink_axis_0_variable)
{
	tg_ir *ir = tg_ir_new();
	tg_st *st = FROM_SHAPE(100, 100), *r;
	tg_sint arg[4] = { tg_si(0), tg_si(0), tg_si(0), tg_si(100) };
	int64_t n;

	arg[1] = tg_sint_of(tg_sym_var(ir, "a", 0, 50));
	ck_assert_ptr_nonnull(r = tg_st_shrink(ir, st, 2, arg));
	ck_assert_int_eq(tg_st_real_size(ir, r, &n), 0);
	ck_assert_int_eq(n, 50 * 100);
	tg_st_free(r);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(size_shrink_axis_1)
{
	tg_st *st = FROM_SHAPE(100, 100);

	ST_SHRINK(st, 0, 100, 0, 50);
	ck_assert_int_eq(real_size(st), 9950);  /* the last row ends early */
}
END_TEST

START_TEST(size_empty_and_all_masked)
{
	tg_st *st = FROM_SHAPE(4, 0);

	ck_assert_int_eq(real_size(st), 0);
	st = FROM_SHAPE(4);
	ST_PAD(st, 2, 0);
	ST_SHRINK(st, 0, 2);
	ck_assert_int_eq(real_size(st), 0);
}
END_TEST

/* ---------------------------------------------------------- consecutive */

/* Tensor [[1,2,3,4],[5,6,7,8]] indexed as in TestConsecutive. */
START_TEST(consecutive_unmodified)
{
	tg_st *st = FROM_SHAPE(2, 4);

	ck_assert(tg_st_consecutive(st));
	ST_RESHAPE(st, 4, 2);
	ck_assert(tg_st_consecutive(st));
	ST_RESHAPE(st, 1, 8);
	ck_assert(tg_st_consecutive(st));
	tg_st_free(st);
}
END_TEST

START_TEST(consecutive_sliced)
{
	tg_st *st = FROM_SHAPE(2, 4), *c;

	ck_assert_ptr_nonnull(c = tg_st_copy(st));
	ST_SHRINK(c, 0, 1, 0, 4);                 /* t[0] */
	ST_RESHAPE(c, 4);
	ck_assert(tg_st_consecutive(c));
	tg_st_free(c);
	ck_assert_ptr_nonnull(c = tg_st_copy(st));
	ST_SHRINK(c, 0, 1, 1, 2);                 /* t[0, 1:2] */
	ST_RESHAPE(c, 1);
	ck_assert(tg_st_consecutive(c));
	tg_st_free(c);
	ck_assert_ptr_nonnull(c = tg_st_copy(st));
	ST_SHRINK(c, 1, 2, 0, 4);                 /* t[1] */
	ST_RESHAPE(c, 4);
	ck_assert(tg_st_consecutive(c));
	ck_assert(tg_sint_is(c->views[0]->offset, 4));
	tg_st_free(c);
	ck_assert_ptr_nonnull(c = tg_st_copy(st));
	ST_SHRINK(c, 0, 2, 1, 2);                 /* t[:, 1] */
	ST_RESHAPE(c, 2);
	ck_assert(!tg_st_consecutive(c));
	tg_st_free(c);
	tg_st_free(st);
}
END_TEST

START_TEST(consecutive_padded)
{
	tg_st *a = FROM_SHAPE(2, 4), *b = FROM_SHAPE(2, 4);

	ST_PAD(a, 1, 1, 0, 0);
	ST_PAD(b, 0, 0, 1, 1);
	ck_assert(!tg_st_consecutive(a));
	ck_assert(!tg_st_consecutive(b));
	tg_st_free(a);
	tg_st_free(b);
}
END_TEST

START_TEST(consecutive_const_and_ones)
{
	tg_st *st = from_shape(0, NULL), *c;
	tg_sint sh[2] = { tg_si(2), tg_si(4) };

	ck_assert(tg_st_consecutive(st));     /* Tensor(2) */
	ST_RESHAPE(st, 1, 1);                 /* Tensor.ones(2, 4) */
	take(&st, tg_st_expand(NULL, st, 2, sh));
	ck_assert(!tg_st_consecutive(st));
	ck_assert_ptr_nonnull(c = tg_st_copy(st));
	ST_SHRINK(c, 0, 1, 0, 4);             /* ones[0, :] */
	ST_RESHAPE(c, 4);
	ck_assert(!tg_st_consecutive(c));
	tg_st_free(c);
	ST_SHRINK(st, 0, 1, 0, 1);            /* ones[0, 0] */
	st_reshape(&st, 0, NULL);
	ck_assert(tg_st_consecutive(st));
	tg_st_free(st);
}
END_TEST

/* ------------------------------------------------------------- symbolic */

static tg_sint var(tg_ir *ir, const char *name, int64_t lo, int64_t hi)
{
	tg_uop *v = tg_sym_var(ir, name, lo, hi);

	ck_assert_ptr_nonnull(v);
	return tg_sint_of(v);
}

static tg_sint bound(tg_ir *ir, const char *name, int64_t lo, int64_t hi,
                     int64_t val)
{
	tg_uop *v = tg_sym_bind(ir, var(ir, name, lo, hi).u, val);

	ck_assert_ptr_nonnull(v);
	return tg_sint_of(v);
}

static tg_st *sym_shape(tg_ir *ir, size_t n, const tg_sint *shape)
{
	tg_st *st = tg_st_from_shape(ir, n, shape);

	ck_assert_msg(st != NULL, "%s", tg_last_error());
	return st;
}

static tg_st *sym_reshape(tg_ir *ir, tg_st *st, size_t n,
                          const tg_sint *shape)
{
	tg_st *r = tg_st_reshape(ir, st, n, shape);

	ck_assert_msg(r != NULL, "%s", tg_last_error());
	tg_st_free(st);
	return r;
}

static tg_st *sym_shrink(tg_ir *ir, tg_st *st, const tg_sint *arg)
{
	tg_st *r = tg_st_shrink(ir, st, tg_st_ndim(st), arg);

	ck_assert_msg(r != NULL, "%s", tg_last_error());
	tg_st_free(st);
	return r;
}

START_TEST(sym_st_real_strides)
{
	tg_ir *ir = tg_ir_new();
	tg_sint sh[2] = { var(ir, "x", 1, 100), tg_si(3) };
	tg_st *st = sym_shape(ir, 2, sh);

	ck_assert(tg_sints_eq(tg_st_shape(st), sh, 2));
	ASSERT_REAL_STRIDES(ir, st, "(3,1)");
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

/* Evaluates u with two variables. */
static int64_t eval2(const tg_uop *u, tg_uop *a, int64_t va, tg_uop *b,
                     int64_t vb)
{
	const tg_uop *vars[2] = { a, b };
	int64_t vals[2] = { va, vb }, r;

	ck_assert_int_eq(tg_sym_eval(u, vars, vals, 2, &r), 0);
	return r;
}

START_TEST(sym_expr_idxs)
{
	tg_ir *ir = tg_ir_new();
	tg_sint sh[2] = { var(ir, "x", 1, 100), tg_si(3) };
	tg_uop *ix[2] = { tg_sym_var(ir, "x", 0, 100),
	                  tg_sym_var(ir, "y", 0, 100) };
	tg_st *st = sym_shape(ir, 2, sh), *p;
	tg_uop *e1, *e2;

	ck_assert_int_eq(tg_st_expr_idxs(ir, st, ix, &e1, &e2), 0);
	ck_assert(tg_uop_is_const_int(e2, 1));
	ck_assert_int_eq(eval2(e1, ix[0], 7, ix[1], 2), 7 * 3 + 2);
	ck_assert_ptr_nonnull(p = tg_st_permute(ir, st, 2, U32(1, 0)));
	ck_assert_int_eq(tg_st_expr_idxs(ir, p, ix, &e1, &e2), 0);
	ck_assert(tg_uop_is_const_int(e2, 1));
	ck_assert_int_eq(eval2(e1, ix[0], 7, ix[1], 2), 2 * 3 + 7);
	tg_st_free(p);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_cat_dim0_strides)
{
	tg_ir *ir = tg_ir_new();
	tg_sint i = bound(ir, "i", 1, 5, 3), j = bound(ir, "j", 1, 5, 3);
	tg_sint k = bound(ir, "k", 1, 5, 3);
	tg_sint sh[2] = { tg_sint_add(ir, tg_sint_add(ir, i, j), k),
	                  tg_si(4) };
	tg_st *st = sym_shape(ir, 2, sh);

	ASSERT_REAL_STRIDES(ir, st, "(4,1)");
	tg_st_free(st);
	sh[0] = tg_sint_add(ir, tg_sint_mul(ir, i, tg_si(2)), tg_si(3));
	sh[1] = tg_si(3);
	st = sym_shape(ir, 2, sh);
	ASSERT_REAL_STRIDES(ir, st, "(3,1)");
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_cat_dim1_strides)
{
	tg_ir *ir = tg_ir_new();
	tg_sint i = bound(ir, "i", 1, 5, 4), j = bound(ir, "j", 1, 5, 4);
	tg_sint k = bound(ir, "k", 1, 5, 4);
	tg_sint sum = tg_sint_add(ir, tg_sint_add(ir, i, j), k);
	tg_sint sh[2] = { tg_si(3), sum }, s[2];
	uint8_t known[2];
	tg_st *st = sym_shape(ir, 2, sh);

	ck_assert_int_eq(tg_st_real_strides(ir, st, 0, s, known), 0);
	ck_assert(known[0] && known[1]);
	ck_assert(tg_sint_eq(s[0], sum));
	ck_assert(tg_sint_is(s[1], 1));
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

/* The variables and bound values of st: "x=3,y=4". */
static const char *var_vals(tg_ir *ir, const tg_st *st, char *buf,
                            size_t len)
{
	tg_uop_vec vars = { 0 }, binds = { 0 };
	tg_st *u;
	size_t i, used = 0;
	int64_t val;

	buf[0] = '\0';
	ck_assert_int_eq(tg_st_vars(st, &vars), 0);
	ck_assert_int_eq(tg_st_unbind(ir, st, &u, &binds), 0);
	ck_assert_uint_eq(vars.n, binds.n);
	for (i = 0; i < binds.n && used < len; i++) {
		ck_assert_ptr_eq(binds.v[i]->src[0], vars.v[i]);
		ck_assert_ptr_eq(binds.v[i]->op == TG_BIND ? binds.v[i] : NULL,
		                 binds.v[i]);
		ck_assert(tg_uop_is_const(binds.v[i]->src[1], NULL));
		val = binds.v[i]->src[1]->arg.v.i;
		used += (size_t)snprintf(buf + used, len - used, "%s%s=%lld",
		                         i ? "," : "", vars.v[i]->arg.name,
		                         (long long)val);
	}
	TG_VEC_FREE(&vars);
	TG_VEC_FREE(&binds);
	tg_st_free(u);
	return buf;
}

#define ASSERT_VAR_VALS(ir, st, want) do { \
	char vv_[256]; \
	ck_assert_str_eq(var_vals((ir), (st), vv_, sizeof vv_), (want)); \
} while (0)

START_TEST(sym_var_vals_empty)
{
	tg_ir *ir = tg_ir_new();
	tg_st *st = FROM_SHAPE(3, 4, 5);

	ASSERT_VAR_VALS(ir, st, "");
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_var_vals_shape)
{
	tg_ir *ir = tg_ir_new();
	tg_sint sh[2] = { bound(ir, "x", 1, 100, 3), tg_si(3) };
	tg_st *st = sym_shape(ir, 2, sh);

	ASSERT_VAR_VALS(ir, st, "x=3");
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_var_vals_offset)
{
	tg_ir *ir = tg_ir_new();
	tg_sint x = bound(ir, "x", 1, 100, 3);
	tg_sint arg[4] = { x, tg_sint_add(ir, x, tg_si(1)), tg_si(0),
	                   tg_si(3) };
	tg_st *st = sym_shrink(ir, FROM_SHAPE(4, 3), arg);

	ck_assert(tg_sint_eq(st->views[0]->offset,
	                     tg_sint_mul(ir, x, tg_si(3))));
	ASSERT_SHAPE(st->views[0], 1, 3);
	ASSERT_VAR_VALS(ir, st, "x=3");
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_var_vals_mask)
{
	tg_ir *ir = tg_ir_new();
	tg_sint sh[2] = { tg_si(3), tg_si(4) }, str[2] = { tg_si(4), tg_si(1) };
	tg_sint m[4] = { tg_si(0), bound(ir, "x", 1, 100, 3), tg_si(0),
	                 tg_si(4) };
	tg_view *v;
	tg_st *st;

	ck_assert_int_eq(tg_view_new(ir, 2, sh, str, tg_si(0), m, &v), 0);
	ck_assert_ptr_nonnull(v->mask);
	st = mkst(v, NULL);
	ASSERT_VAR_VALS(ir, st, "x=3");
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_var_vals_complex)
{
	tg_ir *ir = tg_ir_new();
	tg_sint x = bound(ir, "x", 1, 100, 3), y = bound(ir, "y", 1, 100, 4);
	tg_sint z = bound(ir, "z", 1, 100, 5);
	tg_sint sh[3] = { x, tg_si(5), y };
	tg_sint arg[6] = { tg_si(0), x, z, tg_sint_add(ir, z, tg_si(1)),
	                   tg_si(0), tg_si(3) };
	tg_st *st = sym_shrink(ir, sym_shape(ir, 3, sh), arg);

	ck_assert(tg_sint_eq(st->views[0]->offset, tg_sint_mul(ir, y, z)));
	ASSERT_VAR_VALS(ir, st, "x=3,y=4,z=5");
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_shrink_reshape)
{
	tg_ir *ir = tg_ir_new();
	tg_sint x = bound(ir, "x", 1, 100, 3), flat = tg_si(36);
	tg_sint arg[6] = { x, tg_sint_add(ir, x, tg_si(3)), tg_si(3), tg_si(7),
	                   tg_si(2), tg_si(5) };
	tg_st *st = sym_shrink(ir, FROM_SHAPE(10, 10, 10), arg);

	st = sym_reshape(ir, st, 1, &flat);
	ASSERT_VAR_VALS(ir, st, "x=3");
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_view_unbind)
{
	tg_ir *ir = tg_ir_new();
	tg_sint bv = bound(ir, "v", 1, 100, 3), v = var(ir, "v", 1, 100);
	tg_sint sh[2] = { bv, tg_si(4) }, ush[2] = { v, tg_si(4) };
	tg_st *st = sym_shape(ir, 2, sh), *want = sym_shape(ir, 2, ush), *u;
	tg_uop_vec binds = { 0 };

	ck_assert_int_eq(tg_st_unbind(ir, st, &u, &binds), 0);
	ck_assert(tg_st_eq(u, want));
	ck_assert_uint_eq(binds.n, 1);
	ck_assert_ptr_eq(binds.v[0], bv.u);
	TG_VEC_FREE(&binds);
	tg_st_free(u);
	tg_st_free(want);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_reshape_unbind)
{
	tg_ir *ir = tg_ir_new();
	tg_sint bv = bound(ir, "v", 1, 100, 3), v = var(ir, "v", 1, 100);
	tg_sint sh[2] = { bv, tg_si(4) }, ush[2] = { v, tg_si(4) };
	tg_st *st = sym_reshape(ir, FROM_SHAPE(3, 4), 2, sh), *u;
	tg_st *want = sym_shape(ir, 2, ush);

	ck_assert_uint_eq(st->nviews, 1);
	ck_assert_int_eq(tg_st_unbind(ir, st, &u, NULL), 0);
	ck_assert(tg_st_eq(u, want));
	ASSERT_VAR_VALS(ir, st, "v=3");
	tg_st_free(u);
	tg_st_free(want);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_shrink_unbind)
{
	tg_ir *ir = tg_ir_new();
	tg_sint bv = bound(ir, "v", 1, 100, 2), v = var(ir, "v", 1, 100);
	tg_sint arg[4] = { bv, tg_sint_add(ir, bv, tg_si(1)), tg_si(0),
	                   tg_si(4) };
	tg_sint sh[2] = { tg_si(1), tg_si(4) };
	tg_st *st = sym_shrink(ir, FROM_SHAPE(3, 4), arg), *u;
	tg_view *w;

	ck_assert_int_eq(tg_st_unbind(ir, st, &u, NULL), 0);
	ck_assert_int_eq(tg_view_new(ir, 2, sh, NULL,
	                             tg_sint_mul(ir, v, tg_si(4)), NULL, &w),
	                 0);
	ck_assert_uint_eq(u->nviews, 1);
	ck_assert(tg_view_eq(u->views[0], w));
	ASSERT_VAR_VALS(ir, st, "v=2");
	tg_view_free(w);
	tg_st_free(u);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_reshape_into_symbols)
{
	tg_ir *ir = tg_ir_new();
	int64_t i;

	for (i = 1; i <= 5; i++) {
		tg_sint vi = bound(ir, "i", 1, 5, i);
		tg_sint a[2] = { vi, tg_si(4) };
		tg_sint b[3] = { vi, tg_si(2), tg_si(3) };
		tg_sint c[2] = { tg_si(i), tg_si(4) };
		tg_st *st = sym_reshape(ir, FROM_SHAPE(i, 4), 2, a);

		ck_assert(tg_sints_eq(tg_st_shape(st), a, 2));
		st = sym_reshape(ir, st, 2, c);   /* and back to ints */
		ck_assert(tg_sints_eq(tg_st_shape(st), c, 2));
		tg_st_free(st);
		st = sym_reshape(ir, FROM_SHAPE(i, 6), 3, b);
		ck_assert(tg_sints_eq(tg_st_shape(st), b, 3));
		tg_st_free(st);
	}
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_two_symbol_reshape)
{
	tg_ir *ir = tg_ir_new();
	int64_t i, j;

	for (i = 1; i <= 5; i++) {
		for (j = 1; j <= 5; j++) {
			tg_sint vi = bound(ir, "i", 1, 5, i);
			tg_sint vj = bound(ir, "j", 1, 5, j);
			tg_sint a[2] = { vi, vj }, b[2] = { vj, vi };
			tg_st *st = sym_reshape(ir, FROM_SHAPE(i, j), 2, a);

			ck_assert(tg_sints_eq(tg_st_shape(st), a, 2));
			st = sym_reshape(ir, st, 2, b);
			ck_assert(tg_sints_eq(tg_st_shape(st), b, 2));
			tg_st_free(st);
		}
	}
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_mask_reshape_is_none)
{
	tg_ir *ir = tg_ir_new();
	tg_sint sp = bound(ir, "start_pos", 1, 128, 2);
	tg_sint n1 = tg_sint_add(ir, tg_si(1), sp);
	tg_sint sh[4] = { tg_si(1), n1, tg_si(16), tg_si(64) };
	tg_sint st[4] = { tg_si(0), tg_si(0), tg_si(64), tg_si(1) };
	tg_sint m[8] = { tg_si(0), tg_si(1), sp, n1, tg_si(0), tg_si(16),
	                 tg_si(0), tg_si(64) };
	tg_sint ns[5] = { tg_si(1), tg_si(1), n1, tg_si(16), tg_si(64) };
	tg_view *v, *r;

	ck_assert_int_eq(tg_view_new(ir, 4, sh, st, tg_si(1024), m, &v), 0);
	ck_assert_int_eq(tg_view_reshape(ir, v, 5, ns, &r), 0);
	ck_assert_ptr_null(r);
	tg_view_free(v);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_mask_reshape_is_none_2)
{
	tg_ir *ir = tg_ir_new();
	tg_sint sp = var(ir, "start_pos", 1, 128);
	tg_sint n1 = tg_sint_add(ir, tg_si(1), sp);
	tg_sint sh[5] = { tg_si(2), tg_si(1), n1, tg_si(16), tg_si(64) };
	tg_sint st[5] = { tg_si(0), tg_si(0), tg_si(1024), tg_si(64),
	                  tg_si(1) };
	tg_sint m[10] = { tg_si(1), tg_si(2), tg_si(0), tg_si(1), tg_si(0), n1,
	                  tg_si(0), tg_si(16), tg_si(0), tg_si(64) };
	tg_sint ns[4] = { tg_si(2), n1, tg_si(16), tg_si(64) };
	tg_view *v, *r;

	ck_assert_int_eq(tg_view_new(ir, 5, sh, st, tg_si(131072), m, &v), 0);
	ck_assert_int_eq(tg_view_reshape(ir, v, 4, ns, &r), 0);
	ck_assert_ptr_null(r);
	tg_view_free(v);
	tg_ir_free(ir);
}
END_TEST

/* Tensor.ones(3, 4): a const reshaped to (1,1) and expanded. */
static tg_st *ones34(void)
{
	tg_st *st = from_shape(0, NULL);
	tg_sint sh[2] = { tg_si(3), tg_si(4) };

	ST_RESHAPE(st, 1, 1);
	take(&st, tg_st_expand(NULL, st, 2, sh));
	return st;
}

START_TEST(sym_reshape_from_const)
{
	tg_ir *ir = tg_ir_new();
	tg_sint sh[2] = { tg_si(3), bound(ir, "i", 1, 5, 4) };
	tg_st *st = sym_reshape(ir, ones34(), 2, sh);

	ck_assert(tg_sints_eq(tg_st_shape(st), sh, 2));
	ck_assert(!tg_st_contiguous(st));
	ck_assert_uint_eq(st->nviews, 1);
	ASSERT_STRIDES(st->views[0], 0, 0);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_reshape_from_padded)
{
	tg_ir *ir = tg_ir_new();
	tg_sint sh[3] = { bound(ir, "i", 1, 5, 4), tg_si(3), tg_si(2) };
	tg_sint ex[3] = { tg_si(2), tg_si(3), tg_si(4) };
	tg_st *st = FROM_SHAPE(3, 4);
	tg_view *v;

	ST_RESHAPE(st, 1, 3, 4);
	take(&st, tg_st_expand(NULL, st, 3, ex));
	ST_PAD(st, 1, 1, 0, 0, 0, 0);
	ST_SHRINK(st, 0, 4, 0, 3, 1, 3);
	ck_assert_uint_eq(st->nviews, 1);
	v = st->views[0];
	ASSERT_SHAPE(v, 4, 3, 2);
	ASSERT_STRIDES(v, 0, 4, 1);
	ck_assert(tg_sint_is(v->offset, 1));
	ASSERT_MASK(v, 1, 3, 0, 3, 0, 2);
	st = sym_reshape(ir, st, 3, sh);
	ck_assert_uint_eq(st->nviews, 1);
	v = st->views[0];
	ck_assert(tg_sints_eq(v->shape, sh, 3));
	ASSERT_STRIDES(v, 0, 4, 1);
	ck_assert(tg_sint_is(v->offset, 1));
	ASSERT_MASK(v, 1, 3, 0, 3, 0, 2);
	ck_assert_int_eq(v->contiguous, 0);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_expand_into_symbols)
{
	tg_ir *ir = tg_ir_new();
	tg_sint vi = bound(ir, "i", 1, 5, 3), vj = bound(ir, "j", 1, 5, 3);
	tg_sint a[2] = { tg_si(3), vi }, b[3] = { tg_si(3), vi, tg_si(1) };
	tg_sint c[3] = { tg_si(3), vi, vj };
	tg_st *st = FROM_SHAPE(3, 1), *r;

	ck_assert_ptr_nonnull(r = tg_st_expand(ir, st, 2, a));
	ck_assert(tg_sints_eq(tg_st_shape(r), a, 2));
	tg_st_free(st);
	st = sym_reshape(ir, r, 3, b);
	ck_assert_ptr_nonnull(r = tg_st_expand(ir, st, 3, c));
	ck_assert(tg_sints_eq(tg_st_shape(r), c, 3));
	tg_st_free(r);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_plus_expands_constant)
{
	tg_ir *ir = tg_ir_new();
	int64_t i;

	for (i = 1; i <= 5; i++) {
		tg_sint sh[2] = { tg_si(3), bound(ir, "i", 1, 5, i) };
		tg_st *a = sym_reshape(ir, FROM_SHAPE(3, i), 2, sh);
		tg_st *c = sym_reshape(ir, from_shape(0, NULL), 2,
		                       (tg_sint[]){ tg_si(1), tg_si(1) }), *r;

		ck_assert_ptr_nonnull(r = tg_st_expand(ir, c, 2, sh));
		ck_assert(tg_sints_eq(tg_st_shape(r), tg_st_shape(a), 2));
		tg_st_free(r);
		tg_st_free(c);
		tg_st_free(a);
	}
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_shrink_symbols)
{
	tg_ir *ir = tg_ir_new();
	tg_sint vi = var(ir, "i", 1, 5);
	tg_sint arg[4] = { tg_si(0), tg_si(2), vi,
	                   tg_sint_add(ir, vi, tg_si(1)) };
	tg_st *st = sym_shrink(ir, FROM_SHAPE(3, 5), arg);

	ASSERT_SHAPE(st->views[0], 2, 1);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

/* tinygrad raised here (Node // Node); the IR divides by (v+4). */
START_TEST(sym_pad_reshape_expr)
{
	tg_ir *ir = tg_ir_new();
	tg_uop *var = tg_sym_var(ir, "v", 1, 100);
	tg_sint v = tg_sint_of(tg_sym_bind(ir, var, 5)), nine = tg_si(9);
	tg_sint p[2] = { tg_si(4), tg_si(0) };
	tg_st *st = sym_reshape(ir, FROM_SHAPE(5), 1, &v), *r;
	tg_uop *e, *ok;
	const tg_uop *vars[2];
	int64_t vals[2], got, valid, i;

	ck_assert_ptr_nonnull(r = tg_st_pad(ir, st, 1, p));
	tg_st_free(st);
	st = sym_reshape(ir, r, 1, &nine);
	ck_assert_int_eq(tg_st_expr_idxs(ir, st, NULL, &e, &ok), 0);
	vars[0] = tg_st_idx_var(ir, st, 0);
	vars[1] = var;  /* the value v is bound to */
	vals[1] = 5;
	for (i = 0; i < 9; i++) {
		vals[0] = i;
		ck_assert_int_eq(tg_sym_eval(ok, vars, vals, 2, &valid), 0);
		ck_assert_int_eq(valid, i >= 4);
		ck_assert_int_eq(tg_sym_eval(e, vars, vals, 2, &got), 0);
		ck_assert_int_eq(got, i - 4);
	}
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(sym_expr_idxs_llama)
{
	tg_ir *ir = tg_ir_new();
	tg_sint i = var(ir, "i", 1, 120);
	tg_sint sh[3] = { tg_sint_add(ir, i, tg_si(1)), tg_si(8), tg_si(4) };
	tg_sint str[3] = { tg_si(1),
	                   tg_sint_add(ir, tg_sint_mul(ir, i, tg_si(4)),
	                               tg_si(4)),
	                   tg_sint_add(ir, i, tg_si(1)) };
	tg_uop *g = tg_sym_var(ir, "gidx0", 0, 120);
	tg_uop *l = tg_sym_var(ir, "lidx1", 0, 7);
	tg_uop *ix[3] = { g, l, tg_sym_int(ir, 1) }, *e, *ok;
	const tg_uop *vars[3] = { i.u, g, l };
	int64_t vals[3], r, iv, gv, lv;
	tg_view *v;
	tg_st *st;

	ck_assert_int_eq(tg_view_new(ir, 3, sh, str, tg_si(0), NULL, &v), 0);
	st = mkst(v, NULL);
	ck_assert_int_eq(tg_st_expr_idxs(ir, st, ix, &e, &ok), 0);
	for (iv = 1; iv <= 120; iv += 17) {
		for (gv = 0; gv <= iv; gv += 5) {
			for (lv = 0; lv < 8; lv += 3) {
				vals[0] = iv, vals[1] = gv, vals[2] = lv;
				ck_assert_int_eq(tg_sym_eval(e, vars, vals, 3,
				                             &r), 0);
				ck_assert_int_eq(r, lv * (iv * 4 + 4) + 1 + gv +
				                 iv);
			}
		}
	}
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

/* ------------------------------------------------------- tracker math */

START_TEST(math_pad_shrink_removes_mask)
{
	tg_st *a = FROM_SHAPE(10, 10);

	ST_PAD(a, 0, 2, 0, 2);
	ST_SHRINK(a, 0, 10, 0, 10);
	ck_assert_uint_eq(a->nviews, 1);
	ck_assert_ptr_null(a->views[0]->mask);
	ck_assert(tg_st_contiguous(a));
	tg_st_free(a);
}
END_TEST

START_TEST(math_pad_shrink_leaves_mask)
{
	tg_st *a = FROM_SHAPE(10, 10);

	ST_PAD(a, 0, 2, 0, 2);
	ST_SHRINK(a, 0, 10, 0, 11);
	ck_assert_uint_eq(a->nviews, 1);
	ASSERT_MASK(a->views[0], 0, 10, 0, 10);
	tg_st_free(a);
}
END_TEST

START_TEST(math_reshape_makes_same)
{
	tg_st *x = FROM_SHAPE(2, 5), *x1, *s;

	ST_PAD(x, 2, 0, 0, 0);
	ST_RESHAPE(x, 2, 2, 5);
	ck_assert_ptr_nonnull(x1 = tg_st_copy(x));
	ST_RESHAPE(x1, 4, 5);
	ST_RESHAPE(x1, 2, 2, 5);
	ck_assert_ptr_nonnull(s = tg_st_simplify(NULL, x1));
	ck_assert(tg_st_eq(x, s));
	tg_st_free(s);
	tg_st_free(x1);
	tg_st_free(x);
}
END_TEST

START_TEST(math_simplify_is_correct)
{
	tg_st *m = mkst(VIEW((15, 3), (9, 1), 6, NULL),
	                VIEW((4, 3), (12, 4), 0, NULL)), *s;

	ck_assert_ptr_nonnull(s = tg_st_simplify(NULL, m));
	ck_assert(st_equiv(m, s));
	tg_st_free(s);
	tg_st_free(m);
}
END_TEST

START_TEST(math_add_reshape)
{
	tg_st *a = FROM_SHAPE(10, 10), *b = FROM_SHAPE(100), *c;

	ST_RESHAPE(a, 100);
	ck_assert_ptr_nonnull(c = tg_st_concat(NULL, a, b));
	ck_assert(tg_st_eq(c, b));
	tg_st_free(a);
	tg_st_free(b);
	tg_st_free(c);
}
END_TEST

START_TEST(math_add_permute)
{
	tg_st *a = FROM_SHAPE(10, 10), *b = FROM_SHAPE(10, 10), *c, *w;

	ST_PERMUTE(a, 1, 0);
	ST_PERMUTE(b, 1, 0);
	ck_assert_ptr_nonnull(c = tg_st_concat(NULL, a, b));
	w = FROM_SHAPE(10, 10);
	ck_assert(tg_st_eq(c, w));
	tg_st_free(a);
	tg_st_free(b);
	tg_st_free(c);
	tg_st_free(w);
}
END_TEST

START_TEST(math_plus_real1)
{
	tg_st *st = FROM_SHAPE(15, 9), *backup, *b, *sum;

	ST_SHRINK(st, 0, 15, 6, 9);
	backup = tg_st_copy(st);
	b = from_shape(2, I64(15, 3));
	ST_RESHAPE(st, 45);
	ST_RESHAPE(b, 45);
	ST_STRIDE(st, 4);
	ST_STRIDE(b, 4);
	ST_RESHAPE(st, 4, 3);
	ST_RESHAPE(b, 4, 3);
	ck_assert_ptr_nonnull(sum = tg_st_concat(NULL, backup, b));
	ck_assert(st_equiv(sum, st));
	tg_st_free(sum);
	tg_st_free(b);
	tg_st_free(backup);
	tg_st_free(st);
}
END_TEST

START_TEST(math_off_by_one)
{
	tg_st *a = mkst(VIEW((5,), (1,), 0, NULL), VIEW((5,), (1,), 0, NULL));
	tg_st *b = mkst(VIEW((4,), (1,), 0, NULL), VIEW((5,), (1,), 0, NULL));
	tg_ir *ir = tg_ir_new();
	int64_t map[5];
	char msg[128];

	ck_assert_int_eq(so_eval(ir, b, map, msg, sizeof msg), 0);
	ck_assert(!so_compare(ir, a, 1, I64(5), (int64_t[]){ 0, 1, 2, 3, 4 },
	                      msg, sizeof msg));
	ck_assert(so_compare(ir, a, 1, I64(5), map, msg, sizeof msg));
	tg_ir_free(ir);
	tg_st_free(a);
	tg_st_free(b);
}
END_TEST

START_TEST(math_self_add_symbolic)
{
	tg_ir *ir = tg_ir_new();
	tg_sint j = bound(ir, "j", 0, 20, 10);
	tg_sint sh[2] = { tg_si(10), j }, sh3[3] = { tg_si(5), tg_si(2), j };
	tg_st *x = sym_reshape(ir, FROM_SHAPE(10, 10), 2, sh), *y, *out;

	ck_assert_ptr_nonnull(out = tg_st_concat(ir, x, x));
	ck_assert(tg_st_eq(out, x));
	tg_st_free(out);
	ck_assert_ptr_nonnull(y = tg_st_reshape(ir, x, 3, sh3));
	ck_assert_ptr_nonnull(out = tg_st_concat(ir, y, x));
	ck_assert(tg_st_eq(out, x));
	tg_st_free(out);
	tg_st_free(y);
	tg_st_free(x);
	tg_ir_free(ir);
}
END_TEST

START_TEST(math_merge_symbolic_views)
{
	tg_ir *ir = tg_ir_new();
	tg_sint i = var(ir, "i", 1, 10);
	tg_sint sh[3] = { i, i, tg_si(3) };
	tg_sint s1[3] = { tg_si(3), tg_si(0), tg_si(1) };
	tg_sint s2[3] = { tg_sint_mul(ir, i, tg_si(3)), tg_si(3), tg_si(1) };
	tg_view *v1, *v2;
	tg_st *a, *b, *c;

	ck_assert_int_eq(tg_view_new(ir, 3, sh, s1, tg_si(0), NULL, &v1), 0);
	ck_assert_int_eq(tg_view_new(ir, 3, sh, s2, tg_si(0), NULL, &v2), 0);
	ck_assert_int_eq(v2->contiguous, 1);
	a = mkst(v1, NULL);
	b = mkst(v2, NULL);
	ck_assert_ptr_nonnull(c = tg_st_concat(ir, a, b));
	ck_assert(tg_st_eq(c, a));  /* a contiguous view on top: no change */
	tg_st_free(a);
	tg_st_free(b);
	tg_st_free(c);
	tg_ir_free(ir);
}
END_TEST

/* x + x.invert(shape) must be the identity on shape. */
static void check_invert(tg_st *x, size_t n, const int64_t *shape,
                         int exact)
{
	tg_sint sh[TG_MAX_DIMS];
	tg_st *inv, *ap, *a = from_shape(n, shape);

	so_sints(n, shape, sh);
	ck_assert_int_eq(tg_st_invert(NULL, x, n, sh, &inv), 0);
	ck_assert_ptr_nonnull(inv);
	ck_assert_ptr_nonnull(ap = tg_st_concat(NULL, x, inv));
	ck_assert(exact ? tg_st_eq(ap, a) : st_equiv(ap, a));
	tg_st_free(ap);
	tg_st_free(inv);
	tg_st_free(a);
	tg_st_free(x);
}

START_TEST(math_invert_reshape)
{
	tg_st *x = FROM_SHAPE(10, 10), *inv, *ap, *b;
	tg_sint sh[2] = { tg_si(10), tg_si(10) };

	ST_RESHAPE(x, 5, 20);
	ck_assert_int_eq(tg_st_invert(NULL, x, 2, sh, &inv), 0);
	ck_assert_ptr_nonnull(inv);
	b = FROM_SHAPE(5, 20);
	ck_assert_ptr_nonnull(ap = tg_st_concat(NULL, b, inv));
	tg_st_free(b);
	b = FROM_SHAPE(10, 10);
	ck_assert(tg_st_eq(ap, b));
	tg_st_free(b);
	tg_st_free(ap);
	tg_st_free(inv);
	tg_st_free(x);
}
END_TEST

START_TEST(math_invert_permute)
{
	tg_st *x = FROM_SHAPE(5, 20);

	ST_PERMUTE(x, 1, 0);
	check_invert(x, 2, I64(5, 20), 1);
}
END_TEST

START_TEST(math_invert_permute_3)
{
	tg_st *x = FROM_SHAPE(8, 4, 5);

	ST_PERMUTE(x, 1, 2, 0);
	check_invert(x, 3, I64(8, 4, 5), 1);
}
END_TEST

START_TEST(math_invert_real1)
{
	tg_st *x = FROM_SHAPE(3, 6, 10);

	ST_RESHAPE(x, 3, 3, 2, 10);
	ST_PERMUTE(x, 2, 1, 3, 0);
	check_invert(x, 3, I64(3, 6, 10), 1);
}
END_TEST

static void check_no_invert(tg_st *x, size_t n, const int64_t *shape)
{
	tg_sint sh[TG_MAX_DIMS];
	tg_st *inv;

	so_sints(n, shape, sh);
	ck_assert_int_eq(tg_st_invert(NULL, x, n, sh, &inv), 0);
	ck_assert_ptr_null(inv);
	tg_st_free(x);
}

START_TEST(math_cant_invert_expand)
{
	tg_st *x = FROM_SHAPE(10, 1);
	tg_sint sh[2] = { tg_si(10), tg_si(10) };

	take(&x, tg_st_expand(NULL, x, 2, sh));
	check_no_invert(x, 2, I64(10, 1));
}
END_TEST

START_TEST(math_cant_invert_shrink)
{
	tg_st *x = FROM_SHAPE(10, 10);

	ST_SHRINK(x, 0, 10, 2, 8);
	check_no_invert(x, 2, I64(10, 10));
}
END_TEST

START_TEST(math_can_invert_flip)
{
	tg_st *x = FROM_SHAPE(20, 10);

	ST_STRIDE(x, -1, 1);
	check_invert(x, 2, I64(20, 10), 0);
}
END_TEST

START_TEST(math_can_invert_flip_permute)
{
	tg_st *x = FROM_SHAPE(20, 10);

	ST_PERMUTE(x, 1, 0);
	ST_STRIDE(x, -1, 1);
	check_invert(x, 2, I64(20, 10), 0);
}
END_TEST

START_TEST(math_cant_invert_stride)
{
	tg_st *x = FROM_SHAPE(10, 10);

	ST_STRIDE(x, 2, 2);
	check_no_invert(x, 2, I64(10, 10));
}
END_TEST

START_TEST(math_invert_failure)
{
	tg_st *x = FROM_SHAPE(2, 5);

	ST_PAD(x, 2, 0, 0, 0);
	ST_RESHAPE(x, 2, 2, 5);
	ST_RESHAPE(x, 4, 5);
	check_invert(x, 2, I64(2, 5), 0);
}
END_TEST

/* ---------------------------------------------------------- unit strides */

START_TEST(unit_stride_axes_and_masked_axes)
{
	tg_ir *ir = tg_ir_new();
	tg_st *st = FROM_SHAPE(4, 6);
	uint32_t axes[2];
	size_t n;
	int masked;

	ST_PERMUTE(st, 1, 0);
	ck_assert_int_eq(tg_st_unit_stride_axes(ir, st, 0, axes, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(axes[0], 0);    /* shape (6,4), strides (1,6) */
	ST_PAD(st, 0, 0, 1, 1);
	ck_assert_int_eq(tg_st_axis_is_masked(ir, st, 0, &masked), 0);
	ck_assert_int_eq(masked, 0);
	ck_assert_int_eq(tg_st_axis_is_masked(ir, st, 1, &masked), 0);
	ck_assert_int_eq(masked, 1);
	ASSERT_REAL_STRIDES(ir, st, "(1,?)");
	ck_assert_int_eq(tg_st_unit_stride_axes(ir, st, 0, axes, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(axes[0], 0);
	ck_assert_int_eq(tg_st_unit_stride_axes(ir, st, 1, axes, &n), 0);
	ck_assert_uint_eq(n, 1);  /* axis 1 has stride 6 when valid */
	ck_assert_int_eq(tg_st_axis_is_masked(ir, st, 2, &masked), TG_EINVAL);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(expr_node_flat_index)
{
	tg_ir *ir = tg_ir_new();
	tg_st *st = FROM_SHAPE(3, 4);
	tg_uop *flat = tg_sym_var(ir, "idx", 0, 11), *e, *ok;
	const tg_uop *vars[1] = { flat };
	int64_t f, r;

	ST_PERMUTE(st, 1, 0);     /* shape (4,3), element (i,j) at j*4+i */
	ck_assert_int_eq(tg_st_expr_node(ir, st, flat, &e, &ok), 0);
	ck_assert(tg_uop_is_const_int(ok, 1));
	for (f = 0; f < 12; f++) {
		ck_assert_int_eq(tg_sym_eval(e, vars, &f, 1, &r), 0);
		ck_assert_int_eq(r, (f % 3) * 4 + f / 3);
	}
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(tracker_format)
{
	tg_st *st = FROM_SHAPE(1, 10);
	tg_sint sh[2] = { tg_si(10), tg_si(10) };
	char *s;

	take(&st, tg_st_expand(NULL, st, 2, sh));
	ST_RESHAPE(st, 100);
	s = tg_st_format(st);
	ck_assert_str_eq(s, "ShapeTracker(views=(View(shape=(10,10), "
	                 "strides=(0,1), offset=0, mask=None, contiguous=0), "
	                 "View(shape=(100,), strides=(1,), offset=0, "
	                 "mask=None, contiguous=1)))");
	free(s);
	tg_st_free(st);
}
END_TEST

/* --------------------------------------------------------- bad input */

/* The op fails with TG_EINVAL, says `msg`, and leaves st alone. */
#define ASSERT_FAILS(call, msg) do { \
	tg_clear_error(); \
	ck_assert_ptr_null(call); \
	ck_assert_int_eq(tg_last_status(), TG_EINVAL); \
	ck_assert_str_eq(tg_last_error(), (msg)); \
} while (0)

START_TEST(error_reshape_size)
{
	tg_st *st = FROM_SHAPE(3, 4);
	tg_sint sh[1] = { tg_si(5) };

	ASSERT_FAILS(tg_st_reshape(NULL, st, 1, sh), "reshape: cannot "
	             "reshape (3,4) to (5,): 12 elements vs 5");
	ASSERT_SHAPE(st->views[0], 3, 4);
	tg_st_free(st);
}
END_TEST

START_TEST(error_reshape_negative)
{
	tg_st *st = FROM_SHAPE(3, 4);
	tg_sint sh[2] = { tg_si(-1), tg_si(12) };

	ASSERT_FAILS(tg_st_reshape(NULL, st, 2, sh),
	             "reshape: negative size in (-1,12)");
	tg_st_free(st);
}
END_TEST

START_TEST(error_reshape_empty_to_nonempty)
{
	tg_st *st = FROM_SHAPE(0, 3);
	tg_sint sh[1] = { tg_si(2) };

	ASSERT_FAILS(tg_st_reshape(NULL, st, 1, sh), "reshape: cannot "
	             "reshape (0,3) to (2,): 0 elements vs 2");
	tg_st_free(st);
}
END_TEST

START_TEST(error_reshape_unbound_symbol)
{
	tg_ir *ir = tg_ir_new();
	tg_sint vi = bound(ir, "i", 1, 10, 4);
	tg_sint sh[2] = { tg_si(3), tg_sint_add(ir, vi, tg_si(1)) };
	tg_st *st = FROM_SHAPE(3, 4);

	ASSERT_FAILS(tg_st_reshape(ir, st, 2, sh), "reshape: size (i+1) "
	             "is not a bound variable");
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(error_reshape_symbolic_noncontiguous)
{
	tg_ir *ir = tg_ir_new();
	tg_sint vi = bound(ir, "i", 1, 5, 4);
	tg_sint a[2] = { tg_si(3), vi };
	tg_st *ones = ones34(), *st = ones34();

	ST_RESHAPE(ones, 3, 4, 1);  /* Tensor.ones(3, 4, 1) */
	ASSERT_FAILS(tg_st_reshape(ir, ones, 2, a), "reshape: cannot "
	             "reshape non-contiguous (3,4,1) to symbolic (3,i)");
	ST_RESHAPE(st, 4, 3);       /* Tensor.ones(4, 3) */
	ASSERT_FAILS(tg_st_reshape(ir, st, 2, a), "reshape: cannot "
	             "reshape non-contiguous (4,3) to symbolic (3,i)");
	tg_st_free(ones);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(error_expand_non_1_axis)
{
	tg_st *st = FROM_SHAPE(3, 4);
	tg_sint sh[2] = { tg_si(6), tg_si(4) };

	ASSERT_FAILS(tg_st_expand(NULL, st, 2, sh), "expand: cannot expand "
	             "(3,4) to (6,4): axis 0 has size 3, not 1");
	tg_st_free(st);
}
END_TEST

START_TEST(error_expand_count)
{
	tg_st *st = FROM_SHAPE(3, 1);
	tg_sint sh[3] = { tg_si(3), tg_si(4), tg_si(5) };

	ASSERT_FAILS(tg_st_expand(NULL, st, 3, sh),
	             "expand: 3 sizes for shape (3,1) (2 dims)");
	tg_st_free(st);
}
END_TEST

START_TEST(error_expand_empty)
{
	tg_st *st = FROM_SHAPE(0, 2);
	tg_sint sh[2] = { tg_si(0), tg_si(3) };

	ASSERT_FAILS(tg_st_expand(NULL, st, 2, sh), "expand: cannot expand "
	             "(0,2) to (0,3): axis 1 has size 2, not 1");
	tg_st_free(st);
}
END_TEST

START_TEST(error_pad_negative)
{
	tg_st *st = FROM_SHAPE(3, 4);
	tg_sint arg[4] = { tg_si(0), tg_si(0), tg_si(-1), tg_si(2) };

	ASSERT_FAILS(tg_st_pad(NULL, st, 2, arg),
	             "pad: negative padding (-1,2) on axis 1");
	tg_st_free(st);
}
END_TEST

START_TEST(error_pad_count)
{
	tg_st *st = FROM_SHAPE(3, 4);
	tg_sint arg[2] = { tg_si(1), tg_si(1) };

	ASSERT_FAILS(tg_st_pad(NULL, st, 1, arg),
	             "pad: 1 pairs for shape (3,4) (2 dims)");
	tg_st_free(st);
}
END_TEST

START_TEST(error_permute_not_permutation)
{
	tg_st *st = FROM_SHAPE(3, 4);

	ASSERT_FAILS(tg_st_permute(NULL, st, 2, U32(0, 0)),
	             "permute: (0,0) is not a permutation of 2 axes");
	ASSERT_FAILS(tg_st_permute(NULL, st, 2, U32(1, 2)),
	             "permute: (1,2) is not a permutation of 2 axes");
	ASSERT_FAILS(tg_st_permute(NULL, st, 3, U32(0, 1, 2)),
	             "permute: 3 axes for shape (3,4) (2 dims)");
	tg_st_free(st);
}
END_TEST

START_TEST(error_shrink_out_of_range)
{
	tg_st *st = FROM_SHAPE(3, 4);
	tg_sint a[4] = { tg_si(0), tg_si(3), tg_si(2), tg_si(5) };
	tg_sint b[4] = { tg_si(2), tg_si(1), tg_si(0), tg_si(4) };
	tg_sint c[4] = { tg_si(-1), tg_si(1), tg_si(0), tg_si(4) };

	ASSERT_FAILS(tg_st_shrink(NULL, st, 2, a),
	             "shrink: (2,5) out of range for axis 1 of size 4");
	ASSERT_FAILS(tg_st_shrink(NULL, st, 2, b),
	             "shrink: (2,1) out of range for axis 0 of size 3");
	ASSERT_FAILS(tg_st_shrink(NULL, st, 2, c),
	             "shrink: (-1,1) out of range for axis 0 of size 3");
	ASSERT_FAILS(tg_st_shrink(NULL, st, 1, a),
	             "shrink: 1 pairs for shape (3,4) (2 dims)");
	tg_st_free(st);
}
END_TEST

START_TEST(error_stride_zero)
{
	tg_st *st = FROM_SHAPE(3, 4);

	ASSERT_FAILS(tg_st_stride(NULL, st, 2, I64(2, 0)),
	             "stride: invalid multiplier 0 on axis 1");
	ASSERT_FAILS(tg_st_stride(NULL, st, 1, I64(2)),
	             "stride: 1 multipliers for shape (3,4) (2 dims)");
	ASSERT_FAILS(tg_st_flip(NULL, st, 1, (const uint8_t[]){ 1 }),
	             "flip: 1 flags for 2 dims");
	tg_st_free(st);
}
END_TEST

START_TEST(error_too_many_dims)
{
	int64_t shape[TG_MAX_DIMS + 1];
	tg_sint sh[TG_MAX_DIMS + 1];
	tg_st *st = FROM_SHAPE(1);
	size_t i;

	for (i = 0; i <= TG_MAX_DIMS; i++)
		shape[i] = 1;
	so_sints(TG_MAX_DIMS + 1, shape, sh);
	ASSERT_FAILS(tg_st_from_shape(NULL, TG_MAX_DIMS + 1, sh),
	             "view: 33 dims, at most 32");
	ASSERT_FAILS(tg_st_reshape(NULL, st, TG_MAX_DIMS + 1, sh),
	             "reshape: 33 dims, at most 32");
	tg_st_free(st);
}
END_TEST

START_TEST(error_size_overflow)
{
	tg_sint sh[3] = { tg_si(1 << 30), tg_si(1 << 30), tg_si(1 << 30) };

	ASSERT_FAILS(tg_st_from_shape(NULL, 3, sh), "view: (1073741824,"
	             "1073741824,1073741824) has too many elements");
}
END_TEST

START_TEST(error_unbind_conflicting_binds)
{
	tg_ir *ir = tg_ir_new();
	tg_sint a = bound(ir, "x", 1, 10, 3), b = bound(ir, "x", 1, 10, 4);
	tg_sint sh[2] = { a, b };
	tg_st *st = sym_shape(ir, 2, sh), *u;
	tg_uop_vec binds = { 0 };

	ck_assert_int_eq(tg_st_unbind(ir, st, &u, &binds), TG_EINVAL);
	ck_assert_ptr_null(u);
	ck_assert_error("unbind: variable x is bound to two values");
	TG_VEC_FREE(&binds);
	tg_st_free(st);
	tg_ir_free(ir);
}
END_TEST

START_TEST(error_no_views)
{
	ASSERT_FAILS(tg_st_from_views(NULL, 0), "shapetracker: no views");
}
END_TEST

/* ------------------------------------------------- allocation failure */

/* Every allocation of a long sequence of ops fails in turn
 * (tests/failalloc.h). */
#ifdef TL_INTERPOSED
/* The status of a failed call that returned NULL. */
static int oom_status(void)
{
	return tg_last_status() ? tg_last_status() : TG_EINTERNAL;
}

/* Replaces *st by r; the op's status when r is NULL. */
static int oom_step(tg_st **st, tg_st *r)
{
	if (!r)
		return oom_status();
	tg_st_free(*st);
	*st = r;
	return 0;
}

/* The tracker ops in a row on integer shapes. */
static int oom_movement(tg_ir *ir, tg_st **st)
{
	tg_sint r1[3] = { tg_si(3), tg_si(8), tg_si(1) };
	tg_sint ex[3] = { tg_si(3), tg_si(8), tg_si(2) };
	tg_sint r2[2] = { tg_si(6), tg_si(8) };
	tg_sint p[6] = { tg_si(1), tg_si(0), tg_si(0), tg_si(1), tg_si(0),
	                 tg_si(0) };
	tg_sint k[6] = { tg_si(0), tg_si(3), tg_si(1), tg_si(9), tg_si(0),
	                 tg_si(2) };
	int rc;

	if ((rc = oom_step(st, tg_st_permute(ir, *st, 2, U32(1, 0)))) ||
	    (rc = oom_step(st, tg_st_reshape(ir, *st, 3, r1))) ||
	    (rc = oom_step(st, tg_st_expand(ir, *st, 3, ex))) ||
	    (rc = oom_step(st, tg_st_pad(ir, *st, 3, p))) ||
	    (rc = oom_step(st, tg_st_shrink(ir, *st, 3, k))) ||
	    (rc = oom_step(st, tg_st_stride(ir, *st, 3, I64(1, -1, 1)))) ||
	    (rc = oom_step(st, tg_st_reshape(ir, *st, 2, r2))))
		return rc;
	return oom_step(st, tg_st_simplify(ir, *st));
}

/* What reads a tracker: expressions, strides, sizes, text. */
static int oom_readers(tg_ir *ir, const tg_st *st)
{
	tg_sint s[TG_MAX_DIMS];
	uint8_t known[TG_MAX_DIMS];
	uint32_t axes[TG_MAX_DIMS];
	tg_uop *idx, *valid;
	int64_t size;
	size_t n;
	char *text;
	int rc;

	if ((rc = tg_st_expr_idxs(ir, st, NULL, &idx, &valid)) ||
	    (rc = tg_st_real_strides(ir, st, 0, s, known)) ||
	    (rc = tg_st_unit_stride_axes(ir, st, 1, axes, &n)) ||
	    (rc = tg_st_real_size(ir, st, &size)))
		return rc;
	if (!(text = tg_st_format(st)))
		return TG_ENOMEM;
	free(text);
	return 0;
}

/* A symbolic tracker: its variables, and it unbound. */
static int oom_symbolic(tg_ir *ir, tg_st **x)
{
	tg_uop *v = tg_sym_bind(ir, tg_sym_var(ir, "v", 1, 9), 5);
	tg_sint sym[2] = { tg_si(4), tg_sint_of(v) };
	tg_uop_vec binds = { 0 }, vars = { 0 };
	tg_st *u = NULL;
	int rc;

	if (!v)
		return oom_status();
	if (!(rc = oom_step(x, tg_st_reshape(ir, *x, 2, sym))) &&
	    !(rc = tg_st_vars(*x, &vars)))
		rc = tg_st_unbind(ir, *x, &u, &binds);
	TG_VEC_FREE(&binds);
	TG_VEC_FREE(&vars);
	tg_st_free(u);
	return rc;
}

/* Concat, invert, and the symbolic calls. */
static int oom_math(tg_ir *ir, const tg_st *st)
{
	tg_sint sh[2] = { tg_si(5), tg_si(4) };
	tg_st *x = NULL, *inv = NULL, *c = tg_st_concat(ir, st, st);
	int rc = c ? 0 : oom_status();

	if (!rc && !(x = tg_st_from_shape(ir, 2, sh)))
		rc = oom_status();
	if (!rc)
		rc = oom_step(&x, tg_st_permute(ir, x, 2, U32(1, 0)));
	if (!rc && !(rc = tg_st_invert(ir, x, 2, sh, &inv)) && !inv)
		rc = TG_EINTERNAL;  /* a permute always inverts */
	if (!rc)
		rc = oom_symbolic(ir, &x);
	tg_st_free(inv);
	tg_st_free(x);
	tg_st_free(c);
	return rc;
}

static int oom_run(void)
{
	tg_sint sh[2] = { tg_si(4), tg_si(6) };
	tg_ir *ir = tg_ir_new();
	tg_st *st = NULL;
	int rc = ir ? 0 : TG_ENOMEM;

	if (!rc && !(st = tg_st_from_shape(ir, 2, sh)))
		rc = tg_last_status();
	if (!rc)
		rc = oom_movement(ir, &st);
	if (!rc)
		rc = oom_readers(ir, st);
	if (!rc)
		rc = oom_math(ir, st);
	tg_st_free(st);
	tg_ir_free(ir);
	return rc;
}

START_TEST(every_allocation_can_fail)
{
	tl_fail_each(oom_run, 20);
}
END_TEST
#endif /* TL_INTERPOSED */

int main(void)
{
	Suite *s = suite_create("shape");
	TCase *tv = tcase_create("view");
	TCase *tt = tcase_create("tracker");
	TCase *ts = tcase_create("symbolic");
	TCase *tm = tcase_create("math");
	TCase *te = tcase_create("errors");

	tcase_add_test(tv, view_canonicalizes_full_mask);
	tcase_add_test(tv, view_minify_zero_strided_dims);
	tcase_add_test(tv, view_empty_mask_contiguous);
	tcase_add_test(tv, view_create_single_index_mask);
	tcase_add_test(tv, view_create_empty_mask_zeroes_strides);
	tcase_add_test(tv, view_create_zero_size);
	tcase_add_test(tv, view_format);
	tcase_add_test(tv, view_copy_and_eq);
	tcase_add_test(tv, view_minifies);
	suite_add_tcase(s, tv);

	tcase_add_test(tt, real_doesnt_simplify_1);
	tcase_add_test(tt, real_doesnt_simplify_2);
	tcase_add_test(tt, real_strides_masked_first_view);
	tcase_add_test(tt, axis_period);
	tcase_add_test(tt, real_simplifies_1);
	tcase_add_test(tt, real_simplifies_2);
	tcase_add_test(tt, idx2d_noop);
	tcase_add_test(tt, idx2d_permute);
	tcase_add_test(tt, idx2d_reshape);
	tcase_add_test(tt, idx2d_reshape_expand);
	tcase_add_test(tt, idx2d_permute_reshape_1);
	tcase_add_test(tt, idx2d_permute_reshape_2);
	tcase_add_test(tt, reshaping_splitting);
	tcase_add_test(tt, reshape_splitting_1);
	tcase_add_test(tt, reshape_combining_1);
	tcase_add_test(tt, reshape_combining_2);
	tcase_add_test(tt, reshape_combining_3);
	tcase_add_test(tt, reshape_combining_4);
	tcase_add_test(tt, reshape_splitting_combining);
	tcase_add_test(tt, reshape_only_1s);
	tcase_add_test(tt, reshape_zero_mask_1);
	tcase_add_test(tt, reshape_zero_mask_2);
	tcase_add_test(tt, reshape_expanded_reshaped);
	tcase_add_test(tt, reshape_splitting_big);
	tcase_add_test(tt, reshape_combining_big);
	tcase_add_test(tt, reshape_pad_1d);
	tcase_add_test(tt, reshape_trailing_invalid_ones);
	tcase_add_test(tt, reshape_stable_diffusion_needs_two_views);
	tcase_add_test(tt, reshape_doesnt_multiview);
	tcase_add_test(tt, simplify_expand_contract_simple);
	tcase_add_test(tt, simplify_expand_contract_different_shape);
	tcase_add_test(tt, simplify_expand_contract_still_complex);
	tcase_add_test(tt, complex_add_1s);
	tcase_add_test(tt, complex_permute_1s_simple);
	tcase_add_test(tt, complex_remove_1s_simple);
	tcase_add_test(tt, complex_remove_1s);
	tcase_add_test(tt, complex_permute_reshape);
	tcase_add_test(tt, complex_factorize_split);
	tcase_add_test(tt, complex_factorize_combine);
	tcase_add_test(tt, complex_factorize_combine_add_ones);
	tcase_add_test(tt, complex_fancy_factorize);
	tcase_add_test(tt, complex_super_complex_2_fail);
	tcase_add_test(tt, complex_work);
	tcase_add_test(tt, complex_work2);
	tcase_add_test(tt, single_reshape);
	tcase_add_test(tt, single_permute);
	tcase_add_test(tt, single_shrink);
	tcase_add_test(tt, single_double_permute);
	tcase_add_test(tt, single_reshape_permute);
	tcase_add_test(tt, single_reshape_permute_yes);
	tcase_add_test(tt, single_reshape_permute_no);
	tcase_add_test(tt, fuzz_failure_1);
	tcase_add_test(tt, fuzz_failure_2);
	tcase_add_test(tt, fuzz_failure_3);
	tcase_add_test(tt, fuzz_failure_4);
	tcase_add_test(tt, masked_pad_1x1);
	tcase_add_test(tt, masked_pad_2x2);
	tcase_add_test(tt, masked_pad_reshape);
	tcase_add_loop_test(tt, tracker_7x4, 0, (int)TG_ARRAY_LEN(chains74));
	tcase_add_test(tt, size_simple);
	tcase_add_test(tt, size_expand);
	tcase_add_test(tt, size_expand_flatten);
	tcase_add_test(tt, size_shrink_axis_0);
	tcase_add_test(tt, size_shrink_axis_0_variable);
	tcase_add_test(tt, size_shrink_axis_1);
	tcase_add_test(tt, size_empty_and_all_masked);
	tcase_add_test(tt, consecutive_unmodified);
	tcase_add_test(tt, consecutive_sliced);
	tcase_add_test(tt, consecutive_padded);
	tcase_add_test(tt, consecutive_const_and_ones);
	tcase_add_test(tt, unit_stride_axes_and_masked_axes);
	tcase_add_test(tt, expr_node_flat_index);
	tcase_add_test(tt, tracker_format);
	suite_add_tcase(s, tt);

	tcase_add_test(ts, sym_st_real_strides);
	tcase_add_test(ts, sym_expr_idxs);
	tcase_add_test(ts, sym_cat_dim0_strides);
	tcase_add_test(ts, sym_cat_dim1_strides);
	tcase_add_test(ts, sym_var_vals_empty);
	tcase_add_test(ts, sym_var_vals_shape);
	tcase_add_test(ts, sym_var_vals_offset);
	tcase_add_test(ts, sym_var_vals_mask);
	tcase_add_test(ts, sym_var_vals_complex);
	tcase_add_test(ts, sym_shrink_reshape);
	tcase_add_test(ts, sym_view_unbind);
	tcase_add_test(ts, sym_reshape_unbind);
	tcase_add_test(ts, sym_shrink_unbind);
	tcase_add_test(ts, sym_reshape_into_symbols);
	tcase_add_test(ts, sym_two_symbol_reshape);
	tcase_add_test(ts, sym_mask_reshape_is_none);
	tcase_add_test(ts, sym_mask_reshape_is_none_2);
	tcase_add_test(ts, sym_reshape_from_const);
	tcase_add_test(ts, sym_reshape_from_padded);
	tcase_add_test(ts, sym_expand_into_symbols);
	tcase_add_test(ts, sym_plus_expands_constant);
	tcase_add_test(ts, sym_shrink_symbols);
	tcase_add_test(ts, sym_pad_reshape_expr);
	tcase_add_test(ts, sym_expr_idxs_llama);
	suite_add_tcase(s, ts);

	tcase_add_test(tm, math_pad_shrink_removes_mask);
	tcase_add_test(tm, math_pad_shrink_leaves_mask);
	tcase_add_test(tm, math_reshape_makes_same);
	tcase_add_test(tm, math_simplify_is_correct);
	tcase_add_test(tm, math_add_reshape);
	tcase_add_test(tm, math_add_permute);
	tcase_add_test(tm, math_plus_real1);
	tcase_add_test(tm, math_off_by_one);
	tcase_add_test(tm, math_self_add_symbolic);
	tcase_add_test(tm, math_merge_symbolic_views);
	tcase_add_test(tm, math_invert_reshape);
	tcase_add_test(tm, math_invert_permute);
	tcase_add_test(tm, math_invert_permute_3);
	tcase_add_test(tm, math_invert_real1);
	tcase_add_test(tm, math_cant_invert_expand);
	tcase_add_test(tm, math_cant_invert_shrink);
	tcase_add_test(tm, math_can_invert_flip);
	tcase_add_test(tm, math_can_invert_flip_permute);
	tcase_add_test(tm, math_cant_invert_stride);
	tcase_add_test(tm, math_invert_failure);
	suite_add_tcase(s, tm);

	tcase_add_test(te, error_reshape_size);
	tcase_add_test(te, error_reshape_negative);
	tcase_add_test(te, error_reshape_empty_to_nonempty);
	tcase_add_test(te, error_reshape_unbound_symbol);
	tcase_add_test(te, error_reshape_symbolic_noncontiguous);
	tcase_add_test(te, error_expand_non_1_axis);
	tcase_add_test(te, error_expand_count);
	tcase_add_test(te, error_expand_empty);
	tcase_add_test(te, error_pad_negative);
	tcase_add_test(te, error_pad_count);
	tcase_add_test(te, error_permute_not_permutation);
	tcase_add_test(te, error_shrink_out_of_range);
	tcase_add_test(te, error_stride_zero);
	tcase_add_test(te, error_too_many_dims);
	tcase_add_test(te, error_size_overflow);
	tcase_add_test(te, error_unbind_conflicting_binds);
	tcase_add_test(te, error_no_views);
#ifdef TL_INTERPOSED
	tcase_add_test(te, every_allocation_can_fail);
#else
	fprintf(stderr, "test_shape: every_allocation_can_fail not run "
	        "under ThreadSanitizer (tests/failalloc.h)\n");
#endif
	suite_add_tcase(s, te);
	return tl_run(s);
}

/*
 * test_tensor.c - the tensor object through the public API: scopes and
 * references, creation, movement ops, casts and reading results, each
 * checked against values computed here with plain loops, and the error
 * message of every bad argument.
 */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "../libtgcore/tensor/tensor.h"

static void setup(void)
{
	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
}

static void teardown(void)
{
	tg_shutdown();
}

/* A (2,3) float32 tensor holding 0..5. */
static tg_tensor *t23(void)
{
	static const float v[6] = { 0, 1, 2, 3, 4, 5 };
	int64_t s[2] = { 2, 3 };

	return tg_tensor_new(NULL, TG_FLOAT32, 2, s, v);
}

static void read_f32(tg_tensor *t, float *out, size_t n)
{
	ck_assert_msg(tg_tensor_data(t, out, n * sizeof(float)) == 0, "%s",
	              tg_last_error());
}

START_TEST(new_and_data_round_trip)
{
	float got[6];
	tg_tensor *t = t23();
	char b[32];
	int i;

	ck_assert_uint_eq(tg_tensor_ndim(t), 2);
	ck_assert_int_eq(tg_tensor_size(t, -1), 3);
	ck_assert_int_eq(tg_tensor_numel(t), 6);
	ck_assert_int_eq(tg_tensor_dtype(t), TG_FLOAT32);
	ck_assert_str_eq(tg_tensor_shape_str(t, b, sizeof b), "(2,3)");
	read_f32(t, got, 6);
	for (i = 0; i < 6; i++)
		ck_assert_float_eq(got[i], (float)i);
	tg_tensor_unref(t);
}
END_TEST

START_TEST(full_zeros_ones_and_scalars)
{
	int64_t s[2] = { 3, 2 };
	int32_t gi[6];
	float gf[6];
	double item;
	tg_tensor *f, *z, *o, *sc;
	int i;

	tg_scope_begin();
	f = tg_full(NULL, TG_INT32, 2, s, 7.9);
	z = tg_zeros(NULL, TG_FLOAT32, 2, s);
	o = tg_ones_like(z);
	sc = tg_tensor_scalar(NULL, TG_FLOAT16, 2.5);
	ck_assert_int_eq(tg_tensor_data(f, gi, sizeof gi), 0);
	for (i = 0; i < 6; i++)
		ck_assert_int_eq(gi[i], 7); /* int from 7.9 truncates */
	read_f32(z, gf, 6);
	ck_assert_float_eq(gf[5], 0);
	read_f32(o, gf, 6);
	ck_assert_float_eq(gf[0], 1);
	ck_assert_uint_eq(tg_tensor_ndim(sc), 0);
	ck_assert_int_eq(tg_tensor_item(sc, &item), 0);
	ck_assert_double_eq(item, 2.5);
	tg_scope_end();
}
END_TEST

START_TEST(scope_keeps_only_what_is_kept)
{
	tg_tensor *x, *y;
	int64_t s[1] = { 6 };
	float got[6];

	x = t23();
	tg_scope_begin();
	y = tg_contiguous(tg_reshape(tg_permute(x, 2, (int[]){ 1, 0 }), 1, s));
	y = tg_keep(y);
	tg_scope_end();
	read_f32(y, got, 6);
	ck_assert_float_eq(got[1], 3); /* transpose of 0..5 */
	ck_assert_float_eq(got[2], 1);
	tg_tensor_unref(y);
	tg_tensor_unref(x);
	tg_scope_end(); /* without an open scope: nothing */
}
END_TEST

/* A tensor the caller forgot to tg_keep dies with its scope; using the
 * stale pointer then fails with a message that says so, in every build
 * (it read back 0 with success), and a second unref is refused. */
START_TEST(tensor_used_after_its_scope_ended_fails)
{
	tg_tensor *x = t23(), *y;
	int64_t s[1] = { 6 };
	float got[6];
	double v;

	tg_scope_begin();
	y = tg_contiguous(tg_mul(x, x));
	ck_assert_int_eq(tg_realize(y), 0);
	tg_scope_end();  /* y was not kept */
	ck_assert_int_eq(tg_tensor_data(y, got, sizeof got), TG_EINVAL);
	ck_assert_error("tensor_data: the tensor was used after its scope "
	                "ended (tg_scope_end or tg_tensor_unref dropped its "
	                "last reference; tg_keep it inside the scope");
	ck_assert_int_eq(tg_tensor_item(y, &v), TG_EINVAL);
	ck_assert_error("tensor_item: the tensor was used after its scope");
	ck_assert_int_eq(tg_realize(y), TG_EINVAL);
	ck_assert_error("realize: the tensor was used after its scope ended");
	ck_assert_ptr_null(tg_add(x, y));
	ck_assert_error("used after its scope ended");
	ck_assert_ptr_null(tg_reshape(y, 1, s));
	ck_assert_error("reshape: the tensor was used after its scope ended");
	ck_assert_ptr_null(tg_sum(y, NULL, 0, 0));
	ck_assert_error("used after its scope ended");
	ck_assert_ptr_null(tg_keep(y));
	ck_assert_error("keep: the tensor was used after its scope ended");
	ck_assert_ptr_null(tg_zeros_like(y));
	ck_assert_error("full_like: the tensor was used after its scope");
	tg_tensor_unref(y);
	ck_assert_error("tensor_unref: the tensor was used after its scope");
	/* x, kept outside any scope, is untouched */
	read_f32(x, got, 6);
	ck_assert_float_eq(got[5], 5);
	tg_tensor_unref(x);
}
END_TEST

START_TEST(nested_scopes_move_kept_tensors_outward)
{
	tg_tensor *x, *y;
	float got[6];

	tg_scope_begin();
	x = t23();
	tg_scope_begin();
	y = tg_keep(tg_flip(x, (int[]){ 1 }, 1));
	tg_scope_end();
	read_f32(y, got, 6); /* y now belongs to the outer scope */
	ck_assert_float_eq(got[0], 2);
	ck_assert_float_eq(got[5], 3);
	tg_scope_end();
}
END_TEST

START_TEST(reshape_infers_and_expand_prepends)
{
	float got[12];
	tg_tensor *x, *r, *row, *e;
	int i;

	tg_scope_begin();
	x = t23();
	r = tg_reshape(x, 2, (int64_t[]){ -1, 2 });
	ck_assert_int_eq(tg_tensor_shape(r)[0], 3);
	row = tg_reshape(x, 2, (int64_t[]){ 6, 1 });
	e = tg_expand(tg_shrink(row, 2, (int64_t[]){ 0, 3, 0, 1 }), 3,
	              (int64_t[]){ 2, 3, 2 });
	ck_assert_uint_eq(tg_tensor_ndim(e), 3);
	read_f32(e, got, 12);
	for (i = 0; i < 12; i++)
		ck_assert_float_eq(got[i], (float)((i / 2) % 3));
	tg_scope_end();
}
END_TEST

START_TEST(pad_with_value_and_negative_pad)
{
	float got[20];
	tg_tensor *x, *p, *c;
	int r, k;

	tg_scope_begin();
	x = t23();
	p = tg_pad(x, 2, (int64_t[]){ 1, 1, 0, 1 }, -1.5);
	ck_assert_int_eq(tg_tensor_shape(p)[0], 4);
	ck_assert_int_eq(tg_tensor_shape(p)[1], 4);
	read_f32(p, got, 16);
	for (r = 0; r < 4; r++)
		for (k = 0; k < 4; k++)
			ck_assert_float_eq(got[r * 4 + k],
			                   r >= 1 && r <= 2 && k < 3 ?
			                   (float)((r - 1) * 3 + k) : -1.5f);
	c = tg_pad(x, 2, (int64_t[]){ 0, 0, -1, 0 }, 0);
	read_f32(c, got, 4);
	ck_assert_float_eq(got[0], 1);
	ck_assert_float_eq(got[3], 5);
	tg_scope_end();
}
END_TEST

/* tinygrad's pad and shrink return self when they change nothing: the
 * same tensor comes back (a new reference, in the scope), no kernel
 * runs, and the gradient reaches x with no node between. */
START_TEST(zero_pad_and_whole_shrink_are_the_tensor_itself)
{
	tg_tensor *x, *p, *q, *h, *pv, *g;
	tg_counters c;
	float got[6];
	int i;

	x = t23();
	ck_assert_int_eq(tg_realize(x), 0);
	tg_scope_begin();
	p = tg_pad(x, 2, (int64_t[]){ 0, 0, 0, 0 }, 0);
	pv = tg_pad(x, 1, (int64_t[]){ 0, 0 }, 7.5);
	h = tg_pad(x, 0, NULL, 0);
	q = tg_shrink(x, 2, (int64_t[]){ 0, 2, 0, 3 });
	ck_assert_ptr_eq(p, x);
	ck_assert_ptr_eq(pv, x);
	ck_assert_ptr_eq(h, x);
	ck_assert_ptr_eq(q, x);
	tg_counters_reset();
	read_f32(pv, got, 6);
	tg_counters_get(&c);
	ck_assert_uint_eq(c.kernels, 0);
	for (i = 0; i < 6; i++)
		ck_assert_float_eq(got[i], (float)i);
	ck_assert_int_eq(tg_set_requires_grad(x, 1), 0);
	ck_assert_int_eq(tg_backward(tg_sum(tg_mul_s(tg_pad(x, 2, (int64_t[]){
		0, 0, 0, 0 }, 1), 3), NULL, 0, 0), NULL), 0);
	g = tg_grad(x);
	ck_assert_ptr_nonnull(g);
	read_f32(g, got, 6);
	for (i = 0; i < 6; i++)
		ck_assert_float_eq(got[i], 3);
	/* a crop to the same size is not whole: it is a view */
	ck_assert_ptr_ne(tg_shrink(x, 2, (int64_t[]){ 0, 2, 1, 3 }), x);
	tg_scope_end();
	/* the scope dropped only its own references */
	read_f32(x, got, 6);
	ck_assert_float_eq(got[5], 5);
	tg_tensor_unref(x);
}
END_TEST

/* A (4,5) float32 tensor of 0..19, realized. */
static tg_tensor *t45(void)
{
	float v[20];
	int64_t s[2] = { 4, 5 };
	tg_tensor *t;
	int i;

	for (i = 0; i < 20; i++)
		v[i] = (float)i;
	t = tg_tensor_new(NULL, TG_FLOAT32, 2, s, v);
	ck_assert_int_eq(tg_realize(t), 0);
	return t;
}

static void expect_f32(tg_tensor *t, const float *want, size_t n)
{
	float got[64];
	size_t i;

	ck_assert_uint_le(n, 64);
	read_f32(t, got, n);
	for (i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "[%zu] = %g, want %g", i,
		              got[i], want[i]);
}

/* x[1:3] = y writes x's memory: x, a view taken before and one taken
 * after all read y there; one kernel when y is already in memory. */
START_TEST(setitem_writes_memory_that_views_share)
{
	float want[20], yv[10];
	int64_t s25[2] = { 2, 5 };
	tg_tensor *x, *early, *y;
	tg_counters c;
	int i;

	tg_scope_begin();
	x = t45();
	early = tg_shrink(x, 2, (int64_t[]){ 1, 3, 0, 5 });
	for (i = 0; i < 10; i++)
		yv[i] = (float)(100 + i);
	y = tg_tensor_new(NULL, TG_FLOAT32, 2, s25, yv);
	ck_assert_int_eq(tg_realize(y), 0);
	tg_counters_reset();
	ck_assert_int_eq(tg_setitem(x, 1, (tg_index_spec[]){
	                            TG_IX_SLICE(1, 3) }, y), 0);
	tg_counters_get(&c);
	ck_assert_uint_eq(c.kernels, 1);
	for (i = 0; i < 20; i++)
		want[i] = i >= 5 && i < 15 ? (float)(100 + i - 5) : (float)i;
	expect_f32(x, want, 20);
	expect_f32(early, yv, 10);
	expect_f32(tg_index(x, 1, (tg_index_spec[]){ TG_IX_INT(2) }), yv + 5,
	           5);
	tg_scope_end();
}
END_TEST

/* Steps, flips, a scalar, a broadcast row, a cast, a value that reads
 * the target (computed in full first) and an unrealized target, each
 * against the same writes done on a C array. */
START_TEST(setitem_forms_match_c)
{
	float want[20], row[3] = { -1, -2, -3 };
	int64_t s3[1] = { 3 };
	int32_t iw[20];
	tg_tensor *x, *xi;
	int i, r, k;

	tg_scope_begin();
	/* x[:, ::2] = 7 */
	x = t45();
	ck_assert_int_eq(tg_setitem_s(x, 2, (tg_index_spec[]){ TG_IX_ALL,
	                              TG_IX_STEP(0, 5, 2) }, 7), 0);
	for (i = 0; i < 20; i++)
		want[i] = i % 5 % 2 ? (float)i : 7;
	expect_f32(x, want, 20);
	/* x[::-1, 4] = [10, 11, 12, 13]: row 3 gets 10 */
	ck_assert_int_eq(tg_setitem(x, 2, (tg_index_spec[]){
	                            TG_IX_STEP(-1, -5, -1), TG_IX_INT(4) },
	                            tg_arange(NULL, TG_FLOAT32, 10, 14, 1)), 0);
	for (r = 0; r < 4; r++)
		want[r * 5 + 4] = (float)(13 - r);
	expect_f32(x, want, 20);
	/* x[1:4, ..., 1:4] = row (3,) broadcast over the rows */
	ck_assert_int_eq(tg_setitem(x, 3, (tg_index_spec[]){ TG_IX_SLICE(1, 4),
	                            TG_IX_ELLIPSIS, TG_IX_SLICE(1, 4) },
	                            tg_tensor_new(NULL, TG_FLOAT32, 1, s3, row)),
	                 0);
	for (r = 1; r < 4; r++)
		for (k = 1; k < 4; k++)
			want[r * 5 + k] = row[k - 1];
	expect_f32(x, want, 20);
	/* x[1:] = x[:-1]: the value is the old rows 0..2 */
	ck_assert_int_eq(tg_setitem(x, 1, (tg_index_spec[]){
	                            TG_IX_SLICE(1, 4) },
	                            tg_index(x, 1, (tg_index_spec[]){
	                                     TG_IX_SLICE(0, 3) })), 0);
	for (i = 19; i >= 5; i--)
		want[i] = want[i - 5];
	expect_f32(x, want, 20);
	/* an int32 target, a float value (cast), an unrealized target */
	xi = tg_cast(tg_add_s(t45(), 1), TG_INT32);
	ck_assert_int_eq(tg_setitem(xi, 2, (tg_index_spec[]){ TG_IX_INT(-1),
	                            TG_IX_NEWAXIS }, tg_full(NULL, TG_FLOAT32,
	                            1, (int64_t[]){ 5 }, 2.75)), 0);
	ck_assert_int_eq(tg_tensor_data(xi, iw, sizeof iw), 0);
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(iw[i], i >= 15 ? 2 : i + 1);
	/* an empty slice writes nothing */
	ck_assert_int_eq(tg_setitem_s(x, 1, (tg_index_spec[]){
	                              TG_IX_SLICE(2, 2) }, 5), 0);
	expect_f32(x, want, 20);
	tg_scope_end();
}
END_TEST

/* tg_assign to a view of realized memory writes through it. */
START_TEST(assign_to_a_view_writes_through)
{
	float want[20];
	tg_tensor *x, *col, *after;
	int r;

	tg_scope_begin();
	x = t45();
	col = tg_index(x, 2, (tg_index_spec[]){ TG_IX_ALL, TG_IX_INT(1) });
	after = tg_neg(col);
	ck_assert_int_eq(tg_assign(col, tg_mul_s(col, 10)), 0);
	ck_assert_int_eq(tg_realize(col), 0);
	for (r = 0; r < 20; r++)
		want[r] = r % 5 == 1 ? (float)(r * 10) : (float)r;
	expect_f32(x, want, 20);
	expect_f32(col, (float[]){ 10, 60, 110, 160 }, 4);
	/* a lazy reader of x made before the write, realized after it */
	expect_f32(after, (float[]){ -10, -60, -110, -160 }, 4);
	tg_scope_end();
}
END_TEST

START_TEST(setitem_and_view_assign_errors)
{
	int64_t s2[1] = { 2 };
	int32_t iv[2] = { 0, 1 };
	tg_tensor *x, *ix, *g;

	tg_scope_begin();
	x = t45();
	ix = tg_tensor_new(NULL, TG_INT32, 1, s2, iv);
	ck_assert_int_eq(tg_setitem_s(x, 1, (tg_index_spec[]){
	                              TG_IX_TENSOR(ix) }, 1), TG_EUNSUPPORTED);
	ck_assert_error("setitem: item 0 is an index tensor");
	ck_assert_int_eq(tg_setitem_s(tg_transpose(x, 0, 1), 1,
	                              (tg_index_spec[]){ TG_IX_INT(0) }, 1),
	                 TG_EINVAL);
	ck_assert_error("setitem: the target (5,4) is a view that is not its "
	                "memory in order");
	ck_assert_int_eq(tg_setitem(x, 1, (tg_index_spec[]){ TG_IX_INT(0) },
	                            tg_ones(NULL, TG_FLOAT32, 1,
	                                    (int64_t[]){ 4 })), TG_EINVAL);
	ck_assert_error("setitem: expand: axis 0 of (4,) is 4, not 1, and "
	                "cannot become 5");
	ck_assert_int_ne(tg_setitem_s(x, 1, (tg_index_spec[]){ TG_IX_INT(4) },
	                              1), 0);
	ck_assert_error("setitem: index: slice: index 4 out of range");
	g = t45();
	ck_assert_int_eq(tg_set_requires_grad(g, 1), 0);
	ck_assert_int_eq(tg_setitem_s(g, 0, NULL, 1), TG_EUNSUPPORTED);
	ck_assert_error("setitem: the target or the value requires a gradient");
	ck_assert_int_eq(tg_assign(tg_pad(x, 2, (int64_t[]){ 1, 0, 0, 0 }, 0),
	                           tg_zeros(NULL, TG_FLOAT32, 2,
	                                    (int64_t[]){ 5, 5 })),
	                 TG_EUNSUPPORTED);
	ck_assert_error("assign: cannot write through the view (5,5): it is "
	                "padded");
	ck_assert_int_eq(tg_assign(tg_expand(tg_shrink(x, 2, (int64_t[]){ 0, 1,
	                                     0, 5 }), 2, (int64_t[]){ 3, 5 }),
	                           tg_zeros(NULL, TG_FLOAT32, 2,
	                                    (int64_t[]){ 3, 5 })),
	                 TG_EUNSUPPORTED);
	ck_assert_error("it broadcasts an axis");
	tg_clear_error();
	ck_assert_int_ne(tg_setitem(x, 0, NULL, NULL), 0);
	tg_scope_end();
}
END_TEST

/* TG_TEST_TMP/<pid>-name (a new string). */
static char *tmp_file(const char *name)
{
	const char *tmp = getenv("TG_TEST_TMP");
	char *p = malloc(512);

	ck_assert_ptr_nonnull(p);
	snprintf(p, 512, "%s/%d-%s", tmp ? tmp : "/tmp", (int)getpid(), name);
	return p;
}

/* tg_shutdown with stderr going to a file, and PATH without Graphviz;
 * what it wrote there (malloc'd). */
static char *shutdown_saying(void)
{
	char *path = tmp_file("stderr.txt"), *said, *old = getenv("PATH");
	int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	old = old ? strdup(old) : NULL;
	ck_assert_int_ge(fd, 0);
	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	setenv("PATH", "/nonexistent", 1);
	tg_shutdown();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	if (old)
		setenv("PATH", old, 1);
	free(old);
	said = tl_slurp(path);
	unlink(path);
	free(path);
	return said;
}

/* PROFILE=1 writes one trace event per kernel run, GRAPH=1 one cluster
 * per kernel scheduled, when the library shuts down, and each says on
 * stderr (at DEBUG=0) what it wrote, and that Graphviz is missing. */
START_TEST(profile_and_graph_write_their_files)
{
	char *prof = tmp_file("profile.json"), *gbase = tmp_file("net");
	char *gdot = tmp_file("net.dot"), *text;
	tg_counters c;
	tg_tensor *a, *r;

	unlink(prof);
	unlink(gdot);
	ck_assert_int_eq(tg_config_set("PROFILE", "1"), 0);
	ck_assert_int_eq(tg_config_set("PROFILEPATH", prof), 0);
	ck_assert_int_eq(tg_config_set("GRAPH", "1"), 0);
	ck_assert_int_eq(tg_config_set("GRAPHPATH", gbase), 0);
	tg_scope_begin();
	a = tg_contiguous(tg_reshape(tg_arange(NULL, TG_FLOAT32, 0, 64, 1), 2,
	                             (int64_t[]){ 8, 8 }));
	ck_assert_int_eq(tg_realize(a), 0);
	tg_counters_reset();
	r = tg_sum(tg_relu(tg_matmul(a, a)), NULL, 0, 0);
	ck_assert_int_eq(tg_realize(r), 0);
	tg_counters_get(&c);
	tg_scope_end();
	ck_assert_ptr_nonnull(text = shutdown_saying());
	ck_assert_ptr_nonnull(strstr(text, "tgcore: PROFILE: "));
	ck_assert_ptr_nonnull(strstr(text, " events written to "));
	ck_assert_ptr_nonnull(strstr(text, prof));
	ck_assert_ptr_nonnull(strstr(text, "tgcore: GRAPH: "));
	ck_assert_ptr_nonnull(strstr(text, gdot));
	ck_assert_ptr_nonnull(strstr(text, "not drawn: Graphviz's dot was "
	                                   "not found"));
	free(text);
	ck_assert_ptr_nonnull(text = tl_slurp(prof));
	ck_assert(!strncmp(text, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[",
	                   39));
	ck_assert_ptr_nonnull(strstr(text, "\"process_name\",\"args\":"
	                                   "{\"name\":\"CPU\"}"));
	/* the arange's kernels and this step's */
	ck_assert_uint_ge(tl_count(text, "\"ph\":\"X\""), c.kernels + 1);
	ck_assert_uint_eq(tl_count(text, "\"ph\":\"X\""),
	                  tl_count(text, "\"dur\":"));
	ck_assert_ptr_nonnull(strstr(text, "\"GFLOPS\":"));
	ck_assert_ptr_nonnull(strstr(text, "\n]}\n"));
	free(text);
	ck_assert_ptr_nonnull(text = tl_slurp(gdot));
	ck_assert(!strncmp(text, "digraph tgcore {", 16));
	ck_assert_ptr_nonnull(strstr(text, "subgraph cluster_0"));
	ck_assert_ptr_nonnull(strstr(text, "REDUCE ADD"));
	/* each cluster is labelled as DEBUG=2 names the run: "CPU 3
	 * r_8_8_8" (device, run number, kernel name) */
	{
		const char *l = strstr(text, "label=\"CPU ");
		size_t run;
		char name[64] = "";

		ck_assert_ptr_nonnull(l);
		ck_assert_int_eq(sscanf(l, "label=\"CPU %zu %63[^\"]", &run,
		                        name), 2);
		ck_assert_msg(name[0] == 'E' || name[0] == 'r', "%s", name);
		ck_assert_ptr_null(strstr(text, "(not run)"));
	}
	ck_assert_ptr_nonnull(strstr(text, " -> n"));
	free(text);
	/* written once: a second shutdown has nothing new */
	unlink(prof);
	tg_shutdown();
	ck_assert_ptr_null(tl_slurp(prof));
	/* a path that cannot be written is an error, named */
	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
	ck_assert_int_eq(tg_config_set("PROFILE", "1"), 0);
	ck_assert_int_eq(tg_config_set("PROFILEPATH", "/nonexistent/dir/p.json"),
	                 0);
	tg_scope_begin();
	ck_assert_int_eq(tg_realize(tg_contiguous(tg_ones(NULL, TG_FLOAT32, 1,
	                                                  (int64_t[]){ 3 }))),
	                 0);
	tg_scope_end();
	tg_clear_error();
	tg_shutdown();
	ck_assert_error("profile: /nonexistent/dir/p.json: cannot create a file "
	                "in its directory: No such file or directory");
	unlink(gdot);
	free(prof), free(gbase), free(gdot);
}
END_TEST

START_TEST(casts_and_bitcasts)
{
	static const float v[4] = { -2.75f, 1.5f, 300.25f, 0.0f };
	int64_t s[1] = { 4 };
	int32_t gi[4];
	uint32_t gu[4];
	tg_tensor *x;

	tg_scope_begin();
	x = tg_tensor_new(NULL, TG_FLOAT32, 1, s, v);
	ck_assert_int_eq(tg_tensor_data(tg_cast(x, TG_INT32), gi, sizeof gi),
	                 0);
	ck_assert_int_eq(gi[0], -2);
	ck_assert_int_eq(gi[2], 300);
	ck_assert_int_eq(tg_tensor_data(tg_bitcast(x, TG_UINT32), gu,
	                                sizeof gu), 0);
	ck_assert_uint_eq(gu[1], 0x3fc00000u);
	tg_scope_end();
}
END_TEST

/* An assign to a realized tensor writes its memory; a kernel realized
 * with it that reads the old value runs first, whichever order the
 * outputs are given in. */
START_TEST(assign_in_place)
{
	tg_tensor *x, *y, *outs[2];
	tg_buffer *mem;
	float got[6];
	int order;

	for (order = 0; order < 2; order++) {
		tg_scope_begin();
		x = t23();
		ck_assert_int_eq(tg_realize(x), 0);
		mem = tg_lazy_base(x->lazy)->buf;
		y = tg_mul_s(x, 2);          /* reads the old x */
		ck_assert_int_eq(tg_assign(x, tg_add_s(tg_mul_s(x, 3), 1)), 0);
		outs[order] = x;
		outs[1 - order] = y;
		ck_assert_int_eq(tg_realize_many(outs, 2), 0);
		ck_assert_ptr_eq(tg_lazy_base(x->lazy)->buf, mem);
		read_f32(x, got, 6);
		for (int i = 0; i < 6; i++)
			ck_assert_float_eq(got[i], (float)i * 3 + 1);
		read_f32(y, got, 6);
		for (int i = 0; i < 6; i++)
			ck_assert_float_eq(got[i], (float)i * 2);
		/* a copy of another realized tensor, in place too */
		ck_assert_int_eq(tg_assign(x, y), 0);
		ck_assert_int_eq(tg_realize(x), 0);
		ck_assert_ptr_eq(tg_lazy_base(x->lazy)->buf, mem);
		read_f32(x, got, 6);
		for (int i = 0; i < 6; i++)
			ck_assert_float_eq(got[i], (float)i * 2);
		ck_assert_int_eq(tg_assign(x, x), 0);  /* nothing to do */
		tg_scope_end();
	}
}
END_TEST

/* The new value may read the target only where it writes it. */
START_TEST(assign_reading_other_elements_fails)
{
	tg_tensor *x;
	int axes[1] = { 1 };
	float got[6];

	tg_scope_begin();
	x = t23();
	ck_assert_int_eq(tg_realize(x), 0);
	ck_assert_int_eq(tg_assign(x, tg_flip(x, axes, 1)), 0);
	ck_assert_int_eq(tg_realize(x), TG_EUNSUPPORTED);
	ck_assert_error("assign: the new value of a (2,3) tensor reads that "
	                "tensor other than element by element (through a view "
	                "or a reduce); realize the value before assigning it");
	/* realized first, the same assign works */
	x = t23();
	ck_assert_int_eq(tg_realize(x), 0);
	{
		tg_tensor *v = tg_contiguous(tg_flip(x, axes, 1));

		ck_assert_int_eq(tg_realize(v), 0);
		ck_assert_int_eq(tg_assign(x, v), 0);
	}
	read_f32(x, got, 6);
	for (int i = 0; i < 6; i++)
		ck_assert_float_eq(got[i], (float)((i / 3) * 3 + 2 - i % 3));
	tg_scope_end();
}
END_TEST

/* assign keeps the object (and references to it) and takes the value.
 * A realized tensor is written in place (tinygrad's assign), so views
 * taken before see the new value once it is realized; an unrealized one
 * just takes the new expression. */
START_TEST(assign_replaces_the_value)
{
	tg_tensor *x, *held, *old_view, *v;
	float got[6];

	tg_scope_begin();
	x = t23();
	held = tg_tensor_ref(x);
	old_view = tg_reshape(x, 1, (int64_t[]){ 6 });
	ck_assert_int_eq(tg_assign(x, tg_mul_s(x, 10)), 0);
	ck_assert_int_eq(tg_assign(x, tg_add_s(x, 1)), 0);
	ck_assert_int_eq(tg_tensor_data(held, got, sizeof got), 0);
	for (int i = 0; i < 6; i++)
		ck_assert_float_eq(got[i], (float)i * 10 + 1);
	ck_assert_int_eq(tg_tensor_data(old_view, got, sizeof got), 0);
	for (int i = 0; i < 6; i++)  /* the first assign, in place */
		ck_assert_float_eq(got[i], (float)i * 10);
	v = tg_zeros(NULL, TG_FLOAT32, 1, (int64_t[]){ 6 });
	ck_assert_int_eq(tg_assign(x, v), TG_EINVAL);
	ck_assert_error("assign: shape (6,) to a tensor of (2,3)");
	ck_assert_int_eq(tg_assign(x, tg_cast(x, TG_INT32)), TG_EINVAL);
	ck_assert_error("assign: int32 to a float32 tensor");
	tg_tensor_unref(held);
	tg_scope_end();
}
END_TEST

/* A NULL array whose count is not 0, or a NULL out-pointer, is an
 * error naming the op and the argument, never a crash (issue 46). */
START_TEST(null_arguments_are_errors)
{
	const int64_t two[2] = { 1, 1 }, k[2] = { 1, 1 };
	tg_tensor *x, *one, *out[4];
	size_t n = 4;
	char b[16];

	tg_scope_begin();
	x = t23();
	one = tg_sum(x, NULL, 0, 0);
#define NULL_ERR(call, msg)                                             \
	do {                                                            \
		tg_clear_error();                                       \
		ck_assert_msg((intptr_t)(call) <= 0, "%s", #call);      \
		ck_assert_error(msg);                                   \
	} while (0)
	NULL_ERR(tg_zeros(NULL, TG_FLOAT32, 2, NULL),
	         "full: shape is NULL (n = 2)");
	NULL_ERR(tg_empty(NULL, TG_FLOAT32, 1, NULL), "empty: shape is NULL");
	NULL_ERR(tg_tensor_new(NULL, TG_FLOAT32, 2, NULL, NULL),
	         "empty: shape is NULL");
	NULL_ERR(tg_tensor_item(one, NULL), "item: out is NULL (n = 1)");
	NULL_ERR(tg_reshape(x, 2, NULL), "reshape: shape is NULL (n = 2)");
	NULL_ERR(tg_expand(x, 2, NULL), "expand: shape is NULL");
	NULL_ERR(tg_permute(x, 2, NULL), "permute: order is NULL");
	NULL_ERR(tg_flip(x, NULL, 1), "flip: axes is NULL (n = 1)");
	NULL_ERR(tg_shrink(x, 2, NULL), "shrink: pairs is NULL");
	NULL_ERR(tg_pad(x, 2, NULL, 0), "pad: pairs is NULL");
	NULL_ERR(tg_slice(x, 1, NULL), "slice: specs is NULL (n = 1)");
	NULL_ERR(tg_rand(NULL, TG_FLOAT32, 2, NULL), "rand: shape is NULL");
	NULL_ERR(tg_randn(NULL, TG_FLOAT32, 2, NULL), "randn: shape is NULL");
	NULL_ERR(tg_randint(NULL, 2, NULL, 0, 3), "randint: shape is NULL");
	NULL_ERR(tg_uniform(NULL, TG_FLOAT32, 2, NULL, 0, 1),
	         "uniform: shape is NULL");
	NULL_ERR(tg_glorot_uniform(NULL, TG_FLOAT32, 2, NULL),
	         "glorot_uniform: shape is NULL");
	NULL_ERR(tg_kaiming_normal(NULL, TG_FLOAT32, 2, NULL, 0),
	         "kaiming_normal: shape is NULL");
	NULL_ERR(tg_unflatten(x, 0, 2, NULL), "unflatten: sizes is NULL");
	NULL_ERR(tg_repeat(x, 2, NULL), "repeat: reps is NULL");
	NULL_ERR(tg_split(x, 1, 0, out, NULL), "split: n is NULL");
	NULL_ERR(tg_split_sizes(x, NULL, 2, 0, out), "split: sizes is NULL");
	NULL_ERR(tg_split_sizes(x, two, 2, 0, NULL), "split: out is NULL");
	NULL_ERR(tg_chunk(x, 2, 0, NULL, &n), "chunk: out is NULL (n = 2)");
	NULL_ERR(tg_chunk(x, 2, 0, out, NULL), "chunk: n is NULL");
	NULL_ERR(tg_realize_many(NULL, 2),
	         "realize: tensor array is NULL (n = 2)");
	NULL_ERR(tg_max_pool2d(tg_reshape(x, 4, (int64_t[]){ 1, 1, 2, 3 }),
	                       NULL, NULL), "max_pool2d: kernel is NULL");
	NULL_ERR(tg_avg_pool2d(tg_reshape(x, 4, (int64_t[]){ 1, 1, 2, 3 }),
	                       NULL, NULL, 0), "avg_pool2d: kernel is NULL");
#undef NULL_ERR
	/* a count of 0 needs no array */
	ck_assert_ptr_nonnull(tg_zeros(NULL, TG_FLOAT32, 0, NULL));
	ck_assert_int_eq(tg_realize_many(NULL, 0), 0);
	ck_assert_str_eq(tg_tensor_shape_str(x, NULL, 8), "(no buffer)");
	ck_assert_str_eq(tg_tensor_shape_str(x, b, sizeof b), "(2,3)");
	ck_assert_ptr_nonnull(tg_max_pool2d(tg_reshape(x, 4, (int64_t[]){
		1, 1, 2, 3 }), k, NULL));
	tg_scope_end();
}
END_TEST

/* Values C cannot convert and sizes whose product overflows int64 are
 * refused with a message (they were undefined behaviour, which UBSan
 * reported, and gave whatever the machine did). */
START_TEST(unrepresentable_values_and_sizes_are_errors)
{
	const int64_t big[3] = { 1LL << 31, 1LL << 31, 1LL << 31 };
	double v;
	tg_tensor *x, *u;

	tg_scope_begin();
	ck_assert_ptr_null(tg_full(NULL, TG_INT32, 0, NULL, NAN));
	ck_assert_error("full: nan is not a value of int32 (a finite number "
	                "within its 64-bit range)");
	ck_assert_ptr_null(tg_full(NULL, TG_INT64, 0, NULL, 1e19));
	ck_assert_error("full: 1e+19 is not a value of int64");
	ck_assert_ptr_null(tg_full(NULL, TG_UINT64, 0, NULL, INFINITY));
	ck_assert_error("full: inf is not a value of uint64");
	u = tg_full(NULL, TG_UINT64, 0, NULL, 1e19);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(tg_tensor_item(u, &v), 0);
	ck_assert_double_eq(v, 1e19);
	ck_assert_ptr_nonnull(tg_full(NULL, TG_BOOL, 0, NULL, NAN));
	ck_assert_ptr_nonnull(tg_full(NULL, TG_FLOAT32, 0, NULL, NAN));
	ck_assert_ptr_null(tg_zeros(NULL, TG_FLOAT32, 3, big));
	ck_assert_error("full: more than 9223372036854775807 elements "
	                "(axis 2)");
	ck_assert_ptr_null(tg_empty(NULL, TG_FLOAT32, 3, big));
	ck_assert_error("empty: more than 9223372036854775807 elements");
	x = t23();
	ck_assert_ptr_null(tg_reshape(x, 3, big));
	ck_assert_error("reshape: the new shape of (2,3) has more than "
	                "9223372036854775807 elements");
	ck_assert_ptr_null(tg_expand(tg_reshape(x, 3, (int64_t[]){ 1, 2, 3 }),
	                             3, (int64_t[]){ 1LL << 62, 4, 3 }));
	ck_assert_error("expand: more than 9223372036854775807 elements");
	tg_scope_end();
}
END_TEST

START_TEST(bad_arguments_name_the_op)
{
	int64_t s[1] = { 4 };
	float small[2];
	double d;
	tg_tensor *x;

	tg_scope_begin();
	x = t23();
	ck_assert_ptr_null(tg_reshape(x, 1, (int64_t[]){ 5 }));
	ck_assert_error("reshape");
	ck_assert_ptr_null(tg_reshape(x, 2, (int64_t[]){ -1, 4 }));
	ck_assert_error("reshape: cannot infer -1: 6 elements of (2,3)");
	ck_assert_ptr_null(tg_expand(x, 2, (int64_t[]){ 4, 3 }));
	ck_assert_error("expand: axis 0 of (2,3) is 2, not 1");
	ck_assert_ptr_null(tg_permute(x, 1, (int[]){ 0 }));
	ck_assert_error("permute: 1 axes for 2 dims");
	ck_assert_ptr_null(tg_permute(x, 2, (int[]){ 0, 2 }));
	ck_assert_error("permute: axis 2 out of range for 2 dims");
	ck_assert_ptr_null(tg_flip(x, (int[]){ 1, -1 }, 2));
	ck_assert_error("flip: axis -1 given twice");
	ck_assert_ptr_null(tg_pad(x, 1, (int64_t[]){ -2, -1 }, 0));
	ck_assert_error("pad: axis 0 of size 2 cropped by 2 and 1");
	ck_assert_ptr_null(tg_shrink(x, 1, (int64_t[]){ 0, 1 }));
	ck_assert_error("shrink: 1 pairs for 2 dims");
	ck_assert_ptr_null(tg_empty(NULL, TG_FLOAT32, 1, (int64_t[]){ -3 }));
	ck_assert_error("empty: negative size -3 on axis 0");
	ck_assert_ptr_null(tg_full(NULL, (tg_dtype)99, 1, s, 0));
	ck_assert_error("full: dtype 99 is not a dtype");
	ck_assert_int_eq(tg_tensor_data(x, small, sizeof small), TG_EINVAL);
	ck_assert_error("tensor_data: 8 bytes of room for 24 bytes");
	ck_assert_int_eq(tg_tensor_item(x, &d), TG_EINVAL);
	ck_assert_error("item: (2,3) has 6 elements, not 1");
	ck_assert_ptr_null(tg_bitcast(x, TG_INT8));
	ck_assert_error("bitcast: float32 (4 bytes) to int8 (1 bytes)");
	ck_assert_ptr_null(tg_to(x, NULL));
	ck_assert_error("to: no device given");
	/* NULL in, NULL out, the first message kept */
	ck_assert_ptr_null(tg_reshape(tg_permute(x, 1, (int[]){ 0 }), 1, s));
	ck_assert_error("permute: 1 axes for 2 dims");
	tg_scope_end();
}
END_TEST

static Suite *tensor_suite(void)
{
	Suite *s = suite_create("tensor");
	TCase *t = tcase_create("tensor");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, new_and_data_round_trip);
	tcase_add_test(t, full_zeros_ones_and_scalars);
	tcase_add_test(t, scope_keeps_only_what_is_kept);
	tcase_add_test(t, tensor_used_after_its_scope_ended_fails);
	tcase_add_test(t, nested_scopes_move_kept_tensors_outward);
	tcase_add_test(t, reshape_infers_and_expand_prepends);
	tcase_add_test(t, pad_with_value_and_negative_pad);
	tcase_add_test(t, assign_replaces_the_value);
	tcase_add_test(t, assign_in_place);
	tcase_add_test(t, assign_reading_other_elements_fails);
	tcase_add_test(t, zero_pad_and_whole_shrink_are_the_tensor_itself);
	tcase_add_test(t, setitem_writes_memory_that_views_share);
	tcase_add_test(t, setitem_forms_match_c);
	tcase_add_test(t, assign_to_a_view_writes_through);
	tcase_add_test(t, setitem_and_view_assign_errors);
	tcase_add_test(t, profile_and_graph_write_their_files);
	tcase_add_test(t, casts_and_bitcasts);
	tcase_add_test(t, bad_arguments_name_the_op);
	tcase_add_test(t, null_arguments_are_errors);
	tcase_add_test(t, unrepresentable_values_and_sizes_are_errors);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(tensor_suite());
}

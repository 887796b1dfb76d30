/*
 * test_variables.c - symbolic sizes: tg_variable, the int64 codes that
 * stand for variables in shapes, tensors of symbolic shape computed
 * eagerly (against plain C in double precision), one compiled kernel
 * for every value, and the KV-cache attention step captured once by
 * the JIT and replayed for positions 0..MAXCTX-1 (bit for bit as the
 * eager step, and against C).  Every bad input has its message.
 */
#include "config.h"

#include <math.h>

#include "kasttest.h"
#include "../libtgcore/tensor/tensor.h"
#include "../libtgcore/engine/engine.h"

#define D 8
#define MAXCTX 16

static void setup(void)
{
	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
	tg_scope_begin();
}

static void teardown(void)
{
	tg_scope_end();
	tg_shutdown();
}

/* ((i*37) % 23) * a + b at flat index i of a realized float32 tensor. */
static float ramp_at(int64_t i, float a, float b)
{
	return (float)((i * 37) % 23) * a + b;
}

static tg_tensor *ramp(int64_t rows, int64_t cols, float a, float b)
{
	float v[MAXCTX * D * 4];
	tg_tensor *t;

	ck_assert_int_le(rows * cols, (int64_t)(sizeof v / sizeof *v));
	for (int64_t i = 0; i < rows * cols; i++)
		v[i] = ramp_at(i, a, b);
	t = tg_tensor_new(NULL, TG_FLOAT32, 2, (int64_t[]){ rows, cols }, v);
	ck_assert_msg(t && tg_realize(t) == 0, "%s", tg_last_error());
	return t;
}

static void read_floats(tg_tensor *t, float *out, size_t n)
{
	ck_assert_msg(t, "%s", tg_last_error());
	ck_assert_int_eq(tg_tensor_numel(t), (int64_t)n);
	ck_assert_msg(tg_tensor_data(t, out, n * sizeof *out) == 0, "%s",
	              tg_last_error());
}

/* ------------------------------------------------------------ the API */

START_TEST(variable_api)
{
	tg_variable *v = tg_variable_new("pos", 2, 9);
	char b[64];
	int64_t d, e;

	ck_assert_msg(v, "%s", tg_last_error());
	ck_assert_str_eq(tg_variable_name(v), "pos");
	ck_assert_int_eq(tg_variable_value(v), 2);   /* bound to min */
	ck_assert_int_eq(tg_variable_bind(v, 7), 0);
	d = tg_variable_dim(v);
	ck_assert(tg_dim_is_sym(d));
	ck_assert_int_le(d, TG_DIM_SYM_BASE);
	ck_assert_int_eq(tg_dim_value(d), 7);
	ck_assert_str_eq(tg_dim_str(d, b, sizeof b), "pos");
	e = tg_dim_affine(d, 2, 3);
	ck_assert_int_eq(tg_dim_value(e), 17);
	ck_assert_str_eq(tg_dim_str(e, b, sizeof b), "((pos*2)+3)");
	/* equal expressions are one code; integers stay integers */
	ck_assert_int_eq(tg_dim_affine(d, 2, 3), e);
	ck_assert_int_eq(tg_dim_affine(5, 2, 3), 13);
	ck_assert_int_eq(tg_dim_affine(d, 0, 4), 4);
	ck_assert_int_eq(tg_dim_value(4), 4);
	/* a code keeps the value it was made with */
	ck_assert_int_eq(tg_variable_bind(v, 3), 0);
	ck_assert_int_eq(tg_dim_value(d), 7);
	ck_assert_int_eq(tg_dim_value(tg_variable_dim(v)), 3);
	tg_variable_free(v);
	tg_variable_free(NULL);
}
END_TEST

START_TEST(variable_errors)
{
	tg_variable *v = tg_variable_new("pos", 0, 9);

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(tg_variable_bind(v, 10), TG_EINVAL);
	ck_assert_str_eq(tg_last_error(), "variable_bind: pos=10 is outside its "
	                 "range [0, 9]");
	ck_assert_int_eq(tg_variable_bind(v, -1), TG_EINVAL);
	ck_assert_int_eq(tg_variable_value(v), 0);  /* unchanged */
	ck_assert_ptr_null(tg_variable_new("pos", 0, 3));
	ck_assert_str_eq(tg_last_error(), "variable_new: a variable named 'pos' "
	                 "exists (free it first; kernels tell variables by "
	                 "name)");
	ck_assert_ptr_null(tg_variable_new("2x", 0, 3));
	ck_assert_str_eq(tg_last_error(), "variable_new: '2x' is not a name (a "
	                 "letter or '_', then letters, digits or '_'; at most "
	                 "63)");
	ck_assert_ptr_null(tg_variable_new(NULL, 0, 3));
	ck_assert_ptr_null(tg_variable_new("n", 4, 3));
	ck_assert_str_eq(tg_last_error(), "variable_new: n in [4, 3]: the bounds "
	                 "must satisfy 0 <= min <= max <= 1099511627776");
	ck_assert_ptr_null(tg_variable_new("n", -1, 3));
	ck_assert_int_eq(tg_variable_bind(NULL, 1), TG_EINVAL);
	ck_assert_int_eq(tg_variable_dim(NULL), TG_DIM_INVALID);
	ck_assert_int_eq(tg_dim_affine(INT64_MAX / 2, 4, 0), TG_DIM_INVALID);
	ck_assert_str_eq(tg_last_error(), "dim_affine: 4611686018427387903*4+0 "
	                 "overflows");
	ck_assert_int_eq(tg_dim_value(TG_DIM_SYM_BASE - 1000000), -1);
	tg_variable_free(v);
	/* the name is free again */
	ck_assert_ptr_nonnull(v = tg_variable_new("pos", 0, 3));
	tg_variable_free(v);
}
END_TEST

START_TEST(bad_codes_in_shapes)
{
	tg_tensor *t = ramp(4, 4, 1, 0);

	ck_assert_ptr_null(tg_reshape(t, 2, (int64_t[]){ TG_DIM_INVALID, 4 }));
	ck_assert_msg(strstr(tg_last_error(), "reshape: TG_DIM_INVALID (a "
	                     "failed tg_variable_dim) is not a size made by "
	                     "tg_variable_dim or tg_dim_affine"), "%s",
	              tg_last_error());
	ck_assert_ptr_null(tg_shrink(t, 2, (int64_t[]){ 0, TG_DIM_SYM_BASE -
	                                                 99999, 0, 4 }));
	ck_assert_msg(strstr(tg_last_error(), "shrink: this negative number "
	                     "is not a size"), "%s", tg_last_error());
}
END_TEST

/* ----------------------------------------------------------- codegen */

/* out(1, 4) = sum over rows 0..n-1 of in(n, 4): the symbolic axis is a
 * loop bounded by n, the kernel takes n, and opts refuse that axis. */
static tg_uop *sym_sum_ast(tg_ir *ir)
{
	tg_uop *n = tg_sym_var(ir, "n", 1, 8);
	tg_sint in_shape[2] = { tg_sint_of(n), tg_si(4) };
	tg_sint out_shape[2] = { tg_si(1), tg_si(4) };
	tg_uop *ld = tg_ast_load(ir, 1, TG_FLOAT32,
	                         tg_st_from_shape(ir, 2, in_shape));
	tg_uop *st = tg_ast_store(ir, 0, tg_ast_reduce(ir, TG_ADD, ld, 1u),
	                          tg_st_from_shape(ir, 2, out_shape));

	ck_assert_msg(st, "%s", tg_last_error());
	return tg_ast_sink(ir, &st, 1);
}

START_TEST(codegen_loops_over_a_variable)
{
	tg_ir *ir = tg_ir_new();
	tg_uop *sink = sym_sum_ast(ir);
	tg_opt up = { TG_OPT_UNROLL, 0, 2 }, ok = { TG_OPT_UPCAST, 1, 4 };
	tg_ksrc ks;

	ck_assert_int_eq(tg_codegen_opts(sink, kt_cpu_caps(), kt_set(), &ok,
	                                 1, &ks), TG_OK);
	ck_assert_uint_eq(ks.nvars, 1);
	ck_assert_str_eq(ks.vars[0], "n");
	ck_assert_str_eq(ks.name, "r_n_4");
	/* the loop runs to n; nothing launches per row */
	ck_assert_uint_eq(ks.global[0] * ks.global[1] * ks.global[2], 1);
	ck_assert_msg(strstr(ks.src, "< n;") || strstr(ks.src, "<n;") ||
	              strstr(ks.src, "< n)"), "%s", ks.src);
	tg_ksrc_free(&ks);
	ck_assert_int_eq(tg_codegen_opts(sink, kt_cpu_caps(), kt_set(), &up,
	                                 1, &ks), TG_EINVAL);
	ck_assert_msg(strstr(tg_last_error(), "opt: UNROLL(0,2) on axis 0 of "
	                     "symbolic size n"), "%s", tg_last_error());
	/* the hand-coded opts leave the symbolic axis alone */
	ck_assert_int_eq(tg_codegen(sink, kt_cpu_caps(), kt_set(), &ks),
	                 TG_OK);
	ck_assert_uint_eq(ks.nvars, 1);
	tg_ksrc_free(&ks);
	tg_ir_free(ir);
}
END_TEST

/* ------------------------------------------------ eager symbolic ops */

/* sum over rows 0..p of a (MAXCTX, D) ramp, for every p, against C;
 * every value runs the one compiled kernel. */
START_TEST(symbolic_shrink_and_sum)
{
	tg_variable *pos = tg_variable_new("pos", 0, MAXCTX - 1);
	tg_tensor *cache = ramp(MAXCTX, D, 0.5f, -3);
	size_t kernels = 0;
	char b[64];

	for (int p = 0; p < MAXCTX; p++) {
		float got[D];
		int64_t upto[4];

		ck_assert_int_eq(tg_variable_bind(pos, p), 0);
		upto[0] = 0;
		upto[1] = tg_dim_affine(tg_variable_dim(pos), 1, 1);
		upto[2] = 0;
		upto[3] = D;
		tg_scope_begin();
		tg_tensor *rows = tg_shrink(cache, 2, upto);
		ck_assert_msg(rows, "%s", tg_last_error());
		ck_assert_str_eq(tg_tensor_shape_str(rows, b, sizeof b),
		                 "((pos+1),8)");
		ck_assert(tg_dim_is_sym(tg_tensor_shape(rows)[0]));
		ck_assert_int_eq(tg_tensor_shape(rows)[1], D);
		read_floats(tg_sum(tg_mul_s(rows, 2), (int[]){ 0 }, 1, 0),
		            got, D);
		tg_scope_end();
		for (int j = 0; j < D; j++) {
			double want = 0;
			for (int i = 0; i <= p; i++)
				want += 2.0 * ramp_at(i * D + j, 0.5f, -3);
			ck_assert_double_eq_tol(got[j], want, 1e-4);
		}
		if (p == 1)
			kernels = tg_method_cache_count();
		if (p > 1)
			ck_assert_uint_eq(tg_method_cache_count(), kernels);
	}
	tg_variable_free(pos);
}
END_TEST

/* A symbolic tensor cannot be read to the host; reducing it to an
 * integer shape can. */
START_TEST(symbolic_data_is_refused)
{
	tg_variable *n = tg_variable_new("n", 1, 4);
	tg_tensor *t = ramp(4, 3, 1, 0), *s;
	float out[12];

	tg_variable_bind(n, 2);
	s = tg_shrink(t, 2, (int64_t[]){ 0, tg_variable_dim(n), 0, 3 });
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(tg_tensor_data(s, out, sizeof out), TG_EINVAL);
	ck_assert_str_eq(tg_last_error(), "tensor_data: the shape (n,3) is "
	                 "symbolic; shrink it to an integer shape first");
	ck_assert_int_eq(tg_tensor_numel(s), -1);
	ck_assert_str_eq(tg_last_error(), "numel: the shape (n,3) is "
	                 "symbolic");
	ck_assert_ptr_null(tg_mean(s, (int[]){ 0 }, 1, 0));
	ck_assert_str_eq(tg_last_error(), "mean: axis 0 of (n,3) is symbolic "
	                 "(sum, then divide by the count you know)");
	/* max over the symbolic axis, and a reshape that infers it */
	read_floats(tg_max(s, (int[]){ 0 }, 1, 0), out, 3);
	for (int j = 0; j < 3; j++)
		ck_assert_float_eq(out[j], fmaxf(ramp_at(j, 1, 0),
		                                 ramp_at(3 + j, 1, 0)));
	tg_tensor *r = tg_reshape(s, 3, (int64_t[]){ -1, 3, 1 });
	ck_assert_msg(r, "%s", tg_last_error());
	ck_assert_int_eq(tg_tensor_shape(r)[0], tg_variable_dim(n));
	/* gradients do not go through symbolic shapes */
	tg_tensor *w = ramp(4, 3, 1, 0);
	ck_assert_int_eq(tg_set_requires_grad(w, 1), 0);
	ck_assert_ptr_null(tg_shrink(w, 2, (int64_t[]){ 0, tg_variable_dim(n),
	                                                0, 3 }));
	ck_assert_str_eq(tg_last_error(), "autograd: gradients through "
	                 "symbolic shapes are not supported (a (n,3) result of "
	                 "a tensor that requires grad)");
	tg_variable_free(n);
}
END_TEST

/* ------------------------------------------- the KV-cache attention */

typedef struct attn {
	tg_variable *pos;
	tg_tensor *wq, *wk, *wv, *ck, *cv;
	int runs;
} attn;

static void attn_init(attn *m, tg_variable *pos)
{
	m->pos = pos;
	m->wq = ramp(D, D, 0.05f, -0.5f);
	m->wk = ramp(D, D, -0.04f, 0.4f);
	m->wv = ramp(D, D, 0.03f, -0.2f);
	m->ck = ramp(MAXCTX, D, 0, 0);
	m->cv = ramp(MAXCTX, D, 0, 0);
	m->runs = 0;
}

/* cache[p] := row, written through a view at the symbolic row p: the
 * kernel stores one row wherever the variable points at the call. */
static int put_row(tg_tensor *cache, tg_tensor *row, int64_t p)
{
	int64_t at[4] = { p, tg_dim_affine(p, 1, 1), 0, D };
	tg_tensor *view = tg_shrink(cache, 2, at);
	int rc = view ? tg_assign(view, row) : tg_last_status();

	return rc ? rc : tg_realize(view);
}

/* One decode step at position pos: x (1, D) -> attention over the
 * cached rows 0..pos (1, D). */
static int attn_step(void *ctx, tg_tensor *const *in, size_t nin,
                     tg_tensor **out, size_t nout)
{
	attn *m = ctx;
	int64_t p = tg_variable_dim(m->pos);
	int64_t upto[4] = { 0, tg_dim_affine(p, 1, 1), 0, D };
	tg_tensor *x = in[0], *q, *keys, *vals, *w;
	int rc;

	(void)nin;
	(void)nout;
	m->runs++;
	q = tg_matmul(x, m->wq);
	if ((rc = put_row(m->ck, tg_matmul(x, m->wk), p)) ||
	    (rc = put_row(m->cv, tg_matmul(x, m->wv), p)))
		return rc;
	keys = tg_shrink(m->ck, 2, upto);
	vals = tg_shrink(m->cv, 2, upto);
	w = tg_softmax(tg_mul_s(tg_matmul(q, tg_transpose(keys, 0, 1)),
	                        1.0 / sqrt(D)), -1);
	out[0] = tg_matmul(w, vals);
	return out[0] ? 0 : tg_last_status();
}

/* The same in double precision. */
typedef struct ref {
	double ck[MAXCTX][D], cv[MAXCTX][D];
} ref;

static void ref_step(ref *r, const float *x, int p, double *y)
{
	double q[D], s[MAXCTX], m = -INFINITY, sum = 0;

	for (int j = 0; j < D; j++) {
		double a = 0, b = 0, c = 0;
		for (int i = 0; i < D; i++) {
			a += x[i] * (double)ramp_at(i * D + j, 0.05f, -0.5f);
			b += x[i] * (double)ramp_at(i * D + j, -0.04f, 0.4f);
			c += x[i] * (double)ramp_at(i * D + j, 0.03f, -0.2f);
		}
		q[j] = a;
		r->ck[p][j] = b;
		r->cv[p][j] = c;
	}
	for (int t = 0; t <= p; t++) {
		s[t] = 0;
		for (int j = 0; j < D; j++)
			s[t] += q[j] * r->ck[t][j];
		s[t] /= sqrt(D);
		m = fmax(m, s[t]);
	}
	for (int t = 0; t <= p; t++)
		sum += (s[t] = exp(s[t] - m));
	for (int j = 0; j < D; j++) {
		y[j] = 0;
		for (int t = 0; t <= p; t++)
			y[j] += s[t] / sum * r->cv[t][j];
	}
}

static void token(int p, float *x)
{
	for (int i = 0; i < D; i++)
		x[i] = ramp_at(p * D + i, 0.1f, -1);
}

START_TEST(kv_cache_replays_every_position)
{
	tg_variable *pos = tg_variable_new("pos", 0, MAXCTX - 1);
	static ref r;
	attn eager, jitted;
	tg_jit *j;
	tg_jit_info info;
	size_t kernels = 0;

	memset(&r, 0, sizeof r);
	attn_init(&eager, pos);
	attn_init(&jitted, pos);
	ck_assert_ptr_nonnull(j = tg_jit_new(attn_step, &jitted));
	for (int p = 0; p < MAXCTX; p++) {
		float x[D], a[D], b[D];
		double want[D];
		tg_tensor *in, *out = NULL;

		token(p, x);
		ref_step(&r, x, p, want);
		ck_assert_int_eq(tg_variable_bind(pos, p), 0);
		tg_scope_begin();
		in = tg_tensor_new(NULL, TG_FLOAT32, 2, (int64_t[]){ 1, D }, x);
		ck_assert_msg(attn_step(&eager, &in, 1, &out, 1) == 0, "%s",
		              tg_last_error());
		read_floats(out, a, D);
		ck_assert_msg(tg_jit_call(j, &in, 1, &out, 1) == 0,
		              "position %d: %s", p, tg_last_error());
		read_floats(out, b, D);
		tg_scope_end();
		for (int k = 0; k < D; k++) {
			ck_assert_msg(a[k] == b[k], "position %d, %d: eager %.9g "
			              "replay %.9g", p, k, a[k], b[k]);
			ck_assert_double_eq_tol(a[k], want[k], 1e-4);
		}
		if (p == 2)
			kernels = tg_method_cache_count();
		if (p > 2)  /* no value compiles anything new */
			ck_assert_uint_eq(tg_method_cache_count(), kernels);
	}
	ck_assert_int_eq(jitted.runs, 2);  /* eager, capture, then replays */
	ck_assert_int_eq(tg_jit_get_info(j, &info), 0);
	ck_assert_uint_eq(info.calls, MAXCTX);
	ck_assert_int_eq(info.captured, 1);
	ck_assert_uint_gt(info.kernels, 0);
	tg_jit_free(j);
	tg_variable_free(pos);
}
END_TEST

/* A replay reads the variable's value at the call: binding outside the
 * range fails at the bind and the replay runs with the value before. */
START_TEST(kv_cache_out_of_range)
{
	tg_variable *pos = tg_variable_new("pos", 0, MAXCTX - 1);
	attn m;
	tg_jit *j;

	attn_init(&m, pos);
	ck_assert_ptr_nonnull(j = tg_jit_new(attn_step, &m));
	for (int p = 0; p < 3; p++) {
		float x[D];
		tg_tensor *in, *out;

		token(p, x);
		tg_variable_bind(pos, p);
		tg_scope_begin();
		in = tg_tensor_new(NULL, TG_FLOAT32, 2, (int64_t[]){ 1, D }, x);
		ck_assert_int_eq(tg_jit_call(j, &in, 1, &out, 1), 0);
		tg_scope_end();
	}
	ck_assert_int_eq(tg_variable_bind(pos, MAXCTX), TG_EINVAL);
	ck_assert_str_eq(tg_last_error(), "variable_bind: pos=16 is outside its "
	                 "range [0, 15]");
	ck_assert_int_eq(tg_variable_value(pos), 2);
	tg_jit_free(j);
	tg_variable_free(pos);
}
END_TEST

/* A captured kernel names its variable, and a replay reads the live
 * tg_variable of that name: capturing a step that uses a size whose
 * variable was freed fails, saying so.  (Eagerly it still runs: the
 * size carries its value.) */
static int64_t saved_dim;

static int code_step(void *ctx, tg_tensor *const *in, size_t nin,
                     tg_tensor **out, size_t nout)
{
	int64_t upto[4] = { 0, saved_dim, 0, 3 };

	(void)ctx;
	(void)nin;
	(void)nout;
	out[0] = tg_sum(tg_shrink(in[0], 2, upto), (int[]){ 0 }, 1, 0);
	return out[0] ? 0 : tg_last_status();
}

START_TEST(capture_needs_the_live_variable)
{
	tg_variable *n = tg_variable_new("n", 1, 4);
	tg_tensor *in = ramp(4, 3, 1, 0), *out;
	float got[3];
	tg_jit *j;

	tg_variable_bind(n, 2);
	saved_dim = tg_variable_dim(n);
	tg_variable_free(n);
	ck_assert_ptr_nonnull(j = tg_jit_new(code_step, NULL));
	ck_assert_int_eq(tg_jit_call(j, &in, 1, &out, 1), 0);
	read_floats(out, got, 3);
	for (int k = 0; k < 3; k++)
		ck_assert_float_eq(got[k], ramp_at(k, 1, 0) +
		                           ramp_at(3 + k, 1, 0));
	ck_assert_int_eq(tg_jit_call(j, &in, 1, &out, 1), TG_EINVAL);
	ck_assert_msg(strstr(tg_last_error(), "jit: capture: a kernel reads "
	                     "the variable 'n', and no live tg_variable has "
	                     "that name"), "%s", tg_last_error());
	tg_jit_free(j);
}
END_TEST

/* A batch size as a variable: the input is the first bs rows of a
 * realized (MAXB, D) tensor, out[0] = sum over the batch of relu(x @ w)
 * (integer shape), out[1] = 2 * relu(x @ w) (bs, D), symbolic. */
#define MAXB 8

static int batch_step(void *ctx, tg_tensor *const *in, size_t nin,
                      tg_tensor **out, size_t nout)
{
	tg_tensor *h = tg_relu(tg_matmul(in[0], (tg_tensor *)ctx));

	(void)nin;
	(void)nout;
	out[0] = tg_sum(h, (int[]){ 0 }, 1, 0);
	out[1] = tg_mul_s(h, 2);
	return out[0] && out[1] ? 0 : tg_last_status();
}

static void batch_ref(int bs, double *sum, double *h)
{
	for (int j = 0; j < D; j++) {
		sum[j] = 0;
		for (int r = 0; r < bs; r++) {
			double a = 0;
			for (int i = 0; i < D; i++)
				a += (double)ramp_at(r * D + i, 0.1f, -1) *
				     ramp_at(i * D + j, 0.05f, -0.5f);
			h[r * D + j] = a > 0 ? a : 0;
			sum[j] += h[r * D + j];
		}
	}
}

START_TEST(batch_size_variable)
{
	static const int sizes[] = { 3, 7, 1, 8, 5, 5, 2 };
	tg_variable *bs = tg_variable_new("bs", 1, MAXB);
	tg_tensor *xs = ramp(MAXB, D, 0.1f, -1), *w = ramp(D, D, 0.05f, -0.5f);
	tg_jit *j = tg_jit_new(batch_step, w);

	for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++) {
		int n = sizes[c];
		double sum[D], h[MAXB * D];
		float got[MAXB * D];
		tg_tensor *x, *out[2];

		batch_ref(n, sum, h);
		tg_variable_bind(bs, n);
		tg_scope_begin();
		x = tg_shrink(xs, 2, (int64_t[]){ 0, tg_variable_dim(bs), 0, D });
		ck_assert_msg(tg_jit_call(j, &x, 1, out, 2) == 0, "bs=%d: %s", n,
		              tg_last_error());
		read_floats(out[0], got, D);
		for (int k = 0; k < D; k++)
			ck_assert_double_eq_tol(got[k], sum[k], 1e-4);
		ck_assert(tg_dim_is_sym(tg_tensor_shape(out[1])[0]));
		ck_assert_int_eq(tg_dim_value(tg_tensor_shape(out[1])[0]), n);
		read_floats(tg_shrink(out[1], 2, (int64_t[]){ 0, n, 0, D }), got,
		            (size_t)n * D);
		for (int k = 0; k < n * D; k++)
			ck_assert_double_eq_tol(got[k], 2 * h[k], 1e-4);
		tg_scope_end();
	}
	/* an input made with another value than the variable has now */
	tg_variable_bind(bs, 4);
	tg_tensor *x = tg_shrink(xs, 2, (int64_t[]){ 0, tg_variable_dim(bs),
	                                              0, D }), *out[2];
	tg_variable_bind(bs, 6);
	ck_assert_int_eq(tg_jit_call(j, &x, 1, out, 2), TG_EINVAL);
	ck_assert_str_eq(tg_last_error(), "jit_call: input 0: axis 0 is bs, "
	                 "which was 4 when the input was made and is 6 now");
	tg_jit_free(j);
	tg_variable_free(bs);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("variables");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, variable_api);
	tcase_add_test(tc, variable_errors);
	tcase_add_test(tc, bad_codes_in_shapes);
	tcase_add_test(tc, codegen_loops_over_a_variable);
	tcase_add_test(tc, symbolic_shrink_and_sum);
	tcase_add_test(tc, symbolic_data_is_refused);
	tcase_add_test(tc, kv_cache_replays_every_position);
	tcase_add_test(tc, kv_cache_out_of_range);
	tcase_add_test(tc, capture_needs_the_live_variable);
	tcase_add_test(tc, batch_size_variable);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tl_run(suite());
}

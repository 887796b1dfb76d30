/*
 * fuzz_opts.c - random legal opt combinations leave results unchanged
 * against NOOPT, on the device under test (`make check` runs it on the
 * CPU here and on OPENCL and VULKAN through tests/ondevice.sh).
 *
 * For each kernel of a fixed set (matmuls of several shapes, a
 * convolution-shaped reduce, row and column sums, an int max, a padded
 * elementwise chain, a reduce with two outputs), the NOOPT result is the
 * reference.  Then, with a fixed seed, COUNT sequences of 1 to 5 opts
 * are drawn, each opt uniformly from the moves the plan takes at that
 * point (tg_codegen_actions: the BEAM search's move set, so every opt
 * BEAM may pick is exercised).  Each sequence is compiled, run on the
 * same inputs and compared: bit for bit, except that a grouped reduce
 * (GROUP, GROUPTOP) adds in another order and is compared within a
 * rounding tolerance.  On a C device every sequence runs again with
 * its outer reduce loop forced into passes of 1 to 3 iterations
 * (tg_settings.reduce_passes) wherever the kernel allows passes: the
 * partial results stored and resumed must also match NOOPT bit for
 * bit.  FUZZ_OPTS_COUNT and FUZZ_OPTS_SEED override the count and
 * seed.
 */
#include "config.h"

#include <math.h>

#include "kasttest.h"

#define COUNT 24     /* sequences per kernel */
#define MAX_SEQ 5

static tg_ir *k;
static uint64_t rng;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static long env_long(const char *name, long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 10) : dflt;
}

static void setup(void)
{
	unsetenv("NOOPT");
	rng = (uint64_t)env_long("FUZZ_OPTS_SEED", 1);
	k = tg_ir_new();
	ck_assert_ptr_nonnull(k);
}

static void teardown(void)
{
	tg_ir_free(k);
	tg_shutdown();
}

/* A kernel to fuzz: its AST and buffers (0 the output). */
typedef struct fz {
	tg_uop *sink;
	size_t nbufs;
	tg_buffer *bufs[4];
	size_t nout;      /* outputs: buffers 0 .. nout-1 */
	tg_dtype dt;
	int passes;       /* its reduce can run in passes on C */
} fz;

static void add_buf(fz *f, size_t n, int input)
{
	float *h = malloc(n * sizeof *h);

	ck_assert_ptr_nonnull(h);
	kt_fill(h, n, 0.375f + 0.125f * (float)f->nbufs, -0.25f);
	if (f->dt == TG_INT32)
		for (size_t i = 0; i < n; i++)
			((int32_t *)h)[i] = (int32_t)(i * 37 % 23) - 11;
	f->bufs[f->nbufs++] = kt_buf_with(f->dt, n, input ? h : NULL);
	free(h);
}

/* Runs sink with opts (none: NOOPT) and copies the outputs into out;
 * 0 when the opts were refused or failed to compile (for a random
 * sequence that is allowed only for a refusal). */
static int run_with(const fz *f, const tg_settings *set, const tg_opt *opts,
                    size_t n, void **out, char *text, size_t len)
{
	tg_ksrc ks;
	int rc = tg_codegen_opts(f->sink, kt_cpu_caps(), set, opts, n, &ks);

	if (rc)
		return 0;
	snprintf(text, len, "%s%s", ks.opts,
	         strstr(ks.src, "kidx0") ? " in reduce passes" : "");
	kt_launch(&ks, (tg_buffer **)f->bufs, f->nbufs);
	tg_ksrc_free(&ks);
	for (size_t b = 0; b < f->nout; b++)
		ck_assert_int_eq(tg_buffer_copyout(f->bufs[b], out[b],
		                                   tg_buffer_nbytes(f->bufs[b])),
		                 TG_OK);
	return 1;
}

static int run(const fz *f, const tg_opt *opts, size_t n, void **out,
               char *text, size_t len)
{
	return run_with(f, kt_set(), opts, n, out, text, len);
}

/* Runs the sequence again in reduce passes where the kernel allows
 * them; 1 when it did. */
static int run_passes(const fz *f, const tg_opt *opts, size_t n,
                      void **out, char *text, size_t len)
{
	tg_settings set = *kt_set();

	if (kt_cpu_caps()->dialect != TG_DIALECT_C)
		return 0;
	set.reduce_passes = 1 + (long)(rnd() % 3);
	ck_assert_msg(run_with(f, &set, opts, n, out, text, len), "%s",
	              tg_last_error());
	return strstr(text, "in reduce passes") != NULL;
}

static int grouped(const tg_opt *opts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (opts[i].op == TG_OPT_GROUP || opts[i].op == TG_OPT_GROUPTOP)
			return 1;
	return 0;
}

static void compare(const fz *f, size_t b, const void *ref, const void *got,
                    int tol, const char *opts)
{
	size_t n = tg_buffer_count(f->bufs[b]);

	for (size_t i = 0; i < n; i++) {
		double r, g;
		if (f->dt == TG_INT32) {
			r = ((const int32_t *)ref)[i];
			g = ((const int32_t *)got)[i];
		} else {
			r = ((const float *)ref)[i];
			g = ((const float *)got)[i];
		}
		if (tol)
			ck_assert_msg(fabs(g - r) <= 1e-4 * (1 + fabs(r)),
			              "%s: buffer %zu [%zu] = %.9g, NOOPT %.9g",
			              opts, b, i, g, r);
		else
			ck_assert_msg(!memcmp((const char *)got + i * 4,
			                      (const char *)ref + i * 4, 4),
			              "%s: buffer %zu [%zu] = %.9g, NOOPT %.9g (not "
			              "bit for bit)", opts, b, i, g, r);
	}
}

/* COUNT random sequences against NOOPT. */
static void fuzz(fz *f, const char *what)
{
	void *ref[2], *got[2];
	char text[256];
	long count = env_long("FUZZ_OPTS_COUNT", COUNT);
	size_t ran = 0, refused = 0, passes = 0;

	for (size_t b = 0; b < f->nout; b++) {
		ref[b] = malloc(tg_buffer_nbytes(f->bufs[b]));
		got[b] = malloc(tg_buffer_nbytes(f->bufs[b]));
		ck_assert(ref[b] && got[b]);
	}
	ck_assert(run(f, (const tg_opt[1]){ 0 }, 0, ref, text, sizeof text));
	for (long c = 0; c < count; c++) {
		tg_opt seq[MAX_SEQ], moves[512];
		size_t len = 1 + rnd() % MAX_SEQ, n = 0, nm;
		for (; n < len; n++) {
			ck_assert_msg(tg_codegen_actions(f->sink, kt_cpu_caps(),
			                                 kt_set(), seq, n,
			                                 moves, 512,
			                                 &nm) == TG_OK,
			              "%s", tg_last_error());
			if (!nm)
				break;
			seq[n] = moves[rnd() % nm];
		}
		if (!run(f, seq, n, got, text, sizeof text)) {
			/* a legal move may still fail as a whole: only a
			 * refusal (work-group limits of the sequence) */
			ck_assert_msg(tg_last_status() == TG_EINVAL ||
			              tg_last_status() == TG_EUNSUPPORTED,
			              "%s: %s", what, tg_last_error());
			refused++;
			continue;
		}
		for (size_t b = 0; b < f->nout; b++)
			compare(f, b, ref[b], got[b], grouped(seq, n), text);
		ran++;
		if (!run_passes(f, seq, n, got, text, sizeof text))
			continue;
		for (size_t b = 0; b < f->nout; b++)
			compare(f, b, ref[b], got[b], grouped(seq, n), text);
		passes++;
	}
	fprintf(stderr, "fuzz_opts %s on %s: %zu sequences run (%zu again in "
	        "reduce passes), %zu refused\n", what, tg_dev_name(kt_dev()),
	        ran, passes, refused);
	ck_assert_uint_gt(ran, 0);
	/* every kernel with one reduce and one store takes passes on C */
	if (f->passes && kt_cpu_caps()->dialect == TG_DIALECT_C)
		ck_assert_uint_gt(passes, 0);
	for (size_t b = 0; b < f->nout; b++) {
		free(ref[b]);
		free(got[b]);
	}
	kt_unref(f->bufs, f->nbufs);
}

static void fuzz_matmul(int m, int n, int kk)
{
	fz f = { .sink = kt_matmul(k, m, n, kk), .nout = 1,
	         .dt = TG_FLOAT32, .passes = 1 };
	char what[64];

	add_buf(&f, (size_t)(m * n), 0);
	add_buf(&f, (size_t)(m * kk), 1);
	add_buf(&f, (size_t)(kk * n), 1);
	snprintf(what, sizeof what, "matmul %dx%dx%d", m, n, kk);
	fuzz(&f, what);
}

START_TEST(matmul_square)
{
	fuzz_matmul(32, 32, 32);
}
END_TEST

START_TEST(matmul_odd)
{
	fuzz_matmul(12, 40, 24);
}
END_TEST

START_TEST(matvec)
{
	fuzz_matmul(1, 64, 48);
}
END_TEST

/* A tracker of one view with these strides over shape. */
static tg_st *st_view(size_t n, const tg_sint *shape, const tg_sint *st)
{
	tg_view *v = NULL;
	tg_st *r;

	ck_assert_int_eq(tg_view_new(NULL, n, shape, st, tg_si(0), NULL, &v),
	                 TG_OK);
	r = tg_st_from_views(&v, 1);
	tg_view_free(v);
	ck_assert_ptr_nonnull(r);
	return r;
}

/* out(co, y, x) = sum over (ci, ky, kx) of in(ci, y+ky, x+kx) *
 * w(co, ci, ky, kx): the shape of a convolution with its windows as
 * strides (tinygrad's pool). */
START_TEST(conv)
{
	enum { CO = 8, CI = 4, H = 10, W = 10, KH = 3, KW = 3, OH = 8, OW = 8 };
	tg_sint full[6] = { tg_si(CO), tg_si(OH), tg_si(OW), tg_si(CI),
	                    tg_si(KH), tg_si(KW) };
	tg_sint sin[6] = { tg_si(0), tg_si(W), tg_si(1), tg_si(H * W),
	                   tg_si(W), tg_si(1) };
	tg_sint sw[6] = { tg_si(CI * KH * KW), tg_si(0), tg_si(0),
	                  tg_si(KH * KW), tg_si(KW), tg_si(1) };
	tg_sint so[6] = { tg_si(OH * OW), tg_si(OW), tg_si(1), tg_si(0),
	                  tg_si(0), tg_si(0) };
	tg_sint oshape[6] = { tg_si(CO), tg_si(OH), tg_si(OW), tg_si(1),
	                      tg_si(1), tg_si(1) };
	fz f = { .nout = 1, .dt = TG_FLOAT32, .passes = 1 };
	tg_uop *x, *w, *s;

	x = tg_ast_load(k, 1, TG_FLOAT32, st_view(6, full, sin));
	w = tg_ast_load(k, 2, TG_FLOAT32, st_view(6, full, sw));
	s = tg_ast_store(k, 0, tg_ast_reduce(k, TG_ADD,
	                                     tg_ast_alu(k, TG_MUL, x, w, NULL),
	                                     7u << 3),
	                 st_view(6, oshape, so));
	ck_assert_msg(s != NULL, "%s", tg_last_error());
	f.sink = tg_ast_sink(k, &s, 1);
	add_buf(&f, CO * OH * OW, 0);
	add_buf(&f, CI * H * W, 1);
	add_buf(&f, CO * CI * KH * KW, 1);
	fuzz(&f, "conv");
}
END_TEST

/* Sums of a(24,20) over rows and over columns, and an int32 max. */
START_TEST(sums)
{
	for (int ax = 0; ax < 3; ax++) {
		fz f = { .nout = 1, .dt = ax == 2 ? TG_INT32 : TG_FLOAT32,
		         .passes = 1 };
		uint32_t axes = ax == 1 ? 2u : 1u;
		tg_uop *x = tg_ast_load(k, 1, f.dt, kt_st(2, 24, 20));
		tg_uop *s = tg_ast_store(k, 0,
		                         tg_ast_reduce(k, ax == 2 ? TG_MAX
		                                                  : TG_ADD,
		                                       x, axes),
		                         axes == 1 ? kt_st(2, 1, 20)
		                                   : kt_st(2, 24, 1));
		f.sink = tg_ast_sink(k, &s, 1);
		add_buf(&f, axes == 1 ? 20 : 24, 0);
		add_buf(&f, 24 * 20, 1);
		fuzz(&f, ax == 0 ? "column sums" : ax == 1 ? "row sums"
		                                           : "int32 max");
	}
}
END_TEST

/* out(6,16) = max(pad(a(6,12)) * b + a', 0): masked loads in lanes. */
START_TEST(padded_elementwise)
{
	tg_sint arg[4] = { tg_si(0), tg_si(0), tg_si(1), tg_si(3) };
	tg_st *sa = kt_st(2, 6, 12);
	fz f = { .nout = 1, .dt = TG_FLOAT32 };
	tg_uop *x = tg_ast_load(k, 1, TG_FLOAT32,
	                        kt_moved(sa, tg_st_pad(NULL, sa, 2, arg)));
	tg_uop *y = tg_ast_load(k, 2, TG_FLOAT32, kt_st(2, 6, 16));
	tg_scalar zero = { .f = 0 };
	tg_uop *z = tg_ast_const(k, TG_FLOAT32, zero, kt_st(2, 1, 1));
	tg_uop *s = tg_ast_store(k, 0,
	                         tg_ast_alu(k, TG_MAX,
	                                    tg_ast_alu(k, TG_ADD,
	                                               tg_ast_alu(k, TG_MUL, x,
	                                                          y, NULL),
	                                               y, NULL),
	                                    z, NULL),
	                         kt_st(2, 6, 16));

	f.sink = tg_ast_sink(k, &s, 1);
	add_buf(&f, 96, 0);
	add_buf(&f, 72, 1);
	add_buf(&f, 96, 1);
	fuzz(&f, "padded elementwise");
}
END_TEST

/* An op after the reduce, as a Linear layer has: out(12,16) =
 * max(a(12,24) @ b(24,16) * c(16), 0).  In passes the store takes the
 * partial sum until the last pass, which applies the ops. */
START_TEST(matmul_epilogue)
{
	fz f = { .nout = 1, .dt = TG_FLOAT32, .passes = 1 };
	tg_sint full[3] = { tg_si(12), tg_si(16), tg_si(24) };
	tg_sint sa[3] = { tg_si(24), tg_si(0), tg_si(1) };
	tg_sint sb[3] = { tg_si(0), tg_si(1), tg_si(16) };
	tg_sint sc[3] = { tg_si(0), tg_si(1), tg_si(0) };
	tg_sint so[3] = { tg_si(16), tg_si(1), tg_si(0) };
	tg_sint oshape[3] = { tg_si(12), tg_si(16), tg_si(1) };
	tg_scalar zero = { .f = 0 };
	tg_uop *a = tg_ast_load(k, 1, TG_FLOAT32, st_view(3, full, sa));
	tg_uop *b = tg_ast_load(k, 2, TG_FLOAT32, st_view(3, full, sb));
	tg_uop *c = tg_ast_load(k, 3, TG_FLOAT32, st_view(3, oshape, sc));
	tg_uop *z = tg_ast_const(k, TG_FLOAT32, zero, kt_st(3, 1, 1, 1));
	tg_uop *r = tg_ast_reduce(k, TG_ADD, tg_ast_alu(k, TG_MUL, a, b, NULL),
	                          4u);
	tg_uop *s = tg_ast_store(k, 0, tg_ast_alu(k, TG_MAX,
	                         tg_ast_alu(k, TG_MUL, r, c, NULL), z, NULL),
	                         st_view(3, oshape, so));

	ck_assert_msg(s != NULL, "%s", tg_last_error());
	f.sink = tg_ast_sink(k, &s, 1);
	add_buf(&f, 12 * 16, 0);
	add_buf(&f, 12 * 24, 1);
	add_buf(&f, 24 * 16, 1);
	add_buf(&f, 16, 1);
	fuzz(&f, "matmul epilogue");
}
END_TEST

/* Two outputs of one reduce: o0 = a.sum(1), o1 = o0 * 2. */
START_TEST(two_outputs)
{
	fz f = { .nout = 2, .dt = TG_FLOAT32 };
	tg_uop *x = tg_ast_load(k, 2, TG_FLOAT32, kt_st(2, 16, 12));
	tg_uop *r = tg_ast_reduce(k, TG_ADD, x, 2u);
	tg_scalar two = { .f = 2.0 };
	tg_uop *c = tg_ast_const(k, TG_FLOAT32, two, kt_st(2, 1, 1));
	tg_uop *s[2] = {
		tg_ast_store(k, 0, r, kt_st(2, 16, 1)),
		tg_ast_store(k, 1, tg_ast_alu(k, TG_MUL, r, c, NULL),
		             kt_st(2, 16, 1)),
	};

	f.sink = tg_ast_sink(k, s, 2);
	add_buf(&f, 16, 0);
	add_buf(&f, 16, 0);
	add_buf(&f, 16 * 12, 1);
	fuzz(&f, "two outputs");
}
END_TEST

static Suite *fuzz_suite(void)
{
	Suite *s = suite_create("fuzz_opts");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 600);
	tcase_add_test(t, matmul_square);
	tcase_add_test(t, matmul_odd);
	tcase_add_test(t, matvec);
	tcase_add_test(t, conv);
	tcase_add_test(t, sums);
	tcase_add_test(t, padded_elementwise);
	tcase_add_test(t, two_outputs);
	tcase_add_test(t, matmul_epilogue);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return tl_run(fuzz_suite());
}

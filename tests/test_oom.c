/*
 * test_oom.c - allocation failure is an error everywhere (STYLE.md 7.5):
 * the scheduler, codegen (lowering, the passes, rendering) and a whole
 * tensor program are run with allocation 0, 1, 2, ... failing until
 * they succeed.  Every failing run returns TG_ENOMEM with a message
 * about memory, never a wrong schedule or a wrong value, and the
 * successful run's results are checked against C loops.  Leaks show
 * under `make check-valgrind`.
 */
#include "config.h"

#include <math.h>

#include "kasttest.h"
#include "failalloc.h"
#include "../libtgcore/engine/engine.h"

#ifdef TL_INTERPOSED

/* ------------------------------------------------------------ schedule */

static tg_dev *dev;
static size_t want_kernels;

/* softmax's lazy graph over (4, 8): max, exp-sum, divide. */
static tg_lazy *softmax_graph(tg_lazy *x)
{
	tg_lazy *m = tg_lazy_reduce(TG_MAX, x, 2u), *me, *d, *e, *s, *se, *r;
	int64_t sh[2] = { 4, 8 };

	me = tg_lazy_expand(m, 2, sh);
	d = tg_lazy_alu(TG_ADD, x, tg_lazy_alu(TG_NEG, me, NULL, NULL), NULL);
	e = tg_lazy_alu(TG_EXP2, d, NULL, NULL);
	s = tg_lazy_reduce(TG_ADD, e, 2u);
	se = tg_lazy_expand(s, 2, sh);
	r = tg_lazy_alu(TG_MUL, e, tg_lazy_alu(TG_RECIP, se, NULL, NULL),
	                NULL);
	tg_lazy_unref(m);
	tg_lazy_unref(me);
	tg_lazy_unref(d);
	tg_lazy_unref(e);
	tg_lazy_unref(s);
	tg_lazy_unref(se);
	return r;
}

/* Builds and schedules softmax; TG_OK only with the right kernel
 * count. */
static int schedule_run(void)
{
	int64_t sh[2] = { 4, 8 };
	tg_lazy *x = tg_lazy_empty(dev, TG_FLOAT32, 2, sh), *r;
	tg_schedule s;
	int rc;

	r = x ? softmax_graph(x) : NULL;
	rc = r ? tg_schedule_create(&r, 1, &s) : tg_last_status();
	if (rc == TG_OK) {
		/* no Check calls while allocations fail: Check's own
		 * would end the process */
		if (s.items.n != want_kernels)
			rc = tg_error(TG_EINTERNAL, "%zu kernels, want %zu",
			              s.items.n, want_kernels);
		for (size_t i = 0; i < s.items.n; i++)
			if (!s.items.v[i].ast)
				rc = tg_error(TG_EINTERNAL, "item %zu: no AST", i);
		tg_schedule_free(&s);
	}
	tg_lazy_unref(r);
	tg_lazy_unref(x);
	return rc;
}

START_TEST(schedule_fails_cleanly)
{
	dev = tg_dev_get("CPU");
	ck_assert_ptr_nonnull(dev);
	want_kernels = 3;  /* tinygrad's softmax: max, sum, divide */
	ck_assert_int_eq(schedule_run(), TG_OK);
	tl_fail_each(schedule_run, 20);
	tg_shutdown();
}
END_TEST

/* ------------------------------------------------------------- codegen */

static const struct tg_renderer_caps *caps;
static tg_ir *actx;
static tg_uop *ast;
static char *want_src;  /* the kernel compiled without failures */
static tg_settings set;  /* read before allocations fail */

/* Compiles the matmul AST with the hand-coded opts. */
static int codegen_run(void)
{
	tg_ksrc ks;
	int rc = tg_codegen(ast, caps, &set, &ks);

	if (rc == TG_OK) {
		if (want_src && strcmp(ks.src, want_src))
			rc = tg_error(TG_EINTERNAL, "kernel %s differs",
			              ks.name);
		tg_ksrc_free(&ks);
	}
	return rc;
}

START_TEST(codegen_fails_cleanly)
{
	caps = kt_cpu_caps();
	actx = tg_ir_new();
	ck_assert_ptr_nonnull(actx);
	ast = kt_matmul(actx, 16, 16, 16);
	ck_assert_ptr_nonnull(ast);
	{
		tg_ksrc ks;
		set = *kt_set();
		ck_assert_int_eq(tg_codegen(ast, caps, &set, &ks), TG_OK);
		want_src = strdup(ks.src);
		tg_ksrc_free(&ks);
	}
	tl_fail_each(codegen_run, 100);
	free(want_src);
	tg_ir_free(actx);
	tg_shutdown();
}
END_TEST

/* ------------------------------------------------------ tensor program */

enum { R = 3, C = 5 };
static float xin[R * C];

/* softmax(x @ x^T / 4) on the CPU device: scheduling, the method cache
 * (kernels compiled by the warm-up run), launching, reading back. */
static int program_run(void)
{
	int64_t sh[2] = { R, C };
	float got[R * R];
	double want[R * R];
	tg_tensor *x, *y;
	int rc;

	tg_scope_begin();
	x = tg_tensor_new(tg_dev_get("CPU"), TG_FLOAT32, 2, sh, xin);
	y = tg_softmax(tg_div_s(tg_matmul(x, tg_transpose(x, 0, 1)), 4.0),
	               1);
	rc = y ? tg_tensor_data(y, got, sizeof got) : tg_last_status();
	tg_scope_end();
	if (rc != TG_OK)
		return rc;
	for (int i = 0; i < R; i++) {
		double m = -INFINITY, s = 0;
		for (int j = 0; j < R; j++) {
			double d = 0;
			for (int k = 0; k < C; k++)
				d += (double)xin[i * C + k] * xin[j * C + k];
			want[i * R + j] = d / 4;
			m = fmax(m, d / 4);
		}
		for (int j = 0; j < R; j++)
			s += exp(want[i * R + j] - m);
		for (int j = 0; j < R; j++)
			want[i * R + j] = exp(want[i * R + j] - m) / s;
	}
	for (int i = 0; i < R * R; i++)
		if (fabs(got[i] - want[i]) > 1e-5)
			return tg_error(TG_EINTERNAL, "element %d: %g, want %g",
			                i, got[i], want[i]);
	return TG_OK;
}

START_TEST(tensor_program_fails_cleanly)
{
	kt_fill(xin, R * C, 0.25f, 0.5f);
	ck_assert_int_eq(program_run(), TG_OK);  /* devices, kernels */
	tl_fail_each(program_run, 50);
	tg_shutdown();
}
END_TEST


/* One case per test, so CK_RUN_CASE picks one (valgrind is slow). */
static void add_case(Suite *s, const char *name, const TTest *test)
{
	TCase *t = tcase_create(name);

	tcase_set_timeout(t, 3600);
	tcase_add_test(t, test);
	suite_add_tcase(s, t);
}
#endif /* TL_INTERPOSED */

int main(void)
{
#ifdef TL_INTERPOSED
	Suite *s = suite_create("oom");

	add_case(s, "schedule", schedule_fails_cleanly);
	add_case(s, "codegen", codegen_fails_cleanly);
	add_case(s, "tensor program", tensor_program_fails_cleanly);
	return tl_run(s);
#else
	/* ASan and TSan bring their own allocators: nothing to interpose
	 * (failalloc.h); no suite is made, so none leaks */
	puts("SKIP: test_oom needs glibc's allocator, not a sanitizer's");
	return 77;
#endif
}

/*
 * test_oom.c - allocation failure is an error everywhere (STYLE.md 7.5):
 * the scheduler, codegen (lowering, the passes, rendering) and a whole
 * tensor program are run with allocation 0, 1, 2, ... failing until
 * they succeed; a training step through the JIT (eager, capture,
 * replay) and a BEAM search, from a cold library each time, with each
 * allocation site failing in turn (tests/failalloc.h).  Every failing
 * run returns TG_ENOMEM with a message about memory, never a crash, a
 * wrong schedule or a wrong value, and the successful run's results are
 * checked against C loops in double precision.  Leaks fail the run
 * under ASan (LeakSanitizer) and `make check-valgrind`.
 *
 * make check names a site by its 8 innermost callers and fails every
 * one (under valgrind only the first VALGRIND_RUNS of each sweep);
 * TG_OOM_SWEEP=all names sites by 12 callers, which makes more of
 * them, and fails every one under valgrind too.  TL_SITE_FRAMES=n sets
 * the callers outright.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "kasttest.h"
#include "failalloc.h"
#include "../libtgcore/engine/engine.h"

#ifdef TL_INTERPOSED

/* ------------------------------------------------------------ schedule */

static tg_dev *dev;
static size_t want_kernels;
static tg_settings sched_set;  /* read before allocations fail */

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
	rc = r ? tg_schedule_create(&r, 1, &sched_set, &s) : tg_last_status();
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
	sched_set = *kt_set();
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


/* ------------------------------------------------------ site sweeps */

/* Sites failed per sweep under valgrind, where a run takes seconds. */
#define VALGRIND_RUNS 100

static int sweep_all(void)
{
	const char *all = getenv("TG_OOM_SWEEP");

	return all && !strcmp(all, "all");
}

/* The most sites a sweep fails (0: all); under TG_OOM_SWEEP=all it
 * also names sites by 12 callers, unless TL_SITE_FRAMES says. */
static size_t sweep_limit(void)
{
	if (sweep_all() && !getenv("TL_SITE_FRAMES"))
		setenv("TL_SITE_FRAMES", "12", 1);
	return RUNNING_ON_VALGRIND && !sweep_all() ? VALGRIND_RUNS : 0;
}

static void report(const char *what, tl_sweep sw)
{
	printf("%s: %zu sites failed in %zu runs, %ld allocations in the "
	       "clean run, %.1f s\n", what, sw.sites, sw.runs, sw.allocs,
	       sw.seconds);
	fflush(stdout);
}

/* ------------------------------------------------------ training step */

enum { B = 4, I = 3, O = 5, CALLS = 3 };
#define LR 0.05
#define MOMENTUM 0.9
static float w0[I * O], b0[O], xs[CALLS][B * I], ts[B * O];

typedef struct model {
	tg_tensor *w, *b;
	tg_optim *opt;
} model;

/* loss = mean((cumsum(relu(x w + b), 1) - t)^2), then SGD with
 * momentum: the probe of issue 46 crashed in tg_cumsum. */
static int train_step(void *ctx, tg_tensor *const *in, size_t nin,
                      tg_tensor **out, size_t nout)
{
	model *m = ctx;
	tg_tensor *h = tg_relu(tg_linear(in[0], m->w, m->b));
	tg_tensor *d = tg_sub(tg_cumsum(h, 1), in[1]);
	tg_tensor *loss = tg_mean(tg_square(d), NULL, 0, 0);

	(void)nin, (void)nout;
	if (!loss || tg_optim_zero_grad(m->opt) || tg_backward(loss, NULL) ||
	    tg_optim_step(m->opt, &loss, 1))
		return tg_last_status();
	out[0] = loss;
	return TG_OK;
}

/* The same CALLS steps in double precision: the losses, then the
 * weights after the last. */
static void train_want(double *loss, double *w, double *b)
{
	double mw[I * O] = { 0 }, mb[O] = { 0 };

	for (int i = 0; i < I * O; i++)
		w[i] = w0[i];
	for (int o = 0; o < O; o++)
		b[o] = b0[o];
	for (int c = 0; c < CALLS; c++) {
		double z[B][O], g[B][O], l = 0;

		for (int r = 0; r < B; r++) {
			double cs = 0;

			for (int o = 0; o < O; o++) {
				z[r][o] = b[o];
				for (int i = 0; i < I; i++)
					z[r][o] += (double)xs[c][r * I + i] *
					           w[i * O + o];
				cs += z[r][o] > 0 ? z[r][o] : 0;
				g[r][o] = cs - ts[r * O + o];
				l += g[r][o] * g[r][o];
			}
			/* d loss / d relu[k] sums the cumsum's from k on */
			for (int o = O - 2; o >= 0; o--)
				g[r][o] += g[r][o + 1];
			for (int o = 0; o < O; o++)
				g[r][o] *= z[r][o] > 0 ? 2.0 / (B * O) : 0;
		}
		loss[c] = l / (B * O);
		for (int i = 0; i < I * O + O; i++) {
			int o = i % O;
			double gr = 0, *p = i < I * O ? &w[i] : &b[o];
			double *mo = i < I * O ? &mw[i] : &mb[o];

			for (int r = 0; r < B; r++)
				gr += g[r][o] * (i < I * O ?
				      (double)xs[c][r * I + i / O] : 1.0);
			*mo = MOMENTUM * *mo + gr;
			*p -= LR * *mo;
		}
	}
}

static int close_to(const char *what, int i, double got, double want)
{
	if (fabs(got - want) <= 1e-4 * (1 + fabs(want)))
		return TG_OK;
	return tg_error(TG_EINTERNAL, "%s %d: %.8g, want %.8g", what, i, got,
	                want);
}

static int train_check(const double *loss, const float *w, const float *b)
{
	double wl[CALLS], ww[I * O], wb[O];
	int rc = TG_OK;

	train_want(wl, ww, wb);
	for (int c = 0; c < CALLS && !rc; c++)
		rc = close_to("loss of call", c, loss[c], wl[c]);
	for (int i = 0; i < I * O && !rc; i++)
		rc = close_to("weight", i, w[i], ww[i]);
	for (int o = 0; o < O && !rc; o++)
		rc = close_to("bias", o, b[o], wb[o]);
	return rc;
}

/* CALLS calls of the JIT, each on new inputs. */
static int train_calls(tg_jit *j, double *loss)
{
	int64_t sx[2] = { B, I }, st[2] = { B, O };
	tg_dev *cpu = tg_dev_get("CPU");
	int rc = TG_OK;

	for (int c = 0; c < CALLS && !rc; c++) {
		tg_tensor *in[2] = {
			tg_tensor_new(cpu, TG_FLOAT32, 2, sx, xs[c]),
			tg_tensor_new(cpu, TG_FLOAT32, 2, st, ts) }, *l;

		rc = in[0] && in[1] ? tg_jit_call(j, in, 2, &l, 1)
		                    : tg_last_status();
		if (!rc)
			rc = tg_tensor_item(l, &loss[c]);
	}
	return rc;
}

/* A model, its optimizer and a JIT made from nothing, three calls
 * (eager, capture, replay), the weights read back and checked. */
static int train_run(void)
{
	int64_t sw[2] = { I, O }, sb[1] = { O };
	tg_dev *cpu = tg_dev_get("CPU");
	double loss[CALLS];
	float w[I * O], b[O];
	model m = { 0 };
	tg_jit *j = NULL;
	int rc;

	tg_scope_begin();
	m.w = tg_tensor_new(cpu, TG_FLOAT32, 2, sw, w0);
	m.b = tg_tensor_new(cpu, TG_FLOAT32, 1, sb, b0);
	if (m.w && m.b)
		m.opt = tg_optim_sgd((tg_tensor *[]){ m.w, m.b }, 2, LR,
		                     MOMENTUM, 0, 0);
	if (m.opt)
		j = tg_jit_new(train_step, &m);
	rc = j ? train_calls(j, loss) : tg_last_status();
	if (!rc)
		rc = tg_tensor_data(m.w, w, sizeof w);
	if (!rc)
		rc = tg_tensor_data(m.b, b, sizeof b);
	tg_jit_free(j);
	tg_optim_free(m.opt);
	tg_scope_end();
	return rc ? rc : train_check(loss, w, b);
}

START_TEST(training_step_fails_cleanly)
{
	kt_fill(w0, I * O, 0.3f, -0.4f);
	kt_fill(b0, O, 0.2f, 0.1f);
	for (int c = 0; c < CALLS; c++)
		kt_fill(xs[c], B * I, 0.5f + 0.25f * (float)c, -0.3f);
	kt_fill(ts, B * O, 0.7f, 0.2f);
	/* compiles the kernels into the disk cache */
	ck_assert_msg(train_run() == TG_OK, "%s", tg_last_error());
	tg_shutdown();
	report("training step", tl_fail_sites(train_run, tg_shutdown, 1000,
	                                      sweep_limit()));
}
END_TEST

/* --------------------------------------------------------------- BEAM */

enum { BR = 4, BC = 16 };
static float bin[BR * BC];

/* The row sums of (BR, BC), its one kernel's opts found by BEAM. */
static int beam_run(void)
{
	int64_t sh[2] = { BR, BC };
	float got[BR];
	int ax = 1, rc;

	tg_scope_begin();
	rc = tg_tensor_data(tg_sum(tg_tensor_new(tg_dev_get("CPU"),
	                    TG_FLOAT32, 2, sh, bin), &ax, 1, 0), got,
	                    sizeof got);
	tg_scope_end();
	for (int r = 0; r < BR && !rc; r++) {
		double want = 0;

		for (int c = 0; c < BC; c++)
			want += bin[r * BC + c];
		rc = close_to("row sum", r, got[r], want);
	}
	return rc;
}

START_TEST(beam_fails_cleanly)
{
	setenv("BEAM", "2", 1);
	setenv("IGNORE_BEAM_CACHE", "1", 1);  /* every run searches */
	kt_fill(bin, BR * BC, 0.25f, -1.0f);
	ck_assert_msg(beam_run() == TG_OK, "%s", tg_last_error());
	tg_shutdown();
	report("BEAM", tl_fail_sites(beam_run, tg_shutdown, 100,
	                             sweep_limit()));
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
	Suite *s;

	/* the plugins' code stays where it is, so a site named by call
	 * addresses is the same site in the next run */
	setenv("TG_PLUGIN_NO_UNLOAD", "1", 1);
	s = suite_create("oom");

	add_case(s, "schedule", schedule_fails_cleanly);
	add_case(s, "codegen", codegen_fails_cleanly);
	add_case(s, "tensor program", tensor_program_fails_cleanly);
	add_case(s, "training step", training_step_fails_cleanly);
	add_case(s, "beam", beam_fails_cleanly);
	return tl_run(s);
#else
	/* too slow under TSan, and ASan's build runs it (failalloc.h);
	 * no suite is made, so none leaks */
	puts("SKIP: test_oom does not run under ThreadSanitizer");
	return 77;
#endif
}

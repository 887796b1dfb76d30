/*
 * test_threads.c - the library used from several threads at once, on
 * the CPU device: each thread its own graphs; identical and distinct
 * kernels compiled at the same time; tg_config_set and get while
 * kernels run; first use of the library from several threads; and the
 * renderer in parallel.  Every value is checked against C loops in
 * double precision (renders against a render made alone).
 *
 * The threads here share no lazy node: their graphs have no constants,
 * which the lazy cache would make one node for all threads.  Sharing
 * nodes is what test_threads_shared does.  Plain `make check` runs this
 * suite; the --enable-tsan build (.ci/run) runs it under
 * ThreadSanitizer, which fails it on any data race.
 */
#include "config.h"

#include "threadtest.h"
#include "../libtgcore/ir/ir.h"
#include "../libtgcore/codegen/codegen.h"
#include "../libtgcore/render/render.h"

/* max(a, b) * a for a, b of seeds s, s+1: one elementwise kernel, no
 * constants. */
static int maxmul_check(job *j, int64_t n, int s)
{
	double want[256];
	tg_tensor *a, *b;

	if (n > 256)
		return -1;
	for (int64_t i = 0; i < n; i++)
		want[i] = fmax(val(i, s), val(i, s + 1)) * val(i, s);
	tg_scope_begin();
	a = input(1, n, s);
	b = input(1, n, s + 1);
	check(j, tg_reshape(tg_mul(tg_maximum(a, b), a), 1,
	                    (int64_t[1]){ n }), want, (size_t)n, "maxmul");
	tg_scope_end();
	return j->err[0] ? -1 : 0;
}

/* ------------------------------------------------------------- cases */

/* Each thread builds and reads its own graphs, with its own values; the
 * shapes are the same in every thread, so they share kernels too. */
static void *own_graphs(void *arg)
{
	job *j = arg;

	pthread_barrier_wait(j->start);
	for (int r = 0; r < 4 && !j->err[0]; r++) {
		fma_rows_check(j, 8, 48, j->id * 10 + r, "own graph");
		maxmul_check(j, 40, j->id + r);
	}
	return NULL;
}

START_TEST(each_thread_its_own_graphs)
{
	run_threads(own_graphs, NULL, NULL);
}
END_TEST

/* JIT calls: every thread calls one shared tg_jit (its calls run one at
 * a time: eager, capture, replays) and one of its own, with its own
 * inputs, while the others do the same. */
static int maxmul_step(void *ctx, tg_tensor *const *in, size_t nin,
                       tg_tensor **out, size_t nout)
{
	(void)ctx, (void)nin, (void)nout;
	out[0] = tg_mul(tg_maximum(in[0], in[1]), in[0]);
	return out[0] ? 0 : tg_last_status();
}

static tg_jit *shared_jit;

static void jit_calls(job *j, tg_jit *jit, int s)
{
	double want[24];
	tg_tensor *in[2], *out;

	for (int64_t i = 0; i < 24; i++)
		want[i] = fmax(val(i, s), val(i, s + 1)) * val(i, s);
	tg_scope_begin();
	in[0] = input(4, 6, s);
	in[1] = input(4, 6, s + 1);
	if (tg_jit_call(jit, in, 2, &out, 1))
		failf(j, "jit call: %s", tg_last_error());
	else
		check(j, out, want, 24, "jit");
	tg_scope_end();
}

static void *jit_threads(void *arg)
{
	job *j = arg;
	tg_jit *own = tg_jit_new(maxmul_step, NULL);

	pthread_barrier_wait(j->start);
	for (int r = 0; r < 6 && !j->err[0]; r++) {
		jit_calls(j, shared_jit, j->id * 10 + r);
		jit_calls(j, own, j->id * 10 + r + 100);
	}
	tg_jit_free(own);
	return NULL;
}

START_TEST(jit_calls_from_several_threads)
{
	shared_jit = tg_jit_new(maxmul_step, NULL);
	run_threads(jit_threads, NULL, NULL);
	tg_jit_free(shared_jit);
}
END_TEST

/* Symbolic sizes from several threads: each thread has its variable
 * (the names differ) and binds it per round, building shrink+sum over
 * rows 0..n-1 through the shared shape context, eagerly and through a
 * JIT of its own, while the others do the same. */
static int sym_step(void *ctx, tg_tensor *const *in, size_t nin,
                    tg_tensor **out, size_t nout)
{
	int64_t upto[4] = { 0, tg_variable_dim(ctx), 0, 6 };

	(void)nin, (void)nout;
	out[0] = tg_sum(tg_shrink(in[0], 2, upto), (int[]){ 0 }, 1, 0);
	return out[0] ? 0 : tg_last_status();
}

static void *sym_threads(void *arg)
{
	job *j = arg;
	char name[16];
	tg_variable *v;
	tg_jit *jit;

	snprintf(name, sizeof name, "rows%d", j->id);
	v = tg_variable_new(name, 1, 8);
	jit = tg_jit_new(sym_step, v);
	if (!v || !jit)
		failf(j, "variable: %s", tg_last_error());
	pthread_barrier_wait(j->start);
	for (int r = 0; r < 6 && !j->err[0]; r++) {
		int n = 1 + (j->id + r) % 8;
		double want[6] = { 0 };
		tg_tensor *x, *e = NULL, *o = NULL;

		for (int64_t i = 0; i < n * 6; i++)
			want[i % 6] += val(i, j->id);
		tg_variable_bind(v, n);
		tg_scope_begin();
		x = input(8, 6, j->id);
		if (sym_step(v, &x, 1, &e, 1) || tg_jit_call(jit, &x, 1, &o, 1))
			failf(j, "symbolic: %s", tg_last_error());
		else {
			check(j, e, want, 6, "symbolic eager");
			check(j, o, want, 6, "symbolic jit");
		}
		tg_scope_end();
	}
	tg_jit_free(jit);
	tg_variable_free(v);
	return NULL;
}

START_TEST(symbolic_sizes_from_several_threads)
{
	run_threads(sym_threads, NULL, NULL);
}
END_TEST

/* Shapes differ per thread and round: every kernel is new, so the
 * threads render and compile at the same time (through the disk
 * cache, which they share). */
static void *distinct_kernels(void *arg)
{
	job *j = arg;

	pthread_barrier_wait(j->start);
	for (int r = 0; r < 3 && !j->err[0]; r++)
		fma_rows_check(j, 2 + j->id, 20 + 3 * j->id + 16 * r,
		               j->id + r, "distinct kernel");
	return NULL;
}

START_TEST(distinct_kernels_compile_at_once)
{
	run_threads(distinct_kernels, NULL, NULL);
}
END_TEST

/* The same expression on the same shapes in every thread (each with
 * its own inputs): one kernel that all of them miss in the method
 * cache and compile at the same moment; no disk cache to hide it. */
static void *identical_kernels(void *arg)
{
	job *j = arg;

	pthread_barrier_wait(j->start);
	fma_rows_check(j, 5, 77, j->id, "identical kernel");
	return NULL;
}

START_TEST(identical_kernels_compile_at_once)
{
	ck_assert_int_eq(tg_config_set("CACHELEVEL", "0"), 0);
	run_threads(identical_kernels, NULL, NULL);
}
END_TEST

/* Threads 0 and 1 compute; the others set and read settings until the
 * computing ones are done.  NOOPT and SPLIT_REDUCEOP change the kernels,
 * never the values. */
static atomic_int computing;

static void toggle_settings(job *j, int i)
{
	const char *v;
	tg_settings st;

	if (tg_config_set("NOOPT", i % 2 ? "1" : NULL) ||
	    tg_config_set("SPLIT_REDUCEOP", i % 3 ? NULL : "0") ||
	    tg_config_set("CACHELEVEL", i % 4 ? "0" : NULL) ||
	    tg_config_set("DEBUG", i % 2 ? "0" : NULL) ||
	    tg_config_set("cpu.note", i % 2 ? "odd" : "even"))
		failf(j, "config_set: %s", tg_last_error());
	v = tg_config_get("cpu.note");
	if (!v || (strcmp(v, "odd") && strcmp(v, "even")))
		failf(j, "cpu.note is '%s'", v ? v : "(null)");
	v = tg_config_get("NOOPT");
	if (v && strcmp(v, "1"))
		failf(j, "NOOPT is '%s'", v);
	if (tg_settings_read(&st) || st.noopt > 1 || st.debug != 0 ||
	    st.reduceop_split_threshold != 32768)
		failf(j, "settings_read: %s", tg_last_error());
}

static void *config_while_running(void *arg)
{
	job *j = arg;

	pthread_barrier_wait(j->start);
	if (j->id < 2) {
		for (int r = 0; r < 3 && !j->err[0]; r++) {
			fma_rows_check(j, 3, 40000 + r, j->id + r, "running");
			maxmul_check(j, 33 + r, j->id);
		}
		atomic_fetch_sub(&computing, 1);
		return NULL;
	}
	for (int i = 0; atomic_load(&computing) > 0 || i < 50; i++) {
		toggle_settings(j, i + j->id);
		nanosleep(&(struct timespec){ 0, 200000 }, NULL);
	}
	return NULL;
}

START_TEST(config_set_and_get_while_kernels_run)
{
	atomic_store(&computing, 2);
	run_threads(config_while_running, NULL, NULL);
}
END_TEST

/* The library's first use (start-up, plugin scan, device open) from
 * every thread at once. */
static void *first_use(void *arg)
{
	job *j = arg;

	pthread_barrier_wait(j->start);
	if (!tg_dev_get("CPU"))
		failf(j, "dev_get: %s", tg_last_error());
	else
		maxmul_check(j, 24, j->id);
	return NULL;
}

START_TEST(first_use_from_several_threads)
{
	tg_shutdown();
	run_threads(first_use, NULL, NULL);
}
END_TEST

/* ------------------------------------------------------- the renderer */

enum { NDIALECTS = 3, NRENDERS = 100 };
static const int dialects[NDIALECTS] = {
	TG_DIALECT_C, TG_DIALECT_OPENCL, TG_DIALECT_GLSL,
};

static tg_uop *glob(tg_ir *ir, int i, tg_dtype dt, int out)
{
	tg_arg a = { .v.i = i, .a = out };

	return tg_uop0(ir, TG_DEFINE_GLOBAL, tg_type_ptr(dt, TG_AS_GLOBAL),
	               &a);
}

static tg_uop *load(tg_ir *ir, tg_uop *buf, tg_uop *i)
{
	tg_uop *src[2] = { buf, i };

	return tg_uop_new(ir, TG_LOAD, tg_type_deref(buf->dtype), src, 2,
	                  NULL);
}

static tg_uop *store(tg_ir *ir, tg_uop *buf, tg_uop *i, tg_uop *v)
{
	tg_uop *src[3] = { buf, i, v };

	return tg_uop_new(ir, TG_STORE, TG_VOID, src, 3, NULL);
}

/* out0 = a*b + float(h), out1 = h*h (bfloat16) over 64 items: ALU ops,
 * a cast and bfloat16 operands, the paths that had shared buffers. */
static tg_uop *render_kernel(tg_ir *ir)
{
	tg_arg ga = { .name = "gidx0", .a = 64 };
	tg_uop *g = tg_uop0(ir, TG_SPECIAL, TG_INDEX, &ga);
	tg_uop *h = load(ir, glob(ir, 4, TG_BFLOAT16, 0), g);
	tg_uop *ab = tg_uop_alu(ir, TG_MUL, load(ir, glob(ir, 2, TG_FLOAT32,
	                        0), g), load(ir, glob(ir, 3, TG_FLOAT32, 0),
	                        g), NULL);
	tg_uop *f = tg_uop1(ir, TG_CAST, TG_FLOAT32, h);
	tg_uop *src[2] = {
		store(ir, glob(ir, 0, TG_FLOAT32, 1), g,
		      tg_uop_alu(ir, TG_ADD, ab, f, NULL)),
		store(ir, glob(ir, 1, TG_BFLOAT16, 1), g,
		      tg_uop_alu(ir, TG_MUL, h, h, NULL)),
	};

	return tg_uop_new(ir, TG_SINK, TG_VOID, src, 2, NULL);
}

/* The kernel in `dialect`: new string, or NULL with an error. */
static char *render_in(tg_uop *const *lin, size_t n, int dialect)
{
	struct tg_renderer_caps caps = { .struct_size = sizeof caps,
	                                 .dialect = dialect };
	size_t g[3] = { 64, 1, 1 };

	return tg_render(&caps, "E_64", g, lin, n);
}

typedef struct render_job {
	job j;
	tg_uop *const *lin;           /* shared, read only */
	size_t n;
	char *want[NDIALECTS];
} render_job;

/* The shared program in every dialect, NRENDERS times. */
static void render_shared(render_job *rj)
{
	for (int r = 0; r < NRENDERS && !rj->j.err[0]; r++)
		for (int d = 0; d < NDIALECTS; d++) {
			char *src = render_in(rj->lin, rj->n, dialects[d]);

			if (!src || strcmp(src, rj->want[d]))
				failf(&rj->j, "render %d in dialect %d: %s", r,
				      dialects[d], src ? src : tg_last_error());
			free(src);
		}
}

/* The same kernel built in the thread's own IR context. */
static void render_own(render_job *rj)
{
	tg_ir *ir = tg_ir_new();
	tg_uop **lin = NULL;
	size_t n;
	char *src = NULL;

	if (!ir || tg_linearize(ir, render_kernel(ir), &lin, &n) ||
	    !(src = render_in(lin, n, TG_DIALECT_C)))
		failf(&rj->j, "own render: %s", tg_last_error());
	else if (strcmp(src, rj->want[0]))
		failf(&rj->j, "own render differs:\n%s", src);
	free(src);
	free(lin);
	tg_ir_free(ir);
}

static void *render_parallel(void *arg)
{
	render_job *rj = arg;

	pthread_barrier_wait(rj->j.start);
	render_shared(rj);
	render_own(rj);
	return NULL;
}

START_TEST(renderer_runs_in_parallel)
{
	tg_ir *ir = tg_ir_new();
	tg_uop **lin;
	size_t n;
	render_job rj[NT];
	pthread_barrier_t start;
	pthread_t t[NT];

	ck_assert_ptr_nonnull(ir);
	ck_assert_int_eq(tg_linearize(ir, render_kernel(ir), &lin, &n), 0);
	ck_assert_int_eq(pthread_barrier_init(&start, NULL, NT), 0);
	for (int i = 0; i < NT; i++) {
		rj[i] = (render_job){ .j = { .id = i, .start = &start },
		                      .lin = lin, .n = n };
		for (int d = 0; d < NDIALECTS; d++)
			ck_assert_msg((rj[i].want[d] = render_in(lin, n,
			              dialects[d])) != NULL, "%s",
			              tg_last_error());
	}
	for (int i = 0; i < NT; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, render_parallel,
		                                &rj[i]), 0);
	for (int i = 0; i < NT; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	for (int i = 0; i < NT; i++) {
		ck_assert_msg(!rj[i].j.err[0], "thread %d: %s", i,
		              rj[i].j.err);
		for (int d = 0; d < NDIALECTS; d++)
			free(rj[i].want[d]);
	}
	pthread_barrier_destroy(&start);
	free(lin);
	tg_ir_free(ir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("threads");
	TCase *tc = tcase_create("threads");

	/* compiles at once under sanitizers and valgrind take a while */
	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, tt_setup, tt_teardown);
	tcase_add_test(tc, each_thread_its_own_graphs);
	tcase_add_test(tc, distinct_kernels_compile_at_once);
	tcase_add_test(tc, identical_kernels_compile_at_once);
	tcase_add_test(tc, config_set_and_get_while_kernels_run);
	tcase_add_test(tc, first_use_from_several_threads);
	tcase_add_test(tc, renderer_runs_in_parallel);
	tcase_add_test(tc, jit_calls_from_several_threads);
	tcase_add_test(tc, symbolic_sizes_from_several_threads);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

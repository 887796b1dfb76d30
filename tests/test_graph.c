/*
 * test_graph.c - graphs (device/graph.c and the plugins' graph entries):
 * launches recorded once and replayed, on the device under test (CPU, or
 * DEVICE=OPENCL / VULKAN through tests/ondevice.sh) with hand-written
 * kernels in its dialect.  A graph's results must equal the same
 * launches run one by one bit for bit, and plain C loops.  On the CPU
 * run only: the fallback of a plugin without graph entries (MOCK), the
 * errors, and a plugin giving part of the graph entries (bad.c).
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/wait.h>

#include "testlib.h"
#include "../libtgcore/device/device.h"
#include "graphkernels.h"

/* ------------------------------------------------------------------ */
/* Kernels                                                             */
/* ------------------------------------------------------------------ */

/* Every dialect has step_u (graphkernels.h) and step_f, over the same
 * buffers and values:
 *   step_f: out[i] = in[n - 1 - i] * 0.75 + v0 * 0.125    (float32) */

static const char c_step_f[] = "#include <stddef.h>\n#include <stdint.h>\n"
	"void step_f(void *const *b, const int64_t *v, const size_t *g,\n"
	"            size_t lo, size_t hi)\n"
	"{\n"
	"	float *out = b[0];\n"
	"	const float *in = b[1];\n"
	"	size_t n = (size_t)v[1];\n"
	"	for (size_t i = lo; i < hi; i++)\n"
	"		out[i] = in[n - 1 - i] * 0.75f +\n"
	"		         (float)v[0] * 0.125f;\n"
	"	(void)g;\n"
	"}\n";

/* CPU only: each item gets the first item of its chunk. */
static const char c_chunk_lo[] = "#include <stddef.h>\n#include <stdint.h>\n"
	"void chunk_lo(void *const *b, const int64_t *v, const size_t *g,\n"
	"              size_t lo, size_t hi)\n"
	"{\n"
	"	uint32_t *out = b[0];\n"
	"	for (size_t i = lo; i < hi; i++)\n"
	"		out[i] = (uint32_t)lo;\n"
	"	(void)v, (void)g;\n"
	"}\n";

static const char cl_step_f[] =
	"__kernel void step_f(__global float *data0, __global const float "
	"*data1,\n"
	"                     const int var0, const int var1)\n"
	"{\n"
	"	int i = get_global_id(0);\n"
	"	data0[i] = data1[var1 - 1 - i] * 0.75f +\n"
	"	           (float)var0 * 0.125f;\n"
	"}\n";

static const char gl_step_f[] = GL_HEAD("float")
	"	data_0[i] = data_1[n - 1u - i] * 0.75 + float(vals.v[0]) * "
	"0.125;\n"
	"}\n";

static const char cu_step_f[] = CU_HEAD("step_f", "float")
	"	data0[i] = data1[n - 1u - i] * 0.75f + (float)var0 * 0.125f;\n"
	"}\n";

static const struct {
	const char *dialect, *step_u, *step_f;
} dialects[] = {
	{ "c", c_step_u, c_step_f },
	{ "opencl", cl_step_u, cl_step_f },
	{ "glsl", gl_step_u, gl_step_f },
	{ "cuda", cu_step_u, cu_step_f },
};

/* The device under test: DEVICE, else the CPU. */
static const char *dut_name(void)
{
	const char *d = getenv("DEVICE");

	return d && *d ? d : "CPU";
}

static tg_dev *dut(void)
{
	tg_dev *dev = tg_dev_get(dut_name());

	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	return dev;
}

/* Kernel `name` ("step_u" or "step_f") in the device's dialect. */
static tg_program *program(const char *name)
{
	tg_dev_info info;
	tg_program *p;

	ck_assert_int_eq(tg_dev_get_info(dut(), &info), 0);
	for (size_t i = 0; i < sizeof dialects / sizeof dialects[0]; i++) {
		if (strcmp(info.dialect, dialects[i].dialect) != 0)
			continue;
		p = tg_program_new(dut(), name, strcmp(name, "step_u") == 0 ?
		                   dialects[i].step_u : dialects[i].step_f);
		ck_assert_msg(p != NULL, "%s", tg_last_error());
		return p;
	}
	ck_abort_msg("no test kernels in dialect %s", info.dialect);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Chains: launch j reads buffer j and writes buffer j + 1             */
/* ------------------------------------------------------------------ */

#define KMAX 40

struct chain {
	size_t k, size;            /* launches; items per buffer */
	int is_float;              /* step_f, else step_u */
	tg_program *p;
	tg_buffer *b[KMAX + 1];
	tg_buffer *arg[KMAX][2];   /* (out, in) of each launch */
	int64_t val[KMAX][2];      /* (v0, n) of each launch */
	tg_launch_args a[KMAX];
	tg_program *progs[KMAX];
};

/* Launch j runs over n[j] items (size when n is NULL) with v0 = j + 1.
 * Buffer 0 gets item i = i * 7 % 101 (as uint or float / 8), the
 * others zeros. */
static void chain_new(struct chain *c, int is_float, size_t k, size_t size,
                      const size_t *n)
{
	uint32_t *h = calloc(size, 4);
	size_t j;

	ck_assert(k <= KMAX && h != NULL);
	memset(c, 0, sizeof *c);
	c->k = k, c->size = size, c->is_float = is_float;
	c->p = program(is_float ? "step_f" : "step_u");
	for (j = 0; j <= k; j++) {
		c->b[j] = tg_buffer_new(dut(), size, is_float ? TG_FLOAT32 :
		                        TG_UINT32);
		ck_assert_int_eq(tg_buffer_copyin(c->b[j], h, size * 4), 0);
	}
	for (size_t i = 0; i < size; i++) {
		float f = (float)(i * 7 % 101) / 8.0f;

		if (is_float)
			memcpy(&h[i], &f, 4);
		else
			h[i] = (uint32_t)(i * 7 % 101);
	}
	ck_assert_int_eq(tg_buffer_copyin(c->b[0], h, size * 4), 0);
	for (j = 0; j < k; j++) {
		c->arg[j][0] = c->b[j + 1], c->arg[j][1] = c->b[j];
		c->val[j][0] = (int64_t)j + 1;
		c->val[j][1] = (int64_t)(n ? n[j] : size);
		c->a[j] = (tg_launch_args){ .bufs = c->arg[j], .nbufs = 2,
			.vals = c->val[j], .nvals = 2,
			.global = { (size_t)c->val[j][1], 1, 1 },
			.local = { 1, 1, 1 } };
		c->progs[j] = c->p;
	}
	free(h);
}

static void chain_free(struct chain *c)
{
	for (size_t j = 0; j <= c->k; j++)
		tg_buffer_unref(c->b[j]);
	tg_program_free(c->p);
}

/* Zeros every buffer but the input. */
static void chain_clear(struct chain *c)
{
	void *z = calloc(c->size, 4);

	for (size_t j = 1; j <= c->k; j++)
		ck_assert_int_eq(tg_buffer_copyin(c->b[j], z, c->size * 4), 0);
	free(z);
}

static tg_graph *chain_graph(struct chain *c)
{
	tg_graph *g = tg_graph_new(c->progs, c->a, c->k, 1);

	ck_assert_msg(g != NULL, "%s", tg_last_error());
	ck_assert_int_eq(tg_graph_native(g), 1);
	return g;
}

static void graph_run(tg_graph *g)
{
	ck_assert_msg(tg_graph_run(g) == 0, "%s", tg_last_error());
}

/* Every buffer's bytes, buffer after buffer (malloc'd). */
static uint32_t *chain_read(struct chain *c)
{
	uint32_t *h = malloc((c->k + 1) * c->size * 4);

	ck_assert_ptr_nonnull(h);
	for (size_t j = 0; j <= c->k; j++)
		ck_assert_int_eq(tg_buffer_copyout(c->b[j], h + j * c->size,
		                                   c->size * 4), 0);
	return h;
}

/* One launch in C: items [0, n) of out from in; the rest unchanged. */
static void ref_step(int is_float, uint32_t *out, const uint32_t *in,
                     size_t n, int64_t v0)
{
	for (size_t i = 0; i < n; i++) {
		float x, y;

		if (!is_float) {
			out[i] = in[n - 1 - i] * 3u + (uint32_t)v0 +
			         (uint32_t)i;
			continue;
		}
		memcpy(&x, &in[n - 1 - i], 4);
		y = x * 0.75f + (float)v0 * 0.125f;
		memcpy(&out[i], &y, 4);
	}
}

/* Item i of buffer j: equal for uint32, within rounding for float. */
static void check_item(int is_float, uint32_t got, uint32_t want, size_t j,
                       size_t i)
{
	float g, w;

	if (!is_float) {
		ck_assert_msg(got == want, "buffer %zu item %zu: %u, want %u",
		              j, i, got, want);
		return;
	}
	memcpy(&g, &got, 4);
	memcpy(&w, &want, 4);
	ck_assert_msg(fabsf(g - w) <= 1e-5f * fabsf(w) + 1e-6f,
	              "buffer %zu item %zu: %.9g, want %.9g", j, i, g, w);
}

/* The launches' current buffers and values, in C, from the input on
 * the device: what every buffer must hold after one run. */
static void chain_check(struct chain *c)
{
	uint32_t *h = chain_read(c), *want = calloc(c->size, 4);
	size_t j, i;

	ck_assert_ptr_nonnull(want);
	for (j = 0; j < c->k; j++) {
		memcpy(want, h + (j + 1) * c->size, c->size * 4);
		ref_step(c->is_float, want, h + j * c->size,
		         (size_t)c->val[j][1], c->val[j][0]);
		for (i = 0; i < c->size; i++)
			check_item(c->is_float, h[(j + 1) * c->size + i],
			           want[i], j + 1, i);
	}
	free(want);
	free(h);
}

/* Runs the chain one launch at a time, then as a graph from zeroed
 * outputs: the bytes must be equal, and equal to C. */
static void graph_equals_launches(struct chain *c)
{
	uint32_t *one, *all;
	tg_graph *g;

	for (size_t j = 0; j < c->k; j++)
		ck_assert_msg(tg_program_launch(c->p, &c->a[j], NULL) == 0,
		              "%s", tg_last_error());
	one = chain_read(c);
	chain_clear(c);
	g = chain_graph(c);
	graph_run(g);
	ck_assert_int_eq(tg_dev_synchronize(dut()), 0);
	all = chain_read(c);
	for (size_t j = 1; j <= c->k; j++)
		ck_assert_msg(!memcmp(one + j * c->size, all + j * c->size,
		                      c->size * 4), "buffer %zu differs", j);
	chain_check(c);
	tg_graph_free(g);
	free(one);
	free(all);
}

/* ------------------------------------------------------------------ */
/* The device under test                                               */
/* ------------------------------------------------------------------ */

START_TEST(dependent_launches_equal_one_by_one)
{
	struct chain c;

	chain_new(&c, 0, 6, 1001, NULL);
	graph_equals_launches(&c);
	chain_free(&c);
	chain_new(&c, 1, 6, 1001, NULL);
	graph_equals_launches(&c);
	chain_free(&c);
}
END_TEST

/* Two launches ping-ponging x -> t -> x, replayed: x after R runs is
 * the C loop's after R rounds. */
START_TEST(replayed_a_thousand_times)
{
	enum { R = 1000, N = 257 };
	struct chain c;
	uint32_t x[N], t[N], got[N];
	tg_graph *g;
	int r;

	chain_new(&c, 0, 2, N, NULL);
	c.arg[1][0] = c.b[0]; /* launch 1 writes the input back */
	g = chain_graph(&c);
	ck_assert_int_eq(tg_buffer_copyout(c.b[0], x, sizeof x), 0);
	for (r = 0; r < R; r++)
		graph_run(g);
	ck_assert_int_eq(tg_buffer_copyout(c.b[0], got, sizeof got), 0);
	for (r = 0; r < R; r++) {
		ref_step(0, t, x, N, 1);
		ref_step(0, x, t, N, 2);
	}
	for (size_t i = 0; i < N; i++)
		check_item(0, got[i], x[i], 0, i);
	tg_graph_free(g);
	chain_free(&c);
}
END_TEST

/* New input, a new value and a new output between runs; a buffer the
 * last run wrote is released, and the input written, right after the
 * run, before any synchronize. */
START_TEST(buffers_and_values_change_between_runs)
{
	enum { N = 300 };
	struct chain c;
	tg_buffer *in = tg_buffer_new(dut(), N, TG_UINT32);
	tg_buffer *out = tg_buffer_new(dut(), N, TG_UINT32), *b0;
	uint32_t h[N];
	tg_graph *g;

	chain_new(&c, 0, 3, N, NULL);
	b0 = c.b[0];
	g = chain_graph(&c);
	graph_run(g);
	chain_check(&c);
	for (size_t i = 0; i < N; i++)
		h[i] = (uint32_t)(i * i);
	ck_assert_int_eq(tg_buffer_copyin(in, h, sizeof h), 0);
	ck_assert_int_eq(tg_graph_set_buffer(g, 0, 1, in), 0);
	tg_graph_set_val(g, 1, 0, 77);
	c.b[0] = in, c.val[1][0] = 77;
	graph_run(g);
	chain_check(&c);
	graph_run(g);
	ck_assert_int_eq(tg_graph_set_buffer(g, 2, 0, out), 0);
	tg_buffer_unref(c.b[3]); /* the run may still be writing it */
	c.b[3] = out;
	h[0] = 12345;
	ck_assert_int_eq(tg_buffer_copyin(in, h, sizeof h), 0);
	tg_graph_set_val(g, 0, 0, -5);
	c.val[0][0] = -5;
	graph_run(g);
	chain_check(&c);
	tg_graph_set_val(g, 2, 0, 9); /* a value alone */
	c.val[2][0] = 9;
	graph_run(g);
	chain_check(&c);
	tg_graph_free(g);
	c.b[0] = b0;
	chain_free(&c);
	tg_buffer_unref(in);
}
END_TEST

/* Graph runs between single launches see their writes, and are seen. */
START_TEST(graph_runs_between_launches)
{
	struct chain c;
	tg_graph *g;

	chain_new(&c, 0, 5, 999, NULL);
	g = tg_graph_new(c.progs + 1, c.a + 1, 3, 1);
	ck_assert_msg(g != NULL, "%s", tg_last_error());
	for (int r = 0; r < 3; r++) {
		c.val[0][0] = r + 10; /* new input to the graph each round */
		ck_assert_int_eq(tg_program_launch(c.p, &c.a[0], NULL), 0);
		graph_run(g);
		ck_assert_int_eq(tg_program_launch(c.p, &c.a[4], NULL), 0);
	}
	chain_check(&c);
	tg_graph_free(g);
	chain_free(&c);
}
END_TEST

/* 32 launches of 8 items, replayed on new input each time. */
START_TEST(thirty_two_tiny_kernels)
{
	struct chain c;
	uint32_t h[8];
	tg_graph *g;

	chain_new(&c, 0, 32, 8, NULL);
	g = chain_graph(&c);
	for (uint32_t r = 0; r < 20; r++) {
		for (size_t i = 0; i < 8; i++)
			h[i] = r * 1000 + (uint32_t)i;
		ck_assert_int_eq(tg_buffer_copyin(c.b[0], h, sizeof h), 0);
		graph_run(g);
		if (r % 5 == 4)
			chain_check(&c);
	}
	tg_graph_free(g);
	chain_free(&c);
}
END_TEST

/* Big launches the CPU pool shares out, with small ones first, last
 * and between them (those run on one thread). */
START_TEST(big_and_small_launches_mixed)
{
	enum { N = 1 << 18 };
	static const size_t n[] = { 4, N, 8, 8, N, N - 3, 16, N, 4 };
	struct chain c;

	chain_new(&c, 0, 9, N, n);
	graph_equals_launches(&c);
	chain_free(&c);
	chain_new(&c, 1, 4, N, NULL);
	graph_equals_launches(&c);
	chain_free(&c);
}
END_TEST

/* Without the memory cache, releasing a buffer frees it in the plugin
 * (while a run may still use it), and a new buffer may take its place
 * under the same handle. */
START_TEST(buffers_freed_and_allocated_between_runs)
{
	enum { N = 500 };
	struct chain c;
	uint32_t h[N];
	tg_buffer *b0;
	tg_graph *g;

	setenv("LRU", "0", 1);
	chain_new(&c, 0, 2, N, NULL);
	g = chain_graph(&c);
	for (int r = 0; r < 4; r++) {
		graph_run(g);
		tg_buffer_unref(c.b[2]);
		c.b[2] = tg_buffer_new(dut(), N, TG_UINT32);
		ck_assert_int_eq(tg_graph_set_buffer(g, 1, 0, c.b[2]), 0);
		for (size_t i = 0; i < N; i++)
			h[i] = (uint32_t)(r * 31) + (uint32_t)i;
		b0 = tg_buffer_new(dut(), N, TG_UINT32);
		ck_assert_int_eq(tg_buffer_copyin(b0, h, sizeof h), 0);
		tg_buffer_unref(c.b[0]);
		c.b[0] = b0;
		ck_assert_int_eq(tg_graph_set_buffer(g, 0, 1, b0), 0);
		graph_run(g);
		chain_check(&c);
	}
	tg_graph_free(g);
	chain_free(&c);
	unsetenv("LRU");
}
END_TEST

/* Several threads replay graphs of their own while another launches
 * one kernel at a time: each graph is x -> t -> u -> x (small, big,
 * small), so its input after R runs is the C loop's after R rounds. */
enum { THREADS = 3, ROUNDS = 30, BIG = 1 << 16 };

struct runner {
	tg_graph *g;
	tg_program *p;           /* launcher: this program ... */
	const tg_launch_args *a; /* ... with these arguments */
	int failed;
	char error[256];
};

static void *runner_main(void *arg)
{
	struct runner *r = arg;

	for (int i = 0; i < ROUNDS && !r->failed; i++)
		r->failed = r->g ? tg_graph_run(r->g) != 0 :
		            tg_program_launch(r->p, r->a, NULL) != 0;
	if (r->failed)
		snprintf(r->error, sizeof r->error, "%s", tg_last_error());
	return NULL;
}

static void check_rounds(struct chain *c, const size_t *n)
{
	uint32_t *x = malloc(BIG * 4), *t = malloc(BIG * 4),
	         *u = malloc(BIG * 4), *got = malloc(BIG * 4);

	ck_assert(x && t && u && got);
	for (size_t i = 0; i < BIG; i++)
		x[i] = (uint32_t)(i * 7 % 101), t[i] = u[i] = 0;
	for (int r = 0; r < ROUNDS; r++) {
		ref_step(0, t, x, n[0], 1);
		ref_step(0, u, t, n[1], 2);
		ref_step(0, x, u, n[2], 3);
	}
	ck_assert_int_eq(tg_buffer_copyout(c->b[0], got, BIG * 4), 0);
	for (size_t i = 0; i < BIG; i++)
		check_item(0, got[i], x[i], 0, i);
	free(x), free(t), free(u), free(got);
}

START_TEST(graphs_from_several_threads)
{
	static const size_t n[] = { 8, BIG, 8 };
	struct chain c[THREADS + 1];
	struct runner r[THREADS + 1];
	pthread_t tid[THREADS + 1];
	int i;

	for (i = 0; i <= THREADS; i++) {
		chain_new(&c[i], 0, 3, BIG, n);
		c[i].arg[2][0] = c[i].b[0];
		r[i] = (struct runner){ .p = c[i].p, .a = &c[i].a[1] };
		if (i < THREADS)
			r[i].g = chain_graph(&c[i]);
	}
	for (i = 0; i <= THREADS; i++)
		ck_assert_int_eq(pthread_create(&tid[i], NULL, runner_main,
		                                &r[i]), 0);
	for (i = 0; i <= THREADS; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i <= THREADS; i++)
		ck_assert_msg(!r[i].failed, "thread %d: %s", i, r[i].error);
	for (i = 0; i < THREADS; i++) {
		check_rounds(&c[i], n);
		tg_graph_free(r[i].g);
	}
	for (i = 0; i <= THREADS; i++)
		chain_free(&c[i]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The CPU pool                                                        */
/* ------------------------------------------------------------------ */

/* With 4 threads, a graph cuts each big launch into the chunks a
 * single launch gets (chunk_lo writes each item's chunk start), and
 * small ones into one. */
START_TEST(cpu_pool_chunks_like_single_launches)
{
	enum { N = 1001, SMALL = 31 };
	static const size_t n[] = { N, SMALL, N, SMALL };
	tg_program *p;
	tg_buffer *b[4];
	tg_launch_args a[4];
	tg_program *progs[4];
	uint32_t one[N], all[N], zero[N] = { 0 };
	tg_graph *g;

	setenv("TG_CPU_THREADS", "4", 1);
	p = tg_program_new(dut(), "chunk_lo", c_chunk_lo);
	ck_assert_msg(p != NULL, "%s", tg_last_error());
	for (int j = 0; j < 4; j++) {
		b[j] = tg_buffer_new(dut(), N, TG_UINT32);
		ck_assert_int_eq(tg_buffer_copyin(b[j], zero, sizeof zero), 0);
		a[j] = (tg_launch_args){ .bufs = &b[j], .nbufs = 1,
		                         .global = { n[j], 1, 1 },
		                         .local = { 1, 1, 1 } };
		progs[j] = p;
	}
	g = tg_graph_new(progs, a, 4, 1);
	ck_assert_msg(g != NULL, "%s", tg_last_error());
	graph_run(g);
	for (int j = 0; j < 4; j++) {
		ck_assert_int_eq(tg_buffer_copyout(b[j], all, sizeof all), 0);
		ck_assert_int_eq(tg_buffer_copyin(b[j], zero, sizeof zero), 0);
		ck_assert_int_eq(tg_program_launch(p, &a[j], NULL), 0);
		ck_assert_int_eq(tg_buffer_copyout(b[j], one, sizeof one), 0);
		ck_assert(!memcmp(one, all, sizeof one));
		/* 1001 items in 4 chunks start at 0, 251, 501, 751 */
		ck_assert_uint_eq(all[n[j] - 1], n[j] == N ? 751 : 0);
	}
	tg_graph_free(g);
	for (int j = 0; j < 4; j++)
		tg_buffer_unref(b[j]);
	tg_program_free(p);
	unsetenv("TG_CPU_THREADS");
}
END_TEST

/* CPU: the plugin refuses a geometry whose item count overflows. */
START_TEST(cpu_refuses_an_overflowing_geometry)
{
	struct chain c;

	chain_new(&c, 0, 2, 16, NULL);
	c.a[1].global[0] = SIZE_MAX / 2;
	c.a[1].global[1] = 4;
	ck_assert_ptr_null(tg_graph_new(c.progs, c.a, 2, 1));
	ck_assert_int_eq(tg_last_status(), TG_EINVAL);
	ck_assert_error("graph: 2 launches on CPU: cpu graph_new: launch 1: "
	                "global size ");
	ck_assert_error(" x 4 x 1 overflows size_t");
	chain_free(&c);
}
END_TEST

/* OpenCL and Vulkan take values as int32: refused at graph_new, and at
 * graph_run after set_val. */
START_TEST(gpu_refuses_values_outside_int32)
{
	struct chain c;
	tg_graph *g;

	chain_new(&c, 0, 2, 16, NULL);
	c.val[1][0] = (int64_t)1 << 40;
	ck_assert_ptr_null(tg_graph_new(c.progs, c.a, 2, 1));
	ck_assert_error("graph: 2 launches on ");
	ck_assert_error(" graph_new: launch 1");
	ck_assert_error("value 0 ");
	ck_assert_error("1099511627776");
	c.val[1][0] = 1;
	g = chain_graph(&c);
	graph_run(g);
	tg_graph_set_val(g, 0, 0, -((int64_t)1 << 33));
	ck_assert_int_lt(tg_graph_run(g), 0);
	ck_assert_error("graph: run of 2 launches on ");
	ck_assert_error(" graph_run: launch 0");
	ck_assert_error("-8589934592");
	tg_graph_set_val(g, 0, 0, 3);
	c.val[0][0] = 3;
	graph_run(g);
	chain_check(&c);
	tg_graph_free(g);
	chain_free(&c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Without graph entries (MOCK), errors, a partial plugin              */
/* ------------------------------------------------------------------ */

static tg_dev *mock(const char *name)
{
	tg_dev *dev = tg_dev_get(name);

	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	return dev;
}

static tg_program *mock_program(tg_dev *dev, const char *name)
{
	tg_program *p = tg_program_new(dev, name, name);

	ck_assert_msg(p != NULL, "%s", tg_last_error());
	return p;
}

static void use_mock(void)
{
	char buf[512];

	tl_use_plugins(tl_plugin("mock", buf, sizeof buf));
}

static void check_floats(tg_buffer *b, float want)
{
	float h[4];

	ck_assert_int_eq(tg_buffer_copyout(b, h, sizeof h), 0);
	for (int i = 0; i < 4; i++)
		ck_assert_msg(h[i] == want, "item %d: %g, want %g", i, h[i],
		              want);
}

/* fill(a, 3), fill(b, 4), add(c, a, b), launch by launch. */
START_TEST(without_graph_entries_launch_by_launch)
{
	tg_dev *dev;
	tg_program *fill, *add;
	tg_buffer *a, *b, *c;
	tg_graph *g;

	use_mock();
	dev = mock("MOCK");
	fill = mock_program(dev, "fill"), add = mock_program(dev, "add");
	a = tg_buffer_new(dev, 4, TG_FLOAT32);
	b = tg_buffer_new(dev, 4, TG_FLOAT32);
	c = tg_buffer_new(dev, 4, TG_FLOAT32);
	{
		tg_buffer *ba[1] = { a }, *bb[1] = { b }, *bc[3] = { c, a, b };
		int64_t three = 3, four = 4;
		tg_program *progs[3] = { fill, fill, add };
		tg_launch_args args[3] = {
			{ .bufs = ba, .nbufs = 1, .vals = &three, .nvals = 1,
			  .global = { 4, 1, 1 }, .local = { 1, 1, 1 } },
			{ .bufs = bb, .nbufs = 1, .vals = &four, .nvals = 1,
			  .global = { 4, 1, 1 }, .local = { 1, 1, 1 } },
			{ .bufs = bc, .nbufs = 3,
			  .global = { 4, 1, 1 }, .local = { 1, 1, 1 } },
		};

		g = tg_graph_new(progs, args, 3, 1);
		ck_assert_msg(g != NULL, "%s", tg_last_error());
		three = 100; /* the graph copied the values */
	}
	ck_assert_int_eq(tg_graph_native(g), 0);
	graph_run(g);
	check_floats(c, 7.0f);
	tg_graph_set_val(g, 0, 0, 10);
	graph_run(g);
	check_floats(c, 14.0f);
	ck_assert_int_eq(tg_graph_set_buffer(g, 2, 1, b), 0);
	graph_run(g);
	check_floats(c, 8.0f);
	tg_graph_free(g);
	tg_buffer_unref(a), tg_buffer_unref(b), tg_buffer_unref(c);
	tg_program_free(fill), tg_program_free(add);
}
END_TEST

START_TEST(errors_name_the_launch_and_the_devices)
{
	tg_dev *d0, *d1;
	tg_program *p0, *p1, *progs[2];
	tg_buffer *b0, *b1, *bufs[2][1];
	int64_t v = 1;
	tg_launch_args a[2];
	tg_graph *g;

	use_mock();
	d0 = mock("MOCK"), d1 = mock("MOCK:1");
	p0 = mock_program(d0, "fill"), p1 = mock_program(d1, "fill");
	b0 = tg_buffer_new(d0, 4, TG_FLOAT32);
	b1 = tg_buffer_new(d1, 4, TG_FLOAT32);
	bufs[0][0] = b0, bufs[1][0] = b1;
	for (int i = 0; i < 2; i++)
		a[i] = (tg_launch_args){ .bufs = bufs[i], .nbufs = 1,
		                         .vals = &v, .nvals = 1,
		                         .global = { 4, 1, 1 },
		                         .local = { 1, 1, 1 } };
	progs[0] = p0, progs[1] = p1;
	ck_assert_ptr_null(tg_graph_new(progs, a, 2, 1));
	ck_assert_int_eq(tg_last_status(), TG_EINVAL);
	ck_assert_error("graph: launch 1 ('fill') is on MOCK:1, launch 0 on "
	                "MOCK");

	ck_assert_ptr_null(tg_graph_new(progs, a, 0, 1));
	ck_assert_error("graph: 0 launches (need one or more)");
	progs[1] = NULL;
	ck_assert_ptr_null(tg_graph_new(progs, a, 2, 1));
	ck_assert_error("graph: launch 1 has no program");
	progs[0] = NULL, progs[1] = p0;
	ck_assert_ptr_null(tg_graph_new(progs, a, 2, 1));
	ck_assert_error("graph: 2 launches (no program)");

	progs[0] = p0;
	g = tg_graph_new(progs, a, 1, 1);
	ck_assert_msg(g != NULL, "%s", tg_last_error());
	ck_assert_int_eq(tg_graph_set_buffer(g, 0, 0, b1), TG_EINVAL);
	ck_assert_error("graph: buffer 0 of launch 0 ('fill') is on MOCK:1, "
	                "the graph on MOCK");
	ck_assert_int_eq(tg_graph_set_buffer(g, 1, 0, b0), TG_EINVAL);
	ck_assert_error("graph: buffer 0 of launch 1: no such launch");
	ck_assert_int_eq(tg_graph_set_buffer(g, 0, 1, b0), TG_EINVAL);
	ck_assert_error("graph: buffer 1 of launch 0: no such buffer");
	ck_assert_int_eq(tg_graph_set_buffer(g, 0, 0, NULL), TG_EINVAL);
	ck_assert_error("graph: buffer 0 of launch 0: the buffer is NULL");
	graph_run(g);
	check_floats(b0, 1.0f);
	tg_graph_free(g);
	tg_buffer_unref(b0), tg_buffer_unref(b1);
	tg_program_free(p0), tg_program_free(p1);
}
END_TEST

/* A plugin is refused when opened if it gives graph_new alone. */
START_TEST(part_of_the_graph_entries_is_refused)
{
	char buf[512];

	tl_use_plugins(tl_plugin("partialgraph", buf, sizeof buf));
	ck_assert_uint_eq(tg_plugin_count(), 1);
	ck_assert_ptr_null(tg_dev_get("PARTIALGRAPH"));
	ck_assert_int_eq(tg_last_status(), TG_EPLUGIN);
	ck_assert_error("could not open device 0: the device gives some of "
	                "runtime.graph_new, graph_run and graph_free but not "
	                "all three; refusing it");
}
END_TEST

/* ------------------------------------------------------------------ */
/* The suite                                                           */
/* ------------------------------------------------------------------ */

/* Whether the device opens, tried in a child: OpenCL drivers' threads
 * do not survive the fork of each test.  0, or 1 with the reason. */
static int no_device(char *why, size_t n)
{
	int fd[2], status = 0;
	ssize_t len;
	pid_t pid;

	if (pipe(fd) != 0 || (pid = fork()) < 0)
		return snprintf(why, n, "cannot fork"), 1;
	if (pid == 0) {
		close(fd[0]);
		if (tg_dev_get(dut_name()) != NULL)
			_exit(0);
		len = write(fd[1], tg_last_error(), strlen(tg_last_error()));
		_exit(len >= 0 ? 1 : 2);
	}
	close(fd[1]);
	len = read(fd[0], why, n - 1);
	why[len > 0 ? len : 0] = '\0';
	close(fd[0]);
	waitpid(pid, &status, 0);
	return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

static void add_host_tests(Suite *s)
{
	TCase *tc = tcase_create("host");

	tcase_add_checked_fixture(tc, NULL, tg_shutdown);
	tcase_add_test(tc, cpu_pool_chunks_like_single_launches);
	tcase_add_test(tc, cpu_refuses_an_overflowing_geometry);
	tcase_add_test(tc, without_graph_entries_launch_by_launch);
	tcase_add_test(tc, errors_name_the_launch_and_the_devices);
	tcase_add_test(tc, part_of_the_graph_entries_is_refused);
	suite_add_tcase(s, tc);
}

int main(void)
{
	Suite *s = suite_create("graph");
	TCase *tc = tcase_create("device");
	int on_cpu = strcmp(dut_name(), "CPU") == 0;
	char why[1024];

	if (!on_cpu && no_device(why, sizeof why))
		return tl_no_device("test_graph", dut_name(), why);
	tcase_add_checked_fixture(tc, NULL, tg_shutdown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, dependent_launches_equal_one_by_one);
	tcase_add_test(tc, replayed_a_thousand_times);
	tcase_add_test(tc, buffers_and_values_change_between_runs);
	tcase_add_test(tc, graph_runs_between_launches);
	tcase_add_test(tc, thirty_two_tiny_kernels);
	tcase_add_test(tc, big_and_small_launches_mixed);
	tcase_add_test(tc, buffers_freed_and_allocated_between_runs);
	tcase_add_test(tc, graphs_from_several_threads);
	if (!on_cpu)
		tcase_add_test(tc, gpu_refuses_values_outside_int32);
	suite_add_tcase(s, tc);
	if (on_cpu)
		add_host_tests(s);
	return tl_run(s);
}

/*
 * test_jit.c - tg_jit: the first call runs the step, the second captures
 * it, later calls replay the capture with new inputs.  Replays are
 * compared bit for bit with the same step run eagerly on the same
 * inputs; values are checked against plain C where the step is simple.
 * Also: what a replay holds and frees, outputs that outlive the next
 * call, inputs that are views, state updated in place, a training loop,
 * JIT=0 and JIT=2, and every error with its message.
 */
#include "config.h"

#include "testlib.h"
#include "../libtgcore/tensor/tensor.h"
#include "../libtgcore/device/device.h"

#define N 16
#define M 8

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

/* A realized (rows, cols) float32 tensor, or (rows) when cols is 0:
 * value ((i*37) % 23) * a + b at index i. */
static tg_tensor *ramp(int64_t rows, int64_t cols, float a, float b)
{
	int64_t shape[2] = { rows, cols }, n = cols ? rows * cols : rows, i;
	float *v = malloc((size_t)n * sizeof *v);
	tg_tensor *t;

	ck_assert_ptr_nonnull(v);
	for (i = 0; i < n; i++)
		v[i] = (float)((i * 37) % 23) * a + b;
	t = tg_tensor_new(NULL, TG_FLOAT32, cols ? 2 : 1, shape, v);
	free(v);
	ck_assert_msg(t && tg_realize(t) == 0, "%s", tg_last_error());
	return t;
}

static void read_floats(tg_tensor *t, float *out, size_t n)
{
	ck_assert_int_eq(tg_tensor_numel(t), (int64_t)n);
	ck_assert_msg(tg_tensor_data(t, out, n * sizeof *out) == 0, "%s",
	              tg_last_error());
}

/* The step the tests share: a small layer and an elementwise output.
 * out[0] = sum_j relu(x @ w + b)[:, j], out[1] = x * 2 - y.  ctx
 * counts the calls that ran the C code. */
typedef struct layer {
	tg_tensor *w, *b;
	int runs;
} layer;

static int layer_step(void *ctx, tg_tensor *const *in, size_t nin,
                      tg_tensor **out, size_t nout)
{
	layer *l = ctx;
	int ax = 1;

	ck_assert_uint_eq(nin, 2);
	ck_assert_uint_eq(nout, 2);
	l->runs++;
	out[0] = tg_sum(tg_relu(tg_add(tg_matmul(in[0], l->w), l->b)), &ax,
	                1, 0);
	out[1] = tg_sub(tg_mul_s(in[0], 2), in[1]);
	return out[0] && out[1] ? 0 : tg_last_status();
}

static void layer_init(layer *l)
{
	l->w = ramp(N, M, 0.125f, -1.0f);
	l->b = tg_reshape(ramp(M, 0, 0.5f, -2.0f), 1, (int64_t[]){ M });
	ck_assert_int_eq(tg_realize(l->b), 0);
	l->runs = 0;
}

/* The step run eagerly on in, outputs copied out. */
static void eager(tg_jit_fn fn, void *ctx, tg_tensor *const *in, size_t nin,
                  float *o0, size_t n0, float *o1, size_t n1)
{
	tg_tensor *out[2];

	tg_scope_begin();
	ck_assert_int_eq(fn(ctx, in, nin, out, 2), 0);
	read_floats(out[0], o0, n0);
	if (o1)
		read_floats(out[1], o1, n1);
	tg_scope_end();
}

static void call_ok(tg_jit *j, tg_tensor *const *in, size_t nin,
                    tg_tensor **out, size_t nout)
{
	ck_assert_msg(tg_jit_call(j, in, nin, out, nout) == 0, "%s",
	              tg_last_error());
}

/* ------------------------------------------------------------ replay */

START_TEST(replay_equals_eager)
{
	layer l;
	tg_jit *j;
	int call;

	layer_init(&l);
	j = tg_jit_new(layer_step, &l);
	ck_assert_ptr_nonnull(j);
	for (call = 0; call < 6; call++) {
		tg_tensor *in[2] = { ramp(4, N, 0.25f * (float)(call + 1), -3),
		                     ramp(4, N, -0.5f, (float)call) };
		tg_tensor *out[2];
		float want0[4], want1[4 * N], got0[4], got1[4 * N];
		int runs;

		eager(layer_step, &l, in, 2, want0, 4, want1, 4 * N);
		runs = l.runs;
		call_ok(j, in, 2, out, 2);
		/* the C code runs on the first two calls only */
		ck_assert_int_eq(l.runs, runs + (call < 2));
		read_floats(out[0], got0, 4);
		read_floats(out[1], got1, 4 * N);
		ck_assert_mem_eq(got0, want0, sizeof want0);
		ck_assert_mem_eq(got1, want1, sizeof want1);
		ck_assert_int_eq(tg_tensor_ndim(out[1]), 2);
		ck_assert_int_eq(tg_tensor_shape(out[1])[1], N);
	}
	{
		tg_jit_info info;

		ck_assert_int_eq(tg_jit_get_info(j, &info), 0);
		ck_assert_uint_eq(info.calls, 6);
		ck_assert_int_eq(info.captured, 1);
		/* matmul+bias+relu, the sum, x*2-y */
		ck_assert_uint_eq(info.kernels, 3);
		ck_assert_uint_eq(info.copies, 0);
		ck_assert_uint_eq(info.graphs, 1);
		ck_assert_uint_eq(info.native_graphs,
		                  tg_dev_get("CPU")->rt.graph_new != NULL);
	}
	tg_jit_free(j);
}
END_TEST

/* Values against plain C in double precision, through many replays. */
static int axpy_step(void *ctx, tg_tensor *const *in, size_t nin,
                     tg_tensor **out, size_t nout)
{
	(void)ctx, (void)nin, (void)nout;
	out[0] = tg_add(tg_mul_s(in[0], 3), tg_exp2(in[1]));
	return 0;
}

START_TEST(many_replays_against_c)
{
	tg_jit *j = tg_jit_new(axpy_step, NULL);
	int call;

	for (call = 0; call < 200; call++) {
		float a = 0.01f * (float)call, b = -(float)(call % 7);
		tg_tensor *in[2] = { ramp(3, 5, a, b), ramp(3, 5, -a, 0.5f) };
		tg_tensor *out;
		float got[15];

		tg_scope_begin();
		call_ok(j, in, 2, &out, 1);
		read_floats(out, got, 15);
		for (int i = 0; i < 15; i++) {
			double x = (double)((i * 37) % 23) * a + b;
			double y = (double)((i * 37) % 23) * -a + 0.5;
			double want = x * 3 + exp2(y);

			ck_assert_msg(fabs(got[i] - want) <= 1e-5 * fabs(want) +
			              1e-6, "call %d item %d: %g vs %g", call, i,
			              got[i], want);
		}
		tg_scope_end();
	}
	tg_jit_free(j);
}
END_TEST

/* The counters see every kernel a call runs, eager, captured or
 * replayed (one per call here), with its estimated work. */
START_TEST(counters_count_replayed_kernels)
{
	tg_jit *j = tg_jit_new(axpy_step, NULL);
	tg_counters c;

	tg_counters_reset();
	for (int call = 0; call < 10; call++) {
		tg_tensor *in[2] = { ramp(3, 5, 0.5f, 1), ramp(3, 5, 1, 0) };
		tg_tensor *out;
		float got[15];

		tg_scope_begin();
		call_ok(j, in, 2, &out, 1);
		read_floats(out, got, 15);
		tg_scope_end();
	}
	tg_counters_get(&c);
	ck_assert_uint_eq(c.kernels, 10);
	/* 3x + exp2(y) over 15 items: at least 3 operations each */
	ck_assert_msg(c.ops >= 10 * 15 * 3, "ops %g", c.ops);
	ck_assert_msg(c.mem_bytes >= 10 * 15 * 4 * 3, "bytes %g", c.mem_bytes);
	tg_counters_reset();
	tg_counters_get(&c);
	ck_assert_uint_eq(c.kernels, 0);
	ck_assert(c.ops == 0 && c.mem_bytes == 0 && c.copies == 0);
	tg_counters_get(NULL);  /* no crash */
	tg_jit_free(j);
}
END_TEST

/* Outputs kept past the next call keep their values: the replay gives
 * that output new memory.  Released, the memory is reused. */
START_TEST(outputs_outlive_the_next_call)
{
	tg_jit *j = tg_jit_new(axpy_step, NULL);
	tg_tensor *kept[5];
	float first[15], got[15];
	tg_buffer *prev = NULL;
	int call;

	for (call = 0; call < 5; call++) {
		tg_tensor *in[2] = { ramp(3, 5, (float)call, 0),
		                     ramp(3, 5, 0, 0) };

		call_ok(j, in, 2, &kept[call], 1);
		kept[call] = tg_keep(kept[call]);
	}
	for (call = 0; call < 5; call++) {
		read_floats(kept[call], got, 15);
		for (int i = 0; i < 15; i++)
			ck_assert_float_eq(got[i], (float)((i * 37) % 23) *
			                   (float)call * 3 + 1);
	}
	for (call = 0; call < 5; call++)
		tg_tensor_unref(kept[call]);
	/* released each time: every replay writes the same memory */
	for (call = 0; call < 4; call++) {
		tg_tensor *in[2] = { ramp(3, 5, 1, 0), ramp(3, 5, 0, 0) };
		tg_tensor *out;
		tg_buffer *b;

		tg_scope_begin();
		call_ok(j, in, 2, &out, 1);
		b = tg_lazy_base(out->lazy)->buf;
		if (call > 0)
			ck_assert_ptr_eq(b, prev);
		prev = b;
		read_floats(out, call ? got : first, 15);
		tg_scope_end();
	}
	ck_assert_mem_eq(got, first, sizeof got);
	tg_jit_free(j);
}
END_TEST

/* An input given as a view (permuted, not contiguous) is made
 * contiguous first; the replay sees the right values. */
START_TEST(inputs_that_are_views)
{
	layer l;
	tg_jit *j;
	int call, order[2] = { 1, 0 };

	layer_init(&l);
	j = tg_jit_new(layer_step, &l);
	for (call = 0; call < 4; call++) {
		tg_tensor *x = tg_permute(ramp(N, 4, 0.1f * (float)call, 1), 2,
		                          order);
		tg_tensor *y = tg_add_s(ramp(4, N, 1, 0), call);  /* lazy */
		tg_tensor *in[2] = { x, y }, *out[2];
		float want0[4], want1[4 * N], got0[4], got1[4 * N];

		eager(layer_step, &l, in, 2, want0, 4, want1, 4 * N);
		call_ok(j, in, 2, out, 2);
		read_floats(out[0], got0, 4);
		read_floats(out[1], got1, 4 * N);
		ck_assert_mem_eq(got0, want0, sizeof want0);
		ck_assert_mem_eq(got1, want1, sizeof want1);
	}
	tg_jit_free(j);
}
END_TEST

/* A tensor the step reads but does not get as an input is read from
 * the same memory each replay: assigned in place, the new values are
 * seen; replaced by another tensor, it is not. */
START_TEST(non_inputs_are_read_from_their_memory)
{
	layer l;
	tg_jit *j;
	tg_tensor *in[2], *out[2], *old_w;
	float want0[4], got0[4];
	int call;

	layer_init(&l);
	j = tg_jit_new(layer_step, &l);
	in[0] = ramp(4, N, 0.25f, -1);
	in[1] = ramp(4, N, 0, 0);
	for (call = 0; call < 3; call++)
		call_ok(j, in, 2, out, 2);
	/* in place: seen */
	ck_assert_int_eq(tg_assign(l.w, ramp(N, M, -0.25f, 0.5f)), 0);
	ck_assert_int_eq(tg_realize(l.w), 0);
	eager(layer_step, &l, in, 2, want0, 4, NULL, 0);
	call_ok(j, in, 2, out, 2);
	read_floats(out[0], got0, 4);
	ck_assert_mem_eq(got0, want0, sizeof want0);
	/* replaced: the replay still reads the old memory */
	old_w = l.w;
	l.w = ramp(N, M, 1, 1);
	call_ok(j, in, 2, out, 2);
	read_floats(out[0], got0, 4);
	ck_assert_mem_eq(got0, want0, sizeof want0);
	l.w = old_w;
	tg_jit_free(j);
}
END_TEST

/* Outputs that are an input or a weight share that tensor's memory, as
 * without the JIT; an empty output is an empty tensor. */
static int passthrough_step(void *ctx, tg_tensor *const *in, size_t nin,
                            tg_tensor **out, size_t nout)
{
	layer *l = ctx;
	int64_t empty[2] = { 0, 3 };

	(void)nin, (void)nout;
	out[0] = in[0];
	out[1] = l->w;
	out[2] = tg_zeros(NULL, TG_FLOAT32, 2, empty);
	out[3] = tg_add_s(in[0], 1);
	return 0;
}

START_TEST(outputs_that_are_inputs_or_weights)
{
	layer l;
	tg_jit *j;
	int call;

	layer_init(&l);
	j = tg_jit_new(passthrough_step, &l);
	for (call = 0; call < 4; call++) {
		tg_tensor *x = ramp(2, 3, (float)call, 0), *out[4];
		float got[6];

		call_ok(j, &x, 1, out, 4);
		ck_assert_ptr_eq(tg_lazy_base(out[0]->lazy)->buf,
		                 tg_lazy_base(x->lazy)->buf);
		ck_assert_ptr_eq(tg_lazy_base(out[1]->lazy)->buf,
		                 tg_lazy_base(l.w->lazy)->buf);
		ck_assert_int_eq(tg_tensor_numel(out[2]), 0);
		ck_assert_int_eq(tg_tensor_shape(out[2])[1], 3);
		read_floats(out[3], got, 6);
		for (int i = 0; i < 6; i++)
			ck_assert_float_eq(got[i], (float)((i * 37) % 23) *
			                   (float)call + 1);
	}
	tg_jit_free(j);
}
END_TEST

/* Random programs (a fixed seed): chains of elementwise, reduce and
 * movement ops over two (4, 8) inputs with a stack of values, several
 * outputs; replays equal eager runs bit for bit on fresh inputs. */
#define PROG_LEN 12

typedef struct program {
	unsigned char op[PROG_LEN];
} program;

static tg_tensor *pick(tg_tensor **st, int n, unsigned k)
{
	return st[n - 1 - (int)(k % (unsigned)(n < 3 ? n : 3))];
}

static int program_step(void *ctx, tg_tensor *const *in, size_t nin,
                        tg_tensor **out, size_t nout)
{
	const program *p = ctx;
	tg_tensor *st[2 + PROG_LEN];
	int n = 2, ax1 = 1, order[2] = { 1, 0 }, i;
	int64_t flat = 32, pads[4] = { 0, 0, 1, 1 }, cut[4] = { 0, 4, 1, 9 };

	(void)nin;
	st[0] = in[0];
	st[1] = in[1];
	for (i = 0; i < PROG_LEN; i++) {
		tg_tensor *a = pick(st, n, p->op[i] / 16u), *b = st[n - 1], *r;

		switch (p->op[i] % 12) {
		case 0: r = tg_add(a, b); break;
		case 1: r = tg_mul(a, b); break;
		case 2: r = tg_maximum(a, tg_neg(b)); break;
		case 3: r = tg_exp2(tg_mul_s(a, 0.25)); break;
		case 4: r = tg_relu(tg_sub_s(a, 1)); break;
		case 5: r = tg_add(a, tg_sum(b, &ax1, 1, 1)); break;
		case 6: r = tg_sub(a, tg_max(b, &ax1, 1, 1)); break;
		case 7: r = tg_contiguous(tg_flip(a, &ax1, 1)); break;
		case 8: r = tg_reshape(tg_contiguous(tg_permute(tg_reshape(
		                a, 2, (int64_t[]){ 8, 4 }), 2, order)), 2,
		                (int64_t[]){ 4, 8 });
		        break;
		case 9: r = tg_shrink(tg_pad(a, 2, pads, 0), 2, cut); break;
		case 10: r = tg_reshape(tg_cumsum(tg_reshape(a, 1, &flat), 0),
		                        2, (int64_t[]){ 4, 8 });
		         break;
		default: r = tg_sqrt(tg_add_s(tg_abs(a), 1)); break;
		}
		if (!r)
			return tg_last_status();
		st[n++] = r;
	}
	for (size_t k = 0; k < nout; k++)
		out[k] = st[n - 1 - (int)k * 4];
	return 0;
}

START_TEST(random_programs_replay_as_eager)
{
	unsigned seed = 12345;

	for (int prog = 0; prog < 24; prog++) {
		program p;
		tg_jit *j;

		for (int i = 0; i < PROG_LEN; i++) {
			seed = seed * 1103515245u + 12345u;
			p.op[i] = (unsigned char)(seed >> 16);
		}
		j = tg_jit_new(program_step, &p);
		tg_scope_begin();
		for (int call = 0; call < 5; call++) {
			tg_tensor *in[2] = {
				ramp(4, 8, 0.1f * (float)(call + 1), -1),
				ramp(4, 8, -0.05f, 0.25f * (float)call) };
			tg_tensor *out[3];
			float want[3][32], got[32];

			tg_scope_begin();
			ck_assert_int_eq(program_step(&p, in, 2, out, 3), 0);
			for (int k = 0; k < 3; k++)
				read_floats(out[k], want[k], 32);
			tg_scope_end();
			call_ok(j, in, 2, out, 3);
			for (int k = 0; k < 3; k++) {
				read_floats(out[k], got, 32);
				ck_assert_msg(!memcmp(got, want[k], sizeof got),
				              "program %d call %d output %d", prog,
				              call, k);
			}
		}
		tg_scope_end();
		tg_jit_free(j);
	}
}
END_TEST

/* ----------------------------------------------------------- training */

typedef struct model {
	tg_tensor *w;
	tg_optim *opt;
} model;

static int train_step(void *ctx, tg_tensor *const *in, size_t nin,
                      tg_tensor **out, size_t nout)
{
	model *m = ctx;
	tg_tensor *loss;

	(void)nin, (void)nout;
	loss = tg_mean(tg_square(tg_sub(tg_matmul(in[0], m->w), in[1])), NULL,
	               0, 0);
	if (!loss || tg_optim_zero_grad(m->opt) || tg_backward(loss, NULL) ||
	    tg_optim_step(m->opt, &loss, 1))
		return tg_last_status();
	out[0] = loss;
	return 0;
}

static void train(int use_jit, float *w_out, float *losses)
{
	model m;
	tg_jit *j = use_jit ? tg_jit_new(train_step, &m) : NULL;
	int s;

	m.w = ramp(N, 2, 0.05f, -0.5f);
	m.opt = tg_optim_adam(&m.w, 1, 0.01, 0.9, 0.999, 1e-8);
	ck_assert_ptr_nonnull(m.opt);
	for (s = 0; s < 8; s++) {
		tg_tensor *in[2] = { ramp(4, N, 0.1f, (float)s * 0.1f),
		                     ramp(4, 2, -0.2f, 1) };
		tg_tensor *loss;
		double v;

		tg_scope_begin();
		if (use_jit)
			call_ok(j, in, 2, &loss, 1);
		else
			ck_assert_int_eq(train_step(&m, in, 2, &loss, 1), 0);
		ck_assert_int_eq(tg_tensor_item(loss, &v), 0);
		losses[s] = (float)v;
		tg_scope_end();
	}
	read_floats(m.w, w_out, N * 2);
	tg_jit_free(j);
	tg_optim_free(m.opt);
}

START_TEST(training_equals_eager)
{
	float w_eager[N * 2], w_jit[N * 2], l_eager[8], l_jit[8];

	tg_set_training(1);
	train(0, w_eager, l_eager);
	train(1, w_jit, l_jit);
	ck_assert_mem_eq(l_jit, l_eager, sizeof l_jit);
	ck_assert_mem_eq(w_jit, w_eager, sizeof w_jit);
	ck_assert_float_ne(w_jit[0], 0.05f * 0 - 0.5f);  /* it trained */
}
END_TEST

/* ------------------------------------------------------------ settings */

START_TEST(jit_0_runs_every_call)
{
	layer l;
	tg_jit *j;
	tg_jit_info info;
	int call;

	setenv("JIT", "0", 1);
	layer_init(&l);
	j = tg_jit_new(layer_step, &l);
	for (call = 0; call < 4; call++) {
		tg_tensor *in[2] = { ramp(4, N, 1, 0), ramp(4, N, 2, 0) };
		tg_tensor *out[2];

		call_ok(j, in, 2, out, 2);
	}
	ck_assert_int_eq(l.runs, 4);
	ck_assert_int_eq(tg_jit_get_info(j, &info), 0);
	ck_assert_int_eq(info.captured, 0);
	tg_jit_free(j);
	unsetenv("JIT");
}
END_TEST

START_TEST(jit_2_replays_without_graphs)
{
	layer l;
	tg_jit *j;
	tg_jit_info info;
	int call;

	setenv("JIT", "2", 1);
	layer_init(&l);
	j = tg_jit_new(layer_step, &l);
	for (call = 0; call < 4; call++) {
		tg_tensor *in[2] = { ramp(4, N, (float)call, 0),
		                     ramp(4, N, 2, 0) };
		tg_tensor *out[2];
		float want0[4], got0[4];

		eager(layer_step, &l, in, 2, want0, 4, NULL, 0);
		call_ok(j, in, 2, out, 2);
		read_floats(out[0], got0, 4);
		ck_assert_mem_eq(got0, want0, sizeof got0);
	}
	ck_assert_int_eq(l.runs, 4 + 2);
	ck_assert_int_eq(tg_jit_get_info(j, &info), 0);
	ck_assert_int_eq(info.captured, 1);
	ck_assert_uint_eq(info.graphs, 1);
	ck_assert_uint_eq(info.native_graphs, 0);
	tg_jit_free(j);
	unsetenv("JIT");
}
END_TEST

/* Freeing the JIT drops what the capture held: the output memory and
 * the weights' references. */
START_TEST(free_releases_buffers)
{
	layer l;
	tg_jit *j;
	tg_buffer *wb, *ob;
	int before, call;

	layer_init(&l);
	wb = tg_lazy_base(l.w->lazy)->buf;
	before = tg_buffer_refcount(wb);
	j = tg_jit_new(layer_step, &l);
	for (call = 0; call < 3; call++) {
		tg_tensor *in[2] = { ramp(4, N, 1, 0), ramp(4, N, 2, 0) };
		tg_tensor *out[2];

		tg_scope_begin();
		call_ok(j, in, 2, out, 2);
		ob = tg_buffer_ref(tg_lazy_base(out[0]->lazy)->buf);
		tg_scope_end();
		if (call < 2)
			tg_buffer_unref(ob);
	}
	ck_assert_int_gt(tg_buffer_refcount(wb), before);
	ck_assert_int_eq(tg_buffer_refcount(ob), 2);  /* ours, the plan's */
	tg_jit_free(j);
	ck_assert_int_eq(tg_buffer_refcount(wb), before);
	ck_assert_int_eq(tg_buffer_refcount(ob), 1);
	tg_buffer_unref(ob);
}
END_TEST

START_TEST(reset_captures_again)
{
	layer l;
	tg_jit *j;
	int call;

	layer_init(&l);
	j = tg_jit_new(layer_step, &l);
	for (call = 0; call < 6; call++) {
		tg_tensor *in[2] = { ramp(call < 3 ? 4 : 2, N, 1, 0),
		                     ramp(call < 3 ? 4 : 2, N, 2, 0) };
		tg_tensor *out[2];

		if (call == 3)
			tg_jit_reset(j);
		call_ok(j, in, 2, out, 2);
		ck_assert_int_eq(tg_tensor_shape(out[1])[0], call < 3 ? 4 : 2);
	}
	ck_assert_int_eq(l.runs, 4);
	tg_jit_free(j);
}
END_TEST

/* -------------------------------------------------------------- errors */

/* A JIT for layer_step after its capture (two calls on 4 x N). */
static tg_jit *captured(layer *l)
{
	tg_jit *j;
	int call;

	layer_init(l);
	j = tg_jit_new(layer_step, l);
	for (call = 0; call < 2; call++) {
		tg_tensor *in[2] = { ramp(4, N, 1, 0), ramp(4, N, 2, 0) };
		tg_tensor *out[2];

		call_ok(j, in, 2, out, 2);
	}
	return j;
}

/* The call fails with msg and leaves out[] NULL, running nothing. */
static void call_fails(tg_jit *j, tg_tensor *const *in, size_t nin,
                       size_t nout, const char *msg)
{
	tg_tensor *out[4] = { (tg_tensor *)1, (tg_tensor *)1 };

	ck_assert_int_eq(tg_jit_call(j, in, nin, out, nout), TG_EINVAL);
	ck_assert_error(msg);
	for (size_t i = 0; i < nout; i++)
		ck_assert_ptr_null(out[i]);
}

START_TEST(error_wrong_shape)
{
	layer l;
	tg_jit *j = captured(&l);
	tg_tensor *in[2] = { ramp(8, N, 1, 0), ramp(4, N, 2, 0) };

	call_fails(j, in, 2, 2, "jit_call: input 0 has shape (8,16), the "
	           "capture had (4,16)");
	tg_jit_free(j);
}
END_TEST

START_TEST(error_wrong_dtype)
{
	layer l;
	tg_jit *j = captured(&l);
	tg_tensor *in[2] = { ramp(4, N, 1, 0),
	                     tg_cast(ramp(4, N, 2, 0), TG_INT32) };

	call_fails(j, in, 2, 2, "jit_call: input 1 is int32, the capture "
	           "had float32");
	tg_jit_free(j);
}
END_TEST

START_TEST(error_wrong_device)
{
	char path[512], both[1200];
	layer l;
	tg_jit *j;
	tg_tensor *in[2];
	float v[4 * N] = { 0 };
	int64_t shape[2] = { 4, N };

	/* the CPU plugin and the MOCK test plugin side by side */
	tg_scope_end();
	snprintf(both, sizeof both, "%s:%s", getenv("TG_PLUGIN_PATH"),
	         tl_plugin("mock", path, sizeof path));
	tl_use_plugins(both);
	setenv("DEVICE", "CPU", 1);
	tg_scope_begin();
	j = captured(&l);
	in[0] = tg_tensor_new(tg_dev_get("MOCK"), TG_FLOAT32, 2, shape, v);
	in[1] = ramp(4, N, 2, 0);
	ck_assert_ptr_nonnull(in[0]);
	call_fails(j, in, 2, 2, "jit_call: input 0 is on MOCK, the capture "
	           "had CPU");
	tg_jit_free(j);
}
END_TEST

START_TEST(error_wrong_counts)
{
	layer l;
	tg_jit *j = captured(&l);
	tg_tensor *in[3] = { ramp(4, N, 1, 0), ramp(4, N, 2, 0),
	                     ramp(4, N, 2, 0) };

	call_fails(j, in, 3, 2, "jit_call: 3 inputs and 2 outputs, the "
	           "capture had 2 and 2");
	call_fails(j, in, 2, 1, "jit_call: 2 inputs and 1 outputs, the "
	           "capture had 2 and 2");
	tg_jit_free(j);
}
END_TEST

START_TEST(error_bad_arguments)
{
	layer l;
	tg_jit *j = captured(&l);
	tg_tensor *in[2] = { NULL, ramp(4, N, 2, 0) }, *out[2];
	tg_jit_info info;

	tg_clear_error();
	call_fails(j, in, 2, 2, "jit_call: input 0 is NULL");
	call_fails(j, NULL, 2, 2, "jit_call: 2 inputs but no array");
	ck_assert_int_eq(tg_jit_call(j, in, 2, NULL, 2), TG_EINVAL);
	ck_assert_error("jit_call: 2 outputs but no array");
	ck_assert_int_eq(tg_jit_call(NULL, in, 2, out, 2), TG_EINVAL);
	ck_assert_error("jit_call: the jit is NULL");
	ck_assert_ptr_null(tg_jit_new(NULL, NULL));
	ck_assert_error("jit_new: the step is NULL");
	ck_assert_int_eq(tg_jit_get_info(NULL, &info), TG_EINVAL);
	ck_assert_error("jit_get_info: the jit is NULL");
	in[0] = ramp(4, N, 1, 0);
	in[1] = in[0];
	call_fails(j, in, 2, 2, "jit_call: inputs 0 and 1 share memory");
	tg_jit_free(j);
	tg_jit_free(NULL);
	tg_jit_reset(NULL);
}
END_TEST

/* Reading a value to the host while capturing fails: replays would
 * not run that code. */
static int reading_step(void *ctx, tg_tensor *const *in, size_t nin,
                        tg_tensor **out, size_t nout)
{
	double v;
	int rc;

	(void)ctx, (void)nin, (void)nout;
	out[0] = tg_sum(in[0], NULL, 0, 0);
	if ((rc = tg_tensor_item(out[0], &v)))
		return rc;
	out[0] = tg_mul_s(out[0], v);
	return 0;
}

START_TEST(error_step_reads_data_during_capture)
{
	tg_jit *j = tg_jit_new(reading_step, NULL);
	tg_tensor *x = ramp(2, 2, 1, 0), *out;
	tg_jit_info info;

	call_ok(j, &x, 1, &out, 1);  /* eager: fine */
	call_fails(j, &x, 1, 1, "tensor_data: called while a jit captures "
	           "its step");
	ck_assert_error("jit: the step failed: ");
	ck_assert_int_eq(tg_jit_get_info(j, &info), 0);
	ck_assert_int_eq(info.captured, 0);
	ck_assert_uint_eq(info.calls, 1);
	tg_jit_free(j);
}
END_TEST

static int dropout_step(void *ctx, tg_tensor *const *in, size_t nin,
                        tg_tensor **out, size_t nout)
{
	(void)ctx, (void)nin, (void)nout;
	out[0] = tg_dropout(in[0], 0.5);
	return out[0] ? 0 : tg_last_status();
}

/* Random numbers advance a counter on the device in place: every
 * replay draws new numbers, the same as eager calls from the same
 * seed. */
START_TEST(random_numbers_in_replays)
{
	tg_jit *j = tg_jit_new(dropout_step, NULL);
	float want[6][64], got[64];
	int call, zeros = 0;

	tg_set_training(1);
	tg_manual_seed(7);
	for (call = 0; call < 6; call++) {
		tg_tensor *x = ramp(8, 8, 0, 1), *out;

		tg_scope_begin();
		ck_assert_int_eq(dropout_step(NULL, &x, 1, &out, 1), 0);
		read_floats(out, want[call], 64);
		tg_scope_end();
	}
	ck_assert(memcmp(want[4], want[5], sizeof want[4]));
	tg_manual_seed(7);
	for (call = 0; call < 6; call++) {
		tg_tensor *x = ramp(8, 8, 0, 1), *out;

		call_ok(j, &x, 1, &out, 1);
		read_floats(out, got, 64);
		ck_assert_msg(!memcmp(got, want[call], sizeof got), "call %d",
		              call);
		for (int i = 0; i < 64; i++)
			zeros += got[i] == 0;
	}
	ck_assert_int_gt(zeros, 6 * 64 / 4);  /* p = 0.5 */
	tg_jit_free(j);
}
END_TEST

static int failing_step(void *ctx, tg_tensor *const *in, size_t nin,
                        tg_tensor **out, size_t nout)
{
	int *mode = ctx;

	(void)in, (void)nin;
	if (*mode == 0)
		return TG_EUNSUPPORTED;  /* no message set */
	if (*mode == 1)
		return 3;
	if (*mode == 2) {
		out[0] = tg_sum(in[0], NULL, 0, 0);
		return 0;  /* out[1] left NULL */
	}
	for (size_t i = 0; i < nout; i++)
		out[i] = in[0];
	return 0;
}

START_TEST(error_step_failures)
{
	int mode = 0;
	tg_jit *j = tg_jit_new(failing_step, &mode);
	tg_tensor *x = ramp(2, 2, 1, 0);

	tg_tensor *out[2];

	tg_clear_error();
	ck_assert_int_eq(tg_jit_call(j, &x, 1, out, 2), TG_EUNSUPPORTED);
	ck_assert_error("jit: the step returned TG_EUNSUPPORTED");
	mode = 1;
	call_fails(j, &x, 1, 2, "jit: the step returned 3 (0 or a negative "
	           "status expected)");
	mode = 2;
	call_fails(j, &x, 1, 2, "jit: the step left output 1 NULL");
	tg_jit_free(j);
}
END_TEST

static int recursive_step(void *ctx, tg_tensor *const *in, size_t nin,
                          tg_tensor **out, size_t nout)
{
	return tg_jit_call(*(tg_jit **)ctx, in, nin, out, nout);
}

START_TEST(error_step_calls_its_own_jit)
{
	tg_jit *j;
	tg_jit **self = &j;
	tg_tensor *x = ramp(2, 2, 1, 0), *out;

	j = tg_jit_new(recursive_step, self);
	ck_assert_int_eq(tg_jit_call(j, &x, 1, &out, 1), TG_EINVAL);
	ck_assert_error("jit_call: the step called its own jit");
	tg_jit_free(j);
}
END_TEST

/* A step that calls another JIT's step while capturing: the inner
 * capture is refused, since the outer one records the kernels. */
static int inner_step(void *ctx, tg_tensor *const *in, size_t nin,
                      tg_tensor **out, size_t nout)
{
	(void)ctx, (void)nin, (void)nout;
	out[0] = tg_add_s(in[0], 1);
	return 0;
}

static int outer_step(void *ctx, tg_tensor *const *in, size_t nin,
                      tg_tensor **out, size_t nout)
{
	(void)nin, (void)nout;
	return tg_jit_call(ctx, in, 1, out, 1);
}

START_TEST(error_nested_capture)
{
	tg_jit *inner = tg_jit_new(inner_step, NULL);
	tg_jit *outer = tg_jit_new(outer_step, inner);
	tg_tensor *x = ramp(2, 2, 1, 0), *out;

	call_ok(outer, &x, 1, &out, 1);   /* both eager */
	call_fails(outer, &x, 1, 1, "jit: a capture is already open on this "
	           "thread");
	tg_jit_free(outer);
	tg_jit_free(inner);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("jit");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, replay_equals_eager);
	tcase_add_test(tc, many_replays_against_c);
	tcase_add_test(tc, counters_count_replayed_kernels);
	tcase_add_test(tc, outputs_outlive_the_next_call);
	tcase_add_test(tc, inputs_that_are_views);
	tcase_add_test(tc, non_inputs_are_read_from_their_memory);
	tcase_add_test(tc, outputs_that_are_inputs_or_weights);
	tcase_add_test(tc, random_programs_replay_as_eager);
	tcase_add_test(tc, training_equals_eager);
	tcase_add_test(tc, jit_0_runs_every_call);
	tcase_add_test(tc, jit_2_replays_without_graphs);
	tcase_add_test(tc, free_releases_buffers);
	tcase_add_test(tc, reset_captures_again);
	tcase_add_test(tc, error_wrong_shape);
	tcase_add_test(tc, error_wrong_dtype);
	tcase_add_test(tc, error_wrong_device);
	tcase_add_test(tc, error_wrong_counts);
	tcase_add_test(tc, error_bad_arguments);
	tcase_add_test(tc, error_step_reads_data_during_capture);
	tcase_add_test(tc, error_step_failures);
	tcase_add_test(tc, random_numbers_in_replays);
	tcase_add_test(tc, error_step_calls_its_own_jit);
	tcase_add_test(tc, error_nested_capture);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tl_run(suite());
}

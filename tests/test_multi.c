/*
 * test_multi.c - tensors over a device group (lazy/multi.c): sharding
 * and gathering, elementwise ops across splits, reduces that all-reduce,
 * movement ops through the split axis, every refusal with its message,
 * data-parallel training that follows the single-device run, and the
 * JIT over all of it.  The
 * group is two (or three) CPU devices ([cpu] devices); the references
 * are plain C loops in double precision and the same program run on one
 * device.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "testlib.h"

static tg_dev *cpu[3], *group2, *group3;

static void setup(void)
{
	setenv("TG_CPU_DEVICES", "3", 1);
	for (int i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof name, "CPU:%d", i);
		cpu[i] = tg_dev_get(name);
		ck_assert_msg(cpu[i] != NULL, "%s", tg_last_error());
	}
	group2 = tg_dev_group(cpu, 2);
	group3 = tg_dev_group(cpu, 3);
	ck_assert_msg(group2 && group3, "%s", tg_last_error());
	tg_scope_begin();
}

static void teardown(void)
{
	tg_scope_end();
	tg_shutdown();
}

static tg_tensor *ok(tg_tensor *t)
{
	ck_assert_msg(t != NULL, "%s", tg_last_error());
	return t;
}

/* rows x cols floats v[i] = f(i) on CPU:0. */
static tg_tensor *mat(int64_t rows, int64_t cols, float *v, double seed)
{
	int64_t shape[2] = { rows, cols };

	for (int64_t i = 0; i < rows * cols; i++)
		v[i] = (float)sin(seed + 0.7 * (double)i) * 3.0f;
	return ok(tg_tensor_new(cpu[0], TG_FLOAT32, 2, shape, v));
}

static void read_f(tg_tensor *t, float *out, size_t n)
{
	ck_assert_msg(tg_tensor_data(t, out, n * sizeof *out) == 0, "%s",
	              tg_last_error());
}

static void near(const float *got, const double *want, size_t n, double tol)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])),
		              "element %zu: %.9g, want %.9g", i, got[i], want[i]);
}

START_TEST(groups_are_named_and_checked)
{
	tg_dev *twice[2] = { cpu[0], cpu[0] };

	ck_assert_str_eq(tg_dev_name(group2), "CPU,CPU:1");
	ck_assert_ptr_eq(tg_dev_group(cpu, 2), group2);
	ck_assert_uint_eq(tg_dev_group_size(group3), 3);
	ck_assert_ptr_eq(tg_dev_group_member(group3, 2), cpu[2]);
	ck_assert_uint_eq(tg_dev_group_size(cpu[0]), 0);
	ck_assert_ptr_null(tg_dev_group(cpu, 1));
	ck_assert_error("dev_group: 1 devices (a group has 2 to 64)");
	ck_assert_ptr_null(tg_dev_group(twice, 2));
	ck_assert_error("dev_group: CPU is listed twice");
	ck_assert_ptr_null(tg_dev_group((tg_dev *[]){ cpu[0], group2 }, 2));
	ck_assert_error("dev_group: CPU,CPU:1 cannot be a member (a group)");
	ck_assert_ptr_null(tg_dev_group_member(group2, 2));
	ck_assert_error("dev_group_member: CPU,CPU:1 has no member 2");
	ck_assert_ptr_null(tg_buffer_new(group2, 4, TG_FLOAT32));
	ck_assert_error("buffer_new: CPU,CPU:1 is a device group, which has "
	                "no memory or kernels of its own");
	ck_assert_int_lt(tg_dev_get_info(group2, &(tg_dev_info){ 0 }), 0);
	ck_assert_int_eq(tg_dev_synchronize(group2), 0);
}
END_TEST

START_TEST(shard_and_gather)
{
	float v[5 * 3], out[5 * 3];
	tg_tensor *x = mat(5, 3, v, 0), *s2, *s3, *r;

	s2 = ok(tg_shard(x, group2, 0));
	ck_assert_ptr_eq(tg_tensor_dev(s2), group2);
	ck_assert_int_eq(tg_shard_axis(s2), 0);
	ck_assert_int_eq(tg_tensor_shape(s2)[0], 5);
	read_f(s2, out, 15);
	ck_assert_mem_eq(out, v, sizeof v);
	/* uneven: 2, 2 and 1 rows; and along the last axis */
	s3 = ok(tg_shard(x, group3, 0));
	read_f(ok(tg_to(s3, cpu[1])), out, 15);
	ck_assert_mem_eq(out, v, sizeof v);
	s3 = ok(tg_shard(x, group3, -1));
	ck_assert_int_eq(tg_shard_axis(s3), 1);
	read_f(s3, out, 15);
	ck_assert_mem_eq(out, v, sizeof v);
	/* replicated: every member holds all of it */
	r = ok(tg_to(x, group3));
	ck_assert_int_eq(tg_shard_axis(r), -1);
	read_f(ok(tg_to(r, cpu[2])), out, 15);
	ck_assert_mem_eq(out, v, sizeof v);
	/* data given for a group lands on each member */
	r = ok(tg_tensor_new(group2, TG_FLOAT32, 2, (int64_t[]){ 5, 3 }, v));
	read_f(ok(tg_to(r, cpu[1])), out, 15);
	ck_assert_mem_eq(out, v, sizeof v);
}
END_TEST

START_TEST(shard_refusals)
{
	float v[2 * 3];
	tg_tensor *x = mat(2, 3, v, 1), *s;

	ck_assert_ptr_null(tg_shard(x, group3, 0));
	ck_assert_error("shard: axis 0 of (2,3) has 2 rows, too few for 3 "
	                "devices (1 each leaves device 2 none)");
	ck_assert_ptr_null(tg_shard(x, cpu[1], 0));
	ck_assert_error("shard: CPU:1 is not a device group");
	ck_assert_ptr_null(tg_shard(x, group2, 2));
	ck_assert_error("shard: axis 2 of a tensor (2,3)");
	s = ok(tg_shard(x, group2, 1));
	ck_assert_ptr_null(tg_shard(s, group2, 0));
	ck_assert_error("already on the device group CPU,CPU:1");
	ck_assert_ptr_null(tg_add(s, x));
	ck_assert_error("add: tensors on CPU,CPU:1 and CPU (move one with "
	                "tg_to)");
	ck_assert_ptr_null(tg_to(s, group3));
	ck_assert_error("to: from the device group CPU,CPU:1 to another");
}
END_TEST

/* a (sharded on axis 0) + b (replicated) * c (sharded on axis 1):
 * every way operands meet. */
START_TEST(elementwise_across_splits)
{
	enum { R = 6, C = 4 };
	float a[R * C], b[R * C], c[R * C], out[R * C];
	double want[R * C];
	tg_tensor *ta = mat(R, C, a, 0), *tb = mat(R, C, b, 1);
	tg_tensor *tc = mat(R, C, c, 2), *y;

	y = ok(tg_add(ok(tg_shard(ta, group2, 0)),
	              ok(tg_mul(ok(tg_to(tb, group2)),
	                        ok(tg_shard(tc, group2, 1))))));
	ck_assert_int_eq(tg_shard_axis(y), 1);
	read_f(y, out, R * C);
	for (int i = 0; i < R * C; i++)
		want[i] = (double)a[i] + (double)b[i] * c[i];
	near(out, want, R * C, 1e-6);
	/* a constant made like a sharded tensor is replicated */
	y = ok(tg_mul_s(ok(tg_shard(ta, group3, 0)), 2.5));
	read_f(y, out, R * C);
	for (int i = 0; i < R * C; i++)
		want[i] = 2.5 * a[i];
	near(out, want, R * C, 1e-7);
}
END_TEST

START_TEST(reduces_all_reduce)
{
	enum { R = 7, C = 5 };
	float a[R * C], out[R * C], o1[C], o2[C];
	double want[R * C];
	tg_tensor *x = mat(R, C, a, 3), *s = ok(tg_shard(x, group3, 0)), *y;
	tg_counters k;

	/* over the split axis: replicated, equal on every member */
	y = ok(tg_sum(s, (int[]){ 0 }, 1, 0));
	ck_assert_int_eq(tg_shard_axis(y), -1);
	tg_counters_reset();
	read_f(y, out, C);
	tg_counters_get(&k);
	ck_assert_uint_eq(k.peer_copies, k.copies);
	for (int j = 0; j < C; j++) {
		want[j] = 0;
		for (int i = 0; i < R; i++)
			want[j] += a[i * C + j];
	}
	near(out, want, C, 1e-6);
	read_f(ok(tg_to(y, cpu[1])), o1, C);
	read_f(ok(tg_to(y, cpu[2])), o2, C);
	ck_assert_mem_eq(o1, out, sizeof o1);
	ck_assert_mem_eq(o2, out, sizeof o2);
	/* max over it; and a sum along the other axis stays split */
	y = ok(tg_max(s, NULL, 0, 0));
	read_f(y, out, 1);
	want[0] = a[0];
	for (int i = 1; i < R * C; i++)
		want[0] = a[i] > want[0] ? a[i] : want[0];
	ck_assert_float_eq(out[0], (float)want[0]);
	y = ok(tg_sum(s, (int[]){ 1 }, 1, 0));
	ck_assert_int_eq(tg_shard_axis(y), 0);
	read_f(y, out, R);
	for (int i = 0; i < R; i++) {
		want[i] = 0;
		for (int j = 0; j < C; j++)
			want[i] += a[i * C + j];
	}
	near(out, want, R, 1e-6);
}
END_TEST

/* RING=2 forces the ring all-reduce, RING=0 the direct one: the same
 * sums (within rounding), replicas equal bit for bit, and the copies
 * each makes: n(n-1) parts, or 2(n-1) chunks per member. */
START_TEST(ring_and_direct_all_reduce)
{
	enum { R = 9, C = 7 };
	float a[R * C], direct[C], ring[C], rep[C];
	double want[C];
	tg_tensor *x = mat(R, C, a, 6), *s = ok(tg_shard(x, group3, 0)), *y;
	tg_counters k;

	for (int j = 0; j < C; j++) {
		want[j] = 0;
		for (int i = 0; i < R; i++)
			want[j] += a[i * C + j];
	}
	ck_assert_int_eq(tg_realize(s), 0);  /* its copies do not count */
	for (int mode = 0; mode <= 2; mode += 2) {
		float *out = mode ? ring : direct;

		ck_assert_int_eq(tg_config_set("RING", mode ? "2" : "0"), 0);
		y = ok(tg_sum(s, (int[]){ 0 }, 1, 0));
		tg_counters_reset();
		ck_assert_msg(tg_realize(y) == 0, "%s", tg_last_error());
		tg_counters_get(&k);
		ck_assert_uint_eq(k.copies, mode ? 2 * 2 * 3 : 3 * 2);
		read_f(y, out, C);
		near(out, want, C, 1e-6);
		for (int m = 1; m < 3; m++) {
			read_f(ok(tg_to(y, cpu[m])), rep, C);
			ck_assert_mem_eq(rep, out, sizeof rep);
		}
	}
	ck_assert_int_lt(tg_config_set("RING", "3"), 0);
}
END_TEST

START_TEST(movement_through_the_split_axis)
{
	enum { R = 4, C = 6 };
	float a[R * C], out[R * 7], ref[R * 7];
	tg_tensor *x = mat(R, C, a, 4), *s = ok(tg_shard(x, group2, 0)), *y;

	/* reshape (4,6) -> (2,12): each device's 2 rows become 1 */
	y = ok(tg_reshape(s, 2, (int64_t[]){ 2, 12 }));
	ck_assert_int_eq(tg_shard_axis(y), 0);
	read_f(y, out, R * C);
	ck_assert_mem_eq(out, a, sizeof a);
	/* reshape (4,6) -> (4,2,3): the split axis stays */
	y = ok(tg_reshape(s, 3, (int64_t[]){ 4, 2, 3 }));
	ck_assert_int_eq(tg_shard_axis(y), 0);
	/* permute carries it along */
	y = ok(tg_permute(s, 2, (int[]){ 1, 0 }));
	ck_assert_int_eq(tg_shard_axis(y), 1);
	read_f(y, out, R * C);
	read_f(ok(tg_permute(x, 2, (int[]){ 1, 0 })), ref, R * C);
	ck_assert_mem_eq(out, ref, R * C * sizeof *ref);
	/* pads, shrinks and flips of the other axis */
	y = ok(tg_flip(ok(tg_pad(ok(tg_shrink(s, 2, (int64_t[]){ 0, 4, 1,
	                                                         5 })),
	                         2, (int64_t[]){ 0, 0, 2, 1 }, 0)),
	               (int[]){ 1 }, 1));
	read_f(y, out, R * 7);
	read_f(ok(tg_flip(ok(tg_pad(ok(tg_shrink(x, 2, (int64_t[]){ 0, 4, 1,
	                                                          5 })),
	                          2, (int64_t[]){ 0, 0, 2, 1 }, 0)),
	                (int[]){ 1 }, 1)), ref, R * 7);
	ck_assert_mem_eq(out, ref, R * 7 * sizeof *ref);
	/* a shrink to one device's rows, then padded back: zeros elsewhere */
	y = ok(tg_shrink(s, 2, (int64_t[]){ 2, 4, 0, C }));
	ck_assert_int_eq(tg_tensor_shape(y)[0], 2);
	read_f(y, out, 2 * C);
	ck_assert_mem_eq(out, a + 2 * C, 2 * C * sizeof *a);
	y = ok(tg_pad(y, 2, (int64_t[]){ 2, 0, 0, 0 }, 0));
	read_f(y, out, R * C);
	for (int i = 0; i < 2 * C; i++)
		ck_assert_float_eq(out[i], 0);
	ck_assert_mem_eq(out + 2 * C, a + 2 * C, 2 * C * sizeof *a);
	/* an expand of a new axis of size 1 in front */
	y = ok(tg_expand(ok(tg_reshape(s, 3, (int64_t[]){ 1, R, C })), 3,
	                 (int64_t[]){ 2, R, C }));
	ck_assert_int_eq(tg_shard_axis(y), 1);
	read_f(ok(tg_sum(y, (int[]){ 0 }, 1, 0)), out, R * C);
	for (int i = 0; i < R * C; i++)
		ck_assert_float_eq(out[i], 2 * a[i]);
}
END_TEST

START_TEST(movement_refusals)
{
	float a[4 * 6];
	tg_tensor *x = mat(4, 6, a, 5), *s = ok(tg_shard(x, group2, 0));

	ck_assert_ptr_null(tg_reshape(s, 2, (int64_t[]){ 3, 8 }));
	ck_assert_error("reshape: a tensor (4,6) split along axis 0 over "
	                "CPU,CPU:1: the new shape would move elements between "
	                "devices");
	ck_assert_ptr_null(tg_flip(s, (int[]){ 0 }, 1));
	ck_assert_error("the sharded axis cannot be flipped or strided");
	ck_assert_ptr_null(tg_shrink(s, 2, (int64_t[]){ 1, 3, 0, 6 }));
	ck_assert_error("can only be shrunk to exactly one device's rows");
	ck_assert_ptr_null(tg_shrink(s, 2, (int64_t[]){ 0, 2, 0, 5 }));
	ck_assert_error("the sharded axis and another cannot be shrunk at "
	                "once");
	ck_assert_ptr_null(tg_pad(s, 2, (int64_t[]){ 1, 0, 0, 0 }, 0));
	ck_assert_error("can only be padded back to the whole of a shrink to "
	                "one shard");
	ck_assert_ptr_null(tg_expand(ok(tg_shard(ok(tg_reshape(x, 3,
	                   (int64_t[]){ 4, 1, 6 })), group2, 1 - 1)), 3,
	                   (int64_t[]){ 8, 1, 6 }));
	ck_assert_error("expand");
}
END_TEST

/* Gradients flow back through tg_shard to the tensor's own device:
 * d/dx sum(shard(x)^2 * w) = 2 x w, w replicated. */
START_TEST(gradients_through_shard)
{
	enum { R = 5, C = 3 };
	float xv[R * C], wv[R * C], g[R * C];
	double want[R * C];
	tg_tensor *x = mat(R, C, xv, 7), *w = mat(R, C, wv, 8), *loss, *gx;

	ck_assert_int_eq(tg_set_requires_grad(x, 1), 0);
	loss = ok(tg_sum(ok(tg_mul(ok(tg_square(ok(tg_shard(x, group3, 0)))),
	                           ok(tg_to(w, group3)))), NULL, 0, 0));
	ck_assert_ptr_eq(tg_tensor_dev(loss), group3);
	ck_assert_msg(tg_backward(loss, NULL) == 0, "%s", tg_last_error());
	gx = tg_grad(x);
	ck_assert_ptr_nonnull(gx);
	ck_assert_ptr_eq(tg_tensor_dev(gx), cpu[0]);
	read_f(gx, g, R * C);
	for (int i = 0; i < R * C; i++)
		want[i] = 2.0 * xv[i] * wv[i];
	near(g, want, R * C, 1e-6);
}
END_TEST

/* Random numbers on a group are the single device's stream, copied to
 * each member. */
START_TEST(random_numbers_on_a_group)
{
	int64_t n = 6;
	float on_group[6], on_one[6], on_second[6];
	tg_tensor *r;

	tg_manual_seed(7);
	r = ok(tg_rand(group2, TG_FLOAT32, 1, &n));
	ck_assert_ptr_eq(tg_tensor_dev(r), group2);
	read_f(r, on_group, 6);
	read_f(ok(tg_to(r, cpu[1])), on_second, 6);
	tg_manual_seed(7);
	read_f(ok(tg_rand(cpu[0], TG_FLOAT32, 1, &n)), on_one, 6);
	ck_assert_mem_eq(on_group, on_one, sizeof on_one);
	ck_assert_mem_eq(on_second, on_one, sizeof on_one);
}
END_TEST

/* ---------------------------------------------------------------- JIT */

enum { JR = 6, JC = 4 };

/* out[0] = x * w (split as x is), out[1] = the column sums of x (an
 * all-reduce when x is split by rows), out[2] = x + 1 gathered to
 * CPU:1. */
static int sharded_step(void *ctx, tg_tensor *const *in, size_t nin,
                        tg_tensor **out, size_t nout)
{
	(void)ctx, (void)nin, (void)nout;
	out[0] = tg_mul(in[0], in[1]);
	out[1] = tg_sum(in[0], (int[]){ 0 }, 1, 0);
	out[2] = tg_to(tg_add_s(in[0], 1), cpu[1]);
	return out[0] && out[1] && out[2] ? 0 : tg_last_status();
}

static void check_sharded_step(tg_tensor **out, const float *x,
                               const float *w)
{
	float got[JR * JC];
	double want[JR * JC];

	ck_assert_ptr_eq(tg_tensor_dev(out[0]), group2);
	ck_assert_int_eq(tg_shard_axis(out[0]), 0);
	ck_assert_ptr_eq(tg_tensor_dev(out[1]), group2);
	ck_assert_int_eq(tg_shard_axis(out[1]), -1);
	ck_assert_ptr_eq(tg_tensor_dev(out[2]), cpu[1]);
	read_f(out[0], got, JR * JC);
	for (int i = 0; i < JR * JC; i++)
		want[i] = (double)x[i] * w[i % JC];
	near(got, want, JR * JC, 1e-6);
	/* each replica of the sums, read from its own member */
	for (int m = 0; m < 2; m++) {
		read_f(ok(tg_to(out[1], cpu[m])), got, JC);
		for (int c = 0; c < JC; c++) {
			want[c] = 0;
			for (int r = 0; r < JR; r++)
				want[c] += x[r * JC + c];
		}
		near(got, want, JC, 1e-5);
	}
	read_f(out[2], got, JR * JC);
	for (int i = 0; i < JR * JC; i++)
		want[i] = x[i] + 1.0;
	near(got, want, JR * JC, 1e-6);
}

/* The JIT captures a step over sharded and replicated inputs: kernels
 * on both members, the all-reduce's copies and the gather, replayed
 * with new inputs; outputs keep their split. */
START_TEST(the_jit_replays_multi_device_steps)
{
	float x[JR * JC], w[JC];
	tg_tensor *in[2], *out[3];
	tg_jit_info info;
	tg_counters before, after;
	tg_jit *j = tg_jit_new(sharded_step, NULL);

	for (int call = 0; call < 5; call++) {
		tg_scope_begin();
		in[0] = ok(tg_shard(mat(JR, JC, x, call), group2, 0));
		in[1] = ok(tg_to(ok(tg_reshape(mat(1, JC, w, 9 - call), 1,
		                               (int64_t[]){ JC })), group2));
		tg_counters_get(&before);
		ck_assert_msg(tg_jit_call(j, in, 2, out, 3) == 0, "%s",
		              tg_last_error());
		tg_counters_get(&after);
		check_sharded_step(out, x, w);
		if (call >= 2)  /* replays: the copies go device to device */
			ck_assert_uint_eq(after.peer_copies - before.peer_copies,
			                  after.copies - before.copies);
		tg_scope_end();
	}
	ck_assert_int_eq(tg_jit_get_info(j, &info), 0);
	ck_assert(info.captured);
	ck_assert_uint_eq(info.calls, 5);
	ck_assert_uint_ge(info.graphs, 2);  /* runs on CPU and on CPU:1 */
	ck_assert_uint_ge(info.copies, 2);  /* the all-reduce, the gather */
	tg_jit_free(j);
}
END_TEST

static int add_step(void *ctx, tg_tensor *const *in, size_t nin,
                    tg_tensor **out, size_t nout)
{
	(void)ctx, (void)nin, (void)nout;
	out[0] = tg_add(in[0], in[1]);
	return out[0] ? 0 : tg_last_status();
}

/* Replays check each input's device, split and shards. */
START_TEST(jit_refuses_other_splits)
{
	float x[2 * JR * JC], w[JC];
	tg_tensor *in[2], *out[3], *whole;
	tg_jit *j = tg_jit_new(sharded_step, NULL);

	whole = mat(JR, JC, x, 0);
	in[1] = ok(tg_to(ok(tg_reshape(mat(1, JC, w, 1), 1,
	                               (int64_t[]){ JC })), group2));
	in[0] = ok(tg_shard(whole, group2, 0));
	for (int call = 0; call < 2; call++)
		ck_assert_msg(tg_jit_call(j, in, 2, out, 3) == 0, "%s",
		              tg_last_error());
	in[0] = whole;
	ck_assert_int_lt(tg_jit_call(j, in, 2, out, 3), 0);
	ck_assert_error("jit_call: input 0 is on CPU, the capture had "
	                "CPU,CPU:1");
	in[0] = ok(tg_shard(whole, group2, 1));
	ck_assert_int_lt(tg_jit_call(j, in, 2, out, 3), 0);
	ck_assert_error("jit_call: input 0 is split along axis 1, the "
	                "capture's along 0 (-1: copied whole to each device)");
	in[0] = ok(tg_to(whole, group2));
	ck_assert_int_lt(tg_jit_call(j, in, 2, out, 3), 0);
	ck_assert_error("jit_call: input 0 is split along axis -1, the "
	                "capture's along 0");
	/* the first shard's rows of a longer tensor: all on CPU */
	in[0] = ok(tg_shrink(ok(tg_shard(mat(2 * JR, JC, x, 0), group2, 0)),
	                     2, (int64_t[]){ 0, JR, 0, JC }));
	ck_assert_int_lt(tg_jit_call(j, in, 2, out, 3), 0);
	ck_assert_error("jit_call: input 0: its shard on CPU has shape (6,4), "
	                "the capture's (3,4)");
	tg_jit_free(j);
	/* one sharded tensor given twice: its shards' memory is shared */
	j = tg_jit_new(add_step, NULL);
	in[1] = ok(tg_shard(mat(JR, JC, x, 3), group2, 0));
	in[0] = ok(tg_shard(whole, group2, 0));
	for (int call = 0; call < 2; call++)
		ck_assert_msg(tg_jit_call(j, in, 2, out, 1) == 0, "%s",
		              tg_last_error());
	in[1] = in[0];
	ck_assert_int_lt(tg_jit_call(j, in, 2, out, 1), 0);
	ck_assert_error("jit_call: inputs 0 and 1 share memory");
	tg_jit_free(j);
}
END_TEST

/* y = relu(x @ w1) @ w2, mean squared error, SGD with momentum: the
 * batch split over two devices and the weights replicated give the
 * single-device losses (within float rounding: the all-reduce adds in
 * another order) and the same weights; under the JIT, the same bits as
 * without it. */
enum { TB = 8, TI = 5, TH = 7, TO = 3, STEPS = 12 };

typedef struct net {
	tg_tensor *w1, *w2;
	tg_optim *opt;
} net;

static int train_step(void *ctx, tg_tensor *const *in, size_t nin,
                      tg_tensor **out, size_t nout)
{
	net *m = ctx;
	tg_tensor *loss;

	(void)nin, (void)nout;
	loss = tg_mean(tg_square(tg_sub(tg_matmul(tg_relu(tg_matmul(in[0],
	               m->w1)), m->w2), in[1])), NULL, 0, 0);
	if (!loss || tg_optim_zero_grad(m->opt) || tg_backward(loss, NULL) ||
	    tg_optim_step(m->opt, &loss, 1))
		return tg_last_status();
	out[0] = loss;
	return 0;
}

static tg_tensor *place(tg_tensor *t, tg_dev *dev, int shard)
{
	if (!dev)
		return t;
	return ok(shard ? tg_shard(t, dev, 0) : tg_to(t, dev));
}

static void train(tg_dev *dev, int use_jit, double *losses, float *w1_out)
{
	float xv[TB * TI], yv[TB * TO], w1v[TI * TH], w2v[TH * TO];
	tg_jit *j = NULL;
	net m;

	tg_scope_begin();
	m.w1 = place(ok(tg_mul_s(mat(TI, TH, w1v, 30), 0.3)), dev, 0);
	m.w2 = place(ok(tg_mul_s(mat(TH, TO, w2v, 40), 0.3)), dev, 0);
	m.w1 = ok(tg_contiguous(m.w1));
	m.w2 = ok(tg_contiguous(m.w2));
	ck_assert_int_eq(tg_realize_many((tg_tensor *[]){ m.w1, m.w2 }, 2), 0);
	ck_assert_int_eq(tg_set_requires_grad(m.w1, 1), 0);
	ck_assert_int_eq(tg_set_requires_grad(m.w2, 1), 0);
	m.opt = tg_optim_sgd((tg_tensor *[]){ m.w1, m.w2 }, 2, 0.05, 0.9, 0,
	                     0);
	ck_assert_ptr_nonnull(m.opt);
	if (use_jit)
		ck_assert_ptr_nonnull(j = tg_jit_new(train_step, &m));
	tg_set_training(1);
	for (int s = 0; s < STEPS; s++) {
		tg_tensor *in[2], *loss;

		tg_scope_begin();
		/* a new batch each step, from the first three by turns */
		in[0] = place(mat(TB, TI, xv, 10 + s % 3), dev, 1);
		in[1] = place(mat(TB, TO, yv, 20 + s % 3), dev, 1);
		if (j)
			ck_assert_msg(tg_jit_call(j, in, 2, &loss, 1) == 0, "%s",
			              tg_last_error());
		else
			ck_assert_msg(train_step(&m, in, 2, &loss, 1) == 0, "%s",
			              tg_last_error());
		ck_assert_int_eq(tg_tensor_item(loss, &losses[s]), 0);
		tg_scope_end();
	}
	tg_set_training(0);
	read_f(m.w1, w1_out, TI * TH);
	tg_jit_free(j);
	tg_optim_free(m.opt);
	tg_scope_end();
}

START_TEST(data_parallel_training_follows_one_device)
{
	double one[STEPS], two[STEPS], jit[STEPS];
	float w_one[TI * TH], w_two[TI * TH], w_jit[TI * TH];

	train(NULL, 0, one, w_one);
	train(group2, 0, two, w_two);
	train(group2, 1, jit, w_jit);
	for (int s = 0; s < STEPS; s++)
		ck_assert_msg(fabs(one[s] - two[s]) <= 1e-5 * (1 + one[s]),
		              "step %d: loss %.9g on one device, %.9g on two",
		              s, one[s], two[s]);
	ck_assert_msg(one[STEPS - 1] < 0.8 * one[0], "no learning: %g -> %g",
	              one[0], one[STEPS - 1]);
	for (int i = 0; i < TI * TH; i++)
		ck_assert_msg(fabsf(w_one[i] - w_two[i]) <= 1e-5f,
		              "w1[%d]: %g vs %g", i, w_one[i], w_two[i]);
	ck_assert_mem_eq(jit, two, sizeof jit);
	ck_assert_mem_eq(w_jit, w_two, sizeof w_jit);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("multi");
	TCase *tc = tcase_create("multi");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, groups_are_named_and_checked);
	tcase_add_test(tc, shard_and_gather);
	tcase_add_test(tc, shard_refusals);
	tcase_add_test(tc, elementwise_across_splits);
	tcase_add_test(tc, reduces_all_reduce);
	tcase_add_test(tc, ring_and_direct_all_reduce);
	tcase_add_test(tc, movement_through_the_split_axis);
	tcase_add_test(tc, movement_refusals);
	tcase_add_test(tc, gradients_through_shard);
	tcase_add_test(tc, random_numbers_on_a_group);
	tcase_add_test(tc, the_jit_replays_multi_device_steps);
	tcase_add_test(tc, jit_refuses_other_splits);
	tcase_add_test(tc, data_parallel_training_follows_one_device);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tl_run(suite());
}

/*
 * test_optim.c - optimizers (nn/optim.c) against updates computed here
 * by hand in double precision from tinygrad's formulas, and the losses
 * (nn/loss.c) against C loops, with their gradients; and a small MLP
 * trained end to end.
 *
 * The loss for the optimizer tests is L(w) = sum(c * w + w * w), whose
 * gradient 2w + c is easy to follow by hand through several steps.
 */
#include "config.h"

#include <math.h>

#include "testlib.h"
#include "../libtgcore/tensor/tensor.h"

#define N 5

static const float c0[N] = { 0.5f, -1.0f, 2.0f, 0.25f, -3.0f };
static const float w0[N] = { 1.0f, -0.5f, 0.25f, 2.0f, -1.5f };

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

static tg_tensor *vec(const float *v)
{
	int64_t n = N;

	return tg_tensor_new(NULL, TG_FLOAT32, 1, &n, v);
}

/* One training step of opt on w: backward of sum(c*w + w*w), step. */
static void train_step(tg_optim *opt, tg_tensor *w, tg_tensor *c)
{
	tg_tensor *loss;

	tg_scope_begin();
	ck_assert_int_eq(tg_optim_zero_grad(opt), 0);
	loss = tg_sum(tg_add(tg_mul(c, w), tg_mul(w, w)), NULL, 0, 0);
	ck_assert_msg(tg_backward(loss, NULL) == 0, "%s", tg_last_error());
	ck_assert_msg(tg_optim_step(opt, &loss, 1) == 0, "%s",
	              tg_last_error());
	tg_scope_end();
}

static void expect_w(tg_tensor *w, const double *want, double tol)
{
	float got[N];
	int i;

	ck_assert_int_eq(tg_tensor_data(w, got, sizeof got), 0);
	for (i = 0; i < N; i++)
		ck_assert_msg(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])),
		              "w[%d] = %.8g, want %.8g", i, got[i], want[i]);
}

/* tinygrad's LARS (SGD is tcoef 0, classic 0), by hand. */
static void lars_ref(double *w, double *b, int steps, double lr, double mom,
                     double wd, int nesterov, int classic, double tcoef)
{
	int s, i;

	for (s = 0; s < steps; s++) {
		double g[N], r1 = 0, r2 = 0, r = 1;

		for (i = 0; i < N; i++) {
			g[i] = 2 * w[i] + c0[i];
			r1 += w[i] * w[i];
			r2 += g[i] * g[i];
		}
		r1 = sqrt(r1), r2 = sqrt(r2);
		if (tcoef != 0 && r1 > 0 && r2 > 0)
			r = tcoef * r1 / (r2 + wd * r1);
		for (i = 0; i < N; i++) {
			double gi = g[i] + wd * w[i];

			if (classic)
				gi *= r * lr;
			if (mom != 0) {
				b[i] = mom * b[i] + gi;
				gi = nesterov ? gi + mom * b[i] : b[i];
			}
			if (!classic)
				gi *= r * lr;
			w[i] -= gi;
		}
	}
}

static void run_lars(int steps, double lr, double mom, double wd,
                     int nesterov, int classic, double tcoef)
{
	double w[N], b[N] = { 0 };
	tg_tensor *tw = tg_contiguous(vec(w0)), *c = vec(c0);
	tg_optim *o;
	int i;

	ck_assert_int_eq(tg_realize(tw), 0);
	o = tcoef == 0 && !classic
	    ? tg_optim_sgd(&tw, 1, lr, mom, wd, nesterov)
	    : tg_optim_lars(&tw, 1, lr, mom, wd, nesterov, classic, tcoef);
	ck_assert_msg(o != NULL, "%s", tg_last_error());
	ck_assert_int_eq(tg_requires_grad(tw), 1);
	for (i = 0; i < N; i++)
		w[i] = w0[i];
	for (i = 0; i < steps; i++)
		train_step(o, tw, c);
	lars_ref(w, b, steps, lr, mom, wd, nesterov, classic, tcoef);
	expect_w(tw, w, 1e-5);
	tg_optim_free(o);
}

START_TEST(sgd_plain_momentum_nesterov_weight_decay)
{
	run_lars(3, 0.1, 0, 0, 0, 0, 0);
	run_lars(3, 0.05, 0.9, 0, 0, 0, 0);
	run_lars(3, 0.05, 0.9, 0, 1, 0, 0);
	run_lars(3, 0.05, 0.9, 0.01, 0, 0, 0);
}
END_TEST

START_TEST(lars_classic_and_popular)
{
	run_lars(3, 0.1, 0.9, 1e-4, 0, 1, 0.001);
	run_lars(3, 0.1, 0.9, 1e-4, 0, 0, 0.001);
	run_lars(3, 0.1, 0.9, 1e-2, 1, 1, 0.02);
}
END_TEST

/* tinygrad's LAMB (Adam and AdamW: adam 1), by hand. */
static void lamb_ref(double *w, int steps, double lr, double b1, double b2,
                     double eps, double wd, int adam)
{
	double m[N] = { 0 }, v[N] = { 0 }, b1t = 1, b2t = 1;
	int s, i;

	for (s = 0; s < steps; s++) {
		double up[N], r1 = 0, r2 = 0, r = 1;

		b1t *= b1;
		b2t *= b2;
		for (i = 0; i < N; i++) {
			double g = 2 * w[i] + c0[i];

			m[i] = b1 * m[i] + (1 - b1) * g;
			v[i] = b2 * v[i] + (1 - b2) * g * g;
			up[i] = (m[i] / (1 - b1t)) / (sqrt(v[i] / (1 - b2t)) + eps)
			        + wd * w[i];
			r1 += w[i] * w[i];
			r2 += up[i] * up[i];
		}
		if (!adam && r1 > 0 && r2 > 0)
			r = sqrt(r1) / sqrt(r2);
		for (i = 0; i < N; i++)
			w[i] -= lr * r * up[i];
	}
}

static void run_lamb(int which, int steps, double lr, double wd)
{
	double w[N];
	tg_tensor *tw = tg_contiguous(vec(w0)), *c = vec(c0);
	tg_optim *o;
	int i;

	ck_assert_int_eq(tg_realize(tw), 0);
	o = which == 0 ? tg_optim_adam(&tw, 1, lr, 0.9, 0.999, 1e-8)
	    : which == 1 ? tg_optim_adamw(&tw, 1, lr, 0.9, 0.999, 1e-8, wd)
	    : tg_optim_lamb(&tw, 1, lr, 0.9, 0.999, 1e-6, wd, 0);
	ck_assert_msg(o != NULL, "%s", tg_last_error());
	for (i = 0; i < N; i++)
		w[i] = w0[i];
	for (i = 0; i < steps; i++)
		train_step(o, tw, c);
	lamb_ref(w, steps, lr, 0.9, 0.999, which == 2 ? 1e-6 : 1e-8,
	         which == 0 ? 0 : wd, which != 2);
	expect_w(tw, w, 1e-5);
	tg_optim_free(o);
}

START_TEST(adam_adamw_lamb)
{
	run_lamb(0, 4, 0.01, 0);
	run_lamb(1, 4, 0.01, 0.1);
	run_lamb(2, 4, 0.01, 0.1);
}
END_TEST

/* The rate is a tensor: a new rate takes effect, same kernels. */
START_TEST(learning_rate_is_a_tensor)
{
	double w[N], b[N] = { 0 };
	tg_tensor *tw = tg_contiguous(vec(w0)), *c = vec(c0);
	tg_optim *o;
	float lr;
	int i;

	ck_assert_int_eq(tg_realize(tw), 0);
	o = tg_optim_sgd(&tw, 1, 0.1, 0, 0, 0);
	train_step(o, tw, c);
	ck_assert_int_eq(tg_optim_set_lr(o, 0.01), 0);
	/* held in memory, not a constant the kernels would bake in */
	ck_assert_int_eq(tg_lazy_base(tg_optim_lr(o)->lazy)->kind,
	                 TG_LZ_BUFFER);
	ck_assert_int_eq(tg_tensor_data(tg_optim_lr(o), &lr, sizeof lr), 0);
	ck_assert_float_eq_tol(lr, 0.01f, 1e-9);
	train_step(o, tw, c);
	for (i = 0; i < N; i++)
		w[i] = w0[i];
	lars_ref(w, b, 1, 0.1, 0, 0, 0, 0, 0);
	lars_ref(w, b, 1, 0.01, 0, 0, 0, 0, 0);
	expect_w(tw, w, 1e-5);
	tg_optim_free(o);
}
END_TEST

/* requires_grad 0 tensors are buffers: not updated, but their pending
 * assigns run with the step; duplicates count once. */
START_TEST(buffers_are_realized_not_updated)
{
	tg_tensor *tw = tg_contiguous(vec(w0)), *c = vec(c0);
	tg_tensor *stat = tg_contiguous(vec(c0)), *ts[3];
	tg_optim *o;
	float got[N];
	int i;

	ck_assert_int_eq(tg_realize(tw), 0);
	ck_assert_int_eq(tg_realize(stat), 0);
	tg_set_requires_grad(stat, 0);
	ts[0] = tw, ts[1] = stat, ts[2] = tw;
	o = tg_optim_sgd(ts, 3, 0.1, 0, 0, 0);
	ck_assert_int_eq(tg_requires_grad(stat), 0);
	ck_assert_int_eq(tg_assign(stat, tg_mul_s(stat, 2)), 0);
	train_step(o, tw, c);
	/* realized by the step: its lazy is a buffer now */
	ck_assert_int_eq(stat->lazy->kind, TG_LZ_BUFFER);
	ck_assert_int_eq(tg_tensor_data(stat, got, sizeof got), 0);
	for (i = 0; i < N; i++)
		ck_assert_float_eq(got[i], 2 * c0[i]);
	tg_optim_free(o);
}
END_TEST

/* A group of SGD on w and Adam on u steps both as one: the same values
 * as each stepped alone, from one realize; schedule_step hands the
 * tensors to realize to the caller instead. */
START_TEST(group_steps_its_members_together)
{
	double w[N], b[N] = { 0 }, u[N];
	tg_tensor *tw = tg_contiguous(vec(w0)), *tu = tg_contiguous(vec(w0));
	tg_tensor *c = vec(c0), **sched;
	tg_optim *sgd, *adam, *g;
	tg_counters cnt;
	size_t n, i;
	int s;

	ck_assert_int_eq(tg_realize(tw), 0);
	ck_assert_int_eq(tg_realize(tu), 0);
	sgd = tg_optim_sgd(&tw, 1, 0.1, 0.9, 0, 0);
	adam = tg_optim_adam(&tu, 1, 0.01, 0.9, 0.999, 1e-8);
	g = tg_optim_group((tg_optim *[]){ sgd, adam }, 2);
	ck_assert_ptr_nonnull(g);
	for (s = 0; s < 3; s++) {
		tg_tensor *loss;

		tg_scope_begin();
		ck_assert_int_eq(tg_optim_zero_grad(g), 0);
		ck_assert_ptr_null(tg_grad(tw));
		loss = tg_add(tg_sum(tg_add(tg_mul(c, tw), tg_mul(tw, tw)), NULL,
		                     0, 0),
		              tg_sum(tg_add(tg_mul(c, tu), tg_mul(tu, tu)), NULL,
		                     0, 0));
		ck_assert_int_eq(tg_backward(loss, NULL), 0);
		if (s < 2) {
			ck_assert_msg(tg_optim_step(g, &loss, 1) == 0, "%s",
			              tg_last_error());
		} else {
			/* w, its momentum, u, m, v, b1^t, b2^t */
			ck_assert_int_eq(tg_optim_schedule_step(g, &sched, &n), 0);
			ck_assert_uint_eq(n, 7);
			for (i = 0; i < n; i++)
				ck_assert(sched[i] == tw || sched[i] == tu ||
				          tg_requires_grad(sched[i]) == 0);
			ck_assert(sched[0] == tw && sched[2] == tu);
			tg_counters_reset();
			ck_assert_int_eq(tg_realize_many(sched, n), 0);
			tg_counters_get(&cnt);
			/* nothing ran before the realize, the updates did then */
			ck_assert_uint_gt(cnt.kernels, 0);
			free(sched);
		}
		tg_scope_end();
	}
	for (i = 0; i < N; i++)
		w[i] = u[i] = w0[i];
	lars_ref(w, b, 3, 0.1, 0.9, 0, 0, 0, 0);
	lamb_ref(u, 3, 0.01, 0.9, 0.999, 1e-8, 0, 1);
	expect_w(tw, w, 1e-5);
	expect_w(tu, u, 1e-5);
	/* the rate of a group is its members' */
	ck_assert_int_eq(tg_optim_set_lr(g, 0.5), 0);
	ck_assert_ptr_null(tg_optim_lr(g));
	ck_assert_error("optim_lr: a group of 2 optimizers has no single rate");
	{
		float lr;

		ck_assert_int_eq(tg_tensor_data(tg_optim_lr(adam), &lr,
		                                sizeof lr), 0);
		ck_assert_float_eq(lr, 0.5f);
	}
	tg_optim_free(g); /* and sgd and adam */
}
END_TEST

START_TEST(group_and_schedule_errors)
{
	tg_tensor *tw = tg_contiguous(vec(w0)), **sched = (tg_tensor **)1;
	tg_optim *o = tg_optim_sgd(&tw, 1, 0.1, 0, 0, 0), *g;
	size_t n = 9;

	ck_assert_ptr_null(tg_optim_group(NULL, 0));
	ck_assert_error("optim_group: no optimizers");
	ck_assert_ptr_null(tg_optim_group((tg_optim *[]){ o, NULL }, 2));
	ck_assert_error("optim_group: optimizer 1 is NULL");
	ck_assert_ptr_null(tg_optim_group((tg_optim *[]){ o, o }, 2));
	ck_assert_error("optim_group: optimizer 1 is also optimizer 0");
	g = tg_optim_group(&o, 1);
	ck_assert_ptr_nonnull(g);
	/* no gradient: nothing assigned, nothing handed out */
	ck_assert_int_eq(tg_optim_schedule_step(g, &sched, &n), TG_EINVAL);
	ck_assert_error("optimizer step: parameter 0 (5,) has no gradient");
	ck_assert_ptr_null(sched);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(tg_optim_schedule_step(NULL, &sched, &n), TG_EINVAL);
	ck_assert_error("optim_schedule_step: no optimizer (NULL)");
	ck_assert_int_eq(tg_optim_schedule_step(g, NULL, &n), TG_EINVAL);
	ck_assert_error("optim_schedule_step: no output (NULL)");
	tg_optim_free(g);
}
END_TEST

START_TEST(step_without_gradient_fails)
{
	tg_tensor *tw = tg_contiguous(vec(w0));
	tg_optim *o = tg_optim_adam(&tw, 1, 0.1, 0.9, 0.999, 1e-8);

	ck_assert_int_eq(tg_optim_step(o, NULL, 0), TG_EINVAL);
	ck_assert_error("optimizer step: parameter 0 (5,) has no gradient");
	tg_optim_free(o);
	ck_assert_ptr_null(tg_optim_sgd((tg_tensor *[]){ NULL }, 1, 0.1, 0, 0,
	                                0));
	ck_assert_error("lars: tensor 0 is NULL");
}
END_TEST

/* An optimizer with nothing to optimize is refused, as tinygrad's
 * Optimizer asserts at least one parameter: no tensors, or only tensors
 * that require no gradient. */
START_TEST(optimizer_without_parameters_is_refused)
{
	tg_tensor *buf = tg_contiguous(vec(w0));

	ck_assert_ptr_null(tg_optim_adam(NULL, 0, 0.1, 0.9, 0.999, 1e-8));
	ck_assert_error("adam: no parameters (NULL, n = 0): an optimizer "
	                "needs at least one");
	ck_assert_ptr_null(tg_optim_sgd((tg_tensor *[]){ buf }, 0, 0.1, 0, 0,
	                                0));
	ck_assert_error("lars: no parameters (an empty list, n = 0)");
	ck_assert_ptr_null(tg_optim_adamw(NULL, 0, 0.1, 0.9, 0.999, 1e-8,
	                                  0.01));
	ck_assert_error("adam: no parameters");
	ck_assert_ptr_null(tg_optim_lamb(NULL, 0, 0.1, 0.9, 0.999, 1e-6, 0,
	                                 0));
	ck_assert_error("lamb: no parameters");
	ck_assert_ptr_null(tg_optim_lars(NULL, 0, 0.1, 0.9, 1e-4, 0, 0,
	                                 0.001));
	ck_assert_error("lars: no parameters");
	ck_assert_int_eq(tg_set_requires_grad(buf, 0), 0);
	ck_assert_ptr_null(tg_optim_adam(&buf, 1, 0.1, 0.9, 0.999, 1e-8));
	ck_assert_error("adam: none of the 1 tensors requires a gradient");
}
END_TEST

/* ------------------------------------------------------------- losses */

#define B 4
#define C 3

static const float logits_h[B * C] = {
	1.0f, 2.0f, 0.5f, -1.0f, 0.0f, 3.0f,
	0.25f, 0.25f, 0.25f, 2.0f, -2.0f, 1.0f,
};

/* -sum over counted rows of ((1-ls) lp[y] + ls mean(lp)) / count. */
static double ce_ref(const int32_t *y, int64_t ignore, double ls)
{
	double total = 0;
	int b, k, cnt = 0;

	for (b = 0; b < B; b++) {
		double m = -INFINITY, s = 0, lp[C], mean = 0;

		if (y[b] == ignore)
			continue;
		for (k = 0; k < C; k++)
			m = fmax(m, logits_h[b * C + k]);
		for (k = 0; k < C; k++)
			s += exp(logits_h[b * C + k] - m);
		for (k = 0; k < C; k++) {
			lp[k] = logits_h[b * C + k] - m - log(s);
			mean += lp[k] / C;
		}
		total += (1 - ls) * lp[y[b]] + ls * mean;
		cnt++;
	}
	return -total / cnt;
}

START_TEST(sparse_categorical_crossentropy_values)
{
	int64_t sl[2] = { B, C }, sy[1] = { B };
	int32_t y[B] = { 1, 2, 0, -1 }, y2[B] = { 1, 2, 0, 0 };
	tg_tensor *lg = tg_tensor_new(NULL, TG_FLOAT32, 2, sl, logits_h);
	double got;

	ck_assert_int_eq(tg_tensor_item(tg_sparse_categorical_crossentropy(
	        lg, tg_tensor_new(NULL, TG_INT32, 1, sy, y2), -1, 0), &got), 0);
	ck_assert_double_eq_tol(got, ce_ref(y2, -1, 0), 1e-6);
	ck_assert_int_eq(tg_tensor_item(tg_sparse_categorical_crossentropy(
	        lg, tg_tensor_new(NULL, TG_INT32, 1, sy, y), -1, 0), &got), 0);
	ck_assert_double_eq_tol(got, ce_ref(y, -1, 0), 1e-6);
	ck_assert_int_eq(tg_tensor_item(tg_sparse_categorical_crossentropy(
	        lg, tg_tensor_new(NULL, TG_INT32, 1, sy, y), -1, 0.1), &got), 0);
	ck_assert_double_eq_tol(got, ce_ref(y, -1, 0.1), 1e-6);
}
END_TEST

/* d/dlogits of the mean cross-entropy is (softmax - onehot) / B. */
START_TEST(sparse_categorical_crossentropy_gradient)
{
	int64_t sl[2] = { B, C }, sy[1] = { B };
	int32_t y[B] = { 1, 2, 0, 0 };
	tg_tensor *lg = tg_tensor_new(NULL, TG_FLOAT32, 2, sl, logits_h);
	float g[B * C];
	int b, k;

	tg_set_requires_grad(lg, 1);
	ck_assert_int_eq(tg_backward(tg_sparse_categorical_crossentropy(
	        lg, tg_tensor_new(NULL, TG_INT32, 1, sy, y), -1, 0), NULL), 0);
	ck_assert_int_eq(tg_tensor_data(tg_grad(lg), g, sizeof g), 0);
	for (b = 0; b < B; b++) {
		double s = 0;

		for (k = 0; k < C; k++)
			s += exp(logits_h[b * C + k]);
		for (k = 0; k < C; k++)
			ck_assert_double_eq_tol(g[b * C + k],
			        (exp(logits_h[b * C + k]) / s - (k == y[b])) / B,
			        1e-6);
	}
}
END_TEST

START_TEST(binary_crossentropy_values)
{
	int64_t s[1] = { 4 };
	static const float p[4] = { 0.1f, 0.5f, 0.9f, 0.7f };
	static const float y[4] = { 0, 1, 1, 0 };
	static const float x[4] = { -2.0f, 0.0f, 3.0f, 40.0f };
	double got, want = 0;
	int i;

	ck_assert_int_eq(tg_tensor_item(tg_binary_crossentropy(
	        tg_tensor_new(NULL, TG_FLOAT32, 1, s, p),
	        tg_tensor_new(NULL, TG_FLOAT32, 1, s, y)), &got), 0);
	for (i = 0; i < 4; i++)
		want += (-y[i] * log(p[i]) - (1 - y[i]) * log(1 - p[i])) / 4;
	ck_assert_double_eq_tol(got, want, 1e-6);
	/* from logits: stable at 40, where sigmoid rounds to 1 */
	ck_assert_int_eq(tg_tensor_item(tg_binary_crossentropy_logits(
	        tg_tensor_new(NULL, TG_FLOAT32, 1, s, x),
	        tg_tensor_new(NULL, TG_FLOAT32, 1, s, y)), &got), 0);
	for (want = 0, i = 0; i < 4; i++)
		want += (fmax(x[i], 0) - y[i] * x[i] + log1p(exp(-fabs(x[i])))) / 4;
	ck_assert_double_eq_tol(got, want, 1e-6);
}
END_TEST

START_TEST(loss_errors)
{
	int64_t sl[2] = { B, C }, sy[1] = { B + 1 }, s4[1] = { 4 }, s3[1] = { 3 };
	tg_tensor *lg = tg_zeros(NULL, TG_FLOAT32, 2, sl);

	ck_assert_ptr_null(tg_sparse_categorical_crossentropy(
	        lg, tg_zeros(NULL, TG_INT32, 1, sy), -1, 0));
	ck_assert_error("sparse_categorical_crossentropy: labels (5,) do not "
	                "match logits (4,3)");
	ck_assert_ptr_null(tg_sparse_categorical_crossentropy(
	        lg, tg_zeros(NULL, TG_FLOAT32, 1, (int64_t[]){ B }), -1, 0));
	ck_assert_error("labels are float32, not an int dtype");
	ck_assert_ptr_null(tg_sparse_categorical_crossentropy(
	        lg, tg_zeros(NULL, TG_INT32, 1, (int64_t[]){ B }), -1, 1.5));
	ck_assert_error("label smoothing 1.5 outside [0, 1]");
	ck_assert_ptr_null(tg_binary_crossentropy(
	        tg_zeros(NULL, TG_FLOAT32, 1, s4),
	        tg_zeros(NULL, TG_FLOAT32, 1, s3)));
	ck_assert_error("binary_crossentropy: predictions (4,) and targets "
	                "(3,) differ");
}
END_TEST

/* End to end: a two-layer MLP (nn layers, Adam, cross-entropy) learns
 * to tell four Gaussian blobs apart; the loss must fall below 0.1 and
 * the training accuracy reach 100%. */
START_TEST(mlp_learns_a_synthetic_task)
{
	enum { NPTS = 128, STEPS = 150 };
	static const float centers[4][2] = { { 2, 2 }, { -2, 2 },
	                                     { -2, -2 }, { 2, -2 } };
	float xs[NPTS * 2];
	int32_t ys[NPTS], pred[NPTS];
	int64_t sx[2] = { NPTS, 2 }, sy[1] = { NPTS };
	tg_nn_linear l1, l2;
	tg_tensor *x, *y, *ps[4], *loss = NULL;
	tg_optim *o;
	double lv = 1e9;
	int i, step, correct = 0;

	for (i = 0; i < NPTS; i++) {
		double a = sin(i * 12.9898) * 43758.5453, b = cos(i * 78.233) * 9631.1;

		ys[i] = i % 4;
		xs[2 * i] = centers[i % 4][0] + (float)(a - floor(a) - 0.5);
		xs[2 * i + 1] = centers[i % 4][1] + (float)(b - floor(b) - 0.5);
	}
	x = tg_tensor_new(NULL, TG_FLOAT32, 2, sx, xs);
	y = tg_tensor_new(NULL, TG_INT32, 1, sy, ys);
	tg_manual_seed(3);
	ck_assert_int_eq(tg_nn_linear_init(&l1, NULL, 2, 16, 1), 0);
	ck_assert_int_eq(tg_nn_linear_init(&l2, NULL, 16, 4, 1), 0);
	ps[0] = l1.weight, ps[1] = l1.bias, ps[2] = l2.weight, ps[3] = l2.bias;
	o = tg_optim_adam(ps, 4, 0.05, 0.9, 0.999, 1e-8);
	ck_assert_ptr_nonnull(o);
	tg_set_training(1);
	for (step = 0; step < STEPS; step++) {
		tg_scope_begin();
		tg_optim_zero_grad(o);
		loss = tg_sparse_categorical_crossentropy(
		        tg_nn_linear_forward(&l2, tg_relu(
		                tg_nn_linear_forward(&l1, x))), y, -1, 0);
		ck_assert_msg(tg_backward(loss, NULL) == 0, "%s",
		              tg_last_error());
		ck_assert_int_eq(tg_optim_step(o, &loss, 1), 0);
		ck_assert_int_eq(tg_tensor_item(loss, &lv), 0);
		tg_scope_end();
	}
	tg_set_training(0);
	ck_assert_msg(lv < 0.1, "final loss %g", lv);
	ck_assert_int_eq(tg_tensor_data(tg_argmax(tg_nn_linear_forward(&l2,
	        tg_relu(tg_nn_linear_forward(&l1, x))), 1, 0), pred,
	        sizeof pred), 0);
	for (i = 0; i < NPTS; i++)
		correct += pred[i] == ys[i];
	ck_assert_int_eq(correct, NPTS);
	tg_optim_free(o);
	tg_nn_linear_free(&l1);
	tg_nn_linear_free(&l2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("optim");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, sgd_plain_momentum_nesterov_weight_decay);
	tcase_add_test(tc, lars_classic_and_popular);
	tcase_add_test(tc, adam_adamw_lamb);
	tcase_add_test(tc, learning_rate_is_a_tensor);
	tcase_add_test(tc, buffers_are_realized_not_updated);
	tcase_add_test(tc, group_steps_its_members_together);
	tcase_add_test(tc, group_and_schedule_errors);
	tcase_add_test(tc, step_without_gradient_fails);
	tcase_add_test(tc, optimizer_without_parameters_is_refused);
	tcase_add_test(tc, sparse_categorical_crossentropy_values);
	tcase_add_test(tc, sparse_categorical_crossentropy_gradient);
	tcase_add_test(tc, binary_crossentropy_values);
	tcase_add_test(tc, loss_errors);
	tcase_add_test(tc, mlp_learns_a_synthetic_task);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * conformance_fuzz.c - tg-conformance's "kernels" and "fuzz" cases:
 * how many kernels common programs fuse into (tinygrad's counts),
 * through the public counters (tg_counters), and programs whose
 * kernels take random legal opts (RANDOM_OPTS, one seed per run)
 * against the same programs under NOOPT.  Separate from the ops
 * (conformance_ops.c): these check what the compiler makes of a
 * program, not the value of one op.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "conformance.h"

/* ------------------------------------------------------------- kernels */

/* A realized float32 input of `n` values in (-1, 1). */
static tg_tensor *input(struct cf_ctx *c, size_t ndim, const int64_t *shape,
                        unsigned seed)
{
	size_t n = 1;
	float *v;
	tg_tensor *t;

	for (size_t i = 0; i < ndim; i++)
		n *= (size_t)shape[i];
	if (!(v = malloc(n * sizeof *v)))
		return NULL;
	cf_fill(v, n, seed, -1, 1);
	t = cf_from(c, v, ndim, shape);
	free(v);
	return t && tg_realize(t) == 0 ? t : NULL;
}

/* Realizes outs together and checks how many kernels ran: the fusion
 * tinygrad (mid-2024) does for the same program, which the core's
 * scheduler matches on every device (tests/test_kernels.c). */
static enum cf_verdict count(struct cf_ctx *c, const char *what,
                             tg_tensor **outs, size_t n, uint64_t want)
{
	tg_counters k;

	for (size_t i = 0; i < n; i++)
		if (!outs[i])
			return cf_fail(c, "%s: building the tensors failed: %s",
			               what, tg_last_error());
	tg_counters_reset();
	cf_stage(c, "realize %s", what);
	if (tg_realize_many(outs, n))
		return cf_fail(c, "%s on %s: %s", what, c->dev_name,
		               tg_last_error());
	tg_counters_get(&k);
	if (k.kernels != want)
		return cf_fail(c, "%s on %s: %llu kernels ran, want %llu", what,
		               c->dev_name, (unsigned long long)k.kernels,
		               (unsigned long long)want);
	return CF_PASS;
}

enum cf_verdict cf_kernels_fusion(struct cf_ctx *c)
{
	static const int64_t s44[2] = { 4, 4 }, s816[2] = { 8, 16 },
	                     s88[2] = { 8, 8 }, s165[2] = { 16, 5 },
	                     s5[1] = { 5 };
	static const int ax0 = 0, ax1 = 1;
	tg_tensor *a = input(c, 2, s44, 1), *b = input(c, 2, s44, 2);
	tg_tensor *x = input(c, 2, s816, 3), *img = input(c, 2, s88, 4);
	tg_tensor *w = input(c, 2, s165, 5), *bias = input(c, 1, s5, 6);
	tg_tensor *o[2];
	enum cf_verdict v;

	if (!a || !b || !x || !img || !w || !bias)
		return cf_fail(c, "inputs on %s: %s", c->dev_name,
		               tg_last_error());
	o[0] = cf_keep(c, tg_sqrt(cf_keep(c, tg_exp(cf_keep(c, tg_mul(
	       cf_keep(c, tg_add(a, b)), b))))));
	if ((v = count(c, "sqrt(exp((a + b) * b))", o, 1, 1)))
		return v;
	o[0] = cf_keep(c, tg_sum(cf_keep(c, tg_mul(a, b)), NULL, 0, 0));
	if ((v = count(c, "sum(a * b)", o, 1, 1)))
		return v;
	o[0] = cf_keep(c, tg_sum(x, &ax1, 1, 0));
	o[1] = cf_keep(c, tg_max(x, &ax1, 1, 0));
	if ((v = count(c, "sum and max of one input", o, 2, 2)))
		return v;
	o[0] = cf_keep(c, tg_relu(cf_keep(c, tg_add(cf_keep(c, tg_sum(img,
	       &ax0, 1, 0)), cf_keep(c, tg_sum(img, &ax1, 1, 0))))));
	if ((v = count(c, "relu(sum over 0 + sum over 1)", o, 1, 2)))
		return v;
	o[0] = cf_keep(c, tg_softmax(x, -1));
	if ((v = count(c, "softmax", o, 1, 3)))
		return v;
	o[0] = cf_keep(c, tg_relu(cf_keep(c, tg_add(cf_keep(c, tg_matmul(x,
	       w)), bias))));
	if ((v = count(c, "relu(x @ w + bias)", o, 1, 1)))
		return v;
	o[0] = cf_keep(c, tg_argmax(x, -1, 0));
	return count(c, "argmax over the last axis", o, 1, 3);
}

/* ---------------------------------------------------------------- fuzz */

/* A program of the fuzz: its inputs' shapes, and how its output is made
 * from them. */
struct fz_prog {
	const char *what;
	tg_dtype dt;          /* of the inputs and the output */
	size_t nin, ndim[2];
	int64_t shape[2][4];
	tg_tensor *(*build)(struct cf_ctx *c, tg_tensor *const *in);
};

static tg_tensor *fz_matmul(struct cf_ctx *c, tg_tensor *const *in)
{
	return cf_keep(c, tg_relu(cf_keep(c, tg_matmul(in[0], in[1]))));
}

static tg_tensor *fz_colsum(struct cf_ctx *c, tg_tensor *const *in)
{
	static const int ax0 = 0;

	return cf_keep(c, tg_sum(in[0], &ax0, 1, 0));
}

static tg_tensor *fz_rowsum(struct cf_ctx *c, tg_tensor *const *in)
{
	static const int ax1 = 1;

	return cf_keep(c, tg_sum(cf_keep(c, tg_mul(in[0], in[0])), &ax1, 1,
	                         0));
}

static tg_tensor *fz_softmax(struct cf_ctx *c, tg_tensor *const *in)
{
	return cf_keep(c, tg_softmax(in[0], -1));
}

static tg_tensor *fz_conv(struct cf_ctx *c, tg_tensor *const *in)
{
	tg_conv_opts o = { .padding = { 1, 1, 1, 1 } };

	return cf_keep(c, tg_conv2d(in[0], in[1], NULL, &o));
}

static tg_tensor *fz_int_max(struct cf_ctx *c, tg_tensor *const *in)
{
	static const int ax1 = 1;

	return cf_keep(c, tg_max(in[0], &ax1, 1, 0));
}

static tg_tensor *fz_padded(struct cf_ctx *c, tg_tensor *const *in)
{
	static const int64_t pairs[4] = { 1, 2, 3, 0 };

	return cf_keep(c, tg_pad(cf_keep(c, tg_mul(cf_keep(c, tg_exp(in[0])),
	                                           in[1])), 2, pairs, 0.5));
}

static const struct fz_prog fz_progs[] = {
	{ "relu(a @ b), 33x65 @ 65x17", TG_FLOAT32, 2, { 2, 2 },
	  { { 33, 65 }, { 65, 17 } }, fz_matmul },
	{ "column sums of 37x129", TG_FLOAT32, 1, { 2 }, { { 37, 129 } },
	  fz_colsum },
	{ "row sums of squares of 37x129", TG_FLOAT32, 1, { 2 },
	  { { 37, 129 } }, fz_rowsum },
	{ "softmax of 19x75", TG_FLOAT32, 1, { 2 }, { { 19, 75 } },
	  fz_softmax },
	{ "conv2d 2x3x11x13 with 4x3x3x3, padding 1", TG_FLOAT32, 2, { 4, 4 },
	  { { 2, 3, 11, 13 }, { 4, 3, 3, 3 } }, fz_conv },
	{ "int32 row maxima of 23x45", TG_INT32, 1, { 2 }, { { 23, 45 } },
	  fz_int_max },
	{ "pad(exp(a) * b) of 17x31", TG_FLOAT32, 2, { 2, 2 },
	  { { 17, 31 }, { 17, 31 } }, fz_padded },
};

/* The program's output under the configuration as it is now, as
 * doubles (n of them). */
static enum cf_verdict fz_run(struct cf_ctx *c, const struct fz_prog *p,
                              tg_tensor *const *in, const char *when,
                              double **out, size_t *n)
{
	tg_tensor *t = p->build(c, in);
	char what[160];
	void *raw;

	snprintf(what, sizeof what, "%s %s", p->what, when);
	if (!t)
		return cf_fail(c, "%s: building the tensor failed: %s", what,
		               tg_last_error());
	*n = (size_t)tg_tensor_numel(t);
	raw = malloc(*n * 4 + 4);
	*out = malloc(*n * sizeof **out + 1);
	if (!raw || !*out) {
		free(raw);
		free(*out);
		*out = NULL;
		return cf_fail(c, "%s: out of host memory", what);
	}
	cf_stage(c, "realize %s", what);
	if (tg_tensor_data(t, raw, *n * 4)) {
		free(raw);
		free(*out);
		*out = NULL;
		return cf_fail(c, "%s on %s: %s", what, c->dev_name,
		               tg_last_error());
	}
	for (size_t i = 0; i < *n; i++)
		(*out)[i] = p->dt == TG_INT32 ? ((int32_t *)raw)[i]
		                              : ((float *)raw)[i];
	free(raw);
	return CF_PASS;
}

/* Inputs: floats in (-1, 1), or integers from -50 to 49. */
static tg_tensor *fz_input(struct cf_ctx *c, const struct fz_prog *p,
                           size_t i)
{
	size_t n = 1;
	float *v;
	int32_t *iv;
	tg_tensor *t;

	for (size_t d = 0; d < p->ndim[i]; d++)
		n *= (size_t)p->shape[i][d];
	if (!(v = malloc(n * sizeof *v)))
		return NULL;
	cf_fill(v, n, 11 + (unsigned)i, -1, 1);
	iv = (int32_t *)v;  /* in place: the same size */
	if (p->dt == TG_INT32)
		for (size_t k = 0; k < n; k++)
			iv[k] = (int32_t)floor(v[k] * 50);
	t = cf_keep(c, tg_tensor_new(c->dev, p->dt, p->ndim[i], p->shape[i],
	                             v));
	free(v);
	return t && tg_realize(t) == 0 ? t : NULL;
}

/* One program: NOOPT's output, then c->fuzz runs with random opts, each
 * compared with it.  Floats within a rounding tolerance (opts that
 * group a reduce add in another order), integers exactly. */
static enum cf_verdict fz_program(struct cf_ctx *c, const struct fz_prog *p)
{
	tg_tensor *in[2] = { NULL, NULL };
	double *ref = NULL, *got = NULL;
	size_t n = 0, m = 0;
	char when[64], seed[24];
	enum cf_verdict v;

	for (size_t i = 0; i < p->nin; i++)
		if (!(in[i] = fz_input(c, p, i)))
			return cf_fail(c, "%s: inputs on %s: %s", p->what,
			               c->dev_name, tg_last_error());
	tg_config_set("RANDOM_OPTS", NULL);
	tg_config_set("NOOPT", "1");
	if ((v = fz_run(c, p, in, "under NOOPT", &ref, &n)))
		return v;
	tg_config_set("NOOPT", "0");
	for (long s = c->seed; !v && s < c->seed + c->fuzz; s++) {
		snprintf(seed, sizeof seed, "%ld", s);
		snprintf(when, sizeof when, "with RANDOM_OPTS=%ld", s);
		tg_config_set("RANDOM_OPTS", seed);
		if ((v = fz_run(c, p, in, when, &got, &m)))
			break;
		if (m != n)
			v = cf_fail(c, "%s on %s %s: %zu elements, NOOPT gives "
			            "%zu", p->what, c->dev_name, when, m, n);
		for (size_t i = 0; !v && i < n; i++) {
			double tol = p->dt == TG_INT32 ? 0
			             : 1e-5 + 1e-4 * fabs(ref[i]);
			if (fabs(got[i] - ref[i]) <= tol ||
			    (isnan(got[i]) && isnan(ref[i])))
				continue;
			v = cf_fail(c, "%s on %s %s: element %zu of %zu is "
			            "%.9g, NOOPT gives %.9g (TG_RANDOM_OPTS=%ld "
			            "DEBUG=2 prints the opts of each kernel)",
			            p->what, c->dev_name, when, i, n, got[i],
			            ref[i], s);
		}
		free(got);
		got = NULL;
	}
	free(ref);
	return v;
}

/* One case per program, so that each reports alone and has the whole
 * --timeout (a device that compiles slowly compiles c->fuzz + 1
 * versions of each). */
static enum cf_verdict fuzz_case(struct cf_ctx *c, size_t i)
{
	const struct fz_prog *p = &fz_progs[i];

	if (p->dt != TG_FLOAT32 && !cf_has_dtype(c, p->dt))
		return cf_fail(c, "%s is not computed",
		               tg_dtype_name(p->dt)), CF_SKIP;
	return fz_program(c, p);
}

#define FUZZ_CASE(fn, i) \
	enum cf_verdict fn(struct cf_ctx *c) { return fuzz_case(c, i); }
FUZZ_CASE(cf_fuzz_matmul, 0)
FUZZ_CASE(cf_fuzz_colsum, 1)
FUZZ_CASE(cf_fuzz_rowsum, 2)
FUZZ_CASE(cf_fuzz_softmax, 3)
FUZZ_CASE(cf_fuzz_conv, 4)
FUZZ_CASE(cf_fuzz_int_max, 5)
FUZZ_CASE(cf_fuzz_padded, 6)
#undef FUZZ_CASE

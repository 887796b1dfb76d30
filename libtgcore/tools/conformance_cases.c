/*
 * conformance_cases.c - tg-conformance's cases, in three areas:
 *  - contract: the plugin loads, its descriptor is complete, its probe
 *    finds a device, the device describes itself, and a device index
 *    past the end is an error, not a crash;
 *  - memory: copies in and out at sizes 0, 1 and odd lengths, many
 *    buffers alive at once, sub-buffer views, every dtype the device
 *    computes, and an allocation far past the device's memory;
 *  - ops: elementwise, reductions, matmul, movement, int32, the other
 *    float dtypes and casts, each against plain C loops in double
 *    precision;
 *  - kernels: how many kernels common programs fuse into (tinygrad's
 *    counts), through the public counters (tg_counters);
 *  - fuzz: programs whose kernels take random legal opts (RANDOM_OPTS,
 *    one seed per run) give what they give under NOOPT.
 * Each runs in a child process (tg-conformance.c) on the public API
 * only, as an application would use the device.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tg/plugin.h>

#include "child.h"
#include "conformance.h"

/* ------------------------------------------------------------- helpers */

enum cf_verdict cf_fail(struct cf_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->out->message, sizeof c->out->message, fmt, ap);
	va_end(ap);
	return CF_FAIL;
}

void cf_stage(struct cf_ctx *c, const char *fmt, ...)
{
	char stage[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(stage, sizeof stage, fmt, ap);
	va_end(ap);
	tg_child_stage(c->stage_fd, stage);
}

/* Without room to keep it, t is given back and the case sees NULL (an
 * out-of-memory failure), never a tensor freed under it. */
tg_tensor *cf_keep(struct cf_ctx *c, tg_tensor *t)
{
	if (t && c->nkeep == c->capkeep) {
		size_t cap = c->capkeep ? 2 * c->capkeep : 64;
		tg_tensor **k = realloc(c->keep, cap * sizeof *k);

		if (!k) {
			tg_tensor_unref(t);
			return NULL;
		}
		c->keep = k;
		c->capkeep = cap;
	}
	if (t)
		c->keep[c->nkeep++] = t;
	return t;
}

void cf_release(struct cf_ctx *c)
{
	while (c->nkeep > 0)
		tg_tensor_unref(c->keep[--c->nkeep]);
	free(c->keep);
	c->keep = NULL;
	c->capkeep = 0;
}

int cf_has_dtype(struct cf_ctx *c, tg_dtype dt)
{
	if (c->info.dtype_mask & (1u << dt))
		return 1;
	snprintf(c->out->skipped[dt], sizeof c->out->skipped[dt],
	         "%s does not compute it (its dtype_mask leaves it out)",
	         c->dev_name);
	return 0;
}

/* Whether plugin record `pi` is the one asked for: the same file, or
 * the same name. */
static int is_asked(const struct cf_ctx *c, const tg_plugin_info *pi)
{
	char a[PATH_MAX], b[PATH_MAX];

	if (strchr(c->plugin, '/'))
		return realpath(c->plugin, a) && realpath(pi->file, b) &&
		       !strcmp(a, b);
	return pi->name && !strcasecmp(pi->name, c->plugin);
}

/* The plugin's record; CF_FAIL when it is not found or not loaded. */
static enum cf_verdict find_plugin(struct cf_ctx *c, tg_plugin_info *pi)
{
	const char *dev, *why;
	size_t i, n, len;

	cf_stage(c, "load the plugins");
	if (tg_init())
		return cf_fail(c, "tg_init: %s", tg_last_error());
	n = tg_plugin_count();
	if (!c->plugin) {  /* the default device's plugin */
		if (!(dev = tg_dev_default_name(&why)))
			return cf_fail(c, "no default device: %s",
			               tg_last_error());
		for (i = 0; i < n; i++)
			if (!tg_plugin_get(i, pi) && pi->name &&
			    pi->state == TG_PLUGIN_LOADED &&
			    !strncasecmp(pi->name, dev, len = strlen(pi->name))
			    && (dev[len] == '\0' || dev[len] == ':'))
				return CF_PASS;
		return cf_fail(c, "no plugin provides %s", dev);
	}
	for (i = 0; i < n; i++) {
		if (tg_plugin_get(i, pi) || !is_asked(c, pi))
			continue;
		if (pi->state != TG_PLUGIN_LOADED)
			return cf_fail(c, "%s was not loaded: %s", pi->file,
			               pi->message);
		return CF_PASS;
	}
	return cf_fail(c, "plugin %s not found on the search path (%zu "
	               "plugin files found)", c->plugin, n);
}

enum cf_verdict cf_setup(struct cf_ctx *c)
{
	tg_plugin_info pi;
	const char *name;

	if (find_plugin(c, &pi) != CF_PASS)
		return CF_FAIL;
	c->pinfo = pi;
	name = c->device ? c->device : pi.name;
	cf_stage(c, "open %s", name);
	if (!(c->dev = tg_dev_get(name)))
		return cf_fail(c, "cannot open %s: %s", name, tg_last_error());
	if (tg_dev_get_info(c->dev, &c->info))
		return cf_fail(c, "dev_get_info %s: %s", name,
		               tg_last_error());
	snprintf(c->dev_name, sizeof c->dev_name, "%s", tg_dev_name(c->dev));
	return CF_PASS;
}

enum cf_verdict cf_describe(struct cf_ctx *c)
{
	char *msg = c->out->message, why[sizeof c->out->message];
	size_t n = sizeof c->out->message;
	const tg_plugin_info *pi = &c->pinfo;

	if (cf_setup(c) != CF_PASS) {
		if (pi->name) {  /* found, but its device did not open */
			snprintf(why, sizeof why, "%s", msg);
			snprintf(msg, n, "plugin %s, %.*s", pi->name,
			         (int)(n > 64 ? n - 64 : 0), why);
		}
		return CF_FAIL;
	}
	snprintf(msg, n, "plugin %s %s (%s), device %s: %s", pi->name,
	         pi->version ? pi->version : "?", pi->file, c->dev_name,
	         c->info.description ? c->info.description : "?");
	return CF_PASS;
}

/* Deterministic values in [lo, hi). */
void cf_fill(float *v, size_t n, unsigned seed, double lo, double hi)
{
	unsigned long long s = 0x9e3779b97f4a7c15ull * (seed + 1);

	for (size_t i = 0; i < n; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		v[i] = (float)(lo + (hi - lo) * (double)(s >> 40) /
		               (double)(1ull << 24));
	}
}

tg_tensor *cf_from(struct cf_ctx *c, const float *v, size_t ndim,
                   const int64_t *shape)
{
	return cf_keep(c, tg_tensor_new(c->dev, TG_FLOAT32, ndim, shape, v));
}

/* Realizes t (float32, n elements) into out; CF_FAIL saying `what`. */
static enum cf_verdict read_f32(struct cf_ctx *c, const char *what,
                                tg_tensor *t, float *out, size_t n)
{
	cf_stage(c, "realize %s", what);
	if (!t)
		return cf_fail(c, "%s: building the tensor failed: %s", what,
		               tg_last_error());
	if (tg_tensor_data(t, out, n * sizeof *out))
		return cf_fail(c, "%s on %s: %s", what, c->dev_name,
		               tg_last_error());
	return CF_PASS;
}

/* got against ref within atol + rtol * |ref|; NaNs must match. */
static enum cf_verdict compare(struct cf_ctx *c, const char *what,
                               const float *got, const double *ref,
                               size_t n, double atol, double rtol)
{
	for (size_t i = 0; i < n; i++) {
		double g = got[i], r = ref[i];

		if (isnan(r) ? isnan(g) : fabs(g - r) <= atol + rtol * fabs(r))
			continue;
		return cf_fail(c, "%s on %s: element %zu of %zu is %.9g, "
		               "want %.9g (tolerance %g + %g * |want|)", what,
		               c->dev_name, i, n, g, r, atol, rtol);
	}
	return CF_PASS;
}

/* Realizes t and compares it with ref. */
enum cf_verdict cf_check(struct cf_ctx *c, const char *what,
                         tg_tensor *t, const double *ref, size_t n,
                         double atol, double rtol)
{
	float *got = malloc((n ? n : 1) * sizeof *got);
	enum cf_verdict v = got ? read_f32(c, what, t, got, n)
	                        : cf_fail(c, "%s: out of host memory", what);

	if (v == CF_PASS)
		v = compare(c, what, got, ref, n, atol, rtol);
	free(got);
	return v;
}

/* ------------------------------------------------------------ contract */

static enum cf_verdict contract_loads(struct cf_ctx *c)
{
	tg_plugin_info pi;

	return find_plugin(c, &pi);
}

static enum cf_verdict contract_descriptor(struct cf_ctx *c)
{
	tg_plugin_info pi;

	if (find_plugin(c, &pi) != CF_PASS)
		return CF_FAIL;
	for (const char *p = pi.name; *p; p++)
		if (!isupper((unsigned char)*p) && !isdigit((unsigned char)*p)
		    && *p != '_')
			return cf_fail(c, "name '%s': want upper-case letters, "
			               "digits and '_'", pi.name);
	if (!pi.version || !*pi.version)
		return cf_fail(c, "%s: no version", pi.name);
	if (!pi.vendor || !*pi.vendor)
		return cf_fail(c, "%s: no vendor", pi.name);
	if (!pi.description || !*pi.description)
		return cf_fail(c, "%s: no description", pi.name);
	if (pi.abi_major != TG_PLUGIN_ABI_MAJOR)
		return cf_fail(c, "%s: ABI %d.%d, this tgcore is %d.%d",
		               pi.name, pi.abi_major, pi.abi_minor,
		               TG_PLUGIN_ABI_MAJOR, TG_PLUGIN_ABI_MINOR);
	return CF_PASS;
}

static enum cf_verdict contract_probe(struct cf_ctx *c)
{
	tg_plugin_info pi;

	if (find_plugin(c, &pi) != CF_PASS)
		return CF_FAIL;
	cf_stage(c, "probe %s", pi.name);
	if (pi.ndevices < 1)
		return cf_fail(c, "%s: the probe found no device: %s", pi.name,
		               pi.probe_reason);
	return CF_PASS;
}

static enum cf_verdict contract_device_info(struct cf_ctx *c)
{
	static const char *const types[] = { "CPU", "GPU", "IGPU", "ACCEL" };
	const tg_dev_info *d = &c->info;
	size_t i;

	if (!d->name || strcmp(d->name, c->dev_name))
		return cf_fail(c, "info.name '%s', want '%s'",
		               d->name ? d->name : "(null)", c->dev_name);
	if (!d->description || !*d->description)
		return cf_fail(c, "%s: no description", c->dev_name);
	for (i = 0; i < 4 && d->type && strcmp(d->type, types[i]); i++)
		;
	if (i == 4 || !d->type)
		return cf_fail(c, "%s: type '%s' is none of CPU, GPU, IGPU, "
		               "ACCEL", c->dev_name, d->type ? d->type : "");
	if (!d->dialect || !*d->dialect)
		return cf_fail(c, "%s: no kernel dialect", c->dev_name);
	if (!(d->dtype_mask & (1u << TG_FLOAT32)))
		return cf_fail(c, "%s: float32 is not in its dtype_mask (%#x)",
		               c->dev_name, d->dtype_mask);
	return CF_PASS;
}

/* An index past the last device is an error that names it. */
static enum cf_verdict contract_bad_index(struct cf_ctx *c)
{
	tg_plugin_info pi;
	char name[96];

	if (find_plugin(c, &pi) != CF_PASS)
		return CF_FAIL;
	snprintf(name, sizeof name, "%s:%d", pi.name, pi.ndevices);
	cf_stage(c, "open %s", name);
	if (tg_dev_get(name))
		return cf_fail(c, "%s opened, but the probe said %d device%s",
		               name, pi.ndevices, pi.ndevices == 1 ? "" : "s");
	if (!strstr(tg_last_error(), name))
		return cf_fail(c, "opening %s failed with a message that does "
		               "not name it: '%s'", name, tg_last_error());
	return CF_PASS;
}

/* -------------------------------------------------------------- memory */

/* Copies in, x + x on the device, copies out: sizes 0, 1 and odd. */
static enum cf_verdict memory_sizes(struct cf_ctx *c)
{
	static const int64_t sizes[] = { 0, 1, 2, 3, 7, 63, 1023, 4097,
	                                 65537 };
	enum cf_verdict v = CF_PASS;

	for (size_t k = 0; k < sizeof sizes / sizeof *sizes && !v; k++) {
		size_t n = (size_t)sizes[k];
		float *x = malloc((n + 1) * sizeof *x);
		double *ref = malloc((n + 1) * sizeof *ref);
		char what[64];

		if (!x || !ref)
			v = cf_fail(c, "out of host memory");
		for (size_t i = 0; !v && i < n; i++) {
			x[i] = (float)i * 0.5f - 3.0f;
			ref[i] = 2.0 * x[i];
		}
		snprintf(what, sizeof what, "x + x of %zu float32", n);
		if (!v)
			v = cf_check(c, what, cf_keep(c, tg_add(
			             cf_from(c, x, 1, &sizes[k]),
			             cf_from(c, x, 1, &sizes[k]))), ref, n,
			             0, 0);
		free(x);
		free(ref);
	}
	return v;
}

/* 256 buffers of different sizes alive at once, each checked. */
static enum cf_verdict memory_many_buffers(struct cf_ctx *c)
{
	enum { N = 256 };
	tg_tensor *ys[N];
	int64_t len[N];
	float x[301], got[301];
	double ref[301];
	enum cf_verdict v = CF_PASS;
	size_t i, j;

	for (i = 0; i < N; i++) {
		len[i] = 1 + (int64_t)(i * 7 % 301);
		for (j = 0; j < (size_t)len[i]; j++)
			x[j] = (float)(i * 1000 + j);
		ys[i] = cf_keep(c, tg_add_s(cf_from(c, x, 1, &len[i]), 1.0));
		if (!ys[i])
			return cf_fail(c, "buffer %zu: %s", i, tg_last_error());
	}
	cf_stage(c, "realize %d buffers at once", N);
	if (tg_realize_many(ys, N))
		return cf_fail(c, "realizing %d buffers on %s: %s", N,
		               c->dev_name, tg_last_error());
	for (i = 0; i < N && !v; i++) {
		for (j = 0; j < (size_t)len[i]; j++)
			ref[j] = (double)(i * 1000 + j) + 1.0;
		v = read_f32(c, "one of many buffers", ys[i], got,
		             (size_t)len[i]);
		if (!v)
			v = compare(c, "one of many buffers", got, ref,
			            (size_t)len[i], 0, 0);
	}
	return v;
}

/* Windows into a realized buffer: a shrink, and a flipped one. */
static enum cf_verdict memory_views(struct cf_ctx *c)
{
	static const int64_t n = 1000, win[2] = { 137, 911 };
	float x[1000];
	double ref[1000];
	int axis = 0;
	tg_tensor *b, *s;
	enum cf_verdict v;

	cf_fill(x, (size_t)n, 1, -10, 10);
	b = cf_keep(c, tg_mul_s(cf_from(c, x, 1, &n), 3.0));
	cf_stage(c, "realize the base buffer");
	if (!b || tg_realize(b))
		return cf_fail(c, "3 * x on %s: %s", c->dev_name,
		               tg_last_error());
	s = cf_keep(c, tg_shrink(b, 1, win));
	for (int64_t i = win[0]; i < win[1]; i++)
		ref[i - win[0]] = 3.0 * x[i];
	v = cf_check(c, "a shrink [137, 911) of a realized buffer", s, ref,
	             (size_t)(win[1] - win[0]), 1e-6, 1e-6);
	if (v)
		return v;
	for (int64_t i = win[0]; i < win[1]; i++)
		ref[win[1] - 1 - i] = 3.0 * x[i];
	return cf_check(c, "a flipped shrink", cf_keep(c, tg_flip(s, &axis, 1)),
	                ref, (size_t)(win[1] - win[0]), 1e-6, 1e-6);
}

/* Every dtype the device computes goes in and comes back bit for bit
 * through a kernel (a flip, which computes nothing). */
static enum cf_verdict memory_dtypes(struct cf_ctx *c)
{
	static const int64_t n = 37;
	unsigned char in[37 * 8], got[37 * 8];
	int axis = 0;

	for (int dt = 0; dt < TG_NDTYPES; dt++) {
		size_t sz = tg_dtype_size((tg_dtype)dt), i;
		tg_tensor *t;

		if (!cf_has_dtype(c, (tg_dtype)dt))
			continue;
		for (i = 0; i < (size_t)n * sz; i++)  /* finite floats */
			in[i] = (unsigned char)(dt == TG_BOOL ? i % 2
			        : (i % sz == sz - 1) ? 0x3c : (i * 37 + 11));
		t = cf_keep(c, tg_tensor_new(c->dev, (tg_dtype)dt, 1, &n, in));
		t = cf_keep(c, tg_contiguous(cf_keep(c, tg_flip(t, &axis, 1))));
		cf_stage(c, "realize a flip of %s", tg_dtype_name(dt));
		if (!t || tg_tensor_data(t, got, (size_t)n * sz))
			return cf_fail(c, "flip of %zu %s on %s: %s", (size_t)n,
			               tg_dtype_name(dt), c->dev_name,
			               tg_last_error());
		for (i = 0; i < (size_t)n; i++)
			if (memcmp(got + i * sz, in + ((size_t)n - 1 - i) * sz,
			           sz))
				return cf_fail(c, "flip of %s on %s: element "
				               "%zu differs", tg_dtype_name(dt),
				               c->dev_name, i);
	}
	return CF_PASS;
}

/* 16 TiB: the device must refuse it with a message, and still work. */
static enum cf_verdict memory_out_of_memory(struct cf_ctx *c)
{
	static const int64_t huge = (int64_t)1 << 42, one = 1;
	tg_tensor *t = cf_keep(c, tg_add_s(cf_keep(c, tg_empty(c->dev,
	                       TG_FLOAT32, 1, &huge)), 1.0));
	float x = 2.0f;
	double ref = 4.0;

	cf_stage(c, "realize 16 TiB");
	if (t && tg_realize(t) == 0)
		return cf_fail(c, "%s realized a 16 TiB tensor", c->dev_name);
	if (!*tg_last_error())
		return cf_fail(c, "%s: the 16 TiB realize failed without a "
		               "message", c->dev_name);
	return cf_check(c, "x + x after an allocation failed",
	                cf_keep(c, tg_add(cf_from(c, &x, 1, &one),
	                cf_from(c, &x, 1, &one))), &ref, 1, 0, 0);
}

/* ----------------------------------------------------------------- ops */

typedef tg_tensor *(*binary_fn)(const tg_tensor *, const tg_tensor *);
typedef tg_tensor *(*unary_fn)(const tg_tensor *);

static double relu(double x) { return x > 0 ? x : 0; }
static double sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double neg(double x) { return -x; }

enum cf_verdict cf_ops_elementwise(struct cf_ctx *c)
{
	enum { N = 257 };
	static const int64_t n = N;
	static const struct {
		const char *name;
		binary_fn fn;
		int op;
	} bins[] = {
		{ "add", tg_add, '+' }, { "sub", tg_sub, '-' },
		{ "mul", tg_mul, '*' }, { "div", tg_div, '/' },
		{ "maximum", tg_maximum, 'M' },
	};
	static const struct {
		const char *name;
		unary_fn fn;
		double (*ref)(double);
		int positive; /* takes b, which is > 0 */
		double rtol;
	} uns[] = {
		{ "neg", tg_neg, neg, 0, 0 },
		{ "exp", tg_exp, exp, 0, 1e-5 },
		{ "log", tg_log, log, 1, 1e-5 },
		{ "sqrt", tg_sqrt, sqrt, 1, 1e-6 },
		{ "sin", tg_sin, sin, 0, 1e-5 },
		{ "relu", tg_relu, relu, 0, 0 },
		{ "sigmoid", tg_sigmoid, sigmoid, 0, 1e-5 },
	};
	float a[N], b[N];
	double ref[N];
	enum cf_verdict v = CF_PASS;
	tg_tensor *ta, *tb;
	size_t k, i;

	cf_fill(a, N, 2, -2, 2);
	cf_fill(b, N, 3, 0.5, 3);
	ta = cf_from(c, a, 1, &n);
	tb = cf_from(c, b, 1, &n);
	for (k = 0; k < sizeof bins / sizeof *bins && !v; k++) {
		for (i = 0; i < N; i++) {
			double x = a[i], y = b[i];

			ref[i] = bins[k].op == '+' ? x + y : bins[k].op == '-'
				? x - y : bins[k].op == '*' ? x * y
				: bins[k].op == '/' ? x / y : fmax(x, y);
		}
		v = cf_check(c, bins[k].name, cf_keep(c, bins[k].fn(ta, tb)),
		             ref, N, 1e-6, 1e-6);
	}
	for (k = 0; k < sizeof uns / sizeof *uns && !v; k++) {
		const float *x = uns[k].positive ? b : a;

		for (i = 0; i < N; i++)
			ref[i] = uns[k].ref(x[i]);
		v = cf_check(c, uns[k].name, cf_keep(c,
		             uns[k].fn(uns[k].positive ? tb : ta)), ref, N,
		             1e-6, uns[k].rtol + 1e-6);
	}
	if (!v) {  /* a comparison and a select, cast to float32 */
		for (i = 0; i < N; i++)
			ref[i] = a[i] < b[i] - 1.5 ? 1.0 : 0.0;
		v = cf_check(c, "where(a < b - 1.5, 1, 0)", cf_keep(c, tg_cast(
		             cf_keep(c, tg_where_s(cf_keep(c, tg_lt(ta,
		             cf_keep(c, tg_sub_s(tb, 1.5)))), 1.0, 0.0)),
		             TG_FLOAT32)), ref, N, 0, 0);
	}
	return v;
}

enum cf_verdict cf_ops_reduce(struct cf_ctx *c)
{
	enum { R = 33, C = 65 };
	static const int64_t shape[2] = { R, C };
	float x[R * C];
	double ref[R * C > 0 ? C : 1], s;
	int ax0 = 0, ax1 = 1;
	tg_tensor *t;
	enum cf_verdict v;
	int i, j;

	cf_fill(x, R * C, 4, -1, 1);
	t = cf_from(c, x, 2, shape);
	for (i = 0; i < R; i++) {
		for (s = 0, j = 0; j < C; j++)
			s += x[i * C + j];
		ref[i] = s;
	}
	if ((v = cf_check(c, "sum over axis 1",
	                  cf_keep(c, tg_sum(t, &ax1, 1, 0)), ref, R, 1e-5,
	                  1e-5)))
		return v;
	for (j = 0; j < C; j++) {
		ref[j] = -INFINITY;
		for (i = 0; i < R; i++)
			ref[j] = fmax(ref[j], x[i * C + j]);
	}
	if ((v = cf_check(c, "max over axis 0",
	                  cf_keep(c, tg_max(t, &ax0, 1, 0)), ref, C, 0, 0)))
		return v;
	for (s = 0, i = 0; i < R * C; i++)
		s += x[i];
	ref[0] = s / (R * C);
	return cf_check(c, "mean of all", cf_keep(c, tg_mean(t, NULL, 0, 0)),
	                ref, 1, 1e-6, 1e-5);
}

/* (m, k) @ (k, n) against a double loop. */
static enum cf_verdict matmul_case(struct cf_ctx *c, int m, int k, int n)
{
	int64_t sa[2] = { m, k }, sb[2] = { k, n };
	float *a = malloc(sizeof *a * (size_t)(m * k));
	float *b = malloc(sizeof *b * (size_t)(k * n));
	double *ref = malloc(sizeof *ref * (size_t)(m * n));
	char what[64];
	enum cf_verdict v;

	if (!a || !b || !ref) {
		v = cf_fail(c, "out of host memory");
		goto out;
	}
	cf_fill(a, (size_t)(m * k), 5, -1, 1);
	cf_fill(b, (size_t)(k * n), 6, -1, 1);
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;

			for (int l = 0; l < k; l++)
				s += (double)a[i * k + l] * b[l * n + j];
			ref[i * n + j] = s;
		}
	snprintf(what, sizeof what, "matmul (%d, %d) @ (%d, %d)", m, k, k, n);
	v = cf_check(c, what, cf_keep(c, tg_matmul(cf_from(c, a, 2, sa),
	             cf_from(c, b, 2, sb))), ref, (size_t)(m * n), 1e-5, 1e-4);
out:
	free(a);
	free(b);
	free(ref);
	return v;
}

enum cf_verdict cf_ops_matmul(struct cf_ctx *c)
{
	enum cf_verdict v = matmul_case(c, 17, 33, 29);

	return v ? v : matmul_case(c, 64, 64, 64);
}

/* permute, pad and expand, then + 1: the index arithmetic of views. */
enum cf_verdict cf_ops_movement(struct cf_ctx *c)
{
	static const int64_t shape[3] = { 4, 5, 6 }, pads[6] = { 1, 0, 0, 2,
	                                                         0, 0 };
	static const int order[3] = { 2, 0, 1 };
	float x[120];
	double ref[3 * 7 * 4 * 7];
	tg_tensor *p;

	cf_fill(x, 120, 7, -5, 5);
	/* (4, 5, 6) permuted to (6, 4, 5), padded by (1, 0) on axis 0 and
	 * (0, 2) on axis 1: (7, 6, 5).  Element [i][j][k] is x[j][k][i-1]
	 * inside the pads, 0 outside. */
	p = cf_keep(c, tg_pad(cf_keep(c, tg_permute(cf_from(c, x, 3, shape), 3,
	            order)), 3, pads, 0.0));
	for (int i = 0; i < 7; i++)
		for (int j = 0; j < 6; j++)
			for (int k = 0; k < 5; k++) {
				int d2 = i - 1, d0 = j, d1 = k;
				double val = 0;

				if (d2 >= 0 && d0 < 4)
					val = x[(d0 * 5 + d1) * 6 + d2];
				ref[(i * 6 + j) * 5 + k] = val + 1.0;
			}
	return cf_check(c, "pad(permute(x)) + 1", cf_keep(c, tg_add_s(p, 1.0)),
	                ref, 7 * 6 * 5, 1e-6, 1e-6);
}

/* int32 arithmetic, exact. */
enum cf_verdict cf_ops_int32(struct cf_ctx *c)
{
	enum { N = 101 };
	static const int64_t n = N;
	int32_t a[N], b[N];
	double ref[N];
	tg_tensor *ta, *tb, *r;
	enum cf_verdict v;
	int i;

	if (!cf_has_dtype(c, TG_INT32))
		return cf_fail(c, "int32 is not computed"), CF_SKIP;
	for (i = 0; i < N; i++) {
		a[i] = i * 37 - 1800;
		b[i] = i % 13 + 1;
	}
	ta = cf_keep(c, tg_tensor_new(c->dev, TG_INT32, 1, &n, a));
	tb = cf_keep(c, tg_tensor_new(c->dev, TG_INT32, 1, &n, b));
	for (i = 0; i < N; i++)
		ref[i] = (double)a[i] * b[i] + a[i];
	r = cf_keep(c, tg_cast(cf_keep(c, tg_add(cf_keep(c, tg_mul(ta, tb)),
	            ta)), TG_FLOAT32));
	if ((v = cf_check(c, "int32 a * b + a", r, ref, N, 0, 0)))
		return v;
	for (i = 0; i < N; i++)  /* tinygrad's idiv truncates toward 0 */
		ref[i] = (double)(a[i] / b[i]);
	return cf_check(c, "int32 a // b", cf_keep(c, tg_cast(cf_keep(c,
	                tg_idiv(ta, tb)), TG_FLOAT32)), ref, N, 0, 0);
}

/* tg.h's integer division of a by b in a kind of `bits` bits: a / 0 =
 * 0, a % 0 = a, min / -1 = min, min % -1 = 0; mod takes the divisor's
 * sign.  Operands are sign- or zero-extended to 64 bits. */
static void idiv_ref(int64_t a, int64_t b, int sgn, unsigned bits,
                     int64_t *q, int64_t *r)
{
	int64_t min = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));

	if (b == 0) {
		*q = 0;
		*r = a;
	} else if (sgn && a == min && b == -1) {
		*q = min;
		*r = 0;
	} else if (!sgn) {
		*q = (int64_t)((uint64_t)a / (uint64_t)b);
		*r = (int64_t)((uint64_t)a % (uint64_t)b);
	} else {
		*q = a / b;
		*r = a % b;
		if (*r && (*r < 0) != (b < 0))
			*r += b;
	}
}

/* Element i of an integer buffer of dtype dt, extended to 64 bits. */
static int64_t int_at(const void *p, tg_dtype dt, size_t i)
{
	switch (dt) {
	case TG_INT8: return ((const int8_t *)p)[i];
	case TG_INT16: return ((const int16_t *)p)[i];
	case TG_INT32: return ((const int32_t *)p)[i];
	case TG_UINT8: return ((const uint8_t *)p)[i];
	case TG_UINT16: return ((const uint16_t *)p)[i];
	case TG_UINT32: return ((const uint32_t *)p)[i];
	default: return ((const int64_t *)p)[i];
	}
}

/* The operands of the division case in dtype dt, wrapped to it: zero
 * and -1 divisors against the least and greatest values. */
static void idiv_operands(tg_dtype dt, void *a, void *b, size_t n)
{
	static const int64_t va[] = { 7, -7, INT64_MIN, INT64_MIN, 5, 0,
	                              INT64_MAX, -1, 100, -100, 3, -3 };
	static const int64_t vb[] = { 0, 0, -1, 0, 2, 0, -1, -1, 7, 7, -2, -2 };
	unsigned bits = 8 * (unsigned)tg_dtype_size(dt);

	for (size_t i = 0; i < n; i++) {
		/* the least and greatest of this kind, not int64's */
		int64_t x = va[i] == INT64_MIN && bits < 64
		            ? -((int64_t)1 << (bits - 1))
		            : va[i] == INT64_MAX && bits < 64
		            ? ((int64_t)1 << (bits - 1)) - 1 : va[i];

		memcpy((char *)a + i * (bits / 8), &x, bits / 8);
		memcpy((char *)b + i * (bits / 8), &vb[i], bits / 8);
	}
}

/* The device's values of tg_idiv and tg_mod of the buffers, against
 * the reference, element by element; "" when all agree. */
static enum cf_verdict idiv_check(struct cf_ctx *c, tg_dtype dt,
                                  const char *what, tg_tensor *t,
                                  const void *a, const void *b, size_t n,
                                  int mod)
{
	int sgn = dt == TG_INT8 || dt == TG_INT16 || dt == TG_INT32 ||
	          dt == TG_INT64;
	unsigned bits = 8 * (unsigned)tg_dtype_size(dt);
	unsigned char out[12 * 8];
	int64_t q, r, want, got;

	if (!t || tg_tensor_data(t, out, n * (bits / 8)))
		return cf_fail(c, "%s %s: %s", tg_dtype_name(dt), what,
		               tg_last_error());
	for (size_t i = 0; i < n; i++) {
		int64_t x = int_at(a, dt, i), y = b ? int_at(b, dt, i) : 0;

		idiv_ref(x, y, sgn, bits, &q, &r);
		want = mod ? r : q;
		got = int_at(out, dt, i);
		if (got != want)
			return cf_fail(c, "%s %s: element %zu: %lld %s %lld gave "
			               "%lld, want %lld", tg_dtype_name(dt), what,
			               i, (long long)x, mod ? "mod" : "idiv",
			               (long long)y, (long long)got,
			               (long long)want);
	}
	return CF_PASS;
}

/* Integer division and modulo by zero and the overflowing min / -1, in
 * every integer dtype the device computes: tg.h's values, no trap,
 * with the divisor in memory and a constant zero. */
enum cf_verdict cf_ops_int_division(struct cf_ctx *c)
{
	static const tg_dtype dts[] = { TG_INT8, TG_INT16, TG_INT32, TG_INT64,
	                                TG_UINT8, TG_UINT16, TG_UINT32,
	                                TG_UINT64 };
	static const int64_t n = 12;
	unsigned char a[12 * 8], b[12 * 8];
	enum cf_verdict v = CF_PASS;
	int any = 0;

	for (size_t k = 0; k < sizeof dts / sizeof *dts && !v; k++) {
		tg_dtype dt = dts[k];
		tg_tensor *ta, *tb, *z;

		if (!cf_has_dtype(c, dt))
			continue;
		any = 1;
		idiv_operands(dt, a, b, (size_t)n);
		ta = cf_keep(c, tg_tensor_new(c->dev, dt, 1, &n, a));
		tb = cf_keep(c, tg_tensor_new(c->dev, dt, 1, &n, b));
		z = cf_keep(c, tg_zeros(c->dev, dt, 1, &n));
		if (!(v = idiv_check(c, dt, "a // b", cf_keep(c, tg_idiv(ta, tb)),
		                     a, b, (size_t)n, 0)) &&
		    !(v = idiv_check(c, dt, "a % b", cf_keep(c, tg_mod(ta, tb)),
		                     a, b, (size_t)n, 1)) &&
		    !(v = idiv_check(c, dt, "a // 0", cf_keep(c, tg_idiv(ta, z)),
		                     a, NULL, (size_t)n, 0)))
			v = idiv_check(c, dt, "a % 0", cf_keep(c, tg_mod(ta, z)),
			               a, NULL, (size_t)n, 1);
	}
	if (!any)
		return cf_fail(c, "no integer dtype is computed"), CF_SKIP;
	return v;
}

/* float16, bfloat16 and float64: x * y + x and a sum, computed in the
 * dtype (cast on the device), read back as float32. */
enum cf_verdict cf_ops_other_floats(struct cf_ctx *c)
{
	enum { N = 129 };
	static const int64_t n = N;
	static const tg_dtype dts[] = { TG_FLOAT16, TG_BFLOAT16, TG_FLOAT64 };
	static const double tol[] = { 4e-3, 3e-2, 1e-6 };
	float a[N], b[N];
	double ref[N], s;
	int any = 0;

	cf_fill(a, N, 8, -2, 2);
	cf_fill(b, N, 9, -2, 2);
	for (size_t k = 0; k < 3; k++) {
		tg_dtype dt = dts[k];
		tg_tensor *x, *y, *r;
		enum cf_verdict v;
		char what[64];

		if (!cf_has_dtype(c, dt))
			continue;
		any = 1;
		x = cf_keep(c, tg_cast(cf_from(c, a, 1, &n), dt));
		y = cf_keep(c, tg_cast(cf_from(c, b, 1, &n), dt));
		r = cf_keep(c, tg_add(cf_keep(c, tg_mul(x, y)), x));
		for (int i = 0; i < N; i++)
			ref[i] = (double)a[i] * b[i] + a[i];
		snprintf(what, sizeof what, "%s x * y + x", tg_dtype_name(dt));
		if ((v = cf_check(c, what, cf_keep(c, tg_cast(r, TG_FLOAT32)),
		                  ref, N, tol[k], tol[k])))
			return v;
		s = 0;
		for (int i = 0; i < N; i++)
			s += a[i];
		snprintf(what, sizeof what, "%s sum", tg_dtype_name(dt));
		if ((v = cf_check(c, what, cf_keep(c, tg_cast(cf_keep(c,
		                  tg_sum(x, NULL, 0, 0)), TG_FLOAT32)), &s, 1,
		                  tol[k] * 8, tol[k])))
			return v;
	}
	if (!any)
		return cf_fail(c, "none of float16, bfloat16, float64 is "
		               "computed"), CF_SKIP;
	return CF_PASS;
}

/* float32 -> int32 truncates toward zero; int32 -> float32 is exact. */
enum cf_verdict cf_ops_cast(struct cf_ctx *c)
{
	enum { N = 64 };
	static const int64_t n = N;
	float a[N];
	double ref[N];

	if (!cf_has_dtype(c, TG_INT32))
		return cf_fail(c, "int32 is not computed"), CF_SKIP;
	cf_fill(a, N, 10, -1000, 1000);
	for (int i = 0; i < N; i++)
		ref[i] = trunc(a[i]);
	return cf_check(c, "float32 -> int32 -> float32", cf_keep(c, tg_cast(
	                cf_keep(c, tg_cast(cf_from(c, a, 1, &n), TG_INT32)),
	                TG_FLOAT32)), ref, N, 0, 0);
}

/* Threefry2x32 with 20 rounds (Salmon et al.; JAX's threefry_2x32) of
 * the counter words (lo, hi) = x under the key (k0, k1) = (low, high
 * word of key): the host's reference for tg_rand's bits. */
static uint64_t threefry_ref(uint64_t x, uint64_t key)
{
	static const unsigned rot[8] = { 13, 15, 26, 6, 17, 29, 16, 24 };
	uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
	uint32_t ks[3] = { k1, k0 ^ k1 ^ 0x1BD11BDAu, k0 };
	uint32_t a = (uint32_t)x + ks[2], b = (uint32_t)(x >> 32) + ks[0];

	for (unsigned i = 0; i < 5; i++) {
		for (unsigned j = 0; j < 4; j++) {
			unsigned r = rot[i % 2 * 4 + j];

			a += b;
			b = ((b << r) | (b >> (32 - r))) ^ a;
		}
		a += ks[i % 3];
		b += ks[(i + 1) % 3] + i + 1;
	}
	return (uint64_t)b << 32 | a;
}

/* tg_rand of n values, drawn when the device's counter is at ctr:
 * counters ctr..ctr+h-1 (h = ceil(n/2)) paired with ctr+h..ctr+2h-1
 * form Threefry blocks under the seed; the low words then the high
 * words, first n of them, give the top 23 bits of a mantissa in [1, 2)
 * less one (tensor/random.c, tinygrad's Tensor.rand). */
static void rand_ref(uint64_t seed, uint32_t ctr, size_t n, double *out)
{
	size_t h = (n + 1) / 2;

	for (size_t i = 0; i < n; i++) {
		uint32_t c = ctr + (uint32_t)(i % h);
		uint64_t w = threefry_ref((uint64_t)(c + h) << 32 | c, seed);
		uint32_t bits = i < h ? (uint32_t)w : (uint32_t)(w >> 32);
		union { uint32_t u; float f; } m = {
			.u = bits >> 9 | 0x3f800000u };

		out[i] = (double)m.f - 1.0;
	}
}

/* tg_rand of 1 to 9 values in turn, then a (1,5) uniform (a Linear(5,
 * 1)'s weight as initialized): every
 * size must give the host reference's numbers bit for bit, the one
 * value of a (1,) draw too (PoCL once refused that kernel: the program
 * had fewer parameters than the launch gave buffers). */
enum cf_verdict cf_ops_random(struct cf_ctx *c)
{
	/* the reference against JAX: threefry_2x32((0, 1337), (3, 13)) */
	static const uint64_t seed = 20250101;
	double ref[9];
	uint32_t ctr = 0;
	enum cf_verdict v = CF_PASS;
	char what[64];

	if (threefry_ref((uint64_t)13 << 32 | 3, (uint64_t)1337 << 32) !=
	    ((uint64_t)2570072943u << 32 | 1967534793u))
		return cf_fail(c, "the host's Threefry reference is wrong");
	if (!cf_has_dtype(c, TG_UINT64))
		return cf_fail(c, "uint64 is not computed"), CF_SKIP;
	tg_manual_seed(seed);
	for (int64_t n = 1; n <= 9 && v == CF_PASS; n++) {
		snprintf(what, sizeof what, "rand of %lld", (long long)n);
		rand_ref(seed, ctr, (size_t)n, ref);
		v = cf_check(c, what, cf_keep(c, tg_rand(c->dev, TG_FLOAT32, 1,
		                                         &n)), ref, (size_t)n,
		             0, 0);
		ctr += (uint32_t)n;
	}
	if (v == CF_PASS) {
		static const int64_t shape[2] = { 1, 5 };

		rand_ref(seed, ctr, 5, ref);
		for (int i = 0; i < 5; i++)  /* tinygrad's kaiming bound */
			ref[i] = ref[i] * 2 - 1;
		v = cf_check(c, "uniform (1,5) in [-1, 1)", cf_keep(c,
		             tg_uniform(c->dev, TG_FLOAT32, 2, shape, -1, 1)),
		             ref, 5, 1e-7, 0);
	}
	return v;
}

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

const struct cf_case cf_cases[] = {
	{ "contract", "loads", contract_loads, 0 },
	{ "contract", "descriptor", contract_descriptor, 0 },
	{ "contract", "probe", contract_probe, 0 },
	{ "contract", "device-info", contract_device_info, 1 },
	{ "contract", "bad-device-index", contract_bad_index, 0 },
	{ "memory", "sizes", memory_sizes, 1 },
	{ "memory", "many-buffers", memory_many_buffers, 1 },
	{ "memory", "views", memory_views, 1 },
	{ "memory", "dtypes", memory_dtypes, 1 },
	{ "memory", "out-of-memory", memory_out_of_memory, 1 },
	{ "ops", "elementwise", cf_ops_elementwise, 1 },
	{ "ops", "reduce", cf_ops_reduce, 1 },
	{ "ops", "matmul", cf_ops_matmul, 1 },
	{ "ops", "movement", cf_ops_movement, 1 },
	{ "ops", "int32", cf_ops_int32, 1 },
	{ "ops", "int-division", cf_ops_int_division, 1 },
	{ "ops", "other-floats", cf_ops_other_floats, 1 },
	{ "ops", "cast", cf_ops_cast, 1 },
	{ "ops", "random", cf_ops_random, 1 },
	{ "kernels", "fusion", cf_kernels_fusion, 1 },
	{ "fuzz", "matmul", cf_fuzz_matmul, 1 },
	{ "fuzz", "column-sums", cf_fuzz_colsum, 1 },
	{ "fuzz", "row-sums", cf_fuzz_rowsum, 1 },
	{ "fuzz", "softmax", cf_fuzz_softmax, 1 },
	{ "fuzz", "conv2d", cf_fuzz_conv, 1 },
	{ "fuzz", "int32-max", cf_fuzz_int_max, 1 },
	{ "fuzz", "padded", cf_fuzz_padded, 1 },
};
const size_t cf_ncases = sizeof cf_cases / sizeof *cf_cases;

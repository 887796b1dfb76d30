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
 * only, as an application would use the device.  This file holds the
 * helpers, the contract and memory cases and the table of every case;
 * the ops are in conformance_ops.c, the kernels and fuzz cases in
 * conformance_fuzz.c.
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

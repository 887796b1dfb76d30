/*
 * conformance.h - what tg-conformance's runner (tg-conformance.c) and its
 * cases (conformance_cases.c, conformance_ops.c, conformance_fuzz.c)
 * share.
 */
#ifndef TG_CONFORMANCE_H
#define TG_CONFORMANCE_H

#include <stddef.h>

#include <tg/tg.h>

enum cf_verdict { CF_PASS, CF_FAIL, CF_SKIP };

/* What a case leaves for the parent, in memory the child shares with
 * it: the failure message, and the dtypes the device refused. */
struct cf_shared {
	char message[1024];
	char skipped[TG_NDTYPES][160]; /* "" or why dtype i was skipped */
};

/* The case's view of the run. */
struct cf_ctx {
	const char *plugin;   /* a file, or a plugin name */
	const char *device;   /* as given, or NULL for the plugin's first */
	char dev_name[64];    /* resolved by cf_setup */
	tg_plugin_info pinfo; /* the plugin cf_setup found (name NULL before) */
	long fuzz, seed;      /* random-opts sequences per program, from
	                         RANDOM_OPTS=seed on (--fuzz, --seed) */
	tg_dev *dev;
	tg_dev_info info;
	int stage_fd;         /* tg_child_stage: where a crash happened */
	struct cf_shared *out;
	tg_tensor **keep;     /* released when the case ends (cf_release) */
	size_t nkeep, capkeep;
};

/* The plugin and device a run uses, as one line in c->out->message
 * ("plugin CPU 0.1.0 (/path/cpu.so), device CPU: x86_64, ..."); CF_PASS,
 * or CF_FAIL with the reason in the line. */
enum cf_verdict cf_describe(struct cf_ctx *c);

struct cf_case {
	const char *area;     /* "contract", "memory", "ops", ... */
	const char *name;
	/* Runs in a child process of its own; CF_FAIL after cf_fail. */
	enum cf_verdict (*run)(struct cf_ctx *c);
	int needs_device;     /* cf_setup must have opened the device */
};

extern const struct cf_case cf_cases[];
extern const size_t cf_ncases;

/* Finds the plugin and opens the device; CF_FAIL with the reason. */
enum cf_verdict cf_setup(struct cf_ctx *c);
/* Records a failure message (printf-style); returns CF_FAIL. */
enum cf_verdict cf_fail(struct cf_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Notes the step the case is in, so a crash names it. */
void cf_stage(struct cf_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Keeps t (NULL too) for cf_release; returns t. */
tg_tensor *cf_keep(struct cf_ctx *c, tg_tensor *t);
void cf_release(struct cf_ctx *c);
/* Whether the device computes dt; if not, records why it is skipped. */
int cf_has_dtype(struct cf_ctx *c, tg_dtype dt);
/* n deterministic values in [lo, hi) into v, from seed. */
void cf_fill(float *v, size_t n, unsigned seed, double lo, double hi);
/* A float32 tensor of v on the device, kept (cf_keep). */
tg_tensor *cf_from(struct cf_ctx *c, const float *v, size_t ndim,
                   const int64_t *shape);
/* Realizes t (float32, n elements) and compares it with ref within
 * atol + rtol * |ref| (NaNs must match); CF_FAIL saying `what`. */
enum cf_verdict cf_check(struct cf_ctx *c, const char *what,
                         tg_tensor *t, const double *ref, size_t n,
                         double atol, double rtol);

/* The cases of cf_cases[] defined outside conformance_cases.c: the ops
 * (conformance_ops.c), the kernel counts and the fuzzed opts
 * (conformance_fuzz.c). */
enum cf_verdict cf_ops_elementwise(struct cf_ctx *c);
enum cf_verdict cf_ops_reduce(struct cf_ctx *c);
enum cf_verdict cf_ops_matmul(struct cf_ctx *c);
enum cf_verdict cf_ops_movement(struct cf_ctx *c);
enum cf_verdict cf_ops_int32(struct cf_ctx *c);
enum cf_verdict cf_ops_int_division(struct cf_ctx *c);
enum cf_verdict cf_ops_other_floats(struct cf_ctx *c);
enum cf_verdict cf_ops_cast(struct cf_ctx *c);
enum cf_verdict cf_ops_random(struct cf_ctx *c);
enum cf_verdict cf_kernels_fusion(struct cf_ctx *c);
enum cf_verdict cf_fuzz_matmul(struct cf_ctx *c);
enum cf_verdict cf_fuzz_colsum(struct cf_ctx *c);
enum cf_verdict cf_fuzz_rowsum(struct cf_ctx *c);
enum cf_verdict cf_fuzz_softmax(struct cf_ctx *c);
enum cf_verdict cf_fuzz_conv(struct cf_ctx *c);
enum cf_verdict cf_fuzz_int_max(struct cf_ctx *c);
enum cf_verdict cf_fuzz_padded(struct cf_ctx *c);

#endif

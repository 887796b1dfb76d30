/*
 * optest.h - helpers shared by the tensor-op suites (test_ops,
 * test_ops_reduce, test_ops_nn, test_kernels): the fixture on the default
 * device (DEVICE=OPENCL etc. picks it; CPU when unset), the dtype gate
 * for devices that don't compute every dtype, the deterministic hash
 * their generated inputs come from, element counts, integer wrapping of
 * references and the element-by-element comparison.
 *
 * The inputs, and so the references, depend on ot_u01 bit for bit:
 * change it and every suite's cases change.
 */
#ifndef TG_OPTEST_H
#define TG_OPTEST_H

#include <math.h>
#include <stdint.h>

#include "testlib.h"

/* The suite's name for messages ("ops" -> "test_ops"): the first
 * ot_tcase's name, or set directly by a suite that makes its own. */
static const char *ot_suite = "optest";

/* The device under test: the default device (tg_dev_get(NULL)). */
static inline tg_dev *ot_dev(void)
{
	return tg_dev_get(NULL);
}

/* Per dtype: the cases skipped because the device does not compute it
 * (reported by ot_report_refused), and whether the refusal was checked
 * in this process. */
static int ot_refused[TG_NDTYPES];
static int ot_refusal_checked[TG_NDTYPES];

/* Proves that computing dt on the device fails with a clear error (not
 * a wrong result): 4 float32 values cast to dt, added to themselves and
 * read back. */
static inline void ot_check_refusal(tg_dtype dt)
{
	static const float v[4] = { 1, 2, 3, 4 };
	int64_t s[1] = { 4 };
	unsigned char buf[4 * 8];
	char refusal[64];
	tg_tensor *x, *r;
	int rc = -1;

	tg_scope_begin();
	tg_clear_error();
	x = tg_cast(tg_tensor_new(ot_dev(), TG_FLOAT32, 1, s, v), dt);
	r = tg_add(x, x);
	if (r)
		rc = tg_tensor_data(r, buf, sizeof buf);
	ck_assert_msg(rc != 0, "test_%s: %s on %s: the device's dtype mask leaves "
	              "it out, but add computed it", ot_suite,
	              tg_dtype_name(dt), tg_dev_name(ot_dev()));
	/* codegen: "codegen: float16 is not supported by this device
	 * (kernel ...)"; the buffer of the result, when it is allocated
	 * first: "buffer_new: device OPENCL does not support float16" */
	snprintf(refusal, sizeof refusal, "does not support %s",
	         tg_dtype_name(dt));
	ck_assert_msg(strstr(tg_last_error(), "not supported by this device") ||
	              strstr(tg_last_error(), refusal),
	              "test_%s: %s on %s: error \"%s\" lacks \"not supported by "
	              "this device\" and \"%s\"", ot_suite, tg_dtype_name(dt),
	              tg_dev_name(ot_dev()), tg_last_error(), refusal);
	tg_clear_error();
	tg_scope_end();
}

/* Whether the device under test computes dt.  When it does not, the
 * caller skips the case: it is counted in ot_refused[dt], and the first
 * time per dtype per process the refusal itself is checked. */
static inline int ot_dtype_ok(tg_dtype dt)
{
	tg_dev_info info;
	tg_dev *dev = ot_dev();

	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	ck_assert_int_eq(tg_dev_get_info(dev, &info), 0);
	if ((unsigned)dt < TG_NDTYPES && (info.dtype_mask & (1u << dt)))
		return 1;
	ck_assert_int_lt((int)dt, TG_NDTYPES);
	if (!ot_refusal_checked[dt]) {
		ot_refusal_checked[dt] = 1;
		ot_check_refusal(dt);
	}
	ot_refused[dt]++;
	return 0;
}

/* Both dtypes of a mixed-dtype case (a cast, float16 x float32). */
static inline int ot_dtypes_ok(tg_dtype a, tg_dtype b)
{
	return ot_dtype_ok(a) && ot_dtype_ok(b);
}

/* Prints, to stderr, one line per dtype skipped since the last call
 * ("test_ops: float16 is not supported by OPENCL: 12 cases checked for
 * the refusal only") and resets the counts.  Tests run in forked
 * children, so the fixtures' teardown calls it (before tg_shutdown). */
static inline void ot_report_refused(void)
{
	int d;

	for (d = 0; d < TG_NDTYPES; d++)
		if (ot_refused[d]) {
			tg_dev *dev = ot_dev();
			fprintf(stderr, "test_%s: %s is not supported by %s: "
			        "%d cases checked for the refusal only\n",
			        ot_suite, tg_dtype_name((tg_dtype)d),
			        dev ? tg_dev_name(dev) : "the device",
			        ot_refused[d]);
			ot_refused[d] = 0;
		}
}

/* The fixture of the op suites: the default device, library state
 * dropped after each test. */
static inline void ot_setup(void)
{
	ck_assert_msg(ot_dev() != NULL, "no default device: %s",
	              tg_last_error());
}

static inline void ot_teardown(void)
{
	ot_report_refused();
	tg_shutdown();
}

/* A test case `name` with that fixture and a timeout of `secs`. */
static inline TCase *ot_tcase(const char *name, double secs)
{
	TCase *t = tcase_create(name);

	if (!strcmp(ot_suite, "optest"))
		ot_suite = name;

	tcase_add_checked_fixture(t, ot_setup, ot_teardown);
	tcase_set_timeout(t, secs);
	return t;
}

/* A value in [0, 1) for element i of input `which`: the fractional part
 * of sin(...) * 43758.5453, the same on every run. */
static inline double ot_u01(int64_t i, int which)
{
	double x = sin((double)i * 12.9898 + which * 78.233 + 1.0) * 43758.5453;
	return x - floor(x);
}

/* The element count of shape s (nd dims; 1 for 0 dims). */
static inline int64_t ot_numel(size_t nd, const int64_t *s)
{
	int64_t k = 1;
	size_t i;

	for (i = 0; i < nd; i++)
		k *= s[i];
	return k;
}

/* Row-major offset of the multi-index idx in shape s, and back. */
static inline int64_t ot_ravel(size_t nd, const int64_t *s,
                               const int64_t *idx)
{
	int64_t lin = 0;
	size_t i;

	for (i = 0; i < nd; i++)
		lin = lin * s[i] + idx[i];
	return lin;
}

static inline void ot_unravel(int64_t lin, size_t nd, const int64_t *s,
                              int64_t *idx)
{
	size_t i;

	for (i = nd; i-- > 0;) {
		idx[i] = s[i] ? lin % s[i] : 0;
		lin = s[i] ? lin / s[i] : 0;
	}
}

/* A double reference wrapped the way the int dtypes wrap (int8, uint8,
 * int32) or made 0/1 (bool); other dtypes unchanged. */
static inline double ot_wrap(double v, tg_dtype dt)
{
	switch (dt) {
	case TG_INT8: return (int8_t)(int64_t)v;
	case TG_UINT8: return (uint8_t)(int64_t)v;
	case TG_INT32: return (int32_t)(int64_t)v;
	case TG_BOOL: return v != 0;
	default: return v;
	}
}

/* How ot_check_vals treats a NaN or infinite reference. */
enum ot_nonfinite {
	/* got must be NaN where want is, and equal where want is infinite */
	OT_NONFINITE_EXACT,
	/* only a matching NaN or infinity counts as equal; anything else
	 * goes through the tolerance test (which any non-NaN got passes
	 * where want is infinite) */
	OT_NONFINITE_MATCHED
};

/* Compares got[0..k) with want: bit for bit when exact, else within
 * tol * (|want| + 1); messages name op, desc (the case) and dt. */
static inline void ot_check_vals(const char *op, const char *desc,
                                 tg_dtype dt, const double *got,
                                 const double *want, int64_t k, double tol,
                                 int exact, enum ot_nonfinite nf)
{
	int64_t i;

	for (i = 0; i < k; i++) {
		double g = got[i], w = want[i];
		int special = nf == OT_NONFINITE_EXACT
		              ? isnan(w) || isinf(w)
		              : (isnan(w) && isnan(g)) || (isinf(w) && g == w);

		if (exact || special)
			ck_assert_msg(g == w || (isnan(w) && isnan(g)),
			              "%s %s %s [%lld]: got %.9g want %.9g",
			              op, desc, tg_dtype_name(dt), (long long)i,
			              g, w);
		else
			ck_assert_msg(fabs(g - w) <= tol * (fabs(w) + 1),
			              "%s %s %s [%lld]: got %.9g want %.9g",
			              op, desc, tg_dtype_name(dt), (long long)i,
			              g, w);
	}
}

#endif

/*
 * optest.h - helpers shared by the tensor-op suites (test_ops,
 * test_ops_reduce, test_ops_nn, test_kernels): the CPU fixture, the
 * deterministic hash their generated inputs come from, element counts,
 * integer wrapping of references and the element-by-element comparison.
 *
 * The inputs, and so the references, depend on ot_u01 bit for bit:
 * change it and every suite's cases change.
 */
#ifndef TG_OPTEST_H
#define TG_OPTEST_H

#include <math.h>
#include <stdint.h>

#include "testlib.h"

/* The fixture of the op suites: the CPU device, library state dropped
 * after each test. */
static inline void ot_setup(void)
{
	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
}

static inline void ot_teardown(void)
{
	tg_shutdown();
}

/* A test case `name` with that fixture and a timeout of `secs`. */
static inline TCase *ot_tcase(const char *name, double secs)
{
	TCase *t = tcase_create(name);

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

/*
 * irtest.h - the fixture of the suites that build IR by hand
 * (test_verify, test_linearize): a fresh context per test, and the
 * constants every such test needs.
 */
#ifndef TG_IRTEST_H
#define TG_IRTEST_H

#include "testlib.h"
#include "../libtgcore/ir/ir.h"

static tg_ir *ir;

static inline void setup(void)
{
	ir = tg_ir_new();
	ck_assert_ptr_nonnull(ir);
}

static inline void teardown(void)
{
	tg_ir_free(ir);
}

/* An index constant and a float32 constant in ir. */
static inline tg_uop *ci(int64_t v)
{
	return tg_uop_const_int(ir, TG_INDEX, v);
}

static inline tg_uop *cf(double v)
{
	return tg_uop_const_float(ir, TG_FLOAT32, v);
}

#endif

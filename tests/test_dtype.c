/*
 * test_dtype.c - types and constants: promotion, DEFAULT_FLOAT, type
 * packing and text, float16/bfloat16 rounding and encodings, every ALU
 * op on every kind (tg_exec_alu), casts and bitcasts.  tests/fuzz_alu.c
 * compares the same functions with native C on random operands.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>

#include "testlib.h"
#include "ir/ir.h"
#include "tensor/tensor.h"

/* --------------------------------------------------------- promotion */

enum { b_ = TG_BOOL, i8 = TG_INT8, u8 = TG_UINT8, i16 = TG_INT16,
       u16 = TG_UINT16, i32 = TG_INT32, u32 = TG_UINT32, i64 = TG_INT64,
       u64 = TG_UINT64, f16 = TG_FLOAT16, bf = TG_BFLOAT16,
       f32 = TG_FLOAT32, f64 = TG_FLOAT64 };

/* lub[a][b], written out by hand from tinygrad's lattice (dtype.c's
 * header): for each pair, the first dtype in enum order that both reach
 * by following promotion edges upward.  bool reaches everything; a
 * signed and an unsigned int meet at the next signed int wide enough
 * for both, except that int64 and uint64 only meet at float16; the two
 * 16-bit floats meet at float32. */
static const unsigned char lub[13][13] = {
	/*          b_  i8  u8  i16 u16 i32 u32 i64 u64 f16 bf  f32 f64 */
	[b_]  = { b_, i8, u8, i16,u16,i32,u32,i64,u64,f16,bf, f32,f64 },
	[i8]  = { i8, i8, i16,i16,i32,i32,i64,i64,f16,f16,bf, f32,f64 },
	[u8]  = { u8, i16,u8, i16,u16,i32,u32,i64,u64,f16,bf, f32,f64 },
	[i16] = { i16,i16,i16,i16,i32,i32,i64,i64,f16,f16,bf, f32,f64 },
	[u16] = { u16,i32,u16,i32,u16,i32,u32,i64,u64,f16,bf, f32,f64 },
	[i32] = { i32,i32,i32,i32,i32,i32,i64,i64,f16,f16,bf, f32,f64 },
	[u32] = { u32,i64,u32,i64,u32,i64,u32,i64,u64,f16,bf, f32,f64 },
	[i64] = { i64,i64,i64,i64,i64,i64,i64,i64,f16,f16,bf, f32,f64 },
	[u64] = { u64,f16,u64,f16,u64,f16,u64,f16,u64,f16,bf, f32,f64 },
	[f16] = { f16,f16,f16,f16,f16,f16,f16,f16,f16,f16,f32,f32,f64 },
	[bf]  = { bf, bf, bf, bf, bf, bf, bf, bf, bf, f32,bf, f32,f64 },
	[f32] = { f32,f32,f32,f32,f32,f32,f32,f32,f32,f32,f32,f32,f64 },
	[f64] = { f64,f64,f64,f64,f64,f64,f64,f64,f64,f64,f64,f64,f64 },
};

START_TEST(promotion_table)
{
	unsigned a, b;

	for (a = 0; a < TG_NDTYPES; a++)
		for (b = 0; b < TG_NDTYPES; b++)
			ck_assert_msg(tg_dtype_lub(a, b) == lub[a][b],
			              "lub(%s, %s) = %s, expected %s",
			              tg_dtype_name(a), tg_dtype_name(b),
			              tg_dtype_name(tg_dtype_lub(a, b)),
			              tg_dtype_name(lub[a][b]));
	ck_assert_int_eq(tg_dtype_lub(TG_INT8, TG_UINT8), TG_INT16);
	ck_assert_int_eq(tg_dtype_lub(TG_INT64, TG_UINT64), TG_FLOAT16);
	ck_assert_int_eq(tg_dtype_lub(TG_BOOL, TG_BOOL), TG_BOOL);
	ck_assert_int_eq(tg_dtype_lub(TG_FLOAT16, TG_BFLOAT16), TG_FLOAT32);
	ck_assert_int_eq(tg_dtype_lub(TG_NDTYPES, TG_INT8), TG_NDTYPES);
	ck_assert_int_eq(tg_dtype_least_upper(TG_UINT32, TG_INT32),
	                 TG_INT64);
	ck_assert_int_eq(tg_dtype_least_upper((tg_dtype)-1, TG_INT8),
	                 TG_NDTYPES);
}
END_TEST

START_TEST(promotion_of_lists_and_sums)
{
	static const unsigned char acc[] = {
		i32, i32, u32, i32, u32, i32, u32, i64, u64, f32, f32, f32, f64,
	};
	static const unsigned char flt[] = {
		f32, f32, f32, f32, f32, f32, f32, f32, f32, f16, bf, f32, f64,
	};
	const tg_dtype three[] = { TG_INT8, TG_UINT8, TG_UINT16 };
	const tg_dtype halves[] = { TG_FLOAT16, TG_INT64, TG_BFLOAT16 };
	unsigned dt;

	for (dt = 0; dt < TG_NDTYPES; dt++) {
		ck_assert_int_eq(tg_dtype_sum_acc(dt), acc[dt]);
		ck_assert_int_eq(tg_dtype_lub_float(dt), flt[dt]);
	}
	ck_assert_int_eq(tg_dtype_lub_n(three, 3), TG_INT32);
	ck_assert_int_eq(tg_dtype_lub_n(three, 2), TG_INT16);
	ck_assert_int_eq(tg_dtype_lub_n(halves, 3), TG_FLOAT32);
	ck_assert_int_eq(tg_dtype_lub_n(NULL, 0), TG_BOOL);
}
END_TEST

START_TEST(kind_predicates)
{
	ck_assert(tg_scalar_is_float(TG_BFLOAT16));
	ck_assert(!tg_scalar_is_float(TG_INDEX));
	ck_assert(tg_scalar_is_int(TG_INDEX));
	ck_assert(!tg_scalar_is_int(TG_BOOL));
	ck_assert(!tg_scalar_is_int(TG_VOID));
	ck_assert(tg_scalar_is_unsigned(TG_UINT64));
	ck_assert(!tg_scalar_is_unsigned(TG_INT8));
	ck_assert(!tg_scalar_is_unsigned(TG_BOOL));
	ck_assert_uint_eq(tg_scalar_bits(TG_BOOL), 1);
	ck_assert_uint_eq(tg_scalar_bits(TG_INDEX), 64);
	ck_assert_uint_eq(tg_scalar_bits(TG_BFLOAT16), 16);
	ck_assert_uint_eq(tg_scalar_bits(TG_VOID), 0);
	ck_assert_uint_eq(tg_scalar_bits(99), 0);
	/* the public versions know only the enum */
	ck_assert(tg_dtype_is_float(TG_FLOAT16));
	ck_assert(tg_dtype_is_int(TG_UINT8));
	ck_assert(!tg_dtype_is_int(TG_BOOL));
	ck_assert(!tg_dtype_is_int((tg_dtype)TG_INDEX));
	ck_assert(tg_dtype_is_unsigned(TG_UINT32));
	ck_assert(!tg_dtype_is_unsigned(TG_INT32));
	ck_assert(!tg_dtype_is_float((tg_dtype)-1));
}
END_TEST

START_TEST(parses_names)
{
	static const struct {
		const char *name;
		tg_dtype dt;
	} ok[] = {
		{ "float32", TG_FLOAT32 }, { "half", TG_FLOAT16 },
		{ "HALF", TG_FLOAT16 }, { "Float", TG_FLOAT32 },
		{ "double", TG_FLOAT64 }, { "bfloat16", TG_BFLOAT16 },
		{ "__bf16", TG_BFLOAT16 }, { "int", TG_INT32 },
		{ "uint", TG_UINT32 }, { "long", TG_INT64 },
		{ "ulong", TG_UINT64 }, { "char", TG_INT8 },
		{ "uchar", TG_UINT8 }, { "short", TG_INT16 },
		{ "ushort", TG_UINT16 }, { "bool", TG_BOOL },
		{ "uint64", TG_UINT64 },
	};
	static const char *const bad[] = { "", "index", "void", "float8",
	                                   "int 32", "floa" };
	tg_dtype dt;
	size_t i;

	for (i = 0; i < TG_ARRAY_LEN(ok); i++) {
		ck_assert_int_eq(tg_dtype_parse(ok[i].name, &dt), 0);
		ck_assert_int_eq(dt, ok[i].dt);
	}
	for (i = 0; i < TG_ARRAY_LEN(bad); i++)
		ck_assert_int_eq(tg_dtype_parse(bad[i], &dt), TG_EINVAL);
	ck_assert_int_eq(tg_dtype_parse(NULL, &dt), TG_EINVAL);
	for (i = 0; i < TG_NDTYPES; i++) {  /* every name round-trips */
		ck_assert_int_eq(tg_dtype_parse(tg_dtype_name(i), &dt), 0);
		ck_assert_int_eq(dt, i);
	}
}
END_TEST

/* DEFAULT_FLOAT through the API, the environment and bad values. */
START_TEST(default_float_from_config)
{
	unsetenv("DEFAULT_FLOAT");
	tg_shutdown();
	ck_assert_int_eq(tg_dtype_default_float(), TG_FLOAT32);
	ck_assert_int_eq(tg_config_set("DEFAULT_FLOAT", "half"), 0);
	ck_assert_int_eq(tg_dtype_default_float(), TG_FLOAT16);
	ck_assert_int_eq(tg_config_set("default_float", "BFLOAT16"), 0);
	ck_assert_int_eq(tg_dtype_default_float(), TG_BFLOAT16);
	ck_assert_int_eq(tg_config_set("DEFAULT_FLOAT", "int32"), TG_ECONFIG);
	ck_assert_error("DEFAULT_FLOAT: expected a float type");
	ck_assert_error("got 'int32'");
	ck_assert_int_eq(tg_dtype_default_float(), TG_BFLOAT16);
	ck_assert_int_eq(tg_config_set("DEFAULT_FLOAT", NULL), 0);
	ck_assert_int_eq(tg_dtype_default_float(), TG_FLOAT32);
	tg_shutdown();
}
END_TEST

START_TEST(default_float_from_environment)
{
	tg_shutdown();
	setenv("DEFAULT_FLOAT", "double", 1);
	ck_assert_int_eq(tg_init(), 0);
	ck_assert_int_eq(tg_dtype_default_float(), TG_FLOAT64);
	ck_assert_int_eq(tg_config_set("DEFAULT_FLOAT", "float16"), 0);
	ck_assert_int_eq(tg_dtype_default_float(), TG_FLOAT16);
	tg_shutdown();
	setenv("DEFAULT_FLOAT", "uint8", 1);
	ck_assert_int_eq(tg_init(), TG_ECONFIG);
	ck_assert_error("environment DEFAULT_FLOAT: DEFAULT_FLOAT: expected "
	                "a float type");
	ck_assert_int_eq(tg_dtype_default_float(), TG_FLOAT32);
	unsetenv("DEFAULT_FLOAT");
	tg_shutdown();
}
END_TEST

START_TEST(default_float_from_file)
{
	tg_shutdown();
	setenv("TG_CONFIG", tl_write_file("df.ini",
	                                  "[core]\nDEFAULT_FLOAT = Half\n"), 1);
	ck_assert_int_eq(tg_init(), 0);
	ck_assert_int_eq(tg_dtype_default_float(), TG_FLOAT16);
	tg_shutdown();
	setenv("TG_CONFIG", tl_write_file("df.ini",
	                                  "[core]\nDEFAULT_FLOAT = f32\n"), 1);
	ck_assert_int_eq(tg_init(), TG_ECONFIG);
	ck_assert_error("df.ini:2: DEFAULT_FLOAT: expected a float type");
	unsetenv("TG_CONFIG");
	tg_shutdown();
}
END_TEST

/* ---------------------------------------------------------- types */

START_TEST(type_packing_and_text)
{
	tg_type f4 = tg_type_vec(TG_FLOAT32, 4);
	tg_type lp = tg_type_ptr(f4, TG_AS_LOCAL);
	tg_type big = tg_type_vec(TG_UINT8, TG_TYPE_MAX_COUNT);
	char buf[64];

	ck_assert_uint_eq(tg_type_scalar(f4), TG_FLOAT32);
	ck_assert_uint_eq(tg_type_count(f4), 4);
	ck_assert(!tg_type_is_ptr(f4));
	ck_assert_uint_eq(tg_type_count(TG_INT8), 1);
	ck_assert(tg_type_is_ptr(lp));
	ck_assert_uint_eq(tg_type_space(lp), TG_AS_LOCAL);
	ck_assert_uint_eq(tg_type_count(lp), 4);  /* pointer to a vector */
	ck_assert_uint_eq(tg_type_deref(lp), f4);
	ck_assert_uint_eq(tg_type_base(lp), TG_FLOAT32);
	ck_assert_uint_eq(tg_type_vec(f4, 1), TG_FLOAT32);
	ck_assert_uint_eq(tg_type_space(tg_type_vec(lp, 2)), TG_AS_LOCAL);
	ck_assert_uint_eq(tg_type_count(big), 65536);
	ck_assert_uint_eq(tg_type_scalar(big), TG_UINT8);
	ck_assert_str_eq(tg_type_format(f4, buf, sizeof buf), "float4");
	ck_assert_str_eq(tg_type_format(lp, buf, sizeof buf),
	                 "__local float4*");
	ck_assert_str_eq(tg_type_format(tg_type_ptr(TG_INT32, TG_AS_GLOBAL),
	                                buf, sizeof buf), "int*");
	ck_assert_str_eq(tg_type_format(TG_INDEX, buf, sizeof buf), "index");
	ck_assert_str_eq(tg_type_format(TG_VOID, buf, sizeof buf), "void");
	ck_assert_str_eq(tg_type_format(tg_type_vec(TG_BFLOAT16, 8), buf,
	                                sizeof buf), "__bf16x8");
	ck_assert_str_eq(tg_type_format(tg_type_vec(TG_FLOAT16, 2), buf,
	                                sizeof buf), "half2");
	ck_assert_str_eq(tg_type_format(big, buf, sizeof buf), "uchar65536");
	ck_assert_str_eq(tg_type_format(f4, buf, 4), "flo");  /* truncated */
}
END_TEST

/* ---------------------------------------------------- narrow floats */

/* Rounding straight from double: ties to even, subnormals, overflow. */
START_TEST(float16_rounding)
{
	static const double cases[][2] = {
		{ 65504, 65504 }, { 65519.99, 65504 },
		{ 65520, INFINITY }, { -65520, -INFINITY },
		{ 2049, 2048 }, { 2051, 2052 }, { 2050, 2050 },
		{ 1 + 0x1p-11, 1 }, { 1 + 3 * 0x1p-11, 1 + 0x1p-9 },
		{ 1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-10 },
		{ 0x1p-24, 0x1p-24 }, { 0x1p-25, 0 },
		{ 0x1p-25 + 0x1p-60, 0x1p-24 }, { 3 * 0x1p-25, 0x1p-23 },
		{ 1023 * 0x1p-24, 1023 * 0x1p-24 }, { 0x1p-14, 0x1p-14 },
		{ 0.1, 0.0999755859375 }, { 1e-300, 0 }, { 1e300, INFINITY },
	};
	size_t i;

	for (i = 0; i < TG_ARRAY_LEN(cases); i++)
		ck_assert_msg(tg_float_round(cases[i][0], TG_FLOAT16) ==
		              cases[i][1], "case %zu: %a -> %a", i, cases[i][0],
		              tg_float_round(cases[i][0], TG_FLOAT16));
	ck_assert(signbit(tg_float_round(-0x1p-25, TG_FLOAT16)));
	ck_assert(signbit(tg_float_round(-0.0, TG_FLOAT16)));
	ck_assert(isnan(tg_float_round(NAN, TG_FLOAT16)));
	ck_assert(tg_float_round(INFINITY, TG_FLOAT16) == INFINITY);
	ck_assert(tg_float_round(0.1, TG_FLOAT64) == 0.1);
	ck_assert(tg_float_round(0.1, TG_INT32) == 0.1);
	ck_assert(tg_float_round(0.1, TG_FLOAT32) == (double)0.1f);
	ck_assert(tg_float_round(0x1p-150, TG_FLOAT32) == 0);
	ck_assert(tg_float_round(0x1.8p-150, TG_FLOAT32) == 0x1p-149);
}
END_TEST

START_TEST(bfloat16_rounding)
{
	double max = 0x1.fep127;  /* 0x7f7f */

	ck_assert(tg_float_round(1 + 0x1p-8, TG_BFLOAT16) == 1);
	ck_assert(tg_float_round(1 + 3 * 0x1p-8, TG_BFLOAT16) == 1 + 0x1p-6);
	/* a float first would round this to the tie 1 + 2^-8, then to 1 */
	ck_assert(tg_float_round(1 + 0x1p-8 + 0x1p-30, TG_BFLOAT16) ==
	          1 + 0x1p-7);
	ck_assert(tg_float_round(max, TG_BFLOAT16) == max);
	ck_assert(tg_float_round(max + 0x1p119, TG_BFLOAT16) == INFINITY);
	ck_assert(tg_float_round(max + 0x1p118, TG_BFLOAT16) == max);
	ck_assert(tg_float_round(0x1p-133, TG_BFLOAT16) == 0x1p-133);
	ck_assert(tg_float_round(0x1p-134, TG_BFLOAT16) == 0);
	ck_assert(tg_float_round(0x1.8p-134, TG_BFLOAT16) == 0x1p-133);
	ck_assert(isnan(tg_float_round(-NAN, TG_BFLOAT16)));
}
END_TEST

START_TEST(narrow_encodings)
{
	static const struct {
		double v;
		uint16_t h, b;
	} cases[] = {
		{ 1.0, 0x3c00, 0x3f80 }, { -2.0, 0xc000, 0xc000 },
		{ 65504, 0x7bff, 0x4780 }, { INFINITY, 0x7c00, 0x7f80 },
		{ -INFINITY, 0xfc00, 0xff80 }, { -0.0, 0x8000, 0x8000 },
		{ 0x1p-24, 0x0001, 0x3380 }, { 0x1p-14, 0x0400, 0x3880 },
		{ 0.1, 0x2e66, 0x3dcd }, { 0x1p-133, 0x0000, 0x0001 },
		{ 0x1.fep127, 0x7c00, 0x7f7f },
	};
	size_t i;

	for (i = 0; i < TG_ARRAY_LEN(cases); i++) {
		ck_assert_uint_eq(tg_f16_bits(cases[i].v), cases[i].h);
		ck_assert_uint_eq(tg_bf16_bits(cases[i].v), cases[i].b);
	}
	ck_assert_uint_eq(tg_f16_bits(NAN), 0x7e00);
	ck_assert_uint_eq(tg_bf16_bits(NAN), 0x7fc0);
	ck_assert(tg_f16_value(0x0001) == 0x1p-24);
	ck_assert(tg_f16_value(0x7bff) == 65504);
	ck_assert(tg_f16_value(0xfc00) == -INFINITY);
	ck_assert(isnan(tg_f16_value(0x7e00)));
	ck_assert(tg_bf16_value(0x0001) == 0x1p-133);
	ck_assert(tg_bf16_value(0x3f80) == 1.0);
	ck_assert(tg_bf16_value(0x3dcd) == 0x1.9ap-4);
	/* every encoding, NaN payloads included, decodes and re-encodes */
	for (i = 0; i < 65536; i++) {
		ck_assert_uint_eq(tg_f16_bits(tg_f16_value((uint16_t)i)), i);
		ck_assert_uint_eq(tg_bf16_bits(tg_bf16_value((uint16_t)i)), i);
	}
}
END_TEST

/* ---------------------------------------------------------- scalars */

#define I(v) { .i = (v) }
#define U(v) { .u = (v) }
#define F(v) { .f = (v) }

START_TEST(scalar_from_int_wraps_and_rounds)
{
	static const struct {
		int64_t v;
		unsigned s;
		tg_scalar r;
	} cases[] = {
		{ 300, TG_UINT8, I(44) }, { -1, TG_UINT16, I(65535) },
		{ 128, TG_INT8, I(-128) }, { -129, TG_INT8, I(127) },
		{ -1, TG_UINT64, U(UINT64_MAX) }, { 5, TG_BOOL, I(1) },
		{ INT64_MIN, TG_INDEX, I(INT64_MIN) },
		{ 0x100000000, TG_INT32, I(0) },
		{ 0x180000000, TG_UINT32, I(0x80000000) },
		/* one rounding, from the integer: a double first would
		 * drop the +1 and then round the tie down */
		{ (1LL << 60) + (1LL << 52) + 1, TG_BFLOAT16,
		  F(0x1p60 + 0x1p53) },
		{ (1LL << 60) + (1LL << 52), TG_BFLOAT16, F(0x1p60) },
		{ INT64_MAX, TG_FLOAT32, F(0x1p63) },
		{ INT64_MIN, TG_FLOAT64, F(-0x1p63) },
		{ 65520, TG_FLOAT16, F(INFINITY) },
		{ -65519, TG_FLOAT16, F(-65504) },
		{ 2049, TG_FLOAT16, F(2048) },
		{ (1LL << 53) + 1, TG_FLOAT64, F(0x1p53) },
		{ (1LL << 53) + 3, TG_FLOAT64, F(0x1p53 + 4) },
		{ 16777217, TG_FLOAT32, F(16777216) },
	};
	tg_scalar r;
	size_t i;

	for (i = 0; i < TG_ARRAY_LEN(cases); i++) {
		r = tg_scalar_from_int(cases[i].v, cases[i].s);
		ck_assert_msg(tg_scalar_eq(r, cases[i].r, cases[i].s),
		              "case %zu: %" PRIx64, i, r.u);
	}
}
END_TEST

START_TEST(scalar_bits_and_double)
{
	tg_scalar v, w;

	v.i = -1;
	ck_assert_uint_eq(tg_scalar_to_bits(v, TG_INT8), 0xff);
	ck_assert_uint_eq(tg_scalar_to_bits(v, TG_INDEX), UINT64_MAX);
	v.i = 1;
	ck_assert_uint_eq(tg_scalar_to_bits(v, TG_BOOL), 1);
	v.f = 1.0;
	ck_assert_uint_eq(tg_scalar_to_bits(v, TG_FLOAT32), 0x3f800000);
	ck_assert_uint_eq(tg_scalar_to_bits(v, TG_FLOAT16), 0x3c00);
	ck_assert_uint_eq(tg_scalar_to_bits(v, TG_FLOAT64),
	                  0x3ff0000000000000);
	ck_assert_int_eq(tg_scalar_from_bits(0x80, TG_INT8).i, -128);
	ck_assert_int_eq(tg_scalar_from_bits(0x180, TG_UINT8).i, 128);
	ck_assert_int_eq(tg_scalar_from_bits(0xffffffff, TG_INT32).i, -1);
	ck_assert_int_eq(tg_scalar_from_bits(3, TG_BOOL).i, 1);
	ck_assert(tg_scalar_from_bits(0xbf800000, TG_FLOAT32).f == -1.0);
	/* NaN payloads survive, signalling ones too */
	w = tg_scalar_from_bits(0x7f800001, TG_FLOAT32);
	ck_assert(isnan(w.f));
	ck_assert_uint_eq(tg_scalar_to_bits(w, TG_FLOAT32), 0x7f800001);
	w = tg_scalar_from_bits(0xfd01, TG_FLOAT16);
	ck_assert_uint_eq(tg_scalar_to_bits(w, TG_FLOAT16), 0xfd01);
	v.u = UINT64_MAX;
	ck_assert(tg_scalar_to_double(v, TG_UINT64) == 0x1p64);
	ck_assert(tg_scalar_to_double(v, TG_INT64) == -1.0);
	v.f = 2.5;
	ck_assert(tg_scalar_to_double(v, TG_BFLOAT16) == 2.5);
}
END_TEST

START_TEST(scalar_equality_and_bounds)
{
	tg_scalar a = F(0.0), b = F(-0.0), n = F(NAN);

	ck_assert(!tg_scalar_eq(a, b, TG_FLOAT32));
	ck_assert(tg_scalar_eq(n, n, TG_FLOAT32));
	ck_assert_int_eq(tg_dtype_min(TG_INT8).i, -128);
	ck_assert_int_eq(tg_dtype_max(TG_INT8).i, 127);
	ck_assert_int_eq(tg_dtype_min(TG_UINT8).i, 0);
	ck_assert_int_eq(tg_dtype_max(TG_UINT32).i, 0xffffffff);
	ck_assert_int_eq(tg_dtype_min(TG_INT64).i, INT64_MIN);
	ck_assert_int_eq(tg_dtype_max(TG_INDEX).i, INT64_MAX);
	ck_assert_uint_eq(tg_dtype_max(TG_UINT64).u, UINT64_MAX);
	ck_assert_uint_eq(tg_dtype_min(TG_UINT64).u, 0);
	ck_assert_int_eq(tg_dtype_min(TG_BOOL).i, 0);
	ck_assert_int_eq(tg_dtype_max(TG_BOOL).i, 1);
	ck_assert(tg_dtype_min(TG_FLOAT16).f == -INFINITY);
	ck_assert(tg_dtype_max(TG_FLOAT64).f == INFINITY);
}
END_TEST

START_TEST(scalar_text)
{
	static const struct {
		tg_scalar v;
		unsigned s;
		const char *text;
	} cases[] = {
		{ F(1.5), TG_FLOAT32, "1.5f" }, { F(0.1), TG_FLOAT64, "0.1" },
		{ F(0x1.99999ap-4), TG_FLOAT32, "0.1f" },
		{ F(65504), TG_FLOAT16, "(half)65504.0f" },
		{ F(0.0999755859375), TG_FLOAT16, "(half)0.1f" },
		{ F(2.5), TG_BFLOAT16, "(__bf16)2.5f" },
		{ F(NAN), TG_FLOAT32, "NAN" },
		{ F(-INFINITY), TG_FLOAT32, "-INFINITY" },
		{ F(-0.0), TG_FLOAT32, "-0.0f" },
		{ F(100), TG_FLOAT64, "100.0" },
		{ F(1e300), TG_FLOAT64, "1e+300" },
		{ I(-3), TG_INT32, "-3" }, { I(1), TG_BOOL, "true" },
		{ I(0), TG_BOOL, "false" },
		{ U(UINT64_MAX), TG_UINT64, "18446744073709551615" },
		{ I(INT64_MIN), TG_INDEX, "-9223372036854775808" },
	};
	char buf[64];
	size_t i;

	for (i = 0; i < TG_ARRAY_LEN(cases); i++)
		ck_assert_str_eq(tg_scalar_format(cases[i].v, cases[i].s, buf,
		                                  sizeof buf), cases[i].text);
}
END_TEST

/* ------------------------------------------------------------- ALU */

/* One evaluation: op on kind s; rc, and the result when rc is 0 (in
 * the result's kind: bool for comparisons; NaN matches any NaN). */
typedef struct alu_case {
	int line;
	unsigned op, s;
	tg_scalar x[3];
	int rc;
	tg_scalar r;
} alu_case;

#define A(op, s, r, ...) { __LINE__, TG_##op, TG_##s, { __VA_ARGS__ }, 0, r }
#define BAD(op, s, ...) { __LINE__, TG_##op, TG_##s, { __VA_ARGS__ }, \
	TG_EINVAL, I(0) }

static const alu_case alu_cases[] = {
	/* ADD: wraps on every int kind; or on bool; rounds on floats */
	A(ADD, INT8, I(-128), I(127), I(1)),
	A(ADD, UINT8, I(0), I(255), I(1)),
	A(ADD, INT16, I(-32768), I(32767), I(1)),
	A(ADD, UINT16, I(1), I(65535), I(2)),
	A(ADD, INT32, I(INT32_MIN), I(INT32_MAX), I(1)),
	A(ADD, UINT32, I(0), I(0xffffffff), I(1)),
	A(ADD, INT64, I(INT64_MIN), I(INT64_MAX), I(1)),
	A(ADD, UINT64, U(1), U(UINT64_MAX), U(2)),
	A(ADD, INDEX, I(INT64_MIN), I(INT64_MAX), I(1)),
	A(ADD, BOOL, I(1), I(1), I(1)),
	A(ADD, BOOL, I(0), I(0), I(0)),
	A(ADD, FLOAT16, F(2048), F(2048), F(1)),
	A(ADD, FLOAT16, F(INFINITY), F(65504), F(16)),
	A(ADD, BFLOAT16, F(256), F(256), F(1)),
	A(ADD, FLOAT32, F(16777216), F(16777216), F(1)),
	A(ADD, FLOAT64, F(0.30000000000000004), F(0.1), F(0.2)),
	A(ADD, FLOAT64, F(NAN), F(INFINITY), F(-INFINITY)),
	/* MUL */
	A(MUL, INT8, I(0), I(16), I(16)),
	A(MUL, UINT8, I(1), I(255), I(255)),
	A(MUL, INT16, I(-32768), I(-32768), I(-1)),
	A(MUL, UINT16, I(1), I(65535), I(65535)),
	A(MUL, INT32, I(0), I(65536), I(65536)),
	A(MUL, UINT32, I(1), I(0xffffffff), I(0xffffffff)),
	A(MUL, INT64, I(INT64_MIN), I(INT64_MIN), I(-1)),
	A(MUL, UINT64, U(1), U(UINT64_MAX), U(UINT64_MAX)),
	A(MUL, INDEX, I(-6), I(-2), I(3)),
	A(MUL, BOOL, I(0), I(1), I(0)),
	A(MUL, BOOL, I(1), I(1), I(1)),
	A(MUL, FLOAT16, F(INFINITY), F(256), F(256)),
	A(MUL, FLOAT16, F(0), F(0x1p-24), F(0.5)),
	A(MUL, BFLOAT16, F(1 + 0x1p-6), F(1 + 0x1p-7), F(1 + 0x1p-7)),
	A(MUL, FLOAT32, F(0x1p-149), F(0x1p-75), F(0x1p-74)),
	A(MUL, FLOAT64, F(NAN), F(0), F(INFINITY)),
	/* NEG: unsigned wraps, signed min wraps, bool is not */
	A(NEG, INT8, I(-128), I(-128)),
	A(NEG, UINT8, I(255), I(1)),
	A(NEG, INT16, I(-5), I(5)),
	A(NEG, UINT16, I(0), I(0)),
	A(NEG, INT32, I(INT32_MIN), I(INT32_MIN)),
	A(NEG, UINT32, I(0xfffffffe), I(2)),
	A(NEG, INT64, I(INT64_MIN), I(INT64_MIN)),
	A(NEG, UINT64, U(UINT64_MAX), U(1)),
	A(NEG, INDEX, I(-7), I(7)),
	A(NEG, BOOL, I(0), I(1)),
	A(NEG, BOOL, I(1), I(0)),
	A(NEG, FLOAT16, F(-0.0), F(0.0)),
	A(NEG, BFLOAT16, F(-1.5), F(1.5)),
	A(NEG, FLOAT32, F(INFINITY), F(-INFINITY)),
	A(NEG, FLOAT64, F(-0.1), F(0.1)),
	/* IDIV truncates; x/0 is 0, min/-1 wraps to min (refused on index) */
	A(IDIV, INT8, I(-3), I(-7), I(2)),
	A(IDIV, INT8, I(-3), I(7), I(-2)),
	A(IDIV, INT8, I(-128), I(-128), I(-1)),
	A(IDIV, INT8, I(127), I(-127), I(-1)),
	A(IDIV, UINT8, I(127), I(255), I(2)),
	A(IDIV, INT16, I(-1), I(-32768), I(32767)),
	A(IDIV, INT16, I(-32768), I(-32768), I(-1)),
	A(IDIV, UINT16, I(1), I(65535), I(65535)),
	A(IDIV, INT32, I(INT32_MIN), I(INT32_MIN), I(-1)),
	A(IDIV, INT32, I(INT32_MIN), I(INT32_MIN), I(1)),
	A(IDIV, UINT32, I(0x7fffffff), I(0xffffffff), I(2)),
	A(IDIV, INT64, I(INT64_MIN), I(INT64_MIN), I(-1)),
	A(IDIV, INT64, I(INT64_MIN / 2), I(INT64_MIN), I(2)),
	A(IDIV, UINT64, U(UINT64_MAX / 3), U(UINT64_MAX), U(3)),
	BAD(IDIV, INDEX, I(INT64_MIN), I(-1)),
	BAD(IDIV, INDEX, I(1), I(0)),
	A(IDIV, UINT64, U(0), U(1), U(0)),
	A(IDIV, UINT8, I(0), I(0), I(0)),
	A(IDIV, INT32, I(0), I(-5), I(0)),
	A(IDIV, BOOL, I(1), I(1), I(1)),
	A(IDIV, BOOL, I(0), I(1), I(0)),
	BAD(IDIV, FLOAT32, F(1), F(2)),
	BAD(IDIV, FLOAT16, F(1), F(2)),
	/* MOD takes the dividend's sign; x%0 is x, min%-1 is 0 */
	A(MOD, INT8, I(-1), I(-7), I(3)),
	A(MOD, INT8, I(1), I(7), I(-3)),
	A(MOD, INT16, I(-1), I(-7), I(-3)),
	A(MOD, INT32, I(0), I(INT32_MIN), I(-1)),
	A(MOD, INT64, I(5), I(5), I(0)),
	A(MOD, INT8, I(-7), I(-7), I(0)),
	BAD(MOD, INDEX, I(5), I(0)),
	BAD(MOD, INDEX, I(INT64_MIN), I(-1)),
	A(MOD, INT64, I(-2), I(INT64_MIN), I(3)),
	A(MOD, UINT8, I(3), I(255), I(4)),
	A(MOD, UINT16, I(0), I(65535), I(5)),
	A(MOD, UINT32, I(1), I(0xffffffff), I(2)),
	A(MOD, UINT64, U(0), U(UINT64_MAX), U(5)),
	A(MOD, INDEX, I(-1), I(-10), I(3)),
	A(MOD, BOOL, I(0), I(1), I(1)),
	A(MOD, BOOL, I(1), I(1), I(0)),
	BAD(MOD, FLOAT64, F(5), F(3)),
	/* MAX: signedness matters; NaN wins; +0 above -0 */
	A(MAX, INT8, I(1), I(-128), I(1)),
	A(MAX, UINT8, I(200), I(200), I(1)),
	A(MAX, INT16, I(-1), I(-1), I(-2)),
	A(MAX, UINT16, I(65535), I(65535), I(0)),
	A(MAX, INT32, I(0), I(INT32_MIN), I(0)),
	A(MAX, UINT32, I(0x80000000), I(0x80000000), I(1)),
	A(MAX, INT64, I(-1), I(INT64_MIN), I(-1)),
	A(MAX, UINT64, U(UINT64_MAX), U(1), U(UINT64_MAX)),
	A(MAX, INDEX, I(3), I(3), I(-3)),
	A(MAX, BOOL, I(1), I(0), I(1)),
	A(MAX, FLOAT16, F(NAN), F(NAN), F(1)),
	A(MAX, FLOAT16, F(NAN), F(1), F(NAN)),
	A(MAX, BFLOAT16, F(-1), F(-1), F(-INFINITY)),
	A(MAX, FLOAT32, F(0.0), F(-0.0), F(0.0)),
	A(MAX, FLOAT32, F(0.0), F(0.0), F(-0.0)),
	A(MAX, FLOAT64, F(-0.0), F(-0.0), F(-0.0)),
	/* comparisons give bool */
	A(CMPLT, INT8, I(1), I(-1), I(0)),
	A(CMPLT, UINT8, I(0), I(255), I(0)),
	A(CMPLT, INT16, I(0), I(3), I(3)),
	A(CMPLT, UINT16, I(1), I(3), I(65535)),
	A(CMPLT, INT32, I(1), I(INT32_MIN), I(INT32_MAX)),
	A(CMPLT, UINT32, I(0), I(0xffffffff), I(0)),
	A(CMPLT, INT64, I(1), I(INT64_MIN), I(0)),
	A(CMPLT, UINT64, U(0), U(UINT64_MAX), U(0)),
	A(CMPLT, INDEX, I(1), I(-1), I(0)),
	A(CMPLT, BOOL, I(1), I(0), I(1)),
	A(CMPLT, FLOAT16, I(0), F(NAN), F(1)),
	A(CMPLT, BFLOAT16, I(1), F(-INFINITY), F(0)),
	A(CMPLT, FLOAT32, I(0), F(0.0), F(-0.0)),
	A(CMPLT, FLOAT64, I(1), F(-0.1), F(0.1)),
	A(CMPNE, INT8, I(1), I(-1), I(0)),
	A(CMPNE, UINT64, U(0), U(UINT64_MAX), U(UINT64_MAX)),
	A(CMPNE, BOOL, I(1), I(1), I(0)),
	A(CMPNE, FLOAT32, I(1), F(NAN), F(NAN)),
	A(CMPNE, FLOAT64, I(0), F(0.0), F(-0.0)),
	A(CMPNE, FLOAT16, I(0), F(1), F(1)),
	A(CMPNE, INDEX, I(1), I(1), I(2)),
	/* bitwise ops */
	A(XOR, INT8, I(-1), I(0x55), I(-0x56)),
	A(XOR, UINT32, I(0xffff0000), I(0xffffffff), I(0xffff)),
	A(XOR, BOOL, I(0), I(1), I(1)),
	A(XOR, UINT64, U(UINT64_MAX), U(0), U(UINT64_MAX)),
	A(OR, INT16, I(-1), I(-32768), I(32767)),
	A(OR, UINT8, I(0xff), I(0xf0), I(0x0f)),
	A(OR, BOOL, I(1), I(0), I(1)),
	A(OR, INDEX, I(7), I(5), I(3)),
	A(AND, INT32, I(INT32_MIN), I(-1), I(INT32_MIN)),
	A(AND, UINT16, I(0x00f0), I(0xfff0), I(0x00ff)),
	A(AND, BOOL, I(0), I(1), I(0)),
	A(AND, INT64, I(1), I(-1), I(1)),
	BAD(XOR, FLOAT32, F(1), F(2)),
	BAD(OR, BFLOAT16, F(1), F(2)),
	BAD(AND, FLOAT64, F(1), F(2)),
	/* shifts: by the width or more, or negative, refused */
	A(SHL, INT8, I(-128), I(1), I(7)),
	A(SHL, INT8, I(-128), I(-1), I(7)),
	BAD(SHL, INT8, I(1), I(8)),
	BAD(SHL, INT8, I(1), I(-1)),
	A(SHL, UINT8, I(0xfe), I(0xff), I(1)),
	A(SHL, INT16, I(-32768), I(1), I(15)),
	A(SHL, UINT16, I(0x8000), I(1), I(15)),
	A(SHL, INT32, I(INT32_MIN), I(1), I(31)),
	BAD(SHL, INT32, I(1), I(32)),
	A(SHL, UINT32, I(0xfffffffe), I(0xffffffff), I(1)),
	A(SHL, INT64, I(INT64_MIN), I(1), I(63)),
	BAD(SHL, UINT64, U(1), U(64)),
	A(SHL, INDEX, I(-8), I(-1), I(3)),
	A(SHL, BOOL, I(1), I(1), I(0)),
	BAD(SHL, BOOL, I(1), I(1)),
	A(SHR, INT8, I(-1), I(-128), I(7)),
	A(SHR, UINT8, I(1), I(128), I(7)),
	BAD(SHR, UINT8, I(128), I(8)),
	A(SHR, INT16, I(-16384), I(-32768), I(1)),
	A(SHR, UINT16, I(0x4000), I(0x8000), I(1)),
	A(SHR, INT32, I(-1), I(-1), I(31)),
	A(SHR, UINT32, I(1), I(0x80000000), I(31)),
	A(SHR, INT64, I(-2), I(-3), I(1)),
	A(SHR, UINT64, U(0x7fffffffffffffff), U(UINT64_MAX), U(1)),
	BAD(SHR, INT64, I(1), I(64)),
	BAD(SHR, INDEX, I(1), I(-3)),
	A(SHR, INDEX, I(1), I(7), I(2)),
	BAD(SHR, FLOAT32, F(4), F(1)),
	BAD(SHL, FLOAT16, F(4), F(1)),
	/* THREEFRY: tinygrad's threefry2x32; values from a transcription
	 * of its Python (codegen/uopgraph.py) */
	A(THREEFRY, UINT64, U(0x99ba4efe6b200159), U(0), U(0)),
	A(THREEFRY, UINT64, U(0xc0de3f32508efb2c), U(1), U(0)),
	A(THREEFRY, UINT64, U(0x96eb2785b435a7fa), U(0), U(1)),
	A(THREEFRY, UINT64, U(0x9d81323b218cca14), U(0x123456789abcdef0),
	  U(0xfedcba9876543210)),
	A(THREEFRY, UINT64, U(0xbb002be71cb996fc), U(UINT64_MAX),
	  U(UINT64_MAX)),
	A(THREEFRY, UINT64, U(0xec51bde5b3faf9f7), U(5), U(1337)),
	BAD(THREEFRY, UINT32, I(0), I(0)),
	BAD(THREEFRY, INT64, I(0), I(0)),
	BAD(THREEFRY, INDEX, I(0), I(0)),
	BAD(THREEFRY, BOOL, I(0), I(0)),
	BAD(THREEFRY, FLOAT64, F(0), F(0)),
	/* WHERE on any kind */
	A(WHERE, INT8, I(-5), I(1), I(-5), I(7)),
	A(WHERE, INT8, I(7), I(0), I(-5), I(7)),
	A(WHERE, UINT64, U(UINT64_MAX), I(1), U(UINT64_MAX), U(0)),
	A(WHERE, FLOAT32, F(NAN), I(0), F(1), F(NAN)),
	A(WHERE, BOOL, I(1), I(1), I(1), I(0)),
	A(WHERE, INDEX, I(-1), I(0), I(5), I(-1)),
	A(WHERE, BFLOAT16, F(2), I(1), F(2), F(3)),
	/* MULACC wraps on ints and rounds the product first on floats */
	A(MULACC, INT8, I(-55), I(100), I(2), I(1)),
	A(MULACC, UINT8, I(0), I(16), I(16), I(0)),
	A(MULACC, INT16, I(-1), I(256), I(256), I(-1)),
	A(MULACC, UINT16, I(65535), I(256), I(256), I(-1 & 0xffff)),
	A(MULACC, INT32, I(INT32_MIN), I(INT32_MAX), I(1), I(1)),
	A(MULACC, UINT32, I(0), I(65536), I(65536), I(0)),
	A(MULACC, INT64, I(INT64_MIN), I(INT64_MAX), I(1), I(1)),
	A(MULACC, UINT64, U(0), U(1ULL << 32), U(1ULL << 32), U(0)),
	A(MULACC, INDEX, I(7), I(2), I(3), I(1)),
	A(MULACC, BOOL, I(1), I(0), I(1), I(1)),
	A(MULACC, FLOAT16, F(0x1p-9), F(1 + 0x1p-10), F(1 + 0x1p-10),
	  F(-1)),
	A(MULACC, BFLOAT16, F(0x1p-6), F(1 + 0x1p-7), F(1 + 0x1p-7), F(-1)),
	A(MULACC, FLOAT32, F(0x1p-22), F(1 + 0x1p-23), F(1 + 0x1p-23),
	  F(-1)),
	A(MULACC, FLOAT64, F(0x1p-51), F(1 + 0x1p-52), F(1 + 0x1p-52),
	  F(-1)),
	/* float-only ops, refused on ints and bool */
	A(EXP2, FLOAT16, F(INFINITY), F(16)),
	A(EXP2, FLOAT16, F(0x1p-24), F(-24)),
	A(EXP2, BFLOAT16, F(0x1p100), F(100)),
	A(EXP2, FLOAT32, F(0), F(-150)),
	A(EXP2, FLOAT32, F(0.5), F(-1)),
	A(EXP2, FLOAT64, F(1024), F(10)),
	A(EXP2, FLOAT64, F(0), F(-INFINITY)),
	BAD(EXP2, INT32, I(2)),
	A(LOG2, FLOAT16, F(-INFINITY), F(0)),
	A(LOG2, BFLOAT16, F(-INFINITY), F(-0.0)),
	A(LOG2, FLOAT32, F(NAN), F(-1)),
	A(LOG2, FLOAT32, F(3), F(8)),
	A(LOG2, FLOAT64, F(INFINITY), F(INFINITY)),
	A(LOG2, FLOAT64, F(-1), F(0.5)),
	BAD(LOG2, UINT8, I(2)),
	A(SIN, FLOAT16, F(NAN), F(INFINITY)),
	A(SIN, BFLOAT16, F(0), F(0)),
	A(SIN, FLOAT32, F(NAN), F(-INFINITY)),
	A(SIN, FLOAT64, F(1), F(M_PI / 2)),
	BAD(SIN, INDEX, I(0)),
	A(SQRT, FLOAT16, F(1.4140625), F(2)),
	A(SQRT, BFLOAT16, F(1.4140625), F(2)),
	A(SQRT, FLOAT32, F(NAN), F(-1)),
	A(SQRT, FLOAT32, F(0x1.6a09e6p0), F(2)),
	A(SQRT, FLOAT64, F(-0.0), F(-0.0)),
	BAD(SQRT, INT64, I(4)),
	BAD(SQRT, BOOL, I(1)),
	A(RECIP, FLOAT16, F(-INFINITY), F(-0.0)),
	A(RECIP, BFLOAT16, F(0x1.56p-2), F(3)),
	A(RECIP, FLOAT32, F(INFINITY), F(0.0)),
	A(RECIP, FLOAT32, F(0x1.555556p-2), F(3)),
	A(RECIP, FLOAT64, F(-0.0), F(-INFINITY)),
	A(RECIP, FLOAT16, F(0x1p-16), F(65504)),  /* subnormal, rounded */
	BAD(RECIP, UINT32, I(1)),
};

static int same_result(const alu_case *c, tg_scalar r)
{
	unsigned rs = c->op == TG_CMPLT || c->op == TG_CMPNE ? TG_BOOL : c->s;

	if (tg_scalar_is_float(rs) && isnan(c->r.f))
		return isnan(r.f);
	return tg_scalar_eq(r, c->r, rs);
}

START_TEST(alu_cases_by_op_and_kind)
{
	const alu_case *c = &alu_cases[_i];
	tg_scalar r = U(0xdeadbeef);
	char got[64], want[64];
	unsigned rs = c->op == TG_CMPLT || c->op == TG_CMPNE ? TG_BOOL : c->s;
	int rc = tg_exec_alu(c->op, c->s, c->x, &r);

	ck_assert_msg(rc == c->rc, "line %d: status %d, expected %d", c->line,
	              rc, c->rc);
	if (rc == 0)
		ck_assert_msg(same_result(c, r), "line %d: %s, expected %s",
		              c->line, tg_scalar_format(r, rs, got, sizeof got),
		              tg_scalar_format(c->r, rs, want, sizeof want));
}
END_TEST

/* Every ALU op is covered on every kind it has, and only ALU ops on
 * value kinds are accepted. */
START_TEST(alu_covers_every_op_and_refuses_the_rest)
{
	static const unsigned alu_ops[] = {
		TG_EXP2, TG_LOG2, TG_SIN, TG_SQRT, TG_NEG, TG_RECIP, TG_ADD,
		TG_MUL, TG_IDIV, TG_MAX, TG_MOD, TG_CMPLT, TG_CMPNE, TG_XOR,
		TG_SHL, TG_SHR, TG_OR, TG_AND, TG_THREEFRY, TG_WHERE,
		TG_MULACC,
	};
	tg_scalar x[3] = { I(1), I(1), I(1) }, r;
	unsigned seen[TG_NOPS] = { 0 }, op;
	size_t i;

	for (i = 0; i < TG_ARRAY_LEN(alu_cases); i++)
		seen[alu_cases[i].op] |= 1u << alu_cases[i].s;
	for (i = 0; i < TG_ARRAY_LEN(alu_ops); i++)
		ck_assert_msg(seen[alu_ops[i]], "op %u untested",
		              alu_ops[i]);
	for (i = 0; i < TG_VOID; i++)  /* arithmetic on every kind */
		ck_assert(seen[TG_ADD] & seen[TG_MUL] & seen[TG_NEG] &
		          seen[TG_MAX] & seen[TG_CMPLT] & seen[TG_MULACC] &
		          1u << i);
	for (op = 0; op < TG_NOPS; op++)
		if (op < TG_EXP2)
			ck_assert_int_eq(tg_exec_alu(op, TG_INT32, x, &r),
			                 TG_EINVAL);
	ck_assert_int_eq(tg_exec_alu(TG_NOPS, TG_INT32, x, &r), TG_EINVAL);
	ck_assert_int_eq(tg_exec_alu(TG_ADD, TG_VOID, x, &r), TG_EINVAL);
	ck_assert_int_eq(tg_exec_alu(TG_ADD, 200, x, &r), TG_EINVAL);
}
END_TEST

/* ----------------------------------------------------- casts, bitcasts */

typedef struct cast_case {
	int line;
	unsigned from, to;
	tg_scalar v;
	int rc;
	tg_scalar r;
} cast_case;

#define C(from, to, v, r) { __LINE__, TG_##from, TG_##to, v, 0, r }
#define CBAD(from, to, v) { __LINE__, TG_##from, TG_##to, v, TG_EINVAL, \
	I(0) }

static const cast_case casts[] = {
	C(FLOAT32, INT8, F(3.75), I(3)), C(FLOAT32, INT8, F(-3.75), I(-3)),
	C(FLOAT32, INT8, F(127.9), I(127)),
	C(FLOAT32, INT8, F(-128.9), I(-128)),
	CBAD(FLOAT32, INT8, F(128)), CBAD(FLOAT32, INT8, F(-129)),
	CBAD(FLOAT64, INT32, F(NAN)), CBAD(FLOAT64, INT32, F(INFINITY)),
	C(FLOAT64, UINT8, F(-0.5), I(0)), CBAD(FLOAT64, UINT8, F(-1)),
	C(FLOAT64, UINT8, F(255.5), I(255)), CBAD(FLOAT64, UINT8, F(256)),
	CBAD(FLOAT64, UINT64, F(0x1p64)),
	C(FLOAT64, UINT64, F(0x1p64 - 2048), U(UINT64_MAX - 2047)),
	CBAD(FLOAT64, INT64, F(0x1p63)),
	C(FLOAT64, INT64, F(-0x1p63), I(INT64_MIN)),
	C(FLOAT64, INDEX, F(-1e18), I(-1000000000000000000)),
	C(FLOAT16, UINT16, F(65504), I(65504)),
	C(BFLOAT16, INT32, F(-0x1p30), I(-0x40000000)),
	C(INT32, BOOL, I(256), I(1)), C(FLOAT64, BOOL, F(NAN), I(1)),
	C(FLOAT32, BOOL, F(-0.0), I(0)), C(UINT64, BOOL, U(1ULL << 63), I(1)),
	C(INT32, UINT32, I(-1), I(0xffffffff)),
	C(UINT64, INT64, U(UINT64_MAX), I(-1)),
	C(UINT64, INT8, U(0x17f), I(127)), C(INT64, UINT8, I(-255), I(1)),
	C(INDEX, INT16, I(0x18000), I(-32768)),
	C(BOOL, INT32, I(1), I(1)), C(BOOL, FLOAT32, I(1), F(1)),
	C(UINT64, FLOAT32, U(UINT64_MAX), F(0x1p64)),
	C(UINT64, FLOAT64, U((1ULL << 63) + 1025), F(0x1p63 + 2048)),
	C(INT64, BFLOAT16, I((1LL << 60) + (1LL << 52) + 1),
	  F(0x1p60 + 0x1p53)),
	C(INT32, FLOAT16, I(-70000), F(-INFINITY)),
	C(INT8, FLOAT16, I(-128), F(-128)),
	C(FLOAT64, FLOAT16, F(65520), F(INFINITY)),
	C(FLOAT64, FLOAT16, F(0.1), F(0.0999755859375)),
	C(FLOAT64, BFLOAT16, F(1 + 0x1p-8 + 0x1p-30), F(1 + 0x1p-7)),
	C(FLOAT16, FLOAT64, F(0x1p-24), F(0x1p-24)),
	C(FLOAT64, FLOAT32, F(0x1p-150), F(0)),
	C(FLOAT32, BFLOAT16, F(0x1.fffffep127), F(INFINITY)),
	CBAD(VOID, INT8, I(0)), CBAD(INT8, VOID, I(0)),
};

START_TEST(casts_like_c)
{
	const cast_case *c = &casts[_i];
	tg_scalar r = U(0xdeadbeef);
	int rc = tg_exec_cast(c->v, c->from, c->to, &r);

	ck_assert_msg(rc == c->rc, "line %d: status %d", c->line, rc);
	if (rc == 0)
		ck_assert_msg(tg_scalar_eq(r, c->r, c->to),
		              "line %d: got %" PRIx64, c->line, r.u);
}
END_TEST

START_TEST(bitcasts)
{
	tg_scalar r, v = F(1.0);

	ck_assert_int_eq(tg_exec_bitcast(v, TG_FLOAT32, TG_INT32, &r), 0);
	ck_assert_int_eq(r.i, 0x3f800000);
	ck_assert_int_eq(tg_exec_bitcast(v, TG_FLOAT16, TG_BFLOAT16, &r), 0);
	ck_assert(r.f == 0x1p-7);                     /* bits 0x3c00 */
	ck_assert_int_eq(tg_exec_bitcast(v, TG_FLOAT32, TG_INT64, &r),
	                 TG_EINVAL);
	v.f = -0.0;
	ck_assert_int_eq(tg_exec_bitcast(v, TG_FLOAT64, TG_UINT64, &r), 0);
	ck_assert_uint_eq(r.u, 1ULL << 63);
	ck_assert_int_eq(tg_exec_bitcast(v, TG_FLOAT64, TG_INDEX, &r), 0);
	ck_assert_int_eq(r.i, INT64_MIN);
	v.i = -1;
	ck_assert_int_eq(tg_exec_bitcast(v, TG_INT16, TG_FLOAT16, &r), 0);
	ck_assert(isnan(r.f));
	ck_assert_int_eq(tg_exec_bitcast(r, TG_FLOAT16, TG_UINT16, &r), 0);
	ck_assert_int_eq(r.i, 0xffff);             /* payload kept */
	v.i = 0x7c00;
	ck_assert_int_eq(tg_exec_bitcast(v, TG_UINT16, TG_FLOAT16, &r), 0);
	ck_assert(r.f == INFINITY);
	v.i = 0x7f800001;                          /* signalling NaN */
	ck_assert_int_eq(tg_exec_bitcast(v, TG_INT32, TG_FLOAT32, &r), 0);
	ck_assert_int_eq(tg_exec_bitcast(r, TG_FLOAT32, TG_INT32, &r), 0);
	ck_assert_int_eq(r.i, 0x7f800001);
	v.i = 1;
	ck_assert_int_eq(tg_exec_bitcast(v, TG_INT8, TG_BOOL, &r), 0);
	ck_assert_int_eq(r.i, 1);
	ck_assert_int_eq(tg_exec_bitcast(r, TG_BOOL, TG_UINT8, &r), 0);
	ck_assert_int_eq(r.i, 1);
	v.i = 2;
	ck_assert_int_eq(tg_exec_bitcast(v, TG_INT8, TG_BOOL, &r), TG_EINVAL);
	ck_assert_int_eq(tg_exec_bitcast(v, TG_VOID, TG_VOID, &r), TG_EINVAL);
	v.i = -2;
	ck_assert_int_eq(tg_exec_bitcast(v, TG_INT8, TG_UINT8, &r), 0);
	ck_assert_int_eq(r.i, 254);
}
END_TEST

static Suite *dtype_suite(void)
{
	Suite *s = suite_create("dtype");
	TCase *tc = tcase_create("dtype");

	tcase_add_test(tc, promotion_table);
	tcase_add_test(tc, promotion_of_lists_and_sums);
	tcase_add_test(tc, kind_predicates);
	tcase_add_test(tc, parses_names);
	tcase_add_test(tc, default_float_from_config);
	tcase_add_test(tc, default_float_from_environment);
	tcase_add_test(tc, default_float_from_file);
	tcase_add_test(tc, type_packing_and_text);
	tcase_add_test(tc, float16_rounding);
	tcase_add_test(tc, bfloat16_rounding);
	tcase_add_test(tc, narrow_encodings);
	tcase_add_test(tc, scalar_from_int_wraps_and_rounds);
	tcase_add_test(tc, scalar_bits_and_double);
	tcase_add_test(tc, scalar_equality_and_bounds);
	tcase_add_test(tc, scalar_text);
	tcase_add_loop_test(tc, alu_cases_by_op_and_kind, 0,
	                    (int)TG_ARRAY_LEN(alu_cases));
	tcase_add_test(tc, alu_covers_every_op_and_refuses_the_rest);
	tcase_add_loop_test(tc, casts_like_c, 0, (int)TG_ARRAY_LEN(casts));
	tcase_add_test(tc, bitcasts);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tl_run(dtype_suite());
}

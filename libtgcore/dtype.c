/*
 * dtype.c - element types: sizes, names, scalar-kind properties, the
 * packed full type's text, and promotion.
 *
 * Promotion is tinygrad's lattice (dtype.py, mid-2024): each type lists
 * the types it may be promoted to,
 *
 *   bool -> int8, uint8        int8 -> int16        uint8 -> int16, uint16
 *   int16 -> int32             uint16 -> int32, uint32
 *   int32 -> int64             uint32 -> int64, uint64
 *   int64 -> float16, bfloat16 uint64 -> float16, bfloat16
 *   float16 -> float32         bfloat16 -> float32  float32 -> float64
 *
 * and the least upper bound of a set of types is the lowest-priority
 * type (priority is the enum order) that every one of them can reach.
 * So int64 and uint64 meet at float16, as in tinygrad.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

enum { K_INT = 1, K_UNSIGNED = 2, K_FLOAT = 4 };

/* Per scalar kind: public name, C-ish name (tg_type_format, also
 * accepted by tg_dtype_parse), bytes, value bits, K_* flags. */
static const struct kind {
	const char *name, *cname;
	unsigned char size, bits, flags;
} kinds[] = {
	[TG_BOOL] = { "bool", "bool", 1, 1, 0 },
	[TG_INT8] = { "int8", "char", 1, 8, K_INT },
	[TG_UINT8] = { "uint8", "uchar", 1, 8, K_INT | K_UNSIGNED },
	[TG_INT16] = { "int16", "short", 2, 16, K_INT },
	[TG_UINT16] = { "uint16", "ushort", 2, 16, K_INT | K_UNSIGNED },
	[TG_INT32] = { "int32", "int", 4, 32, K_INT },
	[TG_UINT32] = { "uint32", "uint", 4, 32, K_INT | K_UNSIGNED },
	[TG_INT64] = { "int64", "long", 8, 64, K_INT },
	[TG_UINT64] = { "uint64", "ulong", 8, 64, K_INT | K_UNSIGNED },
	[TG_FLOAT16] = { "float16", "half", 2, 16, K_FLOAT },
	[TG_BFLOAT16] = { "bfloat16", "__bf16", 2, 16, K_FLOAT },
	[TG_FLOAT32] = { "float32", "float", 4, 32, K_FLOAT },
	[TG_FLOAT64] = { "float64", "double", 8, 64, K_FLOAT },
	[TG_INDEX] = { "index", "index", 8, 64, K_INT },
	[TG_VOID] = { "void", "void", 0, 0, 0 },
};
_Static_assert(TG_ARRAY_LEN(kinds) == TG_NSCALARS, "one entry per kind");

#define B(dt) (1u << (dt))

/* The promotion lattice: the types each dtype is directly promoted to.
 * Parents always come later in the enum. */
static const uint16_t parents[] = {
	[TG_BOOL] = B(TG_INT8) | B(TG_UINT8),
	[TG_INT8] = B(TG_INT16),
	[TG_UINT8] = B(TG_INT16) | B(TG_UINT16),
	[TG_INT16] = B(TG_INT32),
	[TG_UINT16] = B(TG_INT32) | B(TG_UINT32),
	[TG_INT32] = B(TG_INT64),
	[TG_UINT32] = B(TG_INT64) | B(TG_UINT64),
	[TG_INT64] = B(TG_FLOAT16) | B(TG_BFLOAT16),
	[TG_UINT64] = B(TG_FLOAT16) | B(TG_BFLOAT16),
	[TG_FLOAT16] = B(TG_FLOAT32),
	[TG_BFLOAT16] = B(TG_FLOAT32),
	[TG_FLOAT32] = B(TG_FLOAT64),
	[TG_FLOAT64] = 0,
};
_Static_assert(TG_ARRAY_LEN(parents) == TG_NDTYPES, "one entry per dtype");

static unsigned flags(unsigned s)
{
	return s < TG_NSCALARS ? kinds[s].flags : 0;
}

size_t tg_dtype_size(tg_dtype dt)
{
	return (unsigned)dt < TG_NDTYPES ? kinds[dt].size : 0;
}

const char *tg_dtype_name(tg_dtype dt)
{
	return (unsigned)dt < TG_NDTYPES ? kinds[dt].name : "invalid";
}

int tg_scalar_is_float(unsigned s)
{
	return (flags(s) & K_FLOAT) != 0;
}

int tg_scalar_is_int(unsigned s)
{
	return (flags(s) & K_INT) != 0;
}

int tg_scalar_is_unsigned(unsigned s)
{
	return (flags(s) & K_UNSIGNED) != 0;
}

int tg_scalar_is_half(unsigned s)
{
	return s == TG_FLOAT16 || s == TG_BFLOAT16;
}

unsigned tg_scalar_bits(unsigned s)
{
	return s < TG_NSCALARS ? kinds[s].bits : 0;
}

int tg_dtype_is_float(tg_dtype dt)
{
	return (unsigned)dt < TG_NDTYPES && tg_scalar_is_float(dt);
}

int tg_dtype_is_int(tg_dtype dt)
{
	return (unsigned)dt < TG_NDTYPES && tg_scalar_is_int(dt);
}

int tg_dtype_is_unsigned(tg_dtype dt)
{
	return (unsigned)dt < TG_NDTYPES && tg_scalar_is_unsigned(dt);
}

/* "float4", "__local half*": a name ending in a digit gets an "x"
 * before the width ("__bf16x4"). */
const char *tg_type_format(tg_type t, char *buf, size_t n)
{
	static const char *const space[] = { "", "", "__local ", "" };
	unsigned s = tg_type_scalar(t), count = tg_type_count(t);
	const char *name = s < TG_NSCALARS ? kinds[s].cname : "?";
	char last = name[strlen(name) - 1], width[16] = "";

	if (count > 1)
		snprintf(width, sizeof width, "%s%u",
		         last >= '0' && last <= '9' ? "x" : "", count);
	snprintf(buf, n, "%s%s%s%s", space[tg_type_space(t)], name, width,
	         tg_type_is_ptr(t) ? "*" : "");
	return buf;
}

/* Every dtype dt can be promoted to, dt included, as a bit set. */
static unsigned upward(unsigned dt)
{
	unsigned set = B(dt), p;

	for (p = dt + 1; p < TG_NDTYPES; p++)
		if (parents[dt] & B(p))
			set |= upward(p);
	return set;
}

/* The lowest-priority dtype both can reach; TG_NDTYPES when either is
 * outside the enum. */
tg_dtype tg_dtype_lub(tg_dtype a, tg_dtype b)
{
	unsigned common, dt;

	if ((unsigned)a >= TG_NDTYPES || (unsigned)b >= TG_NDTYPES)
		return TG_NDTYPES;
	common = upward(a) & upward(b);  /* never empty: float64 */
	for (dt = 0; !(common & B(dt)); dt++)
		;
	return (tg_dtype)dt;
}

tg_dtype tg_dtype_least_upper(tg_dtype a, tg_dtype b)
{
	return tg_dtype_lub(a, b);
}

/* Folds tg_dtype_lub from bool, which every dtype can reach from: the
 * bound of no types is bool. */
tg_dtype tg_dtype_lub_n(const tg_dtype *dts, size_t n)
{
	tg_dtype acc = TG_BOOL;
	size_t i;

	for (i = 0; i < n; i++)
		acc = tg_dtype_lub(acc, dts[i]);
	return acc;
}

tg_dtype tg_dtype_lub_float(tg_dtype dt)
{
	return tg_scalar_is_float(dt) ? dt : tg_dtype_lub(dt, TG_FLOAT32);
}

/* tinygrad's sum_acc_dtype: sums of small ints accumulate in 32 bits. */
tg_dtype tg_dtype_sum_acc(tg_dtype dt)
{
	if (tg_scalar_is_unsigned(dt))
		return tg_dtype_lub(dt, TG_UINT32);
	if (tg_scalar_is_int(dt) || dt == TG_BOOL)
		return tg_dtype_lub(dt, TG_INT32);
	return tg_dtype_lub(dt, TG_FLOAT32);
}

/* Public or C-ish name, any case ("HALF" as tinygrad's DEFAULT_FLOAT
 * takes it). */
int tg_dtype_parse(const char *name, tg_dtype *out)
{
	unsigned dt;

	for (dt = 0; name && dt < TG_NDTYPES; dt++) {
		if (tg_streq_ci(name, kinds[dt].name) ||
		    tg_streq_ci(name, kinds[dt].cname)) {
			*out = (tg_dtype)dt;
			return 0;
		}
	}
	return TG_EINVAL;
}

/*
 * dtype.c - element types: sizes and names.  (The IR core extends this
 * with promotion rules and scalar semantics.)
 */
#include "config.h"

#include "core.h"

static const struct {
	const char *name;
	unsigned char size;
} dtypes[] = {
	[TG_BOOL] = { "bool", 1 },       [TG_INT8] = { "int8", 1 },
	[TG_UINT8] = { "uint8", 1 },     [TG_INT16] = { "int16", 2 },
	[TG_UINT16] = { "uint16", 2 },   [TG_INT32] = { "int32", 4 },
	[TG_UINT32] = { "uint32", 4 },   [TG_INT64] = { "int64", 8 },
	[TG_UINT64] = { "uint64", 8 },   [TG_FLOAT16] = { "float16", 2 },
	[TG_BFLOAT16] = { "bfloat16", 2 }, [TG_FLOAT32] = { "float32", 4 },
	[TG_FLOAT64] = { "float64", 8 },
};
_Static_assert(TG_ARRAY_LEN(dtypes) == TG_NDTYPES, "one entry per dtype");

size_t tg_dtype_size(tg_dtype dt)
{
	return (unsigned)dt < TG_NDTYPES ? dtypes[dt].size : 0;
}

const char *tg_dtype_name(tg_dtype dt)
{
	return (unsigned)dt < TG_NDTYPES ? dtypes[dt].name : "invalid";
}

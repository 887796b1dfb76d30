/*
 * nn/ggml.c - GGML's element types: names and block sizes, as ggml.h and
 * ggml.c define them (type_traits), shared by the GGUF reader and the
 * decoding of quantized blocks.  A table, so that a type is one row.
 */
#include "config.h"

#include "core.h"

static const struct {
	const char *name;
	unsigned short elems, bytes;
} types[TG_GGML_NTYPES] = {
	[TG_GGML_F32] = { "F32", 1, 4 },
	[TG_GGML_F16] = { "F16", 1, 2 },
	/* f16 d, 16 bytes of 4-bit values */
	[TG_GGML_Q4_0] = { "Q4_0", 32, 18 },
	/* f16 d and m, 16 bytes of 4-bit values */
	[TG_GGML_Q4_1] = { "Q4_1", 32, 20 },
	/* f16 d, 4 bytes of fifth bits, 16 bytes of 4-bit values */
	[TG_GGML_Q5_0] = { "Q5_0", 32, 22 },
	[TG_GGML_Q5_1] = { "Q5_1", 32, 24 },
	/* f16 d, 32 int8 */
	[TG_GGML_Q8_0] = { "Q8_0", 32, 34 },
	/* f16 d and s, 32 int8 */
	[TG_GGML_Q8_1] = { "Q8_1", 32, 36 },
	/* super-blocks of 256 values (QK_K) */
	[TG_GGML_Q2_K] = { "Q2_K", 256, 84 },
	[TG_GGML_Q3_K] = { "Q3_K", 256, 110 },
	[TG_GGML_Q4_K] = { "Q4_K", 256, 144 },
	[TG_GGML_Q5_K] = { "Q5_K", 256, 176 },
	[TG_GGML_Q6_K] = { "Q6_K", 256, 210 },
	[TG_GGML_Q8_K] = { "Q8_K", 256, 292 },
	[TG_GGML_IQ2_XXS] = { "IQ2_XXS", 256, 66 },
	[TG_GGML_IQ2_XS] = { "IQ2_XS", 256, 74 },
	[TG_GGML_IQ3_XXS] = { "IQ3_XXS", 256, 98 },
	[TG_GGML_IQ1_S] = { "IQ1_S", 256, 50 },
	[TG_GGML_IQ4_NL] = { "IQ4_NL", 32, 18 },
	[TG_GGML_IQ3_S] = { "IQ3_S", 256, 110 },
	[TG_GGML_IQ2_S] = { "IQ2_S", 256, 82 },
	[TG_GGML_IQ4_XS] = { "IQ4_XS", 256, 136 },
	[TG_GGML_I8] = { "I8", 1, 1 },
	[TG_GGML_I16] = { "I16", 1, 2 },
	[TG_GGML_I32] = { "I32", 1, 4 },
	[TG_GGML_I64] = { "I64", 1, 8 },
	[TG_GGML_F64] = { "F64", 1, 8 },
	[TG_GGML_IQ1_M] = { "IQ1_M", 256, 56 },
	[TG_GGML_BF16] = { "BF16", 1, 2 },
	[TG_GGML_TQ1_0] = { "TQ1_0", 256, 54 },
	[TG_GGML_TQ2_0] = { "TQ2_0", 256, 66 },
	[TG_GGML_MXFP4] = { "MXFP4", 32, 17 },
};

const char *tg_ggml_type_name(int type)
{
	return type >= 0 && type < TG_GGML_NTYPES ? types[type].name : NULL;
}

int tg_ggml_type_block(int type, size_t *elems, size_t *bytes)
{
	if (!tg_ggml_type_name(type))
		return tg_error(TG_EINVAL, "ggml: type %d is not a GGML type",
		                type);
	if (elems)
		*elems = types[type].elems;
	if (bytes)
		*bytes = types[type].bytes;
	return TG_OK;
}

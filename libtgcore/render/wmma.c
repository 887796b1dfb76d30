/*
 * render/wmma.c - the matrix instructions the core lowers a tensor
 * core to (tinygrad's WMMA uops and their renderer helpers): each
 * one's fragment layout, in the kernel's digits (codegen.h), and the
 * helper that wraps the instruction.
 *
 * CUDA's mma.sync.m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16
 * with floating point type"): lane t of the warp has groupID g = t/4
 * and thread-in-group i = t%4.  It holds A (row-major 16x16) at rows
 * g, g+8 and columns 2i, 2i+1, 2i+8, 2i+9, as a0..a7 = (g,2i) (g,2i+1)
 * (g+8,2i) (g+8,2i+1) (g,2i+8) (g,2i+9) (g+8,2i+8) (g+8,2i+9); B
 * (column-major 16x8) at column g and rows 2i, 2i+1, 2i+8, 2i+9; C
 * (16x8) at (g,2i) (g,2i+1) (g+8,2i) (g+8,2i+1).
 *
 * The kernel's digits, with the splits UPCAST(N,2) LOCAL(N,4)
 * UPCAST(M,2) LOCAL(M,8): lane = lidx0 + 4*lidx1 (i = lidx0, g =
 * lidx1); C's column 2i + n names the kernel's column 2*lidx0 + nd (nd
 * N's digit), its row g + 8*md the kernel's row 2*lidx1 + md.  K's
 * hardware index 2i + k0 + 8*k1 names the kernel's 4*lidx0 + (k0 +
 * 2*k1), the unrolled digit kd = k0 + 2*k1: so a_k = {0,1,0,1,2,3,2,3},
 * a_m = {0,0,1,1,0,0,1,1}, b_k = {0,1,2,3}, c_n = {0,1,0,1}, c_m =
 * {0,0,1,1}.  B's column g is the kernel's column 2*(g/2) + g%2 of C's
 * naming: lowering reads B with N's local index g/2 and digit g%2.
 */
#include "config.h"

#include "render/render.h"

static const tg_wmma table[] = {
	{
		.dialect = TG_DIALECT_CUDA, .dims = { 8, 16, 16 },
		.dtype_in = TG_FLOAT16, .dtype_out = TG_FLOAT32,
		.fn = "tg_mma_m16n8k16_f16_f32",
		.def = "__device__ __forceinline__ tg_float4 "
		       "tg_mma_m16n8k16_f16_f32(tg_half8 a, tg_half4 b, "
		       "tg_float4 c)\n"
		       "{ const unsigned *pa = (const unsigned *)a.v, "
		       "*pb = (const unsigned *)b.v;\n"
		       "  asm(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16."
		       "f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
		       "{%0,%1,%2,%3};\"\n"
		       "      : \"+f\"(c.v[0]), \"+f\"(c.v[1]), \"+f\"(c.v[2]), "
		       "\"+f\"(c.v[3])\n"
		       "      : \"r\"(pa[0]), \"r\"(pa[1]), \"r\"(pa[2]), "
		       "\"r\"(pa[3]), \"r\"(pb[0]), \"r\"(pb[1]));\n"
		       "  return c; }\n",
		.nup = 2, .nloc = 4, .mup = 2, .mloc = 8, .kthreads = 4,
		.na = 8, .nb = 4, .nc = 4,
		.a_k = { 0, 1, 0, 1, 2, 3, 2, 3 },
		.a_m = { 0, 0, 1, 1, 0, 0, 1, 1 },
		.b_k = { 0, 1, 2, 3 },
		.c_n = { 0, 1, 0, 1 },
		.c_m = { 0, 0, 1, 1 },
	},
};

/* Whether t's splits are the ones the layout is written for. */
static int splits_match(const tg_wmma *w, const struct tg_tensor_core *t)
{
	const struct tg_tc_split want[4] = {
		{ TG_TC_UPCAST, 0, w->nup }, { TG_TC_LOCAL, 0, w->nloc },
		{ TG_TC_UPCAST, 1, w->mup }, { TG_TC_LOCAL, 1, w->mloc },
	};

	if (t->nsplits != 4)
		return 0;
	for (size_t i = 0; i < 4; i++)
		if (t->splits[i].kind != want[i].kind ||
		    t->splits[i].dim != want[i].dim ||
		    t->splits[i].amt != want[i].amt)
			return 0;
	return 1;
}

const tg_wmma *tg_wmma_find(int dialect, const struct tg_tensor_core *t)
{
	for (size_t i = 0; t && i < TG_ARRAY_LEN(table); i++) {
		const tg_wmma *w = &table[i];
		if (w->dialect == dialect && t->dtype_in == w->dtype_in &&
		    t->dtype_out == w->dtype_out && t->dims[0] == w->dims[0] &&
		    t->dims[1] == w->dims[1] && t->dims[2] == w->dims[2] &&
		    splits_match(w, t))
			return w;
	}
	return NULL;
}

const tg_wmma *tg_wmma_get(int64_t i)
{
	return i >= 0 && (size_t)i < TG_ARRAY_LEN(table) ? &table[i] : NULL;
}

int64_t tg_wmma_index(const tg_wmma *w)
{
	return w - table;
}

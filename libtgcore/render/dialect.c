/*
 * render/dialect.c - the dialects of the C-family renderer: C (the CPU
 * plugin's shared objects), OpenCL C and GLSL compute shaders (compiled
 * to SPIR-V), as in tinygrad's renderer/cstyle.py, where one walker
 * serves every C-like language and each language is a table.
 *
 * Here: the type names, how constants are written, the helper functions
 * a kernel may need (bfloat16 conversions, Threefry2x32), and the text
 * around the body (headers, signature, launch indices).
 *
 * The GPU dialects index with 32-bit ints (as tinygrad does): buffers of
 * more than 2^31 elements are not supported there.
 *
 * CUDA C is C++ compiled by NVRTC: half comes from cuda_fp16.h (included
 * only when a kernel uses it), bfloat16 lives as its bits as in OpenCL,
 * and bitcasts are the driver's intrinsics (render_c.c).  A kernel
 * without work-group indices runs on a flat id the plugin launches in
 * blocks of its choosing, bounded by the total.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"

static const tg_cdialect dialect_c = {
	.id = TG_DIALECT_C, .name = "C",
	.type = {
		[TG_BOOL] = "_Bool", [TG_INT8] = "signed char",
		[TG_UINT8] = "unsigned char", [TG_INT16] = "short",
		[TG_UINT16] = "unsigned short", [TG_INT32] = "int",
		[TG_UINT32] = "unsigned int", [TG_INT64] = "long",
		[TG_UINT64] = "unsigned long", [TG_FLOAT16] = "_Float16",
		[TG_BFLOAT16] = "unsigned short", [TG_FLOAT32] = "float",
		[TG_FLOAT64] = "double", [TG_INDEX] = "long",
	},
	.qual = "const ", .acc_qual = "", .vec = TG_CVEC_GCC, .body_depth = 2,
};

static const tg_cdialect dialect_opencl = {
	.id = TG_DIALECT_OPENCL, .name = "OpenCL C",
	.type = {
		[TG_BOOL] = "bool", [TG_INT8] = "char", [TG_UINT8] = "uchar",
		[TG_INT16] = "short", [TG_UINT16] = "ushort",
		[TG_INT32] = "int", [TG_UINT32] = "uint", [TG_INT64] = "long",
		[TG_UINT64] = "ulong", [TG_FLOAT16] = "half",
		[TG_BFLOAT16] = "ushort", [TG_FLOAT32] = "float",
		[TG_FLOAT64] = "double", [TG_INDEX] = "int",
	},
	/* bool is not a legal kernel pointer type */
	.stored = { [TG_BOOL] = "uchar" },
	.qual = "const ", .acc_qual = "", .vec = TG_CVEC_OPENCL,
	.body_depth = 1,
};

static const tg_cdialect dialect_glsl = {
	.id = TG_DIALECT_GLSL, .name = "GLSL",
	.type = {
		[TG_BOOL] = "bool", [TG_INT8] = "int8_t",
		[TG_UINT8] = "uint8_t", [TG_INT16] = "int16_t",
		[TG_UINT16] = "uint16_t", [TG_INT32] = "int",
		[TG_UINT32] = "uint", [TG_INT64] = "int64_t",
		[TG_UINT64] = "uint64_t", [TG_FLOAT16] = "float16_t",
		[TG_BFLOAT16] = "uint16_t", [TG_FLOAT32] = "float",
		[TG_FLOAT64] = "double", [TG_INDEX] = "int",
	},
	.stored = { [TG_BOOL] = "uint8_t" },
	/* GLSL's const wants a constant expression; precise keeps the
	 * driver from contracting into fma or folding x*0 to 0 (which is
	 * NaN for x = inf) */
	.qual = "precise ", .acc_qual = "precise ", .ctor_cast = 1, .vec = TG_CVEC_NONE, .native_wrap = 1,
	.body_depth = 1,
};

static const tg_cdialect dialect_cuda = {
	.id = TG_DIALECT_CUDA, .name = "CUDA C",
	.type = {
		[TG_BOOL] = "bool", [TG_INT8] = "signed char",
		[TG_UINT8] = "unsigned char", [TG_INT16] = "short",
		[TG_UINT16] = "unsigned short", [TG_INT32] = "int",
		[TG_UINT32] = "unsigned int", [TG_INT64] = "long long",
		[TG_UINT64] = "unsigned long long", [TG_FLOAT16] = "half",
		[TG_BFLOAT16] = "unsigned short", [TG_FLOAT32] = "float",
		[TG_FLOAT64] = "double", [TG_INDEX] = "int",
	},
	.qual = "const ", .acc_qual = "", .vec = TG_CVEC_CUDA, .body_depth = 1,
};

const tg_cdialect *tg_cdialect_get(int dialect)
{
	switch (dialect) {
	case TG_DIALECT_C: return &dialect_c;
	case TG_DIALECT_OPENCL: return &dialect_opencl;
	case TG_DIALECT_CUDA: return &dialect_cuda;
	case TG_DIALECT_GLSL: return &dialect_glsl;
	default: return NULL;
	}
}

/* ------------------------------------------------------------ constants */

static void int_const(const tg_cdialect *d, tg_strbuf *sb, tg_scalar v,
                      unsigned s)
{
	const char *t = d->type[s];

	if (d->id != TG_DIALECT_GLSL) {
		if (s == TG_UINT64)
			tg_strbuf_addf(sb, "((%s)%" PRIu64 "UL)", t, v.u);
		else if (v.i == INT64_MIN)
			tg_strbuf_add(sb, "(-9223372036854775807L-1L)");
		else if (s == TG_INDEX)
			tg_strbuf_addf(sb, v.i < 0 ? "(%" PRId64 ")" : "%" PRId64,
			               v.i);
		else
			tg_strbuf_addf(sb, "((%s)%" PRId64 "L)", t, v.i);
		return;
	}
	switch (s) {
	case TG_UINT64:
		tg_strbuf_addf(sb, "%" PRIu64 "ul", v.u);
		return;
	case TG_INT64:
		if (v.i == INT64_MIN)
			tg_strbuf_add(sb, "(-9223372036854775807l-1l)");
		else
			tg_strbuf_addf(sb, v.i < 0 ? "(%" PRId64 "l)"
			                           : "%" PRId64 "l", v.i);
		return;
	case TG_UINT32:
		tg_strbuf_addf(sb, "%" PRIu64 "u", v.u & 0xffffffffu);
		return;
	case TG_INT32: case TG_INDEX:
		if (v.i == INT32_MIN)
			tg_strbuf_add(sb, "(-2147483647-1)");
		else
			tg_strbuf_addf(sb, v.i < 0 ? "(%" PRId64 ")" : "%" PRId64,
			               v.i);
		return;
	default: /* 8 and 16 bits: a constructor of an int literal */
		tg_strbuf_addf(sb, "%s(%" PRId64 ")", t, v.i);
	}
}

/* A finite float constant: exact hex in C-like dialects; GLSL has no
 * hex floats, so enough decimal digits to round-trip. */
static void finite_const(const tg_cdialect *d, tg_strbuf *sb, double f,
                         unsigned s)
{
	if (d->id == TG_DIALECT_GLSL) {
		const char *fmt = s == TG_FLOAT64 ? "%.17e" : "%.9e";
		char num[64];
		snprintf(num, sizeof num, fmt, f);
		if (s == TG_FLOAT16)
			tg_strbuf_addf(sb, "float16_t(%s)", num);
		else
			tg_strbuf_addf(sb, f < 0 ? "(%s%s)" : "%s%s", num,
			               s == TG_FLOAT64 ? "lf" : "");
		return;
	}
	if (s == TG_FLOAT16)
		tg_strbuf_addf(sb, "((%s)%af)", d->type[s], f);
	else
		tg_strbuf_addf(sb, "(%a%s)", f, s == TG_FLOAT64 ? "" : "f");
}

static void nonfinite_const(const tg_cdialect *d, tg_strbuf *sb, double f,
                            unsigned s)
{
	const char *neg = f < 0 ? "-" : "";

	switch (d->id) {
	case TG_DIALECT_C: {
		const char *pre = s == TG_FLOAT16 ? "((_Float16)" : "(";
		const char *suf = s == TG_FLOAT64 ? "" : "f";
		if (isnan(f))
			tg_strbuf_addf(sb, "%s__builtin_nan%s(\"\"))", pre, suf);
		else
			tg_strbuf_addf(sb, "%s%s__builtin_inf%s())", pre, neg, suf);
		return;
	}
	case TG_DIALECT_OPENCL:
		tg_strbuf_addf(sb, "((%s)(%s%s))", d->type[s], neg,
		               isnan(f) ? "NAN" : "INFINITY");
		return;
	case TG_DIALECT_CUDA: {
		/* no NAN/INFINITY macros without headers: the bits */
		const char *bits = isnan(f) ? "0x7fc00000" : f < 0
		                   ? "0xff800000u" : "0x7f800000";
		if (s == TG_FLOAT32)
			tg_strbuf_addf(sb, "__int_as_float((int)%s)", bits);
		else
			tg_strbuf_addf(sb, "((%s)__int_as_float((int)%s))",
			               d->type[s], bits);
		return;
	}
	default: {
		const char *bits = isnan(f) ? "0x7fc00000u"
		                   : f < 0 ? "0xff800000u" : "0x7f800000u";
		if (s == TG_FLOAT32)
			tg_strbuf_addf(sb, "uintBitsToFloat(%s)", bits);
		else
			tg_strbuf_addf(sb, "%s(uintBitsToFloat(%s))", d->type[s],
			               bits);
	}
	}
}

void tg_cdialect_const(const tg_cdialect *d, tg_strbuf *sb, tg_scalar v,
                       unsigned s)
{
	switch (s) {
	case TG_BOOL:
		if (d->id == TG_DIALECT_C)
			tg_strbuf_add(sb, v.i ? "((_Bool)1)" : "((_Bool)0)");
		else
			tg_strbuf_add(sb, v.i ? "true" : "false");
		return;
	case TG_BFLOAT16:
		if (d->ctor_cast)
			tg_strbuf_addf(sb, "%s(0x%04xu)", d->type[s],
			               (unsigned)tg_bf16_bits(v.f));
		else
			tg_strbuf_addf(sb, "((%s)0x%04x)", d->type[s],
			               (unsigned)tg_bf16_bits(v.f));
		return;
	case TG_FLOAT16: case TG_FLOAT32: case TG_FLOAT64:
		if (isfinite(v.f))
			finite_const(d, sb, v.f, s);
		else
			nonfinite_const(d, sb, v.f, s);
		return;
	default:
		int_const(d, sb, v, s);
	}
}

/* -------------------------------------------------------------- helpers */

/* bfloat16 values live as their bits; arithmetic converts to float and
 * rounds back to nearest even (NaN stays a quiet NaN). */
static const char bf16_c[] =
	"static inline float tg_bf2f(unsigned short x)\n"
	"{ unsigned int u = (unsigned int)x << 16; float f;\n"
	"  __builtin_memcpy(&f, &u, 4); return f; }\n"
	"static inline unsigned short tg_f2bf(float f)\n"
	"{ unsigned int u; __builtin_memcpy(&u, &f, 4);\n"
	"  if ((u & 0x7fffffffu) > 0x7f800000u)\n"
	"    return (unsigned short)((u >> 16) | 0x40u);\n"
	"  u += 0x7fffu + ((u >> 16) & 1u);\n"
	"  return (unsigned short)(u >> 16); }\n";
static const char bf16_opencl[] =
	"inline float tg_bf2f(ushort x) { return as_float((uint)x << 16); }\n"
	"inline ushort tg_f2bf(float f)\n"
	"{ uint u = as_uint(f);\n"
	"  if ((u & 0x7fffffffu) > 0x7f800000u)\n"
	"    return (ushort)((u >> 16) | 0x40u);\n"
	"  u += 0x7fffu + ((u >> 16) & 1u);\n"
	"  return (ushort)(u >> 16); }\n";
static const char bf16_cuda[] =
	"__device__ inline float tg_bf2f(unsigned short x)\n"
	"{ return __uint_as_float((unsigned int)x << 16); }\n"
	"__device__ inline unsigned short tg_f2bf(float f)\n"
	"{ unsigned int u = __float_as_uint(f);\n"
	"  if ((u & 0x7fffffffu) > 0x7f800000u)\n"
	"    return (unsigned short)((u >> 16) | 0x40u);\n"
	"  u += 0x7fffu + ((u >> 16) & 1u);\n"
	"  return (unsigned short)(u >> 16); }\n";
static const char bf16_glsl[] =
	"float tg_bf2f(uint16_t x) { return uintBitsToFloat(uint(x) << 16); }\n"
	"uint16_t tg_f2bf(float f)\n"
	"{ uint u = floatBitsToUint(f);\n"
	"  if ((u & 0x7fffffffu) > 0x7f800000u)\n"
	"    return uint16_t((u >> 16) | 0x40u);\n"
	"  u += 0x7fffu + ((u >> 16) & 1u);\n"
	"  return uint16_t(u >> 16); }\n";

/* Threefry2x32 with 5 rounds of 4 (the constant folder's function in
 * ir/alu.c): counter x and key as two 32-bit words each, low word
 * first; the result's words likewise. */
static const char threefry_c[] =
	"static inline uint64_t tg_threefry(uint64_t x, uint64_t key)\n"
	"{ static const unsigned char r[8] = {13,15,26,6,17,29,16,24};\n"
	"  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);\n"
	"  uint32_t ks[3] = { k1, k0 ^ k1 ^ 0x1BD11BDAu, k0 };\n"
	"  uint32_t a = (uint32_t)x + ks[2], b = (uint32_t)(x >> 32) + ks[0];\n"
	"  for (unsigned i = 0; i < 5; i++) {\n"
	"    for (unsigned j = 0; j < 4; j++) {\n"
	"      unsigned s = r[i % 2 * 4 + j];\n"
	"      a += b; b = ((b << s) | (b >> (32 - s))) ^ a;\n"
	"    }\n"
	"    a += ks[i % 3]; b += ks[(i + 1) % 3] + i + 1;\n"
	"  }\n"
	"  return (uint64_t)b << 32 | a; }\n";
static const char threefry_opencl[] =
	"inline ulong tg_threefry(ulong x, ulong key)\n"
	"{ const uchar r[8] = {13,15,26,6,17,29,16,24};\n"
	"  uint k0 = (uint)key, k1 = (uint)(key >> 32);\n"
	"  uint ks[3] = { k1, k0 ^ k1 ^ 0x1BD11BDAu, k0 };\n"
	"  uint a = (uint)x + ks[2], b = (uint)(x >> 32) + ks[0];\n"
	"  for (uint i = 0; i < 5; i++) {\n"
	"    for (uint j = 0; j < 4; j++) {\n"
	"      uint s = r[i % 2 * 4 + j];\n"
	"      a += b; b = ((b << s) | (b >> (32 - s))) ^ a;\n"
	"    }\n"
	"    a += ks[i % 3]; b += ks[(i + 1) % 3] + i + 1;\n"
	"  }\n"
	"  return (ulong)b << 32 | a; }\n";
static const char threefry_cuda[] =
	"__device__ inline unsigned long long tg_threefry(unsigned long long x,"
	" unsigned long long key)\n"
	"{ const unsigned char r[8] = {13,15,26,6,17,29,16,24};\n"
	"  unsigned int k0 = (unsigned int)key, k1 = (unsigned int)(key >> 32);\n"
	"  unsigned int ks[3] = { k1, k0 ^ k1 ^ 0x1BD11BDAu, k0 };\n"
	"  unsigned int a = (unsigned int)x + ks[2];\n"
	"  unsigned int b = (unsigned int)(x >> 32) + ks[0];\n"
	"  for (unsigned int i = 0; i < 5; i++) {\n"
	"    for (unsigned int j = 0; j < 4; j++) {\n"
	"      unsigned int s = r[i % 2 * 4 + j];\n"
	"      a += b; b = ((b << s) | (b >> (32 - s))) ^ a;\n"
	"    }\n"
	"    a += ks[i % 3]; b += ks[(i + 1) % 3] + i + 1;\n"
	"  }\n"
	"  return (unsigned long long)b << 32 | a; }\n";
static const char threefry_glsl[] =
	"uint64_t tg_threefry(uint64_t x, uint64_t key)\n"
	"{ const uint r[8] = uint[8](13u,15u,26u,6u,17u,29u,16u,24u);\n"
	"  uint k0 = uint(key), k1 = uint(key >> 32);\n"
	"  uint ks[3] = uint[3](k1, k0 ^ k1 ^ 0x1BD11BDAu, k0);\n"
	"  uint a = uint(x) + ks[2], b = uint(x >> 32) + ks[0];\n"
	"  for (uint i = 0u; i < 5u; i++) {\n"
	"    for (uint j = 0u; j < 4u; j++) {\n"
	"      uint s = r[i % 2u * 4u + j];\n"
	"      a += b; b = ((b << s) | (b >> (32u - s))) ^ a;\n"
	"    }\n"
	"    a += ks[i % 3u]; b += ks[(i + 1u) % 3u] + i + 1u;\n"
	"  }\n"
	"  return uint64_t(b) << 32 | uint64_t(a); }\n";

static void helpers(const tg_cdialect *d, const tg_ckernel *k,
                    tg_strbuf *sb)
{
	int i = d->id == TG_DIALECT_C ? 0 : d->id == TG_DIALECT_OPENCL ? 1
	        : d->id == TG_DIALECT_CUDA ? 3 : 2;
	static const char *const bf16[4] = { bf16_c, bf16_opencl, bf16_glsl,
	                                     bf16_cuda };
	static const char *const tf[4] = { threefry_c, threefry_opencl,
	                                   threefry_glsl, threefry_cuda };

	if (k->use_bf16)
		tg_strbuf_add(sb, bf16[i]);
	if (k->use_threefry)
		tg_strbuf_add(sb, tf[i]);
}

/* The element type of buffer or shared array p. */
static const char *elem_type(const tg_cdialect *d, const tg_cparam *p)
{
	return d->stored[p->kind] ? d->stored[p->kind] : d->type[p->kind];
}

/* ------------------------------------------------------------------- C */

static const char *const vec_c_name[TG_NSCALARS] = {
	[TG_INT8] = "char", [TG_UINT8] = "uchar", [TG_INT16] = "short",
	[TG_UINT16] = "ushort", [TG_INT32] = "int", [TG_UINT32] = "uint",
	[TG_INT64] = "long", [TG_INDEX] = "long", [TG_UINT64] = "ulong",
	[TG_FLOAT16] = "half", [TG_FLOAT32] = "float",
	[TG_FLOAT64] = "double",
};

/* tg_fma_float16(a, b, c): a fused multiply-add per lane.  GCC and
 * Clang have no vector fma builtin in common, but compile this loop of
 * fmaf to one vector fma instruction where the machine has one. */
static void fma_helper(tg_strbuf *sb, const char *type, const char *vn,
                       unsigned w)
{
	const char *f = strcmp(type, "double") ? "__builtin_fmaf"
	                                       : "__builtin_fma";

	tg_strbuf_addf(sb, "static inline __attribute__((always_inline)) "
	               "tg_%s%u tg_fma_tg_%s%u(tg_%s%u a, tg_%s%u b, "
	               "tg_%s%u c)\n{ tg_%s%u r; for (int i = 0; i < %u; i++) "
	               "r[i] = %s(a[i], b[i], c[i]); return r; }\n",
	               vn, w, vn, w, vn, w, vn, w, vn, w, vn, w, w, f);
}

/* The launch indices of a C kernel with a launch block of b work-
 * items on gidx0: b consecutive gidx0 first, then gidx1, then gidx2,
 * then the next block of gidx0. */
static void c_blocked_ids(const tg_ckernel *k, tg_strbuf *sb)
{
	tg_strbuf_addf(sb, "\t\tconst size_t tg_r = tg_i / %zu;\n", k->lblock);
	if (k->gidx_used[0])
		tg_strbuf_addf(sb, "\t\tconst long gidx0 = (long)(tg_r / "
		               "(global[1] * global[2]) * %zu + tg_i %% %zu);\n",
		               k->lblock, k->lblock);
	if (k->gidx_used[1])
		tg_strbuf_add(sb, "\t\tconst long gidx1 = "
		              "(long)(tg_r % global[1]);\n");
	if (k->gidx_used[2])
		tg_strbuf_add(sb, "\t\tconst long gidx2 = "
		              "(long)(tg_r / global[1] % global[2]);\n");
}

/* The loop over a C kernel's items [lo, hi).  With reduce passes, the
 * items of each launch block (of the whole range without one) run
 * once per pass kidx0 before the next block: tg_bend is where the
 * block of item b ends. */
static void c_item_loop(const tg_ckernel *k, tg_strbuf *sb)
{
	if (!k->npass) {
		tg_strbuf_add(sb, "\tfor (size_t tg_i = lo; tg_i < hi; "
		              "tg_i++) {\n");
		return;
	}
	if (k->lblock)
		tg_strbuf_addf(sb, "\tconst size_t tg_bn = %zu * global[1] * "
		               "global[2];\n", k->lblock);
	else
		tg_strbuf_add(sb, "\tconst size_t tg_bn = hi;\n");
	tg_strbuf_addf(sb,
	               "\tfor (size_t tg_b = lo; tg_b < hi; "
	               "tg_b = tg_bend(tg_b, hi, tg_bn))\n"
	               "\tfor (long kidx0 = 0; kidx0 < %lld; kidx0++)\n"
	               "\tfor (size_t tg_i = tg_b; tg_i < tg_bend(tg_b, hi, "
	               "tg_bn); tg_i++) {\n", (long long)k->npass);
}

static void wrap_c(const tg_cdialect *d, const tg_ckernel *k,
                   tg_strbuf *sb)
{
	tg_strbuf_add(sb, "#include <stddef.h>\n#include <stdint.h>\n");
	for (unsigned s = 0; s < TG_NSCALARS; s++)
		for (unsigned w = 1; w < 7; w++)
			if (k->vec_used[s] & (1u << w))
				tg_strbuf_addf(sb, "typedef %s tg_%s%u "
				               "__attribute__((vector_size(%zu)));\n",
				               d->type[s], vec_c_name[s], 1u << w,
				               (size_t)(1u << w) *
				               (tg_scalar_bits(s) / 8));
	for (unsigned s = 0; s < TG_NSCALARS; s++)
		for (unsigned w = 1; w < 7; w++)
			if (k->fma_used[s] & (1u << w))
				fma_helper(sb, d->type[s], vec_c_name[s], 1u << w);
	helpers(d, k, sb);
	if (k->npass)
		tg_strbuf_add(sb, "static inline size_t tg_bend(size_t b, "
		              "size_t hi, size_t n)\n{ size_t e = (b / n + 1) "
		              "* n; return e < hi ? e : hi; }\n");
	tg_strbuf_addf(sb, "__attribute__((optimize(\"fp-contract=off\")))\n"
	               "void %s(void *const *bufs, const int64_t *vals, "
	               "const size_t *global, size_t lo, size_t hi)\n{\n",
	               k->name);
	for (size_t i = 0; i < k->nbufs; i++) {
		const tg_cparam *b = &k->bufs[i];
		const char *cq = b->written ? "" : "const ";
		tg_strbuf_addf(sb, "\t%s%s *restrict %s = (%s%s *)bufs[%zu];\n",
		               cq, elem_type(d, b), b->name, cq, elem_type(d, b),
		               i);
	}
	for (size_t i = 0; i < k->nvars; i++)
		tg_strbuf_addf(sb, "\tconst long %s = vals[%zu];\n",
		               k->vars[i].name, i);
	tg_strbuf_add(sb, "\t(void)vals; (void)global;\n");
	c_item_loop(k, sb);
	if (k->lblock) {
		c_blocked_ids(k, sb);
		return;
	}
	if (k->gidx_used[0])
		tg_strbuf_add(sb,
		              "\t\tconst long gidx0 = (long)(tg_i % global[0]);\n");
	if (k->gidx_used[1])
		tg_strbuf_add(sb, "\t\tconst long gidx1 = "
		              "(long)(tg_i / global[0] % global[1]);\n");
	if (k->gidx_used[2])
		tg_strbuf_add(sb, "\t\tconst long gidx2 = "
		              "(long)(tg_i / (global[0] * global[1]));\n");
}

/* -------------------------------------------------------------- OpenCL */

static void wrap_opencl(const tg_cdialect *d, const tg_ckernel *k,
                        tg_strbuf *sb)
{
	/* no contraction into fma: results match the IR's rounding */
	tg_strbuf_add(sb, "#pragma OPENCL FP_CONTRACT OFF\n");
	if ((k->kinds_used | k->stored_used) & (1u << TG_FLOAT16))
		tg_strbuf_add(sb,
		              "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n");
	if ((k->kinds_used | k->stored_used) & (1u << TG_FLOAT64))
		tg_strbuf_add(sb,
		              "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
	helpers(d, k, sb);
	tg_strbuf_addf(sb, "__kernel void %s(", k->name);
	for (size_t i = 0; i < k->nbufs; i++) {
		const tg_cparam *b = &k->bufs[i];
		tg_strbuf_addf(sb, "%s__global %s%s *restrict %s", i ? ", " : "",
		               b->written ? "" : "const ", elem_type(d, b),
		               b->name);
	}
	for (size_t i = 0; i < k->nvars; i++)
		tg_strbuf_addf(sb, "%sconst int %s", i || k->nbufs ? ", " : "",
		               k->vars[i].name);
	if (!k->nbufs && !k->nvars)
		tg_strbuf_add(sb, "void");
	tg_strbuf_add(sb, ")\n{\n");
	for (size_t i = 0; i < k->nlocals; i++)
		tg_strbuf_addf(sb, "\t__local %s %s[%" PRId64 "];\n",
		               elem_type(d, &k->locals[i]), k->locals[i].name,
		               k->locals[i].count);
	for (int g = 0; g < 3; g++) {
		if (k->gidx_used[g])
			tg_strbuf_addf(sb, "\tconst int gidx%d = (int)get_%s_id(%d);"
			               "\n", g, k->has_local ? "group" : "global",
			               g);
		if (k->lidx_used[g])
			tg_strbuf_addf(sb, "\tconst int lidx%d = (int)get_local_id"
			               "(%d);\n", g, g);
	}
}

/* ---------------------------------------------------------------- CUDA */

/* The launch indices of a CUDA kernel.  With work-groups they are the
 * block and thread indices; without, the plugin launches a flat range
 * of blocks (x, then y past the x limit) of any size, and the indices
 * come from the flat id, bounded by the kernel's total. */
static int cuda_ids(const tg_ckernel *k, tg_strbuf *sb)
{
	const char *xyz = "xyz";
	uint64_t total = (uint64_t)k->global[0] * k->global[1] * k->global[2];

	for (int g = 0; g < 3 && k->has_local; g++) {
		if (k->gidx_used[g])
			tg_strbuf_addf(sb, "\tconst int gidx%d = (int)blockIdx.%c;\n",
			               g, xyz[g]);
		if (k->lidx_used[g])
			tg_strbuf_addf(sb, "\tconst int lidx%d = (int)threadIdx.%c;"
			               "\n", g, xyz[g]);
	}
	if (k->has_local)
		return TG_OK;
	if (total > UINT32_MAX)
		return tg_error(TG_EUNSUPPORTED, "render: kernel %s: %" PRIu64
		                " work-items exceed CUDA C's 32-bit flat id",
		                k->name, total);
	tg_strbuf_addf(sb, "\tconst unsigned int tg_i = (blockIdx.y * gridDim.x"
	               " + blockIdx.x) * blockDim.x + threadIdx.x;\n"
	               "\tif (tg_i >= %" PRIu64 "u) return;\n", total);
	if (k->gidx_used[0])
		tg_strbuf_addf(sb, "\tconst int gidx0 = (int)(tg_i %% %zuu);\n",
		               k->global[0]);
	if (k->gidx_used[1])
		tg_strbuf_addf(sb, "\tconst int gidx1 = (int)(tg_i / %zuu %% "
		               "%zuu);\n", k->global[0], k->global[1]);
	if (k->gidx_used[2])
		tg_strbuf_addf(sb, "\tconst int gidx2 = (int)(tg_i / %" PRIu64
		               "u);\n", (uint64_t)k->global[0] * k->global[1]);
	return TG_OK;
}

/* The vector structs the kernel uses: lanes in an array, aligned as
 * a whole up to 16 bytes, so that a fragment's registers are its
 * halves in pairs. */
static void cuda_vectors(const tg_cdialect *d, const tg_ckernel *k,
                         tg_strbuf *sb)
{
	for (unsigned s = 0; s < TG_NSCALARS; s++)
		for (unsigned w = 1; w < 7; w++) {
			size_t bytes = (size_t)(1u << w) * (tg_scalar_bits(s) / 8);
			if (k->vec_used[s] & (1u << w))
				tg_strbuf_addf(sb, "struct __align__(%zu) tg_%s%u "
				               "{ %s v[%u]; };\n",
				               bytes < 16 ? bytes : 16, vec_c_name[s],
				               1u << w, d->type[s], 1u << w);
		}
}

/* extern "C" (the plugin looks the name up unmangled) __global__
 * function of the buffers, then the values as ints. */
static int wrap_cuda(const tg_cdialect *d, const tg_ckernel *k,
                     tg_strbuf *sb)
{
	if ((k->kinds_used | k->stored_used) & (1u << TG_FLOAT16))
		tg_strbuf_add(sb, "#include <cuda_fp16.h>\n");
	cuda_vectors(d, k, sb);
	helpers(d, k, sb);
	for (int64_t i = 0; i < 32; i++)
		if (k->wmma_used & (1u << i) && tg_wmma_get(i))
			tg_strbuf_add(sb, tg_wmma_get(i)->def);
	tg_strbuf_addf(sb, "extern \"C\" __global__ void %s(", k->name);
	for (size_t i = 0; i < k->nbufs; i++) {
		const tg_cparam *b = &k->bufs[i];
		tg_strbuf_addf(sb, "%s%s%s *__restrict__ %s", i ? ", " : "",
		               b->written ? "" : "const ", elem_type(d, b),
		               b->name);
	}
	for (size_t i = 0; i < k->nvars; i++)
		tg_strbuf_addf(sb, "%sconst int %s", i || k->nbufs ? ", " : "",
		               k->vars[i].name);
	tg_strbuf_add(sb, ")\n{\n");
	for (size_t i = 0; i < k->nlocals; i++)
		tg_strbuf_addf(sb, "\t__shared__ %s %s[%" PRId64 "];\n",
		               elem_type(d, &k->locals[i]), k->locals[i].name,
		               k->locals[i].count);
	return cuda_ids(k, sb);
}

/* ---------------------------------------------------------------- GLSL */

static int glsl_arith_ext(uint64_t kinds)
{
	const uint64_t ext = 1u << TG_INT8 | 1u << TG_UINT8 | 1u << TG_INT16 |
	                     1u << TG_UINT16 | 1u << TG_INT64 |
	                     1u << TG_UINT64 | 1u << TG_FLOAT16 |
	                     1u << TG_BFLOAT16 | 1u << TG_BOOL;
	return (kinds & ext) != 0;
}

/* GLSL's declarations: the version, the extensions the kinds need, the
 * buffers as storage blocks, the values as push constants, the locals
 * as shared arrays. */
static void glsl_decls(const tg_cdialect *d, const tg_ckernel *k,
                       tg_strbuf *sb)
{
	const uint64_t st8 = 1u << TG_BOOL | 1u << TG_INT8 | 1u << TG_UINT8;
	const uint64_t st16 = 1u << TG_INT16 | 1u << TG_UINT16 |
	                      1u << TG_FLOAT16 | 1u << TG_BFLOAT16;

	tg_strbuf_add(sb, "#version 450\n");
	if (glsl_arith_ext(k->kinds_used | k->stored_used) || k->use_bf16 ||
	    k->use_threefry)
		tg_strbuf_add(sb, "#extension GL_EXT_shader_explicit_arithmetic_"
		              "types : require\n");
	if (k->stored_used & st8)
		tg_strbuf_add(sb, "#extension GL_EXT_shader_8bit_storage : "
		              "require\n");
	if (k->stored_used & st16)
		tg_strbuf_add(sb, "#extension GL_EXT_shader_16bit_storage : "
		              "require\n");
	tg_strbuf_add(sb, "layout(local_size_x_id = 0, local_size_y_id = 1, "
	              "local_size_z_id = 2) in;\n");
	for (size_t i = 0; i < k->nbufs; i++) {
		const tg_cparam *b = &k->bufs[i];
		tg_strbuf_addf(sb, "layout(std430, set = 0, binding = %zu) %s"
		               "buffer tg_buf_%zu { %s %s[]; };\n", i,
		               b->written ? "" : "readonly ", i, elem_type(d, b),
		               b->name);
	}
	if (k->nvars)
		tg_strbuf_addf(sb, "layout(push_constant) uniform tg_vals "
		               "{ int v[%zu]; } vals;\n", k->nvars);
	for (size_t i = 0; i < k->nlocals; i++)
		tg_strbuf_addf(sb, "shared %s %s[%" PRId64 "];\n",
		               elem_type(d, &k->locals[i]), k->locals[i].name,
		               k->locals[i].count);
}

/* The ids of a kernel without work groups: the runtime picks the
 * work-group shape, so one flat id, split into the used gidx. */
static void glsl_flat_ids(const tg_ckernel *k, uint64_t total,
                          tg_strbuf *sb)
{
	tg_strbuf_addf(sb, "\tuint tg_i = gl_GlobalInvocationID.x + "
	               "gl_GlobalInvocationID.y * gl_NumWorkGroups.x * "
	               "gl_WorkGroupSize.x;\n"
	               "\tif (tg_i >= %" PRIu64 "u) return;\n", total);
	if (k->gidx_used[0])
		tg_strbuf_addf(sb, "\tint gidx0 = int(tg_i %% %zuu);\n",
		               k->global[0]);
	if (k->gidx_used[1])
		tg_strbuf_addf(sb, "\tint gidx1 = int(tg_i / %zuu %% %zuu);\n",
		               k->global[0], k->global[1]);
	if (k->gidx_used[2])
		tg_strbuf_addf(sb, "\tint gidx2 = int(tg_i / %" PRIu64 "u);\n",
		               (uint64_t)k->global[0] * k->global[1]);
}

static int wrap_glsl(const tg_cdialect *d, const tg_ckernel *k,
                     tg_strbuf *sb)
{
	const char *xyz = "xyz";
	uint64_t total = (uint64_t)k->global[0] * k->global[1] * k->global[2];

	if (!k->has_local && total > UINT32_MAX)
		return tg_error(TG_EUNSUPPORTED, "render: kernel %s: %" PRIu64
		                " work-items exceed GLSL's 32-bit invocation id",
		                k->name, total);
	glsl_decls(d, k, sb);
	helpers(d, k, sb);
	tg_strbuf_add(sb, "void main()\n{\n");
	if (!k->has_local)
		glsl_flat_ids(k, total, sb);
	for (int g = 0; g < 3 && k->has_local; g++) {
		if (k->gidx_used[g])
			tg_strbuf_addf(sb, "\tint gidx%d = int(gl_WorkGroupID.%c);\n",
			               g, xyz[g]);
		if (k->lidx_used[g])
			tg_strbuf_addf(sb, "\tint lidx%d = "
			               "int(gl_LocalInvocationID.%c);\n", g, xyz[g]);
	}
	for (size_t i = 0; i < k->nvars; i++)
		tg_strbuf_addf(sb, "\tint %s = vals.v[%zu];\n", k->vars[i].name,
		               i);
	return TG_OK;
}

char *tg_cdialect_wrap(const tg_cdialect *d, const tg_ckernel *k,
                       const char *body)
{
	tg_strbuf sb;
	char *res;
	int rc = TG_OK;

	tg_strbuf_init(&sb);
	switch (d->id) {
	case TG_DIALECT_C: wrap_c(d, k, &sb); break;
	case TG_DIALECT_OPENCL: wrap_opencl(d, k, &sb); break;
	case TG_DIALECT_CUDA: rc = wrap_cuda(d, k, &sb); break;
	default: rc = wrap_glsl(d, k, &sb); break;
	}
	if (rc) {
		tg_strbuf_release(&sb);
		return NULL;
	}
	tg_strbuf_add(&sb, body);
	tg_strbuf_add(&sb, d->body_depth == 2 ? "\t}\n}\n" : "}\n");
	if (!(res = tg_strbuf_finish(&sb)))
		tg_error_oom("render");
	return res;
}

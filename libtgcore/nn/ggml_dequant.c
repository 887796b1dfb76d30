/*
 * nn/ggml_dequant.c - GGML tensors' bytes as values, by tensor ops.
 *
 * tg_ggml_dequantize builds, over a uint8 tensor of a tensor's bytes
 * (a GGUF file's blocks), the lazy ops that decode them: views that
 * pick a block's fields, shifts and masks for packed bits, casts, and
 * the multiply-adds of the scales.  Nothing is decoded on the host, so
 * the decode fuses into whatever consumes it: a matvec reads each
 * weight's bytes once, packed.
 *
 * Two rules make that fusion possible under the scheduler's view rules
 * (engine/schedule.c, tinygrad's _recurse_lb):
 *  - a base read through an expanding view is realized, so a block's
 *    scale is never computed once per block and broadcast: its bytes
 *    (views of the realized raw buffer, free to broadcast) are, and
 *    the scale is computed again for each element;
 *  - a base under a pad is realized when an op of its graph gives
 *    f(0) != 0, so only shifts and masks (zero-preserving) are stacked
 *    with tg_stack; comparisons and wheres come after.
 *
 * The bit layouts are ggml's (ggml-common.h, ggml-quants.c's
 * dequantize_row_*); the order of each float operation is that of the
 * gguf package's numpy (gguf/quants.py), so the values match it bit
 * for bit: every product and sum below rounds once, in float32, in the
 * package's order.  Block scales, IEEE half floats, are decoded with
 * integer ops rather than through float16, so no device needs float16
 * for quantized weights (some OpenCL devices lack cl_khr_fp16) and
 * subnormal scales decode exactly wherever denormals are flushed.
 */
#include "config.h"

#include "core.h"
#include "device/device.h"

typedef struct fmt fmt;
/* b: the blocks, (nb, bytes); returns their values, (nb, elems...). */
typedef tg_tensor *decode_fn(const tg_tensor *b, const fmt *f, int64_t nb);

/* One supported type.  The offsets are bytes into a block, -1 where the
 * type has no such field. */
struct fmt {
	int type;
	decode_fn *decode;
	tg_dtype dt;        /* native types: the values' dtype */
	short d, m;   /* the half scale, and the half minimum */
	short qh, qs; /* the high bits, the low bits */
	unsigned char zero; /* the offset subtracted before scaling */
};

/* ------------------------------------------------------------ bytes */

/* Bytes [off, off + n) of every block: (nb, n). */
static tg_tensor *field(const tg_tensor *b, int64_t nb, int off, int64_t n)
{
	return tg_shrink(b, 2, (int64_t[]){ 0, nb, off, off + n });
}

/* The byte at `off` of each block, broadcast to (nb, rest...): a view
 * of the raw bytes, so the broadcast costs nothing and starts no
 * kernel. */
static tg_tensor *byte_at(const tg_tensor *b, int off, size_t nd,
                          const int64_t *shape)
{
	int64_t one[4] = { shape[0], 1, 1, 1 };

	return tg_expand(tg_reshape(field(b, shape[0], off, 1), nd, one),
	                 nd, shape);
}

/* The little-endian word of k bytes at `off`, as the unsigned dt, for
 * each element of shape. */
static tg_tensor *word_at(const tg_tensor *b, int off, int k, tg_dtype dt,
                          size_t nd, const int64_t *shape)
{
	tg_tensor *w = tg_cast(byte_at(b, off, nd, shape), dt);
	int i;

	for (i = 1; i < k; i++)
		w = tg_bitwise_or(w, tg_lshift_s(tg_cast(byte_at(b, off + i,
		                  nd, shape), dt), 8 * i));
	return w;
}

/* The IEEE half at `off`, as float32 (exactly), for each element of
 * shape.  Normals, infinities and NaNs rebias the exponent (by 112,
 * twice for the all-ones exponent); subnormals and zeros are their
 * 10-bit significand times 2^-24, a float32 normal or zero. */
static tg_tensor *half_at(const tg_tensor *b, int off, size_t nd,
                          const int64_t *shape)
{
	tg_tensor *h = word_at(b, off, 2, TG_UINT32, nd, shape);
	tg_tensor *em = tg_bitwise_and_s(h, 0x7fff);
	tg_tensor *sign = tg_lshift_s(tg_bitwise_and_s(h, 0x8000), 16);
	tg_tensor *norm = tg_add_s(tg_lshift_s(em, 13), 0x38000000);
	tg_tensor *wide = tg_where(tg_ge_s(em, 0x7c00),
	                           tg_add_s(norm, 0x38000000), norm);
	tg_tensor *tiny = tg_bitcast(tg_mul_s(tg_cast(em, TG_FLOAT32),
	                                      0x1p-24), TG_UINT32);

	return tg_bitcast(tg_bitwise_or(tg_where(tg_lt_s(em, 0x400), tiny,
	                                         wide), sign), TG_FLOAT32);
}

/* The `bits`-wide fields of the bytes x (..., n), lowest first, as
 * uint8, stacked as a new axis: before the bytes' axis (axis -2: all
 * bytes' lowest fields, then all their next ones, as ggml's nibble
 * planes) or after it (axis -1: one byte's fields together, as the
 * bits of a little-endian mask). */
static tg_tensor *unpack(const tg_tensor *x, int bits, int axis)
{
	tg_tensor *f[8];
	int i, n = 8 / bits, mask = (1 << bits) - 1;

	for (i = 0; i < n; i++)
		f[i] = tg_bitwise_and_s(tg_rshift_s(x, i * bits), mask);
	return tg_stack((const tg_tensor *const *)f, (size_t)n, axis);
}

/* --------------------------------------------------------- decoders */

/* Whether b's device computes in dt. */
static int has_dtype(const tg_tensor *b, tg_dtype dt)
{
	tg_dev_info info;

	return !tg_dev_get_info(tg_tensor_dev(b), &info) &&
	       (info.dtype_mask >> dt & 1);
}

/* F32, F16, BF16 and the integers: each value's bytes as one word,
 * re-typed.  F16 stays float16 and BF16 bfloat16 (tinygrad's
 * ggml_data_to_tensor does the same): the weight keeps its 2 bytes
 * wherever it is materialized, and a consumer in float32 widens it
 * exactly.  On a device without the half type (PoCL has no float16)
 * the word is widened to float32 by integer ops instead: the same
 * values. */
static tg_tensor *native(const tg_tensor *b, const fmt *f, int64_t nb)
{
	static const tg_dtype word[9] = {
		[1] = TG_UINT8, [2] = TG_UINT16, [4] = TG_UINT32,
		[8] = TG_UINT64
	};
	int k = (int)tg_dtype_size(f->dt);
	tg_tensor *w;

	if (f->dt == TG_FLOAT16 && !has_dtype(b, TG_FLOAT16))
		return half_at(b, 0, 1, &nb);
	if (f->dt == TG_BFLOAT16 && !has_dtype(b, TG_BFLOAT16))
		return tg_bitcast(tg_lshift_s(word_at(b, 0, 2, TG_UINT32, 1, &nb),
		                              16), TG_FLOAT32);
	w = word_at(b, 0, k, word[k], 1, &nb);
	return word[k] == f->dt ? w : tg_bitcast(w, f->dt);
}

/* Q4_0, Q4_1, Q5_0, Q5_1: 32 values, the low nibbles of 16 bytes then
 * their high nibbles, a fifth bit each from a 32-bit mask, scaled by d
 * after taking `zero` off, plus m. */
static tg_tensor *legacy(const tg_tensor *b, const fmt *f, int64_t nb)
{
	int64_t s[2] = { nb, 32 };
	tg_tensor *q = tg_reshape(unpack(field(b, nb, f->qs, 16), 4, -2),
	                          2, s);
	tg_tensor *v;

	if (f->qh >= 0)
		q = tg_bitwise_or(q, tg_lshift_s(tg_reshape(unpack(field(b, nb,
		                  f->qh, 4), 1, -1), 2, s), 4));
	v = tg_cast(q, TG_FLOAT32);
	if (f->zero)
		v = tg_sub_s(v, f->zero);
	v = tg_mul(half_at(b, f->d, 2, s), v);
	return f->m >= 0 ? tg_add(v, half_at(b, f->m, 2, s)) : v;
}

/* Q8_0: 32 int8 values times d. */
static tg_tensor *q8_0(const tg_tensor *b, const fmt *f, int64_t nb)
{
	int64_t s[2] = { nb, 32 };
	tg_tensor *q = tg_bitcast(field(b, nb, f->qs, 32), TG_INT8);

	return tg_mul(tg_cast(q, TG_FLOAT32), half_at(b, f->d, 2, s));
}

/* The 6-bit scales (sc) and minimums (mn) of Q4_K's and Q5_K's eight
 * sub-blocks, from 12 bytes (ggml's get_scale_min_k4), for every
 * element, (nb, 8, 32), as float32.  Bytes 0-3 hold sc 0-3 in their
 * low 6 bits, bytes 4-7 mn 0-3; sc and mn 4-7 take their low 4 bits
 * from bytes 8-11 (low and high nibbles) and their high 2 from the top
 * bits of bytes 0-3 and 4-7. */
static void scale_min(const tg_tensor *b, int off, int64_t nb,
                      tg_tensor **sc, tg_tensor **mn)
{
	int64_t s[3] = { nb, 4, 32 };
	tg_tensor *g[3], *lo[2], *hi[2];
	int i;

	for (i = 0; i < 3; i++)   /* sc 0-3, mn 0-3, the low bits of 4-7 */
		g[i] = tg_expand(tg_reshape(field(b, nb, off + 4 * i, 4), 3,
		                            (int64_t[]){ nb, 4, 1 }), 3, s);
	lo[0] = tg_bitwise_and_s(g[0], 63);
	lo[1] = tg_bitwise_and_s(g[1], 63);
	hi[0] = tg_bitwise_or(tg_bitwise_and_s(g[2], 15),
	                      tg_bitwise_and_s(tg_rshift_s(g[0], 2), 0x30));
	hi[1] = tg_bitwise_or(tg_rshift_s(g[2], 4),
	                      tg_bitwise_and_s(tg_rshift_s(g[1], 2), 0x30));
	*sc = tg_cast(tg_cat((const tg_tensor *const *)(tg_tensor *[]){
	                      lo[0], hi[0] }, 2, 1), TG_FLOAT32);
	*mn = tg_cast(tg_cat((const tg_tensor *const *)(tg_tensor *[]){
	                      lo[1], hi[1] }, 2, 1), TG_FLOAT32);
}

/* Q4_K, Q5_K: 256 values in 8 sub-blocks of 32; each 32 bytes of
 * nibbles hold two sub-blocks (low nibbles, then high ones), Q5_K's
 * 32 bytes of high bits hold bit j of every value of sub-block j;
 * value = (d * sc) * q - dmin * mn. */
static tg_tensor *kquant(const tg_tensor *b, const fmt *f, int64_t nb)
{
	int64_t s[3] = { nb, 8, 32 };
	tg_tensor *q, *sc, *mn, *v;

	q = tg_reshape(unpack(tg_reshape(field(b, nb, f->qs, 128), 3,
	               (int64_t[]){ nb, 4, 32 }), 4, -2), 3, s);
	if (f->qh >= 0)
		q = tg_bitwise_or(q, tg_lshift_s(unpack(field(b, nb, f->qh,
		                  32), 1, -2), 4));
	scale_min(b, 4, nb, &sc, &mn);
	v = tg_mul(tg_mul(half_at(b, f->d, 3, s), sc), tg_cast(q, TG_FLOAT32));
	v = tg_sub(v, tg_mul(half_at(b, f->m, 3, s), mn));
	return tg_reshape(v, 2, (int64_t[]){ nb, 256 });
}

/* Q6_K: 256 values; low nibbles in 128 bytes (each 64 bytes: low
 * nibbles, then high ones, for 128 values), 2 high bits in 64 bytes
 * (each 32 bytes: 4 fields for 128 values), an int8 scale for each 16
 * values; value = (d * scale) * (q - 32).  The scale's byte u is read
 * as (u ^ 0x80) - 128, not through a bitcast to int8: a cast that does
 * not widen applies to the base of a view (lazy_ops.c, tinygrad's
 * CAST_BEFORE_VIEW), which would put the whole raw buffer's int8 copy
 * under the broadcast, and that copy would be realized. */
static tg_tensor *q6_k(const tg_tensor *b, const fmt *f, int64_t nb)
{
	int64_t s[3] = { nb, 16, 16 }, s8[3] = { nb, 8, 32 };
	tg_tensor *lo, *hi, *q, *sc;

	lo = unpack(tg_reshape(field(b, nb, f->qs, 128), 3,
	                       (int64_t[]){ nb, 2, 64 }), 4, -2);
	hi = unpack(tg_reshape(field(b, nb, f->qh, 64), 3,
	                       (int64_t[]){ nb, 2, 32 }), 2, -2);
	q = tg_bitwise_or(tg_reshape(lo, 3, s8),
	                  tg_lshift_s(tg_reshape(hi, 3, s8), 4));
	q = tg_sub_s(tg_cast(tg_reshape(q, 3, s), TG_FLOAT32), 32);
	sc = tg_expand(tg_reshape(field(b, nb, 192, 16), 3,
	                          (int64_t[]){ nb, 16, 1 }), 3, s);
	sc = tg_sub_s(tg_cast(tg_bitwise_xor_s(sc, 0x80), TG_FLOAT32), 128);
	return tg_reshape(tg_mul(tg_mul(half_at(b, f->d, 3, s), sc), q), 2,
	                  (int64_t[]){ nb, 256 });
}

#define NATIVE(t, dtype) { TG_GGML_##t, native, dtype, -1, -1, -1, -1, 0 }

static const fmt fmts[] = {
	NATIVE(F32, TG_FLOAT32),
	NATIVE(F16, TG_FLOAT16),
	NATIVE(BF16, TG_BFLOAT16),
	NATIVE(F64, TG_FLOAT64),
	NATIVE(I8, TG_INT8),
	NATIVE(I16, TG_INT16),
	NATIVE(I32, TG_INT32),
	NATIVE(I64, TG_INT64),
	/*  type            decode  dt          d  m   qh  qs zero */
	{ TG_GGML_Q4_0, legacy, TG_FLOAT32, 0, -1, -1, 2, 8 },
	{ TG_GGML_Q4_1, legacy, TG_FLOAT32, 0, 2, -1, 4, 0 },
	{ TG_GGML_Q5_0, legacy, TG_FLOAT32, 0, -1, 2, 6, 16 },
	{ TG_GGML_Q5_1, legacy, TG_FLOAT32, 0, 2, 4, 8, 0 },
	{ TG_GGML_Q8_0, q8_0, TG_FLOAT32, 0, -1, -1, 2, 0 },
	{ TG_GGML_Q4_K, kquant, TG_FLOAT32, 0, 2, -1, 16, 0 },
	{ TG_GGML_Q5_K, kquant, TG_FLOAT32, 0, 2, 16, 48, 0 },
	{ TG_GGML_Q6_K, q6_k, TG_FLOAT32, 208, -1, 128, 0, 0 },
};

static const fmt *find(int type)
{
	size_t i;

	for (i = 0; i < TG_ARRAY_LEN(fmts); i++)
		if (fmts[i].type == type)
			return &fmts[i];
	return NULL;
}

/* ------------------------------------------------------------ entry */

/* The number of values of shape, or -1 (error set) for a negative or
 * symbolic entry or a product past TG_DIM_MAX squared. */
static int64_t count(const char *name, size_t ndim, const int64_t *shape)
{
	int64_t n = 1;
	size_t i;

	if (ndim && !shape)
		return tg_error(TG_EINVAL, "ggml_dequantize: %s: no shape "
		                "(NULL) for %zu dimensions", name, ndim);
	for (i = 0; i < ndim; i++) {
		if (shape[i] < 0 || shape[i] > TG_DIM_MAX)
			return tg_error(TG_EINVAL, "ggml_dequantize: %s: "
			                "dimension %zu is %lld (0 to %lld)",
			                name, i, (long long)shape[i],
			                (long long)TG_DIM_MAX);
		if (shape[i] && n > INT64_MAX / 8 / shape[i])
			return tg_error(TG_EINVAL, "ggml_dequantize: %s: the "
			                "shape has too many values", name);
		n *= shape[i];
	}
	return n;
}

/* The number of blocks, after checking the type, the raw tensor and the
 * shape; -1 with the error set. */
static int64_t blocks(const tg_tensor *raw, int type, const fmt **f,
                      size_t ndim, const int64_t *shape)
{
	const char *name = tg_ggml_type_name(type);
	size_t elems, bytes;
	int64_t n, row, have, need;

	if (!name)
		return tg_error(TG_EINVAL, "ggml_dequantize: type %d is not "
		                "a GGML type", type);
	if (!(*f = find(type)))
		return tg_error(TG_EINVAL, "ggml_dequantize: type %s (%d) is "
		                "not supported (F32, F16, BF16, F64, I8-I64, "
		                "Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K and "
		                "Q6_K are)", name, type);
	if (tg_tensor_dtype(raw) != TG_UINT8)
		return tg_error(TG_EINVAL, "ggml_dequantize: %s: raw is %s, "
		                "not uint8 (the tensor's bytes)", name,
		                tg_dtype_name(tg_tensor_dtype(raw)));
	if (tg_disk_is(tg_tensor_dev(raw)))
		return tg_error(TG_EINVAL, "ggml_dequantize: %s: raw is on %s, "
		                "which runs no kernels (copy it to a device "
		                "with tg_to first)", name,
		                tg_dev_name(tg_tensor_dev(raw)));
	if ((n = count(name, ndim, shape)) < 0)
		return -1;
	tg_ggml_type_block(type, &elems, &bytes);
	row = ndim ? shape[ndim - 1] : 1;
	if (row % (int64_t)elems)
		return tg_error(TG_EINVAL, "ggml_dequantize: %s: rows of "
		                "%lld values are not whole blocks of %zu", name,
		                (long long)row, elems);
	have = tg_tensor_numel(raw);
	need = n / (int64_t)elems * (int64_t)bytes;
	if (have != need)
		return tg_error(TG_EINVAL, "ggml_dequantize: %s: %lld values "
		                "take %lld bytes, raw has %lld", name,
		                (long long)n, (long long)need, (long long)have);
	return n / (int64_t)elems;
}

tg_tensor *tg_ggml_dequantize(const tg_tensor *raw, int type, size_t ndim,
                              const int64_t *shape)
{
	const fmt *f = NULL;
	size_t bytes;
	int64_t nb;
	tg_tensor *r;

	if (!raw)
		return NULL;
	if ((nb = blocks(raw, type, &f, ndim, shape)) < 0)
		return NULL;
	tg_ggml_type_block(type, NULL, &bytes);
	tg_scope_begin();
	r = tg_reshape(f->decode(tg_reshape(raw, 2, (int64_t[]){ nb,
	               (int64_t)bytes }), f, nb), ndim, shape);
	r = tg_keep(r);
	tg_scope_end();
	return r;
}

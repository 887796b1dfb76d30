/*
 * nn/gguf_get.c - what an opened GGUF file (nn/gguf.c) answers: its
 * key-value pairs by index and by key, typed values and array elements
 * converted as asked (refusing, with the key and its type in the
 * message, what does not convert), its tensors' infos in PyTorch's
 * order of dims, and their bytes as lazy tensors over the file's DISK
 * mapping.  Everything here reads tables gguf.c checked; nothing reads
 * the file but the tensors, when realized.
 */
#include "config.h"

#include <string.h>

#include "core.h"
#include "nn/gguf.h"

static const char *const vnames[] = {
	[TG_GGUF_UINT8] = "uint8", [TG_GGUF_INT8] = "int8",
	[TG_GGUF_UINT16] = "uint16", [TG_GGUF_INT16] = "int16",
	[TG_GGUF_UINT32] = "uint32", [TG_GGUF_INT32] = "int32",
	[TG_GGUF_FLOAT32] = "float32", [TG_GGUF_BOOL] = "bool",
	[TG_GGUF_STRING] = "string", [TG_GGUF_ARRAY] = "array",
	[TG_GGUF_UINT64] = "uint64", [TG_GGUF_INT64] = "int64",
	[TG_GGUF_FLOAT64] = "float64",
};

const char *tg_gguf_vtype_name(int vtype)
{
	return vtype >= 0 && (size_t)vtype < TG_ARRAY_LEN(vnames)
	       ? vnames[vtype] : NULL;
}

/* -------------------------------------------------------- the pairs */

uint32_t tg_gguf_version(const tg_gguf *g)
{
	return g ? g->version : 0;
}

tg_dev *tg_gguf_disk(const tg_gguf *g)
{
	return g ? tg_tensor_dev(g->file) : NULL;
}

size_t tg_gguf_alignment(const tg_gguf *g)
{
	return g ? g->alignment : 0;
}

size_t tg_gguf_kv_count(const tg_gguf *g)
{
	return g ? g->nkv : 0;
}

static int kv_index(const tg_gguf *g, size_t i, const char *op)
{
	if (!g)
		return tg_error(TG_EINVAL, "%s: NULL file", op);
	if (i >= g->nkv)
		return tg_error(TG_EINVAL, "%s: %s: pair %zu past the last of "
		                "%zu", op, g->path, i, g->nkv);
	return 0;
}

const char *tg_gguf_kv_key(const tg_gguf *g, size_t i)
{
	if (kv_index(g, i, "gguf_kv_key"))
		return NULL;
	return tg_gguf_str(g, g->kv[i].key);
}

long tg_gguf_kv_find(const tg_gguf *g, const char *key)
{
	if (!g || !key)
		return -1;
	return tg_gguf_lookup(g, g->kv_sorted, g->nkv, 0, key);
}

int tg_gguf_kv_type(const tg_gguf *g, size_t i)
{
	int rc = kv_index(g, i, "gguf_kv_type");

	return rc ? rc : (int)g->kv[i].val.vtype;
}

/* The value of key, or NULL with "OP: PATH: no key 'x'". */
static const gguf_val *find(const tg_gguf *g, const char *op,
                            const char *key)
{
	char buf[256];
	long i;

	if (!g || !key)
		return tg_error(TG_EINVAL, "%s: NULL %s", op,
		                g ? "key" : "file"), NULL;
	if ((i = tg_gguf_kv_find(g, key)) < 0)
		return tg_error(TG_EINVAL, "%s: %s: no key '%s'", op, g->path,
		                tg_escape(key, buf, sizeof buf)), NULL;
	return &g->kv[i].val;
}

/* "OP: PATH: key 'x' is a string, not WANT"; TG_EINVAL.  Elements
 * are "element i of key 'x'". */
static int wrong(const tg_gguf *g, const char *op, const char *key,
                 long elem, uint32_t vtype, const char *want)
{
	char buf[256], el[48] = "";

	if (elem >= 0)
		snprintf(el, sizeof el, "element %ld of ", elem);
	return tg_error(TG_EINVAL, "%s: %s: %skey '%s' is a%s %s, not %s", op,
	                g->path, el, tg_escape(key, buf, sizeof buf),
	                vtype == TG_GGUF_INT8 || vtype == TG_GGUF_INT16 ||
	                vtype == TG_GGUF_INT32 || vtype == TG_GGUF_INT64 ||
	                vtype == TG_GGUF_ARRAY ? "n" : "",
	                tg_gguf_vtype_name((int)vtype), want);
}

/* A scalar's bits as an int64: 0, 1 (not an integer type), 2 (a uint64
 * above INT64_MAX). */
static int bits_int(uint32_t vtype, uint64_t bits, int64_t *out)
{
	switch (vtype) {
	case TG_GGUF_INT8: *out = (int8_t)bits; return 0;
	case TG_GGUF_INT16: *out = (int16_t)bits; return 0;
	case TG_GGUF_INT32: *out = (int32_t)bits; return 0;
	case TG_GGUF_INT64: *out = (int64_t)bits; return 0;
	case TG_GGUF_UINT64:
		if (bits > INT64_MAX)
			return 2;
		*out = (int64_t)bits;
		return 0;
	case TG_GGUF_UINT8: case TG_GGUF_UINT16: case TG_GGUF_UINT32:
	case TG_GGUF_BOOL:
		*out = (int64_t)bits;
		return 0;
	default:
		return 1;
	}
}

static int bits_float(uint32_t vtype, uint64_t bits, double *out)
{
	int64_t i;
	uint32_t b32 = (uint32_t)bits;
	float f;

	if (vtype == TG_GGUF_FLOAT32) {
		memcpy(&f, &b32, sizeof f);
		*out = f;
	} else if (vtype == TG_GGUF_FLOAT64) {
		memcpy(out, &bits, sizeof *out);
	} else if (vtype == TG_GGUF_UINT64) {
		*out = (double)bits;
	} else if (bits_int(vtype, bits, &i) || vtype == TG_GGUF_BOOL) {
		return 1;
	} else {
		*out = (double)i;
	}
	return 0;
}

static int to_int(const tg_gguf *g, const char *op, const char *key,
                  long elem, uint32_t vtype, uint64_t bits, int64_t *out)
{
	char buf[256];
	int rc = bits_int(vtype, bits, out);

	if (rc == 1)
		return wrong(g, op, key, elem, vtype, "an integer");
	if (rc == 2)
		return tg_error(TG_EINVAL, "%s: %s: key '%s': uint64 %llu is "
		                "above INT64_MAX", op, g->path,
		                tg_escape(key, buf, sizeof buf),
		                (unsigned long long)bits);
	return 0;
}

int tg_gguf_get_int(const tg_gguf *g, const char *key, int64_t *out)
{
	const gguf_val *v = find(g, "gguf_get_int", key);

	if (!v)
		return tg_last_status();
	return to_int(g, "gguf_get_int", key, -1, v->vtype, v->bits, out);
}

int tg_gguf_get_float(const tg_gguf *g, const char *key, double *out)
{
	const gguf_val *v = find(g, "gguf_get_float", key);

	if (!v)
		return tg_last_status();
	if (bits_float(v->vtype, v->bits, out))
		return wrong(g, "gguf_get_float", key, -1, v->vtype,
		             "a number");
	return 0;
}

const char *tg_gguf_get_str(const tg_gguf *g, const char *key, size_t *len)
{
	const gguf_val *v = find(g, "gguf_get_str", key);

	if (!v)
		return NULL;
	if (v->vtype != TG_GGUF_STRING)
		return wrong(g, "gguf_get_str", key, -1, v->vtype, "a string"),
		       NULL;
	if (len)
		*len = (size_t)v->n;
	return tg_gguf_str(g, v->off);
}

/* ------------------------------------------------------------ arrays */

static const gguf_val *find_array(const tg_gguf *g, const char *op,
                                  const char *key)
{
	const gguf_val *v = find(g, op, key);

	if (v && v->vtype != TG_GGUF_ARRAY)
		return wrong(g, op, key, -1, v->vtype, "an array"), NULL;
	return v;
}

int tg_gguf_get_array(const tg_gguf *g, const char *key, int *elem_vtype,
                      size_t *count)
{
	const gguf_val *v = find_array(g, "gguf_get_array", key);

	if (!v)
		return tg_last_status();
	if (elem_vtype)
		*elem_vtype = (int)v->etype;
	if (count)
		*count = (size_t)v->n;
	return 0;
}

/* Element i of array key: for numbers their bits in *bits, for strings
 * the gguf_val in *e.  NULL with a message past the end. */
static const gguf_val *element(const tg_gguf *g, const char *op,
                               const char *key, size_t i, uint64_t *bits,
                               gguf_val *e)
{
	const gguf_val *v = find_array(g, op, key);
	size_t size, k;
	char buf[256];

	if (!v)
		return NULL;
	if (i >= v->n)
		return tg_error(TG_EINVAL, "%s: %s: key '%s': element %zu past "
		                "the last of %llu", op, g->path,
		                tg_escape(key, buf, sizeof buf), i,
		                (unsigned long long)v->n), NULL;
	if ((size = tg_gguf_vsize(v->etype))) {
		const unsigned char *p = (const unsigned char *)g->blob +
		                         v->off + i * size;

		for (*bits = 0, k = size; k-- > 0;)
			*bits = *bits << 8 | p[k];
	} else {
		memcpy(e, g->blob + v->off + i * sizeof *e, sizeof *e);
	}
	return v;
}

const char *tg_gguf_array_str(const tg_gguf *g, const char *key, size_t i,
                              size_t *len)
{
	uint64_t bits = 0;
	gguf_val e = { 0 };
	const gguf_val *v = element(g, "gguf_array_str", key, i, &bits, &e);

	if (!v)
		return NULL;
	if (v->etype != TG_GGUF_STRING)
		return wrong(g, "gguf_array_str", key, (long)i, v->etype,
		             "a string"), NULL;
	if (len)
		*len = (size_t)e.n;
	return tg_gguf_str(g, e.off);
}

int tg_gguf_array_int(const tg_gguf *g, const char *key, size_t i,
                      int64_t *out)
{
	uint64_t bits = 0;
	gguf_val e = { 0 };
	const gguf_val *v = element(g, "gguf_array_int", key, i, &bits, &e);

	if (!v)
		return tg_last_status();
	return to_int(g, "gguf_array_int", key, (long)i, v->etype, bits, out);
}

int tg_gguf_array_float(const tg_gguf *g, const char *key, size_t i,
                        double *out)
{
	uint64_t bits = 0;
	gguf_val e = { 0 };
	const gguf_val *v = element(g, "gguf_array_float", key, i, &bits, &e);

	if (!v)
		return tg_last_status();
	if (bits_float(v->etype, bits, out))
		return wrong(g, "gguf_array_float", key, (long)i, v->etype,
		             "a number");
	return 0;
}

/* ----------------------------------------------------------- tensors */

size_t tg_gguf_tensor_count(const tg_gguf *g)
{
	return g ? g->ntensor : 0;
}

long tg_gguf_tensor_find(const tg_gguf *g, const char *name)
{
	if (!g || !name)
		return -1;
	return tg_gguf_lookup(g, g->t_sorted, g->ntensor, 1, name);
}

static const gguf_tensor *tensor(const tg_gguf *g, size_t i, const char *op)
{
	if (!g)
		return tg_error(TG_EINVAL, "%s: NULL file", op), NULL;
	if (i >= g->ntensor)
		return tg_error(TG_EINVAL, "%s: %s: tensor %zu past the last "
		                "of %zu", op, g->path, i, g->ntensor), NULL;
	return &g->t[i];
}

const char *tg_gguf_tensor_name(const tg_gguf *g, size_t i)
{
	const gguf_tensor *t = tensor(g, i, "gguf_tensor_name");

	return t ? tg_gguf_str(g, t->name) : NULL;
}

int tg_gguf_tensor_type(const tg_gguf *g, size_t i)
{
	const gguf_tensor *t = tensor(g, i, "gguf_tensor_type");

	return t ? t->type : tg_last_status();
}

size_t tg_gguf_tensor_shape(const tg_gguf *g, size_t i, int64_t *shape)
{
	const gguf_tensor *t = tensor(g, i, "gguf_tensor_shape");
	uint32_t d;

	if (!t)
		return 0;
	for (d = 0; d < t->ndim && shape; d++)
		shape[d] = (int64_t)t->ne[t->ndim - 1 - d];
	return t->ndim;
}

uint64_t tg_gguf_tensor_nbytes(const tg_gguf *g, size_t i)
{
	const gguf_tensor *t = tensor(g, i, "gguf_tensor_nbytes");

	return t ? t->nbytes : 0;
}

uint64_t tg_gguf_tensor_offset(const tg_gguf *g, size_t i)
{
	const gguf_tensor *t = tensor(g, i, "gguf_tensor_offset");

	return t ? g->data_off + t->off : 0;
}

tg_tensor *tg_gguf_tensor_raw(const tg_gguf *g, size_t i, tg_dev *dev)
{
	const gguf_tensor *t = tensor(g, i, "gguf_tensor_raw");
	int64_t range[2];
	tg_tensor *r;
	char buf[256];

	if (!t)
		return NULL;
	if (!dev && !(dev = tg_dev_get(NULL)))
		return tg_error_prefix("gguf_tensor_raw: %s", g->path), NULL;
	range[0] = (int64_t)(g->data_off + t->off);
	range[1] = range[0] + (int64_t)t->nbytes;
	tg_scope_begin();
	r = tg_keep(tg_to(tg_shrink(g->file, 1, range), dev));
	tg_scope_end();
	if (!r)
		tg_error_prefix("gguf_tensor_raw: %s: tensor '%s'", g->path,
		                tg_escape(tg_gguf_str(g, t->name), buf,
		                          sizeof buf));
	return r;
}

/*
 * nn/gguf.c - reading a GGUF file (tinygrad's gguf_load, llama.cpp's
 * gguf_init_from_file): the header, every key-value pair and every
 * tensor info read from a read-only mapping of the file and checked
 * before anything is trusted, then the file mapped again through its
 * DISK device, from which tg_gguf_tensor_raw makes lazy tensors.
 *
 * The format (little-endian): "GGUF", a uint32 version (2 or 3; 1 had
 * 32-bit counts and is refused), uint64 counts of tensors and of
 * pairs; each pair a string key, a uint32 value type and the value
 * (strings are a uint64 length and the bytes; arrays a uint32 element
 * type, a uint64 count and the elements); each tensor info a string
 * name, a uint32 dim count, uint64 dims (ne, fastest first), a uint32
 * ggml type and a uint64 offset into the data section, which starts at
 * the next multiple of the alignment (general.alignment, else 32).
 *
 * Hostile input is the rule here: every count is checked against the
 * bytes left before anything is allocated for it (so a count of 2^60 is
 * refused at once), every read against the file's end, and the strings
 * and arrays are copied into one growing blob whose size is bounded by
 * a small multiple of the file's.  Messages name the pair or tensor.
 */
#include "config.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "nn/gguf.h"

#define DEFAULT_ALIGNMENT 32
/* Arrays of arrays recurse; a file could nest them a million deep. */
#define MAX_DEPTH 8
/* The fewest bytes a pair and a tensor info can take (a one-byte key
 * or name, no dims): what a count is checked against. */
#define MIN_KV 14
#define MIN_TENSOR 25

/* The cursor over the mapped file and what it is reading, for the
 * messages ("key 'general.name'", "tensor 3"). */
typedef struct rd {
	tg_gguf *g;
	const unsigned char *base, *p, *end;
	char where[320];
} rd;

static const unsigned char vsizes[] = {
	[TG_GGUF_UINT8] = 1, [TG_GGUF_INT8] = 1, [TG_GGUF_UINT16] = 2,
	[TG_GGUF_INT16] = 2, [TG_GGUF_UINT32] = 4, [TG_GGUF_INT32] = 4,
	[TG_GGUF_FLOAT32] = 4, [TG_GGUF_BOOL] = 1, [TG_GGUF_UINT64] = 8,
	[TG_GGUF_INT64] = 8, [TG_GGUF_FLOAT64] = 8,
};

size_t tg_gguf_vsize(uint32_t vtype)
{
	return vtype < TG_ARRAY_LEN(vsizes) ? vsizes[vtype] : 0;
}

/* What the smallest value of the type takes in the file. */
static size_t vmin(uint32_t vtype)
{
	return vtype == TG_GGUF_STRING ? 8 : vtype == TG_GGUF_ARRAY ? 12
	       : tg_gguf_vsize(vtype);
}

/* "gguf_open: PATH: WHERE: MSG"; TG_EINVAL. */
TG_PRINTF(2, 3)
static int bad(const rd *r, const char *fmt, ...)
{
	char msg[TG_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tg_error(TG_EINVAL, "%s: %s: %s: %s", GGUF_OPEN, r->g->path,
	                r->where, msg);
}

static size_t left(const rd *r)
{
	return (size_t)(r->end - r->p);
}

static size_t at(const rd *r)
{
	return (size_t)(r->p - r->base);
}

static int need(const rd *r, uint64_t n)
{
	if (n <= left(r))
		return 0;
	return bad(r, "truncated: %llu bytes at offset %zu run past the "
	           "end of the file (%zu bytes)", (unsigned long long)n,
	           at(r), (size_t)(r->end - r->base));
}

/* n (<= 8) little-endian bytes. */
static int le(rd *r, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t k;

	if (need(r, n))
		return TG_EINVAL;
	for (k = n; k-- > 0;)
		v = v << 8 | r->p[k];
	r->p += n;
	*out = v;
	return 0;
}

static int u32(rd *r, uint32_t *out)
{
	uint64_t v = 0;
	int rc = le(r, 4, &v);

	*out = (uint32_t)v;
	return rc;
}

/* ----------------------------------------------------------- the blob */

/* Room for n bytes at a multiple of align (1 or 8); *off says where. */
static int blob_take(tg_gguf *g, size_t n, size_t align, uint64_t *off)
{
	size_t start = (g->blob_len + align - 1) & ~(align - 1), cap;
	char *p;

	if (n > SIZE_MAX / 2 - start)
		return tg_error_oom(GGUF_OPEN);
	if (start + n > g->blob_cap) {
		cap = g->blob_cap ? g->blob_cap : 4096;
		while (cap < start + n)
			cap *= 2;
		if (!(p = realloc(g->blob, cap)))
			return tg_error_oom(GGUF_OPEN);
		g->blob = p;
		g->blob_cap = cap;
	}
	*off = start;
	g->blob_len = start + n;
	return 0;
}

/* ----------------------------------------------------------- values */

static int read_val(rd *r, uint32_t vtype, int depth, gguf_val *v);

static int read_str(rd *r, gguf_val *v)
{
	uint64_t n = 0, off;

	if (le(r, 8, &n))
		return TG_EINVAL;
	if (n > left(r))
		return bad(r, "a string of %llu bytes at offset %zu runs past "
		           "the end of the file (%zu bytes)",
		           (unsigned long long)n, at(r),
		           (size_t)(r->end - r->base));
	if (blob_take(r->g, (size_t)n + 1, 1, &off))
		return TG_ENOMEM;
	memcpy(r->g->blob + off, r->p, (size_t)n);
	r->g->blob[off + n] = '\0';
	r->p += n;
	*v = (gguf_val){ .vtype = TG_GGUF_STRING, .n = n, .off = off };
	return 0;
}

/* An array of numbers: the file's bytes, bools checked to be 0 or 1. */
static int read_numbers(rd *r, gguf_val *v)
{
	size_t size = tg_gguf_vsize(v->etype), k;

	if (blob_take(r->g, (size_t)v->n * size, 1, &v->off))
		return TG_ENOMEM;
	memcpy(r->g->blob + v->off, r->p, (size_t)v->n * size);
	if (v->etype == TG_GGUF_BOOL)
		for (k = 0; k < v->n; k++)
			if (r->p[k] > 1)
				return bad(r, "bool element %zu is %u, neither "
				           "0 nor 1", k, r->p[k]);
	r->p += v->n * size;
	return 0;
}

/* An array of strings or arrays: n gguf_vals. */
static int read_values(rd *r, int depth, gguf_val *v)
{
	gguf_val e;
	size_t k;

	if (blob_take(r->g, (size_t)v->n * sizeof e, 8, &v->off))
		return TG_ENOMEM;
	for (k = 0; k < v->n; k++) {
		if (read_val(r, v->etype, depth + 1, &e))
			return TG_EINVAL;
		memcpy(r->g->blob + v->off + k * sizeof e, &e, sizeof e);
	}
	return 0;
}

static int read_array(rd *r, int depth, gguf_val *v)
{
	uint32_t et = 0;
	uint64_t n = 0;

	if (depth >= MAX_DEPTH)
		return bad(r, "arrays nested more than %d deep", MAX_DEPTH);
	if (u32(r, &et) || le(r, 8, &n))
		return TG_EINVAL;
	if (!vmin(et))
		return bad(r, "array of unknown value type %u", et);
	if (n > left(r) / vmin(et))
		return bad(r, "an array of %llu %s values at offset %zu runs "
		           "past the end of the file (%zu bytes)",
		           (unsigned long long)n, tg_gguf_vtype_name((int)et),
		           at(r), (size_t)(r->end - r->base));
	*v = (gguf_val){ .vtype = TG_GGUF_ARRAY, .etype = et, .n = n };
	if (tg_gguf_vsize(et))
		return read_numbers(r, v);
	return read_values(r, depth, v);
}

static int read_val(rd *r, uint32_t vtype, int depth, gguf_val *v)
{
	size_t size = tg_gguf_vsize(vtype);
	uint64_t bits = 0;

	if (vtype == TG_GGUF_STRING)
		return read_str(r, v);
	if (vtype == TG_GGUF_ARRAY)
		return read_array(r, depth, v);
	if (!size)
		return bad(r, "unknown value type %u", vtype);
	if (le(r, size, &bits))
		return TG_EINVAL;
	if (vtype == TG_GGUF_BOOL && bits > 1)
		return bad(r, "bool value %u is neither 0 nor 1",
		           (unsigned)bits);
	*v = (gguf_val){ .vtype = vtype, .bits = bits };
	return 0;
}

/* A key or a tensor's name: not empty, no NUL. */
static int read_name(rd *r, const char *what, uint64_t *off)
{
	char buf[200];
	gguf_val s;

	if (read_str(r, &s))
		return TG_EINVAL;
	if (!s.n)
		return bad(r, "empty %s", what);
	if (strlen(r->g->blob + s.off) != s.n)
		return bad(r, "%s '%s' holds a NUL byte", what,
		           tg_escape(r->g->blob + s.off, buf, sizeof buf));
	*off = s.off;
	return 0;
}

static int read_kv(rd *r, size_t i)
{
	gguf_kv *kv = &r->g->kv[i];
	uint32_t vtype = 0;
	char buf[256];

	snprintf(r->where, sizeof r->where, "key-value pair %zu", i);
	if (read_name(r, "key", &kv->key))
		return TG_EINVAL;
	snprintf(r->where, sizeof r->where, "key '%s'",
	         tg_escape(tg_gguf_str(r->g, kv->key), buf, sizeof buf));
	if (u32(r, &vtype))
		return TG_EINVAL;
	return read_val(r, vtype, 0, &kv->val);
}

/* ---------------------------------------------------------- tensors */

/* Elements and bytes, checked: at most 2^63 - 1 elements (views index
 * with int64), rows of whole blocks, bytes that fit a uint64. */
static int tensor_size(rd *r, gguf_tensor *t)
{
	uint64_t n = 1, nb;
	size_t be = 0, bb = 0;
	uint32_t d;

	for (d = 0; d < t->ndim; d++)
		if (__builtin_mul_overflow(n, t->ne[d], &n) || n > INT64_MAX)
			return bad(r, "more than 2^63 elements");
	if (tg_ggml_type_block(t->type, &be, &bb))
		return TG_EINVAL;
	if ((t->ndim ? t->ne[0] : 1) % be)
		return bad(r, "rows of %llu elements are not whole %s blocks "
		           "of %zu", (unsigned long long)(t->ndim ? t->ne[0]
		           : 1), tg_ggml_type_name(t->type), be);
	if (__builtin_mul_overflow(n / be, (uint64_t)bb, &nb))
		return bad(r, "larger than 2^64 bytes");
	t->nbytes = nb;
	return 0;
}

static int read_tensor(rd *r, size_t i)
{
	gguf_tensor *t = &r->g->t[i];
	uint32_t d, type = 0;
	char buf[256];

	snprintf(r->where, sizeof r->where, "tensor %zu", i);
	if (read_name(r, "name", &t->name))
		return TG_EINVAL;
	snprintf(r->where, sizeof r->where, "tensor '%s'",
	         tg_escape(tg_gguf_str(r->g, t->name), buf, sizeof buf));
	if (u32(r, &t->ndim))
		return TG_EINVAL;
	if (t->ndim > GGUF_MAX_DIMS)
		return bad(r, "%u dims, at most %d", t->ndim, GGUF_MAX_DIMS);
	for (d = 0; d < t->ndim; d++) {
		if (le(r, 8, &t->ne[d]))
			return TG_EINVAL;
		if (!t->ne[d])
			return bad(r, "dim %u is 0", d);
	}
	if (u32(r, &type) || le(r, 8, &t->off))
		return TG_EINVAL;
	if (!tg_ggml_type_name(type > INT32_MAX ? -1 : (int)type))
		return bad(r, "unknown ggml type %u", type);
	t->type = (int)type;
	if (tensor_size(r, t))
		return TG_EINVAL;
	if (t->off % r->g->alignment)
		return bad(r, "offset %llu is not a multiple of the alignment "
		           "%zu", (unsigned long long)t->off, r->g->alignment);
	return 0;
}

/* ----------------------------------------------------- names, sorted */

typedef struct named {
	const char *s;
	size_t i;
} named;

static int named_cmp(const void *a, const void *b)
{
	const named *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

static const char *name_of(const tg_gguf *g, int tensors, size_t i)
{
	return tg_gguf_str(g, tensors ? g->t[i].name : g->kv[i].key);
}

/* Indices of the keys (or tensor names) in sorted order, refusing
 * duplicates. */
static int sort_names(rd *r, int tensors, size_t n, size_t **out)
{
	named *v = malloc((n ? n : 1) * sizeof *v);
	size_t *idx = malloc((n ? n : 1) * sizeof *idx), k;
	char buf[256];
	int rc = 0;

	if (!v || !idx) {
		free(v), free(idx);
		return tg_error_oom(GGUF_OPEN);
	}
	for (k = 0; k < n; k++)
		v[k] = (named){ name_of(r->g, tensors, k), k };
	qsort(v, n, sizeof *v, named_cmp);
	for (k = 0; k < n && !rc; k++) {
		idx[k] = v[k].i;
		if (k && !strcmp(v[k - 1].s, v[k].s))
			rc = tg_error(TG_EINVAL, "%s: %s: %s '%s' appears "
			              "twice (%zu and %zu)", GGUF_OPEN,
			              r->g->path, tensors ? "tensor" : "key",
			              tg_escape(v[k].s, buf, sizeof buf),
			              v[k - 1].i, v[k].i);
	}
	free(v);
	if (rc)
		free(idx);
	else
		*out = idx;
	return rc;
}

long tg_gguf_lookup(const tg_gguf *g, const size_t *idx, size_t n,
                    int tensors, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name_of(g, tensors, idx[mid]), name);

		if (!c)
			return (long)idx[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* ------------------------------------------------------------- layout */

/* general.alignment: a uint32 power of two. */
static int read_alignment(rd *r)
{
	tg_gguf *g = r->g;
	long i = tg_gguf_lookup(g, g->kv_sorted, g->nkv, 0,
	                        "general.alignment");
	const gguf_val *v;

	g->alignment = DEFAULT_ALIGNMENT;
	if (i < 0)
		return 0;
	v = &g->kv[i].val;
	snprintf(r->where, sizeof r->where, "key 'general.alignment'");
	if (v->vtype != TG_GGUF_UINT32)
		return bad(r, "a %s, not a uint32",
		           tg_gguf_vtype_name((int)v->vtype));
	if (!v->bits || (v->bits & (v->bits - 1)))
		return bad(r, "%llu is not a power of two",
		           (unsigned long long)v->bits);
	g->alignment = (size_t)v->bits;
	return 0;
}

/* Every tensor within the data section. */
static int check_extents(const rd *r)
{
	const tg_gguf *g = r->g;
	size_t size = (size_t)(r->end - r->base), k;
	uint64_t data = g->data_off < size ? size - g->data_off : 0;
	char b[200];

	for (k = 0; k < g->ntensor; k++) {
		const gguf_tensor *t = &g->t[k];

		if (t->off <= data && t->nbytes <= data - t->off)
			continue;
		return tg_error(TG_EINVAL, "%s: %s: tensor '%s': bytes [%llu, "
		                "+%llu) end beyond the data section (%llu "
		                "bytes at offset %llu)", GGUF_OPEN, g->path,
		                tg_escape(name_of(g, 1, k), b, sizeof b),
		                (unsigned long long)t->off,
		                (unsigned long long)t->nbytes,
		                (unsigned long long)data,
		                (unsigned long long)g->data_off);
	}
	return 0;
}

/* No two tensors overlapping: sorted by offset, each ends before the
 * next begins. */
static int check_overlap(const tg_gguf *g)
{
	size_t n = g->ntensor, k;
	char b1[200], b2[200];
	tg_range *sp;
	int rc = 0;

	if (!(sp = malloc((n ? n : 1) * sizeof *sp)))
		return tg_error_oom(GGUF_OPEN);
	for (k = 0; k < n; k++)
		sp[k] = (tg_range){ g->t[k].off, g->t[k].off + g->t[k].nbytes, k };
	tg_ranges_sort(sp, n);
	for (k = 1; k < n && !rc; k++)
		if (sp[k].begin < sp[k - 1].end)
			rc = tg_error(TG_EINVAL, "%s: %s: tensors '%s' and "
			              "'%s' overlap", GGUF_OPEN, g->path,
			              tg_escape(name_of(g, 1, sp[k - 1].i), b1,
			                        sizeof b1),
			              tg_escape(name_of(g, 1, sp[k].i), b2,
			                        sizeof b2));
	free(sp);
	return rc;
}

/* ------------------------------------------------------------ header */

static int read_version(rd *r)
{
	uint32_t v = 0, swapped;

	if (u32(r, &v))
		return TG_EINVAL;
	swapped = __builtin_bswap32(v);
	if (v > 0xffff && swapped >= 1 && swapped <= 3)
		return bad(r, "a big-endian file (version %u): only "
		           "little-endian GGUF files are read", swapped);
	if (v != 2 && v != 3)
		return bad(r, "version %u is not supported (only 2 and 3)", v);
	r->g->version = v;
	return 0;
}

static int read_header(rd *r, uint64_t *nkv, uint64_t *nt)
{
	char buf[40];

	snprintf(r->where, sizeof r->where, "header");
	if (need(r, 4))
		return TG_EINVAL;
	if (memcmp(r->p, "GGUF", 4)) {
		memcpy(buf, r->p, 4);
		buf[4] = '\0';
		return bad(r, "not a GGUF file (it starts with '%s', not "
		           "'GGUF')", tg_escape(buf, buf + 5, 30));
	}
	r->p += 4;
	if (read_version(r) || le(r, 8, nt) || le(r, 8, nkv))
		return TG_EINVAL;
	if (*nkv > left(r) / MIN_KV)
		return bad(r, "%llu key-value pairs cannot fit in the %zu "
		           "bytes left", (unsigned long long)*nkv, left(r));
	if (*nt > left(r) / MIN_TENSOR)
		return bad(r, "%llu tensor infos cannot fit in the %zu bytes "
		           "left", (unsigned long long)*nt, left(r));
	return 0;
}

/* Everything but the DISK mapping, from the file's bytes. */
static int parse(tg_gguf *g, const unsigned char *p, size_t size)
{
	rd r = { g, p, p, p + size, "" };
	uint64_t nkv = 0, nt = 0, pos;
	size_t i;

	if (read_header(&r, &nkv, &nt))
		return TG_EINVAL;
	g->kv = calloc(nkv ? nkv : 1, sizeof *g->kv);
	g->t = calloc(nt ? nt : 1, sizeof *g->t);
	if (!g->kv || !g->t)
		return tg_error_oom(GGUF_OPEN);
	for (i = 0; i < nkv; i++, g->nkv++)
		if (read_kv(&r, i))
			return TG_EINVAL;
	if (sort_names(&r, 0, g->nkv, &g->kv_sorted) || read_alignment(&r))
		return TG_EINVAL;
	for (i = 0; i < nt; i++, g->ntensor++)
		if (read_tensor(&r, i))
			return TG_EINVAL;
	if (sort_names(&r, 1, g->ntensor, &g->t_sorted))
		return TG_EINVAL;
	pos = at(&r);
	g->data_off = (pos + g->alignment - 1) & ~(uint64_t)(g->alignment - 1);
	return check_extents(&r) || check_overlap(g) ? TG_EINVAL : 0;
}

/* ------------------------------------------------------------ opening */

/* Reads the file through a private read-only mapping. */
static int parse_file(tg_gguf *g, size_t *size)
{
	struct stat st = { 0 };
	const char *why;
	void *p;
	int fd, rc;

	/* a FIFO would block the open, a device read forever */
	if ((fd = tg_open_regular(g->path, O_RDONLY, 0, &why)) < 0)
		return tg_error(TG_EIO, "%s: %s: cannot open: %s", GGUF_OPEN,
		                g->path, why);
	if (fstat(fd, &st) || (off_t)(size_t)st.st_size != st.st_size) {
		close(fd);
		return tg_error(TG_EIO, "%s: %s: cannot stat, or too large to "
		                "map", GGUF_OPEN, g->path);
	}
	if (!(*size = (size_t)st.st_size)) {
		close(fd);
		return tg_error(TG_EINVAL, "%s: %s: empty file", GGUF_OPEN,
		                g->path);
	}
	p = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return tg_error(TG_EIO, "%s: %s: cannot map %zu bytes",
		                GGUF_OPEN, g->path, *size);
	rc = parse(g, p, *size);
	munmap(p, *size);
	return rc;
}

/* The whole file as a uint8 tensor on its DISK device, mapped now so
 * that tensors read the file that was opened even when another
 * replaces it by rename. */
static int map_disk(tg_gguf *g, size_t size)
{
	int64_t n = (int64_t)size;
	tg_buffer *b = NULL;
	tg_strbuf sb;
	char *name;
	tg_dev *d;
	int rc = 0;

	tg_strbuf_init(&sb);
	tg_strbuf_addf(&sb, "DISK:%s", g->path);
	if (!(name = tg_strbuf_finish(&sb)))
		return tg_error_oom(GGUF_OPEN);
	d = tg_dev_get(name);
	free(name);
	tg_scope_begin();
	if (!d || !(g->file = tg_tensor_ref(tg_empty(d, TG_UINT8, 1, &n))) ||
	    !(b = tg_tensor_buffer(g->file)) || tg_buffer_allocate(b))
		rc = tg_error_prefix("%s: %s", GGUF_OPEN, g->path);
	tg_buffer_unref(b);
	tg_scope_end();
	return rc;
}

tg_gguf *tg_gguf_open(const char *path)
{
	tg_gguf *g;
	size_t size = 0;

	if (!path)
		return tg_error(TG_EINVAL, "%s: NULL path", GGUF_OPEN), NULL;
	if (!(g = calloc(1, sizeof *g)))
		return tg_error_oom(GGUF_OPEN), NULL;
	if (!(g->path = tg_strdup(path, GGUF_OPEN)) ||
	    parse_file(g, &size) || map_disk(g, size)) {
		tg_gguf_close(g);
		return NULL;
	}
	return g;
}

void tg_gguf_close(tg_gguf *g)
{
	if (!g)
		return;
	tg_tensor_unref(g->file);
	free(g->kv_sorted);
	free(g->t_sorted);
	free(g->kv);
	free(g->t);
	free(g->blob);
	free(g->path);
	free(g);
}

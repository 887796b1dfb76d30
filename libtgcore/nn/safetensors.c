/*
 * nn/safetensors.c - safetensors files (tinygrad's safe_save and
 * safe_load): the format's names and errors and the header's reader;
 * loading is in safetensors_load.c, saving in safetensors_save.c.
 *
 * A safetensors file is an 8-byte little-endian length N, N bytes of
 * JSON header, then the data section:
 *
 *   {"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},...}
 *
 * with an optional "__metadata__" object of strings.  Offsets count from
 * the first byte after the header.
 *
 * Loading treats the file as hostile.  The header is read by a small
 * strict JSON reader that never looks past the header's last byte; every
 * number is checked before use (shape products and byte counts with
 * overflow checks), and, as the reference implementation requires, the
 * tensors' ranges sorted by offset must tile the data section exactly:
 * no gaps, no overlaps, no trailing bytes.  Only then are tensors made,
 * each copied straight from the memory-mapped file to its device.
 * The reader here sees only the header's bytes, never the file.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "nn/state.h"
#include "nn/safetensors.h"
#include "shape/shape.h" /* TG_MAX_DIMS */

/* safetensors' dtype names, by tg_dtype. */
const char *const tg_sft_dtype[] = {
	[TG_BOOL] = "BOOL",    [TG_INT8] = "I8",       [TG_UINT8] = "U8",
	[TG_INT16] = "I16",    [TG_UINT16] = "U16",    [TG_INT32] = "I32",
	[TG_UINT32] = "U32",   [TG_INT64] = "I64",     [TG_UINT64] = "U64",
	[TG_FLOAT16] = "F16",  [TG_BFLOAT16] = "BF16", [TG_FLOAT32] = "F32",
	[TG_FLOAT64] = "F64",
};
static_assert(TG_ARRAY_LEN(tg_sft_dtype) == TG_NDTYPES,
              "a safetensors name for every dtype");

/* Sets "safetensors_load: PATH: MSG" (a malformed file); TG_EINVAL. */
TG_PRINTF(2, 3)
int tg_sft_bad(const char *path, const char *fmt, ...)
{
	char msg[TG_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tg_error(TG_EINVAL, "%s: %s: %s", LOAD, path, msg);
}

/* Sets "OP: PATH: MSG: strerror(errno)"; TG_EIO. */
TG_PRINTF(3, 4)
int tg_sft_io_fail(const char *op, const char *path, const char *fmt, ...)
{
	int err = errno; /* before anything can change it */
	char msg[TG_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tg_error(TG_EIO, "%s: %s: %s: %s", op, path, msg,
	                strerror(err));
}

/* ------------------------------------------------ the JSON header reader */

/* Sets "safetensors_load: PATH: [tensor 'w', ]header byte N: MSG". */
TG_PRINTF(2, 3)
static int syntax(reader *r, const char *fmt, ...)
{
	char msg[TG_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tg_sft_bad(r->path, "%s%s%sheader byte %zu: %s",
	                  r->tensor ? "tensor '" : "",
	                  r->tensor ? r->tensor : "", r->tensor ? "', " : "",
	                  (size_t)(r->p - r->start), msg);
}

static void ws(reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' ||
	                         *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static int peek(reader *r) { return r->p < r->end ? *r->p : -1; }

static int unexpected(reader *r, const char *what)
{
	if (r->p >= r->end)
		return syntax(r, "expected %s, found the end of the header",
		              what);
	if (*r->p >= 0x20 && *r->p < 0x7f)
		return syntax(r, "expected %s, found '%c'", what, *r->p);
	return syntax(r, "expected %s, found byte 0x%02x", what, *r->p);
}

static int expect(reader *r, int c, const char *what)
{
	ws(r);
	if (peek(r) != c)
		return unexpected(r, what);
	r->p++;
	return 0;
}

/* After an element of an object or array: 1 at ',', 0 at `close`
 * (both consumed), else an error. */
static int next(reader *r, int close)
{
	ws(r);
	if (peek(r) == ',' || peek(r) == close)
		return *r->p++ == ',';
	return unexpected(r, close == '}' ? "',' or '}'" : "',' or ']'");
}

/* Four hex digits of a \u escape. */
static int hex4(reader *r, uint32_t *out)
{
	uint32_t v = 0;
	int i, c;

	if (r->end - r->p < 4)
		return syntax(r, "truncated \\u escape");
	for (i = 0; i < 4; i++) {
		c = r->p[i] | 0x20; /* lower case; digits keep their value */
		if (c >= '0' && c <= '9')
			v = v << 4 | (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint32_t)(c - 'a' + 10);
		else
			return syntax(r, "\\u escape with a non-hex digit");
	}
	r->p += 4;
	*out = v;
	return 0;
}

static void put_utf8(tg_strbuf *sb, uint32_t cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp, n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6), n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12), n = 3;
	} else {
		b[0] = (char)(0xf0 | cp >> 18), n = 4;
	}
	for (size_t i = 1; i < n; i++)
		b[i] = (char)(0x80 | ((cp >> (6 * (n - 1 - i))) & 0x3f));
	tg_strbuf_addn(sb, b, n);
}

/* The escape at r->p (its backslash) into sb: JSON's eight one-letter
 * escapes and \uXXXX, with surrogate pairs joined; lone surrogates are
 * refused (they have no UTF-8 form). */
static int escape(reader *r, tg_strbuf *sb)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *k;
	uint32_t cp, lo;

	if (++r->p >= r->end)
		return syntax(r, "unterminated string");
	if (*r->p != 'u') {
		if (*r->p < 0x20 || *r->p >= 0x7f)
			return syntax(r, "invalid escape");
		if (!(k = strchr(from, *r->p)))
			return syntax(r, "invalid escape '\\%c'", *r->p);
		tg_strbuf_addn(sb, &to[k - from], 1);
		r->p++;
		return 0;
	}
	r->p++;
	if (hex4(r, &cp))
		return TG_EINVAL;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return syntax(r, "lone low surrogate \\u%04x", (unsigned)cp);
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
			return syntax(r, "high surrogate \\u%04x without "
			              "its low half", (unsigned)cp);
		r->p += 2;
		if (hex4(r, &lo))
			return TG_EINVAL;
		if (lo < 0xdc00 || lo > 0xdfff)
			return syntax(r, "high surrogate \\u%04x followed by "
			              "\\u%04x", (unsigned)cp, (unsigned)lo);
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	put_utf8(sb, cp);
	return 0;
}

/* A JSON string, decoded: *out (malloc'd) and its length (it may hold
 * NULs from \u0000).  Raw bytes must be valid UTF-8 and no control
 * characters. */
static int str(reader *r, char **out, size_t *len)
{
	tg_strbuf sb;
	size_t n;
	int rc = 0;

	if (expect(r, '"', "a string"))
		return TG_EINVAL;
	tg_strbuf_init(&sb);
	while (!rc) {
		if (r->p >= r->end) {
			rc = syntax(r, "unterminated string");
		} else if (*r->p == '"') {
			r->p++;
			break;
		} else if (*r->p == '\\') {
			rc = escape(r, &sb);
		} else if (*r->p < 0x20) {
			rc = syntax(r, "control character 0x%02x in a string",
			            *r->p);
		} else if (!(n = tg_utf8_len_(r->p, (size_t)(r->end - r->p)))) {
			rc = syntax(r, "invalid UTF-8 in a string");
		} else {
			tg_strbuf_addn(&sb, (const char *)r->p, n);
			r->p += n;
		}
	}
	*len = sb.len;
	if (rc) {
		tg_strbuf_release(&sb);
		return rc;
	}
	return (*out = tg_strbuf_finish(&sb)) ? 0 : tg_error_oom(LOAD);
}

/* A JSON number that must be a non-negative integer below 2^64;
 * `what` names it in messages ("shape entry"). */
static int read_uint(reader *r, const char *what, uint64_t *out)
{
	const unsigned char *s;
	uint64_t v = 0;
	int n;

	ws(r);
	s = r->p;
	while (r->p < r->end && *r->p && strchr("+-.eE0123456789", *r->p))
		r->p++;
	n = (int)(r->p - s < 40 ? r->p - s : 40); /* what messages quote */
	if (r->p == s)
		return unexpected(r, "an integer");
	r->p = s; /* errors point at the number's start */
	if (s[0] == '0' && n > 1 && s[1] >= '0' && s[1] <= '9')
		return syntax(r, "%s %.*s has a leading zero", what, n, s);
	for (; r->p < r->end && *r->p >= '0' && *r->p <= '9'; r->p++) {
		if (v > (UINT64_MAX - (uint64_t)(*r->p - '0')) / 10)
			return syntax(r, "%s %.*s is too large", what, n, s);
		v = v * 10 + (uint64_t)(*r->p - '0');
	}
	if (r->p == s || (r->p < r->end && *r->p && strchr("+-.eE", *r->p))) {
		r->p = s;
		return syntax(r, "%s %.*s is not a non-negative integer", what,
		              n, s);
	}
	*out = v;
	return 0;
}

/* [a, b, ...] of at most `max` integers into v[], the count in *n. */
static int uints(reader *r, const char *what, uint64_t *v, size_t max,
                 size_t *n)
{
	int rc;

	*n = 0;
	if (expect(r, '[', "'['"))
		return TG_EINVAL;
	ws(r);
	if (peek(r) == ']') {
		r->p++;
		return 0;
	}
	do {
		if (*n == max)
			return syntax(r, "%s has more than %zu entries", what,
			              max);
		if (read_uint(r, what, &v[(*n)++]))
			return TG_EINVAL;
	} while ((rc = next(r, ']')) == 1);
	return rc;
}

/* ----------------------------------------------------------- one entry */

static int read_dtype(reader *r, tinfo *ti)
{
	size_t len;
	char *name;
	int dt;

	if (str(r, &name, &len))
		return TG_EINVAL;
	for (dt = 0; dt < TG_NDTYPES; dt++)
		if (!strcmp(name, tg_sft_dtype[dt]) && strlen(name) == len)
			break;
	if (dt == TG_NDTYPES) {
		tg_sft_bad(r->path, "tensor '%s': unknown dtype '%s'",
		           r->tensor, name);
		free(name);
		return TG_EINVAL;
	}
	free(name);
	ti->dt = (tg_dtype)dt;
	return 0;
}

static int read_shape(reader *r, tinfo *ti)
{
	uint64_t v[TG_MAX_DIMS];
	size_t i;

	if (uints(r, "shape", v, TG_MAX_DIMS, &ti->ndim))
		return TG_EINVAL;
	for (i = 0; i < ti->ndim; i++) {
		if (v[i] > INT64_MAX)
			return syntax(r, "shape entry %llu is too large",
			              (unsigned long long)v[i]);
		ti->shape[i] = (int64_t)v[i];
	}
	return 0;
}

static int read_offsets(reader *r, tinfo *ti)
{
	uint64_t v[2];
	size_t n;

	if (uints(r, "data_offsets", v, 2, &n))
		return TG_EINVAL;
	if (n != 2)
		return syntax(r, "data_offsets has %zu entries, not 2", n);
	ti->begin = v[0];
	ti->end = v[1];
	return 0;
}

/* {"dtype": ..., "shape": [...], "data_offsets": [b, e]}: each field
 * exactly once, no others. */
static int read_entry(reader *r, tinfo *ti)
{
	static const char *const field[] = { "dtype", "shape",
		                             "data_offsets" };
	static int (*const readf[])(reader *, tinfo *) = {
		read_dtype, read_shape, read_offsets
	};
	unsigned seen = 0;
	size_t f, len;
	char *key;
	int rc = 0;

	if (expect(r, '{', "'{' (a tensor entry)"))
		return TG_EINVAL;
	ws(r);
	if (peek(r) == '}')
		r->p++;
	else
		do {
			if (str(r, &key, &len))
				return TG_EINVAL;
			for (f = 0; f < 3 && strcmp(key, field[f]); f++)
				;
			if (f == 3 || seen & 1u << f) {
				rc = syntax(r, "%s field '%s'", f == 3 ?
				            "unknown" : "repeated", key);
				free(key);
				return rc;
			}
			free(key);
			seen |= 1u << f;
			if (expect(r, ':', "':'") || readf[f](r, ti))
				return TG_EINVAL;
		} while ((rc = next(r, '}')) == 1);
	for (f = 0; !rc && f < 3; f++)
		if (!(seen & 1u << f))
			rc = syntax(r, "the entry lacks \"%s\"", field[f]);
	return rc;
}

/* "name": {...}: the entry joins s (tensor NULL for now) and info. */
static int read_tensor(reader *r, char *name, size_t len, tg_state *s,
                       tinfo_vec *info)
{
	tinfo ti = { .dt = TG_NDTYPES };
	int rc;

	if (!*name || strlen(name) != len) {
		rc = syntax(r, *name ? "tensor name holds \\u0000"
		                     : "empty tensor name");
		goto out_free_name;
	}
	r->tensor = name;
	rc = read_entry(r, &ti);
	r->tensor = NULL;
	if (rc)
		goto out_free_name;
	if (TG_VEC_PUSH(info, ti)) {
		rc = tg_error_oom(LOAD);
		goto out_free_name;
	}
	if ((rc = tg_state_push_(s, name, NULL, LOAD)) == 0)
		return 0;
	info->n--;
	if (rc == 1)
		rc = tg_sft_bad(r->path, "duplicate tensor name '%s'", name);
out_free_name:
	free(name);
	return rc;
}

/* One "key":"value" pair of "__metadata__" into the state (a repeated
 * key: the last value wins).  C strings cannot hold a NUL. */
static int read_meta_pair(reader *r, tg_state *s)
{
	size_t klen, vlen;
	char *k, *v = NULL;
	int rc;

	if (str(r, &k, &klen))
		return TG_EINVAL;
	if (expect(r, ':', "':'") || str(r, &v, &vlen))
		rc = TG_EINVAL;
	else if (strlen(k) != klen || strlen(v) != vlen)
		rc = syntax(r, "a NUL (\\u0000) in the __metadata__ key '%s'",
		            k);
	else if (!klen)
		rc = syntax(r, "an empty __metadata__ key");
	else
		rc = tg_state_meta_set_(s, k, v, LOAD);
	free(k);
	free(v);
	return rc;
}

/* "__metadata__": an object of strings, kept in the state. */
static int read_metadata(reader *r, tg_state *s)
{
	int rc;

	if (expect(r, '{', "'{' (__metadata__)"))
		return TG_EINVAL;
	ws(r);
	if (peek(r) == '}') {
		r->p++;
		return 0;
	}
	do {
		if ((rc = read_meta_pair(r, s)))
			return rc;
	} while ((rc = next(r, '}')) == 1);
	return rc;
}

/* The whole header: one object, then only whitespace (the padding). */
int tg_sft_read_header(reader *r, tg_state *s, tinfo_vec *info)
{
	int rc = 0, nmeta = 0;
	size_t len;
	char *key;

	if (peek(r) != '{') /* as the reference: no leading whitespace */
		return syntax(r, "the header does not start with '{'");
	r->p++;
	ws(r);
	if (peek(r) == '}')
		r->p++;
	else
		do {
			if (str(r, &key, &len))
				return TG_EINVAL;
			if (expect(r, ':', "':'")) {
				free(key);
				return TG_EINVAL;
			}
			if (strcmp(key, "__metadata__") || len != 12) {
				rc = read_tensor(r, key, len, s, info);
			} else {
				free(key);
				rc = nmeta++ ? syntax(r, "__metadata__ given "
				                      "twice")
				             : read_metadata(r, s);
			}
			if (rc)
				return rc;
		} while ((rc = next(r, '}')) == 1);
	if (rc)
		return rc;
	ws(r);
	return r->p == r->end ? 0 : syntax(r, "garbage after the JSON");
}

/*
 * test_state.c - named tensor state and safetensors files (nn/state.c):
 * the tg_state container, round trips of every dtype and of odd shapes,
 * a saved file against golden bytes computed by hand, loading a
 * checkpoint into a model's parameters, and the rejection of crafted
 * files (truncated, lying about sizes and offsets, malformed JSON,
 * unknown dtypes, overflowing shapes, bad escapes), each with its
 * message.  Run under valgrind (make check-valgrind) to see that no
 * rejection reads out of bounds or leaks.
 */
#include "config.h"

#include <glob.h>
#include <stdint.h>
#include <sys/stat.h>

#include "testlib.h"

/* The temporary files a save of tl_tmp_path(name) left behind. */
static size_t temporaries(const char *name)
{
	const char *path = tl_tmp_path(name), *slash = strrchr(path, '/');
	char pat[600];
	glob_t g;
	size_t n;

	snprintf(pat, sizeof pat, "%.*s/.%s.*.tmp", (int)(slash - path), path,
	         slash + 1);
	if (glob(pat, 0, NULL, &g))
		return 0;
	n = g.gl_pathc;
	globfree(&g);
	return n;
}

static void setup(void)
{
	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
	tg_scope_begin(); /* tensors made by a test go at teardown */
}

static void teardown(void)
{
	tg_scope_end();
	tg_shutdown();
}

static const char *write_raw(const char *name, const void *bytes, size_t n)
{
	const char *path = tl_tmp_path(name);
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

/* A file claiming header length `hlen`, then the header text, then
 * `ndata` data bytes (0, 1, 2, ...). */
static const char *write_st_len(const char *name, uint64_t hlen,
                                const char *header, size_t ndata)
{
	size_t n = strlen(header), i;
	unsigned char *b = malloc(8 + n + ndata);
	const char *path;

	ck_assert_ptr_nonnull(b);
	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(hlen >> (8 * i));
	memcpy(b + 8, header, n);
	for (i = 0; i < ndata; i++)
		b[8 + n + i] = (unsigned char)i;
	path = write_raw(name, b, 8 + n + ndata);
	free(b);
	return path;
}

static const char *write_st(const char *name, const char *header,
                            size_t ndata)
{
	return write_st_len(name, strlen(header), header, ndata);
}

/* Loading `path` fails with a message naming the op, the file and
 * `needle`. */
static void load_fails(const char *path, const char *needle)
{
	tg_state *s = tg_safetensors_load(path, NULL);

	ck_assert_msg(s == NULL, "%s loaded; expected \"%s\"", path, needle);
	ck_assert_error("safetensors_load: ");
	ck_assert_error(path);
	ck_assert_error(needle);
}

static tg_state *load_ok(const char *path)
{
	tg_state *s = tg_safetensors_load(path, NULL);

	ck_assert_msg(s != NULL, "%s", tg_last_error());
	return s;
}

static tg_tensor *f32(size_t ndim, const int64_t *shape, const float *v)
{
	tg_tensor *t = tg_tensor_new(NULL, TG_FLOAT32, ndim, shape, v);

	ck_assert_msg(t != NULL, "%s", tg_last_error());
	return t;
}

static void add(tg_state *s, const char *name, tg_tensor *t)
{
	ck_assert_msg(tg_state_add(s, name, t) == 0, "%s", tg_last_error());
}

/* The tensor's bytes (malloc'd), after checking its dtype and shape. */
static void *bytes_of(tg_tensor *t, tg_dtype dt, size_t ndim,
                      const int64_t *shape)
{
	size_t n = (size_t)tg_tensor_numel(t) * tg_dtype_size(dt);
	void *b = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(tg_tensor_dtype(t), dt);
	ck_assert_uint_eq(tg_tensor_ndim(t), ndim);
	ck_assert_int_eq(memcmp(tg_tensor_shape(t), shape,
	                        ndim * sizeof *shape), 0);
	ck_assert_msg(tg_tensor_data(t, b, n) == 0, "%s", tg_last_error());
	return b;
}

/* ---------------------------------------------------------- tg_state */

START_TEST(state_add_get_and_order)
{
	int64_t s2 = 2;
	float v[2] = { 1, 2 };
	tg_state *s = tg_state_new();
	tg_tensor *a = f32(1, &s2, v), *b = f32(0, NULL, v);
	char name[32];
	int i;

	add(s, "layer.w", a);
	add(s, "layer.b", b);
	ck_assert_uint_eq(tg_state_count(s), 2);
	ck_assert_str_eq(tg_state_name(s, 0), "layer.w");
	ck_assert_str_eq(tg_state_name(s, 1), "layer.b");
	ck_assert_ptr_eq(tg_state_tensor(s, 1), b);
	ck_assert_ptr_eq(tg_state_get(s, "layer.w"), a);

	ck_assert_ptr_null(tg_state_get(s, "layer.x"));
	ck_assert_str_eq(tg_last_error(), "state: no tensor named 'layer.x'");
	ck_assert_int_lt(tg_state_add(s, "layer.w", b), 0);
	ck_assert_str_eq(tg_last_error(), "state_add: duplicate name "
	                 "'layer.w'");
	ck_assert_int_lt(tg_state_add(s, "", a), 0);
	ck_assert_error("state_add: empty name");
	ck_assert_int_lt(tg_state_add(s, "bad\xff", a), 0);
	ck_assert_error("not valid UTF-8");
	ck_assert_ptr_null(tg_state_name(s, 2));
	ck_assert_error("state_name: index 2 of a state of 2");
	ck_assert_ptr_null(tg_state_tensor(s, 9));
	ck_assert_uint_eq(tg_state_count(NULL), 0);

	/* a failed expression keeps its own message */
	ck_assert_ptr_null(tg_reshape(a, 1, (int64_t[]){ 3 }));
	ck_assert_int_lt(tg_state_add(s, "r", tg_reshape(a, 1,
	                                              (int64_t[]){ 3 })), 0);
	ck_assert_error("reshape");

	/* many names: the index grows and every lookup still finds its own */
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof name, "p%d", i);
		add(s, name, a);
	}
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof name, "p%d", i);
		ck_assert_str_eq(tg_state_name(s, 2 + (size_t)i), name);
		ck_assert_ptr_eq(tg_state_get(s, name), a);
	}
	ck_assert_uint_eq(tg_state_count(s), 302);
	tg_state_free(s);
	tg_state_free(NULL);
}
END_TEST

START_TEST(state_holds_its_own_references)
{
	int64_t n = 3;
	float v[3] = { 4, 5, 6 }, got[3];
	tg_state *s = tg_state_new();
	tg_tensor *t;

	tg_scope_begin();
	add(s, "x", tg_tensor_new(NULL, TG_FLOAT32, 1, &n, v));
	tg_scope_end(); /* the scope's reference goes; the state's stays */
	t = tg_state_get(s, "x");
	ck_assert_int_eq(tg_tensor_data(t, got, sizeof got), 0);
	ck_assert_float_eq(got[2], 6);
	tg_state_free(s);
}
END_TEST

/* --------------------------------------------------------- round trips */

START_TEST(round_trip_every_dtype)
{
	int64_t shape[2] = { 2, 3 };
	unsigned char in[TG_NDTYPES][6 * 8];
	const char *path = tl_tmp_path("dtypes.safetensors");
	tg_state *s = tg_state_new(), *l;
	int dt;
	size_t i;

	for (dt = 0; dt < TG_NDTYPES; dt++) {
		size_t sz = tg_dtype_size((tg_dtype)dt);

		for (i = 0; i < 6 * sz; i++) /* every byte differs */
			in[dt][i] = (unsigned char)(dt == TG_BOOL ? i & 1
			                            : i * 37 + (size_t)dt + 1);
		add(s, tg_dtype_name((tg_dtype)dt),
		    tg_tensor_new(NULL, (tg_dtype)dt, 2, shape, in[dt]));
	}
	ck_assert_msg(tg_safetensors_save(s, path) == 0, "%s",
	              tg_last_error());
	l = load_ok(path);
	ck_assert_uint_eq(tg_state_count(l), TG_NDTYPES);
	for (dt = 0; dt < TG_NDTYPES; dt++) {
		void *b;

		ck_assert_str_eq(tg_state_name(l, (size_t)dt),
		                 tg_dtype_name((tg_dtype)dt));
		b = bytes_of(tg_state_tensor(l, (size_t)dt), (tg_dtype)dt, 2,
		             shape);
		ck_assert_msg(!memcmp(b, in[dt],
		                      6 * tg_dtype_size((tg_dtype)dt)),
		              "%s bytes differ", tg_dtype_name((tg_dtype)dt));
		free(b);
	}
	tg_state_free(s);
	tg_state_free(l);
}
END_TEST

START_TEST(round_trip_scalars_empty_and_large)
{
	const char *path = tl_tmp_path("shapes.safetensors");
	int64_t big = 1 << 20, z03[2] = { 0, 3 }, z205[3] = { 2, 0, 5 };
	int64_t i64 = -1234567890123LL, got64;
	double f64 = -0.125, gotd;
	tg_state *s = tg_state_new(), *l;
	tg_tensor *r;
	float *want, *got;
	size_t i;

	tg_manual_seed(7);
	r = tg_rand(NULL, TG_FLOAT32, 1, &big); /* lazy: save realizes it */
	add(s, "int64 scalar", tg_tensor_new(NULL, TG_INT64, 0, NULL, &i64));
	add(s, "empty (0,3)", tg_empty(NULL, TG_FLOAT32, 2, z03));
	add(s, "big", r);
	add(s, "empty (2,0,5)", tg_zeros(NULL, TG_INT8, 3, z205));
	add(s, "f64 scalar", tg_tensor_new(NULL, TG_FLOAT64, 0, NULL, &f64));
	ck_assert_msg(tg_safetensors_save(s, path) == 0, "%s",
	              tg_last_error());
	l = load_ok(path);
	ck_assert_uint_eq(tg_state_count(l), 5);
	ck_assert_int_eq(tg_tensor_data(tg_state_get(l, "int64 scalar"),
	                                &got64, 8), 0);
	ck_assert_int_eq(got64, i64);
	ck_assert_uint_eq(tg_tensor_ndim(tg_state_get(l, "f64 scalar")), 0);
	ck_assert_int_eq(tg_tensor_item(tg_state_get(l, "f64 scalar"), &gotd),
	                 0);
	ck_assert_double_eq(gotd, f64);
	free(bytes_of(tg_state_get(l, "empty (0,3)"), TG_FLOAT32, 2, z03));
	free(bytes_of(tg_state_get(l, "empty (2,0,5)"), TG_INT8, 3, z205));
	want = bytes_of(r, TG_FLOAT32, 1, &big);
	got = bytes_of(tg_state_get(l, "big"), TG_FLOAT32, 1, &big);
	for (i = 0; i < (size_t)big && want[i] == got[i]; i++)
		;
	ck_assert_uint_eq(i, (size_t)big);
	free(want);
	free(got);
	tg_state_free(s);
	tg_state_free(l);
}
END_TEST

START_TEST(round_trip_names_with_escapes)
{
	const char *path = tl_tmp_path("names.safetensors");
	static const char *const names[] = {
		"quote\"back\\slash", "tab\tnew\nline\x01", "caf\xc3\xa9",
		"emoji \xf0\x9f\x98\x80", "/slash/",
	};
	tg_state *s = tg_state_new(), *l;
	float v = 1;
	size_t i;

	for (i = 0; i < TG_ARRAY_LEN(names); i++)
		add(s, names[i], f32(0, NULL, &v));
	ck_assert_int_eq(tg_safetensors_save(s, path), 0);
	l = load_ok(path);
	ck_assert_uint_eq(tg_state_count(l), TG_ARRAY_LEN(names));
	for (i = 0; i < TG_ARRAY_LEN(names); i++)
		ck_assert_str_eq(tg_state_name(l, i), names[i]);
	tg_state_free(s);
	tg_state_free(l);
}
END_TEST

/* ----------------------------------------------------- the file format */

/* {"a": float32 [1, 2], "q\"\\\n\x01é": int8 -1}, written by hand:
 * 119 bytes of JSON padded with one space to 120, then 9 data bytes. */
#define GOLDEN_HEADER                                                      \
	"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"   \
	"\"q\\\"\\\\\\n\\u0001\xc3\xa9\":{\"dtype\":\"I8\",\"shape\":[],"    \
	"\"data_offsets\":[8,9]}} "
static const unsigned char golden[] =
	"\x78\0\0\0\0\0\0\0" GOLDEN_HEADER
	"\x00\x00\x80\x3f" "\x00\x00\x00\x40" "\xff";
#define GOLDEN_LEN (sizeof golden - 1)
static const char golden_name[] = "q\"\\\n\x01\xc3\xa9";

START_TEST(save_matches_golden_bytes)
{
	const char *path = tl_tmp_path("golden.safetensors");
	int64_t two = 2;
	float v[2] = { 1, 2 };
	int8_t m1 = -1;
	unsigned char got[GOLDEN_LEN + 16];
	tg_state *s = tg_state_new();
	size_t n;
	FILE *f;

	ck_assert_uint_eq(strlen(GOLDEN_HEADER), 120);
	ck_assert_uint_eq(GOLDEN_LEN, 8 + 120 + 9);
	add(s, "a", f32(1, &two, v));
	add(s, golden_name, tg_tensor_new(NULL, TG_INT8, 0, NULL, &m1));
	ck_assert_int_eq(tg_safetensors_save(s, path), 0);
	ck_assert_ptr_nonnull(f = fopen(path, "rb"));
	n = fread(got, 1, sizeof got, f);
	fclose(f);
	ck_assert_uint_eq(n, GOLDEN_LEN);
	ck_assert_int_eq(memcmp(got, golden, GOLDEN_LEN), 0);

	/* the write went through a temporary file, renamed away */
	ck_assert_uint_eq(temporaries("golden.safetensors"), 0);
	tg_state_free(s);
}
END_TEST

START_TEST(load_golden_bytes)
{
	const char *path = write_raw("golden-in.st", golden, GOLDEN_LEN);
	int64_t two = 2;
	tg_state *l = load_ok(path);
	float *v;
	int8_t m1 = 0;

	ck_assert_uint_eq(tg_state_count(l), 2);
	ck_assert_str_eq(tg_state_name(l, 1), golden_name);
	v = bytes_of(tg_state_get(l, "a"), TG_FLOAT32, 1, &two);
	ck_assert_float_eq(v[0], 1);
	ck_assert_float_eq(v[1], 2);
	free(v);
	ck_assert_int_eq(tg_tensor_data(tg_state_tensor(l, 1), &m1, 1), 0);
	ck_assert_int_eq(m1, -1);
	tg_state_free(l);
}
END_TEST

START_TEST(save_empty_state_and_overwrite)
{
	const char *path = tl_tmp_path("empty.st");
	static const unsigned char want[] = "\x08\0\0\0\0\0\0\0{}      ";
	unsigned char got[32];
	tg_state *s = tg_state_new(), *l;
	float v = 3;
	FILE *f;

	ck_assert_int_eq(tg_safetensors_save(s, path), 0);
	ck_assert_ptr_nonnull(f = fopen(path, "rb"));
	ck_assert_uint_eq(fread(got, 1, sizeof got, f), 16);
	fclose(f);
	ck_assert_int_eq(memcmp(got, want, 16), 0);
	l = load_ok(path);
	ck_assert_uint_eq(tg_state_count(l), 0);
	tg_state_free(l);

	add(s, "v", f32(0, NULL, &v)); /* a second save replaces the file */
	ck_assert_int_eq(tg_safetensors_save(s, path), 0);
	l = load_ok(path);
	ck_assert_uint_eq(tg_state_count(l), 1);
	tg_state_free(l);
	tg_state_free(s);
}
END_TEST

START_TEST(save_failures)
{
	const char *dir = tl_tmp_path("a-directory");
	tg_state *s = tg_state_new();
	float v = 3;

	add(s, "v", f32(0, NULL, &v));
	ck_assert_int_lt(tg_safetensors_save(s, "/nonexistent-dir/x.st"), 0);
	ck_assert_error("safetensors_save: /nonexistent-dir/x.st: cannot "
	                "create a file in its directory: No such file");

	/* the rename fails: the temporary file does not stay behind */
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(mkdir(tl_tmp_path("a-directory/inside"), 0700), 0);
	ck_assert_int_lt(tg_safetensors_save(s, dir), 0);
	ck_assert_error("a-directory: cannot replace it: ");
	ck_assert_uint_eq(temporaries("a-directory"), 0);

	ck_assert_int_lt(tg_safetensors_save(NULL, "x"), 0);
	ck_assert_error("safetensors_save: NULL state");
	add(s, "__metadata__", f32(0, NULL, &v));
	ck_assert_int_lt(tg_safetensors_save(s, tl_tmp_path("meta.st")), 0);
	ck_assert_error("'__metadata__' is reserved");
	tg_state_free(s);
}
END_TEST

/* ------------------------------------------------ loading into a model */

/* A model's parameters: w (2,3) and b (3,) float32, zeros. */
static tg_state *model(void)
{
	int64_t w[2] = { 2, 3 }, b = 3;
	tg_state *s = tg_state_new();

	add(s, "w", tg_zeros(NULL, TG_FLOAT32, 2, w));
	add(s, "b", tg_zeros(NULL, TG_FLOAT32, 1, &b));
	ck_assert_int_eq(tg_realize(tg_state_get(s, "w")), 0);
	return s;
}

static void expect_values(const tg_state *s, const char *name,
                          const float *want, size_t n)
{
	float got[8];
	size_t i;

	ck_assert_int_eq(tg_tensor_data(tg_state_get(s, name), got,
	                                n * sizeof *got), 0);
	for (i = 0; i < n; i++)
		ck_assert_float_eq(got[i], want[i]);
}

START_TEST(state_load_into_model)
{
	static const float w[6] = { 1, 2, 3, 4, 5, 6 }, b[3] = { 7, 8, 9 };
	static const float zero[6] = { 0 };
	int64_t ws[2] = { 2, 3 }, bs = 3, step = 100;
	const char *path = tl_tmp_path("ckpt.st");
	tg_state *ck = tg_state_new(), *m = model(), *file;
	tg_tensor *w_before = tg_state_get(m, "w");

	add(ck, "b", f32(1, &bs, b));
	add(ck, "w", f32(2, ws, w));
	add(ck, "step", tg_tensor_new(NULL, TG_INT64, 0, NULL, &step));
	ck_assert_int_eq(tg_safetensors_save(ck, path), 0);
	file = load_ok(path);

	/* strict: the extra "step" is refused, and nothing changes */
	ck_assert_int_lt(tg_state_load(m, file, 1), 0);
	ck_assert_str_eq(tg_last_error(), "state_load: source tensor 'step' "
	                 "has no place here (strict)");
	expect_values(m, "w", zero, 6);

	/* non-strict: w and b load into the same tensor objects */
	ck_assert_msg(tg_state_load(m, file, 0) == 0, "%s", tg_last_error());
	ck_assert_ptr_eq(tg_state_get(m, "w"), w_before);
	expect_values(m, "w", w, 6);
	expect_values(m, "b", b, 3);
	tg_state_free(m);

	/* a parameter the checkpoint lacks */
	m = model();
	add(m, "c", tg_zeros(NULL, TG_FLOAT32, 1, &bs));
	add(ck, "extra", f32(0, NULL, b));
	ck_assert_int_lt(tg_state_load(m, ck, 1), 0);
	ck_assert_error("state_load: no tensor 'c' in the source (strict)");
	ck_assert_int_eq(tg_state_load(m, ck, 0), 0);
	expect_values(m, "c", zero, 3);
	expect_values(m, "b", b, 3);
	tg_state_free(m);
	tg_state_free(file);
	tg_state_free(ck);
}
END_TEST

START_TEST(state_load_mismatches)
{
	int64_t ws[2] = { 3, 2 }, bs = 3;
	static const float zero[6] = { 0 };
	tg_state *m = model(), *a = tg_state_new(), *b = tg_state_new();

	add(a, "w", tg_ones(NULL, TG_FLOAT32, 2, ws));
	ck_assert_int_lt(tg_state_load(m, a, 0), 0);
	ck_assert_str_eq(tg_last_error(), "state_load: 'w' is (3,2) float32 "
	                 "in the source and (2,3) float32 here");
	add(b, "b", tg_ones(NULL, TG_FLOAT16, 1, &bs));
	ck_assert_int_lt(tg_state_load(m, b, 0), 0);
	ck_assert_error("'b' is (3,) float16 in the source and (3,) float32");
	expect_values(m, "w", zero, 6);
	ck_assert_int_lt(tg_state_load(NULL, b, 0), 0);
	ck_assert_error("state_load: NULL destination");
	tg_state_free(m);
	tg_state_free(a);
	tg_state_free(b);
}
END_TEST

/* -------------------------------------------------------- crafted files */

/* One tensor entry's JSON. */
#define ENT(name, dt, shape, offs) \
	"\"" name "\":{\"dtype\":\"" dt "\",\"shape\":" shape \
	",\"data_offsets\":" offs "}"

static const struct bad {
	const char *header;
	size_t ndata;
	const char *needle;
} bad_files[] = {
	/* not JSON, or not the JSON the format wants */
	{ "hello", 0, "header byte 0: the header does not start with '{'" },
	{ "[1]", 0, "does not start with '{'" },
	{ " {}", 0, "does not start with '{'" },
	{ "", 0, "does not start with '{'" },
	{ "{\"a\":", 0, "found the end of the header" },
	{ "{\"a\":{", 0, "found the end of the header" },
	{ "{\"a", 0, "unterminated string" },
	{ "{\"a\":1}", 0, "tensor 'a', header byte 5: expected '{' (a tensor "
	                  "entry), found '1'" },
	{ "{\"a\" {}}", 0, "expected ':', found '{'" },
	{ "{a:1}", 0, "expected a string, found 'a'" },
	{ "{" ENT("a", "F32", "[1]", "[0,4]") ",}", 4, "expected a string, "
	                                              "found '}'" },
	{ "{" ENT("a", "F32", "[1]", "[0,4]") "} x", 4, "header byte 55: "
	                                                "garbage after the "
	                                                "JSON" },
	{ "{" ENT("a", "F32", "[1]", "[0,4]") "}{}", 4, "garbage after" },
	{ "{" ENT("a", "F32", "[1]", "[0,4]") " " ENT("b", "F32", "[1]",
	                                                "[4,8]") "}", 8,
	  "expected ',' or '}', found '\"'" },
	/* entries missing a field, with an extra one or of the wrong type */
	{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4,
	  "tensor 'a', header byte 32: the entry lacks \"data_offsets\"" },
	{ "{\"a\":{}}", 0, "the entry lacks \"dtype\"" },
	{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],"
	  "\"x\":1}}", 4, "unknown field 'x'" },
	{ "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\"}}", 4,
	  "repeated field 'dtype'" },
	{ "{" ENT("a", "F32", "\"x\"", "[0,4]") "}", 4, "expected '[', found "
	                                               "'\"'" },
	{ "{\"a\":{\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
	  "expected a string, found '3'" },
	{ "{" ENT("a", "F32", "[1]", "{}") "}", 4, "expected '[', found '{'" },
	{ "{" ENT("a", "F32", "[1,]", "[0,4]") "}", 4, "expected an integer, "
	                                              "found ']'" },
	{ "{" ENT("a", "F32", "[1", "[0,4]") "}", 4, "expected an integer, "
	                                            "found '\"'" },
	/* dtypes */
	{ "{" ENT("w", "F8_E4M3", "[1]", "[0,1]") "}", 1,
	  "tensor 'w': unknown dtype 'F8_E4M3'" },
	{ "{" ENT("w", "f32", "[1]", "[0,4]") "}", 4, "unknown dtype 'f32'" },
	/* shapes */
	{ "{" ENT("a", "F32", "[-1]", "[0,4]") "}", 4,
	  "shape -1 is not a non-negative integer" },
	{ "{" ENT("a", "F32", "[1.5]", "[0,4]") "}", 4,
	  "shape 1.5 is not a non-negative integer" },
	{ "{" ENT("a", "F32", "[1e0]", "[0,4]") "}", 4,
	  "shape 1e0 is not a non-negative integer" },
	{ "{" ENT("a", "F32", "[01]", "[0,4]") "}", 4,
	  "shape 01 has a leading zero" },
	{ "{" ENT("a", "F32", "[true]", "[0,4]") "}", 4,
	  "expected an integer, found 't'" },
	{ "{" ENT("a", "F32", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
	                      "1,1,1,1,1,1,1,1,1,1,1]", "[0,4]") "}", 4,
	  "shape has more than 32 entries" },
	{ "{" ENT("a", "F32", "[18446744073709551615]", "[0,4]") "}", 4,
	  "shape entry 18446744073709551615 is too large" },
	{ "{" ENT("a", "F32", "[18446744073709551616]", "[0,4]") "}", 4,
	  "shape 18446744073709551616 is too large" },
	/* numel * size overflows: checked, never wrapped */
	{ "{" ENT("a", "F32", "[4294967296,4294967296]", "[0,0]") "}", 0,
	  "tensor 'a': shape (4294967296,4294967296) has too many elements" },
	{ "{" ENT("a", "F32", "[0,4294967296,4294967296]", "[0,0]") "}", 0,
	  "has too many elements" },
	{ "{" ENT("a", "F32", "[4611686018427387904]", "[0,0]") "}", 0,
	  "(4611686018427387904,) float32 is larger than 2^64 bytes" },
	/* data_offsets */
	{ "{" ENT("a", "F32", "[1]", "[0]") "}", 4,
	  "data_offsets has 1 entries, not 2" },
	{ "{" ENT("a", "F32", "[1]", "[0,4,8]") "}", 8,
	  "data_offsets has more than 2 entries" },
	{ "{" ENT("a", "F32", "[1]", "[0,-4]") "}", 8,
	  "data_offsets -4 is not a non-negative integer" },
	{ "{" ENT("a", "F32", "[1]", "[8,4]") "}", 8,
	  "tensor 'a' data_offsets [8, 4) end before they begin" },
	{ "{" ENT("a", "F32", "[4]", "[0,16]") "}", 8,
	  "tensor 'a' data_offsets [0, 16) end beyond the data section (8 "
	  "bytes)" },
	{ "{" ENT("a", "F32", "[1]", "[0,18446744073709551615]") "}", 8,
	  "end beyond the data section" },
	{ "{" ENT("w", "F32", "[4,6]", "[0,64]") "}", 64,
	  "tensor 'w' data_offsets [0, 64) need 96 bytes for (4,6) float32" },
	{ "{" ENT("a", "BF16", "[]", "[0,4]") "}", 4,
	  "[0, 4) need 2 bytes for () bfloat16" },
	/* the ranges must tile the data section */
	{ "{" ENT("a", "F32", "[1]", "[0,4]") "," ENT("b", "F32", "[1]",
	                                              "[8,12]") "}", 12,
	  "data bytes [4, 8) belong to no tensor" },
	{ "{" ENT("b", "F32", "[1]", "[4,8]") "}", 8,
	  "data bytes [0, 4) belong to no tensor" },
	{ "{" ENT("a", "F32", "[2]", "[0,8]") "," ENT("b", "F32", "[1]",
	                                             "[4,8]") "}", 8,
	  "tensors 'a' and 'b' overlap" },
	{ "{" ENT("a", "F32", "[1]", "[0,4]") "," ENT("b", "F32", "[1]",
	                                             "[0,4]") "}", 4,
	  "tensors 'a' and 'b' overlap" },
	{ "{" ENT("a", "F32", "[1]", "[0,4]") "}", 8,
	  "data bytes [4, 8) at the end belong to no tensor" },
	/* names */
	{ "{" ENT("a", "F32", "[1]", "[0,4]") "," ENT("a", "F32", "[1]",
	                                             "[4,8]") "}", 8,
	  "duplicate tensor name 'a'" },
	{ "{" ENT("", "F32", "[1]", "[0,4]") "}", 4, "empty tensor name" },
	{ "{" ENT("a\\u0000b", "F32", "[1]", "[0,4]") "}", 4,
	  "tensor name holds \\u0000" },
	{ "{" ENT("a\\x", "F32", "[1]", "[0,4]") "}", 4,
	  "header byte 4: invalid escape '\\x'" },
	{ "{" ENT("a\\ud800", "F32", "[1]", "[0,4]") "}", 4,
	  "high surrogate \\ud800 without its low half" },
	{ "{" ENT("a\\ud800\\u0041", "F32", "[1]", "[0,4]") "}", 4,
	  "high surrogate \\ud800 followed by \\u0041" },
	{ "{" ENT("a\\udc00", "F32", "[1]", "[0,4]") "}", 4,
	  "lone low surrogate \\udc00" },
	{ "{" ENT("a\\u12g4", "F32", "[1]", "[0,4]") "}", 4,
	  "\\u escape with a non-hex digit" },
	{ "{\"a\\u12", 0, "truncated \\u escape" },
	{ "{\"a\\", 0, "unterminated string" },
	{ "{" ENT("a\nb", "F32", "[1]", "[0,4]") "}", 4,
	  "control character 0x0a in a string" },
	{ "{" ENT("a\xff", "F32", "[1]", "[0,4]") "}", 4,
	  "invalid UTF-8 in a string" },
	{ "{" ENT("a\xc0\xaf", "F32", "[1]", "[0,4]") "}", 4,
	  "invalid UTF-8 in a string" }, /* overlong '/' */
	{ "{" ENT("a\xed\xa0\x80", "F32", "[1]", "[0,4]") "}", 4,
	  "invalid UTF-8 in a string" }, /* a surrogate in UTF-8 */
	{ "{" ENT("a\xe2\x82", "F32", "[1]", "[0,4]") "}", 4,
	  "invalid UTF-8 in a string" }, /* cut short */
	/* __metadata__ holds strings only, once */
	{ "{\"__metadata__\":{\"k\":1}}", 0, "expected a string, found '1'" },
	{ "{\"__metadata__\":[]}", 0, "expected '{' (__metadata__)" },
	{ "{\"__metadata__\":{},\"__metadata__\":{}}", 0,
	  "__metadata__ given twice" },
	{ "{\"__metadata__\\u0000\":{}}", 0, "tensor name holds \\u0000" },
	{ "{\"__metadata__\":{\"k\\u0000\":\"v\"}}", 0,
	  "a NUL (\\u0000) in the __metadata__ key 'k'" },
	{ "{\"__metadata__\":{\"k\":\"v\\u0000w\"}}", 0,
	  "a NUL (\\u0000) in the __metadata__ key 'k'" },
	{ "{\"__metadata__\":{\"\":\"v\"}}", 0,
	  "an empty __metadata__ key" },
};

START_TEST(rejects_crafted_file)
{
	const struct bad *b = &bad_files[_i];
	const char *path = write_st("bad.st", b->header, b->ndata);

	load_fails(path, b->needle);
}
END_TEST

START_TEST(accepts_unusual_but_valid_files)
{
	static const char *const ok[] = {
		/* header order kept even when the data is in another order */
		"{" ENT("b", "F32", "[1]", "[4,8]") "," ENT("a", "F32", "[1]",
		                                           "[0,4]") "}",
		/* metadata, whitespace, padding, zero-size tensors anywhere */
		"{ \"__metadata__\" : {\"format\":\"pt\", \"\\u00e9\":\"\"} ,\n"
		"\t" ENT("b", "F32", "[1]", "[4,8]") "," ENT("z", "I8", "[0,7]",
		                                            "[4,4]") ","
		ENT("a", "F32", "[1]", "[0,4]") "}   \n\r\t",
		"{" ENT("b", "F32", "[1]", "[4,8]") "," ENT("a", "U32", "[]",
		                                           "[0,4]") ","
		ENT("z", "BOOL", "[3,0]", "[8,8]") "}",
	};
	size_t i;

	for (i = 0; i < TG_ARRAY_LEN(ok); i++) {
		tg_state *s = load_ok(write_st("ok.st", ok[i], 8));
		uint32_t a;

		ck_assert_str_eq(tg_state_name(s, 0), "b");
		ck_assert_int_eq(tg_tensor_data(tg_state_get(s, "a"), &a, 4),
		                 0);
		ck_assert_uint_eq(a, 0x03020100); /* bytes 0..3 (LE) */
		ck_assert_uint_eq(tg_state_metadata_count(s), i == 1 ? 2 : 0);
		if (i == 1) {
			ck_assert_str_eq(tg_state_metadata(s, "format"), "pt");
			ck_assert_str_eq(tg_state_metadata_key(s, 1), "\xc3\xa9");
			ck_assert_str_eq(tg_state_metadata(s, "\xc3\xa9"), "");
		}
		tg_state_free(s);
	}
}
END_TEST

/* Metadata is written first, escaped like names, in insertion order,
 * and read back; a repeated key in a file keeps its last value. */
#define META_HEADER                                                        \
	"{\"__metadata__\":{\"format\":\"pt\",\"n\\\"\\n\":\"\xc3\xa9\\t\"},"     \
	"\"a\":{\"dtype\":\"I8\",\"shape\":[],\"data_offsets\":[0,1]}}"
START_TEST(metadata_round_trip)
{
	const char *path = tl_tmp_path("meta.safetensors");
	unsigned char got[256];
	tg_state *s = tg_state_new(), *l;
	int8_t one = 1;
	size_t n;
	FILE *f;

	add(s, "a", tg_tensor_new(NULL, TG_INT8, 0, NULL, &one));
	ck_assert_int_eq(tg_state_set_metadata(s, "format", "np"), 0);
	ck_assert_int_eq(tg_state_set_metadata(s, "gone", "x"), 0);
	ck_assert_int_eq(tg_state_set_metadata(s, "n\"\n", "\xc3\xa9\t"), 0);
	ck_assert_int_eq(tg_state_set_metadata(s, "format", "pt"), 0);
	ck_assert_int_eq(tg_state_set_metadata(s, "gone", NULL), 0);
	ck_assert_int_eq(tg_state_set_metadata(s, "never", NULL), 0);
	ck_assert_uint_eq(tg_state_metadata_count(s), 2);
	ck_assert_str_eq(tg_state_metadata_key(s, 0), "format");
	ck_assert_int_eq(tg_safetensors_save(s, path), 0);
	ck_assert_ptr_nonnull(f = fopen(path, "rb"));
	n = fread(got, 1, sizeof got, f);
	fclose(f);
	ck_assert_uint_ge(n, 8 + strlen(META_HEADER));
	ck_assert_uint_eq(got[0] % 8, 0);
	ck_assert_int_eq(memcmp(got + 8, META_HEADER, strlen(META_HEADER)), 0);
	l = load_ok(path);
	ck_assert_uint_eq(tg_state_count(l), 1);
	ck_assert_uint_eq(tg_state_metadata_count(l), 2);
	ck_assert_str_eq(tg_state_metadata_key(l, 1), "n\"\n");
	ck_assert_str_eq(tg_state_metadata(l, "n\"\n"), "\xc3\xa9\t");
	ck_assert_str_eq(tg_state_metadata(l, "format"), "pt");
	tg_state_free(l);
	/* only metadata, no tensors */
	tg_state_free(s);
	s = tg_state_new();
	ck_assert_int_eq(tg_state_set_metadata(s, "k", "v"), 0);
	ck_assert_int_eq(tg_safetensors_save(s, path), 0);
	l = load_ok(path);
	ck_assert_uint_eq(tg_state_count(l), 0);
	ck_assert_str_eq(tg_state_metadata(l, "k"), "v");
	tg_state_free(l);
	l = load_ok(write_st("dup.st", "{\"__metadata__\":{\"k\":\"1\","
	                     "\"k\":\"2\"}}", 0));
	ck_assert_uint_eq(tg_state_metadata_count(l), 1);
	ck_assert_str_eq(tg_state_metadata(l, "k"), "2");
	tg_state_free(l);
	/* errors */
	ck_assert_ptr_null(tg_state_metadata(s, "nope"));
	ck_assert_error("state_metadata: no metadata 'nope'");
	ck_assert_ptr_null(tg_state_metadata_key(s, 1));
	ck_assert_error("state_metadata_key: index 1 of 1 keys");
	ck_assert_int_eq(tg_state_set_metadata(s, "", "v"), TG_EINVAL);
	ck_assert_error("state_set_metadata: empty metadata key");
	ck_assert_int_eq(tg_state_set_metadata(s, "k", "\xff"), TG_EINVAL);
	ck_assert_error("state_set_metadata: metadata 'k' is not valid UTF-8");
	ck_assert_int_eq(tg_state_set_metadata(NULL, "k", "v"), TG_EINVAL);
	ck_assert_error("state_set_metadata: NULL state");
	ck_assert_int_eq(tg_state_set_metadata(s, NULL, "v"), TG_EINVAL);
	ck_assert_error("state_set_metadata: NULL key");
	ck_assert_uint_eq(tg_state_metadata_count(NULL), 0);
	tg_state_free(s);
}
END_TEST

START_TEST(decodes_escapes_in_names)
{
	const char *path = write_st("esc.st", "{" ENT("q\\\"b\\\\s\\u00e9"
	                                              "\\ud83d\\ude00\\/\\t",
	                                              "U8", "[]", "[0,1]")
	                                      "}", 1);
	tg_state *s = load_ok(path);

	ck_assert_str_eq(tg_state_name(s, 0),
	                 "q\"b\\s\xc3\xa9\xf0\x9f\x98\x80/\t");
	tg_state_free(s);
}
END_TEST

START_TEST(rejects_lying_lengths)
{
	unsigned char five[5] = { 1, 0, 0, 0, 0 };
	unsigned char *b = calloc(1, 1000);
	const char *path;
	FILE *f;

	load_fails(write_raw("five.st", five, 5),
	           "truncated: 5 bytes, need at least 8");
	load_fails(write_raw("zero.st", five, 0),
	           "truncated: 0 bytes, need at least 8");
	b[4] = 1; /* 2^32 */
	load_fails(write_raw("liar.st", b, 1000),
	           "header length 4294967296 larger than the file (1000 "
	           "bytes)");
	load_fails(write_st_len("liar2.st", 3, "{}", 0),
	           "header length 3 larger than the file (10 bytes)");
	load_fails(write_st_len("liar3.st", UINT64_MAX, "{}", 0),
	           "header length 18446744073709551615 larger");
	/* a header shorter than its JSON: the reader stops at its end */
	load_fails(write_st_len("short.st", 10,
	                        "{" ENT("a", "F32", "[1]", "[0,4]") "}", 4),
	           "header byte 10: unterminated string");
	/* over the reference's 100 MB limit (a sparse file) */
	path = tl_tmp_path("huge.st");
	ck_assert_ptr_nonnull(f = fopen(path, "wb"));
	memset(b, 0, 8);
	b[0] = 0x08, b[1] = 0xe1, b[2] = 0xf5, b[3] = 0x05; /* 100000008 */
	ck_assert_uint_eq(fwrite(b, 1, 8, f), 8);
	ck_assert_int_eq(ftruncate(fileno(f), 8 + 100000008), 0);
	fclose(f);
	load_fails(path, "header length 100000008 over the limit of "
	                 "100000000 bytes");
	unlink(path);
	free(b);

	load_fails(tl_tmp_path("missing.st"), "cannot open: No such file");
	ck_assert_int_eq(mkdir(tl_tmp_path("dir.st"), 0700), 0);
	load_fails(tl_tmp_path("dir.st"), "cannot open: is a directory");
	/* a FIFO was opened and waited on for a writer forever */
	ck_assert_int_eq(mkfifo(tl_tmp_path("fifo.st"), 0600), 0);
	load_fails(tl_tmp_path("fifo.st"), "cannot open: is a FIFO");
	unlink(tl_tmp_path("fifo.st"));
	load_fails("/dev/null", "cannot open: is a character device");
}
END_TEST

/* Every prefix of a good file and every header byte replaced by a few
 * troublemakers: each load succeeds or fails with a message, and never
 * reads out of bounds (valgrind and ASan builds check that part). */
START_TEST(truncations_and_byte_flips)
{
	static const unsigned char subst[] = { 0, '"', '\\', '[', '{', '9',
		                               ',', 0xff };
	unsigned char b[GOLDEN_LEN];
	size_t n, i, k, ok = 0;
	const char *path;
	tg_state *s;

	for (n = 0; n < GOLDEN_LEN; n++) {
		s = tg_safetensors_load(write_raw("cut.st", golden, n), NULL);
		ck_assert_msg(!s, "a %zu-byte prefix loaded", n);
		ck_assert_error("safetensors_load: ");
	}
	for (i = 0; i < 8 + 120; i++)
		for (k = 0; k < sizeof subst; k++) {
			memcpy(b, golden, GOLDEN_LEN);
			b[i] = subst[k];
			path = write_raw("flip.st", b, GOLDEN_LEN);
			s = tg_safetensors_load(path, NULL);
			if (s)
				ok++;
			else
				ck_assert_error("safetensors_load: ");
			tg_state_free(s);
		}
	ck_assert_uint_gt(ok, 0); /* a zero over a zero changes nothing */
}
END_TEST

static Suite *state_suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("state");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, state_add_get_and_order);
	tcase_add_test(tc, state_holds_its_own_references);
	tcase_add_test(tc, round_trip_every_dtype);
	tcase_add_test(tc, round_trip_scalars_empty_and_large);
	tcase_add_test(tc, round_trip_names_with_escapes);
	tcase_add_test(tc, save_matches_golden_bytes);
	tcase_add_test(tc, load_golden_bytes);
	tcase_add_test(tc, save_empty_state_and_overwrite);
	tcase_add_test(tc, save_failures);
	tcase_add_test(tc, state_load_into_model);
	tcase_add_test(tc, state_load_mismatches);
	tcase_add_loop_test(tc, rejects_crafted_file, 0,
	                    (int)TG_ARRAY_LEN(bad_files));
	tcase_add_test(tc, accepts_unusual_but_valid_files);
	tcase_add_test(tc, metadata_round_trip);
	tcase_add_test(tc, decodes_escapes_in_names);
	tcase_add_test(tc, rejects_lying_lengths);
	tcase_add_test(tc, truncations_and_byte_flips);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tl_run(state_suite());
}

/*
 * test_gguf.c - the GGUF reader (nn/gguf.c, nn/gguf_get.c).
 *
 * Against the gguf package (the reader and writer kept with llama.cpp):
 * tests/gguf/make_files.py writes a small file with every value type,
 * arrays and tensors of several ggml types, and dumps what
 * gguf.GGUFReader reads in it and in the real model (SmolLM2 Q4_1);
 * every pair, array element, tensor info and the tensors' bytes are
 * compared with what tgcore reads.  The ggml type table (nn/ggml.c) is
 * checked against gguf.constants.  These need TG_DEPS_DIR (deps.sh);
 * without it the suite runs the rest and exits 77 (skip), unless
 * TG_TEST_REQUIRE_DEPS is set.
 *
 * Without the package: version 2 files built here byte by byte, and
 * hostile ones (truncated anywhere, lying counts and lengths, bad
 * types, dims, offsets, alignments, duplicates), each refused with its
 * message; every truncation and every byte flipped of a valid file is
 * refused or read without a crash (make check-valgrind shows no read
 * out of bounds).
 */
#include "config.h"

#include <stdint.h>
#include <sys/stat.h>

#include "testlib.h"

static char gen_dir[512];   /* the generator's output; "" without deps */
static int have_model;

static void setup(void)
{
	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
	tg_scope_begin();
}

static void teardown(void)
{
	tg_scope_end();
	tg_shutdown();
}

/* ------------------------------------------------ files built in C */

typedef struct fbuf {
	unsigned char b[8192];
	size_t n;
} fbuf;

static void put(fbuf *f, uint64_t v, size_t n)
{
	size_t k;

	ck_assert_uint_le(f->n + n, sizeof f->b);
	for (k = 0; k < n; k++)
		f->b[f->n++] = (unsigned char)(v >> 8 * k);
}

static void put_strn(fbuf *f, const char *s, size_t n)
{
	put(f, n, 8);
	ck_assert_uint_le(f->n + n, sizeof f->b);
	memcpy(f->b + f->n, s, n);
	f->n += n;
}

static void put_str(fbuf *f, const char *s)
{
	put_strn(f, s, strlen(s));
}

static void header(fbuf *f, uint32_t version, uint64_t nt, uint64_t nkv)
{
	memcpy(f->b, "GGUF", 4);
	f->n = 4;
	put(f, version, 4);
	put(f, nt, 8);
	put(f, nkv, 8);
}

/* A pair of a fixed-size type. */
static void kv_num(fbuf *f, const char *key, uint32_t vt, uint64_t v,
                   size_t size)
{
	put_str(f, key);
	put(f, vt, 4);
	put(f, v, size);
}

static void kv_str(fbuf *f, const char *key, const char *val)
{
	put_str(f, key);
	put(f, TG_GGUF_STRING, 4);
	put_str(f, val);
}

static void tinfo(fbuf *f, const char *name, uint32_t ndim,
                  const uint64_t *ne, uint32_t type, uint64_t off)
{
	uint32_t d;

	put_str(f, name);
	put(f, ndim, 4);
	for (d = 0; d < ndim; d++)
		put(f, ne[d], 8);
	put(f, type, 4);
	put(f, off, 8);
}

/* Zeros up to a multiple of align, then n bytes 0, 1, 2, ... */
static void data(fbuf *f, size_t align, size_t n)
{
	size_t k;

	while (f->n % align)
		f->b[f->n++] = 0;
	for (k = 0; k < n; k++)
		put(f, k & 0xff, 1);
}

static const char *save(const char *name, const fbuf *f)
{
	const char *path = tl_tmp_path(name);
	FILE *fp = fopen(path, "wb");

	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(f->b, 1, f->n, fp), f->n);
	ck_assert_int_eq(fclose(fp), 0);
	return path;
}

/* A valid version 2 file: pairs of several types, an array of strings,
 * two tensors (F32 (2,3) and Q8_0 (1,32)) at alignment 32. */
static void valid_file(fbuf *f)
{
	uint64_t ne1[2] = { 3, 2 }, ne2[2] = { 32, 1 };

	header(f, 2, 2, 5);
	kv_str(f, "general.architecture", "llama");
	kv_num(f, "n.i16", TG_GGUF_INT16, (uint16_t)-7, 2);
	kv_num(f, "n.f64", TG_GGUF_FLOAT64, 0x400c000000000000u, 8); /* 3.5 */
	kv_num(f, "n.bool", TG_GGUF_BOOL, 1, 1);
	put_str(f, "tok");
	put(f, TG_GGUF_ARRAY, 4);
	put(f, TG_GGUF_STRING, 4);
	put(f, 3, 8);
	put_str(f, "a");
	put_strn(f, "b\0c", 3);
	put_str(f, "");
	tinfo(f, "w", 2, ne1, TG_GGML_F32, 0);
	tinfo(f, "q", 2, ne2, TG_GGML_Q8_0, 32);
	data(f, 32, 32 + 34);
}

START_TEST(reads_a_version_2_file)
{
	fbuf f;
	tg_gguf *g;
	int64_t i, shape[4];
	double d;
	size_t len, n;
	int et;
	unsigned char got[34];
	tg_tensor *t;

	valid_file(&f);
	g = tg_gguf_open(save("v2.gguf", &f));
	ck_assert_msg(g, "%s", tg_last_error());
	ck_assert_uint_eq(tg_gguf_version(g), 2);
	ck_assert_uint_eq(tg_gguf_alignment(g), 32);
	ck_assert_uint_eq(tg_gguf_kv_count(g), 5);
	ck_assert_str_eq(tg_gguf_kv_key(g, 1), "n.i16");
	ck_assert_int_eq(tg_gguf_kv_type(g, 2), TG_GGUF_FLOAT64);
	ck_assert_int_eq(tg_gguf_kv_find(g, "tok"), 4);
	ck_assert_str_eq(tg_gguf_get_str(g, "general.architecture", &len),
	                 "llama");
	ck_assert_uint_eq(len, 5);
	ck_assert_int_eq(tg_gguf_get_int(g, "n.i16", &i), 0);
	ck_assert_int_eq(i, -7);
	ck_assert_int_eq(tg_gguf_get_float(g, "n.i16", &d), 0);
	ck_assert(d == -7.0);
	ck_assert_int_eq(tg_gguf_get_float(g, "n.f64", &d), 0);
	ck_assert(d == 3.5);
	ck_assert_int_eq(tg_gguf_get_int(g, "n.bool", &i), 0);
	ck_assert_int_eq(i, 1);
	ck_assert_int_eq(tg_gguf_get_array(g, "tok", &et, &n), 0);
	ck_assert_int_eq(et, TG_GGUF_STRING);
	ck_assert_uint_eq(n, 3);
	ck_assert_mem_eq(tg_gguf_array_str(g, "tok", 1, &len), "b\0c", 4);
	ck_assert_uint_eq(len, 3);
	ck_assert_str_eq(tg_gguf_array_str(g, "tok", 2, &len), "");
	ck_assert_uint_eq(tg_gguf_tensor_count(g), 2);
	ck_assert_int_eq(tg_gguf_tensor_find(g, "q"), 1);
	ck_assert_int_eq(tg_gguf_tensor_find(g, "nope"), -1);
	ck_assert_int_eq(tg_gguf_tensor_type(g, 1), TG_GGML_Q8_0);
	ck_assert_uint_eq(tg_gguf_tensor_shape(g, 0, shape), 2);
	ck_assert_int_eq(shape[0], 2);  /* ne = {3, 2}: (2, 3) */
	ck_assert_int_eq(shape[1], 3);
	ck_assert_uint_eq(tg_gguf_tensor_nbytes(g, 0), 24);
	ck_assert_uint_eq(tg_gguf_tensor_nbytes(g, 1), 34);
	ck_assert_uint_eq(tg_gguf_tensor_offset(g, 1), f.n - 34);
	/* read after the file is closed: the tensor holds the mapping */
	t = tg_gguf_tensor_raw(g, 1, NULL);
	tg_gguf_close(g);
	ck_assert_msg(t, "%s", tg_last_error());
	ck_assert_int_eq(tg_tensor_dtype(t), TG_UINT8);
	ck_assert_int_eq(tg_tensor_numel(t), 34);
	ck_assert_int_eq(tg_tensor_data(t, got, sizeof got), 0);
	ck_assert_mem_eq(got, f.b + f.n - 34, 34);
}
END_TEST

START_TEST(raw_tensors_on_disk_are_views_of_the_file)
{
	fbuf f;
	tg_gguf *g;
	const char *path;
	char name[600];
	unsigned char got[24];
	tg_tensor *t;

	valid_file(&f);
	path = save("v2disk.gguf", &f);
	ck_assert_ptr_nonnull(g = tg_gguf_open(path));
	snprintf(name, sizeof name, "DISK:%s", path);
	t = tg_gguf_tensor_raw(g, 0, tg_dev_get(name));
	ck_assert_msg(t, "%s", tg_last_error());
	ck_assert_ptr_eq(tg_tensor_dev(t), tg_dev_get(name));
	ck_assert_int_eq(tg_tensor_data(t, got, sizeof got), 0);
	ck_assert_mem_eq(got, f.b + f.n - 66, 24);
	tg_gguf_close(g);
}
END_TEST

START_TEST(accessor_errors_name_the_key_and_type)
{
	fbuf f;
	tg_gguf *g;
	int64_t i;
	double d;

	valid_file(&f);
	ck_assert_ptr_nonnull(g = tg_gguf_open(save("acc.gguf", &f)));
	ck_assert_int_eq(tg_gguf_kv_find(g, "nope"), -1);
	ck_assert_int_eq(tg_gguf_get_int(g, "nope", &i), TG_EINVAL);
	ck_assert_error("gguf_get_int: ");
	ck_assert_error("no key 'nope'");
	ck_assert_int_eq(tg_gguf_get_int(g, "general.architecture", &i),
	                 TG_EINVAL);
	ck_assert_error("key 'general.architecture' is a string, not an "
	                "integer");
	ck_assert_int_eq(tg_gguf_get_float(g, "tok", &d), TG_EINVAL);
	ck_assert_error("key 'tok' is an array, not a number");
	ck_assert_int_eq(tg_gguf_get_float(g, "n.bool", &d), TG_EINVAL);
	ck_assert_error("key 'n.bool' is a bool, not a number");
	ck_assert_ptr_null(tg_gguf_get_str(g, "n.i16", NULL));
	ck_assert_error("key 'n.i16' is an int16, not a string");
	ck_assert_int_eq(tg_gguf_get_array(g, "n.f64", NULL, NULL), TG_EINVAL);
	ck_assert_error("key 'n.f64' is a float64, not an array");
	ck_assert_ptr_null(tg_gguf_array_str(g, "tok", 3, NULL));
	ck_assert_error("key 'tok': element 3 past the last of 3");
	ck_assert_int_eq(tg_gguf_array_int(g, "tok", 0, &i), TG_EINVAL);
	ck_assert_error("element 0 of key 'tok' is a string, not an integer");
	ck_assert_ptr_null(tg_gguf_kv_key(g, 5));
	ck_assert_error("gguf_kv_key: ");
	ck_assert_error("pair 5 past the last of 5");
	ck_assert_int_eq(tg_gguf_kv_type(g, 9), TG_EINVAL);
	ck_assert_ptr_null(tg_gguf_tensor_name(g, 2));
	ck_assert_error("tensor 2 past the last of 2");
	ck_assert_uint_eq(tg_gguf_tensor_shape(g, 2, NULL), 0);
	ck_assert_ptr_null(tg_gguf_tensor_raw(g, 2, NULL));
	ck_assert_str_eq(tg_gguf_vtype_name(TG_GGUF_FLOAT64), "float64");
	ck_assert_ptr_null(tg_gguf_vtype_name(13));
	tg_gguf_close(g);
	tg_gguf_close(NULL);
	ck_assert_ptr_null(tg_gguf_open(NULL));
	ck_assert_error("gguf_open: NULL path");
}
END_TEST

/* ----------------------------------------------- hostile files */

static void one_tensor(fbuf *f, uint32_t ndim, const uint64_t *ne,
                       uint32_t type, uint64_t off, size_t ndata)
{
	header(f, 3, 1, 0);
	tinfo(f, "w", ndim, ne, type, off);
	data(f, 32, ndata);
}

/* Builds hostile file c; returns the message fragment it must give. */
static const char *hostile(int c, fbuf *f)
{
	uint64_t ne[5] = { 4, 1, 1, 1, 1 };
	int k;

	f->n = 0;
	switch (c) {
	case 0: return "empty file";
	case 1: header(f, 3, 0, 0); memcpy(f->b, "GGML", 4);
		return "header: not a GGUF file (it starts with 'GGML'";
	case 2: header(f, 1, 0, 0);
		return "header: version 1 is not supported (only 2 and 3)";
	case 3: header(f, 4, 0, 0);
		return "header: version 4 is not supported";
	case 4: header(f, 0x03000000, 0, 0);
		return "header: a big-endian file (version 3): only "
		       "little-endian GGUF files are read";
	case 5: header(f, 3, 0, 0); f->n = 12;
		return "header: truncated: 8 bytes at offset 8 run past the "
		       "end of the file (12 bytes)";
	case 6: header(f, 3, 0, 1ull << 60);
		return "header: 1152921504606846976 key-value pairs cannot "
		       "fit in the 0 bytes left";
	case 7: header(f, 3, 1ull << 60, 0); data(f, 1, 100);
		return "header: 1152921504606846976 tensor infos cannot fit "
		       "in the 100 bytes left";
	case 8: header(f, 3, 0, 1); put(f, 20, 8); data(f, 1, 10);
		return "key-value pair 0: a string of 20 bytes at offset 32 "
		       "runs past the end of the file (42 bytes)";
	case 9: header(f, 3, 0, 1); put_str(f, "general.architecture");
		put(f, 8, 2);
		return "key 'general.architecture': truncated: 4 bytes at "
		       "offset 52 run past";
	case 10: header(f, 3, 0, 1); put_str(f, "k"); put(f, 8, 4);
		put(f, 1000, 8); data(f, 1, 10);
		return "key 'k': a string of 1000 bytes at offset 45 runs past "
		       "the end of the file (55 bytes)";
	case 11: header(f, 3, 0, 1); put_str(f, "arr"); put(f, 9, 4);
		put(f, TG_GGUF_UINT32, 4); put(f, 10, 8); data(f, 1, 12);
		return "key 'arr': an array of 10 uint32 values at offset 51 "
		       "runs past the end of the file (63 bytes)";
	case 12: header(f, 3, 0, 1); put_str(f, "arr"); put(f, 9, 4);
		put(f, TG_GGUF_STRING, 4); put(f, 2, 8); put_str(f, "hi");
		put(f, 100, 8); data(f, 1, 10);
		return "key 'arr': a string of 100 bytes";
	case 13: header(f, 3, 1, 0); put_str(f, "w"); put(f, 2, 4);
		put(f, 4, 8); data(f, 1, 6);
		return "tensor 'w': truncated: 8 bytes at offset 45 run past";
	case 14: header(f, 3, 0, 1); put_strn(f, "a\0b", 3);
		put(f, 0, 4); put(f, 0, 1);
		return "key-value pair 0: key 'a' holds a NUL byte";
	case 15: header(f, 3, 0, 1); put_str(f, ""); put(f, 0, 4);
		put(f, 0, 1); data(f, 1, 4);
		return "key-value pair 0: empty key";
	case 16: header(f, 3, 0, 3); kv_num(f, "a", 0, 1, 1);
		kv_num(f, "k", 0, 1, 1); kv_num(f, "k", 4, 1, 4);
		return "key 'k' appears twice (1 and 2)";
	case 17: header(f, 3, 2, 0); tinfo(f, "w", 1, ne, 0, 0);
		tinfo(f, "w", 1, ne, 0, 32); data(f, 32, 64);
		return "tensor 'w' appears twice (0 and 1)";
	case 18: header(f, 3, 0, 1); kv_num(f, "k", 13, 0, 8);
		return "key 'k': unknown value type 13";
	case 19: header(f, 3, 0, 1); put_str(f, "k"); put(f, 9, 4);
		put(f, 99, 4); put(f, 1, 8); put(f, 0, 8);
		return "key 'k': array of unknown value type 99";
	case 20: header(f, 3, 0, 1); kv_num(f, "b", TG_GGUF_BOOL, 2, 1);
		return "key 'b': bool value 2 is neither 0 nor 1";
	case 21: header(f, 3, 0, 1); put_str(f, "deep"); put(f, 9, 4);
		for (k = 0; k < 9; k++) {
			put(f, 9, 4);
			put(f, 1, 8);
		}
		data(f, 1, 16);
		return "key 'deep': arrays nested more than 8 deep";
	case 22: one_tensor(f, 1, ne, 4, 0, 16);
		return "tensor 'w': unknown ggml type 4";
	case 23: one_tensor(f, 5, ne, 0, 0, 16);
		return "tensor 'w': 5 dims, at most 4";
	case 24: ne[1] = 0; one_tensor(f, 2, ne, 0, 0, 16);
		return "tensor 'w': dim 1 is 0";
	case 25: ne[0] = 33; one_tensor(f, 1, ne, TG_GGML_Q8_0, 0, 64);
		return "tensor 'w': rows of 33 elements are not whole Q8_0 "
		       "blocks of 32";
	case 26: ne[0] = ne[1] = 1ull << 32; one_tensor(f, 2, ne, 0, 0, 0);
		return "tensor 'w': more than 2^63 elements";
	case 27: one_tensor(f, 1, ne, 0, 4, 32);
		return "tensor 'w': offset 4 is not a multiple of the "
		       "alignment 32";
	case 28: one_tensor(f, 1, ne, 0, 0, 15);
		return "tensor 'w': bytes [0, +16) end beyond the data section "
		       "(15 bytes at offset 64)";
	case 29: one_tensor(f, 1, ne, 0, 1ull << 62, 16);
		return "tensor 'w': bytes [4611686018427387904, +16) end beyond";
	case 30: header(f, 3, 2, 0); ne[0] = 16; tinfo(f, "a", 1, ne, 0, 0);
		ne[0] = 4; tinfo(f, "b", 1, ne, 0, 32); data(f, 32, 64);
		return "tensors 'a' and 'b' overlap";
	case 31: header(f, 3, 0, 1);
		kv_num(f, "general.alignment", TG_GGUF_UINT32, 0, 4);
		return "key 'general.alignment': 0 is not a power of two";
	case 32: header(f, 3, 0, 1);
		kv_num(f, "general.alignment", TG_GGUF_UINT32, 3, 4);
		return "key 'general.alignment': 3 is not a power of two";
	case 33: header(f, 3, 0, 1);
		kv_num(f, "general.alignment", TG_GGUF_UINT64, 32, 8);
		return "key 'general.alignment': a uint64, not a uint32";
	case 34: header(f, 3, 1, 0); put_str(f, ""); put(f, 0, 4);
		put(f, 0, 4); put(f, 0, 8); data(f, 1, 4);
		return "tensor 0: empty name";
	case 35: header(f, 3, 1, 0); put_strn(f, "w\0", 2); put(f, 0, 4);
		put(f, 0, 4); put(f, 0, 8);
		return "tensor 0: name 'w' holds a NUL byte";
	default: return NULL;
	}
}

#define NHOSTILE 36

static void open_fails(const char *path, const char *fragment)
{
	char want[1200];
	tg_gguf *g = tg_gguf_open(path);

	ck_assert_msg(!g, "%s opened, want '%s'", path, fragment);
	snprintf(want, sizeof want, "gguf_open: %s: ", path);
	ck_assert_msg(!strncmp(tg_last_error(), want, strlen(want)),
	              "'%s' does not start with '%s'", tg_last_error(), want);
	ck_assert_error(fragment);
}

START_TEST(refuses_hostile_file)
{
	fbuf f;
	char name[32];
	const char *want = hostile(_i, &f);

	snprintf(name, sizeof name, "hostile%d.gguf", _i);
	open_fails(save(name, &f), want);
}
END_TEST

START_TEST(refuses_what_is_not_a_regular_file)
{
	const char *fifo = tl_tmp_path("fifo.gguf");

	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	open_fails(fifo, "cannot open: is a FIFO");
	open_fails(getenv("TG_TEST_TMP") ? getenv("TG_TEST_TMP") : "/tmp",
	           "cannot open: is a directory");
	open_fails(tl_tmp_path("absent.gguf"), "cannot open: ");
	unlink(fifo);
}
END_TEST

/* Every prefix of the valid file, and every byte of it flipped: refused
 * with gguf_open's message, or read back whole. */
static void open_or_refuse(const char *path)
{
	tg_gguf *g = tg_gguf_open(path);
	unsigned char buf[64];
	size_t i;

	if (!g) {
		ck_assert_error("gguf_open: ");
		return;
	}
	for (i = 0; i < tg_gguf_tensor_count(g); i++) {
		tg_tensor *t = tg_gguf_tensor_raw(g, i, NULL);

		ck_assert_uint_le(tg_gguf_tensor_nbytes(g, i), sizeof buf);
		ck_assert_int_eq(tg_tensor_data(t, buf, (size_t)
		                 tg_gguf_tensor_nbytes(g, i)), 0);
	}
	tg_gguf_close(g);
}

START_TEST(truncations_and_byte_flips)
{
	fbuf f, c;
	size_t n;
	const char *path = tl_tmp_path("flip.gguf");

	valid_file(&f);
	for (n = 0; n < f.n; n++) {
		c = f;
		c.n = n;
		save("flip.gguf", &c);
		ck_assert_ptr_null(tg_gguf_open(path));
		ck_assert_error("gguf_open: ");
	}
	for (n = 0; n < f.n; n++) {
		c = f;
		c.b[n] ^= n & 1 ? 0xff : 0x01;
		save("flip.gguf", &c);
		open_or_refuse(path);
	}
}
END_TEST

#include "test_gguf_ref.h"

static Suite *gguf_suite(void)
{
	Suite *s = suite_create("gguf");
	TCase *tc = tcase_create("gguf");

	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, reads_a_version_2_file);
	tcase_add_test(tc, raw_tensors_on_disk_are_views_of_the_file);
	tcase_add_test(tc, accessor_errors_name_the_key_and_type);
	tcase_add_loop_test(tc, refuses_hostile_file, 0, NHOSTILE);
	tcase_add_test(tc, refuses_what_is_not_a_regular_file);
	tcase_add_test(tc, truncations_and_byte_flips);
	if (gen_dir[0])
		add_reference_tests(tc);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	const char *skip = make_reference_files();
	int rc = tl_run(gguf_suite());

	if (skip && getenv("TG_TEST_REQUIRE_DEPS")) {
		printf("test_gguf: TG_TEST_REQUIRE_DEPS is set and %s\n",
		       skip);
		return EXIT_FAILURE;
	}
	if (rc == EXIT_SUCCESS && skip) {
		printf("test_gguf: skipped the comparisons with the gguf "
		       "package: %s\n", skip);
		return 77;
	}
	return rc;
}

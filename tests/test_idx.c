/*
 * test_idx.c - the Fashion-MNIST example's IDX reader
 * (examples/fashion_mnist/idx.c): gzip'd and plain files read back,
 * one larger than the reader's first read, and files that lie or break
 * off refused with a message naming the file and what is wrong, with no
 * allocation of what a header merely announces.
 */
#include "config.h"

#include <zlib.h>

#include "idx.h"
#include "testlib.h"

/* TG_TEST_TMP/<pid>-name holding b[0, n), gzip'd when `gz`. */
static const char *write_idx(const char *name, const void *b, size_t n,
                             int gz)
{
	static char path[512];
	const char *tmp = getenv("TG_TEST_TMP");
	gzFile f;

	snprintf(path, sizeof path, "%s/%d-%s", tmp ? tmp : "/tmp",
	         (int)getpid(), name);
	ck_assert_ptr_nonnull(f = gzopen(path, gz ? "wb" : "wbT"));
	ck_assert_int_eq(gzwrite(f, b, (unsigned)n), (int)n);
	ck_assert_int_eq(gzclose(f), Z_OK);
	return path;
}

/* Reading `path` fails with a message that starts with it and holds
 * `needle`, and leaves nothing allocated. */
static void read_fails(const char *path, const char *needle)
{
	char err[512] = "";
	idx_array a;

	ck_assert_int_eq(idx_read(path, &a, err, sizeof err), -1);
	ck_assert_msg(!strncmp(err, path, strlen(path)),
	              "\"%s\" does not start with %s", err, path);
	ck_assert_msg(strstr(err, needle) != NULL, "\"%s\" lacks \"%s\"", err,
	              needle);
	ck_assert_ptr_null(a.data);
	ck_assert_uint_eq(a.size, 0);
}

START_TEST(reads_gzipped_and_plain_files)
{
	static const unsigned char b[] = { 0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0,
		                           1, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6 };
	char err[512];
	idx_array a;

	for (int gz = 0; gz < 2; gz++) {
		ck_assert_int_eq(idx_read(write_idx("ok.idx", b, sizeof b, gz),
		                          &a, err, sizeof err), 0);
		ck_assert_uint_eq(a.ndim, 3);
		ck_assert_uint_eq(a.shape[0], 2);
		ck_assert_uint_eq(a.shape[1], 1);
		ck_assert_uint_eq(a.shape[2], 3);
		ck_assert_uint_eq(a.size, 6);
		ck_assert_mem_eq(a.data, b + 16, 6);
		idx_free(&a);
	}
}
END_TEST

/* 3,000,000 bytes: past the first read (1 MiB) and its doubling. */
START_TEST(reads_a_file_larger_than_one_read)
{
	enum { H = 16, N = 3 * 1000 * 1000 };
	static const unsigned char head[H] = { 0, 0, 8, 3, 0, 0, 0, 3, 0, 0,
		                               0x03, 0xe8, 0, 0, 0x03, 0xe8 };
	unsigned char *b = malloc(H + N);
	char err[512];
	idx_array a;

	ck_assert_ptr_nonnull(b);
	memcpy(b, head, H);
	for (size_t i = 0; i < N; i++)
		b[H + i] = (unsigned char)(i * 7 + i / 251);
	ck_assert_int_eq(idx_read(write_idx("big.idx.gz", b, H + N, 1), &a,
	                          err, sizeof err), 0);
	ck_assert_uint_eq(a.size, N);
	ck_assert_int_eq(memcmp(a.data, b + H, N), 0);
	idx_free(&a);
	free(b);
}
END_TEST

/* Regression, found by tests/fuzz/fuzz_idx: the reader allocated the
 * bytes a header announced before reading any, 4 GiB for a 30-byte
 * file; here 0xffffffff^2 bytes, which no allocation can give, so the
 * old reader said "out of memory" (under ASan: aborted).  Now memory
 * follows the bytes that arrive. */
START_TEST(a_header_announcing_more_than_the_file_holds)
{
	static const unsigned char b[] = { 0, 0, 8, 2, 0xff, 0xff, 0xff,
		                           0xff, 0xff, 0xff, 0xff, 0xff,
		                           'a', 'b', 'c', 'd' };

	read_fails(write_idx("lies.idx.gz", b, sizeof b, 1),
	           ": truncated: fewer than the 18446744065119617025 bytes "
	           "its header announces");
}
END_TEST

START_TEST(refuses_broken_headers)
{
	static const unsigned char overflow[] = { 0, 0, 8, 3, 0xff, 0xff,
		                                  0xff, 0xff, 0xff, 0xff, 0xff,
		                                  0xff, 0xff, 0xff, 0xff, 0xff };
	static const unsigned char floats[] = { 0, 0, 0x0d, 1, 0, 0, 0, 1,
		                                0, 0, 0, 0 };
	static const unsigned char dims5[] = { 0, 0, 8, 5 };
	static const unsigned char cut[] = { 0, 0, 8, 2, 0, 0 };
	static const unsigned char shortdata[] = { 0, 0, 8, 1, 0, 0, 0, 10,
		                                   'a', 'b', 'c' };

	read_fails(write_idx("ovf.idx.gz", overflow, sizeof overflow, 1),
	           ": sizes overflow");
	read_fails(write_idx("float.idx.gz", floats, sizeof floats, 1),
	           ": not an IDX file of unsigned bytes (magic 00000d01)");
	read_fails(write_idx("dims5.idx.gz", dims5, sizeof dims5, 1),
	           "(magic 00000805)");
	read_fails(write_idx("cut.idx.gz", cut, sizeof cut, 1),
	           ": truncated header");
	read_fails(write_idx("short.idx", shortdata, sizeof shortdata, 0),
	           ": truncated: fewer than the 10 bytes its header "
	           "announces");
	read_fails(write_idx("empty.idx", "", 0, 0), ": truncated header");
}
END_TEST

START_TEST(a_missing_file)
{
	read_fails("/nonexistent/t10k-labels-idx1-ubyte.gz",
	           ": No such file or directory");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("idx");
	TCase *tc = tcase_create("idx");

	tcase_add_test(tc, reads_gzipped_and_plain_files);
	tcase_add_test(tc, reads_a_file_larger_than_one_read);
	tcase_add_test(tc, a_header_announcing_more_than_the_file_holds);
	tcase_add_test(tc, refuses_broken_headers);
	tcase_add_test(tc, a_missing_file);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

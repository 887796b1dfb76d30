/*
 * test_disk.c - the DISK device (device/disk.c) and what the lazy graph
 * does on it (BUFVIEW): slices and bitcasts of a file read without a
 * kernel, tg_to a file and back, lazy safetensors loading that reads
 * only the tensors used, and every refusal with its message.  Files
 * are written and read back with stdio, the independent reference.
 */
#include "config.h"

#include <stdint.h>
#include <sys/stat.h>

#include "testlib.h"

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

static void write_file(const char *path, const void *bytes, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* The file's bytes (malloc'd) and size. */
static unsigned char *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b;
	long len;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	b = malloc(len ? (size_t)len : 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return b;
}

static tg_dev *disk(const char *path)
{
	char name[600];
	tg_dev *d;

	snprintf(name, sizeof name, "disk:%s", path);
	d = tg_dev_get(name);
	ck_assert_msg(d != NULL, "%s", tg_last_error());
	return d;
}

static tg_tensor *ok(tg_tensor *t)
{
	ck_assert_msg(t != NULL, "%s", tg_last_error());
	return t;
}

/* 16 bytes of "header", 10 floats, 3 int32 and a stray byte. */
typedef struct layout {
	char head[16];
	float f[10];
	int32_t i[3];
	char tail;
} __attribute__((packed)) layout;

static const char *write_layout(const char *name, layout *l)
{
	const char *path = tl_tmp_path(name);

	memset(l, 0, sizeof *l);
	memcpy(l->head, "tgcore-disk-test", 16);
	for (int k = 0; k < 10; k++)
		l->f[k] = 0.5f * (float)k - 2.0f;
	l->i[0] = -7, l->i[1] = 1 << 30, l->i[2] = 42;
	l->tail = 'x';
	write_file(path, l, sizeof *l);
	return path;
}

START_TEST(slices_and_bitcasts_read_without_kernels)
{
	layout l;
	const char *path = write_layout("layout.bin", &l);
	int64_t size = (int64_t)sizeof l, shape[2] = { 2, 5 };
	tg_dev *d = disk(path), *cpu = tg_dev_get("CPU");
	tg_tensor *file = ok(tg_empty(d, TG_UINT8, 1, &size));
	int64_t fr[2] = { 16, 56 }, ir[2] = { 56, 68 };
	tg_tensor *fs = ok(tg_shrink(file, 1, fr));
	tg_tensor *f = ok(tg_reshape(ok(tg_bitcast(fs, TG_FLOAT32)), 2, shape));
	tg_tensor *i = ok(tg_bitcast(ok(tg_shrink(file, 1, ir)), TG_INT32));
	tg_tensor *fc = ok(tg_to(f, cpu)), *ic = ok(tg_to(i, cpu));
	float fo[10];
	int32_t io[3];
	tg_counters c;

	ck_assert_int_eq(strncmp(tg_dev_name(d), "DISK:", 5), 0);
	ck_assert_str_eq(tg_dev_name(d) + 5, path);
	ck_assert_int_eq(tg_tensor_shape(i)[0], 3);
	tg_counters_reset();
	ck_assert_msg(tg_tensor_data(fc, fo, sizeof fo) == 0, "%s",
	              tg_last_error());
	ck_assert_int_eq(tg_tensor_data(ic, io, sizeof io), 0);
	tg_counters_get(&c);
	ck_assert_uint_eq(c.kernels, 0);
	ck_assert_uint_eq(c.copies, 2);
	ck_assert_uint_eq(c.peer_copies, 0);  /* two plugins: the host */
	ck_assert_double_eq(c.copy_bytes, 40 + 12);
	for (int k = 0; k < 10; k++)
		ck_assert_float_eq(fo[k], l.f[k]);
	ck_assert_mem_eq(io, l.i, sizeof io);
	/* a DISK tensor reads straight back too, and so does a slice */
	ck_assert_int_eq(tg_tensor_data(i, io, sizeof io), 0);
	ck_assert_mem_eq(io, l.i, sizeof io);
	/* math on the copy is ordinary */
	{
		double sum = 0, got;

		for (int k = 0; k < 10; k++)
			sum += l.f[k];
		ck_assert_int_eq(tg_tensor_item(ok(tg_sum(fc, NULL, 0, 0)),
		                                &got), 0);
		ck_assert_double_eq_tol(got, sum, 1e-6);
	}
}
END_TEST

START_TEST(to_disk_and_back)
{
	const char *path = tl_tmp_path("out.bin");
	int64_t shape[2] = { 3, 4 };
	float v[12], back[12];
	unsigned char *bytes;
	size_t n;
	tg_dev *cpu = tg_dev_get("CPU"), *d;
	tg_tensor *x, *on_disk, *y;

	remove(path);  /* DISK creates the file */
	d = disk(path);
	for (int k = 0; k < 12; k++)
		v[k] = (float)k * 1.25f - 3.0f;
	x = ok(tg_tensor_new(cpu, TG_FLOAT32, 2, shape, v));
	on_disk = ok(tg_to(ok(tg_mul(x, x)), d));
	ck_assert_msg(tg_realize(on_disk) == 0, "%s", tg_last_error());
	bytes = read_file(path, &n);
	ck_assert_uint_eq(n, sizeof v);
	for (int k = 0; k < 12; k++) {
		float e = v[k] * v[k];
		ck_assert_mem_eq(bytes + 4 * k, &e, 4);
	}
	free(bytes);
	y = ok(tg_to(on_disk, cpu));
	ck_assert_int_eq(tg_tensor_data(y, back, sizeof back), 0);
	for (int k = 0; k < 12; k++)
		ck_assert_float_eq(back[k], v[k] * v[k]);
	/* a row of it, by slice: a view into the file */
	{
		int64_t row[4] = { 1, 2, 0, 4 };
		float r[4];
		tg_tensor *s = ok(tg_shrink(on_disk, 2, row));

		ck_assert_int_eq(tg_tensor_data(ok(tg_to(s, cpu)), r,
		                                sizeof r), 0);
		ck_assert_mem_eq(r, back + 4, sizeof r);
	}
	remove(path);
}
END_TEST

/* The file a DISK buffer maps is the file: written there, read here. */
START_TEST(disk_tensors_see_the_file)
{
	const char *path = tl_tmp_path("shared.bin");
	int64_t n = 4;
	int32_t v[4] = { 1, 2, 3, 4 }, w[4] = { 9, 8, 7, 6 }, out[4];
	tg_tensor *a;

	write_file(path, v, sizeof v);
	a = ok(tg_empty(disk(path), TG_INT32, 1, &n));
	ck_assert_int_eq(tg_tensor_data(a, out, sizeof out), 0);
	ck_assert_mem_eq(out, v, sizeof v);
	/* another tensor written to the same device overwrites the file */
	ck_assert_int_eq(tg_realize(ok(tg_to(ok(tg_tensor_new(
		NULL, TG_INT32, 1, &n, w)), disk(path)))), 0);
	ck_assert_int_eq(tg_tensor_data(a, out, sizeof out), 0);
	ck_assert_mem_eq(out, w, sizeof w);
	remove(path);
}
END_TEST

/* tinygrad's safe_save writes through DISK this way: an assign into a
 * slice of the file lands at once, from a value on another device. */
START_TEST(assign_writes_a_range_of_the_file)
{
	layout l, want;
	const char *path = write_layout("assign.bin", &l);
	int64_t size = (int64_t)sizeof l, r[2] = { 16 + 8, 16 + 20 }, n3 = 3;
	float v[3] = { 100.5f, -1e30f, 3.0f };
	tg_tensor *file = ok(tg_empty(disk(path), TG_UINT8, 1, &size));
	tg_tensor *dst = ok(tg_bitcast(ok(tg_shrink(file, 1, r)), TG_FLOAT32));
	tg_tensor *src = ok(tg_tensor_new(NULL, TG_FLOAT32, 1, &n3, v));
	unsigned char *bytes;
	size_t n;

	ck_assert_msg(tg_assign(dst, ok(tg_mul(src, ok(tg_full_like(src, 1)))))
	              == 0, "%s", tg_last_error());
	want = l;
	memcpy(&want.f[2], v, sizeof v);
	bytes = read_file(path, &n);
	ck_assert_uint_eq(n, sizeof want);
	ck_assert_mem_eq(bytes, &want, sizeof want);
	free(bytes);
	/* a mismatch is refused before anything is written */
	ck_assert_int_lt(tg_assign(dst, ok(tg_shrink(src, 1, (int64_t[]){ 0,
	                                                                2 }))),
	                 0);
	ck_assert_error("assign: shape (2,) to a tensor of (3,)");
	remove(path);
}
END_TEST

START_TEST(refusals_name_the_reason)
{
	layout l;
	const char *path = write_layout("refuse.bin", &l);
	int64_t size = (int64_t)sizeof l, sh[2] = { 4, 4 }, r16[2] = { 0, 16 };
	int perm[2] = { 1, 0 };
	tg_dev *d = disk(path), *cpu = tg_dev_get("CPU");
	tg_tensor *file = ok(tg_empty(d, TG_UINT8, 1, &size));
	tg_tensor *head = ok(tg_reshape(ok(tg_shrink(file, 1, r16)), 2, sh));
	char dir[600];

	/* a kernel on DISK, refused when scheduled */
	ck_assert_int_lt(tg_realize(ok(tg_add(head, head))), 0);
	ck_assert_error("schedule: DISK:");
	ck_assert_error("runs no kernels");
	ck_assert_error("tg_to another device first");
	/* a conversion needs a kernel; a bitcast does not */
	ck_assert_ptr_null(tg_cast(head, TG_FLOAT32));
	ck_assert_error("cast: a tensor on DISK:");
	ck_assert_error("can only be bitcast (uint8 to float32");
	/* a permuted view is not one range of the file */
	ck_assert_ptr_null(tg_to(ok(tg_permute(head, 2, perm)), cpu));
	ck_assert_error("contiguous: a tensor (4,4) on DISK:");
	ck_assert_error("not one contiguous range of the file");
	/* 3 bytes are no whole number of int16 */
	{
		int64_t r3[2] = { 0, 3 };

		ck_assert_ptr_null(tg_bitcast(ok(tg_shrink(file, 1, r3)),
		                              TG_INT16));
		ck_assert_error("bitcast: the last axis of (3,) uint8 is 3 "
		                "bytes, not a whole number of int16 (2 bytes)");
	}
	/* size-changing bitcasts are for DISK only, as in tinygrad */
	ck_assert_ptr_null(tg_bitcast(ok(tg_to(head, cpu)), TG_INT32));
	ck_assert_error("only on DISK may the sizes differ");
	/* names and files */
	ck_assert_ptr_null(tg_dev_get("DISK:"));
	ck_assert_error("device 'DISK:': no file named (expected DISK:path)");
	snprintf(dir, sizeof dir, "DISK:%s", tl_tmp_path("no/such/dir.bin"));
	ck_assert_ptr_nonnull(tg_dev_get(dir)); /* opened when used */
	ck_assert_int_lt(tg_realize(ok(tg_to(head, tg_dev_get(dir)))), 0);
	ck_assert_error("cannot open the file: No such file or directory");
	snprintf(dir, sizeof dir, "DISK:%s", getenv("TG_TEST_TMP") ?
	         getenv("TG_TEST_TMP") : "/tmp");
	ck_assert_int_lt(tg_realize(ok(tg_to(head, tg_dev_get(dir)))), 0);
	ck_assert_error(": cannot open the file: is a directory");
	/* neither a FIFO nor a device is a file of bytes to map */
	ck_assert_int_eq(mkfifo(tl_tmp_path("fifo.bin"), 0600), 0);
	snprintf(dir, sizeof dir, "DISK:%s", tl_tmp_path("fifo.bin"));
	ck_assert_int_lt(tg_realize(ok(tg_to(head, tg_dev_get(dir)))), 0);
	ck_assert_error(": cannot open the file: is a FIFO");
	unlink(tl_tmp_path("fifo.bin"));
	ck_assert_int_lt(tg_realize(ok(tg_to(head,
	                                    tg_dev_get("DISK:/dev/null")))), 0);
	ck_assert_error("DISK:/dev/null: cannot open the file: is a character "
	                "device");
}
END_TEST

START_TEST(disk_is_never_a_default)
{
	tg_shutdown();
	setenv("DEVICE", "DISK:/tmp/x", 1);
	ck_assert_ptr_null(tg_dev_get(NULL));
	ck_assert_error("DISK holds files and runs no kernels");
	unsetenv("DEVICE");
	tg_shutdown();
	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
}
END_TEST

/* ------------------------------------------------- lazy safetensors */

static tg_tensor *seq(tg_dtype dt, size_t ndim, const int64_t *shape,
                      double from)
{
	int64_t n = 1;
	tg_tensor *t;

	for (size_t k = 0; k < ndim; k++)
		n *= shape[k];
	t = ok(tg_arange(NULL, TG_FLOAT32, from, from + (double)n, 1));

	return ok(tg_cast(ok(tg_reshape(t, ndim, shape)), dt));
}

START_TEST(safetensors_load_reads_only_what_is_used)
{
	const char *path = tl_tmp_path("lazy.safetensors");
	int64_t sa[2] = { 64, 32 }, sb[1] = { 5 }, sc[3] = { 2, 3, 4 };
	tg_state *s = tg_state_new(), *in;
	tg_tensor *b;
	int16_t bv[5];
	tg_counters c;

	ck_assert_int_eq(tg_state_add(s, "a", seq(TG_FLOAT32, 2, sa, 0)), 0);
	ck_assert_int_eq(tg_state_add(s, "b", seq(TG_INT16, 1, sb, -2)), 0);
	ck_assert_int_eq(tg_state_add(s, "c", seq(TG_BFLOAT16, 3, sc, 1)), 0);
	ck_assert_msg(tg_safetensors_save(s, path) == 0, "%s",
	              tg_last_error());
	tg_state_free(s);

	tg_counters_reset();
	in = tg_safetensors_load(path, tg_dev_get("CPU"));
	ck_assert_msg(in != NULL, "%s", tg_last_error());
	tg_counters_get(&c);
	ck_assert_uint_eq(c.copies, 0);  /* nothing read yet */
	b = tg_state_get(in, "b");
	ck_assert_str_eq(tg_dev_name(tg_tensor_dev(b)), "CPU");
	ck_assert_int_eq(tg_tensor_data(b, bv, sizeof bv), 0);
	tg_counters_get(&c);
	ck_assert_uint_eq(c.copies, 1);
	ck_assert_double_eq(c.copy_bytes, sizeof bv);  /* not a's 8 KiB */
	ck_assert_uint_eq(c.kernels, 0);
	for (int k = 0; k < 5; k++)
		ck_assert_int_eq(bv[k], k - 2);
	/* the others read the same when used */
	{
		float a[64 * 32];

		ck_assert_int_eq(tg_tensor_data(tg_state_get(in, "a"), a,
		                                sizeof a), 0);
		for (int k = 0; k < 64 * 32; k++)
			ck_assert_float_eq(a[k], (float)k);
	}
	/* saving over the file (a rename) leaves the loaded tensors alone */
	{
		int64_t one = 1;
		tg_state *other = tg_state_new();
		float cv[24];

		ck_assert_int_eq(tg_state_add(other, "c", seq(TG_FLOAT32, 1,
		                                              &one, 9)), 0);
		ck_assert_int_eq(tg_safetensors_save(other, path), 0);
		tg_state_free(other);
		ck_assert_int_eq(tg_tensor_data(ok(tg_cast(tg_state_get(in,
		                 "c"), TG_FLOAT32)), cv, sizeof cv), 0);
		for (int k = 0; k < 24; k++)
			ck_assert_float_eq(cv[k], (float)(k + 1));
	}
	tg_state_free(in);
	remove(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("disk");
	TCase *tc = tcase_create("disk");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, slices_and_bitcasts_read_without_kernels);
	tcase_add_test(tc, to_disk_and_back);
	tcase_add_test(tc, disk_tensors_see_the_file);
	tcase_add_test(tc, assign_writes_a_range_of_the_file);
	tcase_add_test(tc, refusals_name_the_reason);
	tcase_add_test(tc, disk_is_never_a_default);
	tcase_add_test(tc, safetensors_load_reads_only_what_is_used);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tl_run(suite());
}

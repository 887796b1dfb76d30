/*
 * test_buffer.c - buffers, views, the memory cache and programs, on the
 * MOCK test device (host memory with a configurable budget) so that the
 * core's paths are tested without a C compiler; the CPU plugin has its
 * own suite.
 */
#include "config.h"

#include "testlib.h"
#include "../libtgcore/cache/cache.h"
#include "../libtgcore/device/device.h"

static tg_dev *mock(const char *limit)
{
	char path[512];
	tg_dev *dev;

	tl_use_plugins(tl_plugin("mock", path, sizeof path));
	if (limit)
		setenv("TG_MOCK_MEMORY_LIMIT", limit, 1);
	dev = tg_dev_get("MOCK");
	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	return dev;
}

/* Copies between two devices of one plugin: MOCK to MOCK:1 by the
 * plugin's transfer, MOCK:1 to MOCK (which it refuses) through the
 * host; the values arrive either way and the counters say which.
 * (Between plugins it is always the host: test_disk.) */
START_TEST(copies_between_devices_of_one_plugin)
{
	float v[6] = { 1, -2, 3.5f, 1e20f, -0.0f, 7 };
	tg_dev *m0 = mock(NULL), *m1 = tg_dev_get("MOCK:1");
	tg_counters k;

	ck_assert_msg(m1 != NULL, "%s", tg_last_error());
	tg_scope_begin();
	tl_copy_floats(m0, m1, v, 6, &k);
	ck_assert_uint_eq(k.copies, 1);
	ck_assert_uint_eq(k.peer_copies, 1);
	/* the other way: refused by the plugin, so through the host */
	tl_copy_floats(m1, m0, v, 6, &k);
	ck_assert_uint_eq(k.copies, 1);
	ck_assert_uint_eq(k.peer_copies, 0);
	tg_scope_end();
}
END_TEST

START_TEST(allocation_is_lazy_and_copies_round_trip)
{
	tg_dev *dev = mock(NULL);
	tg_buffer *b = tg_buffer_new(dev, 16, TG_FLOAT32);
	float in[16], out[16];
	int i;

	for (i = 0; i < 16; i++)
		in[i] = (float)i * 1.5f;
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(tg_buffer_nbytes(b), 64);
	ck_assert_uint_eq(tg_buffer_count(b), 16);
	ck_assert_int_eq(tg_buffer_dtype(b), TG_FLOAT32);
	ck_assert_ptr_eq(tg_buffer_dev(b), dev);
	ck_assert_int_eq(tg_buffer_is_allocated(b), 0);
	ck_assert_int_eq(tg_buffer_copyin(b, in, sizeof in), 0);
	ck_assert_int_eq(tg_buffer_is_allocated(b), 1);
	ck_assert_int_eq(tg_buffer_copyout(b, out, sizeof out), 0);
	ck_assert_mem_eq(in, out, sizeof in);
	tg_buffer_unref(b);
}
END_TEST

START_TEST(copies_that_do_not_fit_are_errors)
{
	tg_buffer *b = tg_buffer_new(mock(NULL), 16, TG_FLOAT32);
	char host[128] = { 0 };

	ck_assert_int_eq(tg_buffer_copyin(b, host, 100), TG_EINVAL);
	ck_assert_error("buffer_copyin: 100 bytes do not fit a buffer of 64 "
	                "bytes (16 x float32) on MOCK");
	ck_assert_int_eq(tg_buffer_copyout(b, host, 65), TG_EINVAL);
	ck_assert_error("buffer_copyout: 65 bytes do not fit");
	ck_assert_int_eq(tg_buffer_copyin(b, NULL, 4), TG_EINVAL);
	ck_assert_error("buffer_copyin: host pointer is NULL");
	ck_assert_int_eq(tg_buffer_copyout(NULL, host, 4), TG_EINVAL);
	ck_assert_error("buffer_copyout: buffer is NULL");
	ck_assert_int_eq(tg_buffer_is_allocated(b), 0);
	tg_buffer_unref(b);
}
END_TEST

START_TEST(bad_buffer_arguments)
{
	tg_dev *dev = mock(NULL);

	ck_assert_ptr_null(tg_buffer_new(NULL, 4, TG_FLOAT32));
	ck_assert_error("buffer_new: device is NULL");
	ck_assert_ptr_null(tg_buffer_new(dev, 4, (tg_dtype)99));
	ck_assert_error("buffer_new: invalid dtype 99");
	ck_assert_ptr_null(tg_buffer_new(dev, SIZE_MAX / 2, TG_FLOAT32));
	ck_assert_error("elements of float32 overflow the address space");
	ck_assert_ptr_null(tg_buffer_new(dev, 4, TG_FLOAT64));
	ck_assert_int_eq(tg_last_status(), TG_EUNSUPPORTED);
	ck_assert_error("buffer_new: device MOCK does not support float64");
	ck_assert_int_eq(tg_buffer_allocate(NULL), TG_EINVAL);
	tg_buffer_unref(NULL);
}
END_TEST

/* A plugin without allocator->wrap cannot take the caller's memory. */
START_TEST(wrapping_needs_the_plugins_entry)
{
	tg_dev *dev = mock(NULL);
	float mem[4];

	ck_assert_ptr_null(tg_buffer_from_host(dev, TG_FLOAT32, 4, mem, NULL,
	                                       NULL));
	ck_assert_error("buffer_from_host: device MOCK cannot use memory it "
	                "did not allocate (its plugin has no allocator->wrap)");
	ck_assert_ptr_null(tg_buffer_from_native(dev, TG_FLOAT32, 4, mem, NULL,
	                                         NULL));
	ck_assert_error("buffer_from_native: device MOCK cannot use memory");
}
END_TEST

START_TEST(zero_size_buffers_work)
{
	tg_buffer *b = tg_buffer_new(mock(NULL), 0, TG_INT8);
	char c;

	ck_assert_int_eq(tg_buffer_allocate(b), 0);
	ck_assert_int_eq(tg_buffer_copyin(b, &c, 0), 0);
	ck_assert_int_eq(tg_buffer_copyout(b, &c, 0), 0);
	tg_buffer_unref(b);
}
END_TEST

START_TEST(views_share_the_base_memory)
{
	tg_dev *dev = mock(NULL);
	tg_buffer *base = tg_buffer_new(dev, 8, TG_INT32);
	tg_buffer *v, *vv;
	int32_t in[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, out[8], two[2] = { 9, 9 };

	ck_assert_int_eq(tg_buffer_copyin(base, in, sizeof in), 0);
	v = tg_buffer_view(base, 8, 4, TG_INT32);      /* elements 2..5 */
	ck_assert_ptr_nonnull(v);
	vv = tg_buffer_view(v, 4, 2, TG_INT32);        /* elements 3..4 */
	ck_assert_ptr_nonnull(vv);
	ck_assert_int_eq(tg_buffer_copyout(v, out, 16), 0);
	ck_assert_int_eq(out[0], 2);
	ck_assert_int_eq(out[3], 5);
	ck_assert_int_eq(tg_buffer_copyin(vv, two, sizeof two), 0);
	tg_buffer_unref(v);                            /* vv keeps base */
	ck_assert_int_eq(tg_buffer_copyout(base, out, sizeof out), 0);
	ck_assert_int_eq(out[2], 2);
	ck_assert_int_eq(out[3], 9);
	ck_assert_int_eq(out[4], 9);
	ck_assert_int_eq(out[5], 5);
	tg_buffer_unref(base);
	tg_buffer_unref(vv);
}
END_TEST

START_TEST(view_out_of_range)
{
	tg_buffer *base = tg_buffer_new(mock(NULL), 8, TG_INT32);

	ck_assert_ptr_null(tg_buffer_view(base, 24, 3, TG_INT32));
	ck_assert_error("buffer_view: 12 bytes at offset 24 exceed the base "
	                "buffer's 32 bytes");
	ck_assert_ptr_null(tg_buffer_view(base, 64, 0, TG_INT32));
	ck_assert_ptr_null(tg_buffer_view(NULL, 0, 1, TG_INT32));
	ck_assert_error("buffer_view: base is NULL");
	tg_buffer_unref(base);
}
END_TEST

START_TEST(freed_memory_is_reused)
{
	tg_dev *dev = mock(NULL);
	int i;

	for (i = 0; i < 5; i++) {
		tg_buffer *b = tg_buffer_new(dev, 250, TG_FLOAT32);

		ck_assert_int_eq(tg_buffer_allocate(b), 0);
		tg_buffer_unref(b);
	}
	ck_assert_uint_eq(dev->lru.n_alloc, 5);
	ck_assert_uint_eq(dev->lru.n_plugin_alloc, 1);
	ck_assert_uint_eq(dev->lru.n_reused, 4);
	ck_assert_uint_eq(dev->lru.cached_bytes, 1000);
}
END_TEST

START_TEST(cache_can_be_disabled)
{
	tg_dev *dev;
	int i;

	setenv("LRU", "0", 1);
	dev = mock(NULL);
	for (i = 0; i < 3; i++) {
		tg_buffer *b = tg_buffer_new(dev, 250, TG_FLOAT32);

		ck_assert_int_eq(tg_buffer_allocate(b), 0);
		tg_buffer_unref(b);
	}
	ck_assert_uint_eq(dev->lru.n_plugin_alloc, 3);
	ck_assert_uint_eq(dev->lru.cached_bytes, 0);
}
END_TEST

START_TEST(out_of_memory_empties_the_cache_and_retries)
{
	tg_dev *dev = mock("1000");
	tg_buffer *a = tg_buffer_new(dev, 600, TG_UINT8);
	tg_buffer *b = tg_buffer_new(dev, 700, TG_UINT8);

	ck_assert_int_eq(tg_buffer_allocate(a), 0);
	tg_buffer_unref(a);                 /* 600 bytes stay cached */
	ck_assert_uint_eq(dev->lru.cached_bytes, 600);
	ck_assert_int_eq(tg_buffer_allocate(b), 0);
	ck_assert_uint_eq(dev->lru.n_flush, 1);
	ck_assert_uint_eq(dev->lru.cached_bytes, 0);
	tg_buffer_unref(b);
}
END_TEST

START_TEST(out_of_memory_is_an_error_not_a_crash)
{
	tg_dev *dev = mock("1000");
	tg_buffer *a = tg_buffer_new(dev, 2000, TG_UINT8);
	char c = 1;

	ck_assert_int_eq(tg_buffer_allocate(a), TG_ENOMEM);
	ck_assert_error("buffer_allocate: 2000 bytes on MOCK: mock alloc: "
	                "2000 bytes");
	ck_assert_int_eq(tg_buffer_copyin(a, &c, 1), TG_ENOMEM);
	ck_assert_int_eq(tg_buffer_is_allocated(a), 0);
	tg_buffer_unref(a);
}
END_TEST

/* Runs the mock's "fill" kernel over `b`. */
static int fill(tg_program *p, tg_buffer *b, int64_t value, size_t n)
{
	tg_launch_args a = { .bufs = &b, .nbufs = 1, .vals = &value,
	                     .nvals = 1, .global = { n, 1, 1 },
	                     .local = { 1, 1, 1 } };
	double t = -1;
	int rc = tg_program_launch(p, &a, &t);

	ck_assert(rc != 0 || t >= 0);
	return rc;
}

START_TEST(programs_compile_load_and_launch)
{
	tg_dev *dev = mock(NULL);
	tg_program *p = tg_program_new(dev, "fill", "kernel fill");
	tg_buffer *b = tg_buffer_new(dev, 10, TG_FLOAT32);
	float out[10];

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(fill(p, b, 7, 10), 0);
	ck_assert_int_eq(tg_buffer_copyout(b, out, sizeof out), 0);
	ck_assert_float_eq(out[0], 7.0f);
	ck_assert_float_eq(out[9], 7.0f);
	ck_assert_int_eq(tg_dev_synchronize(dev), 0);
	tg_program_free(p);
	tg_buffer_unref(b);
}
END_TEST

START_TEST(compile_errors_come_back_to_the_caller)
{
	tg_dev *dev = mock(NULL);

	ck_assert_ptr_null(tg_program_new(dev, "fill", "a\n#error nope\n"));
	ck_assert_int_eq(tg_last_status(), TG_ECOMPILE);
	ck_assert_error("program_new 'fill' on MOCK: mock compile: #error "
	                "nope");
	ck_assert_ptr_null(tg_program_new(dev, "nosuch", "x"));
	ck_assert_int_eq(tg_last_status(), TG_ERUNTIME);
	ck_assert_error("program_new 'nosuch' on MOCK: mock load: no "
	                "function 'nosuch'");
	ck_assert_ptr_null(tg_program_new(NULL, "fill", "x"));
	ck_assert_error("program_new: device is NULL");
	ck_assert_ptr_null(tg_program_new(dev, "fill", NULL));
	ck_assert_error("program_new: source is NULL");
	tg_program_free(NULL);
}
END_TEST

START_TEST(launch_checks_its_arguments)
{
	tg_dev *dev = mock(NULL), *other = tg_dev_get("MOCK:1");
	tg_program *p = tg_program_new(dev, "fill", "f");
	tg_buffer *b = tg_buffer_new(other, 4, TG_FLOAT32);
	tg_launch_args a = { .bufs = &b, .nbufs = 1, .global = { 4, 1, 1 },
	                     .local = { 1, 1, 1 } };

	ck_assert_int_eq(tg_program_launch(p, &a, NULL), TG_EINVAL);
	ck_assert_error("program_launch 'fill': buffer 0 is on MOCK:1, the "
	                "program on MOCK");
	a.global[1] = 0;
	ck_assert_int_eq(tg_program_launch(p, &a, NULL), TG_EINVAL);
	ck_assert_error("global (4,0,1) and local (1,1,1) must be positive");
	a.global[1] = 1;
	a.local[0] = 512;
	ck_assert_int_eq(tg_program_launch(p, &a, NULL), TG_EINVAL);
	ck_assert_error("axis 0 global 4 / local 512 exceed MOCK's limits");
	a.local[0] = 1;
	a.bufs = NULL;
	ck_assert_int_eq(tg_program_launch(p, &a, NULL), TG_EINVAL);
	ck_assert_error("1 buffers/0 values but no array");
	ck_assert_int_eq(tg_program_launch(NULL, &a, NULL), TG_EINVAL);
	ck_assert_error("program_launch: program is NULL");
	tg_program_free(p);
	tg_buffer_unref(b);
}
END_TEST

/* A plugin without the optional trial entry (the mock) says so. */
START_TEST(trial_needs_the_plugins_entry)
{
	tg_dev *dev = mock(NULL);
	tg_program *p = tg_program_new(dev, "fill", "f");
	tg_buffer *b = tg_buffer_new(dev, 4, TG_FLOAT32);
	int64_t v = 1;
	tg_launch_args a = { .bufs = &b, .nbufs = 1, .vals = &v, .nvals = 1,
	                     .global = { 4, 1, 1 }, .local = { 1, 1, 1 } };

	ck_assert(!tg_program_has_trial(p));
	ck_assert_int_eq(tg_program_trial(p, &a, 1.0), TG_EUNSUPPORTED);
	ck_assert_error("program_trial 'fill' on MOCK: the plugin has no "
	                "trial entry");
	ck_assert_int_eq(tg_program_trial(NULL, &a, 1.0), TG_EINVAL);
	ck_assert_error("program_trial: program is NULL");
	tg_program_free(p);
	tg_buffer_unref(b);
}
END_TEST

START_TEST(compiled_blobs_land_in_the_disk_cache)
{
	tg_dev *dev = mock(NULL);
	tg_program *p = tg_program_new(dev, "fill", "cached source");
	tg_settings set;
	void *blob;
	size_t len;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(tg_settings_read(&set), 0);
	ck_assert_int_eq(tg_diskcache_get(&set, "compile", "MOCK\nmock-cc "
	                                  "1.0\ncached source", &blob, &len),
	                 1);
	ck_assert_uint_eq(len, strlen("cached source"));
	free(blob);
	tg_program_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("buffer");
	TCase *tc = tcase_create("buffer");

	tcase_add_checked_fixture(tc, NULL, tg_shutdown);
	tcase_add_test(tc, allocation_is_lazy_and_copies_round_trip);
	tcase_add_test(tc, copies_that_do_not_fit_are_errors);
	tcase_add_test(tc, bad_buffer_arguments);
	tcase_add_test(tc, wrapping_needs_the_plugins_entry);
	tcase_add_test(tc, zero_size_buffers_work);
	tcase_add_test(tc, views_share_the_base_memory);
	tcase_add_test(tc, view_out_of_range);
	tcase_add_test(tc, freed_memory_is_reused);
	tcase_add_test(tc, cache_can_be_disabled);
	tcase_add_test(tc, out_of_memory_empties_the_cache_and_retries);
	tcase_add_test(tc, out_of_memory_is_an_error_not_a_crash);
	tcase_add_test(tc, programs_compile_load_and_launch);
	tcase_add_test(tc, compile_errors_come_back_to_the_caller);
	tcase_add_test(tc, launch_checks_its_arguments);
	tcase_add_test(tc, trial_needs_the_plugins_entry);
	tcase_add_test(tc, compiled_blobs_land_in_the_disk_cache);
	tcase_add_test(tc, copies_between_devices_of_one_plugin);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

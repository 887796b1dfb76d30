/*
 * test_opencl.c - the OpenCL plugin end to end through the public API:
 * hand-written OpenCL C kernels in the ABI the core's renderer writes
 * (buffers in order, then `const int` values), checked against plain C
 * loops in double precision.  Skips (77) where no OpenCL device exists;
 * CI runs it on PoCL.
 */
#include "config.h"

#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "testlib.h"

static const char saxpy_src[] =
	"__kernel void saxpy(__global float *data0,\n"
	"                    __global const float *data1, const int var0)\n"
	"{\n"
	"	int i = get_global_id(0);\n"
	"	data0[i] = ((float)var0 / 4.0f) * data1[i] + data0[i];\n"
	"}\n";

/* Each work-item writes its (x, y, z) and counts its visits. */
static const char ids_src[] =
	"__kernel void ids(__global int *data0)\n"
	"{\n"
	"	int x = get_global_id(0), y = get_global_id(1),\n"
	"	    z = get_global_id(2);\n"
	"	int i = x + get_global_size(0) * (y + get_global_size(1) * z);\n"
	"	data0[4 * i] = x;\n"
	"	data0[4 * i + 1] = y;\n"
	"	data0[4 * i + 2] = z;\n"
	"	data0[4 * i + 3] += 1;\n"
	"}\n";

/* The same from group and local ids, as the renderer's local kernels. */
static const char group_ids_src[] =
	"__kernel void group_ids(__global int *data0)\n"
	"{\n"
	"	int x = get_group_id(0) * 2 + get_local_id(0);\n"
	"	int y = get_group_id(1) * 3 + get_local_id(1);\n"
	"	int z = get_group_id(2) + get_local_id(2);\n"
	"	int i = x + 4 * (y + 6 * z);\n"
	"	data0[4 * i] = x;\n"
	"	data0[4 * i + 1] = y;\n"
	"	data0[4 * i + 2] = z;\n"
	"	data0[4 * i + 3] += 1;\n"
	"}\n";

/* One sum per work-group of 16, through local memory. */
static const char group_sum_src[] =
	"__kernel void group_sum(__global float *data0,\n"
	"                        __global const float *data1)\n"
	"{\n"
	"	__local float tmp[16];\n"
	"	int lid = get_local_id(0), gid = get_group_id(0);\n"
	"	tmp[lid] = data1[gid * 16 + lid];\n"
	"	barrier(CLK_LOCAL_MEM_FENCE);\n"
	"	for (int s = 8; s > 0; s >>= 1) {\n"
	"		if (lid < s)\n"
	"			tmp[lid] += tmp[lid + s];\n"
	"		barrier(CLK_LOCAL_MEM_FENCE);\n"
	"	}\n"
	"	if (lid == 0)\n"
	"		data0[gid] = tmp[0];\n"
	"}\n";

static const char fill_src[] =
	"__kernel void fill(__global float *data0, const int var0)\n"
	"{\n"
	"	data0[get_global_id(0)] = (float)var0;\n"
	"}\n";

static const char half_src[] =
	"#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
	"__kernel void twice(__global half *data0, __global const half "
	"*data1)\n"
	"{\n"
	"	int i = get_global_id(0);\n"
	"	data0[i] = data1[i] * (half)2.0f;\n"
	"}\n";

static const char double_src[] =
	"#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
	"__kernel void axpb(__global double *data0, __global const double "
	"*data1)\n"
	"{\n"
	"	int i = get_global_id(0);\n"
	"	data0[i] = data1[i] * 3.0 + 1e-12;\n"
	"}\n";

static tg_dev *ocl(void)
{
	tg_dev *dev = tg_dev_get("OPENCL");

	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	return dev;
}

static tg_program *program(const char *name, const char *src)
{
	tg_program *p = tg_program_new(ocl(), name, src);

	ck_assert_msg(p != NULL, "%s", tg_last_error());
	return p;
}

static tg_dev_info dev_info(void)
{
	tg_dev_info info;

	ck_assert_int_eq(tg_dev_get_info(ocl(), &info), 0);
	return info;
}

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

START_TEST(device_describes_itself)
{
	tg_dev *dev = ocl();
	const char *d = tg_dev_description(dev);
	tg_dev_info info = dev_info();

	ck_assert_str_eq(tg_dev_name(dev), "OPENCL");
	/* "<device> | <platform> <driver> | <device version>" */
	ck_assert_msg(d[0] != '\0' && strstr(d, " | ") != NULL &&
	              strstr(strstr(d, " | ") + 3, " | ") != NULL, "%s", d);
	ck_assert_ptr_null(strchr(d, '\n'));
	ck_assert_str_eq(info.name, "OPENCL");
	ck_assert_str_eq(info.description, d);
	ck_assert_msg(!strcmp(info.type, "CPU") || !strcmp(info.type, "GPU") ||
	              !strcmp(info.type, "IGPU") ||
	              !strcmp(info.type, "ACCEL"), "type %s", info.type);
	ck_assert_uint_gt(info.total_memory, 0);
	ck_assert_ptr_eq(tg_dev_get("OPENCL:0"), dev);
	ck_assert_ptr_eq(tg_dev_get("GPU"), dev);
	ck_assert_ptr_eq(tg_dev_get("CL"), dev);
}
END_TEST

START_TEST(renderer_caps)
{
	tg_dev_info info = dev_info();

	ck_assert_str_eq(info.dialect, "opencl");
	ck_assert_int_eq(info.has_local, 1);
	ck_assert_int_eq(info.has_shared, 1);
	ck_assert_uint_gt(info.local_max_total, 0);
	ck_assert_uint_gt(info.shared_max, 0);
	ck_assert(info.dtype_mask & (1u << TG_FLOAT32));
	ck_assert(info.dtype_mask & (1u << TG_INT32));
	ck_assert(info.dtype_mask & (1u << TG_BFLOAT16)); /* as ushort */
}
END_TEST

START_TEST(out_of_range_device_is_an_error)
{
	ck_assert_ptr_null(tg_dev_get("OPENCL:9"));
	ck_assert_int_eq(tg_last_status(), TG_ENODEV);
	ck_assert_error("OPENCL");
}
END_TEST

START_TEST(unknown_platform_names_the_value)
{
	ck_assert_int_eq(tg_config_set("opencl.platform", "nonexistent"), 0);
	ck_assert_ptr_null(tg_dev_get("OPENCL"));
	ck_assert_error("platform");
	ck_assert_error("'nonexistent'");
	tg_shutdown();
	setenv("TG_OPENCL_PLATFORM", "99", 1);
	ck_assert_ptr_null(tg_dev_get("OPENCL"));
	ck_assert_error("'99'");
}
END_TEST

/* The first word of the platform name, lower case, from the
 * description's middle part. */
static void platform_word(char *buf, size_t n)
{
	const char *p = strstr(tg_dev_description(ocl()), " | ") + 3;
	size_t i;

	for (i = 0; i + 1 < n && p[i] != ' ' && p[i] != '\0'; i++)
		buf[i] = (char)tolower((unsigned char)p[i]);
	buf[i] = '\0';
}

START_TEST(platform_by_index_or_name)
{
	char desc[1024], word[64];

	snprintf(desc, sizeof desc, "%s", tg_dev_description(ocl()));
	platform_word(word, sizeof word);
	tg_shutdown();
	setenv("TG_OPENCL_PLATFORM", word, 1);
	ck_assert_str_eq(tg_dev_description(ocl()), desc);
	tg_shutdown();
	ck_assert_int_eq(tg_config_set("opencl.platform", "0"), 0);
	ck_assert_ptr_nonnull(tg_dev_get("OPENCL"));
}
END_TEST

START_TEST(device_config)
{
	char desc[1024];

	snprintf(desc, sizeof desc, "%s", tg_dev_description(ocl()));
	tg_shutdown();
	setenv("TG_OPENCL_DEVICE", "0", 1);
	ck_assert_str_eq(tg_dev_description(ocl()), desc);
	ck_assert_ptr_null(tg_dev_get("OPENCL:1")); /* one device left */
	tg_shutdown();
	setenv("TG_OPENCL_DEVICE", "4096", 1);
	ck_assert_ptr_null(tg_dev_get("OPENCL"));
	ck_assert_int_eq(tg_last_status(), TG_ECONFIG);
	ck_assert_error("config: environment TG_OPENCL_DEVICE: [opencl] "
	                "device: expected a device index (there ");
	ck_assert_error("got '4096'");
	tg_shutdown();
	setenv("TG_OPENCL_DEVICE", "first", 1);
	ck_assert_ptr_null(tg_dev_get("OPENCL"));
	ck_assert_error("'first'");
}
END_TEST

START_TEST(optional_float_types)
{
	tg_dev_info info = dev_info();
	uint16_t in[4] = { 0x3C00, 0x4000, 0x3800, 0xC200 }, out[4];
	uint16_t want[4] = { 0x4000, 0x4400, 0x3C00, 0xC600 };
	tg_buffer *b[2];
	tg_launch_args a = { .bufs = b, .nbufs = 2, .global = { 4, 1, 1 },
	                     .local = { 1, 1, 1 } };
	tg_program *p;

	/* without cl_khr_fp16 (PoCL on x86) the mask must leave float16
	 * out, and there is nothing to run */
	if (!(info.dtype_mask & (1u << TG_FLOAT16)))
		return;
	p = program("twice", half_src);
	b[0] = tg_buffer_new(ocl(), 4, TG_FLOAT16);
	b[1] = tg_buffer_new(ocl(), 4, TG_FLOAT16);
	ck_assert_int_eq(tg_buffer_copyin(b[1], in, sizeof in), 0);
	ck_assert_int_eq(tg_program_launch(p, &a, NULL), 0);
	ck_assert_int_eq(tg_buffer_copyout(b[0], out, sizeof out), 0);
	ck_assert_mem_eq(out, want, sizeof out);
	tg_buffer_unref(b[0]), tg_buffer_unref(b[1]);
	tg_program_free(p);
}
END_TEST

START_TEST(double_kernel_when_supported)
{
	tg_dev_info info = dev_info();
	double in[3] = { 1.0 / 3.0, -2.5, 1e300 }, out[3];
	tg_buffer *b[2];
	tg_launch_args a = { .bufs = b, .nbufs = 2, .global = { 3, 1, 1 },
	                     .local = { 1, 1, 1 } };
	tg_program *p;

	if (!(info.dtype_mask & (1u << TG_FLOAT64)))
		return;
	p = program("axpb", double_src);
	b[0] = tg_buffer_new(ocl(), 3, TG_FLOAT64);
	b[1] = tg_buffer_new(ocl(), 3, TG_FLOAT64);
	ck_assert_int_eq(tg_buffer_copyin(b[1], in, sizeof in), 0);
	ck_assert_int_eq(tg_program_launch(p, &a, NULL), 0);
	ck_assert_int_eq(tg_buffer_copyout(b[0], out, sizeof out), 0);
	for (int i = 0; i < 3; i++) /* fma or not: within one rounding */
		ck_assert_double_eq_tol(out[i], in[i] * 3.0 + 1e-12,
		                        fabs(in[i]) * 1e-15);
	tg_buffer_unref(b[0]), tg_buffer_unref(b[1]);
	tg_program_free(p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Kernels                                                             */
/* ------------------------------------------------------------------ */

/* y = a x + y for n items with a = var0 / 4, a = 2.5. */
static void run_saxpy(size_t n, size_t local)
{
	int64_t a = 10;  /* a = 2.5 */
	tg_launch_args args = { .vals = &a, .nvals = 1, .global = { n, 1, 1 },
	                        .local = { local, 1, 1 } };

	tl_check_saxpy(ocl(), program("saxpy", saxpy_src), n, args, 0);
}

START_TEST(saxpy_matches_a_c_loop)
{
	run_saxpy(1000003, 1);
	run_saxpy(1, 1);
	run_saxpy(4096, 64);
}
END_TEST

/* Runs an ids-style kernel over X x Y x Z and checks every item. */
static void check_ids(const char *name, const char *src, const size_t g[3],
                      const size_t l[3])
{
	size_t n = g[0] * g[1] * g[2];
	tg_buffer *b = tg_buffer_new(ocl(), 4 * n, TG_INT32);
	int32_t *out = calloc(4 * n, 4);
	tg_program *p = program(name, src);
	tg_launch_args args = { .bufs = &b, .nbufs = 1,
	                        .global = { g[0], g[1], g[2] },
	                        .local = { l[0], l[1], l[2] } };

	ck_assert_int_eq(tg_buffer_copyin(b, out, 16 * n), 0);
	ck_assert_msg(tg_program_launch(p, &args, NULL) == 0, "%s",
	              tg_last_error());
	ck_assert_int_eq(tg_buffer_copyout(b, out, 16 * n), 0);
	for (size_t z = 0; z < g[2]; z++)
		for (size_t y = 0; y < g[1]; y++)
			for (size_t x = 0; x < g[0]; x++) {
				int32_t *o = out + 4 * (x + g[0] * (y + g[1] * z));

				ck_assert_int_eq(o[0], x);
				ck_assert_int_eq(o[1], y);
				ck_assert_int_eq(o[2], z);
				ck_assert_int_eq(o[3], 1);
			}
	free(out);
	tg_buffer_unref(b);
	tg_program_free(p);
}

START_TEST(three_dimensional_global_visits_each_item_once)
{
	check_ids("ids", ids_src, (size_t[3]){ 5, 3, 2 },
	          (size_t[3]){ 1, 1, 1 });
}
END_TEST

START_TEST(group_and_local_ids_cover_the_grid)
{
	check_ids("group_ids", group_ids_src, (size_t[3]){ 4, 6, 2 },
	          (size_t[3]){ 2, 3, 1 });
}
END_TEST

START_TEST(local_memory_group_sums)
{
	enum { N = 256, G = N / 16 };
	tg_buffer *b[2] = { tg_buffer_new(ocl(), G, TG_FLOAT32),
	                    tg_buffer_new(ocl(), N, TG_FLOAT32) };
	tg_program *p = program("group_sum", group_sum_src);
	tg_launch_args args = { .bufs = b, .nbufs = 2, .global = { N, 1, 1 },
	                        .local = { 16, 1, 1 } };
	float in[N], out[G];

	for (int i = 0; i < N; i++)
		in[i] = (float)((i * 37) % 101) * 0.125f - 5.0f;
	ck_assert_int_eq(tg_buffer_copyin(b[1], in, sizeof in), 0);
	ck_assert_msg(tg_program_launch(p, &args, NULL) == 0, "%s",
	              tg_last_error());
	ck_assert_int_eq(tg_buffer_copyout(b[0], out, sizeof out), 0);
	for (int g = 0; g < G; g++) {
		double want = 0;

		for (int i = 0; i < 16; i++)
			want += in[g * 16 + i];
		ck_assert_double_eq_tol(out[g], want, 1e-4);
	}
	tg_buffer_unref(b[0]), tg_buffer_unref(b[1]);
	tg_program_free(p);
}
END_TEST

START_TEST(timed_launch_reports_device_time)
{
	enum { N = 1 << 20 };
	tg_buffer *b = tg_buffer_new(ocl(), N, TG_FLOAT32);
	tg_program *p = program("fill", fill_src);
	int64_t v = 7;
	tg_launch_args args = { .bufs = &b, .nbufs = 1, .vals = &v,
	                        .nvals = 1, .global = { N, 1, 1 },
	                        .local = { 1, 1, 1 } };
	double t = -1;
	float out[3];

	ck_assert_int_eq(tg_program_launch(p, &args, &t), 0);
	ck_assert_msg(t > 0.0 && t < 60.0, "elapsed %g s", t);
	ck_assert_int_eq(tg_buffer_copyout(b, out, sizeof out), 0);
	ck_assert_float_eq(out[2], 7.0f);
	/* untimed launches queue; synchronize waits for them */
	for (v = 0; v < 5; v++)
		ck_assert_int_eq(tg_program_launch(p, &args, NULL), 0);
	ck_assert_int_eq(tg_dev_synchronize(ocl()), 0);
	ck_assert_int_eq(tg_buffer_copyout(b, out, sizeof out), 0);
	ck_assert_float_eq(out[0], 4.0f);
	tg_buffer_unref(b);
	tg_program_free(p);
}
END_TEST

/* Several threads launch the same kernel object: the plugin's lock
 * keeps each launch's arguments together. */
struct worker {
	tg_program *p;
	tg_buffer *b;
	int value, ok;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	int64_t v = w->value;
	tg_launch_args a = { .bufs = &w->b, .nbufs = 1, .vals = &v,
	                     .nvals = 1, .global = { 4096, 1, 1 },
	                     .local = { 1, 1, 1 } };
	float out[4096];

	w->ok = 1;
	for (int i = 0; i < 20 && w->ok; i++) {
		w->ok = tg_program_launch(w->p, &a, NULL) == 0 &&
		        tg_buffer_copyout(w->b, out, sizeof out) == 0;
		for (int j = 0; j < 4096 && w->ok; j++)
			w->ok = out[j] == (float)w->value;
	}
	return NULL;
}

START_TEST(launches_from_several_threads)
{
	enum { T = 4 };
	struct worker w[T];
	pthread_t th[T];
	tg_program *p = program("fill", fill_src);

	for (int i = 0; i < T; i++) {
		w[i] = (struct worker){ .p = p, .value = 100 + i,
		        .b = tg_buffer_new(ocl(), 4096, TG_FLOAT32) };
		ck_assert_int_eq(tg_buffer_allocate(w[i].b), 0);
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker_run,
		                                &w[i]), 0);
	}
	for (int i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(w[i].ok, "thread %d saw another's value", i);
		tg_buffer_unref(w[i].b);
	}
	tg_program_free(p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

START_TEST(compile_error_quotes_the_build_log)
{
	ck_assert_ptr_null(tg_program_new(ocl(), "bad",
		"__kernel void bad(__global float *data0)\n"
		"{\n\tdata0[0] = bogus_identifier;\n}\n"));
	ck_assert_int_eq(tg_last_status(), TG_ECOMPILE);
	ck_assert_error("program_new 'bad' on OPENCL: ");
	ck_assert_error("build failed");
	ck_assert_error("bogus_identifier");
}
END_TEST

START_TEST(wrong_kernel_name_is_named)
{
	ck_assert_ptr_null(tg_program_new(ocl(), "nosuch", saxpy_src));
	ck_assert_error("'nosuch'");
	ck_assert_error("CL_INVALID_KERNEL_NAME");
}
END_TEST

static int launch_fill(const size_t g[3], const size_t l[3], int64_t v,
                       size_t nvals)
{
	tg_buffer *b = tg_buffer_new(ocl(), 1024, TG_FLOAT32);
	tg_program *p = program("fill", fill_src);
	tg_launch_args a = { .bufs = &b, .nbufs = 1, .vals = &v,
	                     .nvals = nvals, .global = { g[0], g[1], g[2] },
	                     .local = { l[0], l[1], l[2] } };
	int rc = tg_program_launch(p, &a, NULL);

	tg_buffer_unref(b);
	tg_program_free(p);
	return rc;
}

START_TEST(global_not_a_multiple_of_local)
{
	ck_assert_int_eq(launch_fill((size_t[3]){ 10, 1, 1 },
	                             (size_t[3]){ 4, 1, 1 }, 1, 1), TG_EINVAL);
	ck_assert_error("program_launch 'fill' on OPENCL: ");
	ck_assert_error("global size 10 x 1 x 1");
	ck_assert_error("local size 4 x 1 x 1");
}
END_TEST

START_TEST(work_group_too_large)
{
	size_t most = dev_info().local_max_total;

	/* most x 2 items in one group, split over two axes */
	ck_assert_int_eq(launch_fill((size_t[3]){ most, 2, 1 },
	                             (size_t[3]){ most, 2, 1 }, 1, 1),
	                 TG_EINVAL);
	ck_assert_error("work-items");
}
END_TEST

START_TEST(value_outside_int32)
{
	ck_assert_int_eq(launch_fill((size_t[3]){ 16, 1, 1 },
	                             (size_t[3]){ 1, 1, 1 },
	                             (int64_t)1 << 40, 1), TG_EINVAL);
	ck_assert_error("1099511627776");
	ck_assert_int_eq(launch_fill((size_t[3]){ 16, 1, 1 },
	                             (size_t[3]){ 1, 1, 1 },
	                             INT32_MIN, 1), 0);
}
END_TEST

START_TEST(argument_count_must_match)
{
	ck_assert_int_eq(launch_fill((size_t[3]){ 16, 1, 1 },
	                             (size_t[3]){ 1, 1, 1 }, 1, 0),
	                 TG_EINVAL);
	ck_assert_error("takes 2 arguments");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Memory                                                              */
/* ------------------------------------------------------------------ */

static void round_trip(size_t n)
{
	tg_buffer *b = tg_buffer_new(ocl(), n, TG_UINT8);
	unsigned char *in = malloc(n), *out = malloc(n);

	for (size_t i = 0; i < n; i++)
		in[i] = (unsigned char)(i * 131 + 7);
	memset(out, 0xEE, n);
	ck_assert_int_eq(tg_buffer_copyin(b, in, n), 0);
	ck_assert_int_eq(tg_buffer_copyout(b, out, n), 0);
	ck_assert_mem_eq(out, in, n);
	memset(out, 0xEE, n);
	ck_assert_int_eq(tg_buffer_copyout(b, out, n / 2 + 1), 0);
	ck_assert_mem_eq(out, in, n / 2 + 1);
	free(in), free(out);
	tg_buffer_unref(b);
}

START_TEST(copy_round_trips_of_odd_sizes)
{
	round_trip(1);
	round_trip(3);
	round_trip(1000003);
}
END_TEST

START_TEST(huge_allocation_fails_cleanly)
{
	tg_buffer *b = tg_buffer_new(ocl(), (size_t)1 << 60, TG_UINT8);

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(tg_buffer_allocate(b), TG_ENOMEM);
	ck_assert_error("clCreateBuffer of 1152921504606846976 bytes on "
	                "OPENCL");
	tg_buffer_unref(b);
}
END_TEST

START_TEST(aligned_sub_buffer_view)
{
	enum { N = 2048, OFF = 4096 }; /* bytes: above any base alignment */
	tg_buffer *base = tg_buffer_new(ocl(), N, TG_FLOAT32);
	tg_buffer *v = tg_buffer_view(base, OFF, 4, TG_FLOAT32);
	tg_program *p = program("fill", fill_src);
	int64_t val = -3;
	tg_launch_args a = { .bufs = &v, .nbufs = 1, .vals = &val,
	                     .nvals = 1, .global = { 4, 1, 1 },
	                     .local = { 1, 1, 1 } };
	static float in[N], out[N];

	for (int i = 0; i < N; i++)
		in[i] = (float)i;
	ck_assert_int_eq(tg_buffer_copyin(base, in, sizeof in), 0);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(tg_buffer_copyout(v, out, 8), 0);
	ck_assert_float_eq(out[0], 1024.0f);
	ck_assert_float_eq(out[1], 1025.0f);
	ck_assert_msg(tg_program_launch(p, &a, NULL) == 0, "%s",
	              tg_last_error());
	ck_assert_int_eq(tg_buffer_copyout(base, out, sizeof out), 0);
	for (int i = 0; i < N; i++)
		ck_assert_float_eq(out[i], i >= 1024 && i < 1028 ? -3.0f :
		                           (float)i);
	tg_buffer_unref(v);
	tg_buffer_unref(base);
	tg_program_free(p);
}
END_TEST

START_TEST(misaligned_view_names_the_alignment)
{
	tg_buffer *base = tg_buffer_new(ocl(), 64, TG_FLOAT32);
	tg_buffer *v = tg_buffer_view(base, 4, 2, TG_FLOAT32);

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(tg_buffer_allocate(v), TG_EUNSUPPORTED);
	ck_assert_error("offset 4 bytes");
	ck_assert_error("alignment");
	tg_buffer_unref(v);
	tg_buffer_unref(base);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Two devices of one platform (PoCL: POCL_DEVICES="pthread pthread")  */
/* ------------------------------------------------------------------ */

static tg_dev *ocl1(void)
{
	tg_dev *dev = tg_dev_get("OPENCL:1");

	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	return dev;
}

/* 0, 1, ..., n-1 times k, computed by a kernel on dev. */
static tg_tensor *ramp_on(tg_dev *dev, int64_t n, double k)
{
	tg_tensor *t = tg_arange(dev, TG_FLOAT32, 0, (double)n, 1);

	ck_assert_msg(t != NULL, "%s", tg_last_error());
	t = tg_contiguous(tg_mul_s(t, k));
	ck_assert_msg(t != NULL && tg_realize(t) == 0, "%s", tg_last_error());
	return t;
}

/* A copy between the two is one command on the destination's queue:
 * after the kernel that wrote the source, before the one that
 * overwrites it next. */
START_TEST(peer_copy_between_devices_of_a_platform)
{
	enum { N = 100003 };
	static float got[N];
	tg_tensor *x, *y;
	tg_counters k;

	tg_scope_begin();
	x = ramp_on(ocl(), N, 0.5);
	tg_counters_reset();
	y = tg_to(x, ocl1());
	ck_assert_msg(y != NULL && tg_realize(y) == 0, "%s", tg_last_error());
	ck_assert_int_eq(tg_assign(x, tg_mul_s(x, -1)), 0);
	ck_assert_int_eq(tg_realize(x), 0);
	tg_counters_get(&k);
	ck_assert_uint_eq(k.copies, 1);
	ck_assert_uint_eq(k.peer_copies, 1);
	ck_assert_int_eq(tg_tensor_data(y, got, sizeof got), 0);
	for (int i = 0; i < N; i++)
		ck_assert_float_eq(got[i], 0.5f * (float)i);
	ck_assert_int_eq(tg_tensor_data(x, got, sizeof got), 0);
	ck_assert_float_eq(got[N - 1], -0.5f * (float)(N - 1));
	tg_scope_end();
}
END_TEST

static int column_sums(void *ctx, tg_tensor *const *in, size_t nin,
                       tg_tensor **out, size_t nout)
{
	(void)ctx, (void)nin, (void)nout;
	out[0] = tg_sum(tg_mul_s(in[0], 2), (int[]){ 0 }, 1, 0);
	return out[0] ? 0 : tg_last_status();
}

/* A tensor sharded over the two devices: the all-reduce of a sum over
 * the split axis copies device to device, also in the JIT's replays,
 * and every replica holds the column sums. */
START_TEST(all_reduce_over_two_devices_copies_peer_to_peer)
{
	enum { R = 64, C = 1000 };
	tg_dev *pair[2], *group;
	tg_jit *j;
	static float got[C];
	tg_counters k;

	/* compile in the shared context, not from the cache */
	setenv("CACHELEVEL", "0", 1);
	pair[0] = ocl();
	pair[1] = ocl1();
	group = tg_dev_group(pair, 2);
	j = tg_jit_new(column_sums, NULL);
	ck_assert_msg(group != NULL, "%s", tg_last_error());
	for (int call = 0; call < 4; call++) {
		tg_tensor *x, *s;

		tg_scope_begin();
		x = tg_reshape(ramp_on(ocl(), R * C, 1.0 / (call + 1)), 2,
		               (int64_t[]){ R, C });
		x = tg_shard(x, group, 0);
		ck_assert_msg(x != NULL, "%s", tg_last_error());
		tg_counters_reset();
		ck_assert_msg(tg_jit_call(j, &x, 1, &s, 1) == 0, "%s",
		              tg_last_error());
		tg_counters_get(&k);
		ck_assert_uint_ge(k.copies, 1);
		ck_assert_uint_eq(k.peer_copies, k.copies);
		for (int m = 0; m < 2; m++) {
			ck_assert_int_eq(tg_tensor_data(tg_to(s, pair[m]), got,
			                                sizeof got), 0);
			for (int c = 0; c < C; c++) {
				/* 2 * sum over r of (r * C + c) / (call + 1) */
				double want = 2.0 * (C * (R * (R - 1) / 2.0) +
				                     (double)R * c) / (call + 1);

				ck_assert_msg(fabs(got[c] - want) <= 1e-5 * want +
				              1e-3, "member %d column %d: %g, want "
				              "%g", m, c, got[c], want);
			}
		}
		tg_scope_end();
	}
	tg_jit_free(j);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The binary cache                                                    */
/* ------------------------------------------------------------------ */

/* tg_program_new of saxpy with DEBUG=3 and stderr captured; returns
 * what was logged.  The program must run, whichever path it came by. */
static char *saxpy_logged(void)
{
	const char *path = tl_write_file("stderr.txt", "");
	int saved = dup(2), fd = open(path, O_WRONLY | O_TRUNC);
	static char text[1 << 16];
	tg_program *p;
	size_t n;
	FILE *f;

	ck_assert_int_ge(fd, 0);
	dup2(fd, 2);
	p = tg_program_new(ocl(), "saxpy", saxpy_src);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	ck_assert_msg(p != NULL, "%s", tg_last_error());
	tg_program_free(p);
	run_saxpy(1001, 1);
	f = fopen(path, "r");
	n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

START_TEST(second_compile_loads_the_cached_binary)
{
	char db[512];
	struct stat st;

	snprintf(db, sizeof db, "%s/%d-opencl.db", getenv("TG_TEST_TMP"),
	         (int)getpid());
	unlink(db);
	setenv("CACHEDB", db, 1);
	setenv("DEBUG", "3", 1);
	ck_assert_ptr_nonnull(strstr(saxpy_logged(), "cache compile: miss"));
	ck_assert_int_eq(stat(db, &st), 0);
	ck_assert_int_gt(st.st_size, 0);
	tg_shutdown(); /* a new process would see the same */
	ck_assert_ptr_nonnull(strstr(saxpy_logged(), "cache compile: hit"));
	unlink(db);
}
END_TEST

START_TEST(cache_lives_under_xdg_cache_home)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	char path[512];
	struct stat st;

	if (xdg == NULL || xdg[0] == '\0')
		return; /* only under make check's environment */
	unsetenv("CACHEDB");
	snprintf(path, sizeof path, "%s/tgcore/cache.db", xdg);
	tg_program_free(program("saxpy", saxpy_src));
	ck_assert_msg(stat(path, &st) == 0 && st.st_size > 0, "no %s", path);
	tg_shutdown();
	tg_program_free(program("saxpy", saxpy_src)); /* from the cache */
}
END_TEST

/* Whether OpenCL device `name` opens, tried in a child process: a driver
 * initialized before Check forks its tests is unusable in the children
 * (PoCL's worker threads do not survive fork).  0, or 1 with the
 * reason in why. */
static int no_device(const char *name, char *why, size_t n)
{
	int fd[2], status = 0;
	ssize_t len;
	pid_t pid;

	if (pipe(fd) != 0 || (pid = fork()) < 0)
		return snprintf(why, n, "cannot fork"), 1;
	if (pid == 0) {
		close(fd[0]);
		if (tg_dev_get(name) != NULL)
			_exit(0);
		len = write(fd[1], tg_last_error(), strlen(tg_last_error()));
		_exit(len >= 0 ? 1 : 2);
	}
	close(fd[1]);
	len = read(fd[0], why, n - 1);
	why[len > 0 ? len : 0] = '\0';
	close(fd[0]);
	waitpid(pid, &status, 0);
	return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

int main(void)
{
	Suite *s;
	TCase *tc;
	char why[1024];
	int pair;

	/* PoCL then lists two CPU devices: the shared context's copies */
	setenv("POCL_DEVICES", "pthread pthread", 0);
	if (no_device("OPENCL", why, sizeof why)) {
		return tl_no_device("test_opencl", "OPENCL", why);
	}
	if (!(pair = !no_device("OPENCL:1", why, sizeof why)))
		printf("test_opencl: one OpenCL device, so copies between two "
		       "are not tested here: %s\n", why);
	/* made after the probes, whose children would leak them */
	s = suite_create("opencl");
	tc = tcase_create("opencl");
	tcase_add_checked_fixture(tc, NULL, tg_shutdown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, device_describes_itself);
	tcase_add_test(tc, renderer_caps);
	tcase_add_test(tc, out_of_range_device_is_an_error);
	tcase_add_test(tc, unknown_platform_names_the_value);
	tcase_add_test(tc, platform_by_index_or_name);
	tcase_add_test(tc, device_config);
	tcase_add_test(tc, optional_float_types);
	tcase_add_test(tc, double_kernel_when_supported);
	tcase_add_test(tc, saxpy_matches_a_c_loop);
	tcase_add_test(tc, three_dimensional_global_visits_each_item_once);
	tcase_add_test(tc, group_and_local_ids_cover_the_grid);
	tcase_add_test(tc, local_memory_group_sums);
	tcase_add_test(tc, timed_launch_reports_device_time);
	tcase_add_test(tc, launches_from_several_threads);
	tcase_add_test(tc, compile_error_quotes_the_build_log);
	tcase_add_test(tc, wrong_kernel_name_is_named);
	tcase_add_test(tc, global_not_a_multiple_of_local);
	tcase_add_test(tc, work_group_too_large);
	tcase_add_test(tc, value_outside_int32);
	tcase_add_test(tc, argument_count_must_match);
	tcase_add_test(tc, copy_round_trips_of_odd_sizes);
	tcase_add_test(tc, huge_allocation_fails_cleanly);
	tcase_add_test(tc, aligned_sub_buffer_view);
	tcase_add_test(tc, misaligned_view_names_the_alignment);
	if (pair) {
		tcase_add_test(tc, peer_copy_between_devices_of_a_platform);
		tcase_add_test(tc, all_reduce_over_two_devices_copies_peer_to_peer);
	}
	tcase_add_test(tc, second_compile_loads_the_cached_binary);
	tcase_add_test(tc, cache_lives_under_xdg_cache_home);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

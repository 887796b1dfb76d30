/*
 * test_vulkan.c - the Vulkan plugin end to end through the public API:
 * hand-written GLSL compute shaders in the plugin's ABI (plugins/vulkan/
 * vulkan.h), compiled by shaderc, run on the first Vulkan device and
 * checked against plain C loops in double precision.  Skips (77) where
 * there is no Vulkan device; CI runs it on lavapipe.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "testlib.h"

#define HEAD "#version 450\n" \
	"layout(local_size_x_id = 0, local_size_y_id = 1, " \
	"local_size_z_id = 2) in;\n"
#define BUF(k, q, T) "layout(std430, set = 0, binding = " #k ") " q \
	" buffer tg_buf_" #k " { " T " data_" #k "[]; };\n"
#define VALS(n) "layout(push_constant) uniform tg_vals { int v[" #n \
	"]; } vals;\n"
#define FLAT_ID "uint tg_i = gl_GlobalInvocationID.x + " \
	"gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"

/* y = (v0 / 4) * x + y over v1 items, flattened ids. */
static const char saxpy_src[] = HEAD BUF(0, "", "float")
	BUF(1, "readonly", "float") VALS(2)
	"void main() {\n" FLAT_ID
	"	if (tg_i >= uint(vals.v[1])) return;\n"
	"	float a = float(vals.v[0]) / 4.0;\n"
	"	data_0[tg_i] = a * data_1[tg_i] + data_0[tg_i];\n"
	"}\n";

/* Eight ints per invocation: group id, local id, then a visit count. */
static const char ids_src[] = HEAD BUF(0, "", "int")
	"void main() {\n"
	"	uvec3 g = gl_GlobalInvocationID;\n"
	"	uvec3 n = gl_NumWorkGroups * gl_WorkGroupSize;\n"
	"	uint i = 8u * (g.x + n.x * (g.y + n.y * g.z));\n"
	"	data_0[i] = int(gl_WorkGroupID.x);\n"
	"	data_0[i + 1u] = int(gl_WorkGroupID.y);\n"
	"	data_0[i + 2u] = int(gl_WorkGroupID.z);\n"
	"	data_0[i + 3u] = int(gl_LocalInvocationID.x);\n"
	"	data_0[i + 4u] = int(gl_LocalInvocationID.y);\n"
	"	data_0[i + 5u] = int(gl_LocalInvocationID.z);\n"
	"	data_0[i + 7u] += 1;\n"
	"}\n";

/* One sum per work-group of 64 through shared memory. */
static const char groupsum_src[] = HEAD BUF(0, "writeonly", "float")
	BUF(1, "readonly", "float")
	"shared float tmp[64];\n"
	"void main() {\n"
	"	uint l = gl_LocalInvocationID.x;\n"
	"	tmp[l] = data_1[gl_GlobalInvocationID.x];\n"
	"	barrier();\n"
	"	for (uint s = 32u; s > 0u; s >>= 1) {\n"
	"		if (l < s) tmp[l] += tmp[l + s];\n"
	"		barrier();\n"
	"	}\n"
	"	if (l == 0u) data_0[gl_WorkGroupID.x] = tmp[0];\n"
	"}\n";

static const char incr_src[] = HEAD BUF(0, "", "int") VALS(1)
	"void main() {\n" FLAT_ID
	"	if (tg_i >= uint(vals.v[0])) return;\n"
	"	data_0[tg_i] += 1;\n"
	"}\n";

static tg_dev *vk(void)
{
	tg_dev *dev = tg_dev_get("VULKAN");

	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	return dev;
}

static tg_program *program(const char *name, const char *src)
{
	tg_program *p = tg_program_new(vk(), name, src);

	ck_assert_msg(p != NULL, "%s", tg_last_error());
	return p;
}

static int is_lavapipe(void)
{
	return strstr(tg_dev_description(vk()), "llvmpipe") != NULL;
}

START_TEST(info_describes_the_device)
{
	tg_dev_info info;
	uint32_t base = (1u << TG_FLOAT32) | (1u << TG_INT32) |
	                (1u << TG_UINT32);

	ck_assert_int_eq(tg_dev_get_info(vk(), &info), 0);
	ck_assert_str_eq(info.name, "VULKAN");
	ck_assert_str_eq(info.dialect, "glsl");
	ck_assert_ptr_nonnull(strstr(info.description, " | Vulkan 1."));
	ck_assert_ptr_nonnull(strstr(info.description, " | "));
	ck_assert_msg(!strcmp(info.type, "GPU") || !strcmp(info.type, "IGPU")
	              || !strcmp(info.type, "CPU") ||
	              !strcmp(info.type, "ACCEL"), "type %s", info.type);
	if (is_lavapipe())
		ck_assert_str_eq(info.type, "CPU");
	ck_assert_uint_gt(info.total_memory, 0);
	ck_assert_int_eq(info.has_local, 1);
	ck_assert_int_eq(info.has_shared, 1);
	ck_assert_uint_ge(info.local_max_total, 128);
	ck_assert_uint_ge(info.shared_max, 16384);
	ck_assert_uint_eq(info.dtype_mask & base, base);
}
END_TEST

static void run_saxpy(size_t n, int timed)
{
	int64_t vals[2] = { 10, (int64_t)n }; /* a = 2.5 */
	tg_launch_args args = { .vals = vals, .nvals = 2,
	                        .global = { n, 1, 1 }, .local = { 1, 1, 1 } };

	tl_check_saxpy(vk(), program("saxpy", saxpy_src), n, args, timed);
}

/* 5,000,000 items are 78125 groups of 64: more than 65535 in x. */
START_TEST(saxpy_needs_two_dimensional_groups)
{
	run_saxpy(5000000, 0);
}
END_TEST

START_TEST(saxpy_small_and_odd_sizes)
{
	run_saxpy(1, 0);
	run_saxpy(63, 0);
	run_saxpy(65, 0);
	run_saxpy(4097, 0);
}
END_TEST

START_TEST(timed_launch_reports_elapsed_time)
{
	run_saxpy(1000003, 1);
}
END_TEST

START_TEST(staging_copies_work_too)
{
	setenv("TG_VULKAN_STAGING", "1", 1);
	run_saxpy(100003, 1);
}
END_TEST

START_TEST(local_ids_and_group_ids_in_three_dimensions)
{
	enum { X = 8, Y = 6, Z = 2, N = X * Y * Z };
	tg_program *p = program("ids", ids_src);
	tg_buffer *b = tg_buffer_new(vk(), 8 * N, TG_INT32);
	int32_t *out = calloc(8 * N, 4);
	tg_launch_args args = { .bufs = &b, .nbufs = 1,
	                        .global = { X, Y, Z }, .local = { 4, 2, 1 } };
	int x, y, z;

	ck_assert_int_eq(tg_buffer_copyin(b, out, 32 * N), 0);
	ck_assert_msg(tg_program_launch(p, &args, NULL) == 0, "%s",
	              tg_last_error());
	ck_assert_int_eq(tg_buffer_copyout(b, out, 32 * N), 0);
	for (z = 0; z < Z; z++)
		for (y = 0; y < Y; y++)
			for (x = 0; x < X; x++) {
				int32_t *o = out + 8 * (x + X * (y + Y * z));

				ck_assert_int_eq(o[0], x / 4);
				ck_assert_int_eq(o[1], y / 2);
				ck_assert_int_eq(o[2], z);
				ck_assert_int_eq(o[3], x % 4);
				ck_assert_int_eq(o[4], y % 2);
				ck_assert_int_eq(o[5], 0);
				ck_assert_int_eq(o[7], 1);
			}
	free(out);
	tg_buffer_unref(b);
	tg_program_free(p);
}
END_TEST

START_TEST(shared_memory_group_sums)
{
	enum { G = 100, N = 64 * G };
	tg_program *p = program("groupsum", groupsum_src);
	tg_buffer *sum = tg_buffer_new(vk(), G, TG_FLOAT32);
	tg_buffer *in = tg_buffer_new(vk(), N, TG_FLOAT32);
	tg_buffer *bufs[2] = { sum, in };
	float h[N], out[G];
	tg_launch_args args = { .bufs = bufs, .nbufs = 2,
	                        .global = { N, 1, 1 }, .local = { 64, 1, 1 } };
	int i, g;

	for (i = 0; i < N; i++)
		h[i] = (float)(i % 13) * 0.5f - 1.0f;
	ck_assert_int_eq(tg_buffer_copyin(in, h, sizeof h), 0);
	ck_assert_msg(tg_program_launch(p, &args, NULL) == 0, "%s",
	              tg_last_error());
	ck_assert_int_eq(tg_buffer_copyout(sum, out, sizeof out), 0);
	for (g = 0; g < G; g++) {
		double want = 0;

		for (i = 0; i < 64; i++)
			want += h[64 * g + i];
		ck_assert_msg(fabs(out[g] - want) <= 1e-5 * fabs(want) + 1e-5,
		              "group %d: %g vs %g", g, out[g], want);
	}
	tg_buffer_unref(sum), tg_buffer_unref(in);
	tg_program_free(p);
}
END_TEST

/* 1000 launches recorded without waiting (several batches) run in
 * order: every item is incremented exactly 1000 times. */
START_TEST(many_launches_batch_in_order)
{
	enum { N = 1000, L = 1000 };
	tg_program *p = program("incr", incr_src);
	tg_buffer *b = tg_buffer_new(vk(), N, TG_INT32);
	int32_t h[N] = { 0 };
	int64_t n = N;
	tg_launch_args args = { .bufs = &b, .nbufs = 1, .vals = &n,
	                        .nvals = 1, .global = { N, 1, 1 },
	                        .local = { 1, 1, 1 } };
	int i;

	ck_assert_int_eq(tg_buffer_copyin(b, h, sizeof h), 0);
	for (i = 0; i < L; i++)
		ck_assert_msg(tg_program_launch(p, &args, NULL) == 0, "%s",
		              tg_last_error());
	ck_assert_int_eq(tg_dev_synchronize(vk()), 0);
	ck_assert_int_eq(tg_buffer_copyout(b, h, sizeof h), 0);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(h[i], L);
	tg_buffer_unref(b);
	tg_program_free(p);
}
END_TEST

START_TEST(compile_error_names_the_identifier)
{
	static const char bad[] = HEAD BUF(0, "", "float")
		"void main() { data_0[0] = no_such_thing; }\n";

	ck_assert_ptr_null(tg_program_new(vk(), "bad", bad));
	ck_assert_int_eq(tg_last_status(), TG_ECOMPILE);
	ck_assert_error("vulkan compile: glslc failed (exit 1): ");
	ck_assert_error("no_such_thing");
}
END_TEST

/* Compiling saxpy with config `var` set to `value` (CACHELEVEL=0, so
 * the compiler really runs) fails with TG_ECOMPILE and `msg`. */
static void saxpy_fails_with(const char *var, const char *value,
                             const char *msg)
{
	setenv(var, value, 1);
	setenv("CACHELEVEL", "0", 1);
	ck_assert_ptr_null(tg_program_new(vk(), "saxpy", saxpy_src));
	ck_assert_int_eq(tg_last_status(), TG_ECOMPILE);
	ck_assert_error(msg);
}

/* The compiler is a command ([vulkan] glslc): one that is not there is
 * named. */
START_TEST(missing_glslc_is_named)
{
	saxpy_fails_with("TG_VULKAN_GLSLC", "/nonexistent/glslc",
	                 "vulkan compile: cannot run /nonexistent/glslc: No "
	                 "such file or directory");
}
END_TEST

/* [vulkan] glslc_flags reach the command line: glslc names a flag it
 * does not know. */
START_TEST(glslc_flags_reach_glslc)
{
	saxpy_fails_with("TG_VULKAN_GLSLC_FLAGS", "-O --no-such-flag",
	                 "vulkan compile: glslc failed (exit 1)");
	ck_assert_error("--no-such-flag");
}
END_TEST

START_TEST(bad_geometry_and_values_are_errors)
{
	tg_program *p = program("ids", ids_src);
	tg_program *s = program("saxpy", saxpy_src);
	tg_buffer *b = tg_buffer_new(vk(), 8 * 200, TG_INT32);
	tg_launch_args args = { .bufs = &b, .nbufs = 1,
	                        .global = { 10, 6, 2 }, .local = { 4, 2, 1 } };
	int64_t big[2] = { 1, (int64_t)1 << 40 };
	tg_buffer *two[2] = { b, b };

	ck_assert_int_lt(tg_program_launch(p, &args, NULL), 0);
	ck_assert_error("not a multiple of local");
	ck_assert_error("(10,6,2)");
	ck_assert_error("(4,2,1)");
	args = (tg_launch_args){ .bufs = two, .nbufs = 2, .vals = big,
	                         .nvals = 2, .global = { 16, 1, 1 },
	                         .local = { 1, 1, 1 } };
	ck_assert_int_lt(tg_program_launch(s, &args, NULL), 0);
	ck_assert_error("does not fit int32");
	args.nbufs = 1;
	big[1] = 16;
	ck_assert_int_lt(tg_program_launch(s, &args, NULL), 0);
	ck_assert_error("1 buffers, the shader binds 2");
	tg_buffer_unref(b);
	tg_program_free(p);
	tg_program_free(s);
}
END_TEST

START_TEST(views_at_aligned_offsets)
{
	tg_program *p = program("incr", incr_src);
	tg_buffer *base = tg_buffer_new(vk(), 256, TG_INT32);
	tg_buffer *v = tg_buffer_view(base, 512, 16, TG_INT32);
	tg_buffer *bad = tg_buffer_view(base, 4, 16, TG_INT32);
	int64_t n = 16;
	tg_launch_args args = { .bufs = &v, .nbufs = 1, .vals = &n,
	                        .nvals = 1, .global = { 16, 1, 1 },
	                        .local = { 1, 1, 1 } };
	int32_t h[256] = { 0 };
	int i, rc;

	ck_assert_ptr_nonnull(v);
	ck_assert_ptr_nonnull(bad);
	for (i = 0; i < 256; i++)
		h[i] = i;
	ck_assert_int_eq(tg_buffer_copyin(base, h, sizeof h), 0);
	ck_assert_msg(tg_program_launch(p, &args, NULL) == 0, "%s",
	              tg_last_error());
	ck_assert_int_eq(tg_buffer_copyout(base, h, sizeof h), 0);
	for (i = 0; i < 256; i++)
		ck_assert_int_eq(h[i], i + (i >= 128 && i < 144));
	ck_assert_int_eq(tg_buffer_copyout(v, h, 64), 0);
	ck_assert_int_eq(h[0], 129);
	rc = tg_buffer_allocate(bad);
	if (rc != 0) {
		ck_assert_error("offset 4");
		ck_assert_error("minStorageBufferOffsetAlignment");
	}
	if (is_lavapipe())
		ck_assert_int_ne(rc, 0);
	tg_buffer_unref(bad), tg_buffer_unref(v), tg_buffer_unref(base);
	tg_program_free(p);
}
END_TEST

static void round_trip(size_t n)
{
	tg_buffer *b = tg_buffer_new(vk(), n, TG_UINT8);
	unsigned char *in = malloc(n), *out = malloc(n);
	size_t i;

	for (i = 0; i < n; i++)
		in[i] = (unsigned char)(i * 7 + 3);
	memset(out, 0, n);
	ck_assert_int_eq(tg_buffer_copyin(b, in, n), 0);
	ck_assert_int_eq(tg_buffer_copyout(b, out, n), 0);
	ck_assert_int_eq(memcmp(in, out, n), 0);
	free(in), free(out);
	tg_buffer_unref(b);
}

START_TEST(copies_of_odd_sizes_round_trip)
{
	round_trip(1);
	round_trip(3);
	round_trip(1001);
	round_trip(65537);
	setenv("TG_VULKAN_STAGING", "1", 1);
	tg_shutdown();
	round_trip(7);
	round_trip(100003);
}
END_TEST

START_TEST(missing_device_index_is_an_error)
{
	ck_assert_ptr_null(tg_dev_get("VULKAN:9"));
	ck_assert_error("VULKAN");
	ck_assert_error("9");
}
END_TEST

START_TEST(bad_device_config_is_an_error)
{
	setenv("TG_VULKAN_DEVICE", "first", 1);
	ck_assert_ptr_null(tg_dev_get("VULKAN"));
	ck_assert_int_eq(tg_last_status(), TG_ECONFIG);
	ck_assert_error("config: environment TG_VULKAN_DEVICE: [vulkan] "
	                "device: expected a device index from 0 to 63, got "
	                "'first'");
	tg_shutdown();
	setenv("TG_VULKAN_DEVICE", "63", 1);
	ck_assert_ptr_null(tg_dev_get("VULKAN"));
	ck_assert_error("[vulkan] device: expected a device index below ");
	tg_shutdown();
	unsetenv("TG_VULKAN_DEVICE");
	setenv("TG_VULKAN_STAGING", "sometimes", 1);
	ck_assert_ptr_null(tg_dev_get("VULKAN"));
	ck_assert_error("[vulkan] staging: expected yes or no (1/0, "
	                "true/false, on/off), got 'sometimes'");
	tg_shutdown();
	unsetenv("TG_VULKAN_STAGING");
	setenv("TG_VULKAN_DEVICE", "0", 1);
	ck_assert_ptr_nonnull(vk());
}
END_TEST

/* ------------------------------------------------------------------ */
/* Optional dtypes: run what the mask claims                           */
/* ------------------------------------------------------------------ */

#define TWO_BUFS(T) BUF(0, "", T) BUF(1, "readonly", T) \
	"void main() {\n" FLAT_ID "	if (tg_i >= 3u) return;\n"

static const char f16_src[] = "#version 450\n"
	"#extension GL_EXT_shader_explicit_arithmetic_types_float16 : "
	"require\n#extension GL_EXT_shader_16bit_storage : require\n"
	"layout(local_size_x_id = 0, local_size_y_id = 1, "
	"local_size_z_id = 2) in;\n" TWO_BUFS("float16_t")
	"	data_0[tg_i] = data_1[tg_i] * float16_t(2.0);\n}\n";

static const char i8_src[] = "#version 450\n"
	"#extension GL_EXT_shader_explicit_arithmetic_types_int8 : "
	"require\n#extension GL_EXT_shader_8bit_storage : require\n"
	"layout(local_size_x_id = 0, local_size_y_id = 1, "
	"local_size_z_id = 2) in;\n" TWO_BUFS("int8_t")
	"	data_0[tg_i] = data_1[tg_i] * int8_t(3) - int8_t(1);\n}\n";

static const char i64_src[] = "#version 450\n"
	"#extension GL_EXT_shader_explicit_arithmetic_types_int64 : "
	"require\n"
	"layout(local_size_x_id = 0, local_size_y_id = 1, "
	"local_size_z_id = 2) in;\n" TWO_BUFS("int64_t")
	"	data_0[tg_i] = data_1[tg_i] * 3000000000l;\n}\n";

static const char f64_src[] = HEAD TWO_BUFS("double")
	"	data_0[tg_i] = data_1[tg_i] / 3.0lf;\n}\n";

/* Runs `src` over 3 items of `size` bytes: out = f(in). */
static void run_dtype(const char *src, tg_dtype dt, const void *in,
                      void *out)
{
	tg_program *p = program("dt", src);
	tg_buffer *o = tg_buffer_new(vk(), 3, dt), *i = tg_buffer_new(vk(),
	                                                          3, dt);
	tg_buffer *bufs[2] = { o, i };
	tg_launch_args args = { .bufs = bufs, .nbufs = 2,
	                        .global = { 3, 1, 1 }, .local = { 1, 1, 1 } };
	size_t n = 3 * tg_dtype_size(dt);

	ck_assert_int_eq(tg_buffer_copyin(i, in, n), 0);
	ck_assert_msg(tg_program_launch(p, &args, NULL) == 0, "%s",
	              tg_last_error());
	ck_assert_int_eq(tg_buffer_copyout(o, out, n), 0);
	tg_buffer_unref(o), tg_buffer_unref(i);
	tg_program_free(p);
}

START_TEST(dtype_mask_matches_what_runs)
{
	tg_dev_info info;
	uint16_t h_in[3] = { 0x3e00, 0xb400, 0x0000 }, h_out[3]; /* 1.5... */
	int8_t b_in[3] = { -5, 7, 40 }, b_out[3];
	int64_t l_in[3] = { 1, -7, 5000000000ll }, l_out[3];
	double d_in[3] = { 1.0, -7.5, 1e300 }, d_out[3];
	int k;

	ck_assert_int_eq(tg_dev_get_info(vk(), &info), 0);
	if (is_lavapipe())
		ck_assert_uint_eq(info.dtype_mask, (1u << TG_NDTYPES) - 1);
	if (info.dtype_mask & (1u << TG_FLOAT16)) {
		run_dtype(f16_src, TG_FLOAT16, h_in, h_out);
		ck_assert_uint_eq(h_out[0], 0x4200); /* 3.0 */
		ck_assert_uint_eq(h_out[1], 0xb800); /* -0.5 */
		ck_assert_uint_eq(h_out[2], 0x0000);
	}
	if (info.dtype_mask & (1u << TG_INT8)) {
		run_dtype(i8_src, TG_INT8, b_in, b_out);
		for (k = 0; k < 3; k++)
			ck_assert_int_eq(b_out[k], (int8_t)(b_in[k] * 3 - 1));
	}
	if (info.dtype_mask & (1u << TG_INT64)) {
		run_dtype(i64_src, TG_INT64, l_in, l_out);
		for (k = 0; k < 3; k++)
			ck_assert(l_out[k] == (int64_t)((uint64_t)l_in[k] *
			                                3000000000ull));
	}
	if (info.dtype_mask & (1u << TG_FLOAT64)) {
		run_dtype(f64_src, TG_FLOAT64, d_in, d_out);
		for (k = 0; k < 3; k++)
			ck_assert(d_out[k] == d_in[k] / 3.0);
	}
}
END_TEST

/* GLSL has no float64 exp2, log2 or sin: codegen's rewrite rules
 * compute them (within 2 ulp of libm here). */
START_TEST(float64_transcendentals_compute)
{
	tg_dev_info info;
	enum { N = 512 };
	double x[N], g[N];
	int64_t n = N;
	int f, i;

	ck_assert_int_eq(tg_dev_get_info(vk(), &info), 0);
	if (!(info.dtype_mask & (1u << TG_FLOAT64)))
		return;
	for (i = 0; i < N; i++)
		x[i] = (i - N / 2) * 0.37 + 1e-3;
	x[0] = NAN, x[1] = INFINITY, x[2] = 0, x[3] = 1e-310;
	for (f = 0; f < 3; f++) {
		tg_tensor *t, *r;

		tg_scope_begin();
		t = tg_tensor_new(vk(), TG_FLOAT64, 1, &n, x);
		r = f == 0 ? tg_exp2(t) : f == 1 ? tg_log2(t) : tg_sin(t);
		ck_assert_msg(tg_tensor_data(r, g, sizeof g) == 0, "%s",
		              tg_last_error());
		for (i = 0; i < N; i++) {
			double w = f == 0 ? exp2(x[i]) : f == 1 ? log2(x[i])
			           : sin(x[i]);

			ck_assert_msg(tl_ulps(g[i], w, 1) <= 2, "%d(%.17g) = "
			              "%.17g, libm %.17g", f, x[i], g[i], w);
		}
		tg_scope_end();
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vulkan");
	TCase *tc = tcase_create("vulkan");

	if (tg_dev_get("VULKAN") == NULL) {
		int rc = tl_no_device("test_vulkan", "VULKAN",
		                      tg_last_error());
		tg_shutdown();
		return rc;
	}
	tg_shutdown();
	tcase_add_checked_fixture(tc, NULL, tg_shutdown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, info_describes_the_device);
	tcase_add_test(tc, float64_transcendentals_compute);
	tcase_add_test(tc, saxpy_needs_two_dimensional_groups);
	tcase_add_test(tc, saxpy_small_and_odd_sizes);
	tcase_add_test(tc, timed_launch_reports_elapsed_time);
	tcase_add_test(tc, staging_copies_work_too);
	tcase_add_test(tc, local_ids_and_group_ids_in_three_dimensions);
	tcase_add_test(tc, shared_memory_group_sums);
	tcase_add_test(tc, many_launches_batch_in_order);
	tcase_add_test(tc, compile_error_names_the_identifier);
	tcase_add_test(tc, missing_glslc_is_named);
	tcase_add_test(tc, glslc_flags_reach_glslc);
	tcase_add_test(tc, bad_geometry_and_values_are_errors);
	tcase_add_test(tc, views_at_aligned_offsets);
	tcase_add_test(tc, copies_of_odd_sizes_round_trip);
	tcase_add_test(tc, missing_device_index_is_an_error);
	tcase_add_test(tc, bad_device_config_is_an_error);
	tcase_add_test(tc, dtype_mask_matches_what_runs);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

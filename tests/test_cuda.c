/*
 * test_cuda.c - the CUDA plugin against a double of the driver and NVRTC
 * (tests/cudadouble), so that it is tested on machines without a GPU:
 * the probe's reasons (no driver, no devices, an old driver, a missing
 * entry, no NVRTC), the device it opens, an NVRTC error with its log,
 * the target architecture, launch geometry and its refusals, out of
 * memory after the core's cache flush and retry, driver errors named,
 * copies through pinned memory, and copies between two devices
 * (cuMemcpyPeer).  Nothing here aborts: every failure is a status and a message.
 *
 * The op suites run on a real GPU through tests/dev/cuda (one .dev file
 * per suite), which
 * skip with the probe's reason where no device opens.
 */
#include "config.h"

#include <dlfcn.h>

#include "testlib.h"
#include "../libtgcore/device/device.h"

static char double_path[1024];

/* The double's file: "cudadouble" or "cudamissing". */
static const char *double_file(const char *name)
{
	static char buf[1024];
	const char *top = getenv("TG_PLUGIN_BUILD_TREE");

	snprintf(buf, sizeof buf, "%s/tests/cudadouble/.libs/%s.so",
	         top ? top : ".", name);
	return buf;
}

/* The CPU and CUDA plugins, the CUDA one on `lib` (the double or a
 * path) and the double's NVRTC, failing as `modes` asks. */
static void use_cuda(const char *lib, const char *modes)
{
	char path[2048];
	const char *top = getenv("TG_PLUGIN_BUILD_TREE");

	snprintf(path, sizeof path, "%s:%s/plugins/cuda",
	         getenv("TG_PLUGIN_PATH"), top ? top : ".");
	tl_use_plugins(path);
	if (lib)
		setenv("TG_CUDA_LIBCUDA", lib, 1); /* before double_file again */
	snprintf(double_path, sizeof double_path, "%s",
	         double_file("cudadouble"));
	if (!lib)
		setenv("TG_CUDA_LIBCUDA", double_path, 1);
	setenv("TG_CUDA_NVRTC", double_path, 1);
	if (modes)
		setenv("TG_CUDA_DOUBLE", modes, 1);
	else
		unsetenv("TG_CUDA_DOUBLE");
}

/* The double's record of calls (the plugin's handle on it is ours). */
static const char *calls(void)
{
	void *h = dlopen(double_path, RTLD_NOW | RTLD_NOLOAD);
	const char *(*fn)(void);
	const char *log;

	ck_assert_msg(h != NULL, "the double is not loaded");
	*(void **)&fn = dlsym(h, "tgdouble_log");
	ck_assert_ptr_nonnull(fn);
	log = fn();
	dlclose(h);
	return log;
}

#define ck_assert_called(needle)                                            \
	ck_assert_msg(strstr(calls(), (needle)) != NULL,                    \
	              "the double's calls lack \"%s\":\n%s", (needle), calls())

/* The CUDA plugin's probe reason, from the plugin list. */
static const char *probe_reason(void)
{
	tg_plugin_info info;

	for (size_t i = 0; i < tg_plugin_count(); i++)
		if (tg_plugin_get(i, &info) == 0 && info.name &&
		    !strcmp(info.name, "CUDA")) {
			ck_assert_int_eq(info.ndevices, 0);
			return info.probe_reason;
		}
	ck_abort_msg("no CUDA plugin loaded");
	return NULL;
}

#define ck_assert_reason(needle)                                            \
	ck_assert_msg(strstr(probe_reason(), (needle)) != NULL,             \
	              "probe reason \"%s\" lacks \"%s\"", probe_reason(),   \
	              (needle))

/* ------------------------------------------------------------ probe */

START_TEST(probe_without_driver)
{
	use_cuda("/nonexistent/libcuda.so.1", NULL);
	ck_assert_reason("/nonexistent/libcuda.so.1 not found");
	setenv("CUDA", "1", 1);
	ck_assert_ptr_null(tg_dev_get(NULL));
	ck_assert_int_eq(tg_last_status(), TG_ENODEV);
	ck_assert_error("CUDA=1: plugin CUDA (");
	ck_assert_error("libcuda.so.1 not found");
	unsetenv("CUDA");
}
END_TEST

START_TEST(probe_no_devices)
{
	use_cuda(NULL, "nodev");
	ck_assert_reason("no CUDA devices (");
	ck_assert_reason("cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable "
	                 "device is detected)");
	use_cuda(NULL, "zero");
	ck_assert_reason("no CUDA devices (driver 12.4)");
	ck_assert_ptr_null(tg_dev_get("CUDA"));
}
END_TEST

START_TEST(probe_old_driver)
{
	use_cuda(NULL, "old");
	ck_assert_reason("the CUDA driver 10.2 (");
	ck_assert_reason(") is older than the 11.1 this plugin needs");
}
END_TEST

START_TEST(probe_missing_symbol)
{
	use_cuda(double_file("cudamissing"), NULL);
	ck_assert_reason("has no cuModuleGetFunction: the driver is too old "
	                 "or not NVIDIA's");
}
END_TEST

START_TEST(probe_without_nvrtc)
{
	use_cuda(NULL, NULL);
	setenv("TG_CUDA_NVRTC", "/nonexistent/libnvrtc.so", 1);
	ck_assert_reason("NVRTC /nonexistent/libnvrtc.so (the nvrtc setting) "
	                 "not found");
	ck_assert_ptr_null(tg_dev_get("CUDA"));
	ck_assert_error("/nonexistent/libnvrtc.so");
}
END_TEST

/* ------------------------------------------------------------- open */

START_TEST(opens_and_describes)
{
	tg_dev *dev;
	tg_dev_info info;
	void *keep;

	use_cuda(NULL, NULL);
	dev = tg_dev_get("cuda");
	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	ck_assert_str_eq(tg_dev_name(dev), "CUDA");
	ck_assert_ptr_nonnull(strstr(tg_dev_description(dev), "Double GPU | "
	                             "compute 8.6, 84 SMs | driver 12.4 | "
	                             "NVRTC 12.4"));
	ck_assert_int_eq(tg_dev_get_info(dev, &info), 0);
	ck_assert_str_eq(info.dialect, "cuda");
	ck_assert_called("cuDevicePrimaryCtxRetain(0)");
	ck_assert_ptr_null(tg_dev_get("CUDA:1"));
	ck_assert_error("plugin CUDA has 1 device");
	/* hold the double past the plugin's unload to read its calls */
	ck_assert_ptr_nonnull(keep = dlopen(double_path, RTLD_NOW));
	tg_shutdown();
	ck_assert_called("cuDevicePrimaryCtxRelease(0)");
	dlclose(keep);
}
END_TEST

/* ---------------------------------------------------------- compile */

static const char src[] =
	"extern \"C\" __global__ void k(float *a) { a[threadIdx.x] = 1; }\n";

START_TEST(compile_error_with_log)
{
	tg_dev *dev;

	use_cuda(NULL, "compile_error");
	setenv("CACHELEVEL", "0", 1);
	ck_assert_ptr_nonnull(dev = tg_dev_get("CUDA"));
	ck_assert_ptr_null(tg_program_new(dev, "k", src));
	ck_assert_int_eq(tg_last_status(), TG_ECOMPILE);
	ck_assert_error("cuda compile for sm_86: NVRTC_ERROR_COMPILATION");
	ck_assert_error("tgcore.cu(3): error: identifier \"tg_nothing\" is "
	                "undefined");
	unsetenv("CACHELEVEL");
}
END_TEST

/* Launches p with geometry g/l; its status. */
static int launch(tg_program *p, tg_buffer *b, size_t g0, size_t g1,
                  size_t l0, size_t l1)
{
	tg_launch_args a = { .bufs = &b, .nbufs = 1,
	                     .global = { g0, g1, 1 }, .local = { l0, l1, 1 } };

	return tg_program_launch(p, &a, NULL);
}

START_TEST(compiles_for_the_arch_and_launches)
{
	tg_dev *dev;
	tg_program *p;
	tg_buffer *b;
	double t = 0;
	tg_launch_args a = { .nbufs = 1, .global = { 4, 1, 1 },
	                     .local = { 1, 1, 1 } };

	use_cuda(NULL, NULL);
	setenv("CACHELEVEL", "0", 1);
	ck_assert_ptr_nonnull(dev = tg_dev_get("CUDA"));
	p = tg_program_new(dev, "k", src);
	ck_assert_msg(p != NULL, "%s", tg_last_error());
	ck_assert_called("nvrtcCompileProgram --gpu-architecture=sm_86");
	ck_assert_called("cuModuleLoadData(extern \"C\" __global__");
	ck_assert_called("cuModuleGetFunction(k)");
	ck_assert_ptr_nonnull(b = tg_buffer_new(dev, 1000, TG_FLOAT32));
	/* no work-groups: flat blocks of 128 threads */
	ck_assert_int_eq(launch(p, b, 1000, 1, 1, 1), 0);
	ck_assert_called("cuLaunchKernel(k, grid 8 1 1, block 128 1 1)");
	ck_assert_int_eq(launch(p, b, 64, 4, 16, 2), 0);
	ck_assert_called("cuLaunchKernel(k, grid 4 2 1, block 16 2 1)");
	/* refusals, before the driver sees them */
	ck_assert_int_eq(launch(p, b, 64, 32, 32, 16), TG_EINVAL);
	ck_assert_error("512 threads per block, this kernel runs at most 256");
	ck_assert_int_eq(launch(p, b, 60, 1, 16, 1), TG_EINVAL);
	ck_assert_error("global is not a multiple of local");
	ck_assert_int_eq(launch(p, b, (size_t)1 << 20, 70000 * 2, 1024, 2),
	                 TG_EINVAL);
	ck_assert_error("exceeds the block limit 1024 or the grid limit 65535");
	/* timed: between two events */
	a.bufs = &b;
	ck_assert_int_eq(tg_program_launch(p, &a, &t), 0);
	ck_assert(t > 0.0004 && t < 0.0006);
	tg_buffer_unref(b);
	tg_program_free(p);
	ck_assert_called("cuModuleUnload");
	unsetenv("CACHELEVEL");
}
END_TEST

/* ----------------------------------------------------------- errors */

START_TEST(out_of_memory_after_flush_and_retry)
{
	tg_dev *dev;
	tg_buffer *a, *b, *c;

	use_cuda(NULL, "oom=4096");
	ck_assert_ptr_nonnull(dev = tg_dev_get("CUDA"));
	ck_assert_ptr_nonnull(a = tg_buffer_new(dev, 750, TG_FLOAT32));
	ck_assert_int_eq(tg_buffer_allocate(a), 0);
	tg_buffer_unref(a); /* into the core's cache, not freed */
	ck_assert_ptr_nonnull(b = tg_buffer_new(dev, 500, TG_FLOAT32));
	ck_assert_msg(tg_buffer_allocate(b) == 0, "%s", tg_last_error());
	ck_assert_called("cuMemAlloc(3000)\ncuMemAlloc(2000) = "
	                 "CUDA_ERROR_OUT_OF_MEMORY\ncuMemFree(3000)\n"
	                 "cuMemAlloc(2000)\n");
	ck_assert_ptr_nonnull(c = tg_buffer_new(dev, 1250, TG_FLOAT32));
	ck_assert_int_eq(tg_buffer_allocate(c), TG_ENOMEM);
	ck_assert_error("cuMemAlloc of 5000 bytes on CUDA: "
	                "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
	tg_buffer_unref(c);
	tg_buffer_unref(b);
}
END_TEST

START_TEST(driver_errors_are_named)
{
	tg_dev *dev;
	tg_program *p;
	tg_buffer *b;

	use_cuda(NULL, "launch_fail,sync_fault");
	setenv("CACHELEVEL", "0", 1);
	ck_assert_ptr_nonnull(dev = tg_dev_get("CUDA"));
	ck_assert_ptr_nonnull(p = tg_program_new(dev, "k", src));
	ck_assert_ptr_nonnull(b = tg_buffer_new(dev, 16, TG_FLOAT32));
	ck_assert_int_eq(launch(p, b, 16, 1, 1, 1), TG_ERUNTIME);
	ck_assert_error("cuLaunchKernel(k, grid 1 x 1 x 1, block 128 x 1 x 1) on "
	                "CUDA: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many "
	                "resources requested for launch)");
	ck_assert_int_eq(tg_dev_synchronize(dev), TG_ERUNTIME);
	ck_assert_error("cuCtxSynchronize on CUDA: CUDA_ERROR_ILLEGAL_ADDRESS");
	tg_buffer_unref(b);
	tg_program_free(p);
	unsetenv("CACHELEVEL");
}
END_TEST

/* Bytes of each of the plugin's pinned chunks (CU_STAGE_CHUNK). */
#define CHUNK ((size_t)8 << 20)

/* n bytes into the device and back, whole and in part. */
static void round_trip(tg_dev *dev, size_t n)
{
	unsigned char *in = malloc(n), *out = malloc(n);
	tg_buffer *b = tg_buffer_new(dev, n, TG_UINT8);

	ck_assert(in && out && b);
	for (size_t i = 0; i < n; i++)
		in[i] = (unsigned char)(i * 131 + 7 + (i >> 20));  /* no 1 MiB period */
	memset(out, 0xEE, n);
	ck_assert_msg(tg_buffer_copyin(b, in, n) == 0, "%s", tg_last_error());
	ck_assert_msg(tg_buffer_copyout(b, out, n) == 0, "%s",
	              tg_last_error());
	ck_assert_msg(!memcmp(out, in, n), "%zu bytes changed on the way", n);
	memset(out, 0xEE, n);
	ck_assert_int_eq(tg_buffer_copyout(b, out, n / 2 + 1), 0);
	ck_assert(!memcmp(out, in, n / 2 + 1));
	ck_assert(n / 2 + 1 == n || out[n / 2 + 1] == 0xEE);
	tg_buffer_unref(b);
	free(in);
	free(out);
}

/* Copies go through two pinned chunks in turns.  The double runs async
 * copies late, as a copy engine does, so a chunk refilled before its
 * copy ran, or read before its copy landed, would change the data.
 * Where the driver refuses pinned memory the plain calls copy. */
START_TEST(copies_go_through_pinned_memory)
{
	size_t big = 2 * CHUNK + 3 * ((size_t)1 << 20) + 4;
	char out[6];
	tg_buffer *b;
	tg_dev *dev;

	use_cuda(NULL, NULL);
	ck_assert_ptr_nonnull(dev = tg_dev_get("CUDA"));
	round_trip(dev, big);
	round_trip(dev, 1);
	round_trip(dev, CHUNK);
	ck_assert_called("cuMemHostAlloc(8388608, 0)");
	ck_assert_called("cuMemcpyHtoDAsync(8388608)");
	ck_assert_called("cuMemcpyHtoDAsync(3145732)");
	ck_assert_called("cuMemcpyDtoHAsync(3145732)");
	ck_assert_called("cuMemcpyDtoHAsync(1)");
	ck_assert_ptr_null(strstr(calls(), "cuMemcpyHtoD("));
	tg_shutdown();

	use_cuda(NULL, "pinned_fail");
	ck_assert_ptr_nonnull(dev = tg_dev_get("CUDA"));
	round_trip(dev, big);
	ck_assert_called("cuMemcpyHtoD(19922948)");
	ck_assert_called("cuMemcpyDtoH(9961475)");
	ck_assert_ptr_null(strstr(calls(), "Async"));
	tg_shutdown();

	use_cuda(NULL, "async_fail");
	ck_assert_ptr_nonnull(dev = tg_dev_get("CUDA"));
	ck_assert_ptr_nonnull(b = tg_buffer_new(dev, 6, TG_UINT8));
	ck_assert_int_eq(tg_buffer_copyin(b, "abcdef", 6), TG_ERUNTIME);
	ck_assert_error("cuda: cuMemcpyHtoDAsync of 6 bytes in through "
	                "pinned memory on CUDA: CUDA_ERROR_ILLEGAL_ADDRESS");
	ck_assert_int_eq(tg_buffer_copyout(b, out, 6), TG_ERUNTIME);
	ck_assert_error("cuda: cuMemcpyDtoHAsync of 6 bytes out through "
	                "pinned memory on CUDA: CUDA_ERROR_ILLEGAL_ADDRESS");
	tg_buffer_unref(b);
}
END_TEST

/* A copy between two CUDA devices is one cuMemcpyPeer between their
 * contexts; its failure is an error naming the call and both devices. */
START_TEST(copies_between_devices_are_peer_copies)
{
	float v[6] = { 1, -2, 3.5f, 1e20f, -0.0f, 7 }, out[6];
	int64_t n = 6;
	tg_dev *d0, *d1;
	tg_tensor *a, *b;
	tg_counters k;

	use_cuda(NULL, "two");
	ck_assert_ptr_nonnull(d0 = tg_dev_get("CUDA"));
	ck_assert_msg((d1 = tg_dev_get("CUDA:1")) != NULL, "%s",
	              tg_last_error());
	tg_scope_begin();
	tl_copy_floats(d0, d1, v, n, &k);
	ck_assert_uint_eq(k.copies, 1);
	ck_assert_uint_eq(k.peer_copies, 1);
	ck_assert_called("cuMemcpyPeer(24 bytes, context 1 <- context 0)");
	tg_scope_end();
	tg_shutdown();

	use_cuda(NULL, "two,peer_fail");
	ck_assert_ptr_nonnull(d0 = tg_dev_get("CUDA"));
	ck_assert_ptr_nonnull(d1 = tg_dev_get("CUDA:1"));
	tg_scope_begin();
	a = tg_tensor_new(d1, TG_FLOAT32, 1, &n, v);
	ck_assert_ptr_nonnull(b = tg_to(a, d0));
	ck_assert_int_eq(tg_tensor_data(b, out, sizeof out), TG_ERUNTIME);
	ck_assert_error("buffer_transfer: 24 bytes CUDA:1 -> CUDA: cuda: "
	                "cuMemcpyPeer of 24 bytes from CUDA:1 on CUDA: "
	                "CUDA_ERROR_ILLEGAL_ADDRESS");
	tg_scope_end();
}
END_TEST

/* The JIT's replays as a CUDA graph: one kernel node per launch after
 * the one before, instantiated once; a replay sets only the nodes whose
 * buffers changed and launches the graph in one call; a failed
 * instantiation is an error naming the call. */
START_TEST(graphs_replay_and_update)
{
	tg_dev *dev;
	tg_program *p;
	tg_buffer *b[3];
	tg_graph *g;
	tg_launch_args a[2];
	tg_program *progs[2];
	char want[256];
	void *h[3];

	use_cuda(NULL, NULL);
	setenv("CACHELEVEL", "0", 1);
	ck_assert_ptr_nonnull(dev = tg_dev_get("CUDA"));
	ck_assert_ptr_nonnull(p = tg_program_new(dev, "k", src));
	for (int i = 0; i < 3; i++) {
		ck_assert_ptr_nonnull(b[i] = tg_buffer_new(dev, 64, TG_FLOAT32));
		ck_assert_int_eq(tg_buffer_handle(b[i], &h[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		progs[i] = p;
		a[i] = (tg_launch_args){ .bufs = &b[i], .nbufs = 1,
		                         .global = { 64, 1, 1 },
		                         .local = { 1, 1, 1 } };
	}
	g = tg_graph_new(progs, a, 2, 1);
	ck_assert_msg(g != NULL, "%s", tg_last_error());
	ck_assert_int_eq(tg_graph_native(g), 1);
	snprintf(want, sizeof want, "cuGraphCreate\ncuGraphAddKernelNode(k, "
	         "grid 1 1 1, block 128 1 1, after -1, buffer %llx)\n"
	         "cuGraphAddKernelNode(k, grid 1 1 1, block 128 1 1, after 0, "
	         "buffer %llx)\ncuGraphInstantiateWithFlags\n",
	         (unsigned long long)(uintptr_t)h[0],
	         (unsigned long long)(uintptr_t)h[1]);
	ck_assert_called(want);
	ck_assert_int_eq(tg_graph_run(g), 0);
	ck_assert_called("cuGraphInstantiateWithFlags\ncuGraphLaunch\n");
	ck_assert_int_eq(tg_graph_set_buffer(g, 1, 0, b[2]), 0);
	ck_assert_int_eq(tg_graph_run(g), 0);
	snprintf(want, sizeof want, "cuGraphLaunch\ncuGraphExecKernelNode"
	         "SetParams(node 1, buffer %llx)\ncuGraphLaunch\n",
	         (unsigned long long)(uintptr_t)h[2]);
	ck_assert_called(want);
	tg_graph_free(g);
	ck_assert_called("cuGraphExecDestroy\ncuGraphDestroy");
	setenv("TG_CUDA_DOUBLE", "graph_fail", 1);
	ck_assert_ptr_null(tg_graph_new(progs, a, 2, 1));
	ck_assert_error("cuGraphInstantiateWithFlags (2 kernels) on CUDA: "
	                "CUDA_ERROR_OUT_OF_MEMORY");
	for (int i = 0; i < 3; i++)
		tg_buffer_unref(b[i]);
	tg_program_free(p);
	unsetenv("CACHELEVEL");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cuda");
	TCase *tc = tcase_create("double");

	tcase_add_test(tc, probe_without_driver);
	tcase_add_test(tc, probe_no_devices);
	tcase_add_test(tc, probe_old_driver);
	tcase_add_test(tc, probe_missing_symbol);
	tcase_add_test(tc, probe_without_nvrtc);
	tcase_add_test(tc, opens_and_describes);
	tcase_add_test(tc, compile_error_with_log);
	tcase_add_test(tc, compiles_for_the_arch_and_launches);
	tcase_add_test(tc, out_of_memory_after_flush_and_retry);
	tcase_add_test(tc, driver_errors_are_named);
	tcase_add_test(tc, copies_between_devices_are_peer_copies);
	tcase_add_test(tc, copies_go_through_pinned_memory);
	tcase_add_test(tc, graphs_replay_and_update);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tl_run(suite());
}

/*
 * test_cpu.c - the CPU plugin end to end through the public API: C
 * kernels compiled by the system compiler, run on the thread pool, and
 * checked against plain C loops in double precision.
 */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include "testlib.h"
#include "../libtgcore/device/device.h"

#define HEADER "#include <stddef.h>\n#include <stdint.h>\n"

static const char saxpy_src[] = HEADER
	"void saxpy(void *const *b, const int64_t *v, const size_t *g,\n"
	"           size_t lo, size_t hi)\n"
	"{\n"
	"	float *y = b[0];\n"
	"	const float *x = b[1];\n"
	"	float a = (float)v[0] / 4.0f;\n"
	"	for (size_t i = lo; i < hi; i++)\n"
	"		y[i] = a * x[i] + y[i];\n"
	"	(void)g;\n"
	"}\n";

/* Writes each work-item's (gidx0, gidx1, gidx2) and counts visits. */
static const char ids_src[] = HEADER
	"void ids(void *const *b, const int64_t *v, const size_t *g,\n"
	"         size_t lo, size_t hi)\n"
	"{\n"
	"	int32_t *out = b[0];\n"
	"	for (size_t i = lo; i < hi; i++) {\n"
	"		size_t x = i % g[0], y = i / g[0] % g[1],\n"
	"		       z = i / (g[0] * g[1]);\n"
	"		out[4 * i] = (int32_t)x; out[4 * i + 1] = (int32_t)y;\n"
	"		out[4 * i + 2] = (int32_t)z; out[4 * i + 3] += 1;\n"
	"	}\n"
	"	(void)v;\n"
	"}\n";

static tg_dev *cpu(void)
{
	tg_dev *dev = tg_dev_get("CPU");

	ck_assert_msg(dev != NULL, "%s", tg_last_error());
	return dev;
}

static void run_saxpy(size_t n)
{
	int64_t a = 10;  /* a = 2.5 */
	tg_launch_args args = { .vals = &a, .nvals = 1, .global = { n, 1, 1 },
	                        .local = { 1, 1, 1 } };

	tl_check_saxpy(cpu(), tg_program_new(cpu(), "saxpy", saxpy_src), n,
	               args, 0);
}

START_TEST(saxpy_matches_a_c_loop)
{
	run_saxpy(1000003);
}
END_TEST

START_TEST(one_item_and_odd_sizes)
{
	run_saxpy(1);
	run_saxpy(3);
	run_saxpy(4097);
}
END_TEST

START_TEST(single_thread_configuration)
{
	setenv("TG_CPU_THREADS", "1", 1);
	run_saxpy(1001);
}
END_TEST

START_TEST(more_threads_than_cores)
{
	setenv("TG_CPU_THREADS", "7", 1);
	run_saxpy(13);
	run_saxpy(100003);
}
END_TEST

START_TEST(three_dimensional_global_visits_each_item_once)
{
	enum { X = 7, Y = 5, Z = 3, N = X * Y * Z };
	tg_dev *dev = cpu();
	tg_program *p = tg_program_new(dev, "ids", ids_src);
	tg_buffer *b = tg_buffer_new(dev, 4 * N, TG_INT32);
	int32_t *out = calloc(4 * N, 4);
	tg_launch_args args = { .bufs = &b, .nbufs = 1,
	                        .global = { X, Y, Z },
	                        .local = { 1, 1, 1 } };
	double t = -1;
	int x, y, z;

	ck_assert_msg(p != NULL, "%s", tg_last_error());
	ck_assert_int_eq(tg_buffer_copyin(b, out, 16 * N), 0);
	ck_assert_int_eq(tg_program_launch(p, &args, &t), 0);
	ck_assert(t >= 0.0);
	ck_assert_int_eq(tg_buffer_copyout(b, out, 16 * N), 0);
	for (z = 0; z < Z; z++)
		for (y = 0; y < Y; y++)
			for (x = 0; x < X; x++) {
				int32_t *o = out + 4 * (x + X * (y + Y * z));

				ck_assert_int_eq(o[0], x);
				ck_assert_int_eq(o[1], y);
				ck_assert_int_eq(o[2], z);
				ck_assert_int_eq(o[3], 1);
			}
	free(out);
	tg_buffer_unref(b);
	tg_program_free(p);
}
END_TEST

START_TEST(compile_error_returns_the_compilers_message)
{
	ck_assert_ptr_null(tg_program_new(cpu(), "bad",
	                                  "void bad(void) { syntax error }"));
	ck_assert_int_eq(tg_last_status(), TG_ECOMPILE);
	ck_assert_error("program_new 'bad' on CPU: ");
	ck_assert_error("error");
	ck_assert_error("syntax");
}
END_TEST

START_TEST(missing_compiler_is_an_error)
{
	setenv("TG_CPU_CC", "/nonexistent/cc", 1);
	ck_assert_ptr_null(tg_program_new(cpu(), "f", "void f(void) {}"));
	ck_assert_int_eq(tg_last_status(), TG_ECOMPILE);
	ck_assert_error("/nonexistent/cc");
}
END_TEST

/* A compiler that hangs is killed after [cpu] compile_timeout seconds
 * (its process group: the shell and its sleep) and the compile fails
 * with a message, in about that time. */
START_TEST(hung_compiler_times_out)
{
	const char *cc = tl_write_file("hang-cc.sh",
		"#!/bin/sh\n"
		"case \"$1\" in --version) echo 'hang-cc 1.0'; exit 0;; esac\n"
		"sleep 60\n");
	double t0;
	struct timespec ts;

	ck_assert_int_eq(chmod(cc, 0755), 0);
	setenv("TG_CPU_CC", cc, 1);
	setenv("TG_CPU_COMPILE_TIMEOUT", "1", 1);
	setenv("CACHELEVEL", "0", 1);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
	ck_assert_ptr_null(tg_program_new(cpu(), "f", "void f(void) {}"));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ck_assert_double_lt((double)ts.tv_sec + ts.tv_nsec * 1e-9 - t0, 20);
	ck_assert_int_eq(tg_last_status(), TG_ECOMPILE);
	ck_assert_error("did not finish within 1 s ([cpu] compile_timeout); "
	                "killed");
}
END_TEST

START_TEST(bad_compile_timeout_is_a_config_error)
{
	setenv("TG_CPU_COMPILE_TIMEOUT", "soon", 1);
	ck_assert_ptr_null(tg_dev_get("CPU"));
	ck_assert_int_eq(tg_last_status(), TG_ECONFIG);
	ck_assert_error("config: environment TG_CPU_COMPILE_TIMEOUT: [cpu] "
	                "compile_timeout: expected seconds from 0 (no limit) "
	                "to 1000000, got 'soon'");
}
END_TEST

START_TEST(missing_function_is_an_error)
{
	ck_assert_ptr_null(tg_program_new(cpu(), "nosuch",
	                                  "void other(void) {}"));
	ck_assert_error("program_new 'nosuch' on CPU: ");
	ck_assert_error("nosuch");
}
END_TEST

START_TEST(bad_thread_count_is_a_config_error)
{
	setenv("TG_CPU_THREADS", "many", 1);
	ck_assert_ptr_null(tg_dev_get("CPU"));
	ck_assert_int_eq(tg_last_status(), TG_ECONFIG);
	ck_assert_error("'CPU': plugin CPU (");
	ck_assert_error("): config: environment TG_CPU_THREADS: [cpu] "
	                "threads: expected an integer from 0 (one per core) "
	                "to 4096, got 'many'");
}
END_TEST

/* Every value that is not a count in range is refused, and the message
 * shows it escaped: a control or non-UTF-8 byte as \xNN, UTF-8 as it
 * is. */
START_TEST(thread_counts_out_of_range_are_config_errors)
{
	static const char *const bad[][2] = {
		{ "-5", "'-5'" }, { "100000", "'100000'" }, { "", NULL },
		{ "4097", "'4097'" }, { "1.5", "'1.5'" }, { "0x10", "'0x10'" },
		{ "\xff\xfe", "'\\xFF\\xFE'" },
		{ "4\n", "'4\\n'" }, { "d\xc3\xa9j\xc3", "'d\xc3\xa9j\\xC3'" },
	};

	for (size_t i = 0; i < TG_ARRAY_LEN(bad); i++) {
		tg_shutdown();
		setenv("TG_CPU_THREADS", bad[i][0], 1);
		if (!bad[i][1]) {  /* empty: one per core */
			ck_assert_ptr_nonnull(tg_dev_get("CPU"));
			continue;
		}
		ck_assert_ptr_null(tg_dev_get("CPU"));
		ck_assert_int_eq(tg_last_status(), TG_ECONFIG);
		ck_assert_error(bad[i][1]);
	}
}
END_TEST

START_TEST(bad_vector_width_is_a_config_error)
{
	ck_assert_int_eq(tg_config_set("cpu.vector_width", "12"), 0);
	ck_assert_ptr_null(tg_dev_get("CPU"));
	ck_assert_int_eq(tg_last_status(), TG_ECONFIG);
	ck_assert_error("config: tg_config_set(): [cpu] vector_width: "
	                "expected 0 (the CPU's, ");
	ck_assert_error("), 4, 8 or 16, got '12'");
}
END_TEST

/* [cpu] devices = 2: CPU and CPU:1, each computing, with copies
 * between them made by the plugin (a memcpy), never through a host
 * buffer of the core's. */
START_TEST(several_cpu_devices)
{
	enum { N = 1000 };
	int64_t n = N;
	float v[N], out[N];
	tg_dev *c0, *c1;
	tg_tensor *x, *y;
	tg_counters k;

	setenv("TG_CPU_DEVICES", "2", 1);
	c0 = cpu();
	c1 = tg_dev_get("cpu:1");
	ck_assert_msg(c1 != NULL, "%s", tg_last_error());
	ck_assert_str_eq(tg_dev_name(c1), "CPU:1");
	ck_assert_ptr_ne(c0, c1);
	for (int i = 0; i < N; i++)
		v[i] = (float)i * 0.25f - 100;
	tg_scope_begin();
	x = tg_tensor_new(c0, TG_FLOAT32, 1, &n, v);
	/* squared on CPU, moved, plus one on CPU:1, moved back */
	y = tg_to(tg_add(tg_to(tg_mul(x, x), c1),
	                 tg_full(c1, TG_FLOAT32, 1, &n, 1)), c0);
	tg_counters_reset();
	ck_assert_msg(tg_tensor_data(y, out, sizeof out) == 0, "%s",
	              tg_last_error());
	tg_counters_get(&k);
	for (int i = 0; i < N; i++)
		ck_assert_float_eq(out[i], (float)((double)v[i] * v[i] + 1));
	ck_assert_uint_eq(k.kernels, 2);
	ck_assert_uint_eq(k.copies, 2);
	ck_assert_uint_eq(k.peer_copies, 2);
	tg_scope_end();
	ck_assert_ptr_null(tg_dev_get("CPU:2"));
	ck_assert_error("plugin CPU has 2 devices (CPU:0 to CPU:1)");
}
END_TEST

START_TEST(bad_device_count_makes_the_plugin_unusable)
{
	setenv("TG_CPU_DEVICES", "0", 1);
	ck_assert_ptr_null(tg_dev_get("CPU"));
	ck_assert_int_eq(tg_last_status(), TG_ECONFIG);
	ck_assert_error("config: environment TG_CPU_DEVICES: [cpu] devices: "
	                "expected an integer from 1 to 64, got '0'");
}
END_TEST

/* A kernel with `body` run once over n items: "k" with buffer 0. */
static tg_program *kernel(const char *body)
{
	char src[1024];
	tg_program *p;

	snprintf(src, sizeof src, HEADER
	         "void k(void *const *b, const int64_t *v, const size_t *g,\n"
	         "       size_t lo, size_t hi)\n"
	         "{\n"
	         "	float *out = b[0];\n"
	         "	(void)v; (void)g;\n"
	         "	%s\n"
	         "	for (size_t i = lo; i < hi; i++) out[i] = 1.0f;\n"
	         "}\n", body);
	p = tg_program_new(cpu(), "k", src);
	ck_assert_msg(p != NULL, "%s", tg_last_error());
	return p;
}

static int trial(tg_program *p, tg_buffer *b, double limit)
{
	tg_launch_args a = { .bufs = &b, .nbufs = 1, .global = { 64, 1, 1 },
	                     .local = { 1, 1, 1 } };

	return tg_program_trial(p, &a, limit);
}

/* A trial run (runtime.trial) runs the kernel in a child process: the
 * process survives a fault and a hang, each reported with what it was;
 * a kernel that returns passes, with an ignored SIGCHLD too (waitpid
 * cannot see the child then). */
START_TEST(trial_runs_contain_faults_and_hangs)
{
	tg_program *ok = kernel(""), *fault = kernel(
		"*(volatile int *)0 = 1;"), *hang = kernel(
		"for (volatile int h = 1; h;) ;"), *trap = kernel(
		"__builtin_trap();");
	tg_buffer *b = tg_buffer_new(cpu(), 64, TG_FLOAT32);
	void (*old)(int);

	ck_assert(tg_program_has_trial(ok));
	ck_assert_int_eq(trial(ok, b, 10), 0);
	ck_assert_int_eq(trial(fault, b, 10), TG_ERUNTIME);
	ck_assert_error("program_trial 'k' on CPU: cpu trial: the kernel "
	                "crashed (SIGSEGV)");
	ck_assert_int_eq(trial(trap, b, 10), TG_ERUNTIME);
	ck_assert_error("the kernel crashed (SIGILL)");
	ck_assert_int_eq(trial(hang, b, 0.2), TG_ETIMEOUT);
	ck_assert_error("program_trial 'k' on CPU: cpu trial: the kernel "
	                "ran past its limit of 0.2 s and was stopped");
	ck_assert_int_eq(trial(ok, b, 0), TG_EINVAL);
	ck_assert_error("program_trial 'k' on CPU: timeout 0 s, want > 0");
	old = signal(SIGCHLD, SIG_IGN);
	ck_assert_int_eq(trial(ok, b, 10), 0);
	ck_assert_int_eq(trial(fault, b, 10), TG_ERUNTIME);
	ck_assert_error("the child process ended before the kernel "
	                "returned, and waitpid cannot say why");
	signal(SIGCHLD, old);
	/* the process and its pool still work */
	run_saxpy(1000);
	tg_program_free(ok);
	tg_program_free(fault);
	tg_program_free(hang);
	tg_program_free(trap);
	tg_buffer_unref(b);
}
END_TEST

START_TEST(huge_allocation_fails_cleanly)
{
	tg_buffer *b = tg_buffer_new(cpu(), (size_t)1 << 60, TG_UINT8);

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(tg_buffer_allocate(b), TG_ENOMEM);
	ck_assert_error("buffer_allocate: 1152921504606846976 bytes on CPU");
	tg_buffer_unref(b);
}
END_TEST

/* The VmFlags of the mapping that holds p (/proc/self/smaps) into
 * flags; 0 when found. */
static int vm_flags(const void *p, char *flags, size_t n)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, rc = -1;

	ck_assert_ptr_nonnull(f);
	while (rc && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(flags, n, "%s", line + 8);
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

/* Whether the kernel lets a program ask for transparent huge pages. */
static int thp_on_request(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char mode[128] = "";

	if (f) {
		if (!fgets(mode, sizeof mode, f))
			mode[0] = 0;
		fclose(f);
	}
	return strstr(mode, "[madvise]") || strstr(mode, "[always]");
}

/* A buffer of 4 MiB or more starts on a 2 MiB boundary and asks for
 * transparent huge pages (its mapping's VmFlags has "hg") where the
 * kernel takes the request; a small one is only 64-byte aligned. */
START_TEST(big_buffers_ask_for_huge_pages)
{
	tg_buffer *big = tg_buffer_new(cpu(), (size_t)8 << 20, TG_UINT8),
	          *small = tg_buffer_new(cpu(), 1000, TG_UINT8);
	void *pb = NULL, *ps = NULL;
	char flags[512];

	ck_assert_int_eq(tg_buffer_allocate(big), 0);
	ck_assert_int_eq(tg_buffer_allocate(small), 0);
	ck_assert_int_eq(tg_buffer_handle(big, &pb), 0);
	ck_assert_int_eq(tg_buffer_handle(small, &ps), 0);
	ck_assert_uint_eq((uintptr_t)pb % ((uintptr_t)2 << 20), 0);
	ck_assert_uint_eq((uintptr_t)ps % 64, 0);
	if (thp_on_request()) {
		ck_assert_int_eq(vm_flags(pb, flags, sizeof flags), 0);
		ck_assert_msg(strstr(flags, " hg") != NULL, "VmFlags:%s", flags);
	}
	tg_buffer_unref(big);
	tg_buffer_unref(small);
}
END_TEST

/* Compiles saxpy with stderr captured; returns what DEBUG=3 logged. */
static char *compile_logged(void)
{
	const char *path = tl_write_file("stderr.txt", "");
	int saved = dup(2), fd = open(path, O_WRONLY | O_TRUNC);
	static char text[8192];
	tg_program *p;
	size_t n;
	FILE *f;

	ck_assert_int_ge(fd, 0);
	dup2(fd, 2);
	p = tg_program_new(cpu(), "saxpy", saxpy_src);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	ck_assert_msg(p != NULL, "%s", tg_last_error());
	tg_program_free(p);
	f = fopen(path, "r");
	n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

START_TEST(second_compile_comes_from_the_disk_cache)
{
	char db[512];

	snprintf(db, sizeof db, "%s/%d-cpu.db", getenv("TG_TEST_TMP"),
	         (int)getpid());
	unlink(db);
	setenv("CACHEDB", db, 1);
	setenv("DEBUG", "3", 1);
	ck_assert_ptr_nonnull(strstr(compile_logged(), "cache compile: miss"));
	tg_shutdown();  /* a new process would see the same */
	ck_assert_ptr_nonnull(strstr(compile_logged(), "cache compile: hit"));
	setenv("CACHELEVEL", "0", 1);
	ck_assert_ptr_null(strstr(compile_logged(), "cache compile"));
}
END_TEST

/* Counts release calls. */
static void count_release(void *ctx)
{
	(*(int *)ctx)++;
}

/* A tensor over the caller's array: ops read it without a copy, writes
 * land in it, and release comes once, after the last reference. */
START_TEST(tensor_over_callers_host_memory)
{
	static _Alignas(64) float mem[12];
	int64_t s[2] = { 3, 4 };
	int released = 0, i;
	float got[12];
	tg_buffer *b;
	tg_tensor *x, *y;
	void *h;

	for (i = 0; i < 12; i++)
		mem[i] = (float)i;
	tg_scope_begin();
	b = tg_buffer_from_host(cpu(), TG_FLOAT32, 12, mem, count_release,
	                        &released);
	ck_assert_msg(b != NULL, "%s", tg_last_error());
	ck_assert_int_eq(tg_buffer_native(b, &h), 0);
	ck_assert_ptr_eq(h, mem);
	x = tg_tensor_from_buffer(b, 2, s);
	ck_assert_ptr_nonnull(x);
	tg_buffer_unref(b);
	/* the caller changes its memory: the tensor reads the new value */
	mem[5] = 50;
	y = tg_mul_s(x, 2);
	ck_assert_int_eq(tg_tensor_data(y, got, sizeof got), 0);
	for (i = 0; i < 12; i++)
		ck_assert_float_eq(got[i], i == 5 ? 100 : 2 * i);
	/* the core writes it: x += 1 goes into mem */
	ck_assert_int_eq(tg_assign(x, tg_add_s(x, 1)), 0);
	ck_assert_int_eq(tg_realize(x), 0);
	ck_assert_float_eq(mem[0], 1);
	ck_assert_float_eq(mem[5], 51);
	ck_assert_int_eq(tg_setitem_s(x, 1, (tg_index_spec[]){ TG_IX_INT(2) },
	                              -1), 0);
	ck_assert_float_eq(mem[8], -1);
	ck_assert_float_eq(mem[11], -1);
	ck_assert_int_eq(released, 0);
	tg_scope_end();
	/* the scope held the last references */
	ck_assert_int_eq(released, 1);
	(void)y;
}
END_TEST

/* A realized tensor's buffer goes to a hand-written kernel and back,
 * with no host copy in between; a native handle from elsewhere (here
 * another buffer's) wraps as a buffer of its own. */
START_TEST(tensor_buffers_meet_handwritten_kernels)
{
	int64_t a = 8; /* a = 2 */
	tg_dev *dev = cpu();
	tg_program *p = tg_program_new(dev, "saxpy", saxpy_src);
	int64_t n = 1000;
	tg_tensor *y, *x, *z, *w;
	tg_buffer *bufs[2], *again;
	float got[1000];
	void *h;
	int i;

	ck_assert_msg(p != NULL, "%s", tg_last_error());
	tg_scope_begin();
	y = tg_contiguous(tg_arange(dev, TG_FLOAT32, 0, 1000, 1));
	x = tg_full(dev, TG_FLOAT32, 1, &n, 0.5);
	ck_assert_ptr_null(tg_tensor_buffer(x));
	ck_assert_error("tensor_buffer: (1000,) is not memory of its own in "
	                "order (a view, or a constant)");
	x = tg_contiguous(x);
	bufs[0] = tg_tensor_buffer(y);
	bufs[1] = tg_tensor_buffer(x);
	ck_assert_ptr_nonnull(bufs[0]);
	ck_assert_ptr_nonnull(bufs[1]);
	{
		tg_launch_args args = { .bufs = bufs, .nbufs = 2, .vals = &a,
		                        .nvals = 1, .global = { 1000, 1, 1 },
		                        .local = { 1, 1, 1 } };

		ck_assert_int_eq(tg_program_launch(p, &args, NULL), 0);
	}
	/* y = 2 * 0.5 + y, seen by tensor ops on y */
	z = tg_sub_s(y, 1);
	ck_assert_int_eq(tg_tensor_data(z, got, sizeof got), 0);
	for (i = 0; i < 1000; i++)
		ck_assert_float_eq(got[i], (float)i);
	ck_assert_int_eq(tg_buffer_native(bufs[0], &h), 0);
	again = tg_buffer_from_native(dev, TG_FLOAT32, 1000, h, NULL, NULL);
	ck_assert_ptr_nonnull(again);
	w = tg_tensor_from_buffer(again, 2, (int64_t[]){ 10, 100 });
	ck_assert_int_eq(tg_tensor_data(w, got, sizeof got), 0);
	ck_assert_float_eq(got[999], 1000);
	tg_buffer_unref(again);
	tg_buffer_unref(bufs[0]);
	tg_buffer_unref(bufs[1]);
	tg_scope_end();
	tg_program_free(p);
}
END_TEST

START_TEST(caller_memory_errors)
{
	static _Alignas(64) float mem[16];
	int released = 0;
	tg_buffer *b, *v;

	ck_assert_ptr_null(tg_buffer_from_host(cpu(), TG_FLOAT32, 4, mem + 1,
	                                       count_release, &released));
	ck_assert_error("buffer_from_host: 16 bytes at");
	ck_assert_error("cpu wrap: memory at");
	ck_assert_error("is not aligned to 64 bytes");
	ck_assert_ptr_null(tg_buffer_from_host(cpu(), TG_FLOAT32, 4, NULL,
	                                       NULL, NULL));
	ck_assert_error("buffer_from_host: NULL memory with 4 elements");
	ck_assert_ptr_null(tg_buffer_from_host(cpu(), TG_FLOAT32, 0, mem,
	                                       NULL, NULL));
	ck_assert_error("buffer_from_host: the memory with 0 elements");
	ck_assert_int_eq(released, 0);
	b = tg_buffer_from_host(cpu(), TG_FLOAT32, 16, mem, count_release,
	                        &released);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_null(tg_tensor_from_buffer(b, 1, (int64_t[]){ 15 }));
	ck_assert_error("from_buffer: shape of 15 elements over a buffer of 16");
	ck_assert_ptr_null(tg_tensor_from_buffer(b, 2, (int64_t[]){ -4, -4 }));
	ck_assert_error("tensor_from_buffer: size -4 on axis 0");
	ck_assert_ptr_null(tg_tensor_from_buffer(b, 1, NULL));
	ck_assert_error("tensor_from_buffer: 1 dims, NULL shape");
	v = tg_buffer_view(b, 16, 4, TG_FLOAT32);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(tg_buffer_is_view(v), 1);
	ck_assert_int_eq(tg_buffer_is_view(b), 0);
	ck_assert_ptr_null(tg_tensor_from_buffer(v, 1, (int64_t[]){ 4 }));
	ck_assert_error("tensor_from_buffer: the buffer is a view into another");
	tg_buffer_unref(v);
	ck_assert_ptr_null(tg_tensor_from_buffer(NULL, 0, NULL));
	ck_assert_error("tensor_from_buffer: buffer is NULL");
	ck_assert_int_ne(tg_buffer_native(NULL, (void **)&v), 0);
	ck_assert_error("buffer_native: NULL buffer");
	ck_assert_int_eq(released, 0);
	tg_buffer_unref(b);
	ck_assert_int_eq(released, 1);
}
END_TEST

START_TEST(buffer_views_on_the_cpu)
{
	tg_dev *dev = cpu();
	tg_buffer *base = tg_buffer_new(dev, 8, TG_FLOAT32);
	tg_buffer *v;
	float in[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, out[2];

	ck_assert_int_eq(tg_buffer_copyin(base, in, sizeof in), 0);
	v = tg_buffer_view(base, 12, 2, TG_FLOAT32);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(tg_buffer_copyout(v, out, sizeof out), 0);
	ck_assert_float_eq(out[0], 3.0f);
	ck_assert_float_eq(out[1], 4.0f);
	tg_buffer_unref(v);
	tg_buffer_unref(base);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpu");
	TCase *tc = tcase_create("cpu");

	tcase_add_checked_fixture(tc, NULL, tg_shutdown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, saxpy_matches_a_c_loop);
	tcase_add_test(tc, one_item_and_odd_sizes);
	tcase_add_test(tc, single_thread_configuration);
	tcase_add_test(tc, more_threads_than_cores);
	tcase_add_test(tc, three_dimensional_global_visits_each_item_once);
	tcase_add_test(tc, compile_error_returns_the_compilers_message);
	tcase_add_test(tc, missing_compiler_is_an_error);
	tcase_add_test(tc, missing_function_is_an_error);
	tcase_add_test(tc, hung_compiler_times_out);
	tcase_add_test(tc, bad_compile_timeout_is_a_config_error);
	tcase_add_test(tc, bad_thread_count_is_a_config_error);
	tcase_add_test(tc, thread_counts_out_of_range_are_config_errors);
	tcase_add_test(tc, bad_vector_width_is_a_config_error);
	tcase_add_test(tc, several_cpu_devices);
	tcase_add_test(tc, bad_device_count_makes_the_plugin_unusable);
	tcase_add_test(tc, huge_allocation_fails_cleanly);
	tcase_add_test(tc, big_buffers_ask_for_huge_pages);
	tcase_add_test(tc, second_compile_comes_from_the_disk_cache);
	tcase_add_test(tc, buffer_views_on_the_cpu);
	tcase_add_test(tc, tensor_over_callers_host_memory);
	tcase_add_test(tc, tensor_buffers_meet_handwritten_kernels);
	tcase_add_test(tc, caller_memory_errors);
	tcase_add_test(tc, trial_runs_contain_faults_and_hangs);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

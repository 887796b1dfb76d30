/*
 * bench_tensor.c - how fast tensors run on the default device, next to
 * numpy on the same machine.
 *
 * Times the steady state (the kernels already compiled, the inputs
 * already realized) of:
 *   - matmul, float32, N = 256, 512, 1024, 2048: GFLOP/s (2*N^3 flops);
 *   - the same matmuls with BEAM=2 (the first run searches, which takes
 *     a while; the result is cached on disk, so later runs do not);
 *   - a*b+c on 16M float32 elements: GB/s (3 reads and 1 write of 4
 *     bytes per element), checking that it ran as one fused kernel,
 *     next to a STREAM-style triad (a[i] = b[i] + s*c[i], 3 arrays of
 *     16M floats, one thread per core, 12 bytes per element) that the
 *     benchmark runs itself in C: the memory bandwidth there is;
 *   - a tiny op (x+1 on 16 elements) built, scheduled and run: the
 *     framework's overhead per op, in microseconds;
 *   - on a GPU (unless --quick): an fp16 matmul at N=4096 summed in
 *     float (TFLOP/s, default opts and BEAM=2) and a*b+c on 256M
 *     floats; on a CUDA device also the anchors of bench_cuda.c (cuBLAS
 *     fp32, TF32 and fp16 at N=4096, a hand-written a*b+c).
 * Every figure is checked against the host before it is printed.  When
 * python3 can import numpy, the same three things are timed with numpy
 * and printed beside: the better of OpenBLAS as it detects the CPU and
 * OpenBLAS told the host's vector unit (OPENBLAS_CORETYPE), since an
 * OpenBLAS older than the CPU runs generic kernels.
 *
 * Usage: bench_tensor [--quick] [--big] [--no-numpy] [--device NAME]...
 *                     [--all] [-h]
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tg/tg.h>

#include "bench.h"

#define FUSED_N (16 * 1024 * 1024)
#define TINY_N 16
#define MAX_SIZES 4

static const int64_t all_sizes[MAX_SIZES] = { 256, 512, 1024, 2048 };

/* What one run measures; its figures, or < 0 when not measured. */
struct figures {
	size_t nsizes;
	double matmul[MAX_SIZES];  /* GFLOP/s */
	double beam[MAX_SIZES];    /* GFLOP/s with BEAM=2 */
	double fused;              /* GB/s */
	double tiny;               /* microseconds per op */
	struct jit_figures jit;
	double mm16, mm16_beam;    /* GPU: fp16 matmul N=4096, TFLOP/s */
	double fused_big;          /* GPU: a*b+c on BIG_N floats, GB/s */
	struct cuda_anchors cuda;
};

#define MM16_N 4096
#define BIG_N ((int64_t)256 * 1024 * 1024)


/* Prints the library's error for `what` and returns -1. */
static int fail(const char *what)
{
	fflush(stdout);
	fprintf(stderr, "bench_tensor: %s: %s\n", what, tg_last_error());
	return -1;
}

/* Element i of input `seed`: a hash of both, in [-1, 1), exact in
 * float32 (24 bits), so the checks can recompute any input. */
static float val(uint32_t seed, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^
	             ((uint64_t)seed + 1) * 0xBF58476D1CE4E5B9ull;

	x ^= x >> 31;
	x *= 0x94D049BB133111EBull;
	x ^= x >> 29;
	return (float)((double)(x >> 40) / (double)(1 << 23) - 1.0);
}

/* A realized float32 tensor of `shape` holding val(seed, i), or of
 * float16 holding them rounded (input_dt).  New reference, or NULL
 * after printing why. */
/* The device being measured. */
static tg_dev *bench_dev;

static tg_dtype in_dt = TG_FLOAT32;  /* what input() makes */

static tg_tensor *input(size_t ndim, const int64_t *shape, uint32_t seed)
{
	size_t n = 1, i;
	float *host;
	tg_tensor *t;

	for (i = 0; i < ndim; i++)
		n *= (size_t)shape[i];
	if (!(host = malloc(n * sizeof *host))) {
		fprintf(stderr, "bench_tensor: out of memory for %zu floats\n",
		        n);
		return NULL;
	}
	for (i = 0; i < n; i++)
		host[i] = val(seed, i);
	t = tg_tensor_new(bench_dev, TG_FLOAT32, ndim, shape, host);
	free(host);
	if (t && in_dt != TG_FLOAT32) {
		tg_tensor *c = tg_cast(t, in_dt);
		tg_tensor_unref(t);
		t = c;
	}
	if (!t || tg_realize(t)) {
		fail("input");
		tg_tensor_unref(t);
		return NULL;
	}
	return t;
}

/* The values of t (numel floats), malloc'd; NULL after printing why. */
static float *fetch(tg_tensor *t)
{
	size_t n = (size_t)tg_tensor_numel(t);
	float *v = malloc(n * sizeof *v);

	tg_tensor *f = tg_tensor_dtype(t) == TG_FLOAT32 ? NULL
	               : tg_cast(t, TG_FLOAT32);

	if (!v) {
		fprintf(stderr, "bench_tensor: out of memory for %zu floats\n",
		        n);
		return NULL;
	}
	if (tg_tensor_data(f ? f : t, v, n * sizeof *v)) {
		tg_tensor_unref(f);
		fail("tensor_data");
		free(v);
		return NULL;
	}
	tg_tensor_unref(f);
	return v;
}

/* ------------------------------------------------------------ timing */

/* One run of the thing timed: builds a fresh result (dropping the last
 * one first, so the lazy cache cannot hand back a realized twin),
 * realizes it and waits for the device.  The last result stays in `out`
 * for the checks. */
struct op {
	const char *name;
	tg_tensor *a, *b, *c;
	tg_tensor *out;
	tg_tensor *(*build)(const struct op *op);
};

static int op_run_quiet(struct op *op)
{
	tg_tensor_unref(op->out);
	tg_scope_begin();
	op->out = tg_keep(op->build(op));
	tg_scope_end();
	return !op->out || tg_realize(op->out) ||
	       tg_dev_synchronize(tg_tensor_dev(op->out)) ? -1 : 0;
}

static int op_run(struct op *op)
{
	return op_run_quiet(op) ? fail(op->name) : 0;
}

/* Runs op once (the warm-up, which compiles) with DEBUG=2 and stderr
 * captured, and counts the kernels it launched into *nkernels (-1 when
 * it could not count).  The captured lines the caller's own DEBUG level
 * asked for are passed on, and all but the kernel lines on failure. */
static int op_warmup(struct op *op, int *nkernels)
{
	const char *dbg = tg_config_get("DEBUG");
	char prev[16], line[4096];
	long level = dbg ? strtol(dbg, NULL, 10) : 0;
	FILE *cap;
	int saved, rc, kernel;

	snprintf(prev, sizeof prev, "%ld", level);
	*nkernels = -1;
	fflush(stderr);
	if (!(cap = tmpfile()) || (saved = dup(STDERR_FILENO)) < 0) {
		if (cap)
			fclose(cap);
		return op_run(op);
	}
	if (tg_config_set("DEBUG", "2")) {
		close(saved);
		fclose(cap);
		return fail("config_set DEBUG");
	}
	if (dup2(fileno(cap), STDERR_FILENO) < 0) {
		close(saved);
		fclose(cap);
		return tg_config_set("DEBUG", prev) ? fail("config_set DEBUG")
		                                    : op_run(op);
	}
	rc = op_run_quiet(op);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(cap);
	*nkernels = 0;
	while (fgets(line, sizeof line, cap)) {
		kernel = !strncmp(line, "*** ", 4) &&
		         strncmp(line, "*** copy ", 9);
		*nkernels += kernel;
		if (level >= 2 ||
		    ((level >= 1 || rc) && strncmp(line, "*** ", 4)))
			fputs(line, stderr);
	}
	fclose(cap);
	if (rc)
		fail(op->name);  /* before tg_config_set can touch the error */
	if (tg_config_set("DEBUG", prev))
		return fail("config_set DEBUG");
	return rc;
}

/* Times op after its warm-up: runs until `target` seconds have passed,
 * at least twice.  The mean seconds per run, or -1. */
static double op_time(struct op *op, double target)
{
	double total = 0, t0;
	int runs = 0;

	while (runs < 2 || total < target) {
		t0 = bench_now();
		if (op_run(op))
			return -1;
		total += bench_now() - t0;
		runs++;
	}
	return total / runs;
}

static void op_free(struct op *op)
{
	tg_tensor_unref(op->a);
	tg_tensor_unref(op->b);
	tg_tensor_unref(op->c);
	tg_tensor_unref(op->out);
}

/* ------------------------------------------------------------ matmul */

static tg_tensor *build_matmul(const struct op *op)
{
	return tg_matmul(op->a, op->b);
}

/* Checks a few entries of a (n,n) @ b (n,n) against a double-precision
 * dot product, allowing float32 rounding of a sum of n terms. */
/* x rounded to float16 (to nearest even; the inputs are in [-1, 1)). */
static double to_half(double x)
{
	int e;

	if (x == 0 || fabs(x) < 0x1p-14)  /* subnormal: steps of 2^-24 */
		return nearbyint(x * 0x1p24) / 0x1p24;
	frexp(x, &e);
	return ldexp(nearbyint(ldexp(x, 11 - e)), e - 11);
}

/* Input seed's element i as the matmul reads it (in_dt). */
static double in_val(uint32_t seed, uint64_t i)
{
	double v = val(seed, i);

	return in_dt == TG_FLOAT16 ? to_half(v) : v;
}

static int check_matmul(tg_tensor *c, int64_t n)
{
	static const double at[][2] = {
		{ 0, 0 }, { 0, 1 }, { 1, 0 }, { 1, 1 }, { 0.5, 0.25 },
		{ 0.3, 0.9 }, { 0.77, 0.11 }, { 0.999, 0.5 },
	};
	float *got = fetch(c);
	size_t k;
	int64_t i, j, x;

	if (!got)
		return -1;
	for (k = 0; k < sizeof at / sizeof at[0]; k++) {
		double want = 0, mag = 0, term;

		i = (int64_t)(at[k][0] * (double)(n - 1));
		j = (int64_t)(at[k][1] * (double)(n - 1));
		for (x = 0; x < n; x++) {
			term = in_val(1, (uint64_t)(i * n + x)) *
			       in_val(2, (uint64_t)(x * n + j));
			want += term;
			mag += fabs(term);
		}
		/* a half result rounds to 11 bits */
		if (fabs(got[i * n + j] - want) >
		    (double)n * 1.2e-7 * mag + 1e-6 +
		    (in_dt == TG_FLOAT16 ? 1e-3 * fabs(want) + 1e-4 * mag
		                         : 0)) {
			fprintf(stderr, "bench_tensor: matmul N=%lld: c[%lld]"
			        "[%lld] is %.9g, expected %.9g\n", (long long)n,
			        (long long)i, (long long)j, got[i * n + j], want);
			free(got);
			return -1;
		}
	}
	free(got);
	return 0;
}

static int bench_matmul(int64_t n, double target, double *gflops)
{
	const int64_t shape[2] = { n, n };
	struct op op = { .name = "matmul", .build = build_matmul };
	double s;
	int nk, rc = -1;

	if (!(op.a = input(2, shape, 1)) || !(op.b = input(2, shape, 2)) ||
	    op_warmup(&op, &nk) || (s = op_time(&op, target)) < 0 ||
	    check_matmul(op.out, n))
		goto out;
	*gflops = 2.0 * (double)n * (double)n * (double)n / s / 1e9;
	rc = 0;
out:
	op_free(&op);
	return rc;
}

/* ------------------------------------------------------------- fused */

static tg_tensor *build_fused(const struct op *op)
{
	return tg_add(tg_mul(op->a, op->b), op->c);
}

static int check_fused(tg_tensor *d, int64_t n)
{
	float *got = fetch(d);
	double a, b, c;
	uint64_t i;

	if (!got)
		return -1;
	for (i = 0; i < (uint64_t)n; i++) {
		a = val(1, i);
		b = val(2, i);
		c = val(3, i);
		if (fabs(got[i] - (a * b + c)) >
		    1e-6 * (fabs(a * b) + fabs(c)) + 1e-30) {
			fprintf(stderr, "bench_tensor: a*b+c: element %llu is "
			        "%.9g, expected %.9g\n", (unsigned long long)i,
			        got[i], a * b + c);
			free(got);
			return -1;
		}
	}
	free(got);
	return 0;
}

static int bench_fused(int64_t n, double target, double *gbs)
{
	const int64_t shape[1] = { n };
	struct op op = { .name = "a*b+c", .build = build_fused };
	double s;
	int nk, rc = -1;

	if (!(op.a = input(1, shape, 1)) || !(op.b = input(1, shape, 2)) ||
	    !(op.c = input(1, shape, 3)) || op_warmup(&op, &nk))
		goto out;
	if (nk >= 0 && nk != 1) {
		fprintf(stderr, "bench_tensor: a*b+c ran as %d kernels, not "
		        "one fused kernel\n", nk);
		goto out;
	}
	if ((s = op_time(&op, target)) < 0 || check_fused(op.out, n))
		goto out;
	*gbs = 4.0 * sizeof(float) * (double)n / s / 1e9;
	rc = 0;
out:
	op_free(&op);
	return rc;
}

/* -------------------------------------------------------------- tiny */

static tg_tensor *build_tiny(const struct op *op)
{
	return tg_add_s(op->a, 1.0);
}

static int bench_tiny(int iters, double *us)
{
	const int64_t shape[1] = { TINY_N };
	struct op op = { .name = "x+1", .build = build_tiny };
	double t0, t;
	float got[TINY_N];
	int i, nk, rc = -1;

	if (!(op.a = input(1, shape, 1)) || op_warmup(&op, &nk))
		goto out;
	for (i = 0; i < 10; i++)
		if (op_run(&op))
			goto out;
	t0 = bench_now();
	for (i = 0; i < iters; i++)
		if (op_run(&op))
			goto out;
	t = bench_now() - t0;
	if (tg_tensor_data(op.out, got, sizeof got)) {
		fail("tensor_data");
		goto out;
	}
	for (i = 0; i < TINY_N; i++)
		if (got[i] != val(1, (uint64_t)i) + 1.0f) {
			fprintf(stderr, "bench_tensor: x+1: element %d is %.9g, "
			        "expected %.9g\n", i, got[i],
			        val(1, (uint64_t)i) + 1.0f);
			goto out;
		}
	*us = t / iters * 1e6;
	rc = 0;
out:
	op_free(&op);
	return rc;
}

/* ------------------------------------------------------------- numpy */

/* Measures what the C side does, the same way (a warm-up, then runs for
 * at least `target` seconds and at least twice).  argv: target, tiny
 * iterations, then the matmul sizes.  No single quotes: it is passed
 * to the shell inside them. */
static const char numpy_script[] =
	"import sys, time\n"
	"import numpy as np\n"
	"target = float(sys.argv[1])\n"
	"iters = int(sys.argv[2])\n"
	"rs = np.random.RandomState(0)\n"
	"def rand(*shape):\n"
	"    return (rs.random_sample(shape) * 2 - 1).astype(np.float32)\n"
	"def steady(f):\n"
	"    f()\n"
	"    runs, total = 0, 0.0\n"
	"    while runs < 2 or total < target:\n"
	"        t0 = time.perf_counter()\n"
	"        f()\n"
	"        total += time.perf_counter() - t0\n"
	"        runs += 1\n"
	"    return total / runs\n"
	"print(\"version\", np.__version__, flush=True)\n"
	"for n in [int(v) for v in sys.argv[3:]]:\n"
	"    a, b = rand(n, n), rand(n, n)\n"
	"    s = steady(lambda: a @ b)\n"
	"    print(\"matmul\", n, 2.0 * n ** 3 / s / 1e9, flush=True)\n"
	"n = 16 * 1024 * 1024\n"
	"a, b, c = rand(n), rand(n), rand(n)\n"
	"s = steady(lambda: a * b + c)\n"
	"print(\"fused\", 16.0 * n / s / 1e9, flush=True)\n"
	"del a, b, c\n"
	"x = rand(16)\n"
	"for _ in range(100):\n"
	"    x + 1\n"
	"t0 = time.perf_counter()\n"
	"for _ in range(iters):\n"
	"    x + 1\n"
	"print(\"tiny\", (time.perf_counter() - t0) / iters * 1e6, flush=True)\n";

/* Fills *np from the numpy script, run with `env` before python3 ("":
 * none); -1 (having said why) when numpy is not there or the script
 * failed: the C figures still print. */
static int run_numpy(const char *env, double target, int iters,
                     struct figures *np, char *version, size_t vn)
{
	char cmd[sizeof numpy_script + 256], line[256];
	size_t len, i;
	FILE *p;
	int status, n;
	double v;

	fflush(stdout);
	status = system("python3 -c \"import numpy\" >/dev/null 2>&1");
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("numpy: not importable (apt install python3-numpy to "
		       "compare)\n");
		return -1;
	}
	len = (size_t)snprintf(cmd, sizeof cmd, "%s python3 -c '%s' %g %d",
	                       env, numpy_script, target, iters);
	for (i = 0; i < np->nsizes && len < sizeof cmd; i++)
		len += (size_t)snprintf(cmd + len, sizeof cmd - len, " %lld",
		                        (long long)all_sizes[i]);
	if (len >= sizeof cmd || !(p = popen(cmd, "r"))) {
		fprintf(stderr, "bench_tensor: cannot run python3\n");
		return -1;
	}
	while (fgets(line, sizeof line, p)) {
		if (sscanf(line, "matmul %d %lf", &n, &v) == 2) {
			for (i = 0; i < np->nsizes; i++)
				if (all_sizes[i] == n)
					np->matmul[i] = v;
		} else if (sscanf(line, "fused %lf", &v) == 1) {
			np->fused = v;
		} else if (sscanf(line, "tiny %lf", &v) == 1) {
			np->tiny = v;
		} else if (!strncmp(line, "version ", 8)) {
			snprintf(version, vn, "%.32s", line + 8);
			version[strcspn(version, "\n")] = '\0';
		}
	}
	status = pclose(p);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bench_tensor: the numpy script failed; "
		        "printing tgcore's figures alone\n");
		return -1;
	}
	return 0;
}

/* The OpenBLAS kernels for the host's vector unit, as an
 * OPENBLAS_CORETYPE assignment; "" when the user chose one or the host
 * has neither AVX-512 nor AVX2.  OpenBLAS 0.3.21 (Debian 12) takes a
 * CPU it does not know (an Emerald Rapids Xeon, say) for a Prescott and
 * runs SSE3 kernels at a fifth of the speed. */
static const char *openblas_core(void)
{
	if (getenv("OPENBLAS_CORETYPE"))
		return "";
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return "OPENBLAS_CORETYPE=SkylakeX";
	if (__builtin_cpu_supports("avx2"))
		return "OPENBLAS_CORETYPE=Haswell";
#endif
	return "";
}

/* numpy's figures, the best of OpenBLAS as it detects the CPU and
 * OpenBLAS told the host's vector unit (openblas_core): the anchor is
 * numpy at its best here.  -1 when numpy did not run. */
static int numpy_best(double target, int iters, struct figures *np,
                      char *version, size_t vn)
{
	const char *core = openblas_core();
	struct figures f = *np;

	if (run_numpy("", target, iters, np, version, vn))
		return -1;
	if (!*core || run_numpy(core, target, iters, &f, version, vn))
		return 0;
	for (size_t i = 0; i < np->nsizes; i++)
		if (f.matmul[i] > np->matmul[i])
			np->matmul[i] = f.matmul[i];
	if (f.fused > np->fused)
		np->fused = f.fused;
	if (f.tiny >= 0 && f.tiny < np->tiny)
		np->tiny = f.tiny;
	snprintf(version + strlen(version), vn - strlen(version),
	         " (the better of OpenBLAS as it detects the CPU and %s)",
	         core);
	return 0;
}

/* ------------------------------------------------------------ output */

/* "   numpy     45.60 GFLOP/s" when v was measured, else nothing; the
 * unit is padded to `width` when another column follows. */
#define MAX_DEVS 8

/* One cell of the table: the figure, or "-" when not measured. */
static void cell(double v)
{
	if (v >= 0)
		printf(" %10.2f", v);
	else
		printf(" %10s", "-");
}

static void jit_row(const char *label, const struct figures *f, size_t nd,
                    size_t field)
{
	printf("%-22s", label);
	for (size_t d = 0; d < nd; d++)
		cell(*(const double *)((const char *)&f[d].jit + field));
	putchar('\n');
}

static void row(const char *label, const struct figures *f, size_t nd,
                size_t field)
{
	printf("%-22s", label);
	for (size_t d = 0; d < nd; d++)
		cell(*(const double *)((const char *)&f[d] + field));
	putchar('\n');
}

/* The GPU rows, when a device has them. */
static void gpu_rows(const struct figures *f, size_t nd)
{
	size_t d;

	for (d = 0; d < nd && f[d].fused_big < 0; d++)
		;
	if (d == nd)
		return;
	row("fp16 mm 4096 TFLOP/s", f, nd, offsetof(struct figures, mm16));
	row("  BEAM=2", f, nd, offsetof(struct figures, mm16_beam));
	row("  cuBLAS fp16", f, nd, offsetof(struct figures, cuda.blas16));
	row("  cuBLAS fp32", f, nd, offsetof(struct figures, cuda.blas32));
	row("  cuBLAS TF32", f, nd, offsetof(struct figures, cuda.blas_tf32));
	row("a*b+c 256M f32 GB/s", f, nd, offsetof(struct figures, fused_big));
	row("  hand-written", f, nd, offsetof(struct figures, cuda.hand));
}

/* The table: a row per figure, a column per device, then numpy.
 * triad: the machine's STREAM triad, GB/s. */
static void table(char names[][32], const struct figures *f, size_t nd,
                  const struct figures *np, double triad)
{
	printf("%-22s", "");
	for (size_t d = 0; d < nd; d++)
		printf(" %10s", names[d]);
	printf(" %10s\n", np->fused >= 0 ? "numpy" : "");
	for (size_t k = 0; k < f[0].nsizes; k++) {
		printf("matmul N=%-5lld GFLOP/s", (long long)all_sizes[k]);
		for (size_t d = 0; d < nd; d++)
			cell(f[d].matmul[k]);
		cell(np->matmul[k]);
		putchar('\n');
	}
	for (size_t k = 0; k < f[0].nsizes; k++) {
		printf("  BEAM=2 N=%-5lld     ", (long long)all_sizes[k]);
		for (size_t d = 0; d < nd; d++)
			cell(f[d].beam[k]);
		putchar('\n');
	}
	printf("%-22s", "a*b+c 16M f32 GB/s");
	for (size_t d = 0; d < nd; d++)
		cell(f[d].fused);
	cell(np->fused);
	printf("\n%-22s", "  triad (C) GB/s");
	for (size_t d = 0; d < nd; d++)
		cell(triad);
	printf("\n%-22s", "x+1 (16 el) us/op");
	for (size_t d = 0; d < nd; d++)
		cell(f[d].tiny);
	cell(np->tiny);
	putchar('\n');
	jit_row("eager 32 k us/kernel", f, nd, offsetof(struct jit_figures,
	                                                eager_chain));
	jit_row("jit 1 k us/call", f, nd, offsetof(struct jit_figures,
	                                           replay_one));
	jit_row("jit 32 k us/kernel", f, nd, offsetof(struct jit_figures,
	                                              replay_chain));
	jit_row("fmnist b128 eager ms", f, nd, offsetof(struct jit_figures,
	                                                step_eager));
	jit_row("fmnist b128 jit ms", f, nd, offsetof(struct jit_figures,
	                                              step_jit));
	gpu_rows(f, nd);
}

/* ------------------------------------------------------- STREAM triad */

struct triad_job {
	float *a, *b, *c;
	size_t lo, hi;
	int init;
};

static void *triad_part(void *arg)
{
	struct triad_job *j = arg;

	if (j->init)  /* first touch: each thread's pages near it */
		for (size_t i = j->lo; i < j->hi; i++) {
			j->b[i] = (float)(i % 7);
			j->c[i] = (float)(i % 5);
			j->a[i] = 0;
		}
	else
		for (size_t i = j->lo; i < j->hi; i++)
			j->a[i] = j->b[i] + 3.0f * j->c[i];
	return NULL;
}

/* Runs the triad once on nt threads (or initializes). */
static void triad_run(struct triad_job *jobs, size_t nt, int init)
{
	pthread_t tid[64];
	size_t started = 0;

	for (size_t t = 0; t < nt; t++) {
		jobs[t].init = init;
		if (t && !pthread_create(&tid[started], NULL, triad_part,
		                         &jobs[t]))
			started++;
		else if (t)
			triad_part(&jobs[t]);
	}
	triad_part(&jobs[0]);
	for (size_t t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
}

/* STREAM's triad over FUSED_N floats per array: the best of 10 runs,
 * 12 bytes per element (two reads, one write), on one thread per
 * online core; -1 when memory is short. */
static double stream_triad(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nt = cores < 1 ? 1 : cores > 64 ? 64 : (size_t)cores;
	float *a = malloc(FUSED_N * sizeof *a), *b = malloc(FUSED_N * sizeof *b);
	float *c = malloc(FUSED_N * sizeof *c);
	struct triad_job jobs[64];
	double best = 1e30;

	if (!a || !b || !c) {
		free(a), free(b), free(c);
		return -1;
	}
	for (size_t t = 0; t < nt; t++)
		jobs[t] = (struct triad_job){ a, b, c, FUSED_N * t / nt,
		                              FUSED_N * (t + 1) / nt, 0 };
	triad_run(jobs, nt, 1);
	for (int r = 0; r < 10; r++) {
		double t0 = bench_now();
		triad_run(jobs, nt, 0);
		if (bench_now() - t0 < best)
			best = bench_now() - t0;
	}
	if (a[FUSED_N - 1] != (float)((FUSED_N - 1) % 7) +
	                      3.0f * (float)((FUSED_N - 1) % 5))
		best = -1;
	free(a), free(b), free(c);
	return best > 0 ? 3.0 * sizeof(float) * FUSED_N / best / 1e9 : -1;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: bench_tensor [--quick] [--big] [--no-numpy] "
	        "[--device NAME]... [--all] [-h]\n"
	        "Times matmul (GFLOP/s), a fused a*b+c (GB/s) and the "
	        "overhead of a tiny op\n"
	        "(us/op) on each device, and the same with numpy when "
	        "python3 has it.\n"
	        "  --quick        N=256 and 512 only, shorter runs (a smoke "
	        "test)\n"
	        "  --big          the GPU figures (fp16 matmul N=4096, a*b+c "
	        "on 256M floats,\n"
	        "                 CUDA's anchors) also with --quick\n"
	        "  --no-numpy     skip the numpy comparison\n"
	        "  --device NAME  measure this device (repeatable; default: "
	        "the default device)\n"
	        "  --all          measure every device the plugins offer\n"
	        "  -h, --help     this text\n");
}

/* fp16 matmul at MM16_N, default opts and BEAM=2, TFLOP/s. */
static int bench_mm16(double target, struct figures *f)
{
	int rc;

	in_dt = TG_FLOAT16;
	rc = bench_matmul(MM16_N, target, &f->mm16);
	if (!rc && tg_config_set("BEAM", "2"))
		rc = fail("BEAM=2");
	if (!rc)
		rc = bench_matmul(MM16_N, target, &f->mm16_beam);
	tg_config_set("BEAM", NULL);
	in_dt = TG_FLOAT32;
	f->mm16 /= f->mm16 > 0 ? 1e3 : 1;
	f->mm16_beam /= f->mm16_beam > 0 ? 1e3 : 1;
	return rc;
}

/* The figures of a GPU: the fp16 matmul, a*b+c on BIG_N floats, and on
 * CUDA the anchors. */
static int bench_gpu(struct figures *f, double target)
{
	tg_dev_info info;

	if (tg_dev_get_info(bench_dev, &info))
		return fail("dev_get_info");
	if (strcmp(info.type, "GPU"))
		return 0;
	if (((info.dtype_mask >> TG_FLOAT16) & 1) && bench_mm16(target, f))
		return 1;
	if (bench_fused(BIG_N, target, &f->fused_big))
		return 1;
	if (!strcmp(info.dialect, "cuda") &&
	    bench_cuda_anchors(bench_dev, (size_t)BIG_N, &f->cuda))
		return 1;
	return 0;
}

/* Measures one device into *f. */
static int bench_device(const char *name, struct figures *f, double target,
                        int iters, int big)
{
	if (!(bench_dev = tg_dev_get(name)))
		return fail(name);
	printf("device %s: %s\n", tg_dev_name(bench_dev),
	       tg_dev_description(bench_dev));
	fflush(stdout);
	for (size_t k = 0; k < f->nsizes; k++)
		if (bench_matmul(all_sizes[k], target, &f->matmul[k]))
			return 1;
	if (tg_config_set("BEAM", "2"))
		return fail("BEAM=2");
	for (size_t k = 0; k < f->nsizes; k++)
		if (bench_matmul(all_sizes[k], target, &f->beam[k])) {
			tg_config_set("BEAM", NULL);
			return 1;
		}
	tg_config_set("BEAM", NULL);
	if (bench_fused(FUSED_N, target, &f->fused) ||
	    bench_tiny(iters, &f->tiny) ||
	    bench_jit(bench_dev, iters < 1000, &f->jit))
		return 1;
	return big ? bench_gpu(f, target) : 0;
}

int main(int argc, char **argv)
{
	struct figures tg[MAX_DEVS];
	struct figures np = { .fused = -1, .tiny = -1, .mm16 = -1,
	                      .mm16_beam = -1, .fused_big = -1,
	                      .cuda = { -1, -1, -1, -1 } };
	char names[MAX_DEVS][32], version[160] = "";
	double target;
	int quick = 0, numpy = 1, all = 0, big = -1, iters, np_iters, i;
	int rc = 1;
	size_t k, nd = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = 1;
		} else if (!strcmp(argv[i], "--no-numpy")) {
			numpy = 0;
		} else if (!strcmp(argv[i], "--all")) {
			all = 1;
		} else if (!strcmp(argv[i], "--big")) {
			big = 1;
		} else if (!strcmp(argv[i], "--device") && i + 1 < argc &&
		           nd < MAX_DEVS) {
			snprintf(names[nd++], sizeof names[0], "%s", argv[++i]);
		} else if (!strcmp(argv[i], "-h") ||
		           !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "bench_tensor: bad option '%s'\n",
			        argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (big < 0)
		big = !quick;
	target = quick ? 0.1 : 0.5;
	iters = quick ? 200 : 2000;
	np_iters = quick ? 10000 : 100000;
	np.nsizes = quick ? 2 : MAX_SIZES;
	for (k = 0; k < MAX_SIZES; k++)
		np.matmul[k] = np.beam[k] = -1;

	if (tg_init()) {
		fail("init");
		goto out;
	}
	if (all)
		nd = bench_all_devices(names, MAX_DEVS);
	if (nd == 0) {
		const char *def = tg_dev_default_name(NULL);
		if (!def) {
			fail("default device");
			goto out;
		}
		snprintf(names[nd++], sizeof names[0], "%s", def);
	}
	for (size_t d = 0; d < nd; d++) {
		tg[d] = np;
		if (bench_device(names[d], &tg[d], target, iters, big))
			goto out;
	}
	if (numpy && !numpy_best(target, np_iters, &np, version,
	                         sizeof version))
		printf("numpy: %s\n", version);
	table(names, tg, nd, &np, stream_triad());
	rc = 0;
out:
	tg_shutdown();
	return rc;
}

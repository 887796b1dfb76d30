/*
 * bench_cuda.c - bench_tensor's anchors on a CUDA device, measured in
 * the same run as tgcore's figures:
 *   - cuBLAS at N=4096: fp32, TF32 and fp16 (float sum) GEMMs, TFLOP/s.
 *     cuBLAS and the CUDA runtime are loaded with dlopen (the paths in
 *     TG_BENCH_CUBLAS and TG_BENCH_CUDART, else their sonames), with our
 *     own declarations of the few entries used, so nothing here needs a
 *     CUDA SDK to build; without them the rows say "-" and why.
 *   - a hand-written a*b+c (one thread per 4 floats, vector loads) on
 *     the same number of floats as the fused figure, compiled and run
 *     through tgcore's program API, GB/s.
 */
#include "config.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BLAS_N 4096
#define HAND_BLOCK 256

/* ------------------------------------------------------------ cuBLAS */

enum { R_32F = 0, R_16F = 2 };                 /* cudaDataType */
enum { COMPUTE_32F = 68, COMPUTE_32F_TF32 = 77 }; /* cublasComputeType */

struct blas {
	void *rt, *lib, *handle;
	int (*malloc_)(void **, size_t);
	int (*free_)(void *);
	int (*memset_)(void *, int, size_t);
	int (*sync)(void);
	int (*create)(void **);
	int (*destroy)(void *);
	int (*gemm)(void *, int, int, int, int, int, const void *,
	            const void *, int, int, const void *, int, int,
	            const void *, void *, int, int, int, int);
};

/* The first of `names` (after the environment's path) that opens. */
static void *open_first(const char *env, const char *const *names)
{
	const char *p = getenv(env);
	void *h = p ? dlopen(p, RTLD_NOW | RTLD_LOCAL) : NULL;

	for (size_t i = 0; !h && names[i]; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	return h;
}

static int blas_open(struct blas *b)
{
	static const char *const rt[] = { "libcudart.so.13", "libcudart.so.12",
	                                  "libcudart.so.11.0", NULL };
	static const char *const lib[] = { "libcublas.so.13", "libcublas.so.12",
	                                   "libcublas.so.11", NULL };

	memset(b, 0, sizeof *b);
	if (!(b->rt = open_first("TG_BENCH_CUDART", rt)) ||
	    !(b->lib = open_first("TG_BENCH_CUBLAS", lib))) {
		fprintf(stderr, "bench_tensor: cuBLAS anchors skipped: %s not "
		        "found (set TG_BENCH_%s)\n", b->rt ? "libcublas"
		        : "libcudart", b->rt ? "CUBLAS" : "CUDART");
		return -1;
	}
	*(void **)&b->malloc_ = dlsym(b->rt, "cudaMalloc");
	*(void **)&b->free_ = dlsym(b->rt, "cudaFree");
	*(void **)&b->memset_ = dlsym(b->rt, "cudaMemset");
	*(void **)&b->sync = dlsym(b->rt, "cudaDeviceSynchronize");
	*(void **)&b->create = dlsym(b->lib, "cublasCreate_v2");
	*(void **)&b->destroy = dlsym(b->lib, "cublasDestroy_v2");
	*(void **)&b->gemm = dlsym(b->lib, "cublasGemmEx");
	if (!b->malloc_ || !b->free_ || !b->memset_ || !b->sync ||
	    !b->create || !b->destroy || !b->gemm || b->create(&b->handle)) {
		fprintf(stderr, "bench_tensor: cuBLAS anchors skipped: an entry "
		        "is missing or cublasCreate failed\n");
		return -1;
	}
	return 0;
}

static void blas_close(struct blas *b)
{
	if (b->handle)
		b->destroy(b->handle);
	if (b->lib)
		dlclose(b->lib);
	if (b->rt)
		dlclose(b->rt);
}

/* TFLOP/s of C = A B at N=4096 with elements of `type` (C too) and the
 * compute type, best of 10 after 2 warm-ups; -1 on an error. */
static double blas_gemm(struct blas *b, int type, int compute)
{
	size_t bytes = (size_t)BLAS_N * BLAS_N * (type == R_16F ? 2 : 4);
	const float one = 1.0f, zero = 0.0f;
	void *m[3] = { NULL, NULL, NULL };
	double best = INFINITY;
	int rc = 0;

	for (int i = 0; i < 3 && !rc; i++)  /* 0x3c: finite, nonzero */
		rc = b->malloc_(&m[i], bytes) || b->memset_(m[i], 0x3c, bytes);
	for (int it = 0; it < 12 && !rc; it++) {
		double t0 = bench_now();
		rc = b->gemm(b->handle, 0, 0, BLAS_N, BLAS_N, BLAS_N, &one, m[0],
		             type, BLAS_N, m[1], type, BLAS_N, &zero, m[2], type,
		             BLAS_N, compute, -1) || b->sync();
		if (it >= 2)
			best = fmin(best, bench_now() - t0);
	}
	for (int i = 0; i < 3; i++)
		if (m[i])
			b->free_(m[i]);
	if (rc)
		fprintf(stderr, "bench_tensor: cublasGemmEx (type %d, compute "
		        "%d) failed\n", type, compute);
	return rc ? -1 : 2.0 * BLAS_N * BLAS_N * (double)BLAS_N / best / 1e12;
}

static void bench_blas(struct cuda_anchors *a)
{
	struct blas b;

	if (blas_open(&b) == 0) {
		a->blas32 = blas_gemm(&b, R_32F, COMPUTE_32F);
		a->blas_tf32 = blas_gemm(&b, R_32F, COMPUTE_32F_TF32);
		a->blas16 = blas_gemm(&b, R_16F, COMPUTE_32F);
	}
	blas_close(&b);
}

/* ------------------------------------------------- hand-written a*b+c */

static const char hand_src[] =
	"extern \"C\" __global__ void hand_abc(float4 *__restrict__ d,\n"
	"    const float4 *__restrict__ a, const float4 *__restrict__ b,\n"
	"    const float4 *__restrict__ c)\n"
	"{\n"
	"\tconst unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tconst float4 x = a[i], y = b[i], z = c[i];\n"
	"\td[i] = make_float4(x.x * y.x + z.x, x.y * y.y + z.y,\n"
	"\t                   x.z * y.z + z.z, x.w * y.w + z.w);\n"
	"}\n";

/* Input k's element i: small exact floats. */
static float hand_val(int k, size_t i)
{
	return (float)((int)((i * (size_t)(3 + 2 * k)) % 13) - 6) * 0.25f;
}

static int hand_check(tg_buffer *d, size_t n)
{
	float *got = malloc(n * sizeof *got);
	int rc = -1;

	if (got && !tg_buffer_copyout(d, got, n * sizeof *got)) {
		rc = 0;
		for (size_t i = 0; i < n && !rc; i += 997)
			if (got[i] != hand_val(0, i) * hand_val(1, i) +
			              hand_val(2, i)) {
				fprintf(stderr, "bench_tensor: hand-written a*b+c: "
				        "element %zu is %g\n", i, got[i]);
				rc = -1;
			}
	}
	free(got);
	return rc;
}

/* GB/s of the hand-written kernel on n floats (n a multiple of 4 *
 * HAND_BLOCK), best of 10 timed runs; -1 after printing why. */
static double bench_hand(tg_dev *dev, size_t n)
{
	tg_buffer *buf[4] = { NULL, NULL, NULL, NULL };
	tg_launch_args a = { .bufs = buf, .nbufs = 4,
	                     .global = { n / 4, 1, 1 },
	                     .local = { HAND_BLOCK, 1, 1 } };
	tg_program *p = tg_program_new(dev, "hand_abc", hand_src);
	float *host = malloc(n * sizeof *host);
	double best = INFINITY, t;
	int rc = !p || !host;

	for (int k = 0; k < 4 && !rc; k++) {
		rc = !(buf[k] = tg_buffer_new(dev, n, TG_FLOAT32));
		for (size_t i = 0; k && i < n && !rc; i++)
			host[i] = hand_val(k - 1, i);
		if (k && !rc)
			rc = tg_buffer_copyin(buf[k], host, n * sizeof *host);
	}
	for (int it = 0; it < 11 && !rc; it++) {
		rc = tg_program_launch(p, &a, &t);
		if (it)
			best = fmin(best, t);
	}
	if (rc)
		fprintf(stderr, "bench_tensor: hand-written a*b+c: %s\n",
		        tg_last_error());
	else
		rc = hand_check(buf[0], n);
	for (int k = 0; k < 4; k++)
		tg_buffer_unref(buf[k]);
	tg_program_free(p);
	free(host);
	return rc ? -1 : 4.0 * sizeof(float) * (double)n / best / 1e9;
}

int bench_cuda_anchors(tg_dev *dev, size_t n_fused, struct cuda_anchors *a)
{
	bench_blas(a);
	a->hand = bench_hand(dev, n_fused);
	return a->hand < 0 ? -1 : 0;
}

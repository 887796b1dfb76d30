/*
 * tests/bench/bench.h - what the parts of bench_tensor share.
 */
#ifndef TG_BENCH_H
#define TG_BENCH_H

#include <stdio.h>
#include <time.h>

#include <tg/tg.h>

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Every device the plugins offer ("CPU", "OPENCL", "OPENCL:1", ...),
 * at most max of them. */
static inline size_t bench_all_devices(char names[][32], size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < tg_plugin_count(); i++) {
		tg_plugin_info pi;

		if (tg_plugin_get(i, &pi) || pi.state != TG_PLUGIN_LOADED ||
		    !pi.name)
			continue;
		for (int d = 0; d < pi.ndevices && n < max; d++) {
			if (d)
				snprintf(names[n++], 32, "%s:%d", pi.name, d);
			else
				snprintf(names[n++], 32, "%s", pi.name);
		}
	}
	return n;
}

/* The JIT's figures (bench_jit.c); < 0 when not measured. */
struct jit_figures {
	double eager_chain;  /* us per kernel, 32 tiny kernels, eager */
	double replay_one;   /* us per call of a 1-kernel step, replayed */
	double replay_chain; /* us per kernel of a 32-kernel step, replayed */
	double step_eager;   /* ms per Fashion-MNIST training step, b128 */
	double step_jit;     /* ... replayed */
};

/* Measures dev; `quick` runs fewer iterations.  0, or -1 after printing
 * why to stderr. */
int bench_jit(tg_dev *dev, int quick, struct jit_figures *f);

/* The anchors of a CUDA device (bench_cuda.c); < 0 when not measured. */
struct cuda_anchors {
	double blas32, blas_tf32, blas16; /* cuBLAS at N=4096, TFLOP/s */
	double hand;                      /* hand-written a*b+c, GB/s */
};

/* Measures the anchors on dev, the hand-written kernel on n_fused
 * floats.  0, or -1 after printing why (cuBLAS missing is not an
 * error: its figures stay < 0). */
int bench_cuda_anchors(tg_dev *dev, size_t n_fused, struct cuda_anchors *a);

#endif

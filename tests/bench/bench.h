/*
 * tests/bench/bench.h - what the parts of bench_tensor share.
 */
#ifndef TG_BENCH_H
#define TG_BENCH_H

#include <time.h>

#include <tg/tg.h>

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

#endif

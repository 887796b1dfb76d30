/*
 * quickstart.c - the smallest complete tgcore program.
 *
 * Computes y = 2*x + y on 1000 floats with a hand-written kernel on the
 * default device and checks every value against a plain C loop.  It uses
 * only <tg/tg.h>, so it builds against an installed tgcore with
 *
 *   cc quickstart.c -o quickstart $(pkg-config --cflags --libs tgcore)
 *
 * Pick the device with DEVICE=CPU (or any plugin's name); `tg-info` lists
 * them.  The kernel is written in tgcore's C dialect, so the device must
 * be one whose plugin compiles C (the CPU plugin, the HOSTMEM example).
 *
 * (No config.h here: this file is also built outside tgcore's tree.)
 */
#include <stdio.h>
#include <stdlib.h>

#include <tg/tg.h>

#define N 1000

/* The C dialect's calling convention (see TG_DIALECT_C in tg/plugin.h):
 * buffers in argument order, symbolic values, the global size, and the
 * range [lo, hi) of work-items this call computes.  A plugin may split
 * the range across threads, so the kernel touches only items lo..hi-1. */
static const char saxpy_source[] =
	"#include <stddef.h>\n"
	"#include <stdint.h>\n"
	"void saxpy(void *const *bufs, const int64_t *vals,\n"
	"           const size_t *global, size_t lo, size_t hi)\n"
	"{\n"
	"	float *y = bufs[0];\n"
	"	const float *x = bufs[1];\n"
	"	(void)vals; (void)global;\n"
	"	for (size_t i = lo; i < hi; i++)\n"
	"		y[i] = 2.0f * x[i] + y[i];\n"
	"}\n";

/* Says which step failed and why.  tg_last_error() is only valid until
 * the next tgcore call, so this runs before any cleanup. */
static int fail(const char *step)
{
	fprintf(stderr, "quickstart: %s: %s\n", step, tg_last_error());
	return -1;
}

/* Runs saxpy over all N elements: y = 2*x + y. */
static int launch_saxpy(tg_program *prog, tg_buffer *by, tg_buffer *bx)
{
	tg_buffer *bufs[] = { by, bx }; /* kernel argument order */
	tg_launch_args args = {
		.bufs = bufs, .nbufs = 2,
		.vals = NULL, .nvals = 0,
		.global = { N, 1, 1 }, /* one work-item per element */
		.local = { 1, 1, 1 },  /* no work-groups on C devices */
	};

	/* NULL elapsed time: queue it and return without waiting. */
	return tg_program_launch(prog, &args, NULL);
}

/* Copies x and y to the device, runs saxpy, and copies y back to out. */
static int run_saxpy(tg_dev *dev, const float *x, const float *y,
                     float *out)
{
	/* Device memory is allocated lazily, at the first copy. */
	tg_buffer *by = tg_buffer_new(dev, N, TG_FLOAT32);
	tg_buffer *bx = tg_buffer_new(dev, N, TG_FLOAT32);
	tg_program *prog = NULL;
	int rc = -1;

	if (by == NULL || bx == NULL) {
		rc = fail("tg_buffer_new");
		goto out;
	}
	if (tg_buffer_copyin(by, y, N * sizeof(float)) < 0 ||
	    tg_buffer_copyin(bx, x, N * sizeof(float)) < 0) {
		rc = fail("tg_buffer_copyin");
		goto out;
	}
	/* Compiled once; later runs hit tgcore's on-disk compile cache. */
	prog = tg_program_new(dev, "saxpy", saxpy_source);
	if (prog == NULL) {
		rc = fail("tg_program_new");
		goto out;
	}
	if (launch_saxpy(prog, by, bx) < 0) {
		rc = fail("tg_program_launch");
		goto out;
	}
	/* Waits for the kernel: copyout follows all queued work. */
	if (tg_buffer_copyout(by, out, N * sizeof(float)) < 0) {
		rc = fail("tg_buffer_copyout");
		goto out;
	}
	rc = 0;
out:
	if (prog != NULL)
		tg_program_free(prog);
	tg_buffer_unref(bx); /* NULL is fine */
	tg_buffer_unref(by);
	return rc;
}

/* Compares with the same formula on the host, in double precision.  The
 * inputs make every result exact, but a device may fuse the multiply-add,
 * so allow a rounding error anyway. */
static int check(const float *x, const float *y, const float *got)
{
	for (int i = 0; i < N; i++) {
		double want = 2.0 * x[i] + y[i];
		double err = got[i] > want ? got[i] - want : want - got[i];

		if (err > 1e-6 * (want < 0 ? -want : want) + 1e-6) {
			fprintf(stderr, "quickstart: y[%d] = %.9g, expected "
			        "%.9g\n", i, got[i], want);
			return -1;
		}
	}
	return 0;
}

int main(void)
{
	static float x[N], y[N], out[N];
	int status = EXIT_FAILURE;
	tg_dev *dev;

	for (int i = 0; i < N; i++) {
		x[i] = 0.5f * (float)i;
		y[i] = (float)(N - i);
	}
	/* NULL: the default device (DEVICE=, CPU=1, config, or the best). */
	dev = tg_dev_get(NULL);
	if (dev == NULL) {
		fail("tg_dev_get");
		goto out;
	}
	printf("quickstart: device %s (%s)\n", tg_dev_name(dev),
	       tg_dev_description(dev));
	if (run_saxpy(dev, x, y, out) < 0 || check(x, y, out) < 0)
		goto out;
	printf("quickstart: OK (%d values checked on %s)\n", N,
	       tg_dev_name(dev));
	status = EXIT_SUCCESS;
out:
	tg_shutdown(); /* closes the device; dev is invalid from here */
	return status;
}

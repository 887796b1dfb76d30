/*
 * report.h - what fashion_mnist shows a person: the progress meter
 * (rate and time left without the first step's compilation), the
 * training curve as an SVG, and the checkpoint's description (its
 * metadata: the net's width, the input scaling, the class names).
 */
#ifndef FASHION_REPORT_H
#define FASHION_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include <tg/tg.h>

/* ---------------------------------------------------------- the meter */

/* Steps of an epoch timed from `t0`, the end of the epoch's first step
 * when that step compiled the kernels (the first epoch), else the
 * epoch's start: a rate that counted the compilation would read "9
 * img/s, ETA 107:02" for an epoch of 35 s. */
typedef struct meter {
	double t0;      /* when the steady steps began; < 0: not yet */
	size_t from;    /* steps done by t0 */
	size_t steps;   /* steps in the epoch */
	size_t batch;   /* images per step */
} meter;

/* An epoch of `steps` steps of `batch` images starting at `now`; with
 * `compiles`, its first step compiles, and the meter starts after it. */
void meter_start(meter *m, double now, size_t steps, size_t batch,
                 int compiles);
/* Step `done` (1-based) finished at `now`. */
void meter_step(meter *m, double now, size_t done);
/* Images per second and seconds left after `done` steps at `now`; 0 when
 * no steady step has finished yet (the compiling step is running or
 * just done). */
int meter_rate(const meter *m, double now, size_t done, double *ips,
               double *eta);

/* --------------------------------------------------------- the curve */

/* A point of the training curve: where in the run (in epochs), the
 * mean training loss since the previous point, and the test accuracy
 * then, in [0, 1]. */
typedef struct curve_point {
	double epoch, loss, acc;
} curve_point;

/* The curve as an SVG line chart: loss on the left axis from 0, test
 * accuracy on the right axis scaled to the points' range, epochs along
 * the bottom, written whole (tg_savefile).  0, or -1 with
 * tg_last_error() saying why. */
int curve_write_svg(const char *path, const curve_point *p, size_t n,
                    const char *title);

/* ------------------------------------------------- the checkpoint's facts */

#ifndef CLASSES
#define CLASSES 10
#endif
extern const char *const class_names[CLASSES];

/* How the checkpoint's model was made and what its inputs and outputs
 * mean: written as safetensors metadata, read back by --eval. */
typedef struct ckpt_desc {
	int width;          /* channel multiplier: 1 quick, 2 full */
	double scale, offset;  /* input = byte * scale + offset */
	char classes[CLASSES][32];
} ckpt_desc;

/* The description of this program's models at `width`. */
void ckpt_desc_default(ckpt_desc *d, int width);
/* Adds d to s's metadata; 0 or a tg status. */
int ckpt_desc_put(tg_state *s, const ckpt_desc *d);
/* Reads d from s's metadata.  0; 1 when s has none (a checkpoint from
 * before it was written); -1 when it is malformed, with the reason in
 * why (why_n bytes). */
int ckpt_desc_get(const tg_state *s, ckpt_desc *d, char *why, size_t why_n);

#endif

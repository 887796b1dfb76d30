/*
 * report.c - the progress meter, the training curve and the
 * checkpoint's description (report.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* ---------------------------------------------------------- the meter */

void meter_start(meter *m, double now, size_t steps, size_t batch,
                 int compiles)
{
	m->t0 = compiles ? -1 : now;
	m->from = 0;
	m->steps = steps;
	m->batch = batch;
}

void meter_step(meter *m, double now, size_t done)
{
	if (m->t0 < 0) {  /* the compiling step just finished */
		m->t0 = now;
		m->from = done;
	}
}

int meter_rate(const meter *m, double now, size_t done, double *ips,
               double *eta)
{
	double dt = now - m->t0, per_step;

	*ips = 0;
	*eta = 0;
	if (m->t0 < 0 || done <= m->from || !(dt > 0))
		return 0;
	per_step = dt / (double)(done - m->from);
	*ips = (double)m->batch / per_step;
	*eta = per_step * (double)(m->steps > done ? m->steps - done : 0);
	return 1;
}

/* --------------------------------------------------------- the curve */

/* The plot area and the SVG's size. */
#define X0 70.0
#define X1 490.0
#define Y0 40.0
#define Y1 260.0
#define W 560
#define H 320

static double px(double v, double lo, double hi)
{
	return X0 + (X1 - X0) * (hi > lo ? (v - lo) / (hi - lo) : 0.5);
}

static double py(double v, double lo, double hi)
{
	return Y1 - (Y1 - Y0) * (hi > lo ? (v - lo) / (hi - lo) : 0.5);
}

/* The accuracy axis: the points' range widened to whole 5% steps, at
 * least 5% tall, within [0, 1]. */
static void acc_range(const curve_point *p, size_t n, double *lo,
                      double *hi)
{
	double a = 1, b = 0;

	for (size_t i = 0; i < n; i++) {
		a = fmin(a, p[i].acc);
		b = fmax(b, p[i].acc);
	}
	if (a > b)
		a = 0, b = 1;
	*lo = fmax(0, floor(a * 20 - 0.2) / 20);
	*hi = fmin(1, ceil(b * 20 + 0.2) / 20);
	if (*hi - *lo < 0.05)
		*lo = fmax(0, *hi - 0.05);
}

static void polyline(FILE *f, const curve_point *p, size_t n, double ex,
                     int acc, double lo, double hi, const char *color)
{
	fprintf(f, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\" "
	        "points=\"", color);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.1f,%.1f ", px(p[i].epoch, 0, ex),
		        py(acc ? p[i].acc : p[i].loss, lo, hi));
	fprintf(f, "\"/>\n");
	for (size_t i = 0; n <= 60 && i < n; i++)
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" "
		        "fill=\"%s\"/>\n", px(p[i].epoch, 0, ex),
		        py(acc ? p[i].acc : p[i].loss, lo, hi), color);
}

/* Axes, ticks and titles: tick labels sit beside their axis, and each
 * title beyond its labels (rotated on the sides), so none overlap. */
static void axes(FILE *f, double ex, double lmax, double alo, double ahi)
{
	int ne = (int)ceil(ex), step = ne > 10 ? (ne + 9) / 10 : 1;

	fprintf(f, "<path d=\"M%.0f,%.0f V%.0f H%.0f V%.0f\" fill=\"none\" "
	        "stroke=\"black\"/>\n", X0, Y0, Y1, X1, Y0);
	for (int i = 0; i <= 4; i++) {
		double t = i / 4.0, y = Y1 - (Y1 - Y0) * t;

		fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
		        "stroke=\"#e0e0e0\"/>\n", X0, y, X1, y);
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" "
		        "fill=\"#c0392b\">%.2f</text>\n", X0 - 6, y + 4,
		        lmax * t);
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" fill=\"#2471a3\">%.1f%%"
		        "</text>\n", X1 + 6, y + 4,
		        100 * (alo + (ahi - alo) * t));
	}
	for (int e = 0; e <= ne; e += step)
		fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d"
		        "</text>\n", px(e, 0, ex), Y1 + 16, e);
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">epoch"
	        "</text>\n", (X0 + X1) / 2, Y1 + 40);
	fprintf(f, "<text transform=\"translate(18,%.0f) rotate(-90)\" "
	        "text-anchor=\"middle\" fill=\"#c0392b\">training loss</text>\n",
	        (Y0 + Y1) / 2);
	fprintf(f, "<text transform=\"translate(%d,%.0f) rotate(90)\" "
	        "text-anchor=\"middle\" fill=\"#2471a3\">test accuracy</text>\n",
	        W - 16, (Y0 + Y1) / 2);
}

int curve_write_svg(const char *path, const curve_point *p, size_t n,
                    const char *title)
{
	double lmax = 0, ex = 0, alo, ahi;
	tg_savefile *sf;
	FILE *f;

	if (!n) {
		tg_set_error(TG_EINVAL, "curve: no points to draw");
		return -1;
	}
	if (!(sf = tg_savefile_open(path)))
		return -1;
	f = tg_savefile_stream(sf);
	for (size_t i = 0; i < n; i++) {
		lmax = fmax(lmax, p[i].loss);
		ex = fmax(ex, p[i].epoch);
	}
	/* a round top, so the quarter ticks are round too */
	lmax = lmax > 0 ? ceil(lmax * 1.05 / 0.2) * 0.2 : 1;
	ex = ex > 0 ? ex : 1;
	acc_range(p, n, &alo, &ahi);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	        "height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n"
	        "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n"
	        "<text x=\"%.0f\" y=\"22\" text-anchor=\"middle\" "
	        "font-size=\"14\">%s</text>\n", W, H, W, H, (X0 + X1) / 2,
	        title);
	axes(f, ex, lmax, alo, ahi);
	polyline(f, p, n, ex, 0, 0, lmax, "#c0392b");
	polyline(f, p, n, ex, 1, alo, ahi, "#2471a3");
	fprintf(f, "</svg>\n");
	return tg_savefile_commit(sf) ? -1 : 0;
}

/* ------------------------------------------------- the checkpoint's facts */

const char *const class_names[CLASSES] = {
	"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal",
	"Shirt", "Sneaker", "Bag", "Ankle boot",
};

void ckpt_desc_default(ckpt_desc *d, int width)
{
	memset(d, 0, sizeof *d);
	d->width = width;
	d->scale = 1 / 127.5;  /* bytes 0..255 to [-1, 1] */
	d->offset = -1;
	for (int i = 0; i < CLASSES; i++)
		snprintf(d->classes[i], sizeof d->classes[i], "%s",
		         class_names[i]);
}

int ckpt_desc_put(tg_state *s, const ckpt_desc *d)
{
	char width[16], scale[40], offset[40], classes[CLASSES * 33];
	size_t at = 0;
	int rc;

	snprintf(width, sizeof width, "%d", d->width);
	snprintf(scale, sizeof scale, "%.17g", d->scale);
	snprintf(offset, sizeof offset, "%.17g", d->offset);
	for (int i = 0; i < CLASSES; i++)
		at += (size_t)snprintf(classes + at, sizeof classes - at, "%s%s",
		                       i ? "," : "", d->classes[i]);
	if ((rc = tg_state_set_metadata(s, "model", "beautiful_mnist")) ||
	    (rc = tg_state_set_metadata(s, "width", width)) ||
	    (rc = tg_state_set_metadata(s, "input_scale", scale)) ||
	    (rc = tg_state_set_metadata(s, "input_offset", offset)) ||
	    (rc = tg_state_set_metadata(s, "classes", classes)))
		return rc;
	return 0;
}

static int get_number(const tg_state *s, const char *key, double *v,
                      char *why, size_t why_n)
{
	const char *t = tg_state_metadata(s, key);
	char *end;

	if (!t) {
		snprintf(why, why_n, "no '%s' in its metadata", key);
		return -1;
	}
	errno = 0;
	*v = strtod(t, &end);
	if (end == t || *end || errno || !isfinite(*v)) {
		snprintf(why, why_n, "its metadata's %s '%s' is not a number",
		         key, t);
		return -1;
	}
	return 0;
}

static int get_classes(const tg_state *s, ckpt_desc *d, char *why,
                       size_t why_n)
{
	const char *t = tg_state_metadata(s, "classes"), *comma;
	int i = 0;

	for (; t && i < CLASSES; i++, t = comma ? comma + 1 : NULL) {
		size_t len;

		comma = strchr(t, ',');
		len = comma ? (size_t)(comma - t) : strlen(t);
		if (!len || len >= sizeof d->classes[i])
			break;
		memcpy(d->classes[i], t, len);
		d->classes[i][len] = '\0';
	}
	if (i == CLASSES && !t)
		return 0;
	snprintf(why, why_n, "its metadata's classes are not %d names of 1 "
	         "to %zu bytes separated by commas", CLASSES,
	         sizeof d->classes[0] - 1);
	return -1;
}

int ckpt_desc_get(const tg_state *s, ckpt_desc *d, char *why, size_t why_n)
{
	const char *model = tg_state_metadata(s, "model");
	double width;

	memset(d, 0, sizeof *d);
	tg_clear_error();  /* a missing key sets it */
	if (!model)
		return 1;
	if (strcmp(model, "beautiful_mnist")) {
		snprintf(why, why_n, "it holds a '%s' model, not this "
		         "program's beautiful_mnist", model);
		return -1;
	}
	if (get_number(s, "width", &width, why, why_n) ||
	    get_number(s, "input_scale", &d->scale, why, why_n) ||
	    get_number(s, "input_offset", &d->offset, why, why_n) ||
	    get_classes(s, d, why, why_n))
		return -1;
	if (width != 1 && width != 2) {
		snprintf(why, why_n, "its metadata's width %g is neither 1 "
		         "(quick) nor 2 (full)", width);
		return -1;
	}
	d->width = (int)width;
	return 0;
}

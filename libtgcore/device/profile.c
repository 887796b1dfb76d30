/*
 * device/profile.c - PROFILE=1: every kernel and copy the realizes run,
 * with its device, name, start, duration and size, written as a Chrome
 * trace (the Trace Event format that chrome://tracing and Perfetto
 * open) to PROFILEPATH when the library shuts down or the process
 * exits.  One process row per device, as tinygrad's profiler draws it.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"
#include "util/child.h"

typedef struct event {
	char *dev, *name, *cat;
	double start_s, dur_s, flops, bytes;
	size_t global[3], local[3], nbufs;
} event;

static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;
static TG_VEC(event) events;
static double origin_s;   /* the first event's start: time 0 */
static int exit_hooked;

static void at_exit(void)
{
	tg_profile_flush();
}

void tg_profile_event(const tg_profile_ev *ev)
{
	event e = { 0 };

	e.dev = strdup(ev->dev ? ev->dev : "?");
	e.name = strdup(ev->name ? ev->name : "?");
	e.cat = strdup(ev->cat ? ev->cat : "kernel");
	e.start_s = ev->start_s;
	e.dur_s = ev->dur_s;
	e.flops = ev->flops;
	e.bytes = ev->bytes;
	memcpy(e.global, ev->global, sizeof e.global);
	memcpy(e.local, ev->local, sizeof e.local);
	e.nbufs = ev->nbufs;
	pthread_mutex_lock(&prof_lock);
	if (!events.n)
		origin_s = e.start_s;
	if (e.dev && e.name && e.cat && !TG_VEC_PUSH(&events, e))
		e.dev = e.name = e.cat = NULL;  /* kept */
	if (!exit_hooked)
		exit_hooked = atexit(at_exit) == 0;
	pthread_mutex_unlock(&prof_lock);
	free(e.dev);
	free(e.name);
	free(e.cat);
}

/* s as a JSON string (names are identifiers; escaped all the same). */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* The row (pid) of device name d: its index among the devices seen. */
static size_t device_row(char **devs, size_t *ndev, char *d)
{
	size_t i;

	for (i = 0; i < *ndev; i++)
		if (!strcmp(devs[i], d))
			return i;
	devs[(*ndev)++] = d;
	return i;
}

static void write_event(FILE *f, const event *e, size_t pid)
{
	fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%zu,\"tid\":0,\"name\":", pid);
	json_str(f, e->name);
	fprintf(f, ",\"cat\":");
	json_str(f, e->cat);
	fprintf(f, ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"device\":",
	        (e->start_s - origin_s) * 1e6, e->dur_s * 1e6);
	json_str(f, e->dev);
	fprintf(f, ",\"bytes\":%.0f", e->bytes);
	if (!strcmp(e->cat, "kernel"))
		fprintf(f, ",\"flops\":%.0f,\"GFLOPS\":%.3f,\"GB/s\":%.3f,"
		        "\"global\":[%zu,%zu,%zu],\"local\":[%zu,%zu,%zu],"
		        "\"buffers\":%zu", e->flops,
		        e->dur_s > 0 ? e->flops / e->dur_s / 1e9 : 0,
		        e->dur_s > 0 ? e->bytes / e->dur_s / 1e9 : 0,
		        e->global[0], e->global[1], e->global[2], e->local[0],
		        e->local[1], e->local[2], e->nbufs);
	fprintf(f, "}}");
}

static int write_trace(const char *path)
{
	char **devs = malloc((events.n + 1) * sizeof *devs);
	size_t ndev = 0, i;
	tg_savefile *sf;
	FILE *f;

	if (!devs)
		return tg_error_oom("profile");
	if (!(sf = tg_savefile_open(path))) {
		free(devs);
		return tg_error_prefix("profile");
	}
	f = tg_savefile_stream(sf);
	for (i = 0; i < events.n; i++)
		device_row(devs, &ndev, events.v[i].dev);
	/* the rows' names first, then the events in the order they ran */
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	for (i = 0; i < ndev; i++) {
		fprintf(f, "%s\n{\"ph\":\"M\",\"pid\":%zu,\"name\":"
		        "\"process_name\",\"args\":{\"name\":", i ? "," : "", i);
		json_str(f, devs[i]);
		fprintf(f, "}}");
	}
	for (i = 0; i < events.n; i++)
		write_event(f, &events.v[i],
		            device_row(devs, &ndev, events.v[i].dev));
	fprintf(f, "\n]}\n");
	free(devs);
	return tg_savefile_commit(sf) ? tg_error_prefix("profile") : 0;
}

int tg_profile_flush(void)
{
	char *path = NULL;
	int rc = 0;
	size_t i;

	pthread_mutex_lock(&prof_lock);
	if (events.n) {
		path = tg_output_path(TG_KEY_PROFILEPATH, "tgcore_profile.json");
		rc = path ? write_trace(path) : TG_ENOMEM;
		/* said at any DEBUG level: PROFILE=1 asked for the file */
		if (!rc)
			tg_debug_log(0, "PROFILE: %zu events written to %s (open "
			             "it in chrome://tracing or Perfetto)",
			             events.n, path);
		else
			tg_debug_log(0, "PROFILE: %s", tg_last_error());
	}
	for (i = 0; i < events.n; i++) {
		free(events.v[i].dev);
		free(events.v[i].name);
		free(events.v[i].cat);
	}
	TG_VEC_FREE(&events);
	pthread_mutex_unlock(&prof_lock);
	free(path);
	return rc;
}

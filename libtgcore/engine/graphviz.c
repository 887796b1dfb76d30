/*
 * engine/graphviz.c - GRAPH=1: the lazy graph of everything scheduled,
 * one cluster per kernel (the schedule), written as Graphviz dot to
 * GRAPHPATH.dot, and drawn to GRAPHPATH.svg when `dot` is installed,
 * at shutdown or process exit (tinygrad's GRAPH, net.dot and net.svg).
 *
 * Each kernel's cluster is labelled as DEBUG=2 names its run ("CPU 3
 * r_16_16_16": the device, the run's number and the kernel's name), or
 * "CPU (not run)" for one scheduled but never run.
 *
 * Nodes are lazy bases by creation id: "ALU MUL (4,4) float32", coloured
 * by kind as tinygrad colours its ops; realized buffers a kernel loads
 * are boxes outside the clusters; edges run from each source to its
 * consumer.
 */
#include "config.h"

#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "engine/engine.h"
#include "ir/ir.h"
#include "shape/shape.h"
#include "util/child.h"

extern char **environ;

static pthread_mutex_t gv_lock = PTHREAD_MUTEX_INITIALIZER;
static tg_strbuf body;      /* clusters and nodes so far */
static tg_strbuf edges;     /* after them: a node is in the cluster
                               that declares it, not the first edge's */
static int started, exit_hooked;
static size_t nkernels;
/* Each cluster's label, by number: "CPU 3 r_16_16_16" once it ran (the
 * device, run number and name DEBUG=2 prints), "CPU (not run)" until
 * then.  The body holds "@K<number>@" where the label goes. */
static TG_VEC(char *) labels;
static tg_ptrmap drawn;     /* lazy id (as a pointer key) -> drawn */

static void at_exit(void)
{
	tg_graphviz_flush();
}

static const char *kind_name(const tg_lazy *b)
{
	static const char *const names[] = {
		"VIEW", "BUFFER", "CONST", "COPY", "CONTIGUOUS", "ALU", "CAST",
		"BITCAST", "REDUCE", "ASSIGN", "BUFVIEW"
	};

	return b->kind < TG_ARRAY_LEN(names) ? names[b->kind] : "?";
}

static const char *kind_color(const tg_lazy *b)
{
	switch (b->kind) {
	case TG_LZ_BUFFER: return "#e0e0e0";
	case TG_LZ_CONST: return "#ffffff";
	case TG_LZ_ALU: return "#e0ffc0";
	case TG_LZ_REDUCE: return "#ffc0c0";
	case TG_LZ_CAST: case TG_LZ_BITCAST: return "#fff0a0";
	case TG_LZ_ASSIGN: return "#e0c0ff";
	default: return "#c0d8ff";  /* COPY, CONTIGUOUS */
	}
}

/* Draws base b once: its node and the edges from its sources. */
static void draw_node(const tg_lazy *b, int box)
{
	const void *key = (const void *)(uintptr_t)(b->id + 1);
	char shape[160];
	uint32_t i;

	if (tg_ptrmap_has(&drawn, key) || tg_ptrmap_put(&drawn, key, NULL) < 0)
		return;
	tg_sints_format(tg_lazy_shape(b), tg_lazy_ndim(b), shape,
	                sizeof shape);
	tg_strbuf_addf(&body, "  n%llu [label=\"%s%s%s\\n%s %s\", "
	               "fillcolor=\"%s\", shape=%s];\n",
	               (unsigned long long)b->id, kind_name(b),
	               b->kind == TG_LZ_ALU || b->kind == TG_LZ_REDUCE ? " "
	               : "", b->kind == TG_LZ_ALU || b->kind == TG_LZ_REDUCE
	               ? tg_op_name(b->op) : "", shape,
	               tg_dtype_name(b->dtype), kind_color(b),
	               box ? "box" : "ellipse");
	for (i = 0; i < b->nsrc; i++)
		tg_strbuf_addf(&edges, " n%llu -> n%llu;\n",
		               (unsigned long long)tg_lazy_base(b->src[i])->id,
		               (unsigned long long)b->id);
}

size_t tg_graphviz_kernel(const char *dev, tg_lazy *const *outs,
                          size_t nouts, tg_lazy *const *fused,
                          size_t nfused, tg_lazy *const *inputs,
                          size_t ninputs)
{
	char label[96];
	char *l;
	size_t i, id;

	snprintf(label, sizeof label, "%s (not run)", dev);
	pthread_mutex_lock(&gv_lock);
	if (!started) {
		tg_strbuf_init(&body);
		tg_strbuf_init(&edges);
		started = 1;
	}
	if (!exit_hooked)
		exit_hooked = atexit(at_exit) == 0;
	/* realized inputs are boxes outside the clusters; an input another
	 * kernel computes is drawn in that kernel's cluster */
	for (i = 0; i < ninputs; i++)
		if (tg_lazy_base(inputs[i])->kind == TG_LZ_BUFFER)
			draw_node(tg_lazy_base(inputs[i]), 1);
	l = strdup(label);
	if (!l || TG_VEC_PUSH(&labels, l)) {
		free(l);
		body.failed = 1;  /* drawn wrong would mislead: drop it */
	}
	id = nkernels++;
	tg_strbuf_addf(&body, " subgraph cluster_%zu {\n  label=\"@K%zu@\"; "
	               "style=rounded; color=\"#808080\";\n", id, id);
	for (i = 0; i < nouts; i++)
		draw_node(outs[i], 0);
	for (i = 0; i < nfused; i++) {
		const tg_lazy *b = tg_lazy_base(fused[i]);
		size_t j = 0;

		while (j < ninputs && tg_lazy_base(inputs[j]) != b)
			j++;
		if (j == ninputs && b->kind != TG_LZ_BUFFER)
			draw_node(b, 0);
	}
	tg_strbuf_add(&body, " }\n");
	pthread_mutex_unlock(&gv_lock);
	return id + 1;
}

void tg_graphviz_ran(size_t graph, const char *dev, size_t run,
                     const char *name)
{
	char label[160];
	char *l;

	snprintf(label, sizeof label, "%s %zu %s", dev, run, name);
	pthread_mutex_lock(&gv_lock);
	/* the first run names it; a JIT replay runs it again */
	if (started && graph && graph <= labels.n &&
	    strstr(labels.v[graph - 1], " (not run)") && (l = strdup(label))) {
		free(labels.v[graph - 1]);
		labels.v[graph - 1] = l;
	}
	pthread_mutex_unlock(&gv_lock);
}

/* body with each "@K<n>@" replaced by cluster n's label. */
static void write_body(FILE *f)
{
	const char *p = body.s ? body.s : "", *k;
	char *end;

	while ((k = strstr(p, "@K"))) {
		unsigned long id = strtoul(k + 2, &end, 10);

		fwrite(p, 1, (size_t)(k - p), f);
		if (*end == '@' && id < labels.n) {
			fputs(labels.v[id], f);
			p = end + 1;
		} else {
			fputs("@K", f);
			p = k + 2;
		}
	}
	fputs(p, f);
}

/* dot -Tsvg in, its output written whole to `out` (a file of its own
 * would be half written when it fails or is killed); 0 when it ran and
 * succeeded, -1 when it failed, -2 when there is no `dot` on the PATH
 * (the .dot is still there). */
static int run_dot(const char *in, const char *out)
{
	char *argv[] = { "dot", "-Tsvg", (char *)in, NULL };
	posix_spawn_file_actions_t fa;
	tg_savefile *sf = tg_savefile_open(out);
	int status = 0, rc = -1;
	pid_t pid;

	if (!sf)
		return -1;
	if (posix_spawn_file_actions_init(&fa)) {
		tg_savefile_discard(sf);
		return -1;
	}
	if (posix_spawn_file_actions_adddup2(&fa,
	                                     fileno(tg_savefile_stream(sf)), 1))
		rc = -1;
	else if (posix_spawnp(&pid, "dot", &fa, NULL, argv, environ))
		rc = -2;
	else if (!tg_reap(pid, &status))
		rc = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -2
		     /* the shell's "not found" from a wrapper */
		     : WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		tg_savefile_discard(sf);
	else if (tg_savefile_commit(sf))
		rc = -1;
	return rc;
}

static int write_graph(const char *base)
{
	size_t n = strlen(base) + 5;
	char *dot = malloc(n), *svg = malloc(n);
	tg_savefile *sf = NULL;
	FILE *f;
	int rc = 0, drew;

	if (!dot || !svg) {
		rc = tg_error_oom("graph");
		goto out;
	}
	snprintf(dot, n, "%s.dot", base);
	snprintf(svg, n, "%s.svg", base);
	if (!(sf = tg_savefile_open(dot))) {
		rc = tg_error_prefix("graph");
		goto out;
	}
	f = tg_savefile_stream(sf);
	fprintf(f, "digraph tgcore {\n rankdir=LR;\n node [style=filled, "
	        "fontname=\"monospace\", fontsize=10];\n");
	write_body(f);
	fprintf(f, "%s}\n", edges.s ? edges.s : "");
	if (tg_savefile_commit(sf))
		rc = tg_error_prefix("graph");
	/* said at any DEBUG level: GRAPH=1 asked for these files */
	if (!rc && (drew = run_dot(dot, svg)) == 0)
		tg_debug_log(0, "GRAPH: %zu kernel%s written to %s and drawn to "
		             "%s", nkernels, nkernels == 1 ? "" : "s", dot, svg);
	else if (!rc)
		tg_debug_log(0, "GRAPH: %zu kernel%s written to %s; %s", nkernels,
		             nkernels == 1 ? "" : "s", dot, drew == -2
		             ? "not drawn: Graphviz's dot was not found (apt "
		               "install graphviz)"
		             : "not drawn: Graphviz's dot failed on it");
	else
		tg_debug_log(0, "GRAPH: %s", tg_last_error());
out:
	free(dot);
	free(svg);
	return rc;
}

int tg_graphviz_flush(void)
{
	char *base = NULL;
	int rc = 0;

	pthread_mutex_lock(&gv_lock);
	if (started && nkernels && !body.failed && !edges.failed) {
		base = tg_output_path(TG_KEY_GRAPHPATH, "net");
		rc = base ? write_graph(base) : TG_ENOMEM;
	}
	if (started) {
		tg_strbuf_release(&body);
		tg_strbuf_release(&edges);
	}
	tg_ptrmap_free(&drawn);
	for (size_t i = 0; i < labels.n; i++)
		free(labels.v[i]);
	TG_VEC_FREE(&labels);
	started = 0;
	nkernels = 0;
	pthread_mutex_unlock(&gv_lock);
	free(base);
	return rc;
}

/*
 * tg-conformance - does a backend plugin work?  Runs the plugin-contract
 * checks, an allocator and copy stress, the op checks, the kernel
 * counts and a random-opts fuzz (conformance_*.c) against one
 * device of one plugin, each case in a child process of its own
 * (util/child.c): a case that crashes or hangs is that case's failure,
 * with the signal and the step, and the run goes on.  The parent never loads the plugin.  Prints a report
 * (pass/fail per area, each failure with its message, the dtypes the
 * device refuses), optionally writes TAP or JUnit XML, and exits 1 on
 * any failure.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <tg/plugin.h>

#include "child.h"
#include "conformance.h"

struct options {
	const char *plugin, *device, *tap, *junit, *area;
	double timeout_s;
	long fuzz, seed;  /* random-opts sequences per program, first seed */
	int list;
};

struct result {
	const struct cf_case *c;
	enum cf_verdict v;
	char *message;
	double seconds;
};

static int usage(int rc)
{
	fprintf(rc ? stderr : stdout,
	        "usage: tg-conformance [--plugin FILE|NAME] [--device NAME[:N]] "
	        "[--area AREA]\n"
	        "          [--tap FILE] [--junit FILE] [--timeout SECONDS] "
	        "[--fuzz N] [--seed S] [--list]\n"
	        "          [-h|--help] [--version]\n"
	        "Checks a tgcore backend plugin: the plugin contract, memory "
	        "and copies,\nthe ops against plain C in double precision, "
	        "the kernel counts and kernels\nwith random opts against "
	        "NOOPT.  Each case runs in a child process.  Exits 1\nwhen "
	        "a case fails.\n"
	        "  -h, --help  print this and exit\n"
	        "  --version   print the version and exit\n");
	return rc;
}

static int parse(int argc, char **argv, struct options *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char **slot = !strcmp(a, "--plugin") ? &o->plugin
			: !strcmp(a, "--device") ? &o->device
			: !strcmp(a, "--tap") ? &o->tap
			: !strcmp(a, "--junit") ? &o->junit
			: !strcmp(a, "--area") ? &o->area : NULL;
		long *num = !strcmp(a, "--fuzz") ? &o->fuzz
			: !strcmp(a, "--seed") ? &o->seed : NULL;
		char *end;

		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return usage(0), 1;
		if (!strcmp(a, "--version")) {
			printf("tg-conformance (tgcore) %s, plugin ABI %d.%d\n",
			       PACKAGE_VERSION, TG_PLUGIN_ABI_MAJOR,
			       TG_PLUGIN_ABI_MINOR);
			return 1;
		}
		if (!strcmp(a, "--list")) {
			o->list = 1;
			continue;
		}

		if (!v || (!slot && !num && strcmp(a, "--timeout"))) {
			fprintf(stderr, "tg-conformance: %s: %s\n", a,
			        v ? "unknown option" : "needs a value");
			return usage(2), 2;
		}
		i++;
		if (slot) {
			*slot = v;
		} else if (num) {
			*num = strtol(v, &end, 10);
			if (*end || *num < 1 || *num > INT_MAX / 2) {
				fprintf(stderr, "tg-conformance: %s %s: want a "
				        "number from 1 to %d\n", a, v,
				        INT_MAX / 2);
				return 2;
			}
		} else {
			o->timeout_s = strtod(v, &end);
			if (*end || !(o->timeout_s > 0)) {
				fprintf(stderr, "tg-conformance: --timeout %s: "
				        "want seconds > 0\n", v);
				return 2;
			}
		}
	}
	return 0;
}

/* A plugin given as a file goes first on the search path, so that it is
 * the one loaded under its name. */
static int use_plugin_file(const char *plugin)
{
	char abs[PATH_MAX], *path;
	const char *old = getenv("TG_PLUGIN_PATH");
	size_t n;

	if (!strchr(plugin, '/'))
		return 0;
	if (!realpath(plugin, abs)) {
		fprintf(stderr, "tg-conformance: --plugin %s: no such file\n",
		        plugin);
		return 2;
	}
	n = strlen(abs) + (old ? strlen(old) : 0) + 2;
	if (!(path = malloc(n)))
		return 2;
	snprintf(path, n, "%s%s%s", abs, old && *old ? ":" : "",
	         old ? old : "");
	setenv("TG_PLUGIN_PATH", path, 1);
	free(path);
	return 0;
}

/* ------------------------------------------------------------- running */

struct job {
	struct cf_ctx ctx;
	const struct cf_case *k;
};

static int job_body(void *arg, int stage_fd)
{
	struct job *j = arg;
	enum cf_verdict v = CF_PASS;

	j->ctx.stage_fd = stage_fd;
	if (j->k->needs_device)
		v = cf_setup(&j->ctx);
	if (v == CF_PASS)
		v = j->k->run(&j->ctx);
	cf_release(&j->ctx);
	tg_shutdown();
	return (int)v;
}

static void run_case(const struct options *o, struct cf_shared *sh,
                     const struct cf_case *k, struct result *r)
{
	struct job j = { .k = k };
	struct tg_child_result res;
	char what[512];
	double t0 = tg_now_s();

	memset(sh->message, 0, sizeof sh->message);
	j.ctx.plugin = o->plugin;
	j.ctx.device = o->device;
	j.ctx.fuzz = o->fuzz;
	j.ctx.seed = o->seed;
	j.ctx.out = sh;
	fflush(NULL);
	r->c = k;
	if (tg_child_run(job_body, &j, o->timeout_s, &res) == 0) {
		r->v = res.value <= CF_SKIP ? (enum cf_verdict)res.value
		                            : CF_FAIL;
		r->message = strdup(sh->message);
	} else {
		tg_child_describe(&res, o->timeout_s, what, sizeof what);
		r->v = CF_FAIL;
		r->message = strdup(what);
	}
	r->seconds = tg_now_s() - t0;
}

/* The first line: the plugin and device the cases will use, found in
 * a child like every case (so nothing is loaded in this process), or
 * why none was. */
static void describe(const struct options *o, struct cf_shared *sh)
{
	static const struct cf_case k = { "setup", "describe", cf_describe,
	                                  0 };
	struct result r;

	run_case(o, sh, &k, &r);
	printf("tg-conformance: %s%s\n", r.v == CF_PASS ? "" : "no device: ",
	       r.message ? r.message : "out of memory");
	free(r.message);
}

/* ----------------------------------------------------------- reporting */

static const char *const verdict_names[] = { "pass", "FAIL", "skip" };

static void report(const struct result *rs, size_t n,
                   const struct cf_shared *sh)
{
	const char *area = NULL;
	size_t i, j, fails = 0;

	for (i = 0; i < n; i = j) {
		size_t counts[3] = { 0, 0, 0 };

		area = rs[i].c->area;
		for (j = i; j < n && !strcmp(rs[j].c->area, area); j++)
			counts[rs[j].v]++;
		printf("%-9s %zu passed, %zu failed, %zu skipped\n", area,
		       counts[CF_PASS], counts[CF_FAIL], counts[CF_SKIP]);
		for (size_t k = i; k < j; k++)
			if (rs[k].v != CF_PASS)
				printf("  %s %s/%s: %s\n", verdict_names[rs[k].v],
				       area, rs[k].c->name, rs[k].message);
		fails += counts[CF_FAIL];
	}
	for (int dt = 0; dt < TG_NDTYPES; dt++)
		if (sh->skipped[dt][0])
			printf("dtype %s skipped: %s\n",
			       tg_dtype_name((tg_dtype)dt), sh->skipped[dt]);
	printf("%s: %zu case%s, %zu failed\n", fails ? "FAIL" : "PASS", n,
	       n == 1 ? "" : "s", fails);
}

/* A report file, written whole (tg_savefile); NULL after saying why. */
static tg_savefile *open_report(const char *file)
{
	tg_savefile *sf = tg_savefile_open(file);

	if (!sf)
		fprintf(stderr, "tg-conformance: %s\n", tg_last_error());
	return sf;
}

static int close_report(tg_savefile *sf)
{
	if (!tg_savefile_commit(sf))
		return 0;
	fprintf(stderr, "tg-conformance: %s\n", tg_last_error());
	return -1;
}

static int write_tap(const char *file, const struct result *rs, size_t n)
{
	tg_savefile *sf = open_report(file);
	FILE *f = tg_savefile_stream(sf);

	if (!f)
		return -1;
	fprintf(f, "TAP version 13\n1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &rs[i];

		fprintf(f, "%sok %zu - %s/%s", r->v == CF_FAIL ? "not " : "",
		        i + 1, r->c->area, r->c->name);
		if (r->v == CF_SKIP)
			fprintf(f, " # SKIP %s", r->message);
		fprintf(f, "\n");
		if (r->v == CF_FAIL) {
			fprintf(f, "  ---\n  message: \"");
			for (const char *p = r->message; *p; p++)
				fprintf(f, *p == '"' || *p == '\\' ? "\\%c"
				        : "%c", *p);
			fprintf(f, "\"\n  ...\n");
		}
	}
	return close_report(sf);
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

static int write_junit(const char *file, const struct result *rs, size_t n,
                       const char *device)
{
	tg_savefile *sf = open_report(file);
	FILE *f = tg_savefile_stream(sf);
	size_t fails = 0, skips = 0;

	if (!f)
		return -1;
	for (size_t i = 0; i < n; i++) {
		fails += rs[i].v == CF_FAIL;
		skips += rs[i].v == CF_SKIP;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<testsuites>\n<testsuite name=\"tg-conformance ");
	xml_text(f, device);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
	        n, fails, skips);
	for (size_t i = 0; i < n; i++) {
		const struct result *r = &rs[i];

		fprintf(f, "  <testcase classname=\"%s\" name=\"%s\" "
		        "time=\"%.3f\"", r->c->area, r->c->name, r->seconds);
		if (r->v == CF_PASS) {
			fprintf(f, "/>\n");
			continue;
		}
		fprintf(f, ">\n    <%s message=\"",
		        r->v == CF_FAIL ? "failure" : "skipped");
		xml_text(f, r->message);
		fprintf(f, "\"/>\n  </testcase>\n");
	}
	fprintf(f, "</testsuite>\n</testsuites>\n");
	return close_report(sf);
}

int main(int argc, char **argv)
{
	struct options o = { .timeout_s = 120, .fuzz = 8, .seed = 1 };
	struct cf_shared *sh;
	struct result *rs;
	size_t i, n = 0;
	int rc = parse(argc, argv, &o), fails = 0;

	if (rc)
		return rc == 1 ? 0 : rc;
	if (o.list) {
		for (i = 0; i < cf_ncases; i++)
			printf("%s/%s\n", cf_cases[i].area, cf_cases[i].name);
		return 0;
	}
	if (o.plugin && (rc = use_plugin_file(o.plugin)))
		return rc;
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
	          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	rs = calloc(cf_ncases, sizeof *rs);
	if (sh == MAP_FAILED || !rs) {
		fprintf(stderr, "tg-conformance: out of memory\n");
		return 2;
	}
	memset(sh, 0, sizeof *sh);
	setvbuf(stdout, NULL, _IOLBF, 0);
	describe(&o, sh);
	for (i = 0; i < cf_ncases; i++) {
		if (o.area && strcmp(o.area, cf_cases[i].area))
			continue;
		run_case(&o, sh, &cf_cases[i], &rs[n]);
		fails += rs[n].v == CF_FAIL;
		n++;
	}
	if (!n) {
		fprintf(stderr, "tg-conformance: --area %s: no such area "
		        "(--list shows the cases)\n", o.area);
		return 2;
	}
	report(rs, n, sh);
	if ((o.tap && write_tap(o.tap, rs, n)) ||
	    (o.junit && write_junit(o.junit, rs, n, o.device ? o.device
	                            : o.plugin ? o.plugin : "default")))
		fails++;
	for (i = 0; i < n; i++)
		free(rs[i].message);
	free(rs);
	munmap(sh, sizeof *sh);
	return fails ? 1 : 0;
}

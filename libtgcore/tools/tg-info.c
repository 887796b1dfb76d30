/*
 * tg-info - what tgcore sees on this machine: the configuration files,
 * the plugin search path with where each entry came from, every plugin
 * file with its result, each probe, each device, and the default device
 * with the rule that chose it.  Exits 1 when no device is usable.
 *
 * Each plugin is first loaded, probed and its devices opened and closed
 * in a child process (plugin_isolate), so a driver that crashes or
 * hangs is listed with what happened ("crashed in probe (SIGSEGV)")
 * and the rest is still shown; --no-isolate loads them straight into
 * this process, as an application does.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <tg/plugin.h>

static void print_config(void)
{
	const char *debug = tg_config_get("DEBUG");
	const char *level = tg_config_get("CACHELEVEL");

	printf("config: DEBUG=%s, CACHELEVEL=%s\n", debug ? debug : "0",
	       level ? level : "2 (default)");
}

static void print_paths(void)
{
	size_t i, n = tg_plugin_path_count();
	const char *origin;

	printf("plugin search path:\n");
	for (i = 0; i < n; i++) {
		const char *p = tg_plugin_path_get(i, &origin);

		printf("  %s  (%s)\n", p, origin);
	}
	if (!n)
		printf("  (empty)\n");
}

static void print_mem(const char *label, unsigned long long bytes)
{
	if (bytes)
		printf(", %s %.1f GiB", label, (double)bytes / (1 << 30));
}

/* The dtypes a device computes, or those it lacks when that is
 * shorter: "      dtypes: all but float16". */
static void print_dtypes(uint32_t mask)
{
	int missing = 0;

	for (int dt = 0; dt < TG_NDTYPES; dt++)
		missing += !(mask & (1u << dt));
	printf("      dtypes: %s", missing == 0 ? "all"
	       : missing <= TG_NDTYPES / 2 ? "all but" : "");
	for (int dt = 0, first = 1; dt < TG_NDTYPES && missing; dt++)
		if (!!(mask & (1u << dt)) == (missing > TG_NDTYPES / 2)) {
			printf("%s%s", first ? " " : ", ",
			       tg_dtype_name((tg_dtype)dt));
			first = 0;
		}
	printf("\n");
}

static void print_devices(const tg_plugin_info *pi)
{
	char name[96];
	tg_dev_info di;
	tg_dev *dev;
	int i;

	for (i = 0; i < pi->ndevices; i++) {
		snprintf(name, sizeof name, i ? "%s:%d" : "%s", pi->name, i);
		if (!(dev = tg_dev_get(name)) || tg_dev_get_info(dev, &di)) {
			printf("    %s: cannot open: %s\n", name, tg_last_error());
			continue;
		}
		printf("    %s: %s [%s, %s kernels", di.name, di.description,
		       di.type, di.dialect);
		print_mem("memory", di.total_memory);
		print_mem("free", di.free_memory);
		if (di.has_local)
			printf(", work-group %zu", di.local_max_total);
		if (di.has_shared)
			printf(", shared %zu B", di.shared_max);
		printf("]\n");
		print_dtypes(di.dtype_mask);
	}
}

static void print_plugin(size_t i)
{
	tg_plugin_info pi;

	if (tg_plugin_get(i, &pi)) {
		printf("  ?: %s\n", tg_last_error());
		return;
	}
	printf("  %s\n", pi.file);
	if (pi.state != 0 || !pi.name) {
		printf("    %s: %s\n", tg_plugin_state_name(pi.state), pi.message);
		return;
	}
	printf("    %s %s (%s), ABI %d.%d: loaded, ", pi.name,
	       pi.version ? pi.version : "?", pi.vendor ? pi.vendor : "?",
	       pi.abi_major, pi.abi_minor);
	if (pi.ndevices > 0)
		printf("%d device%s\n", pi.ndevices, pi.ndevices > 1 ? "s" : "");
	else if (!strncmp(pi.probe_reason, "config: ", 8))  /* stops */
		printf("unusable, a setting is bad: %s\n", pi.probe_reason);
	else
		printf("present, no devices: %s\n", pi.probe_reason);
	print_devices(&pi);
}

static int usage(int rc)
{
	fprintf(rc ? stderr : stdout, "usage: tg-info [--no-isolate] [-h|--help] "
	        "[--version]\n"
	        "Shows what tgcore finds on this machine: the settings, the "
	        "plugin search path,\nevery plugin file with its result, the "
	        "devices, and the default device.\n"
	        "  --no-isolate  load and probe the plugins in this process, "
	        "not first in a\n                child process each\n"
	        "  -h, --help    print this and exit\n"
	        "  --version     print the version and exit\n"
	        "Set DEBUG=1 for a line per plugin decision; tg-info(1) lists "
	        "the variables.\nExit status: 0 when a device is usable, 1 "
	        "when none is or the configuration\nis invalid, 2 for a bad "
	        "argument.\n");
	return rc;
}

int main(int argc, char **argv)
{
	const char *name, *why;
	int isolate = 1;
	size_t i, n;

	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h"))
			return usage(0);
		if (!strcmp(argv[a], "--version")) {
			printf("tg-info (tgcore) %s, plugin ABI %d.%d\n",
			       PACKAGE_VERSION, TG_PLUGIN_ABI_MAJOR,
			       TG_PLUGIN_ABI_MINOR);
			return 0;
		}
		if (strcmp(argv[a], "--no-isolate"))
			return usage(2);
		isolate = 0;
	}
	/* Line by line, so that a plugin that crashes tg-info (with
	 * --no-isolate) leaves everything before it shown. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("tgcore %s, plugin ABI %d.%d\n", PACKAGE_VERSION,
	       TG_PLUGIN_ABI_MAJOR, TG_PLUGIN_ABI_MINOR);
	if (tg_init() || tg_config_set("plugin_isolate", isolate ? "1" : "0")) {
		printf("configuration error: %s\n", tg_last_error());
		return 1;
	}
	print_config();
	print_paths();
	n = tg_plugin_count();
	printf("plugins (%zu found%s):\n", n,
	       isolate ? ", each tried in a child process first" : "");
	for (i = 0; i < n; i++)
		print_plugin(i);
	printf("built in: DISK:path (a memory-mapped file; holds tensors, "
	       "runs no kernels)\n");
	name = tg_dev_default_name(&why);
	if (name)
		printf("default device: %s (%s)\n", name, why);
	else
		printf("default device: none: %s\n", tg_last_error());
	tg_shutdown();
	return name ? 0 : 1;
}

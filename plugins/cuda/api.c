#include "config.h"
/*
 * api.c - the CUDA driver and NVRTC, loaded with dlopen: which library,
 * every entry resolved up front (a missing one is a reason, never a
 * call through NULL), the driver's version checked, and error names.
 *
 * Libraries are loaded by soname (the dynamic linker's search, as the
 * OpenCL ICD loader loads drivers) or by the absolute path a config key
 * gives; RTLD_LOCAL keeps their symbols out of the process's namespace.
 * Each opened device holds its own references: dlopen counts them, so
 * the driver stays mapped while any device is open.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cuda.h"

/* Newest first: a new NVRTC still compiles for older architectures. */
static const char *const nvrtc_sonames[] = {
	"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
	"libnvrtc.so.11.1", "libnvrtc.so", NULL
};

const char *cu_config(const struct tg_host *host, const char *key)
{
	const char *v = host->config_get(host, key);

	return v != NULL && *v != '\0' ? v : NULL;
}

/* ------------------------------------------------------------------ */
/* The driver                                                          */
/* ------------------------------------------------------------------ */

#define CU_RESOLVE(name, sym, ret, params)                                  \
	if (missing == NULL &&                                              \
	    (*(void **)&drv->name = dlsym(drv->lib, sym)) == NULL)          \
		missing = sym;

/* An optional graph entry: its versioned symbol, else the one before
 * 12.0; the first missing one is remembered in no_graphs. */
#define CU_RESOLVE_GRAPH(name, sym, old, ret, params)                       \
	if ((*(void **)&drv->name = dlsym(drv->lib, sym)) == NULL &&        \
	    (*(void **)&drv->name = dlsym(drv->lib, old)) == NULL &&        \
	    drv->no_graphs == NULL)                                         \
		drv->no_graphs = sym;

static const char *driver_resolve(struct cu_driver *drv)
{
	const char *missing = NULL;

	CU_DRIVER_API(CU_RESOLVE)
	CU_GRAPH_API(CU_RESOLVE_GRAPH)
	return missing;
}

/* cuInit and the version check; the reason in why. */
static int driver_init(struct cu_driver *drv, char *why, size_t n)
{
	CUresult r = drv->cuInit(0);

	if (r == CUDA_ERROR_NO_DEVICE) {
		snprintf(why, n, "no CUDA devices (%s: cuInit: %s)", drv->path,
		         cu_err_name(drv, r));
		return TG_ENODEV;
	}
	if (r != CUDA_SUCCESS) {
		snprintf(why, n, "%s: cuInit: %s", drv->path,
		         cu_err_name(drv, r));
		return TG_ENODEV;
	}
	if ((r = drv->cuDriverGetVersion(&drv->version)) != CUDA_SUCCESS) {
		snprintf(why, n, "%s: cuDriverGetVersion: %s", drv->path,
		         cu_err_name(drv, r));
		return TG_ENODEV;
	}
	if (drv->version < CU_MIN_DRIVER) {
		snprintf(why, n, "the CUDA driver %d.%d (%s) is older than "
		         "the %d.%d this plugin needs", drv->version / 1000,
		         drv->version % 1000 / 10, drv->path,
		         CU_MIN_DRIVER / 1000, CU_MIN_DRIVER % 1000 / 10);
		return TG_ENODEV;
	}
	return 0;
}

int cu_driver_load(const struct tg_host *host, struct cu_driver *drv,
                   char *why, size_t n)
{
	const char *path = cu_config(host, "libcuda");
	const char *missing;
	int ret;

	memset(drv, 0, sizeof(*drv));
	if (path == NULL)
		path = "libcuda.so.1";
	snprintf(drv->path, sizeof(drv->path), "%s", path);
	if ((drv->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		const char *e = dlerror();
		snprintf(why, n, "%s not found (%s)", path, e ? e : "dlopen");
		return TG_ENODEV;
	}
	if ((missing = driver_resolve(drv)) != NULL) {
		snprintf(why, n, "%s has no %s: the driver is too old or not "
		         "NVIDIA's", path, missing);
		ret = TG_ENODEV;
	} else {
		ret = driver_init(drv, why, n);
	}
	if (ret != 0)
		cu_driver_unload(drv);
	return ret;
}

void cu_driver_unload(struct cu_driver *drv)
{
	if (drv->lib != NULL)
		dlclose(drv->lib);
	drv->lib = NULL;
}

const char *cu_err_name(const struct cu_driver *drv, CUresult r)
{
	static _Thread_local char buf[192];
	const char *name = NULL, *text = NULL;

	if (drv->cuGetErrorName == NULL ||
	    drv->cuGetErrorName(r, &name) != CUDA_SUCCESS || name == NULL) {
		snprintf(buf, sizeof(buf), "CUDA error %d", r);
		return buf;
	}
	if (drv->cuGetErrorString(r, &text) != CUDA_SUCCESS || text == NULL)
		text = "";
	snprintf(buf, sizeof(buf), *text ? "%s (%s)" : "%s", name, text);
	return buf;
}

int cu_status(CUresult r)
{
	return r == CUDA_ERROR_OUT_OF_MEMORY ? TG_ENOMEM : TG_ERUNTIME;
}

/* ------------------------------------------------------------------ */
/* NVRTC                                                               */
/* ------------------------------------------------------------------ */

static const char *nvrtc_resolve(struct cu_nvrtc *rtc)
{
	const char *missing = NULL;
	struct cu_nvrtc *drv = rtc; /* CU_RESOLVE's name for the table */

	NVRTC_API(CU_RESOLVE)
	return missing;
}

/* dlopen's first success of the candidates into rtc. */
static int nvrtc_open_one(struct cu_nvrtc *rtc, const char *path)
{
	if ((rtc->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
		return -1;
	snprintf(rtc->path, sizeof(rtc->path), "%s", path);
	return 0;
}

/* The configured file, else the sonames, else under [cuda] path. */
static int nvrtc_find(const struct tg_host *host, struct cu_nvrtc *rtc,
                      char *why, size_t n)
{
	const char *path = cu_config(host, "nvrtc");
	const char *home = cu_config(host, "path");
	char buf[CU_STR_MAX + 32];

	if (path != NULL) {
		if (nvrtc_open_one(rtc, path) == 0)
			return 0;
		snprintf(why, n, "NVRTC %s (the nvrtc setting) not found: %s",
		         path, dlerror());
		return TG_ENODEV;
	}
	for (size_t i = 0; nvrtc_sonames[i] != NULL; i++)
		if (nvrtc_open_one(rtc, nvrtc_sonames[i]) == 0)
			return 0;
	for (int i = 0; home != NULL && i < 2; i++) {
		snprintf(buf, sizeof(buf), "%s/%s/libnvrtc.so", home,
		         i == 0 ? "lib64" : "lib");
		if (nvrtc_open_one(rtc, buf) == 0)
			return 0;
	}
	snprintf(why, n, "NVRTC not found (tried libnvrtc.so.13 .. "
	         "libnvrtc.so%s%s): install the CUDA runtime compiler or set "
	         "[cuda] nvrtc or path", home ? " and under " : "",
	         home ? home : "");
	return TG_ENODEV;
}

int cu_nvrtc_load(const struct tg_host *host, struct cu_nvrtc *rtc,
                  char *why, size_t n)
{
	const char *missing;
	int ret;

	memset(rtc, 0, sizeof(*rtc));
	if ((ret = nvrtc_find(host, rtc, why, n)) != 0)
		return ret;
	if ((missing = nvrtc_resolve(rtc)) != NULL) {
		snprintf(why, n, "%s has no %s: NVRTC 11.1 or newer is needed",
		         rtc->path, missing);
		ret = TG_ENODEV;
	} else if (rtc->nvrtcVersion(&rtc->major, &rtc->minor) !=
	           NVRTC_SUCCESS) {
		snprintf(why, n, "%s: nvrtcVersion failed", rtc->path);
		ret = TG_ENODEV;
	}
	if (ret != 0)
		cu_nvrtc_unload(rtc);
	return ret;
}

void cu_nvrtc_unload(struct cu_nvrtc *rtc)
{
	if (rtc->lib != NULL)
		dlclose(rtc->lib);
	rtc->lib = NULL;
}

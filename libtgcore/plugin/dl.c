/*
 * dl.c - the libltdl shim: the one file that talks to the module loader.
 *
 * libltdl is initialized once per process (lt_dlinit is reference
 * counted; we never call lt_dlexit, because a plugin whose code is still
 * mapped after tg_shutdown may be referenced by leak reports).  Modules
 * are opened with local symbol scope, so two plugins that bundle
 * different copies of a library (two LLVMs, say) cannot clash.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <ltdl.h>

#include "plugin/registry.h"
#include "core.h"

struct tg_dl {
	lt_dlhandle handle;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_failed;

static void init(void)
{
	init_failed = lt_dlinit() != 0;
}

/* libltdl's last message, copied (it is only valid until the next call).
 * libltdl says "file not found" for every file the system loader
 * rejects; when the file exists, ask the system loader for its own
 * reason ("invalid ELF header", "undefined symbol: x"). */
static char *copy_error(const char *path, int exact)
{
	const char *e = lt_dlerror();
	char *so = path && !exact ? malloc(strlen(path) + 4) : NULL;
	char *msg = NULL;
	void *h;

	if (so)
		path = strcat(strcpy(so, path), ".so");
	if (path && tg_is_file(path)) {
		dlerror();
		if ((h = dlopen(path, RTLD_LAZY | RTLD_LOCAL)))
			dlclose(h);
		else
			msg = strdup(dlerror());
	}
	free(so);
	return msg ? msg : strdup(e ? e : "unknown libltdl error");
}

tg_dl *tg_dl_open(const char *path, int exact, char **err)
{
	lt_dladvise advise;
	lt_dlhandle h = NULL;
	tg_dl *dl;

	*err = NULL;
	pthread_once(&init_once, init);
	if (init_failed || lt_dladvise_init(&advise)) {
		*err = copy_error(NULL, exact);
		return NULL;
	}
	if (!lt_dladvise_local(&advise) &&
	    (exact || !lt_dladvise_ext(&advise)))
		h = lt_dlopenadvise(path, advise);
	if (!h)
		*err = copy_error(path, exact);
	lt_dladvise_destroy(&advise);
	if (!h)
		return NULL;
	dl = malloc(sizeof *dl);
	if (!dl) {
		lt_dlclose(h);
		return NULL;  /* *err NULL: out of memory */
	}
	dl->handle = h;
	return dl;
}

void *tg_dl_sym(tg_dl *dl, const char *name)
{
	return lt_dlsym(dl->handle, name);
}

void tg_dl_close(tg_dl *dl)
{
	const char *keep = tg_getenv("TG_PLUGIN_NO_UNLOAD");

	if (!dl)
		return;
	if (!keep || !strcmp(keep, "0"))
		lt_dlclose(dl->handle);
	free(dl);
}

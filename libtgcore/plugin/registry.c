/*
 * registry.c - finding, loading and vetting plugins.
 *
 * The search path is $TG_PLUGIN_PATH, then the config's plugin_path, then
 * the installed plugin directory (unless default_plugin_path = no), or
 * instead of it the plugins/<name> directories of the build tree named by
 * $TG_PLUGIN_BUILD_TREE (which `make check` sets: nothing about the build
 * directory is compiled in).  A libtgcore that runs uninstalled, loaded
 * from a build tree's libtgcore/.libs beside a libtool archive that says
 * installed=no (the libtool wrapper of a program in the build tree sets
 * that up), takes its own build tree the same way, so the README's
 * `examples/fashion_mnist/fashion_mnist` finds the plugins built with
 * it; an installed library never has that archive.  Every entry is
 * absolute: a relative one is refused, never resolved against the
 * current directory.  In a directory
 * every *.so and *.la is a candidate, sorted by name because readdir
 * order is random; one that TG_PLUGINS_DISABLE names is never loaded.
 * A candidate that fails any check is kept as a REFUSED record with the
 * reason, so tg-info can explain it; it never takes the process down.
 *
 * With plugin_isolate (tg-info's default), each candidate is first
 * loaded, probed and its devices opened and closed in a child process
 * (util/child.c); one whose child crashes, exits or hangs is refused
 * with that reason and never loaded here.  The trials run during the
 * scan, before this process probes anything, so no child inherits a
 * driver's state.
 */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugin/registry.h"
#include "core.h"
#include "util/child.h"

struct path_entry {
	char *path;
	const char *origin;  /* static text */
};

static TG_VEC(struct path_entry) paths;
static TG_VEC(tg_plugin_rec *) recs;
static int scanned;

/* ---------------------------------------------------------- search path */

static int add_path(const char *p, size_t n, const char *origin)
{
	struct path_entry e = { strndup(p, n), origin };

	if (!e.path || TG_VEC_PUSH(&paths, e)) {
		free(e.path);
		return tg_error_oom("plugin search path");
	}
	return 0;
}

/* Appends the entries of a colon-separated list. */
static int add_path_list(const char *list, const char *origin)
{
	const char *p = list, *colon;
	int rc = 0;

	while (list && *p && !rc) {
		colon = strchr(p, ':');
		if (!colon)
			colon = p + strlen(p);
		if (colon > p)
			rc = add_path(p, (size_t)(colon - p), origin);
		p = *colon ? colon + 1 : colon;
	}
	return rc;
}

static int is_subdir(const struct dirent *e)
{
	return e->d_name[0] != '.' && e->d_type == DT_DIR;
}

/* The plugins/<name> directories of the build tree at `top`, in name
 * order: what `make check` uses instead of the installed directory, so
 * the two never mix. */
static int add_build_tree(const char *top, const char *origin)
{
	struct dirent **ents;
	char *dir = tg_path_join(top, "plugins"), *sub;
	int n = dir ? scandir(dir, &ents, is_subdir, alphasort) : -1, i;
	int rc = dir ? 0 : tg_error_oom("plugin search path");

	for (i = 0; i < n; i++) {
		sub = rc ? NULL : tg_path_join(dir, ents[i]->d_name);
		if (!rc)
			rc = sub ? add_path(sub, strlen(sub), origin)
			         : tg_error_oom("plugin search path");
		free(sub);
		free(ents[i]);
	}
	free(n >= 0 ? ents : NULL);
	free(dir);
	return rc;
}

/* Whether the libtool archive `la` has the line `line` (libtool writes
 * installed=no in the build tree and installed=yes when installing;
 * dlname='' for a static convenience archive, which is no module). */
static int la_has_line(const char *la, const char *line)
{
	char buf[256];
	FILE *f = tg_is_file(la) ? fopen(la, "r") : NULL;
	size_t n = strlen(line);
	int found = 0;

	while (f && !found && fgets(buf, sizeof buf, f))
		found = !strncmp(buf, line, n) &&
		        (buf[n] == '\n' || buf[n] == '\0');
	if (f)
		fclose(f);
	return found;
}

/* The top of the build tree this libtgcore was loaded from, when it runs
 * uninstalled (<top>/libtgcore/.libs/libtgcore.so.N next to
 * <top>/libtgcore/libtgcore.la saying installed=no), as a new string;
 * else NULL.  Not in secure mode, where only the installed directory
 * counts.  The core linked statically into a program (the test suites)
 * finds no archive and keeps the installed directory. */
static char *uninstalled_top(void)
{
	Dl_info info;
	char *top = NULL, *la = NULL, *plugins = NULL;
	const char *libs;

	if (tg_secure_mode() || !dladdr((void *)uninstalled_top, &info) ||
	    !info.dli_fname || info.dli_fname[0] != '/')
		return NULL;
	libs = strstr(info.dli_fname, "/libtgcore/.libs/");
	while (libs && strstr(libs + 1, "/libtgcore/.libs/"))
		libs = strstr(libs + 1, "/libtgcore/.libs/");
	if (!libs || libs == info.dli_fname ||
	    strchr(libs + strlen("/libtgcore/.libs/"), '/'))
		return NULL;
	top = strndup(info.dli_fname, (size_t)(libs - info.dli_fname));
	la = top ? tg_path_join(top, "libtgcore/libtgcore.la") : NULL;
	plugins = top ? tg_path_join(top, "plugins") : NULL;
	if (!la || !plugins || !la_has_line(la, "installed=no") ||
	    !tg_is_dir(plugins)) {
		free(top);
		top = NULL;
	}
	free(la);
	free(plugins);
	return top;
}

static int build_path(void)
{
	char *own_tree;
	const char *build_tree = tg_getenv("TG_PLUGIN_BUILD_TREE");
	int rc = add_path_list(tg_getenv("TG_PLUGIN_PATH"), "TG_PLUGIN_PATH");

	if (!rc)
		rc = add_path_list(tg_setting_str(TG_KEY_PLUGIN_PATH),
		                   "config");
	if (rc || !tg_setting_int(TG_KEY_DEFAULT_PLUGIN_PATH))
		return rc;
	if (build_tree && build_tree[0] == '/')
		return add_build_tree(build_tree, "build tree");
	if (build_tree && build_tree[0])  /* refused when scanned */
		return add_path(build_tree, strlen(build_tree),
		                "TG_PLUGIN_BUILD_TREE");
	own_tree = uninstalled_top();
	if (own_tree) {
		rc = add_build_tree(own_tree, "build tree of the "
		                    "uninstalled libtgcore");
		free(own_tree);
		return rc;
	}
	return add_path(TG_PLUGINDIR, strlen(TG_PLUGINDIR), "default");
}

size_t tg_registry_path_count(void)
{
	return paths.n;
}

const char *tg_registry_path(size_t i, const char **origin)
{
	*origin = i < paths.n ? paths.v[i].origin : NULL;
	return i < paths.n ? paths.v[i].path : NULL;
}

char *tg_registry_path_summary(void)
{
	tg_strbuf sb;
	size_t i;

	tg_strbuf_init(&sb);
	for (i = 0; i < paths.n; i++)
		tg_strbuf_addf(&sb, "%s%s%s", i ? ", " : "", paths.v[i].path,
		               tg_is_dir(paths.v[i].path) ||
		               tg_is_file(paths.v[i].path) ? "" : " (missing)");
	if (!paths.n)
		tg_strbuf_add(&sb, "nothing (the search path is empty)");
	return tg_strbuf_finish(&sb);
}

/* ------------------------------------------------------------- records */

static void rec_free(tg_plugin_rec *r)
{
	if (!r)
		return;
	if (r->desc && r->desc->struct_size >=
	    TG_STRUCT_SIZE(struct tg_plugin, unload) && r->desc->unload)
		r->desc->unload(&r->host);
	tg_dl_close(r->dl);
	free(r->file);
	free(r->origin);
	free(r->message);
	free(r->last_log);
	free(r->section);
	free(r->bad_config);
	free(r);
}

/* Puts `r` in state `st` (not loaded) with a formatted reason and
 * unloads its module. */
static void set_state(tg_plugin_rec *r, tg_plugin_state st,
                      const char *fmt, ...) TG_PRINTF(3, 4);
static void set_state(tg_plugin_rec *r, tg_plugin_state st,
                      const char *fmt, ...)
{
	char msg[TG_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	free(r->message);
	r->message = strdup(msg);  /* NULL on OOM reads as "" */
	r->state = st;
	r->desc = NULL;
	tg_dl_close(r->dl);
	r->dl = NULL;
	tg_debug_log(1, "plugin %s: %s", r->file, msg);
}

/* ---------------------------------------------------------- validation */

static int valid_name(const char *s)
{
	if (!s || !*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return 0;
	return 1;
}

/* Checks a descriptor; returns NULL or the reason (static text). */
static const char *check_desc(const struct tg_plugin *d)
{
	if (d->struct_size < TG_STRUCT_SIZE(struct tg_plugin, open))
		return "descriptor too small";
	if (!valid_name(d->name))
		return "name must be non-empty upper-case letters, digits or _";
	if (!d->probe)
		return "required entry 'probe' is NULL";
	if (!d->open)
		return "required entry 'open' is NULL";
	return NULL;
}

/* The glob of TG_PLUGINS_DISABLE / plugins_disable that matches the
 * module `file` by its name, with or without the extension (the
 * plugin's name is not known before its entry runs, and a disabled
 * plugin is never loaded); copies it into `glob`, or returns 0. */
static int disabled(const char *file, char *glob, size_t cap)
{
	const char *list = tg_setting_str(TG_KEY_PLUGINS_DISABLE);
	const char *base = strrchr(file, '/'), *dot;
	char stem[256];
	size_t n;

	base = base ? base + 1 : file;
	dot = strrchr(base, '.');
	n = dot && dot > base ? (size_t)(dot - base) : strlen(base);
	snprintf(stem, sizeof stem, "%.*s", (int)n, base);
	while (list && *list) {
		n = strcspn(list, ", ");
		if (n && n < cap) {
			memcpy(glob, list, n);
			glob[n] = '\0';
			if (!fnmatch(glob, stem, FNM_CASEFOLD) ||
			    !fnmatch(glob, base, FNM_CASEFOLD))
				return 1;
		}
		list += n + (list[n] != '\0');
	}
	return 0;
}

static tg_plugin_rec *find_loaded(const char *name)
{
	size_t i;
	const char *const *a;

	for (i = 0; i < recs.n; i++) {
		const struct tg_plugin *d = recs.v[i]->desc;

		if (!d || recs.v[i]->state != TG_PLUGIN_LOADED)
			continue;
		if (tg_streq_ci(d->name, name))
			return recs.v[i];
		for (a = d->aliases; a && *a; a++)
			if (tg_streq_ci(*a, name))
				return recs.v[i];
	}
	return NULL;
}

/* Version and name checks after the entry returned a descriptor;
 * returns 0 or the state to refuse with, the reason in `why`. */
static int vet(const struct tg_plugin *d, char *why, size_t n)
{
	const char *bad = check_desc(d);
	tg_plugin_rec *other;

	if (d->struct_size >= TG_STRUCT_SIZE(struct tg_plugin, abi_minor) &&
	    (d->abi_major != TG_PLUGIN_ABI_MAJOR ||
	     d->abi_minor < TG_PLUGIN_ABI_MIN_MINOR))
		snprintf(why, n, "built for plugin ABI %d.%d, this tgcore %s "
		         "accepts %d.%d to %d.x: rebuild the plugin against "
		         "this tgcore's tg/plugin.h", d->abi_major,
		         d->abi_minor, PACKAGE_VERSION, TG_PLUGIN_ABI_MAJOR,
		         TG_PLUGIN_ABI_MIN_MINOR, TG_PLUGIN_ABI_MAJOR);
	else if (bad)
		snprintf(why, n, "invalid descriptor (struct_size %zu, need at "
		         "least %zu): %s", d->struct_size,
		         TG_STRUCT_SIZE(struct tg_plugin, open), bad);
	else if ((other = find_loaded(d->name)))
		return snprintf(why, n, "%s shadowed by %s", d->name,
		                other->file), TG_PLUGIN_SHADOWED;
	else
		return 0;
	return TG_PLUGIN_REFUSED;
}

static char *lower_dup(const char *s)
{
	char *d = strdup(s), *p;

	for (p = d; p && *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return d;
}

/* Loads a candidate into `r`, leaving the reason when it fails.  Only
 * running out of memory is an error (TG_ENOMEM): it says nothing about
 * the plugin, which must not stay refused for it. */
static int load(tg_plugin_rec *r, const char *open_path, int exact)
{
	tg_plugin_entry_fn entry;
	const struct tg_plugin *d;
	char *err = NULL, why[TG_ERROR_MAX];
	int st;

	if (!(r->dl = tg_dl_open(open_path, exact, &err))) {
		if (!err)
			return tg_error_oom("plugin load");
		set_state(r, TG_PLUGIN_REFUSED, "cannot load: %s (is it a "
		          "shared object for this machine? check its "
		          "dependencies with ldd)", err);
		free(err);
	} else if (!(*(void **)&entry = tg_dl_sym(r->dl,
	                                          TG_PLUGIN_ENTRY_SYMBOL))) {
		set_state(r, TG_PLUGIN_REFUSED, "not a tgcore plugin (no %s "
		          "symbol)", TG_PLUGIN_ENTRY_SYMBOL);
	} else if (tg_host_init(&r->host, r), !(d = entry(&r->host))) {
		set_state(r, TG_PLUGIN_REFUSED, "the plugin refused to load: "
		          "%s", r->last_log ? r->last_log : "(no reason given)");
	} else if ((st = vet(d, why, sizeof why))) {
		set_state(r, (tg_plugin_state)st, "%s", why);
	} else {
		r->desc = d;  /* rec_free unloads it from here on */
		r->state = TG_PLUGIN_LOADED;
		if (!(r->section = lower_dup(d->name)))
			return tg_error_oom("plugin load");
	}
	return 0;
}

/* -------------------------------------------------------------- trials */

struct trial {
	const char *file, *open_path;
	int exact;
};

/* The child: every step a plugin takes in a process, each announced so
 * that a crash is placed.  A plugin that refuses stops the trial; the
 * real load then says why. */
static int trial_body(void *arg, int stage_fd)
{
	const struct trial *t = arg;
	tg_plugin_rec r = { .file = (char *)t->file };
	struct tg_device *dev;
	char stage[80];
	int i, n;

	r.probe.ndevices = -1;
	tg_child_stage(stage_fd, "load");
	if (load(&r, t->open_path, t->exact) || r.state != TG_PLUGIN_LOADED)
		return 0;
	tg_child_stage(stage_fd, "probe");
	n = tg_registry_probe(&r);
	for (i = 0; i < n; i++) {
		snprintf(stage, sizeof stage, i ? "open %s:%d" : "open %s",
		         r.desc->name, i);
		tg_child_stage(stage_fd, stage);
		dev = NULL;
		if (r.desc->open(&r.host, i, &dev) == 0 &&
		    tg_device_closable(dev)) {
			snprintf(stage, sizeof stage, "close %s:%d",
			         r.desc->name, i);
			tg_child_stage(stage_fd, stage);
			dev->close(dev);
		}
	}
	return 0;
}

/* Tries the candidate in a child; returns 0 when the child came back,
 * else refuses `r` with what happened to it. */
static int trial(tg_plugin_rec *r, const char *open_path, int exact)
{
	struct trial t = { r->file, open_path, exact };
	struct tg_child_result res;
	double limit = (double)tg_setting_int(TG_KEY_PLUGIN_ISOLATE_TIMEOUT);
	char what[256];

	/* A plugin that calls exit() in the child would write out the
	 * buffered output of this process a second time. */
	fflush(NULL);
	if (tg_child_run(trial_body, &t, limit, &res) == 0)
		return 0;
	if (res.end == TG_CHILD_FAILED) {  /* no verdict: load as usual */
		tg_debug_log(1, "plugin_isolate: %s not tried: %s", r->file,
		             res.detail);
		return 0;
	}
	tg_child_describe(&res, limit, what, sizeof what);
	set_state(r, TG_PLUGIN_REFUSED, "%s when tried in a child process "
	          "(plugin_isolate); not loaded", what);
	return -1;
}

/* Whether the code of candidate `file` could come from another user:
 * the file, its directory and, for a libtool archive, the module it
 * names in .libs must be owned by this user or root and not writable
 * by others (as the compile cache's directory must be private).  0, or
 * -1 with the reason in `why`. */
static int untrusted(const char *file, char *why, size_t n)
{
	const char *slash = strrchr(file, '/'), *ext;
	char so[PATH_MAX];

	if (tg_trusted_path(file, why, n) || tg_trusted_parent(file, why, n))
		return -1;
	ext = strrchr(file, '.');
	if (!slash || !ext || strcmp(ext, ".la") ||
	    snprintf(so, sizeof so, "%.*s/.libs/%.*s.so",
	             (int)(slash - file), file, (int)(ext - slash - 1),
	             slash + 1) >= (int)sizeof so || !tg_is_file(so))
		return 0;
	return tg_trusted_path(so, why, n) || tg_trusted_parent(so, why, n)
	       ? -1 : 0;
}

/* Records candidate `file` (from `origin`) and loads it from
 * `open_path`, unless `refusal` (a reason) or a disabling glob keeps it
 * unloaded. */
static int add_candidate(const char *file, const char *open_path,
                         int exact, const char *origin, const char *refusal)
{
	tg_plugin_rec *r = calloc(1, sizeof *r);
	char glob[128], why[TG_ERROR_MAX];

	if (!r || !(r->file = strdup(file)) || !(r->origin = strdup(origin)) ||
	    TG_VEC_PUSH(&recs, r)) {
		rec_free(r);
		return tg_error_oom("plugin scan");
	}
	r->probe.ndevices = -1;
	if (refusal)
		set_state(r, TG_PLUGIN_REFUSED, "%s (listed in %s)", refusal,
		          origin);
	else if (disabled(file, glob, sizeof glob))
		set_state(r, TG_PLUGIN_DISABLED, "disabled by '%s' in "
		          "TG_PLUGINS_DISABLE or plugins_disable (not loaded)",
		          glob);
	else if (untrusted(file, why, sizeof why))
		set_state(r, TG_PLUGIN_REFUSED, "%s: another user could "
		          "replace its code (not loaded)", why);
	else if (!tg_setting_int(TG_KEY_PLUGIN_ISOLATE) ||
	         trial(r, open_path, exact) == 0)
		return load(r, open_path, exact);
	return 0;
}

/* ------------------------------------------------------------ scanning */

static int is_module(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] != '.' && n > 3 &&
	       (!strcmp(e->d_name + n - 3, ".so") ||
	        !strcmp(e->d_name + n - 3, ".la"));
}

/* Adds each module of `dir` once: "x.la" and "x.so" are one plugin,
 * opened by stem so libltdl prefers the .la of a build tree.  A static
 * archive's .la (plugins/common's convenience libraries) is skipped. */
static int scan_dir(const char *dir, const char *origin)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, is_module, alphasort), i, rc = 0;

	for (i = 0; i < n; i++) {
		char *file = tg_path_join(dir, ents[i]->d_name);
		size_t len = strlen(ents[i]->d_name) - 3;
		int dup = i > 0 && !strncmp(ents[i - 1]->d_name,
		                           ents[i]->d_name, len + 1);

		if (!file)
			rc = tg_error_oom("plugin scan");
		else if (!dup && !rc && !(!strcmp(file + strlen(file) - 3, ".la")
		                          && la_has_line(file, "dlname=''"))) {
			char *stem = strndup(file, strlen(file) - 3);

			/* an installed x.la beside x.so: named by the .so
			 * users see (libltdl still reads the .la) */
			if (stem && i + 1 < n && !strncmp(ents[i + 1]->d_name,
			    ents[i]->d_name, len + 1) &&
			    !strcmp(ents[i + 1]->d_name + len, ".so"))
				memcpy(file + strlen(file) - 3, ".so", 3);
			rc = stem ? add_candidate(file, stem, 0, origin, NULL)
			          : tg_error_oom("plugin scan");
			free(stem);
		}
		free(file);
	}
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(n >= 0 ? ents : NULL);
	return rc;
}

static int scan_entry(const struct path_entry *e)
{
	char why[TG_ERROR_MAX];

	if (e->path[0] != '/') {  /* never against the current directory */
		snprintf(why, sizeof why, "relative path '%s': plugin path "
		         "entries must be absolute", e->path);
		return add_candidate(e->path, NULL, 1, e->origin, why);
	}
	if (tg_is_dir(e->path))
		return scan_dir(e->path, e->origin);
	if (tg_is_file(e->path))
		return add_candidate(e->path, e->path, 1, e->origin, NULL);
	if (!strcmp(e->origin, "TG_PLUGIN_PATH") ||
	    !strcmp(e->origin, "config")) {  /* named explicitly */
		struct stat st;

		if (stat(e->path, &st) == 0)
			snprintf(why, sizeof why, "%s, neither a plugin file "
			         "nor a directory", tg_file_kind(st.st_mode));
		else
			snprintf(why, sizeof why, "%s", errno == ENOENT
			         ? "no such file or directory"
			         : strerror(errno));
		return add_candidate(e->path, NULL, 1, e->origin, why);
	}
	return 0;
}

/* Public (tg.h); here, below select.c, which names states too. */
const char *tg_plugin_state_name(tg_plugin_state state)
{
	static const char *const names[] = {
		[TG_PLUGIN_LOADED] = "loaded",
		[TG_PLUGIN_REFUSED] = "refused",
		[TG_PLUGIN_SHADOWED] = "shadowed",
		[TG_PLUGIN_DISABLED] = "disabled",
	};

	return (unsigned)state < TG_ARRAY_LEN(names) ? names[state]
	                                             : "unknown";
}

int tg_registry_scan(void)
{
	size_t i;
	int rc;

	if (scanned)
		return 0;
	rc = build_path();
	for (i = 0; !rc && i < paths.n; i++)
		rc = scan_entry(&paths.v[i]);
	scanned = rc == 0;
	if (rc)  /* the next scan starts from nothing, not from half */
		tg_registry_unload();
	return rc;
}

size_t tg_registry_count(void)
{
	return recs.n;
}

tg_plugin_rec *tg_registry_at(size_t i)
{
	return i < recs.n ? recs.v[i] : NULL;
}

tg_plugin_rec *tg_registry_find(const char *name)
{
	return find_loaded(name);
}

int tg_registry_probe(tg_plugin_rec *r)
{
	int rc;

	if (r->probed)
		return r->probe.ndevices;
	r->probe = (struct tg_probe){
		.struct_size = TG_STRUCT_SIZE(struct tg_probe, types),
	};
	tg_clear_error();
	rc = r->desc->probe(&r->host, &r->probe);
	r->probe.reason[sizeof r->probe.reason - 1] = '\0';
	if (rc == TG_ECONFIG && !(r->bad_config = strdup(tg_last_error())))
		rc = tg_error_oom("plugin probe");
	if (rc == TG_ECONFIG) {
		snprintf(r->probe.reason, sizeof r->probe.reason, "%s",
		         r->bad_config);
		r->probe.ndevices = 0;
	} else if (rc < 0 || r->probe.ndevices < 0) {
		snprintf(r->probe.reason, sizeof r->probe.reason,
		         "probe failed: %s", tg_last_error());
		r->probe.ndevices = 0;
	}
	if (r->probe.ndevices == 0 && !r->probe.reason[0])
		snprintf(r->probe.reason, sizeof r->probe.reason,
		         "the probe found no devices and gave no reason");
	r->probed = 1;
	return r->probe.ndevices;
}

int tg_registry_device_type(const tg_plugin_rec *r, int index)
{
	int n = r->probe.ntypes;

	if (n > r->probe.ndevices)
		n = r->probe.ndevices;
	if (n > TG_PROBE_MAX_TYPES)
		n = TG_PROBE_MAX_TYPES;
	if (index >= 0 && index < n)
		return r->probe.types[index];
	return index == 0 && r->probe.ndevices > 0 ? r->probe.type : -1;
}

void tg_registry_unload(void)
{
	size_t i;

	for (i = recs.n; i-- > 0;)
		rec_free(recs.v[i]);
	for (i = 0; i < paths.n; i++)
		free(paths.v[i].path);
	TG_VEC_FREE(&recs);
	TG_VEC_FREE(&paths);
	scanned = 0;
}

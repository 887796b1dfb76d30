/*
 * select.c - device names and the choice of the default device.
 *
 * An explicit request (DEVICE=, a CPU=1-style flag) fails loudly with
 * everything needed to fix it; the config's list and auto mode skip
 * unusable devices quietly and only fail when nothing at all is usable,
 * listing every reason (PLUGINS.md section 5).  A plugin setting that
 * cannot be used (TG_ECONFIG from the probe or from open: [cpu]
 * threads = abc) is the exception: every mode fails with it, so that a
 * typo never moves the program to another device.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "device/device.h"

/* Flags tinygrad users know, checked even when no plugin provides them
 * so that CUDA=1 without a CUDA plugin is an error, not silence. */
static const char *const known_flags[] = {
	"CPU", "CLANG", "OPENCL", "GPU", "VULKAN", "CUDA", "METAL", "AMD",
	"NV", "HIP",
};

static struct tg_dev *default_dev;
static char default_why[512];

/* ------------------------------------------------------------- names */

int tg_devname_parse(const char *name, const char *what, tg_devname *out)
{
	char base[64], *paths;
	const char *colon = strchr(name, ':');
	size_t n = colon ? (size_t)(colon - name) : strlen(name);
	long idx = 0;

	if (n == 4 && !strncasecmp(name, "DISK", 4))
		return tg_error(TG_EINVAL, "%s: DISK holds files and runs no "
		                "kernels, so it cannot compute; open it with "
		                "tg_dev_get(\"DISK:path\") and move tensors with "
		                "tg_to", what);
	if (!n || n >= sizeof base ||
	    (colon && (tg_parse_long(colon + 1, &idx) || idx < 0 ||
	               idx > 4096 || !isdigit((unsigned char)colon[1]))))
		return tg_error(TG_EINVAL, "%s: bad device name '%s' (expected "
		                "NAME or NAME:N, e.g. CPU or CUDA:1)", what,
		                name);
	memcpy(base, name, n);
	base[n] = '\0';
	out->index = (int)idx;
	if ((out->plugin = tg_registry_find(base)))
		return 0;
	paths = tg_registry_path_summary();
	tg_error(TG_ENODEV, "%s: no plugin provides device %s (searched: %s;"
	         " run tg-info for details)", what, base,
	         paths ? paths : "?");
	free(paths);
	return TG_ENODEV;
}

void tg_devname_format(const tg_devname *dn, char *buf, size_t n)
{
	if (dn->index > 0)
		snprintf(buf, n, "%s:%d", dn->plugin->desc->name, dn->index);
	else
		snprintf(buf, n, "%s", dn->plugin->desc->name);
}

/* ----------------------------------------------------- explicit choice */

int tg_select_open(const tg_devname *dn, const char *what, const char *var,
                   struct tg_dev **out)
{
	tg_plugin_rec *r = dn->plugin;
	int nd = tg_registry_probe(r);
	char fix[160] = "";

	if (var)
		snprintf(fix, sizeof fix, "; unset %s or choose another device "
		         "with DEVICE=NAME (tg-info lists them)", var);
	if (r->bad_config)
		return tg_error(TG_ECONFIG, "%s: plugin %s (%s): %s", what,
		                r->desc->name, r->file, r->bad_config);
	if (nd == 0)
		return tg_error(TG_ENODEV, "%s: plugin %s (%s) is unusable: "
		                "%s%s", what, r->desc->name, r->file,
		                r->probe.reason, fix);
	if (dn->index >= nd)
		return tg_error(TG_ENODEV, "%s: plugin %s has %d device%s "
		                "(%s:0 to %s:%d)%s", what, r->desc->name, nd,
		                nd == 1 ? "" : "s", r->desc->name,
		                r->desc->name, nd - 1, fix);
	if (tg_devices_open(r, dn->index, out))
		return tg_error_prefix("%s: plugin %s (%s) could not open "
		                       "device %d%s", what, r->desc->name,
		                       r->file, dn->index, fix);
	return 0;
}

static int flag_set(const char *name)
{
	const char *v = tg_getenv(name);

	return v && v[0] && strcmp(v, "0") != 0;
}

/* Checks one flag name; collects the first set one in *first. */
static int check_flag(const char *name, const char **first,
                      tg_plugin_rec **first_rec)
{
	tg_plugin_rec *r;

	if (!flag_set(name))
		return 0;
	r = tg_registry_find(name);
	if (*first && (r != *first_rec || !r))
		return tg_error(TG_EINVAL, "%s=%s and %s=%s are both set: "
		                "choose one device", *first,
		                tg_getenv(*first), name, tg_getenv(name));
	*first = name;
	*first_rec = r;
	return 0;
}

/* The one device flag that is set, NULL name when none. */
static int find_flag(const char **flag, tg_plugin_rec **rec)
{
	size_t i, j;
	int rc = 0;

	*flag = NULL;
	*rec = NULL;
	for (i = 0; !rc && i < TG_ARRAY_LEN(known_flags); i++)
		rc = check_flag(known_flags[i], flag, rec);
	for (i = 0; !rc && i < tg_registry_count(); i++) {
		const struct tg_plugin *d = tg_registry_at(i)->desc;

		if (!d)
			continue;
		rc = check_flag(d->name, flag, rec);
		for (j = 0; !rc && d->aliases && d->aliases[j]; j++)
			rc = check_flag(d->aliases[j], flag, rec);
	}
	return rc;
}

static int select_flag(const char *flag, struct tg_dev **out)
{
	char what[96];
	tg_devname dn;

	snprintf(what, sizeof what, "%s=%s", flag, tg_getenv(flag));
	if (tg_devname_parse(flag, what, &dn))
		return TG_ENODEV;
	snprintf(default_why, sizeof default_why, "%s is set", what);
	return tg_select_open(&dn, what, flag, out);
}

static int select_device_var(const char *name, struct tg_dev **out)
{
	char what[160];
	tg_devname dn;

	snprintf(what, sizeof what, "DEVICE=%s (%s)", name,
	         tg_setting_origin(TG_KEY_DEVICE));
	if (tg_devname_parse(name, what, &dn))
		return TG_ENODEV;
	snprintf(default_why, sizeof default_why, "%s", what);
	return tg_select_open(&dn, what, "DEVICE", out);
}

/* ----------------------------------------------------- quiet choices */

/* Tries `dn`; on failure appends the reason to `why` and returns
 * TG_ENODEV, so that the caller tries the next device.  A bad setting
 * (TG_ECONFIG) is returned as it is, with its message: the caller stops
 * there, so that no other device is chosen because of it. */
static int try_quietly(const tg_devname *dn, tg_strbuf *why,
                       struct tg_dev **out)
{
	char name[96];

	tg_devname_format(dn, name, sizeof name);
	if (tg_select_open(dn, name, NULL, out) == 0)
		return 0;
	if (tg_last_status() == TG_ECONFIG || tg_last_status() == TG_ENOMEM)
		return tg_last_status();
	tg_strbuf_addf(why, "\n  %s", tg_last_error());
	return TG_ENODEV;
}

static int select_list(const char *list, tg_strbuf *why,
                       struct tg_dev **out)
{
	char name[64];
	tg_devname dn;
	size_t n;
	int rc;

	while (*list) {
		n = strcspn(list, ", \t");
		if (n && n < sizeof name) {
			memcpy(name, list, n);
			name[n] = '\0';
			if (tg_devname_parse(name, name, &dn))
				tg_strbuf_addf(why, "\n  %s", tg_last_error());
			else if ((rc = try_quietly(&dn, why, out)) !=
			         TG_ENODEV)
				return rc;
		}
		list += n + (list[n] != '\0');
	}
	return TG_ENODEV;
}

/* One device auto mode may pick: a plugin and an index, and its type. */
struct candidate {
	tg_devname dn;
	int type;
};

/* Auto mode's order: GPU, IGPU, ACCEL, CPU; then priority; then the
 * search order (the record index) and the device index. */
static int rank(int type)
{
	static const int by_type[] = { 3, 0, 1, 2 };

	return type >= 0 && type < 4 ? by_type[type] : 4;
}

static int better(const struct candidate *a, const struct candidate *b)
{
	if (rank(a->type) != rank(b->type))
		return rank(a->type) < rank(b->type);
	return a->dn.plugin->desc->priority > b->dn.plugin->desc->priority;
}

/* Why a plugin file that was found is not a candidate: refused,
 * shadowed or disabled, with the registry's message. */
static void add_unloaded(tg_strbuf *why, const tg_plugin_rec *r)
{
	tg_strbuf_addf(why, "\n  %s: %s: %s", r->file,
	               tg_plugin_state_name(r->state),
	               r->message ? r->message : "(no reason given)");
}

/* Every device of every usable plugin whose type its probe gives, in
 * search order; the others' reasons go to `why`. */
typedef TG_VEC(struct candidate) candidate_vec;

static int gather(tg_strbuf *why, candidate_vec *cand)
{
	for (size_t i = 0; i < tg_registry_count(); i++) {
		tg_plugin_rec *r = tg_registry_at(i);
		int nd;

		if (r->state != TG_PLUGIN_LOADED) {
			add_unloaded(why, r);
			continue;
		}
		nd = tg_registry_probe(r);
		if (r->bad_config)  /* it might have ranked first */
			return tg_error(TG_ECONFIG, "plugin %s (%s): %s",
			                r->desc->name, r->file, r->bad_config);
		if (nd == 0)
			tg_strbuf_addf(why, "\n  %s (%s): %s", r->desc->name,
			               r->file, r->probe.reason);
		for (int d = 0; d < nd; d++) {
			struct candidate c = { { r, d },
			                       tg_registry_device_type(r, d) };

			if (c.type >= 0 && TG_VEC_PUSH(cand, c))
				return tg_error_oom("device selection");
		}
	}
	return 0;
}

static int select_auto(tg_strbuf *why, struct tg_dev **out)
{
	candidate_vec cand = { 0 };
	size_t i, j;
	int rc = gather(why, &cand);

	if (rc) {
		TG_VEC_FREE(&cand);
		return rc;
	}
	for (i = 1; i < cand.n; i++)  /* stable insertion sort */
		for (j = i; j > 0 && better(&cand.v[j], &cand.v[j - 1]); j--) {
			struct candidate t = cand.v[j];
			cand.v[j] = cand.v[j - 1];
			cand.v[j - 1] = t;
		}
	rc = TG_ENODEV;
	for (i = 0; i < cand.n && rc == TG_ENODEV; i++)
		rc = try_quietly(&cand.v[i].dn, why, out);
	TG_VEC_FREE(&cand);
	return rc;
}

/* Config list or auto; fails listing every reason. */
static int select_quietly(struct tg_dev **out)
{
	const char *list = tg_setting_str(TG_KEY_DEVICES);
	char *paths, *reasons;
	tg_strbuf why;
	int rc;

	tg_strbuf_init(&why);
	if (list && list[0]) {
		snprintf(default_why, sizeof default_why, "first usable "
		         "entry of 'devices = %s' (%s)", list,
		         tg_setting_origin(TG_KEY_DEVICES));
		rc = select_list(list, &why, out);
	} else {
		snprintf(default_why, sizeof default_why, "auto: the best "
		         "usable device (GPU > IGPU > ACCEL > CPU, then "
		         "priority)");
		rc = select_auto(&why, out);
	}
	if (rc != TG_ENODEV) {  /* chosen, or a bad setting, or OOM */
		tg_strbuf_release(&why);
		if (rc == TG_ECONFIG)
			tg_error_prefix("no device chosen (%s)", default_why);
		return rc;
	}
	reasons = tg_strbuf_finish(&why);
	paths = tg_registry_path_summary();
	tg_error(TG_ENODEV, "no usable device (%s; searched: %s)%s",
	         list && list[0] ? "none in the config's devices list"
	                         : "every plugin was tried",
	         paths ? paths : "?", reasons && reasons[0] ? reasons
	         : "\n  no plugins were found: install tgcore's plugins "
	           "(make install, or a tgcore-plugin-* package), or run "
	           "from a build tree with TG_PLUGIN_BUILD_TREE=/path/to/build");
	free(paths);
	free(reasons);
	return TG_ENODEV;
}

int tg_select_default(struct tg_dev **out, const char **why)
{
	const char *dev = tg_setting_str(TG_KEY_DEVICE), *flag;
	tg_plugin_rec *rec;
	int rc;

	if (default_dev || (rc = tg_registry_scan()))
		goto done;
	if (dev && dev[0])
		rc = select_device_var(dev, &default_dev);
	else if (!(rc = find_flag(&flag, &rec)))
		rc = flag ? select_flag(flag, &default_dev)
		          : select_quietly(&default_dev);
	if (!rc)
		tg_debug_log(1, "default device %s: %s", default_dev->name,
		       default_why);
done:
	*out = default_dev;
	if (why)
		*why = default_dev ? default_why : NULL;
	return default_dev ? 0 : tg_last_status();
}

void tg_select_reset(void)
{
	default_dev = NULL;
	default_why[0] = '\0';
}

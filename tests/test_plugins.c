/*
 * test_plugins.c - plugin discovery and every load fault: each bad
 * module is skipped with a reason that tg_plugin_get reports, and the
 * good plugins beside it keep working.
 */
#include "config.h"

#include <sys/stat.h>

#include <tg/plugin.h>

#include "testlib.h"

/* Loads exactly one file and returns its record. */
static tg_plugin_info load_one(const char *path)
{
	tg_plugin_info pi;

	tl_use_plugins(path);
	ck_assert_uint_eq(tg_plugin_count(), 1);
	ck_assert_int_eq(tg_plugin_get(0, &pi), 0);
	return pi;
}

static tg_plugin_info load_test_plugin(const char *name)
{
	char buf[512];

	return load_one(tl_plugin(name, buf, sizeof buf));
}

#define ck_assert_refused(pi, text)                                         \
	do {                                                                \
		ck_assert_int_eq((pi).state, TG_PLUGIN_REFUSED);            \
		ck_assert_msg(strstr((pi).message, (text)) != NULL,         \
		              "message \"%s\" lacks \"%s\"", (pi).message,  \
		              (text));                                      \
	} while (0)

START_TEST(cpu_plugin_loads_from_the_build_tree)
{
	tg_plugin_info pi;

	ck_assert_uint_eq(tg_plugin_count(), 1);
	ck_assert_int_eq(tg_plugin_get(0, &pi), 0);
	ck_assert_int_eq(pi.state, TG_PLUGIN_LOADED);
	ck_assert_str_eq(pi.name, "CPU");
	ck_assert_int_eq(pi.abi_major, TG_PLUGIN_ABI_MAJOR);
	ck_assert_int_eq(pi.ndevices, 1);
	ck_assert_ptr_nonnull(strstr(pi.file, "cpu"));
}
END_TEST

START_TEST(missing_file_is_reported)
{
	tg_plugin_info pi = load_one("/nonexistent/dir/x.so");

	ck_assert_refused(pi, "no such file or directory (listed in "
	                  "TG_PLUGIN_PATH)");
	ck_assert_str_eq(pi.file, "/nonexistent/dir/x.so");
}
END_TEST

/* A path entry that exists but is neither a file nor a directory says
 * what it is, not "no such file". */
START_TEST(device_or_fifo_entry_says_what_it_is)
{
	tg_plugin_info pi = load_one("/dev/null");

	ck_assert_refused(pi, "is a character device, neither a plugin file "
	                  "nor a directory (listed in TG_PLUGIN_PATH)");
}
END_TEST

/* The mock plugin's module copied into a new directory of the test
 * area; its path in `so`. */
static void copy_mock(const char *dirname, char dir[512], char so[600])
{
	char src[512];
	FILE *in, *out;
	size_t k;
	char buf[8192];

	snprintf(src, sizeof src, "%s/.libs/mock.so", tl_plugdir());
	snprintf(dir, 512, "%s", tl_tmp_path(dirname));
	snprintf(so, 600, "%s/mock.so", dir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_ptr_nonnull(in = fopen(src, "rb"));
	ck_assert_ptr_nonnull(out = fopen(so, "wb"));
	while ((k = fread(buf, 1, sizeof buf, in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, k, out), k);
	fclose(in);
	fclose(out);
	ck_assert_int_eq(chmod(so, 0755), 0);
}

/* A plugin another user could replace is refused, as the compile
 * cache's directory is: the file or its directory writable by others,
 * or owned by a user other than this one and root. */
START_TEST(plugins_others_can_write_are_refused)
{
	char dir[512], so[600], want[700];
	tg_plugin_info pi;

	copy_mock("shared-plugins", dir, so);
	pi = load_one(dir);
	ck_assert_int_eq(pi.state, TG_PLUGIN_LOADED);
	ck_assert_int_eq(chmod(dir, 01777), 0);  /* a /tmp-like place */
	pi = load_one(dir);
	snprintf(want, sizeof want, "%s is writable by others (mode 1777): "
	         "another user could replace its code (not loaded)", dir);
	ck_assert_refused(pi, want);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(chmod(so, 0666), 0);
	pi = load_one(so);
	snprintf(want, sizeof want, "%s is writable by others (mode 0666)",
	         so);
	ck_assert_refused(pi, want);
	ck_assert_int_eq(chmod(so, 0775), 0);  /* the group may write */
	ck_assert_int_eq(load_one(so).state, TG_PLUGIN_LOADED);
	if (geteuid() == 0) {  /* only root can give a file away */
		ck_assert_int_eq(chown(so, 65534, 65534), 0);
		pi = load_one(so);
		ck_assert_refused(pi, "is owned by uid 65534, neither this "
		                  "user (uid 0) nor root");
	}
}
END_TEST

START_TEST(not_a_shared_object)
{
	char path[512];
	tg_plugin_info pi;

	snprintf(path, sizeof path, "%s/garbage.so",
	         getenv("TG_TEST_SRCDIR"));
	pi = load_one(path);
	ck_assert_refused(pi, "cannot load: ");
	ck_assert_refused(pi, "check its dependencies with ldd");
	ck_assert_ptr_null(pi.name);
}
END_TEST

START_TEST(missing_entry_symbol)
{
	tg_plugin_info pi = load_test_plugin("noentry");

	ck_assert_refused(pi, "not a tgcore plugin (no tg_plugin_entry "
	                  "symbol)");
}
END_TEST

START_TEST(entry_returning_null_keeps_the_plugins_reason)
{
	tg_plugin_info pi = load_test_plugin("nullentry");

	ck_assert_refused(pi, "the plugin refused to load: ");
	ck_assert_refused(pi, "always returns NULL");
}
END_TEST

START_TEST(newer_abi_major_is_refused_with_the_fix)
{
	tg_plugin_info pi = load_test_plugin("newmajor");

	ck_assert_refused(pi, "built for plugin ABI 1.");
	ck_assert_refused(pi, "accepts 0.1 to 0.x: rebuild the plugin");
}
END_TEST

START_TEST(short_descriptor_is_refused)
{
	tg_plugin_info pi = load_test_plugin("shortsize");

	ck_assert_refused(pi, "descriptor too small");
}
END_TEST

START_TEST(null_required_entry_is_refused_at_load)
{
	tg_plugin_info pi = load_test_plugin("nullprobe");

	ck_assert_refused(pi, "required entry 'probe' is NULL");
}
END_TEST

/* Test plugin `file` loads, but its device `name` is refused when it
 * opens, the message naming the table entry `what`. */
static void refused_at_open(const char *file, const char *name,
                            const char *what)
{
	char msg[160];
	tg_plugin_info pi = load_test_plugin(file);

	ck_assert_int_eq(pi.state, TG_PLUGIN_LOADED);
	ck_assert_ptr_null(tg_dev_get(name));
	ck_assert_int_eq(tg_last_status(), TG_EPLUGIN);
	snprintf(msg, sizeof msg, "could not open device 0: the device has "
	         "no valid %s entry", what);
	ck_assert_error(msg);
}

START_TEST(null_launch_is_refused_at_open)
{
	refused_at_open("nulllaunch", "NULLLAUNCH", "runtime.launch");
}
END_TEST

/* A tensor core whose splits do not make its N x M tile is refused
 * when the device opens, naming the table. */
START_TEST(bad_tensor_core_is_refused_at_open)
{
	refused_at_open("tcbad", "BADTC",
	                "renderer.tc (tensor core description)");
}
END_TEST

/* A buffer alignment that is not a power of 2 is refused when the
 * device opens, naming the field. */
START_TEST(bad_buffer_align_is_refused_at_open)
{
	refused_at_open("alignbad", "BADALIGN",
	                "renderer.buffer_align (not 0 or a power of 2)");
}
END_TEST

START_TEST(probe_with_no_devices)
{
	tg_plugin_info pi = load_test_plugin("probe0");

	ck_assert_int_eq(pi.state, TG_PLUGIN_LOADED);
	ck_assert_int_eq(pi.ndevices, 0);
	ck_assert_str_eq(pi.probe_reason, "nodev-driver.so.1 not found");
	ck_assert_ptr_null(tg_dev_get("nodev"));
	ck_assert_int_eq(tg_last_status(), TG_ENODEV);
	ck_assert_error("device 'nodev': plugin NODEV (");
	ck_assert_error("is unusable: nodev-driver.so.1 not found");
}
END_TEST

START_TEST(open_failure_passes_the_plugins_message)
{
	load_test_plugin("openfail");
	ck_assert_ptr_null(tg_dev_get("OPENFAIL"));
	ck_assert_int_eq(tg_last_status(), TG_ERUNTIME);
	ck_assert_error("could not open device 0: openfail: device 0: "
	                "driver refused to open");
}
END_TEST

START_TEST(a_directory_of_bad_plugins_leaves_good_ones_usable)
{
	char path[1024];
	size_t i, loaded = 0, refused = 0;
	tg_plugin_info pi;

	snprintf(path, sizeof path, "%s:%s", getenv("TG_PLUGIN_PATH"),
	         tl_plugdir());
	tl_use_plugins(path);
	ck_assert_uint_eq(tg_plugin_count(), 14);
	for (i = 0; i < tg_plugin_count(); i++) {
		ck_assert_int_eq(tg_plugin_get(i, &pi), 0);
		loaded += pi.state == TG_PLUGIN_LOADED;
		refused += pi.state == TG_PLUGIN_REFUSED;
	}
	/* cpu mock nodev cuda openfail nulllaunch partialgraph tcbad
	 * alignbad */
	ck_assert_uint_eq(loaded, 9);
	ck_assert_uint_eq(refused, 5);
	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
	ck_assert_ptr_nonnull(tg_dev_get("MOCK:1"));
}
END_TEST

START_TEST(directory_entries_are_sorted_by_name)
{
	tg_plugin_info a, b;
	size_t i;

	tl_use_plugins(tl_plugdir());
	for (i = 1; i < tg_plugin_count(); i++) {
		ck_assert_int_eq(tg_plugin_get(i - 1, &a), 0);
		ck_assert_int_eq(tg_plugin_get(i, &b), 0);
		ck_assert_int_lt(strcmp(a.file, b.file), 0);
	}
}
END_TEST

START_TEST(the_first_plugin_of_a_name_wins)
{
	char path[1024], mock[512];
	tg_plugin_info pi;

	snprintf(path, sizeof path, "%s:%s",
	         tl_plugin("mock", mock, sizeof mock), tl_plugdir());
	tl_use_plugins(path);
	ck_assert_int_eq(tg_plugin_get(0, &pi), 0);
	ck_assert_int_eq(pi.state, TG_PLUGIN_LOADED);
	/* after alignbad.la and fakecuda.la */
	ck_assert_int_eq(tg_plugin_get(3, &pi), 0);
	ck_assert_ptr_nonnull(strstr(pi.file, "/mock.la"));
	ck_assert_int_eq(pi.state, TG_PLUGIN_SHADOWED);
	ck_assert_ptr_nonnull(strstr(pi.message, "MOCK shadowed by "));
	ck_assert_ptr_nonnull(strstr(pi.message, mock));
}
END_TEST

START_TEST(plugins_can_be_disabled_by_glob)
{
	char buf[512];
	tg_plugin_info pi;

	setenv("TG_PLUGINS_DISABLE", "nothing,mo*", 1);
	pi = load_one(tl_plugin("mock", buf, sizeof buf));
	ck_assert_int_eq(pi.state, TG_PLUGIN_DISABLED);
	ck_assert_ptr_null(tg_dev_get("MOCK"));
	ck_assert_error("no plugin provides device MOCK");
}
END_TEST

START_TEST(disabled_plugin_is_never_loaded)
{
	char buf[512];
	tg_plugin_info pi;

	/* its entry aborts: loading it would end this test */
	setenv("TG_PLUGINS_DISABLE", "CRASH*", 1);
	pi = load_one(tl_plugin("crash/crashentry", buf, sizeof buf));
	ck_assert_int_eq(pi.state, TG_PLUGIN_DISABLED);
	ck_assert_str_eq(pi.message, "disabled by 'CRASH*' in "
	                 "TG_PLUGINS_DISABLE or plugins_disable (not loaded)");
	ck_assert_ptr_null(pi.name);
	setenv("TG_PLUGINS_DISABLE", "x,crashentry.la", 1);
	pi = load_one(tl_plugin("crash/crashentry", buf, sizeof buf));
	ck_assert_int_eq(pi.state, TG_PLUGIN_DISABLED);
}
END_TEST

/* plugin_isolate: the plugin at crash/<name>, tried in a child. */
static tg_plugin_info isolated(const char *name)
{
	char buf[512];

	setenv("TG_PLUGIN_ISOLATE", "1", 1);
	return load_one(tl_plugin(name, buf, sizeof buf));
}

#define ISOLATED " when tried in a child process (plugin_isolate); " \
	"not loaded"

START_TEST(isolation_reports_a_crash_in_the_entry)
{
	tg_plugin_info pi = isolated("crash/crashentry");

	ck_assert_int_eq(pi.state, TG_PLUGIN_REFUSED);
	ck_assert_str_eq(pi.message, "crashed in load (SIGABRT)" ISOLATED);
	ck_assert_ptr_null(pi.name);
}
END_TEST

START_TEST(isolation_reports_a_crash_in_probe)
{
	tg_plugin_info pi = isolated("crash/crashprobe");

	ck_assert_int_eq(pi.state, TG_PLUGIN_REFUSED);
	ck_assert_str_eq(pi.message, "crashed in probe (SIGSEGV)" ISOLATED);
	ck_assert_ptr_null(tg_dev_get("CRASHPROBE"));
	ck_assert_error("no plugin provides device CRASHPROBE");
}
END_TEST

START_TEST(isolation_reports_an_exit_in_probe)
{
	tg_plugin_info pi = isolated("crash/exitprobe");

	ck_assert_str_eq(pi.message, "exited with status 3 in probe"
	                 ISOLATED);
}
END_TEST

START_TEST(isolation_reports_a_hang_after_its_timeout)
{
	tg_plugin_info pi;

	setenv("TG_PLUGIN_ISOLATE_TIMEOUT", "1", 1);
	pi = isolated("crash/hangprobe");
	ck_assert_str_eq(pi.message, "hung in probe: killed after 1 s"
	                 ISOLATED);
}
END_TEST

/* Device 0 opens and closes in the trial; device 1 takes it down. */
START_TEST(isolation_reports_a_crash_in_open)
{
	tg_plugin_info pi = isolated("crash/crashopen");

	ck_assert_str_eq(pi.message, "crashed in open CRASHOPEN:1 (SIGBUS)"
	                 ISOLATED);
}
END_TEST

/* A plugin that survives its trial loads as usual, and one that
 * refuses in the trial is refused with its own reason. */
START_TEST(isolation_passes_good_plugins_and_plain_refusals)
{
	tg_plugin_info pi = isolated("mock");

	ck_assert_int_eq(pi.state, TG_PLUGIN_LOADED);
	ck_assert_int_eq(pi.ndevices, 2);
	ck_assert_ptr_nonnull(tg_dev_get("MOCK:1"));
	pi = isolated("noentry");
	ck_assert_refused(pi, "not a tgcore plugin (no tg_plugin_entry");
}
END_TEST

/* A relative entry from `origin` is refused, naming it. */
static void relative_refused(const char *origin)
{
	tg_plugin_info pi;

	ck_assert_uint_eq(tg_plugin_count(), 1);
	ck_assert_int_eq(tg_plugin_get(0, &pi), 0);
	ck_assert_refused(pi, "relative path 'plugins/cpu': plugin path "
	                  "entries must be absolute (listed in ");
	ck_assert_refused(pi, origin);
	ck_assert_str_eq(pi.file, "plugins/cpu");
	ck_assert_ptr_null(tg_dev_get("CPU"));
}

START_TEST(relative_plugin_paths_are_refused)
{
	char ini[256];

	load_one("plugins/cpu");
	relative_refused("TG_PLUGIN_PATH");
	snprintf(ini, sizeof ini, "[core]\nplugin_path = plugins/cpu\n");
	tl_use_plugins("");
	setenv("TG_CONFIG", tl_write_file("rel.ini", ini), 1);
	relative_refused("config");
	unsetenv("TG_CONFIG");
	tl_use_plugins("");
	unsetenv("TG_PLUGIN_DEFAULT_PATH");
	setenv("TG_PLUGIN_BUILD_TREE", "plugins/cpu", 1);
	relative_refused("TG_PLUGIN_BUILD_TREE");
}
END_TEST

START_TEST(without_a_build_tree_the_installed_directory_is_searched)
{
	const char *origin, *p;

	tl_use_plugins("");
	unsetenv("TG_PLUGIN_DEFAULT_PATH");
	unsetenv("TG_PLUGIN_BUILD_TREE");
	ck_assert_uint_eq(tg_plugin_path_count(), 1);
	p = tg_plugin_path_get(0, &origin);
	ck_assert_str_eq(origin, "default");
	ck_assert_int_eq(p[0], '/');
	ck_assert_ptr_nonnull(strstr(p, "/tgcore/plugins"));
}
END_TEST

START_TEST(config_plugin_path_and_default_path)
{
	char ini[1024];
	const char *origin;

	snprintf(ini, sizeof ini, "[core]\nplugin_path = %s\n"
	         "default_plugin_path = no\n", tl_plugdir());
	tl_use_plugins("");
	setenv("TG_CONFIG", tl_write_file("p.ini", ini), 1);
	unsetenv("TG_PLUGIN_DEFAULT_PATH");
	ck_assert_uint_eq(tg_plugin_path_count(), 1);
	ck_assert_str_eq(tg_plugin_path_get(0, &origin), tl_plugdir());
	ck_assert_str_eq(origin, "config");
	ck_assert_ptr_nonnull(tg_dev_get("MOCK"));
	ck_assert_ptr_null(tg_plugin_path_get(1, &origin));
}
END_TEST

START_TEST(default_path_is_last)
{
	const char *origin;
	size_t n;

	tl_use_plugins("/a:/b");
	unsetenv("TG_PLUGIN_DEFAULT_PATH");
	n = tg_plugin_path_count();
	ck_assert_uint_ge(n, 3);
	ck_assert_str_eq(tg_plugin_path_get(0, &origin), "/a");
	ck_assert_str_eq(origin, "TG_PLUGIN_PATH");
	/* this test runs from the build tree: the build tree's plugin
	 * directories stand in for the installed one */
	tg_plugin_path_get(2, &origin);
	ck_assert_str_eq(origin, "build tree");
}
END_TEST

START_TEST(uninstalled_core_uses_the_build_tree)
{
	const char *origin, *p;

	tl_use_plugins("");
	unsetenv("TG_PLUGIN_DEFAULT_PATH");
	ck_assert_uint_ge(tg_plugin_path_count(), 1);
	p = tg_plugin_path_get(0, &origin);
	ck_assert_str_eq(origin, "build tree");
	ck_assert_ptr_nonnull(strstr(p, "/plugins/"));
	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
}
END_TEST

START_TEST(plugin_get_rejects_bad_index)
{
	tg_plugin_info pi;

	ck_assert_int_eq(tg_plugin_get(99, &pi), TG_EINVAL);
	ck_assert_error("plugin_get: index 99 out of range (1 plugins)");
}
END_TEST

START_TEST(shutdown_and_reload)
{
	tg_dev *a = tg_dev_get("CPU");

	ck_assert_ptr_nonnull(a);
	tg_shutdown();
	ck_assert_ptr_nonnull(tg_dev_get("CPU"));
	tg_shutdown();
	tg_shutdown();  /* idempotent */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plugins");
	TCase *tc = tcase_create("load");

	tcase_add_checked_fixture(tc, NULL, tg_shutdown);
	tcase_add_test(tc, cpu_plugin_loads_from_the_build_tree);
	tcase_add_test(tc, missing_file_is_reported);
	tcase_add_test(tc, not_a_shared_object);
	tcase_add_test(tc, missing_entry_symbol);
	tcase_add_test(tc, entry_returning_null_keeps_the_plugins_reason);
	tcase_add_test(tc, newer_abi_major_is_refused_with_the_fix);
	tcase_add_test(tc, short_descriptor_is_refused);
	tcase_add_test(tc, null_required_entry_is_refused_at_load);
	tcase_add_test(tc, null_launch_is_refused_at_open);
	tcase_add_test(tc, bad_tensor_core_is_refused_at_open);
	tcase_add_test(tc, bad_buffer_align_is_refused_at_open);
	tcase_add_test(tc, probe_with_no_devices);
	tcase_add_test(tc, open_failure_passes_the_plugins_message);
	tcase_add_test(tc, a_directory_of_bad_plugins_leaves_good_ones_usable);
	tcase_add_test(tc, directory_entries_are_sorted_by_name);
	tcase_add_test(tc, the_first_plugin_of_a_name_wins);
	tcase_add_test(tc, plugins_can_be_disabled_by_glob);
	tcase_add_test(tc, disabled_plugin_is_never_loaded);
	tcase_add_test(tc, isolation_reports_a_crash_in_the_entry);
	tcase_add_test(tc, isolation_reports_a_crash_in_probe);
	tcase_add_test(tc, isolation_reports_an_exit_in_probe);
	tcase_add_test(tc, isolation_reports_a_hang_after_its_timeout);
	tcase_add_test(tc, isolation_reports_a_crash_in_open);
	tcase_add_test(tc, isolation_passes_good_plugins_and_plain_refusals);
	tcase_add_test(tc, relative_plugin_paths_are_refused);
	tcase_add_test(tc, without_a_build_tree_the_installed_directory_is_searched);
	tcase_add_test(tc, config_plugin_path_and_default_path);
	tcase_add_test(tc, default_path_is_last);
	tcase_add_test(tc, uninstalled_core_uses_the_build_tree);
	tcase_add_test(tc, plugin_get_rejects_bad_index);
	tcase_add_test(tc, device_or_fifo_entry_says_what_it_is);
	tcase_add_test(tc, plugins_others_can_write_are_refused);
	tcase_add_test(tc, shutdown_and_reload);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

/*
 * test_select.c - device names and the choice of the default device:
 * DEVICE=, device flags, the config's list and auto mode, with the loud
 * errors of explicit requests and the quiet skipping of auto mode.
 */
#include "config.h"

#include "testlib.h"

/* Search path: the CPU plugin plus the named test plugins. */
static void use(const char *names)
{
	char path[2048], one[512], name[64];
	size_t n;

	snprintf(path, sizeof path, "%s", getenv("TG_PLUGIN_PATH"));
	while (*names) {
		n = strcspn(names, " ");
		snprintf(name, sizeof name, "%.*s", (int)n, names);
		strcat(path, ":");
		strcat(path, tl_plugin(name, one, sizeof one));
		names += n + (names[n] == ' ');
	}
	tl_use_plugins(path);
}

static const char *default_name(const char **why)
{
	return tg_dev_default_name(why);
}

START_TEST(names_canonicalize)
{
	use("mock");
	ck_assert_ptr_eq(tg_dev_get("cpu:0"), tg_dev_get("CPU"));
	ck_assert_ptr_eq(tg_dev_get("clang"), tg_dev_get("CPU"));
	ck_assert_str_eq(tg_dev_name(tg_dev_get("Cpu:0")), "CPU");
	ck_assert_str_eq(tg_dev_name(tg_dev_get("mock:1")), "MOCK:1");
	ck_assert_ptr_ne(tg_dev_get("MOCK:1"), tg_dev_get("MOCK"));
}
END_TEST

START_TEST(bad_names_are_errors)
{
	static const char *const bad[] = { "CPU:x", "CPU:", ":1", "CPU:-1",
	                                   "CPU:1:2" };
	size_t i;

	for (i = 0; i < TG_ARRAY_LEN(bad); i++) {
		ck_assert_ptr_null(tg_dev_get(bad[i]));
		ck_assert_int_eq(tg_last_status(), TG_EINVAL);
		ck_assert_error("bad device name");
		ck_assert_error(bad[i]);
	}
}
END_TEST

START_TEST(unknown_device_lists_the_search_path)
{
	ck_assert_ptr_null(tg_dev_get("TPU"));
	ck_assert_int_eq(tg_last_status(), TG_ENODEV);
	ck_assert_error("device 'TPU': no plugin provides device TPU "
	                "(searched: ");
	ck_assert_error(getenv("TG_PLUGIN_PATH"));
}
END_TEST

START_TEST(index_out_of_range)
{
	use("mock");
	ck_assert_ptr_null(tg_dev_get("MOCK:2"));
	ck_assert_error("plugin MOCK has 2 devices (MOCK:0 to MOCK:1)");
	ck_assert_ptr_null(tg_dev_get("CPU:1"));
	ck_assert_error("plugin CPU has 1 device (CPU:0 to CPU:0)");
}
END_TEST

START_TEST(auto_picks_the_only_device)
{
	const char *why;

	ck_assert_str_eq(default_name(&why), "CPU");
	ck_assert_ptr_nonnull(strstr(why, "auto"));
	ck_assert_ptr_eq(tg_dev_get(NULL), tg_dev_get("CPU"));
	ck_assert_ptr_eq(tg_dev_get(""), tg_dev_get("CPU"));
}
END_TEST

START_TEST(auto_ranks_accelerators_before_cpu)
{
	use("probe0 openfail mock");
	ck_assert_str_eq(default_name(NULL), "MOCK");
}
END_TEST

START_TEST(auto_skips_unusable_plugins_quietly)
{
	const char *why;

	use("probe0 openfail fakecuda");
	ck_assert_str_eq(default_name(&why), "CPU");
}
END_TEST

/* Every device of a plugin is ranked, not device 0 only: a GPU its
 * probe lists after a CPU device is the default. */
START_TEST(auto_ranks_every_device)
{
	const char *why;

	setenv("TG_MOCK_TYPES", "01", 1);  /* CPU, then GPU */
	use("mock");
	ck_assert_str_eq(default_name(&why), "MOCK:1");
}
END_TEST

/* A probe that gives no per-device types (ntypes 0, as every plugin
 * before ABI 0.7) has device 0 ranked by its `type`, and nothing else:
 * the GPU behind it is not seen, so the first CPU device wins. */
START_TEST(probe_without_types_ranks_device_zero)
{
	const char *why;

	setenv("TG_MOCK_TYPES", "x01", 1);
	use("mock");
	ck_assert_str_ne(default_name(&why), "MOCK:1");
}
END_TEST

START_TEST(nothing_usable_lists_every_reason)
{
	char path[1024], a[512], b[512];

	snprintf(path, sizeof path, "%s:%s",
	         tl_plugin("probe0", a, sizeof a),
	         tl_plugin("openfail", b, sizeof b));
	tl_use_plugins(path);
	ck_assert_ptr_null(default_name(NULL));
	ck_assert_int_eq(tg_last_status(), TG_ENODEV);
	ck_assert_error("no usable device (every plugin was tried; "
	                "searched: ");
	ck_assert_error("NODEV (");
	ck_assert_error("nodev-driver.so.1 not found");
	ck_assert_error("driver refused to open");
	ck_assert_ptr_null(tg_dev_get(NULL));
}
END_TEST

/* Plugin files that were found but not loaded are listed with the
 * reason: never "no plugins were found" when some were. */
START_TEST(refused_and_disabled_files_are_listed)
{
	char path[1600], a[512], b[512], c[512];

	snprintf(path, sizeof path, "%s:%s:%s",
	         tl_plugin("noentry", a, sizeof a),
	         tl_plugin("newmajor", b, sizeof b),
	         tl_plugin("probe0", c, sizeof c));
	tl_use_plugins(path);
	setenv("TG_PLUGINS_DISABLE", "probe0", 1);
	ck_assert_ptr_null(tg_dev_get(NULL));
	ck_assert_int_eq(tg_last_status(), TG_ENODEV);
	ck_assert_error("no usable device (every plugin was tried; ");
	ck_assert_error("noentry.la: refused: ");
	ck_assert_error("newmajor.la: refused: ");
	ck_assert_error("probe0.la: disabled: ");
	ck_assert(strstr(tg_last_error(), "no plugins were found") == NULL);
}
END_TEST

START_TEST(empty_search_path)
{
	tl_use_plugins("");
	ck_assert_ptr_null(tg_dev_get(NULL));
	ck_assert_error("searched: nothing (the search path is empty)");
	ck_assert_error("no plugins were found");
	/* both ways out: installing, or naming a build tree */
	ck_assert_error("make install");
	ck_assert_error("TG_PLUGIN_BUILD_TREE=/path/to/build");
}
END_TEST

START_TEST(device_flag_beats_auto)
{
	const char *why;

	use("mock");
	setenv("CPU", "1", 1);
	ck_assert_str_eq(default_name(&why), "CPU");
	ck_assert_str_eq(why, "CPU=1 is set");
}
END_TEST

START_TEST(alias_flag)
{
	const char *why;

	use("mock");
	setenv("CLANG", "1", 1);
	ck_assert_str_eq(default_name(&why), "CPU");
	ck_assert_str_eq(why, "CLANG=1 is set");
}
END_TEST

START_TEST(flag_zero_is_unset)
{
	use("mock");
	setenv("CPU", "0", 1);
	ck_assert_str_eq(default_name(NULL), "MOCK");
}
END_TEST

START_TEST(two_flags_are_an_error)
{
	use("mock");
	setenv("CPU", "1", 1);
	setenv("MOCK", "1", 1);
	ck_assert_ptr_null(default_name(NULL));
	ck_assert_int_eq(tg_last_status(), TG_EINVAL);
	ck_assert_error("CPU=1 and MOCK=1 are both set: choose one device");
}
END_TEST

START_TEST(a_flag_and_its_alias_agree)
{
	setenv("CPU", "1", 1);
	setenv("CLANG", "1", 1);
	ck_assert_str_eq(default_name(NULL), "CPU");
}
END_TEST

START_TEST(cuda_flag_without_cuda_names_variable_plugin_and_reason)
{
	use("mock fakecuda");
	setenv("CUDA", "1", 1);
	ck_assert_ptr_null(tg_dev_get(NULL));
	ck_assert_int_eq(tg_last_status(), TG_ENODEV);
	ck_assert_error("CUDA=1: plugin CUDA (");
	ck_assert_error("fakecuda.la) is unusable: libcuda.so.1 not found");
	ck_assert_error("; unset CUDA or choose another device with "
	                "DEVICE=NAME");
}
END_TEST

START_TEST(cuda_flag_without_a_cuda_plugin)
{
	setenv("CUDA", "1", 1);
	ck_assert_ptr_null(tg_dev_get(NULL));
	ck_assert_error("CUDA=1: no plugin provides device CUDA (searched: ");
}
END_TEST

START_TEST(flag_for_a_device_that_fails_to_open)
{
	use("openfail");
	setenv("OPENFAIL", "1", 1);
	ck_assert_ptr_null(tg_dev_get(NULL));
	ck_assert_error("OPENFAIL=1: plugin OPENFAIL (");
	ck_assert_error("could not open device 0; unset OPENFAIL or choose "
	                "another device with DEVICE=NAME (tg-info lists "
	                "them): openfail: device 0: driver refused to open");
}
END_TEST

START_TEST(device_variable_beats_flags)
{
	const char *why;

	use("mock");
	setenv("CPU", "1", 1);
	setenv("DEVICE", "mock:1", 1);
	ck_assert_str_eq(default_name(&why), "MOCK:1");
	ck_assert_str_eq(why, "DEVICE=mock:1 (environment DEVICE)");
}
END_TEST

START_TEST(device_variable_with_unusable_device)
{
	use("probe0");
	setenv("DEVICE", "NODEV", 1);
	ck_assert_ptr_null(default_name(NULL));
	ck_assert_error("DEVICE=NODEV (environment DEVICE): plugin NODEV");
	ck_assert_error("unset DEVICE");
}
END_TEST

START_TEST(config_list_takes_the_first_usable_entry)
{
	const char *why;

	use("probe0 mock");
	setenv("TG_CONFIG", tl_write_file("d.ini", "[core]\ndevices = "
	                                  "nodev, tpu, cpu, mock\n"), 1);
	ck_assert_str_eq(default_name(&why), "CPU");
	ck_assert_ptr_nonnull(strstr(why, "first usable entry of 'devices = "
	                             "nodev, tpu, cpu, mock' ("));
	ck_assert_ptr_nonnull(strstr(why, "d.ini:2)"));
}
END_TEST

START_TEST(config_list_with_nothing_usable)
{
	use("probe0");
	setenv("TG_DEVICES", "nodev tpu", 1);
	ck_assert_ptr_null(default_name(NULL));
	ck_assert_error("no usable device (none in the config's devices "
	                "list");
	ck_assert_error("nodev-driver.so.1 not found");
	ck_assert_error("no plugin provides device tpu");
}
END_TEST

/* The CPU plugin, the OpenCL plugin (PoCL, a CPU device, in make
 * check) and the mock accelerator, with `ini` as the config file. */
static void use_with_opencl(const char *ini)
{
	char path[2048], one[512];
	const char *dev = getenv("TG_DEVICE_PLUGIN_PATH");

	snprintf(path, sizeof path, "%s:%s%s%s", getenv("TG_PLUGIN_PATH"),
	         tl_plugin("mock", one, sizeof one), dev ? ":" : "",
	         dev ? dev : "");
	tl_use_plugins(path);
	setenv("TG_CONFIG", tl_write_file("bad.ini", ini), 1);
}

/* A [cpu] value that does not parse stops auto selection with a message
 * naming the file, the line, the key and the value: no other device
 * (OpenCL, the mock accelerator that ranks first) is chosen instead. */
START_TEST(bad_plugin_setting_stops_auto_selection)
{
	static const char *const bad[][2] = {
		{ "abc", "'abc'" }, { "-5", "'-5'" },
		{ "100000", "'100000'" }, { "\xff\x01", "'\\xFF\\x01'" },
	};
	char ini[128];

	for (size_t i = 0; i < TG_ARRAY_LEN(bad); i++) {
		snprintf(ini, sizeof ini, "[core]\nDEBUG = 0\n\n[cpu]\n"
		         "threads = %s\n", bad[i][0]);
		use_with_opencl(ini);
		ck_assert_ptr_null(tg_dev_get(NULL));
		ck_assert_int_eq(tg_last_status(), TG_ECONFIG);
		ck_assert_error("no device chosen (auto: ");
		ck_assert_error("plugin CPU (");
		ck_assert_error("bad.ini:5: [cpu] threads: expected an "
		                "integer from 0 (one per core) to 4096, got ");
		ck_assert_error(bad[i][1]);
		ck_assert_ptr_null(tg_dev_default_name(NULL));
	}
}
END_TEST

/* The same through the environment and the API, and in the config's
 * devices list; asking for another device by name still works. */
START_TEST(bad_plugin_setting_from_env_or_api)
{
	use_with_opencl("[core]\ndevices = cpu, opencl, mock\n");
	setenv("TG_CPU_VECTOR_WIDTH", "7", 1);
	ck_assert_ptr_null(tg_dev_get(NULL));
	ck_assert_int_eq(tg_last_status(), TG_ECONFIG);
	ck_assert_error("no device chosen (first usable entry of 'devices = "
	                "cpu, opencl, mock' (");
	ck_assert_error("config: environment TG_CPU_VECTOR_WIDTH: [cpu] "
	                "vector_width: expected 0 (the CPU's, ");
	unsetenv("TG_CPU_VECTOR_WIDTH");
	tg_shutdown();
	ck_assert_int_eq(tg_config_set("cpu.devices", "many"), 0);
	ck_assert_ptr_null(tg_dev_get(NULL));
	ck_assert_error("config: tg_config_set(): [cpu] devices: expected an "
	                "integer from 1 to 64, got 'many'");
	ck_assert_ptr_null(tg_dev_get("CPU"));
	ck_assert_int_eq(tg_last_status(), TG_ECONFIG);
	ck_assert_str_eq(tg_dev_name(tg_dev_get("MOCK")), "MOCK");
}
END_TEST

START_TEST(default_is_chosen_once)
{
	tg_dev *a = tg_dev_get(NULL);

	setenv("DEVICE", "TPU", 1);  /* too late: the choice stands */
	ck_assert_ptr_eq(tg_dev_get(NULL), a);
}
END_TEST

START_TEST(device_info_reports_capabilities)
{
	tg_dev_info di;

	use("mock");
	ck_assert_int_eq(tg_dev_get_info(tg_dev_get("MOCK"), &di), 0);
	ck_assert_str_eq(di.name, "MOCK");
	ck_assert_str_eq(di.type, "ACCEL");
	ck_assert_str_eq(di.dialect, "c");
	ck_assert_int_eq(di.has_local, 1);
	ck_assert_uint_eq(di.local_max_total, 256);
	ck_assert_int_eq(tg_dev_get_info(tg_dev_get("CPU"), &di), 0);
	ck_assert_str_eq(di.type, "CPU");
	ck_assert_uint_gt(di.total_memory, 0);
	ck_assert_int_eq(tg_dev_get_info(NULL, &di), TG_EINVAL);
	ck_assert_error("dev_get_info: device is NULL");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("select");
	TCase *tc = tcase_create("select");

	tcase_add_checked_fixture(tc, NULL, tg_shutdown);
	tcase_add_test(tc, names_canonicalize);
	tcase_add_test(tc, bad_names_are_errors);
	tcase_add_test(tc, unknown_device_lists_the_search_path);
	tcase_add_test(tc, index_out_of_range);
	tcase_add_test(tc, auto_picks_the_only_device);
	tcase_add_test(tc, auto_ranks_accelerators_before_cpu);
	tcase_add_test(tc, auto_skips_unusable_plugins_quietly);
	tcase_add_test(tc, nothing_usable_lists_every_reason);
	tcase_add_test(tc, auto_ranks_every_device);
	tcase_add_test(tc, probe_without_types_ranks_device_zero);
	tcase_add_test(tc, refused_and_disabled_files_are_listed);
	tcase_add_test(tc, empty_search_path);
	tcase_add_test(tc, device_flag_beats_auto);
	tcase_add_test(tc, alias_flag);
	tcase_add_test(tc, flag_zero_is_unset);
	tcase_add_test(tc, two_flags_are_an_error);
	tcase_add_test(tc, a_flag_and_its_alias_agree);
	tcase_add_test(tc, cuda_flag_without_cuda_names_variable_plugin_and_reason);
	tcase_add_test(tc, cuda_flag_without_a_cuda_plugin);
	tcase_add_test(tc, flag_for_a_device_that_fails_to_open);
	tcase_add_test(tc, device_variable_beats_flags);
	tcase_add_test(tc, device_variable_with_unusable_device);
	tcase_add_test(tc, config_list_takes_the_first_usable_entry);
	tcase_add_test(tc, config_list_with_nothing_usable);
	tcase_add_test(tc, bad_plugin_setting_stops_auto_selection);
	tcase_add_test(tc, bad_plugin_setting_from_env_or_api);
	tcase_add_test(tc, default_is_chosen_once);
	tcase_add_test(tc, device_info_reports_capabilities);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

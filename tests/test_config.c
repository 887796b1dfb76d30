/*
 * test_config.c - configuration: files in order, environment and API
 * overrides, plugin sections, and every kind of bad input reported with
 * file, line and key.
 */
#include "config.h"

#include "testlib.h"

/* Loads `text` as $TG_CONFIG and returns tg_init()'s status. */
static int load(const char *text)
{
	tg_shutdown();
	setenv("TG_CONFIG", tl_write_file("tg.ini", text), 1);
	return tg_init();
}

START_TEST(reads_core_and_plugin_sections)
{
	ck_assert_int_eq(load("; comment\n[core]\nDEBUG = 0\nCACHELEVEL=1\n"
	                      "devices = cpu, mock\n[cpu]\ncc = gcc\n"), 0);
	ck_assert_str_eq(tg_config_get("CACHELEVEL"), "1");
	ck_assert_str_eq(tg_config_get("devices"), "cpu, mock");
	ck_assert_str_eq(tg_config_get("cpu.cc"), "gcc");
	ck_assert_ptr_null(tg_config_get("cpu.nokey"));
	ck_assert_int_eq(tg_config_int("CACHELEVEL", 9), 1);
	ck_assert_int_eq(tg_config_int("LRU", 7), 7);
}
END_TEST

START_TEST(core_keys_are_case_insensitive)
{
	ck_assert_int_eq(load("[CORE]\ndebug = 0\ncachelevel = 3\n"), 0);
	ck_assert_str_eq(tg_config_get("CACHELEVEL"), "3");
	ck_assert_str_eq(tg_cfg_origin("core", "CACHELEVEL") +
	                 strlen(tg_cfg_origin("core", "CACHELEVEL")) - 2,
	                 ":3");
}
END_TEST

START_TEST(environment_beats_file_and_api_beats_both)
{
	ck_assert_int_eq(load("[core]\nCACHELEVEL = 1\n[cpu]\ncc = gcc\n"), 0);
	setenv("CACHELEVEL", "4", 1);
	setenv("TG_CPU_CC", "clang", 1);
	ck_assert_str_eq(tg_config_get("CACHELEVEL"), "4");
	ck_assert_str_eq(tg_config_get("cpu.cc"), "clang");
	ck_assert_str_eq(tg_cfg_origin("cpu", "cc"), "environment TG_CPU_CC");
	ck_assert_int_eq(tg_config_set("CACHELEVEL", "5"), 0);
	ck_assert_int_eq(tg_config_set("cpu.cc", "tcc"), 0);
	ck_assert_str_eq(tg_config_get("CACHELEVEL"), "5");
	ck_assert_str_eq(tg_config_get("cpu.cc"), "tcc");
	ck_assert_int_eq(tg_config_set("cpu.cc", NULL), 0);
	ck_assert_str_eq(tg_config_get("cpu.cc"), "clang");
}
END_TEST

START_TEST(later_files_override_earlier_ones)
{
	char dir[512];
	FILE *f;

	snprintf(dir, sizeof dir, "%s/%d-xdg/tgcore", getenv("TG_TEST_TMP"),
	         (int)getpid());
	ck_assert_int_eq(tg_mkdir_p(dir), 0);
	strcat(dir, "/tgcore.ini");
	f = fopen(dir, "w");
	ck_assert_ptr_nonnull(f);
	fputs("[core]\nCACHELEVEL = 1\nLRU = 0\n", f);
	fclose(f);
	*strrchr(dir, '/') = '\0';
	*strrchr(dir, '/') = '\0';
	setenv("XDG_CONFIG_HOME", dir, 1);
	ck_assert_int_eq(load("[core]\nCACHELEVEL = 2\n"), 0);
	ck_assert_str_eq(tg_config_get("CACHELEVEL"), "2");  /* TG_CONFIG */
	ck_assert_str_eq(tg_config_get("LRU"), "0");         /* user file */
}
END_TEST

START_TEST(syntax_error_names_file_and_line)
{
	ck_assert_int_eq(load("[core]\nDEBUG = 0\nthis line is wrong\n"),
	                 TG_ECONFIG);
	ck_assert_error("tg.ini:3: syntax error");
	/* the error sticks for later calls */
	ck_assert_ptr_null(tg_dev_get("CPU"));
	ck_assert_error("tg.ini:3");
	ck_assert_int_eq(tg_last_status(), TG_ECONFIG);
}
END_TEST

START_TEST(unknown_core_key_names_line_and_key)
{
	ck_assert_int_eq(load("[core]\n\nDEBGU = 1\n"), TG_ECONFIG);
	ck_assert_error("tg.ini:3: unknown key 'DEBGU' in [core]");
}
END_TEST

START_TEST(bad_integer_value_names_key_and_value)
{
	ck_assert_int_eq(load("[core]\nDEBUG = lots\n"), TG_ECONFIG);
	ck_assert_error("tg.ini:2: DEBUG: expected an integer from 0 to 7, "
	                "got 'lots'");
	ck_assert_int_eq(load("[core]\nCACHELEVEL = -1\n"), TG_ECONFIG);
	ck_assert_error("CACHELEVEL: expected an integer");
}
END_TEST

START_TEST(bad_boolean_value)
{
	ck_assert_int_eq(load("[core]\nLRU = sometimes\n"), TG_ECONFIG);
	ck_assert_error("tg.ini:2: LRU: expected yes or no");
}
END_TEST

START_TEST(key_outside_section)
{
	ck_assert_int_eq(load("DEBUG = 1\n"), TG_ECONFIG);
	ck_assert_error("tg.ini:1: key 'DEBUG' is outside any [section]");
}
END_TEST

START_TEST(missing_tg_config_file)
{
	tg_shutdown();
	setenv("TG_CONFIG", "/nonexistent/tg.ini", 1);
	ck_assert_int_eq(tg_init(), TG_ECONFIG);
	ck_assert_error("TG_CONFIG=/nonexistent/tg.ini: no such file");
}
END_TEST

START_TEST(bad_environment_value)
{
	tg_shutdown();
	setenv("DEBUG", "verbose", 1);
	ck_assert_int_eq(tg_init(), TG_ECONFIG);
	ck_assert_error("environment DEBUG: DEBUG: expected an integer");
}
END_TEST

START_TEST(api_rejects_bad_keys_and_values)
{
	ck_assert_int_eq(tg_config_set("NOPE", "1"), TG_EINVAL);
	ck_assert_error("config_set: unknown key 'NOPE'");
	ck_assert_int_eq(tg_config_set("DEBUG", "x"), TG_ECONFIG);
	ck_assert_error("DEBUG: expected an integer");
	ck_assert_int_eq(tg_config_set(".cc", "x"), TG_EINVAL);
	ck_assert_error("bad key '.cc'");
	ck_assert_int_eq(tg_config_set(NULL, "x"), TG_EINVAL);
	ck_assert_ptr_null(tg_config_get("cpu."));
}
END_TEST

START_TEST(shutdown_forgets_api_settings)
{
	ck_assert_int_eq(tg_config_set("CACHELEVEL", "3"), 0);
	tg_shutdown();
	ck_assert_ptr_null(tg_config_get("CACHELEVEL"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");

	tcase_add_test(tc, reads_core_and_plugin_sections);
	tcase_add_test(tc, core_keys_are_case_insensitive);
	tcase_add_test(tc, environment_beats_file_and_api_beats_both);
	tcase_add_test(tc, later_files_override_earlier_ones);
	tcase_add_test(tc, syntax_error_names_file_and_line);
	tcase_add_test(tc, unknown_core_key_names_line_and_key);
	tcase_add_test(tc, bad_integer_value_names_key_and_value);
	tcase_add_test(tc, bad_boolean_value);
	tcase_add_test(tc, key_outside_section);
	tcase_add_test(tc, missing_tg_config_file);
	tcase_add_test(tc, bad_environment_value);
	tcase_add_test(tc, api_rejects_bad_keys_and_values);
	tcase_add_test(tc, shutdown_forgets_api_settings);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

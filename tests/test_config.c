/*
 * test_config.c - configuration: files in order, environment and API
 * overrides, plugin sections, and every kind of bad input reported with
 * file, line and key.
 */
#include "config.h"

#include <sys/stat.h>

#include "testlib.h"
#include "../libtgcore/ir/ir.h"

static char xdg_config_home[512];

/* Each test starts from the suite's environment, also when Check runs
 * them in one process (CK_FORK=no, as under valgrind). */
static void fresh(void)
{
	static const char *const vars[] = {
		"TG_CONFIG", "DEBUG", "CACHELEVEL", "TG_CPU_CC",
		"SPLIT_REDUCEOP", "REDUCEOP_SPLIT_THRESHOLD",
	};

	tg_shutdown();
	for (size_t i = 0; i < TG_ARRAY_LEN(vars); i++)
		unsetenv(vars[i]);
	setenv("XDG_CONFIG_HOME", xdg_config_home, 1);
}

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

/* TG_CONFIG naming something that is not a file says what it is; a
 * FIFO was opened and waited on for a writer. */
START_TEST(config_that_is_not_a_file_says_what_it_is)
{
	const char *fifo = tl_tmp_path("fifo.ini");

	tg_shutdown();
	setenv("TG_CONFIG", "/dev/null", 1);
	ck_assert_int_eq(tg_init(), TG_ECONFIG);
	ck_assert_error("config: TG_CONFIG=/dev/null: is a character device");
	tg_shutdown();
	setenv("TG_CONFIG", getenv("TG_TEST_TMP"), 1);
	ck_assert_int_eq(tg_init(), TG_ECONFIG);
	ck_assert_error(": is a directory");
	tg_shutdown();
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	setenv("TG_CONFIG", fifo, 1);
	ck_assert_int_eq(tg_init(), TG_ECONFIG);
	ck_assert_error(": is a FIFO");
	unlink(fifo);
	tg_shutdown();
	ck_assert_int_eq(tg_init(), TG_ECONFIG);
	ck_assert_error(": no such file");
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
	/* bytes that are not text are shown escaped */
	ck_assert_int_eq(load("[core]\nDEBUG = \x1b[31m\xff\n"), TG_ECONFIG);
	ck_assert_error("tg.ini:2: DEBUG: expected an integer from 0 to 7, "
	                "got '\\x1B[31m\\xFF'");
}
END_TEST

/* A plugin's value is checked by the plugin; the core only says where
 * it came from (tg_cfg_error, the host table's config_error). */
START_TEST(plugin_value_errors_name_their_origin)
{
	ck_assert_int_eq(load("[core]\nDEBUG = 0\n[cpu]\nthreads = x\n"), 0);
	ck_assert_int_eq(tg_cfg_error("cpu", "threads", "expected %d", 1),
	                 TG_ECONFIG);
	ck_assert_error("config: ");
	ck_assert_error("tg.ini:4: [cpu] threads: expected 1, got 'x'");
	setenv("TG_CPU_THREADS", "y\t", 1);
	tg_cfg_error("cpu", "threads", "expected 2");
	ck_assert_error("config: environment TG_CPU_THREADS: [cpu] threads: "
	                "expected 2, got 'y\\t'");
	ck_assert_int_eq(tg_config_set("cpu.threads", "z"), 0);
	tg_cfg_error("cpu", "threads", "expected 3");
	ck_assert_error("config: tg_config_set(): [cpu] threads: expected 3, "
	                "got 'z'");
	tg_cfg_error("cpu", "cc", "expected 4");
	ck_assert_error("config: [cpu] cc (unset): expected 4");
	/* the public form, for an application's own sections */
	ck_assert_int_eq(tg_config_error("cpu.threads", "expected %s", "5"),
	                 TG_ECONFIG);
	ck_assert_error("config: tg_config_set(): [cpu] threads: expected 5, "
	                "got 'z'");
	ck_assert_int_eq(tg_config_error("cpu.", "x"), TG_EINVAL);
	ck_assert_int_eq(tg_config_error(NULL, "x"), TG_EINVAL);
	ck_assert_error("config_error: key is NULL");
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

START_TEST(core_keys_read_by_enum_give_their_defaults)
{
	ck_assert_int_eq(load("[core]\n"), 0);
	ck_assert_int_eq(tg_setting_int(TG_KEY_DEBUG), 0);
	ck_assert_int_eq(tg_setting_int(TG_KEY_NOOPT), 0);
	ck_assert_int_eq(tg_setting_int(TG_KEY_CACHELEVEL), 2);
	ck_assert_int_eq(tg_setting_int(TG_KEY_LRU), 1);
	ck_assert_int_eq(tg_setting_int(TG_KEY_SPLIT_REDUCEOP), 1);
	ck_assert_int_eq(tg_setting_int(TG_KEY_REDUCEOP_SPLIT_THRESHOLD),
	                 32768);
	ck_assert_ptr_null(tg_setting_str(TG_KEY_CACHEDB));
	ck_assert_ptr_null(tg_setting_str(TG_KEY_DEFAULT_FLOAT));
	ck_assert_str_eq(tg_setting_origin(TG_KEY_NOOPT), "default");
	ck_assert_str_eq(tg_setting_name(TG_KEY_REDUCEOP_SPLIT_THRESHOLD),
	                 "REDUCEOP_SPLIT_THRESHOLD");
	ck_assert_str_eq(tg_setting_name(TG_KEY_PLUGINS_DISABLE),
	                 "plugins_disable");
	/* out of the enum: no key, no crash */
	ck_assert_str_eq(tg_setting_name(TG_NKEYS), "?");
	ck_assert_ptr_null(tg_setting_str(TG_NKEYS));
	ck_assert_int_eq(tg_setting_int_(TG_NKEYS), 0);
	ck_assert_str_eq(tg_setting_origin(TG_NKEYS), "default");
}
END_TEST

START_TEST(split_reduceop_keys_from_file_environment_and_api)
{
	ck_assert_int_eq(load("[core]\nSPLIT_REDUCEOP = no\n"
	                      "reduceop_split_threshold = 4096\n"), 0);
	ck_assert_int_eq(tg_setting_int(TG_KEY_SPLIT_REDUCEOP), 0);
	ck_assert_int_eq(tg_setting_int(TG_KEY_REDUCEOP_SPLIT_THRESHOLD),
	                 4096);
	ck_assert_str_eq(tg_config_get("SPLIT_REDUCEOP"), "no");
	ck_assert_ptr_nonnull(strstr(tg_setting_origin(TG_KEY_SPLIT_REDUCEOP),
	                             "tg.ini:2"));
	setenv("SPLIT_REDUCEOP", "1", 1);
	ck_assert_int_eq(tg_setting_int(TG_KEY_SPLIT_REDUCEOP), 1);
	ck_assert_str_eq(tg_setting_origin(TG_KEY_SPLIT_REDUCEOP),
	                 "environment SPLIT_REDUCEOP");
	ck_assert_int_eq(tg_config_set("REDUCEOP_SPLIT_THRESHOLD", "100"), 0);
	ck_assert_int_eq(tg_setting_int(TG_KEY_REDUCEOP_SPLIT_THRESHOLD), 100);
	ck_assert_str_eq(tg_setting_origin(TG_KEY_REDUCEOP_SPLIT_THRESHOLD),
	                 "tg_config_set()");
	unsetenv("SPLIT_REDUCEOP");
}
END_TEST

START_TEST(split_reduceop_keys_refuse_bad_values)
{
	ck_assert_int_eq(load("[core]\nREDUCEOP_SPLIT_THRESHOLD = 0\n"),
	                 TG_ECONFIG);
	ck_assert_error("tg.ini:2: REDUCEOP_SPLIT_THRESHOLD: expected an "
	                "integer from 1 to 9223372036854775807, got '0'");
	ck_assert_int_eq(load("[core]\nSPLIT_REDUCEOP = maybe\n"), TG_ECONFIG);
	ck_assert_error("tg.ini:2: SPLIT_REDUCEOP: expected yes or no");
	tg_shutdown();
	unsetenv("TG_CONFIG");
	setenv("REDUCEOP_SPLIT_THRESHOLD", "big", 1);
	ck_assert_int_eq(tg_init(), TG_ECONFIG);
	ck_assert_error("environment REDUCEOP_SPLIT_THRESHOLD: "
	                "REDUCEOP_SPLIT_THRESHOLD: expected an integer");
	unsetenv("REDUCEOP_SPLIT_THRESHOLD");
	tg_shutdown();
	ck_assert_int_eq(tg_config_set("REDUCEOP_SPLIT_THRESHOLD", "-5"),
	                 TG_ECONFIG);
	ck_assert_error("tg_config_set(): REDUCEOP_SPLIT_THRESHOLD: expected "
	                "an integer from 1");
	ck_assert_int_eq(tg_config_set("SPLIT_REDUCEOP", "2"), TG_ECONFIG);
	ck_assert_error("SPLIT_REDUCEOP: expected yes or no");
}
END_TEST

START_TEST(core_section_is_checked_in_any_case)
{
	/* "Core.DEBUG" is the [core] key DEBUG: checked like "DEBUG" */
	ck_assert_int_eq(tg_config_set("Core.DEBUG", "lots"), TG_ECONFIG);
	ck_assert_error("DEBUG: expected an integer from 0 to 7");
	ck_assert_int_eq(tg_config_set("CORE.NOPE", "1"), TG_EINVAL);
	ck_assert_error("config_set: unknown key 'NOPE'");
	ck_assert_int_eq(tg_config_set("Core.NOOPT", "1"), 0);
	ck_assert_int_eq(tg_setting_int(TG_KEY_NOOPT), 1);
	ck_assert_str_eq(tg_config_get("core.noopt"), "1");
}
END_TEST

/* Every [core] key is documented (commented out, with its default) in
 * the shipped conf/tgcore.ini. */
START_TEST(every_core_key_is_documented_in_the_shipped_file)
{
	char path[512], line[512];
	int seen[TG_NKEYS] = { 0 };
	const char *src = getenv("TG_TEST_SRCDIR");
	FILE *f;

	if (src)
		snprintf(path, sizeof path, "%s/../conf/tgcore.ini", src);
	else  /* run by hand: next to this file */
		snprintf(path, sizeof path, "%.*s../conf/tgcore.ini",
		         (int)(strrchr(__FILE__, '/') + 1 - __FILE__),
		         __FILE__);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	while (fgets(line, sizeof line, f))
		for (int k = 0; k < TG_NKEYS; k++) {
			size_t n = strlen(tg_setting_name(k));
			if (line[0] == ';' &&
			    !strncmp(line + 1, tg_setting_name(k), n) &&
			    (line[n + 1] == ' ' || line[n + 1] == '='))
				seen[k] = 1;
		}
	fclose(f);
	for (int k = 0; k < TG_NKEYS; k++)
		ck_assert_msg(seen[k], "%s: no ';%s = ...' line", path,
		              tg_setting_name(k));
}
END_TEST

/* A value handed out stays readable after the key is set again or
 * removed (valgrind and ASan would see a use after free), and a value
 * set again is the same pooled string. */
START_TEST(got_values_outlive_later_sets)
{
	const char *a, *b, *c;

	ck_assert_int_eq(tg_config_set("cpu.cc", "gcc-12"), 0);
	a = tg_config_get("cpu.cc");
	ck_assert_int_eq(tg_config_set("cpu.cc", "clang-16"), 0);
	b = tg_config_get("cpu.cc");
	ck_assert_int_eq(tg_config_set("cpu.cc", NULL), 0);
	ck_assert_str_eq(a, "gcc-12");
	ck_assert_str_eq(b, "clang-16");
	ck_assert_int_eq(tg_config_set("cpu.cc", "gcc-12"), 0);
	c = tg_config_get("cpu.cc");
	ck_assert_ptr_eq(a, c);
	ck_assert_int_eq(tg_config_set("CACHELEVEL", "3"), 0);
	a = tg_setting_str(TG_KEY_CACHELEVEL);
	ck_assert_int_eq(tg_config_set("CACHELEVEL", "4"), 0);
	ck_assert_str_eq(a, "3");
	ck_assert_int_eq(tg_setting_int(TG_KEY_CACHELEVEL), 4);
}
END_TEST

START_TEST(setting_debug_sets_the_level_at_once)
{
	ck_assert_int_eq(load("[core]\nDEBUG = 1\n"), 0);
	ck_assert_int_eq(tg_debug_level(), 1);
	ck_assert_int_eq(tg_config_set("DEBUG", "3"), 0);
	ck_assert_int_eq(tg_debug_level(), 3);
	ck_assert_int_eq(tg_config_set("DEBUG", NULL), 0);
	ck_assert_int_eq(tg_debug_level(), 1);  /* back to the file's */
	tg_shutdown();
	ck_assert_int_eq(tg_debug_level(), 0);
}
END_TEST

enum { NTHREADS = 4, NROUNDS = 400 };

/* Sets, reads and removes keys; every value read must be one some
 * thread set (or the file's), whole. */
static void *setter(void *arg)
{
	int id = (int)(intptr_t)arg, bad = 0;
	char v[32], dbg[4];

	for (int i = 0; i < NROUNDS; i++) {
		const char *got;

		snprintf(v, sizeof v, "cc-%d-%d", id, i % 5);
		snprintf(dbg, sizeof dbg, "%d", (id + i) % 3);
		bad |= tg_config_set("cpu.cc", v) != 0;
		bad |= tg_config_set("DEBUG", dbg) != 0;
		got = tg_config_get("cpu.cc");
		bad |= !got || strncmp(got, "cc-", 3);
		got = tg_config_get("NOOPT");
		bad |= got && strcmp(got, "0") && strcmp(got, "1");
		bad |= tg_config_set("NOOPT", i % 2 ? "1" : NULL) != 0;
		bad |= tg_debug_level() < 0 || tg_debug_level() > 2;
		bad |= tg_setting_int(TG_KEY_REDUCEOP_SPLIT_THRESHOLD) != 512;
		(void)tg_setting_origin(TG_KEY_NOOPT);
		bad |= strcmp(tg_config_get("cpu.note"), "from file") != 0;
	}
	return (void *)(intptr_t)bad;
}

START_TEST(set_and_get_from_several_threads)
{
	pthread_t t[NTHREADS];
	void *bad;

	ck_assert_int_eq(load("[core]\nREDUCEOP_SPLIT_THRESHOLD = 512\n"
	                      "[cpu]\nnote = from file\n"), 0);
	for (intptr_t i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, setter,
		                                (void *)i), 0);
	for (int i = 0; i < NTHREADS; i++) {
		ck_assert_int_eq(pthread_join(t[i], &bad), 0);
		ck_assert_msg(!bad, "thread %d read a bad value", i);
	}
	ck_assert_int_eq(strncmp(tg_config_get("cpu.cc"), "cc-", 3), 0);
	ck_assert_str_eq(tg_config_get("cpu.note"), "from file");
	ck_assert_int_le(tg_debug_level(), 2);
}
END_TEST

START_TEST(settings_snapshot_holds_the_defaults)
{
	tg_settings st;

	ck_assert_int_eq(load("[core]\n"), 0);
	memset(&st, 0x55, sizeof st);
	ck_assert_int_eq(tg_settings_read(&st), 0);
	ck_assert_int_eq(st.debug, 0);
	ck_assert_int_eq(st.noopt, 0);
	ck_assert_int_eq(st.split_reduceop, 1);
	ck_assert_int_eq(st.reduceop_split_threshold, 32768);
	ck_assert_int_eq(st.default_float, TG_FLOAT32);
	ck_assert_int_eq(st.cachelevel, 2);
	ck_assert_int_eq(st.graph, 0);
	ck_assert_int_eq(st.ring, 1);
	ck_assert_int_eq(st.jit, 1);
}
END_TEST

START_TEST(settings_snapshot_merges_file_environment_and_api)
{
	tg_settings st, later;

	ck_assert_int_eq(load("[core]\nNOOPT = yes\nDEFAULT_FLOAT = HALF\n"
	                      "CACHELEVEL = 0\nREDUCEOP_SPLIT_THRESHOLD = 9\n"),
	                 0);
	setenv("REDUCEOP_SPLIT_THRESHOLD", "100", 1);  /* beats the file */
	ck_assert_int_eq(tg_config_set("SPLIT_REDUCEOP", "off"), 0);
	ck_assert_int_eq(tg_config_set("DEBUG", "2"), 0);
	ck_assert_int_eq(tg_config_set("RING", "2"), 0);
	ck_assert_int_eq(tg_config_set("JIT", "0"), 0);
	ck_assert_int_eq(tg_config_set("GRAPH", "1"), 0);
	ck_assert_int_eq(tg_settings_read(&st), 0);
	ck_assert_int_eq(st.ring, 2);
	ck_assert_int_eq(st.jit, 0);
	ck_assert_int_eq(st.graph, 1);
	ck_assert_int_eq(st.debug, 2);
	ck_assert_int_eq(st.noopt, 1);
	ck_assert_int_eq(st.split_reduceop, 0);
	ck_assert_int_eq(st.reduceop_split_threshold, 100);
	ck_assert_int_eq(st.default_float, TG_FLOAT16);
	ck_assert_int_eq(st.cachelevel, 0);
	/* a snapshot is a copy: later sets change the next one only */
	ck_assert_int_eq(tg_config_set("NOOPT", "0"), 0);
	ck_assert_int_eq(tg_config_set("DEFAULT_FLOAT", "float64"), 0);
	ck_assert_int_eq(tg_settings_read(&later), 0);
	ck_assert_int_eq(st.noopt, 1);
	ck_assert_int_eq(later.noopt, 0);
	ck_assert_int_eq(later.default_float, TG_FLOAT64);
}
END_TEST

START_TEST(settings_snapshot_reports_bad_calls_and_configs)
{
	tg_settings st;

	ck_assert_int_eq(tg_settings_read(NULL), TG_EINVAL);
	ck_assert_error("settings_read: out is NULL");
	ck_assert_int_eq(load("[core]\nNOOPT = 1\nLRU = sometimes\n"),
	                 TG_ECONFIG);
	memset(&st, 0x55, sizeof st);
	ck_assert_int_eq(tg_settings_read(&st), TG_ECONFIG);
	ck_assert_error("tg.ini:3: LRU: expected yes or no");
	ck_assert_int_eq(st.noopt, 1);  /* read before the bad line */
	ck_assert_int_eq(st.cachelevel, 2);
	ck_assert_int_eq(st.default_float, TG_FLOAT32);
}
END_TEST

/* util/config.c keeps its own list of the float types' names, since it
 * calls nothing above util/: DEFAULT_FLOAT takes exactly the public and
 * C names that tg_dtype_parse (dtype.c) reads as a float type. */
START_TEST(float_type_names_agree_with_dtype_names)
{
	tg_settings st;
	char c[32];

	for (unsigned dt = 0; dt < TG_NDTYPES; dt++) {
		const char *names[] = {
			tg_dtype_name((tg_dtype)dt),
			tg_type_format((tg_type)dt, c, sizeof c),
		};

		for (size_t i = 0; i < TG_ARRAY_LEN(names); i++) {
			int is_float = tg_dtype_is_float((tg_dtype)dt);
			tg_dtype parsed;

			ck_assert_int_eq(tg_dtype_parse(names[i], &parsed), 0);
			ck_assert_int_eq(parsed, dt);
			ck_assert_int_eq(tg_config_set("DEFAULT_FLOAT",
			                               names[i]),
			                 is_float ? 0 : TG_ECONFIG);
			ck_assert_int_eq(tg_settings_read(&st), 0);
			ck_assert_int_eq(st.default_float,
			                 is_float ? dt : TG_FLOAT32);
			tg_config_set("DEFAULT_FLOAT", NULL);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");
	const char *xdg = getenv("XDG_CONFIG_HOME");

	snprintf(xdg_config_home, sizeof xdg_config_home, "%s",
	         xdg ? xdg : "/nonexistent");
	tcase_add_checked_fixture(tc, fresh, NULL);

	tcase_add_test(tc, reads_core_and_plugin_sections);
	tcase_add_test(tc, core_keys_are_case_insensitive);
	tcase_add_test(tc, environment_beats_file_and_api_beats_both);
	tcase_add_test(tc, later_files_override_earlier_ones);
	tcase_add_test(tc, syntax_error_names_file_and_line);
	tcase_add_test(tc, unknown_core_key_names_line_and_key);
	tcase_add_test(tc, bad_integer_value_names_key_and_value);
	tcase_add_test(tc, plugin_value_errors_name_their_origin);
	tcase_add_test(tc, config_that_is_not_a_file_says_what_it_is);
	tcase_add_test(tc, bad_boolean_value);
	tcase_add_test(tc, key_outside_section);
	tcase_add_test(tc, missing_tg_config_file);
	tcase_add_test(tc, bad_environment_value);
	tcase_add_test(tc, api_rejects_bad_keys_and_values);
	tcase_add_test(tc, shutdown_forgets_api_settings);
	tcase_add_test(tc, core_keys_read_by_enum_give_their_defaults);
	tcase_add_test(tc, split_reduceop_keys_from_file_environment_and_api);
	tcase_add_test(tc, split_reduceop_keys_refuse_bad_values);
	tcase_add_test(tc, core_section_is_checked_in_any_case);
	tcase_add_test(tc, every_core_key_is_documented_in_the_shipped_file);
	tcase_add_test(tc, got_values_outlive_later_sets);
	tcase_add_test(tc, setting_debug_sets_the_level_at_once);
	tcase_add_test(tc, set_and_get_from_several_threads);
	tcase_add_test(tc, settings_snapshot_holds_the_defaults);
	tcase_add_test(tc, settings_snapshot_merges_file_environment_and_api);
	tcase_add_test(tc, settings_snapshot_reports_bad_calls_and_configs);
	tcase_add_test(tc, float_type_names_agree_with_dtype_names);
	suite_add_tcase(s, tc);
	return tl_run(s);
}

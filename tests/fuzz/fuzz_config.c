/*
 * fuzz_config.c - libFuzzer target: the input as the file $TG_CONFIG
 * names, read at start-up (util/config.c): inih's parser, then
 * tgcore's checks of [core] keys and values and the plugin sections
 * stored as they are.
 *
 * What must hold: a refused file is refused with a message starting
 * "config: "; once a file is accepted, every [core] number or switch
 * reads back within its range and DEFAULT_FLOAT as a float type.
 * tg_config_unload() drops everything between inputs, so each input
 * starts from nothing, as a process does.
 */
#include "config.h"

#include <stdlib.h>

#include "core.h"
#include "ir/ir.h" /* tg_scalar_is_float */
#include "fuzz.h"

/* The range of each numeric [core] key, from the table config.c
 * checks against. */
static const struct {
	int numeric;
	long min, max;
} range[TG_NKEYS] = {
#define RANGE_ROW(id, name, env, kind, min, max, def)            \
	[TG_KEY_##id] = { TG_K##kind == TG_KINT ||               \
	                  TG_K##kind == TG_KBOOL, min, max },
	TG_CORE_KEYS(RANGE_ROW)
#undef RANGE_ROW
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	/* only our file: no user file (/dev/null is no directory) */
	setenv("XDG_CONFIG_HOME", "/dev/null", 1);
	setenv("TG_CONFIG", fuzz_file(NULL, 0), 1);
	return 0;
}

static void check_settings(void)
{
	tg_settings st;
	size_t k;
	long v;

	for (k = 0; k < TG_NKEYS; k++) {
		/* origins and text too: they walk the stored entries */
		(void)tg_setting_origin((enum tg_key)k);
		(void)tg_setting_str((enum tg_key)k);
		if (!range[k].numeric)
			continue;
		v = tg_setting_int_((enum tg_key)k);
		if (v < range[k].min || v > range[k].max)
			fuzz_abort("%s reads as %ld, outside [%ld, %ld]",
			           tg_setting_name((enum tg_key)k), v,
			           range[k].min, range[k].max);
	}
	if (tg_settings_read(&st))
		fuzz_abort("settings_read failed: %s", tg_last_error());
	if (!tg_scalar_is_float(st.default_float))
		fuzz_abort("DEFAULT_FLOAT reads as %s",
		           tg_dtype_name(st.default_float));
	/* a plugin's lookups (section and key matched case-blind) */
	(void)tg_config_get("cpu.cc");
	(void)tg_config_int("cpu.threads", 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_file(data, size);
	if (!tg_ensure_init())
		check_settings();
	else if (!fuzz_starts(tg_last_error(), "config: "))
		fuzz_abort("refused without naming config: '%s'",
		           tg_last_error());
	tg_config_unload();
	return 0;
}

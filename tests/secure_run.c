/*
 * secure_run.c - the program tests/secure.sh runs setgid: computes
 * x*2+1 on the CPU, which compiles a kernel, with the plugins of the
 * directory argv[1] (set through the API: in secure mode the core
 * ignores TG_PLUGIN_PATH).  Prints "ok" and exits 0 when the values are
 * right; else prints the library's error and exits 1.
 */
#include "config.h"

#include <stdio.h>

#include <tg/tg.h>

int main(int argc, char **argv)
{
	static const float in[3] = { 1, 2, 3 };
	const int64_t shape[1] = { 3 };
	float out[3] = { 0 };
	tg_tensor *x, *x2 = NULL, *y = NULL;
	int rc = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: secure_run PLUGIN_DIR\n");
		return 2;
	}
	if (tg_config_set("plugin_path", argv[1]) ||
	    tg_config_set("default_plugin_path", "no") ||
	    tg_config_set("DEVICE", "CPU"))
		goto out;
	x = tg_tensor_new(NULL, TG_FLOAT32, 1, shape, in);
	x2 = x ? tg_mul_s(x, 2) : NULL;
	y = x2 ? tg_add_s(x2, 1) : NULL;
	tg_tensor_unref(x2);
	tg_tensor_unref(x);
	if (y && !tg_tensor_data(y, out, sizeof out))
		rc = out[0] != 3 || out[1] != 5 || out[2] != 7;
out:
	if (rc)
		fprintf(stderr, "secure_run: %s (values %g %g %g)\n",
		        tg_last_error(), out[0], out[1], out[2]);
	else
		printf("ok\n");
	tg_tensor_unref(y);
	tg_shutdown();
	return rc;
}

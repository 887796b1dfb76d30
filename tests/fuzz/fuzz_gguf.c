/*
 * fuzz_gguf.c - libFuzzer target: the input as a GGUF file for
 * tg_gguf_open (nn/gguf.c) and everything an opened file answers
 * (nn/gguf_get.c).
 *
 * Opening reads the header, every key-value pair and tensor info, and
 * checks the layout; then every pair is read back through the accessor
 * its type calls for (and the others, which must refuse), every array
 * element too, and every tensor's bytes are copied to the CPU device
 * (no kernel runs, so an input costs microseconds).  What must hold: a
 * refused file is refused with a message naming the op; an opened
 * one's tensors lie inside the file, do not overlap, and read back as
 * exactly the file's bytes at their offsets.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <tg/tg.h>

#include "fuzz.h"

static tg_dev *cpu;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	/* the build tree's CPU plugin, not an installed one, unless the
	 * caller chose; one thread, since no input launches a kernel */
	setenv("TG_PLUGIN_PATH", TG_FUZZ_PLUGIN_DIR, 0);
	setenv("TG_PLUGIN_DEFAULT_PATH", "0", 0);
	setenv("TG_CPU_THREADS", "1", 0);
	if (!(cpu = tg_dev_get("CPU")))
		fuzz_abort("no CPU device: %s", tg_last_error());
	return 0;
}

/* A value read every way: the right accessor must answer, the wrong
 * ones refuse; a key must find its own pair (or an earlier one: the
 * keys are unique, so the same). */
static void check_value(const tg_gguf *g, size_t i)
{
	const char *key = tg_gguf_kv_key(g, i), *s;
	int vt = tg_gguf_kv_type(g, i), et = -1;
	int64_t n;
	double d;
	size_t len = 0, count = 0, k;

	if (!key || tg_gguf_kv_find(g, key) != (long)i)
		fuzz_abort("pair %zu: key not found again", i);
	s = tg_gguf_get_str(g, key, &len);
	if ((vt == TG_GGUF_STRING) != (s != NULL))
		fuzz_abort("key '%s': type %d, get_str %s", key, vt,
		           s ? "answered" : tg_last_error());
	if (s && s[len])
		fuzz_abort("key '%s': string not NUL-terminated", key);
	(void)tg_gguf_get_int(g, key, &n);
	(void)tg_gguf_get_float(g, key, &d);
	if ((vt == TG_GGUF_ARRAY) != !tg_gguf_get_array(g, key, &et, &count))
		fuzz_abort("key '%s': type %d, get_array disagrees", key, vt);
	for (k = 0; vt == TG_GGUF_ARRAY && k <= count; k++) {
		s = tg_gguf_array_str(g, key, k, &len);
		if (s && (et != TG_GGUF_STRING || s[len] || k == count))
			fuzz_abort("key '%s': element %zu of %zu: a bad "
			           "string", key, k, count);
		if (!tg_gguf_array_int(g, key, k, &n) && k == count)
			fuzz_abort("key '%s': element %zu past the end read",
			           key, k);
		(void)tg_gguf_array_float(g, key, k, &d);
	}
}

/* Tensor i's bytes, against the input's at its offset. */
static void check_tensor(const tg_gguf *g, size_t i, const uint8_t *data,
                         size_t size)
{
	uint64_t off = tg_gguf_tensor_offset(g, i),
	         n = tg_gguf_tensor_nbytes(g, i);
	const char *name = tg_gguf_tensor_name(g, i);
	tg_tensor *t;
	void *buf;

	if (!name || tg_gguf_tensor_find(g, name) != (long)i)
		fuzz_abort("tensor %zu: name not found again", i);
	if (off % tg_gguf_alignment(g) || off > size || n > size - off || !n)
		fuzz_abort("tensor '%s': bytes [%llu, +%llu) outside the "
		           "%zu-byte file or misaligned", name,
		           (unsigned long long)off, (unsigned long long)n,
		           size);
	if (!(buf = malloc((size_t)n)))
		fuzz_abort("out of memory for %llu bytes",
		           (unsigned long long)n);
	t = tg_gguf_tensor_raw(g, i, cpu);
	if (!t || tg_tensor_data(t, buf, (size_t)n))
		fuzz_abort("tensor '%s' opened but does not read back: %s",
		           name, tg_last_error());
	if (memcmp(buf, data + off, (size_t)n))
		fuzz_abort("tensor '%s': bytes differ from the file's", name);
	tg_tensor_unref(t);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tg_gguf *g = tg_gguf_open(fuzz_file(data, size));
	uint64_t total = 0;
	size_t i;

	if (!g) {
		if (!fuzz_starts(tg_last_error(), "gguf_open: "))
			fuzz_abort("refused without naming the op: '%s'",
			           tg_last_error());
		return 0;
	}
	for (i = 0; i < tg_gguf_kv_count(g); i++)
		check_value(g, i);
	for (i = 0; i < tg_gguf_tensor_count(g); i++) {
		check_tensor(g, i, data, size);
		total += tg_gguf_tensor_nbytes(g, i);
	}
	if (total > size)  /* they would overlap */
		fuzz_abort("tensors of %llu bytes in a %zu-byte file",
		           (unsigned long long)total, size);
	tg_gguf_close(g);
	return 0;
}

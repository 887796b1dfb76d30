/*
 * fuzz_safetensors.c - libFuzzer target: the input as a safetensors
 * file for tg_safetensors_load (nn/safetensors_load.c).
 *
 * Loading parses the header length and the JSON header, checks every
 * dtype, shape and range, then copies each tensor to the device.  The
 * device is the CPU: its buffers are host memory and nothing here
 * compiles a kernel, so an input costs microseconds.  Each tensor is
 * then read back to the host.  What must hold: a refused file is
 * refused with a message naming the op; a loaded one's tensors hold,
 * all together, exactly the bytes of the data section.
 */
#include "config.h"

#include <stdlib.h>

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

/* Bytes after the header: what the tensors must cover.  Only called
 * on a loaded file, whose header length has been checked. */
static uint64_t data_section(const uint8_t *data, size_t size)
{
	uint64_t n = 0;
	int k;

	for (k = 7; k >= 0; k--)
		n = n << 8 | data[k];
	return size - 8 - n;
}

/* Reads tensor i back; returns its byte count. */
static uint64_t read_back(const tg_state *s, size_t i)
{
	tg_tensor *t = tg_state_tensor(s, i);
	size_t n = (size_t)tg_tensor_numel(t) *
	           tg_dtype_size(tg_tensor_dtype(t));
	void *buf = malloc(n ? n : 1);

	if (!buf)
		fuzz_abort("out of memory for %zu bytes", n);
	if (tg_tensor_data(t, buf, n))
		fuzz_abort("tensor '%s' loaded but does not read back: %s",
		           tg_state_name(s, i), tg_last_error());
	free(buf);
	return n;
}

static void check_loaded(const tg_state *s, const uint8_t *data,
                         size_t size)
{
	uint64_t total = 0, want = data_section(data, size);
	size_t i;

	for (i = 0; i < tg_state_count(s); i++)
		total += read_back(s, i);
	if (total != want)
		fuzz_abort("loaded tensors hold %llu bytes, the data section "
		           "%llu", (unsigned long long)total,
		           (unsigned long long)want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tg_state *s = tg_safetensors_load(fuzz_file(data, size), cpu);

	if (s)
		check_loaded(s, data, size);
	else if (!fuzz_starts(tg_last_error(), "safetensors_load: "))
		fuzz_abort("refused without naming the op: '%s'",
		           tg_last_error());
	tg_state_free(s);
	return 0;
}

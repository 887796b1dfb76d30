/*
 * hmvm.h - HOSTMEM's virtual machine: the example backend's renderer of
 * its own (TG_DIALECT_CUSTOM), as a vendor whose accelerator runs its own
 * instruction set would write one.  hostmem.c uses it when
 * `[hostmem] renderer = vm` (TG_HOSTMEM_RENDERER=vm).
 *
 *  - render: reads the linearized kernel through host->kernel_info and
 *    host->kernel_op and writes it as assembly text, one instruction a
 *    line (what the compile cache keys);
 *  - compile: assembles that text into the VM's binary (fixed-size
 *    instructions with their loop jumps resolved);
 *  - load and launch: run the binary on every work-item, one after
 *    the other, on host memory.
 */
#ifndef HMVM_H
#define HMVM_H

#include <tg/plugin.h>

/* renderer->render for the VM: the kernel as assembly text. */
int hmvm_render(const struct tg_host *host, const struct tg_kernel_view *k,
                char **src);
/* compiler->compile for the VM: assembly text -> binary blob. */
int hmvm_compile(const struct tg_host *host, const char *src, void **blob,
                 size_t *blob_len);
/* runtime->load: a program from the blob (host->alloc'd; hmvm_free). */
int hmvm_load(const struct tg_host *host, const void *blob, size_t len,
              void **prog);
void hmvm_free(const struct tg_host *host, void *prog);
/* Runs every work-item of the launch. */
int hmvm_run(const struct tg_host *host, const void *prog,
             const struct tg_launch *args);

/* The dtypes the VM computes: all but the 16-bit floats. */
#define HMVM_DTYPES (TG_DTYPE_ALL & ~(TG_DTYPE_BIT(TG_FLOAT16) | \
                                      TG_DTYPE_BIT(TG_BFLOAT16)))

#endif

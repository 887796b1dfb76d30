/*
 * fuzz.h - what the libFuzzer targets of tests/fuzz share: libFuzzer's
 * entry points, and the input as a file for the readers that only take
 * a path.
 */
#ifndef TG_FUZZ_H
#define TG_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's hooks, declared for -Wmissing-prototypes; a target that
 * needs no set-up leaves LLVMFuzzerInitialize out. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The path of a file holding data[0, size): one memfd, rewritten for
 * each input, as /proc/self/fd/N (opened again by name, it reads from
 * the start).  The path stays the same from one input to the next. */
const char *fuzz_file(const uint8_t *data, size_t size);

/* Prints "fuzz: MSG" and aborts: libFuzzer saves the input that broke
 * an invariant as a crash.  Also for a machine that cannot run the
 * target at all, which no input can fix. */
__attribute__((format(printf, 1, 2), noreturn))
void fuzz_abort(const char *fmt, ...);

/* 1 when s starts with prefix. */
int fuzz_starts(const char *s, const char *prefix);

#endif /* TG_FUZZ_H */

/*
 * log.c - the core's log and its level (tinygrad's DEBUG).
 *
 * The level is read on hot paths by every thread that compiles or runs
 * kernels, and written by tg_config_set("DEBUG") and at start-up, so it
 * is an atomic: a reader sees the old or the new level, never a torn or
 * stale-forever one.  Relaxed order is enough, because the level guards
 * only whether to print, never what memory to read.
 */
#include "config.h"

#include <stdio.h>

#include "core.h"

atomic_int tg_debug_level_;

void tg_debug_set(int level)
{
	atomic_store_explicit(&tg_debug_level_, level, memory_order_relaxed);
}

/* One line per call: the stream's lock keeps lines of several threads
 * from interleaving mid-line. */
void tg_debug_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > 0 && tg_debug_level() < level)
		return;
	va_start(ap, fmt);
	flockfile(stderr);
	fputs("tgcore: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
	va_end(ap);
}

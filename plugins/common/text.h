/*
 * text.h - the part of a compiler's log that an error message quotes,
 * shared by every plugin that compiles (cc, glslc, OpenCL, NVRTC), and
 * integer config values.
 * Linked into each as a convenience library.
 */
#ifndef TG_PLUGIN_TEXT_H
#define TG_PLUGIN_TEXT_H

#include <tg/plugin.h>

/* Bytes of the first `lines` lines of s, trailing newlines (and CRs)
 * excluded, at most `max` bytes: printed as "%.*s". */
int text_head_len(const char *s, int lines, int max);

/* A config value as a decimal integer in [min, max] (digits, maybe a
 * leading '-', maybe blanks after): 0 with *out, or -1 (*out
 * unchanged) for anything else, NULL included. */
int text_long(const char *s, long min, long max, long *out);

/* Reports that config key `key` of plugin `who` ("cpu") holds a value
 * the plugin cannot use, `fmt` saying what it expected ("expected an
 * integer from 1 to 64"), and returns TG_ECONFIG.  Through
 * host->config_error where the core has it (ABI 0.11: the message
 * names the file and line or the variable, and the value escaped),
 * else through set_error naming the section and the variable. */
int text_bad_config(const struct tg_host *host, const char *who,
                    const char *key, const char *fmt, ...) TG_PRINTF(4, 5);

#endif

/*
 * text.h - the part of a compiler's log that an error message quotes,
 * shared by every plugin that compiles (cc, glslc, OpenCL, NVRTC), and
 * integer config values.
 * Linked into each as a convenience library.
 */
#ifndef TG_PLUGIN_TEXT_H
#define TG_PLUGIN_TEXT_H

/* Bytes of the first `lines` lines of s, trailing newlines (and CRs)
 * excluded, at most `max` bytes: printed as "%.*s". */
int text_head_len(const char *s, int lines, int max);

/* A config value as a decimal integer in [min, max] (digits, maybe a
 * leading '-', maybe blanks after): 0 with *out, or -1 (*out
 * unchanged) for anything else, NULL included. */
int text_long(const char *s, long min, long max, long *out);

#endif

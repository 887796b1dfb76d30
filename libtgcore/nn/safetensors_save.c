/*
 * nn/safetensors_save.c - saving a safetensors file (tinygrad's
 * safe_save): the state's tensors realized, the JSON header written as
 * the reference writes it (strings escaped as serde_json does, padded
 * to a multiple of 8 bytes), then the data in the state's order, the
 * file written whole through tg_savefile.  Separate from loading,
 * which trusts nothing in a file, while saving writes what a state
 * holds.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "nn/state.h"
#include "nn/safetensors.h"

#define SAVE "safetensors_save"

/* -------------------------------------------------------------- saving */

/* A name or metadata string as JSON, escaped as serde_json does: quote, backslash
 * and control characters; other bytes (UTF-8) as they are. */
static void json_str(tg_strbuf *sb, const char *name)
{
	static const char from[] = "\"\\\b\f\n\r\t", to[] = "\"\\bfnrt";
	const unsigned char *p = (const unsigned char *)name;
	const char *k;

	tg_strbuf_add(sb, "\"");
	for (; *p; p++) {
		if ((k = strchr(from, *p)) != NULL)
			tg_strbuf_addf(sb, "\\%c", to[k - from]);
		else if (*p < 0x20)
			tg_strbuf_addf(sb, "\\u%04x", *p);
		else
			tg_strbuf_addn(sb, (const char *)p, 1);
	}
	tg_strbuf_add(sb, "\"");
}

static uint64_t nbytes_of(tg_tensor *t)
{
	return (uint64_t)tg_tensor_numel(t) *
	       tg_dtype_size(tg_tensor_dtype(t));
}

/* The header, padded with spaces to a multiple of 8 bytes (as the
 * reference writes it, so the data starts aligned).  NULL on OOM. */
static char *make_header(const tg_state *s, size_t *len)
{
	uint64_t off = 0, nb;
	tg_strbuf sb;
	size_t i, j;

	tg_strbuf_init(&sb);
	tg_strbuf_add(&sb, "{");
	if (s->m.n) {
		tg_strbuf_add(&sb, "\"__metadata__\":{");
		for (i = 0; i < s->m.n; i++) {
			tg_strbuf_add(&sb, i ? "," : "");
			json_str(&sb, s->m.v[i].key);
			tg_strbuf_add(&sb, ":");
			json_str(&sb, s->m.v[i].value);
		}
		tg_strbuf_add(&sb, s->e.n ? "}," : "}");
	}
	for (i = 0; i < s->e.n; i++) {
		tg_tensor *t = s->e.v[i].t;

		tg_strbuf_add(&sb, i ? "," : "");
		json_str(&sb, s->e.v[i].name);
		tg_strbuf_addf(&sb, ":{\"dtype\":\"%s\",\"shape\":[",
		               tg_sft_dtype[tg_tensor_dtype(t)]);
		for (j = 0; j < tg_tensor_ndim(t); j++)
			tg_strbuf_addf(&sb, "%s%lld", j ? "," : "",
			               (long long)tg_tensor_shape(t)[j]);
		nb = nbytes_of(t);
		tg_strbuf_addf(&sb, "],\"data_offsets\":[%llu,%llu]}",
		               (unsigned long long)off,
		               (unsigned long long)(off + nb));
		off += nb;
	}
	tg_strbuf_add(&sb, "}");
	while (sb.len % 8 && !sb.failed)
		tg_strbuf_add(&sb, " ");
	*len = sb.len;
	return tg_strbuf_finish(&sb);
}

static int write_bytes(FILE *f, const void *p, size_t n, const char *tmp)
{
	if (n && fwrite(p, 1, n, f) != n)
		return tg_sft_io_fail(SAVE, tmp, "write failed");
	return 0;
}

/* Length, header, then each tensor's bytes through one host buffer. */
static int write_file(FILE *f, const tg_state *s, const char *hdr,
                      size_t len, const char *tmp)
{
	unsigned char n8[8];
	size_t i, max = 0;
	void *buf;
	int rc, k;

	for (k = 0; k < 8; k++)
		n8[k] = (unsigned char)((uint64_t)len >> (8 * k));
	if ((rc = write_bytes(f, n8, 8, tmp)) ||
	    (rc = write_bytes(f, hdr, len, tmp)))
		return rc;
	for (i = 0; i < s->e.n; i++)
		if (nbytes_of(s->e.v[i].t) > max)
			max = (size_t)nbytes_of(s->e.v[i].t);
	if (!(buf = malloc(max ? max : 1)))
		return tg_error_oom(SAVE);
	for (i = 0; i < s->e.n && !rc; i++) {
		tg_tensor *t = s->e.v[i].t;
		size_t nb = (size_t)nbytes_of(t);

		if ((rc = tg_tensor_data(t, buf, nb)))
			tg_error_prefix("%s: tensor '%s'", SAVE,
			                s->e.v[i].name);
		else
			rc = write_bytes(f, buf, nb, tmp);
	}
	free(buf);
	return rc;
}

/* Realizes every tensor with one schedule; refuses the reserved name. */
static int prepare(const tg_state *s, const char *path)
{
	tg_tensor **ts;
	size_t i;
	int rc;

	if (tg_state_lookup_(s, "__metadata__"))
		return tg_error(TG_EINVAL, "%s: %s: the name '__metadata__' is "
		                "reserved by the format", SAVE, path);
	if (!s->e.n)
		return 0;
	if (!(ts = malloc(s->e.n * sizeof *ts)))
		return tg_error_oom(SAVE);
	for (i = 0; i < s->e.n; i++)
		ts[i] = s->e.v[i].t;
	if ((rc = tg_realize_many(ts, s->e.n)))
		tg_error_prefix("%s: %s", SAVE, path);
	free(ts);
	return rc;
}

int tg_safetensors_save(const tg_state *s, const char *path)
{
	tg_savefile *sf;
	size_t len;
	char *hdr;
	int rc;

	if (!s || !path)
		return tg_error(TG_EINVAL, "%s: NULL %s", SAVE,
		                s ? "path" : "state");
	if (BIG_ENDIAN_HOST)
		return tg_error(TG_EUNSUPPORTED, "%s: %s: safetensors data is "
		                "little-endian and this host is not", SAVE,
		                path);
	if ((rc = prepare(s, path)))
		return rc;
	if (!(hdr = make_header(s, &len)))
		return tg_error_oom(SAVE);
	if (!(sf = tg_savefile_open(path))) {
		free(hdr);
		return tg_error_prefix("%s", SAVE);
	}
	rc = write_file(tg_savefile_stream(sf), s, hdr, len, path);
	free(hdr);
	if (rc) {
		tg_savefile_discard(sf);
		return rc;
	}
	return tg_savefile_commit(sf) ? tg_error_prefix("%s", SAVE) : 0;
}


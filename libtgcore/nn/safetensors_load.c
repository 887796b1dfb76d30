/*
 * nn/safetensors_load.c - loading a safetensors file (tinygrad's
 * safe_load): the file mapped read-only, its header read
 * (safetensors.c), every tensor's range checked against its dtype and
 * shape, the ranges checked to tile the data section exactly (no gaps,
 * no overlaps, no trailing bytes), and only then the tensors made,
 * each copied straight from the mapping to its device (or, for a file
 * on DISK, read through a DISK tensor of the file).  Separate from the
 * header's reader, which never sees the file, only its header's bytes.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "nn/state.h"
#include "nn/safetensors.h"

/* The reference implementation refuses larger headers (a DoS guard). */
#define MAX_HEADER 100000000u

/* ------------------------------------------------------ layout checks */

/* "(4,6)" for messages, as tg_tensor_shape_str writes it. */
static const char *shape_str(const tinfo *ti, char *buf, size_t n)
{
	size_t i, len = (size_t)snprintf(buf, n, "(");

	for (i = 0; i < ti->ndim && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%lld",
		                        i ? "," : "", (long long)ti->shape[i]);
	if (len < n)
		snprintf(buf + len, n - len, ti->ndim == 1 ? ",)" : ")");
	return buf;
}

/* The tensor's byte count, checked: the product of its nonzero dims
 * must fit an int64 (views compute strides from it) and the bytes a
 * uint64. */
static int tensor_bytes(const char *path, const char *name,
                        const tinfo *ti, uint64_t *out)
{
	uint64_t n = 1, z = 1;
	size_t i;
	char b[400];

	for (i = 0; i < ti->ndim; i++) {
		uint64_t d = (uint64_t)ti->shape[i];

		if (__builtin_mul_overflow(n, d ? d : 1, &n) || n > INT64_MAX)
			return tg_sft_bad(path, "tensor '%s': shape %s has too "
			                  "many elements", name,
			                  shape_str(ti, b, sizeof b));
		z &= d != 0;
	}
	if (__builtin_mul_overflow(n * z, tg_dtype_size(ti->dt), out))
		return tg_sft_bad(path, "tensor '%s': %s %s is larger than "
		                  "2^64 bytes", name,
		                  shape_str(ti, b, sizeof b),
		                  tg_dtype_name(ti->dt));
	return 0;
}

/* Each range against its tensor's size and the data section. */
static int check_range(const char *path, const char *name, const tinfo *ti,
                       uint64_t size)
{
	unsigned long long b = ti->begin, e = ti->end;
	uint64_t need = 0;
	char sb[400];

	if (tensor_bytes(path, name, ti, &need))
		return TG_EINVAL;
	if (b > e)
		return tg_sft_bad(path, "tensor '%s' data_offsets [%llu, "
		                  "%llu) end before they begin", name, b, e);
	if (e > size)
		return tg_sft_bad(path, "tensor '%s' data_offsets [%llu, "
		                  "%llu) end beyond the data section (%llu "
		                  "bytes)", name, b, e,
		                  (unsigned long long)size);
	if (e - b != need)
		return tg_sft_bad(path, "tensor '%s' data_offsets [%llu, "
		                  "%llu) need %llu bytes for %s %s", name, b, e,
		                  (unsigned long long)need,
		                  shape_str(ti, sb, sizeof sb),
		                  tg_dtype_name(ti->dt));
	return 0;
}

/* Sorted by offset, the ranges must tile [0, size) exactly. */
static int check_tiling(const char *path, const tg_state *s,
                        const tinfo *info, uint64_t size)
{
	size_t n = s->e.n, k;
	uint64_t pos = 0;
	tg_range *sp;
	int rc = 0;

	if (!(sp = malloc((n ? n : 1) * sizeof *sp)))
		return tg_error_oom(LOAD);
	for (k = 0; k < n; k++)
		sp[k] = (tg_range){ info[k].begin, info[k].end, k };
	tg_ranges_sort(sp, n);
	for (k = 0; k < n && !rc; pos = sp[k++].end) {
		if (sp[k].begin > pos)
			rc = tg_sft_bad(path, "data bytes [%llu, %llu) belong "
			                "to no tensor", (unsigned long long)pos,
			                (unsigned long long)sp[k].begin);
		else if (sp[k].begin < pos)
			rc = tg_sft_bad(path, "tensors '%s' and '%s' overlap",
			                s->e.v[sp[k - 1].i].name,
			                s->e.v[sp[k].i].name);
	}
	if (!rc && pos != size)
		rc = tg_sft_bad(path, "data bytes [%llu, %llu) at the end "
		                "belong to no tensor", (unsigned long long)pos,
		                (unsigned long long)size);
	free(sp);
	return rc;
}

/* -------------------------------------------------------------- loading */

/* The file, mapped read-only. */
typedef struct mapping {
	const unsigned char *p;
	size_t size;
} mapping;

static int map_file(const char *path, mapping *m)
{
	struct stat st = { 0 };
	const char *why;
	void *p;
	int fd;

	/* a FIFO would block the open, a device read forever */
	if ((fd = tg_open_regular(path, O_RDONLY, 0, &why)) < 0)
		return tg_error(TG_EIO, "%s: %s: cannot open: %s", LOAD, path,
		                why);
	if (fstat(fd, &st)) {
		close(fd);
		return tg_sft_io_fail(LOAD, path, "cannot stat");
	}
	if (st.st_size < 8) {
		close(fd);
		return tg_sft_bad(path, "truncated: %lld bytes, need at "
		                  "least 8", (long long)st.st_size);
	}
	if ((off_t)(size_t)st.st_size != st.st_size) {
		close(fd);
		return tg_error(TG_EIO, "%s: %s: too large to map", LOAD,
		                path);
	}
	m->size = (size_t)st.st_size;
	p = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return tg_sft_io_fail(LOAD, path, "cannot map %zu bytes",
		                      m->size);
	m->p = p;
	return 0;
}

/* Header length, header, layout: everything but the tensors.  On
 * success the header ends at *data. */
static int read_file(const char *path, const mapping *m, tg_state *s,
                     tinfo_vec *info, const unsigned char **data)
{
	uint64_t n = 0, size;
	reader r;
	size_t i;
	int k;

	for (k = 7; k >= 0; k--)
		n = n << 8 | m->p[k];
	if (n > m->size - 8)
		return tg_sft_bad(path, "header length %llu larger than the "
		                  "file (%zu bytes)", (unsigned long long)n,
		                  m->size);
	if (n > MAX_HEADER)
		return tg_sft_bad(path, "header length %llu over the limit "
		                  "of %u bytes", (unsigned long long)n,
		                  MAX_HEADER);
	r = (reader){ path, m->p + 8, m->p + 8, m->p + 8 + n, NULL };
	if (tg_sft_read_header(&r, s, info))
		return TG_EINVAL;
	size = m->size - 8 - n;
	for (i = 0; i < s->e.n; i++)
		if (check_range(path, s->e.v[i].name, &info->v[i], size))
			return TG_EINVAL;
	*data = r.end;
	return check_tiling(path, s, info->v, size);
}

/* The DISK device of path (DISK:path). */
static tg_dev *disk_of(const char *path)
{
	tg_strbuf sb;
	char *name;
	tg_dev *d;

	tg_strbuf_init(&sb);
	tg_strbuf_addf(&sb, "DISK:%s", path);
	if (!(name = tg_strbuf_finish(&sb)))
		return tg_error_oom(LOAD), NULL;
	d = tg_dev_get(name);
	free(name);
	return d;
}

/* Maps the file now, so that the tensors read the file that was
 * loaded even when another replaces it by rename before they are used
 * (tg_safetensors_save does that). */
static int map_now(tg_tensor *file)
{
	tg_buffer *b = tg_tensor_buffer(file);
	int rc = b ? tg_buffer_allocate(b) : tg_last_status();

	tg_buffer_unref(b);
	return rc;
}

/* Tensor i on dev, to be read from the file (all of it, as uint8 on
 * DISK) when it is realized: its byte range, bitcast and shaped. */
static tg_tensor *lazy_tensor(tg_tensor *file, const tinfo *ti,
                              size_t data_off, tg_dev *dev)
{
	int64_t range[2] = { (int64_t)(data_off + ti->begin),
	                     (int64_t)(data_off + ti->end) };
	tg_tensor *t;

	if (ti->begin == ti->end)  /* nothing to read */
		return tg_empty(dev, ti->dt, ti->ndim, ti->shape);
	t = tg_bitcast(tg_shrink(file, 1, range), ti->dt);
	return tg_to(tg_reshape(t, ti->ndim, ti->shape), dev);
}

/* A tensor per entry, read lazily through the file's DISK device. */
static int make_tensors(const char *path, tg_state *s, const tinfo *info,
                        size_t data_off, size_t size, tg_dev *dev)
{
	int64_t n = (int64_t)size;
	tg_dev *d;
	tg_tensor *file;
	size_t i;
	int rc = 0;

	if (!dev && !(dev = tg_dev_get(NULL)))
		return tg_error_prefix("%s: %s", LOAD, path);
	if (!(d = disk_of(path)))
		return tg_error_prefix("%s: %s", LOAD, path);
	tg_scope_begin(); /* drops our references; the state keeps its own */
	if (!(file = tg_empty(d, TG_UINT8, 1, &n)) || map_now(file))
		rc = tg_error_prefix("%s: %s", LOAD, path);
	for (i = 0; i < s->e.n && !rc; i++) {
		tg_tensor *t = lazy_tensor(file, &info[i], data_off, dev);

		if (t)
			s->e.v[i].t = tg_tensor_ref(t);
		else
			rc = tg_error_prefix("%s: %s: tensor '%s'", LOAD, path,
			                     s->e.v[i].name);
	}
	tg_scope_end();
	return rc;
}

tg_state *tg_safetensors_load(const char *path, tg_dev *dev)
{
	const unsigned char *data = NULL;
	tinfo_vec info = { 0 };
	tg_state *s;
	mapping m = { 0 };
	int rc;

	if (!path)
		return tg_error(TG_EINVAL, "%s: NULL path", LOAD), NULL;
	if (BIG_ENDIAN_HOST)
		return tg_error(TG_EUNSUPPORTED, "%s: %s: safetensors data is "
		                "little-endian and this host is not", LOAD,
		                path), NULL;
	if (!(s = tg_state_new()))
		return NULL;
	if ((rc = map_file(path, &m)))
		goto out_free_state;
	rc = read_file(path, &m, s, &info, &data);
	munmap((void *)m.p, m.size);
	if (!rc)
		rc = make_tensors(path, s, info.v, (size_t)(data - m.p), m.size,
		                  dev);
out_free_state:
	TG_VEC_FREE(&info);
	if (rc) {
		tg_state_free(s);
		s = NULL;
	}
	return s;
}

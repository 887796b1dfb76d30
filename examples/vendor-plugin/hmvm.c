/*
 * hmvm.c - HOSTMEM's virtual machine (see hmvm.h): a renderer of the
 * plugin's own, an assembler and an interpreter.
 *
 * The machine has one register per instruction: instruction k writes
 * register k, and reads the registers of the instructions its sources
 * name.  A value is kept as an int64 (every integer kind, sign- or
 * zero-extended, and bool as 0/1), a uint64, or a double (float32 values
 * rounded to float32 after every instruction, which is exact: a double
 * holds every float32 and rounds +, *, / and sqrt of two without error).
 * An accumulator is the register of its DEFINE_ACC, which PHI writes.
 *
 * Assembly text, as render writes it and compile reads it:
 *   hmvm 1 <instructions>
 *   <op> <dtype> <i> <a> <u> <f> <nsrc> <src>...     one per instruction
 * op and dtype are tg/plugin.h's numbers; i, a, u and f the argument
 * (f in C99 hex, exact); DEFINE_VAR's i is its position in vals[] and
 * SPECIAL's i its axis, resolved by render from the names.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmvm.h"

#define HMVM_MAGIC 0x314d5648u  /* "HVM1" */
#define HMVM_MAX_SRC 4          /* LOAD (buf, idx, gate, alt) */

struct hmvm_ins {
	int32_t op, dtype, nsrc, jump; /* jump: RANGE's ENDRANGE, and back */
	uint32_t src[HMVM_MAX_SRC];
	int64_t i, a;
	uint64_t u;
	double f;
};

struct hmvm_prog {
	uint32_t magic, n;
	struct hmvm_ins ins[];
};

union hmvm_val {
	int64_t i;
	uint64_t u;
	double f;
};

/* ------------------------------------------------------------- render */

/* Sources the machine reads: a DEFINE_ACC only its init (its loops are
 * the RANGEs around its PHI). */
static size_t used_srcs(const struct tg_kernel_op *o)
{
	return o->op == TG_KOP_DEFINE_ACC ? 1 : o->nsrc;
}

/* DEFINE_VAR: the position of its name among the kernel's variables;
 * SPECIAL: gidx0..2 is axis 0..2.  -1 when unknown. */
static int64_t resolve(const struct tg_kernel_info *info,
                       const struct tg_kernel_op *o)
{
	if (o->op == TG_KOP_DEFINE_VAR) {
		for (size_t v = 0; o->name && v < info->nvars; v++)
			if (!strcmp(info->vars[v], o->name))
				return (int64_t)v;
		return -1;
	}
	if (o->name && !strncmp(o->name, "gidx", 4) && o->name[4] >= '0' &&
	    o->name[4] <= '2' && !o->name[5])
		return o->name[4] - '0';
	return -1;
}

/* Why the machine cannot run op o, or NULL. */
static const char *refusal(const struct tg_kernel_op *o)
{
	if (o->lanes != 1)
		return "a vector (the device sets max_upcast 1)";
	if (o->op == TG_KOP_VECTORIZE || o->op == TG_KOP_GEP ||
	    o->op == TG_KOP_WMMA)
		return "a vector op (the device sets max_upcast 1)";
	if (o->op == TG_KOP_DEFINE_LOCAL || o->op == TG_KOP_BARRIER)
		return "work-group memory (the device has none)";
	if (o->op == TG_KOP_SPECIAL || o->op == TG_KOP_DEFINE_VAR)
		return NULL;
	if (used_srcs(o) > HMVM_MAX_SRC)
		return "more sources than an instruction holds";
	if (o->dtype == TG_FLOAT16 || o->dtype == TG_BFLOAT16)
		return "a 16-bit float";
	return NULL;
}

static int render_op(const struct tg_host *host,
                     const struct tg_kernel_info *info,
                     const struct tg_kernel_op *o, size_t k, FILE *f)
{
	const char *why = refusal(o);
	int64_t i = o->i;

	if (!why && (o->op == TG_KOP_DEFINE_VAR || o->op == TG_KOP_SPECIAL)
	    && (i = resolve(info, o)) < 0)
		why = o->op == TG_KOP_SPECIAL ? "a work-group index"
		                              : "a variable not in the kernel";
	if (why)
		return host->set_error(host, TG_EUNSUPPORTED, "hostmem vm: "
		                       "kernel %s, op %zu (code %d): %s",
		                       info->name, k, o->op, why);
	fprintf(f, "%d %d %lld %lld %llu %a %zu", o->op, o->dtype,
	        (long long)i, (long long)o->a, (unsigned long long)o->u,
	        o->f, used_srcs(o));
	for (size_t s = 0; s < used_srcs(o); s++)
		fprintf(f, " %u", (unsigned)o->src[s]);
	fputc('\n', f);
	return 0;
}

int hmvm_render(const struct tg_host *host, const struct tg_kernel_view *k,
                char **src)
{
	struct tg_kernel_info info = { .struct_size = sizeof info };
	struct tg_kernel_op op = { .struct_size = sizeof op };
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if ((rc = host->kernel_info(host, k, &info)) < 0)
		return rc;
	if (!(f = open_memstream(&text, &len)))
		return host->set_error(host, TG_ENOMEM, "hostmem vm: render "
		                       "%s: out of memory", info.name);
	fprintf(f, "hmvm 1 %zu\n", info.nops);
	for (size_t i = 0; !rc && i < info.nops; i++)
		if ((rc = host->kernel_op(host, k, i, &op)) == 0)
			rc = render_op(host, &info, &op, i, f);
	if (fclose(f) != 0 && !rc)
		rc = host->set_error(host, TG_ENOMEM, "hostmem vm: render %s: "
		                     "out of memory", info.name);
	if (!rc && !(*src = host->alloc(host, len + 1)))
		rc = host->set_error(host, TG_ENOMEM, "hostmem vm: render %s: "
		                     "out of memory", info.name);
	if (!rc)
		memcpy(*src, text, len + 1);
	free(text);
	return rc;
}

/* ----------------------------------------------------------- assemble */

static int parse_ins(const char *line, size_t k, struct hmvm_ins *in)
{
	long long i, a;
	unsigned long long u;
	int used = 0, n;

	memset(in, 0, sizeof *in);
	if (sscanf(line, "%d %d %lld %lld %llu %la %d%n", &in->op, &in->dtype,
	           &i, &a, &u, &in->f, &in->nsrc, &used) != 7 ||
	    in->nsrc < 0 || in->nsrc > HMVM_MAX_SRC)
		return -1;
	in->i = i;
	in->a = a;
	in->u = u;
	for (int s = 0; s < in->nsrc; s++) {
		unsigned v;
		if (sscanf(line + used, " %u%n", &v, &n) != 1 || v >= k)
			return -1;  /* a source comes before its reader */
		in->src[s] = v;
		used += n;
	}
	return 0;
}

/* Pairs each RANGE with its ENDRANGE (jump both ways). */
static int link_loops(struct hmvm_prog *p)
{
	uint32_t open[64];
	int depth = 0;

	for (uint32_t k = 0; k < p->n; k++) {
		struct hmvm_ins *in = &p->ins[k];
		if (in->op == TG_KOP_RANGE) {
			if (depth == 64 || in->nsrc != 2)
				return -1;
			open[depth++] = k;
		} else if (in->op == TG_KOP_ENDRANGE) {
			if (!depth || in->src[0] != open[depth - 1])
				return -1;
			in->jump = (int32_t)open[--depth];
			p->ins[in->jump].jump = (int32_t)k;
		}
	}
	return depth ? -1 : 0;
}

int hmvm_compile(const struct tg_host *host, const char *src, void **blob,
                 size_t *blob_len)
{
	struct hmvm_prog *p;
	unsigned long n;
	const char *line = strchr(src, '\n');
	size_t size;

	if (sscanf(src, "hmvm 1 %lu", &n) != 1 || !line || n > (1ul << 24))
		return host->set_error(host, TG_ECOMPILE, "hostmem vm: not "
		                       "hmvm 1 assembly");
	size = sizeof *p + n * sizeof p->ins[0];
	if (!(p = host->alloc(host, size)))
		return host->set_error(host, TG_ENOMEM, "hostmem vm: %zu "
		                       "bytes", size);
	*p = (struct hmvm_prog){ .magic = HMVM_MAGIC, .n = (uint32_t)n };
	for (size_t k = 0; k < n; k++) {
		if (!line || parse_ins(line + 1, k, &p->ins[k])) {
			host->free(host, p);
			return host->set_error(host, TG_ECOMPILE, "hostmem vm: "
			                       "instruction %zu is malformed",
			                       k);
		}
		line = strchr(line + 1, '\n');
	}
	if (link_loops(p)) {
		host->free(host, p);
		return host->set_error(host, TG_ECOMPILE, "hostmem vm: loops "
		                       "do not nest");
	}
	*blob = p;
	*blob_len = size;
	return 0;
}

int hmvm_load(const struct tg_host *host, const void *blob, size_t len,
              void **prog)
{
	const struct hmvm_prog *b = blob;
	void *p;

	if (len < sizeof *b || b->magic != HMVM_MAGIC ||
	    len != sizeof *b + b->n * sizeof b->ins[0])
		return host->set_error(host, TG_EINVAL, "hostmem vm: load: "
		                       "not an hmvm binary (%zu bytes)", len);
	if (!(p = host->alloc(host, len)))
		return host->set_error(host, TG_ENOMEM, "hostmem vm: load: "
		                       "%zu bytes", len);
	memcpy(p, blob, len);
	*prog = p;
	return 0;
}

void hmvm_free(const struct tg_host *host, void *prog)
{
	host->free(host, prog);
}

/* -------------------------------------------------------------- types */

static int is_float(int dt)
{
	return dt == TG_FLOAT32 || dt == TG_FLOAT64;
}

static int is_unsigned(int dt)
{
	return dt == TG_BOOL || dt == TG_UINT8 || dt == TG_UINT16 ||
	       dt == TG_UINT32 || dt == TG_UINT64;
}

static size_t dt_size(int dt)
{
	static const unsigned char size[TG_NDTYPES] = {
		[TG_BOOL] = 1, [TG_INT8] = 1, [TG_UINT8] = 1,
		[TG_INT16] = 2, [TG_UINT16] = 2, [TG_INT32] = 4,
		[TG_UINT32] = 4, [TG_INT64] = 8, [TG_UINT64] = 8,
		[TG_FLOAT32] = 4, [TG_FLOAT64] = 8,
	};

	return dt >= 0 && dt < TG_NDTYPES ? size[dt] : 8;  /* index */
}

/* v cut to dtype dt: wrapped into its range, rounded to float32. */
static union hmvm_val norm(int dt, union hmvm_val v)
{
	switch (dt) {
	case TG_BOOL: v.i = v.u != 0; break;
	case TG_INT8: v.i = (int8_t)v.u; break;
	case TG_UINT8: v.i = (uint8_t)v.u; break;
	case TG_INT16: v.i = (int16_t)v.u; break;
	case TG_UINT16: v.i = (uint16_t)v.u; break;
	case TG_INT32: v.i = (int32_t)v.u; break;
	case TG_UINT32: v.i = (uint32_t)v.u; break;
	case TG_FLOAT32: v.f = (float)v.f; break;
	default: break;  /* 64-bit kinds, index */
	}
	return v;
}

static union hmvm_val mem_read(const char *base, int dt, int64_t idx)
{
	union hmvm_val v = { 0 };
	const char *at = base + idx * (int64_t)dt_size(dt);
	float f;

	if (dt == TG_FLOAT32) {
		memcpy(&f, at, 4);
		v.f = f;
	} else if (dt == TG_FLOAT64) {
		memcpy(&v.f, at, 8);
	} else {  /* little-endian hosts: the low bytes, then extended */
		memcpy(&v.u, at, dt_size(dt));
		v = norm(dt, v);
	}
	return v;
}

static void mem_write(char *base, int dt, int64_t idx, union hmvm_val v)
{
	char *at = base + idx * (int64_t)dt_size(dt);
	float f = (float)v.f;

	if (dt == TG_FLOAT32)
		memcpy(at, &f, 4);
	else
		memcpy(at, &v, dt_size(dt));
}

/* --------------------------------------------------------------- ALU */

static union hmvm_val cast(int from, int to, union hmvm_val v)
{
	union hmvm_val r = { 0 };

	if (to == TG_BOOL)
		r.i = is_float(from) ? v.f != 0 : v.u != 0;
	else if (is_float(to))
		r.f = is_float(from) ? v.f : from == TG_UINT64 ? (double)v.u
		                                                 : (double)v.i;
	else if (is_float(from))  /* truncates; out of range is undefined */
		r.i = isfinite(v.f) && fabs(v.f) < 9.2e18 ? (int64_t)v.f
		      : v.f >= 9.2e18 && v.f < 1.8e19 ? (int64_t)(uint64_t)v.f
		                                      : 0;
	else
		r = v;
	return norm(to, r);
}

/* The bits of the value (a float32 as its 4 bytes), reread as `to`.  A
 * float64's bits are the union's own. */
static union hmvm_val bitcast(int from, int to, union hmvm_val v)
{
	float f;
	uint32_t w;

	if (from == TG_FLOAT32) {
		f = (float)v.f;
		memcpy(&w, &f, 4);
		v.u = w;
	}
	if (to == TG_FLOAT32) {
		w = (uint32_t)v.u;
		memcpy(&f, &w, 4);
		v.f = f;
	}
	return norm(to, v);
}

static uint32_t rotl(uint32_t v, unsigned n)
{
	return v << n | v >> (32 - n);
}

/* Threefry-2x32, 20 rounds (tg/plugin.h's THREEFRY): the counter's low
 * word and the key schedule (k1, k0 ^ k1 ^ 0x1BD11BDA, k0), injected
 * after every 4 rounds with the injection count. */
static uint64_t threefry(uint64_t x, uint64_t key)
{
	static const unsigned char r[2][4] = {
		{ 13, 15, 26, 6 }, { 17, 29, 16, 24 },
	};
	uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
	uint32_t ks[3] = { k1, k0 ^ k1 ^ 0x1BD11BDAu, k0 };
	uint32_t lo = (uint32_t)x + ks[2], hi = (uint32_t)(x >> 32) + ks[0];

	for (unsigned i = 0; i < 5; i++) {
		for (unsigned j = 0; j < 4; j++) {
			lo += hi;
			hi = rotl(hi, r[i % 2][j]) ^ lo;
		}
		lo += ks[i % 3];
		hi += ks[(i + 1) % 3] + i + 1;
	}
	return (uint64_t)hi << 32 | lo;
}

static int less(int dt, union hmvm_val a, union hmvm_val b)
{
	return is_float(dt) ? a.f < b.f : is_unsigned(dt) ? a.u < b.u
	                                                  : a.i < b.i;
}

static union hmvm_val unary(int op, int dt, union hmvm_val a)
{
	union hmvm_val r = a;

	switch (op) {
	case TG_KOP_EXP2: r.f = exp2(a.f); break;
	case TG_KOP_LOG2: r.f = log2(a.f); break;
	case TG_KOP_SIN: r.f = sin(a.f); break;
	case TG_KOP_SQRT: r.f = sqrt(a.f); break;
	case TG_KOP_RECIP: r.f = 1.0 / a.f; break;
	case TG_KOP_NEG:
		if (dt == TG_BOOL)
			r.i = !a.i;
		else if (is_float(dt))
			r.f = -a.f;
		else
			r.u = 0 - a.u;
		break;
	}
	return norm(dt, r);
}

/* Integer division and remainder, truncating (C); 0 where C would trap
 * (a divisor of 0, the least int64 by -1): undefined in the ABI. */
static union hmvm_val divmod(int op, int dt, union hmvm_val a,
                             union hmvm_val b)
{
	union hmvm_val r = { 0 };

	if (is_unsigned(dt)) {
		if (b.u)
			r.u = op == TG_KOP_IDIV ? a.u / b.u : a.u % b.u;
	} else if (b.i && !(a.i == INT64_MIN && b.i == -1)) {
		r.i = op == TG_KOP_IDIV ? a.i / b.i : a.i % b.i;
	}
	return r;
}

static union hmvm_val binary(int op, int dt, union hmvm_val a,
                             union hmvm_val b)
{
	union hmvm_val r = { 0 };
	int f = is_float(dt);

	switch (op) {
	case TG_KOP_ADD: if (f) r.f = a.f + b.f; else r.u = a.u + b.u; break;
	case TG_KOP_MUL: if (f) r.f = a.f * b.f; else r.u = a.u * b.u; break;
	case TG_KOP_IDIV:
	case TG_KOP_MOD: r = divmod(op, dt, a, b); break;
	case TG_KOP_MAX:
		r = f ? (a.f != a.f || a.f > b.f ? a : b)
		      : (less(dt, b, a) ? a : b);
		break;
	case TG_KOP_CMPLT: r.i = less(dt, a, b); return r;
	case TG_KOP_CMPNE: r.i = f ? a.f != b.f : a.u != b.u; return r;
	case TG_KOP_XOR: r.u = a.u ^ b.u; break;
	case TG_KOP_OR: r.u = a.u | b.u; break;
	case TG_KOP_AND: r.u = a.u & b.u; break;
	case TG_KOP_SHL: r.u = b.u < 64 ? a.u << b.u : 0; break;
	case TG_KOP_SHR:
		r.u = b.u >= 64 ? 0 : is_unsigned(dt) ? a.u >> b.u
		                                      : (uint64_t)(a.i >> b.u);
		break;
	case TG_KOP_THREEFRY: r.u = threefry(a.u, b.u); break;
	}
	if (dt == TG_BOOL && op == TG_KOP_MUL)
		r.u = a.u & b.u;  /* bool MUL is AND (ADD: OR, by norm) */
	return norm(dt, r);
}

/* --------------------------------------------------------------- run */

struct hmvm_item {
	const struct hmvm_prog *p;
	const struct tg_launch *args;
	union hmvm_val *r;
	size_t id[3];     /* gidx0..2 of this work-item */
};

/* Executes instruction k; returns the next one. */
static uint32_t step(struct hmvm_item *it, uint32_t k)
{
	const struct hmvm_ins *in = &it->p->ins[k];
	union hmvm_val *r = it->r, *s[HMVM_MAX_SRC];
	const struct hmvm_ins *buf;

	for (int j = 0; j < in->nsrc; j++)
		s[j] = &r[in->src[j]];
	switch (in->op) {
	case TG_KOP_DEFINE_GLOBAL: r[k].i = in->i; break;
	case TG_KOP_DEFINE_VAR: r[k].i = it->args->vals[in->i]; break;
	case TG_KOP_CONST:
		r[k].i = in->i;
		if (is_float(in->dtype))
			r[k].f = in->f;
		else if (in->dtype == TG_UINT64)
			r[k].u = in->u;
		break;
	case TG_KOP_SPECIAL: r[k].i = (int64_t)it->id[in->i]; break;
	case TG_KOP_RANGE:
		r[k] = *s[0];
		if (r[k].i >= s[1]->i)
			return (uint32_t)in->jump + 1;  /* past ENDRANGE */
		break;
	case TG_KOP_ENDRANGE:
		if (++r[in->jump].i < r[it->p->ins[in->jump].src[1]].i)
			return (uint32_t)in->jump + 1;
		break;
	case TG_KOP_DEFINE_ACC: r[k] = *s[0]; break;
	case TG_KOP_PHI: r[k] = r[in->src[0]] = *s[1]; break;
	case TG_KOP_LOAD:
		buf = &it->p->ins[in->src[0]];
		r[k] = in->nsrc >= 4 && !s[2]->i ? *s[3]
		       : mem_read(it->args->bufs[buf->i], in->dtype, s[1]->i);
		break;
	case TG_KOP_STORE:
		buf = &it->p->ins[in->src[0]];
		if (in->nsrc < 4 || s[3]->i)
			mem_write(it->args->bufs[buf->i], buf->dtype, s[1]->i,
			          *s[2]);
		break;
	case TG_KOP_CAST:
		r[k] = cast(it->p->ins[in->src[0]].dtype, in->dtype, *s[0]);
		break;
	case TG_KOP_BITCAST:
		r[k] = bitcast(it->p->ins[in->src[0]].dtype, in->dtype, *s[0]);
		break;
	case TG_KOP_WHERE: r[k] = s[0]->i ? *s[1] : *s[2]; break;
	case TG_KOP_MULACC:
		r[k].f = in->dtype == TG_FLOAT32
		         ? fmaf((float)s[0]->f, (float)s[1]->f, (float)s[2]->f)
		         : fma(s[0]->f, s[1]->f, s[2]->f);
		break;
	default:
		r[k] = in->nsrc == 1 ? unary(in->op, in->dtype, *s[0])
		       : binary(in->op, in->nsrc == 2 && (in->op == TG_KOP_CMPLT
		                || in->op == TG_KOP_CMPNE)
		                ? it->p->ins[in->src[0]].dtype : in->dtype,
		                *s[0], *s[1]);
	}
	return k + 1;
}

int hmvm_run(const struct tg_host *host, const void *prog,
             const struct tg_launch *args)
{
	const struct hmvm_prog *p = prog;
	const size_t *g = args->global;
	size_t total = g[0] * g[1] * g[2];
	struct hmvm_item it = { .p = p, .args = args };

	if (!(it.r = calloc(p->n + 1, sizeof *it.r)))
		return host->set_error(host, TG_ENOMEM, "hostmem vm: launch: "
		                       "%u registers", (unsigned)p->n);
	for (size_t item = 0; item < total; item++) {
		it.id[0] = item % g[0];
		it.id[1] = item / g[0] % g[1];
		it.id[2] = item / (g[0] * g[1]);
		for (uint32_t k = 0; k < p->n;)
			k = step(&it, k);
	}
	free(it.r);
	return 0;
}

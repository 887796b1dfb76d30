/*
 * fuzz_shape.c - random chains of movement ops against a brute-force
 * index map (tinygrad's test/external/fuzz_shapetracker.py, with the
 * oracle of shape_oracle.h in place of numpy).
 *
 *   fuzz_shape [--seed N|random] [--cases N] [--seconds S] [--first K]
 *
 * Each case starts from a small random shape and applies up to 8 ops
 * (reshape, permute, expand, pad, shrink, stride with flips, a view of
 * any strides (tg_st_as_strided: sliding windows), and now and then a
 * simplify), then checks at every index of the final shape that
 * the tracker's (index, valid), evaluated from its IR expressions,
 * equals the oracle, directly and through a flattening reshape; that
 * tg_st_simplify leaves the map alone; and that tg_st_concat with a
 * second random chain on the first's output reads the composed map.
 * `make check` runs the fixed default seed; run it by hand with --seed
 * random for new cases.
 * Prints the seed, the cases run and the mismatches; exits 1 on a
 * mismatch, printing the op chain.  Case k draws from its own stream
 * (seed, k), so `--first k --cases 1` replays it alone.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shape_oracle.h"

#define MAX_ELEMS 2048   /* keeps each case's brute-force check cheap */
#define MAX_OPS 8

static uint64_t rng_state;

/* splitmix64: tiny, and every seed (even 0) gives a good stream. */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static int64_t pick(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* The op chain of the current case, printed on a mismatch. */
static char chain[4096];

static void logf_(const char *fmt, ...) TG_PRINTF(1, 2);
static void logf_(const char *fmt, ...)
{
	size_t n = strlen(chain);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(chain + n, sizeof chain - n, fmt, ap);
	va_end(ap);
}

static void log_ints(const char *op, const int64_t *v, size_t n,
                     int pairs)
{
	size_t i;

	logf_("%s(", op);
	for (i = 0; i < n; i++) {
		if (pairs)
			logf_("%s(%lld,%lld)", i ? "," : "",
			      (long long)v[2 * i], (long long)v[2 * i + 1]);
		else
			logf_("%s%lld", i ? "," : "", (long long)v[i]);
	}
	logf_(n == 1 ? ",); " : "); ");
}

/* A random shape of 1 to 4 dims with n elements (n may be 0). */
static size_t random_factors(size_t n, int64_t *shape)
{
	size_t nd = (size_t)pick(1, 4), i, left = n;
	int64_t d;

	for (i = 0; i + 1 < nd; i++) {
		d = pick(n ? 1 : 0, 6);
		while (n && left % (size_t)d)
			d--;
		shape[i] = d;
		left = n ? left / (size_t)d : 0;
	}
	shape[nd - 1] = (int64_t)left;
	return nd;
}

static int op_reshape(so_st *so)
{
	int64_t shape[TG_MAX_DIMS];
	size_t nd = random_factors(so->n, shape);

	log_ints("reshape", shape, nd, 0);
	return so_reshape(so, nd, shape);
}

static int op_permute(so_st *so)
{
	uint32_t axis[TG_MAX_DIMS];
	int64_t show[TG_MAX_DIMS];
	size_t i, j;

	for (i = 0; i < so->ndim; i++) {
		j = (size_t)pick(0, (int64_t)i);
		axis[i] = axis[j];
		axis[j] = (uint32_t)i;
	}
	for (i = 0; i < so->ndim; i++)
		show[i] = axis[i];
	log_ints("permute", show, so->ndim, 0);
	return so_permute(so, axis);
}

static int op_expand(so_st *so)
{
	int64_t shape[TG_MAX_DIMS];
	size_t i, n = 1;

	for (i = 0; i < so->ndim; i++) {
		shape[i] = so->shape[i] == 1 ? pick(1, 4) : so->shape[i];
		n *= (size_t)shape[i];
	}
	if (n > MAX_ELEMS)
		return 0;
	log_ints("expand", shape, so->ndim, 0);
	return so_expand(so, shape);
}

static int op_pad(so_st *so)
{
	int64_t arg[2 * TG_MAX_DIMS];
	size_t i, n = 1;

	for (i = 0; i < 2 * so->ndim; i++)
		arg[i] = pick(0, 3) == 0 ? pick(1, 2) : 0;
	for (i = 0; i < so->ndim; i++)
		n *= (size_t)(so->shape[i] + arg[2 * i] + arg[2 * i + 1]);
	if (n > MAX_ELEMS)
		return 0;
	log_ints("pad", arg, so->ndim, 1);
	return so_pad(so, arg);
}

static int op_shrink(so_st *so)
{
	int64_t arg[2 * TG_MAX_DIMS];
	size_t i;

	for (i = 0; i < so->ndim; i++) {
		int64_t s = so->shape[i], b = pick(0, s), e = pick(b, s);

		if (b == e && pick(0, 7))   /* empty axes, but rarely */
			b = 0, e = s;
		arg[2 * i] = b;
		arg[2 * i + 1] = e;
	}
	log_ints("shrink", arg, so->ndim, 1);
	return so_shrink(so, arg);
}

static int op_stride(so_st *so)
{
	static const int64_t muls[] = { -3, -2, -1, -1, 1, 1, 1, 2, 3 };
	int64_t mul[TG_MAX_DIMS];
	size_t i;

	for (i = 0; i < so->ndim; i++)
		mul[i] = muls[pick(0, (int64_t)TG_ARRAY_LEN(muls) - 1)];
	log_ints("stride", mul, so->ndim, 0);
	return so_stride(so, mul);
}

/* A view over the elements in row-major order (tg_st_as_strided): the
 * sliding windows of a convolution over the last one or two axes (as
 * tg_t_window makes them), or a random view that stays inside. */
static int op_as_strided(so_st *so)
{
	int64_t shape[TG_MAX_DIMS], st[TG_MAX_DIMS], row[TG_MAX_DIMS];
	int64_t acc = 1, off = 0, lo = 0, hi = 0, n = (int64_t)so->n;
	size_t i, nd = so->ndim, nk = (size_t)pick(1, nd < 2 ? 1 : 2);

	for (i = nd; i-- > 0;)
		row[i] = acc, acc *= so->shape[i];
	if (n == 0)
		return 0;
	if (pick(0, 1)) {  /* windows of k at dilation d */
		size_t lead = nd - nk;
		for (i = 0; i < lead; i++)
			shape[i] = so->shape[i], st[i] = row[i];
		for (i = 0; i < nk; i++) {
			int64_t k = pick(1, 3), d = pick(1, 2),
			        o = so->shape[lead + i] - d * (k - 1);
			if (o <= 0)
				k = 1, d = 1, o = so->shape[lead + i];
			shape[lead + i] = o, st[lead + i] = row[lead + i];
			shape[lead + nk + i] = k;
			st[lead + nk + i] = d * row[lead + i];
		}
		nd = lead + 2 * nk;
	} else {           /* any strides, the offset keeping it inside */
		nd = (size_t)pick(1, 3);
		for (i = 0; i < nd; i++) {
			shape[i] = pick(1, 4);
			st[i] = pick(-n / 2, n / 2);
			if ((shape[i] - 1) * st[i] < 0)
				lo += (shape[i] - 1) * st[i];
			else
				hi += (shape[i] - 1) * st[i];
		}
		if (hi - lo >= n)
			return 0;
		off = -lo + pick(0, n - 1 - (hi - lo));
	}
	if (so_count(nd, shape) > MAX_ELEMS)
		return 0;
	log_ints("as_strided shape", shape, nd, 0);
	log_ints("strides", st, nd, 0);
	logf_("offset %lld; ", (long long)off);
	return so_as_strided(so, nd, shape, st, off);
}

static int op_simplify(so_st *so)
{
	logf_("simplify(); ");
	return so_simplify(so);
}

static int (*const ops[])(so_st *) = {
	op_reshape, op_reshape, op_permute, op_expand, op_pad, op_shrink,
	op_stride, op_as_strided, op_simplify,
};

/* 0 when the map survives simplify, else 1 with msg. */
static int check_simplify(so_st *so, char *msg, size_t len)
{
	tg_st *s = tg_st_simplify(so->ir, so->st);
	int bad;

	if (!s) {
		snprintf(msg, len, "simplify: %s", tg_last_error());
		return 1;
	}
	bad = so_compare(so->ir, s, so->ndim, so->shape, so->map, msg, len);
	tg_st_free(s);
	return bad;
}

static uint64_t case_seed;

/* Applies 1..MAX_OPS random ops to so; 0, or 1 with msg. */
static int random_chain(so_st *so, char *msg, size_t len)
{
	int nops = (int)pick(1, MAX_OPS), k;

	for (k = 0; k < nops; k++) {
		if (ops[pick(0, (int64_t)TG_ARRAY_LEN(ops) - 1)](so)) {
			snprintf(msg, len, "op failed: %s", tg_last_error());
			return 1;
		}
	}
	return 0;
}

/* b's ops run on a's output: tg_st_concat(a, b) must read a's map
 * through b's (tinygrad's a + b, which simplifies as it goes). */
static int check_concat(so_st *a, char *msg, size_t len)
{
	int64_t *map;
	tg_st *r = NULL;
	size_t i;
	so_st b;
	int bad;

	logf_("| then: ");
	if (so_init(&b, a->ndim, a->shape) || random_chain(&b, msg, len)) {
		so_free(&b);
		return 1;
	}
	bad = !(map = malloc((b.n ? b.n : 1) * sizeof *map)) ||
	      !(r = tg_st_concat(a->ir, a->st, b.st));
	for (i = 0; !bad && i < b.n; i++)
		map[i] = b.map[i] < 0 ? -1 : a->map[b.map[i]];
	if (bad)
		snprintf(msg, len, "concat: %s", tg_last_error());
	else
		bad = so_compare(a->ir, r, b.ndim, b.shape, map, msg, len);
	tg_st_free(r);
	free(map);
	so_free(&b);
	return bad;
}

/* Runs case idx; 0 when it passes, else 1 (reported). */
static int run_case(uint64_t idx)
{
	int64_t shape[TG_MAX_DIMS];
	size_t nd, i;
	char msg[512], *s;
	int rc;
	so_st so;

	rng_state = case_seed ^ (idx * 0xd1b54a32d192ed03ull);
	nd = (size_t)pick(1, 4);
	for (i = 0; i < nd; i++)
		shape[i] = pick(0, 19) ? pick(1, 5) : 0;
	chain[0] = '\0';
	log_ints("from_shape", shape, nd, 0);
	rc = so_init(&so, nd, shape);
	if (rc)
		snprintf(msg, sizeof msg, "init: %s", tg_last_error());
	rc = rc || random_chain(&so, msg, sizeof msg) ||
	     so_check(&so, msg, sizeof msg) ||
	     check_simplify(&so, msg, sizeof msg) ||
	     check_concat(&so, msg, sizeof msg);
	if (rc) {
		s = so.st ? tg_st_format(so.st) : NULL;
		printf("MISMATCH case %llu: %s\n  ops: %s\n  st: %s\n",
		       (unsigned long long)idx, msg, chain, s ? s : "?");
		free(s);
	}
	so_free(&so);
	return rc;
}

static int usage(void)
{
	fprintf(stderr, "usage: fuzz_shape [--seed N|random] [--cases N] "
	        "[--seconds S] [--first K]\n");
	return 2;
}

int main(int argc, char **argv)
{
	uint64_t seed = 20240716;
	unsigned long cases = 10000, done, bad = 0, first = 0;
	double seconds = 300;
	time_t start = time(NULL);
	int i;

	for (i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			return usage();
		if (!strcmp(argv[i], "--seed"))
			seed = !strcmp(argv[++i], "random")
			       ? (uint64_t)time(NULL) ^ (uint64_t)clock()
			       : strtoull(argv[i], NULL, 10);
		else if (!strcmp(argv[i], "--cases"))
			cases = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--first"))
			first = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = strtod(argv[++i], NULL);
		else
			return usage();
	}
	case_seed = seed;
	printf("fuzz_shape: seed %llu\n", (unsigned long long)seed);
	for (done = 0; done < cases && bad < 5; done++) {
		if (difftime(time(NULL), start) > seconds)
			break;
		bad += (unsigned long)run_case(first + done);
	}
	printf("fuzz_shape: %lu cases, %lu mismatches (seed %llu)\n", done,
	       bad, (unsigned long long)seed);
	return bad ? 1 : 0;
}

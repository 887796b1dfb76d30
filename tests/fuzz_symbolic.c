/*
 * fuzz_symbolic.c - random symbolic expressions against C itself
 * (tinygrad's test/external/fuzz_symbolic.py, with C as the oracle).
 *
 *   fuzz_symbolic [--seed N|random] [--cases N] [--seconds S] [--show N]
 *
 * Each case draws 1-3 variables with small ranges ([0,7], [-3,5], ...)
 * and an expression over them and small constants with + - * / % max
 * min neg (divisors: nonzero constants of either sign), sometimes under
 * a comparison (< >= !=) or an AND of two.  The fuzzer keeps the tree
 * itself and evaluates it in C (/ truncates, % takes the dividend's
 * sign).  Three nodes are checked at every assignment of the variables'
 * whole ranges:
 *   - the expression made with the simplifying builders (tg_sym_*),
 *   - the same expression as raw nodes (tg_uop_alu: checks tg_sym_eval
 *     and the bounds computed for unsimplified nodes),
 *   - the raw nodes after tg_sym_simplify (the rule set on its own);
 * each must evaluate to C's value, and that value must lie within the
 * node's bounds (vmin <= value <= vmax: bounds soundness).
 *
 * Without --seed the seed is fixed (make check runs it so, and a failure
 * there reproduces); run it by hand with --seed random for new cases.
 * Exits 1 on any mismatch, after printing the case: seed, variables,
 * assignment, and the original and simplified expressions rendered.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/ir.h"

/* ---------------------------------------------------------------- rng */
/* splitmix64: the same stream on every platform, so a seed reproduces. */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static int rnd(int n) { return (int)(rng_next() % (uint64_t)n); }
/* Uniform in [lo, hi]. */
static int64_t rnd_range(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1));
}

/* -------------------------------------------------------- expressions */
enum eop {
	E_CONST, E_VAR, E_ADD, E_SUB, E_MUL, E_DIV, E_MOD, E_MAX, E_MIN,
	E_NEG, E_LT, E_GE, E_NE, E_AND
};

#define MAX_NODES 256
#define MAX_VARS 3
/* Depth 4 keeps every value far from overflow: leaves are below 10 and
 * the deepest product is below 10^16. */
#define MAX_DEPTH 4

struct enode {
	int op;
	int64_t c;  /* E_CONST */
	int var;    /* E_VAR */
	int a, b;   /* operands (indices) */
};

struct fcase {
	struct enode e[MAX_NODES];
	int n, root;
	int nvars;
	int64_t lo[MAX_VARS], hi[MAX_VARS];
};

static int node(struct fcase *fc, int op, int a, int b)
{
	struct enode *e = &fc->e[fc->n];

	memset(e, 0, sizeof *e);
	e->op = op;
	e->a = a;
	e->b = b;
	return fc->n++;
}

static int leaf_const(struct fcase *fc, int64_t c)
{
	int i = node(fc, E_CONST, -1, -1);

	fc->e[i].c = c;
	return i;
}

/* A divisor: nonzero, mostly small, sometimes one that divides the
 * usual coefficients (so the factoring rules get exercised). */
static int64_t divisor(void)
{
	static const int64_t common[] = { 2, 3, 4, 6, 8, 12, 16, -2, -4, -8 };
	int64_t d;

	if (rnd(3) == 0)
		return common[rnd((int)(sizeof common / sizeof common[0]))];
	do
		d = rnd_range(-9, 9);
	while (d == 0);
	return d;
}

/* Operands are drawn into locals first: the order in which a call's
 * arguments are evaluated is unspecified, and a seed must give the same
 * case with every compiler. */
static int gen_int(struct fcase *fc, int depth)
{
	int i, a, b, op;

	/* a node has at most two operands: depth 4 makes at most 31 nodes,
	 * and the AND of two comparisons at most 127 (MAX_NODES is 256) */
	if (depth == 0 || rnd(5) == 0) {
		if (rnd(3) != 0) {
			i = node(fc, E_VAR, -1, -1);
			fc->e[i].var = rnd(fc->nvars);
			return i;
		}
		return leaf_const(fc, rnd_range(-9, 9));
	}
	switch (rnd(12)) {
	case 0:
	case 1:
		op = E_ADD;
		break;
	case 2:
		/* sum plus a constant: the most common index shape */
		a = gen_int(fc, depth - 1);
		return node(fc, E_ADD, a, leaf_const(fc, rnd_range(-20, 20)));
	case 3:
		op = E_SUB;
		break;
	case 4:
		a = gen_int(fc, depth - 1);
		return node(fc, E_MUL, a, leaf_const(fc, rnd_range(-9, 9)));
	case 5:
		op = E_MUL;
		break;
	case 6:
	case 7:
		a = gen_int(fc, depth - 1);
		return node(fc, E_DIV, a, leaf_const(fc, divisor()));
	case 8:
	case 9:
		a = gen_int(fc, depth - 1);
		return node(fc, E_MOD, a, leaf_const(fc, divisor()));
	case 10:
		op = rnd(2) ? E_MAX : E_MIN;
		break;
	default:
		a = gen_int(fc, depth - 1);
		return node(fc, E_NEG, a, -1);
	}
	a = gen_int(fc, depth - 1);
	b = gen_int(fc, depth - 1);
	return node(fc, op, a, b);
}

static int gen_cmp(struct fcase *fc, int depth)
{
	static const int ops[] = { E_LT, E_LT, E_GE, E_NE };
	int op = ops[rnd(4)];
	int a = gen_int(fc, depth), b;

	/* mostly against a constant, as bounds checks are */
	if (rnd(2))
		b = leaf_const(fc, rnd_range(-20, 40));
	else
		b = gen_int(fc, depth);
	return node(fc, op, a, b);
}

static void gen_case(struct fcase *fc)
{
	int k, depth, a, b;

	fc->n = 0;
	fc->nvars = 1 + rnd(MAX_VARS);
	for (k = 0; k < fc->nvars; k++) {
		/* mostly nonnegative, like indices; some cross zero */
		fc->lo[k] = rnd(3) ? rnd_range(0, 3) : rnd_range(-4, -1);
		fc->hi[k] = fc->lo[k] + rnd_range(0, 8);
	}
	depth = 1 + rnd(MAX_DEPTH);
	switch (rnd(10)) {
	case 0:
	case 1:
		fc->root = gen_cmp(fc, depth);
		break;
	case 2:
		a = gen_cmp(fc, depth > 1 ? depth - 1 : 1);
		b = gen_cmp(fc, depth > 1 ? depth - 1 : 1);
		fc->root = node(fc, E_AND, a, b);
		break;
	default:
		fc->root = gen_int(fc, depth);
	}
}

/* The oracle: C itself. */
static int64_t eval_c(const struct fcase *fc, int i, const int64_t *vals)
{
	const struct enode *e = &fc->e[i];
	int64_t a = 0, b = 0;

	if (e->op == E_CONST)
		return e->c;
	if (e->op == E_VAR)
		return vals[e->var];
	a = eval_c(fc, e->a, vals);
	if (e->op != E_NEG)
		b = eval_c(fc, e->b, vals);
	switch (e->op) {
	case E_ADD: return a + b;
	case E_SUB: return a - b;
	case E_MUL: return a * b;
	case E_DIV: return a / b;   /* b is a nonzero constant */
	case E_MOD: return a % b;
	case E_MAX: return a > b ? a : b;
	case E_MIN: return a < b ? a : b;
	case E_NEG: return -a;
	case E_LT: return a < b;
	case E_GE: return a >= b;
	case E_NE: return a != b;
	default: return a && b;     /* E_AND */
	}
}

/* The expression made with the simplifying builders. */
static tg_uop *build_sym(tg_ir *ir, const struct fcase *fc, int i,
                         tg_uop *const *vars)
{
	const struct enode *e = &fc->e[i];
	tg_uop *a, *b = NULL;

	if (e->op == E_CONST)
		return tg_sym_int(ir, e->c);
	if (e->op == E_VAR)
		return vars[e->var];
	a = build_sym(ir, fc, e->a, vars);
	if (e->op != E_NEG)
		b = build_sym(ir, fc, e->b, vars);
	switch (e->op) {
	case E_ADD: return tg_sym_add(ir, a, b);
	case E_SUB: return tg_sym_sub(ir, a, b);
	case E_MUL: return tg_sym_mul(ir, a, b);
	case E_DIV: return tg_sym_idiv(ir, a, b);
	case E_MOD: return tg_sym_mod(ir, a, b);
	case E_MAX: return tg_sym_max(ir, a, b);
	case E_MIN: return tg_sym_min(ir, a, b);
	case E_NEG: return tg_sym_neg(ir, a);
	case E_LT: return tg_sym_lt(ir, a, b);
	case E_GE: return tg_sym_ge(ir, a, b);
	case E_NE: return tg_sym_ne(ir, a, b);
	default: return tg_sym_and(ir, a, b);
	}
}

/* The same expression as raw nodes: nothing simplified.  Ops without a
 * node of their own are spelled as tinygrad spells them: a-b is
 * a+(b*-1), min(a,b) is -max(-a,-b), a>=b is (a<b)!=true. */
static tg_uop *build_raw(tg_ir *ir, const struct fcase *fc, int i,
                         tg_uop *const *vars)
{
	const struct enode *e = &fc->e[i];
	tg_uop *a, *b = NULL;

	if (e->op == E_CONST)
		return tg_sym_int(ir, e->c);
	if (e->op == E_VAR)
		return vars[e->var];
	a = build_raw(ir, fc, e->a, vars);
	if (e->op != E_NEG)
		b = build_raw(ir, fc, e->b, vars);
	switch (e->op) {
	case E_ADD: return tg_uop_alu(ir, TG_ADD, a, b, NULL);
	case E_SUB:
		return tg_uop_alu(ir, TG_ADD, a,
		                  tg_uop_alu(ir, TG_MUL, b,
		                             tg_sym_int(ir, -1), NULL), NULL);
	case E_MUL: return tg_uop_alu(ir, TG_MUL, a, b, NULL);
	case E_DIV: return tg_uop_alu(ir, TG_IDIV, a, b, NULL);
	case E_MOD: return tg_uop_alu(ir, TG_MOD, a, b, NULL);
	case E_MAX: return tg_uop_alu(ir, TG_MAX, a, b, NULL);
	case E_MIN:
		a = tg_uop_alu(ir, TG_NEG, a, NULL, NULL);
		b = tg_uop_alu(ir, TG_NEG, b, NULL, NULL);
		a = tg_uop_alu(ir, TG_MAX, a, b, NULL);
		return tg_uop_alu(ir, TG_NEG, a, NULL, NULL);
	case E_NEG: return tg_uop_alu(ir, TG_NEG, a, NULL, NULL);
	case E_LT: return tg_uop_alu(ir, TG_CMPLT, a, b, NULL);
	case E_GE:
		return tg_uop_alu(ir, TG_CMPNE,
		                  tg_uop_alu(ir, TG_CMPLT, a, b, NULL),
		                  tg_uop_const_int(ir, TG_BOOL, 1), NULL);
	case E_NE: return tg_uop_alu(ir, TG_CMPNE, a, b, NULL);
	default: return tg_uop_alu(ir, TG_AND, a, b, NULL);
	}
}

/* ------------------------------------------------------------ checking */
static long mismatches;
static long by_form[3];  /* failed cases per form, as in run_case */
static long printed, max_printed = 5;

static void print_node(const char *what, const tg_uop *u)
{
	char *s = u ? tg_sym_render(u) : NULL;

	if (u)
		printf("  %-10s %s  [%" PRId64 ", %" PRId64 "]\n", what,
		       s ? s : "<render failed>", tg_uop_vmin(u),
		       tg_uop_vmax(u));
	else
		printf("  %-10s NULL\n", what);
	free(s);
}

static void report(uint64_t seed, long n, const struct fcase *fc,
                   const int64_t *vals, const char *what,
                   const char *problem, tg_uop *raw, tg_uop *sym,
                   tg_uop *simp)
{
	static const char *names[MAX_VARS] = { "a", "b", "c" };
	int k;

	if (printed++ >= max_printed)
		return;
	printf("MISMATCH seed %" PRIu64 " case %ld: %s: %s\n", seed, n, what,
	       problem);
	printf("  vars      ");
	for (k = 0; k < fc->nvars; k++)
		printf(" %s in [%" PRId64 ", %" PRId64 "]", names[k],
		       fc->lo[k], fc->hi[k]);
	printf("\n");
	if (vals) {
		printf("  at        ");
		for (k = 0; k < fc->nvars; k++)
			printf(" %s=%" PRId64, names[k], vals[k]);
		printf("  (C gives %" PRId64 ")\n",
		       eval_c(fc, fc->root, vals));
	}
	print_node("original", raw);
	print_node("builders", sym);
	print_node("simplify", simp);
}

/* One node at one assignment; 0 when it agrees with C. */
static int check_at(const tg_uop *u, const tg_uop *const *vars, int nvars,
                    const int64_t *vals, int64_t want, char *why,
                    size_t n)
{
	int64_t got = 0;
	int rc = tg_sym_eval(u, vars, vals, (size_t)nvars, &got);

	if (rc != TG_OK) {
		snprintf(why, n, "tg_sym_eval failed (%d): %s", rc,
		         tg_last_error());
		return 1;
	}
	if (got != want) {
		snprintf(why, n, "evaluates to %" PRId64 ", C gives %" PRId64,
		         got, want);
		return 1;
	}
	if (got < tg_uop_vmin(u) || got > tg_uop_vmax(u)) {
		snprintf(why, n, "value %" PRId64 " outside the bounds [%"
		         PRId64 ", %" PRId64 "]", got, tg_uop_vmin(u),
		         tg_uop_vmax(u));
		return 1;
	}
	return 0;
}

/* Runs one case; returns whether it failed.  Exits on OOM. */
static int run_case(uint64_t seed, long n, const struct fcase *fc)
{
	static const char *names[MAX_VARS] = { "a", "b", "c" };
	static const char *what[3] = { "builders", "original", "simplify" };
	tg_uop *vars[MAX_VARS], *forms[3];
	const tg_uop *cvars[MAX_VARS];
	int64_t vals[MAX_VARS];
	char why[512];
	int k, f, failed = 0;
	tg_ir *ir = tg_ir_new();

	if (!ir) {
		fprintf(stderr, "fuzz_symbolic: %s\n", tg_last_error());
		exit(2);
	}
	for (k = 0; k < fc->nvars; k++) {
		vars[k] = tg_sym_var(ir, names[k], fc->lo[k], fc->hi[k]);
		cvars[k] = vars[k];
		vals[k] = fc->lo[k];
	}
	forms[0] = build_sym(ir, fc, fc->root, vars);
	forms[1] = build_raw(ir, fc, fc->root, vars);
	forms[2] = forms[1] ? tg_sym_simplify(ir, forms[1]) : NULL;
	for (f = 0; f < 3; f++) {
		if (!forms[f]) {
			snprintf(why, sizeof why, "no node: %s",
			         tg_last_error());
			report(seed, n, fc, NULL, what[f], why, forms[1],
			       forms[0], forms[2]);
			by_form[f]++;
			failed = 1;
		}
	}
	while (!failed) {
		int64_t want = eval_c(fc, fc->root, vals);

		for (f = 0; f < 3 && !failed; f++) {
			if (check_at(forms[f], cvars, fc->nvars, vals, want,
			             why, sizeof why)) {
				report(seed, n, fc, vals, what[f], why,
				       forms[1], forms[0], forms[2]);
				by_form[f]++;
				failed = 1;
			}
		}
		/* next assignment, odometer order */
		for (k = 0; k < fc->nvars; k++) {
			if (vals[k] < fc->hi[k]) {
				vals[k]++;
				break;
			}
			vals[k] = fc->lo[k];
		}
		if (k == fc->nvars)
			break;
	}
	tg_ir_free(ir);
	return failed;
}

/* ---------------------------------------------------------------- main */
#define DEFAULT_SEED "20240601"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -1;
	*out = strtoull(s, &end, 10);
	return *end ? -1 : 0;
}

static int usage(FILE *f, int status)
{
	fprintf(f, "usage: fuzz_symbolic [--seed N|random] [--cases N] "
	        "[--seconds S] [--show N]\n"
	        "  --seed     the random stream (default " DEFAULT_SEED ")\n"
	        "  --cases    expressions to try (default 10000)\n"
	        "  --seconds  stop after this long (default 120)\n"
	        "  --show     mismatches to print (default 5)\n");
	return status;
}

int main(int argc, char **argv)
{
	static struct fcase fc;
	const char *seed_arg = DEFAULT_SEED;
	uint64_t seed, cases = 10000, seconds = 120, show;
	long n;
	double start;
	int i;

	for (i = 1; i < argc; i++) {
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(argv[i], "--help") == 0)
			return usage(stdout, 0);
		if (strcmp(argv[i], "--seed") == 0 && val) {
			seed_arg = val;
		} else if (strcmp(argv[i], "--cases") == 0 && val) {
			if (parse_u64(val, &cases))
				return usage(stderr, 2);
		} else if (strcmp(argv[i], "--seconds") == 0 && val) {
			if (parse_u64(val, &seconds))
				return usage(stderr, 2);
		} else if (strcmp(argv[i], "--show") == 0 && val) {
			if (parse_u64(val, &show))
				return usage(stderr, 2);
			max_printed = (long)show;
		} else {
			return usage(stderr, 2);
		}
		i++;
	}
	if (strcmp(seed_arg, "random") == 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		rng_state = (uint64_t)ts.tv_nsec ^
		            ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
		seed = rng_next() % 1000000000u;
	} else if (parse_u64(seed_arg, &seed)) {
		return usage(stderr, 2);
	}
	rng_state = seed;
	printf("fuzz_symbolic: seed %" PRIu64 "\n", seed);
	fflush(stdout);

	start = now();
	for (n = 0; (uint64_t)n < cases; n++) {
		/* the time bound is checked every 64 cases: a slow machine
		 * (valgrind) stops early and says so, it does not fail */
		if ((n & 63) == 0 && now() - start > (double)seconds) {
			printf("fuzz_symbolic: time bound of %" PRIu64
			       " s reached\n", seconds);
			break;
		}
		gen_case(&fc);
		mismatches += run_case(seed, n, &fc);
	}
	printf("fuzz_symbolic: seed %" PRIu64 ", %ld cases, %ld mismatches "
	       "(%.1f s)\n", seed, n, mismatches, now() - start);
	if (mismatches)
		printf("fuzz_symbolic: failing cases by form: builders %ld, "
		       "original %ld, simplify %ld\n", by_form[0], by_form[1],
		       by_form[2]);
	if (printed > max_printed)
		printf("fuzz_symbolic: %ld more mismatches not shown "
		       "(--show N)\n", printed - max_printed);
	return mismatches ? 1 : 0;
}

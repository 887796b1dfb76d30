/*
 * decode.c - decode-style generation with a symbolic position: a toy
 * one-layer attention model (random weights) writes each token's key
 * and value into a KV cache and attends over rows 0..pos.  The position
 * is a tg_variable, so the step is captured once by the JIT and replayed
 * for every position with no compiling: the kernels take pos as an
 * argument.  The same tokens are generated eagerly and through the JIT;
 * the program prints both, the time per token of each, and "decode: OK"
 * when they agree.
 *
 *     decode [--tokens N]     (N <= 63; default 48)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tg/tg.h>

#define VOCAB 48
#define DIM 32
#define MAXCTX 64

typedef struct model {
	tg_variable *pos;
	tg_tensor *emb, *wq, *wk, *wv, *wo, *head;
	tg_tensor *ck, *cv;   /* (MAXCTX, DIM) key and value caches */
} model;

/* Deterministic weights: a small LCG scaled to +-scale. */
static tg_tensor *weights(int64_t rows, int64_t cols, float scale,
                          unsigned *seed)
{
	float *v = malloc((size_t)(rows * cols) * sizeof *v);
	tg_tensor *t;

	if (!v)
		return NULL;
	for (int64_t i = 0; i < rows * cols; i++) {
		*seed = *seed * 1103515245u + 12345u;
		v[i] = scale * ((float)((*seed >> 8) & 0xffff) / 32768.0f - 1);
	}
	t = tg_tensor_new(NULL, TG_FLOAT32, 2, (int64_t[]){ rows, cols }, v);
	free(v);
	return t && tg_realize(t) == 0 ? t : NULL;
}

static int model_init(model *m, tg_variable *pos)
{
	unsigned seed = 7;

	m->pos = pos;
	m->emb = weights(VOCAB, DIM, 1.0f, &seed);
	m->wq = weights(DIM, DIM, 0.3f, &seed);
	m->wk = weights(DIM, DIM, 0.3f, &seed);
	m->wv = weights(DIM, DIM, 0.3f, &seed);
	m->wo = weights(DIM, DIM, 0.3f, &seed);
	m->head = weights(DIM, VOCAB, 0.5f, &seed);
	/* the caches are state updated in place: realized zeros */
	m->ck = weights(MAXCTX, DIM, 0, &seed);
	m->cv = weights(MAXCTX, DIM, 0, &seed);
	return m->emb && m->wq && m->wk && m->wv && m->wo && m->head &&
	       m->ck && m->cv ? 0 : -1;
}

static void model_free(model *m)
{
	tg_tensor *const all[] = { m->emb, m->wq, m->wk, m->wv, m->wo,
	                           m->head, m->ck, m->cv };

	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		tg_tensor_unref(all[i]);
}

/* cache[pos] := row: written through a view at the symbolic row pos, so
 * a step stores one row, not the whole cache. */
static int put_row(tg_tensor *cache, tg_tensor *row, int64_t pos)
{
	int64_t at[4] = { pos, tg_dim_affine(pos, 1, 1), 0, DIM };
	tg_tensor *view = tg_shrink(cache, 2, at);

	return view && !tg_assign(view, row) ? tg_realize(view) : -1;
}

/* One token: in[0] is the token one-hot (1, VOCAB), out[0] the next
 * token's logits (1, VOCAB).  Reads the position from m->pos. */
static int step(void *ctx, tg_tensor *const *in, size_t nin,
                tg_tensor **out, size_t nout)
{
	model *m = ctx;
	int64_t pos = tg_variable_dim(m->pos);
	int64_t upto[4] = { 0, tg_dim_affine(pos, 1, 1), 0, DIM };
	tg_tensor *x, *q, *att;

	(void)nin;
	(void)nout;
	x = tg_matmul(in[0], m->emb);                   /* (1, DIM) */
	q = tg_matmul(x, m->wq);
	if (put_row(m->ck, tg_matmul(x, m->wk), pos) ||
	    put_row(m->cv, tg_matmul(x, m->wv), pos))
		return -1;
	att = tg_softmax(tg_mul_s(tg_matmul(q, tg_transpose(
		tg_shrink(m->ck, 2, upto), 0, 1)), 1.0 / sqrt(DIM)), -1);
	x = tg_add(x, tg_matmul(tg_matmul(att, tg_shrink(m->cv, 2, upto)),
	                        m->wo));
	out[0] = tg_matmul(x, m->head);
	return out[0] ? 0 : -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Generates n tokens after token 1, greedily, eagerly or through jit;
 * the tokens into toks, the seconds per token into *per, not counting
 * the first two (they compile, and the JIT runs and captures them). */
static int generate(model *m, tg_jit *jit, int n, int *toks, double *per)
{
	int tok = 1;
	double t0 = now();

	for (int p = 0; p < n; p++) {
		if (p == 2)
			t0 = now();
		float onehot[VOCAB] = { 0 }, logits[VOCAB];
		tg_tensor *in, *out = NULL;
		int rc, best = 0;

		onehot[tok] = 1;
		if (tg_variable_bind(m->pos, p))
			return -1;
		tg_scope_begin();
		in = tg_tensor_new(NULL, TG_FLOAT32, 2,
		                   (int64_t[]){ 1, VOCAB }, onehot);
		rc = jit ? tg_jit_call(jit, &in, 1, &out, 1)
		         : step(m, &in, 1, &out, 1);
		if (!rc)
			rc = tg_tensor_data(out, logits, sizeof logits);
		tg_scope_end();
		if (rc)
			return -1;
		for (int v = 1; v < VOCAB; v++)
			if (logits[v] > logits[best])
				best = v;
		toks[p] = tok = best;
	}
	*per = (now() - t0) / (n > 2 ? n - 2 : n);
	return 0;
}

static void print_tokens(const char *what, const int *toks, int n,
                         double per)
{
	printf("%-6s %7.1f us/token:", what, per * 1e6);
	for (int i = 0; i < n; i++)
		printf(" %d", toks[i]);
	printf("\n");
}

int main(int argc, char **argv)
{
	int n = 48, eager_toks[MAXCTX], jit_toks[MAXCTX], ok;
	double eager_per = 0, jit_per = 0;
	tg_variable *pos;
	model a, b;
	tg_jit *jit;

	if (argc == 3 && !strcmp(argv[1], "--tokens"))
		n = atoi(argv[2]);
	if (n < 1 || n >= MAXCTX) {
		fprintf(stderr, "usage: %s [--tokens N] (1 <= N < %d)\n",
		        argv[0], MAXCTX);
		return 2;
	}
	if (tg_init() || !(pos = tg_variable_new("pos", 0, MAXCTX - 1)) ||
	    model_init(&a, pos) || model_init(&b, pos) ||
	    !(jit = tg_jit_new(step, &b))) {
		fprintf(stderr, "decode: %s\n", tg_last_error());
		return 1;
	}
	if (generate(&a, NULL, n, eager_toks, &eager_per) ||
	    generate(&b, jit, n, jit_toks, &jit_per)) {
		fprintf(stderr, "decode: %s\n", tg_last_error());
		return 1;
	}
	print_tokens("eager", eager_toks, n, eager_per);
	print_tokens("jit", jit_toks, n, jit_per);
	ok = !memcmp(eager_toks, jit_toks, (size_t)n * sizeof *jit_toks);
	printf("decode: %s\n", ok ? "OK" : "the JIT generated other tokens");
	tg_jit_free(jit);
	model_free(&a);
	model_free(&b);
	tg_variable_free(pos);
	tg_shutdown();
	return ok ? 0 : 1;
}

/*
 * tensors.c - the tensor API and its ownership rules in one program.
 *
 * A two-layer perceptron's forward pass (x @ w1 + b1, relu, @ w2,
 * softmax) on the default device, checked against plain C loops.
 * Nothing is computed until tg_tensor_data() asks for the result; then
 * the whole expression runs as a few fused, generated kernels
 * (DEBUG=2 prints them).
 *
 * Ownership, as tg/tg.h documents it:
 *   - every function returns a new reference;
 *   - inside tg_scope_begin()/tg_scope_end() the scope holds those
 *     references, so chains of calls need no cleanup: tg_scope_end()
 *     drops every temporary at once;
 *   - tg_keep(t) moves t out of the scope to the caller, who then owns
 *     it and drops it with tg_tensor_unref();
 *   - NULL propagates through every call, so one check at the end of a
 *     chain finds the first failure, and tg_last_error() says which.
 *
 * Build against an installed tgcore:
 *   cc tensors.c -o tensors $(pkg-config --cflags --libs tgcore) -lm
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <tg/tg.h>

enum { B = 4, IN = 8, HID = 16, OUT = 3 };

static float x[B][IN], w1[IN][HID], b1[HID], w2[HID][OUT];

static void fill(float *v, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (float)((seed >> 16) % 2001) / 1000.0f - 1.0f;
	}
}

/* The model as a function: its temporaries live in its own scope and
 * only the result leaves it (tg_keep). */
static tg_tensor *mlp(const tg_tensor *in, const tg_tensor *l1,
                      const tg_tensor *bias1, const tg_tensor *l2)
{
	tg_tensor *h, *out;

	tg_scope_begin();
	h = tg_relu(tg_linear(in, l1, bias1));
	out = tg_keep(tg_softmax(tg_matmul(h, l2), -1));
	tg_scope_end();
	return out;
}

/* The same in double precision with loops. */
static void reference(double probs[B][OUT])
{
	for (int b = 0; b < B; b++) {
		double h[HID], m = -INFINITY, s = 0;

		for (int j = 0; j < HID; j++) {
			h[j] = b1[j];
			for (int i = 0; i < IN; i++)
				h[j] += (double)x[b][i] * w1[i][j];
			h[j] = h[j] > 0 ? h[j] : 0;
		}
		for (int k = 0; k < OUT; k++) {
			probs[b][k] = 0;
			for (int j = 0; j < HID; j++)
				probs[b][k] += h[j] * w2[j][k];
			m = fmax(m, probs[b][k]);
		}
		for (int k = 0; k < OUT; k++)
			s += probs[b][k] = exp(probs[b][k] - m);
		for (int k = 0; k < OUT; k++)
			probs[b][k] /= s;
	}
}

int main(void)
{
	int64_t sx[2] = { B, IN }, s1[2] = { IN, HID }, sb[1] = { HID };
	int64_t s2[2] = { HID, OUT };
	float got[B][OUT];
	double want[B][OUT];
	tg_tensor *probs;
	int rc = 0;

	fill(&x[0][0], B * IN, 1);
	fill(&w1[0][0], IN * HID, 2);
	fill(b1, HID, 3);
	fill(&w2[0][0], HID * OUT, 4);

	tg_scope_begin();
	probs = mlp(tg_tensor_new(NULL, TG_FLOAT32, 2, sx, x),
	            tg_tensor_new(NULL, TG_FLOAT32, 2, s1, w1),
	            tg_tensor_new(NULL, TG_FLOAT32, 1, sb, b1),
	            tg_tensor_new(NULL, TG_FLOAT32, 2, s2, w2));
	/* probs belongs to this scope too (mlp kept it into ours) */
	if (!probs || tg_tensor_data(probs, got, sizeof got)) {
		fprintf(stderr, "tensors: %s\n", tg_last_error());
		rc = 1;
	}
	tg_scope_end();
	if (!rc) {
		reference(want);
		for (int b = 0; b < B; b++)
			for (int k = 0; k < OUT; k++)
				if (fabs(got[b][k] - want[b][k]) > 1e-5) {
					fprintf(stderr, "tensors: [%d][%d] = %g, "
					        "expected %g\n", b, k, got[b][k],
					        want[b][k]);
					rc = 1;
				}
	}
	if (!rc)
		printf("tensors: OK (p[0] = %.4f %.4f %.4f)\n", got[0][0],
		       got[0][1], got[0][2]);
	tg_shutdown();
	return rc;
}

/*
 * forward.c - the transformer's layers: pre-norm attention and
 * feed-forward blocks with residuals (the llama family's layout), the
 * feed-forward a SwiGLU or a mixture of SwiGLU experts, then the final
 * norm and the output projection.
 */
#include <math.h>

#include "model.h"

tg_tensor *llm_rmsnorm(const tg_tensor *x, const tg_tensor *w, double eps)
{
	tg_tensor *ms = tg_mean(tg_square(x), (int[]){ -1 }, 1, 1);

	return tg_mul(tg_mul(x, tg_rsqrt(tg_add_s(ms, eps))), w);
}

/* down(silu(gate(x)) * up(x)) */
static tg_tensor *swiglu(const tg_llm_model *m, const llm_layer *ly,
                         const tg_tensor *x)
{
	(void)m;
	return llm_linear(tg_mul(tg_silu(llm_linear(x, &ly->gate)),
	                         llm_linear(x, &ly->up)), &ly->down);
}

/* Router weights (B, n, E): softmax over the experts, zero outside the
 * top k (the first of equal ones wins, as argmax does), renormalized to
 * sum 1 where the architecture does. */
static tg_tensor *router(const tg_llm_model *m, const llm_layer *ly,
                         const tg_tensor *x)
{
	const llm_hparams *hp = &m->hp;
	tg_tensor *p = tg_softmax(llm_linear(x, &ly->router), -1);
	tg_tensor *left = p, *keep = NULL, *w;

	for (int64_t k = 0; k < hp->n_expert_used; k++) {
		tg_tensor *pick = tg_cast(tg_one_hot(tg_argmax(left, -1, 0),
		                                     hp->n_expert), TG_BOOL);

		keep = keep ? tg_bitwise_or(keep, pick) : pick;
		left = tg_where(pick, tg_full_like(left, -INFINITY), left);
	}
	w = tg_where(keep, p, tg_zeros_like(p));
	if (hp->arch->moe_renorm)  /* llama.cpp's floor on the sum */
		w = tg_div(w, tg_maximum_s(tg_sum(w, (int[]){ -1 }, 1, 1),
		                           6.103515625e-5));
	return hp->expert_scale != 1 ? tg_mul_s(w, hp->expert_scale) : w;
}

/* The experts' SwiGLUs weighted by the router.  Every expert is
 * evaluated and the ones not chosen weigh 0: exact, but it reads all
 * of them (a gather of the chosen experts' blocks would read k). */
static tg_tensor *moe(const tg_llm_model *m, const llm_layer *ly,
                      const tg_tensor *x)
{
	const llm_hparams *hp = &m->hp;
	const int64_t *s = tg_tensor_shape(x);
	int64_t B = s[0], n = s[1], E = hp->n_expert, e = hp->n_embd;
	tg_tensor *w = router(m, ly, x), *h, *g, *u, *y;

	h = tg_reshape(x, 5, (int64_t[]){ B, n, 1, 1, e });
	g = tg_matmul(h, tg_transpose(llm_weight_values(&ly->gate_exps),
	                              -1, -2));            /* (B,n,E,1,fe) */
	u = tg_matmul(h, tg_transpose(llm_weight_values(&ly->up_exps),
	                              -1, -2));
	y = tg_matmul(tg_mul(tg_silu(g), u),
	              tg_transpose(llm_weight_values(&ly->down_exps), -1, -2));
	y = tg_mul(tg_reshape(y, 4, (int64_t[]){ B, n, E, e }),
	           tg_reshape(w, 4, (int64_t[]){ B, n, E, 1 }));
	return tg_sum(y, (int[]){ 2 }, 1, 0);
}

tg_tensor *llm_forward(const tg_llm_model *m, const llm_pass *p,
                       tg_tensor *x)
{
	const llm_hparams *hp = &m->hp;

	for (int64_t l = 0; l < hp->n_layer; l++) {
		const llm_layer *ly = &m->layers[l];
		tg_tensor *a, *h;

		a = llm_attention(m, p, (size_t)l,
		                  llm_rmsnorm(x, ly->attn_norm, hp->eps));
		if (!a)
			return NULL;
		x = tg_add(x, llm_linear(a, &ly->wo));
		h = llm_rmsnorm(x, ly->ffn_norm, hp->eps);
		x = tg_add(x, hp->arch->moe ? moe(m, ly, h) : swiglu(m, ly, h));
	}
	return llm_rmsnorm(x, m->out_norm, hp->eps);
}

tg_tensor *llm_logits(const tg_llm_model *m, const tg_tensor *h)
{
	return tg_cast(llm_linear(h, &m->output), TG_FLOAT32);
}

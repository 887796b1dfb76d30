/*
 * weights.c - a model's weights, by llama.cpp's tensor names, kept in
 * the file's GGML block format on the device: the raw bytes are copied
 * there once, and a matmul decodes them (tg_ggml_dequantize) inside the
 * kernel that consumes them, so a quantized weight is read packed.
 * Norm weights and biases, small, are decoded to float32 once.
 *
 * The token embedding is also read from the file's mapping, row by row
 * for the tokens at hand (llm_embed_rows), as llama.cpp's get_rows
 * does: a lookup reads rows, not the whole table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define OP "llm_model_load"

typedef struct loader {
	const tg_gguf *g;
	tg_dev *dev;
} loader;

static int shape_str(char *buf, size_t n, size_t nd, const int64_t *s)
{
	int k = snprintf(buf, n, "(");

	for (size_t i = 0; i < nd; i++)
		k += snprintf(buf + k, n - (size_t)k, i ? ",%lld" : "%lld",
		              (long long)s[i]);
	return snprintf(buf + k, n - (size_t)k, ")");
}

/* Tensor `name`'s index, checking its shape is want[0..nd); -1 when
 * absent and optional, -2 with an error otherwise. */
static long find(const loader *L, const char *name, size_t nd,
                 const int64_t *want, int optional)
{
	long i = tg_gguf_tensor_find(L->g, name);
	int64_t got[4];
	size_t gnd;
	char a[96], b[96];

	if (i < 0) {
		if (!optional)
			tg_set_error(TG_EINVAL, OP ": the file has no tensor %s",
			             name);
		return optional ? -1 : -2;
	}
	gnd = tg_gguf_tensor_shape(L->g, (size_t)i, got);
	if (gnd != nd || memcmp(got, want, nd * sizeof *want)) {
		shape_str(a, sizeof a, gnd, got);
		shape_str(b, sizeof b, nd, want);
		tg_set_error(TG_EINVAL, OP ": tensor %s is %s, the model's "
		             "hyperparameters make it %s", name, a, b);
		return -2;
	}
	return i;
}

/* A matrix (or stack of them) kept raw on the device. */
static int load_weight(const loader *L, const char *name, size_t nd,
                       const int64_t *shape, int optional, llm_weight *w)
{
	long i = find(L, name, nd, shape, optional);

	memset(w, 0, sizeof *w);
	if (i == -1)
		return 0;
	if (i < 0)
		return tg_last_status();
	w->type = tg_gguf_tensor_type(L->g, (size_t)i);
	w->ndim = nd;
	memcpy(w->shape, shape, nd * sizeof *shape);
	/* a scope of our own, and a reference of our own: the weight
	 * outlives any scope the caller has open */
	tg_scope_begin();
	w->raw = llm_own(tg_gguf_tensor_raw(L->g, (size_t)i, L->dev));
	tg_scope_end();
	if (!w->raw || tg_realize(w->raw))
		return tg_set_error(tg_last_status(), OP ": %s: %s", name,
		                    tg_last_error());
	return 0;
}

/* A vector decoded to float32 once. */
static int load_vector(const loader *L, const char *name, int64_t len,
                       int optional, tg_tensor **out)
{
	llm_weight w;
	int rc = load_weight(L, name, 1, &len, optional, &w);

	*out = NULL;
	if (rc || !w.raw)
		return rc;
	tg_scope_begin();
	*out = llm_own(tg_contiguous(tg_cast(llm_weight_values(&w),
	                                     TG_FLOAT32)));
	tg_scope_end();
	tg_tensor_unref(w.raw);
	if (!*out || tg_realize(*out))
		return tg_set_error(tg_last_status(), OP ": %s: %s", name,
		                    tg_last_error());
	return 0;
}

static int load_attention(const loader *L, const llm_hparams *hp,
                          const char *p, llm_layer *ly)
{
	int64_t e = hp->n_embd, q = hp->n_head * hp->head_dim;
	int64_t k = hp->n_head_kv * hp->head_dim;
	int64_t v = hp->n_head_kv * hp->head_dim_v;
	int64_t ov = hp->n_head * hp->head_dim_v;
	char n[96];
	int rc, bias = hp->arch->qkv_bias, qkn = hp->arch->qk_norm;

#define NAME(s) (snprintf(n, sizeof n, "%s.%s", p, s), n)
	if ((rc = load_vector(L, NAME("attn_norm.weight"), e, 0,
	                      &ly->attn_norm)) ||
	    (rc = load_weight(L, NAME("attn_q.weight"), 2,
	                      (int64_t[]){ q, e }, 0, &ly->wq)) ||
	    (rc = load_weight(L, NAME("attn_k.weight"), 2,
	                      (int64_t[]){ k, e }, 0, &ly->wk)) ||
	    (rc = load_weight(L, NAME("attn_v.weight"), 2,
	                      (int64_t[]){ v, e }, 0, &ly->wv)) ||
	    (rc = load_weight(L, NAME("attn_output.weight"), 2,
	                      (int64_t[]){ e, ov }, 0, &ly->wo)) ||
	    (bias && (rc = load_vector(L, NAME("attn_q.bias"), q, 0, &ly->bq))) ||
	    (bias && (rc = load_vector(L, NAME("attn_k.bias"), k, 0, &ly->bk))) ||
	    (bias && (rc = load_vector(L, NAME("attn_v.bias"), v, 0, &ly->bv))) ||
	    (qkn && (rc = load_vector(L, NAME("attn_q_norm.weight"),
	                              qkn == LLM_QK_WHOLE ? q : hp->head_dim,
	                              0, &ly->q_norm))) ||
	    (qkn && (rc = load_vector(L, NAME("attn_k_norm.weight"),
	                              qkn == LLM_QK_WHOLE ? k : hp->head_dim,
	                              0, &ly->k_norm))))
		return rc;
#undef NAME
	return 0;
}

static int load_ffn(const loader *L, const llm_hparams *hp, const char *p,
                    llm_layer *ly)
{
	int64_t e = hp->n_embd, f = hp->n_ff, x = hp->n_expert;
	int64_t fe = hp->n_ff_exp;
	char n[96];
	int rc;

#define NAME(s) (snprintf(n, sizeof n, "%s.%s", p, s), n)
	if ((rc = load_vector(L, NAME("ffn_norm.weight"), e, 0, &ly->ffn_norm)))
		return rc;
	if (!hp->arch->moe)
		return (rc = load_weight(L, NAME("ffn_gate.weight"), 2,
		                         (int64_t[]){ f, e }, 0, &ly->gate)) ||
		       (rc = load_weight(L, NAME("ffn_up.weight"), 2,
		                         (int64_t[]){ f, e }, 0, &ly->up)) ||
		       (rc = load_weight(L, NAME("ffn_down.weight"), 2,
		                         (int64_t[]){ e, f }, 0, &ly->down))
		       ? rc : 0;
	return (rc = load_weight(L, NAME("ffn_gate_inp.weight"), 2,
	                         (int64_t[]){ x, e }, 0, &ly->router)) ||
	       (rc = load_weight(L, NAME("ffn_gate_exps.weight"), 3,
	                         (int64_t[]){ x, fe, e }, 0, &ly->gate_exps)) ||
	       (rc = load_weight(L, NAME("ffn_up_exps.weight"), 3,
	                         (int64_t[]){ x, fe, e }, 0, &ly->up_exps)) ||
	       (rc = load_weight(L, NAME("ffn_down_exps.weight"), 3,
	                         (int64_t[]){ x, e, fe }, 0, &ly->down_exps))
	       ? rc : 0;
#undef NAME
}

/* token_embd: its shape gives the vocabulary size; its rows are read
 * from the file's mapping (m->embd_rows), and the table is on the
 * device only when the output projection is tied to it. */
static int load_embedding(const loader *L, tg_llm_model *m)
{
	long i = tg_gguf_tensor_find(L->g, "token_embd.weight");
	int64_t s[4], rb;
	tg_tensor *disk;

	if (i < 0)
		return tg_set_error(TG_EINVAL, OP ": the file has no tensor "
		                    "token_embd.weight");
	if (tg_gguf_tensor_shape(L->g, (size_t)i, s) != 2 ||
	    s[1] != m->hp.n_embd || s[0] < 1)
		return tg_set_error(TG_EINVAL, OP ": tensor token_embd.weight "
		                    "is not (n_vocab,%lld)",
		                    (long long)m->hp.n_embd);
	m->hp.n_vocab = s[0];
	m->embd.type = tg_gguf_tensor_type(L->g, (size_t)i);
	m->embd.ndim = 2;
	memcpy(m->embd.shape, s, sizeof m->embd.shape);
	rb = (int64_t)(tg_gguf_tensor_nbytes(L->g, (size_t)i) / (uint64_t)s[0]);
	m->embd_row_bytes = rb;
	tg_scope_begin();
	disk = tg_gguf_tensor_raw(L->g, (size_t)i, tg_gguf_disk(L->g));
	m->embd_rows = llm_own(tg_reshape(disk, 2, (int64_t[]){ s[0], rb }));
	tg_scope_end();
	if (!m->embd_rows)
		return tg_set_error(tg_last_status(), OP ": token_embd.weight: "
		                    "%s", tg_last_error());
	return 0;
}

int llm_weights_load(tg_llm_model *m, const tg_gguf *g)
{
	loader L = { g, m->dev };
	const llm_hparams *hp = &m->hp;
	char p[32];
	int rc;

	if ((rc = load_embedding(&L, m)) ||
	    (rc = load_weight(&L, "output.weight", 2,
	                      (int64_t[]){ hp->n_vocab, hp->n_embd }, 1,
	                      &m->output)) ||
	    ((m->tied = !m->output.raw) &&
	     (rc = load_weight(&L, "token_embd.weight", 2, m->embd.shape, 0,
	                       &m->output))) ||
	    (rc = load_vector(&L, "output_norm.weight", hp->n_embd, 0,
	                      &m->out_norm)) ||
	    (rc = load_vector(&L, "rope_freqs.weight", hp->rope_dim / 2, 1,
	                      &m->rope_freqs)))
		return rc;
	if (!(m->layers = calloc((size_t)hp->n_layer, sizeof *m->layers)))
		return tg_set_error(TG_ENOMEM, OP ": out of memory for %lld "
		                    "layers", (long long)hp->n_layer);
	for (int64_t l = 0; l < hp->n_layer; l++) {
		snprintf(p, sizeof p, "blk.%lld", (long long)l);
		if ((rc = load_attention(&L, hp, p, &m->layers[l])) ||
		    (rc = load_ffn(&L, hp, p, &m->layers[l])))
			return rc;
	}
	return 0;
}

static void layer_free(llm_layer *ly)
{
	tg_tensor *const t[] = {
		ly->attn_norm, ly->ffn_norm, ly->q_norm, ly->k_norm, ly->bq,
		ly->bk, ly->bv, ly->wq.raw, ly->wk.raw, ly->wv.raw, ly->wo.raw,
		ly->gate.raw, ly->up.raw, ly->down.raw, ly->router.raw,
		ly->gate_exps.raw, ly->up_exps.raw, ly->down_exps.raw
	};

	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		tg_tensor_unref(t[i]);
}

void llm_weights_free(tg_llm_model *m)
{
	if (m->layers)
		for (int64_t l = 0; l < m->hp.n_layer; l++)
			layer_free(&m->layers[l]);
	free(m->layers);
	m->layers = NULL;
	tg_tensor_unref(m->embd_rows);
	tg_tensor_unref(m->output.raw);
	tg_tensor_unref(m->out_norm);
	tg_tensor_unref(m->rope_freqs);
}

tg_tensor *llm_own(tg_tensor *t)
{
	return t ? tg_tensor_ref(t) : NULL;
}

tg_tensor *llm_weight_values(const llm_weight *w)
{
	return tg_ggml_dequantize(w->raw, w->type, w->ndim, w->shape);
}

tg_tensor *llm_linear(const tg_tensor *x, const llm_weight *w)
{
	return tg_matmul(x, tg_transpose(llm_weight_values(w), 0, 1));
}

int llm_embed_rows(const tg_llm_model *m, const int32_t *ids, size_t n,
                   uint8_t *dst)
{
	size_t rb = (size_t)m->embd_row_bytes;
	int rc = 0;

	tg_scope_begin();
	for (size_t i = 0; i < n && !rc; i++) {
		int64_t id = ids[i] < 0 ? 0 : ids[i];
		int64_t at[4] = { id, id + 1, 0, m->embd_row_bytes };
		tg_tensor *row;

		if (id >= m->hp.n_vocab) {
			rc = tg_set_error(TG_EINVAL, "llm: token %lld is not in "
			                  "the vocabulary (%lld tokens)",
			                  (long long)id, (long long)m->hp.n_vocab);
			break;
		}
		row = tg_shrink(m->embd_rows, 2, at);
		rc = row ? tg_tensor_data(row, dst + i * rb, rb)
		         : tg_last_status();
	}
	tg_scope_end();
	return rc;
}

tg_tensor *llm_embed(const tg_llm_model *m, const tg_tensor *rows)
{
	size_t nd = tg_tensor_ndim(rows);
	int64_t shape[8];

	if (!rows || nd < 1 || nd > 8)
		return NULL;
	memcpy(shape, tg_tensor_shape(rows), nd * sizeof *shape);
	shape[nd - 1] = m->hp.n_embd;
	return tg_cast(tg_ggml_dequantize(rows, m->embd.type, nd, shape),
	               TG_FLOAT32);
}

/*
 * model.h - libtgcore-llm's transformer: hyperparameters from a GGUF
 * file's metadata (hparams.c), its weights kept in their GGML block
 * format on the device (weights.c), the forward pass as tensor ops
 * (forward.c, attention.c) and a context that holds the KV cache and
 * the decode step's JIT (context.c).
 */
#ifndef TG_LLM_MODEL_H
#define TG_LLM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <tg/llm.h>

/* How RoPE pairs a head's dimensions: llama.cpp's "normal" (dims 2i
 * and 2i+1: the llama converter permutes Q and K so) or NeoX's (dims i
 * and i + n/2: qwen2, qwen3). */
typedef enum llm_rope_kind { LLM_ROPE_NORM, LLM_ROPE_NEOX } llm_rope_kind;

/* Where q and k are RMS-normed: not, each head (qwen3), or the whole
 * projection before it is split into heads (olmoe). */
enum { LLM_QK_NONE, LLM_QK_HEAD, LLM_QK_WHOLE };

/* An architecture tgcore runs, and what distinguishes it. */
typedef struct llm_arch {
	const char *name;      /* general.architecture */
	llm_rope_kind rope;
	int qkv_bias;          /* attn_q/k/v.bias (qwen2) */
	int qk_norm;           /* attn_q_norm, attn_k_norm: LLM_QK_* */
	int moe;               /* router and experts instead of one FFN */
	int moe_renorm;        /* the top-k weights renormalized to sum 1 */
} llm_arch;

typedef struct llm_hparams {
	const llm_arch *arch;
	int64_t n_vocab, n_embd, n_layer, n_ff;
	int64_t n_head, n_head_kv, head_dim, head_dim_v;
	int64_t n_ctx_train, rope_dim;
	int64_t n_expert, n_expert_used, n_ff_exp;
	double eps, rope_base, rope_scale; /* positions divided by scale */
	double expert_scale;   /* the chosen experts' weights times this */
} llm_hparams;

/* A weight as the file stores it: its raw blocks on the device, the
 * GGML type and the logical shape (rows of cols; experts first for a
 * 3-D expert tensor). */
typedef struct llm_weight {
	tg_tensor *raw;
	int type;
	size_t ndim;
	int64_t shape[3];
} llm_weight;

typedef struct llm_layer {
	tg_tensor *attn_norm, *ffn_norm, *q_norm, *k_norm;
	tg_tensor *bq, *bk, *bv;
	llm_weight wq, wk, wv, wo;
	llm_weight gate, up, down;                   /* dense FFN */
	llm_weight router, gate_exps, up_exps, down_exps; /* MoE */
} llm_layer;

struct tg_llm_model {
	llm_hparams hp;
	tg_dev *dev;
	llm_weight embd;           /* type and shape; no raw (embd_rows) */
	tg_tensor *embd_rows;      /* token_embd's bytes on DISK (n_vocab,
	                            * embd_row_bytes): rows read from here */
	int64_t embd_row_bytes;
	llm_weight output;         /* token_embd again when tied */
	int tied;
	tg_tensor *out_norm;
	tg_tensor *rope_freqs;     /* llama3 factors (rope_dim/2), or NULL */
	llm_layer *layers;
};

/* ---- hparams.c ---- */
/* The architecture and hyperparameters of g; 0 or a status naming the
 * key that is missing or out of range, or the architecture. */
int llm_hparams_read(const tg_gguf *g, llm_hparams *hp);

/* ---- weights.c ---- */
/* Loads every weight m->hp asks for from g onto m->dev. */
int llm_weights_load(tg_llm_model *m, const tg_gguf *g);
void llm_weights_free(tg_llm_model *m);
/* A reference of the library's own to t (NULL stays NULL): made
 * inside a scope of the library's, a tensor it keeps outlives any scope
 * the caller has open (tg_keep would only move it to that scope). */
tg_tensor *llm_own(tg_tensor *t);
/* The values of w (lazy: decoded where they are consumed). */
tg_tensor *llm_weight_values(const llm_weight *w);
/* x @ w^T for x (..., cols) and w (rows, cols). */
tg_tensor *llm_linear(const tg_tensor *x, const llm_weight *w);
/* The raw bytes of token_embd's rows ids[0..n) into dst (n rows of
 * m->embd_row_bytes), read from the file's mapping.  An id -1 (padding)
 * reads row 0. */
int llm_embed_rows(const tg_llm_model *m, const int32_t *ids, size_t n,
                   uint8_t *dst);
/* Embeddings (..., n_embd) of raw rows (..., embd_row_bytes) on the
 * device (lazy). */
tg_tensor *llm_embed(const tg_llm_model *m, const tg_tensor *rows);

/* ---- forward.c ---- */
/* What a forward pass reads besides the tokens. */
typedef struct llm_pass {
	tg_tensor **kc, **vc;   /* per layer (B, n_kv, n_ctx, hd) caches */
	tg_tensor *cos, *sin;   /* (n_ctx, rope_dim/2) tables */
	tg_tensor *mask;        /* (B, n_ctx) additive key mask, or NULL */
	tg_tensor *positions;   /* int32 0 .. n_ctx-1 */
	int64_t pos, n;         /* rows pos .. pos+n (pos may be symbolic) */
	int64_t n_ctx;
} llm_pass;
/* The hidden states after the final norm, (B, n, n_embd), for
 * embeddings x (B, n, n_embd); writes each layer's keys and values into
 * the caches at rows pos .. pos+n. */
tg_tensor *llm_forward(const tg_llm_model *m, const llm_pass *p,
                       tg_tensor *x);
/* Logits (..., n_vocab) of hidden states h. */
tg_tensor *llm_logits(const tg_llm_model *m, const tg_tensor *h);
/* RMSNorm over the last axis with weight w. */
tg_tensor *llm_rmsnorm(const tg_tensor *x, const tg_tensor *w, double eps);

/* ---- attention.c ---- */
/* Rotates x (B, n, heads, hd) by the rows pos .. pos+n of the tables. */
tg_tensor *llm_rope(const tg_llm_model *m, const llm_pass *p,
                    const tg_tensor *x);
/* Self-attention of layer l for normed x (B, n, n_embd), with the
 * cache update; returns (B, n, n_head * head_dim_v) before wo. */
tg_tensor *llm_attention(const tg_llm_model *m, const llm_pass *p,
                         size_t l, const tg_tensor *x);

#endif

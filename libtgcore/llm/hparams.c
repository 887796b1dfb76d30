/*
 * hparams.c - a model's architecture and hyperparameters from GGUF
 * metadata, under the keys llama.cpp's converter writes:
 * "{arch}.block_count", "{arch}.attention.head_count" and so on.
 * Defaults where a key is optional follow llama.cpp (llama-model.cpp):
 * head_count_kv = head_count, key_length = embedding_length /
 * head_count, rope.dimension_count = key_length, rope.freq_base 10000.
 */
#include <stdio.h>
#include <string.h>

#include "model.h"

#define OP "llm_model_load"

static const llm_arch archs[] = {
	{ "llama", LLM_ROPE_NORM, 0, LLM_QK_NONE, 0, 0 },
	{ "qwen2", LLM_ROPE_NEOX, 1, LLM_QK_NONE, 0, 0 },
	{ "qwen3", LLM_ROPE_NEOX, 0, LLM_QK_HEAD, 0, 0 },
	{ "qwen3moe", LLM_ROPE_NEOX, 0, LLM_QK_HEAD, 1, 1 },
	{ "olmoe", LLM_ROPE_NEOX, 0, LLM_QK_WHOLE, 1, 0 },
};

static const llm_arch *find_arch(const char *name)
{
	for (size_t i = 0; i < sizeof archs / sizeof *archs; i++)
		if (!strcmp(archs[i].name, name))
			return &archs[i];
	return NULL;
}

/* "{arch}.suffix" into buf. */
static const char *key(char *buf, size_t n, const llm_hparams *hp,
                       const char *suffix)
{
	snprintf(buf, n, "%s.%s", hp->arch->name, suffix);
	return buf;
}

/* An integer key in [lo, hi]; absent: *out = def, or an error when def
 * is negative (the key is required). */
static int get_int(const tg_gguf *g, const llm_hparams *hp,
                   const char *suffix, int64_t def, int64_t lo, int64_t hi,
                   int64_t *out)
{
	char k[128];

	key(k, sizeof k, hp, suffix);
	if (tg_gguf_kv_find(g, k) < 0) {
		if (def < 0)
			return tg_set_error(TG_EINVAL, OP ": the file has no %s",
			                    k);
		*out = def;
		return 0;
	}
	if (tg_gguf_get_int(g, k, out))
		return tg_set_error(tg_last_status(), OP ": %s", tg_last_error());
	if (*out < lo || *out > hi)
		return tg_set_error(TG_EINVAL, OP ": %s is %lld, not in "
		                    "[%lld, %lld]", k, (long long)*out,
		                    (long long)lo, (long long)hi);
	return 0;
}

static int get_float(const tg_gguf *g, const llm_hparams *hp,
                     const char *suffix, double def, double lo, double hi,
                     double *out)
{
	char k[128];

	key(k, sizeof k, hp, suffix);
	if (tg_gguf_kv_find(g, k) < 0) {
		*out = def;
		return 0;
	}
	if (tg_gguf_get_float(g, k, out))
		return tg_set_error(tg_last_status(), OP ": %s", tg_last_error());
	if (!(*out >= lo && *out <= hi))
		return tg_set_error(TG_EINVAL, OP ": %s is %g, not in [%g, %g]",
		                    k, *out, lo, hi);
	return 0;
}

/* "linear" scaling divides positions by the factor; llama3's own
 * scaling comes as the rope_freqs tensor (weights.c); YaRN and the
 * others change attention too and are refused by name. */
static int read_rope_scaling(const tg_gguf *g, llm_hparams *hp)
{
	char k[128];
	const char *type;

	hp->rope_scale = 1;
	key(k, sizeof k, hp, "rope.scaling.type");
	if (tg_gguf_kv_find(g, k) < 0)
		return 0;
	if (!(type = tg_gguf_get_str(g, k, NULL)))
		return tg_set_error(tg_last_status(), OP ": %s", tg_last_error());
	if (!strcmp(type, "none"))
		return 0;
	if (strcmp(type, "linear"))
		return tg_set_error(TG_EUNSUPPORTED, OP ": %s \"%s\" is not "
		                    "supported (linear and llama3's factors are)",
		                    k, type);
	return get_float(g, hp, "rope.scaling.factor", 1, 1e-3, 1e6,
	                 &hp->rope_scale);
}

/* The experts' width defaults as llama.cpp's: qwen3moe's
 * feed_forward_length is the dense model's, split among the experts
 * used; olmoe's is the experts'. */
static int read_moe(const tg_gguf *g, llm_hparams *hp)
{
	int rc;

	hp->expert_scale = 1;
	if (!hp->arch->moe)
		return 0;
	if ((rc = get_int(g, hp, "expert_count", -1, 1, 4096,
	                  &hp->n_expert)) ||
	    (rc = get_int(g, hp, "expert_used_count", -1, 1, hp->n_expert,
	                  &hp->n_expert_used)) ||
	    (rc = get_float(g, hp, "expert_weights_scale", 1, 0, 1e6,
	                    &hp->expert_scale)))
		return rc;
	if (hp->expert_scale == 0)
		hp->expert_scale = 1;
	return get_int(g, hp, "expert_feed_forward_length",
	               hp->arch->moe_renorm ? hp->n_ff / hp->n_expert_used
	                                    : hp->n_ff,
	               1, INT64_C(1) << 20, &hp->n_ff_exp);
}

static int read_attention(const tg_gguf *g, llm_hparams *hp)
{
	int rc;

	if ((rc = get_int(g, hp, "attention.head_count", -1, 1, 4096,
	                  &hp->n_head)) ||
	    (rc = get_int(g, hp, "attention.head_count_kv", hp->n_head, 1,
	                  hp->n_head, &hp->n_head_kv)))
		return rc;
	if (hp->n_head % hp->n_head_kv)
		return tg_set_error(TG_EINVAL, OP ": %s has %lld heads, not a "
		                    "multiple of its %lld key-value heads",
		                    hp->arch->name, (long long)hp->n_head,
		                    (long long)hp->n_head_kv);
	if ((rc = get_int(g, hp, "attention.key_length",
	                  hp->n_embd / hp->n_head, 1, 65536, &hp->head_dim)) ||
	    (rc = get_int(g, hp, "attention.value_length", hp->head_dim, 1,
	                  65536, &hp->head_dim_v)) ||
	    (rc = get_int(g, hp, "rope.dimension_count", hp->head_dim, 2,
	                  hp->head_dim, &hp->rope_dim)) ||
	    (rc = get_float(g, hp, "attention.layer_norm_rms_epsilon", 1e-5,
	                    0, 1, &hp->eps)) ||
	    (rc = get_float(g, hp, "rope.freq_base", 10000, 1e-3, 1e12,
	                    &hp->rope_base)))
		return rc;
	if (hp->rope_dim % 2)
		return tg_set_error(TG_EINVAL, OP ": %s.rope.dimension_count is "
		                    "%lld, not even", hp->arch->name,
		                    (long long)hp->rope_dim);
	return read_rope_scaling(g, hp);
}

int llm_hparams_read(const tg_gguf *g, llm_hparams *hp)
{
	const char *name = tg_gguf_get_str(g, "general.architecture", NULL);
	int rc;

	memset(hp, 0, sizeof *hp);
	if (!name)
		return tg_set_error(tg_last_status(), OP ": %s", tg_last_error());
	if (!(hp->arch = find_arch(name)))
		return tg_set_error(TG_EUNSUPPORTED, OP ": the architecture "
		                    "\"%s\" is not supported (llama, qwen2, qwen3, "
		                    "qwen3moe and olmoe are)", name);
	if ((rc = get_int(g, hp, "block_count", -1, 1, 4096, &hp->n_layer)) ||
	    (rc = get_int(g, hp, "embedding_length", -1, 1, 1 << 20,
	                  &hp->n_embd)) ||
	    (rc = get_int(g, hp, "feed_forward_length", hp->arch->moe ? 0 : -1,
	                  0, INT64_C(1) << 20, &hp->n_ff)) ||
	    (rc = get_int(g, hp, "context_length", 2048, 1, INT64_C(1) << 24,
	                  &hp->n_ctx_train)) ||
	    (rc = read_attention(g, hp)))
		return rc;
	return read_moe(g, hp);
}

/*
 * model.c - loading a model from a GGUF file and what it tells about
 * itself.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

tg_llm_model *tg_llm_model_load(const tg_gguf *g, tg_dev *dev)
{
	tg_llm_model *m;

	if (!g) {
		tg_set_error(TG_EINVAL, "llm_model_load: NULL file");
		return NULL;
	}
	if (!dev && !(dev = tg_dev_get(NULL)))
		return NULL;
	if (!(m = calloc(1, sizeof *m))) {
		tg_set_error(TG_ENOMEM, "llm_model_load: out of memory");
		return NULL;
	}
	m->dev = dev;
	if (llm_hparams_read(g, &m->hp) || llm_weights_load(m, g)) {
		int rc = tg_last_status();
		char msg[512];

		/* freeing may touch the error; keep the load's */
		strncpy(msg, tg_last_error(), sizeof msg - 1);
		msg[sizeof msg - 1] = 0;
		tg_llm_model_free(m);
		tg_set_error(rc, "%s", msg);
		return NULL;
	}
	return m;
}

void tg_llm_model_free(tg_llm_model *m)
{
	if (!m)
		return;
	llm_weights_free(m);
	free(m);
}

int tg_llm_model_get_info(const tg_llm_model *m, tg_llm_model_info *out)
{
	const llm_hparams *hp;

	if (!m || !out)
		return tg_set_error(TG_EINVAL, "llm_model_get_info: NULL %s",
		                    m ? "out" : "model");
	hp = &m->hp;
	memset(out, 0, sizeof *out);
	out->arch = hp->arch->name;
	out->n_vocab = hp->n_vocab;
	out->n_embd = hp->n_embd;
	out->n_layer = hp->n_layer;
	out->n_head = hp->n_head;
	out->n_head_kv = hp->n_head_kv;
	out->head_dim = hp->head_dim;
	out->n_ff = hp->arch->moe ? hp->n_ff_exp : hp->n_ff;
	out->n_ctx_train = hp->n_ctx_train;
	out->n_expert = hp->n_expert;
	out->n_expert_used = hp->n_expert_used;
	out->rope_base = hp->rope_base;
	out->tied_embeddings = m->tied;
	return 0;
}

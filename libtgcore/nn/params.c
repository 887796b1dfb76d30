/*
 * nn/params.c - every layer's parameters by tinygrad's state-dict names
 * ("weight", "bias", "running_mean", ...), for saving and loading.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer.h"

/* ------------------------------------------------------------ params */

/* Adds t as "prefix.name" ("name" without a prefix); NULL t: nothing. */
static int add(tg_state *s, const char *prefix, const char *name,
               tg_tensor *t)
{
	size_t n;
	char *full;
	int st;

	if (!t)
		return 0;
	if (!prefix || !*prefix)
		return tg_state_add(s, name, t);
	n = strlen(prefix) + strlen(name) + 2;
	if (!(full = malloc(n)))
		return tg_error_oom("nn_params");
	snprintf(full, n, "%s.%s", prefix, name);
	st = tg_state_add(s, full, t);
	free(full);
	return st;
}

/* weight and bias, the parameters every layer but batchnorm has. */
static int add_wb(const char *layer, const void *m, tg_tensor *w,
                  tg_tensor *b, tg_state *s, const char *prefix)
{
	int st;

	if (!m || !s)
		return tg_error(TG_EINVAL, "%s_params: no %s (NULL)", layer,
		                m ? "state" : "layer");
	if ((st = add(s, prefix, "weight", w)))
		return st;
	return add(s, prefix, "bias", b);
}

#define WB_PARAMS(name)                                                  \
	int tg_nn_##name##_params(const tg_nn_##name *m, tg_state *s,       \
	                          const char *prefix)                       \
	{                                                                    \
		return add_wb(#name, m, m ? m->weight : NULL,                \
		              m ? m->bias : NULL, s, prefix);                \
	}
WB_PARAMS(linear)
WB_PARAMS(conv2d)
WB_PARAMS(conv1d)
WB_PARAMS(conv_transpose1d)
WB_PARAMS(conv_transpose2d)
WB_PARAMS(groupnorm)
WB_PARAMS(instancenorm)
WB_PARAMS(layernorm)
#undef WB_PARAMS

int tg_nn_rmsnorm_params(const tg_nn_rmsnorm *m, tg_state *s,
                         const char *prefix)
{
	return add_wb("rmsnorm", m, m ? m->weight : NULL, NULL, s, prefix);
}

int tg_nn_embedding_params(const tg_nn_embedding *m, tg_state *s,
                           const char *prefix)
{
	return add_wb("embedding", m, m ? m->weight : NULL, NULL, s, prefix);
}

int tg_nn_batchnorm_params(const tg_nn_batchnorm *m, tg_state *s,
                           const char *prefix)
{
	int st;

	if ((st = add_wb("batchnorm", m, m ? m->weight : NULL,
	                 m ? m->bias : NULL, s, prefix)))
		return st;
	if ((st = add(s, prefix, "running_mean", m->running_mean)) ||
	    (st = add(s, prefix, "running_var", m->running_var)))
		return st;
	return add(s, prefix, "num_batches_tracked", m->num_batches_tracked);
}

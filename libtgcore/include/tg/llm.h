/*
 * tg/llm.h - language models on tgcore: tokenizers from a GGUF file,
 * sampling and chat templates.
 *
 * libtgcore-llm (pkg-config: tgcore-llm), a library of its own on
 * tgcore's public API.  A tokenizer comes from the tokenizer.ggml.*
 * keys of a GGUF file:
 *
 *     tg_gguf *g = tg_gguf_open("SmolLM2-135M-Instruct.Q4_1.gguf");
 *     tg_llm_tokenizer *t = tg_llm_tokenizer_from_gguf(g);
 *     int32_t ids[256];
 *     long n = tg_llm_tokenize(t, text, strlen(text),
 *                              TG_LLM_ADD_SPECIAL | TG_LLM_PARSE_SPECIAL,
 *                              ids, 256);
 *
 * Two kinds are known (tokenizer.ggml.model):
 *  - Byte-level BPE, "gpt2" (Llama 3, Qwen 2, SmolLM2, GPT-2).  The text
 *    is split by the pre-tokenizer named by tokenizer.ggml.pre ("gpt2",
 *    also when the key is absent or "default", where llama.cpp uses a
 *    variant of GPT-2's pattern; "smollm", "starcoder" and the like;
 *    "llama-bpe" or "llama3"; "qwen2"; another is refused by name),
 *    each piece's bytes become GPT-2's characters,
 *    and the merges are applied by rank.  Any bytes, valid UTF-8 or
 *    not, come back from decoding unchanged, but for a byte the
 *    vocabulary has no character for, which is dropped (as llama.cpp
 *    does; SmolLM2 lacks a few that UTF-8 never uses, 0xC1, 0xF5...).
 *  - SentencePiece BPE, "llama" (Llama 2, Mistral).  Spaces become
 *    U+2581, a space is put before the text (and after each special
 *    token) unless tokenizer.ggml.add_space_prefix is false, pieces
 *    merge by score, and what no token spells becomes byte tokens
 *    <0xXX>.  Decoding removes that one space again.
 *
 * Special tokens (control and user-defined, tokenizer.ggml.token_type 3
 * and 4) are found in the text before the rest is split: user-defined
 * ones always, control ones ("<|im_start|>") with TG_LLM_PARSE_SPECIAL,
 * otherwise their text is tokenized as text.  At one place the longest
 * special token wins.
 *
 * Errors: NULL or a negative status, with tg_last_error() naming the
 * call and the values, as in the rest of tgcore.  A tokenizer is only
 * read after it is made: several threads may use one at once.
 */
#ifndef TG_LLM_H
#define TG_LLM_H

#include <stddef.h>
#include <stdint.h>

#include <tg/tg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A token's kind, GGUF's tokenizer.ggml.token_type. */
typedef enum tg_llm_token_kind {
	TG_LLM_TOKEN_UNDEFINED = 0,
	TG_LLM_TOKEN_NORMAL = 1,
	TG_LLM_TOKEN_UNKNOWN = 2,
	TG_LLM_TOKEN_CONTROL = 3,      /* <s>, <|im_end|>: parsed on request */
	TG_LLM_TOKEN_USER_DEFINED = 4, /* always found in the text */
	TG_LLM_TOKEN_UNUSED = 5,
	TG_LLM_TOKEN_BYTE = 6          /* <0xXX>: one byte */
} tg_llm_token_kind;

/* Flags of tg_llm_tokenize. */
enum {
	/* BOS before the ids and EOS after them, where the file asks for
	 * them (tokenizer.ggml.add_bos_token and add_eos_token; when the
	 * keys are absent, BOS for "llama" and neither for "gpt2") */
	TG_LLM_ADD_SPECIAL = 1,
	/* control tokens in the text are those tokens, not text */
	TG_LLM_PARSE_SPECIAL = 2
};

/* A tokenizer: the vocabulary and its rules.  Owned by the caller. */
typedef struct tg_llm_tokenizer tg_llm_tokenizer;

/* The tokenizer of a GGUF file, from its tokenizer.ggml.* keys; g is
 * only read and may be closed afterwards.  NULL with an error naming
 * the key when one is missing, of the wrong type or inconsistent (a
 * merge naming a token that is not in the vocabulary), or when the
 * model or pre-tokenizer is one tgcore does not know ("bert").  New;
 * free with tg_llm_tokenizer_free. */
TG_API tg_llm_tokenizer *tg_llm_tokenizer_from_gguf(const tg_gguf *g);
/* Frees t (NULL: nothing). */
TG_API void tg_llm_tokenizer_free(tg_llm_tokenizer *t);

/* Tokenizes text[0..len) (any bytes; NULL with len 0 is the empty
 * text) with TG_LLM_* flags, writing up to max ids.  Returns how many
 * ids the text has, which may exceed max: then call again with a larger
 * array.  Negative on an error (NULL t, NULL text with len > 0, unknown
 * flags). */
TG_API long tg_llm_tokenize(const tg_llm_tokenizer *t, const char *text,
                            size_t len, int flags, int32_t *ids,
                            size_t max);
/* The bytes token id stands for, up to n of them into buf; returns how
 * many there are, which may exceed n.  A piece may end inside a UTF-8
 * character (byte tokens, byte-level BPE).  Control tokens give their
 * text.  Negative for an id out of range. */
TG_API long tg_llm_token_bytes(const tg_llm_tokenizer *t, int32_t id,
                               char *buf, size_t n);
/* The text of ids[0..n), up to size bytes into buf (not terminated);
 * returns its full length, which may exceed size.  The same as feeding
 * the ids to a tg_llm_detok and flushing it.  Negative on an id out of
 * range. */
TG_API long tg_llm_detokenize(const tg_llm_tokenizer *t, const int32_t *ids,
                              size_t n, char *buf, size_t size);

/* The number of tokens; 0 for NULL. */
TG_API size_t tg_llm_vocab_size(const tg_llm_tokenizer *t);
/* Token id's text as the file spells it (GPT-2's characters for
 * byte-level BPE, U+2581 for SentencePiece's spaces), NUL-terminated,
 * its length in *len when len is not NULL.  Borrowed from t; NULL (with
 * an error) for an id out of range. */
TG_API const char *tg_llm_token_text(const tg_llm_tokenizer *t, int32_t id,
                                     size_t *len);
/* Token id's tg_llm_token_kind; negative for an id out of range. */
TG_API int tg_llm_token_type(const tg_llm_tokenizer *t, int32_t id);
/* The beginning-of-sequence token; -1 when the file names none. */
TG_API int32_t tg_llm_bos(const tg_llm_tokenizer *t);
/* The end-of-sequence token; -1 when the file names none. */
TG_API int32_t tg_llm_eos(const tg_llm_tokenizer *t);

/* Streaming detokenization: ids go in one at a time as a model makes
 * them, and only whole UTF-8 characters come out; the bytes of a
 * character split across tokens wait for its end.  Bytes that can
 * never complete a character (invalid UTF-8) are passed on as they
 * are, so all the pieces together are tg_llm_detokenize's text. */
typedef struct tg_llm_detok tg_llm_detok;

/* A new stream over t, which must outlive it.  NULL on a NULL t or no
 * memory.  Free with tg_llm_detok_free. */
TG_API tg_llm_detok *tg_llm_detok_new(const tg_llm_tokenizer *t);
/* Feeds one id; returns the text now complete (possibly ""), its length
 * in *len.  Borrowed from d until its next call.  NULL with an error
 * for an id out of range (the stream is unchanged). */
TG_API const char *tg_llm_detok_feed(tg_llm_detok *d, int32_t id,
                                     size_t *len);
/* Ends the stream: returns what was held back (the bytes of an
 * unfinished character), its length in *len, and starts afresh.
 * Borrowed from d until its next call. */
TG_API const char *tg_llm_detok_flush(tg_llm_detok *d, size_t *len);
/* Frees d (NULL: nothing). */
TG_API void tg_llm_detok_free(tg_llm_detok *d);

/* ---------------------------------------------------------- sampling
 *
 * The next token from a step's logits (the model's scores over the
 * vocabulary, on the host), as llama.cpp's default chain (its
 * common_params_sampling; the samplers of it tgcore lacks, DRY,
 * top-n-sigma, typical-p and XTC, are off by default there), in this
 * order:
 *  1. repetition penalty (CTRL's): each distinct token among the last
 *     penalty_last_n accepted ones has a positive logit divided by
 *     repeat_penalty and any other multiplied by it;
 *  2. top-k: the top_k highest logits stay;
 *  3. top-p: of those, by probability (softmax at temperature 1),
 *     the fewest most likely tokens whose probabilities sum to top_p or
 *     more stay;
 *  4. min-p: of those, the tokens at least min_p times as likely as the
 *     most likely stay;
 *  5. temperature: the logits left are divided by it, and one token is
 *     drawn from their softmax.
 * Ties between equal logits go to the lower id.  Temperature 0 is
 * greedy: the highest logit after the penalty, the lowest id among
 * equals, with no draw.  Logits of -inf are never drawn.
 *
 * Draws come from the sampler's own generator, xoshiro256** seeded
 * through splitmix64 from the seed: one number in [0, 1) from its top
 * 53 bits per draw, walked along the kept tokens' probabilities
 * (computed in double) in id order.  The same seed, logits and history
 * give the same tokens on every machine.  A sampler keeps its state to
 * itself; one thread uses it at a time, several samplers run at once.
 *
 * The history is what the caller accepts: tg_llm_sample does not accept
 * the token it returns.  Accept the prompt's tokens and then each token
 * the model is given, as llama.cpp's examples do.
 */

/* A sampler's parameters.  Make them with tg_llm_sampling_default and
 * change what differs. */
typedef struct tg_llm_sampling {
	float temperature;      /* >= 0; 0: greedy (default 0.8) */
	int32_t top_k;          /* >= 0; 0: off (default 40) */
	float top_p;            /* (0, 1]; 1: off (default 0.95) */
	float min_p;            /* [0, 1]; 0: off (default 0.05) */
	float repeat_penalty;   /* > 0; 1: off (default 1) */
	int32_t penalty_last_n; /* >= 0, the history's length (default 64) */
	uint64_t seed;          /* the generator's seed (default 0) */
} tg_llm_sampling;

/* A sampler: its parameters, the history and the generator.  Owned by
 * the caller. */
typedef struct tg_llm_sampler tg_llm_sampler;

/* llama.cpp's defaults (above), with seed 0. */
TG_API tg_llm_sampling tg_llm_sampling_default(void);
/* A new sampler with params (NULL: the defaults), copied.  NULL with an
 * error naming the parameter and its value when one is out of range.
 * Free with tg_llm_sampler_free. */
TG_API tg_llm_sampler *tg_llm_sampler_new(const tg_llm_sampling *params);
/* Frees s (NULL: nothing). */
TG_API void tg_llm_sampler_free(tg_llm_sampler *s);
/* The next token from logits[0..n_vocab).  The history is left as it
 * is; the generator advances by one number per draw (greedy draws
 * none).  Negative on an error (NULL s or logits, n_vocab 0, a logit
 * NaN or +inf, all of them -inf). */
TG_API int32_t tg_llm_sample(tg_llm_sampler *s, const float *logits,
                             size_t n_vocab);
/* Appends token to the history the penalty reads (the oldest drops out
 * past penalty_last_n; ids past a step's vocabulary are ignored there).
 * 0, or negative for a NULL s or a negative token. */
TG_API int tg_llm_sampler_accept(tg_llm_sampler *s, int32_t token);
/* Empties the history and seeds the generator again: s then draws as a
 * new sampler of the same parameters (NULL: nothing). */
TG_API void tg_llm_sampler_reset(tg_llm_sampler *s);

/* ---------------------------------------------------- chat templates
 *
 * A conversation as the prompt text the model was trained on.  The
 * file's template (tokenizer.chat_template, Jinja source) is not run:
 * its family is recognised, and tg_llm_chat_format writes the bytes
 * that the template renders (transformers' apply_chat_template, with
 * jinja2) for messages of any role with plain text content:
 *  - ChatML (SmolLM2, Qwen 2), a template naming <|im_start|>: each
 *    message is <|im_start|>, the role, a newline, the content,
 *    <|im_end|> and a newline.  When one of the template's string
 *    literals holds a whole system message (<|im_start|>system, a
 *    newline, a text, <|im_end|>: SmolLM2's and Qwen's default), that
 *    message comes first unless the first message's role is "system".
 *    The generation prompt: <|im_start|>assistant and a newline.
 *  - Llama 3, a template naming <|start_header_id|> and
 *    <|end_header_id|>: the BOS token's text (tokenizer.ggml.tokens at
 *    bos_token_id, nothing without one), then for each message
 *    <|start_header_id|>, the role, <|end_header_id|>, two newlines,
 *    the content stripped of white space at both ends (Jinja's trim,
 *    Python's str.strip) and <|eot_id|>.  The generation prompt:
 *    <|start_header_id|>assistant<|end_header_id|> and two newlines.
 *    Llama 3.1's to 3.3's templates, those with a literal "Cutting
 *    Knowledge Date: ..." line and a default date_string, first write
 *    a system header: that line, "Today Date: " with the template's
 *    default date (as rendered without strftime_now: transformers would
 *    write today's date), and the first message's content when it is a
 *    system one; and a message of role "tool" or "ipython" has the
 *    header ipython and its content as a JSON string.  The tool-call
 *    forms of these templates (and Qwen 2.5's) are not written.
 *  - Any other template, or none: the plain template, one line per
 *    message, the role, a colon, a space and the content, and
 *    "assistant: " as the generation prompt; tg_llm_chat_from_gguf
 *    then prints a warning on stderr.
 *
 * The text holds the template's special tokens, BOS included where the
 * template writes it (Llama 3).  Tokenize it with TG_LLM_PARSE_SPECIAL
 * and without TG_LLM_ADD_SPECIAL, as apply_chat_template does, so that
 * BOS is not there twice.  A chat is only read after it is made:
 * several threads may format with one at once.
 */

/* The template families tg_llm_chat_template_kind tells. */
typedef enum tg_llm_chat_kind {
	TG_LLM_CHAT_PLAIN = 0,  /* the plain lines, the fallback */
	TG_LLM_CHAT_CHATML = 1, /* <|im_start|>role ... <|im_end|> */
	TG_LLM_CHAT_LLAMA3 = 2  /* <|start_header_id|>role<|end_header_id|> */
} tg_llm_chat_kind;

/* One message of a conversation: any role ("system", "user",
 * "assistant", "tool"...) and its text, NUL-terminated UTF-8. */
typedef struct tg_llm_message {
	const char *role;    /* written as given */
	const char *content; /* the text */
} tg_llm_message;

/* A chat template.  Owned by the caller. */
typedef struct tg_llm_chat tg_llm_chat;

/* The chat template of a GGUF file, from tokenizer.chat_template (and
 * for Llama 3 the BOS token's text); g is only read and may be closed
 * afterwards.  A template of no known family, or none, gives the plain
 * template and a warning on stderr.  NULL with an error for a NULL g, a
 * key of the wrong type or a BOS id past the vocabulary.  Free with
 * tg_llm_chat_free. */
TG_API tg_llm_chat *tg_llm_chat_from_gguf(const tg_gguf *g);
/* Frees c (NULL: nothing). */
TG_API void tg_llm_chat_free(tg_llm_chat *c);
/* c's tg_llm_chat_kind; negative for a NULL c. */
TG_API int tg_llm_chat_template_kind(const tg_llm_chat *c);
/* The system message a ChatML template puts first when the
 * conversation has none, NUL-terminated and borrowed from c; NULL when
 * the template has none (and for the other families). */
TG_API const char *tg_llm_chat_default_system(const tg_llm_chat *c);
/* msgs[0..n) as c's template writes them, followed by the generation
 * prompt (the assistant's header) when add_generation_prompt is
 * nonzero: up to size - 1 bytes into buf and a NUL, as snprintf.
 * Returns the text's full length, which may exceed size - 1: then call
 * again with a larger buf (buf may be NULL when size is 0).  Negative
 * on an error: NULL c or msgs, n 0, a message with a NULL role or
 * content. */
TG_API long tg_llm_chat_format(const tg_llm_chat *c,
                               const tg_llm_message *msgs, size_t n,
                               int add_generation_prompt, char *buf,
                               size_t size);

/* ------------------------------------------------------------------ */
/* Models                                                              */
/* ------------------------------------------------------------------ */
/*
 * A transformer language model from a GGUF file, run with tgcore's
 * tensor ops on any device:
 *
 *     tg_llm_model *m = tg_llm_model_load(g, NULL);    // default device
 *     tg_llm_context *c = tg_llm_context_new(m, 2048, 1);
 *     float *logits = malloc(n_vocab * sizeof *logits);
 *     tg_llm_prefill(c, ids, n, logits, 0);    // the prompt, one batch
 *     for (;;) {
 *         int32_t next = argmax(logits);      // or a sampler
 *         ...
 *         tg_llm_decode(c, &next, logits);     // one token per step
 *     }
 *
 * Architectures (general.architecture): "llama" (Llama 2 and 3,
 * SmolLM2, Mistral's files, which say llama), "qwen2" (biases on q, k,
 * v), "qwen3" (RMSNorm on each head's q and k), "qwen3moe" (a router
 * picking expert_used_count of expert_count SwiGLU experts, the chosen
 * weights renormalized) and "olmoe" (the same without renormalizing,
 * and RMSNorm on the whole q and k).  Another is refused by name.  A
 * mixture of experts evaluates every expert and weighs those not
 * chosen by 0: exact, but it reads all of them.  The
 * hyperparameters come from the "{arch}.*" keys llama.cpp's converter
 * writes; RoPE pairs dimensions as llama.cpp does for the architecture
 * (adjacent pairs for llama, whose converter permutes q and k; halves
 * for the qwen ones), with llama3's frequency factors (rope_freqs) and
 * linear scaling; other rope scaling (YaRN) is refused.
 *
 * Weights stay in the file's block format on the device (F32, F16,
 * BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K): each matmul
 * decodes its weight's blocks inside the kernel that consumes them
 * (tg_ggml_dequantize).  Activations, the KV cache and logits are
 * float32.  The token embedding's rows are read from the file's
 * mapping for the tokens at hand (and the whole table is on the device
 * only when the output projection is tied to it), so the tg_gguf may be
 * closed after loading; the file must stay on disk.
 */
typedef struct tg_llm_model tg_llm_model;

/* What a model is (tg_llm_model_get_info). */
typedef struct tg_llm_model_info {
	const char *arch;           /* general.architecture; borrowed */
	int64_t n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim;
	int64_t n_ff;               /* each expert's, for a MoE */
	int64_t n_ctx_train;        /* {arch}.context_length */
	int64_t n_expert, n_expert_used;   /* 0 without experts */
	double rope_base;
	int tied_embeddings;        /* the output projection is token_embd */
} tg_llm_model_info;

/* Loads the model in g onto dev (NULL: the default device); g is only
 * read and may be closed afterwards.  NULL with an error naming the
 * architecture, the key or the tensor (missing, or of a shape the
 * hyperparameters contradict).  New; free with tg_llm_model_free after
 * its contexts. */
TG_API tg_llm_model *tg_llm_model_load(const tg_gguf *g, tg_dev *dev);
/* Frees m (NULL: nothing). */
TG_API void tg_llm_model_free(tg_llm_model *m);
/* Fills *out; TG_EINVAL for NULLs. */
TG_API int tg_llm_model_get_info(const tg_llm_model *m,
                                 tg_llm_model_info *out);

/*
 * A context runs a model over n_seq sequences at once, with a KV cache
 * of n_ctx positions each on the model's device (float32: 2 x n_layer x
 * n_seq x n_head_kv x n_ctx x head_dim values).  The sequences advance
 * together: each call takes the same number of tokens for each.
 * Sequences of different lengths are left-padded with the token -1,
 * which no query attends to (RoPE depends only on the distance between
 * positions, so a padded sequence computes what it would alone).
 *
 * Prefill runs the tokens as one batch; decode runs one token per
 * sequence through a tg_jit whose step takes the position as a
 * tg_variable, so after its first two calls no kernel is compiled and
 * the step replays at every position.  Prefill may follow decode (a
 * chat's next turn): tokens are always appended at the position.
 *
 * A context is used by one thread at a time.  The model must outlive
 * it.
 */
typedef struct tg_llm_context tg_llm_context;

/* Flags of tg_llm_prefill. */
enum {
	/* logits of every token, not only the last */
	TG_LLM_LOGITS_ALL = 1
};

/* A context of n_ctx positions (0: the model's n_ctx_train) for n_seq
 * sequences (0: 1).  NULL with an error for sizes out of range or no
 * memory on the device.  New; free with tg_llm_context_free. */
TG_API tg_llm_context *tg_llm_context_new(tg_llm_model *m, int64_t n_ctx,
                                          int64_t n_seq);
/* Frees c (NULL: nothing). */
TG_API void tg_llm_context_free(tg_llm_context *c);
/* Tokens in the cache so far (-1 for NULL). */
TG_API int64_t tg_llm_context_pos(const tg_llm_context *c);
/* The context's n_ctx (-1 for NULL). */
TG_API int64_t tg_llm_context_size(const tg_llm_context *c);
/* Empties the cache (position 0; no padding). */
TG_API int tg_llm_context_reset(tg_llm_context *c);
/* Forgets the tokens from position pos on (0 <= pos <= the position):
 * the next tokens go there, as when a chat's text is tokenized again
 * and only its end differs from what the cache holds. */
TG_API int tg_llm_context_rewind(tg_llm_context *c, int64_t pos);
/* Appends n tokens to each sequence: tokens is n_seq rows of n ids.
 * logits (when not NULL) gets n_seq rows of n_vocab floats: the next
 * token's logits after each sequence's last token, or with
 * TG_LLM_LOGITS_ALL n_seq x n rows, one per token.  TG_EINVAL, running
 * nothing, when the tokens do not fit the context (saying how many
 * positions are left) or an id is out of the vocabulary. */
TG_API int tg_llm_prefill(tg_llm_context *c, const int32_t *tokens,
                          size_t n, float *logits, int flags);
/* Appends one token to each sequence (tokens: n_seq ids) and writes the
 * next token's logits, n_seq rows of n_vocab floats. */
TG_API int tg_llm_decode(tg_llm_context *c, const int32_t *tokens,
                         float *logits);
/* What the decode step's JIT holds (tg_jit_get_info): its kernels per
 * step once captured. */
TG_API int tg_llm_context_jit_info(const tg_llm_context *c,
                                   tg_jit_info *out);

#ifdef __cplusplus
}
#endif

#endif

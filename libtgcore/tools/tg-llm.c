/*
 * tg-llm - run a language model from a GGUF file: complete a prompt,
 * streaming the text, or chat.  The public API only (tg/llm.h).
 *
 *     tg-llm -m FILE -p TEXT [-n N] [options]
 *     tg-llm -m FILE --chat [options]
 */
#include "config.h"

#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tg/llm.h>

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

typedef struct opts {
	const char *model, *prompt, *device, *system;
	long n_predict, n_ctx;
	int chat, verbose;
	tg_llm_sampling sampling;
} opts;

/* The model and what runs it. */
typedef struct llm {
	tg_gguf *g;
	tg_llm_tokenizer *tok;
	tg_llm_model *m;
	tg_llm_context *c;
	tg_llm_sampler *s;
	tg_llm_chat *chat;
	tg_llm_detok *dt;
	float *logits;
	int64_t n_vocab;
	int32_t *ids;        /* what the cache holds, in order */
	size_t nids, cap;
	double prefill_s, decode_s;
	long prefill_n, decode_n;
} llm;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what)
{
	fprintf(stderr, "tg-llm: %s: %s\n", what, tg_last_error());
	return 1;
}

static void usage(FILE *f)
{
	fprintf(f,
	"usage: tg-llm -m FILE (-p TEXT | --chat) [options]\n"
	"  -m, --model FILE       a GGUF model\n"
	"  -p, --prompt TEXT      complete TEXT, streaming the tokens\n"
	"      --chat             chat on standard input (the file's template)\n"
	"  -s, --system TEXT      the system message of a chat\n"
	"  -n, --n-predict N      at most N tokens a reply (default 256; -1: "
	"until the end)\n"
	"  -c, --ctx-size N       context positions (default: the file's, at "
	"most 4096)\n"
	"      --device NAME      the device (default: tgcore's default)\n"
	"      --temp T           temperature (default 0.8; 0: greedy)\n"
	"      --top-k K          (default 40; 0: off)\n"
	"      --top-p P          (default 0.95; 1: off)\n"
	"      --min-p P          (default 0.05; 0: off)\n"
	"      --repeat-penalty R (default 1: off)\n"
	"      --repeat-last-n N  tokens the penalty looks back (default 64)\n"
	"      --seed S           the sampler's seed (default 0)\n"
	"  -v, --verbose          the model's shape and the device on stderr\n"
	"  -h, --help             this text\n"
	"      --version          tgcore's version\n");
}

static int num(const char *s, double lo, double hi, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !(*out >= lo && *out <= hi) ? -1 : 0;
}

static int parse(int argc, char **argv, opts *o)
{
	enum { O_CHAT = 256, O_DEVICE, O_TEMP, O_TOPK, O_TOPP, O_MINP, O_PEN, O_LASTN, O_SEED,
	       O_VERSION };
	static const struct option lo[] = {
		{ "model", 1, 0, 'm' }, { "prompt", 1, 0, 'p' },
		{ "chat", 0, 0, O_CHAT }, { "system", 1, 0, 's' },
		{ "n-predict", 1, 0, 'n' }, { "ctx-size", 1, 0, 'c' },
		{ "device", 1, 0, O_DEVICE }, { "temp", 1, 0, O_TEMP },
		{ "top-k", 1, 0, O_TOPK }, { "top-p", 1, 0, O_TOPP },
		{ "min-p", 1, 0, O_MINP }, { "repeat-penalty", 1, 0, O_PEN },
		{ "repeat-last-n", 1, 0, O_LASTN }, { "seed", 1, 0, O_SEED },
		{ "verbose", 0, 0, 'v' }, { "help", 0, 0, 'h' },
		{ "version", 0, 0, O_VERSION }, { 0, 0, 0, 0 }
	};
	int c, bad = 0, li;
	double v;

	o->sampling = tg_llm_sampling_default();
	o->n_predict = 256;
	while (!bad && (li = -1,
	                c = getopt_long(argc, argv, "m:p:s:n:c:vh", lo, &li))
	               != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'p': o->prompt = optarg; break;
		case 's': o->system = optarg; break;
		case O_CHAT: o->chat = 1; break;
		case O_DEVICE: o->device = optarg; break;
		case 'v': o->verbose = 1; break;
		case 'n':
			bad = num(optarg, -1, 1e9, &v);
			o->n_predict = (long)v;
			break;
		case 'c':
			bad = num(optarg, 1, 1 << 24, &v);
			o->n_ctx = (long)v;
			break;
		case O_TEMP: bad = num(optarg, 0, 1e9, &v);
			o->sampling.temperature = (float)v; break;
		case O_TOPK: bad = num(optarg, 0, 1e9, &v);
			o->sampling.top_k = (int32_t)v; break;
		case O_TOPP: bad = num(optarg, 0, 1, &v);
			o->sampling.top_p = (float)v; break;
		case O_MINP: bad = num(optarg, 0, 1, &v);
			o->sampling.min_p = (float)v; break;
		case O_PEN: bad = num(optarg, 0, 1e9, &v);
			o->sampling.repeat_penalty = (float)v; break;
		case O_LASTN: bad = num(optarg, 0, 1e9, &v);
			o->sampling.penalty_last_n = (int32_t)v; break;
		case O_SEED: bad = num(optarg, 0, 1.8e19, &v);
			o->sampling.seed = (uint64_t)v; break;
		case 'h': usage(stdout); exit(0);
		case O_VERSION: printf("tg-llm (tgcore) %s\n", PACKAGE_VERSION);
			exit(0);
		default: usage(stderr); return 2;
		}
		if (bad && li >= 0)
			fprintf(stderr, "tg-llm: bad value '%s' for --%s\n",
			        optarg, lo[li].name);
		else if (bad)
			fprintf(stderr, "tg-llm: bad value '%s' for -%c\n", optarg,
			        c);
	}
	if (bad)
		return 2;
	if (optind < argc || !o->model || (!o->prompt == !o->chat)) {
		fprintf(stderr, "tg-llm: %s\n", optind < argc
		        ? "unexpected arguments"
		        : !o->model ? "no model (-m FILE)"
		                    : "give either -p TEXT or --chat");
		usage(stderr);
		return 2;
	}
	return 0;
}

static int open_llm(const opts *o, llm *l)
{
	tg_llm_model_info info;
	tg_dev *dev = NULL;
	int64_t n_ctx;

	if (tg_init())
		return fail("init");
	if (o->device && !(dev = tg_dev_get(o->device)))
		return fail(o->device);
	if (!(l->g = tg_gguf_open(o->model)))
		return fail("model");
	if (!(l->tok = tg_llm_tokenizer_from_gguf(l->g)) ||
	    (o->chat && !(l->chat = tg_llm_chat_from_gguf(l->g))) ||
	    !(l->m = tg_llm_model_load(l->g, dev)) ||
	    tg_llm_model_get_info(l->m, &info))
		return fail(o->model);
	n_ctx = o->n_ctx ? o->n_ctx
	                 : info.n_ctx_train < 4096 ? info.n_ctx_train : 4096;
	if (!(l->c = tg_llm_context_new(l->m, n_ctx, 1)) ||
	    !(l->s = tg_llm_sampler_new(&o->sampling)) ||
	    !(l->dt = tg_llm_detok_new(l->tok)))
		return fail("setup");
	l->n_vocab = info.n_vocab;
	if (!(l->logits = malloc((size_t)info.n_vocab * sizeof *l->logits)))
		return fprintf(stderr, "tg-llm: out of memory\n"), 1;
	if (o->verbose)
		fprintf(stderr, "tg-llm: %s, %lld layers, %lld x %lld heads of "
		        "%lld, vocabulary %lld, context %lld, on %s\n", info.arch,
		        (long long)info.n_layer, (long long)info.n_head,
		        (long long)info.n_head_kv, (long long)info.head_dim,
		        (long long)info.n_vocab, (long long)n_ctx,
		        tg_dev_name(dev ? dev : tg_dev_get(NULL)));
	return 0;
}

static void close_llm(llm *l)
{
	tg_llm_detok_free(l->dt);
	tg_llm_sampler_free(l->s);
	tg_llm_context_free(l->c);
	tg_llm_model_free(l->m);
	tg_llm_chat_free(l->chat);
	tg_llm_tokenizer_free(l->tok);
	tg_gguf_close(l->g);
	free(l->logits);
	free(l->ids);
	tg_shutdown();
}

/* Remembers ids as the cache's and the sampler's history. */
static int push(llm *l, const int32_t *ids, size_t n)
{
	if (l->nids + n > l->cap) {
		size_t cap = (l->nids + n) * 2;
		int32_t *p = realloc(l->ids, cap * sizeof *p);

		if (!p)
			return fprintf(stderr, "tg-llm: out of memory\n"), 1;
		l->ids = p;
		l->cap = cap;
	}
	memcpy(l->ids + l->nids, ids, n * sizeof *ids);
	l->nids += n;
	for (size_t i = 0; i < n; i++)
		tg_llm_sampler_accept(l->s, ids[i]);
	return 0;
}

static int context_full(const llm *l, size_t more)
{
	int64_t size = tg_llm_context_size(l->c);

	if ((int64_t)(l->nids + more) <= size)
		return 0;
	fprintf(stderr, "\ntg-llm: the context of %lld tokens is full "
	        "(%zu held, %zu more asked; -c sets its size)\n",
	        (long long)size, l->nids, more);
	return 1;
}

/* Runs ids[0..n) after what the cache holds. */
static int prefill(llm *l, const int32_t *ids, size_t n)
{
	double t0 = now();

	if (context_full(l, n))
		return 1;
	if (tg_llm_prefill(l->c, ids, n, l->logits, 0))
		return fail("prefill");
	l->prefill_s += now() - t0;
	l->prefill_n += (long)n;
	return push(l, ids, n);
}

/* Whether the model ends its text with id: the end of sequence, or a
 * control token (<|im_end|>, <|eot_id|>), as llama.cpp stops. */
static int ends(const llm *l, int32_t id)
{
	return id == tg_llm_eos(l->tok) ||
	       (id != tg_llm_bos(l->tok) &&
	        tg_llm_token_type(l->tok, id) == TG_LLM_TOKEN_CONTROL);
}

static void emit(const char *s, size_t n, FILE *text)
{
	fwrite(s, 1, n, stdout);
	if (text)
		fwrite(s, 1, n, text);
	fflush(stdout);
}

/* Samples and decodes up to max tokens (negative: no limit), printing
 * the text (and into text when not NULL).  0, or 1 on an error. */
static int generate(llm *l, long max, FILE *text)
{
	const char *piece;
	size_t len;

	for (long k = 0; (max < 0 || k < max) && !interrupted; k++) {
		int32_t id = tg_llm_sample(l->s, l->logits, (size_t)l->n_vocab);
		double t0;

		if (id < 0)
			return fail("sample");
		if (ends(l, id))
			break;
		if (!(piece = tg_llm_detok_feed(l->dt, id, &len)))
			return fail("detokenize");
		emit(piece, len, text);
		if ((max >= 0 && k + 1 >= max) || context_full(l, 1))
			break;  /* its logits would go unused */
		t0 = now();
		if (tg_llm_decode(l->c, &id, l->logits))
			return fail("decode");
		l->decode_s += now() - t0;
		l->decode_n++;
		if (push(l, &id, 1))
			return 1;
	}
	piece = tg_llm_detok_flush(l->dt, &len);
	emit(piece, len, text);
	if (interrupted)
		fprintf(stderr, "\ntg-llm: interrupted\n");
	return 0;
}

static void stats(const llm *l)
{
	fprintf(stderr, "\ntg-llm: prefill %ld tokens in %.2f s (%.1f "
	        "tokens/s), decode %ld tokens in %.2f s (%.1f tokens/s)\n",
	        l->prefill_n, l->prefill_s,
	        l->prefill_s > 0 ? l->prefill_n / l->prefill_s : 0.0,
	        l->decode_n, l->decode_s,
	        l->decode_s > 0 ? l->decode_n / l->decode_s : 0.0);
}

static int complete(const opts *o, llm *l)
{
	size_t n = strlen(o->prompt);
	int32_t *ids = malloc((n + 4) * sizeof *ids);
	long k;
	int rc;

	if (!ids)
		return fprintf(stderr, "tg-llm: out of memory\n"), 1;
	k = tg_llm_tokenize(l->tok, o->prompt, n, TG_LLM_ADD_SPECIAL, ids,
	                    n + 4);
	if (k < 1) {
		free(ids);
		return k < 0 ? fail("tokenize")
		             : (fprintf(stderr, "tg-llm: the prompt is empty\n"), 1);
	}
	fputs(o->prompt, stdout);
	rc = prefill(l, ids, (size_t)k) || generate(l, o->n_predict, NULL);
	free(ids);
	printf("\n");
	return rc;
}

/* A conversation: its messages and their texts (owned). */
typedef struct convo {
	tg_llm_message *msgs;
	size_t n, cap;
} convo;

static int add_message(convo *cv, const char *role, char *text)
{
	if (cv->n == cv->cap) {
		size_t cap = cv->cap ? 2 * cv->cap : 8;
		tg_llm_message *p = realloc(cv->msgs, cap * sizeof *p);

		if (!p)
			return free(text), 1;
		cv->msgs = p;
		cv->cap = cap;
	}
	cv->msgs[cv->n].role = role;
	cv->msgs[cv->n++].content = text;
	return 0;
}

static void convo_free(convo *cv)
{
	for (size_t i = 0; i < cv->n; i++)
		free((char *)cv->msgs[i].content);
	free(cv->msgs);
}

/* The conversation as the template writes it, with the assistant's
 * header, tokenized; the cache keeps what it shares with what it holds
 * and the rest is prefilled. */
static int chat_prefill(llm *l, const convo *cv)
{
	long len = tg_llm_chat_format(l->chat, cv->msgs, cv->n, 1, NULL, 0);
	char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
	int32_t *ids = text ? malloc(((size_t)len + 4) * sizeof *ids) : NULL;
	long k = -1;
	size_t same = 0;
	int rc = 1;

	if (len < 0)
		return fail("chat template");
	if (ids && tg_llm_chat_format(l->chat, cv->msgs, cv->n, 1, text,
	                              (size_t)len + 1) == len)
		k = tg_llm_tokenize(l->tok, text, (size_t)len,
		                    TG_LLM_PARSE_SPECIAL, ids, (size_t)len + 4);
	if (k < 0) {
		rc = ids ? fail("tokenize") : (fprintf(stderr, "tg-llm: out of "
		                                       "memory\n"), 1);
		goto out;
	}
	while (same < l->nids && same < (size_t)k && l->ids[same] == ids[same])
		same++;
	if (same == (size_t)k)  /* run the last token again for its logits */
		same--;
	if (tg_llm_context_rewind(l->c, (int64_t)same)) {
		rc = fail("rewind");
		goto out;
	}
	l->nids = same;
	tg_llm_sampler_reset(l->s);
	for (size_t i = 0; i < same; i++)
		tg_llm_sampler_accept(l->s, l->ids[i]);
	rc = prefill(l, ids + same, (size_t)k - same);
out:
	free(ids);
	free(text);
	return rc;
}

/* One reply: generated into a string that becomes its message. */
static int chat_reply(const opts *o, llm *l, convo *cv)
{
	char *reply = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&reply, &size);
	int rc;

	if (!f)
		return fprintf(stderr, "tg-llm: out of memory\n"), 1;
	rc = generate(l, o->n_predict, f);
	fclose(f);
	printf("\n");
	if (rc || !reply)
		return free(reply), 1;
	return add_message(cv, "assistant", reply);
}

static int chat(const opts *o, llm *l)
{
	convo cv = { 0 };
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	if (o->system && add_message(&cv, "system", strdup(o->system)))
		return 1;
	fprintf(stderr, "tg-llm: chatting (Ctrl-C stops a reply; Ctrl-D or "
	        "Ctrl-C at the prompt ends)\n");
	while (!rc) {
		fputs("> ", stdout);
		fflush(stdout);
		interrupted = 0;
		if ((n = getline(&line, &cap, stdin)) < 0)
			break;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (n == 0)
			continue;
		rc = add_message(&cv, "user", strdup(line)) ||
		     chat_prefill(l, &cv) || chat_reply(o, l, &cv);
	}
	free(line);
	convo_free(&cv);
	printf("\n");
	return rc;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	opts o = { 0 };
	llm l = { 0 };
	int rc;

	if ((rc = parse(argc, argv, &o)))
		return rc;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;  /* no SA_RESTART: a read is cut short */
	sigaction(SIGINT, &sa, NULL);
	rc = open_llm(&o, &l);
	if (!rc)
		rc = o.chat ? chat(&o, &l) : complete(&o, &l);
	if (l.prefill_n)
		stats(&l);
	close_llm(&l);
	return rc ? 1 : interrupted ? 130 : 0;
}

/*
 * shape/symdims.c - symbolic sizes in the public int64 shapes: the
 * variables users make (tg_variable), the shape context that holds every
 * symbolic shape entry of lazy buffers and tensors, and the codes that
 * stand for those entries in an int64_t shape (tinygrad's Variable,
 * bound with .bind(), inside Tensor shapes).
 *
 * A code is TG_DIM_SYM_BASE - i, i indexing the table of entries: far
 * below any size or negative pad a program uses.  An entry is a node of
 * the shape context, so equal expressions get one code, and a code is
 * valid until tg_shutdown.  A variable's entry is BIND(var, value): a
 * shape remembers the value its variable had when the shape was made,
 * and the scheduler takes those values off (tg_sym_unbind) to pass
 * them to kernels that are compiled once for every value.
 *
 * The shape context is shared by every thread: tg_symctx_enter locks
 * it (the lock is recursive, so the scheduler can hold it while it
 * calls code that takes it again); leaving it forgets a failed
 * operation's sticky status, whose message is in tg_last_error.  It
 * grows by a few nodes per bound value and is freed at tg_shutdown.
 */
#include "config.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape.h"

struct tg_variable {
	_Atomic uint32_t refs;
	tg_uop *node;            /* DEFINE_VAR in the shape context */
	_Atomic int64_t value;   /* bound value */
};

static pthread_mutex_t ctx_lock;
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;
static tg_ir *ctx;
static TG_VEC(tg_uop *) entries;   /* by code index */
static tg_ptrmap entry_index;      /* node -> index + 1 */
static TG_VEC(tg_variable *) vars;      /* live variables */

static void init_lock(void)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&ctx_lock, &a);
	pthread_mutexattr_destroy(&a);
}

tg_ir *tg_symctx_enter(void)
{
	pthread_once(&ctx_once, init_lock);
	pthread_mutex_lock(&ctx_lock);
	if (!ctx && !(ctx = tg_ir_new())) {
		pthread_mutex_unlock(&ctx_lock);
		tg_error_oom("shape context");
		return NULL;
	}
	return ctx;
}

void tg_symctx_leave(void)
{
	if (ctx)
		tg_ir_clear_status(ctx);
	pthread_mutex_unlock(&ctx_lock);
}

void tg_symctx_free(void)
{
	pthread_once(&ctx_once, init_lock);
	pthread_mutex_lock(&ctx_lock);
	for (size_t i = 0; i < vars.n; i++)
		vars.v[i]->node = NULL;  /* a var kept past shutdown is dead */
	TG_VEC_FREE(&vars);
	TG_VEC_FREE(&entries);
	tg_ptrmap_free(&entry_index);
	tg_ir_free(ctx);
	ctx = NULL;
	pthread_mutex_unlock(&ctx_lock);
}

/* ------------------------------------------------------------ codes */

int tg_dim_is_sym(int64_t d)
{
	return d <= TG_DIM_SYM_BASE;
}

/* Context held. */
static int64_t encode_locked(tg_uop *u)
{
	uintptr_t i = (uintptr_t)tg_ptrmap_get(&entry_index, u);

	if (i)
		return TG_DIM_SYM_BASE - (int64_t)(i - 1);
	if (TG_VEC_PUSH(&entries, u) ||
	    tg_ptrmap_put(&entry_index, u, (void *)(uintptr_t)entries.n) < 0) {
		tg_error_oom("shape code");
		return TG_DIM_INVALID;
	}
	return TG_DIM_SYM_BASE - (int64_t)(entries.n - 1);
}

int64_t tg_dim_encode(tg_sint s)
{
	int64_t d;

	if (!s.u)
		return s.c;
	if (!tg_symctx_enter())
		return TG_DIM_INVALID;
	d = encode_locked(s.u);
	tg_symctx_leave();
	return d;
}

/* Context held. */
static int decode_locked(int64_t d, tg_sint *out)
{
	uint64_t i;

	if (!tg_dim_is_sym(d)) {
		*out = tg_si(d);
		return TG_OK;
	}
	i = (uint64_t)(TG_DIM_SYM_BASE - d);
	if (d == TG_DIM_INVALID || i >= entries.n)
		return tg_error(TG_EINVAL, "%s is not a size made by "
		                "tg_variable_dim or tg_dim_affine", d ==
		                TG_DIM_INVALID ? "TG_DIM_INVALID (a failed "
		                "tg_variable_dim)" : "this negative number");
	*out = tg_sint_of(entries.v[i]);
	return TG_OK;
}

int tg_dims_decode(size_t n, const int64_t *in, tg_sint *out)
{
	int rc = TG_OK;
	size_t i;

	for (i = 0; i < n && !tg_dim_is_sym(in[i]); i++)
		out[i] = tg_si(in[i]);
	if (i == n)
		return TG_OK;
	if (!tg_symctx_enter())
		return TG_ENOMEM;
	for (; i < n && rc == TG_OK; i++)
		rc = decode_locked(in[i], &out[i]);
	tg_symctx_leave();
	return rc;
}

int tg_st_is_sym(const tg_st *st)
{
	for (size_t i = 0; i < st->nviews; i++) {
		const tg_view *v = st->views[i];

		if (v->offset.u)
			return 1;
		for (size_t a = 0; a < v->ndim; a++)
			if (v->shape[a].u || v->strides[a].u ||
			    (v->mask && (v->mask[2 * a].u ||
			                 v->mask[2 * a + 1].u)))
				return 1;
	}
	return 0;
}

int tg_dims_sym(size_t n, const int64_t *d)
{
	for (size_t i = 0; i < n; i++)
		if (tg_dim_is_sym(d[i]))
			return 1;
	return 0;
}

int64_t tg_dim_affine(int64_t dim, int64_t mul, int64_t add)
{
	tg_sint s;
	tg_ir *ir;
	int64_t d = TG_DIM_INVALID;

	if (!tg_dim_is_sym(dim)) {
		int64_t r;
		if (__builtin_mul_overflow(dim, mul, &r) ||
		    __builtin_add_overflow(r, add, &r) || tg_dim_is_sym(r)) {
			tg_error(TG_EINVAL, "dim_affine: %lld*%lld+%lld "
			         "overflows", (long long)dim, (long long)mul,
			         (long long)add);
			return TG_DIM_INVALID;
		}
		return r;
	}
	if (!(ir = tg_symctx_enter()))
		return TG_DIM_INVALID;
	if (decode_locked(dim, &s) == TG_OK) {
		s = tg_sint_add(ir, tg_sint_mul(ir, s, tg_si(mul)),
		                tg_si(add));
		if (!tg_ir_status(ir))
			d = s.u ? encode_locked(s.u) : s.c;
	}
	if (d == TG_DIM_INVALID)
		tg_error_prefix("dim_affine: %lld*(dim)+%lld", (long long)mul,
		                (long long)add);
	tg_symctx_leave();
	return d;
}

int64_t tg_dim_value(int64_t dim)
{
	tg_sint s;
	int64_t v = -1;

	if (!tg_dim_is_sym(dim))
		return dim;
	if (!tg_symctx_enter())
		return -1;
	if (decode_locked(dim, &s) == TG_OK &&
	    tg_sym_eval(s.u, NULL, NULL, 0, &v) != TG_OK)
		v = -1;
	tg_symctx_leave();
	return v;
}

const char *tg_dim_str(int64_t dim, char *buf, size_t n)
{
	tg_sint s;

	if (!n)
		return buf;
	if (!tg_dim_is_sym(dim)) {  /* no lock for the common case */
		snprintf(buf, n, "%lld", (long long)dim);
		return buf;
	}
	if (!tg_symctx_enter()) {
		snprintf(buf, n, "?");
		return buf;
	}
	if (decode_locked(dim, &s) == TG_OK)
		tg_sint_format(s, buf, n);
	else
		snprintf(buf, n, "%lld", (long long)dim);
	tg_symctx_leave();
	return buf;
}

/* Context held.  u with every variable bound to the value of the live
 * tg_variable of its name now; NULL with an error naming a variable
 * no live tg_variable has. */
static tg_variable *find_locked(const char *name);

static tg_uop *rebind_locked(tg_ir *ir, tg_uop *u)
{
	tg_uop_vec uv = { 0 };
	tg_uop *binds[8], *r = NULL;
	size_t i;

	if (!(u = tg_sym_unbind(ir, u, NULL, NULL)) || tg_sym_vars(u, &uv))
		goto out;
	if (uv.n > TG_ARRAY_LEN(binds)) {
		tg_error(TG_EUNSUPPORTED, "a size of %zu variables (at most "
		         "%zu)", uv.n, TG_ARRAY_LEN(binds));
		goto out;
	}
	for (i = 0; i < uv.n; i++) {
		tg_variable *v = find_locked(uv.v[i]->arg.name);
		if (!v) {
			tg_error(TG_EINVAL, "a size reads '%s', and no live "
			         "tg_variable has that name",
			         uv.v[i]->arg.name);
			goto out;
		}
		binds[i] = tg_sym_bind(ir, uv.v[i], atomic_load(&v->value));
	}
	r = tg_sym_substitute(ir, u, uv.v, binds, uv.n);
out:
	TG_VEC_FREE(&uv);
	return r;
}

int64_t tg_dim_rebind(int64_t dim)
{
	tg_sint s;
	tg_uop *u;
	tg_ir *ir;
	int64_t d = TG_DIM_INVALID;

	if (!tg_dim_is_sym(dim))
		return dim;
	if (!(ir = tg_symctx_enter()))
		return TG_DIM_INVALID;
	if (decode_locked(dim, &s) == TG_OK && (u = rebind_locked(ir, s.u)))
		d = u->op == TG_CONST ? u->arg.v.i : encode_locked(u);
	tg_symctx_leave();
	return d;
}

int tg_dim_same_unbound(int64_t a, int64_t b)
{
	tg_sint x, y;
	tg_ir *ir;
	int same = 0;

	if (!tg_dim_is_sym(a) || !tg_dim_is_sym(b))
		return a == b;
	if (!(ir = tg_symctx_enter()))
		return 0;
	if (decode_locked(a, &x) == TG_OK && decode_locked(b, &y) == TG_OK)
		same = tg_sym_unbind(ir, x.u, NULL, NULL) ==
		       tg_sym_unbind(ir, y.u, NULL, NULL);
	tg_symctx_leave();
	return same;
}

int64_t tg_dims_product(size_t n, const int64_t *dims)
{
	tg_sint p = tg_si(1), s;
	tg_ir *ir;
	int64_t d = TG_DIM_INVALID;

	if (!(ir = tg_symctx_enter()))
		return TG_DIM_INVALID;
	for (size_t i = 0; i < n && !tg_ir_status(ir); i++) {
		if (decode_locked(dims[i], &s) != TG_OK)
			goto out;
		p = tg_sint_mul(ir, p, s);
	}
	if (!tg_ir_status(ir))
		d = p.u ? encode_locked(p.u) : p.c;
out:
	tg_symctx_leave();
	return d;
}

/* -------------------------------------------------------- variables */

/* Context held. */
static tg_variable *find_locked(const char *name)
{
	for (size_t i = 0; i < vars.n; i++)
		if (!strcmp(vars.v[i]->node->arg.name, name))
			return vars.v[i];
	return NULL;
}

static int check_name(const char *name)
{
	if (!name || !*name || !(isalpha((unsigned char)*name) ||
	                         *name == '_'))
		return -1;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return -1;
	return strlen(name) < 64 ? 0 : -1;
}

tg_variable *tg_variable_new(const char *name, int64_t min, int64_t max)
{
	tg_variable *v = NULL;
	tg_ir *ir;

	if (check_name(name))
		return tg_error(TG_EINVAL, "variable_new: '%s' is not a name (a "
		                "letter or '_', then letters, digits or '_'; "
		                "at most 63)", name ? name : "(null)"), NULL;
	if (min < 0 || min > max || max > TG_DIM_MAX)
		return tg_error(TG_EINVAL, "variable_new: %s in [%lld, %lld]: the "
		                "bounds must satisfy 0 <= min <= max <= %lld",
		                name, (long long)min, (long long)max,
		                (long long)TG_DIM_MAX), NULL;
	if (!(ir = tg_symctx_enter()))
		return NULL;
	if (find_locked(name))
		tg_error(TG_EINVAL, "variable_new: a variable named '%s' exists "
		         "(free it first; kernels tell variables by name)",
		         name);
	else if (!(v = calloc(1, sizeof *v)))
		tg_error_oom("variable_new");
	else if (!(v->node = tg_sym_var(ir, name, min, max)) ||
	         TG_VEC_PUSH(&vars, v)) {
		tg_error_oom("variable_new");
		free(v);
		v = NULL;
	} else {
		v->refs = 1;
		v->value = min;
	}
	tg_symctx_leave();
	return v;
}

tg_variable *tg_variable_ref(tg_variable *v)
{
	if (v)
		atomic_fetch_add(&v->refs, 1);
	return v;
}

void tg_variable_free(tg_variable *v)
{
	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	tg_symctx_enter();
	for (size_t i = 0; i < vars.n; i++)
		if (vars.v[i] == v) {
			vars.v[i] = vars.v[--vars.n];
			break;
		}
	tg_symctx_leave();
	free(v);
}

tg_variable *tg_variable_find(const char *name)
{
	tg_variable *v;

	if (!tg_symctx_enter())
		return NULL;
	v = tg_variable_ref(find_locked(name));
	tg_symctx_leave();
	return v;
}

int tg_variable_bind(tg_variable *v, int64_t value)
{
	if (!v || !v->node)
		return tg_error(TG_EINVAL, "variable_bind: %s", v ? "the variable "
		                "outlived tg_shutdown" : "no variable");
	if (value < v->node->arg.a || value > v->node->arg.b)
		return tg_error(TG_EINVAL, "variable_bind: %s=%lld is outside its "
		                "range [%lld, %lld]", v->node->arg.name,
		                (long long)value, (long long)v->node->arg.a,
		                (long long)v->node->arg.b);
	atomic_store(&v->value, value);
	return TG_OK;
}

int64_t tg_variable_value(const tg_variable *v)
{
	return v ? atomic_load(&v->value) : -1;
}

const char *tg_variable_name(const tg_variable *v)
{
	return v && v->node ? v->node->arg.name : NULL;
}

int64_t tg_variable_dim(const tg_variable *v)
{
	tg_ir *ir;
	tg_uop *b;
	int64_t d = TG_DIM_INVALID;

	if (!v || !v->node) {
		tg_error(TG_EINVAL, "variable_dim: %s", v ? "the variable outlived "
		         "tg_shutdown" : "no variable");
		return TG_DIM_INVALID;
	}
	if (!(ir = tg_symctx_enter()))
		return TG_DIM_INVALID;
	if ((b = tg_sym_bind(ir, v->node, atomic_load(&v->value))))
		d = encode_locked(b);
	else
		tg_error_prefix("variable_dim");
	tg_symctx_leave();
	return d;
}

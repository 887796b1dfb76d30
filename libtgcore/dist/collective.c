/*
 * collective.c - all-reduce and broadcast of tensors, in place.
 *
 * The tensors are realized, copied to one host staging area (in
 * order, so tensors of one dtype that follow each other are one run),
 * and each run is cut into chunks of at most [dist] bucket_mb; a
 * chunk's nonblocking collective starts as soon as its bytes are
 * packed, so the later copies overlap the earlier transfers (PyTorch
 * DDP's buckets).  Then every chunk is waited for (comm.c: with a
 * deadline) and the results copied back: into the memory of a tensor
 * that owns its own, else with tg_assign (a constant becomes memory, a
 * view writes through to what it views).  Staging through the host
 * works for every device and costs two memory copies of the data,
 * small next to a network's time for it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "dist.h"

#define DEFAULT_BUCKET_MB 25

/* What differs between the collectives. */
typedef struct coll {
	const char *name;   /* "dist all-reduce" */
	tg_dist_op op;      /* all-reduce */
	int root;           /* broadcast; -1 for all-reduce */
} coll;

/* The call's tensors, their memory and the staging area. */
typedef struct pack {
	const coll *c;
	tg_tensor *const *ts;
	size_t n;
	tg_buffer **bufs;
	size_t *off;        /* each tensor's place in stage */
	unsigned char *stage;
	size_t total;
	MPI_Request *reqs;
	int nreqs, cap;
	size_t chunk;       /* bytes per chunk at most */
} pack;

static int mpi_type(tg_dtype dt, MPI_Datatype *out)
{
	static const struct { tg_dtype dt; MPI_Datatype mt; } map[] = {
		{ TG_BOOL, MPI_C_BOOL }, { TG_INT8, MPI_INT8_T },
		{ TG_UINT8, MPI_UINT8_T }, { TG_INT16, MPI_INT16_T },
		{ TG_UINT16, MPI_UINT16_T }, { TG_INT32, MPI_INT32_T },
		{ TG_UINT32, MPI_UINT32_T }, { TG_INT64, MPI_INT64_T },
		{ TG_UINT64, MPI_UINT64_T }, { TG_FLOAT32, MPI_FLOAT },
		{ TG_FLOAT64, MPI_DOUBLE },
	};
	size_t i;

	for (i = 0; i < sizeof map / sizeof *map; i++)
		if (map[i].dt == dt) {
			*out = map[i].mt;
			return 0;
		}
	return -1;
}

/* Whether op can combine tensor i's dtype, else an error saying why. */
static int check_dtype(const coll *c, size_t i, tg_dtype dt)
{
	MPI_Datatype mt;

	if (c->root >= 0)
		return 0;  /* a broadcast moves bytes: any dtype */
	if (mpi_type(dt, &mt))
		return tg_set_error(TG_EUNSUPPORTED, "%s: tensor %zu is %s, "
		                    "which MPI cannot combine: tg_cast it to "
		                    "float32 first", c->name, i,
		                    tg_dtype_name(dt));
	if (c->op == TG_DIST_MEAN && !tg_dtype_is_float(dt))
		return tg_set_error(TG_EINVAL, "%s: mean of tensor %zu (%s): "
		                    "mean is for float tensors; use "
		                    "TG_DIST_SUM", c->name, i,
		                    tg_dtype_name(dt));
	if (c->op == TG_DIST_SUM && dt == TG_BOOL)
		return tg_set_error(TG_EINVAL, "%s: sum of tensor %zu (bool): "
		                    "use TG_DIST_MAX (any) or TG_DIST_MIN (all)",
		                    c->name, i);
	return 0;
}

static int check_args(const coll *c, tg_tensor *const *ts, size_t n)
{
	size_t i;
	int rc;

	if (n && !ts)
		return tg_set_error(TG_EINVAL, "%s: NULL tensor list with n = "
		                    "%zu", c->name, n);
	if (c->root < 0 && (unsigned)c->op > TG_DIST_MAX)
		return tg_set_error(TG_EINVAL, "%s: bad op %d (expected "
		                    "TG_DIST_SUM, _MEAN, _MIN or _MAX)", c->name,
		                    (int)c->op);
	if (c->root >= dist_the_job.size)
		return tg_set_error(TG_EINVAL, "%s: root %d is not a rank (the "
		                    "job has %d: 0 to %d)", c->name, c->root,
		                    dist_the_job.size, dist_the_job.size - 1);
	for (i = 0; i < n; i++) {
		if (!ts[i])
			return tg_set_error(TG_EINVAL, "%s: tensor %zu is NULL",
			                    c->name, i);
		if ((rc = check_dtype(c, i, tg_tensor_dtype(ts[i]))))
			return rc;
	}
	return 0;
}

/* FNV-1a over what every rank must agree on. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 1099511628211ull;
	return h;
}

static uint64_t signature(const pack *p)
{
	uint64_t h = 14695981039346656037ull;
	size_t i;

	h = fnv(h, &p->n, sizeof p->n);
	h = fnv(h, &p->c->op, sizeof p->c->op);
	h = fnv(h, &p->c->root, sizeof p->c->root);
	for (i = 0; p->ts && i < p->n && p->ts[i]; i++) {
		size_t nd = tg_tensor_ndim(p->ts[i]);
		tg_dtype dt = tg_tensor_dtype(p->ts[i]);

		h = fnv(h, &dt, sizeof dt);
		h = fnv(h, &nd, sizeof nd);
		h = fnv(h, tg_tensor_shape(p->ts[i]), nd * sizeof(int64_t));
	}
	return h;
}

/* Every rank's call must be the same, and every rank ready: the max
 * of (h, ~h) over the ranks is (h, ~h) on every rank only when every h
 * is the same, and the max of the failure flags says whether a rank
 * failed to get its tensors (local_rc), so that all stop together
 * rather than the others waiting for it until the timeout. */
static int agree(const pack *p, int local_rc)
{
	uint64_t h = signature(p), v[3] = { h, ~h, local_rc != 0 };
	char shape[96] = "", first[128] = "";
	MPI_Request req;
	int rc;

	if ((rc = MPI_Iallreduce(MPI_IN_PLACE, v, 3, MPI_UINT64_T, MPI_MAX,
	                         MPI_COMM_WORLD, &req)))
		return local_rc ? local_rc :
		       dist_mpi_error(p->c->name, "MPI_Iallreduce", rc);
	if ((rc = dist_wait(p->c->name, &req, 1)))
		return local_rc ? local_rc : rc;
	if (local_rc)
		return local_rc;
	if (v[2])
		return tg_set_error(TG_ECOMM, "%s: another rank could not get "
		                    "its tensors ready (its own error says why); "
		                    "nothing was sent", p->c->name);
	if (v[0] == h && v[1] == ~h)
		return 0;
	if (p->n)
		snprintf(first, sizeof first, ", the first %s %s",
		         tg_dtype_name(tg_tensor_dtype(p->ts[0])),
		         tg_tensor_shape_str(p->ts[0], shape, sizeof shape));
	return tg_set_error(TG_EINVAL, "%s: the ranks' calls differ (the "
	                    "number of tensors, their shapes or dtypes, the "
	                    "op or the root): rank %d of %d passed %zu "
	                    "tensor%s%s", p->c->name, dist_the_job.rank,
	                    dist_the_job.size, p->n, p->n == 1 ? "" : "s",
	                    first);
}

static size_t nbytes_of(const pack *p, size_t i)
{
	return (size_t)tg_tensor_numel(p->ts[i]) *
	       tg_dtype_size(tg_tensor_dtype(p->ts[i]));
}

static tg_dtype dtype_of(const pack *p, size_t i)
{
	return tg_tensor_dtype(p->ts[i]);
}

/* Realizes the tensors and takes the memory of those that own theirs;
 * the others (a constant, a view) are read with tg_tensor_data and
 * written with tg_assign (bufs[i] NULL).  Lays out the stage. */
static int take_memory(pack *p)
{
	size_t i;

	if (tg_realize_many(p->ts, p->n))
		return tg_set_error(tg_last_status(), "%s: realizing the "
		                    "tensors: %s", p->c->name, tg_last_error());
	for (i = 0; i < p->n; i++) {
		if (!(p->bufs[i] = tg_tensor_buffer(p->ts[i])))
			tg_clear_error();
		p->off[i] = p->total;
		p->total += nbytes_of(p, i);
	}
	if (!(p->stage = malloc(p->total ? p->total : 1)))
		return tg_set_error(TG_ENOMEM, "%s: %zu bytes of host memory "
		                    "for staging", p->c->name, p->total);
	return 0;
}

/* Tensor i's values into the stage. */
static int copy_out(pack *p, size_t i)
{
	unsigned char *at = p->stage + p->off[i];
	int rc = p->bufs[i] ? tg_buffer_copyout(p->bufs[i], at, nbytes_of(p, i))
	                    : tg_tensor_data(p->ts[i], at, nbytes_of(p, i));

	return rc ? tg_set_error(tg_last_status(), "%s: tensor %zu to the "
	                         "host: %s", p->c->name, i, tg_last_error())
	          : 0;
}

/* The stage's values into tensor i, in place. */
static int copy_in(pack *p, size_t i)
{
	unsigned char *at = p->stage + p->off[i];
	tg_tensor *v;
	int rc;

	if (p->bufs[i])
		rc = tg_buffer_copyin(p->bufs[i], at, nbytes_of(p, i));
	else if (!(v = tg_tensor_new(tg_tensor_dev(p->ts[i]), dtype_of(p, i),
	                             tg_tensor_ndim(p->ts[i]),
	                             tg_tensor_shape(p->ts[i]), at)))
		rc = tg_last_status();
	else {
		rc = tg_assign(p->ts[i], v) || tg_realize(p->ts[i]);
		tg_tensor_unref(v);
	}
	return rc ? tg_set_error(tg_last_status(), "%s: tensor %zu back to "
	                         "its device: %s", p->c->name, i,
	                         tg_last_error())
	          : 0;
}

/* [dist] bucket_mb, whole elements of 8 bytes, below INT_MAX bytes (so
 * that an MPI count fits an int whatever the element size). */
static int chunk_bytes(const char *op, size_t *out)
{
	const char *s = tg_config_get("dist.bucket_mb");
	long mb = DEFAULT_BUCKET_MB;
	char *end;

	if (s && *s) {
		errno = 0;
		mb = strtol(s, &end, 10);
		if (errno || end == s || *end || mb < 1 || mb > 1024) {
			tg_config_error("dist.bucket_mb", "expected megabytes "
			                "from 1 to 1024");
			return tg_set_error(TG_ECONFIG, "%s: %s", op,
			                    tg_last_error());
		}
	}
	*out = (size_t)mb << 20;
	return 0;
}

/* Starts the collective over stage[from, to) (one dtype). */
static int start(pack *p, size_t from, size_t to, tg_dtype dt)
{
	unsigned char *at = p->stage + from;
	MPI_Datatype mt = MPI_BYTE;
	size_t es = 1;
	int rc, n;

	if (p->nreqs == p->cap) {
		MPI_Request *r = realloc(p->reqs, (size_t)(p->cap * 2 + 8) *
		                         sizeof *r);
		if (!r)
			return tg_set_error(TG_ENOMEM, "%s: out of host memory",
			                    p->c->name);
		p->reqs = r, p->cap = p->cap * 2 + 8;
	}
	if (p->c->root < 0) {
		static const MPI_Op ops[] = { MPI_SUM, MPI_SUM, MPI_MIN,
		                              MPI_MAX };

		mpi_type(dt, &mt);
		es = tg_dtype_size(dt);
		n = (int)((to - from) / es);
		rc = MPI_Iallreduce(MPI_IN_PLACE, at, n, mt, ops[p->c->op],
		                    MPI_COMM_WORLD, &p->reqs[p->nreqs]);
	} else {
		n = (int)(to - from);
		rc = MPI_Ibcast(at, n, mt, p->c->root, MPI_COMM_WORLD,
		                &p->reqs[p->nreqs]);
	}
	if (rc)
		return dist_mpi_error(p->c->name, p->c->root < 0 ?
		                      "MPI_Iallreduce" : "MPI_Ibcast", rc);
	p->nreqs++;
	dist_the_job.comm_bytes += to - from;
	return 0;
}

/* Whether this rank sends its values (all-reduce, a broadcast's root)
 * and takes the result (all-reduce, a broadcast's others). */
static int sends(const pack *p)
{
	return p->c->root < 0 || p->c->root == dist_the_job.rank;
}

static int receives(const pack *p)
{
	return p->c->root != dist_the_job.rank;
}

/* Packs the tensors in order and starts each chunk once its bytes are
 * there: a run of one dtype is cut at multiples of the chunk size. */
static int pack_and_start(pack *p)
{
	size_t i, sent = 0;
	int rc;

	for (i = 0; i < p->n; i++) {
		tg_dtype dt = dtype_of(p, i);
		size_t end = p->off[i] + nbytes_of(p, i);
		size_t chunk = p->chunk - p->chunk % tg_dtype_size(dt);

		if (sends(p) && (rc = copy_out(p, i)))
			return rc;
		if (i && dt != dtype_of(p, i - 1))
			sent = p->off[i];
		while (end - sent >= chunk)
			if ((rc = start(p, sent, sent + chunk, dt)))
				return rc;
			else
				sent += chunk;
		if (end > sent && (i + 1 == p->n ||
		    dtype_of(p, i + 1) != dt)) {
			if ((rc = start(p, sent, end, dt)))
				return rc;
			sent = end;
		}
	}
	return 0;
}

/* The results back into the tensors (a mean divided by the size). */
static int unpack(pack *p)
{
	size_t i, k;

	for (i = 0; i < p->n && receives(p); i++) {
		unsigned char *at = p->stage + p->off[i];
		size_t nb = nbytes_of(p, i);
		tg_dtype dt = dtype_of(p, i);

		if (p->c->root < 0 && p->c->op == TG_DIST_MEAN) {
			if (dt == TG_FLOAT32)
				for (k = 0; k < nb / 4; k++)
					((float *)(void *)at)[k] /=
						(float)dist_the_job.size;
			else
				for (k = 0; k < nb / 8; k++)
					((double *)(void *)at)[k] /=
						dist_the_job.size;
		}
		if (copy_in(p, i))
			return tg_last_status();
	}
	return 0;
}

static void pack_free(pack *p, int stage_busy)
{
	size_t i;

	for (i = 0; p->bufs && i < p->n; i++)
		if (p->bufs[i])
			tg_buffer_unref(p->bufs[i]);
	free(p->bufs);
	free(p->off);
	/* after a failed wait MPI may still write the stage, so it
	 * stays (the job is broken; this happens once) */
	if (!stage_busy) {
		free(p->stage);
		free(p->reqs);
	}
}

/* A rank whose arguments are bad still takes part in agree(), so that
 * every rank fails at once with a message. */
static int run(const coll *c, tg_tensor *const *ts, size_t n)
{
	pack p = { .c = c, .ts = ts, .n = n };
	double t0 = dist_now();
	int rc, busy = 0;

	if ((rc = dist_usable(c->name)))
		return rc;
	p.bufs = calloc(n ? n : 1, sizeof *p.bufs);
	p.off = calloc(n ? n : 1, sizeof *p.off);
	if (!p.bufs || !p.off)
		rc = tg_set_error(TG_ENOMEM, "%s: out of host memory", c->name);
	if (!rc && !(rc = check_args(c, ts, n)) &&
	    !(rc = chunk_bytes(c->name, &p.chunk)))
		rc = take_memory(&p);
	if (!(rc = agree(&p, rc))) {
		rc = pack_and_start(&p);
		/* what started must finish, even after a packing error */
		if (p.nreqs) {
			int wrc = dist_wait(c->name, p.reqs, p.nreqs);

			busy = wrc != 0;
			rc = rc ? rc : wrc;
		}
		if (!rc)
			rc = unpack(&p);
	}
	pack_free(&p, busy);
	dist_the_job.comm_seconds += dist_now() - t0;
	return rc;
}

int tg_dist_all_reduce(tg_tensor *const *ts, size_t n, tg_dist_op op)
{
	coll c = { "dist all-reduce", op, -1 };

	return run(&c, ts, n);
}

int tg_dist_broadcast(tg_tensor *const *ts, size_t n, int root)
{
	coll c = { "dist broadcast", TG_DIST_SUM, root };

	if (root < 0)
		return tg_set_error(TG_EINVAL, "dist broadcast: root %d is not "
		                    "a rank", root);
	return run(&c, ts, n);
}

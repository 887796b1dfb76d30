/*
 * engine/schedule_items.c - the items of a schedule (tinygrad's
 * ScheduleItem) and the order they run in: one item per output group,
 * a kernel (schedule_ast.c), a copy or a view, holding references to
 * its buffers and outputs; the bases it writes get their memory here.
 * Then Kahn's order: producers first, and the readers of a tensor's
 * old value before the assign that overwrites it.  Separate from the
 * fusion rules (schedule.c) and the lowering: what an item holds and
 * when it runs do not depend on how its AST was built.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "device/device.h"
#include "ir/ir.h"
#include "shape/shape.h"
#include "engine/schedule.h"

static void item_free(tg_sched_item *it)
{
	size_t i;

	for (i = 0; i < it->nbufs; i++)
		tg_buffer_unref(it->bufs[i]);
	for (i = 0; i < it->nouts; i++)
		tg_lazy_unref(it->outs[i]);
	free(it->bufs);
	free(it->outs);
	free(it->vars);
	free(it->vals);
	memset(it, 0, sizeof *it);
}

void tg_schedule_free(tg_schedule *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->items.n; i++)
		item_free(&s->items.v[i]);
	TG_VEC_FREE(&s->items);
}

/* Gives a realized-to-be base its memory: a BUFVIEW the bytes of its
 * source's range (lazy_ops.c checked that it is one). */
static int give_buffer(tg_lazy *b)
{
	const tg_lazy *v = b->src[0];
	tg_lazy *sb;
	size_t off;

	if (b->buf)
		return 0;
	if (b->kind != TG_LZ_BUFVIEW) {
		b->buf = tg_buffer_new(b->dev, (size_t)tg_lazy_numel(b),
		                       b->dtype);
		return b->buf ? 0 : tg_last_status();
	}
	sb = tg_lazy_base((tg_lazy *)v);
	if (give_buffer(sb))
		return tg_last_status();
	off = v->base ? (size_t)v->st->views[0]->offset.c : 0;
	b->buf = tg_buffer_view(sb->buf, off * tg_dtype_size(v->dtype),
	                        (size_t)tg_lazy_numel(b), b->dtype);
	return b->buf ? 0 : tg_last_status();
}

int tg_sched_fill_item(tg_sched_item *it, const lz_vec *outs,
                       const lz_vec *ins)
{
	size_t i, n = outs->n + ins->n;

	it->bufs = calloc(n ? n : 1, sizeof *it->bufs);
	it->outs = calloc(outs->n ? outs->n : 1, sizeof *it->outs);
	if (!it->bufs || !it->outs)
		return tg_error_oom("schedule");
	for (i = 0; i < outs->n; i++) {
		it->outs[it->nouts++] = tg_lazy_ref(outs->v[i]);
		if (give_buffer(outs->v[i]))
			return tg_last_status();
		it->bufs[it->nbufs++] = tg_buffer_ref(outs->v[i]->buf);
	}
	for (i = 0; i < ins->n; i++) {
		if (give_buffer(ins->v[i]))
			return tg_last_status();
		it->bufs[it->nbufs++] = tg_buffer_ref(ins->v[i]->buf);
	}
	return 0;
}

/* A copy, or (a BUFVIEW) a view item: b from its source's memory. */
static int make_copy(tg_lazy *b, tg_sched_item *it, lz_vec *reads)
{
	lz_vec outs = { 0 };
	int rc;

	it->view = b->kind == TG_LZ_BUFVIEW;

	if (TG_VEC_PUSH(&outs, b) ||
	    TG_VEC_PUSH(reads, tg_lazy_base(b->src[0])))
		rc = tg_error_oom("schedule");
	else
		rc = tg_sched_fill_item(it, &outs, reads);
	TG_VEC_FREE(&outs);
	return rc;
}

void tg_sched_reads_free(reads_vec *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		TG_VEC_FREE(&r->v[i]);
	TG_VEC_FREE(r);
}

/* Output groups: bases sharing a reduce form one kernel (tinygrad's
 * MULTIOUTPUT), the rest one each, in the order they were realized. */
int tg_sched_build_items(sched *s, tg_schedule *out, reads_vec *reads)
{
	lz_map done = { 0 };
	size_t i, j;
	int rc = 0;

	for (i = 0; i < s->realize_order.n && !rc; i++) {
		tg_lazy *b = s->realize_order.v[i], *key;
		lz_vec grp = { 0 }, rd = { 0 };
		tg_sched_item it = { 0 };

		if (map_has(&done, b))
			continue;
		key = map_has(&s->reduce_for, b) ? (tg_lazy *)map_get(&s->reduce_for, b) : b;
		for (j = i; j < s->realize_order.n; j++) {
			tg_lazy *o = s->realize_order.v[j];
			tg_lazy *ok = map_has(&s->reduce_for, o) ?
			              (tg_lazy *)map_get(&s->reduce_for, o) : o;

			if (ok == key && !map_has(&done, o) &&
			    o->kind != TG_LZ_COPY && o->kind != TG_LZ_BUFVIEW) {
				if (put(s, &done, o, NULL) < 0)
					rc = s->status;
				else if (TG_VEC_PUSH(&grp, o))
					rc = tg_error_oom("schedule");
			}
		}
		if (b->kind == TG_LZ_COPY || b->kind == TG_LZ_BUFVIEW) {
			if (put(s, &done, b, NULL) < 0)
				rc = s->status;
			rc = rc ? rc : make_copy(b, &it, &rd);
		} else if (!rc && tg_disk_is(key->dev)) {
			rc = tg_error(TG_EUNSUPPORTED, "schedule: %s runs no "
			              "kernels, and this needs one there (math, "
			              "a reduce, a pad or a cast of a tensor on "
			              "it, or an assign into it): tg_to another "
			              "device first", tg_dev_name(key->dev));
		} else if (!rc) {
			rc = tg_sched_make_kernel(s, key, &grp, &it, &rd);
		}
		if (TG_VEC_PUSH(&out->items, it)) {
			item_free(&it);
			rc = tg_error_oom("schedule");
		}
		if (TG_VEC_PUSH(reads, rd)) {
			TG_VEC_FREE(&rd);
			rc = rc ? rc : tg_error_oom("schedule");
		}
		TG_VEC_FREE(&grp);
	}
	map_free(&done);
	return rc;
}

/* Whether item a must run before item b: b reads a base a computes,
 * or a reads the old value of a tensor that b assigns in place. */
static int before(const tg_sched_item *a, const lz_vec *ra,
                  const tg_sched_item *b, const lz_vec *rb)
{
	size_t i, j;

	for (i = 0; i < a->nouts; i++)
		for (j = 0; j < rb->n; j++)
			if (a->outs[i] == rb->v[j])
				return 1;
	for (i = 0; i < b->nouts; i++)
		if (b->outs[i]->kind == TG_LZ_ASSIGN)
			for (j = 0; j < ra->n; j++)
				if (is_realized(ra->v[j]) &&
				    ra->v[j]->buf == b->outs[i]->buf)
					return 1;
	return 0;
}

/* Kahn's algorithm, ties in creation order: producers run first. */
int tg_sched_order_items(tg_schedule *out, const reads_vec *reads)
{
	size_t n = out->items.n, i, j, head = 0, tail = 0;
	size_t *indeg = calloc(n + 1, sizeof *indeg);
	size_t *queue = calloc(n + 1, sizeof *queue);
	tg_sched_item *sorted = calloc(n + 1, sizeof *sorted);

	if (n == 0) {
		free(indeg), free(queue), free(sorted);
		return 0;
	}
	if (!indeg || !queue || !sorted) {
		free(indeg), free(queue), free(sorted);
		return tg_error_oom("schedule");
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			if (i != j && before(&out->items.v[j], &reads->v[j],
			                     &out->items.v[i], &reads->v[i]))
				indeg[i]++;
	for (i = 0; i < n; i++)
		if (!indeg[i])
			queue[tail++] = i;
	while (head < tail) {
		size_t k = queue[head++];

		sorted[head - 1] = out->items.v[k];
		for (j = 0; j < n; j++)
			if (j != k && before(&out->items.v[k], &reads->v[k],
			                     &out->items.v[j], &reads->v[j]) &&
			    --indeg[j] == 0)
				queue[tail++] = j;
	}
	free(indeg), free(queue);
	if (tail != n) {
		free(sorted);
		return tg_error(TG_EUNSUPPORTED, "schedule: the kernels depend "
		                "on each other in a cycle (a kernel reads a "
		                "tensor's value from before and after an assign "
		                "to it)");
	}
	memcpy(out->items.v, sorted, n * sizeof *sorted);
	free(sorted);
	return 0;
}

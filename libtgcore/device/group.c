/*
 * group.c - device groups: several devices named as one (tinygrad's
 * device tuple), the device of a tensor sharded or replicated across
 * them (lazy/multi.c).  A group has no memory, compiler or runtime of
 * its own: only multi.c looks inside one, and buffers, programs and
 * device queries refuse it with the reason.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "device/device.h"

static TG_VEC(struct tg_dev *) groups;

/* 0 when devs[0..n-1] can form a group, else an error saying why. */
static int check_members(tg_dev *const *devs, size_t n)
{
	if (!devs || n < 2 || n > TG_GROUP_MAX)
		return tg_error(TG_EINVAL, "dev_group: %zu devices (a group "
		                "has 2 to %d)", devs ? n : 0, TG_GROUP_MAX);
	for (size_t i = 0; i < n; i++) {
		if (!devs[i])
			return tg_error(TG_EINVAL, "dev_group: device %zu is "
			                "NULL", i);
		if (devs[i]->ngroup || tg_disk_is(devs[i]))
			return tg_error(TG_EINVAL, "dev_group: %s cannot be "
			                "a member (%s)", devs[i]->name,
			                devs[i]->ngroup ? "a group" :
			                "it runs no kernels");
		for (size_t j = 0; j < i; j++)
			if (devs[j] == devs[i])
				return tg_error(TG_EINVAL, "dev_group: %s is "
				                "listed twice", devs[i]->name);
	}
	return 0;
}

static struct tg_dev *group_new(tg_dev *const *devs, size_t n,
                                const char *name)
{
	struct tg_dev *g = calloc(1, sizeof *g);

	if (!g || !(g->name = strdup(name)) ||
	    !(g->group = malloc(n * sizeof *g->group)) ||
	    TG_VEC_PUSH(&groups, g)) {
		if (g) {
			free(g->name);
			free(g->group);
		}
		free(g);
		return tg_error_oom("dev_group"), NULL;
	}
	memcpy(g->group, devs, n * sizeof *devs);
	g->ngroup = n;
	g->index = -1;
	/* what every member can hold */
	g->caps.dtype_mask = devs[0]->caps.dtype_mask;
	for (size_t i = 1; i < n; i++)
		g->caps.dtype_mask &= devs[i]->caps.dtype_mask;
	return g;
}

tg_dev *tg_dev_group(tg_dev *const *devs, size_t n)
{
	struct tg_dev *g = NULL;
	tg_strbuf sb;
	char *name;

	if (check_members(devs, n))
		return NULL;
	tg_strbuf_init(&sb);
	for (size_t i = 0; i < n; i++)
		tg_strbuf_addf(&sb, "%s%s", i ? "," : "", devs[i]->name);
	if (!(name = tg_strbuf_finish(&sb)))
		return tg_error_oom("dev_group"), NULL;
	pthread_mutex_lock(&tg_lock);
	for (size_t i = 0; i < groups.n && !g; i++)
		if (!strcmp(groups.v[i]->name, name))
			g = groups.v[i];
	if (!g)
		g = group_new(devs, n, name);
	pthread_mutex_unlock(&tg_lock);
	free(name);
	return g;
}

size_t tg_dev_group_size(const tg_dev *dev)
{
	return dev ? dev->ngroup : 0;
}

tg_dev *tg_dev_group_member(const tg_dev *dev, size_t i)
{
	if (!dev || i >= dev->ngroup)
		return tg_error(TG_EINVAL, "dev_group_member: %s has no "
		                "member %zu", tg_dev_name(dev), i), NULL;
	return dev->group[i];
}

int tg_dev_refuse_group(const tg_dev *dev, const char *op)
{
	if (!dev || !dev->ngroup)
		return 0;
	return tg_error(TG_EINVAL, "%s: %s is a device group, which has no "
	                "memory or kernels of its own (use one of its "
	                "devices)", op, dev->name);
}

void tg_groups_free(void)
{
	for (size_t i = 0; i < groups.n; i++) {
		free(groups.v[i]->name);
		free(groups.v[i]->group);
		free(groups.v[i]);
	}
	TG_VEC_FREE(&groups);
}

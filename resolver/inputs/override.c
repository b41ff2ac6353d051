/* The per-run overrides written through the mount, per <backend>/<arch>. */
#include "override.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hindex.h"
#include "strbuf.h"

/* Each string with its NUL, so no two splits of one text hash alike. */
static uint64_t key_hash(const char *backend, const char *arch, const char *name)
{
	uint64_t h = hindex_hash(backend, strlen(backend) + 1, HINDEX_SEED);

	h = hindex_hash(arch, strlen(arch) + 1, h);
	return hindex_hash(name, strlen(name) + 1, h);
}

static struct override *find(const struct override_set *ov, const char *backend,
			     const char *arch, const char *name)
{
	struct hindex_probe p;
	size_t k;

	if (!ov || !ov->n)
		return NULL;
	for (k = hindex_first(&ov->index, key_hash(backend, arch, name), &p); k != HINDEX_NONE;
	     k = hindex_next(&ov->index, &p)) {
		struct override *o = &ov->v[k];

		if (!strcmp(o->name, name) && !strcmp(o->arch, arch) &&
		    !strcmp(o->backend, backend))
			return o;
	}
	return NULL;
}

const struct override *override_set_find(const struct override_set *ov,
					 const char *backend, const char *arch,
					 const char *name)
{
	return find(ov, backend, arch, name);
}

int override_set_put(struct override_set *ov, const char *backend, const char *arch,
		     const char *name, const char *value, size_t value_len)
{
	struct override *o = find(ov, backend, arch, name);
	char *copy = NULL;

	if (value && !(copy = xstrndup(value, value_len)))
		return -ENOMEM;
	if (o) {
		free(o->value);
		o->value = copy;
		o->value_len = value_len;
		o->pending = o->over_unset = false;
		return 0;
	}
	if (GROW(ov->v, ov->cap, ov->n, 16) < 0)
		goto nomem;
	o = &ov->v[ov->n];
	o->backend = xstrdup(backend);
	o->arch = xstrdup(arch);
	o->name = xstrdup(name);
	if (!o->backend || !o->arch || !o->name ||
	    hindex_insert(&ov->index, key_hash(backend, arch, name), ov->n) < 0) {
		free(o->backend);
		free(o->arch);
		free(o->name);
		goto nomem;
	}
	o->value = copy;
	o->value_len = value_len;
	o->private = false;
	o->pending = o->over_unset = o->unset_private = false;
	memset(&o->stamp, 0, sizeof(o->stamp));
	memset(&o->unset_stamp, 0, sizeof(o->unset_stamp));
	ov->n++;
	return 0;
nomem:
	free(copy);
	return -ENOMEM;
}

int override_set_mark_pending(struct override_set *ov, const char *backend,
			      const char *arch, const char *name, bool pending)
{
	struct override *o = find(ov, backend, arch, name);

	if (!o)
		return -ENOENT;
	o->pending = pending;
	o->over_unset = false;
	return 0;
}

int override_set_mark_pending_over_unset(struct override_set *ov, const char *backend,
					 const char *arch, const char *name, bool unset_private,
					 const struct override_stamp *unset_stamp)
{
	struct override *o = find(ov, backend, arch, name);

	if (!o)
		return -ENOENT;
	o->pending = o->over_unset = true;
	o->unset_private = unset_private;
	o->unset_stamp = *unset_stamp;
	return 0;
}

int override_set_mark_private(struct override_set *ov, const char *backend,
			      const char *arch, const char *name, bool private)
{
	struct override *o = find(ov, backend, arch, name);

	if (!o)
		return -ENOENT;
	o->private = private;
	return 0;
}

int override_set_drop(struct override_set *ov, const char *backend, const char *arch,
		      const char *name)
{
	struct override *o = find(ov, backend, arch, name), *last;
	size_t at;

	if (!o)
		return -ENOENT;
	at = (size_t)(o - ov->v);
	hindex_remove(&ov->index, key_hash(backend, arch, name), at);
	free(o->backend);
	free(o->arch);
	free(o->name);
	free(o->value);
	last = &ov->v[--ov->n];
	if (o != last)
		hindex_move(&ov->index, key_hash(last->backend, last->arch, last->name), ov->n, at);
	*o = *last;
	return 0;
}

void override_set_release(struct override_set *ov)
{
	size_t k;

	for (k = 0; k < ov->n; k++) {
		free(ov->v[k].backend);
		free(ov->v[k].arch);
		free(ov->v[k].name);
		free(ov->v[k].value);
	}
	free(ov->v);
	hindex_release(&ov->index);
	free(ov->sync_run);
	free(ov->sync_node);
	memset(ov, 0, sizeof(*ov));
}

int override_set_stamp(struct override_set *ov, const char *backend, const char *arch,
		       const char *name, const struct override_stamp *stamp)
{
	struct override *o = find(ov, backend, arch, name);

	if (!o)
		return -ENOENT;
	o->stamp = *stamp;
	return 0;
}

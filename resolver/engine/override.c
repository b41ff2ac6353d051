/* The per-run overrides written through the mount, per <backend>/<arch>. */
#include "resolve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct override *find(const struct override_set *ov, const char *backend,
			     const char *arch, const char *name)
{
	size_t k;

	for (k = 0; ov && k < ov->n; k++) {
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
		return 0;
	}
	if (ov->n == ov->cap) {
		size_t cap = ov->cap ? ov->cap * 2 : 16;
		struct override *v = realloc(ov->v, cap * sizeof(*v));

		if (!v)
			goto nomem;
		ov->v = v;
		ov->cap = cap;
	}
	o = &ov->v[ov->n];
	o->backend = xstrdup(backend);
	o->arch = xstrdup(arch);
	o->name = xstrdup(name);
	if (!o->backend || !o->arch || !o->name) {
		free(o->backend);
		free(o->arch);
		free(o->name);
		goto nomem;
	}
	o->value = copy;
	o->value_len = value_len;
	o->private = false;
	ov->n++;
	return 0;
nomem:
	free(copy);
	return -ENOMEM;
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
	struct override *o = find(ov, backend, arch, name);

	if (!o)
		return -ENOENT;
	free(o->backend);
	free(o->arch);
	free(o->name);
	free(o->value);
	*o = ov->v[--ov->n];
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
	memset(ov, 0, sizeof(*ov));
}

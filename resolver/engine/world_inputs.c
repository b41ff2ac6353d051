/* world_inputs: which files a world was loaded from (the specs
 * directory first), and their SHA-256, so a run record can say later
 * exactly which bytes a run got. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "world.h"
#include "spec_share.h"
#include "specs_digest.h"

/* The loader's digest of what it parsed; a file it could not read
 * whole (too large, unreadable) is hashed here, as it is on disk. */
static int add_input(struct world *w, const char *kind, const char *path,
		     const struct file_digest *loaded)
{
	struct world_input *in = &w->inputs[w->ninputs];

	if (!(in->path = strdup(path)))
		return -ENOMEM;
	in->kind = kind;
	if (loaded && loaded->has) {
		memcpy(in->sum, loaded->sum, SHA256_LEN);
		in->has_sum = true;
	} else {
		in->has_sum = sha256_file(path, in->sum) == 0;
	}
	w->ninputs++;
	return 0;
}

/* The specs as a daemon's reload already hashed them, as the world whose
 * spec set this one shares as it is did, or hashed now. */
static int add_specs(struct world *w, const char *dir, const struct world *donor)
{
	struct world_input *in = &w->inputs[w->ninputs];
	const struct world_input *d = donor && donor->ninputs ? &donor->inputs[0] : NULL;

	if (!(in->path = strdup(dir)))
		return -ENOMEM;
	in->kind = "specs";
	if (d && !strcmp(d->kind, "specs") && d->has_sum && !strcmp(d->path, dir)) {
		memcpy(in->sum, d->sum, SHA256_LEN);
		in->has_sum = true;
	} else if (w->spec_share && w->spec_share->has_digest) {
		memcpy(in->sum, w->spec_share->digest, SHA256_LEN);
		in->has_sum = true;
	} else {
		in->has_sum = specs_dir_digest(dir, in->sum) == 0;
	}
	w->ninputs++;
	return 0;
}

/* Whether an entry of l whose name is a secret came from path: its
 * source is "[TAG:]PATH:LINE" (inherit.c), so the path sits between the
 * tag and the last colon. */
static bool list_has_secret(const struct world *w, const struct env_list *l, const char *tag,
			    const char *path)
{
	size_t tl = tag ? strlen(tag) + 1 : 0, pl = strlen(path), k;

	for (k = 0; k < l->n; k++) {
		const char *src = l->v[k].source, *colon = src ? strrchr(src, ':') : NULL;

		if (!colon || (size_t)(colon - src) != tl + pl ||
		    (tag && (strncmp(src, tag, tl - 1) || src[tl - 1] != ':')) ||
		    memcmp(src + tl, path, pl))
			continue;
		if (world_name_secret((void *)w, l->v[k].name))
			return true;
	}
	return false;
}

/* A secret's value in a file's bytes makes the file's hash a dictionary
 * attack on it, for whoever knows the rest of the file: the record, which
 * everyone may read, gets no hash of such a file. A secret by its name in
 * any directory counts (world_name_secret), the safe side. */
static void mark_secrets(struct world *w, const struct envfs_inputs *in)
{
	size_t k, i = in->specs_dir ? 1 : 0;

	if (in->config) {
		for (k = 0; w->config && k < w->config->nenv; k++)
			if (world_name_secret(w, w->config->env[k].name))
				w->inputs[i].secret = true;
		i++;
	}
	for (k = 0; k < in->ninherit; k++, i++)
		w->inputs[i].secret = list_has_secret(w, &w->image, "image", in->inherit[k]);
	for (k = 0; k < in->nenv_files; k++, i++)
		w->inputs[i].secret = list_has_secret(w, &w->cli, NULL, in->env_files[k]);
}

int world_hash_inputs(struct world *w, const struct envfs_inputs *in,
		      const struct file_digest *inherit, const struct world *donor)
{
	size_t n = 1 + (in->config ? 1 : 0) + in->ninherit + in->nenv_files, k;
	int err = 0;

	if (!(w->inputs = calloc(n, sizeof(*w->inputs))))
		return -ENOMEM;
	if (in->specs_dir && (err = add_specs(w, in->specs_dir, donor)) < 0)
		return err;
	if (in->config &&
	    (err = add_input(w, "config", in->config, w->config ? &w->config->digest : NULL)) < 0)
		return err;
	for (k = 0; k < in->ninherit && !err; k++)
		err = add_input(w, "inherit", in->inherit[k], inherit ? &inherit[k] : NULL);
	for (k = 0; k < in->nenv_files && !err; k++)
		err = add_input(w, "env-file", in->env_files[k],
				in->env_file_digests ? &in->env_file_digests[k] : NULL);
	if (!err)
		mark_secrets(w, in);
	return err;
}

int world_inputs_to_snapshot(const struct world *w, struct snapshot *snap)
{
	struct snap_input *v;
	size_t k;

	if (!w->ninputs)
		return 0;
	if (!(v = arena_alloc(snap->arena, w->ninputs * sizeof(*v))))
		return -ENOMEM;
	for (k = 0; k < w->ninputs; k++) {
		const struct world_input *in = &w->inputs[k];
		char hex[2 * SHA256_LEN + 1];

		v[k].kind = in->kind;
		if (!(v[k].path = arena_strdup(snap->arena, in->path)))
			return -ENOMEM;
		v[k].sha256 = NULL;
		v[k].secret = in->secret;
		if (in->has_sum && !in->secret) {
			sha256_hex(in->sum, hex);
			if (!(v[k].sha256 = arena_strdup(snap->arena, hex)))
				return -ENOMEM;
		}
	}
	snap->inputs = v;
	snap->ninputs = w->ninputs;
	return 0;
}

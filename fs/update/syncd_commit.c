/* syncd_commit: a local change into etcd before --state; see syncd.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "resolve.h"
#include "snapshot.h"
#include "syncd_internal.h"

/* Marks backend/arch/name as kept on the node, for status. */
static int note_secret(struct syncd *sd, const char *backend, const char *arch,
		       const char *name)
{
	const char *rel;
	char *key = syncd_key_of(sd, backend, arch, name, &rel);
	struct syncd_key *k;
	int err = -ENOMEM;

	if (!key)
		return err;
	pthread_mutex_lock(&sd->lock);
	if (!(k = syncd_key_find(sd, rel)) && (err = syncd_key_note(sd, rel, 0, false)) == 0)
		k = syncd_key_find(sd, rel);
	if (k) {
		k->secret = true;
		err = 0;
	}
	pthread_mutex_unlock(&sd->lock);
	free(key);
	return err;
}

static unsigned elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

/* The mod_revision of each op's key now (base[i]; 0: absent), whether
 * etcd holds what the ops wanted (*match), and the revision of that
 * state (*rev). */
static int current(struct syncd *sd, const struct etcd_op *ops, size_t nops,
		   int64_t *base, bool *match, int64_t *rev)
{
	size_t i;
	int err = 0;

	*match = true;
	*rev = 0;
	for (i = 0; i < nops && err == 0; i++) {
		struct etcd_range r = { 0 };

		if ((err = sd->api->get(sd->cli, ops[i].key, &r)) == 0) {
			const struct etcd_kv *kv = r.n ? &r.kvs[0] : NULL;

			base[i] = kv ? kv->mod_revision : 0;
			if (ops[i].type == ETCD_OP_PUT ?
			    !kv || kv->value_len != ops[i].value_len ||
			    memcmp(kv->value, ops[i].value, kv->value_len) : kv != NULL)
				*match = false;
			if (base[i] > *rev)
				*rev = base[i];
			if (r.revision > *rev && ops[i].type == ETCD_OP_DELETE)
				*rev = r.revision;
		}
		sd->api->range_free(&r);
	}
	return err;
}

int syncd_commit(struct syncd *sd, const char *backend, const char *arch,
		 const char *const *names, size_t n, bool excl,
		 const struct snapshot *snap)
{
	struct envfs *fs = sd->fs;
	struct etcd_op ops[2];
	struct etcd_txn_result res = { 0 };
	char *keys[2] = { NULL, NULL }, *vals[2] = { NULL, NULL };
	const char *rel[2];
	int64_t base[2];
	struct timespec t0;
	size_t i, nops = 0;
	unsigned attempt;
	int err = 0;

	for (i = 0; i < n && i < 2; i++) {
		const struct snap_var *v = snapshot_find(snap, names[i], strlen(names[i]));
		const struct override *o;
		struct etcd_op *op = &ops[nops];

		pthread_mutex_lock(&fs->ov_lock);
		o = override_set_find(&fs->ov, backend, arch, names[i]);
		/* Secrets stay on the node: no value, no key, no hash. A
		 * name the specs declare secret counts whatever the new
		 * snapshot says of it: after an rm it holds no value there,
		 * and the unset it leaves must not take other nodes' own. */
		if ((v && v->secret) || (o && o->private) ||
		    world_secret_declared(fs->world, names[i])) {
			pthread_mutex_unlock(&fs->ov_lock);
			if ((err = note_secret(sd, backend, arch, names[i])) < 0)
				goto out;
			/* excl is about names[0], which is not in etcd. */
			if (i == 0)
				excl = false;
			continue;
		}
		memset(op, 0, sizeof(*op));
		op->type = o ? ETCD_OP_PUT : ETCD_OP_DELETE;
		err = o ? syncd_value_encode(o->value, o->value_len, &vals[nops],
					     &op->value_len) : 0;
		op->value = vals[nops];
		pthread_mutex_unlock(&fs->ov_lock);
		if (err < 0 ||
		    !(keys[nops] = syncd_key_of(sd, backend, arch, names[i], &rel[nops]))) {
			err = -ENOMEM;
			goto out;
		}
		op->key = keys[nops];
		nops++;
	}
	if (!nops)
		goto out;
	/* Each key compared with the mod_revision this node has of it (0:
	 * absent). A request that timed out on a stopped member and ran
	 * there later would otherwise overwrite a newer value; with the
	 * compare it finds the key moved on and changes nothing. */
	pthread_mutex_lock(&sd->lock);
	for (i = 0; i < nops; i++) {
		struct syncd_key *k = syncd_key_find(sd, rel[i]);

		base[i] = excl && i == 0 ? 0 : k && k->present ? k->rev : 0;
	}
	pthread_mutex_unlock(&sd->lock);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (attempt = 1;; attempt++) {
		struct etcd_cmp cmp[2];
		bool match;

		for (i = 0; i < nops; i++)
			cmp[i] = (struct etcd_cmp){ .key = keys[i], .target = ETCD_MOD,
						    .op = ETCD_EQ, .value = base[i] };
		err = sd->api->txn(sd->cli, cmp, nops, ops, nops, NULL, 0, &res);
		syncd_note_endpoint(sd, sd->cli);
		if (err < 0)
			goto failed;
		if (res.succeeded)
			break;
		/* Another node wrote first (this one has not seen it yet),
		 * or an earlier attempt of ours applied: what is there now? */
		if ((err = current(sd, ops, nops, base, &match, &res.revision)) < 0)
			goto failed;
		if (res.uncertain && match)
			break;
		if (excl && base[0]) {
			err = -EEXIST;
			goto out;
		}
		/* The last writer wins, as when writes race: again on what
		 * etcd has, while the bound leaves room. */
		if (attempt == 10 || elapsed_ms(&t0) > sd->so->timeout_ms / 2) {
			syncd_set_error(sd, "commit", "the keys kept changing under concurrent writes");
			err = -EIO;
			goto out;
		}
	}
	pthread_mutex_lock(&sd->lock);
	for (i = 0; i < nops && err == 0; i++)
		err = syncd_key_note(sd, rel[i], res.revision, ops[i].type == ETCD_OP_PUT);
	pthread_mutex_unlock(&sd->lock);
	goto out;
failed:
	syncd_set_error(sd, "commit", sd->api->errmsg(sd->cli));
	err = -EIO;
out:
	for (i = 0; i < 2; i++) {
		free(keys[i]);
		free(vals[i]);
	}
	return err;
}


void syncd_unshare(struct syncd *sd, const char *backend, const char *arch,
		   const char *name)
{
	const char *rel;
	char *key = syncd_key_of(sd, backend, arch, name, &rel);
	struct syncd_key *k;

	if (!key)
		return;
	pthread_mutex_lock(&sd->lock);
	if ((k = syncd_key_find(sd, rel)) && k->rev > 0)
		k->rev--;
	pthread_mutex_unlock(&sd->lock);
	free(key);
}

/* Committing overrides; see commit.h. Every commit runs under
 * publish_lock, so it sees the epoch it replaces and the world that epoch
 * was resolved from, and no reload can interleave. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commit.h"
#include "statefile.h"
#include "status.h"
#include "syncd.h"

/* One change to fs->ov and what it replaced, for the rollback. */
struct change {
	const char *name;
	bool remove;                 /* rm: drop the override, or record an unset */
	bool drop_only;              /* with remove: drop it, never record an
	                                unset (a key deleted in etcd) */
	bool privacy;                /* only the override's private flag: chmod */
	const char *value;           /* set: the new value */
	size_t len;
	signed char private;         /* the override's flag: 0, 1, or -1 to keep
	                                it (a set) */
	bool had;                    /* an override existed */
	bool had_private;
	char *old;                   /* its value (NULL: it was an unset); owned */
	size_t old_len;
};

/* Applies ch to ov, remembering what it replaced. ov_lock held. */
static int change_apply(struct override_set *ov, const char *backend,
			const char *arch, struct change *ch)
{
	const struct override *o = override_set_find(ov, backend, arch, ch->name);
	int err;

	if (o) {
		ch->had = true;
		ch->had_private = o->private;
		ch->old_len = o->value_len;
		if (o->value && !(ch->old = xstrndup(o->value, o->value_len)))
			return -ENOMEM;
	}
	if (ch->privacy)
		return override_set_mark_private(ov, backend, arch, ch->name, ch->private);
	if (!ch->remove) {
		if ((err = override_set_put(ov, backend, arch, ch->name, ch->value, ch->len)) < 0 ||
		    ch->private < 0)
			return err;
		return override_set_mark_private(ov, backend, arch, ch->name, ch->private);
	}
	/* rm of an override brings the resolved value back; rm of anything
	 * else unsets it for this run. */
	if (o)
		return override_set_drop(ov, backend, arch, ch->name);
	return ch->drop_only ? 0 : override_set_put(ov, backend, arch, ch->name, NULL, 0);
}

static void change_undo(struct override_set *ov, const char *backend,
			const char *arch, const struct change *ch)
{
	int err;

	if (ch->had) {
		err = override_set_put(ov, backend, arch, ch->name, ch->old, ch->old_len);
		if (err == 0)
			err = override_set_mark_private(ov, backend, arch, ch->name,
							ch->had_private);
	} else {
		err = override_set_drop(ov, backend, arch, ch->name);
	}
	if (err < 0 && err != -ENOENT)
		fprintf(stderr, "primus-envfs: cannot roll back the override of %s/%s/%s: %s\n",
			backend, arch, ch->name, strerror(-err));
}

/* status and diagnostics of next, which replaces prev after a commit. */
static int render_texts(struct envfs *fs, struct epoch *prev, struct epoch *next)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	if (prev->last_error && !(next->last_error = strdup(prev->last_error)))
		return -ENOMEM;
	if ((err = status_render(fs, next, next->last_error, &sb)) < 0 ||
	    (err = blob_from_sb(&sb, &next->status)) < 0)
		goto out;
	sb_reset(&sb);
	/* After a failed load the diagnostics say why; keep them. */
	if (prev->last_error) {
		next->diagnostics = blob_ref(prev->diagnostics);
		goto out;
	}
	if ((err = diagnostics_render(&fs->world->diags, next, &sb)) < 0 ||
	    (err = blob_from_sb(&sb, &next->diagnostics)) < 0)
		goto out;
out:
	sb_release(&sb);
	return err;
}

/* apply's flags. */
#define APPLY_EXCL 1u        /* --sync: ch[0] must not exist in etcd yet */
#define APPLY_REMOTE 2u      /* the change came from etcd: not shared back */

/* --sync: the names of ch, for syncd_commit. */
static int share(struct envfs *fs, const char *backend, const char *arch,
		 const struct change *ch, size_t nch, unsigned flags,
		 const struct snapshot *snap)
{
	const char *names[2];
	size_t i;

	if (!fs->sync || (flags & APPLY_REMOTE) || ch[0].privacy)
		return 0;
	for (i = 0; i < nch && i < 2; i++)
		names[i] = ch[i].name;
	return syncd_commit(fs->sync, backend, arch, names, i, flags & APPLY_EXCL, snap);
}

/* Applies changes to backend/arch and publishes; publish_lock held, prev
 * the current epoch. With --sync, a change written here is in etcd before
 * it is in --state or served (share). */
static int apply(struct envfs *fs, struct epoch *prev, const char *backend,
		 const char *arch, struct change *ch, size_t nch, unsigned flags,
		 struct inval_list *inval)
{
	const char *state = fs->state_path;
	struct snapshot *snap = NULL;
	struct epoch *next = NULL, *old, *pub;
	size_t applied = 0, i;
	int serr;
	bool save_failed = false, shared = false;
	int err = 0;

	pthread_mutex_lock(&fs->ov_lock);
	for (; applied < nch && err == 0; applied++)
		err = change_apply(&fs->ov, backend, arch, &ch[applied]);
	if (err == 0)
		err = resolve_dir(fs->world, &fs->ov, backend, arch, &snap);
	pthread_mutex_unlock(&fs->ov_lock);
	if (err == 0 && ch[0].privacy) {
		/* A chmod must change the mode it asks for: a variable that
		 * is secret for another reason stays 0600. */
		const struct snap_var *v = snapshot_find(snap, ch[0].name, strlen(ch[0].name));

		if (!v || v->secret != (ch[0].private > 0))
			err = -EPERM;
	}
	if (err < 0)
		goto undo;
	if ((err = epoch_with_dir(prev, snap, &next)) < 0 ||
	    (err = inval_diff(NULL, prev, next, inval)) < 0)
		goto undo;
	next->generation = prev->generation + (inval->changed ? 1 : 0);
	if (!inval->changed)
		next->changed = prev->changed;
	if ((err = render_texts(fs, prev, next)) < 0 ||
	    (err = inval_add_inode(inval, INO_STATUS)) < 0 ||
	    (err = inval_add_inode(inval, INO_DIAGNOSTICS)) < 0)
		goto undo;
	/* Shared first: etcd refusing (or not answering within the bound)
	 * leaves --state and the epoch as they were. */
	if ((err = share(fs, backend, arch, ch, nch, flags, snap)) < 0)
		goto undo;
	shared = fs->sync && !(flags & APPLY_REMOTE);
	/* Durable before anyone can see it: close() returns after this. */
	if (state) {
		pthread_mutex_lock(&fs->ov_lock);
		err = statefile_save(state, &fs->ov);
		pthread_mutex_unlock(&fs->ov_lock);
		if (err < 0) {
			fprintf(stderr, "primus-envfs: cannot save the state to %s: %s; "
				"the change is refused\n", state, strerror(-err));
			save_failed = true;
			goto undo;
		}
	}
	pub = next;
	old = epoch_publish(&fs->state, next);
	next = NULL;
	/* As in a reload: answers from the old epoch reach the kernel before
	 * the invalidations do, and only then does the tree say what the
	 * kernel holds (inval.h). Handlers never wait on a commit. */
	epoch_wait_idle(old, 100);
	if (inval_diff(fs, old, pub, inval) < 0)
		fprintf(stderr, "primus-envfs: out of memory listing the stale kernel caches; "
			"some may stay stale until the next change\n");
	epoch_unref(old);
	if (fs->sync)
		syncd_published(fs->sync);
	goto out;
undo:
	pthread_mutex_lock(&fs->ov_lock);
	for (i = applied; i-- > 0;)
		change_undo(&fs->ov, backend, arch, &ch[i]);
	/* A save that failed after its rename (the directory's fsync) has
	 * put the refused change on disk: write the previous state back, so
	 * the file holds what the mount serves (tests/mount/crash.sh). When
	 * the rename did not happen, this rewrites the same bytes, or fails
	 * again for the same reason and changes nothing. */
	if (save_failed && (serr = statefile_save(state, &fs->ov)) < 0)
		fprintf(stderr, "primus-envfs: %s: cannot restore the previous overrides after a "
			"failed save: %s; the file may hold a change the mount refused\n",
			state, strerror(-serr));
	pthread_mutex_unlock(&fs->ov_lock);
	/* etcd has it, the node does not: take it from the watch like any
	 * other node's change (close() still fails). */
	if (shared)
		for (i = 0; i < nch; i++)
			syncd_unshare(fs->sync, backend, arch, ch[i].name);
out:
	for (i = 0; i < nch; i++)
		free(ch[i].old);
	snapshot_unref(snap);
	epoch_unref(next);
	return err;
}

static bool visible(const struct snap_var *v)
{
	return epoch_var_visible(v);
}

/* The current epoch (a reference) and name's visible variable in
 * backend/arch (NULL when not visible); publish_lock held. */
static int current(struct envfs *fs, const char *backend, const char *arch,
		   const char *name, struct epoch **e, const struct snap_var **v)
{
	struct epoch_dir *d;

	*e = epoch_current(&fs->state);
	if (!(d = epoch_find_dir(*e, backend, arch)))
		return -ENOENT;
	*v = snapshot_find(d->snap, name, strlen(name));
	if (!visible(*v))
		*v = NULL;
	return 0;
}

int commit_set(struct envfs *fs, const char *backend, const char *arch,
	       const char *name, const char *value, size_t len,
	       struct inval_list *inval)
{
	struct change ch = { .name = name, .value = value, .len = len, .private = -1 };
	const struct snap_var *v;
	struct epoch *e = NULL;
	int err;

	pthread_mutex_lock(&fs->publish_lock);
	if ((err = current(fs, backend, arch, name, &e, &v)) == 0)
		err = apply(fs, e, backend, arch, &ch, 1, 0, inval);
	pthread_mutex_unlock(&fs->publish_lock);
	epoch_unref(e);
	return err;
}

int commit_create(struct envfs *fs, const char *backend, const char *arch,
		  const char *name, bool excl, bool private, bool *created,
		  struct inval_list *inval)
{
	struct change ch = { .name = name, .value = "", .len = 0, .private = private };
	const struct snap_var *v;
	struct epoch *e = NULL;
	int err;

	*created = false;
	pthread_mutex_lock(&fs->publish_lock);
	if ((err = current(fs, backend, arch, name, &e, &v)) < 0)
		goto out;
	if (v) {
		err = excl ? -EEXIST : 0;
		goto out;
	}
	if ((err = apply(fs, e, backend, arch, &ch, 1, excl ? APPLY_EXCL : 0, inval)) == 0)
		*created = true;
out:
	pthread_mutex_unlock(&fs->publish_lock);
	epoch_unref(e);
	return err;
}

int commit_remove(struct envfs *fs, const char *backend, const char *arch,
		  const char *name, struct inval_list *inval)
{
	struct change ch = { .name = name, .remove = true };
	const struct snap_var *v;
	struct epoch *e = NULL;
	int err;

	pthread_mutex_lock(&fs->publish_lock);
	if ((err = current(fs, backend, arch, name, &e, &v)) == 0)
		err = v ? apply(fs, e, backend, arch, &ch, 1, 0, inval) : -ENOENT;
	pthread_mutex_unlock(&fs->publish_lock);
	epoch_unref(e);
	return err;
}

int commit_move(struct envfs *fs, const char *backend, const char *arch,
		const char *from, const char *to, bool noreplace,
		struct inval_list *inval)
{
	struct change ch[2] = { { .name = to }, { .name = from, .remove = true } };
	const struct snap_var *v, *tv;
	struct epoch *e = NULL, *e2 = NULL;
	int err;

	pthread_mutex_lock(&fs->publish_lock);
	if ((err = current(fs, backend, arch, from, &e, &v)) < 0)
		goto out;
	if (!v) {
		err = -ENOENT;
		goto out;
	}
	if (!strcmp(from, to))
		goto out;
	if ((err = current(fs, backend, arch, to, &e2, &tv)) < 0)
		goto out;
	if (tv && noreplace) {
		err = -EEXIST;
		goto out;
	}
	/* v borrows from e's snapshot, which e keeps alive throughout. The
	 * value keeps its secrecy under its new name (issue 14.14). */
	ch[0].value = v->value;
	ch[0].len = v->value_len;
	ch[0].private = v->secret;
	err = apply(fs, e, backend, arch, ch, 2, noreplace ? APPLY_EXCL : 0, inval);
out:
	pthread_mutex_unlock(&fs->publish_lock);
	epoch_unref(e);
	epoch_unref(e2);
	return err;
}

int commit_truncate(struct envfs *fs, const char *backend, const char *arch,
		    const char *name, off_t size, struct inval_list *inval)
{
	struct change ch = { .name = name, .private = -1 };
	const struct snap_var *v;
	struct epoch *e = NULL;
	size_t len;
	int err;

	pthread_mutex_lock(&fs->publish_lock);
	if ((err = current(fs, backend, arch, name, &e, &v)) < 0)
		goto out;
	if (!v) {
		err = -ENOENT;
		goto out;
	}
	/* The file is value + "\n"; growing it would add NUL bytes. */
	if (size < 0 || (size_t)size > v->value_len + 1) {
		err = -EINVAL;
		goto out;
	}
	if ((size_t)size == v->value_len + 1)
		goto out;
	len = (size_t)size;
	if (len && v->value[len - 1] == '\n')
		len--;
	ch.value = v->value;
	ch.len = len;
	err = apply(fs, e, backend, arch, &ch, 1, 0, inval);
out:
	pthread_mutex_unlock(&fs->publish_lock);
	epoch_unref(e);
	return err;
}

int commit_privacy(struct envfs *fs, const char *backend, const char *arch,
		   const char *name, bool private, struct inval_list *inval)
{
	struct change ch = { .name = name, .privacy = true, .private = private };
	const struct override *o;
	const struct snap_var *v;
	struct epoch *e = NULL;
	bool has;
	int err;

	pthread_mutex_lock(&fs->publish_lock);
	if ((err = current(fs, backend, arch, name, &e, &v)) < 0)
		goto out;
	pthread_mutex_lock(&fs->ov_lock);
	o = override_set_find(&fs->ov, backend, arch, name);
	has = o && o->value;
	pthread_mutex_unlock(&fs->ov_lock);
	/* Only an override has a flag to carry; one already as asked
	 * changes nothing. */
	if (!v || !has)
		err = v ? -EPERM : -ENOENT;
	else if (v->secret != private)
		err = apply(fs, e, backend, arch, &ch, 1, 0, inval);
out:
	pthread_mutex_unlock(&fs->publish_lock);
	epoch_unref(e);
	return err;
}

int commit_remote(struct envfs *fs, const char *backend, const char *arch,
		  const char *name, const char *value, size_t len, bool drop,
		  struct inval_list *inval)
{
	struct change ch = { .name = name, .value = value, .len = len, .private = -1,
			     .remove = drop, .drop_only = drop };
	struct epoch *e = epoch_current(&fs->state);
	int err;

	if (epoch_find_dir(e, backend, arch)) {
		err = apply(fs, e, backend, arch, &ch, 1, APPLY_REMOTE, inval);
		goto out;
	}
	/* A directory this node does not serve (another arch): kept in the
	 * overrides, so a reload that brings the directory shows it. */
	pthread_mutex_lock(&fs->ov_lock);
	err = change_apply(&fs->ov, backend, arch, &ch);
	if (err == 0 && fs->state_path)
		err = statefile_save(fs->state_path, &fs->ov);
	if (err < 0)
		change_undo(&fs->ov, backend, arch, &ch);
	pthread_mutex_unlock(&fs->ov_lock);
	free(ch.old);
out:
	epoch_unref(e);
	return err;
}

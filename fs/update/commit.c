/* Committing overrides; see commit.h. Every commit runs under
 * publish_lock, so it sees the epoch it replaces and the world that epoch
 * was resolved from, and no reload can interleave. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "commit.h"
#include "history_note.h"
#include "publish.h"
#include "statefile.h"
#include "status.h"

/* One change to fs->ov and what it replaced, for the rollback. */
struct change {
	const char *name;
	bool remove;                 /* rm: drop the override, or record an unset */
	bool drop_only;              /* with remove: drop it, never record an
	                                unset (a key deleted in etcd) */
	bool privacy;                /* only the override's private flag: chmod */
	const char *value;           /* set: the new value */
	size_t len;
	const struct hist_writer *who; /* who asked (NULL: not known) */
	const struct override_stamp *stamp; /* the override's, instead of
	                                       now by who (an unset put back) */
	signed char private;         /* the override's flag: 0, 1, or -1 to keep
	                                it (a set) */
	bool pending;                /* --sync: a create, not shared yet */
	bool had;                    /* an override existed */
	bool had_private, had_pending;
	struct override_stamp had_stamp;
	bool had_over_unset, had_unset_private;
	struct override_stamp had_unset_stamp;
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
		ch->had_pending = o->pending;
		ch->had_stamp = o->stamp;
		ch->had_over_unset = o->over_unset;
		ch->had_unset_private = o->unset_private;
		ch->had_unset_stamp = o->unset_stamp;
		ch->old_len = o->value_len;
		if (o->value && !(ch->old = xstrndup(o->value, o->value_len)))
			return -ENOMEM;
	}
	if (ch->privacy)
		return override_set_mark_private(ov, backend, arch, ch->name, ch->private);
	if (!ch->remove) {
		struct override_stamp st;

		if ((err = override_set_put(ov, backend, arch, ch->name, ch->value, ch->len)) < 0)
			return err;
		if (ch->stamp)
			st = *ch->stamp;
		else
			history_stamp(ch->who, &st);
		override_set_stamp(ov, backend, arch, ch->name, &st);
		/* A create over the run's unset (the only override a create
		 * finds: any other is a file already) keeps it for its undo. */
		if (ch->pending && ch->had && !ch->old)
			override_set_mark_pending_over_unset(ov, backend, arch, ch->name,
							     ch->had_private, &ch->had_stamp);
		else if (ch->pending)
			override_set_mark_pending(ov, backend, arch, ch->name, true);
		if (ch->private < 0)
			return 0;
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
		if (err == 0)
			err = override_set_stamp(ov, backend, arch, ch->name, &ch->had_stamp);
		if (err == 0 && ch->had_over_unset)
			err = override_set_mark_pending_over_unset(ov, backend, arch, ch->name,
								   ch->had_unset_private,
								   &ch->had_unset_stamp);
		else if (err == 0)
			err = override_set_mark_pending(ov, backend, arch, ch->name,
							ch->had_pending);
	} else {
		err = override_set_drop(ov, backend, arch, ch->name);
	}
	if (err < 0 && err != -ENOENT)
		log_err("cannot roll back the override of %s/%s/%s: %s",
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
#define APPLY_LOCAL 4u       /* --sync: a create, neither shared nor saved:
                                its first close carries it (a value of its
                                own, never the empty one in passing) */

/* The --state document of fs->ov into doc (ov_lock held), when the
 * change must fit it: --state is saved, or (--sync) every node of the
 * run must be able to hold what this node shares. A local change that
 * leaves it over STATEFILE_WRITE_MAX and larger than it was is refused
 * (-EFBIG) before anything is shared; a change from another node never
 * is (it is in the run already), up to what a state file loads. */
static int render_state(struct envfs *fs, unsigned flags, struct strbuf *doc)
{
	bool remote = flags & APPLY_REMOTE;
	int err;

	if (!fs->state_path && (remote || !fs->sync))
		return 0;
	if ((err = statefile_render(&fs->ov, doc)) < 0)
		return err;
	if (doc->len > STATEFILE_LOAD_MAX ||
	    (!remote && doc->len > STATEFILE_WRITE_MAX && doc->len > fs->state_doc_len))
		return -EFBIG;
	return 0;
}

/* What the history says a commit of ch did. */
static enum hist_cause cause_of(const struct change *ch, size_t nch, unsigned flags)
{
	if (flags & APPLY_REMOTE)
		return HIST_SYNC;
	if (nch == 2 && !ch[0].remove && ch[1].remove)
		return HIST_MV;
	return ch[0].remove ? HIST_RM : HIST_WRITE;
}

/* --sync: the names of ch, for its commit (syncd_commit). */
static int share(struct envfs *fs, const char *backend, const char *arch,
		 const struct change *ch, size_t nch, unsigned flags,
		 const struct snapshot *snap)
{
	const char *names[2];
	unsigned mine = 0;
	size_t i;

	if (!fs->sync || (flags & (APPLY_REMOTE | APPLY_LOCAL)) || ch[0].privacy)
		return 0;
	for (i = 0; i < nch && i < 2; i++) {
		names[i] = ch[i].name;
		/* The rm (or mv away) of a private override is this node's
		 * alone: the run's value it hid stays the run's. */
		if (ch[i].remove && ch[i].had && ch[i].had_private)
			mine |= 1u << i;
	}
	return fs->sync_hooks->commit(fs->sync, ch[0].who, backend, arch, names, i, mine,
				      flags & APPLY_EXCL, hist_cause_name(cause_of(ch, nch, flags)),
				      snap);
}

/* Applies changes to backend/arch and publishes; publish_lock held, prev
 * the current epoch. With --sync, a change written here is in etcd before
 * it is in --state or served (share). */
static int apply(struct envfs *fs, struct epoch *prev, const char *backend,
		 const char *arch, struct change *ch, size_t nch, unsigned flags,
		 struct inval_list *inval)
{
	const char *state = fs->state_path;
	struct strbuf doc = STRBUF_INIT;
	struct snapshot *snap = NULL;
	struct epoch *next = NULL;
	size_t applied = 0, i;
	int serr;
	bool save_failed = false, shared = false;
	int err = 0;

	pthread_mutex_lock(&fs->ov_lock);
	for (; applied < nch && err == 0; applied++)
		err = change_apply(&fs->ov, backend, arch, &ch[applied]);
	if (err == 0)
		err = resolve_dir(fs->world, &fs->ov, backend, arch, &snap);
	if (err == 0)
		err = render_state(fs, flags, &doc);
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
	    (err = envfs_stage(prev, next, inval)) < 0)
		goto undo;
	if ((err = render_texts(fs, prev, next)) < 0 ||
	    (err = inval_add_inode(inval, INO_STATUS)) < 0 ||
	    (err = inval_add_inode(inval, INO_DIAGNOSTICS)) < 0)
		goto undo;
	/* Shared first: etcd refusing (or not answering within the bound)
	 * leaves --state and the epoch as they were. */
	if ((err = share(fs, backend, arch, ch, nch, flags, snap)) < 0)
		goto undo;
	shared = fs->sync && !(flags & (APPLY_REMOTE | APPLY_LOCAL));
	/* Durable before anyone can see it: close() returns after this. */
	if (state && !(flags & APPLY_LOCAL)) {
		err = statefile_write(state, &doc);
		if (err < 0) {
			log_err("cannot save the state to %s: %s; "
				"the change is refused", state, strerror(-err));
			save_failed = true;
			goto undo;
		}
	}
	if (doc.len && !(flags & APPLY_LOCAL))
		fs->state_doc_len = doc.len;
	envfs_publish(fs, &(struct envfs_next){ .prev = prev, .next = next, .dirs = true,
						.cause = cause_of(ch, nch, flags),
						.who = ch[0].who }, inval);
	next = NULL;
	/* A private override gone: the run's value it hid, as the watch
	 * passed it over. */
	if (shared)
		fs->sync_hooks->readopt(fs->sync, inval);
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
		log_err("%s: cannot restore the previous overrides after a "
			"failed save: %s; the file may hold a change the mount refused",
			state, strerror(-serr));
	pthread_mutex_unlock(&fs->ov_lock);
	/* etcd has it, the node does not: take it from the watch like any
	 * other node's change (close() still fails). */
	if (shared)
		for (i = 0; i < nch; i++)
			fs->sync_hooks->unshare(fs->sync, backend, arch, ch[i].name);
out:
	sb_release(&doc);
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

/* After apply failed with -EAGAIN (another node changed a key first):
 * true to compute the change again, from the epoch the node has once its
 * watch applied that change (catch_up: in revision order, whole, as every
 * node applies it; publish_lock is released meanwhile), so that what it
 * moves or keeps is what the compare will hold. Out of tries, or the
 * watch not there in time: -EIO. After -EEXIST (O_EXCL lost to another
 * node) the node catches up too, so the name the caller was refused is
 * there when it looks. publish_lock held. */
static bool again(struct envfs *fs, int *err, unsigned *attempt, const struct timespec *t0)
{
	if (*err == -EEXIST && fs->sync)
		fs->sync_hooks->catch_up(fs->sync, t0);
	if (*err != -EAGAIN)
		return false;
	if (fs->sync && fs->sync_hooks->may_retry(fs->sync, ++*attempt, t0) &&
	    fs->sync_hooks->catch_up(fs->sync, t0) == 0)
		return true;
	*err = -EIO;
	return false;
}

/* What a commit through the mount asks, for its tries. */
struct request {
	const char *backend, *arch, *name;
	const char *to;              /* mv */
	const char *value;           /* set */
	size_t len;
	off_t size;                  /* truncate */
	bool excl, private;          /* create; excl: mv's noreplace too */
	bool *created;
	const struct hist_writer *who;
};

/* One try of a commit on the current epoch; *e gets the epoch it used
 * (a reference drive() drops). */
typedef int (*try_fn)(struct envfs *fs, const struct request *rq, struct epoch **e,
		      struct inval_list *inval);

/* Runs fn under publish_lock until it succeeds, fails, or gives up
 * recomputing (again()). */
static int drive(struct envfs *fs, try_fn fn, const struct request *rq,
		 struct inval_list *inval)
{
	struct epoch *e = NULL;
	struct timespec t0;
	unsigned attempt = 0;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&fs->publish_lock);
	do {
		epoch_unref(e);
		e = NULL;
		err = fn(fs, rq, &e, inval);
	} while (again(fs, &err, &attempt, &t0));
	pthread_mutex_unlock(&fs->publish_lock);
	epoch_unref(e);
	return err;
}

static int set_once(struct envfs *fs, const struct request *rq, struct epoch **e,
		    struct inval_list *inval)
{
	struct change ch = { .name = rq->name, .value = rq->value, .len = rq->len, .private = -1,
			     .who = rq->who };
	const struct snap_var *v;
	int err;

	if ((err = current(fs, rq->backend, rq->arch, rq->name, e, &v)) < 0)
		return err;
	return apply(fs, *e, rq->backend, rq->arch, &ch, 1, rq->excl ? APPLY_EXCL : 0, inval);
}

int commit_set(struct envfs *fs, const struct hist_writer *who, const char *backend,
	       const char *arch, const char *name, const char *value, size_t len, bool excl,
	       struct inval_list *inval)
{
	struct request rq = { .backend = backend, .arch = arch, .name = name, .value = value,
			      .len = len, .excl = excl, .who = who };

	return drive(fs, set_once, &rq, inval);
}

static int create_once(struct envfs *fs, const struct request *rq, struct epoch **e,
		       struct inval_list *inval)
{
	struct change ch = { .name = rq->name, .value = "", .len = 0, .private = rq->private,
			     .pending = fs->sync != NULL, .who = rq->who };
	const struct snap_var *v;
	int err;

	if ((err = current(fs, rq->backend, rq->arch, rq->name, e, &v)) < 0)
		return err;
	if (v)
		return rq->excl ? -EEXIST : 0;
	/* With --sync the other nodes learn of it at its first close, with
	 * its value (commit_set's excl compares then). */
	if ((err = apply(fs, *e, rq->backend, rq->arch, &ch, 1,
			 fs->sync ? APPLY_LOCAL : 0, inval)) == 0)
		*rq->created = true;
	return err;
}

int commit_uncreate(struct envfs *fs, const struct hist_writer *who, const char *backend,
		    const char *arch, const char *name, struct inval_list *inval)
{
	struct change ch = { .name = name, .remove = true, .drop_only = true, .who = who };
	struct override_stamp unset_stamp;
	const struct override *o;
	struct epoch *e = NULL;
	bool pending, over_unset = false;
	int err = 0;

	if (!fs->sync)
		return 0;
	pthread_mutex_lock(&fs->publish_lock);
	pthread_mutex_lock(&fs->ov_lock);
	o = override_set_find(&fs->ov, backend, arch, name);
	pending = o && o->pending;
	if (pending && o->over_unset) {
		/* The run's unset comes back, as it was. */
		over_unset = true;
		ch.remove = ch.drop_only = false;
		ch.value = NULL;
		ch.private = o->unset_private;
		unset_stamp = o->unset_stamp;
		ch.stamp = &unset_stamp;
	}
	pthread_mutex_unlock(&fs->ov_lock);
	/* Another node's value (an O_EXCL close that lost) stays. Over an
	 * unset the key is there by definition: the unset comes back, and a
	 * value another node put over it meanwhile comes with the watch. */
	if (pending && (over_unset || !fs->sync_hooks->key_present(fs->sync, backend, arch, name))) {
		e = epoch_current(&fs->state);
		if (epoch_find_dir(e, backend, arch))
			err = apply(fs, e, backend, arch, &ch, 1, APPLY_LOCAL, inval);
	}
	pthread_mutex_unlock(&fs->publish_lock);
	epoch_unref(e);
	return err;
}

int commit_create(struct envfs *fs, const struct hist_writer *who, const char *backend,
		  const char *arch, const char *name, bool excl, bool private, bool *created,
		  struct inval_list *inval)
{
	struct request rq = { .backend = backend, .arch = arch, .name = name, .excl = excl,
			      .private = private, .created = created, .who = who };

	*created = false;
	return drive(fs, create_once, &rq, inval);
}

static int remove_once(struct envfs *fs, const struct request *rq, struct epoch **e,
		       struct inval_list *inval)
{
	struct change ch = { .name = rq->name, .remove = true, .who = rq->who };
	const struct snap_var *v;
	int err;

	if ((err = current(fs, rq->backend, rq->arch, rq->name, e, &v)) < 0)
		return err;
	return v ? apply(fs, *e, rq->backend, rq->arch, &ch, 1, 0, inval) : -ENOENT;
}

int commit_remove(struct envfs *fs, const struct hist_writer *who, const char *backend,
		  const char *arch, const char *name, struct inval_list *inval)
{
	struct request rq = { .backend = backend, .arch = arch, .name = name, .who = who };

	return drive(fs, remove_once, &rq, inval);
}

static int move_once(struct envfs *fs, const struct request *rq, struct epoch **e,
		     struct inval_list *inval)
{
	struct change ch[2] = { { .name = rq->to, .who = rq->who },
				{ .name = rq->name, .remove = true, .who = rq->who } };
	const struct snap_var *v, *tv;
	struct epoch *e2 = NULL;
	int err;

	if ((err = current(fs, rq->backend, rq->arch, rq->name, e, &v)) < 0)
		goto out;
	if (!v) {
		err = -ENOENT;
		goto out;
	}
	if (!strcmp(rq->name, rq->to))
		goto out;
	if ((err = current(fs, rq->backend, rq->arch, rq->to, &e2, &tv)) < 0)
		goto out;
	if (tv && rq->excl) {
		err = -EEXIST;
		goto out;
	}
	/* v borrows from e's snapshot, which e keeps alive throughout. The
	 * value keeps its secrecy under its new name. It is
	 * the value of this try's epoch: after a failed compare, what the
	 * node has just applied from etcd. */
	ch[0].value = v->value;
	ch[0].len = v->value_len;
	ch[0].private = v->secret;
	err = apply(fs, *e, rq->backend, rq->arch, ch, 2, rq->excl ? APPLY_EXCL : 0, inval);
out:
	epoch_unref(e2);
	return err;
}

int commit_move(struct envfs *fs, const struct hist_writer *who, const char *backend,
		const char *arch, const char *from, const char *to, bool noreplace,
		struct inval_list *inval)
{
	struct request rq = { .backend = backend, .arch = arch, .name = from, .to = to,
			      .excl = noreplace, .who = who };

	return drive(fs, move_once, &rq, inval);
}

static int truncate_once(struct envfs *fs, const struct request *rq, struct epoch **e,
			 struct inval_list *inval)
{
	struct change ch = { .name = rq->name, .private = -1, .who = rq->who };
	const struct snap_var *v;
	size_t len;
	int err;

	if ((err = current(fs, rq->backend, rq->arch, rq->name, e, &v)) < 0)
		return err;
	if (!v)
		return -ENOENT;
	/* The file is value + "\n"; growing it would add NUL bytes. */
	if (rq->size < 0 || (size_t)rq->size > v->value_len + 1)
		return -EINVAL;
	if ((size_t)rq->size == v->value_len + 1)
		return 0;
	len = (size_t)rq->size;
	if (len && v->value[len - 1] == '\n')
		len--;
	ch.value = v->value;
	ch.len = len;
	return apply(fs, *e, rq->backend, rq->arch, &ch, 1, 0, inval);
}

int commit_truncate(struct envfs *fs, const struct hist_writer *who, const char *backend,
		    const char *arch, const char *name, off_t size, struct inval_list *inval)
{
	struct request rq = { .backend = backend, .arch = arch, .name = name, .size = size,
			      .who = who };

	return drive(fs, truncate_once, &rq, inval);
}

int commit_privacy(struct envfs *fs, const struct hist_writer *who, const char *backend,
		   const char *arch, const char *name, bool private, struct inval_list *inval)
{
	struct change ch = { .name = name, .privacy = true, .private = private, .who = who };
	const struct override *o;
	const struct snap_var *v;
	struct epoch *e = NULL;
	struct timespec t0;
	unsigned attempt = 0;
	bool has;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&fs->publish_lock);
	do {
		epoch_unref(e);
		e = NULL;
		if ((err = current(fs, backend, arch, name, &e, &v)) < 0)
			break;
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
	} while (again(fs, &err, &attempt, &t0));
	pthread_mutex_unlock(&fs->publish_lock);
	epoch_unref(e);
	return err;
}

int commit_remote(struct envfs *fs, const struct hist_writer *who, const char *backend,
		  const char *arch, const struct remote_change *rc, size_t n,
		  struct inval_list *inval)
{
	struct change *ch = calloc(n ? n : 1, sizeof(*ch));
	struct epoch *e = epoch_current(&fs->state);
	size_t i, done = 0;
	int err = 0;

	if (!ch) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		ch[i] = (struct change){ .name = rc[i].name, .value = rc[i].value,
					 .len = rc[i].len, .private = -1,
					 .remove = rc[i].drop, .drop_only = rc[i].drop,
					 .who = who };
	if (epoch_find_dir(e, backend, arch)) {
		/* apply frees what the changes replaced. */
		err = apply(fs, e, backend, arch, ch, n, APPLY_REMOTE, inval);
		n = 0;
		goto out;
	}
	/* A directory this node does not serve (another arch): kept in the
	 * overrides, so a reload that brings the directory shows it. */
	pthread_mutex_lock(&fs->ov_lock);
	for (; done < n && err == 0; done++)
		err = change_apply(&fs->ov, backend, arch, &ch[done]);
	if (err == 0 && fs->state_path)
		err = statefile_save(fs->state_path, &fs->ov);
	if (err < 0)
		for (i = done; i-- > 0;)
			change_undo(&fs->ov, backend, arch, &ch[i]);
	pthread_mutex_unlock(&fs->ov_lock);
out:
	for (i = 0; i < n; i++)
		free(ch[i].old);
	free(ch);
	epoch_unref(e);
	return err;
}

/* The one publish of a new epoch; see publish.h. */
#include "log.h"
#include "publish.h"

int envfs_stage(struct epoch *prev, struct epoch *next, struct inval_list *inval)
{
	int err;

	if ((err = inval_diff(NULL, prev, next, inval)) < 0)
		return err;
	next->generation = prev->generation + (inval->changed ? 1 : 0);
	if (!inval->changed)
		next->changed = prev->changed;
	return 0;
}

void envfs_publish(struct envfs *fs, struct envfs_next *p, struct inval_list *inval)
{
	struct world *old_world = NULL;
	struct epoch *pub = p->next, *old;

	if (p->world) {
		old_world = fs->world;
		fs->world = p->world;
		p->world = NULL;
	}
	if (p->dirs)
		history_note(fs, p->prev, pub, p->cause, NULL, p->who);
	old = epoch_publish(&fs->state, pub);
	p->next = NULL;
	/* A handler still answering from the old epoch must reach the kernel
	 * before the invalidation does, or its stale answer would be cached
	 * for the whole timeout. Handlers never wait on a publisher, so this
	 * is short. Only then does the tree say what the kernel holds
	 * (inval.h). pub stays alive: the slot holds it, and only a holder
	 * of publish_lock replaces it. */
	epoch_wait_idle(old, 100);
	if (p->dirs && inval_diff(fs, old, pub, inval) < 0)
		log_warn("out of memory listing the stale kernel caches; "
			"some may stay stale until the next change");
	epoch_unref(old);
	/* Freed only now: snapshots may borrow strings from their world. */
	world_free(old_world);
	/* A failed load too: the record says the node serves the last good
	 * resolution, and why. */
	if (fs->sync)
		fs->sync_hooks->published(fs->sync);
}

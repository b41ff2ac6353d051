/* The daemon's lifecycle; see envfs.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "envfs.h"
#include "history_store.h"
#include "log.h"
#include "statefile.h"

/* The overrides of --state, before the first load resolves with them. A
 * file that does not load stops the mount: dropping it would silently
 * lose what was written. */
static int load_state(struct envfs *fs)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf sb = STRBUF_INIT;
	const char *path = fs->state_path;
	size_t i;
	int err = 0;

	if (!path || (err = statefile_load(path, &fs->ov, &d)) == 0)
		goto out;
	for (i = 0; i < d.n; i++) {
		sb_reset(&sb);
		if (diag_format(&d.v[i], &sb) == 0)
			log_err("%s", sb_str(&sb));
	}
	if (!d.n)
		log_err("%s: %s", path, strerror(-err));
	log_err("the state file %s did not load; fix or move it (it is never discarded)", path);
out:
	sb_release(&sb);
	diag_list_release(&d);
	return err;
}

static int sync_part(void *arg, struct strbuf *out)
{
	struct envfs *fs = arg;

	return fs->sync_hooks->status(fs->sync, out);
}

static int counters_part(void *arg, struct strbuf *out)
{
	(void)arg;
	return counters_render(out);
}

int envfs_new(const struct mount_opts *opts, const char *state_path,
	      const struct envfs_reload_hooks *reload, const struct envfs_sync_hooks *sync,
	      struct envfs **out)
{
	struct envfs *fs = calloc(1, sizeof(*fs));
	bool usage = false;
	int err;

	*out = NULL;
	if (!fs) {
		log_err("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	pthread_mutex_init(&fs->ov_lock, NULL);
	pthread_mutex_init(&fs->publish_lock, NULL);
	pthread_mutex_init(&fs->wopen_lock, NULL);
	pthread_mutex_init(&fs->live_lock, NULL);
	pthread_mutex_init(&fs->hist_lock, NULL);
	handles_init(&fs->handles);
	fs->reload_hooks = reload;
	fs->sync_hooks = sync;
	fs->opts = opts;
	fs->state_path = state_path;
	fs->uid = getuid();
	fs->gid = getgid();
	if (opts->history && (err = history_init(&fs->hist, opts->history)) < 0) {
		log_err("out of memory");
		goto out;
	}
	if ((err = tree_new(&fs->tree)) < 0) {
		log_err("%s", strerror(ENOMEM));
		goto out;
	}
	/* The inputs are watched before the first load: no edit is missed. */
	if ((err = load_state(fs)) < 0 || (err = history_store_load(fs)) < 0 ||
	    (err = reload->make(fs, &fs->reloader)) < 0)
		goto out;
	/* A --sync node's state mounted without --sync: the node left the
	 * run, so the file no longer says it is one's (set --state would
	 * refuse it for good). Saved now, as a mount with --sync marks it. */
	if (!opts->so.endpoints && fs->ov.sync_run && fs->state_path) {
		free(fs->ov.sync_run);
		free(fs->ov.sync_node);
		fs->ov.sync_run = fs->ov.sync_node = NULL;
		if ((err = statefile_save(fs->state_path, &fs->ov)) < 0) {
			log_err("cannot save the state to %s: %s", fs->state_path, strerror(-err));
			goto out;
		}
	}
	if (opts->so.endpoints && (err = sync->make(fs, &opts->so, &fs->sync)) < 0) {
		usage = err == -EINVAL;
		goto out;
	}
	if ((err = reload->load_initial(fs)) < 0)
		goto out;
	/* status: the sync lines, then the request counters, after the
	 * epoch's text. */
	if ((fs->sync && (err = status_part_add(&fs->status_parts, sync_part, fs)) < 0) ||
	    (err = status_part_add(&fs->status_parts, counters_part, NULL)) < 0)
		goto out;
	*out = fs;
	fs = NULL;
out:
	envfs_free(fs);
	/* -EINVAL is the usage error's alone (envfs.h). */
	return err == -EINVAL && !usage ? -EIO : err;
}

int envfs_start(struct envfs *fs)
{
	int err;

	if ((err = fs->reload_hooks->start(fs->reloader)) < 0 ||
	    (err = history_store_start(fs)) < 0)
		return err;
	return fs->sync ? fs->sync_hooks->start(fs->sync) : 0;
}

int envfs_stop(struct envfs *fs)
{
	if (!fs)
		return 0;
	/* The sync applier hands the reload thread invalidations: it stops
	 * first. */
	if (fs->sync)
		fs->sync_hooks->stop(fs->sync);
	if (fs->reloader && fs->reload_hooks->free(fs->reloader) < 0)
		return -ETIMEDOUT;
	fs->reloader = NULL;
	/* After the threads that note generations: the history's last save
	 * (a write still being handled saves its own). */
	history_store_stop(fs);
	return 0;
}

void envfs_free(struct envfs *fs)
{
	if (!fs)
		return;
	/* Threads never started stop at once; a reload thread that does not
	 * stop may still read all of this: left alone. */
	if (envfs_stop(fs) < 0)
		return;
	if (fs->sync)
		fs->sync_hooks->free(fs->sync);
	/* No handler runs any more: free what the kernel opened and never
	 * released (a SIGTERM, an unmount while a process still had files
	 * open). */
	handles_release_all(&fs->handles);
	blob_unref(fs->status_blob);
	blob_unref(fs->status_src);
	/* Only the first load initialises the slot, and it leaves an epoch
	 * in it. */
	if (fs->state.cur)
		epoch_slot_release(&fs->state);
	world_free(fs->world);
	diag_list_release(&fs->trust);
	override_set_release(&fs->ov);
	tree_free(fs->tree);
	pthread_mutex_destroy(&fs->ov_lock);
	pthread_mutex_destroy(&fs->publish_lock);
	pthread_mutex_destroy(&fs->wopen_lock);
	pthread_mutex_destroy(&fs->live_lock);
	history_release(&fs->hist);
	free(fs->hist_path);
	pthread_mutex_destroy(&fs->hist_lock);
	free(fs);
}

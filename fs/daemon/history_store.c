/* history_store: the history beside --state; see history_store.h. */
#include "log.h"
#include "history_store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "history_disk.h"
#include "history_file.h"
#include "infile.h"
#include "statefile.h"
#include "trust.h"

int history_store_load(struct envfs *fs)
{
	struct strbuf why = STRBUF_INIT;
	char *buf = NULL, msg[256];
	size_t len = 0, line = 0;
	int err;

	if (!fs->state_path || !fs->hist.cap)
		return 0;
	if (asprintf(&fs->hist_path, "%s.history", fs->state_path) < 0) {
		fs->hist_path = NULL;
		return -ENOMEM;
	}
	err = history_disk_read(fs->hist_path, &buf, &len, &why);
	if (err == -ENOENT) {
		err = 0;
		goto out;
	}
	if (err == -EPERM) {
		log_err("the history file %s: %s: someone else could have "
			"written it, so it is refused (docs/STATE.md)", fs->hist_path,
			sb_str(&why));
		goto out;
	}
	if (err == -ENOMEM)
		goto out;
	if (err < 0) {
		log_err("%s:1: %s; the history starts empty", fs->hist_path,
			why.len ? sb_str(&why) : strerror(-err));
		err = 0;
		goto out;
	}
	if ((err = history_file_parse(buf, len, &fs->hist, &line, msg, sizeof(msg))) == -EPROTO) {
		log_err("%s:%zu: %s; the history starts empty",
			fs->hist_path, line, msg);
		err = 0;
	}
out:
	free(buf);
	sb_release(&why);
	return err;
}

/* The thread that saves the history off the writers' path; its fields
 * are read and changed under fs->hist_lock. */
struct history_saver {
	pthread_t thread;
	pthread_cond_t cond;
	bool dirty;        /* a generation noted since the last save began */
	bool later;        /* a reload's generation noted since then, whose
	                      save waits for the next change */
	bool stop;
};

/* Renders fs->hist and rewrites fs->hist_path. Saves never overlap: before
 * the saver starts they are made by whoever notes a generation (under
 * publish_lock), then by the saver alone. */
static void save_now(struct envfs *fs)
{
	static bool failed;
	struct strbuf doc = STRBUF_INIT;
	int err;

	pthread_mutex_lock(&fs->hist_lock);
	err = history_file_render(&fs->hist, &doc);
	pthread_mutex_unlock(&fs->hist_lock);
	if (err == 0)
		err = statefile_write(fs->hist_path, &doc);
	if (err < 0 && !failed)
		log_err("cannot save the history to %s: %s; the mount "
			"goes on, its history may be lost at a remount", fs->hist_path,
			strerror(-err));
	failed = err < 0;
	sb_release(&doc);
}

static void *saver_main(void *arg)
{
	struct envfs *fs = arg;
	struct history_saver *hs = fs->hist_saver;

	pthread_mutex_lock(&fs->hist_lock);
	for (;;) {
		if (hs->dirty) {
			/* Generations noted during this save make another. */
			hs->dirty = hs->later = false;
			pthread_mutex_unlock(&fs->hist_lock);
			save_now(fs);
			pthread_mutex_lock(&fs->hist_lock);
			continue;
		}
		if (hs->stop)
			break;
		pthread_cond_wait(&hs->cond, &fs->hist_lock);
	}
	pthread_mutex_unlock(&fs->hist_lock);
	return NULL;
}

int history_store_start(struct envfs *fs)
{
	struct history_saver *hs;
	sigset_t all, old;
	int err;

	if (!fs->hist_path)
		return 0;
	if (!(hs = calloc(1, sizeof(*hs))))
		return -ENOMEM;
	pthread_cond_init(&hs->cond, NULL);
	fs->hist_saver = hs;
	/* Signals belong to the FUSE loop's thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&hs->thread, NULL, saver_main, fs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err < 0) {
		log_err("cannot start the history's saver thread: %s", strerror(-err));
		fs->hist_saver = NULL;
		pthread_cond_destroy(&hs->cond);
		free(hs);
	}
	return err;
}

void history_store_save(struct envfs *fs)
{
	if (!fs->hist_path)
		return;
	pthread_mutex_lock(&fs->hist_lock);
	if (fs->hist_saver) {
		fs->hist_saver->dirty = true;
		pthread_cond_signal(&fs->hist_saver->cond);
		pthread_mutex_unlock(&fs->hist_lock);
		return;
	}
	pthread_mutex_unlock(&fs->hist_lock);
	save_now(fs);
}

void history_store_later(struct envfs *fs)
{
	pthread_mutex_lock(&fs->hist_lock);
	if (fs->hist_saver)
		fs->hist_saver->later = true;
	pthread_mutex_unlock(&fs->hist_lock);
}

void history_store_stop(struct envfs *fs)
{
	struct history_saver *hs = fs->hist_saver;

	if (!hs)
		return;
	pthread_mutex_lock(&fs->hist_lock);
	/* A reload's generation that no change saved since: an unmount
	 * must not lose it, nor let a remount give its number again. */
	if (hs->later)
		hs->dirty = true;
	hs->stop = true;
	pthread_cond_signal(&hs->cond);
	pthread_mutex_unlock(&fs->hist_lock);
	pthread_join(hs->thread, NULL);
	/* Saves from now on are made by their callers again. */
	pthread_mutex_lock(&fs->hist_lock);
	fs->hist_saver = NULL;
	pthread_mutex_unlock(&fs->hist_lock);
	pthread_cond_destroy(&hs->cond);
	free(hs);
}

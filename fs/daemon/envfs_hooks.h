/* envfs_hooks: how fs/daemon, and fs/update below --sync, reach the
 * threads that feed the daemon, which live in the folders above them
 * (docs/CONVENTIONS.md, "Layers of fs/"): the reload thread of fs/update
 * and --sync of fs/syncd. Each of those folders fills one table with its
 * own functions (reload_hooks in reload.h, syncd_hooks in syncd.h), the
 * mount hands both to envfs_new, and the lower code calls through them
 * with the opaque object the table's make built (fs->reloader,
 * fs->sync). So no folder includes a header of a folder above it, and
 * these tables say, in one place, every call that goes up. */
#ifndef ENVFS_ENVFS_HOOKS_H
#define ENVFS_ENVFS_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "strbuf.h"

struct envfs;
struct hist_writer;
struct inval_list;
struct reloader;
struct snapshot;
struct sync_opts;
struct syncd;
struct world;

/* The inputs' watch and the reload thread (fs/update, reload.h says what
 * each does under its own name). */
struct envfs_reload_hooks {
	int (*make)(struct envfs *fs, struct reloader **out);   /* reloader_new */
	int (*load_initial)(struct envfs *fs);                  /* envfs_load_initial */
	int (*start)(struct reloader *r);                       /* reloader_start */
	int (*free)(struct reloader *r);                        /* reloader_free */
};

/* --sync (fs/syncd, syncd.h says what each does under its own name).
 * Called only when fs->sync is set, but make. */
struct envfs_sync_hooks {
	/* The lifecycle (envfs.c). */
	int (*make)(struct envfs *fs, const struct sync_opts *so,
		    struct syncd **out);                            /* syncd_new */
	int (*start)(struct syncd *sd);                         /* syncd_start */
	void (*stop)(struct syncd *sd);                         /* syncd_stop */
	void (*free)(struct syncd *sd);                         /* syncd_free */
	int (*status)(struct syncd *sd, struct strbuf *out);    /* syncd_status */
	/* The first load (reload.c). */
	int (*take_startup)(struct syncd *sd, const struct world *w); /* syncd_take_startup */
	/* Every publish (publish.c). */
	void (*published)(struct syncd *sd);                    /* syncd_published */
	/* A commit through the mount (commit.c). */
	int (*commit)(struct syncd *sd, const struct hist_writer *who, const char *backend,
		      const char *arch, const char *const *names, size_t n, unsigned mine,
		      bool excl, const char *cause,
		      const struct snapshot *snap);             /* syncd_commit */
	void (*readopt)(struct syncd *sd, struct inval_list *inval); /* syncd_readopt */
	bool (*key_present)(struct syncd *sd, const char *backend, const char *arch,
			    const char *name);                  /* syncd_key_present */
	int (*catch_up)(struct syncd *sd, const struct timespec *t0); /* syncd_catch_up */
	bool (*may_retry)(struct syncd *sd, unsigned attempt,
			  const struct timespec *t0);           /* syncd_may_retry */
	void (*unshare)(struct syncd *sd, const char *backend, const char *arch,
			const char *name);                      /* syncd_unshare */
};

#endif

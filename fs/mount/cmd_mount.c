/* cmd_mount: primus-envfs [INPUTS] [-f] [-o OPTS] MOUNTPOINT
 *
 *   $ primus-envfs --config exp.yaml /mnt/primus
 *   $ cat /mnt/primus/env/maxtext/gfx950/env_file
 *
 * Order matters: the inputs are watched before the first load (no edit
 * is missed), loaded before mounting (a bad start fails with the reasons
 * on the terminal), and the session is mounted before daemonizing (mount
 * errors still reach the terminal); threads start after the fork. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "daemonize.h"
#include "loop.h"
#include "envfs.h"
#include "ll_ops.h"
#include "memory.h"
#include "procfd.h"
#include "reload.h"
#include "state_lock.h"
#include "statefile.h"
#include "syncd.h"

#define FUSE_SUPER_MAGIC 0x65735546

/* One line for the usual mistakes, before libfuse adds its own words. */
static int check_mountpoint(const char *mp)
{
	char parent[4096];
	struct stat st, pst;
	struct statfs sfs;

	if (stat(mp, &st) < 0) {
		int err = errno;

		fprintf(stderr, "primus-envfs: cannot mount on %s: %s%s\n", mp, strerror(err),
			err == ENOTCONN ? " (a dead mount: run fusermount3 -u on it)" : "");
		return -err;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "primus-envfs: cannot mount on %s: %s\n", mp,
			strerror(ENOTDIR));
		return -ENOTDIR;
	}
	/* Another FUSE filesystem (likely a running primus-envfs) already
	 * mounted right here: stacking a second one would hide it. */
	snprintf(parent, sizeof(parent), "%s/..", mp);
	if (stat(parent, &pst) == 0 && statfs(mp, &sfs) == 0 &&
	    (st.st_dev != pst.st_dev || st.st_ino == pst.st_ino) &&
	    sfs.f_type == FUSE_SUPER_MAGIC) {
		fprintf(stderr, "primus-envfs: cannot mount on %s: %s (a FUSE "
			"filesystem is already mounted there)\n", mp, strerror(EBUSY));
		return -EBUSY;
	}
	return 0;
}

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
			fprintf(stderr, "primus-envfs: %s\n", sb_str(&sb));
	}
	if (!d.n)
		fprintf(stderr, "primus-envfs: %s: %s\n", path, strerror(-err));
	fprintf(stderr, "primus-envfs: the state file %s did not load; fix or move it "
		"(it is never discarded)\n", path);
out:
	sb_release(&sb);
	diag_list_release(&d);
	return err;
}

/* loop_run's on_ready: releases the waiting parent (daemonize.h). */
static int daemon_ready(void *arg)
{
	int *ready = arg, err = envfs_daemonize_done(*ready);

	*ready = -1;
	if (err < 0)
		fprintf(stderr, "primus-envfs: cannot daemonize: %s\n", strerror(-err));
	return err;
}

int cmd_mount(int argc, char **argv, bool as_helper)
{
	struct state_lock slock = { .path = NULL, .fd = -1 };
	struct mount_opts mo;
	struct envfs fs;
	struct fuse_session *se = NULL;
	bool state_ready = false, handlers = false, mounted = false;
	int ret = 2, res, ready = -1;

	memset(&fs, 0, sizeof(fs));
	memory_policy_init();
	pthread_mutex_init(&fs.ov_lock, NULL);
	pthread_mutex_init(&fs.publish_lock, NULL);
	pthread_mutex_init(&fs.wopen_lock, NULL);
	pthread_mutex_init(&fs.live_lock, NULL);
	handles_init(&fs.handles);
	if (mount_opts_parse(&mo, argc, argv, as_helper) < 0) {
		ret = CLI_EX_USAGE;
		goto out;
	}
	if (mo.help) {
		envfs_print_usage(stdout);
		ret = 0;
		goto out;
	}
	/* Before inputs_finish: the password leaves the environment that
	 * the inputs pass through. */
	if ((res = sync_opts_finish(&mo.so)) < 0) {
		ret = res == -EINVAL ? CLI_EX_USAGE : 2;
		goto out;
	}
	if (inputs_finish(&mo.ci) < 0 || check_mountpoint(mo.mountpoint) < 0)
		goto out;
	fs.opts = &mo;
	/* Before anything is read: one daemon per state file. */
	if (mo.ci.state && state_lock_take(mo.ci.state, &slock) < 0)
		goto out;
	fs.state_path = slock.path;
	fs.uid = getuid();
	fs.gid = getgid();
	if (tree_new(&fs.tree) < 0) {
		fprintf(stderr, "primus-envfs: %s\n", strerror(ENOMEM));
		goto out;
	}
	if (load_state(&fs) < 0 || reloader_new(&fs, &fs.reloader) < 0)
		goto out;
	if (mo.so.endpoints && (res = syncd_new(&fs, &mo.so, &fs.sync)) < 0) {
		ret = res == -EINVAL ? CLI_EX_USAGE : 2;
		goto out;
	}
	if (envfs_load_initial(&fs) < 0)
		goto out;
	state_ready = true;
	inputs_warn_inline_secrets(&mo.ci, fs.world);
	/* mount(8)'s -f: everything but the mount itself. */
	if (mo.fake) {
		ret = 0;
		goto out;
	}
	/* libfuse prints its own reason when these fail. */
	if (!(se = fuse_session_new(&mo.fargs, &envfs_ll_ops, sizeof(envfs_ll_ops), &fs)))
		goto out;
	/* A shell starts background jobs with SIGINT ignored, and libfuse
	 * leaves an ignored signal alone; SPEC 8 says SIGINT unmounts. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	/* A writer opening an input while the reload thread holds its
	 * momentary read lease (reload.c) sends SIGIO, which would kill. */
	signal(SIGIO, SIG_IGN);
	if (fuse_set_signal_handlers(se) != 0)
		goto out;
	handlers = true;
	if (fuse_session_mount(se, mo.mountpoint) != 0)
		goto out;
	mounted = true;
	fs.se = se;
	/* Unknown, a bare truncation is committed at its first close. */
	if (procfd_mount_dev(mo.mountpoint, &fs.dev) < 0)
		fs.dev = 0;
	/* The shell gets its prompt back only once the threads run: a start
	 * that fails before then exits 2 with its reasons on the terminal. */
	if ((res = envfs_daemonize_begin(mo.foreground, &ready)) < 0) {
		fprintf(stderr, "primus-envfs: cannot daemonize: %s\n", strerror(-res));
		goto out;
	}
	/* The daemon is the forked child now: the lock names it. */
	state_lock_note_pid(&slock);
	if (reloader_start(fs.reloader) < 0 || (fs.sync && syncd_start(fs.sync) < 0))
		goto out;
	res = loop_run(se, &(struct loop_opts){
		.spin_us = mo.spin_us,
		.workers = mo.single_thread ? 0 : LOOP_DEFAULT_WORKERS,
		.fh_may_block = envfs_fh_may_block,
		.on_ready = daemon_ready,
		.ready_arg = &ready });
	/* A signal ends the loop with its (positive) number: a clean exit. */
	ret = res < 0 ? 1 : 0;
out:
	/* Not ready after all: the parent, waiting, exits 2. */
	if (ready >= 0)
		close(ready);
	/* The reload thread sends notifications on se: stop it first. One
	 * stuck on an input that never answers must not keep the daemon
	 * alive (SIGTERM ends it within 2 s): unmount and leave, freeing
	 * nothing that thread may still touch. The sync applier hands
	 * that thread invalidations: it stops before. */
	syncd_stop(fs.sync);
	if (reloader_free(fs.reloader) < 0) {
		fprintf(stderr, "primus-envfs: the reload thread did not stop within %d ms "
			"(an input that does not answer?); exiting without it\n", RELOAD_STOP_MS);
		if (mounted)
			fuse_session_unmount(se);
		/* Not exit(): the sanitizers' exit-time checks stop every
		 * thread first, and that one cannot be stopped. */
		fflush(NULL);
		_exit(ret);
	}
	/* Unmount first: leaving the registry may wait on etcd (bounded,
	 * sync_register.c), and the mount point must not stay a mount of
	 * a daemon that is going. */
	if (mounted)
		fuse_session_unmount(se);
	syncd_free(fs.sync);
	if (handlers)
		fuse_remove_signal_handlers(se);
	if (se)
		fuse_session_destroy(se);
	/* The loop has joined its workers, so no handler runs: free what the
	 * kernel opened and never released (a SIGTERM, an unmount while a
	 * process still had files open). */
	handles_release_all(&fs.handles);
	blob_unref(fs.status_blob);
	blob_unref(fs.status_src);
	if (state_ready)
		epoch_slot_release(&fs.state);
	world_free(fs.world);
	diag_list_release(&fs.trust);
	override_set_release(&fs.ov);
	tree_free(fs.tree);
	pthread_mutex_destroy(&fs.ov_lock);
	pthread_mutex_destroy(&fs.publish_lock);
	pthread_mutex_destroy(&fs.wopen_lock);
	pthread_mutex_destroy(&fs.live_lock);
	state_lock_release(&slock);
	mount_opts_release(&mo);
	return ret;
}

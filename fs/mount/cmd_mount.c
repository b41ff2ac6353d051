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
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "daemonize.h"
#include "log.h"
#include "loop.h"
#include "envfs.h"
#include "ll_ops.h"
#include "memory.h"
#include "procfd.h"
#include "reload.h"
#include "service_notify.h"
#include "state_lock.h"
#include "dead_mount.h"
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

		log_err("cannot mount on %s: %s%s", mp, strerror(err),
			err == ENOTCONN ? " (a dead mount: run fusermount3 -u on it)" : "");
		return -err;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_err("cannot mount on %s: %s", mp, strerror(ENOTDIR));
		return -ENOTDIR;
	}
	/* Another FUSE filesystem (likely a running primus-envfs) already
	 * mounted right here: stacking a second one would hide it. */
	snprintf(parent, sizeof(parent), "%s/..", mp);
	if (stat(parent, &pst) == 0 && statfs(mp, &sfs) == 0 &&
	    (st.st_dev != pst.st_dev || st.st_ino == pst.st_ino) &&
	    sfs.f_type == FUSE_SUPER_MAGIC) {
		log_err("cannot mount on %s: %s (a FUSE filesystem is already mounted there)",
			mp, strerror(EBUSY));
		return -EBUSY;
	}
	return 0;
}

/* libfuse's own messages ("fuse: ..."), which it would write to stderr
 * whatever became of it: to where the daemon's go. Its levels are
 * syslog's. */
__attribute__((format(printf, 2, 0)))
static void fuse_message(enum fuse_log_level level, const char *fmt, va_list ap)
{
	log_vline((int)level, fmt, ap);
}

/* loop_run's on_stop: a --sync commit in flight stops waiting on etcd. */
static void sync_interrupt(void *arg)
{
	syncd_interrupt(arg);
}

/* loop_run's on_ready: releases the waiting parent (daemonize.h). */
static int daemon_ready(void *arg)
{
	int *ready = arg, err = envfs_daemonize_done(*ready), res;

	*ready = -1;
	if (err < 0)
		log_err("cannot daemonize: %s", strerror(-err));
	else if ((res = service_notify("READY=1")) < 0)
		log_warn("cannot tell systemd the mount is ready: %s", strerror(-res));
	return err;
}

int cmd_mount(int argc, char **argv, bool as_helper)
{
	struct state_lock slock = { .path = NULL, .fd = -1 };
	struct mount_opts mo;
	struct envfs *fs = NULL;
	struct fuse_session *se = NULL;
	bool handlers = false, mounted = false;
	int ret = 2, res, ready = -1;

	memory_policy_init();
	fuse_set_log_func(fuse_message);
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
	if (inputs_finish(&mo.ci) < 0 || dead_mount_clear(mo.mountpoint) < 0 ||
	    check_mountpoint(mo.mountpoint) < 0)
		goto out;
	/* Before anything is read: one daemon per state file. */
	if (mo.ci.state && state_lock_take(mo.ci.state, &slock) < 0)
		goto out;
	if ((res = envfs_new(&mo, slock.path, &reload_hooks, &syncd_hooks, &fs)) < 0) {
		ret = res == -EINVAL ? CLI_EX_USAGE : 2;
		goto out;
	}
	inputs_warn_inline_secrets(&mo.ci, fs->world);
	/* mount(8)'s -f: everything but the mount itself. */
	if (mo.fake) {
		ret = 0;
		goto out;
	}
	/* libfuse prints its own reason when these fail. */
	if (!(se = fuse_session_new(&mo.fargs, &envfs_ll_ops, sizeof(envfs_ll_ops), fs)))
		goto out;
	/* A shell starts background jobs with SIGINT ignored, and libfuse
	 * leaves an ignored signal alone; SIGINT must unmount, as SIGTERM does. */
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
	fs->se = se;
	/* Unknown, a bare truncation is committed at its first close. */
	if (procfd_mount_dev(mo.mountpoint, &fs->dev) < 0)
		fs->dev = 0;
	/* The shell gets its prompt back only once the threads run: a start
	 * that fails before then exits 2 with its reasons on the terminal. */
	if ((res = envfs_daemonize_begin(mo.foreground, &ready)) < 0) {
		log_err("cannot daemonize: %s", strerror(-res));
		goto out;
	}
	/* The daemon is the forked child now: the lock names it. */
	state_lock_note_pid(&slock);
	if (envfs_start(fs) < 0)
		goto out;
	res = loop_run(se, &(struct loop_opts){
		.spin_us = mo.spin_us,
		.workers = mo.single_thread ? 0 : LOOP_DEFAULT_WORKERS,
		.fh_may_block = envfs_fh_may_block,
		.on_ready = daemon_ready,
		.ready_arg = &ready,
		.on_stop = sync_interrupt,
		.stop_arg = fs->sync });
	/* A signal ends the loop with its (positive) number: a clean exit. */
	ret = res < 0 ? 1 : 0;
	service_notify("STOPPING=1");
out:
	/* Not ready after all: the parent, waiting, exits 2. */
	if (ready >= 0)
		close(ready);
	/* The reload thread sends notifications on se: stopped first. One
	 * stuck on an input that never answers must not keep the daemon
	 * alive (SIGTERM ends it within 2 s): unmount and leave, freeing
	 * nothing that thread may still touch. */
	if (envfs_stop(fs) < 0) {
		log_err("the reload thread did not stop within %d ms (an input that does not "
			"answer?); exiting without it", RELOAD_STOP_MS);
		if (mounted)
			fuse_session_unmount(se);
		/* Not exit(): the sanitizers' exit-time checks stop every
		 * thread first, and that one cannot be stopped. */
		fflush(NULL);
		_exit(ret);
	}
	/* Unmount first: leaving the registry (in envfs_free) may wait on
	 * etcd (bounded, sync_register.c), and the mount point must not stay
	 * a mount of a daemon that is going. The loop has joined its
	 * workers, so no handler runs. */
	if (mounted)
		fuse_session_unmount(se);
	envfs_free(fs);
	if (handlers)
		fuse_remove_signal_handlers(se);
	if (se)
		fuse_session_destroy(se);
	state_lock_release(&slock);
	mount_opts_release(&mo);
	return ret;
}

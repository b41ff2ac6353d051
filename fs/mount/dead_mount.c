/* dead_mount: a dead mount at the mount point; see dead_mount.h. */
#include "log.h"
#include "dead_mount.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procfd.h"
#include "strbuf.h"

/* Dead mounts stacked at one point that are cleared, at most. */
#define DEAD_MAX 16

/* statfs always asks the daemon (stat may be answered from the attribute
 * cache), so a dead connection shows. */
static bool dead(const char *mp)
{
	struct statfs sfs;

	return statfs(mp, &sfs) < 0 && errno == ENOTCONN;
}

/* path made absolute without touching its last component (a dead mount
 * answers nothing), into out. */
static int absolute(const char *mp, struct strbuf *out)
{
	char *a = strdup(mp), *b = strdup(mp), dir[PATH_MAX];
	int err = -ENOMEM;

	if (!a || !b)
		goto out;
	err = -errno;
	if (!realpath(dirname(a), dir))
		goto out;
	err = sb_addf(out, "%s/%s", strcmp(dir, "/") ? dir : "", basename(b));
out:
	free(a);
	free(b);
	return err;
}

/* umount2 for root; fusermount3 -uz for a user, whose mount it is. */
static int detach(const char *path)
{
	pid_t pid;
	int st;

	if (umount2(path, MNT_DETACH) == 0)
		return 0;
	if ((pid = fork()) < 0)
		return -errno;
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", "-quz", path, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EPERM;
}

int dead_mount_clear(const char *mp)
{
	struct strbuf path = STRBUF_INIT;
	char type[64];
	int n, err = 0;

	for (n = 0; n < DEAD_MAX && dead(mp); n++) {
		if ((err = absolute(mp, &path)) < 0 ||
		    (err = procfd_mount_type(sb_str(&path), type, sizeof(type))) < 0)
			*type = '\0';
		if (strcmp(type, "fuse.primus-envfs")) {
			log_err("cannot mount on %s: a dead mount%s%s%s is "
				"there (%s): clear it with fusermount3 -uz %s", mp,
				*type ? " (" : "", type, *type ? ")" : "", strerror(ENOTCONN), mp);
			err = -ENOTCONN;
			goto out;
		}
		if ((err = detach(sb_str(&path))) < 0) {
			log_err("cannot mount on %s: it holds a dead "
				"primus-envfs mount that cannot be detached (%s): clear it with "
				"fusermount3 -uz %s", mp, strerror(-err), mp);
			goto out;
		}
		log_notice("note: %s held a dead primus-envfs mount (its "
			"daemon was killed); detached it", mp);
		sb_reset(&path);
	}
	err = 0;
out:
	sb_release(&path);
	return err;
}

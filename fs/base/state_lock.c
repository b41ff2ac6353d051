/* The --state file at start; see state_lock.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infile.h"
#include "state_lock.h"
#include "strbuf.h"
#include "trust.h"

#define MAX_LINKS 40
/* How long a new mount waits for the daemon that held the file. */
#define STATE_LOCK_WAIT_MS 3000

static int say(const char *given, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One line "primus-envfs: --state GIVEN: ..."; returns err. */
static int say(const char *given, int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "primus-envfs: --state %s: ", given);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return err;
}

/* dir/base with dir made absolute and free of symlinks. */
static int in_real_dir(const char *given, const char *path, char **out)
{
	char *d = strdup(path), *b = strdup(path), *real = NULL;
	const char *dn;
	int err = -ENOMEM;

	if (!d || !b)
		goto out;
	if (!(real = realpath(dn = dirname(d), NULL))) {
		err = -errno;
		if (errno == ENOENT)
			say(given, err, "the directory %s does not exist", dn);
		else
			say(given, err, "the directory %s: %s", dn, strerror(errno));
		goto out;
	}
	if (asprintf(out, "%s/%s", strcmp(real, "/") ? real : "", basename(b)) < 0) {
		*out = NULL;
		goto out;
	}
	err = 0;
out:
	free(real);
	free(d);
	free(b);
	return err;
}

/* The file given names: realpath when it exists; else the target of the
 * (chain of) symlinks, or the name itself, in its real directory. */
static int resolve(const char *given, char **out)
{
	char *cur = NULL, *real;
	struct stat st;
	int hops, err;

	if ((real = realpath(given, NULL))) {
		*out = real;
		return 0;
	}
	if (errno != ENOENT)
		return say(given, -errno, "%s", strerror(errno));
	if (!(cur = strdup(given)))
		return -ENOMEM;
	for (hops = 0; lstat(cur, &st) == 0 && S_ISLNK(st.st_mode); hops++) {
		char target[PATH_MAX], *next, *d;
		ssize_t n;

		if (hops == MAX_LINKS) {
			free(cur);
			return say(given, -ELOOP, "%s", strerror(ELOOP));
		}
		if ((n = readlink(cur, target, sizeof(target) - 1)) < 0) {
			err = -errno;
			free(cur);
			return say(given, err, "%s", strerror(-err));
		}
		target[n] = '\0';
		/* A relative target is relative to the link's directory. */
		if (target[0] == '/' || !(d = strdup(cur)))
			next = strdup(target);
		else if (asprintf(&next, "%s/%s", dirname(d), target) < 0)
			next = NULL;
		if (target[0] != '/')
			free(d);
		free(cur);
		if (!(cur = next))
			return -ENOMEM;
	}
	err = in_real_dir(given, cur, out);
	free(cur);
	return err;
}

/* Opens and locks path.lock; on a held lock, names the holder. */
static int lock(const char *given, const char *path, int *fd_out)
{
	struct strbuf why = STRBUF_INIT;
	char *lpath = NULL, pid[32];
	struct stat st;
	int fd = -1, err, r, waited;
	ssize_t n;

	if (asprintf(&lpath, "%s.lock", path) < 0)
		return -ENOMEM;
	fd = open(lpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = say(given, -errno, "cannot open the lock file %s: %s", lpath, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		err = say(given, -EINVAL, "the lock file %s is not a regular file", lpath);
		goto out;
	}
	if ((r = trust_path(lpath, geteuid(), false, &why)) <= 0) {
		err = r < 0 ? r : -EPERM;
		say(given, err, "the lock file %s is %s; remove it", lpath,
		    r < 0 ? strerror(-r) : sb_str(&why));
		goto out;
	}
	/* `fusermount3 -u` returns before the unmounted daemon has saved and
	 * exited, so a mount run right after it finds the lock still held:
	 * wait for that daemon a little before calling the file in use. */
	for (waited = 0; (r = flock(fd, LOCK_EX | LOCK_NB)) < 0 && errno == EWOULDBLOCK &&
			 waited < STATE_LOCK_WAIT_MS; waited += 10)
		usleep(10 * 1000);
	if (r < 0) {
		err = -errno;
		if (errno != EWOULDBLOCK) {
			say(given, err, "cannot lock %s: %s", lpath, strerror(-err));
			goto out;
		}
		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		fprintf(stderr, "primus-envfs: --state %s is in use by another primus-envfs "
			"(pid %s); one state file serves one mount at a time\n", given,
			*pid ? pid : "unknown");
		err = -EBUSY;
		goto out;
	}
	*fd_out = fd;
	fd = -1;
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	sb_release(&why);
	free(lpath);
	return err;
}

int state_lock_take(const char *given, struct state_lock *out)
{
	struct strbuf why = STRBUF_INIT;
	struct stat st;
	int err, r;

	out->path = NULL;
	out->fd = -1;
	if ((err = resolve(given, &out->path)) < 0)
		goto out;
	if (stat(out->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		err = say(given, -EINVAL, "not a regular file (%s)", infile_kind(st.st_mode));
		goto out;
	}
	/* out->path is where saves go from now on, but the next start
	 * follows given again: a link another user can repoint is theirs. */
	if ((r = trust_links(given, geteuid(), &why)) == 1 || (r < 0 && r != -ENOMEM))
		r = trust_path(out->path, geteuid(), true, &why);
	if (r <= 0) {
		err = r < 0 ? r : -EPERM;
		if (r < 0)
			say(given, err, "%s", strerror(-r));
		else
			say(given, err, "%s: someone else could have written it, so it is "
			    "refused (docs/STATE.md)", sb_str(&why));
		goto out;
	}
	if ((err = lock(given, out->path, &out->fd)) < 0)
		goto out;
	state_lock_note_pid(out);
out:
	sb_release(&why);
	return err;
}

void state_lock_note_pid(struct state_lock *l)
{
	char pid[32];
	int n;

	if (l->fd < 0)
		return;
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	/* Best effort: the PID only makes a refusal's message better. */
	if (ftruncate(l->fd, 0) < 0 || pwrite(l->fd, pid, (size_t)n, 0) != n)
		return;
}

void state_lock_release(struct state_lock *l)
{
	if (l->fd >= 0)
		close(l->fd);
	free(l->path);
	l->path = NULL;
	l->fd = -1;
}

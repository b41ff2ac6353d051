/* Descriptors of a process, from /proc; see procfd.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "procfd.h"

/* mountinfo escapes blanks, newlines and backslashes as \ooo. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* Walks a mountinfo file: for each line, its mount id, device, mount
 * point (unescaped) and filesystem type. each returns nonzero to stop,
 * which is returned. */
static int each_mount(const char *file,
		      int (*each)(int id, dev_t dev, char *mp, const char *type, void *arg),
		      void *arg)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen(file, "re");
	int r = 0;

	if (!f)
		return -errno;
	while (r == 0 && getline(&line, &cap, f) > 0) {
		unsigned maj, min;
		int id, pid, n = 0;
		char *mp, *end, *type;

		/* id parent major:minor root mountpoint ... */
		if (sscanf(line, "%d %d %u:%u %*s %n", &id, &pid, &maj, &min, &n) < 4 || !n)
			continue;
		mp = line + n;
		if (!(end = strchr(mp, ' ')))
			continue;
		*end = '\0';
		/* ... optional fields - TYPE source superoptions */
		if (!(type = strstr(end + 1, " - ")))
			continue;
		type += 3;
		type[strcspn(type, " \n")] = '\0';
		unescape(mp);
		r = each(id, makedev(maj, min), mp, type, arg);
	}
	free(line);
	fclose(f);
	return r;
}

struct find_mp {
	const char *mp;
	dev_t dev;
	char type[64];
	bool found;
};

static int match_mp(int id, dev_t dev, char *mp, const char *type, void *arg)
{
	struct find_mp *f = arg;

	(void)id;
	/* Mounts are listed in the order they were made: the last one at a
	 * path is on top. */
	if (!strcmp(mp, f->mp)) {
		f->dev = dev;
		snprintf(f->type, sizeof(f->type), "%s", type);
		f->found = true;
	}
	return 0;
}

int procfd_mount_type(const char *path, char *type, size_t size)
{
	struct find_mp f = { .mp = path, .found = false };
	int err = each_mount("/proc/self/mountinfo", match_mp, &f);

	if (err < 0)
		return err;
	if (!f.found)
		return -ENOENT;
	snprintf(type, size, "%s", f.type);
	return 0;
}

int procfd_mount_dev(const char *mountpoint, dev_t *dev)
{
	struct find_mp f = { .found = false };
	char *real = realpath(mountpoint, NULL);
	int err;

	if (!real)
		return -errno;
	f.mp = real;
	err = each_mount("/proc/self/mountinfo", match_mp, &f);
	free(real);
	if (err < 0)
		return err;
	if (!f.found)
		return -ENOENT;
	*dev = f.dev;
	return 0;
}

struct find_id {
	int id;
	dev_t dev;
};

static int match_id(int id, dev_t dev, char *mp, const char *type, void *arg)
{
	struct find_id *f = arg;

	(void)mp;
	(void)type;
	if (id != f->id)
		return 0;
	f->dev = dev;
	return 1;
}

/* The fields of one fdinfo file that matter; -ENOSYS when the kernel
 * does not show the inode (before Linux 5.14). */
static int read_fdinfo(int dfd, const char *name, unsigned long long *ino, int *flags,
		       int *mnt_id)
{
	char buf[512], *line, *save = NULL;
	ssize_t n;
	int fd, seen = 0;

	if ((fd = openat(dfd, name, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "flags: %o", (unsigned *)flags) == 1)
			seen |= 1;
		else if (sscanf(line, "mnt_id: %d", mnt_id) == 1)
			seen |= 2;
		else if (sscanf(line, "ino: %llu", ino) == 1)
			seen |= 4;
	}
	return seen == 7 ? 0 : -ENOSYS;
}

int procfd_holds(pid_t pid, dev_t dev, unsigned long long ino, int accmode)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int err = 0;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)pid);
	if (!(d = opendir(path)))
		return -errno;
	while ((de = readdir(d))) {
		unsigned long long fino = 0;
		int flags = 0, mnt_id = -1, r;
		struct find_id f = { 0 };

		if (de->d_name[0] == '.')
			continue;
		if ((r = read_fdinfo(dirfd(d), de->d_name, &fino, &flags, &mnt_id)) == -ENOSYS) {
			err = r;
			break;
		}
		if (r < 0 || fino != ino || (flags & O_ACCMODE) != accmode)
			continue;
		/* The same number on another filesystem is another file. */
		f.id = mnt_id;
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
		if ((r = each_mount(path, match_id, &f)) < 0) {
			err = r;
			break;
		}
		if (r == 1 && f.dev == dev) {
			err = 1;
			break;
		}
	}
	closedir(d);
	return err;
}

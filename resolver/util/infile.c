/* Opening inputs; see infile.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infile.h"
#include "strbuf.h"

const char *infile_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	default:
		return "not a file";
	}
}

int infile_refused(struct diag_list *diags, const char *path)
{
	struct stat st;
	const char *kind = stat(path, &st) == 0 ? infile_kind(st.st_mode) : "gone";
	int err = diag_add(diags, DC_INPUT_UNREADABLE, path, 0, 0,
			   "not a regular file (%s); inputs are read from regular files only",
			   kind);

	return err < 0 ? err : -EINVAL;
}

int infile_open(const char *path, const char **kind)
{
	struct stat st;
	int fd, err;

	if (kind)
		*kind = NULL;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		goto refuse;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (S_ISREG(st.st_mode))
		return fd;
	close(fd);
refuse:
	if (kind)
		*kind = infile_kind(st.st_mode);
	return -EINVAL;
}

int infile_read_fd(int fd, size_t max, char **buf, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	size_t first = 4096;
	struct stat st;
	ssize_t r;
	int err = 0;

	/* A huge regular file costs nothing; the count below still bounds
	 * one that grows, and whatever has no size (kernel files say 0). */
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((uintmax_t)st.st_size > max)
			return -EFBIG;
		first = (size_t)st.st_size + 1;
	}
	for (;;) {
		/* Room for the whole file at once when its size is known, the
		 * buffer doubled when it fills otherwise. */
		if (sb.cap - sb.len < 2 && (err = sb_grow(&sb, sb.len ? sb.len : first)) < 0)
			goto out;
		r = read(fd, sb.buf + sb.len, sb.cap - sb.len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto out;
		}
		if (r == 0)
			break;
		sb.len += (size_t)r;
		if (sb.len > max) {
			err = -EFBIG;
			goto out;
		}
	}
	sb.buf[sb.len] = '\0';
	if (!(*buf = sb_detach(&sb, len)))
		err = -ENOMEM;
out:
	sb_release(&sb);
	return err;
}

int infile_read(const char *path, size_t max, char **buf, size_t *len)
{
	int fd, err;

	if ((fd = infile_open(path, NULL)) < 0)
		return fd;
	err = infile_read_fd(fd, max, buf, len);
	close(fd);
	return err;
}

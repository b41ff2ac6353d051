/* Opening inputs; see infile.h. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infile.h"

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
	int err = diag_add(diags, DIAG_ERROR, path, 0, 0,
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

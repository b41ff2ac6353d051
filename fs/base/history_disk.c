/* history_disk: reading the history file; see history_disk.h. */
#include "history_disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "history_file.h"
#include "infile.h"
#include "trust.h"

int history_disk_read(const char *path, char **buf, size_t *len, struct strbuf *why)
{
	const char *kind = NULL;
	struct stat st;
	size_t got = 0;
	ssize_t n;
	char *b = NULL;
	int fd, err = 0, r;

	*buf = NULL;
	if ((fd = infile_open(path, &kind)) < 0) {
		if (fd == -EINVAL)
			sb_addf(why, "not a regular file (%s)", kind ? kind : "?");
		return fd;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	/* Its directory is the state file's, already judged (state_lock). */
	if ((r = trust_stat(path, &st, geteuid(), why)) <= 0) {
		err = r < 0 ? r : -EPERM;
		goto out;
	}
	if ((size_t)st.st_size > HISTORY_FILE_MAX) {
		sb_addf(why, "larger than %u bytes", HISTORY_FILE_MAX);
		err = -EFBIG;
		goto out;
	}
	if (!(b = malloc((size_t)st.st_size + 1))) {
		err = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size &&
	       (n = read(fd, b + got, (size_t)st.st_size - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		got += (size_t)n;
	}
	*buf = b;
	*len = got;
	b = NULL;
out:
	free(b);
	close(fd);
	return err;
}


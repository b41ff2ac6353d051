/* Whole writes; see fdio.h. */
#include <errno.h>
#include <unistd.h>

#include "fdio.h"

int fd_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	ssize_t w;

	while (n) {
		if ((w = write(fd, c, n)) < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

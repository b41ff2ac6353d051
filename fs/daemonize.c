/* envfs_daemonize; see daemonize.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemonize.h"

/* Points fds 0-2 at /dev/null: the terminal may go away. */
static int stdio_to_null(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC), i, err = 0;

	if (fd < 0)
		return -errno;
	for (i = 0; i <= 2; i++)
		if (dup2(fd, i) < 0)
			err = -errno;
	if (fd > 2)
		close(fd);
	return err;
}

/* The parent's side: the byte says the child got through; EOF without
 * it (the child failed or died first) is a failed start. */
_Noreturn static void wait_for_child(int rfd)
{
	char got = 0;
	ssize_t n;

	while ((n = read(rfd, &got, 1)) < 0 && errno == EINTR)
		;
	_exit(n == 1 && got == 1 ? 0 : 1);
}

int envfs_daemonize(bool foreground)
{
	int ready[2], err = 0;
	pid_t pid;

	if (foreground)
		return 0;
	if (pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	if ((pid = fork()) < 0) {
		err = -errno;
		close(ready[0]);
		close(ready[1]);
		return err;
	}
	if (pid > 0) {
		close(ready[1]);
		wait_for_child(ready[0]);
	}
	close(ready[0]);
	if (setsid() < 0)
		err = -errno;
	else if ((err = stdio_to_null()) == 0 && write(ready[1], &(char){ 1 }, 1) != 1)
		err = -errno;
	close(ready[1]);
	return err;
}

/* envfs_daemonize_begin/done; see daemonize.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemonize.h"
#include "log.h"

/* Points fds 0-2 at /dev/null. Not O_CLOEXEC: when a standard fd was
 * closed at start, open() returns that very fd and dup2 leaves it as is,
 * and a standard fd must survive the exec of fusermount3 at unmount. */
static int stdio_to_null(void)
{
	int fd = open("/dev/null", O_RDWR), i, err = 0;

	if (fd < 0)
		return -errno;
	for (i = 0; i <= 2; i++)
		if (dup2(fd, i) < 0)
			err = -errno;
	if (fd > 2)
		close(fd);
	return err;
}

/* The parent's side: the byte says the daemon is up; EOF without it (the
 * child failed, or died) is a failed start, like the mount's other ones. */
_Noreturn static void wait_for_child(int rfd)
{
	char got = 0;
	ssize_t n;

	while ((n = read(rfd, &got, 1)) < 0 && errno == EINTR)
		;
	_exit(n == 1 && got == 1 ? 0 : 2);
}

int envfs_daemonize_begin(bool foreground, int *ready)
{
	int fds[2], err;
	pid_t pid;

	*ready = -1;
	if (foreground)
		return 0;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	if ((pid = fork()) < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid > 0) {
		close(fds[1]);
		wait_for_child(fds[0]);
	}
	close(fds[0]);
	if (setsid() < 0) {
		err = -errno;
		close(fds[1]);
		return err;
	}
	*ready = fds[1];
	return 0;
}

int envfs_daemonize_done(int ready)
{
	int err;

	if (ready < 0)
		return 0;
	log_to_syslog();
	if ((err = stdio_to_null()) == 0 && write(ready, &(char){ 1 }, 1) != 1)
		err = -errno;
	close(ready);
	return err;
}

/* envfs-readloop: stat, open, read and close the given files back to back
 * until one of them fails (the mount went away) or SECONDS have passed.
 *
 *   envfs-readloop SECONDS FILE...
 *
 * A shell or Python loop leaves gaps between requests long enough for the
 * daemon's reading thread to go to sleep; this one keeps a request queued,
 * as a busy container host does (tests/mount/lifecycle.sh). Exits 0. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int read_once(const char *path)
{
	char buf[4096];
	struct stat st;
	ssize_t r;
	int fd;

	if (stat(path, &st) < 0 || (fd = open(path, O_RDONLY)) < 0)
		return -1;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return r < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	time_t end;
	int i;

	if (argc < 3)
		return 2;
	end = time(NULL) + atoi(argv[1]);
	while (time(NULL) < end)
		for (i = 2; i < argc; i++)
			if (read_once(argv[i]) < 0)
				return 0;
	return 0;
}

/* input_writers: whether an input may be in the middle of an in-place
 * write; see input_writers.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "input_writers.h"
#include "spec.h"
#include "strbuf.h"

/* True when some process has path open for writing: the kernel refuses
 * a read lease then (F_SETLEASE, EAGAIN), and counts a writer from its
 * open on, before an O_TRUNC empties the file. A lease granted is given
 * back at once. Without the right to take a lease (a file of another
 * user, a filesystem without leases), false: the events alone decide. */
static bool open_for_writing(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), r;

	if (fd < 0)
		return false;
	r = fcntl(fd, F_SETLEASE, F_RDLCK);
	if (r == 0)
		fcntl(fd, F_SETLEASE, F_UNLCK);
	close(fd);
	return r < 0 && errno == EAGAIN;
}

bool inputs_being_written(const struct envfs_inputs *in)
{
	struct strbuf path = STRBUF_INIT;
	char **names = NULL;
	size_t n = 0, k;
	bool busy = in->config && open_for_writing(in->config);

	for (k = 0; k < in->ninherit && !busy; k++)
		busy = open_for_writing(in->inherit[k]);
	if (!busy && spec_dir_list(in->specs_dir, &names, &n, NULL) == 0) {
		for (k = 0; k < n; k++) {
			sb_reset(&path);
			if (!busy && sb_addf(&path, "%s/%s", in->specs_dir, names[k]) == 0)
				busy = open_for_writing(sb_str(&path));
			free(names[k]);
		}
		free(names);
	}
	sb_release(&path);
	return busy;
}

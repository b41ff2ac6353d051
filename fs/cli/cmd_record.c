/* primus-envfs record: the run record of one <backend>/<arch> (run_record.h),
 * the same bytes as the mount's `record` file of that directory, written
 * to a file atomically so a half-written record never stands in for one.
 *
 *   $ primus-envfs record --config exp.yaml -b maxtext -a gfx950 -o run.json */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "fdio.h"
#include "load.h"
#include "view.h"

static const struct cli_cmd cmd = {
	.name = "record",
	.flags = CLI_DIR | CLI_DIR_REQUIRED | CLI_OUTPUT,
	.synopsis = "[INPUTS] -b BACKEND -a ARCH [-o FILE]",
	.help =
	"Write the run record of BACKEND/ARCH: one JSON document with the environment,\n"
	"each variable's provenance, the diagnostics, the digests, the program and\n"
	"specs versions and the SHA-256 of each input file. No secret's value (nor a\n"
	"hash of one) is in it. 'primus-envfs diff record:FILE ...' compares with it.\n"
	"\n"
	CLI_DIR_HELP
	"  -o, --output FILE       write to FILE (a regular file is replaced atomically,\n"
	"                          a device or FIFO written into); - or none: stdout\n"
	"  -h, --help              print this help\n"
	"\n"
	"Exit status: 0 written (an environment with errors is recorded too: the\n"
	"record lists them); 2 an input did not load or FILE could not be written;\n"
	"64 the command line is wrong.\n",
};

/* Writes data to path through a temporary file in its directory, synced
 * before the rename, so a reader sees the old record or the new one. */
static int write_atomic(const char *path, const char *data, size_t len)
{
	char *tmp = NULL, *dcopy = NULL;
	int fd = -1, dfd = -1, err;
	mode_t mask = umask(0);

	/* The mode a shell's > would give: mkstemp's 0600 is for secrets,
	 * and a record holds none. */
	umask(mask);

	if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	if ((fd = mkstemp(tmp)) < 0) {
		err = -errno;
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if ((err = fd_write_all(fd, data, len)) < 0 || (fsync(fd) < 0 && (err = -errno)) ||
	    (fchmod(fd, 0666 & ~mask) < 0 && (err = -errno)))
		goto out;
	if (close(fd) < 0) {
		fd = -1;
		err = -errno;
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		err = -errno;
		goto out;
	}
	free(tmp);
	tmp = NULL;
	if (!(dcopy = strdup(path))) {
		err = -ENOMEM;
		goto out;
	}
	if ((dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
		fsync(dfd);
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	free(dcopy);
	return err;
}

/* Writes data into path as a shell's > would: for a FILE that is no
 * regular file (a device, a FIFO) or a link whose target is missing. */
static int write_into(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
	int err;

	if (fd < 0)
		return -errno;
	err = fd_write_all(fd, data, len);
	if (close(fd) < 0 && err == 0)
		err = -errno;
	return err;
}

/* -o FILE: a regular file (or a link to one) is replaced atomically, the
 * link kept and its target replaced, as the state file is; anything else
 * is written into, so `-o /dev/null` or a FIFO works as with > and is
 * never replaced by a regular file. */
static int write_output(const char *path, const char *data, size_t len)
{
	struct stat st;
	char *real;
	int err;

	if (stat(path, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		/* Missing: created atomically, or through a dangling link. */
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			return write_into(path, data, len);
		return write_atomic(path, data, len);
	}
	if (!S_ISREG(st.st_mode))
		return write_into(path, data, len);
	if (!(real = realpath(path, NULL)))
		return -errno;
	err = write_atomic(real, data, len);
	free(real);
	return err;
}

int cmd_record(int argc, char **argv)
{
	struct cli_args a;
	struct snapshot *s = NULL;
	struct strbuf out = STRBUF_INIT;
	int rc, err;

	if (!cli_start(&cmd, argc, argv, &a, &rc))
		goto out;
	/* A record says what the run gets, errors included. */
	a.report_only = true;
	if ((rc = resolve_one(&a, &s)) != 0)
		goto out;
	rc = 2;
	if (view_render(s, VIEW_RECORD, &out) < 0) {
		fprintf(stderr, "primus-envfs: record: out of memory\n");
		goto out;
	}
	if (!a.output || !strcmp(a.output, "-"))
		err = fd_write_all(STDOUT_FILENO, out.buf, out.len);
	else
		err = write_output(a.output, out.buf, out.len);
	if (err < 0) {
		fprintf(stderr, "primus-envfs: record: %s: %s\n",
			a.output && strcmp(a.output, "-") ? a.output : "stdout", strerror(-err));
		goto out;
	}
	rc = 0;
out:
	sb_release(&out);
	snapshot_unref(s);
	inputs_release(&a.ci);
	return rc;
}

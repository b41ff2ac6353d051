/* Who could have written a file; see trust.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trust.h"

/* One object's verdict: 1 fine, 0 not (why filled). what: "" for the
 * file, "directory D " for an ancestor. */
static int judge(const struct stat *st, uid_t uid, bool dir, const char *path,
		 struct strbuf *why)
{
	const char *pre = dir ? "directory " : "";
	int err;

	if (st->st_uid != uid && st->st_uid != 0) {
		err = dir ? sb_addf(why, "directory %s is owned by uid %u", path,
				    (unsigned)st->st_uid)
			  : sb_addf(why, "owned by uid %u", (unsigned)st->st_uid);
		return err < 0 ? err : 0;
	}
	/* In a sticky directory others may add names but not rename or
	 * remove ours. */
	if (dir && (st->st_mode & S_ISVTX))
		return 1;
	if (st->st_mode & (S_IWOTH | S_IWGRP)) {
		const char *who = st->st_mode & S_IWOTH ? "others" : "its group";

		err = dir ? sb_addf(why, "%s%s is writable by %s (mode %04o)", pre, path, who,
				    (unsigned)(st->st_mode & 07777))
			  : sb_addf(why, "writable by %s (mode %04o)", who,
				    (unsigned)(st->st_mode & 07777));
		return err < 0 ? err : 0;
	}
	return 1;
}

int trust_stat(const char *path, const struct stat *st, uid_t uid, struct strbuf *why)
{
	return judge(st, uid, S_ISDIR(st->st_mode), path, why);
}

int trust_path(const char *path, uid_t uid, bool missing_ok, struct strbuf *why)
{
	struct stat st;
	char *dir = NULL, *slash;
	int r;

	if (lstat(path, &st) == 0) {
		if ((r = judge(&st, uid, S_ISDIR(st.st_mode), path, why)) <= 0)
			return r;
	} else if (errno != ENOENT || !missing_ok) {
		return -errno;
	}
	if (!(dir = strdup(path)))
		return -ENOMEM;
	/* Every directory from the file's own up to the root. */
	for (r = 1; r == 1 && (slash = strrchr(dir, '/'));) {
		if (slash == dir)
			slash[1] = '\0';     /* "/" itself */
		else
			*slash = '\0';
		if (stat(dir, &st) < 0) {
			r = -errno;
			break;
		}
		r = judge(&st, uid, true, dir, why);
		if (!strcmp(dir, "/"))
			break;
	}
	free(dir);
	return r;
}

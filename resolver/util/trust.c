/* Who could have written a file; see trust.h. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The kernel's limit (MAXSYMLINKS). */
#define TRUST_MAX_LINKS 40

/* Drops the last component of the absolute path in sb ("/" stays). */
static void drop_last(struct strbuf *sb)
{
	char *slash = strrchr(sb->buf, '/');

	if (!slash)
		return;
	sb->len = slash == sb->buf ? 1 : (size_t)(slash - sb->buf);
	sb->buf[sb->len] = '\0';
}

int trust_links(const char *path, uid_t uid, struct strbuf *why)
{
	struct strbuf cur = STRBUF_INIT, rest = STRBUF_INIT, cand = STRBUF_INIT,
		      phrase = STRBUF_INIT;
	char target[PATH_MAX], cwd[PATH_MAX];
	int links = 0, r;
	ssize_t n;

	/* cur: the part walked so far, absolute and without symlinks (getcwd
	 * gives the physical directory); rest: what is left to walk. */
	r = -ENOMEM;
	if (path[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd))) {
			r = -errno;
			goto out;
		}
		if (sb_adds(&cur, cwd) < 0)
			goto out;
	} else if (sb_adds(&cur, "/") < 0) {
		goto out;
	}
	if (sb_adds(&rest, path) < 0)
		goto out;
	r = 1;
	while (rest.len) {
		const char *p = sb_str(&rest), *end;
		size_t len;
		struct stat st;

		while (*p == '/')
			p++;
		end = strchrnul(p, '/');
		len = (size_t)(end - p);
		if (len == 0)
			break;
		if (len == 1 && p[0] == '.') {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			drop_last(&cur);
		} else {
			sb_reset(&cand);
			if (sb_adds(&cand, sb_str(&cur)) < 0 ||
			    (cand.len > 1 && sb_adds(&cand, "/") < 0) || sb_add(&cand, p, len) < 0) {
				r = -ENOMEM;
				goto out;
			}
			/* A missing part is the loader's to report. */
			if (lstat(sb_str(&cand), &st) < 0)
				goto out;
			if (S_ISLNK(st.st_mode)) {
				r = -ELOOP;
				if (++links > TRUST_MAX_LINKS ||
				    (n = readlink(sb_str(&cand), target, sizeof(target) - 1)) < 0)
					goto out;
				target[n] = '\0';
				/* Whoever can write the link's directory can point it
				 * anywhere: judged as the file's own directories are. */
				sb_reset(&phrase);
				if ((r = trust_path(sb_str(&cur), uid, false, &phrase)) <= 0) {
					if (r == 0 && sb_addf(why, "symlink %s: %s", sb_str(&cand),
							      sb_str(&phrase)) < 0)
						r = -ENOMEM;
					goto out;
				}
				/* Walk the target, then what followed the link. */
				sb_reset(&cand);
				if (sb_adds(&cand, target) < 0 || sb_adds(&cand, end) < 0) {
					r = -ENOMEM;
					goto out;
				}
				if (target[0] == '/') {
					sb_reset(&cur);
					if (sb_adds(&cur, "/") < 0) {
						r = -ENOMEM;
						goto out;
					}
				}
				sb_reset(&rest);
				if (sb_adds(&rest, sb_str(&cand)) < 0) {
					r = -ENOMEM;
					goto out;
				}
				continue;
			}
			sb_reset(&cur);
			if (sb_adds(&cur, sb_str(&cand)) < 0) {
				r = -ENOMEM;
				goto out;
			}
		}
		/* Drop the component just walked from rest. */
		memmove(rest.buf, end, strlen(end) + 1);
		rest.len = strlen(rest.buf);
	}
out:
	sb_release(&cur);
	sb_release(&rest);
	sb_release(&cand);
	sb_release(&phrase);
	return r;
}

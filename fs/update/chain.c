/* The names a path depends on; see chain.h. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chain.h"
#include "strbuf.h"

#define CHAIN_MAX_LINKS 40

/* The next component of *rest (skipping slashes), NUL-terminated in
 * place; NULL at the end. */
static char *next_component(char **rest)
{
	char *c = *rest, *end;

	while (*c == '/')
		c++;
	if (!*c)
		return NULL;
	if ((end = strchr(c, '/'))) {
		*end = '\0';
		*rest = end + 1;
	} else {
		*rest = c + strlen(c);
	}
	return c;
}

static bool more_components(const char *rest)
{
	return rest[strspn(rest, "/")] != '\0';
}

/* Reports (dir, name) with dir the first dlen bytes of path ("/" when
 * empty). */
static int report(const struct strbuf *path, size_t dlen, const char *name,
		  int (*each)(const char *, const char *, void *), void *arg)
{
	char *dir = dlen ? strndup(path->buf, dlen) : strdup("/");
	int r;

	if (!dir)
		return -ENOMEM;
	r = each(dir, name, arg);
	free(dir);
	return r;
}

int chain_walk(const char *path, int (*each)(const char *dir, const char *name, void *arg),
	       void *arg)
{
	struct strbuf real = STRBUF_INIT;    /* resolved so far; "" is / */
	char *buf = NULL, *rest, *c, cwd[PATH_MAX], target[PATH_MAX];
	int hops = 0, err = 0;

	if (path[0] == '/')
		buf = strdup(path);
	else if (getcwd(cwd, sizeof(cwd)) && asprintf(&buf, "%s/%s", cwd, path) < 0)
		buf = NULL;
	if (!buf)
		return -ENOMEM;
	rest = buf;
	while ((c = next_component(&rest))) {
		size_t dlen = real.len;
		struct stat st;
		char *nbuf;
		ssize_t n;

		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			char *slash = real.len ? strrchr(real.buf, '/') : NULL;

			real.len = slash ? (size_t)(slash - real.buf) : 0;
			if (real.buf)
				real.buf[real.len] = '\0';
			continue;
		}
		if ((err = sb_addc(&real, '/')) < 0 || (err = sb_adds(&real, c)) < 0)
			break;
		if (lstat(real.buf, &st) < 0) {
			/* The first missing name: its creation matters. */
			err = report(&real, dlen, c, each, arg);
			break;
		}
		if (!S_ISLNK(st.st_mode)) {
			if (!more_components(rest)) {
				err = report(&real, dlen, c, each, arg);
				break;
			}
			continue;
		}
		if ((err = report(&real, dlen, c, each, arg)) != 0)
			break;
		if (++hops > CHAIN_MAX_LINKS) {
			err = -ELOOP;
			break;
		}
		if ((n = readlink(real.buf, target, sizeof(target) - 1)) < 0)
			break;          /* gone meanwhile: the next reload sees it */
		target[n] = '\0';
		/* The target replaces the link: relative to the link's
		 * directory, or from the root. */
		real.len = target[0] == '/' ? 0 : dlen;
		real.buf[real.len] = '\0';
		if (asprintf(&nbuf, "%s/%s", target, rest) < 0) {
			err = -ENOMEM;
			break;
		}
		free(buf);
		buf = rest = nbuf;
	}
	free(buf);
	sb_release(&real);
	return err;
}

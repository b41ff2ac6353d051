/* Checksum of a specs directory; see specs_digest.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "specs_digest.h"
#include "strbuf.h"

/* The same filter as spec_set_load_dir(). */
static int is_spec_name(const char *name)
{
	size_t len = strlen(name);

	return len >= 6 && !strcmp(name + len - 5, ".yaml") && name[0] != '.';
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Feeds the name, then the bytes, then the length, so no two sets of
 * files hash the same stream. */
static int hash_file(struct sha256_ctx *ctx, const char *dir, const char *name)
{
	struct strbuf path = STRBUF_INIT;
	char buf[16384];
	uint64_t total = 0;
	ssize_t n;
	int fd = -1, err;

	if ((err = sb_addf(&path, "%s/%s", dir, name)) < 0)
		goto out;
	if ((fd = open(sb_str(&path), O_RDONLY | O_CLOEXEC)) < 0) {
		err = -errno;
		goto out;
	}
	sha256_update(ctx, strlen(name) + 1, (const uint8_t *)name);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		sha256_update(ctx, (size_t)n, (const uint8_t *)buf);
		total += (uint64_t)n;
	}
	if (n < 0) {
		err = -errno;
		goto out;
	}
	sha256_update(ctx, sizeof(total), (const uint8_t *)&total);
out:
	if (fd >= 0)
		close(fd);
	sb_release(&path);
	return err;
}

int specs_dir_digest(const char *dir, uint8_t out[SHA256_LEN])
{
	struct sha256_ctx ctx;
	struct dirent *de;
	char **names = NULL, **v;
	size_t n = 0, cap = 0, k;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!is_spec_name(de->d_name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if (!(v = realloc(names, cap * sizeof(*v)))) {
				err = -ENOMEM;
				goto out;
			}
			names = v;
		}
		if (!(names[n] = xstrdup(de->d_name))) {
			err = -ENOMEM;
			goto out;
		}
		n++;
	}
	qsort(names, n, sizeof(*names), name_cmp);
	sha256_init(&ctx);
	for (k = 0; k < n && err == 0; k++)
		err = hash_file(&ctx, dir, names[k]);
	if (err == 0)
		sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
out:
	for (k = 0; k < n; k++)
		free(names[k]);
	free(names);
	closedir(d);
	return err;
}

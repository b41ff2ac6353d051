/* Checksum of a specs directory; see specs_digest.h. */
#include <errno.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "infile.h"
#include "spec.h"
#include "specs_digest.h"
#include "strbuf.h"

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
	/* A FIFO would block: the load that follows says what it is. */
	if ((fd = infile_open(sb_str(&path), NULL)) < 0) {
		err = fd;
		fd = -1;
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
	char **names = NULL;
	size_t n = 0, k;
	int err;

	/* The very files a load reads, in the same order. */
	if ((err = spec_dir_list(dir, &names, &n, NULL)) < 0)
		return err;
	sha256_init(&ctx);
	for (k = 0; k < n && err == 0; k++)
		err = hash_file(&ctx, dir, names[k]);
	if (err == 0)
		sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
	for (k = 0; k < n; k++)
		free(names[k]);
	free(names);
	return err;
}

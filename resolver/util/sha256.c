/* SHA-256 through Nettle; see sha256.h. */
#include <errno.h>
#include <nettle/sha2.h>
#include <unistd.h>

#include "infile.h"
#include "sha256.h"

void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN])
{
	struct sha256_ctx ctx;

	sha256_init(&ctx);
	sha256_update(&ctx, len, data);
	sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
}

void sha256_stream_init(struct sha256_stream *h)
{
	sha256_init(&h->ctx);
}

void sha256_stream_add(struct sha256_stream *h, const void *data, size_t len)
{
	sha256_update(&h->ctx, len, data);
}

void sha256_stream_end(struct sha256_stream *h, uint8_t out[SHA256_LEN])
{
	sha256_digest(&h->ctx, SHA256_DIGEST_SIZE, out);
}

void sha256_hex(const uint8_t sum[SHA256_LEN], char out[2 * SHA256_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < SHA256_LEN; i++) {
		out[2 * i] = hex[sum[i] >> 4];
		out[2 * i + 1] = hex[sum[i] & 15];
	}
	out[2 * SHA256_LEN] = '\0';
}

int sha256_file(const char *path, uint8_t out[SHA256_LEN])
{
	struct sha256_stream h;
	char buf[65536];
	int fd, err = 0;

	if ((fd = infile_open(path, NULL)) < 0)
		return fd;
	sha256_stream_init(&h);
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto out;
		}
		if (r == 0)
			break;
		sha256_stream_add(&h, buf, (size_t)r);
	}
	sha256_stream_end(&h, out);
out:
	close(fd);
	return err;
}

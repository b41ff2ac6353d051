/* SHA-256 through Nettle; see sha256.h. */
#include <nettle/sha2.h>

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

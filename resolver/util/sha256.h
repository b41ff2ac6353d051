/* sha256: the digest view's hash, through GNU Nettle.
 *
 * Nettle rather than OpenSSL's libcrypto: both are well-kept, but loading
 * and initialising libcrypto costs every run of the program about a
 * millisecond (measured with `perf stat`), more than `resolve` spends
 * resolving; Nettle is a small library with no start-up work. Checked
 * against OpenSSL in tests/unit/test_view.c. */
#ifndef ENVFS_SHA256_H
#define ENVFS_SHA256_H

#include <nettle/sha2.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

/* The same over bytes given in pieces. */
struct sha256_stream {
	struct sha256_ctx ctx;
};

void sha256_stream_init(struct sha256_stream *h);
void sha256_stream_add(struct sha256_stream *h, const void *data, size_t len);
void sha256_stream_end(struct sha256_stream *h, uint8_t out[SHA256_LEN]);

#endif

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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

/* The same over bytes given in pieces. */
struct sha256_stream {
	struct sha256_ctx ctx;
};

/* The lowercase hex of a digest, NUL-ended. */
void sha256_hex(const uint8_t sum[SHA256_LEN], char out[2 * SHA256_LEN + 1]);
/* SHA-256 of a regular file's bytes (infile_open's rules: a FIFO or a
 * device is refused with -EINVAL). Returns 0 or a negative errno. */
int sha256_file(const char *path, uint8_t out[SHA256_LEN]);

/* An input file's digest, taken by its loader over the bytes it parsed,
 * so a run record names what was loaded without reading the file again. */
struct file_digest {
	bool has;                      /* false: the loader read no bytes */
	uint8_t sum[SHA256_LEN];
};

void sha256_stream_init(struct sha256_stream *h);
void sha256_stream_add(struct sha256_stream *h, const void *data, size_t len);
void sha256_stream_end(struct sha256_stream *h, uint8_t out[SHA256_LEN]);

#endif

/* sha256: the digest view's hash, through GNU Nettle.
 *
 * Nettle rather than OpenSSL's libcrypto: both are well-kept, but loading
 * and initialising libcrypto costs every run of the program about a
 * millisecond (measured with `perf stat`), more than `resolve` spends
 * resolving; Nettle is a small library with no start-up work. Checked
 * against OpenSSL in tests/unit/test_view.c. */
#ifndef ENVFS_SHA256_H
#define ENVFS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

#endif

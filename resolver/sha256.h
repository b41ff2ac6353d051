/* sha256: FIPS 180-4 SHA-256 of a byte string, for the digest view.
 *
 * In-tree rather than libcrypto: linking OpenSSL costs every invocation of
 * the program about a millisecond of dynamic loading and initialisation
 * (measured with `perf stat`), more than `resolve` spends resolving; one
 * hash of a few kilobytes per directory needs none of it. Checked against
 * OpenSSL in tests/unit/test_view.c. */
#ifndef ENVFS_SHA256_H
#define ENVFS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

#endif

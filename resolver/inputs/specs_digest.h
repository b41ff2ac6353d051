/* specs_digest: a checksum of a specs directory's *.yaml files, names and
 * bytes, so a reload can tell that the specs did not change (an editor or
 * a deployment tool rewriting a file as it was moves its mtime, not its
 * bytes) and keep the specs it already loaded. */
#ifndef ENVFS_SPECS_DIGEST_H
#define ENVFS_SPECS_DIGEST_H

#include <stdint.h>

#include "sha256.h"

/* SHA-256 over every *.yaml file of dir (the files spec_set_load_dir()
 * reads), in name order. Returns 0 or a negative errno. */
int specs_dir_digest(const char *dir, uint8_t out[SHA256_LEN]);

#endif

/* hindex: a hash index over an array the caller keeps, for finding an
 * entry by its key in constant time where a linear scan would make a
 * load of n keys cost n^2 (the overrides, the --sync daemon's keys).
 *
 * The index holds entry numbers (positions in the caller's array) and the
 * low bits of each key's hash, never the keys: the caller hashes a key
 * with hindex_hash, walks the entries with that hash with
 * hindex_first/hindex_next and compares keys itself. Open addressing with
 * linear probing, at most three quarters full (half full cost the daemon
 * 0.4 MiB at 10,000 variables, for a probe or two fewer: the 32 hash
 * bits kept make a probe one compare); removal shifts the probe run back,
 * so no tombstones build up.
 *
 *   uint64_t h = hindex_hash(name, strlen(name), HINDEX_SEED);
 *   struct hindex_probe p;
 *   for (size_t i = hindex_first(&ix, h, &p); i != HINDEX_NONE; i = hindex_next(&ix, &p))
 *           if (!strcmp(v[i].name, name))
 *                   return &v[i];
 */
#ifndef ENVFS_HINDEX_H
#define ENVFS_HINDEX_H

#include <stddef.h>
#include <stdint.h>

#define HINDEX_NONE ((size_t)-1)
/* The hash of no bytes (FNV-1a's offset basis): the seed of a key's first
 * piece; a key of several pieces chains each hash into the next. */
#define HINDEX_SEED 1469598103934665603ull

struct hindex_slot {
	uint32_t entry;               /* entry number + 1; 0: empty */
	uint32_t hash;                /* the key's hash, low 32 bits */
};

struct hindex {
	struct hindex_slot *slots;    /* owned; NULL until the first insert */
	size_t mask;                  /* slot count - 1 */
	size_t n;                     /* entries indexed */
};

struct hindex_probe {
	size_t pos;
	uint32_t hash;
};

/* FNV-1a over n bytes of s, continuing from seed. */
uint64_t hindex_hash(const void *s, size_t n, uint64_t seed);
/* Adds entry (below UINT32_MAX) under hash, growing the index. Returns 0
 * or -ENOMEM (the index unchanged). */
int hindex_insert(struct hindex *ix, uint64_t hash, size_t entry);
/* The first entry indexed under hash (HINDEX_NONE: none), then the
 * next one; entries of other keys whose hash agrees come too. */
size_t hindex_first(const struct hindex *ix, uint64_t hash, struct hindex_probe *p);
size_t hindex_next(const struct hindex *ix, struct hindex_probe *p);
/* Forgets entry, indexed under hash. */
void hindex_remove(struct hindex *ix, uint64_t hash, size_t entry);
/* Entry from, indexed under hash, is now at position to (the caller
 * moved it in its array). */
void hindex_move(struct hindex *ix, uint64_t hash, size_t from, size_t to);
void hindex_release(struct hindex *ix);

#endif

/* arena: bump allocation for a snapshot's strings and arrays, freed at once. */
#ifndef ENVFS_ARENA_H
#define ENVFS_ARENA_H

#include <stddef.h>

struct arena;

/* Returns a new arena (caller-owned, arena_free()) or NULL. */
struct arena *arena_new(void);
/* Zeroed, max-aligned memory owned by a; NULL on out of memory. */
void *arena_alloc(struct arena *a, size_t size);
/* The same, not zeroed: for a caller that writes every byte anyway. */
void *arena_alloc_uninit(struct arena *a, size_t size);
/* Zeroed, unaligned bytes owned by a, for text; NULL on out of memory. */
char *arena_alloc_text(struct arena *a, size_t size);
/* NUL-terminated copy of n bytes owned by a; NULL on out of memory. */
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_strdup(struct arena *a, const char *s);
/* Total bytes held (for memory accounting). */
size_t arena_bytes(const struct arena *a);
/* Frees everything a holds, keeping one chunk for what comes next: an
 * arena reused for many short-lived things. */
void arena_clear(struct arena *a);
void arena_free(struct arena *a);

#endif

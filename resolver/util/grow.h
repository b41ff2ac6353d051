/* grow: the one way this code's arrays grow. An array is a pointer, a
 * count the caller keeps and a capacity; grow() makes room for one more
 * element, doubling the capacity from a first size, with the size
 * overflow checked. On failure nothing changes, so the caller's array
 * stays valid (and its to free).
 *
 *   if ((err = GROW(l->v, l->cap, l->n, 8)) < 0)
 *           return err;
 *   l->v[l->n++] = x;
 */
#ifndef ENVFS_GROW_H
#define ENVFS_GROW_H

#include <stddef.h>

/* *(void **)arrayp holds at least n + 1 elements of elem bytes after a
 * return of 0: when n == *cap it is reallocated to twice *cap (first
 * when *cap is 0) and *cap updated. -ENOMEM, nothing changed, when the
 * allocation fails or the size overflows. arrayp is the address of the
 * array's pointer (T **), read and written as bytes so that any T works
 * without aliasing through void **. */
int grow(void *arrayp, size_t *cap, size_t n, size_t elem, size_t first);

#define GROW(v, cap, n, first) grow(&(v), &(cap), (n), sizeof(*(v)), (first))

#endif

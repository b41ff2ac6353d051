/* grow: see grow.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

int grow(void *arrayp, size_t *cap, size_t n, size_t elem, size_t first)
{
	size_t ncap;
	void *v, *nv;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap : (first ? first : 1);
	if (*cap) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap <= n)
		ncap = n + 1;
	if (!elem || ncap > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&v, arrayp, sizeof(v));
	if (!(nv = realloc(v, ncap * elem)))
		return -ENOMEM;
	memcpy(arrayp, &nv, sizeof(nv));
	*cap = ncap;
	return 0;
}

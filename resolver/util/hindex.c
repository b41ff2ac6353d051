/* The hash index; see hindex.h. */
#include "hindex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t hindex_hash(const void *s, size_t n, uint64_t seed)
{
	const unsigned char *p = s;
	uint64_t h = seed;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static void place(struct hindex_slot *slots, size_t mask, struct hindex_slot s)
{
	size_t i;

	for (i = s.hash & mask; slots[i].entry; i = (i + 1) & mask)
		;
	slots[i] = s;
}

static int rehash(struct hindex *ix)
{
	size_t nslots = ix->slots ? 2 * (ix->mask + 1) : 64, i;
	struct hindex_slot *slots;

	/* Slot positions come from the 32 bits kept. */
	if (nslots > ((size_t)1 << 31) || !(slots = calloc(nslots, sizeof(*slots))))
		return -ENOMEM;
	for (i = 0; ix->slots && i <= ix->mask; i++)
		if (ix->slots[i].entry)
			place(slots, nslots - 1, ix->slots[i]);
	free(ix->slots);
	ix->slots = slots;
	ix->mask = nslots - 1;
	return 0;
}

int hindex_insert(struct hindex *ix, uint64_t hash, size_t entry)
{
	int err;

	if (entry >= UINT32_MAX)
		return -ENOMEM;
	if ((!ix->slots || 4 * (ix->n + 1) > 3 * (ix->mask + 1)) && (err = rehash(ix)) < 0)
		return err;
	place(ix->slots, ix->mask, (struct hindex_slot){ (uint32_t)entry + 1, (uint32_t)hash });
	ix->n++;
	return 0;
}

size_t hindex_next(const struct hindex *ix, struct hindex_probe *p)
{
	for (; ix->slots && ix->slots[p->pos].entry; p->pos = (p->pos + 1) & ix->mask) {
		const struct hindex_slot *s = &ix->slots[p->pos];

		if (s->hash == p->hash) {
			p->pos = (p->pos + 1) & ix->mask;
			return s->entry - 1;
		}
	}
	return HINDEX_NONE;
}

size_t hindex_first(const struct hindex *ix, uint64_t hash, struct hindex_probe *p)
{
	p->hash = (uint32_t)hash;
	p->pos = ix->slots ? p->hash & ix->mask : 0;
	return hindex_next(ix, p);
}

/* The slot of entry under hash, or HINDEX_NONE. */
static size_t slot_of(const struct hindex *ix, uint64_t hash, size_t entry)
{
	size_t i;

	for (i = ix->slots ? (uint32_t)hash & ix->mask : 0; ix->slots && ix->slots[i].entry;
	     i = (i + 1) & ix->mask)
		if (ix->slots[i].entry == entry + 1)
			return i;
	return HINDEX_NONE;
}

void hindex_remove(struct hindex *ix, uint64_t hash, size_t entry)
{
	size_t hole = slot_of(ix, hash, entry), j, home;

	if (hole == HINDEX_NONE)
		return;
	/* Every later slot of the run that may sit in the hole (its home is
	 * not between the hole and itself) moves back into it. */
	for (j = (hole + 1) & ix->mask; ix->slots[j].entry; j = (j + 1) & ix->mask) {
		home = ix->slots[j].hash & ix->mask;
		if (((j - home) & ix->mask) >= ((j - hole) & ix->mask)) {
			ix->slots[hole] = ix->slots[j];
			hole = j;
		}
	}
	ix->slots[hole].entry = 0;
	ix->n--;
}

void hindex_move(struct hindex *ix, uint64_t hash, size_t from, size_t to)
{
	size_t i = slot_of(ix, hash, from);

	if (i != HINDEX_NONE)
		ix->slots[i].entry = (uint32_t)to + 1;
}

void hindex_release(struct hindex *ix)
{
	free(ix->slots);
	memset(ix, 0, sizeof(*ix));
}

/* Snapshot lookup and lifetime. The resolver builds a snapshot; after that
 * nothing writes to it but the reference count, so readers need no lock. */
#include "snapshot.h"
#include "spec_share.h"

#include <stdlib.h>
#include <string.h>

/* Byte order, then length: the order the resolver sorts vars in, so the
 * binary search and the views agree on it. */
static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c)
		return c;
	return alen < blen ? -1 : alen > blen;
}

const struct snap_var *snapshot_find(const struct snapshot *s, const char *name,
				     size_t name_len)
{
	size_t lo = 0, hi;

	if (!s || !name)
		return NULL;
	hi = s->nvars;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct snap_var *v = &s->vars[mid];
		int c = name_cmp(name, name_len, v->name, v->name_len);

		if (c == 0)
			return v;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

struct snapshot *snapshot_ref(struct snapshot *s)
{
	if (s)
		atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	return s;
}

void snapshot_unref(struct snapshot *s)
{
	if (!s)
		return;
	/* acq_rel: the thread that frees must see every other holder's reads
	 * finished, as with any refcount. */
	if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	diag_list_release(&s->diags);
	arena_free(s->arena);
	free(s->vars);
	spec_share_unref(s->specs);
	free(s);
}

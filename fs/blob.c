/* Reference-counted immutable bytes; see blob.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"

int blob_new(const void *data, size_t len, struct blob **out)
{
	struct blob *b = malloc(sizeof(*b) + len + 1);

	if (!b)
		return -ENOMEM;
	atomic_init(&b->refs, 1);
	b->len = len;
	if (len)
		memcpy(b->data, data, len);
	/* A NUL after the bytes lets text blobs be used as C strings. */
	b->data[len] = '\0';
	*out = b;
	return 0;
}

int blob_from_sb(const struct strbuf *sb, struct blob **out)
{
	return blob_new(sb->buf ? sb->buf : "", sb->len, out);
}

struct blob *blob_ref(struct blob *b)
{
	atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
	return b;
}

void blob_unref(struct blob *b)
{
	if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
		free(b);
}

int blob_equal(const struct blob *a, const struct blob *b)
{
	if (!a || !b)
		return a == b;
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

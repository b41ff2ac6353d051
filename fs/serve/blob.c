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
	b->data = b->inline_data;
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

int blob_take_sb(struct strbuf *sb, struct blob **out)
{
	struct blob *b;
	char *p;

	if (!sb->buf)
		return blob_new("", 0, out);
	if (!(b = malloc(sizeof(*b)))) {
		sb_release(sb);
		return -ENOMEM;
	}
	atomic_init(&b->refs, 1);
	b->len = sb->len;
	p = sb_detach(sb, NULL);
	/* Give back the doubling's slack: above the mmap threshold this is
	 * an mremap, so the pages go back to the kernel. */
	b->data = realloc(p, b->len + 1) ?: p;
	*out = b;
	return 0;
}

struct blob *blob_ref(struct blob *b)
{
	atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
	return b;
}

void blob_unref(struct blob *b)
{
	if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (b->data != b->inline_data)
		free(b->data);
	free(b);
}

int blob_equal(const struct blob *a, const struct blob *b)
{
	if (!a || !b)
		return a == b;
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

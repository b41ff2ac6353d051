/* The node-independent digest of a directory; see node_digest.h. */
#include "node_digest.h"

#include <errno.h>

static const char node_digest_head[] = "primus-envfs node-digest 1\n";

bool node_digest_counts(const struct snap_var *v)
{
	return v->set && v->exported && v->value && !v->node;
}

void node_digest_init(struct sha256_stream *h)
{
	sha256_stream_init(h);
	sha256_stream_add(h, node_digest_head, sizeof(node_digest_head) - 1);
}

void node_digest_add(struct sha256_stream *h, const char *name, size_t name_len,
		     const uint8_t *value_hash)
{
	static const char nul = '\0';

	sha256_stream_add(h, name, name_len);
	sha256_stream_add(h, &nul, 1);
	if (value_hash) {
		sha256_stream_add(h, "v", 1);
		sha256_stream_add(h, value_hash, SHA256_LEN);
	} else {
		sha256_stream_add(h, "s", 1);
	}
}

void node_digest_end(struct sha256_stream *h, uint8_t out[SHA256_LEN])
{
	sha256_stream_end(h, out);
}

int node_digest(const struct snapshot *s, uint8_t out[SHA256_LEN])
{
	struct sha256_stream h;
	uint8_t vh[SHA256_LEN];
	size_t k;

	if (!s)
		return -EINVAL;
	node_digest_init(&h);
	/* snapshot vars are sorted by name in byte order already. */
	for (k = 0; k < s->nvars; k++) {
		const struct snap_var *v = &s->vars[k];

		if (!node_digest_counts(v))
			continue;
		if (!v->secret)
			sha256(v->value, v->value_len, vh);
		node_digest_add(&h, v->name, v->name_len, v->secret ? NULL : vh);
	}
	node_digest_end(&h, out);
	return 0;
}

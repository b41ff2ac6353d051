/* The reads of the whole overrides prefix: at start-up and after the
 * watch lost its place (a compaction, a batch it could not read); see
 * syncd_internal.h.
 *
 * Whatever else the prefix holds must not stop a node: more keys than
 * one range returns, keys that are not overrides with values of any size.
 * So the prefix is read in pages of keys alone, all at the revision of
 * the first page, and the values are read only for keys that name an
 * override, in batches of neighbouring keys (a batch whose reply is over
 * the client's limit is split until it fits; a single value over it
 * cannot be an override, whose values are far smaller). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "log.h"
#include "syncd_internal.h"
#include "text.h"

/* Keys per page of the listing, and override values per read. A value
 * is at most STATEFILE_VALUE_MAX bytes: 256 of them, in base64, stay
 * under the client's reply limit. */
#define PAGE_KEYS 1000
#define VALUE_BATCH 256
/* A read whose revision is compacted meanwhile starts again, this often. */
#define READ_TRIES 3
/* At start-up, keys that are not overrides are named up to this many. */
#define JUNK_NAMED 10

struct reader {
	struct syncd *sd;
	struct etcd_client *c;
	bool startup;
	bool serializable;             /* every page the member's own */
	int64_t rev;
	struct syncd_item *head, **tail;
	size_t njunk;
	/* The override keys listed but not read yet, and the key listed
	 * before the first of them (NULL: none, the prefix's start). */
	char **keys;
	size_t nkeys, capkeys;
	char *before;
};

/* At start-up the caller says it, once it stops trying. */
static void fail_msg(struct reader *r, const char *what)
{
	if (!r->startup)
		syncd_set_error(r->sd, what, r->sd->api->errmsg(r->c));
}

static void junk(struct reader *r, const char *key, size_t len, const char *why)
{
	struct strbuf q = STRBUF_INIT;

	r->njunk++;
	if (!r->startup) {
		syncd_set_error(r->sd, "read", "ignored a key that is not an override (docs/SYNC.md)");
		return;
	}
	if (r->njunk > JUNK_NAMED || r->sd->junk_named)
		return;
	/* Quoted and escaped: a key is any bytes, and one holding a newline
	 * or a terminal escape must not forge log lines. */
	if (text_quote(&q, key, len, 300) == 0)
		log_warn("--sync: ignoring %s: not an override%s (docs/SYNC.md)",
			sb_str(&q), why);
	sb_release(&q);
}

static bool is_override_key(struct syncd *sd, const char *key)
{
	char buf[1024], *b, *a, *n;

	return !strncmp(key, sd->prefix, sd->prefix_len) &&
	       syncd_key_split(key + sd->prefix_len, buf, sizeof(buf), &b, &a, &n);
}

static void keys_clear(struct reader *r)
{
	for (size_t i = 0; i < r->nkeys; i++)
		free(r->keys[i]);
	r->nkeys = 0;
}

/* Moves *before to key (a copy). */
static int set_before(struct reader *r, const char *key)
{
	char *k = strdup(key);

	if (!k)
		return -ENOMEM;
	free(r->before);
	r->before = k;
	return 0;
}

/* Reads the values of the keys listed, in batches. */
static int flush(struct reader *r)
{
	struct syncd *sd = r->sd;
	size_t i = 0, m = VALUE_BATCH;
	int err = 0;

	while (i < r->nkeys) {
		struct etcd_range_req rq = { .prefix = sd->prefix, .after = r->before,
					     .revision = r->rev,
					     .serializable = r->serializable };
		struct etcd_range page = { 0 };

		if (m > r->nkeys - i)
			m = r->nkeys - i;
		rq.last = r->keys[i + m - 1];
		rq.limit = m;
		err = sd->api->range_read(r->c, &rq, &page);
		if (err == -EMSGSIZE && m > 1) {
			m /= 2;
			continue;
		}
		if (err == -EMSGSIZE) {
			/* One value over the limit: no override's. */
			junk(r, r->keys[i], strlen(r->keys[i]), ", its value is too large");
			err = 0;
		} else if (err < 0) {
			sd->api->range_free(&page);
			break;
		}
		for (size_t k = 0; k < page.n; k++) {
			const struct etcd_kv *kv = &page.kvs[k];
			struct syncd_item *it;

			err = syncd_item_of(sd, kv->key, kv->value, kv->value_len, false,
					    kv->mod_revision, &it);
			if (err == -EINVAL) {
				err = 0;
				junk(r, kv->key, kv->key_len, "");
				continue;
			}
			if (err < 0)
				break;
			*r->tail = it;
			r->tail = &it->next;
		}
		sd->api->range_free(&page);
		if (err < 0 || (err = set_before(r, r->keys[i + m - 1])) < 0)
			break;
		i += m;
	}
	keys_clear(r);
	return err;
}

static int add_key(struct reader *r, const char *key)
{
	if (GROW(r->keys, r->capkeys, r->nkeys, 64) < 0)
		return -ENOMEM;
	if (!(r->keys[r->nkeys] = strdup(key)))
		return -ENOMEM;
	r->nkeys++;
	return 0;
}

/* One read of the whole prefix into r's list. */
static int read_once(struct reader *r)
{
	struct syncd *sd = r->sd;
	char *after = NULL;
	int err = 0;

	for (;;) {
		struct etcd_range_req rq = { .prefix = sd->prefix, .after = after,
					     .limit = PAGE_KEYS, .revision = r->rev,
					     .keys_only = true, .serializable = r->serializable };
		struct etcd_range page = { 0 };
		bool more;

		if ((err = sd->api->range_read(r->c, &rq, &page)) < 0) {
			sd->api->range_free(&page);
			break;
		}
		if (!r->rev)
			r->rev = page.revision;
		for (size_t k = 0; k < page.n && err == 0; k++) {
			const struct etcd_kv *kv = &page.kvs[k];

			if (is_override_key(sd, kv->key)) {
				err = add_key(r, kv->key);
				continue;
			}
			if ((err = flush(r)) < 0 || (err = set_before(r, kv->key)) < 0)
				break;
			junk(r, kv->key, kv->key_len, "");
		}
		more = page.more && page.n;
		free(after);
		after = page.n ? strdup(page.kvs[page.n - 1].key) : NULL;
		sd->api->range_free(&page);
		if (err == 0 && more && !after)
			err = -ENOMEM;
		if (err < 0 || !more)
			break;
	}
	if (err == 0)
		err = flush(r);
	free(after);
	return err;
}

int syncd_read_prefix(struct syncd *sd, struct etcd_client *c, bool startup,
		      bool serializable, struct syncd_item **out, int64_t *revision)
{
	struct reader r = { .sd = sd, .c = c, .startup = startup,
			    .serializable = serializable };
	int err = 0;

	for (int t = 0; t < READ_TRIES; t++) {
		r.rev = 0;
		r.njunk = 0;
		r.head = NULL;
		r.tail = &r.head;
		free(r.before);
		r.before = NULL;
		keys_clear(&r);
		if ((err = read_once(&r)) != -ESTALE)
			break;
		/* Compacted past the first page's revision while reading. */
		syncd_items_free(r.head);
		r.head = NULL;
	}
	if (err < 0) {
		if (err != -ENOMEM)
			fail_msg(&r, "read");
		syncd_items_free(r.head);
		goto out;
	}
	if (startup && r.njunk > JUNK_NAMED && !sd->junk_named)
		log_warn("--sync: ignoring %zu more keys that are not "
			"overrides (docs/SYNC.md)", r.njunk - JUNK_NAMED);
	if (startup && r.njunk) {
		char msg[120];

		sd->junk_named = true;
		/* status says it, as the watch and a resync do for theirs. */
		if (r.njunk == 1)
			snprintf(msg, sizeof(msg), "ignored 1 key that is not an override "
				 "(docs/SYNC.md)");
		else
			snprintf(msg, sizeof(msg), "ignored %zu keys that are not overrides "
				 "(docs/SYNC.md)", r.njunk);
		syncd_set_error(sd, "start-up read", msg);
	}
	*out = r.head;
	*revision = r.rev;
out:
	keys_clear(&r);
	free(r.keys);
	free(r.before);
	return err;
}

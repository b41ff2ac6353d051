/* syncd_items: a key and value of the run as the applier's item, for the
 * watch, the reads of the prefix and a commit's refresh alike. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "syncd_internal.h"

int syncd_item_of(struct syncd *sd, const char *key, const char *v, size_t vlen, bool drop,
		  int64_t rev, struct syncd_item **out)
{
	struct syncd_item *it;
	const char *value = NULL;
	size_t len = 0;
	char buf[1024], *b, *a, *n;

	if (strncmp(key, sd->prefix, sd->prefix_len) ||
	    !syncd_key_split(key + sd->prefix_len, buf, sizeof(buf), &b, &a, &n) ||
	    (!drop && syncd_value_decode(v, vlen, &value, &len) < 0))
		return -EINVAL;
	if (!(it = calloc(1, sizeof(*it))) || !(it->key = strdup(key + sd->prefix_len)) ||
	    (value && !(it->value = xstrndup(value, len)))) {
		if (it)
			free(it->key);
		free(it);
		return -ENOMEM;
	}
	it->kind = IT_CHANGE;
	it->len = len;
	it->drop = drop;
	it->rev = rev;
	*out = it;
	return 0;
}

void syncd_items_free(struct syncd_item *it)
{
	while (it) {
		struct syncd_item *next = it->next;

		free(it->key);
		free(it->value);
		free(it);
		it = next;
	}
}

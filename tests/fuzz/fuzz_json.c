/* libFuzzer harness: the strict JSON reader and its streaming form, which
 * must accept and refuse the same documents whatever it hands over or
 * drops (the grammar is one), and the run record decoder over them.
 *
 *   FUZZ_ONLY=json tests/fuzz/run.sh 60 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "run_record_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the walks read, kept so they are not optimized away. */
static volatile size_t sink;

/* Every byte of every string under v, read (so a value freed too early
 * is a use after free under ASan). */
static size_t walk(const struct json_value *v, unsigned depth)
{
	size_t sum = 0, k;

	if (!v || depth > JSON_DEPTH + 1)
		return 0;
	if (v->type == JSON_STRING)
		for (k = 0; k < v->len; k++)
			sum += (unsigned char)v->s[k];
	if (v->type == JSON_ARRAY)
		for (k = 0; k < v->len; k++)
			sum += walk(v->items[k], depth + 1);
	if (v->type == JSON_OBJECT)
		for (k = 0; k < v->len; k++)
			sum += v->members[k].key_len + walk(v->members[k].val, depth + 1);
	return sum;
}

static int begin(void *ctx, size_t key)
{
	(void)key;
	++*(size_t *)ctx;
	return 0;
}

static int item(void *ctx, size_t key, const struct json_value *v)
{
	(void)key;
	*(size_t *)ctx += walk(v, 3);
	return 0;
}

/* About half of an item's members, by their first byte. */
static bool keep(void *ctx, size_t key, const char *member, size_t len)
{
	(void)ctx;
	(void)key;
	return len && (member[0] & 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "variables", "diagnostics", "environ", "a", NULL };
	const char *p = (const char *)data;
	size_t seen = 0;
	struct json_stream st = { keys, begin, item, keep, &seen };
	struct json_value *tree = NULL, *streamed = NULL;
	struct rr_doc *doc = NULL;
	char msg[256];
	int a, b, r;

	a = json_parse(p, size, &tree);
	b = json_parse_stream(p, size, &st, &streamed);
	if (a != b && a != -ENOMEM && b != -ENOMEM)
		abort();
	if (a == 0)
		seen += walk(tree, 1);
	if (b == 0)
		seen += walk(streamed, 1);
	json_free(tree);
	json_free(streamed);
	r = run_record_decode(p, size, &doc, msg, sizeof(msg));
	if (r != 0 && r != -EPROTO && r != -ENOMEM && r != -EMSGSIZE)
		abort();
	if (r == 0 && (!doc || !doc->backend || !doc->arch))
		abort();
	if (r < 0 && (doc || !msg[0]))
		abort();
	rr_doc_free(doc);
	sink = seen;
	return 0;
}

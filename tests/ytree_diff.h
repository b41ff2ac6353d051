/* ytree_diff: where two YAML trees, or two diagnostic lists, first differ.
 * Shared by the tests that hold the fast YAML path to libyaml's answers
 * (tests/unit/test_yaml_fast.c, tests/fuzz/fuzz_yaml.c), so the unit test
 * and the fuzzer check exactly the same things. Header-only: each test
 * includes it once. */
#ifndef ENVFS_TESTS_YTREE_DIFF_H
#define ENVFS_TESTS_YTREE_DIFF_H

#include <stdbool.h>
#include <string.h>

#include "diag.h"
#include "strbuf.h"
#include "yaml_tree.h"

/* True when the trees differ (kind, place, tag, scalar bytes and style,
 * children), with the first difference described in why. */
static bool ytree_differ(const struct ynode *a, const struct ynode *b, struct strbuf *why)
{
	size_t i, na, nb;

	if (!a || !b) {
		if (a != b)
			sb_adds(why, "one root is NULL");
		return a != b;
	}
	if (a->kind != b->kind || a->line != b->line || a->col != b->col) {
		sb_addf(why, "node %u:%u kind %d vs %u:%u kind %d", a->line, a->col,
			a->kind, b->line, b->col, b->kind);
		return true;
	}
	if (!a->tag != !b->tag || (a->tag && strcmp(a->tag, b->tag))) {
		sb_addf(why, "tags differ at %u:%u", a->line, a->col);
		return true;
	}
	switch (a->kind) {
	case YN_SCALAR:
		if (a->len != b->len || memcmp(a->str, b->str, a->len) ||
		    a->style != b->style || a->str[a->len] || b->str[b->len]) {
			sb_addf(why, "scalar at %u:%u: \"%.*s\" (%d) vs \"%.*s\" (%d)",
				a->line, a->col, (int)a->len, a->str, a->style,
				(int)b->len, b->str, b->style);
			return true;
		}
		return false;
	case YN_SEQ:
		na = a->nitems;
		nb = b->nitems;
		break;
	case YN_MAP:
		na = a->npairs;
		nb = b->npairs;
		break;
	default:
		return false;
	}
	if (na != nb) {
		sb_addf(why, "%zu vs %zu children at %u:%u", na, nb, a->line, a->col);
		return true;
	}
	for (i = 0; i < na; i++)
		if (a->kind == YN_SEQ ? ytree_differ(a->items[i], b->items[i], why)
				      : ytree_differ(a->pairs[i].key, b->pairs[i].key, why) ||
					ytree_differ(a->pairs[i].val, b->pairs[i].val, why))
			return true;
	return false;
}

/* True when the lists differ (count, or any formatted diagnostic), with
 * the first difference described in why. */
static bool ydiags_differ(const struct diag_list *a, const struct diag_list *b,
			  struct strbuf *why)
{
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	bool differ = a->n != b->n;
	size_t i;

	if (differ)
		sb_addf(why, "%zu vs %zu diagnostics", a->n, b->n);
	for (i = 0; i < a->n && !differ; i++) {
		sb_reset(&x);
		sb_reset(&y);
		diag_format(&a->v[i], &x);
		diag_format(&b->v[i], &y);
		if ((differ = strcmp(sb_str(&x), sb_str(&y)) != 0))
			sb_addf(why, "\"%s\" vs \"%s\"", sb_str(&x), sb_str(&y));
	}
	sb_release(&x);
	sb_release(&y);
	return differ;
}

#endif

/* The hash index (resolver/util/hindex.c) and the override set over it:
 * every entry found after inserts, removals that shift probe runs back
 * and moves, checked against what a linear scan finds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hindex.h"
#include "resolve.h"

#define N 5000

/* Every key whose hash has few distinct bits, so probe runs are long
 * and removal has runs to repair. */
static uint64_t weak_hash(size_t key)
{
	return (uint64_t)(key % 37);
}

static size_t find(const struct hindex *ix, const size_t *keys, size_t key)
{
	struct hindex_probe p;
	size_t i;

	for (i = hindex_first(ix, weak_hash(key), &p); i != HINDEX_NONE; i = hindex_next(ix, &p))
		if (keys[i] == key)
			return i;
	return HINDEX_NONE;
}

static void test_hindex__finds_after_removals_and_moves(void **state)
{
	struct hindex ix = { 0 };
	size_t *keys = calloc(N, sizeof(*keys)), n = 0, k, r;

	(void)state;
	assert_non_null(keys);
	for (k = 0; k < N; k++) {
		keys[n] = k * 7 + 1;
		assert_int_equal(hindex_insert(&ix, weak_hash(keys[n]), n), 0);
		n++;
	}
	/* Removes every third key as an array would: the last entry moves
	 * into the hole. */
	for (r = 0; r < N; r += 3) {
		size_t key = r * 7 + 1, at = find(&ix, keys, key);

		assert_int_not_equal(at, HINDEX_NONE);
		hindex_remove(&ix, weak_hash(key), at);
		if (at != n - 1) {
			hindex_move(&ix, weak_hash(keys[n - 1]), n - 1, at);
			keys[at] = keys[n - 1];
		}
		n--;
	}
	assert_int_equal(ix.n, n);
	for (k = 0; k < N; k++) {
		size_t at = find(&ix, keys, k * 7 + 1);

		if (k % 3 == 0)
			assert_int_equal(at, HINDEX_NONE);
		else
			assert_true(at != HINDEX_NONE && keys[at] == k * 7 + 1);
	}
	assert_int_equal(find(&ix, keys, 2), HINDEX_NONE);
	hindex_release(&ix);
	free(keys);
}

/* What the inode table's rename relies on: a number taken out from under
 * one hash and put in under another is found under the new one only, and
 * putting an entry back into the room another left never grows the index
 * (so it cannot fail). */
static void test_hindex__an_entry_put_back_takes_no_growth(void **state)
{
	struct hindex ix = { 0 };
	struct hindex_slot *slots;
	struct hindex_probe p;
	size_t k, mask;

	(void)state;
	/* 64 slots hold 48 entries (three quarters) before the next one
	 * grows them. */
	for (k = 0; k < 48; k++)
		assert_int_equal(hindex_insert(&ix, weak_hash(k), k), 0);
	slots = ix.slots;
	mask = ix.mask;
	hindex_remove(&ix, weak_hash(5), 5);
	assert_int_equal(hindex_insert(&ix, 1000, 5), 0);
	assert_ptr_equal(ix.slots, slots);
	assert_int_equal(ix.mask, mask);
	assert_int_equal(hindex_first(&ix, 1000, &p), 5);
	assert_int_equal(hindex_next(&ix, &p), HINDEX_NONE);
	for (k = hindex_first(&ix, weak_hash(5), &p); k != HINDEX_NONE; k = hindex_next(&ix, &p))
		assert_int_not_equal(k, 5);
	/* Full again: the next one grows it. */
	assert_int_equal(hindex_insert(&ix, weak_hash(48), 48), 0);
	assert_int_equal(ix.mask, 2 * mask + 1);
	hindex_release(&ix);
}

static void test_hindex__override_set_finds_what_it_holds(void **state)
{
	struct override_set ov = { 0 };
	char name[32], value[32];
	size_t k;

	(void)state;
	for (k = 0; k < N; k++) {
		snprintf(name, sizeof(name), "V%05zu", k);
		snprintf(value, sizeof(value), "%zu", k);
		assert_int_equal(override_set_put(&ov, k % 2 ? "b1" : "b2", "a", name, value,
						  strlen(value)), 0);
	}
	/* The same names again: replaced, not added. */
	assert_int_equal(override_set_put(&ov, "b1", "a", "V00001", "x", 1), 0);
	assert_int_equal(ov.n, N);
	for (k = 0; k < N; k += 2) {
		snprintf(name, sizeof(name), "V%05zu", k);
		assert_int_equal(override_set_drop(&ov, "b2", "a", name), 0);
	}
	assert_int_equal(ov.n, N / 2);
	for (k = 0; k < N; k++) {
		const struct override *o;

		snprintf(name, sizeof(name), "V%05zu", k);
		o = override_set_find(&ov, k % 2 ? "b1" : "b2", "a", name);
		if (k % 2 == 0) {
			assert_null(o);
			continue;
		}
		assert_non_null(o);
		snprintf(value, sizeof(value), "%zu", k);
		assert_string_equal(o->value, k == 1 ? "x" : value);
		/* The same name in another directory is another override. */
		assert_null(override_set_find(&ov, "b2", "a", name));
	}
	override_set_release(&ov);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hindex__finds_after_removals_and_moves),
		cmocka_unit_test(test_hindex__an_entry_put_back_takes_no_growth),
		cmocka_unit_test(test_hindex__override_set_finds_what_it_holds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* grow: room for one more, doubling from the first size; overflow and
 * failure change nothing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "grow.h"

static void doubles_from_first(void **state)
{
	int *v = NULL;
	size_t n = 0, cap = 0, i;

	(void)state;
	for (i = 0; i < 100; i++) {
		assert_int_equal(GROW(v, cap, n, 4), 0);
		assert_true(cap > n);
		v[n++] = (int)i;
		if (i == 0)
			assert_int_equal(cap, 4);
	}
	assert_int_equal(cap, 128);
	for (i = 0; i < 100; i++)
		assert_int_equal(v[i], (int)i);
	/* Room left: nothing moves. */
	{
		int *before = v;

		assert_int_equal(GROW(v, cap, n, 4), 0);
		assert_ptr_equal(v, before);
		assert_int_equal(cap, 128);
	}
	free(v);
}

static void overflow_changes_nothing(void **state)
{
	char *v = malloc(1);
	size_t cap = SIZE_MAX / 2 + 1, n = cap;
	struct big { char b[1 << 20]; } *w = NULL;
	size_t wcap = 0;

	(void)state;
	assert_non_null(v);
	assert_int_equal(grow(&v, &cap, n, 1, 8), -ENOMEM);
	assert_int_equal(cap, SIZE_MAX / 2 + 1);
	assert_non_null(v);
	free(v);
	/* An element count whose bytes overflow. */
	assert_int_equal(grow(&w, &wcap, SIZE_MAX / sizeof(*w), sizeof(*w), 8), -ENOMEM);
	assert_null(w);
	assert_int_equal(wcap, 0);
}

static void first_zero_means_one(void **state)
{
	long *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(GROW(v, cap, 0, 0), 0);
	assert_int_equal(cap, 1);
	v[0] = 7;
	assert_int_equal(GROW(v, cap, 1, 0), 0);
	assert_int_equal(cap, 2);
	assert_int_equal(v[0], 7);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(doubles_from_first),
		cmocka_unit_test(overflow_changes_nothing),
		cmocka_unit_test(first_zero_means_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

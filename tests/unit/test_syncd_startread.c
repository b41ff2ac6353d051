/* Which answer the start-up read takes (fs/syncd/syncd_startread.c,
 * docs/SYNC.md): the member's own only at or past the claim's revision;
 * behind it, asked again once, then through the leader. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "syncd_startread.h"

static void current_member_taken(void **state)
{
	struct start_read rd;
	unsigned seed = 1, wait = 0;

	(void)state;
	start_read_init(&rd, 40);
	assert_true(start_read_serializable(&rd));
	assert_int_equal(start_read_check(&rd, 0, 40, &seed, &wait), 0);
	start_read_init(&rd, 40);
	assert_int_equal(start_read_check(&rd, 0, 41, &seed, &wait), 0);
}

static void behind_asked_again_then_leader(void **state)
{
	struct start_read rd;
	unsigned seed = 7, wait = 0;

	(void)state;
	start_read_init(&rd, 40);
	assert_int_equal(start_read_check(&rd, 0, 39, &seed, &wait), 1);
	assert_in_range(wait, 1, STARTREAD_BEHIND_WAIT_MS);
	assert_true(start_read_serializable(&rd));
	/* A later page at a revision the member does not have yet. */
	assert_int_equal(start_read_check(&rd, -ERANGE, 0, &seed, &wait), 1);
	assert_false(start_read_serializable(&rd));
	/* Through the leader: its answer is taken whatever its revision,
	 * and its errors are the caller's. */
	assert_int_equal(start_read_check(&rd, 0, 12, &seed, &wait), 0);
	assert_int_equal(start_read_check(&rd, -ERANGE, 0, &seed, &wait), -ERANGE);
}

static void errors_are_the_callers(void **state)
{
	struct start_read rd;
	unsigned seed = 3, wait = 0;

	(void)state;
	start_read_init(&rd, 40);
	assert_int_equal(start_read_check(&rd, -ETIMEDOUT, 0, &seed, &wait), -ETIMEDOUT);
	assert_int_equal(start_read_check(&rd, -EAGAIN, 0, &seed, &wait), -EAGAIN);
	/* A busy answer does not count as behind. */
	assert_true(start_read_serializable(&rd));
}

static void no_floor_no_own_read(void **state)
{
	struct start_read rd;
	unsigned seed = 3, wait = 0;

	(void)state;
	start_read_init(&rd, 0);
	assert_false(start_read_serializable(&rd));
	assert_int_equal(start_read_check(&rd, 0, 5, &seed, &wait), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(current_member_taken),
		cmocka_unit_test(behind_asked_again_then_leader),
		cmocka_unit_test(errors_are_the_callers),
		cmocka_unit_test(no_floor_no_own_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

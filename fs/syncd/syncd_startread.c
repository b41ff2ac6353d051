/* The start-up read's choice of answer: syncd_startread.h. */
#include <errno.h>
#include <stdlib.h>

#include "syncd_startread.h"

void start_read_init(struct start_read *s, int64_t floor)
{
	s->floor = floor;
	/* Without a floor nothing can vouch for a member's own answer. */
	s->behind = floor > 0 ? 0 : STARTREAD_BEHIND_TRIES;
}

bool start_read_serializable(const struct start_read *s)
{
	return s->behind < STARTREAD_BEHIND_TRIES;
}

int start_read_check(struct start_read *s, int err, int64_t rev, unsigned *seed,
		     unsigned *wait_ms)
{
	if (!start_read_serializable(s) || (err < 0 && err != -ERANGE) ||
	    (err == 0 && rev >= s->floor))
		return err;
	s->behind++;
	*wait_ms = (unsigned)rand_r(seed) % STARTREAD_BEHIND_WAIT_MS + 1;
	return 1;
}

/* flag_token: splitting a flag-list value; see flag_token.h. */
#include "flag_token.h"

#include <string.h>

static bool flag_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

bool flag_token_next(const char **t, const char *end, const char **tok, size_t *len,
		     size_t *key_len)
{
	const char *p = *t, *q, *eq;

	while (p < end && flag_space(*p))
		p++;
	if (p >= end) {
		*t = end;
		return false;
	}
	for (q = p; q < end && !flag_space(*q); q++)
		;
	eq = memchr(p, '=', (size_t)(q - p));
	*tok = p;
	*len = (size_t)(q - p);
	*key_len = (size_t)((eq ? eq : q) - p);
	*t = q;
	return true;
}

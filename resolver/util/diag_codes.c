/* The table of diagnostic codes; see diag_codes.h. */
#include "diag_codes.h"

#include <errno.h>
#include <strings.h>

static const struct diag_code_info table[DIAG_NCODES] = {
#define DIAG_CODE_LINE(name, num, sev, meaning) [name] = { "PE" #num, sev, meaning },
	DIAG_CODES(DIAG_CODE_LINE)
#undef DIAG_CODE_LINE
};

const struct diag_code_info *diag_code_info(enum diag_code c)
{
	return (size_t)c < DIAG_NCODES ? &table[c] : NULL;
}

int diag_code_parse(const char *s, size_t n, enum diag_code *out)
{
	size_t k;

	for (k = 0; k < DIAG_NCODES; k++) {
		if (n == 5 && !strncasecmp(s, table[k].code, 5)) {
			*out = (enum diag_code)k;
			return 0;
		}
	}
	return -EINVAL;
}

/* unicode: lookups in the generated tables; see unicode.h. */
#include "unicode.h"

bool uc_printable(unsigned cp)
{
	size_t lo = 0, hi = uc_nunprintable;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp < uc_unprintable[mid].lo)
			hi = mid;
		else if (cp > uc_unprintable[mid].hi)
			lo = mid + 1;
		else
			return false;
	}
	return true;
}

int uc_decimal(unsigned cp)
{
	size_t lo = 0, hi = uc_ndigit_zeros;

	/* The last run whose zero is at or below cp. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (uc_digit_zeros[mid] <= cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && cp - uc_digit_zeros[lo - 1] < 10)
		return (int)(cp - uc_digit_zeros[lo - 1]);
	return -1;
}

bool uc_space(unsigned cp)
{
	size_t k;

	for (k = 0; k < uc_nspaces; k++)
		if (uc_spaces[k] == cp)
			return true;
	return false;
}

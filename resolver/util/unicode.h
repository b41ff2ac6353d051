/* unicode: the few Unicode properties Python's str methods use, so text is
 * printed and read the way Primus's Python prints and reads it:
 *
 *   repr("\u200b")  -> '\u200b'   (not printable: escaped)
 *   int("\u0663")   -> 3          (an Arabic-Indic digit)
 *   int("\u00a02")  -> 2          (NO-BREAK SPACE is whitespace)
 *
 * The tables (unicode_tables.c) are generated from Python's own unicodedata
 * by tools/gen_unicode_tables.py. */
#ifndef ENVFS_UNICODE_H
#define ENVFS_UNICODE_H

#include <stdbool.h>
#include <stddef.h>

struct uc_range {
	unsigned lo, hi;          /* inclusive */
};

extern const struct uc_range uc_unprintable[];
extern const size_t uc_nunprintable;
extern const unsigned uc_digit_zeros[];
extern const size_t uc_ndigit_zeros;
extern const unsigned uc_spaces[];
extern const size_t uc_nspaces;

/* str.isprintable() of the one code point cp. */
bool uc_printable(unsigned cp);
/* unicodedata.decimal(cp): 0..9 for a decimal digit of any script, else -1. */
int uc_decimal(unsigned cp);
/* str.isspace() of cp. */
bool uc_space(unsigned cp);

#endif

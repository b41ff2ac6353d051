/* yaml11: what Primus's YAML loader (PyYAML, YAML 1.1 implicit typing)
 * makes of an unquoted scalar, and what Python's str() of that value prints.
 *
 * The config's env: values are taken as written; these functions only let
 * the warning say what Primus itself would have exported:
 *   0.960 -> float -> "0.96"     010 -> int -> "8"     on -> bool -> "True"
 */
#ifndef ENVFS_YAML11_H
#define ENVFS_YAML11_H

#include <stddef.h>

#include "strbuf.h"

enum y11_type {
	Y11_STR,
	Y11_BOOL,
	Y11_INT,
	Y11_FLOAT,
	Y11_NULL,
	Y11_TIMESTAMP,
	Y11_MERGE,        /* "<<": a merge key; no value of its own */
	Y11_VALUE,        /* "=": PyYAML's "value" tag */
};

/* The tag PyYAML's Resolver gives the plain scalar s (len bytes), by its
 * exact implicit resolver regexes. */
enum y11_type y11_resolve(const char *s, size_t len);

/* "string", "bool", "int", "float", "null", "timestamp", "merge key",
 * "value key". Static. */
const char *y11_type_name(enum y11_type t);

/* Appends to out what Python prints for str(v), where v is what PyYAML's
 * SafeConstructor builds from s typed as t (t as y11_resolve returned):
 * "0.96", "8", "True", "None", "2001-12-14 21:59:43.100000-05:00".
 * Returns 0, -ENOMEM, or -EINVAL when PyYAML or Python would raise instead
 * (0b_, 2001-02-30, "=", an int of more than 4300 digits); out may then
 * hold partial text. */
int y11_str(const char *s, size_t len, enum y11_type t, struct strbuf *out);

/* Appends repr() of the date or datetime PyYAML builds from timestamp s:
 * "datetime.date(2002, 12, 14)", "datetime.datetime(2001, 12, 14, 21, 59,
 * tzinfo=datetime.timezone.utc)". -EINVAL where datetime raises. */
int y11_ts_repr(const char *s, size_t len, struct strbuf *out);
/* Appends Python's repr()/str() of a float: the shortest text that reads
 * back as d, "1.0", "1e+16", "1e-05", "inf", "nan". */
int y11_float_repr(double d, struct strbuf *out);

#endif

/* catalog_prebuilt: a catalog.yaml compiled into the executable.
 *
 * Parsing the shipped catalog (33 KB of YAML) is a quarter of what a
 * `primus-envfs resolve` costs. The build compiles it once
 * (specs/gen_catalog.c) into a pointer-free table plus the exact bytes it
 * came from; a load whose catalog.yaml has those bytes, compared in full,
 * takes the table instead of parsing. Any other catalog, including an
 * edited copy of the shipped one, is parsed as before. */
#ifndef ENVFS_CATALOG_PREBUILT_H
#define ENVFS_CATALOG_PREBUILT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "spec.h"

#define CP_NONE UINT32_MAX        /* an absent string */

/* One entry; strings are offsets into catalog_prebuilt.text. */
struct catalog_prebuilt_entry {
	uint32_t name, def, description, where_used, where_set;
	uint32_t values, nvalues;     /* a run of catalog_prebuilt.values */
	uint8_t type, has_min, has_max, invalid;
	int64_t min, max;
};

struct catalog_prebuilt {
	const char *src;              /* the catalog.yaml bytes compiled */
	size_t src_len;
	const struct catalog_prebuilt_entry *entries;  /* sorted by name */
	size_t n;
	const uint32_t *values;       /* offsets into text */
	const char *text;             /* NUL-terminated strings */
	size_t text_len;
};

/* True when buf[0..len) is exactly cp's source. cp may be NULL. */
bool catalog_prebuilt_matches(const struct catalog_prebuilt *cp, const char *buf, size_t len);

/* The entries of cp, as catalog_load_buffer() returns them for cp's
 * source: *out is freed with catalog_free(); its strings are cp's (static,
 * never freed). Returns 0 or -ENOMEM. */
int catalog_from_prebuilt(const struct catalog_prebuilt *cp, struct catalog_entry **out,
			  size_t *nout);

/* Writes C source that defines `const struct catalog_prebuilt <symbol>`
 * for the catalog in buf[0..len) (named display in diagnostics). A
 * catalog with any diagnostic, even a warning, is refused with -EINVAL
 * and the diagnostics in diags: a compiled table has nowhere to replay
 * them. -EIO when out fails. */
int catalog_prebuilt_emit(const char *buf, size_t len, const char *display,
			  const char *symbol, FILE *out, struct diag_list *diags);

#endif

/* json: JSON text for the views and the command line's reports. */
#ifndef ENVFS_JSON_H
#define ENVFS_JSON_H

#include <stddef.h>

#include "strbuf.h"

/* Appends s (n bytes) as a JSON string, quotes included. Bytes that are
 * not valid UTF-8 are written as \u00XX of the byte (0xff reads back as
 * U+00FF), so the output is always valid JSON. Returns 0 or -ENOMEM. */
int json_add_string(struct strbuf *out, const char *s, size_t n);

#endif

/* json: JSON text for the views and the command line's reports, and
 * the documents this program writes read back: the records and the
 * history (their decoders). One module for both sides, so a field
 * written one way is read the same way: json_add_field and
 * json_field_bytes are one rule ("key" for UTF-8 text, "key_b64" for
 * other bytes).
 *
 *   struct json_value *o;
 *   char *node;
 *   size_t len;
 *   if (json_parse(p, n, &o) < 0)
 *           return -EPROTO;
 *   err = json_field_bytes(o, "node", &node, &len);
 *   json_free(o);
 */
#ifndef ENVFS_JSON_H
#define ENVFS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

/* Appends s (n bytes) as a JSON string, quotes included. Bytes that are
 * not valid UTF-8 are written as \u00XX of the byte (0xff reads back as
 * U+00FF), so the output is always valid JSON. Returns 0 or -ENOMEM. */
int json_add_string(struct strbuf *out, const char *s, size_t n);
/* "key":"text" when the n bytes at p are valid UTF-8 (what a JSON reader
 * gives back byte for byte), else "key_b64":"<base64>" (any bytes); led
 * by a ',' unless first. Returns 0 or -ENOMEM. */
int json_add_field(struct strbuf *out, bool first, const char *key, const char *p, size_t n);

/* ---- reading --------------------------------------------------------------- */

/* Objects and arrays nested deeper than this are refused: the documents
 * nest 4 deep, and the bound keeps hostile input off the stack. */
#define JSON_DEPTH 32

enum json_kind {
	JSON_NULL,                    /* a value pointer of NULL */
	JSON_BOOL,
	JSON_INT,                     /* an integer literal that fits int64 */
	JSON_DOUBLE,                  /* any other number (its value not kept) */
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json_member;

struct json_value {
	enum json_kind type;
	size_t len;                   /* STRING: bytes; ARRAY, OBJECT: entries */
	union {
		bool b;                       /* BOOL */
		int64_t i;                    /* INT */
		char *s;                      /* STRING: len bytes and a NUL (the
		                                 bytes may hold NUL too) */
		struct json_value **items;    /* ARRAY; NULL entries are null */
		struct json_member *members;  /* OBJECT, in document order */
	};
};

struct json_member {
	char *key;                    /* NUL-terminated, key_len bytes */
	size_t key_len;
	struct json_value *val;       /* NULL: null */
};

/* Parses the n bytes at p, which must be one JSON object with only
 * white space around it (RFC 8259, no extensions; string bytes are taken
 * as they are, unchecked as UTF-8). Returns 0, -EPROTO (not such a
 * document, or nested deeper than JSON_DEPTH), -EMSGSIZE (over INT_MAX
 * bytes) or -ENOMEM. *out is caller-owned: json_free(); every value
 * under it lives as long as it. */
int json_parse(const char *p, size_t n, struct json_value **out);

/* A decoder's hooks for the large arrays of a document: the items of a
 * top-level member named in keys, when its value is an array, are handed
 * to item one by one as they are parsed and then forgotten, so the
 * document never holds them all (the tree keeps an empty array in their
 * place). begin is called as such an array opens: a repeated key's last
 * array is the one that counts, as json_get_ex reads a repeated key.
 * item's v (NULL: null) and everything under it are borrowed for the
 * call. keep, when set, is asked about each member of an item that is an
 * object: one it refuses is parsed (and checked) like any other but not
 * kept, so the item holds only what the decoder reads. A negative return
 * from begin or item ends the parse with that value, so a decoder notes a
 * wrong shape and returns 0: the document is still parsed to its end,
 * and its other faults come first as they would without the stream. */
struct json_stream {
	const char *const *keys;      /* NULL-terminated */
	int (*begin)(void *ctx, size_t key);              /* key: index in keys */
	int (*item)(void *ctx, size_t key, const struct json_value *v);
	bool (*keep)(void *ctx, size_t key, const char *member, size_t len); /* or NULL */
	void *ctx;
};

/* json_parse with st's arrays streamed (st NULL: none). */
int json_parse_stream(const char *p, size_t n, const struct json_stream *st,
		      struct json_value **out);
/* Frees a document json_parse gave (its root; never a value under it). */
void json_free(struct json_value *v);
/* Whether v is of type; NULL is JSON_NULL. */
bool json_is(const struct json_value *v, enum json_kind type);
/* Whether object o has key; *out its value (borrowed from o; NULL for
 * null), the last one when the key repeats. False when o is no object. */
bool json_get_ex(const struct json_value *o, const char *key, const struct json_value **out);
/* An array's length (0 for anything else) and its entry k (NULL: null,
 * or past the end). */
size_t json_length(const struct json_value *a);
const struct json_value *json_at(const struct json_value *a, size_t k);

/* Fields of object o. Absent or null leaves the zero value (0, false,
 * NULL) and returns 0; a field of another shape is -EPROTO. An integer
 * may also be a string of decimal digits (protobuf's JSON mapping of
 * 64-bit numbers). A string is copied (caller-owned, free(); at its
 * first NUL). -ENOMEM. */
int json_field_i64(const struct json_value *o, const char *key, int64_t *out);
int json_field_bool(const struct json_value *o, const char *key, bool *out);
int json_field_string(const struct json_value *o, const char *key, char **out);
/* The n bytes of base64 at src decoded: *out caller-owned (free()),
 * NUL-terminated, *len bytes. -EPROTO for bad base64, or -ENOMEM. */
int json_b64_decode(const char *src, size_t n, char **out, size_t *len);
/* What json_add_field wrote: the text at "key", else the base64 at
 * "key_b64" decoded, neither holding a NUL; *out is caller-owned
 * (free()), NUL-terminated, *len bytes. -ENOENT when both are absent,
 * -EPROTO for another shape, bad base64 or a NUL, or -ENOMEM. */
int json_field_bytes(const struct json_value *o, const char *key, char **out, size_t *len);
/* json_field_string and json_field_bytes with the copy in arena a
 * (owned by it, never freed alone) instead of malloc; a NULL is malloc. */
struct arena;
int json_field_string_in(const struct json_value *o, const char *key, struct arena *a,
			 char **out);
int json_field_bytes_in(const struct json_value *o, const char *key, struct arena *a,
			char **out, size_t *len);

#endif

/* text: byte-string predicates shared by the loaders, evaluators and views. */
#ifndef ENVFS_TEXT_H
#define ENVFS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes there
 * are not one. Rejects overlong forms, surrogates and code points above
 * U+10FFFF, as Go's utf8.Valid (docker) and JSON parsers do. *cp gets the
 * code point. */
size_t utf8_seq(const unsigned char *p, size_t n, unsigned *cp);
bool utf8_valid(const char *s, size_t n);
/* strtoll's grammar without its leniency: the whole text, an optional sign
 * and decimal digits, no surrounding space, in range. */
bool text_parse_ll(const char *s, size_t len, long long *out);

/* Appends s as one readable double-quoted line: '"' and '\\' escaped,
 * newline and tab as \\n and \\t, other control bytes and bytes of no
 * valid UTF-8 sequence as \\xNN, characters Python does not print as
 * \\uNNNN, and more
 * than max bytes shortened with "...". Returns 0 or -ENOMEM. */
struct strbuf;
int text_quote(struct strbuf *sb, const char *s, size_t n, size_t max);
/* The same escapes without the quotes and without escaping '"' or '\\':
 * for text already inside a message, such as a value a rule shows. */
int text_escape(struct strbuf *sb, const char *s, size_t n);
/* text_escape of at most max bytes of s, then "..." when s was longer:
 * for what a user or a file gave (a name, a path) inside a one-line
 * message, which must stay short. Returns 0 or -ENOMEM. */
int text_escape_max(struct strbuf *sb, const char *s, size_t n, size_t max);

/* The optimal string alignment distance between a and b: insertions,
 * deletions, substitutions and transpositions of adjacent bytes each cost
 * one (DISAPTCH is one edit from DISPATCH). Inputs over 128 bytes are
 * (size_t)-1, "far". */
size_t text_edit_distance(const char *a, size_t n, const char *b, size_t m);
/* The same, cut short: any distance over max is max + 1. */
size_t text_edit_distance_max(const char *a, size_t n, const char *b, size_t m, size_t max);
/* A bit per byte value (mod 64) that s holds. An edit adds or removes at
 * most two of them, so half the bits two masks do not share is a floor
 * of the distance between their strings: a cheap test before the real
 * one. */
uint64_t text_char_mask(const char *s, size_t n);

/* True when one of the n strings of v is name. */
bool text_in_list(char *const *v, size_t n, const char *name);

#endif

/* strbuf: a growable byte buffer, always NUL-terminated after len.
 * Values are handled by length; the trailing NUL is only a convenience. */
#ifndef ENVFS_STRBUF_H
#define ENVFS_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	char *buf;   /* NULL until the first add */
	size_t len;
	size_t cap;
};

#define STRBUF_INIT { NULL, 0, 0 }

/* All adders return 0 or -ENOMEM. */
int sb_grow(struct strbuf *sb, size_t extra);
int sb_add(struct strbuf *sb, const void *data, size_t len);
int sb_adds(struct strbuf *sb, const char *s);
int sb_addc(struct strbuf *sb, char c);
int sb_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void sb_reset(struct strbuf *sb);
/* Hands the buffer to the caller (free() it); sb is left empty.
 * Returns "" (allocated) for an empty buffer, NULL on -ENOMEM. */
char *sb_detach(struct strbuf *sb, size_t *len_out);
void sb_release(struct strbuf *sb);
/* The current contents as a C string ("" when empty); borrowed. */
const char *sb_str(const struct strbuf *sb);

/* Allocating helpers; NULL on out of memory. Caller frees. */
char *xstrndup(const char *s, size_t n);
char *xstrdup(const char *s);

#endif

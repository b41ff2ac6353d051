/* Growable buffers: the one place that does allocation arithmetic for text. */
#include "strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sb_grow(struct strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > (size_t)-1 / 2 - sb->len)
		return -ENOMEM;
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return 0;
	cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap *= 2;
	p = realloc(sb->buf, cap);
	if (!p)
		return -ENOMEM;
	sb->buf = p;
	sb->cap = cap;
	return 0;
}

int sb_add(struct strbuf *sb, const void *data, size_t len)
{
	int err = sb_grow(sb, len);

	if (err < 0)
		return err;
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int sb_adds(struct strbuf *sb, const char *s)
{
	return sb_add(sb, s, strlen(s));
}

int sb_addc(struct strbuf *sb, char c)
{
	return sb_add(sb, &c, 1);
}

int sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	size_t room = sb->cap > sb->len ? sb->cap - sb->len : 0;
	va_list cp;
	int n, err;

	/* Formatted straight into the spare room: a short line usually fits,
	 * and formatting it twice (measure, then write) was most of what an
	 * sb_addf cost. */
	va_copy(cp, ap);
	n = vsnprintf(room ? sb->buf + sb->len : NULL, room, fmt, cp);
	va_end(cp);
	if (n >= 0 && (size_t)n < room) {
		sb->len += (size_t)n;
		return 0;
	}
	if (room)
		sb->buf[sb->len] = '\0';       /* what did not fit is dropped */
	if (n < 0)
		return -EINVAL;
	if ((err = sb_grow(sb, (size_t)n)) < 0)
		return err;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
	return 0;
}

int sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = sb_vaddf(sb, fmt, ap);
	va_end(ap);
	return err;
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

char *sb_detach(struct strbuf *sb, size_t *len_out)
{
	char *p = sb->buf;

	if (!p)
		p = calloc(1, 1);
	if (len_out)
		*len_out = sb->len;
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return p;
}

void sb_release(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

const char *sb_str(const struct strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

char *xstrndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xstrdup(const char *s)
{
	return s ? xstrndup(s, strlen(s)) : NULL;
}

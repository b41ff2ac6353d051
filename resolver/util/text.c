/* Byte-string predicates shared by the loaders, evaluators and views. */
#include "text.h"
#include "unicode.h"
#include "strbuf.h"

#include <limits.h>
#include <stdbool.h>

size_t utf8_seq(const unsigned char *p, size_t n, unsigned *cp)
{
	unsigned c = p[0], min;
	size_t len, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;
	unsigned cp;

	while (i < n) {
		if (!(k = utf8_seq(p + i, n - i, &cp)))
			return false;
		i += k;
	}
	return true;
}

bool text_parse_ll(const char *s, size_t len, long long *out)
{
	unsigned long long acc = 0, limit = LLONG_MAX;
	bool neg = false;
	size_t i = 0;

	if (i < len && (s[i] == '+' || s[i] == '-')) {
		neg = s[i] == '-';
		i++;
	}
	if (i == len)
		return false;
	if (neg)
		limit = (unsigned long long)LLONG_MAX + 1;
	for (; i < len; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return false;
		d = (unsigned)(s[i] - '0');
		if (acc > (limit - d) / 10)
			return false;
		acc = acc * 10 + d;
	}
	if (!neg)
		*out = (long long)acc;
	else if (acc == (unsigned long long)LLONG_MAX + 1)
		*out = LLONG_MIN;
	else
		*out = -(long long)acc;
	return true;
}

/* One non-ASCII character at s[*i]: a byte that starts no valid sequence
 * as \\xNN, a character Python would not print (a BOM, a zero-width
 * space) as \\uNNNN, so an invisible difference between two names shows
 * in the message; *i is left on the character's last byte. */
static int quote_utf8(struct strbuf *sb, const char *s, size_t n, size_t *i)
{
	unsigned cp;
	size_t len = utf8_seq((const unsigned char *)s + *i, n - *i, &cp);
	int err;

	if (!len)
		return sb_addf(sb, "\\x%02x", (unsigned char)s[*i]);
	if (!uc_printable(cp))
		err = cp > 0xffff ? sb_addf(sb, "\\U%08x", cp) : sb_addf(sb, "\\u%04x", cp);
	else
		err = sb_add(sb, s + *i, len);
	*i += len - 1;
	return err;
}

/* The bytes of s, at most max, with what would not read as itself on one
 * line escaped; with quotes, '"' and '\\' too. */
static int escape(struct strbuf *sb, const char *s, size_t n, size_t max, bool quotes)
{
	size_t i;
	int err = 0;

	for (i = 0; i < n && i < max && !err; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (quotes && (ch == '"' || ch == '\\'))
			err = sb_addf(sb, "\\%c", ch);
		else if (ch == '\n')
			err = sb_adds(sb, "\\n");
		else if (ch == '\t')
			err = sb_adds(sb, "\\t");
		else if (ch < 0x20 || ch == 0x7f)
			err = sb_addf(sb, "\\x%02x", ch);
		else if (ch < 0x80)
			err = sb_addc(sb, (char)ch);
		else
			err = quote_utf8(sb, s, n, &i);
	}
	if (!err && n > max)
		err = sb_adds(sb, "...");
	return err;
}

int text_quote(struct strbuf *sb, const char *s, size_t n, size_t max)
{
	int err = sb_addc(sb, '"');

	if (!err)
		err = escape(sb, s, n, max, true);
	return err ? err : sb_addc(sb, '"');
}

int text_escape(struct strbuf *sb, const char *s, size_t n)
{
	return escape(sb, s, n, n, false);
}

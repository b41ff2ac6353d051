/* Byte-string predicates shared by the loaders, evaluators and views. */
#include "text.h"
#include "unicode.h"
#include "strbuf.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>
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
		/* ASCII, most of every value, needs no decoding. */
		if (p[i] < 0x80) {
			i++;
			continue;
		}
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
/* Printable ASCII: 1, itself unquoted; 2, itself in quotes too (not '"'
 * or '\\'). */
static const unsigned char plain_ascii[256] = {
	[0x20 ... 0x21] = 3, ['"'] = 1, [0x23 ... 0x5b] = 3, ['\\'] = 1, [0x5d ... 0x7e] = 3,
};

static int escape(struct strbuf *sb, const char *s, size_t n, size_t max, bool quotes)
{
	const unsigned char plain = quotes ? 2 : 1;
	size_t i, run, end = n < max ? n : max;
	int err = 0;

	for (i = 0; i < end && !err; i++) {
		unsigned char ch = (unsigned char)s[i];

		/* Printable ASCII, most of every value, is copied a run at a
		 * time: a diff of 10,000 variables spent a tenth here byte by byte. */
		for (run = i; run < end && (plain_ascii[(unsigned char)s[run]] & plain); run++)
			;
		if (run > i) {
			err = sb_add(sb, s + i, run - i);
			i = run - 1;
			continue;
		}
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

int text_escape_max(struct strbuf *sb, const char *s, size_t n, size_t max)
{
	return escape(sb, s, n, max, false);
}

size_t text_edit_distance_max(const char *a, size_t n, const char *b, size_t m, size_t max)
{
	enum { MAXLEN = 128 };
	size_t d[3][MAXLEN + 1], i, j, prevlow = 0;

	if (n > MAXLEN || m > MAXLEN)
		return (size_t)-1;
	for (j = 0; j <= m; j++)
		d[0][j] = j;
	for (i = 1; i <= n; i++) {
		size_t *cur = d[i % 3], *prev = d[(i - 1) % 3], *pp = d[(i + 1) % 3];
		size_t low;

		low = cur[0] = i;
		for (j = 1; j <= m; j++) {
			size_t cost = a[i - 1] != b[j - 1], best = prev[j - 1] + cost;

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < best)
				best = pp[j - 2] + 1;
			cur[j] = best;
			if (best < low)
				low = best;
		}
		/* A cell comes from the two rows above it plus a cost: once
		 * two rows in a row are past max, so is every later one. */
		if (low > max && prevlow > max)
			return max + 1;
		prevlow = low;
	}
	return d[n % 3][m];
}

size_t text_edit_distance(const char *a, size_t n, const char *b, size_t m)
{
	return text_edit_distance_max(a, n, b, m, (size_t)-2);
}

uint64_t text_char_mask(const char *s, size_t n)
{
	uint64_t mask = 0;
	size_t i;

	for (i = 0; i < n; i++)
		mask |= (uint64_t)1 << ((unsigned char)s[i] & 63);
	return mask;
}

bool text_in_list(char *const *v, size_t n, const char *name)
{
	size_t k;

	/* The first byte settles most misses without a call: names_check
	 * asks this of every variable against each spec's passthrough list. */
	for (k = 0; k < n; k++)
		if (v[k][0] == name[0] && !strcmp(v[k], name))
			return true;
	return false;
}

/* JSON strings; see json.h. */
#include "json.h"

#include <errno.h>
#include <nettle/base64.h>
#include <stdlib.h>

#include "text.h"

int json_add_string(struct strbuf *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;
	unsigned cp;
	int err;

	if ((err = sb_addc(out, '"')) < 0)
		return err;
	while (i < n) {
		unsigned char c = p[i];

		/* A run of what stands for itself at once: byte by byte was
		 * most of a 10,000-variable diff's JSON output. */
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			for (k = i + 1; k < n && p[k] >= 0x20 && p[k] < 0x80 && p[k] != '"' &&
					p[k] != '\\'; k++)
				;
			if ((err = sb_add(out, p + i, k - i)) < 0)
				return err;
			i = k;
			continue;
		}
		if (c >= 0x80) {
			k = utf8_seq(p + i, n - i, &cp);
			if (k) {
				err = sb_add(out, p + i, k);
				i += k;
			} else {
				err = sb_addf(out, "\\u%04x", c);
				i++;
			}
		} else {
			switch (c) {
			case '"': err = sb_adds(out, "\\\""); break;
			case '\\': err = sb_adds(out, "\\\\"); break;
			case '\n': err = sb_adds(out, "\\n"); break;
			case '\r': err = sb_adds(out, "\\r"); break;
			case '\t': err = sb_adds(out, "\\t"); break;
			case '\b': err = sb_adds(out, "\\b"); break;
			case '\f': err = sb_adds(out, "\\f"); break;
			default:
				if (c < 0x20)
					err = sb_addf(out, "\\u%04x", c);
				else
					err = sb_addc(out, (char)c);
			}
			i++;
		}
		if (err < 0)
			return err;
	}
	return sb_addc(out, '"');
}

int json_add_field(struct strbuf *out, bool first, const char *key, const char *p, size_t n)
{
	const char *lead = first ? "" : ",";
	char *b64;
	int err;

	if (utf8_valid(p, n)) {
		if ((err = sb_addf(out, "%s\"%s\":", lead, key)) < 0)
			return err;
		return json_add_string(out, p, n);
	}
	if ((err = sb_addf(out, "%s\"%s_b64\":\"", lead, key)) < 0)
		return err;
	if (!(b64 = malloc(BASE64_ENCODE_RAW_LENGTH(n) + 1)))
		return -ENOMEM;
	base64_encode_raw(b64, n, (const uint8_t *)p);
	err = sb_add(out, b64, BASE64_ENCODE_RAW_LENGTH(n));
	free(b64);
	return err < 0 ? err : sb_addc(out, '"');
}

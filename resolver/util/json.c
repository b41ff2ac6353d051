/* JSON strings; see json.h. */
#include "json.h"

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

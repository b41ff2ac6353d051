/* config_expand: Python's os.path.expandvars over a config value, as
 * Primus applies it to each env: entry (config.h).
 *
 *   LOG_DIR: "$HOME/logs"    ->  /home/u/logs when HOME is set
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "config.h"

static bool is_name_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= '0' && ch <= '9') || ch == '_';
}

/* Appends n bytes within the limit: -E2BIG past it. */
static int add_bounded(struct strbuf *out, size_t limit, const char *s, size_t n)
{
	if (n > limit - out->len)
		return -E2BIG;
	return sb_add(out, s, n);
}

/* Python's os.path.expandvars, which Primus uses: `\$(\w+|\{[^}]*\})`
 * (ASCII), replaced only when the name is set; the scan goes on after the
 * replacement, so a value is never expanded twice. */
int config_expand(const struct config *cfg, const struct config_entry *e, bool secret,
		  size_t max_len, envfs_lookup_fn fn, void *ctx, struct strbuf *out,
		  struct diag_list *diags)
{
	const char *s = e->value, *val;
	size_t n = e->value_len, i = 0, j, name_at, name_len, end, val_len;
	size_t limit = max_len > SIZE_MAX - out->len ? SIZE_MAX : out->len + max_len;
	const char *file = cfg ? cfg->file : NULL;
	int err = 0, r;

	while (i < n) {
		if (s[i] != '$' || i + 1 >= n) {
			/* The text up to the next '$' (or the end) in one piece. */
			const char *d = memchr(s + i + 1, '$', n - i - 1);
			size_t run = d ? (size_t)(d - (s + i)) : n - i;

			if ((err = add_bounded(out, limit, s + i, run)) < 0)
				return err;
			i += run;
			continue;
		}
		if (s[i + 1] == '{') {
			const char *close = memchr(s + i + 2, '}', n - i - 2);

			if (!close) {
				if ((err = add_bounded(out, limit, s + i++, 1)) < 0)
					return err;
				continue;
			}
			name_at = i + 2;
			end = (size_t)(close - s) + 1;
			name_len = end - 1 - name_at;
		} else {
			name_at = i + 1;
			for (j = name_at; j < n && is_name_char(s[j]); j++)
				;
			end = j;
			name_len = j - name_at;
			if (!name_len) {
				if ((err = add_bounded(out, limit, s + i++, 1)) < 0)
					return err;
				continue;
			}
		}
		/* Python looks up whatever stands between the braces: an image
		 * may hold a name no shell can read ("a-b"), and it expands. */
		if (name_len) {
			r = fn(ctx, s + name_at, name_len, &val, &val_len);
			if (r == -ELOOP)
				r = 0;
			if (r < 0)
				return r;
			if (r > 0) {
				if ((err = add_bounded(out, limit, val, val_len)) < 0)
					return err;
				i = end;
				continue;
			}
		}
		for (j = 0; j < name_len && is_name_char(s[name_at + j]); j++)
			;
		if (name_len && j == name_len) {
			if (secret)
				err = diag_add(diags, DC_CONFIG_UNSET_REF, file, e->line, e->col,
					       "%s: a $NAME reference in the value is not set, so "
					       "it stays literal", e->name);
			else
				err = diag_add(diags, DC_CONFIG_UNSET_REF, file, e->line, e->col,
					       "%s: %.*s is not set; left literal", e->name,
					       (int)(end - i > CONFIG_MSG_TEXT_MAX ? CONFIG_MSG_TEXT_MAX : end - i),
					       s + i);
		} else if (j && (s[name_at + j] == ':' || s[name_at + j] == '-')) {
			if (secret)
				err = diag_add(diags, DC_CONFIG_DEFAULT_SYNTAX, file, e->line, e->col,
					       "%s: a ${NAME:...} in the value is passed through "
					       "literally: env: has no default syntax", e->name);
			else
				err = diag_add(diags, DC_CONFIG_DEFAULT_SYNTAX, file, e->line, e->col,
					       "%s: %.*s is passed through literally: env: has no "
					       "default syntax", e->name,
					       (int)(end - i > CONFIG_MSG_TEXT_MAX ? CONFIG_MSG_TEXT_MAX : end - i),
					       s + i);
		}
		/* Anything else unset inside ${...} ("${}", "${a b}") stays
		 * literal, silently, as in Python. */
		if (err < 0 || (err = add_bounded(out, limit, s + i, end - i)) < 0)
			return err;
		i = end;
	}
	return 0;
}

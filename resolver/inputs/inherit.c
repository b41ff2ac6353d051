/* inherit: the image layer's environment files (--inherit FILE), read the
 * way `docker run --env-file` reads them, or as a NUL-separated environ
 * dump (`cat /proc/PID/environ > FILE`, `docker inspect` tooling).
 *
 *   $ printf 'A=1\n# note\nHOME\n' > image.env    # HOME comes from host_env
 *   $ primus-envfs resolve --inherit image.env -b maxtext -a gfx950
 */
#include "inherit.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "infile.h"
#include "strbuf.h"
#include "text.h"

/* An image environment is small; anything bigger is the wrong file. */
#define INHERIT_MAX_BYTES (1024 * 1024)
/* docker's scanner limit: a longer line makes docker refuse the file. */
#define DOCKER_MAX_LINE 65535

int env_name_valid(const char *name, size_t len)
{
	size_t i;

	if (!name || !len)
		return 0;
	for (i = 0; i < len; i++) {
		char c = name[i];
		bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';

		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return 0;
	}
	return 1;
}

int env_list_add(struct env_list *l, const char *name, size_t name_len,
		 const char *value, size_t value_len, const char *source)
{
	struct env_pair p = { 0 };

	if (GROW(l->v, l->cap, l->n, 16) < 0)
		return -ENOMEM;
	p.name = xstrndup(name, name_len);
	p.value = xstrndup(value ? value : "", value ? value_len : 0);
	p.value_len = value ? value_len : 0;
	p.source = source ? xstrdup(source) : NULL;
	if (!p.name || !p.value || (source && !p.source)) {
		free(p.name);
		free(p.value);
		free(p.source);
		return -ENOMEM;
	}
	l->v[l->n++] = p;
	return 0;
}

void env_list_release(struct env_list *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].value);
		free(l->v[i].source);
	}
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

/* Go's unicode.IsSpace, what docker trims from the start of each line. */
static bool unicode_space(unsigned cp)
{
	return (cp >= 0x09 && cp <= 0x0d) || cp == 0x20 || cp == 0x85 ||
	       cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
	       cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f ||
	       cp == 0x3000;
}

/* Bytes of leading whitespace docker's TrimLeftFunc would drop. */
static size_t leading_space(const char *s, size_t n)
{
	size_t i = 0, k;
	unsigned cp;

	while (i < n && (k = utf8_seq((const unsigned char *)s + i, n - i, &cp)) &&
	       unicode_space(cp))
		i += k;
	return i;
}

/* The value of name in host_env ("NAME=value" strings), or NULL. */
static const char *host_lookup(char *const *host_env, const char *name, size_t n)
{
	size_t i;

	if (!host_env)
		return NULL;
	for (i = 0; host_env[i]; i++)
		if (!strncmp(host_env[i], name, n) && host_env[i][n] == '=')
			return host_env[i] + n + 1;
	return NULL;
}

/* Where an entry came from: "TAG:FILE:LINE", or "FILE:LINE" without a tag. */
static int add_with_source(struct env_list *out, const char *tag, const char *file,
			   size_t line, const char *name, size_t name_len,
			   const char *value, size_t value_len)
{
	struct strbuf src = STRBUF_INIT;
	int err;

	if (!(err = sb_addf(&src, "%s%s%s:%zu", tag ? tag : "", tag ? ":" : "", file, line)))
		err = env_list_add(out, name, name_len, value, value_len, sb_str(&src));
	sb_release(&src);
	return err;
}

/* One env-file line, already split off at '\n' with a trailing '\r'
 * dropped (bufio.ScanLines does both). */
static bool has_space(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\v' || s[i] == '\f' ||
		    s[i] == '\r')
			return true;
	return false;
}

/* A name the image may hold but no shell line can read: a warning; the
 * variable is kept, as the training process gets it. */
static int odd_name(struct diag_list *diags, const char *file, unsigned line, const char *s,
		    size_t n)
{
	struct strbuf shown = STRBUF_INIT;
	int err;

	err = text_quote(&shown, s, n, 128);
	if (!err)
		err = diag_add(diags, DC_IMAGE_NAME, file, line, 0,
			       "%s is not a shell variable name: the runner cannot read it, but the "
			       "training process gets it; env_file carries it, env.sh and "
			       "compose.env leave it out", sb_str(&shown));
	sb_release(&shown);
	return err;
}

/* The 1-based column of the first byte of s (n bytes) no name may hold
 * there (a digit first), or 0 when none. */
static unsigned bad_column(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && i < UINT_MAX - 1; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (i && c >= '0' && c <= '9')))
			return (unsigned)i + 1;
	}
	return 0;
}

/* A line with no '=' that is no name: it may be a value's piece (a value
 * wrapped onto the next line, 'HF_TOKEN: hf_...' in another format), so
 * nothing of its text is quoted, only where it goes wrong. */
static int no_name_line(struct diag_list *diags, enum diag_code code, const char *file,
			unsigned line, const char *s, size_t n, bool space)
{
	unsigned col = bad_column(s, n);
	bool white = col && has_space(s + col - 1, 1);

	return diag_add(diags, code, file, line, col,
			"the line has no '=' and is no variable name (%s at column %u); its "
			"text is not shown, as it may be part of a value (a value wrapped onto "
			"this line, or 'NAME: value' in another format): %s",
			white ? "whitespace" : col == 1 ? "a byte no name may start with"
						       : "a byte no name may hold", col,
			space ? "docker --env-file refuses the file; line skipped"
			      : "the training process gets it as a name, but the runner cannot "
				"read it");
}

static int env_file_line(const char *tag, const char *file, unsigned lineno, const char *s,
			 size_t n, char *const *host_env, struct env_list *out,
			 struct diag_list *diags)
{
	const char *eq, *value;
	size_t name_len, skip;
	int err;

	/* Docker refuses the whole file for these; we keep the value (it is
	 * what the image holds) and say that docker would not. */
	if (!utf8_valid(s, n) &&
	    diag_add(diags, DC_ENV_FILE_UTF8, file, lineno, 0,
		     "line is not valid UTF-8; docker --env-file would reject this file") < 0)
		return -ENOMEM;
	if (n > DOCKER_MAX_LINE &&
	    diag_add(diags, DC_ENV_FILE_LONG, file, lineno, 0,
		     "line is longer than %d bytes; docker --env-file would reject this file",
		     DOCKER_MAX_LINE) < 0)
		return -ENOMEM;
	/* The BOM only counts at the very start of the file. */
	if (lineno == 1 && n >= 3 && !memcmp(s, "\xef\xbb\xbf", 3)) {
		s += 3;
		n -= 3;
	}
	skip = leading_space(s, n);
	s += skip;
	n -= skip;
	if (!n || s[0] == '#')
		return 0;
	eq = memchr(s, '=', n);
	name_len = eq ? (size_t)(eq - s) : n;
	/* docker takes any name without whitespace, and bash passes a name
	 * that is not its own kind on to the training process unread. */
	if (!eq && name_len && !env_name_valid(s, name_len)) {
		bool space = has_space(s, name_len);

		if ((err = no_name_line(diags, space ? DC_ENV_FILE_NAME : DC_IMAGE_NAME, file,
					lineno, s, name_len, space)) < 0 || space)
			return err;
	} else if (name_len && !has_space(s, name_len) && !env_name_valid(s, name_len)) {
		if ((err = odd_name(diags, file, lineno, s, name_len)) < 0)
			return err;
	} else if (!env_name_valid(s, name_len)) {
		struct strbuf shown = STRBUF_INIT;
		size_t word = 0;

		/* Only its first word is shown ('export', 'HF_TOKEN:'): what
		 * follows the whitespace may be a value's piece (a token in
		 * 'NAME: value' style, padded with '='). Escaped: it goes on
		 * one line of `check` output. */
		while (word < name_len && !has_space(s + word, 1))
			word++;
		err = name_len ? text_escape_max(&shown, s, word, 64) : 0;
		if (!err && name_len)
			err = diag_add(diags, DC_ENV_FILE_NAME, file, lineno, (unsigned)word + 1,
				       "the text before '=' holds whitespace at column %zu (it starts "
				       "'%s'; the rest is not shown, as it may be part of a value), "
				       "so it is no variable name; docker --env-file refuses the "
				       "file; line skipped", word + 1, sb_str(&shown));
		else if (!err)
			err = diag_add(diags, DC_ENV_FILE_NAME, file, lineno, 1,
				       "the line starts with '=': it names no variable; docker "
				       "--env-file refuses the file; line skipped");
		sb_release(&shown);
		return err;
	}
	if (eq)
		return add_with_source(out, tag, file, lineno, s, name_len, eq + 1,
				       n - name_len - 1);
	/* A bare NAME takes the host's value, and is skipped when the host
	 * has none, as docker does. */
	value = host_lookup(host_env, s, name_len);
	if (!value)
		return 0;
	return add_with_source(out, tag, file, lineno, s, name_len, value, strlen(value));
}

static int load_env_file(const char *tag, const char *name, const char *buf, size_t len,
			 char *const *host_env, struct env_list *out,
			 struct diag_list *diags)
{
	size_t pos = 0;
	unsigned lineno = 0;
	int err;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		size_t cut = n;

		lineno++;
		if (cut && buf[pos + cut - 1] == '\r')
			cut--;
		if ((err = env_file_line(tag, name, lineno, buf + pos, cut, host_env, out,
					 diags)) < 0)
			return err;
		pos += n + (nl != NULL);
	}
	return 0;
}

/* NAME=value\0 entries; "line" numbers in sources count entries. Values
 * are taken byte for byte: an environ dump has no comments or quoting. */
static int load_environ(const char *tag, const char *name, const char *buf, size_t len,
			struct env_list *out, struct diag_list *diags)
{
	size_t pos = 0;
	unsigned entry = 0;
	int err;

	while (pos < len) {
		const char *end = memchr(buf + pos, '\0', len - pos);
		size_t n = end ? (size_t)(end - (buf + pos)) : len - pos;
		const char *s = buf + pos, *eq = memchr(s, '=', n);

		pos += n + (end != NULL);
		if (!n)
			continue;
		entry++;
		if (!eq || eq == s) {
			if ((err = diag_add(diags, DC_ENVIRON_ENTRY, name, entry, 0,
					    "environ entry %u is not NAME=value with a NAME; skipped",
					    entry)) < 0)
				return err;
			continue;
		}
		if (!env_name_valid(s, (size_t)(eq - s)) &&
		    (err = odd_name(diags, name, entry, s, (size_t)(eq - s))) < 0)
			return err;
		if ((err = add_with_source(out, tag, name, entry, s, (size_t)(eq - s), eq + 1,
					   n - (size_t)(eq - s) - 1)) < 0)
			return err;
	}
	return 0;
}

static int load_buffer(const char *tag, const char *name, const char *buf, size_t len,
		       char *const *host_env, struct env_list *out, struct diag_list *diags)
{
	if (!name || (!buf && len) || !out || !diags)
		return -EINVAL;
	if (!len)
		return 0;
	if (memchr(buf, '\0', len))
		return load_environ(tag, name, buf, len, out, diags);
	return load_env_file(tag, name, buf, len, host_env, out, diags);
}

int inherit_load_buffer(const char *name, const char *buf, size_t len,
			char *const *host_env, struct env_list *out,
			struct diag_list *diags)
{
	return load_buffer("image", name, buf, len, host_env, out, diags);
}

int inherit_load_file(const char *path, char *const *host_env,
		      struct env_list *out, struct diag_list *diags)
{
	return inherit_load_file_as(path, "image", host_env, out, diags);
}

int inherit_load_file_as(const char *path, const char *tag, char *const *host_env,
			 struct env_list *out, struct diag_list *diags)
{
	return inherit_load_file_digest(path, tag, host_env, out, NULL, diags);
}

int inherit_load_file_digest(const char *path, const char *tag, char *const *host_env,
			     struct env_list *out, struct file_digest *digest,
			     struct diag_list *diags)
{
	char *buf = NULL;
	size_t len = 0;
	int fd = -1, err = 0;

	if (digest)
		digest->has = false;

	if ((fd = infile_open(path, NULL)) == -EINVAL) {
		err = infile_refused(diags, path);
		goto out;
	}
	if (fd < 0) {
		err = fd;
		diag_add(diags, DC_INPUT_UNREADABLE, path, 0, 0, "cannot read: %s", strerror(-err));
		goto out;
	}
	/* Bounded by what is read, not only by st_size: a file that grows
	 * while read is cut off at the limit. */
	err = infile_read_fd(fd, INHERIT_MAX_BYTES, &buf, &len);
	if (err == -EFBIG)
		diag_add(diags, DC_IMAGE_TOO_LARGE, path, 0, 0,
			 "larger than %d bytes; not an environment file", INHERIT_MAX_BYTES);
	else if (err < 0 && err != -ENOMEM)
		diag_add(diags, DC_INPUT_UNREADABLE, path, 0, 0, "cannot read: %s",
			 strerror(-err));
	if (err == 0 && digest) {
		sha256(buf, len, digest->sum);
		digest->has = true;
	}
	if (err == 0)
		err = load_buffer(tag, path, buf, len, host_env, out, diags);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

int inherit_load_environ(char *const *env, struct env_list *out)
{
	int err;

	for (; env && *env; env++) {
		const char *eq = strchr(*env, '=');

		/* bash, the launcher, passes on a name it cannot read as a
		 * variable (MY-VAR): the training process gets it. A name
		 * with '/', "." and ".." no mount can show as a file. */
		if (!eq || eq == *env || memchr(*env, '/', (size_t)(eq - *env)) ||
		    !strncmp(*env, ".=", 2) || !strncmp(*env, "..=", 3))
			continue;
		if ((err = env_list_add(out, *env, (size_t)(eq - *env), eq + 1, strlen(eq + 1),
					"image:environ")) < 0)
			return err;
	}
	return 0;
}

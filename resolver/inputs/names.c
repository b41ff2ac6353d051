/* The names of directories and overrides; see names.h. */
#include <fnmatch.h>
#include <string.h>

#include "inherit.h"
#include "names.h"

static bool word_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

const char *names_dir_problem(const char *s, size_t len, bool arch)
{
	size_t i;

	if (!len)
		return "is empty";
	if (len > NAMES_DIR_MAX)
		return "is longer than 64 bytes";
	if (arch && len == 4 && !memcmp(s, "host", 4))
		return "is the name of the host symlink";
	if (!word_char((unsigned char)s[0]))
		return "does not start with a letter, a digit or '_'";
	for (i = 1; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (word_char(c) || c == '.' || c == '-' || (arch && (c == ':' || c == '+')))
			continue;
		if (c <= ' ' || c >= 0x7f)
			return "holds a control byte, a blank or a byte that is not ASCII";
		return arch ? "holds a byte other than letters, digits, '_', '.', '-', ':' and '+'"
			    : "holds a byte other than letters, digits, '_', '.' and '-'";
	}
	return NULL;
}

bool names_glob_ok(const char *g)
{
	if (!*g)
		return false;
	for (; *g; g++)
		if (!word_char((unsigned char)*g) && !strchr("*?[]!-", *g))
			return false;
	return true;
}

/* fnmatch(glob, name, 0) for a glob of literal bytes and '*' only, as
 * every shipped secret pattern is: each name of a resolve is tested
 * against every pattern, and fnmatch's general machinery was a tenth of a
 * 10,000-variable diff. A star's match is widened one byte at a time from
 * the last star on a mismatch. */
static bool star_match(const char *g, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s) {
		if (*g == '*') {
			star = ++g;
			resume = s;
		} else if (*g == *s) {
			g++;
			s++;
		} else if (star) {
			g = star;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*g == '*')
		g++;
	return !*g;
}

/* A glob of literal bytes and '*' that is one literal piece with a star
 * on either side or both (every shipped secret pattern): the piece
 * compared where it must be, without star_match's walk. Returns 1 or 0,
 * or -1 for a glob of another shape. */
static int piece_match(const char *g, const char *s, size_t slen)
{
	bool lead = *g == '*', trail;
	const char *p = g + lead, *end = strchr(p, '*');
	size_t plen;

	if (end && end[1])
		return -1;              /* a second star inside, or "**" */
	trail = end != NULL;
	plen = end ? (size_t)(end - p) : strlen(p);
	if (!plen || plen > slen)
		return plen ? 0 : -1;
	if (lead && trail)
		return memmem(s, slen, p, plen) != NULL;
	if (lead)
		return !memcmp(s + slen - plen, p, plen);
	if (trail)
		return !memcmp(s, p, plen);
	return plen == slen && !memcmp(s, p, plen);
}

bool names_glob_any(char *const *globs, size_t n, const char *name)
{
	size_t k, len = strlen(name);
	int m;

	for (k = 0; k < n; k++) {
		if (strpbrk(globs[k], "?[\\"))
			m = fnmatch(globs[k], name, 0) == 0;
		else if ((m = piece_match(globs[k], name, len)) < 0)
			m = star_match(globs[k], name);
		if (m)
			return true;
	}
	return false;
}

bool names_override_ok(const char *backend, const char *arch, const char *name)
{
	size_t n = strlen(name);

	return !names_dir_problem(backend, strlen(backend), false) &&
	       !names_dir_problem(arch, strlen(arch), true) && n <= NAMES_VAR_MAX &&
	       env_name_valid(name, n);
}

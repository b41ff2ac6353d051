/* The names of directories and overrides; see names.h. */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
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

/* What a glob is, found once: a glob of literal bytes and '*' that is one
 * literal piece with a star on either side, both or neither (every
 * shipped secret pattern) is compared where the piece must be, without
 * star_match's walk; other globs of literals and stars are walked, and
 * the rest go to fnmatch. */
enum glob_shape { GLOB_FNMATCH, GLOB_STARS, GLOB_EXACT, GLOB_PREFIX, GLOB_SUFFIX, GLOB_INFIX };

struct names_glob {
	const char *glob;
	const char *piece;        /* into glob */
	size_t plen;
	enum glob_shape shape;
};

static struct names_glob glob_shape(const char *g)
{
	struct names_glob r = { .glob = g, .shape = GLOB_FNMATCH };
	bool lead = *g == '*', trail;
	const char *end;

	if (strpbrk(g, "?[\\"))
		return r;
	r.shape = GLOB_STARS;
	r.piece = g + lead;
	end = strchr(r.piece, '*');
	if (end && end[1])
		return r;               /* a second star inside, or "**" */
	trail = end != NULL;
	r.plen = end ? (size_t)(end - r.piece) : strlen(r.piece);
	if (!r.plen)
		return r;               /* "", "*" */
	r.shape = lead && trail ? GLOB_INFIX : lead ? GLOB_SUFFIX : trail ? GLOB_PREFIX : GLOB_EXACT;
	return r;
}

static bool glob_match(const struct names_glob *g, const char *s, size_t slen)
{
	switch (g->shape) {
	case GLOB_FNMATCH:
		return fnmatch(g->glob, s, 0) == 0;
	case GLOB_STARS:
		return star_match(g->glob, s);
	case GLOB_EXACT:
		return g->plen == slen && !memcmp(s, g->piece, slen);
	case GLOB_PREFIX:
		return g->plen <= slen && s[0] == g->piece[0] && !memcmp(s, g->piece, g->plen);
	case GLOB_SUFFIX:
		return g->plen <= slen && s[slen - g->plen] == g->piece[0] &&
		       !memcmp(s + slen - g->plen, g->piece, g->plen);
	case GLOB_INFIX:
		return g->plen <= slen && memmem(s, slen, g->piece, g->plen) != NULL;
	}
	return false;
}

bool names_glob_any(char *const *globs, size_t n, const char *name)
{
	size_t k, len = strlen(name);

	for (k = 0; k < n; k++) {
		struct names_glob g = glob_shape(globs[k]);

		if (glob_match(&g, name, len))
			return true;
	}
	return false;
}

int names_glob_set_init(struct names_glob_set *set, char *const *globs, size_t n)
{
	size_t k;

	set->v = NULL;
	set->n = 0;
	if (!n)
		return 0;
	if (!(set->v = malloc(n * sizeof(*set->v))))
		return -ENOMEM;
	for (k = 0; k < n; k++)
		set->v[k] = glob_shape(globs[k]);
	set->n = n;
	return 0;
}

void names_glob_set_release(struct names_glob_set *set)
{
	free(set->v);
	set->v = NULL;
	set->n = 0;
}

bool names_glob_set_any(const struct names_glob_set *set, const char *name, size_t len)
{
	size_t k;

	for (k = 0; k < set->n; k++)
		if (glob_match(&set->v[k], name, len))
			return true;
	return false;
}

bool names_override_ok(const char *backend, const char *arch, const char *name)
{
	size_t n = strlen(name);

	return !names_dir_problem(backend, strlen(backend), false) &&
	       !names_dir_problem(arch, strlen(arch), true) && n <= NAMES_VAR_MAX &&
	       env_name_valid(name, n);
}

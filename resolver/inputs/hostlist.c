/* hostlist: Slurm's host list syntax; see hostlist.h. */
#include "grow.h"
#include "hostlist.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* Slurm's bound on one N-M range. */
#define RANGE_MAX_NAMES 65536u

/* The numbers of one bracket group, formatted, and the text before it. */
struct group {
	const char *text;              /* borrowed from the expression */
	size_t text_len;
	char **nums;
	size_t n;
};

static bool separator(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n';
}

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

static int push(struct hostlist *hl, char *name)
{
	if (!name)
		return -ENOMEM;
	if (hl->n >= HOSTLIST_MAX_NAMES) {
		free(name);
		return -E2BIG;
	}
	if (GROW(hl->names, hl->cap, hl->n, 16) < 0) {
		free(name);
		return -ENOMEM;
	}
	hl->names[hl->n++] = name;
	return 0;
}

static void release_names(char **v, size_t n)
{
	while (n--)
		free(v[n]);
	free(v);
}

/* A number of at most 18 digits (so no arithmetic overflows). */
static int number(const char **p, const char *end, uint64_t *v, size_t *width)
{
	const char *s = *p;

	*v = 0;
	while (*p < end && digit(**p)) {
		if (*p - s >= 18)
			return -EINVAL;
		*v = *v * 10 + (uint64_t)(**p - '0');
		(*p)++;
	}
	*width = (size_t)(*p - s);
	return *width ? 0 : -EINVAL;
}

/* The numbers of the group between body and end ("01-04,07"). */
static int parse_group(const char *body, const char *end, struct group *g, const char **why)
{
	const char *p = body;
	struct hostlist nums = { 0 };
	int err;

	for (;;) {
		uint64_t lo, hi, k;
		size_t width, hw;

		*why = "a range in brackets is not N or N-M";
		if ((err = number(&p, end, &lo, &width)) < 0)
			goto out;
		hi = lo;
		if (p < end && *p == '-') {
			p++;
			/* Slurm reads "N-" as N. */
			if (p < end && *p != ',' && (err = number(&p, end, &hi, &hw)) < 0)
				goto out;
		}
		err = -EINVAL;
		if (p < end && *p != ',')
			goto out;
		*why = "a range in brackets goes downwards";
		if (hi < lo)
			goto out;
		*why = "a range in brackets holds more than 65,536 names";
		if (hi - lo >= RANGE_MAX_NAMES)
			goto out;
		for (k = lo; k <= hi; k++) {
			char buf[48];

			snprintf(buf, sizeof(buf), "%0*" PRIu64, (int)width, k);
			if ((err = push(&nums, xstrdup(buf))) < 0)
				goto out;
		}
		if (p == end)
			break;
		p++;                   /* the ',' */
	}
	g->nums = nums.names;
	g->n = nums.n;
	return 0;
out:
	release_names(nums.names, nums.n);
	return err;
}

/* Every name of the groups, the last varying fastest, then the first,
 * the second and so on: the order Slurm prints several groups in. */
static int multiply(struct hostlist *hl, const struct group *g, size_t ng, const char *tail,
		    size_t tail_len)
{
	size_t *at = calloc(ng, sizeof(*at)), k, total = 1;
	struct strbuf sb = STRBUF_INIT;
	int err = -ENOMEM;

	if (!at)
		return -ENOMEM;
	err = -E2BIG;
	for (k = 0; k < ng; k++)
		if ((total *= g[k].n) > HOSTLIST_MAX_NAMES - hl->n)
			goto out;
	for (;;) {
		sb_reset(&sb);
		for (k = 0; k < ng; k++)
			if ((err = sb_add(&sb, g[k].text, g[k].text_len)) < 0 ||
			    (err = sb_adds(&sb, g[k].nums[at[k]])) < 0)
				goto out;
		if ((err = sb_add(&sb, tail, tail_len)) < 0 ||
		    (err = push(hl, xstrdup(sb_str(&sb)))) < 0)
			goto out;
		/* The odometer's wheels, fastest first: the last group, then
		 * the groups from the first on. */
		for (k = 0; k < ng; k++) {
			size_t w = k == 0 ? ng - 1 : k - 1;

			if (++at[w] < g[w].n)
				break;
			at[w] = 0;
		}
		if (k == ng)
			break;
	}
	err = 0;
out:
	sb_release(&sb);
	free(at);
	return err;
}

/* One item between separators. */
static int expand_item(struct hostlist *hl, const char *s, const char *end, const char **why)
{
	struct group *g = NULL;
	size_t ng = 0, k;
	const char *p = s;
	int err = 0;

	if (!memchr(s, '[', (size_t)(end - s)))
		return push(hl, xstrndup(s, (size_t)(end - s)));
	while (p < end) {
		const char *open = memchr(p, '[', (size_t)(end - p)), *close;
		struct group *ngv;

		err = -EINVAL;
		*why = "text after the last bracket (Slurm refuses it)";
		if (!open)
			goto out;
		close = memchr(open, ']', (size_t)(end - open));
		if (!(ngv = realloc(g, (ng + 1) * sizeof(*g)))) {
			err = -ENOMEM;
			goto out;
		}
		g = ngv;
		g[ng] = (struct group){ p, (size_t)(open - p), NULL, 0 };
		if ((err = parse_group(open + 1, close, &g[ng], why)) < 0)
			goto out;
		ng++;
		p = close + 1;
	}
	err = multiply(hl, g, ng, "", 0);
out:
	for (k = 0; k < ng; k++)
		release_names(g[k].nums, g[k].n);
	free(g);
	return err;
}

int hostlist_expand(const char *expr, struct hostlist *out, const char **why)
{
	struct hostlist hl = { 0 };
	const char *p = expr, *item = expr;
	int depth = 0, err = 0;

	*why = NULL;
	for (;; p++) {
		if (*p == '[' || *p == ']') {
			err = -EINVAL;
			*why = *p == '[' ? "a bracket inside a bracket" : "a ']' without its '['";
			if ((*p == '[') != (depth == 0))
				goto out;
			depth = *p == '[';
			continue;
		}
		if (depth && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\0')) {
			err = -EINVAL;
			*why = *p ? "a blank inside brackets" : "a '[' without its ']'";
			goto out;
		}
		if (*p && (depth || !separator(*p)))
			continue;
		if (p > item && (err = expand_item(&hl, item, p, why)) < 0)
			goto out;
		if (!*p)
			break;
		item = p + 1;
	}
	*out = hl;
	return 0;
out:
	if (err == -E2BIG)
		*why = "more than 1,048,576 names";
	release_names(hl.names, hl.n);
	return err;
}

void hostlist_release(struct hostlist *hl)
{
	if (!hl)
		return;
	release_names(hl->names, hl->n);
	hl->names = NULL;
	hl->n = hl->cap = 0;
}

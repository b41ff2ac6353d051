/* yaml_build: parse events -> a ydoc's arena tree, with every limit of
 * yaml_tree.h checked on the event that crosses it (see yaml_build.h). */
#include "grow.h"
#include "yaml_build.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "diag.h"
#include "strbuf.h"

/* Explicit tags are stored in their short form ("!!str") because that is
 * how users write them and how diagnostics should quote them. */
#define YAML_TAG_PREFIX "tag:yaml.org,2002:"

void yb_init(struct ybuilder *b, struct ydoc *doc, struct diag_list *diags)
{
	memset(b, 0, sizeof(*b));
	b->doc = doc;
	b->diags = diags;
	b->max_nodes = YT_MAX_NODES;
}

void yb_release(struct ybuilder *b)
{
	size_t i;

	for (i = 0; i < b->depth; i++)
		free(b->stack[i].anchor);
	free(b->stack);
	free(b->kids);
	for (i = 0; i < b->nanchors; i++)
		free(b->anchors[i].name);
	free(b->anchors);
	b->stack = NULL;
	b->kids = NULL;
	b->anchors = NULL;
	b->depth = b->nkids = b->nanchors = 0;
}

static int limit_error(struct ybuilder *b, unsigned line, unsigned col,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int limit_error(struct ybuilder *b, unsigned line, unsigned col,
		       const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = diag_vadd(b->diags, DC_YAML_LIMIT, b->doc->file, line, col, fmt, ap);
	va_end(ap);
	return err < 0 ? err : -EINVAL;
}

/* The short form of tag, owned by the doc's arena; NULL on -ENOMEM. */
static char *tag_dup(struct arena *a, const char *tag)
{
	size_t plen = strlen(YAML_TAG_PREFIX), len = strlen(tag);
	char *t;

	if (len < plen || memcmp(tag, YAML_TAG_PREFIX, plen) != 0)
		return arena_strndup(a, tag, len);
	if (!(t = arena_alloc(a, len - plen + 3)))
		return NULL;
	memcpy(t, "!!", 2);
	memcpy(t + 2, tag + plen, len - plen);
	return t;
}

/* A zeroed node owned by the doc's arena. */
static int node_new(struct ybuilder *b, enum ynode_kind kind, unsigned line,
		    unsigned col, const char *tag, struct ynode **out)
{
	struct ynode *n = arena_alloc_uninit(b->doc->arena, sizeof(*n));

	if (!n)
		return -ENOMEM;
	/* Zeroed here, inline, rather than by a memset call in the arena. */
	*n = (struct ynode){ .kind = kind, .line = line, .col = col };
	if (tag && !(n->tag = tag_dup(b->doc->arena, tag)))
		return -ENOMEM;
	*out = n;
	return 0;
}

static int count_nodes(struct ybuilder *b, unsigned line, unsigned col,
		       size_t add)
{
	if (add > b->max_nodes || b->count > b->max_nodes - add)
		return limit_error(b, line, col, "more than %zu nodes once aliases "
				   "are expanded (an alias bomb?)", b->max_nodes);
	b->count += add;
	return 0;
}

/* Hangs n under the innermost open container (or makes it the root). */
static int attach(struct ybuilder *b, struct ynode *n)
{
	int err;

	if (!b->depth) {
		if (!b->doc->root)
			b->doc->root = n;
		return 0;
	}
	if ((err = GROW(b->kids, b->capkids, b->nkids, 16)) < 0)
		return err;
	b->kids[b->nkids++] = n;
	return 0;
}

static int anchor_add(struct ybuilder *b, const char *name, struct ynode *n,
		      size_t weight, size_t height)
{
	struct yb_anchor *a;
	int err;

	if ((err = GROW(b->anchors, b->capanchors, b->nanchors, 16)) < 0)
		return err;
	a = &b->anchors[b->nanchors];
	if (!(a->name = xstrdup(name)))
		return -ENOMEM;
	a->node = n;
	a->weight = weight;
	a->height = height;
	b->nanchors++;
	return 0;
}

int yb_scalar(struct ybuilder *b, unsigned line, unsigned col,
	      const char *tag, const char *anchor, const char *s, size_t len,
	      enum yscalar_style style)
{
	struct ynode *n;
	int err;

	if (!b->nul_ok && memchr(s, '\0', len))
		return limit_error(b, line, col, "NUL byte in a scalar (from a "
				   "\\0 escape)");
	if ((err = count_nodes(b, line, col, 1)) < 0)
		return err;
	if ((err = node_new(b, YN_SCALAR, line, col, tag, &n)) < 0)
		return err;
	if (!(n->str = arena_strndup(b->doc->text, s, len)))
		return -ENOMEM;
	n->len = len;
	n->style = style;
	if (anchor && (err = anchor_add(b, anchor, n, 1, 0)) < 0)
		return err;
	return attach(b, n);
}

int yb_start(struct ybuilder *b, enum ynode_kind kind, unsigned line,
	     unsigned col, const char *tag, const char *anchor)
{
	struct yb_frame *f;
	struct ynode *n;
	int err;

	if (b->depth >= YT_MAX_DEPTH)
		return limit_error(b, line, col, "nesting deeper than %u levels",
				   (unsigned)YT_MAX_DEPTH);
	if ((err = count_nodes(b, line, col, 1)) < 0)
		return err;
	if ((err = node_new(b, kind, line, col, tag, &n)) < 0)
		return err;
	/* Attach first: the container is its parent's child from its start. */
	if ((err = attach(b, n)) < 0)
		return err;
	if ((err = GROW(b->stack, b->capstack, b->depth, 16)) < 0)
		return err;
	f = &b->stack[b->depth++];
	f->node = n;
	f->first = b->nkids;
	f->count_start = b->count - 1;
	f->height = 0;
	f->anchor = NULL;
	if (anchor && !(f->anchor = xstrdup(anchor)))
		return -ENOMEM;
	return 0;
}

/* Moves the children of f from the scratch stack into arena arrays sized
 * exactly, so nothing is ever reallocated inside the arena. */
static int settle_children(struct ybuilder *b, struct yb_frame *f)
{
	struct ynode *p = f->node, **kids;
	size_t n = b->nkids - f->first, i;

	b->nkids = f->first;
	if (!n)
		return 0;
	kids = b->kids + f->first;
	if (p->kind == YN_SEQ) {
		if (!(p->items = arena_alloc_uninit(b->doc->arena, n * sizeof(*p->items))))
			return -ENOMEM;
		memcpy(p->items, kids, n * sizeof(*p->items));
		p->nitems = n;
		return 0;
	}
	/* A key without its value cannot happen: libyaml gives an empty
	 * scalar for a missing value. */
	if (!(p->pairs = arena_alloc_uninit(b->doc->arena, n / 2 * sizeof(*p->pairs))))
		return -ENOMEM;
	for (i = 0; i + 1 < n; i += 2) {
		p->pairs[i / 2].key = kids[i];
		p->pairs[i / 2].val = kids[i + 1];
	}
	p->npairs = n / 2;
	return 0;
}

int yb_end(struct ybuilder *b)
{
	struct yb_frame *f;
	size_t height;
	int err;

	if (!b->depth)
		return 0;
	f = &b->stack[--b->depth];
	height = f->height + 1;
	if (b->depth && b->stack[b->depth - 1].height < height)
		b->stack[b->depth - 1].height = height;
	err = settle_children(b, f);
	/* The anchor becomes usable only now, so `&a [*a]` finds no anchor. */
	if (!err && f->anchor)
		err = anchor_add(b, f->anchor, f->node, b->count - f->count_start,
				 height);
	free(f->anchor);
	f->anchor = NULL;
	return err;
}

int yb_alias(struct ybuilder *b, unsigned line, unsigned col, const char *name)
{
	size_t i;
	int err;

	if (++b->naliases > YT_MAX_ALIASES)
		return limit_error(b, line, col, "more than %u aliases",
				   (unsigned)YT_MAX_ALIASES);
	/* The most recent definition wins, as YAML allows redefinition. */
	for (i = b->nanchors; i-- > 0;) {
		struct yb_anchor *a = &b->anchors[i];

		if (strcmp(a->name, name) != 0)
			continue;
		if ((err = count_nodes(b, line, col, a->weight)) < 0)
			return err;
		/* Readers recurse through aliases: bound the expanded depth. */
		if (b->depth + a->height > YT_MAX_DEPTH)
			return limit_error(b, line, col, "nesting deeper than %u "
					   "levels once alias *%s is expanded",
					   (unsigned)YT_MAX_DEPTH, name);
		if (b->depth && b->stack[b->depth - 1].height < a->height)
			b->stack[b->depth - 1].height = a->height;
		return attach(b, a->node);
	}
	for (i = 0; i < b->depth; i++)
		if (b->stack[i].anchor && strcmp(b->stack[i].anchor, name) == 0)
			return limit_error(b, line, col, "alias *%s refers to a "
					   "node that contains it (a cycle)", name);
	return limit_error(b, line, col, "alias *%s has no anchor before it",
			   name);
}

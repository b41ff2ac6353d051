/* The variable catalog: catalog.yaml (the documented variables with
 * their types) and catalog.docs.yaml (their descriptions, attached to the
 * catalog's entries), schema-checked as spec files are. */
#include "spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "spec_schema.h"
#include "yaml_tree.h"

enum { CK_NAME, CK_DEFAULT, CK_DESCRIPTION, CK_WHERE_USED, CK_WHERE_SET, CK_TYPE, CK_MIN,
	CK_MAX, CK_VALUES, CK_INVALID };
static const char *const CATALOG_KEYS[] = { [CK_NAME] = "name", [CK_DEFAULT] = "default",
	[CK_DESCRIPTION] = "description", [CK_WHERE_USED] = "where_used",
	[CK_WHERE_SET] = "where_set", [CK_TYPE] = "type", [CK_MIN] = "min", [CK_MAX] = "max",
	[CK_VALUES] = "values", [CK_INVALID] = "invalid", NULL };

enum { DK_NAME, DK_DESCRIPTION, DK_WHERE_USED, DK_WHERE_SET };
static const char *const DOCS_KEYS[] = { [DK_NAME] = "name",
	[DK_DESCRIPTION] = "description", [DK_WHERE_USED] = "where_used",
	[DK_WHERE_SET] = "where_set", NULL };

/* The strings are the catalog block's text; only the arrays are e's. */
static void catalog_entry_release(struct catalog_entry *e)
{
	schema_free_type(&e->type);
}

static void take_catalog_entry(struct sctx *c, const struct ynode *n, struct catalog_entry *e)
{
	struct seen seen = { 0 };
	size_t k;

	memset(e, 0, sizeof(*e));
	e->type.invalid = DIAG_WARNING;
	if (n->kind != YN_MAP) {
		bad(c, n, "a catalog entry must be a mapping with at least name:");
		return;
	}
	for (k = 0; k < n->npairs; k++) {
		const struct ynode *key = n->pairs[k].key, *val = n->pairs[k].val;
		/* One lookup per key: the index says which it is. */
		int which = schema_key_index(c, key, CATALOG_KEYS, &seen);

		if (which == KEY_REPEATED)
			continue;
		if (key->kind != YN_SCALAR)
			bad(c, key, "keys must be strings");
		else if (which == CK_NAME)
			e->name = take_str(c, val, "name");
		else if (which == CK_DEFAULT)
			e->def = take_str(c, val, "default");
		else if (which == CK_DESCRIPTION)
			e->description = take_str(c, val, "description");
		else if (which == CK_WHERE_USED)
			e->where_used = take_str(c, val, "where_used");
		else if (which == CK_WHERE_SET)
			e->where_set = take_str(c, val, "where_set");
		else if (which == KEY_UNKNOWN || !take_type_key(c, key, val, &e->type))
			bad(c, key, "unknown field '%s' in a catalog entry (known: name, type, "
			    "min, max, values, invalid, default, description, where_set, "
			    "where_used)", key->str);
	}
	if (!e->name)
		bad(c, n, "a catalog entry needs name:");
	else
		schema_check_type(c, n, e->name, &e->type);
}

static int catalog_cmp(const void *a, const void *b)
{
	return strcmp(((const struct catalog_entry *)a)->name,
		      ((const struct catalog_entry *)b)->name);
}

/* A catalog array is the tail of a block that also owns the text its
 * entries point into (the document's scalars, taken over), so loading
 * copies no string and catalog_free() still needs only the array. */
struct catalog_block {
	struct arena *text;
	struct catalog_entry v[];
};

static struct catalog_block *catalog_block_of(struct catalog_entry *v)
{
	return (struct catalog_block *)((char *)v - offsetof(struct catalog_block, v));
}

/* Takes doc. */
static int catalog_from_loaded(const char *display, struct ydoc *doc,
			       struct catalog_entry **out, size_t *nout,
			       struct diag_list *diags)
{
	struct sctx c = { display, diags, 0 };
	const struct ynode *list;
	struct catalog_block *blk = NULL;
	struct catalog_entry *v;
	size_t n = 0, k;
	int err;

	if (!doc->root || doc->root->kind != YN_MAP || doc->root->npairs != 1 ||
	    !(list = ymap_get(doc->root, "catalog")) || list->kind != YN_SEQ) {
		bad(&c, doc->root, "a catalog is a mapping with one key, catalog:, holding a list");
		err = -EINVAL;
		goto out;
	}
	err = -ENOMEM;
	if (!(blk = calloc(1, sizeof(*blk) + (list->nitems ? list->nitems : 1) * sizeof(*v))))
		goto out;
	blk->text = ydoc_take_text(doc);
	v = blk->v;
	for (k = 0; k < list->nitems; k++) {
		take_catalog_entry(&c, list->items[k], &v[n]);
		if (!v[n].name) {
			catalog_entry_release(&v[n]);
			continue;
		}
		n++;
	}
	qsort(v, n, sizeof(*v), catalog_cmp);
	for (k = 1; k < n; k++)
		if (!strcmp(v[k].name, v[k - 1].name))
			bad(&c, doc->root, "catalog: %s is listed twice", v[k].name);
	err = c.errors ? -EINVAL : 0;
	*out = v;
	*nout = n;
	blk = NULL;
out:
	ydoc_free(doc);
	free(blk);
	return err;
}

int catalog_load_file(const char *path, const char *display,
		      struct catalog_entry **out, size_t *nout, struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	int err;

	if ((err = ydoc_load_file(path, &doc, diags)) < 0)
		return err;
	return catalog_from_loaded(display ? display : path, doc, out, nout, diags);
}

int catalog_load_buffer(const char *name, const char *buf, size_t len,
			struct catalog_entry **out, size_t *nout, struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	int err;

	if ((err = ydoc_load_buffer(name, buf, len, &doc, diags)) < 0)
		return err;
	return catalog_from_loaded(name, doc, out, nout, diags);
}

/* The documentation fields of one catalog.docs.yaml entry. */
struct docs_fields {
	const struct ynode *at;
	char *name, *description, *where_used, *where_set;
};

static void take_docs_fields(struct sctx *c, const struct ynode *n, struct docs_fields *f)
{
	struct seen seen = { 0 };
	size_t k;

	memset(f, 0, sizeof(*f));
	f->at = n;
	if (n->kind != YN_MAP) {
		bad(c, n, "a docs entry must be a mapping with at least name:");
		return;
	}
	for (k = 0; k < n->npairs; k++) {
		const struct ynode *key = n->pairs[k].key, *val = n->pairs[k].val;
		int which = schema_key_index(c, key, DOCS_KEYS, &seen);

		if (which == KEY_REPEATED)
			continue;
		if (key->kind != YN_SCALAR)
			bad(c, key, "keys must be strings");
		else if (which == DK_NAME)
			f->name = take_str(c, val, "name");
		else if (which == DK_DESCRIPTION)
			f->description = take_str(c, val, "description");
		else if (which == DK_WHERE_USED)
			f->where_used = take_str(c, val, "where_used");
		else if (which == DK_WHERE_SET)
			f->where_set = take_str(c, val, "where_set");
		else
			bad(c, key, "unknown field '%s' in a docs entry (known: name, description, "
			    "where_set, where_used; a type belongs in catalog.yaml)", key->str);
	}
	if (!f->name)
		bad(c, n, "a docs entry needs name:");
}

/* Puts f on its catalog entry, or says why it cannot go there. */
static void attach_docs(struct sctx *c, const struct docs_fields *f, struct catalog_entry *cat,
			size_t ncat, const char *catalog)
{
	struct catalog_entry key = { .name = f->name }, *e;

	e = ncat ? bsearch(&key, cat, ncat, sizeof(*cat), catalog_cmp) : NULL;
	if (!e) {
		bad(c, f->at, "%s is not in the catalog (%s): a docs entry documents a catalog "
		    "entry", f->name, catalog);
		return;
	}
	if (e->docs_line) {
		bad(c, f->at, "%s is documented twice (first at line %u)", f->name, e->docs_line);
		return;
	}
	if (e->description || e->where_used || e->where_set) {
		bad(c, f->at, "%s is also documented in %s: document it in one place", f->name,
		    catalog);
		return;
	}
	e->docs_line = f->at->line;
	e->description = f->description;
	e->where_used = f->where_used;
	e->where_set = f->where_set;
}

/* Takes doc. */
static int docs_from_loaded(const char *display, struct ydoc *doc, struct catalog_entry *cat,
			    size_t ncat, const char *catalog, struct arena **text,
			    struct diag_list *diags)
{
	struct sctx c = { display, diags, 0 };
	const struct ynode *list;
	size_t k;

	if (!doc->root || doc->root->kind != YN_MAP || doc->root->npairs != 1 ||
	    !(list = ymap_get(doc->root, "docs")) || list->kind != YN_SEQ) {
		bad(&c, doc->root, "catalog docs are a mapping with one key, docs:, holding a list");
		goto out;
	}
	for (k = 0; k < list->nitems; k++) {
		struct docs_fields f;

		take_docs_fields(&c, list->items[k], &f);
		if (f.name)
			attach_docs(&c, &f, cat, ncat, catalog);
	}
out:
	*text = ydoc_take_text(doc);
	ydoc_free(doc);
	return c.errors ? -EINVAL : 0;
}

int catalog_docs_load_file(const char *path, const char *display, struct catalog_entry *cat,
			   size_t ncat, const char *catalog, struct arena **text,
			   struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	int err;

	if ((err = ydoc_load_file(path, &doc, diags)) < 0)
		return err;
	return docs_from_loaded(display ? display : path, doc, cat, ncat, catalog, text, diags);
}

int catalog_docs_load_buffer(const char *name, const char *buf, size_t len,
			     struct catalog_entry *cat, size_t ncat, const char *catalog,
			     struct arena **text, struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	int err;

	if ((err = ydoc_load_buffer(name, buf, len, &doc, diags)) < 0)
		return err;
	return docs_from_loaded(name, doc, cat, ncat, catalog, text, diags);
}

void catalog_free(struct catalog_entry *v, size_t n)
{
	struct catalog_block *blk;
	size_t k;

	if (!v)
		return;
	blk = catalog_block_of(v);
	for (k = 0; k < n; k++)
		catalog_entry_release(&v[k]);
	arena_free(blk->text);
	free(blk);
}

/* The typed values of the spec schema, shared by spec files, catalog.yaml
 * and catalog.docs.yaml: each take_* reads one YAML node, and a node of the
 * wrong shape is an error diagnostic at that node (bad()), loading going
 * on so one run of `check` reports every problem. */
#include "spec_schema.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "yaml_tree.h"

void bad(struct sctx *c, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;

	c->errors++;
	va_start(ap, fmt);
	diag_vadd(c->diags, DC_SPEC_SCHEMA, c->file, n ? n->line : 0, n ? n->col : 0, fmt, ap);
	va_end(ap);
}

/* The index of key in known when it is a known key seen for the first
 * time in this mapping, KEY_REPEATED (with an error) when it was seen
 * before, or KEY_UNKNOWN, left to the caller's own error. A caller may
 * switch on the index instead of comparing key again. */
int schema_key_index(struct sctx *c, const struct ynode *key, const char *const *known,
		     struct seen *seen)
{
	unsigned i;

	for (i = 0; known[i] && i < 32; i++) {
		if (!yscalar_is(key, known[i]))
			continue;
		if (seen->mask & (1u << i)) {
			bad(c, key, "'%s' is given twice in this mapping (first at line %u); "
			    "the second is ignored", known[i], seen->line[i]);
			return KEY_REPEATED;
		}
		seen->mask |= 1u << i;
		seen->line[i] = key->line;
		return (int)i;
	}
	return KEY_UNKNOWN;
}

/* False (with an error) when key is a known key already seen in this
 * mapping; unknown keys are left to the caller's own error. */
bool schema_first_time(struct sctx *c, const struct ynode *key, const char *const *known,
		       struct seen *seen)
{
	return schema_key_index(c, key, known, seen) != KEY_REPEATED;
}

/* A scalar's text, borrowed from the document's text arena, which the
 * spec or catalog takes over; NULL (with an error) when n is not a scalar.
 * Copying each string cost a malloc and a free per field. */
char *take_str(struct sctx *c, const struct ynode *n, const char *key)
{
	if (!n || n->kind != YN_SCALAR) {
		bad(c, n, "%s must be a string", key);
		return NULL;
	}
	return n->str;
}

int take_bool(struct sctx *c, const struct ynode *n, const char *key, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "on", NULL };
	static const char *const no[] = { "false", "False", "FALSE", "no", "off", NULL };
	int k;

	if (n && n->kind == YN_SCALAR && n->style == YS_PLAIN) {
		for (k = 0; yes[k]; k++)
			if (yscalar_is(n, yes[k]))
				return *out = true, 0;
		for (k = 0; no[k]; k++)
			if (yscalar_is(n, no[k]))
				return *out = false, 0;
	}
	bad(c, n, "%s must be true or false", key);
	return -EINVAL;
}

/* shell or python; true when n was one of them. */
bool take_dialect(struct sctx *c, const struct ynode *n, enum dialect *out)
{
	if (yscalar_is(n, "shell"))
		*out = DIALECT_SHELL;
	else if (yscalar_is(n, "python"))
		*out = DIALECT_PYTHON;
	else {
		bad(c, n, "dialect must be shell (a line of the runner's bash scripts) or "
		    "python (a line of env_spec.py)");
		return false;
	}
	return true;
}

/* One string or a list of strings. */
int take_list(struct sctx *c, const struct ynode *n, const char *key,
	      char ***out, size_t *nout)
{
	size_t k, cnt = 1;
	char **v;

	if (n && n->kind == YN_SEQ)
		cnt = n->nitems;
	else if (!n || n->kind != YN_SCALAR) {
		bad(c, n, "%s must be a string or a list of strings", key);
		return -EINVAL;
	}
	if (!(v = calloc(cnt ? cnt : 1, sizeof(*v))))
		return -ENOMEM;
	for (k = 0; k < cnt; k++) {
		const struct ynode *it = n->kind == YN_SEQ ? n->items[k] : n;

		if (!(v[k] = take_str(c, it, key))) {
			free(v);
			return -EINVAL;
		}
	}
	*out = v;
	*nout = cnt;
	return 0;
}

/* The when: at n: its source into *src and its tree into *tree (NULL when
 * it does not parse, which is the spec's error at n). Both are the
 * spec's; the tree is freed with expr_free(). */
void take_cond(struct sctx *c, const struct ynode *n, char **src, struct expr **tree)
{
	char msg[160];

	if (!(*src = take_str(c, n, "when")))
		return;
	if (expr_parse(*src, tree, msg, sizeof(msg)) < 0)
		bad(c, n, "bad condition: %s", msg);
}

int take_sev(struct sctx *c, const struct ynode *n, enum diag_sev *out)
{
	if (yscalar_is(n, "info"))
		*out = DIAG_INFO;
	else if (yscalar_is(n, "warning"))
		*out = DIAG_WARNING;
	else if (yscalar_is(n, "error"))
		*out = DIAG_ERROR;
	else {
		bad(c, n, "severity must be info, warning or error");
		return -EINVAL;
	}
	return 0;
}

int take_int(struct sctx *c, const struct ynode *n, const char *key, long long *out)
{
	char *end;

	if (n && n->kind == YN_SCALAR && n->len) {
		errno = 0;
		*out = strtoll(n->str, &end, 10);
		if (!errno && *end == '\0')
			return 0;
	}
	bad(c, n, "%s must be an integer", key);
	return -EINVAL;
}

int take_type(struct sctx *c, const struct ynode *n, enum vtype *out)
{
	static const struct { const char *name; enum vtype t; } types[] = {
		{ "string", VT_STRING }, { "bool", VT_BOOL }, { "int", VT_INT },
		{ "enum", VT_ENUM }, { "path", VT_PATH }, { "list", VT_LIST },
	};
	size_t k;

	for (k = 0; k < sizeof(types) / sizeof(types[0]); k++)
		if (yscalar_is(n, types[k].name))
			return *out = types[k].t, 0;
	bad(c, n, "type must be one of string, bool, int, enum, path, list");
	return -EINVAL;
}

/* Type keys shared by spec variables and catalog entries; returns 1 when
 * key was one of them. */
int take_type_key(struct sctx *c, const struct ynode *k, const struct ynode *v,
		  struct vtype_def *t)
{
	if (yscalar_is(k, "type"))
		take_type(c, v, &t->type);
	else if (yscalar_is(k, "min"))
		t->has_min = take_int(c, v, "min", &t->min) == 0;
	else if (yscalar_is(k, "max"))
		t->has_max = take_int(c, v, "max", &t->max) == 0;
	else if (yscalar_is(k, "values"))
		take_list(c, v, "values", &t->values, &t->nvalues);
	else if (yscalar_is(k, "invalid"))
		take_sev(c, v, &t->invalid);
	else
		return 0;
	return 1;
}

void schema_check_type(struct sctx *c, const struct ynode *at, const char *name,
		       const struct vtype_def *t)
{
	if ((t->has_min || t->has_max) && t->type != VT_INT)
		bad(c, at, "%s: min and max need type: int", name);
	if (t->nvalues && t->type != VT_ENUM && t->type != VT_LIST)
		bad(c, at, "%s: values needs type: enum or list", name);
	if (t->type == VT_ENUM && !t->nvalues)
		bad(c, at, "%s: type enum needs values", name);
}

void schema_free_type(struct vtype_def *t)
{
	free(t->values);
}

int take_scope(struct sctx *c, const struct ynode *n, unsigned *out)
{
	char **v = NULL;
	size_t nv = 0, k;
	int err;

	if ((err = take_list(c, n, "scope", &v, &nv)) < 0)
		return err;
	for (k = 0; k < nv; k++) {
		if (!strcmp(v[k], "runtime"))
			*out |= SCOPE_RUNTIME;
		else if (!strcmp(v[k], "build"))
			*out |= SCOPE_BUILD;
		else if (!strcmp(v[k], "test"))
			*out |= SCOPE_TEST;
		else if (!strcmp(v[k], "node"))
			*out |= SCOPE_NODE;
		else
			bad(c, n, "scope '%s' is not runtime, build, test or node", v[k]);
	}
	free(v);
	return 0;
}

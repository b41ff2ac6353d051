/* Spec files: schema checking and the in-memory form (schema: specs/README.md).
 * Every schema problem is an error diagnostic at the offending node, and
 * loading goes on so one run of `check` reports them all. */
#include "spec.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "expr.h"
#include "inherit.h"
#include "yaml_tree.h"

struct sctx {
	const char *file;
	struct diag_list *diags;
	int errors;
};

static void bad(struct sctx *c, const struct ynode *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void bad(struct sctx *c, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;

	c->errors++;
	va_start(ap, fmt);
	diag_vadd(c->diags, DIAG_ERROR, c->file, n ? n->line : 0, n ? n->col : 0, fmt, ap);
	va_end(ap);
}

/* Known keys of one mapping already seen. A repeated key would run its
 * take_* twice over the same arrays, so the later one is refused. */
struct seen {
	unsigned mask;
	unsigned line[32];
};

static const char *const SPEC_KEYS[] = { "backend", "runner", "uses_runner", "arches",
	"passthrough", "passthrough_prefixes", "owned_prefix", "families", "retired", "rules",
	"variables", "dialect", "value_reading", NULL };
static const char *const VAR_KEYS[] = { "name", "value", "kind", "flags", "append_from",
	"mode", "export", "arch", "when", "note", "secret", "scope", "pin", "type", "min",
	"max", "values", "invalid", "dialect", "detect", "detected", NULL };
static const char *const FLAG_KEYS[] = { "flag", "when", "note", NULL };
static const char *const RETIRED_KEYS[] = { "name", "replaced_by", "note", NULL };
static const char *const RULE_KEYS[] = { "when", "at", "severity", "message", NULL };
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

enum { KEY_UNKNOWN = -1, KEY_REPEATED = -2 };

/* The index of key in known when it is a known key seen for the first
 * time in this mapping, KEY_REPEATED (with an error) when it was seen
 * before, or KEY_UNKNOWN, left to the caller's own error. A caller may
 * switch on the index instead of comparing key again. */
static int key_index(struct sctx *c, const struct ynode *key, const char *const *known,
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
static bool first_time(struct sctx *c, const struct ynode *key, const char *const *known,
		       struct seen *seen)
{
	return key_index(c, key, known, seen) != KEY_REPEATED;
}

/* A scalar's text, borrowed from the document's text arena, which the
 * spec or catalog takes over; NULL (with an error) when n is not a scalar.
 * Copying each string cost a malloc and a free per field. */
static char *take_str(struct sctx *c, const struct ynode *n, const char *key)
{
	if (!n || n->kind != YN_SCALAR) {
		bad(c, n, "%s must be a string", key);
		return NULL;
	}
	return n->str;
}

static int take_bool(struct sctx *c, const struct ynode *n, const char *key, bool *out)
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
static bool take_dialect(struct sctx *c, const struct ynode *n, enum dialect *out)
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
static int take_list(struct sctx *c, const struct ynode *n, const char *key,
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
static void take_cond(struct sctx *c, const struct ynode *n, char **src, struct expr **tree)
{
	char msg[160];

	if (!(*src = take_str(c, n, "when")))
		return;
	if (expr_parse(*src, tree, msg, sizeof(msg)) < 0)
		bad(c, n, "bad condition: %s", msg);
}

static int take_sev(struct sctx *c, const struct ynode *n, enum diag_sev *out)
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

static int take_int(struct sctx *c, const struct ynode *n, const char *key, long long *out)
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

static int take_type(struct sctx *c, const struct ynode *n, enum vtype *out)
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
static int take_type_key(struct sctx *c, const struct ynode *k, const struct ynode *v,
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

static void check_type(struct sctx *c, const struct ynode *at, const char *name,
		       const struct vtype_def *t)
{
	if ((t->has_min || t->has_max) && t->type != VT_INT)
		bad(c, at, "%s: min and max need type: int", name);
	if (t->nvalues && t->type != VT_ENUM && t->type != VT_LIST)
		bad(c, at, "%s: values needs type: enum or list", name);
	if (t->type == VT_ENUM && !t->nvalues)
		bad(c, at, "%s: type enum needs values", name);
}

static void free_type(struct vtype_def *t)
{
	free(t->values);
}

static int take_scope(struct sctx *c, const struct ynode *n, unsigned *out)
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

static int take_flags(struct sctx *c, const struct ynode *n, struct spec_var *var)
{
	size_t k, j;

	if (!n || n->kind != YN_SEQ) {
		bad(c, n, "flags must be a list");
		return -EINVAL;
	}
	if (!(var->flags = calloc(n->nitems ? n->nitems : 1, sizeof(*var->flags))))
		return -ENOMEM;
	for (k = 0; k < n->nitems; k++) {
		const struct ynode *it = n->items[k];
		struct spec_flag *f = &var->flags[var->nflags];

		f->line = it->line;
		f->col = it->col;
		if (it->kind == YN_SCALAR) {
			f->text = take_str(c, it, "flag");
		} else if (it->kind == YN_MAP) {
			struct seen seen = { 0 };

			for (j = 0; j < it->npairs; j++) {
				const struct ynode *key = it->pairs[j].key, *val = it->pairs[j].val;

				if (!first_time(c, key, FLAG_KEYS, &seen))
					continue;
				if (yscalar_is(key, "flag"))
					f->text = take_str(c, val, "flag");
				else if (yscalar_is(key, "when"))
					take_cond(c, val, &f->when, &f->when_expr);
				else if (yscalar_is(key, "note"))
					f->note = take_str(c, val, "note");
				else
					bad(c, key, "unknown field '%s' in a flag (known: flag, when, note)",
					    key->kind == YN_SCALAR ? key->str : "?");
			}
			if (!f->text)
				bad(c, it, "a flag entry needs flag:");
		} else {
			bad(c, it, "a flag must be a string or a mapping");
		}
		if (!f->text) {
			expr_free(f->when_expr);
			memset(f, 0, sizeof(*f));
			continue;
		}
		var->nflags++;
	}
	return 0;
}

static int take_pins(struct sctx *c, const struct ynode *n, struct spec_var *var)
{
	size_t k;

	if (!n || n->kind != YN_MAP) {
		bad(c, n, "pin must be a mapping of arch: value");
		return -EINVAL;
	}
	if (!(var->pins = calloc(n->npairs ? n->npairs : 1, sizeof(*var->pins))))
		return -ENOMEM;
	for (k = 0; k < n->npairs; k++) {
		struct spec_pin *p = &var->pins[var->npins];

		p->arch = take_str(c, n->pairs[k].key, "pin arch");
		p->value = take_str(c, n->pairs[k].val, "pin value");
		if (!p->arch || !p->value)
			continue;
		var->npins++;
	}
	return 0;
}

/* The strings are the spec's text arena's; the arrays and trees are v's. */
static void var_release(struct spec_var *v)
{
	size_t k;

	expr_free(v->when_expr);
	for (k = 0; k < v->nflags; k++)
		expr_free(v->flags[k].when_expr);
	free(v->flags);
	free(v->arch);
	free_type(&v->type);
	free(v->pins);
}

static void take_var(struct sctx *c, const struct ynode *n, struct spec_var *var)
{
	const struct ynode *kind_node = NULL, *flags_node = NULL;
	struct seen seen = { 0 };
	size_t k;

	memset(var, 0, sizeof(*var));
	var->export = true;
	var->type.invalid = DIAG_WARNING;
	var->line = n->line;
	var->col = n->col;
	if (n->kind != YN_MAP) {
		bad(c, n, "a variable must be a mapping with at least name:");
		return;
	}
	for (k = 0; k < n->npairs; k++) {
		const struct ynode *key = n->pairs[k].key, *val = n->pairs[k].val;

		if (!first_time(c, key, VAR_KEYS, &seen))
			continue;
		if (key->kind != YN_SCALAR) {
			bad(c, key, "keys must be strings");
		} else if (yscalar_is(key, "name")) {
			if ((var->name = take_str(c, val, "name")) &&
			    !env_name_valid(var->name, strlen(var->name)))
				bad(c, val, "'%s' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)",
				    var->name);
		} else if (yscalar_is(key, "value")) {
			var->value = take_str(c, val, "value");
		} else if (yscalar_is(key, "kind")) {
			kind_node = val;
			if (yscalar_is(val, "flags"))
				var->kind = SPEC_KIND_FLAGS;
			else if (!yscalar_is(val, "value"))
				bad(c, val, "kind must be value or flags");
		} else if (yscalar_is(key, "flags")) {
			flags_node = val;
			take_flags(c, val, var);
		} else if (yscalar_is(key, "append_from")) {
			var->append_from = take_str(c, val, "append_from");
		} else if (yscalar_is(key, "mode")) {
			if (yscalar_is(val, "set"))
				var->mode = SPEC_MODE_SET;
			else if (!yscalar_is(val, "default"))
				bad(c, val, "mode must be default or set");
		} else if (yscalar_is(key, "export")) {
			take_bool(c, val, "export", &var->export);
		} else if (yscalar_is(key, "dialect")) {
			var->has_dialect = take_dialect(c, val, &var->dialect);
		} else if (yscalar_is(key, "detect")) {
			if ((var->detect = take_str(c, val, "detect")) &&
			    strcmp(var->detect, "ib_hca") && strcmp(var->detect, "ip_interface"))
				bad(c, val, "detect must be ib_hca or ip_interface");
			var->detected = true;
		} else if (yscalar_is(key, "detected")) {
			take_bool(c, val, "detected", &var->detected);
		} else if (yscalar_is(key, "arch")) {
			take_list(c, val, "arch", &var->arch, &var->narch);
		} else if (yscalar_is(key, "when")) {
			take_cond(c, val, &var->when, &var->when_expr);
		} else if (yscalar_is(key, "note")) {
			var->note = take_str(c, val, "note");
		} else if (yscalar_is(key, "secret")) {
			take_bool(c, val, "secret", &var->secret);
		} else if (yscalar_is(key, "scope")) {
			take_scope(c, val, &var->scope);
		} else if (yscalar_is(key, "pin")) {
			take_pins(c, val, var);
		} else if (!take_type_key(c, key, val, &var->type)) {
			bad(c, key, "unknown field '%s' in a variable (known: name, value, kind, "
			    "flags, append_from, mode, export, dialect, detect, detected, arch, "
			    "when, note, secret, type, min, max, values, invalid, scope, pin)",
			    key->kind == YN_SCALAR ? key->str : "?");
		}
	}
	if (!var->name)
		bad(c, n, "a variable needs name:");
	if (var->kind == SPEC_KIND_FLAGS && var->value)
		bad(c, n, "%s: kind flags takes flags:, not value:", var->name);
	if (var->detect && (var->value || var->kind == SPEC_KIND_FLAGS))
		bad(c, n, "%s: detect: gives the value; it takes no value: or flags:",
		    var->name ? var->name : "variable");
	if (var->kind != SPEC_KIND_FLAGS && (flags_node || var->append_from))
		bad(c, flags_node ? flags_node : n, "%s: flags: and append_from: need kind: flags",
		    var->name);
	if (var->append_from && !env_name_valid(var->append_from, strlen(var->append_from)))
		bad(c, n, "%s: append_from is not a variable name", var->name);
	(void)kind_node;
	check_type(c, n, var->name ? var->name : "variable", &var->type);
}

static void take_retired(struct sctx *c, const struct ynode *n, struct spec *s)
{
	size_t k, j;

	if (n->kind != YN_SEQ) {
		bad(c, n, "retired must be a list");
		return;
	}
	if (!(s->retired = calloc(n->nitems ? n->nitems : 1, sizeof(*s->retired))))
		return;
	for (k = 0; k < n->nitems; k++) {
		const struct ynode *it = n->items[k];
		struct spec_retired *r = &s->retired[s->nretired];

		if (it->kind == YN_SCALAR) {
			r->name = take_str(c, it, "retired");
		} else if (it->kind == YN_MAP) {
			struct seen seen = { 0 };

			for (j = 0; j < it->npairs; j++) {
				const struct ynode *key = it->pairs[j].key, *val = it->pairs[j].val;

				if (!first_time(c, key, RETIRED_KEYS, &seen))
					continue;
				if (yscalar_is(key, "name"))
					r->name = take_str(c, val, "name");
				else if (yscalar_is(key, "replaced_by"))
					r->replaced_by = take_str(c, val, "replaced_by");
				else if (yscalar_is(key, "note"))
					r->note = take_str(c, val, "note");
				else
					bad(c, key, "unknown field '%s' in retired (known: name, "
					    "replaced_by, note)", key->kind == YN_SCALAR ? key->str : "?");
			}
		} else {
			bad(c, it, "a retired entry must be a name or a mapping");
		}
		if (!r->name) {
			memset(r, 0, sizeof(*r));
			continue;
		}
		s->nretired++;
	}
}

static void take_rules(struct sctx *c, const struct ynode *n, struct spec *s)
{
	struct seen seen;
	size_t k, j;

	if (n->kind != YN_SEQ) {
		bad(c, n, "rules must be a list");
		return;
	}
	if (!(s->rules = calloc(n->nitems ? n->nitems : 1, sizeof(*s->rules))))
		return;
	for (k = 0; k < n->nitems; k++) {
		const struct ynode *it = n->items[k];
		struct spec_rule *r = &s->rules[s->nrules];

		r->sev = DIAG_WARNING;
		r->line = it->line;
		r->col = it->col;
		if (it->kind != YN_MAP) {
			bad(c, it, "a rule must be a mapping with when: and message:");
			continue;
		}
		memset(&seen, 0, sizeof(seen));
		for (j = 0; j < it->npairs; j++) {
			const struct ynode *key = it->pairs[j].key, *val = it->pairs[j].val;

			if (!first_time(c, key, RULE_KEYS, &seen))
				continue;
			if (yscalar_is(key, "when")) {
				take_cond(c, val, &r->when, &r->when_expr);
			} else if (yscalar_is(key, "at")) {
				if (yscalar_is(val, "runner"))
					r->at = RULE_AT_RUNNER;
				else if (!yscalar_is(val, "final"))
					bad(c, val, "at must be final or runner");
			} else if (yscalar_is(key, "severity"))
				take_sev(c, val, &r->sev);
			else if (yscalar_is(key, "message"))
				r->message = take_str(c, val, "message");
			else
				bad(c, key, "unknown field '%s' in a rule (known: when, at, severity, "
				    "message)", key->kind == YN_SCALAR ? key->str : "?");
		}
		if (!r->when || !r->message) {
			bad(c, it, "a rule needs when: and message:");
			expr_free(r->when_expr);
			memset(r, 0, sizeof(*r));
			continue;
		}
		s->nrules++;
	}
}

static void take_vars(struct sctx *c, const struct ynode *n, struct spec *s)
{
	size_t k;

	if (n->kind != YN_SEQ) {
		bad(c, n, "variables must be a list");
		return;
	}
	if (!(s->vars = calloc(n->nitems ? n->nitems : 1, sizeof(*s->vars))))
		return;
	for (k = 0; k < n->nitems; k++) {
		struct spec_var *v = &s->vars[s->nvars];

		take_var(c, n->items[k], v);
		if (!v->name) {
			var_release(v);
			continue;
		}
		s->nvars++;
	}
}

static int spec_from_doc(struct sctx *c, const struct ydoc *doc, struct spec *s)
{
	const struct ynode *root = doc->root;
	struct seen seen = { 0 };
	bool dialect_given = false;
	size_t k;

	if (!root || root->kind != YN_MAP) {
		bad(c, root, "a spec must be a mapping (backend:, arches:, variables:, …)");
		return -EINVAL;
	}
	for (k = 0; k < root->npairs; k++) {
		const struct ynode *key = root->pairs[k].key, *val = root->pairs[k].val;

		if (!first_time(c, key, SPEC_KEYS, &seen))
			continue;
		if (key->kind != YN_SCALAR)
			bad(c, key, "keys must be strings");
		else if (yscalar_is(key, "backend"))
			s->backend = take_str(c, val, "backend");
		else if (yscalar_is(key, "runner"))
			take_bool(c, val, "runner", &s->is_runner);
		else if (yscalar_is(key, "uses_runner"))
			take_bool(c, val, "uses_runner", &s->uses_runner);
		else if (yscalar_is(key, "arches"))
			take_list(c, val, "arches", &s->arches, &s->narches);
		else if (yscalar_is(key, "passthrough"))
			take_list(c, val, "passthrough", &s->passthrough, &s->npassthrough);
		else if (yscalar_is(key, "passthrough_prefixes"))
			take_list(c, val, "passthrough_prefixes", &s->pass_prefixes,
				  &s->npass_prefixes);
		else if (yscalar_is(key, "owned_prefix"))
			s->owned_prefix = take_str(c, val, "owned_prefix");
		else if (yscalar_is(key, "families"))
			take_list(c, val, "families", &s->families, &s->nfamilies);
		else if (yscalar_is(key, "retired"))
			take_retired(c, val, s);
		else if (yscalar_is(key, "rules"))
			take_rules(c, val, s);
		else if (yscalar_is(key, "variables"))
			take_vars(c, val, s);
		else if (yscalar_is(key, "dialect"))
			dialect_given = take_dialect(c, val, &s->dialect);
		else if (yscalar_is(key, "value_reading")) {
			if (yscalar_is(val, "relaxed"))
				s->relaxed_values = true;
			else if (!yscalar_is(val, "exact"))
				bad(c, val, "value_reading must be exact (the text as it is) or "
				    "relaxed (stripped, empty means unset, any case)");
		}
		else
			bad(c, key, "unknown field '%s' in a spec (known: backend, runner, "
			    "uses_runner, dialect, value_reading, arches, passthrough, "
			    "passthrough_prefixes, owned_prefix, families, retired, rules, "
			    "variables)", key->str);
	}
	if (!dialect_given)
		s->dialect = s->is_runner ? DIALECT_SHELL : DIALECT_PYTHON;
	for (k = 0; k < s->nvars; k++)
		if (!s->vars[k].has_dialect)
			s->vars[k].dialect = s->dialect;
	if (s->is_runner && s->backend)
		bad(c, root, "a spec is either the runner (runner: true) or a backend, not both");
	if (!s->is_runner && !s->backend)
		bad(c, root, "a spec needs backend: NAME (or runner: true for the runner base)");
	if (s->backend && (!*s->backend || strchr(s->backend, '/') || s->backend[0] == '.'))
		bad(c, root, "backend '%s' is not a directory name", s->backend);
	for (k = 0; k < s->narches; k++)
		if (!*s->arches[k] || strchr(s->arches[k], '/') || s->arches[k][0] == '.')
			bad(c, root, "arch '%s' is not a directory name", s->arches[k]);
	return 0;
}

static const struct spec *index_spec;   /* qsort has no context argument */

static int by_name_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(index_spec->vars[x].name, index_spec->vars[y].name);

	return c ? c : (x > y) - (x < y);
}

static int retired_cmp(const void *a, const void *b)
{
	return strcmp(((const struct spec_retired *)a)->name,
		      ((const struct spec_retired *)b)->name);
}

/* Name lookups must not scan: resolution and validation ask once per
 * variable, so a scan would make them quadratic in the spec's size. */
static int spec_index(struct spec *s)
{
	size_t k;

	if (!(s->by_name = calloc(s->nvars ? s->nvars : 1, sizeof(*s->by_name))))
		return -ENOMEM;
	for (k = 0; k < s->nvars; k++)
		s->by_name[k] = k;
	index_spec = s;
	if (s->nvars > 1)
		qsort(s->by_name, s->nvars, sizeof(*s->by_name), by_name_cmp);
	index_spec = NULL;
	if (s->nretired > 1)
		qsort(s->retired, s->nretired, sizeof(*s->retired), retired_cmp);
	return 0;
}

size_t spec_entries(const struct spec *s, const char *name, size_t *first)
{
	size_t lo = 0, hi = s->nvars, end;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (strcmp(s->vars[s->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < s->nvars && !strcmp(s->vars[s->by_name[end]].name, name); end++)
		;
	*first = lo;
	return end - lo;
}

const struct spec_retired *spec_retired_find(const struct spec *s, const char *name)
{
	struct spec_retired key = { .name = (char *)name };

	if (!s || !s->nretired)
		return NULL;
	return bsearch(&key, s->retired, s->nretired, sizeof(key), retired_cmp);
}

/* Takes doc; path names the file in provenance, display in diagnostics. */
static int spec_from_loaded(const char *path, const char *display, struct ydoc *doc,
			    struct spec **out, struct diag_list *diags)
{
	struct sctx c = { display ? display : path, diags, 0 };
	struct spec *s = NULL;
	int err = -ENOMEM;

	if (!(s = calloc(1, sizeof(*s))))
		goto out;
	s->uses_runner = true;
	s->text = ydoc_take_text(doc);
	if (!(s->file = xstrdup(path)) || !(s->display = xstrdup(c.file)))
		goto out;
	spec_from_doc(&c, doc, s);
	if ((err = spec_index(s)) < 0)
		goto out;
	err = c.errors ? -EINVAL : 0;
	*out = s;
	s = NULL;
out:
	spec_free(s);
	ydoc_free(doc);
	return err;
}

int spec_load_file(const char *path, const char *display, struct spec **out,
		   struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	int err;

	if ((err = ydoc_load_file(path, &doc, diags)) < 0)
		return err;
	return spec_from_loaded(path, display, doc, out, diags);
}

int spec_load_buffer(const char *name, const char *buf, size_t len, struct spec **out,
		     struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	int err;

	if ((err = ydoc_load_buffer(name, buf, len, &doc, diags)) < 0)
		return err;
	return spec_from_loaded(name, name, doc, out, diags);
}

void spec_free(struct spec *s)
{
	size_t k;

	if (!s)
		return;
	free(s->file);
	free(s->display);
	free(s->arches);
	free(s->passthrough);
	free(s->pass_prefixes);
	free(s->families);
	free(s->retired);
	for (k = 0; k < s->nrules; k++)
		expr_free(s->rules[k].when_expr);
	free(s->rules);
	for (k = 0; k < s->nvars; k++)
		var_release(&s->vars[k]);
	free(s->vars);
	free(s->by_name);
	arena_free(s->text);
	free(s);
}

/* The strings are the catalog block's text; only the arrays are e's. */
static void catalog_entry_release(struct catalog_entry *e)
{
	free_type(&e->type);
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
		int which = key_index(c, key, CATALOG_KEYS, &seen);

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
		check_type(c, n, e->name, &e->type);
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
		int which = key_index(c, key, DOCS_KEYS, &seen);

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

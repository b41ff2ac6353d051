/* Spec files: schema checking and the in-memory form (schema: specs/README.md).
 * Every schema problem is an error diagnostic at the offending node, and
 * loading goes on so one run of `check` reports them all. */
#include "spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "expr.h"
#include "inherit.h"
#include "names.h"
#include "spec_schema.h"
#include "text.h"
#include "yaml_tree.h"

static const char *const SPEC_KEYS[] = { "backend", "runner", "uses_runner", "arches",
	"secret_patterns",
	"passthrough", "passthrough_prefixes", "owned_prefix", "families", "retired", "rules",
	"variables", "dialect", "value_reading", "models", NULL };
static const char *const VAR_KEYS[] = { "name", "value", "kind", "flags", "append_from",
	"mode", "export", "arch", "when", "note", "secret", "scope", "pin", "type", "min",
	"max", "values", "invalid", "dialect", "detect", "detected", NULL };
static const char *const FLAG_KEYS[] = { "flag", "when", "note", NULL };
static const char *const RETIRED_KEYS[] = { "name", "replaced_by", "note", NULL };
static const char *const RULE_KEYS[] = { "when", "at", "severity", "code", "message", NULL };

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

				if (!schema_first_time(c, key, FLAG_KEYS, &seen))
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
	schema_free_type(&v->type);
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

		if (!schema_first_time(c, key, VAR_KEYS, &seen))
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
			    strcmp(var->detect, "ib_hca") && strcmp(var->detect, "ip_interface") &&
			    strcmp(var->detect, "primus_path") &&
			    strcmp(var->detect, "primus_import_root"))
				bad(c, val, "detect must be ib_hca, ip_interface, primus_path or "
				    "primus_import_root");
			/* Where Primus is belongs to the container, not to the
			 * node: the runner's own entries, layer runner. */
			var->detected = var->detect && strncmp(var->detect, "primus_", 7);
		} else if (yscalar_is(key, "detected")) {
			take_bool(c, val, "detected", &var->detected);
		} else if (yscalar_is(key, "arch")) {
			take_list(c, val, "arch", &var->arch, &var->narch);
		} else if (yscalar_is(key, "when")) {
			take_cond(c, val, &var->when, &var->when_expr);
		} else if (yscalar_is(key, "note")) {
			var->note = take_str(c, val, "note");
		} else if (yscalar_is(key, "secret")) {
			var->secret_given = take_bool(c, val, "secret", &var->secret) == 0;
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
	schema_check_type(c, n, var->name ? var->name : "variable", &var->type);
}

/* models: {source: OWNER/NAME, version: V, commit: 40 hex digits}. */
static void take_models(struct sctx *c, const struct ynode *n, struct spec *s)
{
	size_t k, len;

	if (n->kind != YN_MAP) {
		bad(c, n, "models must be a mapping of source, version and commit");
		return;
	}
	for (k = 0; k < n->npairs; k++) {
		const struct ynode *key = n->pairs[k].key, *val = n->pairs[k].val;

		if (yscalar_is(key, "source"))
			s->models_source = take_str(c, val, "source");
		else if (yscalar_is(key, "version"))
			s->models_version = take_str(c, val, "version");
		else if (yscalar_is(key, "commit"))
			s->models_commit = take_str(c, val, "commit");
		else
			bad(c, key, "unknown field '%s' in models (known: source, version, commit)",
			    key->kind == YN_SCALAR ? key->str : "?");
	}
	if (!s->models_source || !s->models_version || !s->models_commit) {
		bad(c, n, "models needs source, version and commit");
		s->models_source = s->models_version = s->models_commit = NULL;
		return;
	}
	len = strlen(s->models_commit);
	if (len != 40 || strspn(s->models_commit, "0123456789abcdef") != len)
		bad(c, ymap_get(n, "commit"), "models: commit must be 40 lower-case hex digits");
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

				if (!schema_first_time(c, key, RETIRED_KEYS, &seen))
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

/* A rule's code: the one code: names (its severity is the code's, and a
 * severity: beside it must agree), else the generic code of severity:. */
static void take_rule_code(struct sctx *c, struct spec_rule *r, const struct ynode *code_at,
			   const struct ynode *sev_at)
{
	const struct diag_code_info *ci;
	enum diag_code code;

	r->code = r->sev == DIAG_ERROR ? DC_RULE_ERROR :
		  r->sev == DIAG_INFO ? DC_RULE_INFO : DC_RULE_WARNING;
	if (!code_at)
		return;
	if (code_at->kind != YN_SCALAR || diag_code_parse(code_at->str, code_at->len, &code) < 0) {
		bad(c, code_at, "code %.16s is not a diagnostic code (the man page lists them)",
		    code_at->kind == YN_SCALAR ? code_at->str : "?");
		return;
	}
	ci = diag_code_info(code);
	if (sev_at && r->sev != ci->sev) {
		bad(c, sev_at, "severity %s disagrees with code %s (a%s %s)", diag_sev_name(r->sev),
		    ci->code, ci->sev == DIAG_INFO ? "n" : "", diag_sev_name(ci->sev));
		return;
	}
	r->code = code;
	r->sev = (enum diag_sev)ci->sev;
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
		const struct ynode *code_at = NULL, *sev_at = NULL;

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

			if (!schema_first_time(c, key, RULE_KEYS, &seen))
				continue;
			if (yscalar_is(key, "when")) {
				take_cond(c, val, &r->when, &r->when_expr);
			} else if (yscalar_is(key, "at")) {
				if (yscalar_is(val, "runner"))
					r->at = RULE_AT_RUNNER;
				else if (!yscalar_is(val, "final"))
					bad(c, val, "at must be final or runner");
			} else if (yscalar_is(key, "severity")) {
				if (take_sev(c, val, &r->sev) == 0)
					sev_at = val;
			} else if (yscalar_is(key, "code")) {
				code_at = val;
			} else if (yscalar_is(key, "message")) {
				r->message = take_str(c, val, "message");
			} else {
				bad(c, key, "unknown field '%s' in a rule (known: when, at, severity, "
				    "code, message)", key->kind == YN_SCALAR ? key->str : "?");
			}
		}
		take_rule_code(c, r, code_at, sev_at);
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

/* A backend (arch false) or arch name at n must be one the tree, the
 * mount's writes and --sync all take (names.h), and one a shell
 * completing it gives no meaning to. The name is quoted: it may hold
 * anything, terminal escapes included. */
static void check_dir_name(struct sctx *c, const struct ynode *n, bool arch)
{
	const char *why = names_dir_problem(n->str, n->len, arch);
	struct strbuf q = STRBUF_INIT;

	if (!why)
		return;
	if (text_quote(&q, n->str, n->len, 80) < 0)
		bad(c, n, "%s is not a directory name: %s", arch ? "an arch" : "the backend", why);
	else
		bad(c, n, "%s %s is not a directory name: %s", arch ? "arch" : "backend",
		    sb_str(&q), why);
	sb_release(&q);
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

		if (!schema_first_time(c, key, SPEC_KEYS, &seen))
			continue;
		if (key->kind != YN_SCALAR)
			bad(c, key, "keys must be strings");
		else if (yscalar_is(key, "backend")) {
			if ((s->backend = take_str(c, val, "backend")))
				check_dir_name(c, val, false);
		}
		else if (yscalar_is(key, "runner"))
			take_bool(c, val, "runner", &s->is_runner);
		else if (yscalar_is(key, "uses_runner"))
			take_bool(c, val, "uses_runner", &s->uses_runner);
		else if (yscalar_is(key, "arches")) {
			if (take_list(c, val, "arches", &s->arches, &s->narches) == 0)
				for (size_t i = 0; i < s->narches; i++)
					check_dir_name(c, val->kind == YN_SEQ ? val->items[i] : val,
						       true);
		}
		else if (yscalar_is(key, "passthrough"))
			take_list(c, val, "passthrough", &s->passthrough, &s->npassthrough);
		else if (yscalar_is(key, "passthrough_prefixes"))
			take_list(c, val, "passthrough_prefixes", &s->pass_prefixes,
				  &s->npass_prefixes);
		else if (yscalar_is(key, "owned_prefix"))
			s->owned_prefix = take_str(c, val, "owned_prefix");
		else if (yscalar_is(key, "secret_patterns")) {
			if (take_list(c, val, "secret_patterns", &s->secret_patterns,
				      &s->nsecret_patterns) == 0)
				for (size_t i = 0; i < s->nsecret_patterns; i++)
					if (!names_glob_ok(s->secret_patterns[i]))
						bad(c, val->kind == YN_SEQ ? val->items[i] : val,
						    "secret pattern '%s' is not a glob of variable "
						    "names ([A-Za-z0-9_] and the wildcards * ? [ ])",
						    s->secret_patterns[i]);
		}
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
		else if (yscalar_is(key, "models"))
			take_models(c, val, s);
		else if (yscalar_is(key, "value_reading")) {
			if (yscalar_is(val, "relaxed"))
				s->relaxed_values = true;
			else if (!yscalar_is(val, "exact"))
				bad(c, val, "value_reading must be exact (the text as it is) or "
				    "relaxed (stripped, empty means unset, any case)");
		}
		else
			bad(c, key, "unknown field '%s' in a spec (known: backend, runner, "
			    "uses_runner, dialect, value_reading, arches, secret_patterns, passthrough, "
			    "passthrough_prefixes, owned_prefix, families, retired, rules, "
			    "variables, models)", key->str);
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
	return 0;
}

/* qsort_r's context, not a static: two threads may load specs at once. */
static int by_name_cmp(const void *a, const void *b, void *ctx)
{
	const struct spec *s = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(s->vars[x].name, s->vars[y].name);

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
	if (s->nvars > 1)
		qsort_r(s->by_name, s->nvars, sizeof(*s->by_name), by_name_cmp, s);
	if (s->nretired > 1)
		qsort(s->retired, s->nretired, sizeof(*s->retired), retired_cmp);
	for (k = 0; k < s->nvars; k++) {
		const char *name = s->vars[s->by_name[k]].name;

		if (k && !strcmp(s->vars[s->by_name[k - 1]].name, name))
			continue;
		if (hindex_insert(&s->name_ix, hindex_hash(name, strlen(name), HINDEX_SEED), k) < 0)
			return -ENOMEM;
	}
	return 0;
}

size_t spec_entries(const struct spec *s, const char *name, size_t *first)
{
	struct hindex_probe p;
	size_t i, end;

	*first = s->nvars;
	for (i = hindex_first(&s->name_ix, hindex_hash(name, strlen(name), HINDEX_SEED), &p);
	     i != HINDEX_NONE; i = hindex_next(&s->name_ix, &p))
		if (!strcmp(s->vars[s->by_name[i]].name, name))
			break;
	if (i == HINDEX_NONE)
		return 0;
	for (end = i + 1; end < s->nvars && !strcmp(s->vars[s->by_name[end]].name, name); end++)
		;
	*first = i;
	return end - i;
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
	if ((err = spec_index(s)) < 0 ||
	    (err = names_glob_set_init(&s->secret_set, s->secret_patterns,
				       s->nsecret_patterns)) < 0)
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
	names_glob_set_release(&s->secret_set);
	free(s->secret_patterns);
	free(s->retired);
	for (k = 0; k < s->nrules; k++)
		expr_free(s->rules[k].when_expr);
	free(s->rules);
	for (k = 0; k < s->nvars; k++)
		var_release(&s->vars[k]);
	free(s->vars);
	free(s->by_name);
	hindex_release(&s->name_ix);
	arena_free(s->text);
	free(s);
}

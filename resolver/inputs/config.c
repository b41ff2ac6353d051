/* config: the experiment YAML's top-level `env:` block, read the way Primus
 * reads it (PrimusRuntime._apply_config_env over yaml.safe_load), with the
 * diagnostics Primus does not give: env: under a module, unquoted
 * non-strings, keys that stop the block.
 *
 *   env:
 *     XLA_PYTHON_CLIENT_MEM_FRACTION: 0.960   # warning: Primus exports "0.96"
 *     "A=B": x                                # error: stops the block here
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hindex.h"
#include "pyvalue.h"
#include "text.h"
#include "yaml11.h"
#include "yaml_tree.h"

#define MSG_TEXT_MAX CONFIG_MSG_TEXT_MAX
/* Names listed in the message about keys a refused key takes with it. */
#define MSG_LOST_MAX 8

struct ctx {
	struct config *cfg;
	struct diag_list *diags;
	const char *file;
	const struct config_secrets *secrets;
};

static int diag(struct ctx *c, enum diag_code code, const struct ynode *at,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int diag(struct ctx *c, enum diag_code code, const struct ynode *at,
		const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = diag_vadd(c->diags, code, c->file, at ? at->line : 1, at ? at->col : 1, fmt, ap);
	va_end(ap);
	return err;
}

static bool secret_name(const struct ctx *c, const char *name)
{
	return c->secrets && c->secrets->is_secret && c->secrets->is_secret(c->secrets->ctx, name);
}

static int add_quoted(struct strbuf *sb, const char *s, size_t n)
{
	return text_quote(sb, s, n, MSG_TEXT_MAX);
}

static bool is_null(const struct ynode *n)
{
	return !n || (pyv_implicit(n) && y11_resolve(n->str, n->len) == Y11_NULL) ||
	       (n->kind == YN_SCALAR && n->tag && !strcmp(n->tag, "!!null"));
}

/* True for a str key equal to s (raw.get("env") matches no other type). */
static bool key_is(const struct ynode *k, const char *s)
{
	struct strbuf id = STRBUF_INIT;
	bool is = k->kind == YN_SCALAR && pyv_key_ident(k, &id) == 0 && id.len == strlen(s) + 2 &&
		  !memcmp(id.buf, "s:", 2) && !memcmp(id.buf + 2, s, strlen(s));

	sb_release(&id);
	return is;
}

static int add_framework(struct config *cfg, const struct ynode *v, const char *module)
{
	struct config_place *at;
	char **fw;
	size_t i;

	if (!v || v->kind != YN_SCALAR || is_null(v))
		return 0;
	for (i = 0; i < cfg->nframeworks; i++)
		if (strlen(cfg->frameworks[i]) == v->len &&
		    memcmp(cfg->frameworks[i], v->str, v->len) == 0)
			return 0;
	if (!(fw = realloc(cfg->frameworks,
			   (cfg->nframeworks + 1) * sizeof(*fw))))
		return -ENOMEM;
	cfg->frameworks = fw;
	if (!(at = realloc(cfg->framework_at, (cfg->nframeworks + 1) * sizeof(*at))))
		return -ENOMEM;
	cfg->framework_at = at;
	at[cfg->nframeworks] = (struct config_place){ .line = v->line, .col = v->col };
	if (!(at[cfg->nframeworks].module = xstrdup(module)))
		return -ENOMEM;
	if (!(fw[cfg->nframeworks] = xstrndup(v->str, v->len))) {
		free(at[cfg->nframeworks].module);
		return -ENOMEM;
	}
	cfg->nframeworks++;
	return 0;
}

static int extends_info(struct ctx *c, const struct ynode *key,
			const char *module)
{
	if (module)
		return diag(c, DC_CONFIG_EXTENDS, key, "extends: in module '%s': "
			    "env: blocks of presets are not applied; only the "
			    "experiment file's top-level env: is", module);
	return diag(c, DC_CONFIG_EXTENDS, key, "extends: env: blocks of presets are "
		    "not applied; only the experiment file's top-level env: is");
}

/* Everything under a module, at any depth: env: there is not applied. The
 * tree is a DAG bounded by YT_MAX_NODES expanded nodes, so this terminates. */
static int walk_module(struct ctx *c, const struct ynode *n, const char *module)
{
	size_t i;
	int err;

	if (!n)
		return 0;
	if (n->kind == YN_SEQ) {
		for (i = 0; i < n->nitems; i++)
			if ((err = walk_module(c, n->items[i], module)) < 0)
				return err;
		return 0;
	}
	if (n->kind != YN_MAP)
		return 0;
	for (i = 0; i < n->npairs; i++) {
		const struct ypair *p = &n->pairs[i];

		if (key_is(p->key, "env") &&
		    (err = diag(c, DC_CONFIG_NESTED_ENV, p->key, "env: under module '%s' "
				"(line %u) is not applied (Primus turns it into "
				"a training parameter); move it to the top level",
				module, p->key->line)) < 0)
			return err;
		if (key_is(p->key, "extends") &&
		    (err = extends_info(c, p->key, module)) < 0)
			return err;
		if ((err = walk_module(c, p->val, module)) < 0)
			return err;
	}
	return 0;
}

static int read_modules(struct ctx *c, const struct ynode *modules)
{
	const struct ypair **mods = NULL, **fields = NULL;
	const struct ynode *fw;
	size_t nmods = 0, nfields = 0, i, j;
	char *name = NULL;
	int err = 0;

	if (!modules || modules->kind != YN_MAP)
		return 0;
	if ((err = pyv_flatten(modules, &mods, NULL, &nmods)) < 0)
		goto out;
	for (i = 0; i < nmods; i++) {
		const struct ypair *m = mods[i];

		free(name);
		name = m->key->kind == YN_SCALAR
		     ? xstrndup(m->key->str, m->key->len) : xstrdup("?");
		if (!name) {
			err = -ENOMEM;
			goto out;
		}
		if ((err = walk_module(c, m->val, name)) < 0)
			goto out;
		if (!m->val || m->val->kind != YN_MAP)
			continue;
		free(fields);
		fields = NULL;
		if ((err = pyv_flatten(m->val, &fields, NULL, &nfields)) < 0)
			goto out;
		fw = NULL;
		for (j = 0; j < nfields; j++)
			if (key_is(fields[j]->key, "framework"))
				fw = fields[j]->val;
		if ((err = add_framework(c->cfg, fw, name)) < 0)
			goto out;
	}
out:
	free(name);
	free(mods);
	free(fields);
	return err;
}

/* One distinct dict key of env:, as Python holds it. */
struct slot {
	const struct ynode *key;      /* first occurrence: its text and place */
	const struct ynode *last_key;
	bool last_merged;
	const struct ynode *val;      /* the last value */
	char *name;                   /* str(key); may hold a NUL (YDOC_NUL_OK) */
	size_t name_len;
	char *value;                  /* str(value), or NULL when unusable */
	size_t value_len;
	enum pyv_kind kind;           /* what PyYAML builds of the value */
};

static const char *type_name(const struct ynode *n)
{
	if (n->tag && strcmp(n->tag, "!"))
		return n->tag;
	return y11_type_name(y11_resolve(n->str, n->len));
}

/* A key PyYAML types (1, on, ~) names the variable str() of it. */
static int check_key_type(struct ctx *c, const struct ynode *k, const char *name)
{
	struct strbuf msg = STRBUF_INIT;
	int err;

	if (!(pyv_implicit(k) && y11_resolve(k->str, k->len) != Y11_STR) &&
	    !(k->tag && strcmp(k->tag, "!") && strcmp(k->tag, "!!str")))
		return 0;
	/* "=" as a key is made a string again by flatten_mapping. */
	if (pyv_implicit(k) && y11_resolve(k->str, k->len) == Y11_VALUE)
		return 0;
	err = sb_addf(&msg, "unquoted key %.*s is a%s %s in YAML: Primus names the variable ",
		      k->len > MSG_TEXT_MAX ? MSG_TEXT_MAX : (int)k->len, k->str,
		      !strcmp(type_name(k), "int") ? "n" : "", type_name(k));
	if (!err)
		err = add_quoted(&msg, name, strlen(name));
	if (!err)
		err = sb_adds(&msg, "; quote it");
	if (!err)
		err = diag(c, DC_CONFIG_KEY_TYPED, k, "%s", sb_str(&msg));
	sb_release(&msg);
	return err;
}

/* The warning for a value PyYAML does not build as a str, naming the text
 * written and the value exported (neither, for a secret). */
static int value_warning(struct ctx *c, const struct slot *s, bool secret)
{
	const struct ynode *v = s->val;
	struct strbuf msg = STRBUF_INIT;
	enum diag_code code = DC_CONFIG_VALUE_TYPED;
	enum pyv_kind kind = s->kind;
	int err;

	if (kind == PYV_STR)
		return 0;
	if (kind == PYV_COLLECTION || kind == PYV_SET) {
		code = DC_CONFIG_VALUE_NESTED;
		err = sb_addf(&msg, "%s: the value is a %s; Primus exports Python's text of it",
			      s->name, v->kind == YN_SEQ ? "list" : kind == PYV_SET ? "set" : "dict");
		if (!err && !secret) {
			err = sb_adds(&msg, ", ");
			if (!err)
				err = add_quoted(&msg, s->value, s->value_len);
		}
		if (!err && kind == PYV_SET)
			err = sb_adds(&msg, ", in an order that changes from run to run");
		if (!err)
			err = sb_adds(&msg, ", which is almost never what was meant; write the "
				      "value as one quoted string");
	} else if (secret) {
		err = sb_addf(&msg, "%s: the unquoted value is a%s %s in YAML, so Primus exports "
			      "str() of it, which need not be the text written; quote it",
			      s->name, !strcmp(type_name(v), "int") ? "n" : "", type_name(v));
	} else if (v->tag && strcmp(v->tag, "!")) {
		err = sb_addf(&msg, "%s: the value has the tag %s; Primus exports ", s->name, v->tag);
		if (!err)
			err = add_quoted(&msg, s->value, s->value_len);
		if (!err)
			err = sb_adds(&msg, "; drop the tag and quote the value");
	} else {
		if (v->len)
			err = sb_addf(&msg, "%s: unquoted %.*s is a%s %s in YAML; Primus exports ",
				      s->name, v->len > MSG_TEXT_MAX ? MSG_TEXT_MAX : (int)v->len,
				      v->str, !strcmp(type_name(v), "int") ? "n" : "",
				      type_name(v));
		else
			err = sb_addf(&msg, "%s: an empty unquoted value is a null in YAML; "
				      "Primus exports ", s->name);
		if (!err)
			err = add_quoted(&msg, s->value, s->value_len);
		if (!err)
			err = sb_adds(&msg, "; quote it (");
		if (!err)
			err = add_quoted(&msg, v->str, v->len);
		if (!err)
			err = sb_adds(&msg, ") if you meant the text");
	}
	if (!err)
		err = diag(c, code, v, "%s", sb_str(&msg));
	sb_release(&msg);
	return err;
}

/* Python refuses to put key into os.environ: "" or one holding '='. */
/* Python refuses to put the pair into os.environ: a name that is empty or
 * holds '=' (ValueError: illegal environment variable name), a name or a
 * value holding a NUL byte (ValueError: embedded null byte). */
static const char *refusal(const struct slot *s)
{
	if (!s->name_len)
		return "an empty name";
	if (memchr(s->name, '=', s->name_len))
		return "a name holding '='";
	if (memchr(s->name, '\0', s->name_len))
		return "a name holding a NUL byte";
	if (s->value && memchr(s->value, '\0', s->value_len))
		return "given a value holding a NUL byte";
	return NULL;
}

static int lost_keys(struct ctx *c, const struct slot *slots, size_t n, size_t at,
		     const char *why)
{
	struct strbuf msg = STRBUF_INIT;
	size_t k;
	int err;

	err = sb_adds(&msg, "env: key ");
	if (!err)
		err = add_quoted(&msg, slots[at].name, slots[at].name_len);
	if (!err)
		err = sb_addf(&msg, " is %s, which Python's os.environ refuses (ValueError); "
			      "Primus then stops applying env:, so ", why);
	if (!err && at + 1 == n)
		err = sb_adds(&msg, "it is not applied");
	for (k = at + 1; k < n && !err; k++) {
		if (k == at + 1)
			err = sb_adds(&msg, "it and every later key are not applied: ");
		else
			err = sb_adds(&msg, ", ");
		if (!err && k - at > MSG_LOST_MAX) {
			err = sb_addf(&msg, "and %zu more", n - k);
			break;
		}
		if (!err)
			err = add_quoted(&msg, slots[k].name, slots[k].name_len);
	}
	if (!err)
		err = diag(c, DC_CONFIG_KEY_STOPS, slots[at].key, "%s", sb_str(&msg));
	sb_release(&msg);
	return err;
}

/* Builds the slots of env: in Python's dict order: distinct keys by first
 * appearance, each with its last value. */
static int env_slots(struct ctx *c, const struct ynode *env, struct slot **out, size_t *nout)
{
	const struct ypair **fp = NULL;
	bool *merged = NULL;
	struct slot *slots = NULL;
	struct strbuf id = STRBUF_INIT, *ids = NULL;
	/* The slots by key: a 1 MiB file can hold ~100k keys, too many to
	 * compare pairwise. */
	struct hindex index = { 0 };
	size_t nfp = 0, nslots = 0, i, at;
	int err;

	*out = NULL;
	*nout = 0;
	if ((err = pyv_flatten(env, &fp, &merged, &nfp)) < 0 || !nfp)
		goto out;
	err = -ENOMEM;
	if (!(slots = calloc(nfp, sizeof(*slots))) || !(ids = calloc(nfp, sizeof(*ids))))
		goto out;
	err = 0;
	for (i = 0; i < nfp && !err; i++) {
		const struct ynode *k = fp[i]->key;
		struct hindex_probe p;
		struct slot *s;
		uint64_t h;

		sb_reset(&id);
		if ((err = pyv_key_ident(k, &id)) < 0)
			break;
		h = hindex_hash(id.buf, id.len, HINDEX_SEED);
		for (at = hindex_first(&index, h, &p); at != HINDEX_NONE; at = hindex_next(&index, &p))
			if (ids[at].len == id.len && !memcmp(ids[at].buf, id.buf, id.len))
				break;
		if (at == HINDEX_NONE) {
			s = &slots[nslots];
			if ((err = sb_add(&ids[nslots], id.buf, id.len)) < 0 ||
			    (err = hindex_insert(&index, h, nslots)) < 0)
				break;
			nslots++;
			s->key = k;
		} else {
			s = &slots[at];
			/* Overriding a merged-in key is what merging is for. */
			if (!s->last_merged && !merged[i])
				err = diag(c, DC_CONFIG_KEY_REPEATED, k, "%.*s is set again (earlier at line "
					   "%u); the last value wins",
					   k->len > MSG_TEXT_MAX ? MSG_TEXT_MAX : (int)k->len,
					   k->str, s->last_key->line);
		}
		s->last_key = k;
		s->last_merged = merged[i];
		s->val = fp[i]->val;
	}
out:
	for (i = 0; ids && i < nfp; i++)
		sb_release(&ids[i]);
	free(ids);
	sb_release(&id);
	free(fp);
	free(merged);
	hindex_release(&index);
	if (err < 0) {
		free(slots);
		return err;
	}
	*out = slots;
	*nout = nslots;
	return 0;
}

static int slot_text(struct ctx *c, struct slot *s)
{
	struct strbuf sb = STRBUF_INIT;
	struct pyv_error pe = { 0 };
	enum pyv_kind kind;
	int err;

	if ((err = pyv_str(s->key, &sb, &kind, &pe)) < 0)
		goto out;
	err = -ENOMEM;
	if (!(s->name = xstrndup(sb.buf ? sb.buf : "", sb.len)))
		goto out;
	s->name_len = sb.len;
	sb_reset(&sb);
	if ((err = pyv_str(s->val, &sb, &kind, &pe)) < 0)
		goto out;
	err = -ENOMEM;
	if (!(s->value = xstrndup(sb.buf ? sb.buf : "", sb.len)))
		goto out;
	s->value_len = sb.len;
	err = 0;
	if (strlen(s->name) > CONFIG_MAX_VALUE) {
		err = diag(c, DC_CONFIG_TOO_LONG, s->key, "env: key %.40s... is %zu bytes, more than the %u "
			   "an environment string may hold (execve fails with E2BIG); not "
			   "applied", s->name, strlen(s->name), (unsigned)CONFIG_MAX_VALUE);
		free(s->value);
		s->value = NULL;
		goto out;
	}
	if (s->value_len > CONFIG_MAX_VALUE) {
		/* execve refuses one NAME=value over 128 KiB: the launch fails. */
		err = diag(c, DC_CONFIG_TOO_LONG, s->val, "%s: the value is %zu bytes, more than the %u "
			   "an environment string may hold (execve fails with E2BIG); "
			   "not applied", s->name, s->value_len, (unsigned)CONFIG_MAX_VALUE);
		free(s->value);
		s->value = NULL;
		goto out;
	}
	s->kind = kind;
	err = check_key_type(c, s->key, s->name);
out:
	sb_release(&sb);
	return err;
}

/* The warnings for values PyYAML does not build as a str. One quotes
 * the value unless it is a secret's: by its name, or the same text as a
 * value a secret name has (a YAML alias of a password, a copy). Secrets
 * are asked only when some value is typed: a load ahead of the specs
 * (config_read) is kept when no entry asked. */
static int typed_warnings(struct ctx *c, const struct slot *slots, size_t n)
{
	struct hindex ix = { 0 };
	bool any = false;
	size_t i;
	int err = 0;

	for (i = 0; i < n; i++)
		any |= slots[i].value && slots[i].kind != PYV_STR;
	if (!any)
		return 0;
	for (i = 0; i < n && !err; i++)
		if (slots[i].value && secret_name(c, slots[i].name))
			err = hindex_insert(&ix, hindex_hash(slots[i].value, slots[i].value_len,
							     HINDEX_SEED), i);
	for (i = 0; i < n && !err; i++) {
		const struct slot *s = &slots[i];
		struct hindex_probe p;
		bool secret = false;
		size_t j;

		if (!s->value || s->kind == PYV_STR)
			continue;
		for (j = hindex_first(&ix, hindex_hash(s->value, s->value_len, HINDEX_SEED), &p);
		     j != HINDEX_NONE && !secret; j = hindex_next(&ix, &p))
			secret = slots[j].value_len == s->value_len &&
				 !memcmp(slots[j].value, s->value, s->value_len);
		err = value_warning(c, s, secret);
	}
	hindex_release(&ix);
	return err;
}

/* Applies env: into cfg->env as Primus's loop does. */
static int read_env(struct ctx *c, const struct ynode *env)
{
	struct config *cfg = c->cfg;
	struct slot *slots = NULL;
	size_t nslots = 0, i, ntext = 0, stop;
	const char *why = NULL;
	char *p;
	int err;

	if ((err = env_slots(c, env, &slots, &nslots)) < 0)
		goto out;
	for (i = 0; i < nslots; i++)
		if ((err = slot_text(c, &slots[i])) < 0)
			goto out;
	if ((err = typed_warnings(c, slots, nslots)) < 0)
		goto out;
	for (stop = 0; stop < nslots && !(why = refusal(&slots[stop])); stop++)
		;
	if (stop < nslots && (err = lost_keys(c, slots, nslots, stop, why)) < 0)
		goto out;
	/* Every name and value in one block (cfg->text), each NUL-ended. */
	for (i = 0; i < stop; i++)
		if (slots[i].value)
			ntext += strlen(slots[i].name) + 1 + slots[i].value_len + 1;
	err = -ENOMEM;
	if (!(cfg->env = calloc(stop ? stop : 1, sizeof(*cfg->env))) ||
	    !(cfg->text = malloc(ntext ? ntext : 1)))
		goto out;
	err = 0;
	p = cfg->text;
	for (i = 0; i < stop; i++) {
		const struct slot *s = &slots[i];
		struct config_entry *e = &cfg->env[cfg->nenv];
		size_t nl = strlen(s->name);

		if (!s->value)
			continue;
		e->name = p;
		memcpy(p, s->name, nl + 1);
		p += nl + 1;
		e->value = p;
		memcpy(p, s->value, s->value_len);
		p += s->value_len;
		*p++ = '\0';
		e->value_len = s->value_len;
		e->line = s->val->line;
		e->col = s->val->col;
		cfg->nenv++;
	}
out:
	for (i = 0; i < nslots; i++) {
		free(slots[i].name);
		free(slots[i].value);
	}
	free(slots);
	return err;
}

/* What a falsy value is to Python: `if not env_block: return`. */
static bool falsy(const struct ynode *n)
{
	struct strbuf sb = STRBUF_INIT;
	enum pyv_kind kind;
	bool f;

	if (n->kind == YN_SEQ)
		return n->nitems == 0;
	if (n->kind == YN_MAP)
		return n->npairs == 0;
	if (pyv_str(n, &sb, &kind, NULL) < 0)
		return false;
	f = (kind == PYV_STR && !sb.len) ||
	    (kind == PYV_SCALAR && (!strcmp(sb_str(&sb), "None") || !strcmp(sb_str(&sb), "False") ||
				    !strcmp(sb_str(&sb), "0") || !strcmp(sb_str(&sb), "0.0") ||
				    !strcmp(sb_str(&sb), "-0.0") || !strcmp(sb_str(&sb), "b''")));
	sb_release(&sb);
	return f;
}

#define IGNORE_MARK "primus-envfs:"

/* The codes of a "# primus-envfs: ignore=CODE[,CODE]" comment on line
 * (1-based) of the source, into the config's silence; a name that is no
 * code is a warning. libyaml drops comments, so the line's text is read
 * from the bytes the document came from. */
static int line_silences(struct ctx *c, const struct ydoc *doc, const size_t *starts,
			 size_t nlines, unsigned line)
{
	const char *p, *end = doc->source + doc->source_len, *eol, *at, *q;
	enum diag_code code;
	int err;

	if (!line || line > nlines)
		return 0;
	p = doc->source + starts[line - 1];
	eol = memchr(p, '\n', (size_t)(end - p));
	eol = eol ? eol : end;
	/* The last "#" on the line that opens the mark: a value may hold a "#". */
	for (at = NULL, q = p; q < eol && (q = memchr(q, '#', (size_t)(eol - q))); q++) {
		const char *m = q + 1;

		while (m < eol && *m == ' ')
			m++;
		if ((size_t)(eol - m) > strlen(IGNORE_MARK) &&
		    !memcmp(m, IGNORE_MARK, strlen(IGNORE_MARK)))
			at = m + strlen(IGNORE_MARK);
	}
	if (!at)
		return 0;
	while (at < eol && *at == ' ')
		at++;
	if ((size_t)(eol - at) < 7 || memcmp(at, "ignore=", 7))
		return 0;
	for (at += 7; at < eol; at++) {
		size_t n;

		while (at < eol && (*at == ' ' || *at == '\r'))
			at++;
		n = strcspn(at, ", \r\n");
		n = n > (size_t)(eol - at) ? (size_t)(eol - at) : n;
		if (diag_code_parse(at, n, &code) == 0)
			err = diag_silence_add_line(&c->cfg->silence, c->file, line, code);
		else
			err = diag_add(c->diags, DC_CONFIG_IGNORE_BAD, c->file, line,
				       (unsigned)(at - p) + 1,
				       "primus-envfs: ignore=: '%.*s' is not a diagnostic code "
				       "(the man page lists them)", (int)(n > 16 ? 16 : n), at);
		if (err < 0)
			return err;
		at += n;
		while (at < eol && (*at == ' ' || *at == '\r'))
			at++;
		if (at < eol && *at != ',')
			break;
	}
	return 0;
}

/* Every env: entry's line (its key's and, when apart, its value's). The
 * line starts are found once, and only in a file that has the mark. */
static int read_silences(struct ctx *c, const struct ydoc *doc, const struct ynode *env)
{
	const char *p = doc->source, *end = p + doc->source_len;
	size_t *starts = NULL, n = 0, cap = 0, k;
	int err = 0;

	if (!p || !memmem(p, doc->source_len, IGNORE_MARK, strlen(IGNORE_MARK)))
		return 0;
	for (; p; p = (p = memchr(p, '\n', (size_t)(end - p))) ? p + 1 : NULL) {
		if ((err = GROW(starts, cap, n, 256)) < 0)
			goto out;
		starts[n++] = (size_t)(p - doc->source);
	}
	for (k = 0; k < env->npairs && !err; k++) {
		const struct ynode *key = env->pairs[k].key, *val = env->pairs[k].val;

		err = line_silences(c, doc, starts, n, key->line);
		if (!err && val && val->line != key->line)
			err = line_silences(c, doc, starts, n, val->line);
	}
out:
	free(starts);
	return err;
}

static int read_config(struct ctx *c, const struct ydoc *doc)
{
	const struct ynode *root = doc->root, *env = NULL, *env_key = NULL, *modules = NULL;
	const struct ypair **top = NULL;
	struct pyv_error pe = { 0 };
	bool *merged = NULL;
	size_t ntop = 0, i;
	int err = 0;

	if (doc->more_documents)
		return diag(c, DC_CONFIG_DOCUMENTS, root, "the file holds more than one YAML document; "
			    "Primus's yaml.safe_load refuses it, so no env: is applied");
	if (pyv_check(root, &pe) < 0)
		return diag(c, DC_CONFIG_SAFE_LOAD, pe.at, "%s: Primus's yaml.safe_load fails on this "
			    "file, so no env: is applied", pe.msg);
	if (!root || root->kind != YN_MAP) {
		if (!root || is_null(root))
			return 0;
		return diag(c, DC_CONFIG_NOT_MAPPING, root, "the experiment config must be a mapping at the "
			    "top level, not a %s; nothing applied", ynode_kind_name(root->kind));
	}
	if ((err = pyv_flatten(root, &top, &merged, &ntop)) < 0)
		goto out;
	for (i = 0; i < ntop; i++) {
		const struct ypair *p = top[i];

		if (key_is(p->key, "env")) {
			if (env_key && !merged[i] &&
			    (err = diag(c, DC_CONFIG_ENV_REPEATED, env_key, "env: appears again at line %u; "
					"only the last env: block is applied", p->key->line)) < 0)
				goto out;
			env_key = p->key;
			env = p->val;
		} else if (key_is(p->key, "modules")) {
			modules = p->val;
		} else if (key_is(p->key, "extends")) {
			if ((err = extends_info(c, p->key, NULL)) < 0)
				goto out;
		}
	}
	if ((err = read_modules(c, modules)) < 0)
		goto out;
	if (!env_key || falsy(env))
		goto out;
	if (env->kind != YN_MAP) {
		err = diag(c, DC_CONFIG_ENV_BAD, env, "env: must be a mapping of NAME: value; Primus "
			   "ignores this %s, so none of it is applied",
			   env->kind == YN_SEQ ? "list" : "scalar");
		goto out;
	}
	if ((err = read_env(c, env)) < 0)
		goto out;
	err = read_silences(c, doc, env);
out:
	free(top);
	free(merged);
	return err;
}

void config_free(struct config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	free(cfg->text);
	free(cfg->env);
	for (i = 0; i < cfg->nframeworks; i++) {
		free(cfg->frameworks[i]);
		free(cfg->framework_at[i].module);
	}
	free(cfg->framework_at);
	free(cfg->frameworks);
	diag_silence_release(&cfg->silence);
	free(cfg->file);
	free(cfg);
}

static int load(const char *name, struct ydoc *doc, const struct config_secrets *secrets,
		struct config **out, struct diag_list *diags)
{
	struct config *cfg;
	struct ctx c;
	int err;

	if (!(cfg = calloc(1, sizeof(*cfg))))
		return -ENOMEM;
	if (!(cfg->file = xstrdup(name))) {
		err = -ENOMEM;
		goto out;
	}
	c.cfg = cfg;
	c.diags = diags;
	c.file = cfg->file;
	c.secrets = secrets;
	err = read_config(&c, doc);
out:
	if (err < 0)
		config_free(cfg);
	else
		*out = cfg;
	return err;
}

int config_load_buffer(const char *name, const char *buf, size_t len,
		       const struct config_secrets *secrets, struct config **out,
		       struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	int err;

	*out = NULL;
	if ((err = ydoc_load_buffer_as(name, buf, len, YDOC_NUL_OK | YDOC_KEEP_SOURCE, &doc, diags)) < 0)
		goto out;
	err = load(name, doc, secrets, out, diags);
out:
	ydoc_free(doc);
	return err;
}

static int read_doc(const char *path, struct config_read *r)
{
	memset(r, 0, sizeof(*r));
	if (!(r->path = xstrdup(path)))
		return r->err = -ENOMEM;
	r->err = ydoc_load_file_digest(path, YDOC_NUL_OK | YDOC_KEEP_SOURCE, &r->doc, &r->digest,
				       &r->diags);
	return r->err == -ENOMEM ? -ENOMEM : 0;
}

int config_load(const char *path, const struct config_secrets *secrets, struct config **out,
		struct diag_list *diags)
{
	struct config_read r;

	read_doc(path, &r);
	return config_load_read(&r, secrets, out, diags);
}

/* The load ahead's stand-in for the specs: nothing is secret, and that it
 * was asked is noted (the answer may then be wrong). */
static bool ask_later(void *ctx, const char *name)
{
	(void)name;
	*(bool *)ctx = true;
	return false;
}

int config_read(const char *path, struct config_read *r)
{
	struct config_secrets later = { ask_later, NULL };
	int err;

	if ((err = read_doc(path, r)) < 0 || r->err < 0)
		return err;
	/* The whole load, before the specs: it needs them only for a typed
	 * value (whether its warning may quote it), which is rare; when one
	 * asks, config_load_read loads again with the answers. */
	later.ctx = &r->asked;
	if (load(r->path, r->doc, &later, &r->cfg, &r->cfg_diags) < 0 || r->asked) {
		config_free(r->cfg);
		r->cfg = NULL;
		diag_list_release(&r->cfg_diags);
	}
	return 0;
}

int config_load_read(struct config_read *r, const struct config_secrets *secrets,
		     struct config **out, struct diag_list *diags)
{
	int err = r->err;

	*out = NULL;
	/* The reader's diagnostics first: where config_load puts them. */
	if (err != -ENOMEM && diag_extend(diags, &r->diags) < 0)
		err = -ENOMEM;
	if (err < 0)
		goto out;
	if (r->cfg) {
		if ((err = diag_extend(diags, &r->cfg_diags)) < 0)
			goto out;
		*out = r->cfg;
		r->cfg = NULL;
	} else {
		err = load(r->path, r->doc, secrets, out, diags);
	}
	if (*out)
		(*out)->digest = r->digest;
out:
	config_read_release(r);
	return err;
}

void config_read_release(struct config_read *r)
{
	ydoc_free(r->doc);
	r->doc = NULL;
	diag_list_release(&r->diags);
	config_free(r->cfg);
	r->cfg = NULL;
	diag_list_release(&r->cfg_diags);
	free(r->path);
	r->path = NULL;
}

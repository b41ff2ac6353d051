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

#include "pyvalue.h"
#include "text.h"
#include "yaml11.h"
#include "yaml_tree.h"

/* Longest value text quoted inside a message. */
#define MSG_TEXT_MAX 60
/* Names listed in the message about keys a refused key takes with it. */
#define MSG_LOST_MAX 8

struct ctx {
	struct config *cfg;
	struct diag_list *diags;
	const char *file;
	const struct config_secrets *secrets;
};

static int diag(struct ctx *c, enum diag_sev sev, const struct ynode *at,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int diag(struct ctx *c, enum diag_sev sev, const struct ynode *at,
		const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = diag_vadd(c->diags, sev, c->file, at ? at->line : 1, at ? at->col : 1, fmt, ap);
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

static int add_framework(struct config *cfg, const struct ynode *v)
{
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
	if (!(fw[cfg->nframeworks] = xstrndup(v->str, v->len)))
		return -ENOMEM;
	cfg->nframeworks++;
	return 0;
}

static int extends_info(struct ctx *c, const struct ynode *key,
			const char *module)
{
	if (module)
		return diag(c, DIAG_INFO, key, "extends: in module '%s': "
			    "env: blocks of presets are not applied; only the "
			    "experiment file's top-level env: is", module);
	return diag(c, DIAG_INFO, key, "extends: env: blocks of presets are "
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
		    (err = diag(c, DIAG_WARNING, p->key, "env: under module '%s' "
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
		if ((err = add_framework(c->cfg, fw)) < 0)
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
};

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

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
		err = diag(c, DIAG_WARNING, k, "%s", sb_str(&msg));
	sb_release(&msg);
	return err;
}

/* The warning for a value PyYAML does not build as a str, naming the text
 * written and the value exported (neither, for a secret). */
static int value_warning(struct ctx *c, const struct slot *s, enum pyv_kind kind)
{
	const struct ynode *v = s->val;
	struct strbuf msg = STRBUF_INIT;
	bool secret = secret_name(c, s->name);
	enum diag_sev sev = DIAG_WARNING;
	int err;

	if (kind == PYV_STR)
		return 0;
	if (kind == PYV_COLLECTION || kind == PYV_SET) {
		sev = DIAG_ERROR;
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
		err = diag(c, sev, v, "%s", sb_str(&msg));
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
		err = diag(c, DIAG_ERROR, slots[at].key, "%s", sb_str(&msg));
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
	size_t nfp = 0, nslots = 0, *table = NULL, mask = 0, i, h;
	int err;

	*out = NULL;
	*nout = 0;
	if ((err = pyv_flatten(env, &fp, &merged, &nfp)) < 0 || !nfp)
		goto out;
	/* Open addressing over slot numbers + 1: a 1 MiB file can hold ~100k
	 * keys, too many to compare pairwise. */
	for (mask = 1; mask < nfp * 2; mask <<= 1)
		;
	err = -ENOMEM;
	if (!(table = calloc(mask, sizeof(*table))) || !(slots = calloc(nfp, sizeof(*slots))) ||
	    !(ids = calloc(nfp, sizeof(*ids))))
		goto out;
	mask--;
	err = 0;
	for (i = 0; i < nfp && !err; i++) {
		const struct ynode *k = fp[i]->key;
		struct slot *s;

		sb_reset(&id);
		if ((err = pyv_key_ident(k, &id)) < 0)
			break;
		for (h = hash_bytes(id.buf, id.len) & mask; table[h]; h = (h + 1) & mask) {
			const struct strbuf *o = &ids[table[h] - 1];

			if (o->len == id.len && !memcmp(o->buf, id.buf, id.len))
				break;
		}
		if (!table[h]) {
			s = &slots[nslots];
			if ((err = sb_add(&ids[nslots], id.buf, id.len)) < 0)
				break;
			table[h] = ++nslots;
			s->key = k;
		} else {
			s = &slots[table[h] - 1];
			/* Overriding a merged-in key is what merging is for. */
			if (!s->last_merged && !merged[i])
				err = diag(c, DIAG_WARNING, k, "%.*s is set again (earlier at line "
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
	free(table);
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
		err = diag(c, DIAG_ERROR, s->key, "env: key %.40s... is %zu bytes, more than the %u "
			   "an environment string may hold (execve fails with E2BIG); not "
			   "applied", s->name, strlen(s->name), (unsigned)CONFIG_MAX_VALUE);
		free(s->value);
		s->value = NULL;
		goto out;
	}
	if (s->value_len > CONFIG_MAX_VALUE) {
		/* execve refuses one NAME=value over 128 KiB: the launch fails. */
		err = diag(c, DIAG_ERROR, s->val, "%s: the value is %zu bytes, more than the %u "
			   "an environment string may hold (execve fails with E2BIG); "
			   "not applied", s->name, s->value_len, (unsigned)CONFIG_MAX_VALUE);
		free(s->value);
		s->value = NULL;
		goto out;
	}
	if ((err = check_key_type(c, s->key, s->name)) < 0)
		goto out;
	err = value_warning(c, s, kind);
out:
	sb_release(&sb);
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

static int read_config(struct ctx *c, const struct ydoc *doc)
{
	const struct ynode *root = doc->root, *env = NULL, *env_key = NULL, *modules = NULL;
	const struct ypair **top = NULL;
	struct pyv_error pe = { 0 };
	bool *merged = NULL;
	size_t ntop = 0, i;
	int err = 0;

	if (doc->more_documents)
		return diag(c, DIAG_ERROR, root, "the file holds more than one YAML document; "
			    "Primus's yaml.safe_load refuses it, so no env: is applied");
	if (pyv_check(root, &pe) < 0)
		return diag(c, DIAG_ERROR, pe.at, "%s: Primus's yaml.safe_load fails on this "
			    "file, so no env: is applied", pe.msg);
	if (!root || root->kind != YN_MAP) {
		if (!root || is_null(root))
			return 0;
		return diag(c, DIAG_ERROR, root, "the experiment config must be a mapping at the "
			    "top level, not a %s; nothing applied", ynode_kind_name(root->kind));
	}
	if ((err = pyv_flatten(root, &top, &merged, &ntop)) < 0)
		goto out;
	for (i = 0; i < ntop; i++) {
		const struct ypair *p = top[i];

		if (key_is(p->key, "env")) {
			if (env_key && !merged[i] &&
			    (err = diag(c, DIAG_WARNING, env_key, "env: appears again at line %u; "
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
		err = diag(c, DIAG_ERROR, env, "env: must be a mapping of NAME: value; Primus "
			   "ignores this %s, so none of it is applied",
			   env->kind == YN_SEQ ? "list" : "scalar");
		goto out;
	}
	err = read_env(c, env);
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
	for (i = 0; i < cfg->nframeworks; i++)
		free(cfg->frameworks[i]);
	free(cfg->frameworks);
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
	if ((err = ydoc_load_buffer_as(name, buf, len, YDOC_NUL_OK, &doc, diags)) < 0)
		goto out;
	err = load(name, doc, secrets, out, diags);
out:
	ydoc_free(doc);
	return err;
}

int config_load(const char *path, const struct config_secrets *secrets, struct config **out,
		struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	int err;

	*out = NULL;
	if ((err = ydoc_load_file_as(path, YDOC_NUL_OK, &doc, diags)) < 0)
		goto out;
	err = load(path, doc, secrets, out, diags);
out:
	ydoc_free(doc);
	return err;
}

static bool is_name_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= '0' && ch <= '9') || ch == '_';
}

/* Appends n bytes within the limit: -E2BIG past it. */
static int add_bounded(struct strbuf *out, size_t limit, const char *s, size_t n)
{
	if (n > limit - out->len)
		return -E2BIG;
	return sb_add(out, s, n);
}

/* Python's os.path.expandvars, which Primus uses: `\$(\w+|\{[^}]*\})`
 * (ASCII), replaced only when the name is set; the scan goes on after the
 * replacement, so a value is never expanded twice. */
int config_expand(const struct config *cfg, const struct config_entry *e, bool secret,
		  size_t max_len, envfs_lookup_fn fn, void *ctx, struct strbuf *out,
		  struct diag_list *diags)
{
	const char *s = e->value, *val;
	size_t n = e->value_len, i = 0, j, name_at, name_len, end, val_len;
	size_t limit = max_len > SIZE_MAX - out->len ? SIZE_MAX : out->len + max_len;
	const char *file = cfg ? cfg->file : NULL;
	int err = 0, r;

	while (i < n) {
		if (s[i] != '$' || i + 1 >= n) {
			/* The text up to the next '$' (or the end) in one piece. */
			const char *d = memchr(s + i + 1, '$', n - i - 1);
			size_t run = d ? (size_t)(d - (s + i)) : n - i;

			if ((err = add_bounded(out, limit, s + i, run)) < 0)
				return err;
			i += run;
			continue;
		}
		if (s[i + 1] == '{') {
			const char *close = memchr(s + i + 2, '}', n - i - 2);

			if (!close) {
				if ((err = add_bounded(out, limit, s + i++, 1)) < 0)
					return err;
				continue;
			}
			name_at = i + 2;
			end = (size_t)(close - s) + 1;
			name_len = end - 1 - name_at;
		} else {
			name_at = i + 1;
			for (j = name_at; j < n && is_name_char(s[j]); j++)
				;
			end = j;
			name_len = j - name_at;
			if (!name_len) {
				if ((err = add_bounded(out, limit, s + i++, 1)) < 0)
					return err;
				continue;
			}
		}
		/* Python looks up whatever stands between the braces: an image
		 * may hold a name no shell can read ("a-b"), and it expands. */
		if (name_len) {
			r = fn(ctx, s + name_at, name_len, &val, &val_len);
			if (r == -ELOOP)
				r = 0;
			if (r < 0)
				return r;
			if (r > 0) {
				if ((err = add_bounded(out, limit, val, val_len)) < 0)
					return err;
				i = end;
				continue;
			}
		}
		for (j = 0; j < name_len && is_name_char(s[name_at + j]); j++)
			;
		if (name_len && j == name_len) {
			if (secret)
				err = diag_add(diags, DIAG_WARNING, file, e->line, e->col,
					       "%s: a $NAME reference in the value is not set, so "
					       "it stays literal", e->name);
			else
				err = diag_add(diags, DIAG_WARNING, file, e->line, e->col,
					       "%s: %.*s is not set; left literal", e->name,
					       (int)(end - i > MSG_TEXT_MAX ? MSG_TEXT_MAX : end - i),
					       s + i);
		} else if (j && (s[name_at + j] == ':' || s[name_at + j] == '-')) {
			if (secret)
				err = diag_add(diags, DIAG_WARNING, file, e->line, e->col,
					       "%s: a ${NAME:...} in the value is passed through "
					       "literally: env: has no default syntax", e->name);
			else
				err = diag_add(diags, DIAG_WARNING, file, e->line, e->col,
					       "%s: %.*s is passed through literally: env: has no "
					       "default syntax", e->name,
					       (int)(end - i > MSG_TEXT_MAX ? MSG_TEXT_MAX : end - i),
					       s + i);
		}
		/* Anything else unset inside ${...} ("${}", "${a b}") stays
		 * literal, silently, as in Python. */
		if (err < 0 || (err = add_bounded(out, limit, s + i, end - i)) < 0)
			return err;
		i = end;
	}
	return 0;
}

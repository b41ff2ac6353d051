/* config: the experiment YAML's top-level `env:` block, read the way Primus
 * reads it (PrimusRuntime._apply_config_env), with the diagnostics Primus
 * does not give: env: under a module, unquoted non-strings, bad keys.
 *
 *   env:
 *     XLA_PYTHON_CLIENT_MEM_FRACTION: 0.960   # warning: Primus exports "0.96"
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "yaml11.h"
#include "yaml_tree.h"

/* Longest value text quoted inside a message. */
#define MSG_TEXT_MAX 60

struct ctx {
	struct config *cfg;
	struct diag_list *diags;
	const char *file;
};

/* One pair of a mapping after PyYAML's merge-key flattening. */
struct fpair {
	const struct ynode *key, *val;
	bool merged;              /* came in through a `<<` merge */
};

struct fpairs {
	struct fpair *v;
	size_t n, cap;
};

/* One name of the env: block: its first place, its last value. */
struct slot {
	const struct ynode *key;  /* first occurrence: keeps the order */
	const struct ynode *last_key;
	bool last_merged;
	const struct ynode *val;  /* last value, NULL when it was bad */
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

/* Appends s as a double-quoted, escaped, possibly shortened string, so a
 * message stays one readable line whatever the value holds. */
static int add_quoted(struct strbuf *sb, const char *s, size_t n)
{
	size_t i;
	int err = sb_addc(sb, '"');

	for (i = 0; i < n && i < MSG_TEXT_MAX && !err; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '"' || ch == '\\')
			err = sb_addf(sb, "\\%c", ch);
		else if (ch == '\n')
			err = sb_adds(sb, "\\n");
		else if (ch == '\t')
			err = sb_adds(sb, "\\t");
		else if (ch < 0x20 || ch == 0x7f)
			err = sb_addf(sb, "\\x%02x", ch);
		else
			err = sb_addc(sb, (char)ch);
	}
	if (!err && n > MSG_TEXT_MAX)
		err = sb_adds(sb, "...");
	if (!err)
		err = sb_addc(sb, '"');
	return err;
}

static bool is_tag(const struct ynode *n, const char *tag)
{
	return n->tag && strcmp(n->tag, tag) == 0;
}

/* PyYAML resolves a plain scalar's type, and also any scalar tagged with
 * the non-specific "!" (its parser marks those implicit too). */
static bool implicitly_typed(const struct ynode *n)
{
	return n->kind == YN_SCALAR &&
	       ((!n->tag && n->style == YS_PLAIN) || is_tag(n, "!"));
}

static bool is_null(const struct ynode *n)
{
	return !n || (implicitly_typed(n) &&
		      y11_resolve(n->str, n->len) == Y11_NULL);
}

static bool is_merge_key(const struct ynode *k)
{
	return k->kind == YN_SCALAR &&
	       (is_tag(k, "!!merge") ||
		(implicitly_typed(k) && y11_resolve(k->str, k->len) == Y11_MERGE));
}

static int fpairs_push(struct fpairs *fp, const struct ynode *key,
		       const struct ynode *val, bool merged)
{
	if (fp->n == fp->cap) {
		size_t cap = fp->cap ? fp->cap * 2 : 16;
		struct fpair *v;

		if (cap > SIZE_MAX / sizeof(*v))
			return -ENOMEM;
		if (!(v = realloc(fp->v, cap * sizeof(*v))))
			return -ENOMEM;
		fp->v = v;
		fp->cap = cap;
	}
	fp->v[fp->n].key = key;
	fp->v[fp->n].val = val;
	fp->v[fp->n].merged = merged;
	fp->n++;
	return 0;
}

static int flatten(struct ctx *c, const struct ynode *map, struct fpairs *out,
		   bool merged);

/* Appends the flattened pairs of a merge source (a mapping, or a list of
 * mappings where earlier ones win, hence the reverse order). */
static int merge_source(struct ctx *c, const struct ynode *src,
			struct fpairs *out)
{
	size_t i;
	int err;

	if (src->kind == YN_MAP)
		return flatten(c, src, out, true);
	if (src->kind == YN_SEQ) {
		for (i = src->nitems; i-- > 0;) {
			if (src->items[i]->kind != YN_MAP)
				return diag(c, DIAG_ERROR, src->items[i],
					    "a merge (<<) list may hold only "
					    "mappings; PyYAML fails to load "
					    "this file");
			if ((err = flatten(c, src->items[i], out, true)) < 0)
				return err;
		}
		return 0;
	}
	return diag(c, DIAG_ERROR, src, "a merge (<<) needs a mapping or a "
		    "list of mappings; PyYAML fails to load this file");
}

/* PyYAML's SafeConstructor.flatten_mapping: merged pairs first, then the
 * mapping's own, so own keys win in the dict built from them. */
static int flatten(struct ctx *c, const struct ynode *map, struct fpairs *out,
		   bool merged)
{
	struct fpairs own = { 0 };
	size_t i;
	int err = 0;

	for (i = 0; i < map->npairs; i++) {
		const struct ypair *p = &map->pairs[i];

		if (is_merge_key(p->key))
			err = merge_source(c, p->val, out);
		else
			err = fpairs_push(&own, p->key, p->val, merged);
		if (err < 0)
			goto out;
	}
	for (i = 0; i < own.n; i++)
		if ((err = fpairs_push(out, own.v[i].key, own.v[i].val,
				       own.v[i].merged)) < 0)
			goto out;
out:
	free(own.v);
	return err;
}

static bool key_is(const struct ynode *k, const char *s)
{
	return yscalar_is(k, s);
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
	struct fpairs mods = { 0 }, fields = { 0 };
	const struct ynode *fw;
	char *name = NULL;
	size_t i, j;
	int err = 0;

	if (!modules || modules->kind != YN_MAP)
		return 0;
	if ((err = flatten(c, modules, &mods, false)) < 0)
		goto out;
	for (i = 0; i < mods.n; i++) {
		const struct fpair *m = &mods.v[i];

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
		fields.n = 0;
		if ((err = flatten(c, m->val, &fields, false)) < 0)
			goto out;
		fw = NULL;
		for (j = 0; j < fields.n; j++)
			if (key_is(fields.v[j].key, "framework"))
				fw = fields.v[j].val;
		if ((err = add_framework(c->cfg, fw)) < 0)
			goto out;
	}
out:
	free(name);
	free(mods.v);
	free(fields.v);
	return err;
}

/* A plain key PyYAML would type (ON, 1, NULL) names a different variable
 * in Primus: str(True) is "True". */
static int check_key_type(struct ctx *c, const struct ynode *k)
{
	struct strbuf msg = STRBUF_INIT, py = STRBUF_INIT;
	enum y11_type t;
	int err = 0, e;

	if (!implicitly_typed(k) || (t = y11_resolve(k->str, k->len)) == Y11_STR)
		return 0;
	/* "=" as a key is turned back into a string by PyYAML. */
	if (t == Y11_VALUE)
		return 0;
	e = y11_str(k->str, k->len, t, &py);
	if (e == -ENOMEM) {
		err = e;
		goto out;
	}
	err = sb_addf(&msg, "unquoted name %.*s is a%s %s in YAML; "
		      "primus-envfs uses the name as written but ",
		      (int)k->len, k->str,
		      t == Y11_INT ? "n" : "", y11_type_name(t));
	if (!err && e == 0) {
		err = sb_adds(&msg, "Primus would set ");
		if (!err)
			err = add_quoted(&msg, py.buf, py.len);
	} else if (!err) {
		err = sb_adds(&msg, "Primus fails to load it");
	}
	if (!err)
		err = sb_adds(&msg, "; quote it");
	if (!err)
		err = diag(c, DIAG_WARNING, k, "%s", sb_str(&msg));
out:
	sb_release(&msg);
	sb_release(&py);
	return err;
}

/* Checks one key; returns 1 when it names a variable, 0 when it was
 * reported and skipped. */
static int check_key(struct ctx *c, const struct ynode *k)
{
	struct strbuf q = STRBUF_INIT;
	int err;

	if (k->kind != YN_SCALAR) {
		err = diag(c, DIAG_ERROR, k, "env: key is a %s, not a variable "
			   "name; skipped", ynode_kind_name(k->kind));
	} else if (k->len == 0) {
		err = diag(c, DIAG_ERROR, k, "env: key is empty; skipped");
	} else if (k->len > CONFIG_MAX_VALUE) {
		/* execve refuses a NAME=value string over 128 KiB anyway. */
		err = diag(c, DIAG_ERROR, k, "env: key is %zu bytes, more than %u; skipped",
			   k->len, (unsigned)CONFIG_MAX_VALUE);
	} else if (memchr(k->str, '=', k->len) || memchr(k->str, '\0', k->len)) {
		if ((err = add_quoted(&q, k->str, k->len)) < 0)
			goto out;
		err = diag(c, DIAG_ERROR, k, "env: key %s contains '%s'; a "
			   "variable name cannot; skipped", sb_str(&q),
			   memchr(k->str, '=', k->len) ? "=" : "\\0");
	} else {
		err = check_key_type(c, k);
		if (err == 0)
			err = 1;
	}
out:
	sb_release(&q);
	return err;
}

/* Warns about a value PyYAML would not load as a string; the text as
 * written is still what we use. */
/* name (nlen bytes, no NUL: check_key() refused those) is the key's text. */
static int check_value_type(struct ctx *c, const char *name, int nlen,
			    const struct ynode *v)
{
	struct strbuf msg = STRBUF_INIT, py = STRBUF_INIT;
	enum y11_type t;
	int err = 0, e;

	if (v->tag && !is_tag(v, "!") && !is_tag(v, "!!str")) {
		err = sb_addf(&msg, "%.*s: value has the explicit tag %s; "
			      "primus-envfs uses the text ", nlen, name, v->tag);
		if (!err)
			err = add_quoted(&msg, v->str, v->len);
		if (!err)
			err = sb_adds(&msg, " but Primus would not get a "
				      "string; drop the tag and quote it");
		goto report;
	}
	if (!implicitly_typed(v) || (t = y11_resolve(v->str, v->len)) == Y11_STR)
		return 0;
	if ((e = y11_str(v->str, v->len, t, &py)) == -ENOMEM) {
		err = e;
		goto out;
	}
	if (v->len)
		err = sb_addf(&msg, "%.*s: unquoted value %.*s is a%s %s in YAML; "
			      "primus-envfs uses the text ", nlen, name,
			      (int)(v->len > MSG_TEXT_MAX ? MSG_TEXT_MAX : v->len),
			      v->str, t == Y11_INT ? "n" : "", y11_type_name(t));
	else
		err = sb_addf(&msg, "%.*s: an empty unquoted value is a null in "
			      "YAML; primus-envfs uses the text ", nlen, name);
	if (!err)
		err = add_quoted(&msg, v->str, v->len);
	if (!err && e == 0 && py.len == v->len && !memcmp(py.buf, v->str, v->len)) {
		/* Same text today, but the backend may get a non-string. */
		err = sb_adds(&msg, " and Primus would export the same text "
			      "after str()");
	} else if (!err && e == 0) {
		err = sb_adds(&msg, " but Primus would export ");
		if (!err)
			err = add_quoted(&msg, py.buf, py.len);
	} else if (!err) {
		err = sb_adds(&msg, " but Primus fails to load it");
	}
	if (!err)
		err = sb_adds(&msg, "; quote it");
report:
	if (!err)
		err = diag(c, DIAG_WARNING, v, "%s", sb_str(&msg));
out:
	sb_release(&msg);
	sb_release(&py);
	return err;
}

/* Checks a value; returns 1 when usable, 0 when reported and skipped. */
static int check_value(struct ctx *c, const char *name, int nlen, const struct ynode *v)
{
	int err;

	if (v->kind != YN_SCALAR) {
		err = diag(c, DIAG_ERROR, v, "%.*s: value is a %s; env: values "
			   "must be scalars; %.*s skipped", nlen, name,
			   ynode_kind_name(v->kind), nlen, name);
		return err < 0 ? err : 0;
	}
	if (v->len > CONFIG_MAX_VALUE) {
		err = diag(c, DIAG_ERROR, v, "%.*s: value is %zu bytes, more than "
			   "%u; %.*s skipped", nlen, name, v->len,
			   (unsigned)CONFIG_MAX_VALUE, nlen, name);
		return err < 0 ? err : 0;
	}
	if ((err = check_value_type(c, name, nlen, v)) < 0)
		return err;
	return 1;
}

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* Applies the pairs of env: into cfg->env in the order of first
 * appearance, each with its last value, as a Python dict would hold them. */
static int read_env(struct ctx *c, const struct ynode *env)
{
	struct fpairs fp = { 0 };
	struct slot *slots = NULL;
	size_t nslots = 0, *table = NULL, mask = 0, i, h, ntext = 0;
	struct config *cfg = c->cfg;
	char *p;
	int err = 0, ok;

	if ((err = flatten(c, env, &fp, false)) < 0)
		goto out;
	if (!fp.n)
		goto out;
	/* Open addressing over slot numbers + 1: a 1 MiB file can hold ~100k
	 * keys, too many to compare pairwise. */
	for (mask = 1; mask < fp.n * 2; mask <<= 1)
		;
	table = calloc(mask, sizeof(*table));
	slots = calloc(fp.n, sizeof(*slots));
	if (!table || !slots) {
		err = -ENOMEM;
		goto out;
	}
	mask--;
	for (i = 0; i < fp.n; i++) {
		const struct ynode *k = fp.v[i].key, *v = fp.v[i].val;
		struct slot *s;

		if ((ok = check_key(c, k)) <= 0) {
			err = ok;
			if (err < 0)
				goto out;
			continue;
		}
		for (h = hash_bytes(k->str, k->len) & mask; table[h];
		     h = (h + 1) & mask) {
			const struct ynode *sk = slots[table[h] - 1].key;

			if (sk->len == k->len && !memcmp(sk->str, k->str, k->len))
				break;
		}
		if (!table[h]) {
			s = &slots[nslots++];
			table[h] = nslots;
			s->key = k;
		} else {
			s = &slots[table[h] - 1];
			/* Overriding a merged-in key is what merging is for. */
			if (!s->last_merged && !fp.v[i].merged &&
			    (err = diag(c, DIAG_WARNING, k, "%.*s is set again "
					"(earlier at line %u); the last value "
					"wins", (int)k->len, k->str,
					s->last_key->line)) < 0)
				goto out;
		}
		s->last_key = k;
		s->last_merged = fp.v[i].merged;
		/* check_key() bounded the key to CONFIG_MAX_VALUE bytes. */
		if ((ok = check_value(c, k->str, (int)k->len, v)) < 0) {
			err = ok;
			goto out;
		}
		s->val = ok ? v : NULL;
	}
	/* Every name and value in one block (cfg->text), each NUL-ended:
	 * two allocations instead of two per entry. */
	for (i = 0; i < nslots; i++)
		if (slots[i].val)
			ntext += slots[i].key->len + 1 + slots[i].val->len + 1;
	if (!(cfg->env = calloc(nslots ? nslots : 1, sizeof(*cfg->env))) ||
	    !(cfg->text = malloc(ntext ? ntext : 1))) {
		err = -ENOMEM;
		goto out;
	}
	p = cfg->text;
	for (i = 0; i < nslots; i++) {
		const struct slot *s = &slots[i];
		struct config_entry *e = &cfg->env[cfg->nenv];

		if (!s->val)
			continue;
		e->name = p;
		memcpy(p, s->key->str, s->key->len);
		p += s->key->len;
		*p++ = '\0';
		e->raw = p;
		if (s->val->len)
			memcpy(p, s->val->str, s->val->len);
		p += s->val->len;
		*p++ = '\0';
		e->raw_len = s->val->len;
		e->line = s->val->line;
		e->col = s->val->col;
		cfg->nenv++;
	}
out:
	free(fp.v);
	free(slots);
	free(table);
	return err;
}

static int read_config(struct ctx *c, const struct ynode *root)
{
	struct fpairs top = { 0 };
	const struct ynode *env = NULL, *env_key = NULL, *modules = NULL;
	size_t i;
	int err = 0;

	if (!root)
		return 0;
	if (root->kind != YN_MAP) {
		if (is_null(root))
			return 0;
		return diag(c, DIAG_ERROR, root, "the experiment config must be "
			    "a mapping at the top level, not a %s; nothing "
			    "applied", ynode_kind_name(root->kind));
	}
	if ((err = flatten(c, root, &top, false)) < 0)
		goto out;
	for (i = 0; i < top.n; i++) {
		const struct fpair *p = &top.v[i];

		if (key_is(p->key, "env")) {
			if (env_key && !p->merged &&
			    (err = diag(c, DIAG_WARNING, env_key, "env: appears "
					"again at line %u; only the last env: "
					"block is applied", p->key->line)) < 0)
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
	if (!env_key || is_null(env))
		goto out;
	if (env->kind != YN_MAP) {
		err = diag(c, DIAG_ERROR, env, "env: must be a mapping of NAME: "
			   "value; this %s is ignored", ynode_kind_name(env->kind));
		goto out;
	}
	err = read_env(c, env);
out:
	free(top.v);
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

static int load(const char *name, struct ydoc *doc, struct config **out,
		struct diag_list *diags)
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
	err = read_config(&c, doc->root);
out:
	if (err < 0)
		config_free(cfg);
	else
		*out = cfg;
	return err;
}

int config_load_buffer(const char *name, const char *buf, size_t len,
		       struct config **out, struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	int err;

	*out = NULL;
	if ((err = ydoc_load_buffer(name, buf, len, &doc, diags)) < 0)
		goto out;
	err = load(name, doc, out, diags);
out:
	ydoc_free(doc);
	return err;
}

int config_load(const char *path, struct config **out, struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	int err;

	*out = NULL;
	if ((err = ydoc_load_file(path, &doc, diags)) < 0)
		goto out;
	err = load(path, doc, out, diags);
out:
	ydoc_free(doc);
	return err;
}

static bool is_name_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= '0' && ch <= '9') || ch == '_';
}

/* Python's os.path.expandvars, which Primus uses: `\$(\w+|\{[^}]*\})`
 * (ASCII), replaced only when the name is set. */
int config_expand(const struct config *cfg, const struct config_entry *e,
		  envfs_lookup_fn fn, void *ctx, struct strbuf *out,
		  struct diag_list *diags)
{
	const char *s = e->raw, *val;
	size_t n = e->raw_len, i = 0, j, name_at, name_len, end, val_len;
	const char *file = cfg ? cfg->file : NULL;
	int err = 0, r;

	while (i < n) {
		if (s[i] != '$' || i + 1 >= n) {
			/* The text up to the next '$' (or the end) in one piece. */
			const char *d = memchr(s + i + 1, '$', n - i - 1);
			size_t run = d ? (size_t)(d - (s + i)) : n - i;

			if ((err = sb_add(out, s + i, run)) < 0)
				return err;
			i += run;
			continue;
		}
		if (s[i + 1] == '{') {
			const char *close = memchr(s + i + 2, '}', n - i - 2);

			if (!close) {
				if ((err = sb_addc(out, s[i++])) < 0)
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
				if ((err = sb_addc(out, s[i++])) < 0)
					return err;
				continue;
			}
		}
		for (j = 0; j < name_len && is_name_char(s[name_at + j]); j++)
			;
		if (name_len && j == name_len) {
			r = fn(ctx, s + name_at, name_len, &val, &val_len);
			if (r == -ELOOP)
				r = 0;
			if (r < 0)
				return r;
			if (r > 0) {
				if ((err = sb_add(out, val, val_len)) < 0)
					return err;
				i = end;
				continue;
			}
			err = diag_add(diags, DIAG_WARNING, file, e->line, e->col,
				       "%s: %.*s is not set; left literal",
				       e->name, (int)(end - i), s + i);
		} else if (j && s[name_at + j] == ':') {
			err = diag_add(diags, DIAG_WARNING, file, e->line, e->col,
				       "%s: %.*s is passed through literally: "
				       "env: has no default syntax", e->name,
				       (int)(end - i), s + i);
		}
		/* Anything else inside ${...} ("${}", "${a b}") is looked up
		 * by Python under a name no variable has: literal, silently. */
		if (err < 0 || (err = sb_add(out, s + i, end - i)) < 0)
			return err;
		i = end;
	}
	return 0;
}

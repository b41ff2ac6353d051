/* The --state file; see statefile.h and docs/STATE.md.
 *
 *   $ primus-envfs --state run.state.yaml /mnt/primus
 *   $ echo 5 > /mnt/primus/env/maxtext/gfx950/XLA_GPU_AUTOTUNE_LEVEL
 *   $ grep XLA_GPU run.state.yaml
 *     - {backend: "maxtext", arch: "gfx950", name: "XLA_GPU_AUTOTUNE_LEVEL", value: "5"}
 */
#include "statefile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "text.h"
#include "yaml_tree.h"

/* ---- writing ---------------------------------------------------------- */

/* Code points libyaml accepts unescaped inside a double-quoted scalar
 * without folding them: its printable set minus the YAML 1.1 line breaks
 * (NEL, LS, PS) and the byte order mark. */
static bool yaml_raw_ok(unsigned cp)
{
	if (cp == 0x2028 || cp == 0x2029 || cp == 0xfeff)
		return false;
	return (cp >= 0xa0 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) ||
	       (cp >= 0x10000 && cp <= 0x10ffff);
}

/* Appends s (valid UTF-8) as a YAML double-quoted scalar. Every escape
 * used decodes, in libyaml, to exactly the bytes it replaces. */
static int add_quoted(struct strbuf *out, const char *s, size_t n)
{
	size_t i = 0, len;
	unsigned cp;
	int err;

	if ((err = sb_addc(out, '"')) < 0)
		return err;
	while (i < n && err == 0) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x80) {
			if (c == '"' || c == '\\')
				err = sb_addf(out, "\\%c", c);
			else if (c == '\n')
				err = sb_adds(out, "\\n");
			else if (c == '\t')
				err = sb_adds(out, "\\t");
			else if (c == '\r')
				err = sb_adds(out, "\\r");
			else if (c < 0x20 || c == 0x7f)
				err = sb_addf(out, "\\x%02X", c);
			else
				err = sb_addc(out, (char)c);
			i++;
			continue;
		}
		if (!(len = utf8_seq((const unsigned char *)s + i, n - i, &cp)))
			return -EINVAL;
		if (yaml_raw_ok(cp))
			err = sb_add(out, s + i, len);
		else if (cp <= 0xff)
			err = sb_addf(out, "\\x%02X", cp);
		else if (cp <= 0xffff)
			err = sb_addf(out, "\\u%04X", cp);
		else
			err = sb_addf(out, "\\U%08X", cp);
		i += len;
	}
	return err < 0 ? err : sb_addc(out, '"');
}

static int add_hex(struct strbuf *out, const char *s, size_t n)
{
	size_t i;
	int err = sb_addc(out, '"');

	for (i = 0; i < n && err == 0; i++)
		err = sb_addf(out, "%02x", (unsigned char)s[i]);
	return err < 0 ? err : sb_addc(out, '"');
}

static int ov_cmp(const void *a, const void *b)
{
	const struct override *x = *(const struct override *const *)a;
	const struct override *y = *(const struct override *const *)b;
	int c = strcmp(x->backend, y->backend);

	if (!c)
		c = strcmp(x->arch, y->arch);
	return c ? c : strcmp(x->name, y->name);
}

/* A pending create reaches here only over the run's unset
 * (statefile_render): the entry is that unset, with its own flag. */
static int add_entry(struct strbuf *out, const struct override *o)
{
	bool unset = o->pending || !o->value, private = o->pending ? o->unset_private : o->private;
	int err;

	if ((err = sb_adds(out, "  - {backend: ")) < 0 ||
	    (err = add_quoted(out, o->backend, strlen(o->backend))) < 0 ||
	    (err = sb_adds(out, ", arch: ")) < 0 ||
	    (err = add_quoted(out, o->arch, strlen(o->arch))) < 0 ||
	    (err = sb_adds(out, ", name: ")) < 0 ||
	    (err = add_quoted(out, o->name, strlen(o->name))) < 0)
		return err;
	if (unset)
		err = sb_adds(out, ", unset: true");
	else if (utf8_valid(o->value, o->value_len))
		err = sb_adds(out, ", value: ") < 0 ? -ENOMEM :
		      add_quoted(out, o->value, o->value_len);
	else
		err = sb_adds(out, ", value_hex: ") < 0 ? -ENOMEM :
		      add_hex(out, o->value, o->value_len);
	if (err == 0 && private)
		err = sb_adds(out, ", private: true");
	return err < 0 ? err : sb_adds(out, "}\n");
}

int statefile_render(const struct override_set *ov, struct strbuf *out)
{
	const struct override **v = NULL;
	size_t k, n = 0, start = out->len;
	int err;

	/* A pending create is not the run's yet (override.h); one over the
	 * run's unset leaves the unset the run's. */
	for (k = 0; k < ov->n; k++)
		n += !ov->v[k].pending || ov->v[k].over_unset;
	if ((err = sb_addf(out, "# primus-envfs override state (docs/STATE.md). The mount rewrites\n"
			   "# this file on every change; edit it only while nothing mounts it.\n"
			   "version: %d\n", STATEFILE_VERSION)) < 0)
		return err;
	/* Whose state in a --sync run: set --state refuses it (the run's
	 * overrides replace it at the node's next start). */
	if (ov->sync_run && ov->sync_node &&
	    ((err = sb_adds(out, "sync: {run: ")) < 0 ||
	     (err = add_quoted(out, ov->sync_run, strlen(ov->sync_run))) < 0 ||
	     (err = sb_adds(out, ", node: ")) < 0 ||
	     (err = add_quoted(out, ov->sync_node, strlen(ov->sync_node))) < 0 ||
	     (err = sb_adds(out, "}\n")) < 0))
		return err;
	if ((err = sb_addf(out, "overrides:%s\n", n ? "" : " []")) < 0)
		return err;
	if (!n)
		return 0;
	if (!(v = malloc(n * sizeof(*v))))
		return -ENOMEM;
	for (k = 0, n = 0; k < ov->n; k++)
		if (!ov->v[k].pending || ov->v[k].over_unset)
			v[n++] = &ov->v[k];
	qsort(v, n, sizeof(*v), ov_cmp);
	for (k = 0; k < n && err == 0; k++)
		err = add_entry(out, v[k]);
	free(v);
	if (err == 0 && out->len - start > STATEFILE_LOAD_MAX)
		err = -EFBIG;
	return err;
}

int statefile_save(const char *path, const struct override_set *ov)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	if ((err = statefile_render(ov, &sb)) == 0)
		err = statefile_write(path, &sb);
	sb_release(&sb);
	return err;
}

int statefile_write(const char *path, const struct strbuf *doc)
{
	const struct strbuf sb = *doc;
	char *dcopy = NULL, *tmp = NULL;
	const char *dir, *base = strrchr(path, '/');
	bool renamed = false;
	int fd = -1, dfd = -1, err;

	base = base ? base + 1 : path;
	err = -ENOMEM;
	if (!(dcopy = strdup(path)))
		goto out;
	dir = dirname(dcopy);
	if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, base) < 0) {
		tmp = NULL;
		goto out;
	}
	/* mkostemp creates 0600: overrides may hold secrets. */
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		err = -errno;
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if ((err = fd_write_all(fd, sb.buf, sb.len)) < 0)
		goto out;
	if (fsync(fd) < 0 || close(fd) < 0) {
		err = -errno;
		fd = -1;
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		err = -errno;
		goto out;
	}
	renamed = true;
	/* The rename is durable only once the directory is. Should this
	 * fail, the new file is in place but may not survive a crash; the
	 * caller still reports the change as failed. */
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fsync(dfd) < 0) {
		err = -errno;
		goto out;
	}
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	if (tmp && !renamed)
		unlink(tmp);
	free(tmp);
	free(dcopy);
	return err;
}

/* ---- reading ---------------------------------------------------------- */

struct lctx {
	const char *file;
	struct diag_list *diags;
};

static int bad(struct lctx *c, const struct ynode *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Adds an error at at's place; returns -EINVAL (or -ENOMEM). */
static int bad(struct lctx *c, const struct ynode *at, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = diag_vadd(c->diags, DC_STATE_CORRUPT, c->file, at ? at->line : 1,
			at ? at->col : 1, fmt, ap);
	va_end(ap);
	return err < 0 ? err : -EINVAL;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Decodes value_hex into a new buffer (caller frees). */
static int decode_hex(struct lctx *c, const struct ynode *n, char **out, size_t *len)
{
	size_t i;
	char *v;

	if (n->len % 2)
		return bad(c, n, "value_hex has an odd number of digits");
	if (n->len / 2 > STATEFILE_VALUE_MAX)
		return bad(c, n, "value is longer than %d bytes", STATEFILE_VALUE_MAX);
	if (!(v = malloc(n->len / 2 + 1)))
		return -ENOMEM;
	for (i = 0; i < n->len / 2; i++) {
		int hi = hexval(n->str[2 * i]), lo = hexval(n->str[2 * i + 1]);

		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
			free(v);
			return bad(c, n, hi < 0 || lo < 0 ? "value_hex is not hexadecimal"
					 : "value_hex holds a NUL byte");
		}
		v[i] = (char)(hi << 4 | lo);
	}
	*out = v;
	*len = n->len / 2;
	return 0;
}

/* A backend or arch: a directory name under env/. */
static bool dir_name_ok(const struct ynode *n)
{
	return n->len && !memchr(n->str, '/', n->len) && !yscalar_is(n, ".") &&
	       !yscalar_is(n, "..");
}

/* A variable file's name. New names are [A-Za-z_][A-Za-z0-9_]*,
 * but a variable the config names otherwise (its keys only exclude '=')
 * can be overridden or removed too. */
static bool var_name_ok(const struct ynode *n)
{
	return dir_name_ok(n) && !memchr(n->str, '=', n->len);
}

static int load_entry(struct lctx *c, const struct ynode *item, struct override_set *tmp)
{
	static const char *const keys[] = { "backend", "arch", "name", "value",
					    "value_hex", "unset", "private" };
	enum { K_BACKEND, K_ARCH, K_NAME, K_VALUE, K_HEX, K_UNSET, K_PRIVATE, K_COUNT };
	const struct ynode *f[K_COUNT] = { 0 };
	char *hex = NULL, *strs[3] = { 0 };
	const char *value = NULL;
	size_t i, k, vlen = 0;
	int err = 0;

	if (item->kind != YN_MAP)
		return bad(c, item, "an override is a mapping, not a %s",
			   ynode_kind_name(item->kind));
	for (i = 0; i < item->npairs; i++) {
		const struct ynode *key = item->pairs[i].key, *val = item->pairs[i].val;

		for (k = 0; k < K_COUNT && !yscalar_is(key, keys[k]); k++)
			;
		if (k == K_COUNT)
			return bad(c, key, "unknown key in an override (expected backend, "
				   "arch, name, value, value_hex or unset, and private)");
		if (f[k])
			return bad(c, key, "%s is given twice", keys[k]);
		if (val->kind != YN_SCALAR)
			return bad(c, val, "%s must be a scalar, not a %s", keys[k],
				   ynode_kind_name(val->kind));
		f[k] = val;
	}
	for (k = K_BACKEND; k <= K_NAME; k++)
		if (!f[k])
			return bad(c, item, "the override has no %s", keys[k]);
	if (!dir_name_ok(f[K_BACKEND]) || !dir_name_ok(f[K_ARCH]))
		return bad(c, dir_name_ok(f[K_BACKEND]) ? f[K_ARCH] : f[K_BACKEND],
			   "not a directory name");
	if (!var_name_ok(f[K_NAME]))
		return bad(c, f[K_NAME], "not a variable name");
	if (!!f[K_VALUE] + !!f[K_HEX] + !!f[K_UNSET] != 1)
		return bad(c, item, "an override has exactly one of value, value_hex "
			   "and unset: true");
	if (f[K_UNSET] && !yscalar_is(f[K_UNSET], "true"))
		return bad(c, f[K_UNSET], "unset must be true");
	if (f[K_PRIVATE] && !yscalar_is(f[K_PRIVATE], "true") && !yscalar_is(f[K_PRIVATE], "false"))
		return bad(c, f[K_PRIVATE], "private must be true or false");
	if (f[K_VALUE]) {
		if (f[K_VALUE]->len > STATEFILE_VALUE_MAX)
			return bad(c, f[K_VALUE], "value is longer than %d bytes",
				   STATEFILE_VALUE_MAX);
		value = f[K_VALUE]->str;
		vlen = f[K_VALUE]->len;
	} else if (f[K_HEX]) {
		if ((err = decode_hex(c, f[K_HEX], &hex, &vlen)) < 0)
			return err;
		value = hex;
	}
	err = -ENOMEM;
	for (k = 0; k < 3; k++)
		if (!(strs[k] = xstrndup(f[k]->str, f[k]->len)))
			goto out;
	if (override_set_find(tmp, strs[0], strs[1], strs[2])) {
		err = bad(c, f[K_NAME], "%s/%s/%s is listed twice", strs[0], strs[1], strs[2]);
		goto out;
	}
	if ((err = override_set_put(tmp, strs[0], strs[1], strs[2], value, vlen)) == 0)
		err = override_set_mark_private(tmp, strs[0], strs[1], strs[2],
						f[K_PRIVATE] && yscalar_is(f[K_PRIVATE], "true"));
out:
	for (k = 0; k < 3; k++)
		free(strs[k]);
	free(hex);
	return err;
}

/* sync: {run: R, node: N} into *run and *node (caller-owned). */
static int load_sync(struct lctx *c, const struct ynode *m, char **run, char **node)
{
	const struct ynode *r, *n;
	size_t i;

	if (m->kind != YN_MAP)
		return bad(c, m, "sync is a mapping with run and node, not a %s",
			   ynode_kind_name(m->kind));
	for (i = 0; i < m->npairs; i++)
		if (!yscalar_is(m->pairs[i].key, "run") && !yscalar_is(m->pairs[i].key, "node"))
			return bad(c, m->pairs[i].key, "unknown key in sync (expected run and node)");
	if (!(r = ymap_get(m, "run")) || !(n = ymap_get(m, "node")))
		return bad(c, m, "sync has no %s", r ? "node" : "run");
	if (r->kind != YN_SCALAR || n->kind != YN_SCALAR || !r->len || !n->len)
		return bad(c, r->kind != YN_SCALAR || !r->len ? r : n,
			   "sync's run and node are names");
	if (!(*run = xstrndup(r->str, r->len)) || !(*node = xstrndup(n->str, n->len)))
		return -ENOMEM;
	return 0;
}

static int load_doc(const struct ydoc *doc, struct override_set *ov,
		    struct diag_list *diags)
{
	struct lctx c = { doc->file, diags };
	struct override_set tmp = { 0 };
	const struct ynode *root = doc->root, *ver, *list, *sync;
	char *run = NULL, *node = NULL;
	size_t i;
	int err = 0;

	if (!root)
		return 0;            /* an empty file: no overrides yet */
	if (root->kind != YN_MAP)
		return bad(&c, root, "a state file is a mapping with version and overrides");
	for (i = 0; i < root->npairs; i++) {
		const struct ynode *key = root->pairs[i].key;

		if (!yscalar_is(key, "version") && !yscalar_is(key, "overrides") &&
		    !yscalar_is(key, "sync"))
			return bad(&c, key, "unknown key (expected version, sync and overrides)");
	}
	if (!(ver = ymap_get(root, "version")))
		return bad(&c, root, "no version");
	if (!yscalar_is(ver, "1"))
		return bad(&c, ver, "unsupported version (this program reads version %d)",
			   STATEFILE_VERSION);
	if (!(list = ymap_get(root, "overrides")))
		return bad(&c, root, "no overrides");
	if (list->kind != YN_SEQ)
		return bad(&c, list, "overrides must be a sequence, not a %s",
			   ynode_kind_name(list->kind));
	if ((sync = ymap_get(root, "sync")) && (err = load_sync(&c, sync, &run, &node)) < 0)
		goto out;
	for (i = 0; i < list->nitems && err == 0; i++)
		err = load_entry(&c, list->items[i], &tmp);
	/* All or nothing: a bad entry leaves ov as it was. */
	for (i = 0; i < tmp.n && err == 0; i++)
		if ((err = override_set_put(ov, tmp.v[i].backend, tmp.v[i].arch, tmp.v[i].name,
					    tmp.v[i].value, tmp.v[i].value_len)) == 0)
			err = override_set_mark_private(ov, tmp.v[i].backend, tmp.v[i].arch,
							tmp.v[i].name, tmp.v[i].private);
	if (err == 0 && run && !ov->sync_run) {
		ov->sync_run = run;
		ov->sync_node = node;
		run = node = NULL;
	}
out:
	free(run);
	free(node);
	override_set_release(&tmp);
	return err;
}

int statefile_load_buffer(const char *name, const char *buf, size_t len,
			  struct override_set *ov, struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	int err;

	if ((err = ydoc_load_buffer_as(name, buf, len, YDOC_LARGE, &doc, diags)) < 0)
		return err;
	err = load_doc(doc, ov, diags);
	ydoc_free(doc);
	return err;
}

int statefile_load(const char *path, struct override_set *ov, struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	struct stat st;
	int err;

	/* No file yet: the first change creates it. */
	if (stat(path, &st) < 0 && errno == ENOENT)
		return 0;
	if ((err = ydoc_load_file_as(path, YDOC_LARGE, &doc, diags)) < 0)
		return err;
	err = load_doc(doc, ov, diags);
	ydoc_free(doc);
	return err;
}

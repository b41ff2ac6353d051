/* A spec directory: the runner base, the catalog and one spec per backend. */
#include "grow.h"
#include "spec.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "name_lists.h"
#include "yaml_tree.h"

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int backend_cmp(const void *a, const void *b)
{
	return strcmp((*(struct spec *const *)a)->backend, (*(struct spec *const *)b)->backend);
}

int spec_dir_list(const char *dir, char ***out, size_t *nout, struct diag_list *diags)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	if (!d) {
		err = -errno;
		if (diags)
			diag_add(diags, DC_INPUT_UNREADABLE, dir, 0, 0, "cannot read the spec directory: %s",
				 strerror(-err));
		return err;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") || de->d_name[0] == '.')
			continue;
		if (GROW(v, cap, n, 16) < 0) {
			err = -ENOMEM;
			goto out;
		}
		if (!(v[n] = xstrdup(de->d_name))) {
			err = -ENOMEM;
			goto out;
		}
		n++;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), name_cmp);
out:
	closedir(d);
	if (err < 0) {
		while (n--)
			free(v[n]);
		free(v);
		return err;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* Display name for provenance: "specs/<file>" relative to the dir's last
 * component, so sources read the same wherever the tree is checked out. */
static int display_name(const char *dir, const char *file, struct strbuf *sb)
{
	size_t len = strlen(dir);
	const char *base;

	while (len > 1 && dir[len - 1] == '/')
		len--;
	base = dir + len;
	while (base > dir && base[-1] != '/')
		base--;
	sb_reset(sb);
	return sb_addf(sb, "%.*s/%s", (int)(dir + len - base), base, file);
}

static int check_set(struct spec_set *set, struct diag_list *diags)
{
	int errors = 0;
	size_t k;

	for (k = 1; k < set->nbackends; k++)
		if (!strcmp(set->backends[k]->backend, set->backends[k - 1]->backend)) {
			diag_add(diags, DC_SPEC_SET, set->backends[k]->display, 0, 0,
				 "backend '%s' is also declared by %s", set->backends[k]->backend,
				 set->backends[k - 1]->display);
			errors++;
		}
	for (k = 0; k < set->nbackends; k++) {
		const struct spec *s = set->backends[k];

		if (s->uses_runner && !set->runner) {
			diag_add(diags, DC_SPEC_SET, s->display, 0, 0,
				 "backend '%s' uses the runner base, but the spec directory has no "
				 "base.yaml", s->backend);
			errors++;
		}
		if (!s->narches && !(s->uses_runner && set->runner && set->runner->narches)) {
			diag_add(diags, DC_SPEC_SET, s->display, 0, 0,
				 "backend '%s' names no arches", s->backend);
			errors++;
		}
	}
	return errors ? -EINVAL : 0;
}

#define DOCS_FILE "catalog.docs.yaml"

/* True for the files that are not a backend's: the runner base and the
 * catalog with its docs. */
static bool shared_file(const char *name)
{
	return !strcmp(name, "base.yaml") || !strcmp(name, "catalog.yaml") ||
	       !strcmp(name, DOCS_FILE);
}

/* The name of only's own file when dir has one that a load for that
 * backend alone may keep (with the shared files), or NULL. */
static const char *own_file(char **names, size_t n, const char *only, struct strbuf *want)
{
	size_t k;

	sb_reset(want);
	if (!only || sb_addf(want, "%s.yaml", only) < 0 || shared_file(sb_str(want)))
		return NULL;
	for (k = 0; k < n; k++)
		if (!strcmp(names[k], sb_str(want)))
			return sb_str(want);
	return NULL;
}

/* True when the line [p, stop) is `backend: ONLY`, ONLY quoted or not,
 * with blanks or a comment after it. */
static bool line_declares(const char *p, const char *stop, const char *only)
{
	size_t olen = strlen(only);
	char quote = 0;

	if ((size_t)(stop - p) < 8 || memcmp(p, "backend:", 8))
		return false;
	for (p += 8; p < stop && (*p == ' ' || *p == '\t'); p++)
		;
	if (p < stop && (*p == '"' || *p == '\''))
		quote = *p++;
	if ((size_t)(stop - p) < olen || memcmp(p, only, olen))
		return false;
	p += olen;
	if (quote && (p == stop || *p++ != quote))
		return false;
	for (; p < stop && (*p == ' ' || *p == '\t'); p++)
		;
	return p == stop || *p == '#';
}

/* True when file name of dir has a top-level line declaring backend only:
 * another declaration of it, which the full load reports. A file that
 * cannot be read counts too, so the full load says why. */
static bool declares(const char *dir, const char *name, const char *only)
{
	struct strbuf path = STRBUF_INIT;
	char *buf = NULL, *p, *end, *eol;
	bool found = true;
	size_t len;

	if (sb_addf(&path, "%s/%s", dir, name) < 0 || yfile_read(sb_str(&path), &buf, &len) < 0)
		goto out;
	found = false;
	/* Only lines holding "backend:" can declare: find those with memmem
	 * instead of splitting the whole file into lines. */
	for (p = buf, end = buf + len; !found && (p = memmem(p, (size_t)(end - p), "backend:", 8));
	     p += 8) {
		if (p > buf && p[-1] != '\n')
			continue;
		if (!(eol = memchr(p, '\n', (size_t)(end - p))))
			eol = end;
		found = line_declares(p, eol, only);
	}
out:
	free(buf);
	sb_release(&path);
	return found;
}

int spec_dir_backends(const char *dir, const char *backend, bool *has, char ***stems,
		      size_t *nstems)
{
	char **names = NULL, **v = NULL;
	size_t n = 0, k, m = 0;
	int err;

	*has = false;
	*stems = NULL;
	*nstems = 0;
	if ((err = spec_dir_list(dir, &names, &n, NULL)) < 0)
		return err == -ENOMEM ? err : 0;
	err = -ENOMEM;
	if (!(v = calloc(n ? n : 1, sizeof(*v))))
		goto out;
	for (k = 0; k < n; k++) {
		size_t l = strlen(names[k]);

		if (shared_file(names[k]) || l < 6 || strcmp(names[k] + l - 5, ".yaml"))
			continue;
		*has = *has || declares(dir, names[k], backend);
		if (!(v[m] = xstrndup(names[k], l - 5)))
			goto out;
		m++;
	}
	*stems = v;
	*nstems = m;
	v = NULL;
	err = 0;
out:
	for (k = 0; v && k < m; k++)
		free(v[k]);
	free(v);
	for (k = 0; k < n; k++)
		free(names[k]);
	free(names);
	return err;
}

/* Reads dir's catalog.docs.yaml into set's catalog; 1 when it found an
 * error, 0 when not (or when there is no catalog to document: a missing
 * catalog.yaml is reported here, a broken one was already), or -ENOMEM. */
static int load_docs(struct spec_set *set, const char *dir, struct strbuf *path,
		     struct strbuf *disp, struct diag_list *diags)
{
	struct strbuf cat = STRBUF_INIT;
	int err;

	sb_reset(path);
	if ((err = sb_addf(path, "%s/%s", dir, DOCS_FILE)) < 0 ||
	    (err = display_name(dir, DOCS_FILE, disp)) < 0 ||
	    (err = display_name(dir, "catalog.yaml", &cat)) < 0)
		goto out;
	if (!set->catalog) {
		if (!set->has_catalog)
			err = diag_add(diags, DC_SPEC_SET, sb_str(disp), 0, 0,
				       "documents a catalog, but the spec directory has no "
				       "catalog.yaml") < 0 ? -ENOMEM : 1;
		goto out;
	}
	err = catalog_docs_load_file(sb_str(path), sb_str(disp), set->catalog, set->ncatalog,
				     sb_str(&cat), &set->docs_text, diags);
	err = err == -ENOMEM ? err : err < 0;
out:
	sb_release(&cat);
	return err;
}

/* The name lists of dir/names: loaded once with the specs, so every
 * directory of every reload looks names up in the same table. Returns 0,
 * 1 when a list is malformed (reported) or -ENOMEM. */
static int load_names(struct spec_set *set, const char *dir, struct strbuf *path,
		      struct diag_list *diags)
{
	int err;

	sb_reset(path);
	if ((err = sb_addf(path, "%s/names", dir)) < 0)
		return err;
	err = names_load_dir(sb_str(path), &set->names, diags);
	if (err != -ENOMEM && names_index(set->names, set) < 0)
		err = -ENOMEM;
	return err == -EINVAL ? 1 : err;
}

int spec_set_load_dir(const char *dir, const char *only, unsigned flags,
		      struct spec_set **out, struct diag_list *diags)
{
	struct strbuf path = STRBUF_INIT, disp = STRBUF_INIT, want = STRBUF_INIT;
	size_t ndiags = diags->n;
	const char *keep;
	struct spec_set *set = NULL;
	char **names = NULL;
	size_t n = 0, k;
	bool docs = false;
	int err, bad = 0;

	if ((err = spec_dir_list(dir, &names, &n, diags)) < 0)
		goto out;
	keep = own_file(names, n, only, &want);
	/* Another file declaring the same backend is an error of the whole
	 * directory: read everything, so it is reported as check reports it. */
	for (k = 0; keep && k < n; k++)
		if (strcmp(names[k], keep) && !shared_file(names[k]) &&
		    declares(dir, names[k], only))
			keep = NULL;
	err = -ENOMEM;
	if (!(set = calloc(1, sizeof(*set))) || !(set->dir = xstrdup(dir)) ||
	    !(set->backends = calloc(n ? n : 1, sizeof(*set->backends))))
		goto out;
	for (k = 0; k < n; k++) {
		struct spec *s = NULL;

		sb_reset(&path);
		if (keep && strcmp(names[k], keep) && !shared_file(names[k]))
			continue;
		/* After the loop: it documents the catalog, which must be read first. */
		if (!strcmp(names[k], DOCS_FILE)) {
			docs = !(flags & SPEC_LOAD_NO_DOCS);
			continue;
		}
		if ((err = sb_addf(&path, "%s/%s", dir, names[k])) < 0 ||
		    (err = display_name(dir, names[k], &disp)) < 0)
			goto out;
		if (!strcmp(names[k], "catalog.yaml")) {
			set->has_catalog = true;
			err = catalog_load_file(sb_str(&path), sb_str(&disp), &set->catalog,
					       &set->ncatalog, diags);
			if (err == -ENOMEM)
				goto out;
			bad |= err < 0;
			continue;
		}
		err = spec_load_file(sb_str(&path), sb_str(&disp), &s, diags);
		if (err == -ENOMEM)
			goto out;
		if (err < 0) {
			bad = 1;
			spec_free(s);
			continue;
		}
		if (s->is_runner) {
			if (set->runner) {
				diag_add(diags, DC_SPEC_SET, s->display, 0, 0,
					 "a second runner base (the first is %s)", set->runner->display);
				bad = 1;
				spec_free(s);
				continue;
			}
			set->runner = s;
		} else {
			set->backends[set->nbackends++] = s;
		}
	}
	if (docs && (err = load_docs(set, dir, &path, &disp, diags)) != 0) {
		if (err < 0)
			goto out;
		bad = 1;
	}
	if (!(flags & SPEC_LOAD_NO_NAMES) && (err = load_names(set, dir, &path, diags)) != 0) {
		if (err < 0)
			goto out;
		bad = 1;
	}
	if (!set->nbackends && !bad) {
		diag_add(diags, DC_SPEC_SET, dir, 0, 0, "no backend specs (*.yaml) in this directory");
		bad = 1;
	}
	qsort(set->backends, set->nbackends, sizeof(*set->backends), backend_cmp);
	if (check_set(set, diags) < 0)
		bad = 1;
	/* only.yaml declares some other backend: the one asked for may be
	 * anywhere, so read every file after all. */
	if (keep && !bad && !spec_set_backend(set, only)) {
		diag_truncate(diags, ndiags);
		err = spec_set_load_dir(dir, NULL, flags, out, diags);
		goto out;
	}
	err = bad ? -EINVAL : 0;
	if (!err) {
		*out = set;
		set = NULL;
	}
out:
	spec_set_free(set);
	for (k = 0; k < n; k++)
		free(names[k]);
	free(names);
	sb_release(&path);
	sb_release(&disp);
	sb_release(&want);
	return err;
}

void spec_set_free(struct spec_set *set)
{
	size_t k;

	if (!set)
		return;
	spec_free(set->runner);
	for (k = 0; k < set->nbackends; k++)
		spec_free(set->backends[k]);
	free(set->backends);
	catalog_free(set->catalog, set->ncatalog);
	arena_free(set->docs_text);
	names_free(set->names);
	free(set->dir);
	free(set);
}

const struct spec *spec_set_models(const struct spec_set *set, const struct spec *backend)
{
	if (backend->models_source)
		return backend;
	if (backend->uses_runner && set->runner && set->runner->models_source)
		return set->runner;
	return NULL;
}

const struct spec *spec_set_backend(const struct spec_set *set, const char *backend)
{
	size_t lo = 0, hi = set->nbackends;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(set->backends[mid]->backend, backend);

		if (!c)
			return set->backends[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct catalog_entry *spec_set_catalog(const struct spec_set *set, const char *name)
{
	size_t lo = 0, hi = set->ncatalog;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(set->catalog[mid].name, name);

		if (!c)
			return &set->catalog[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool spec_has_arch(const struct spec *s, const char *arch)
{
	size_t k;

	for (k = 0; k < s->narches; k++)
		if (!strcmp(s->arches[k], arch))
			return true;
	return false;
}

bool spec_name_marked(const struct spec *s, const char *name, enum spec_mark m)
{
	size_t first, n = s ? spec_entries(s, name, &first) : 0, k;

	for (k = 0; k < n; k++) {
		const struct spec_var *v = &s->vars[s->by_name[first + k]];

		if (m == SPEC_MARK_SECRET ? v->secret : (v->scope & SCOPE_NODE) != 0)
			return true;
	}
	return false;
}

bool spec_var_applies_to_arch(const struct spec_var *v, const char *arch)
{
	size_t k;

	if (!v->narch)
		return true;
	for (k = 0; k < v->narch; k++)
		if (!strcmp(v->arch[k], arch))
			return true;
	return false;
}

/* name_lists: loading and looking up the shipped name lists (name_lists.h). */
#include "grow.h"
#include "name_lists.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "infile.h"
#include "spec.h"
#include "strbuf.h"
#include "text.h"

#define XLA_FLAGS_FILE "xla_flags.txt"

struct grow {
	void *v;
	size_t n, cap, size;
};

static void *grow_one(struct grow *g)
{
	if (grow(&g->v, &g->cap, g->n, g->size, 256) < 0)
		return NULL;
	return (char *)g->v + g->size * g->n++;
}

static bool name_char(char c, bool first)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

static bool is_name(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!name_char(s[i], i == 0))
			return false;
	return i > 0;
}

/* Splits the words of s (blank-separated) into a new array of copies. */
static int words(const char *s, char ***out, size_t *nout)
{
	char **v = NULL;
	size_t n = 0;

	while (*s) {
		size_t len;
		char **nv;

		s += strspn(s, " \t");
		if (!(len = strcspn(s, " \t")))
			break;
		if (!(nv = realloc(v, (n + 1) * sizeof(*v))) || !(nv[n] = xstrndup(s, len))) {
			free(nv ? nv : v);
			return -ENOMEM;
		}
		v = nv;
		n++;
		s += len;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* A "# key: value" header line's value, or NULL. */
static const char *header(const char *line, const char *key)
{
	size_t k = strlen(key);

	line += strspn(line, "# \t");
	if (strncmp(line, key, k) || line[k] != ':')
		return NULL;
	return line + k + 1 + strspn(line + k + 1, " \t");
}

static int bad_line(struct diag_list *diags, const char *file, unsigned line, const char *what)
{
	int err = diag_add(diags, DC_NAME_LIST_BAD, file, line, 0, "%s", what);

	return err < 0 ? err : -EINVAL;
}

/* Reads one file: a reader's names into entries (bit k), or the XLA
 * flags. Returns 0, -EINVAL (reported) or -ENOMEM. */
static int load_file(struct names *nm, const char *path, const char *disp, bool flags,
		     struct grow *entries, struct grow *xf, struct diag_list *diags)
{
	struct names_reader *r = flags ? NULL : &nm->readers[nm->nreaders];
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	bool source = false;
	ssize_t len;
	int fd, err = 0, bad = 0;
	FILE *f;

	if ((fd = infile_open(path, NULL)) < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return bad_line(diags, disp, 0, "cannot read this name list");
	}
	while ((len = getline(&line, &cap, f)) >= 0 && err != -ENOMEM) {
		const char *h;

		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
			       line[len - 1] == ' ' || line[len - 1] == '\t'))
			line[--len] = '\0';
		if (!len)
			continue;
		if (line[0] == '#') {
			if (header(line, "source"))
				source = true;
			if (r && (h = header(line, "reader")) && !r->title)
				err = (r->title = xstrdup(h)) ? 0 : -ENOMEM;
			else if (r && (h = header(line, "prefixes")))
				err = words(h, &r->prefixes, &r->nprefixes);
			else if (r && (h = header(line, "backends")))
				err = words(h, &r->backends, &r->nbackends);
			continue;
		}
		if (flags) {
			char *sp = strchr(line, ' ');
			struct xla_flag *x;

			if (sp)
				*sp++ = '\0';
			if (!is_name(line) || !sp || (strcmp(sp, "bool") && strcmp(sp, "value"))) {
				bad |= bad_line(diags, disp, lineno,
						"expected a flag name and bool or value") == -EINVAL;
				continue;
			}
			if (!(x = grow_one(xf)) || !(x->name = xstrdup(line))) {
				if (x)
					xf->n--;
				err = -ENOMEM;
				break;
			}
			x->boolean = !strcmp(sp, "bool");
		} else {
			struct names_entry *e;

			if (!is_name(line)) {
				bad |= bad_line(diags, disp, lineno,
						"expected one variable name") == -EINVAL;
				continue;
			}
			if (!(e = grow_one(entries)) || !(e->name = xstrdup(line))) {
				if (e)
					entries->n--;
				err = -ENOMEM;
				break;
			}
			e->readers = (uint32_t)1 << nm->nreaders;
		}
	}
	free(line);
	fclose(f);
	if (err == -ENOMEM)
		return err;
	if (!source)
		bad |= bad_line(diags, disp, 0, "a name list must say its source (# source: ...)") ==
		       -EINVAL;
	return bad ? -EINVAL : 0;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct names_entry *)a)->name, ((const struct names_entry *)b)->name);
}

static int flag_cmp(const void *a, const void *b)
{
	return strcmp(((const struct xla_flag *)a)->name, ((const struct xla_flag *)b)->name);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the entries and merges the copies of a name one reader list or
 * several gave. */
static void merge(struct names *nm)
{
	size_t i, o = 0;

	/* qsort's base must not be NULL, even for no elements. */
	if (nm->n)
		qsort(nm->v, nm->n, sizeof(*nm->v), entry_cmp);
	for (i = 0; i < nm->n; i++) {
		if (o && !strcmp(nm->v[o - 1].name, nm->v[i].name)) {
			nm->v[o - 1].readers |= nm->v[i].readers;
			free(nm->v[i].name);
			continue;
		}
		nm->v[o++] = nm->v[i];
	}
	nm->n = o;
	for (i = 0; i < nm->n; i++)
		nm->v[i].mask = text_char_mask(nm->v[i].name, strlen(nm->v[i].name));
	if (nm->nflags)
		qsort(nm->flags, nm->nflags, sizeof(*nm->flags), flag_cmp);
	for (i = o = 0; i < nm->nflags; i++) {
		if (o && !strcmp(nm->flags[o - 1].name, nm->flags[i].name)) {
			free(nm->flags[i].name);
			continue;
		}
		nm->flags[o++] = nm->flags[i];
	}
	nm->nflags = o;
	for (i = 0; i < nm->nflags; i++)
		nm->flags[i].mask = text_char_mask(nm->flags[i].name, strlen(nm->flags[i].name));
}

static int list_txt(const char *dir, char ***out, size_t *nout)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0;
	int err = 0;

	*out = NULL;
	*nout = 0;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char **nv;

		if (de->d_name[0] == '.' || len < 5 || strcmp(de->d_name + len - 4, ".txt"))
			continue;
		if (!(nv = realloc(v, (n + 1) * sizeof(*v))) || !(nv[n] = xstrdup(de->d_name))) {
			v = nv ? nv : v;
			err = -ENOMEM;
			break;
		}
		v = nv;
		n++;
	}
	closedir(d);
	if (v)
		qsort(v, n, sizeof(*v), str_cmp);
	*out = v;
	*nout = n;
	return err;
}

int names_load_dir(const char *dir, struct names **out, struct diag_list *diags)
{
	struct grow entries = { NULL, 0, 0, sizeof(struct names_entry) };
	struct grow xf = { NULL, 0, 0, sizeof(struct xla_flag) };
	struct strbuf path = STRBUF_INIT;
	struct names *nm = calloc(1, sizeof(*nm));
	char **files = NULL;
	size_t nfiles = 0, k;
	int err, bad = 0;

	if (!nm)
		return -ENOMEM;
	if ((err = list_txt(dir, &files, &nfiles)) < 0 && err != -ENOMEM) {
		err = diag_add(diags, DC_NAME_LIST_BAD, dir, 0, 0, "cannot read the name lists: %s",
			       strerror(-err));
		bad = 1;
	}
	for (k = 0; k < nfiles && err != -ENOMEM; k++) {
		bool flags = !strcmp(files[k], XLA_FLAGS_FILE);

		sb_reset(&path);
		if ((err = sb_addf(&path, "%s/%s", dir, files[k])) < 0)
			break;
		if (!flags) {
			if (nm->nreaders == NAMES_MAX_READERS) {
				err = bad_line(diags, sb_str(&path), 0, "too many name lists");
				bad = 1;
				continue;
			}
			if (!(nm->readers[nm->nreaders].file = xstrdup(files[k]))) {
				err = -ENOMEM;
				break;
			}
		}
		err = load_file(nm, sb_str(&path), sb_str(&path), flags, &entries, &xf, diags);
		bad |= err == -EINVAL;
		if (!flags) {
			struct names_reader *r = &nm->readers[nm->nreaders++];

			if (err != -ENOMEM && !r->title && !(r->title = xstrdup(files[k])))
				err = -ENOMEM;
		}
	}
	nm->v = entries.v;
	nm->n = entries.n;
	nm->flags = xf.v;
	nm->nflags = xf.n;
	for (k = 0; k < nfiles; k++)
		free(files[k]);
	free(files);
	sb_release(&path);
	if (err == -ENOMEM) {
		names_free(nm);
		return err;
	}
	merge(nm);
	*out = nm;
	return bad ? -EINVAL : 0;
}

static void free_words(char **v, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		free(v[k]);
	free(v);
}

void names_free(struct names *nm)
{
	size_t k;

	if (!nm)
		return;
	for (k = 0; k < nm->nreaders; k++) {
		free(nm->readers[k].file);
		free(nm->readers[k].title);
		free_words(nm->readers[k].prefixes, nm->readers[k].nprefixes);
		free_words(nm->readers[k].backends, nm->readers[k].nbackends);
	}
	for (k = 0; k < nm->n; k++)
		free(nm->v[k].name);
	free(nm->v);
	for (k = 0; k < nm->nflags; k++)
		free(nm->flags[k].name);
	free(nm->flags);
	free(nm->known);
	free(nm);
}

static int known_cmp(const void *a, const void *b)
{
	const struct names_known *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int known_add(struct grow *g, const char *name)
{
	size_t len = strlen(name);
	struct names_known *k;

	/* Checked before the entry is taken: a refused name leaves none. */
	if (len > UINT32_MAX)
		return -EINVAL;
	if (!(k = grow_one(g)))
		return -ENOMEM;
	k->name = name;
	k->len = (uint32_t)len;
	k->mask = names_fold_mask(text_char_mask(name, len));
	return 0;
}

int names_index(struct names *nm, const struct spec_set *set)
{
	struct grow g = { NULL, 0, 0, sizeof(struct names_known) };
	size_t k, j, o;
	int err = 0;

	for (k = 0; k < nm->n && !err; k++)
		err = known_add(&g, nm->v[k].name);
	for (k = 0; k < set->ncatalog && !err; k++)
		err = known_add(&g, set->catalog[k].name);
	for (k = 0; k <= set->nbackends && !err; k++) {
		const struct spec *sp = k < set->nbackends ? set->backends[k] : set->runner;

		for (j = 0; sp && j < sp->nvars && !err; j++)
			err = known_add(&g, sp->vars[j].name);
	}
	if (err) {
		free(g.v);
		return err;
	}
	nm->known = g.v;
	nm->nknown = g.n;
	if (!nm->known)
		return 0;
	qsort(nm->known, nm->nknown, sizeof(*nm->known), known_cmp);
	for (k = o = 0; k < nm->nknown; k++)
		if (!o || strcmp(nm->known[o - 1].name, nm->known[k].name))
			nm->known[o++] = nm->known[k];
	nm->nknown = o;
	/* The index lives as long as the world: at its exact size (growth
	 * by doubling left up to half of it unused, 0.1 MiB at 10,000
	 * variables). A failed shrink keeps the larger block. */
	{
		struct names_known *fit = realloc(nm->known, o * sizeof(*fit));

		if (fit)
			nm->known = fit;
	}
	return 0;
}

/* The first known name of length len or more. */
static size_t known_from(const struct names *nm, size_t len)
{
	size_t lo = 0, hi = nm->nknown;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (nm->known[mid].len < len)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t names_known_by_length(const struct names *nm, size_t lo, size_t hi, size_t *first)
{
	*first = known_from(nm, lo);
	return known_from(nm, hi + 1) - *first;
}

/* Binary search over an array of structs whose first member is the name. */
static const void *bsearch_name(const void *base, size_t n, size_t size, const char *name,
				size_t len)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *k = *(char *const *)((const char *)base + mid * size);
		int c = strncmp(k, name, len);

		if (!c && k[len])
			c = 1;
		if (!c)
			return (const char *)base + mid * size;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct names_entry *names_find(const struct names *nm, const char *name, size_t len)
{
	return nm ? bsearch_name(nm->v, nm->n, sizeof(*nm->v), name, len) : NULL;
}

const struct xla_flag *names_xla_flag(const struct names *nm, const char *name, size_t len)
{
	return nm ? bsearch_name(nm->flags, nm->nflags, sizeof(*nm->flags), name, len) : NULL;
}

bool names_reader_runs(const struct names *nm, size_t k, const char *backend)
{
	const struct names_reader *r = &nm->readers[k];
	size_t j;

	if (!r->nbackends)
		return true;
	for (j = 0; backend && j < r->nbackends; j++)
		if (!strcmp(r->backends[j], backend))
			return true;
	return false;
}

const struct names_reader *names_prefix_reader(const struct names *nm, const char *name)
{
	const struct names_reader *best = NULL;
	size_t k, j, bestlen = 0;

	for (k = 0; nm && k < nm->nreaders; k++)
		for (j = 0; j < nm->readers[k].nprefixes; j++) {
			size_t l = strlen(nm->readers[k].prefixes[j]);

			if (l > bestlen && !strncmp(name, nm->readers[k].prefixes[j], l)) {
				best = &nm->readers[k];
				bestlen = l;
			}
		}
	return best;
}

/* report: diagnostics once each, with their directories; see report.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hindex.h"
#include "json.h"
#include "report.h"

/* In an entry's dirs: found among the inputs' diagnostics (no label). */
#define REPORT_INPUT ((size_t)-1)

/* The entry whose text is text, or a new one (copying d): *out. */
static int find_or_add(struct report *r, const struct diag *d, char *text,
		       struct report_entry **out)
{
	uint64_t h = hindex_hash(text, strlen(text), HINDEX_SEED);
	struct report_entry *e;
	struct hindex_probe p;
	size_t i;

	for (i = hindex_first(&r->index, h, &p); i != HINDEX_NONE; i = hindex_next(&r->index, &p)) {
		if (!strcmp(r->v[i].text, text)) {
			free(text);
			*out = &r->v[i];
			return 0;
		}
	}
	if (GROW(r->v, r->cap, r->n, 32) < 0 || hindex_insert(&r->index, h, r->n) < 0)
		return -ENOMEM;
	e = &r->v[r->n];
	memset(e, 0, sizeof(*e));
	e->d = *d;
	e->d.file = d->file ? xstrdup(d->file) : NULL;
	e->d.msg = xstrdup(d->msg);
	e->text = text;
	if ((d->file && !e->d.file) || !e->d.msg) {
		free(e->d.file);
		free(e->d.msg);
		hindex_remove(&r->index, h, r->n);
		return -ENOMEM;
	}
	r->n++;
	*out = e;
	return 0;
}

static int entry_add_dir(struct report_entry *e, size_t dir)
{
	if (e->ndirs && e->dirs[e->ndirs - 1] == dir)
		return 0;
	if (GROW(e->dirs, e->cap, e->ndirs, 4) < 0)
		return -ENOMEM;
	e->dirs[e->ndirs++] = dir;
	return 0;
}

static int add_dir_label(struct report *r, const char *backend, const char *arch)
{
	struct strbuf sb = STRBUF_INIT;
	char **v = realloc(r->dirs, (r->ndirs + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	r->dirs = v;
	if (sb_addf(&sb, "%s/%s", backend, arch) < 0 || !(v[r->ndirs] = sb_detach(&sb, NULL))) {
		sb_release(&sb);
		return -ENOMEM;
	}
	r->ndirs++;
	return 0;
}

int report_add(struct report *r, const struct diag_list *l, size_t first,
	       const char *backend, const char *arch)
{
	struct strbuf sb = STRBUF_INIT;
	size_t k, dir = REPORT_INPUT;
	int err = 0;

	if (backend && arch) {
		if ((err = add_dir_label(r, backend, arch)) < 0)
			return err;
		dir = r->ndirs - 1;
	}
	for (k = first; k < l->n && !err; k++) {
		struct report_entry *e;
		char *text;

		sb_reset(&sb);
		if ((err = diag_format(&l->v[k], &sb)) < 0)
			break;
		if (!(text = xstrdup(sb_str(&sb)))) {
			err = -ENOMEM;
			break;
		}
		if ((err = find_or_add(r, &l->v[k], text, &e)) < 0) {
			free(text);
			break;
		}
		err = entry_add_dir(e, dir);
	}
	sb_release(&sb);
	return err;
}

static bool is_input(const struct report_entry *e)
{
	size_t k;

	for (k = 0; k < e->ndirs; k++)
		if (e->dirs[k] == REPORT_INPUT)
			return true;
	return false;
}

int report_text(const struct report *r, enum diag_sev min, bool silenced,
		struct strbuf *out, size_t counts[REPORT_NCOUNTS])
{
	size_t k, j;
	int err = 0;

	for (k = 0; k < r->n && !err; k++) {
		const struct report_entry *e = &r->v[k];

		if (e->d.sev < min)
			continue;
		if (counts)
			counts[e->d.silenced ? REPORT_SILENCED : e->d.sev]++;
		if (e->d.silenced && !silenced)
			continue;
		err = sb_adds(out, e->text);
		if (!err && !is_input(e) && e->ndirs) {
			if (e->ndirs == r->ndirs && r->ndirs > 1) {
				err = sb_adds(out, " [every directory]");
			} else {
				for (j = 0; j < e->ndirs && !err; j++)
					err = sb_addf(out, "%s%s", j ? " " : " [",
						      r->dirs[e->dirs[j]]);
				if (!err)
					err = sb_addc(out, ']');
			}
		}
		if (!err)
			err = sb_addc(out, '\n');
	}
	return err;
}

static int json_str_or_null(struct strbuf *out, const char *s)
{
	return s ? json_add_string(out, s, strlen(s)) : sb_adds(out, "null");
}

static int json_uint_or_null(struct strbuf *out, unsigned v)
{
	return v ? sb_addf(out, "%u", v) : sb_adds(out, "null");
}

static int json_one(struct strbuf *out, const struct diag *d, const char *dir, bool first)
{
	int err;

	if ((err = sb_adds(out, first ? "\n  {\"severity\": " : ",\n  {\"severity\": ")) < 0 ||
	    (err = json_str_or_null(out, diag_sev_name(d->sev))) < 0 ||
	    (err = sb_adds(out, ", \"code\": ")) < 0 ||
	    (err = json_str_or_null(out, diag_code_info(d->code)->code)) < 0 ||
	    (err = sb_adds(out, d->silenced ? ", \"silenced\": true" :
			   ", \"silenced\": false")) < 0 ||
	    (err = sb_adds(out, ", \"file\": ")) < 0 ||
	    (err = json_str_or_null(out, d->file)) < 0 ||
	    (err = sb_adds(out, ", \"line\": ")) < 0 ||
	    (err = json_uint_or_null(out, d->line)) < 0 ||
	    (err = sb_adds(out, ", \"column\": ")) < 0 ||
	    (err = json_uint_or_null(out, d->col)) < 0 ||
	    (err = sb_adds(out, ", \"directory\": ")) < 0 ||
	    (err = json_str_or_null(out, dir)) < 0 ||
	    (err = sb_adds(out, ", \"message\": ")) < 0 ||
	    (err = json_str_or_null(out, d->msg)) < 0)
		return err;
	return sb_addc(out, '}');
}

int report_json(const struct report *r, enum diag_sev min, struct strbuf *out,
		size_t counts[REPORT_NCOUNTS])
{
	bool first = true;
	size_t k, j;
	int err;

	if ((err = sb_addc(out, '[')) < 0)
		return err;
	for (k = 0; k < r->n; k++) {
		const struct report_entry *e = &r->v[k];

		if (e->d.sev < min)
			continue;
		if (counts)
			counts[e->d.silenced ? REPORT_SILENCED : e->d.sev]++;
		for (j = 0; j < e->ndirs; j++) {
			const char *dir = e->dirs[j] == REPORT_INPUT ? NULL : r->dirs[e->dirs[j]];

			if ((err = json_one(out, &e->d, dir, first)) < 0)
				return err;
			first = false;
		}
	}
	return sb_adds(out, first ? "]\n" : "\n]\n");
}

void report_release(struct report *r)
{
	size_t k;

	for (k = 0; k < r->n; k++) {
		free(r->v[k].d.file);
		free(r->v[k].d.msg);
		free(r->v[k].text);
		free(r->v[k].dirs);
	}
	for (k = 0; k < r->ndirs; k++)
		free(r->dirs[k]);
	free(r->v);
	free(r->dirs);
	hindex_release(&r->index);
	memset(r, 0, sizeof(*r));
}

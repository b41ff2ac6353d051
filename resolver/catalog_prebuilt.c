/* catalog_prebuilt; see catalog_prebuilt.h. */
#include "catalog_prebuilt.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

bool catalog_prebuilt_matches(const struct catalog_prebuilt *cp, const char *buf, size_t len)
{
	return cp && cp->src && cp->src_len == len && !memcmp(cp->src, buf, len);
}

static char *text_at(const struct catalog_prebuilt *cp, uint32_t off)
{
	/* The table is static and read-only; catalog entries hold plain
	 * char * because parsed ones own theirs. Nothing writes through them. */
	return off == CP_NONE ? NULL : (char *)(cp->text + off);
}

int catalog_from_prebuilt(const struct catalog_prebuilt *cp, struct catalog_entry **out,
			  size_t *nout)
{
	struct catalog_entry *v = catalog_new_array(cp->n);
	size_t k, j;

	if (!v)
		return -ENOMEM;
	for (k = 0; k < cp->n; k++) {
		const struct catalog_prebuilt_entry *p = &cp->entries[k];
		struct catalog_entry *e = &v[k];

		e->name = text_at(cp, p->name);
		e->def = text_at(cp, p->def);
		e->description = text_at(cp, p->description);
		e->where_used = text_at(cp, p->where_used);
		e->where_set = text_at(cp, p->where_set);
		e->type.type = (enum vtype)p->type;
		e->type.has_min = p->has_min;
		e->type.has_max = p->has_max;
		e->type.min = p->min;
		e->type.max = p->max;
		e->type.invalid = (enum diag_sev)p->invalid;
		if (!p->nvalues)
			continue;
		if (!(e->type.values = malloc(p->nvalues * sizeof(char *)))) {
			catalog_free(v, k + 1);
			return -ENOMEM;
		}
		for (j = 0; j < p->nvalues; j++)
			e->type.values[j] = text_at(cp, cp->values[p->values + j]);
		e->type.nvalues = p->nvalues;
	}
	*out = v;
	*nout = cp->n;
	return 0;
}

/* ---- the build-time side -------------------------------------------- */

/* Text pool under construction: every string once, in order of use. */
struct pool {
	struct strbuf text;
	uint32_t *values;
	size_t nvalues, cap;
};

static int pool_add(struct pool *p, const char *s, uint32_t *off)
{
	size_t at = p->text.len;

	if (!s) {
		*off = CP_NONE;
		return 0;
	}
	if (at >= CP_NONE)
		return -E2BIG;
	*off = (uint32_t)at;
	/* The terminating NUL goes in too: each string ends where the next
	 * begins. */
	return sb_add(&p->text, s, strlen(s) + 1);
}

static int pool_add_value(struct pool *p, const char *s)
{
	uint32_t off;
	int err;

	if (p->nvalues == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		uint32_t *v = realloc(p->values, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->values = v;
		p->cap = cap;
	}
	if ((err = pool_add(p, s, &off)) < 0)
		return err;
	p->values[p->nvalues++] = off;
	return 0;
}

/* bytes as a C string literal, split into lines; octal escapes keep
 * every byte exact (a following digit cannot extend a 3-digit escape). */
static void put_bytes(FILE *out, const char *b, size_t len)
{
	size_t k, col = 0;

	fputs("\t\"", out);
	for (k = 0; k < len; k++) {
		unsigned char c = (unsigned char)b[k];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?')
			fputc(c, out), col++;
		else
			fprintf(out, "\\%03o", c), col += 4;
		if (col >= 72 && k + 1 < len) {
			fputs("\"\n\t\"", out);
			col = 0;
		}
	}
	fputs("\"", out);
}

/* A long long as a C constant; LLONG_MIN has no literal of its own. */
static void put_ll(FILE *out, long long v)
{
	if (v == LLONG_MIN)
		fputs("(-9223372036854775807ll - 1)", out);
	else
		fprintf(out, "%lldll", v);
}

static int emit_entries(FILE *out, const char *symbol, const struct catalog_entry *v,
			size_t n, struct pool *p)
{
	size_t k, j;
	int err = 0;

	fprintf(out, "static const struct catalog_prebuilt_entry %s_entries[] = {\n", symbol);
	for (k = 0; k < n; k++) {
		const struct catalog_entry *e = &v[k];
		uint32_t name, def, desc, used, set, first = (uint32_t)p->nvalues;

		if ((err = pool_add(p, e->name, &name)) < 0 ||
		    (err = pool_add(p, e->def, &def)) < 0 ||
		    (err = pool_add(p, e->description, &desc)) < 0 ||
		    (err = pool_add(p, e->where_used, &used)) < 0 ||
		    (err = pool_add(p, e->where_set, &set)) < 0)
			return err;
		for (j = 0; j < e->type.nvalues; j++)
			if ((err = pool_add_value(p, e->type.values[j])) < 0)
				return err;
		fprintf(out, "\t{ %uu, %uu, %uu, %uu, %uu, %uu, %zuu, %d, %d, %d, %d, ",
			name, def, desc, used, set, first, e->type.nvalues, (int)e->type.type,
			e->type.has_min, e->type.has_max, (int)e->type.invalid);
		put_ll(out, e->type.min);
		fputs(", ", out);
		put_ll(out, e->type.max);
		fputs(" },\n", out);
	}
	/* An empty initializer list is not C11. */
	if (!n)
		fputs("\t{ 0 },\n", out);
	fputs("};\n\n", out);
	return 0;
}

int catalog_prebuilt_emit(const char *buf, size_t len, const char *display,
			  const char *symbol, FILE *out, struct diag_list *diags)
{
	struct pool p = { .text = STRBUF_INIT };
	struct catalog_entry *v = NULL;
	size_t n = 0, before = diags->n, k;
	int err;

	err = catalog_load_buffer(display, buf, len, &v, &n, diags);
	if (err == 0 && diags->n != before)
		err = -EINVAL;
	if (err < 0)
		goto out;
	fputs("/* Generated by specs/gen_catalog.c from catalog.yaml: do not edit. */\n"
	      "#include \"catalog_prebuilt.h\"\n\n", out);
	fprintf(out, "static const char %s_src[] =\n", symbol);
	put_bytes(out, buf, len);
	fputs(";\n\n", out);
	if ((err = emit_entries(out, symbol, v, n, &p)) < 0)
		goto out;
	fprintf(out, "static const uint32_t %s_values[] = {", symbol);
	for (k = 0; k < p.nvalues; k++)
		fprintf(out, "%s%uu,", k % 8 ? " " : "\n\t", p.values[k]);
	fprintf(out, "%s\n};\n\n", p.nvalues ? "" : " 0");
	fprintf(out, "static const char %s_text[] =\n", symbol);
	put_bytes(out, p.text.buf ? p.text.buf : "", p.text.len);
	fputs(";\n\n", out);
	fprintf(out, "const struct catalog_prebuilt %s = {\n"
		"\t%s_src, %zu,\n\t%s_entries, %zu,\n\t%s_values,\n\t%s_text, %zu,\n};\n",
		symbol, symbol, len, symbol, n, symbol, symbol, p.text.len);
	err = ferror(out) ? -EIO : 0;
out:
	catalog_free(v, n);
	free(p.values);
	sb_release(&p.text);
	return err;
}

/* Diagnostics storage and the one textual form they are printed in. */
#include "grow.h"
#include "diag.h"

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* True when s prints as it is: printable ASCII alone. */
static bool plain(const char *s, size_t n)
{
	for (; n; s++, n--)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* s as it goes into a message: a name or a path read from an input may
 * hold a newline or a terminal escape, which would forge a diagnostic
 * line of its own or recolour the terminal; text_escape shows them as
 * \n and \xNN (valid UTF-8 stays as it is). */
static int add_escaped(struct strbuf *out, const char *s, size_t n)
{
	return plain(s, n) ? sb_add(out, s, n) : text_escape(out, s, n);
}

static int diag_push(struct diag_list *l, enum diag_code code, bool silenced,
		     const char *file, unsigned line, unsigned col, char *msg)
{
	struct diag *d;

	if (GROW(l->v, l->cap, l->n, 8) < 0)
		return -ENOMEM;
	d = &l->v[l->n];
	d->code = code;
	d->sev = (enum diag_sev)diag_code_info(code)->sev;
	d->silenced = silenced;
	d->line = line;
	d->col = col;
	d->msg = msg;
	d->file = NULL;
	if (file && !(d->file = xstrdup(file)))
		return -ENOMEM;
	l->n++;
	return 0;
}

int diag_add(struct diag_list *l, enum diag_code code, const char *file,
	     unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = diag_vadd(l, code, file, line, col, fmt, ap);
	va_end(ap);
	return err;
}

int diag_vadd(struct diag_list *l, enum diag_code code, const char *file,
	      unsigned line, unsigned col, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;
	int err;
	char *msg;

	err = sb_vaddf(&sb, fmt, ap);
	if (err < 0)
		goto out;
	if (!plain(sb.buf ? sb.buf : "", sb.len)) {
		struct strbuf esc = STRBUF_INIT;

		if ((err = add_escaped(&esc, sb.buf, sb.len)) < 0) {
			sb_release(&esc);
			goto out;
		}
		sb_release(&sb);
		sb = esc;
	}
	if (!(msg = sb_detach(&sb, NULL))) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = diag_push(l, code, false, file, line, col, msg)) < 0)
		free(msg);
out:
	sb_release(&sb);
	return err;
}

int diag_extend(struct diag_list *dst, const struct diag_list *src)
{
	return diag_extend_from(dst, src, 0);
}

int diag_extend_from(struct diag_list *dst, const struct diag_list *src, size_t first)
{
	size_t i;
	int err;

	for (i = first; i < src->n; i++) {
		const struct diag *d = &src->v[i];
		char *msg = xstrdup(d->msg);

		if (!msg)
			return -ENOMEM;
		if ((err = diag_push(dst, d->code, d->silenced, d->file, d->line, d->col,
				     msg)) < 0) {
			free(msg);
			return err;
		}
	}
	return 0;
}

const char *diag_sev_name(enum diag_sev sev)
{
	switch (sev) {
	case DIAG_INFO: return "info";
	case DIAG_WARNING: return "warning";
	case DIAG_ERROR: return "error";
	}
	return "?";
}

int diag_format(const struct diag *d, struct strbuf *out)
{
	int err = 0;

	if (d->file && !(err = add_escaped(out, d->file, strlen(d->file)))) {
		if (d->line && d->col)
			err = sb_addf(out, ":%u:%u: ", d->line, d->col);
		else if (d->line)
			err = sb_addf(out, ":%u: ", d->line);
		else
			err = sb_adds(out, ": ");
	}
	if (!err)
		err = sb_addf(out, "%s: %s [%s%s]", diag_sev_name(d->sev), d->msg,
			      diag_code_info(d->code)->code, d->silenced ? ", silenced" : "");
	return err;
}

int diag_max_sev(const struct diag_list *l)
{
	int max = -1;
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!l->v[i].silenced && (int)l->v[i].sev > max)
			max = (int)l->v[i].sev;
	return max;
}

int diag_scrub(struct diag_list *l, const char *val, size_t len)
{
	size_t d;

	for (d = 0; len && d < l->n; d++) {
		char *m = l->v[d].msg, *at;

		while ((at = memmem(m, strlen(m), val, len))) {
			struct strbuf sb = STRBUF_INIT;
			int err;

			if ((err = sb_add(&sb, m, (size_t)(at - m))) < 0 ||
			    (err = sb_adds(&sb, "<redacted>")) < 0 ||
			    (err = sb_adds(&sb, at + len)) < 0) {
				sb_release(&sb);
				return err;
			}
			free(l->v[d].msg);
			l->v[d].msg = sb_detach(&sb, NULL);
			m = l->v[d].msg;
		}
	}
	return 0;
}

size_t diag_count(const struct diag_list *l, enum diag_sev sev)
{
	size_t i, n = 0;

	for (i = 0; i < l->n; i++)
		n += l->v[i].sev == sev && !l->v[i].silenced;
	return n;
}

size_t diag_count_silenced(const struct diag_list *l)
{
	size_t i, n = 0;

	for (i = 0; i < l->n; i++)
		n += l->v[i].silenced;
	return n;
}

void diag_truncate(struct diag_list *l, size_t n)
{
	while (l->n > n) {
		l->n--;
		free(l->v[l->n].file);
		free(l->v[l->n].msg);
	}
}

void diag_list_release(struct diag_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].file);
		free(l->v[i].msg);
	}
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

int diag_silence_add_code(struct diag_silence *si, enum diag_code code)
{
	if ((size_t)code >= DIAG_NCODES)
		return -EINVAL;
	si->code[code] = true;
	return 0;
}

int diag_silence_add_line(struct diag_silence *si, const char *file, unsigned line,
			  enum diag_code code)
{
	struct diag_silence_line *v = realloc(si->lines, (si->nlines + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	si->lines = v;
	if (!(v[si->nlines].file = xstrdup(file)))
		return -ENOMEM;
	v[si->nlines].line = line;
	v[si->nlines].code = code;
	si->nlines++;
	return 0;
}

int diag_silence_extend(struct diag_silence *dst, const struct diag_silence *src)
{
	size_t k;
	int err;

	for (k = 0; k < DIAG_NCODES; k++)
		dst->code[k] = dst->code[k] || src->code[k];
	for (k = 0; k < src->nlines; k++)
		if ((err = diag_silence_add_line(dst, src->lines[k].file, src->lines[k].line,
						 src->lines[k].code)) < 0)
			return err;
	return 0;
}

static bool silences(const struct diag_silence *si, const struct diag *d)
{
	size_t k;

	if (si->code[d->code])
		return true;
	for (k = 0; k < si->nlines; k++)
		if (si->lines[k].code == d->code && si->lines[k].line == d->line && d->file &&
		    !strcmp(si->lines[k].file, d->file))
			return true;
	return false;
}

void diag_silence_apply(const struct diag_silence *si, struct diag_list *l, size_t first)
{
	size_t i;

	for (i = first; si && i < l->n; i++)
		l->v[i].silenced = l->v[i].silenced || silences(si, &l->v[i]);
}

void diag_silence_release(struct diag_silence *si)
{
	size_t k;

	for (k = 0; k < si->nlines; k++)
		free(si->lines[k].file);
	free(si->lines);
	memset(si, 0, sizeof(*si));
}

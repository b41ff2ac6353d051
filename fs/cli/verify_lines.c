/* verify's report lines, each said once with the directories it applies
 * to, and the escaping of every byte that came from etcd. */
#include "verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grow.h"
#include "text.h"

/* s, from etcd, as it goes into the report (text.h: \n, \xNN, ...). */
int verify_add_esc(struct strbuf *sb, const char *s)
{
	return text_escape(sb, s, strlen(s));
}

/* "backend/arch", escaped. */
int verify_add_dir(struct strbuf *sb, const struct node_dir_sum *d)
{
	int err;

	if ((err = verify_add_esc(sb, d->backend)) < 0 || (err = sb_addc(sb, '/')) < 0)
		return err;
	return verify_add_esc(sb, d->arch);
}

/* Adds dir d to the line keyed key, made of *text when new (taken over,
 * *text left empty). 0 or -ENOMEM. */
int verify_lines_add(struct lines *l, const uint8_t key[SHA256_LEN], struct strbuf *text,
		     const struct node_dir_sum *d)
{
	size_t lo = 0, hi = l->n, mid, vcap, bcap;
	struct line *ln;
	int c, err;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = memcmp(l->v[l->by_key[mid]].key, key, SHA256_LEN);
		if (!c) {
			lo = mid;
			goto found;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* One capacity for both: it grows once both have room. */
	vcap = bcap = l->cap;
	if (GROW(l->v, vcap, l->n, 16) < 0 || GROW(l->by_key, bcap, l->n, 16) < 0)
		return -ENOMEM;
	l->cap = vcap;
	ln = &l->v[l->n];
	memcpy(ln->key, key, SHA256_LEN);
	ln->ndirs = 0;
	ln->dirs = (struct strbuf)STRBUF_INIT;
	if (!(ln->text = sb_detach(text, NULL)))
		return -ENOMEM;
	memmove(l->by_key + lo + 1, l->by_key + lo, (l->n - lo) * sizeof(*l->by_key));
	l->by_key[lo] = l->n++;
found:
	ln = &l->v[l->by_key[lo]];
	sb_reset(text);
	if (ln->ndirs++ >= DIRS_SHOWN)
		return 0;
	if (ln->ndirs > 1 && (err = sb_addc(&ln->dirs, ' ')) < 0)
		return err;
	return verify_add_dir(&ln->dirs, d);
}

/* Each line as "  TEXT [DIRS]": "all N directories" when it holds in
 * each of the total directories looked at. */
int verify_lines_print(struct strbuf *sb, const struct lines *l, size_t total)
{
	size_t k;
	int err = 0;

	for (k = 0; k < l->n && !err; k++) {
		const struct line *ln = &l->v[k];

		if ((err = sb_addf(sb, "  %s [", ln->text)) < 0)
			break;
		if (ln->ndirs == total && total > 1)
			err = sb_addf(sb, "all %zu directories", total);
		else if ((err = sb_add(sb, ln->dirs.buf, ln->dirs.len)) == 0 &&
			 ln->ndirs > DIRS_SHOWN)
			err = sb_addf(sb, " and %zu more", ln->ndirs - DIRS_SHOWN);
		if (!err)
			err = sb_adds(sb, "]\n");
	}
	return err;
}

void verify_lines_release(struct lines *l)
{
	size_t k;

	for (k = 0; k < l->n; k++) {
		free(l->v[k].text);
		sb_release(&l->v[k].dirs);
	}
	free(l->v);
	free(l->by_key);
	*l = (struct lines){ 0 };
}

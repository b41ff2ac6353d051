/* The comparison: which directories count, which nodes are equal, the
 * reference group, and the verdict. */
#include "verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "text.h"

/* Equal for verify: the same specs, the same selected directories with
 * the same node digests. */
static bool summaries_equal(const struct verify *vf, const struct node_summary *a,
			    const struct node_summary *b)
{
	const struct node_dir_sum *x, *y;
	size_t i = 0, j = 0;

	if (!verify_specs_equal(a, b))
		return false;
	for (;; i++, j++) {
		x = verify_next_dir(vf, a, &i);
		y = verify_next_dir(vf, b, &j);
		if (!x || !y)
			return !x && !y;
		if (verify_dir_cmp(x, y) || memcmp(x->digest, y->digest, SHA256_LEN))
			return false;
	}
}

/* The names of group's nodes (every node: group -1), the first max of
 * them (0: all) and how many more. */
int verify_add_names(struct strbuf *sb, const struct verify *vf, int group, size_t max)
{
	size_t k, shown = 0, more = 0;
	int err = 0;

	for (k = 0; k < vf->n && !err; k++) {
		if (group >= 0 && vf->v[k].group != group)
			continue;
		if (max && shown == max) {
			more++;
			continue;
		}
		if (!shown || (err = sb_addc(sb, ' ')) == 0)
			err = verify_add_esc(sb, vf->v[k].name);
		shown++;
	}
	if (!err && more)
		err = sb_addf(sb, " and %zu more", more);
	return err;
}

/* The verdict line, when it is not a pass: how many differ (or that they
 * are equal), and how many carry errors. */
static int add_verdict(struct verify *vf, const size_t *size, int ref, size_t ndirs,
		       size_t nerr)
{
	struct strbuf *sb = &vf->out;
	size_t k, odd = vf->n - size[ref];
	int err;

	if ((err = sb_adds(sb, "verify: run ")) < 0 || (err = verify_add_esc(sb, vf->so.run)) < 0 ||
	    (err = sb_addf(sb, ": %zu node%s registered, ", vf->n, vf->n == 1 ? "" : "s")) < 0)
		return err;
	if (odd)
		err = sb_addf(sb, "%zu differ%s from the %zu that agree (", odd,
			      odd == 1 ? "s" : "", size[ref]);
	else
		err = sb_addf(sb, "equal (%zu director%s compared)", ndirs, ndirs == 1 ? "y" : "ies");
	if (err < 0 || (odd && ((err = verify_add_names(sb, vf, ref, AGREE_SHOWN)) < 0 ||
				(err = sb_addc(sb, ')')) < 0)))
		return err;
	if (nerr) {
		if ((err = sb_addf(sb, "; %zu with errors (", nerr)) < 0)
			return err;
		for (k = 0, nerr = 0; k < vf->n && !err; k++) {
			if (!verify_has_errors(vf, &vf->v[k]))
				continue;
			if (!nerr++ || (err = sb_addc(sb, ' ')) == 0)
				err = verify_add_esc(sb, vf->v[k].name);
		}
		if (err < 0 || (err = sb_addc(sb, ')')) < 0)
			return err;
	}
	return sb_addc(sb, '\n');
}

/* One line per node whose record says it stopped applying the run's
 * changes: it may agree now and miss the next one. Returns how many, or
 * -ENOMEM. */
static int add_behind(struct verify *vf)
{
	int n = 0, err = 0;

	for (size_t k = 0; k < vf->n && err >= 0; k++) {
		const struct node_summary *s = vf->v[k].s;

		if (!s || !s->behind)
			continue;
		n++;
		if ((err = sb_adds(&vf->out, "verify: node ")) < 0 ||
		    (err = text_quote(&vf->out, vf->v[k].name, strlen(vf->v[k].name), SHOW_MAX)) < 0 ||
		    (err = sb_adds(&vf->out, " is behind: it stopped applying the run's changes (")) < 0 ||
		    (err = text_quote(&vf->out, s->behind, strlen(s->behind), SHOW_MAX)) < 0)
			break;
		err = sb_adds(&vf->out, ")\n");
	}
	return err < 0 ? err : n;
}

int verify_compare(struct verify *vf)
{
	size_t k, j, best = 0, ndirs = 0, nerr = 0;
	size_t *size = calloc(vf->n ? vf->n : 1, sizeof(*size));
	int ngroups = 0, ref, err = 0, rc, nbehind = 0;

	if (!size)
		return -ENOMEM;
	for (k = 0; k < vf->n; k++) {
		struct vnode *a = &vf->v[k];

		a->group = -1;
		for (j = 0; a->s && j < k; j++)
			if (vf->v[j].s && summaries_equal(vf, a->s, vf->v[j].s)) {
				a->group = vf->v[j].group;
				break;
			}
		if (a->group < 0)
			a->group = ngroups++;
		/* An unreadable record is a group of its own, never the
		 * reference while a readable one exists. */
		if (a->s)
			size[a->group]++;
		nerr += verify_has_errors(vf, a);
	}
	for (k = 1; k < (size_t)ngroups; k++)
		if (size[k] > size[best])
			best = k;
	ref = (int)best;
	for (k = 0; k < vf->n && !vf->v[k].s; k++)
		;
	if (k == vf->n) {
		if ((err = sb_adds(&vf->out, "verify: run ")) < 0 ||
		    (err = verify_add_esc(&vf->out, vf->so.run)) < 0 ||
		    (err = sb_adds(&vf->out, ": no node's record can be read\n")) < 0)
			goto out;
		for (k = 0; k < vf->n && err >= 0; k++)
			if ((err = verify_add_esc(&vf->out, vf->v[k].name)) == 0 &&
			    (err = sb_adds(&vf->out, vf->v[k].unpublishable ?
					   ": its record cannot be published: " : ": ")) == 0 &&
			    (err = verify_add_esc(&vf->out, vf->v[k].why)) == 0)
				err = sb_addc(&vf->out, '\n');
		rc = VERIFY_EX_DIFFER;
		goto out;
	}
	for (j = 0; j < vf->v[k].s->ndirs; j++)
		ndirs += verify_dir_selected(vf, &vf->v[k].s->dirs[j]);
	/* A gate that compares nothing must not pass: a misspelt -b. */
	if (!ndirs) {
		struct strbuf name = STRBUF_INIT;

		err = verify_add_esc(&name, vf->v[k].name);
		fprintf(stderr, "primus-envfs: verify: %s serves no directory %s/%s (see "
			"primus-envfs list)\n", err < 0 ? "?" : name.buf,
			vf->backend ? vf->backend : "*", vf->arch ? vf->arch : "*");
		sb_release(&name);
		rc = CLI_EX_USAGE;
		goto out;
	}
	if ((nbehind = add_behind(vf)) < 0) {
		err = nbehind;
		goto out;
	}
	if (ngroups == 1 && !nerr && nbehind) {
		rc = VERIFY_EX_DIFFER;
		goto out;
	}
	if (ngroups == 1 && !nerr) {
		if ((err = sb_adds(&vf->out, "verify: run ")) < 0 ||
		    (err = verify_add_esc(&vf->out, vf->so.run)) < 0)
			goto out;
		err = sb_addf(&vf->out, ": %zu node%s registered and equal (%zu director%s "
			      "compared)\n", vf->n, vf->n == 1 ? "" : "s", ndirs,
			      ndirs == 1 ? "y" : "ies");
		rc = 0;
		goto out;
	}
	for (k = 0; k < vf->n && vf->v[k].group != ref; k++)
		;
	if ((err = add_verdict(vf, size, ref, ndirs, nerr)) < 0)
		goto out;
	for (j = 0; j < vf->n && err >= 0; j++) {
		if (verify_has_errors(vf, &vf->v[j]) &&
		    (err = verify_explain_errors(vf, &vf->v[j])) < 0)
			break;
		if (vf->v[j].group != ref)
			err = verify_explain_odd(vf, &vf->v[j], &vf->v[k]);
	}
	rc = VERIFY_EX_DIFFER;
out:
	free(size);
	return err < 0 ? err : rc;
}

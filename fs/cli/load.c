/* Loading and reporting shared by resolve, check and exec. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"

int load_world(const struct cli_inputs *ci, bool print_errors, struct world **out)
{
	int err = world_load(&ci->in, out);

	if (err < 0 && print_errors && *out)
		print_diags(&(*out)->diags, DIAG_ERROR, NULL);
	if (err < 0 && !*out)
		fprintf(stderr, "primus-envfs: %s\n", strerror(-err));
	return err;
}

struct line_ref {
	char *text;
	size_t index;
};

static int line_ref_cmp(const void *a, const void *b)
{
	const struct line_ref *x = a, *y = b;
	int c = strcmp(x->text, y->text);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

void print_diags(const struct diag_list *l, enum diag_sev min, size_t counts[3])
{
	struct strbuf sb = STRBUF_INIT;
	struct line_ref *lines = calloc(l->n ? l->n : 1, sizeof(*lines));
	bool *dup = calloc(l->n ? l->n : 1, sizeof(*dup));
	size_t k, n = 0;

	if (!lines || !dup)
		goto out;
	for (k = 0; k < l->n; k++) {
		if (l->v[k].sev < min)
			continue;
		sb_reset(&sb);
		if (diag_format(&l->v[k], &sb) < 0 || !(lines[n].text = xstrdup(sb_str(&sb))))
			goto out;
		lines[n].index = k;
		n++;
	}
	/* Sorting finds repeats in n log n (a load-time problem repeats in
	 * every directory); printing stays in first-seen order. */
	qsort(lines, n, sizeof(*lines), line_ref_cmp);
	for (k = 1; k < n; k++)
		if (!strcmp(lines[k].text, lines[k - 1].text))
			dup[lines[k].index] = true;
	for (k = 0; k < l->n; k++) {
		if (l->v[k].sev < min || dup[k])
			continue;
		sb_reset(&sb);
		if (diag_format(&l->v[k], &sb) < 0)
			goto out;
		if (counts)
			counts[l->v[k].sev]++;
		fprintf(stderr, "%s\n", sb_str(&sb));
	}
out:
	for (k = 0; lines && k < n; k++)
		free(lines[k].text);
	free(lines);
	free(dup);
	sb_release(&sb);
}

/* Which directories of a node's record verify counts, their order, and
 * whether two records were built from the same specs: what the
 * comparison (verify_compare.c) and the explanations of a difference
 * (verify_diff.c) both walk by. */
#include "verify.h"

#include <string.h>

bool verify_dir_selected(const struct verify *vf, const struct node_dir_sum *d)
{
	return (!vf->backend || !strcmp(vf->backend, d->backend)) &&
	       (!vf->arch || !strcmp(vf->arch, d->arch));
}

int verify_dir_cmp(const struct node_dir_sum *a, const struct node_dir_sum *b)
{
	int c = strcmp(a->backend, b->backend);

	return c ? c : strcmp(a->arch, b->arch);
}

/* The next selected directory of s from *k on, or NULL. */
const struct node_dir_sum *verify_next_dir(const struct verify *vf, const struct node_summary *s,
					   size_t *k)
{
	while (*k < s->ndirs && !verify_dir_selected(vf, &s->dirs[*k]))
		(*k)++;
	return *k < s->ndirs ? &s->dirs[*k] : NULL;
}

bool verify_specs_equal(const struct node_summary *a, const struct node_summary *b)
{
	return a->has_specs_digest == b->has_specs_digest &&
	       (!a->has_specs_digest || !memcmp(a->specs_digest, b->specs_digest, SHA256_LEN));
}

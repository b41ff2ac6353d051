/* Reference counting of loaded specs; see spec_share.h. */
#include "spec_share.h"

#include <errno.h>
#include <stdlib.h>

int spec_share_new(struct spec_set *set, const struct diag_list *diags,
		   struct spec_share **out)
{
	struct spec_share *sh = calloc(1, sizeof(*sh));

	if (!sh || (diags && diag_extend(&sh->diags, diags) < 0)) {
		if (sh)
			diag_list_release(&sh->diags);
		free(sh);
		spec_set_free(set);
		return -ENOMEM;
	}
	atomic_init(&sh->refs, 1);
	sh->set = set;
	*out = sh;
	return 0;
}

struct spec_share *spec_share_ref(struct spec_share *sh)
{
	if (sh)
		atomic_fetch_add_explicit(&sh->refs, 1, memory_order_relaxed);
	return sh;
}

void spec_share_unref(struct spec_share *sh)
{
	/* acq_rel: the last holder must see every other holder's reads done. */
	if (!sh || atomic_fetch_sub_explicit(&sh->refs, 1, memory_order_acq_rel) != 1)
		return;
	spec_set_free(sh->set);
	diag_list_release(&sh->diags);
	free(sh);
}

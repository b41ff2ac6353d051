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

void print_diags(const struct diag_list *l, enum diag_sev min, size_t counts[3])
{
	struct strbuf sb = STRBUF_INIT;
	char **seen = calloc(l->n ? l->n : 1, sizeof(char *));
	size_t k, n = 0;

	for (k = 0; k < l->n; k++) {
		char *line;

		if (l->v[k].sev < min)
			continue;
		sb_reset(&sb);
		if (diag_format(&l->v[k], &sb) < 0)
			break;
		line = xstrdup(sb_str(&sb));
		if (!line || !seen)
			break;
		/* Linear dedup keeps first-seen order; diagnostic lists are short. */
		{
			size_t j;
			bool dup = false;

			for (j = 0; j < n && !dup; j++)
				dup = !strcmp(seen[j], line);
			if (dup) {
				free(line);
				continue;
			}
		}
		seen[n++] = line;
		if (counts)
			counts[l->v[k].sev]++;
		fprintf(stderr, "%s\n", line);
	}
	for (k = 0; k < n; k++)
		free(seen[k]);
	free(seen);
	sb_release(&sb);
}

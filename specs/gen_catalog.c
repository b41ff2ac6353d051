/* gen_catalog: compiles the shipped catalog.yaml into C at build time.
 *
 *   gen_catalog specs/catalog.yaml shipped_catalog.c envfs_shipped_catalog
 *
 * The output defines `const struct catalog_prebuilt SYMBOL`
 * (resolver/catalog_prebuilt.h). A catalog with any diagnostic fails the
 * build: the shipped specs are clean, and a table has nowhere to replay a
 * warning. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_prebuilt.h"
#include "strbuf.h"
#include "yaml_tree.h"

static void print_diags(const struct diag_list *d)
{
	struct strbuf sb = STRBUF_INIT;
	size_t k;

	for (k = 0; k < d->n; k++) {
		sb_reset(&sb);
		if (diag_format(&d->v[k], &sb) == 0)
			fprintf(stderr, "%s\n", sb_str(&sb));
	}
	sb_release(&sb);
}

int main(int argc, char **argv)
{
	struct diag_list d = DIAG_LIST_INIT;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = NULL;
	int err, rc = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: gen_catalog CATALOG.yaml OUTPUT.c SYMBOL\n");
		return 2;
	}
	if ((err = yfile_read(argv[1], &buf, &len)) < 0) {
		fprintf(stderr, "gen_catalog: %s: %s\n", argv[1], strerror(-err));
		goto out;
	}
	if (!(out = fopen(argv[2], "w"))) {
		fprintf(stderr, "gen_catalog: %s: %s\n", argv[2], strerror(errno));
		goto out;
	}
	err = catalog_prebuilt_emit(buf, len, argv[1], argv[3], out, &d);
	if (fclose(out) != 0 && err == 0)
		err = -errno;
	out = NULL;
	if (err < 0) {
		print_diags(&d);
		fprintf(stderr, "gen_catalog: %s: %s\n", argv[1],
			err == -EINVAL ? "the catalog has diagnostics; fix them first" :
			strerror(-err));
		remove(argv[2]);
		goto out;
	}
	rc = 0;
out:
	diag_list_release(&d);
	free(buf);
	return rc;
}

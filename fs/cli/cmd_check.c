/* primus-envfs check: every diagnostic of the selected directories.
 * Exit 0 clean, 1 warnings, 2 errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "load.h"

int parse_dir_args(int argc, char **argv, struct cli_inputs *ci, const char **backend,
		   const char **arch, const char **format, int *cmd_index);

static bool framework_named(const struct world *w, const char *backend)
{
	size_t k;

	if (!w->config || !w->config->nframeworks)
		return true;
	for (k = 0; k < w->config->nframeworks; k++)
		if (!strcmp(w->config->frameworks[k], backend))
			return true;
	return false;
}

static bool any_framework_known(const struct world *w)
{
	size_t k;

	if (!w->config)
		return false;
	for (k = 0; k < w->config->nframeworks; k++)
		if (spec_set_backend(w->specs, w->config->frameworks[k]))
			return true;
	return false;
}

static int check_dir(const struct world *w, const char *backend, const char *arch,
		     struct diag_list *all)
{
	struct snapshot *s = NULL;
	int err = resolve_dir(w, NULL, backend, arch, &s);

	if (err < 0) {
		fprintf(stderr, "primus-envfs: resolving %s/%s failed: %s\n", backend, arch,
			strerror(-err));
		return err;
	}
	err = diag_extend(all, &s->diags);
	snapshot_unref(s);
	return err;
}

int cmd_check(int argc, char **argv)
{
	struct cli_inputs ci = { 0 };
	const char *backend = NULL, *arch = NULL;
	struct diag_list all = DIAG_LIST_INIT;
	struct world *w = NULL;
	size_t k, j, dirs = 0;
	size_t counts[3] = { 0 };
	int rc = 2, err = 0;

	if (parse_dir_args(argc, argv, &ci, &backend, &arch, NULL, NULL) < 0)
		goto out;
	if (inputs_finish(&ci) < 0)
		goto out;
	err = load_world(&ci, false, &w);
	if (!w)
		goto out;
	if (diag_extend(&all, &w->diags) < 0)
		goto out;
	if (err < 0 || !w->specs)
		goto report;
	if (backend && !spec_set_backend(w->specs, backend)) {
		fprintf(stderr, "primus-envfs: unknown backend '%s'\n", backend);
		goto out;
	}
	for (k = 0; k < w->specs->nbackends; k++) {
		const struct spec *s = w->specs->backends[k];
		const char **arches = NULL;
		size_t na = 0;

		if (backend ? strcmp(backend, s->backend) != 0 :
		    (any_framework_known(w) && !framework_named(w, s->backend)))
			continue;
		if (world_arches(w, s, &arches, &na) < 0)
			goto out;
		for (j = 0; j < na; j++) {
			if (arch && strcmp(arch, arches[j]))
				continue;
			dirs++;
			if (check_dir(w, s->backend, arches[j], &all) < 0) {
				free(arches);
				goto out;
			}
		}
		free(arches);
	}
	if (arch && !dirs) {
		fprintf(stderr, "primus-envfs: no directory %s/%s\n", backend ? backend : "*", arch);
		goto out;
	}
report:
	print_diags(&all, DIAG_INFO, counts);
	rc = counts[DIAG_ERROR] ? 2 : counts[DIAG_WARNING] ? 1 : 0;
	if (err < 0)
		rc = 2;
	fprintf(stderr, "%zu error(s), %zu warning(s), %zu info\n", counts[DIAG_ERROR],
		counts[DIAG_WARNING], counts[DIAG_INFO]);
out:
	diag_list_release(&all);
	world_free(w);
	inputs_release(&ci);
	return rc;
}

/* primus-envfs check: every diagnostic of the selected directories.
 * Exit 0 clean, 1 warnings, 2 errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "load.h"
#include "report.h"

static const char *const formats[] = { "text", "json", NULL };

static const struct cli_cmd cmd = {
	.name = "check",
	.flags = CLI_DIR | CLI_FORMAT | CLI_QUIET,
	.synopsis = "[INPUTS] [-b BACKEND] [-a ARCH] [--format text|json] [-q]",
	.help =
	"Print every diagnostic of the inputs and of the selected directories.\n"
	"Without -b: the backends the config's modules name in framework: (all\n"
	"when none is named); without -a: every arch of those.\n"
	"\n"
	"  -b, --backend BACKEND   check this backend only\n"
	"  -a, --arch ARCH         check this arch only; host: this node's\n"
	"      --format text|json  text (default): one line per diagnostic and a\n"
	"                          summary on stderr; json: an array of objects\n"
	"                          (severity, file, line, column, directory,\n"
	"                          message) on stdout\n"
	"  -q, --quiet             print nothing: the exit status tells\n"
	"  -h, --help              print this help\n"
	"\n"
	"Exit status: 0 clean (info only); 1 warnings; 2 errors, or an input did\n"
	"not load; 64 the command line is wrong.\n",
	.formats = formats,
	.format_default = "text",
};

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
		     struct report *r)
{
	struct snapshot *s = NULL;
	int err = resolve_dir(w, NULL, backend, arch, &s);

	if (err < 0) {
		fprintf(stderr, "primus-envfs: resolving %s/%s failed: %s\n", backend, arch,
			strerror(-err));
		return err;
	}
	/* The snapshot's diagnostics start with the world's: added once. */
	err = report_add(r, &s->diags, w->diags.n, backend, arch);
	snapshot_unref(s);
	return err;
}

/* The arch of backend s that -a names: every one without -a. Returns the
 * number of directories checked, or a negative errno. */
static int check_backend(const struct cli_args *a, const struct world *w,
			 const struct spec *s, struct report *r)
{
	const char **arches = NULL, *why;
	size_t na = 0, j;
	int n = 0, err;

	if (a->arch && !strcmp(a->arch, "host")) {
		const char *h = world_host_arch(w, s->backend, &why);

		if (!h) {
			if (!a->quiet)
				fprintf(stderr, "primus-envfs: note: -a host: no arch of %s for "
					"this node (%s); not checked\n", s->backend, why);
			return 0;
		}
		return check_dir(w, s->backend, h, r) < 0 ? -1 : 1;
	}
	if ((err = world_arches(w, s, &arches, &na)) < 0)
		return err;
	for (j = 0; j < na; j++) {
		if (a->arch && strcmp(a->arch, arches[j]))
			continue;
		if ((err = check_dir(w, s->backend, arches[j], r)) < 0)
			break;
		n++;
	}
	free(arches);
	return err < 0 ? err : n;
}

static void print_report(const struct cli_args *a, const struct report *r,
			 size_t counts[REPORT_NCOUNTS])
{
	struct strbuf sb = STRBUF_INIT;
	bool json = !strcmp(a->format, "json");
	int err;

	err = json ? report_json(r, DIAG_INFO, &sb, counts) : report_text(r, DIAG_INFO, false, &sb, counts);
	if (err < 0) {
		fprintf(stderr, "primus-envfs: %s\n", strerror(-err));
	} else if (!a->quiet) {
		fputs(sb_str(&sb), json ? stdout : stderr);
		if (!json && counts[REPORT_SILENCED])
			fprintf(stderr, "%zu error(s), %zu warning(s), %zu info, %zu silenced\n",
				counts[DIAG_ERROR], counts[DIAG_WARNING], counts[DIAG_INFO],
				counts[REPORT_SILENCED]);
		else if (!json)
			fprintf(stderr, "%zu error(s), %zu warning(s), %zu info\n",
				counts[DIAG_ERROR], counts[DIAG_WARNING], counts[DIAG_INFO]);
	}
	sb_release(&sb);
}

int cmd_check(int argc, char **argv)
{
	struct cli_args a;
	struct report r = REPORT_INIT;
	struct diag_list unread = DIAG_LIST_INIT;
	struct world *w = NULL;
	size_t k, counts[REPORT_NCOUNTS] = { 0 };
	int rc = CLI_EX_USAGE, err = 0, n, dirs = 0;

	if (cli_parse(&cmd, argc, argv, &a) < 0)
		goto out;
	rc = 0;
	if (a.help)
		goto out;
	rc = 2;
	/* JSON asked: an input that cannot be read is an entry of the
	 * array, which a reader of stdout always gets. */
	if (!strcmp(a.format, "json"))
		a.ci.sink = &unread;
	if (inputs_finish(&a.ci) < 0) {
		if (a.ci.sink && unread.n && report_add(&r, &unread, 0, NULL, NULL) == 0)
			print_report(&a, &r, counts);
		goto out;
	}
	err = load_world(&a.ci, false, &w);
	if (!w || report_add(&r, &w->diags, 0, NULL, NULL) < 0)
		goto out;
	if (!w->specs)
		goto report;
	if (a.backend && (rc = select_backend(w, a.backend)) != 0)
		goto out;
	if (a.backend && a.arch) {
		const char *dummy;

		if ((rc = select_arch(w, a.backend, a.arch, &dummy)) != 0)
			goto out;
	}
	rc = 2;
	for (k = 0; k < w->specs->nbackends; k++) {
		const struct spec *s = w->specs->backends[k];

		if (a.backend ? strcmp(a.backend, s->backend) != 0 :
		    (any_framework_known(w) && !framework_named(w, s->backend)))
			continue;
		if ((n = check_backend(&a, w, s, &r)) < 0)
			goto out;
		dirs += n;
	}
	if (a.arch && !dirs) {
		if (!strcmp(a.arch, "host")) {
			fprintf(stderr, "primus-envfs: -a host: no backend has an arch for this "
				"node\n");
			goto out;
		}
		rc = cli_usage_error(&cmd, "no backend has the arch '%s' (primus-envfs list "
				     "shows them; --extra-arch %s adds it)", a.arch, a.arch);
		goto out;
	}
report:
	print_report(&a, &r, counts);
	rc = counts[DIAG_ERROR] ? 2 : counts[DIAG_WARNING] ? 1 : 0;
	if (err < 0) {
		/* Every error silenced: say why it is 2 all the same. */
		if (!counts[DIAG_ERROR] && !a.quiet && w)
			say_unloaded(&w->diags);
		rc = 2;
	}
out:
	report_release(&r);
	diag_list_release(&unread);
	world_free(w);
	inputs_release(&a.ci);
	return rc;
}

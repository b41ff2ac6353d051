/* Loading, choosing a directory and refusing a wrong environment, for
 * resolve, check, exec and list; see load.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "report.h"
#include "strbuf.h"
#include "text.h"

int load_world(const struct cli_inputs *ci, bool print_errors, struct world **out)
{
	return load_world_sharing(ci, NULL, print_errors, out);
}

int load_world_sharing(const struct cli_inputs *ci, const struct world *donor,
		       bool print_errors, struct world **out)
{
	int err = world_load_sharing(&ci->in, donor, out);

	if (err < 0 && print_errors && *out)
		print_diags(&(*out)->diags, DIAG_ERROR, NULL);
	if (err < 0 && !*out)
		fprintf(stderr, "primus-envfs: %s\n", strerror(-err));
	return err;
}

void print_diags(const struct diag_list *l, enum diag_sev min, size_t counts[REPORT_NCOUNTS])
{
	struct report r = REPORT_INIT;
	struct strbuf sb = STRBUF_INIT;

	if (report_add(&r, l, 0, NULL, NULL) < 0 || report_text(&r, min, false, &sb, counts) < 0)
		fprintf(stderr, "primus-envfs: %s\n", strerror(ENOMEM));
	else
		fputs(sb_str(&sb), stderr);
	sb_release(&sb);
	report_release(&r);
}

size_t say_unloaded(const struct diag_list *l)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i, n = 0;

	for (i = 0; i < l->n; i++) {
		const struct diag *d = &l->v[i];
		const struct diag_code_info *ci = diag_code_info(d->code);

		if (d->sev != DIAG_ERROR || !d->silenced)
			continue;
		sb_reset(&sb);
		if (d->file && text_escape_max(&sb, d->file, strlen(d->file), 256) < 0)
			sb_reset(&sb);
		fprintf(stderr, "primus-envfs: %s: the input did not load (%s is silenced, but "
			"an input that does not load is not used, which no silence makes right)\n",
			sb.len ? sb_str(&sb) : "an input", ci ? ci->code : "its error");
		n++;
	}
	sb_release(&sb);
	return n;
}

/* A backend or arch as the user gave it, escaped (text_escape) and cut:
 * it may come from a record or an argument holding a newline or a
 * terminal escape. In sb (caller's, sb_release()). */
static const char *shown(struct strbuf *sb, const char *s)
{
	sb_reset(sb);
	return text_escape_max(sb, s, strlen(s), 128) < 0 ? "?" : sb_str(sb);
}

int select_backend(const struct world *w, const char *backend)
{
	struct strbuf sb = STRBUF_INIT;
	size_t k;

	if (spec_set_backend(w->specs, backend))
		return 0;
	fprintf(stderr, "primus-envfs: unknown backend '%s'; backends:", shown(&sb, backend));
	sb_release(&sb);
	for (k = 0; k < w->specs->nbackends; k++)
		fprintf(stderr, " %s", w->specs->backends[k]->backend);
	fputc('\n', stderr);
	return CLI_EX_USAGE;
}

int select_arch(const struct world *w, const char *backend, const char *arch,
		const char **out)
{
	const struct spec *s = spec_set_backend(w->specs, backend);
	const char **arches = NULL, *why;
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0, k;

	if (!strcmp(arch, "host")) {
		if ((*out = world_host_arch(w, backend, &why)))
			return 0;
		fprintf(stderr, "primus-envfs: -a host: no arch of %s for this node: %s\n",
			backend, why);
		return 2;
	}
	if (world_has_dir(w, backend, arch)) {
		*out = arch;
		return 0;
	}
	/* backend is known (select_backend came first); arch is the user's. */
	fprintf(stderr, "primus-envfs: backend '%s' has no arch '%s'; arches:", backend,
		shown(&sb, arch));
	if (s && world_arches(w, s, &arches, &n) == 0)
		for (k = 0; k < n; k++)
			fprintf(stderr, " %s", arches[k]);
	fprintf(stderr, " (--extra-arch %s adds it)\n", sb_str(&sb));
	sb_release(&sb);
	free(arches);
	return CLI_EX_USAGE;
}

int resolve_one(struct cli_args *a, struct snapshot **out)
{
	return resolve_one_sharing(a, NULL, NULL, out);
}

int load_one(struct cli_args *a, const struct world *donor, struct world **w,
	     const char **arch, int *loaded)
{
	int rc = 2;

	*w = NULL;
	/* One directory needs one backend's spec: the other backends' files
	 * are not even read (`check` reads them all). */
	a->ci.in.only_backend = a->backend;
	/* Only explain shows a note: the catalog's docs are read for it alone. */
	a->ci.in.values_only = !a->report_only;
	if ((*loaded = load_world_sharing(&a->ci, donor, false, w)) < 0 && (!*w || !(*w)->specs)) {
		if (*w) {
			size_t said[REPORT_NCOUNTS] = { 0 };

			print_diags(&(*w)->diags, DIAG_ERROR, said);
			/* Every error silenced: still one line of why. */
			if (!said[DIAG_ERROR])
				say_unloaded(&(*w)->diags);
		}
		goto out;
	}
	if ((rc = select_backend(*w, a->backend)) != 0 ||
	    (rc = select_arch(*w, a->backend, a->arch, arch)) != 0) {
		/* A record's directory, not one the user typed: the record is
		 * the input these specs cannot read. */
		if (rc == CLI_EX_USAGE && a->dir_from) {
			struct strbuf sb = STRBUF_INIT;

			fprintf(stderr, "primus-envfs: %s named it (give -b and -a to compare "
				"with another directory)\n", shown(&sb, a->dir_from));
			sb_release(&sb);
			rc = 2;
		}
		goto out;
	}
	return 0;
out:
	world_free(*w);
	*w = NULL;
	return rc;
}

void print_resolve_failure(const struct world *w, const char *backend, const char *arch,
			   int err)
{
	print_diags(&w->diags, DIAG_ERROR, NULL);
	fprintf(stderr, "primus-envfs: resolving %s/%s failed: %s\n", backend, arch,
		strerror(-err));
}

int resolve_one_sharing(struct cli_args *a, const struct world *donor, struct world **keep,
			struct snapshot **out)
{
	struct world *w = NULL;
	const char *arch;
	size_t nerr;
	int loaded, err, rc;

	*out = NULL;
	if ((rc = load_one(a, donor, &w, &arch, &loaded)) != 0)
		return rc;
	rc = 2;
	if ((err = resolve_dir(w, NULL, a->backend, arch, out)) < 0) {
		print_resolve_failure(w, a->backend, arch, err);
		goto out;
	}
	/* An environment an error says is wrong is not handed out.
	 * explain hands out none: it is where the errors are explained. An
	 * input that did not load is its own one-line reason. */
	/* An input that did not load with its error silenced is still one
	 * that did not load: the environment is made without it. */
	if (loaded < 0 && !a->report_only && !a->force &&
	    !diag_count(&(*out)->diags, DIAG_ERROR) && say_unloaded(&w->diags)) {
		snapshot_unref(*out);
		*out = NULL;
		goto out;
	}
	if ((nerr = diag_count(&(*out)->diags, DIAG_ERROR)) && !a->report_only) {
		print_diags(&(*out)->diags, DIAG_ERROR, NULL);
		if (loaded == 0)
			fprintf(stderr, "primus-envfs: %s: %s/%s has %zu error(s)%s\n",
				a->cmd->name, a->backend, arch, nerr,
				a->force ? "; going on (--force)" :
				"; nothing done (--force goes on anyway)");
		if (!a->force) {
			snapshot_unref(*out);
			*out = NULL;
			goto out;
		}
	}
	rc = 0;
out:
	if (keep && rc == 0)
		*keep = w;
	else
		world_free(w);
	return rc;
}

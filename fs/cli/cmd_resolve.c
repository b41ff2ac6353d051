/* primus-envfs resolve: print one view of one <backend>/<arch> without a mount.
 * The bytes are those of the mount's file of the same name (same function). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "load.h"
#include "view.h"

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Parses -b, -a and --format around the INPUTS; shared with exec. */
int parse_dir_args(int argc, char **argv, struct cli_inputs *ci, const char **backend,
		   const char **arch, const char **format, int *cmd_index)
{
	int i = 1, r;

	while (i < argc) {
		const char *a = argv[i];

		if ((r = inputs_parse_option(ci, &i, argc, argv)) < 0)
			return -1;
		if (r > 0)
			continue;
		if (!strcmp(a, "--") && cmd_index) {
			*cmd_index = i + 1;
			return 0;
		}
		if ((!strcmp(a, "-b") || !strcmp(a, "--backend") || !strcmp(a, "-a") ||
		     !strcmp(a, "--arch-dir") || (format && !strcmp(a, "--format")))) {
			if (i + 1 >= argc) {
				fprintf(stderr, "primus-envfs: %s needs an argument\n", a);
				return -1;
			}
			if (a[1] == 'b' || !strcmp(a, "--backend"))
				*backend = argv[i + 1];
			else if (a[1] == 'a' || !strcmp(a, "--arch-dir"))
				*arch = argv[i + 1];
			else
				*format = argv[i + 1];
			i += 2;
			continue;
		}
		if (format && !strncmp(a, "--format=", 9)) {
			*format = a + 9;
			i++;
			continue;
		}
		fprintf(stderr, "primus-envfs: unknown option or argument '%s' (see --help)\n", a);
		return -1;
	}
	return 0;
}

/* Loads and resolves one directory; prints the reason on failure. */
int resolve_one(struct cli_inputs *ci, const char *backend, const char *arch,
		struct snapshot **out)
{
	struct world *w = NULL;
	int err, rc = 2;

	if (!backend || !arch) {
		fprintf(stderr, "primus-envfs: -b BACKEND and -a ARCH are required\n");
		return 2;
	}
	if (inputs_finish(ci) < 0)
		return 2;
	/* One directory needs one backend's spec: the other backends' files
	 * are not even read (`check` reads them all). */
	ci->in.only_backend = backend;
	if ((err = load_world(ci, true, &w)) < 0)
		goto out;
	if (!spec_set_backend(w->specs, backend)) {
		fprintf(stderr, "primus-envfs: unknown backend '%s' (specs in %s)\n", backend,
			ci->in.specs_dir);
		goto out;
	}
	if (!world_has_dir(w, backend, arch)) {
		fprintf(stderr, "primus-envfs: backend '%s' has no arch '%s' (add --arch %s to "
			"show it)\n", backend, arch, arch);
		goto out;
	}
	if ((err = resolve_dir(w, NULL, backend, arch, out)) < 0) {
		fprintf(stderr, "primus-envfs: resolving %s/%s failed: %s\n", backend, arch,
			strerror(-err));
		goto out;
	}
	rc = 0;
out:
	world_free(w);
	return rc;
}

int cmd_resolve(int argc, char **argv)
{
	struct cli_inputs ci = { 0 };
	const char *backend = NULL, *arch = NULL, *format = "env_file";
	struct snapshot *s = NULL;
	struct strbuf out = STRBUF_INIT;
	enum view_kind kind;
	int rc = 2;

	if (parse_dir_args(argc, argv, &ci, &backend, &arch, &format, NULL) < 0)
		goto out;
	if (view_from_name(format, &kind) < 0) {
		fprintf(stderr, "primus-envfs: unknown format '%s' (env_file, environ, sh, json, "
			"explain, digest)\n", format);
		goto out;
	}
	if ((rc = resolve_one(&ci, backend, arch, &s)) != 0)
		goto out;
	rc = 2;
	if (view_render(s, kind, &out) < 0) {
		fprintf(stderr, "primus-envfs: out of memory\n");
		goto out;
	}
	if (write_all(STDOUT_FILENO, out.buf ? out.buf : "", out.len) < 0) {
		perror("primus-envfs: stdout");
		goto out;
	}
	rc = 0;
out:
	sb_release(&out);
	snapshot_unref(s);
	inputs_release(&ci);
	return rc;
}

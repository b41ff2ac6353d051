/* primus-envfs exec: run a command with exactly the resolved environment,
 * as `env -i` would: nothing of the caller's environment leaks in.
 *
 *   primus-envfs exec -b maxtext -a gfx950 -- python train.py */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "load.h"

int parse_dir_args(int argc, char **argv, struct cli_inputs *ci, const char **backend,
		   const char **arch, const char **format, int *cmd_index);
int resolve_one(struct cli_inputs *ci, const char *backend, const char *arch,
		struct snapshot **out);

/* NAME=value strings of the exported variables; caller frees each and the
 * array (NULL-terminated). Values holding a NUL cannot be passed to execve
 * and are refused rather than cut. */
static int build_envp(const struct snapshot *s, char ***out)
{
	char **envp = calloc(s->nvars + 1, sizeof(char *));
	size_t k, n = 0;

	if (!envp)
		return -ENOMEM;
	for (k = 0; k < s->nvars; k++) {
		const struct snap_var *v = &s->vars[k];
		char *e;

		if (!v->set || !v->exported)
			continue;
		if (memchr(v->value, '\0', v->value_len)) {
			fprintf(stderr, "primus-envfs: %s holds a NUL byte and cannot be passed to "
				"a program\n", v->name);
			goto fail;
		}
		if (!(e = malloc(v->name_len + v->value_len + 2)))
			goto fail;
		memcpy(e, v->name, v->name_len);
		e[v->name_len] = '=';
		memcpy(e + v->name_len + 1, v->value, v->value_len);
		e[v->name_len + 1 + v->value_len] = '\0';
		envp[n++] = e;
	}
	*out = envp;
	return 0;
fail:
	while (n--)
		free(envp[n]);
	free(envp);
	return -EINVAL;
}

int cmd_exec(int argc, char **argv)
{
	struct cli_inputs ci = { 0 };
	const char *backend = NULL, *arch = NULL;
	struct snapshot *s = NULL;
	char **envp = NULL;
	int cmd = 0, rc = 2;

	if (parse_dir_args(argc, argv, &ci, &backend, &arch, NULL, &cmd) < 0)
		goto out;
	if (!cmd || cmd >= argc) {
		fprintf(stderr, "primus-envfs: exec needs -- COMMAND [ARG...]\n");
		goto out;
	}
	if ((rc = resolve_one(&ci, backend, arch, &s)) != 0)
		goto out;
	rc = 2;
	if (build_envp(s, &envp) < 0)
		goto out;
	fflush(NULL);
	/* execvpe searches the caller's PATH, as env -i COMMAND users expect
	 * when the resolved environment has none. */
	execvpe(argv[cmd], argv + cmd, envp);
	fprintf(stderr, "primus-envfs: %s: %s\n", argv[cmd], strerror(errno));
	rc = errno == ENOENT ? 127 : 126;
out:
	if (envp) {
		char **e;

		for (e = envp; *e; e++)
			free(*e);
		free(envp);
	}
	snapshot_unref(s);
	inputs_release(&ci);
	return rc;
}

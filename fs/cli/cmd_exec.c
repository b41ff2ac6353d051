/* primus-envfs exec: run a command with the resolved environment. Without
 * --inherit the caller's own environment is the image layer, as env(1)
 * and envconsul start from it (a bare-metal run keeps PATH and HOME);
 * --clean starts from nothing, as `env -i` does.
 *
 *   primus-envfs exec -b maxtext -a gfx950 -- python train.py */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "load.h"

static const struct cli_cmd cmd = {
	.name = "exec",
	.flags = CLI_DIR | CLI_DIR_REQUIRED | CLI_FORCE | CLI_COMMAND | CLI_CLEAN,
	.synopsis = "[INPUTS] -b BACKEND -a ARCH [--clean] [--force] [--] COMMAND [ARG...]",
	.help =
	"Run COMMAND with the resolved environment of BACKEND/ARCH. Without\n"
	"--inherit the caller's own environment is the image layer (as env(1):\n"
	"PATH and HOME stay, and every layer above replaces what it sets); with\n"
	"--inherit FILE the files are the image instead; --clean starts from\n"
	"nothing (as env -i). COMMAND is looked up in the caller's PATH. The\n"
	"options end at COMMAND (or at --).\n"
	"\n"
	CLI_DIR_HELP
	"      --clean             no image but the --inherit files: nothing of the\n"
	"                          caller's environment but what the specs pass through\n"
	"      --force             run even when an error says the environment is wrong\n"
	"  -h, --help              print this help\n"
	"\n"
	"Exit status: COMMAND's; 126 COMMAND cannot be run; 127 it is not found;\n"
	"2 an input did not load, or an error diagnostic (printed on stderr) says\n"
	"the environment is wrong, and nothing was run; 64 the command line is wrong.\n",
};

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
	struct cli_args a;
	struct snapshot *s = NULL;
	char **envp = NULL;
	int rc;

	if (!cli_start(&cmd, argc, argv, &a, &rc))
		goto out;
	if ((rc = resolve_one(&a, &s)) != 0)
		goto out;
	rc = 2;
	if (build_envp(s, &envp) < 0)
		goto out;
	fflush(NULL);
	/* execvpe searches the caller's PATH, as env -i COMMAND users expect
	 * when the resolved environment has none. */
	execvpe(a.command[0], a.command, envp);
	fprintf(stderr, "primus-envfs: %s: %s\n", a.command[0], strerror(errno));
	rc = errno == ENOENT ? 127 : 126;
out:
	if (envp) {
		char **e;

		for (e = envp; *e; e++)
			free(*e);
		free(envp);
	}
	snapshot_unref(s);
	inputs_release(&a.ci);
	return rc;
}

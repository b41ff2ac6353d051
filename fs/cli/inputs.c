/* Parsing of the INPUTS options, shared by mount, resolve, check and exec. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inputs.h"

extern char **environ;

static int push(const char ***v, size_t *n, const char *s)
{
	const char **p = realloc(*v, (*n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	p[(*n)++] = s;
	*v = p;
	return 0;
}

/* Matches "--opt VALUE" and "--opt=VALUE"; sets *val and advances *i. */
static int match(const char *opt, int *i, int argc, char **argv, const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(opt);

	if (strncmp(a, opt, n) != 0)
		return 0;
	if (a[n] == '=') {
		*val = a + n + 1;
		*i += 1;
		return 1;
	}
	if (a[n] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "primus-envfs: %s needs an argument\n", opt);
		return -EINVAL;
	}
	*val = argv[*i + 1];
	*i += 2;
	return 1;
}

int inputs_parse_option(struct cli_inputs *ci, int *i, int argc, char **argv)
{
	const char *v;
	int r;

	if ((r = match("--specs", i, argc, argv, &v)) != 0) {
		if (r > 0)
			ci->in.specs_dir = v;
		return r;
	}
	if ((r = match("--config", i, argc, argv, &v)) != 0) {
		if (r > 0)
			ci->in.config = v;
		return r;
	}
	if ((r = match("--host-root", i, argc, argv, &v)) != 0) {
		if (r > 0)
			ci->in.host_root = v;
		return r;
	}
	if ((r = match("--state", i, argc, argv, &v)) != 0) {
		if (r > 0)
			ci->state = v;
		return r;
	}
	if ((r = match("--inherit", i, argc, argv, &v)) != 0)
		return r < 0 ? r : (push(&ci->inherit, &ci->ninherit, v) ?: 1);
	if ((r = match("--pass", i, argc, argv, &v)) != 0) {
		if (r < 0)
			return r;
		if (!env_name_valid(v, strlen(v))) {
			fprintf(stderr, "primus-envfs: --pass %s: not a variable name\n", v);
			return -EINVAL;
		}
		return push(&ci->pass, &ci->npass, v) ?: 1;
	}
	if ((r = match("--env", i, argc, argv, &v)) != 0) {
		const char *eq;

		if (r < 0)
			return r;
		eq = strchr(v, '=');
		if (!eq || !env_name_valid(v, (size_t)(eq - v))) {
			fprintf(stderr, "primus-envfs: --env %s: expected NAME=VALUE with NAME "
				"matching [A-Za-z_][A-Za-z0-9_]*\n", v);
			return -EINVAL;
		}
		return push(&ci->env, &ci->nenv, v) ?: 1;
	}
	if ((r = match("--arch", i, argc, argv, &v)) != 0) {
		if (r < 0)
			return r;
		if (!*v || strchr(v, '/') || !strcmp(v, ".") || !strcmp(v, "..")) {
			fprintf(stderr, "primus-envfs: --arch %s: not a directory name\n", v);
			return -EINVAL;
		}
		return push(&ci->arches, &ci->narches, v) ?: 1;
	}
	return 0;
}

static int check_file(const char *what, const char *path)
{
	if (access(path, R_OK) == 0)
		return 0;
	fprintf(stderr, "primus-envfs: %s %s: %s\n", what, path, strerror(errno));
	return -errno;
}

int inputs_finish(struct cli_inputs *ci)
{
	size_t k;
	int err = 0;

	if (!ci->in.specs_dir && !(ci->in.specs_dir = specs_default_dir())) {
		fprintf(stderr, "primus-envfs: no shipped specs found; pass --specs DIR\n");
		return -ENOENT;
	}
	if ((err = check_file("--specs", ci->in.specs_dir)) < 0)
		return err;
	if (ci->in.config && (err = check_file("--config", ci->in.config)) < 0)
		return err;
	for (k = 0; k < ci->ninherit; k++)
		if ((err = check_file("--inherit", ci->inherit[k])) < 0)
			return err;
	ci->in.inherit = ci->inherit;
	ci->in.ninherit = ci->ninherit;
	ci->in.pass = ci->pass;
	ci->in.npass = ci->npass;
	ci->in.env = ci->env;
	ci->in.nenv = ci->nenv;
	ci->in.arches = ci->arches;
	ci->in.narches = ci->narches;
	ci->in.host_env = environ;
	return 0;
}

void inputs_release(struct cli_inputs *ci)
{
	free(ci->inherit);
	free(ci->pass);
	free(ci->env);
	free(ci->arches);
	memset(ci, 0, sizeof(*ci));
}

/* The INPUTS options, shared by mount, resolve, check, exec and list. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inherit.h"
#include "inputs.h"
#include "names.h"
#include "text.h"

extern char **environ;

static int push(char ***v, size_t *n, const char *s)
{
	char **p = realloc(*v, (*n + 1) * sizeof(*p));
	char *copy;

	if (!p)
		return -ENOMEM;
	*v = p;
	if (!(copy = xstrdup(s)))
		return -ENOMEM;
	p[(*n)++] = copy;
	return 0;
}

static int set_one(char **slot, const char *s)
{
	char *copy = xstrdup(s);

	if (!copy)
		return -ENOMEM;
	free(*slot);
	*slot = copy;
	return 0;
}

static int bad(const char *opt, const char *arg, const char *why)
{
	fprintf(stderr, "primus-envfs: %s %s: %s\n", opt, arg, why);
	return -EINVAL;
}

static int nomem(void)
{
	fprintf(stderr, "primus-envfs: %s\n", strerror(ENOMEM));
	return -EINVAL;
}

/* --env NAME=VALUE or --env NAME; the value never goes into a message. */
static int take_env(struct cli_inputs *ci, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);

	if (!env_name_valid(arg, n)) {
		fprintf(stderr, "primus-envfs: --env %.*s%s: expected NAME=VALUE or NAME, with "
			"NAME matching [A-Za-z_][A-Za-z0-9_]*\n", (int)(n > 64 ? 64 : n), arg,
			eq ? "=..." : "");
		return -EINVAL;
	}
	return push(&ci->env_args, &ci->nenv_args, arg) < 0 ? nomem() : 0;
}

/* The name is quoted: it may hold terminal escapes. */
static int bad_quoted(const char *opt, const char *arg, const char *why)
{
	struct strbuf q = STRBUF_INIT;

	if (text_quote(&q, arg, strlen(arg), 80) < 0)
		return nomem();
	fprintf(stderr, "primus-envfs: %s %s: %s\n", opt, sb_str(&q), why);
	sb_release(&q);
	return -EINVAL;
}

static int bad_arch(const char *arg, const char *why)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "not an arch directory name: %s", why);
	return bad_quoted("--extra-arch", arg, msg);
}

/* --primus-path DIR as the runner's `cd DIR && pwd` names it: absolute
 * (a relative DIR is under the working directory), with ".", "..",
 * repeated and trailing slashes resolved by name, as bash's cd does. */
static int take_primus_path(struct cli_inputs *ci, const char *arg)
{
	struct strbuf full = STRBUF_INIT, sb = STRBUF_INIT;
	char cwd[4096];
	const char *p;
	int err;

	if (!*arg)
		return bad("--primus-path", arg, "an empty path");
	if (*arg != '/' && !getcwd(cwd, sizeof(cwd)))
		return bad("--primus-path", arg, strerror(errno));
	err = *arg == '/' ? sb_adds(&full, arg) : sb_addf(&full, "%s/%s", cwd, arg);
	for (p = sb_str(&full); *p && !err; ) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (sb.len && sb.buf[--sb.len] != '/')
				;
			if (sb.buf)
				sb.buf[sb.len] = '\0';  /* the buffer stays a string */
		} else if (n && !(n == 1 && p[0] == '.') && !(err = sb_addc(&sb, '/'))) {
			err = sb_add(&sb, p, n);
		}
		p += n;
	}
	if (!err && !sb.len)
		err = sb_addc(&sb, '/');
	if (!err)
		err = set_one(&ci->primus_path, sb_str(&sb));
	sb_release(&full);
	sb_release(&sb);
	return err < 0 ? nomem() : 0;
}

/* --ignore CODE[,CODE] (':' separates too, for a mount's -o list, where
 * ',' ends the option). */
static int take_ignore(struct cli_inputs *ci, const char *arg)
{
	const char *p = arg;
	enum diag_code code;

	for (;;) {
		size_t n = strcspn(p, ",:");

		if (diag_code_parse(p, n, &code) < 0)
			return bad("--ignore", arg, n ? "not a diagnostic code (the man page lists "
				   "them)" : "an empty entry is not a diagnostic code");
		diag_silence_add_code(&ci->silence, code);
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

int inputs_take(struct cli_inputs *ci, int key, const char *arg)
{
	const char *why;
	int err = 0;

	switch (key) {
	case INPUTS_SPECS: err = set_one(&ci->specs, arg); break;
	case INPUTS_CONFIG: err = set_one(&ci->config, arg); break;
	case INPUTS_STATE: err = set_one(&ci->state, arg); break;
	case INPUTS_HOST_ROOT: err = set_one(&ci->host_root, arg); break;
	case INPUTS_INHERIT: err = push(&ci->inherit, &ci->ninherit, arg); break;
	case INPUTS_ENV_FILE: err = push(&ci->env_files, &ci->nenv_files, arg); break;
	case INPUTS_ENV: return take_env(ci, arg);
	case INPUTS_IGNORE: return take_ignore(ci, arg);
	case INPUTS_PRIMUS_PATH: return take_primus_path(ci, arg);
	case INPUTS_INHERIT_ENV: ci->inherit_env = true; return 0;
	case INPUTS_PASS:
		if (!env_name_valid(arg, strlen(arg)))
			return bad("--pass", arg, "not a variable name");
		err = push(&ci->pass, &ci->npass, arg);
		break;
	case INPUTS_SECRET:
		if (!names_glob_ok(arg))
			return bad_quoted("--secret", arg, "not a variable name or a glob of names "
					  "([A-Za-z0-9_] and * ? [ ])");
		err = push(&ci->secrets, &ci->nsecrets, arg);
		break;
	case INPUTS_EXTRA_ARCH:
		if ((why = names_dir_problem(arg, strlen(arg), true)))
			return bad_arch(arg, why);
		err = push(&ci->arches, &ci->narches, arg);
		break;
	default:
		return -EINVAL;
	}
	return err < 0 ? nomem() : 0;
}

static int check_file(struct cli_inputs *ci, const char *what, const char *path)
{
	int e;

	if (access(path, R_OK) == 0)
		return 0;
	e = errno;
	if (!ci->sink)
		fprintf(stderr, "primus-envfs: %s %s: %s\n", what, path, strerror(e));
	else if (diag_add(ci->sink, DC_INPUT_UNREADABLE, path, 0, 0, "%s: %s", what,
			  strerror(e)) < 0)
		return nomem();
	return -e;
}

/* Appends NAME=VALUE (value of value_len bytes) and its source. */
static int add_env(struct cli_inputs *ci, const char *name, size_t name_len,
		   const char *value, size_t value_len, const char *source)
{
	char **v = realloc(ci->env, (ci->nenv + 1) * sizeof(*v));
	char **s;
	struct strbuf sb = STRBUF_INIT;

	if (!v)
		return -ENOMEM;
	ci->env = v;
	if (!(s = realloc(ci->env_sources, (ci->nenv + 1) * sizeof(*s))))
		return -ENOMEM;
	ci->env_sources = s;
	if (sb_add(&sb, name, name_len) < 0 || sb_addc(&sb, '=') < 0 ||
	    sb_add(&sb, value, value_len) < 0)
		goto fail;
	s[ci->nenv] = NULL;
	if (source && !(s[ci->nenv] = xstrdup(source)))
		goto fail;
	v[ci->nenv++] = sb_detach(&sb, NULL);
	if (!v[ci->nenv - 1]) {
		free(s[--ci->nenv]);
		return -ENOMEM;
	}
	return 0;
fail:
	sb_release(&sb);
	return -ENOMEM;
}

/* One --env-file: docker's rules (inherit.h), every entry a cli value
 * whose source is FILE:LINE. Any bad line stops the command, as docker
 * refuses such a file. */
static int load_env_file(struct cli_inputs *ci, const char *path,
			 struct file_digest *digest)
{
	struct env_list l = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf sb = STRBUF_INIT;
	size_t k;
	int err;

	err = inherit_load_file_digest(path, NULL, environ, &l, digest, &d);
	for (k = 0; k < d.n; k++) {
		if (d.v[k].sev != DIAG_ERROR)
			continue;
		sb_reset(&sb);
		if (ci->sink) {
			if (diag_add(ci->sink, d.v[k].code, d.v[k].file, d.v[k].line, d.v[k].col,
				     "%s", d.v[k].msg) < 0)
				err = -ENOMEM;
		} else if (diag_format(&d.v[k], &sb) == 0) {
			fprintf(stderr, "primus-envfs: --env-file: %s\n", sb_str(&sb));
		}
		err = err ? err : -EINVAL;
	}
	for (k = 0; k < l.n && !err; k++)
		err = add_env(ci, l.v[k].name, strlen(l.v[k].name), l.v[k].value,
			      l.v[k].value_len, l.v[k].source);
	if (err == -ENOMEM)
		nomem();
	sb_release(&sb);
	diag_list_release(&d);
	env_list_release(&l);
	return err;
}

/* The cli layer in command-line order: --env-files first, then --env,
 * so a --env given on the command line wins over a file's line. */
static int build_env(struct cli_inputs *ci)
{
	size_t k;
	int err;

	if (ci->nenv_files &&
	    !(ci->env_file_digests = calloc(ci->nenv_files, sizeof(*ci->env_file_digests))))
		return nomem();
	for (k = 0; k < ci->nenv_files; k++)
		if ((err = load_env_file(ci, ci->env_files[k], &ci->env_file_digests[k])) < 0)
			return err;
	for (k = 0; k < ci->nenv_args; k++) {
		const char *a = ci->env_args[k], *eq = strchr(a, '='), *v;

		if (eq) {
			err = add_env(ci, a, (size_t)(eq - a), eq + 1, strlen(eq + 1), NULL);
		} else {
			/* docker -e NAME: the caller's value, or nothing. */
			if (!(v = getenv(a)))
				continue;
			err = add_env(ci, a, strlen(a), v, strlen(v), "cli");
		}
		if (err < 0)
			return nomem();
	}
	return 0;
}

int inputs_finish(struct cli_inputs *ci)
{
	size_t k;
	int err = 0;

	if (!ci->specs) {
		const char *d = specs_default_dir();

		if (!d) {
			fprintf(stderr, "primus-envfs: no shipped specs found; pass --specs DIR\n");
			return -ENOENT;
		}
		if (set_one(&ci->specs, d) < 0)
			return nomem();
	}
	if ((err = check_file(ci, "--specs", ci->specs)) < 0)
		return err;
	if (ci->config && (err = check_file(ci, "--config", ci->config)) < 0)
		return err;
	for (k = 0; k < ci->ninherit; k++)
		if ((err = check_file(ci, "--inherit", ci->inherit[k])) < 0)
			return err;
	for (k = 0; k < ci->nenv_files; k++)
		if ((err = check_file(ci, "--env-file", ci->env_files[k])) < 0)
			return err;
	if ((err = build_env(ci)) < 0)
		return err;
	ci->in.specs_dir = ci->specs;
	ci->in.config = ci->config;
	ci->in.host_root = ci->host_root;
	ci->in.inherit = (const char *const *)ci->inherit;
	ci->in.ninherit = ci->ninherit;
	ci->in.pass = (const char *const *)ci->pass;
	ci->in.npass = ci->npass;
	ci->in.env = (const char *const *)ci->env;
	ci->in.env_sources = (const char *const *)ci->env_sources;
	ci->in.nenv = ci->nenv;
	ci->in.env_files = (const char *const *)ci->env_files;
	ci->in.nenv_files = ci->nenv_files;
	ci->in.env_file_digests = ci->env_file_digests;
	ci->in.arches = (const char *const *)ci->arches;
	ci->in.narches = ci->narches;
	ci->in.secrets = (const char *const *)ci->secrets;
	ci->in.nsecrets = ci->nsecrets;
	ci->in.host_env = environ;
	ci->in.silence = &ci->silence;
	ci->in.primus_path = ci->primus_path;
	ci->in.inherit_env = ci->inherit_env ? environ : NULL;
	return 0;
}

static void free_all(char **v, size_t n)
{
	while (n--)
		free(v[n]);
	free(v);
}

void inputs_release(struct cli_inputs *ci)
{
	free(ci->state);
	free(ci->specs);
	free(ci->config);
	free(ci->host_root);
	free(ci->primus_path);
	free_all(ci->inherit, ci->ninherit);
	free_all(ci->pass, ci->npass);
	free_all(ci->arches, ci->narches);
	free_all(ci->secrets, ci->nsecrets);
	free_all(ci->env_args, ci->nenv_args);
	free_all(ci->env_files, ci->nenv_files);
	free(ci->env_file_digests);
	free_all(ci->env, ci->nenv);
	free_all(ci->env_sources, ci->nenv);
	diag_silence_release(&ci->silence);
	memset(ci, 0, sizeof(*ci));
}

void inputs_warn_inline_secrets(const struct cli_inputs *ci, const struct world *w)
{
	size_t k;

	for (k = 0; w && k < ci->nenv; k++) {
		const char *kv = ci->env[k];
		int n = (int)strcspn(kv, "=");
		char name[256];

		if (ci->env_sources[k] || n >= (int)sizeof(name))
			continue;
		memcpy(name, kv, (size_t)n);
		name[n] = '\0';
		if (world_name_secret((void *)w, name))
			fprintf(stderr, "primus-envfs: warning: %s is a secret given as --env %s=... "
				"on the command line, where every user can read it (ps); pass it "
				"with --env-file FILE or --env %s\n", name, name, name);
	}
}

/* Zeroes what follows the first '=' of s, up to end (exclusive). */
static void zero_value(char *s, char *end)
{
	char *eq = memchr(s, '=', (size_t)(end - s));

	if (eq)
		memset(eq + 1, 0, (size_t)(end - eq - 1));
}

void inputs_scrub_env_arg(char *arg)
{
	zero_value(arg, arg + strlen(arg));
}

void inputs_scrub_opt_list(char *list)
{
	char *item = list, *p = list, *end = list + strlen(list);

	/* fuse_opt's splitting: ',' ends an item unless escaped by '\'. */
	for (;; p++) {
		if (p < end && *p == '\\' && p + 1 < end) {
			p++;
			continue;
		}
		if (p < end && *p != ',')
			continue;
		if (p - item > 4 && !strncmp(item, "env=", 4))
			zero_value(item + 4, p);
		if (p >= end)
			break;
		item = p + 1;
	}
}

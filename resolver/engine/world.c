/* world: every input read once, ready to be resolved many times. */
#include "inputs_trust.h"
#include "world.h"
#include "slurm.h"
#include "spec_share.h"
#include "specs_digest.h"
#include "text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* An --env-file's line whose name no shell can export, named by its
 * place (src is FILE:LINE) and its name, escaped and cut at 128 bytes.
 * Never the value: the file is where secrets are passed. */
/* Letters, digits and _ . - : alone, at most 64 of them. */
static bool name_like(const char *s, size_t n)
{
	size_t i;

	if (!n || n > 64)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-' || c == ':'))
			return false;
	}
	return true;
}

static int bad_file_name(struct world *w, const char *src, const char *name, size_t n)
{
	const char *colon = strrchr(src, ':');
	unsigned long line = colon ? strtoul(colon + 1, NULL, 10) : 0;
	struct strbuf file = STRBUF_INIT, shown = STRBUF_INIT;
	int err;

	/* The source is "FILE:LINE" as the loader wrote it, so the last colon
	 * ends the file name even when the name holds colons. */
	err = sb_add(&file, src, colon && line ? (size_t)(colon - src) : strlen(src));
	/* Quoted when it looks like a name a user meant (A.B, MY-VAR): text
	 * of other bytes may be a piece of a value (a wrapped token). */
	if (!err && name_like(name, n))
		err = text_escape_max(&shown, name, n, 128);
	if (!err && shown.len)
		err = diag_add(&w->diags, DC_CLI_ENV_FORMAT, sb_str(&file), (unsigned)line, 0,
			       "'%s' is not a variable name ([A-Za-z_][A-Za-z0-9_]*): the "
			       "launcher's shell cannot export it", sb_str(&shown));
	else if (!err)
		err = diag_add(&w->diags, DC_CLI_ENV_FORMAT, sb_str(&file), (unsigned)line, 0,
			       "the text before '=' is not a variable name "
			       "([A-Za-z_][A-Za-z0-9_]*), and is not shown: it may be part of a "
			       "value; the launcher's shell cannot export it");
	sb_release(&file);
	sb_release(&shown);
	return err < 0 ? err : -EINVAL;
}

/* The cli layer. A secret written inline (--env HF_TOKEN=...) is readable
 * by every user in /proc/PID/cmdline for the life of the process: a
 * warning naming the name, never the value. Needs the specs loaded. */
static int load_cli(struct world *w, const struct envfs_inputs *in)
{
	size_t k;
	int err;

	for (k = 0; k < in->nenv; k++) {
		const char *kv = in->env[k], *eq = strchr(kv, '=');
		const char *src = in->env_sources ? in->env_sources[k] : NULL;
		size_t n = eq ? (size_t)(eq - kv) : 0;

		if (src && eq && !env_name_valid(kv, n)) {
			return bad_file_name(w, src, kv, n);
		}
		if (!eq || !env_name_valid(kv, n)) {
			diag_add(&w->diags, DC_CLI_ENV_FORMAT, NULL, 0, 0,
				 "--env: expected NAME=VALUE");
			return -EINVAL;
		}
		if ((err = env_list_add(&w->cli, kv, n, eq + 1, strlen(eq + 1),
					src ? src : "cli")) < 0)
			return err;
		if (!src && world_name_secret(w, w->cli.v[w->cli.n - 1].name) &&
		    diag_add(&w->diags, DC_CLI_SECRET_INLINE, NULL, 0, 0,
			     "%s is a secret given as --env %s=... on the command line, where "
			     "every user can read it (ps, /proc/PID/cmdline); pass it with "
			     "--env-file FILE or as --env %s (the value from the environment)",
			     w->cli.v[w->cli.n - 1].name, w->cli.v[w->cli.n - 1].name,
			     w->cli.v[w->cli.n - 1].name) < 0)
			return -ENOMEM;
	}
	return 0;
}

static const char *host_get(char *const *env, const char *name, size_t len)
{
	for (; env && *env; env++)
		if (!strncmp(*env, name, len) && (*env)[len] == '=')
			return *env + len + 1;
	return NULL;
}

static int host_add_n(struct world *w, char *const *env, const char *name, size_t len)
{
	const char *v;
	size_t k;

	for (k = 0; k < w->host.n; k++)
		if (strlen(w->host.v[k].name) == len && !memcmp(w->host.v[k].name, name, len))
			return 0;
	if (!(v = host_get(env, name, len)))
		return 0;
	return env_list_add(&w->host, name, len, v, strlen(v), "host");
}

static int host_add(struct world *w, char *const *env, const char *name)
{
	return host_add_n(w, env, name, strlen(name));
}

static bool has_prefix(char *const *prefixes, size_t n, const char *s)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (!strncmp(s, prefixes[k], strlen(prefixes[k])))
			return true;
	return false;
}

/* Every variable of env with one of s's passthrough prefixes. */
static int host_add_prefixed(struct world *w, char *const *env, const struct spec *s)
{
	char *const *e;
	int err;

	for (e = env; e && *e && s->npass_prefixes; e++) {
		const char *eq = strchr(*e, '=');

		if (!eq || !env_name_valid(*e, (size_t)(eq - *e)) ||
		    !has_prefix(s->pass_prefixes, s->npass_prefixes, *e))
			continue;
		if ((err = host_add_n(w, env, *e, (size_t)(eq - *e))) < 0)
			return err;
	}
	return 0;
}

/* Copies the n strings of src into *out (caller-owned, with *nout, freed
 * one by one and then as an array; *nout counts what was copied even on
 * -ENOMEM, for world_free). */
static int copy_strs(const char *const *src, size_t n, char ***out, size_t *nout)
{
	size_t k;

	if (!n)
		return 0;
	if (!(*out = calloc(n, sizeof(char *))))
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		if (!((*out)[k] = xstrdup(src[k])))
			return -ENOMEM;
		(*nout)++;
	}
	return 0;
}

/* Host candidates: --pass names and every spec's passthrough list and
 * prefixes. Which of them a directory may use (and whether an empty value
 * counts) is decided per backend at resolve time (world_host_allowed). */
static int load_host(struct world *w, const struct envfs_inputs *in)
{
	const struct spec_set *set = w->specs;
	size_t k, j;
	int err;

	if (in->npass && !(w->pass = calloc(in->npass, sizeof(char *))))
		return -ENOMEM;
	for (k = 0; k < in->npass; k++) {
		if (!(w->pass[k] = xstrdup(in->pass[k])))
			return -ENOMEM;
		w->npass++;
		if ((err = host_add(w, in->host_env, in->pass[k])) < 0)
			return err;
	}
	if (!set)
		return 0;
	if (set->runner) {
		for (j = 0; j < set->runner->npassthrough; j++)
			if ((err = host_add(w, in->host_env, set->runner->passthrough[j])) < 0)
				return err;
		if ((err = host_add_prefixed(w, in->host_env, set->runner)) < 0)
			return err;
	}
	for (k = 0; k < set->nbackends; k++) {
		for (j = 0; j < set->backends[k]->npassthrough; j++)
			if ((err = host_add(w, in->host_env, set->backends[k]->passthrough[j])) < 0)
				return err;
		if ((err = host_add_prefixed(w, in->host_env, set->backends[k])) < 0)
			return err;
	}
	return 0;
}

/* The container launcher forwards a listed name or a prefixed one only
 * when it is set and non-empty. */
static bool spec_forwards(const struct spec *s, const struct env_pair *p)
{
	return s && p->value_len &&
	       (text_in_list(s->passthrough, s->npassthrough, p->name) ||
		has_prefix(s->pass_prefixes, s->npass_prefixes, p->name));
}

bool world_host_allowed(const struct world *w, const struct spec *backend,
			const struct env_pair *p)
{
	const struct spec *runner = backend->uses_runner ? w->specs->runner : NULL;

	/* --pass adds a name to the container launcher's list, which drops
	 * a name that is unset or empty like any other. */
	return (p->value_len && text_in_list(w->pass, w->npass, p->name)) ||
	       spec_forwards(backend, p) || spec_forwards(runner, p);
}

/* How a load takes its specs from another world: never, when the
 * directory's digest is unchanged (a daemon's reloads), or as they are
 * (the caller knows they come from the same directory, read alike). */
enum share_mode { SHARE_NONE, SHARE_BY_DIGEST, SHARE_AS_IS };

/* Loads the specs into w, or shares prev's when their files are
 * unchanged (share: a daemon's worlds; the digest is only worth taking
 * for them). The digest is taken before loading, so a file changed during
 * the load makes the next digest differ and load again. Either way the
 * specs end up in a spec_share, which the snapshots resolved from them
 * hold on to. */
static int load_specs(struct world *w, const struct envfs_inputs *in,
		      const struct world *prev, enum share_mode share)
{
	struct spec_share *sh = prev ? prev->spec_share : NULL;
	struct diag_list d = DIAG_LIST_INIT;
	struct spec_set *set = NULL;
	uint8_t digest[SHA256_LEN];
	/* A set read for one backend (only_backend) or without its docs is not
	 * the whole directory the digest covers: never offered for sharing. */
	bool have = share == SHARE_BY_DIGEST && !in->only_backend && !in->values_only &&
		    specs_dir_digest(in->specs_dir, digest) == 0;
	int err;

	if (share == SHARE_AS_IS && sh) {
		w->spec_share = spec_share_ref(sh);
		w->specs = sh->set;
		return diag_extend(&w->diags, &sh->diags);
	}
	if (have && sh && sh->has_digest && !memcmp(sh->digest, digest, SHA256_LEN)) {
		w->spec_share = spec_share_ref(sh);
		w->specs = sh->set;
		return diag_extend(&w->diags, &sh->diags);
	}
	err = spec_set_load_dir(in->specs_dir, in->only_backend,
				in->values_only ? SPEC_LOAD_NO_DOCS | SPEC_LOAD_NO_NAMES : 0, &set, &d);
	if (err == 0 && (err = spec_share_new(set, &d, &sh)) == 0) {
		sh->has_digest = have;
		if (have)
			memcpy(sh->digest, digest, SHA256_LEN);
		w->spec_share = sh;
		w->specs = sh->set;
	}
	if (err != -ENOMEM)
		err = diag_extend(&w->diags, &d) < 0 ? -ENOMEM : err;
	diag_list_release(&d);
	return err;
}

/* A module's framework that names no backend the specs have (a typo:
 * check would then take every backend, and the launch another path),
 * named at its place with the closest backend's name. A load of one
 * backend (only_backend) has not the others' specs: it asks the
 * directory's files, so that resolve -b says what the mount says. */
static int check_frameworks(struct world *w, const struct envfs_inputs *in)
{
	size_t k, j;
	int err = 0;

	for (k = 0; w->config && w->specs && k < w->config->nframeworks && !err; k++) {
		const char *fw = w->config->frameworks[k];
		const struct config_place *at = &w->config->framework_at[k];
		const char *best = NULL;
		size_t bd = 3, n = strlen(fw), nstems = 0;
		struct strbuf shown = STRBUF_INIT, mod = STRBUF_INIT;
		char **stems = NULL;
		bool has = spec_set_backend(w->specs, fw) != NULL;

		if (!has && in->only_backend && strcmp(fw, in->only_backend) &&
		    (err = spec_dir_backends(in->specs_dir, fw, &has, &stems, &nstems)) < 0)
			break;
		if (has)
			goto next;
		for (j = 0; j < (stems ? nstems : w->specs->nbackends); j++) {
			const char *b = stems ? stems[j] : w->specs->backends[j]->backend;
			size_t d = text_edit_distance_max(fw, n, b, strlen(b), 2);

			if (d < bd) {
				bd = d;
				best = b;
			}
		}
		err = text_escape_max(&shown, fw, n, 128);
		if (!err)
			err = text_escape_max(&mod, at->module, strlen(at->module), 128);
		if (!err)
			err = diag_add(&w->diags, DC_CONFIG_FRAMEWORK, w->config->file, at->line,
				       at->col, "modules.%s.framework: %s is no backend the specs "
				       "know%s%s%s", sb_str(&mod), sb_str(&shown),
				       best ? "; did you mean " : "", best ? best : "",
				       best ? "?" : "");
next:
		sb_release(&shown);
		sb_release(&mod);
		for (j = 0; j < nstems; j++)
			free(stems[j]);
		free(stems);
	}
	return err;
}

/* The daemon's environment does not change while it runs: a reload
 * takes what the first load derived instead of asking scontrol again. */
static int load_slurm(struct world *w, const struct envfs_inputs *in, const struct world *prev)
{
	size_t k;
	int err;

	if (!prev)
		return slurm_detect(in->host_env, world_name_secret(w, "MASTER_ADDR"), &w->slurm,
				    &w->slurm_diags);
	for (k = 0; k < prev->slurm.n; k++) {
		const struct env_pair *p = &prev->slurm.v[k];

		if ((err = env_list_add(&w->slurm, p->name, strlen(p->name), p->value,
					p->value_len, p->source)) < 0)
			return err;
	}
	return diag_extend(&w->slurm_diags, &prev->slurm_diags);
}

/* The inputs' diagnostics never carry a secret's value, whichever layer
 * holds it: a config warning quoting a copy of an --env-file's token
 * knows only the config's names. Values under 4 bytes are no telling
 * secret, and too common (as sim_scrub_diags). */
static int scrub_list(struct world *w, const struct env_list *l)
{
	size_t k;
	int err;

	for (k = 0; k < l->n; k++)
		if (l->v[k].value_len >= 4 && world_name_secret(w, l->v[k].name) &&
		    (err = diag_scrub(&w->diags, l->v[k].value, l->v[k].value_len)) < 0)
			return err;
	return 0;
}

static int scrub_inputs(struct world *w)
{
	size_t k;
	int err;

	if ((err = scrub_list(w, &w->cli)) < 0 || (err = scrub_list(w, &w->image)) < 0 ||
	    (err = scrub_list(w, &w->host)) < 0)
		return err;
	for (k = 0; w->config && k < w->config->nenv; k++) {
		const struct config_entry *e = &w->config->env[k];

		if (e->value_len >= 4 && world_name_secret(w, e->name) &&
		    (err = diag_scrub(&w->diags, e->value, e->value_len)) < 0)
			return err;
	}
	return 0;
}

static int load(const struct envfs_inputs *in, const struct world *prev,
		enum share_mode share, struct world **out)
{
	struct world *w = calloc(1, sizeof(*w));
	struct file_digest *inherit = calloc(in->ninherit ? in->ninherit : 1, sizeof(*inherit));
	bool failed = false;
	size_t k;
	int err = -ENOMEM;

	if (!w || !inherit)
		goto out;
	err = load_specs(w, in, prev, share);
	if (err == -ENOMEM)
		goto out;
	failed |= err < 0;
	/* Before the config and --env: their warnings ask which names are
	 * secrets, and --secret names some. */
	if ((err = copy_strs(in->secrets, in->nsecrets, &w->secrets, &w->nsecrets)) < 0)
		goto out;
	if (in->config) {
		struct config_secrets sec = { world_name_secret, w };

		if (in->config_read)
			err = config_load_read(in->config_read, &sec, &w->config, &w->diags);
		else
			err = config_load(in->config, &sec, &w->config, &w->diags);
		if (err == -ENOMEM)
			goto out;
		failed |= err < 0;
		if ((err = check_frameworks(w, in)) < 0)
			goto out;
	}
	if ((err = inherit_load_environ(in->inherit_env, &w->image)) < 0)
		goto out;
	for (k = 0; k < in->ninherit; k++) {
		err = inherit_load_file_digest(in->inherit[k], "image", in->host_env, &w->image,
					       &inherit[k], &w->diags);
		if (err == -ENOMEM)
			goto out;
		failed |= err < 0;
	}
	if ((err = load_cli(w, in)) == -ENOMEM)
		goto out;
	failed |= err < 0;
	if ((err = load_host(w, in)) < 0)
		goto out;
	if ((err = hostprobe_run(in->host_root, &w->probe)) < 0 ||
	    (err = load_slurm(w, in, prev)) < 0 ||
	    (err = inputs_trust_check(in, &w->diags)) < 0)
		goto out;
	if ((err = copy_strs(in->arches, in->narches, &w->extra_arches, &w->nextra_arches)) < 0 ||
	    (!in->values_only &&
	     (err = world_hash_inputs(w, in, inherit,
				      share == SHARE_AS_IS && prev && w->spec_share == prev->spec_share ?
				      prev : NULL)) < 0))
		goto out;
	err = -ENOMEM;
	if ((in->primus_path && !(w->primus_path = xstrdup(in->primus_path))) ||
	    (in->silence && diag_silence_extend(&w->silence, in->silence) < 0) ||
	    (w->config && diag_silence_extend(&w->silence, &w->config->silence) < 0))
		goto out;
	if ((err = scrub_inputs(w)) < 0)
		goto out;
	diag_silence_apply(&w->silence, &w->diags, 0);
	err = failed ? -EINVAL : 0;
	*out = w;
	free(inherit);
	return err;
out:
	world_free(w);
	free(inherit);
	return err;
}

int world_load(const struct envfs_inputs *in, struct world **out)
{
	return load(in, NULL, SHARE_NONE, out);
}

int world_load_from(const struct envfs_inputs *in, const struct world *prev,
		    struct world **out)
{
	return load(in, prev, SHARE_BY_DIGEST, out);
}

int world_load_sharing(const struct envfs_inputs *in, const struct world *donor,
		       struct world **out)
{
	return load(in, donor, donor ? SHARE_AS_IS : SHARE_NONE, out);
}

void world_free(struct world *w)
{
	size_t k;

	if (!w)
		return;
	spec_share_unref(w->spec_share);
	config_free(w->config);
	env_list_release(&w->image);
	env_list_release(&w->host);
	env_list_release(&w->cli);
	env_list_release(&w->slurm);
	diag_list_release(&w->slurm_diags);
	for (k = 0; k < w->nextra_arches; k++)
		free(w->extra_arches[k]);
	for (k = 0; k < w->npass; k++)
		free(w->pass[k]);
	for (k = 0; k < w->nsecrets; k++)
		free(w->secrets[k]);
	free(w->pass);
	free(w->secrets);
	free(w->extra_arches);
	hostprobe_free(w->probe);
	free(w->primus_path);
	diag_silence_release(&w->silence);
	diag_list_release(&w->diags);
	for (k = 0; k < w->ninputs; k++)
		free(w->inputs[k].path);
	free(w->inputs);
	free(w);
}

/* The arches of a backend: its own, else the runner's when it uses it,
 * then every --arch. */
static bool arch_known(const struct world *w, const struct spec *s, const char *arch)
{
	size_t k;

	if (spec_has_arch(s, arch))
		return true;
	if (!s->narches && s->uses_runner && w->specs->runner &&
	    spec_has_arch(w->specs->runner, arch))
		return true;
	for (k = 0; k < w->nextra_arches; k++)
		if (!strcmp(w->extra_arches[k], arch))
			return true;
	return false;
}

bool world_has_dir(const struct world *w, const char *backend, const char *arch)
{
	const struct spec *s;

	if (!w->specs || !(s = spec_set_backend(w->specs, backend)))
		return false;
	return arch_known(w, s, arch);
}

static int push_arch(const char ***v, size_t *n, const char *a)
{
	const char **p;
	size_t k;

	for (k = 0; k < *n; k++)
		if (!strcmp((*v)[k], a))
			return 0;
	if (!(p = realloc(*v, (*n + 1) * sizeof(*p))))
		return -ENOMEM;
	p[(*n)++] = a;
	*v = p;
	return 0;
}

int world_arches(const struct world *w, const struct spec *s, const char ***out, size_t *nout)
{
	const struct spec *src = s->narches || !s->uses_runner || !w->specs->runner ?
		s : w->specs->runner;
	const char **v = NULL;
	size_t n = 0, k;
	int err = 0;

	for (k = 0; k < src->narches && !err; k++)
		err = push_arch(&v, &n, src->arches[k]);
	for (k = 0; k < w->nextra_arches && !err; k++)
		err = push_arch(&v, &n, w->extra_arches[k]);
	if (err < 0) {
		free(v);
		return err;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* The value the launch sees for name among the inherited layers, or NULL. */
static const char *inherited_value(const struct world *w, const struct spec *s,
				   const char *name)
{
	const struct env_list *lists[] = { &w->cli, &w->host, &w->image };
	size_t k, j;

	for (k = 0; k < sizeof(lists) / sizeof(lists[0]); k++)
		for (j = lists[k]->n; j-- > 0;) {
			const struct env_pair *p = &lists[k]->v[j];

			if (strcmp(p->name, name))
				continue;
			if (lists[k] == &w->host && !world_host_allowed(w, s, p))
				continue;
			return p->value;
		}
	return NULL;
}

const char *world_host_arch(const struct world *w, const char *backend, const char **why)
{
	const struct spec *s = w->specs ? spec_set_backend(w->specs, backend) : NULL;
	const char *arch;

	*why = "no such backend";
	if (!s)
		return NULL;
	if (s->uses_runner)
		arch = hostprobe_primus_arch(w->probe, inherited_value(w, s, "PRIMUS_GPU_MODEL"),
					     why);
	else if (!(arch = w->probe && w->probe->nvidia ? "cuda" : NULL))
		*why = "no accelerator detected (no NVIDIA driver: proc/driver/nvidia)";
	if (arch && !arch_known(w, s, arch)) {
		*why = "the detected arch has no directory in this backend";
		return NULL;
	}
	return arch;
}

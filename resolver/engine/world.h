/* world: every input of a run loaded once (specs, config, inherit files,
 * host passthrough, --env), from which resolve.h resolves directories. */
#ifndef ENVFS_WORLD_H
#define ENVFS_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "diag.h"
#include "envfs_inputs.h"
#include "hostprobe.h"
#include "inherit.h"
#include "sha256.h"
#include "snapshot.h"
#include "spec.h"

struct spec_share;

/* An input file as the run record names it: the bytes it had when this
 * world was loaded. */
struct world_input {
	const char *kind;              /* static: "specs" (a directory: the
	                                  digest of its *.yaml files), "config",
	                                  "inherit", "env-file" */
	char *path;                    /* as given */
	bool has_sum;                  /* false when it could not be read */
	bool secret;                   /* a secret takes its value from it:
	                                  the sum is never shown */
	uint8_t sum[SHA256_LEN];
};

struct world {
	struct spec_set *specs;        /* spec_share's; NULL when they did
	                                  not load */
	struct spec_share *spec_share; /* one reference: the specs, shared
	                                  by the worlds of one daemon
	                                  (world_load_from) and by every
	                                  snapshot resolved from them */
	struct config *config;         /* NULL without --config */
	struct env_list image;         /* --inherit, in order */
	struct env_list host;          /* passthrough candidates from host_env */
	struct env_list cli;           /* --env */
	char **pass;                   /* --pass names: host passthrough for every backend */
	size_t npass;
	char **extra_arches;
	size_t nextra_arches;
	char **secrets;                /* --secret globs: secrets in every
	                                  directory, whatever a spec says */
	size_t nsecrets;
	struct hostprobe *probe;       /* what this node is (hostprobe.h) */
	char *primus_path;             /* --primus-path, or NULL */
	struct diag_silence silence;   /* --ignore codes and the config's
	                                  ignore= comments */
	struct env_list slurm;         /* what Primus's Slurm entry derives from
	                                  a job in host_env (slurm.h) */
	struct diag_list slurm_diags;  /* its problems, for every directory of
	                                  a backend with that launcher */
	struct diag_list diags;        /* load-time diagnostics */
	struct world_input *inputs;    /* the specs, config, inherit and
	                                  env-file inputs, in that order
	                                  (world_hash_inputs) */
	size_t ninputs;
};

/* Loads every input. Returns 0 when every input loaded (diagnostics of any
 * severity about single keys allowed: those entries are skipped), -EINVAL
 * when an input failed to load (YAML syntax, bad spec, unreadable file: the
 * world is still returned, with the reasons in w->diags, for `check`), or
 * -ENOMEM (world not returned). *out is caller-owned, freed with
 * world_free(). Resolving a world whose specs failed returns -EINVAL. */
int world_load(const struct envfs_inputs *in, struct world **out);
/* The same, for a daemon that loads again and again: when prev (may be
 * NULL) was loaded this way from specs whose *.yaml files still have the
 * same names and bytes, the new world shares prev's specs (and their
 * load diagnostics) instead of parsing them again. What a Slurm job in
 * the daemon's environment gives (slurm.h) is taken from prev, since
 * that environment does not change. */
int world_load_from(const struct envfs_inputs *in, const struct world *prev,
		    struct world **out);
/* The same, sharing donor's loaded specs (and their load diagnostics)
 * without reading the directory again, for a command that resolves two
 * sets of inputs over one specs directory: the caller vouches that in's
 * specs_dir, only_backend and values_only are donor's. donor NULL: world_load.
 * The new world holds its own reference to the specs: donor may be freed
 * first. */
int world_load_sharing(const struct envfs_inputs *in, const struct world *donor,
		       struct world **out);
void world_free(struct world *w);
/* Fills w->inputs from in: each input file's SHA-256 as its loader took
 * it over the bytes it parsed (w->config's, inherit[k] beside each
 * --inherit file, NULL: none, in->env_file_digests), so the record names
 * what this world was loaded from and the files are not read again; a
 * file its loader could not read whole is hashed from disk. donor (may be
 * NULL): the world whose specs w shares as they are (world_load_sharing),
 * whose digest of the same directory is taken instead of hashing it again.
 * Returns 0 or -ENOMEM. */
int world_hash_inputs(struct world *w, const struct envfs_inputs *in,
		      const struct file_digest *inherit, const struct world *donor);
/* Copies w->inputs into snap (its arena). Returns 0 or -ENOMEM. */
int world_inputs_to_snapshot(const struct world *w, struct snapshot *snap);

/* The arch directories of backend spec s, in order; *out is caller-owned
 * (free() the array; the strings are borrowed from the world). */
int world_arches(const struct world *w, const struct spec *s, const char ***out,
		 size_t *nout);
/* True when the launch of backend forwards host candidate p from the
 * daemon's environment: a --pass name, or one of the specs' passthrough
 * names and prefixes (the runner's too, for a backend that uses it), and
 * only when set and non-empty, as the container launcher does. */
bool world_host_allowed(const struct world *w, const struct spec *backend,
			const struct env_pair *p);
/* The arch directory a launch of backend on this node uses, the target
 * of env/<backend>/host: for a backend that uses the runner, the arch of
 * PRIMUS_GPU_MODEL (as the launch sees it: --env, then the host's, then
 * the image's) or of the GPUs the KFD topology lists; for one without,
 * "cuda" when an NVIDIA driver is loaded. NULL when nothing is detected
 * or the backend has no such directory, with *why (borrowed) saying so. */
const char *world_host_arch(const struct world *w, const char *backend, const char **why);
/* True when a spec of w declares name secret (in any backend: a secret
 * is secret everywhere). */
bool world_secret_declared(const struct world *w, const char *name);
/* True when name is a secret in backend's directories by its name alone:
 * a spec declares it secret, a --secret glob or a secret pattern of the
 * runner or of backend matches it. (A variable's own secret flag also
 * heeds an entry's secret: false; this is the safe side, for names no
 * snapshot holds, such as those a history keeps.) */
bool world_name_secret_in(const struct world *w, const char *backend, const char *name);
/* Whether name (len bytes, NUL-terminated there) matches a --secret
 * glob of w or (not only_cli) a secret pattern of the runner base or of
 * backend (may be NULL): the patterns' part of both the above and a
 * simulation's sim_secret_by_name. */
bool world_secret_by_pattern(const struct world *w, const struct spec *backend,
			     const char *name, size_t len, bool only_cli);
/* True when name is a secret in any backend's directories by its name
 * (world_name_secret_in of some backend), in the shape of a
 * config_secrets callback; ctx is the world. For a message written
 * before a backend is chosen (a config's or --env's warnings): it quotes
 * no value any directory keeps private. */
bool world_name_secret(void *ctx, const char *name);
/* True when a spec of w marks name `scope: node` (in any backend, as
 * secrets: --env NODE_RANK=i reaches every directory). */
bool world_node_scoped(const struct world *w, const char *name);
/* True when the world knows backend/arch (a spec arch or --arch). */
bool world_has_dir(const struct world *w, const char *backend, const char *arch);

#endif

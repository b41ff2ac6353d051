/* resolve: the layering of SPEC section 3 over loaded inputs.
 *
 * world_load() reads every input once (specs, config, inherit files, host
 * passthrough, --env); resolve_dir() turns a world plus the overrides into
 * the snapshot of one <backend>/<arch>; resolve_all() does every directory. */
#ifndef ENVFS_RESOLVE_H
#define ENVFS_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "diag.h"
#include "hostprobe.h"
#include "inherit.h"
#include "snapshot.h"
#include "spec.h"

struct envfs_inputs {
	const char *specs_dir;         /* required */
	const char *only_backend;      /* NULL: every spec file (spec_set_load_dir) */
	bool no_docs;                  /* catalog.docs.yaml is not read: no
	                                  note is shown (SPEC_LOAD_NO_DOCS) */
	const char *config;            /* NULL: no config */
	const char *const *inherit;    /* --inherit files, in order */
	size_t ninherit;
	const char *const *pass;       /* --pass NAME */
	size_t npass;
	const char *const *env;        /* --env NAME=VALUE */
	const char *const *env_sources; /* beside each env entry, its source
	                                  ("FILE:LINE" of an --env-file); NULL
	                                  (the array or an entry): written
	                                  inline as --env NAME=VALUE, source
	                                  "cli" */
	size_t nenv;
	const char *const *arches;     /* --arch NAME */
	size_t narches;
	char *const *host_env;         /* the daemon's environment (NULL: none) */
	const char *host_root;         /* --host-root: where the node's sys/ and
	                                  proc/ are read (NULL: "/") */
};

struct override {
	char *backend, *arch, *name;
	char *value;                   /* NULL when unset (rm) */
	size_t value_len;
	bool private;                  /* a secret: made by a file created
	                                  with a mode that grants nothing to
	                                  others, or moved from a secret */
};

struct override_set {
	struct override *v;
	size_t n, cap;
};

struct spec_share;

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
	struct hostprobe *probe;       /* what this node is (hostprobe.h) */
	struct diag_list diags;        /* load-time diagnostics */
};

struct resolution {
	struct snapshot **dirs;        /* backends by name, arches in spec order */
	size_t ndirs;
	struct diag_list diags;        /* load-time plus every directory's */
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
 * load diagnostics) instead of parsing them again. */
int world_load_from(const struct envfs_inputs *in, const struct world *prev,
		    struct world **out);
void world_free(struct world *w);

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
/* world_secret_declared() in the shape of a config_secrets callback; ctx
 * is the world. */
bool world_name_secret(void *ctx, const char *name);
/* True when a spec of w marks name `scope: node` (in any backend, as
 * secrets: --env NODE_RANK=i reaches every directory). */
bool world_node_scoped(const struct world *w, const char *name);
/* True when the world knows backend/arch (a spec arch or --arch). */
bool world_has_dir(const struct world *w, const char *backend, const char *arch);

/* Resolves one directory. ov may be NULL. *out holds one reference. */
int resolve_dir(const struct world *w, const struct override_set *ov,
		const char *backend, const char *arch, struct snapshot **out);
/* Resolves every directory. *out is freed with resolution_free(). */
int resolve_all(const struct world *w, const struct override_set *ov,
		struct resolution **out);
void resolution_free(struct resolution *r);

/* Override bookkeeping; value NULL records an unset. Copies its inputs. */
int override_set_put(struct override_set *ov, const char *backend,
		     const char *arch, const char *name, const char *value,
		     size_t value_len);
/* Sets whether the override of name is private (a new value for it keeps
 * the flag); returns 0, or -ENOENT when there is none. */
int override_set_mark_private(struct override_set *ov, const char *backend,
			      const char *arch, const char *name, bool private);
/* Drops the override of name; returns 0, or -ENOENT when there was none. */
int override_set_drop(struct override_set *ov, const char *backend,
		      const char *arch, const char *name);
const struct override *override_set_find(const struct override_set *ov,
					 const char *backend, const char *arch,
					 const char *name);
void override_set_release(struct override_set *ov);

#endif

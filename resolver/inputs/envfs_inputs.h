/* envfs_inputs: what a command line or a mount names as its inputs (the
 * specs, the config, the --inherit, --env and --pass lists and the rest),
 * before any of it is read. world_load() (world.h) reads them. */
#ifndef ENVFS_ENVFS_INPUTS_H
#define ENVFS_ENVFS_INPUTS_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

struct config_read;
struct file_digest;

struct envfs_inputs {
	const char *specs_dir;         /* required */
	const char *only_backend;      /* NULL: every spec file (spec_set_load_dir) */
	bool values_only;              /* only what the values need (a view of
	                                  values, exec): catalog.docs.yaml and
	                                  names/ are not read, so no note is
	                                  shown and no name checked
	                                  (SPEC_LOAD_NO_DOCS, SPEC_LOAD_NO_NAMES),
	                                  and no input is hashed (the run
	                                  record's sha256 of each) */
	const char *config;            /* NULL: no config */
	struct config_read *config_read; /* NULL: the config is read as the
	                                  world loads; else config as
	                                  config_read() (config.h) already
	                                  read it, finished by the load; the
	                                  caller still releases it */
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
	const char *const *env_files;  /* the --env-file FILEs, in order (only
	                                  hashed for the run record: their
	                                  lines are in env above) */
	size_t nenv_files;
	const struct file_digest *env_file_digests; /* beside each env_files
	                                  entry, the digest of the bytes its
	                                  lines came from (NULL: each file is
	                                  hashed as the world loads) */
	const char *const *secrets;    /* --secret NAME|GLOB */
	size_t nsecrets;
	char *const *host_env;         /* the daemon's environment (NULL: none) */
	char *const *inherit_env;      /* an environment taken whole as image,
	                                  below the --inherit files (NULL: none) */
	const char *host_root;         /* --host-root: where the node's sys/ and
	                                  proc/ are read (NULL: "/") */
	const struct diag_silence *silence; /* --ignore codes (NULL: none) */
	const char *primus_path;       /* --primus-path, normalized (NULL: the
	                                  image's PRIMUS_PATH, if any) */
};

#endif

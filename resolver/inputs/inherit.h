/* inherit: environment files of the image layer (--inherit FILE).
 *
 * Two formats, told apart by content: a file holding a NUL byte is an
 * environ file (NAME=value\0 …, as /proc/PID/environ); anything else is a
 * docker env-file (NAME=value lines, # comments, blank lines ignored, the
 * value taken literally; a bare NAME takes the value from host_env). */
#ifndef ENVFS_INHERIT_H
#define ENVFS_INHERIT_H

#include <stddef.h>

#include "diag.h"
#include "sha256.h"

struct env_pair {
	char *name;
	char *value;
	size_t value_len;
	char *source;             /* "image:FILE:LINE" (environ: entry number) */
};

struct env_list {
	struct env_pair *v;
	size_t n, cap;
};

/* Appends the entries of path to out (later entries win when resolved).
 * Bad lines (no valid name) are error diagnostics with file:line and are
 * skipped. host_env may be NULL. Returns 0 or a negative errno. */
int inherit_load_file(const char *path, char *const *host_env,
		      struct env_list *out, struct diag_list *diags);
/* The same for another layer's file (--env-file): sources read
 * "TAG:FILE:LINE", or "FILE:LINE" when tag is NULL. */
int inherit_load_file_as(const char *path, const char *tag, char *const *host_env,
			 struct env_list *out, struct diag_list *diags);
/* The same, and the SHA-256 of the bytes read into *digest (has is false
 * when the file could not be read whole). */
int inherit_load_file_digest(const char *path, const char *tag, char *const *host_env,
			     struct env_list *out, struct file_digest *digest,
			     struct diag_list *diags);
int inherit_load_buffer(const char *name, const char *buf, size_t len,
			char *const *host_env, struct env_list *out,
			struct diag_list *diags);
/* Appends every NAME=VALUE of env (an environ; NULL: none) with source
 * "image:environ", skipping entries without a valid name, as a
 * program's execve hands them on. Returns 0 or -ENOMEM. */
int inherit_load_environ(char *const *env, struct env_list *out);
/* Appends one pair; copies everything. */
int env_list_add(struct env_list *l, const char *name, size_t name_len,
		 const char *value, size_t value_len, const char *source);
void env_list_release(struct env_list *l);
/* True when name matches [A-Za-z_][A-Za-z0-9_]*. */
int env_name_valid(const char *name, size_t len);

#endif

/* The spec schema's readers, shared by spec.c and catalog.c. Internal to
 * resolver/inputs. */
#ifndef ENVFS_SPEC_SCHEMA_H
#define ENVFS_SPEC_SCHEMA_H

#include <stdbool.h>

#include "dialect.h"
#include "vtype.h"
#include "yaml_tree.h"

struct expr;

struct sctx {
	const char *file;
	struct diag_list *diags;
	int errors;
};

/* Adds a schema error at n (NULL: no place) and counts it in c->errors. */
void bad(struct sctx *c, const struct ynode *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Known keys of one mapping already seen. A repeated key would run its
 * take_* twice over the same arrays, so the later one is refused. */
struct seen {
	unsigned mask;
	unsigned line[32];
};

enum { KEY_UNKNOWN = -1, KEY_REPEATED = -2 };

/* The index of key in known when it is a known key seen for the first
 * time in this mapping, KEY_REPEATED (with an error) when it was seen
 * before, or KEY_UNKNOWN, left to the caller's own error. A caller may
 * switch on the index instead of comparing key again. */
int schema_key_index(struct sctx *c, const struct ynode *key, const char *const *known,
		     struct seen *seen);
/* False (with an error) when key is a known key already seen in this
 * mapping; unknown keys are left to the caller's own error. */
bool schema_first_time(struct sctx *c, const struct ynode *key, const char *const *known,
		       struct seen *seen);
/* A scalar's text, borrowed from the document's text arena, which the
 * spec or catalog takes over; NULL (with an error) when n is not a scalar.
 * Copying each string cost a malloc and a free per field. */
char *take_str(struct sctx *c, const struct ynode *n, const char *key);
int take_bool(struct sctx *c, const struct ynode *n, const char *key, bool *out);
/* shell or python; true when n was one of them. */
bool take_dialect(struct sctx *c, const struct ynode *n, enum dialect *out);
/* One string or a list of strings. */
int take_list(struct sctx *c, const struct ynode *n, const char *key,
	      char ***out, size_t *nout);
/* The when: at n: its source into *src and its tree into *tree (NULL when
 * it does not parse, which is the spec's error at n). Both are the
 * spec's; the tree is freed with expr_free(). */
void take_cond(struct sctx *c, const struct ynode *n, char **src, struct expr **tree);
int take_sev(struct sctx *c, const struct ynode *n, enum diag_sev *out);
int take_int(struct sctx *c, const struct ynode *n, const char *key, long long *out);
int take_type(struct sctx *c, const struct ynode *n, enum vtype *out);
/* Type keys shared by spec variables and catalog entries; returns 1 when
 * key was one of them. */
int take_type_key(struct sctx *c, const struct ynode *k, const struct ynode *v,
		  struct vtype_def *t);
void schema_check_type(struct sctx *c, const struct ynode *at, const char *name,
		       const struct vtype_def *t);
void schema_free_type(struct vtype_def *t);
int take_scope(struct sctx *c, const struct ynode *n, unsigned *out);

#endif

/* pyvalue: what Python holds after PyYAML's yaml.safe_load() of a node, as
 * text: str() of it (what Primus exports with os.environ[k] = str(v)), and
 * an identity that is equal exactly when two dict keys are equal to Python
 * (1, 1.0 and true are one key; 1 and "1" are two).
 *
 *   env:
 *     A: 0.960      -> "0.96"         C: [a, b]     -> "['a', 'b']"
 *     B: 010        -> "8"            D: {x: 1}     -> "{'x': 1}"
 *
 * safe_load builds the whole document before Primus looks at env:, so a
 * node anywhere that PyYAML cannot construct (an unknown tag, an
 * unhashable key, `a: =`, 2001-02-30) fails the whole load: pyv_check()
 * finds the first. */
#ifndef ENVFS_PYVALUE_H
#define ENVFS_PYVALUE_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"
#include "yaml_tree.h"

enum pyv_kind {
	PYV_STR,          /* a str: the text as written */
	PYV_SCALAR,       /* int, float, bool, None, bytes, date, datetime */
	PYV_COLLECTION,   /* list, dict, tuple list (omap, pairs) */
	PYV_SET,          /* a set: Python's str() of it orders by hash,
	                     which for strings changes from run to run */
};

struct pyv_error {
	const struct ynode *at;   /* the node that fails */
	char msg[160];            /* names the problem, never quotes a value */
};

/* The first node of the tree under root that safe_load cannot construct.
 * Returns 0 when there is none, -EINVAL with *e filled in. */
int pyv_check(const struct ynode *root, struct pyv_error *e);

/* Appends str(v) for the value v safe_load builds from n, and sets *kind.
 * n must have passed pyv_check(). Returns 0, -ENOMEM, or -EINVAL (with
 * *e) when construction fails after all. */
int pyv_str(const struct ynode *n, struct strbuf *out, enum pyv_kind *kind,
	    struct pyv_error *e);

/* Appends an identity of the dict key n (a scalar that passed
 * pyv_check()): equal identities are equal Python keys. */
int pyv_key_ident(const struct ynode *n, struct strbuf *out);

/* Appends Python's repr() of the str s: 'it''s' -> "it's", '\n' -> '\\n'. */
int pyv_repr_str(const char *s, size_t len, struct strbuf *out);

/* True when PyYAML types the scalar n: plain without a tag, or tagged with
 * the non-specific "!". */
bool pyv_implicit(const struct ynode *n);

/* The pairs of mapping n after PyYAML's flatten_mapping: every `<<` merged
 * in (its pairs first, earlier merge sources winning), then n's own, in
 * document order. *out is caller-owned (free()); each element points into
 * the tree. merged[k] (may be NULL) tells which came in through a merge. */
int pyv_flatten(const struct ynode *n, const struct ypair ***out, bool **merged, size_t *nout);

#endif

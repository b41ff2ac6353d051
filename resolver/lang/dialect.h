/* dialect: which program a spec entry models, and how that program reads
 * an integer out of a variable's text.
 *
 *   GPUS_PER_NODE=010   the runner (bash, $((GPUS_PER_NODE - 1))) reads 8;
 *                       env_spec.py (Python, int()) would read 10
 *
 * A spec entry is a line of the runner's shell scripts (base_env.sh and
 * the GPU-model files) or of a backend's env_spec.py; its templates, its
 * `when:` and the rule that decides whether it applies follow that
 * program (specs/README.md, "Dialects"). */
#ifndef ENVFS_DIALECT_H
#define ENVFS_DIALECT_H

#include <stdbool.h>
#include <stddef.h>

#include "lookup.h"

enum dialect {
	DIALECT_SHELL,   /* bash under set -euo pipefail: ${X:-d}, $((X)) */
	DIALECT_PYTHON,  /* os.environ / os.getenv / int() */
};

/* "shell" or "python". Static. */
const char *dialect_name(enum dialect d);

/* Reads s (len bytes) as the dialect reads an integer: Python's int() (blanks
 * around it, an optional sign, decimal digits with single underscores
 * between them; leading zeros allowed), or bash arithmetic under set -u
 * (blanks ignored; 010 is octal, 0x1F hex, 2#101 binary; names are
 * variables whose values are read the same way, looked up through fn;
 * + - * / % << >> & ^ | ! ~ comparisons && || and parentheses).
 * Returns 1 with *out set, 0 when the dialect does not read an integer
 * there (why, when not NULL, gets a one-line reason naming no value:
 * "not a number", "value too great for base", "unbound variable NAME"),
 * or a negative errno from fn. fn may be NULL (names are then unbound). */
int dialect_int(enum dialect d, const char *s, size_t len, envfs_lookup_fn fn, void *ctx,
		long long *out, char *why, size_t whylen);

#endif

/* names: what a backend directory, an arch directory and an override may
 * be called. One set for every place a name enters or leaves: the spec
 * loader and --extra-arch (which make the directories), the mount's writes
 * (which make overrides) and the --sync key reader (which takes them from
 * other nodes), so a write one node acknowledges is one every node takes.
 *
 * A backend is [A-Za-z0-9_][A-Za-z0-9_.-]*; an arch may also hold ':'
 * and '+' after its first byte (AMD target IDs: gfx90a:xnack+,
 * gfx942:sramecc+:xnack-) and is never "host" (the symlink beside the
 * arches). Both are at most NAMES_DIR_MAX bytes. Nothing a shell, a
 * terminal or a path gives a meaning to ('/', blanks, quotes, '$',
 * control bytes) is in either set. An override's variable is
 * [A-Za-z_][A-Za-z0-9_]*, at most NAMES_VAR_MAX bytes. */
#ifndef ENVFS_NAMES_H
#define ENVFS_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define NAMES_DIR_MAX 64
#define NAMES_VAR_MAX 255    /* a file name (NAME_MAX) */
/* BACKEND/ARCH/NAME at its longest. */
#define NAMES_KEY_MAX (NAMES_DIR_MAX + 1 + NAMES_DIR_MAX + 1 + NAMES_VAR_MAX)

/* Why s (len bytes) cannot name a backend (arch false) or an arch
 * directory: a static phrase to follow the name in a message ("is
 * empty", "holds '$' (allowed: …)"), or NULL when it can. */
const char *names_dir_problem(const char *s, size_t len, bool arch);
/* True when an override of backend/arch/name can be written through the
 * mount and shared: every part is in its set. */
bool names_override_ok(const char *backend, const char *arch, const char *name);

/* True when g is a glob of variable names: [A-Za-z0-9_] and the
 * wildcards * ? [ ] ! - (fnmatch(3)), not empty. A secret pattern or a
 * --secret is one. */
bool names_glob_ok(const char *g);
/* True when name (NUL-terminated) matches one of the n globs. */
bool names_glob_any(char *const *globs, size_t n, const char *name);

/* Globs made ready to be tested against many names: each glob's shape is
 * found once instead of at every name (a 10,000-variable resolve tests
 * every name against every secret pattern). The same answers as
 * names_glob_any. */
struct names_glob_set {
	struct names_glob *v;
	size_t n;
};
/* Sets *set to the n globs, borrowed: they must outlive it. Returns 0 or
 * -ENOMEM; the set is caller-owned (names_glob_set_release()) either way. */
int names_glob_set_init(struct names_glob_set *set, char *const *globs, size_t n);
void names_glob_set_release(struct names_glob_set *set);
/* True when name (len bytes, NUL-terminated there) matches a glob of set. */
bool names_glob_set_any(const struct names_glob_set *set, const char *name, size_t len);

#endif

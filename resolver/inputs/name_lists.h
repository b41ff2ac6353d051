/* name_lists: the environment variable names the stack's readers read, and
 * the flag names XLA defines, as shipped under specs/names/.
 *
 * One file per reader (nccl.txt, hip.txt, ...): '#' header lines naming
 * the public source, the reader's prefixes ("# prefixes: NCCL_") and,
 * for a reader only some backends run, those backends ("# backends:
 * maxtext maxdiffusion"); then one name a line. xla_flags.txt has one
 * flag a line, its name without "--" and its kind ("bool" or "value").
 * Loaded once with the specs and looked up by binary search. */
#ifndef ENVFS_NAME_LISTS_H
#define ENVFS_NAME_LISTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"

#define NAMES_MAX_READERS 32

struct names_reader {
	char *file;                /* "nccl.txt" */
	char *title;               /* the "# reader:" text, or the file */
	char **prefixes;
	size_t nprefixes;
	char **backends;           /* empty: every backend runs it */
	size_t nbackends;
};

struct names_entry {
	char *name;
	uint32_t readers;          /* bit k: readers[k] reads it */
	uint64_t mask;             /* text_char_mask() of the name */
};

struct xla_flag {
	char *name;                /* without the leading "--" */
	bool boolean;
	uint64_t mask;             /* text_char_mask() of the name */
};

/* A name anything known reads (the lists, the catalog, the specs), for
 * suggestions: borrowed from the lists or the spec set. */
struct names_known {
	const char *name;
	uint32_t len;
	/* names_fold_mask(text_char_mask()) of the name: 16 bytes an entry,
	 * as the index holds every spec's names too (12,000 at 10,000
	 * variables, all alive in the daemon). */
	uint32_t mask;
};

/* A character mask (text_char_mask) folded to 32 bits: characters c and
 * c + 32 share a bit. Still a bound on an edit distance (a fold never
 * makes two names' masks differ more), only a weaker one. */
static inline uint32_t names_fold_mask(uint64_t m)
{
	return (uint32_t)(m | m >> 32);
}

struct names {
	struct names_reader readers[NAMES_MAX_READERS];
	size_t nreaders;
	struct names_entry *v;     /* sorted by name, distinct */
	size_t n;
	struct xla_flag *flags;    /* sorted by name, distinct */
	size_t nflags;
	struct names_known *known; /* every known name once, sorted by length
	                              (names_index) */
	size_t nknown;
};

/* Loads every *.txt of dir. A missing dir gives an empty set (no name
 * checks); a file that cannot be read or a malformed line is an error
 * diagnostic with file:line and -EINVAL (the rest still loads). *out is
 * caller-owned, freed with names_free(), and set unless -ENOMEM. */
int names_load_dir(const char *dir, struct names **out, struct diag_list *diags);
void names_free(struct names *n);
struct spec_set;
/* Builds n->known from the lists and set's catalog and specs (set must
 * outlive n's use of them: the spec set owns n). Returns 0 or -ENOMEM. */
int names_index(struct names *n, const struct spec_set *set);
/* The known names whose length is within [lo, hi]: *first and the count. */
size_t names_known_by_length(const struct names *n, size_t lo, size_t hi, size_t *first);

/* Borrowed lookups (NULL when absent). */
const struct names_entry *names_find(const struct names *n, const char *name, size_t len);
const struct xla_flag *names_xla_flag(const struct names *n, const char *name, size_t len);
/* True when reader k runs in backend's directories. */
bool names_reader_runs(const struct names *n, size_t k, const char *backend);
/* The reader whose prefix name carries (longest prefix), or NULL. */
const struct names_reader *names_prefix_reader(const struct names *n, const char *name);

#endif

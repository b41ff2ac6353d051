/* hostlist: Slurm's compressed host lists, expanded as Slurm 22.05's
 * `scontrol show hostnames` expands them.
 *
 *   node[01-04,07],gpu-a[1-2]  ->  node01 node02 node03 node04 node07 gpu-a1 gpu-a2
 *
 * Items are separated by commas outside brackets (and by blanks); empty
 * items are skipped. An item without '[' is one name. Otherwise it is a
 * prefix and one or more bracket groups, with text between groups and
 * nothing after the last one (Slurm refuses "a[1-2]b"). A group is a
 * comma list of N or N-M (M >= N, at most 65,536 names; "N-" is N);
 * each number keeps the width its lower bound is written with
 * (node[08-10] gives node08 node09 node10). Several groups multiply, in
 * Slurm's order: the last group varies fastest, then the first, the
 * second, and so on (a[1-2]b[3-4]c[5-6] starts a1b3c5 a1b3c6 a2b3c5).
 * Duplicates stay. Anything else (an unbalanced bracket, a blank or a
 * sign inside one, a range downwards) is refused, where Slurm prints
 * "Invalid hostlist" or a name no node has. */
#ifndef ENVFS_HOSTLIST_H
#define ENVFS_HOSTLIST_H

#include <stddef.h>

/* At most this many names from one expression. */
#define HOSTLIST_MAX_NAMES (1u << 20)

struct hostlist {
	char **names;
	size_t n;
	size_t cap;                    /* of names, grown by doubling */
};

/* Expands expr. Returns 0; -EINVAL when expr is not a host list, with
 * *why (static) saying why; -E2BIG past HOSTLIST_MAX_NAMES; -ENOMEM.
 * out is filled only on success and released with hostlist_release(). */
int hostlist_expand(const char *expr, struct hostlist *out, const char **why);
void hostlist_release(struct hostlist *hl);

#endif

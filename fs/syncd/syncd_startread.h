/* syncd_startread: which answer a node's start-up read of the run's
 * overrides takes (pure, no etcd; syncd.c and tests/bench/sync_nodes.c).
 *
 * A mount promises that its first read shows every write etcd
 * acknowledged before it started (docs/SYNC.md). A linearizable read
 * keeps that promise by a round through the leader (ReadIndex), which
 * 1,024 mounts starting together queue up on until their reads time out.
 * A serializable read is the member's own store, as of what that member
 * applied; it keeps the promise when that store holds a write this mount
 * made after it started (the node name's claim): every write acknowledged
 * before has a lower revision. So the read is the member's own first and
 * is taken when its revision is at least the claim's; a member behind it
 * is asked again a moment later, and after STARTREAD_BEHIND_TRIES such
 * answers the read goes through the leader. */
#ifndef ENVFS_SYNCD_STARTREAD_H
#define ENVFS_SYNCD_STARTREAD_H

#include <stdbool.h>
#include <stdint.h>

/* Serializable answers behind the floor before a linearizable read. */
#define STARTREAD_BEHIND_TRIES 2
/* The wait after an answer behind the floor: a random part of this (a
 * member is behind by the moment it takes to apply what it received). */
#define STARTREAD_BEHIND_WAIT_MS 200u

struct start_read {
	int64_t floor;      /* the claim's revision; 0: unknown (linearizable) */
	unsigned behind;    /* answers behind floor so far */
};

/* A start-up read that must show the writes below floor. */
void start_read_init(struct start_read *s, int64_t floor);
/* Whether the next read is to be serializable. */
bool start_read_serializable(const struct start_read *s);
/* After a read that returned err (0: an answer as of revision rev):
 * 0 to take it; 1 when it was serializable and its member behind the
 * floor (a lower revision, or -ERANGE: a later page asked a revision the
 * member has not applied yet): read again after *wait_ms (seed: rand_r
 * state); else err, for the caller's own retries. */
int start_read_check(struct start_read *s, int err, int64_t rev, unsigned *seed,
		     unsigned *wait_ms);

#endif

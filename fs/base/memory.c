/* Allocator policy of the daemon; see memory.h. */
#include <malloc.h>

#include "memory.h"

void memory_policy_init(void)
{
	/* One arena for every thread. FUSE handlers run on a pool of worker
	 * threads, and with per-thread arenas a view rendered on one worker
	 * and freed on another leaves its pages in an arena nobody reuses
	 * soon: at 10,000 variables that was several MB of resident garbage.
	 * Handlers allocate little (a value copy per writable open), so the
	 * shared arena's lock is not a hot spot. */
	mallopt(M_ARENA_MAX, 1);
	/* A fixed threshold (this also turns off glibc's dynamic one, which
	 * rises to the largest mmapped block ever freed): buffers of 128 KiB
	 * and more (rendered views, the spec file, growing strbufs) get their
	 * own mapping and go back to the kernel the moment they are freed,
	 * instead of leaving holes in the heap. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	/* Give the top of the heap back as soon as 128 KiB of it are free. */
	mallopt(M_TRIM_THRESHOLD, 128 * 1024);
}

void memory_policy_short_lived(void)
{
	/* A one-shot command frees everything before it exits (so leak
	 * checkers see no leak), but each time the top of the heap fell
	 * 128 KiB below its peak (the catalog's YAML tree freed, then the
	 * world) glibc gave it back with brk() and the next allocations
	 * faulted fresh zeroed pages in again. Nothing is worth returning
	 * in a process about to exit. */
	mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);
	/* The same for the blocks of 128 KiB and more (a file read whole,
	 * the arrays of a 10,000-variable spec as they grow): each was its
	 * own mapping, unmapped when freed, so its successor faulted every
	 * page in again. From the heap they reuse what the last one freed: a
	 * tenth of a 10,000-variable resolve's time was those faults
	 * (docs/PERFORMANCE.md). 32 MiB is the most glibc takes. */
	mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
}

void memory_release_freed(void)
{
	/* Free pages in the middle of the heap (a generation's many small
	 * allocations) are not returned by free(); malloc_trim() madvises
	 * them away, so the next peak starts from what is really live. */
	malloc_trim(0);
}

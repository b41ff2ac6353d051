/* Helpers shared by the libFuzzer harnesses: a fake variable lookup and a
 * pass over diagnostics, so formatting code runs on hostile text too. */
#ifndef ENVFS_FUZZ_COMMON_H
#define ENVFS_FUZZ_COMMON_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "diag.h"
#include "strbuf.h"

/* Deterministic by name, so a finding replays: names starting with L are
 * in a cycle, with U unset, with E fail; the rest get one of a few values
 * chosen to hit integer edges and nested syntax. */
static inline int fuzz_lookup(void *ctx, const char *name, size_t len,
			      const char **val, size_t *val_len)
{
	static const char *const values[] = {
		"", "0", "1", "8", "-3", "1024", "1025", "abc", " 7",
		"9223372036854775807", "99999999999999999999", "${X}", "$(indices N)",
	};
	uint32_t h = 2166136261u;
	size_t i;

	(void)ctx;
	if (!len)
		return 0;
	if (name[0] == 'L')
		return -ELOOP;
	if (name[0] == 'U')
		return 0;
	if (name[0] == 'E')
		return -EIO;
	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	*val = values[h % (sizeof(values) / sizeof(values[0]))];
	*val_len = strlen(*val);
	return 1;
}

/* The expansion engine's bounds, as findings (issue 14.7): a fuzzed
 * expansion gets a small output limit so the fuzzer reaches it, and the
 * lookups it makes are counted. Any output past the limit is a finding,
 * and so is work that grows faster than the input: every name in a
 * template is read once, and one read in bash arithmetic may read the
 * names in the value it finds down to the arithmetic depth limit (32), so
 * more than 64 lookups per input byte means the engine went superlinear. */
#define FUZZ_EXPAND_MAX 4096

struct fuzz_work {
	size_t lookups;
};

/* fuzz_lookup, counting into ctx (a struct fuzz_work). */
static inline int fuzz_counting_lookup(void *ctx, const char *name, size_t len,
				       const char **val, size_t *val_len)
{
	((struct fuzz_work *)ctx)->lookups++;
	return fuzz_lookup(NULL, name, len, val, val_len);
}

/* Aborts (a finding) when an expansion of an input of in_len bytes wrote
 * more than FUZZ_EXPAND_MAX bytes or did superlinear work. */
static inline void fuzz_check_expansion(size_t in_len, const struct strbuf *out,
					const struct fuzz_work *w)
{
	if (out->len > FUZZ_EXPAND_MAX || w->lookups > 64 * (in_len + 1))
		__builtin_trap();
}

/* Formats every diagnostic (as check and the mount's diagnostics file do). */
static inline void fuzz_format_diags(const struct diag_list *l)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < l->n; i++) {
		sb_reset(&sb);
		if (diag_format(&l->v[i], &sb) < 0)
			break;
	}
	sb_release(&sb);
}

#endif

/* offline_history: noting an offline change; see offline_history.h. */
#include "offline_history.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "history_disk.h"
#include "history_file.h"
#include "statefile.h"
#include "strbuf.h"

/* How many generations buf holds: its "gen " lines. */
static size_t count_gens(const char *buf, size_t len)
{
	size_t n = 0;
	const char *p = buf, *end = buf + len;

	for (; p && p < end; p = memchr(p, '\n', (size_t)(end - p)), p = p ? p + 1 : NULL)
		n += (size_t)(end - p) >= 4 && !memcmp(p, "gen ", 4);
	return n;
}

int offline_history_note(const char *state_path, const struct snapshot *before,
			 const struct snapshot *after, enum hist_cause cause, char *msg,
			 size_t msglen)
{
	struct strbuf path = STRBUF_INIT, why = STRBUF_INIT, doc = STRBUF_INIT;
	struct history h = { 0 };
	struct hist_gen g = { .cause = cause };
	char *buf = NULL, phrase[256] = "";
	size_t len = 0, line = 0, keep;
	uint64_t last = 0;
	int err;

	if ((err = sb_addf(&path, "%s.history", state_path)) < 0)
		goto out;
	err = history_disk_read(sb_str(&path), &buf, &len, &why);
	if (err < 0 && err != -ENOENT) {
		snprintf(msg, msglen, "%s: %s", sb_str(&path),
			 why.len ? sb_str(&why) : strerror(-err));
		goto out;
	}
	/* All it keeps, and this one: a mount keeps its own last N. */
	keep = (buf ? count_gens(buf, len) : 0) + 1;
	if (keep < HISTORY_DEFAULT_KEEP)
		keep = HISTORY_DEFAULT_KEEP;
	if (keep > HISTORY_MAX_KEEP)
		keep = HISTORY_MAX_KEEP;
	if ((err = history_init(&h, keep)) < 0)
		goto out;
	if (buf && (err = history_file_parse(buf, len, &h, &line, phrase, sizeof(phrase))) < 0) {
		snprintf(msg, msglen, "%s:%zu: %s", sb_str(&path), line, phrase);
		goto out;
	}
	if (h.n)
		last = history_at(&h, h.n - 1)->generation;
	g.generation = last + 1;
	clock_gettime(CLOCK_REALTIME, &g.when);
	g.has_writer = true;
	g.uid = (uint32_t)getuid();
	g.pid = (int32_t)getpid();
	if ((err = hist_gen_compare(&g, before, after)) < 0)
		goto out;
	if (!g.nchanges)
		goto out;
	history_push(&h, &g);
	if ((err = history_file_render(&h, &doc)) < 0 ||
	    (err = statefile_write(sb_str(&path), &doc)) < 0)
		snprintf(msg, msglen, "%s: %s", sb_str(&path), strerror(-err));
out:
	if (err == -ENOMEM)
		snprintf(msg, msglen, "%s", strerror(ENOMEM));
	hist_gen_release(&g);
	history_release(&h);
	free(buf);
	sb_release(&path);
	sb_release(&why);
	sb_release(&doc);
	return err;
}

/* status: the text of MOUNT/status and MOUNT/diagnostics.
 *
 *   $ cat /mnt/primus/status
 *   version: 0.1.0
 *   generation: 3
 *   last_error: none
 *   digest maxtext/gfx950 6f1c…
 *
 * Rendered once per load into the epoch, so every open sees one state;
 * the request counters (counters.h) are live and appended per read:
 *   requests lookup 14
 *   ...
 *   requests status 3 */
#ifndef ENVFS_STATUS_H
#define ENVFS_STATUS_H

#include "diag.h"
#include "envfs.h"
#include "epoch.h"
#include "strbuf.h"

/* Appends the status of e (its digests, generation and times) and of the
 * daemon (inputs, override count); last_error is the reason the latest
 * load failed, or NULL. Returns 0 or -ENOMEM. */
int status_render(struct envfs *fs, const struct epoch *e,
		  const char *last_error, struct strbuf *out);
/* Appends "key: TIME\n", ISO 8601 UTC with milliseconds (two hosts
 * compare these by eye). 0 or -ENOMEM. */
int status_add_time(struct strbuf *out, const char *key, const struct timespec *ts);
/* *out: e's status text followed by the registered parts
 * (status_parts.h: the sync lines, the request counters) as they are
 * now (one reference, caller-owned). Returns 0 or -ENOMEM. */
int status_live(struct envfs *fs, const struct epoch *e, struct blob **out);
/* Appends the diagnostics file: one "file:line:col: severity: message"
 * line per diagnostic of the inputs (load), then per diagnostic of e's
 * directories (each snapshot's past its first load->n, which are the
 * inputs' own), each once with " [DIR ...]" or " [every directory]"
 * naming where it applies (report.h). e may be NULL (a load that failed:
 * its reasons only). Returns 0 or -ENOMEM. */
int diagnostics_render(const struct diag_list *load, const struct epoch *e,
		       struct strbuf *out);

#endif

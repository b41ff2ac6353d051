/* report: diagnostics gathered over many directories, each listed once
 * with the directories it was found in, for `check` and the mount's
 * `diagnostics` file.
 *
 *   exp.yaml:4:27: warning: unquoted value 0.960 ... [maxtext/gfx942 maxtext/gfx950]
 *   specs/base.yaml:3:1: error: ...                   (an input's: no label)
 */
#ifndef ENVFS_REPORT_H
#define ENVFS_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "hindex.h"
#include "strbuf.h"

struct report_entry {
	struct diag d;             /* owned copy */
	char *text;                /* diag_format() of d; owned */
	size_t *dirs;              /* indices into report.dirs, ascending */
	size_t ndirs, cap;
};

struct report {
	struct report_entry *v;    /* first-seen order */
	size_t n, cap;
	char **dirs;               /* "backend/arch" labels, in order added */
	size_t ndirs;
	struct hindex index;       /* of v by text */
};

#define REPORT_INIT { 0 }

/* The counts report_text and report_json keep: per severity, and the
 * silenced ones apart (counted in no severity). */
enum { REPORT_SILENCED = DIAG_ERROR + 1, REPORT_NCOUNTS };

/* Adds the diagnostics of l from number first on. With backend and arch
 * they are that directory's (each added directory counts once, in the
 * order given); without, they belong to the inputs and get no label. A
 * diagnostic already in r only gains the directory. Returns 0 or -ENOMEM. */
int report_add(struct report *r, const struct diag_list *l, size_t first,
	       const char *backend, const char *arch);
/* One line per entry at or above min: its text, then " [DIR DIR ...]", or
 * " [every directory]" when it was found in each of two or more added
 * directories. A silenced entry is a line (its text says silenced) only
 * with silenced; counts[sev] or counts[REPORT_SILENCED] grows per entry
 * when counts is not NULL. */
int report_text(const struct report *r, enum diag_sev min, bool silenced,
		struct strbuf *out, size_t counts[REPORT_NCOUNTS]);
/* A JSON array, one object per diagnostic and directory at or above min:
 * {"severity", "code", "silenced", "file", "line", "column", "directory",
 * "message"}, with null for what a diagnostic does not have (an input's
 * directory). */
int report_json(const struct report *r, enum diag_sev min, struct strbuf *out,
		size_t counts[REPORT_NCOUNTS]);
void report_release(struct report *r);

#endif

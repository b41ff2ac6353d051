/* diag: diagnostics with severity and place (file:line:col).
 * Every loader and rule reports through a diag_list instead of printing,
 * so `check`, `explain`, `status` and `diagnostics` show the same text. */
#ifndef ENVFS_DIAG_H
#define ENVFS_DIAG_H

#include <stdarg.h>
#include <stddef.h>

#include <stdbool.h>

#include "diag_codes.h"
#include "strbuf.h"

struct diag {
	enum diag_code code;
	enum diag_sev sev;  /* the code's, from the table */
	bool silenced;      /* by --ignore, ignore= or a config comment:
	                       shown as silenced, counted nowhere */
	char *file;     /* NULL when the diagnostic has no place */
	unsigned line;  /* 1-based; 0 when unknown */
	unsigned col;   /* 1-based; 0 when unknown */
	char *msg;
};

struct diag_list {
	struct diag *v;
	size_t n, cap;
};

#define DIAG_LIST_INIT { NULL, 0, 0 }

/* Appends a diagnostic of code (its severity is the code's); file is
 * copied. Returns 0 or -ENOMEM. */
int diag_add(struct diag_list *l, enum diag_code code, const char *file,
	     unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
int diag_vadd(struct diag_list *l, enum diag_code code, const char *file,
	      unsigned line, unsigned col, const char *fmt, va_list ap);
/* Replaces every occurrence of the len bytes at val in the messages of l
 * by <redacted>: a secret's value, whichever path put it there. Returns
 * 0 or -ENOMEM. */
int diag_scrub(struct diag_list *l, const char *val, size_t len);
/* Appends copies of every diagnostic of src. */
int diag_extend(struct diag_list *dst, const struct diag_list *src);
/* The same from src's diagnostic number first on (a snapshot's own, past
 * the load-time ones it starts with). */
int diag_extend_from(struct diag_list *dst, const struct diag_list *src, size_t first);
/* Appends "file:line:col: severity: message [PE123]" (no newline);
 * "[PE123, silenced]" for a silenced one. */
int diag_format(const struct diag *d, struct strbuf *out);
/* Highest severity of the diagnostics not silenced, or -1 when there
 * are none. */
int diag_max_sev(const struct diag_list *l);
/* The diagnostics of severity sev that are not silenced. */
size_t diag_count(const struct diag_list *l, enum diag_sev sev);
size_t diag_count_silenced(const struct diag_list *l);
const char *diag_sev_name(enum diag_sev sev);
/* Drops the diagnostics added after the first n (a load started over). */
void diag_truncate(struct diag_list *l, size_t n);
void diag_list_release(struct diag_list *l);

/* What is silenced: codes everywhere (--ignore, ignore=) and codes on one
 * line of one file (a config line's "# primus-envfs: ignore=" comment). */
struct diag_silence_line {
	char *file;
	unsigned line;
	enum diag_code code;
};

struct diag_silence {
	bool code[DIAG_NCODES];
	struct diag_silence_line *lines;
	size_t nlines;
};

#define DIAG_SILENCE_INIT { { false }, NULL, 0 }

int diag_silence_add_code(struct diag_silence *si, enum diag_code code);
/* file is copied. Returns 0 or -ENOMEM. */
int diag_silence_add_line(struct diag_silence *si, const char *file, unsigned line,
			  enum diag_code code);
/* Copies every entry of src into dst. Returns 0 or -ENOMEM. */
int diag_silence_extend(struct diag_silence *dst, const struct diag_silence *src);
/* Marks silenced the diagnostics of l from number first on that si names. */
void diag_silence_apply(const struct diag_silence *si, struct diag_list *l, size_t first);
void diag_silence_release(struct diag_silence *si);

#endif

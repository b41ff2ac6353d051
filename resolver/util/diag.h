/* diag: diagnostics with severity and place (file:line:col).
 * Every loader and rule reports through a diag_list instead of printing,
 * so `check`, `explain`, `status` and `diagnostics` show the same text. */
#ifndef ENVFS_DIAG_H
#define ENVFS_DIAG_H

#include <stdarg.h>
#include <stddef.h>

#include "strbuf.h"

enum diag_sev { DIAG_INFO = 0, DIAG_WARNING = 1, DIAG_ERROR = 2 };

struct diag {
	enum diag_sev sev;
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

/* Appends a diagnostic; file is copied. Returns 0 or -ENOMEM. */
int diag_add(struct diag_list *l, enum diag_sev sev, const char *file,
	     unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
int diag_vadd(struct diag_list *l, enum diag_sev sev, const char *file,
	      unsigned line, unsigned col, const char *fmt, va_list ap);
/* Appends copies of every diagnostic of src. */
int diag_extend(struct diag_list *dst, const struct diag_list *src);
/* The same from src's diagnostic number first on (a snapshot's own, past
 * the load-time ones it starts with). */
int diag_extend_from(struct diag_list *dst, const struct diag_list *src, size_t first);
/* Appends "file:line:col: severity: message" (no newline). */
int diag_format(const struct diag *d, struct strbuf *out);
/* Highest severity present, or -1 when the list is empty. */
int diag_max_sev(const struct diag_list *l);
size_t diag_count(const struct diag_list *l, enum diag_sev sev);
const char *diag_sev_name(enum diag_sev sev);
/* Drops the diagnostics added after the first n (a load started over). */
void diag_truncate(struct diag_list *l, size_t n);
void diag_list_release(struct diag_list *l);

#endif

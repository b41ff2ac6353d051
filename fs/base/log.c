/* The daemon's messages; see log.h. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

static atomic_bool detached;

/* systemd names the journal stream it gave as stderr; a line written there
 * may open with "<N>", which the journal takes as the line's level and
 * strips. Anywhere else (a terminal, a test's file) the bytes stay bare.
 * Asked at each message: they are rare, and stderr may be moved. */
static bool stderr_is_journal(void)
{
	const char *v = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return v && sscanf(v, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* text: the whole message; named: prefix it with the program's name and
 * end it (else it is a line already). One fprintf, so one write(2): lines
 * of several threads never interleave. */
static void emit(int level, const char *text, bool named)
{
	char lv[8] = "";
	size_t len = strlen(text);

	if (atomic_load(&detached)) {
		if (!named && len && text[len - 1] == '\n')
			len--;
		syslog(level, "%.*s", (int)len, text);
		return;
	}
	if (stderr_is_journal())
		snprintf(lv, sizeof(lv), "<%d>", level & LOG_PRIMASK);
	if (named)
		fprintf(stderr, "%sprimus-envfs: %s\n", lv, text);
	else
		fprintf(stderr, "%s%s", lv, text);
}

/* Formats into the stack, or the heap for a long message; out of memory,
 * the message is cut rather than lost. */
static void format_and_emit(int level, bool named, const char *fmt, va_list ap)
{
	char stack[512], *heap = NULL;
	const char *text = stack;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(stack, sizeof(stack), fmt, again);
	va_end(again);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(stack) && (heap = malloc((size_t)n + 1)) &&
	    vsnprintf(heap, (size_t)n + 1, fmt, ap) >= 0)
		text = heap;
	emit(level, text, named);
	free(heap);
}

void log_vmsg(int level, const char *fmt, va_list ap)
{
	format_and_emit(level, true, fmt, ap);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	format_and_emit(level, true, fmt, ap);
	va_end(ap);
}

void log_vline(int level, const char *fmt, va_list ap)
{
	format_and_emit(level, false, fmt, ap);
}

void log_to_syslog(void)
{
	openlog("primus-envfs", LOG_PID, LOG_DAEMON);
	atomic_store(&detached, true);
}

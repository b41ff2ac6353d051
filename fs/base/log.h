/* log: the one way the mounted daemon says something while it runs.
 *
 * In the foreground (-f), and until a daemonized mount detaches, a message
 * is one line on stderr, "primus-envfs: " and the text: the terminal, or
 * under systemd the journal, which reads a foreground daemon's stderr.
 * Once detached the daemon's stdio is /dev/null, so from then on the same
 * text goes to syslog(3), facility daemon, ident primus-envfs, with the
 * pid. The levels are syslog's (LOG_ERR, LOG_WARNING, LOG_NOTICE).
 *
 *   $ primus-envfs --config exp.yaml /mnt/primus   # then a broken edit:
 *   $ journalctl -t primus-envfs   # exp.yaml:4:1: error: YAML syntax ...
 *
 * The commands that print and exit (resolve, check, ...) and the option
 * parsing write to stderr themselves: they never detach. Thread-safe. */
#ifndef ENVFS_LOG_H
#define ENVFS_LOG_H

#include <stdarg.h>
#include <syslog.h>

/* One message, without the program's name and the final newline. */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(int level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* A line already worded in full, ending in its newline (libfuse's own
 * messages: "fuse: ..."): written to stderr as it is. */
void log_vline(int level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)

/* The daemon detaches: every later message goes to syslog. Call before
 * stdio goes to /dev/null, so no message falls between the two. */
void log_to_syslog(void);

#endif

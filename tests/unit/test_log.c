/* The daemon's log (fs/base/log.c): in the foreground the exact bytes the
 * tests and users read on stderr, a level prefix only on systemd's journal
 * stream, and nothing on stderr once detached. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"

static FILE *capture;
static int saved_stderr = -1;

/* fd 2 goes to a fresh temporary file for the test. */
static int capture_setup(void **state)
{
	(void)state;
	fflush(stderr);
	if (!(capture = tmpfile()) || (saved_stderr = dup(STDERR_FILENO)) < 0 ||
	    dup2(fileno(capture), STDERR_FILENO) < 0)
		return -1;
	return 0;
}

static int capture_teardown(void **state)
{
	(void)state;
	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	fclose(capture);
	unsetenv("JOURNAL_STREAM");
	return 0;
}

/* What fd 2 got; caller frees. */
static char *captured(void)
{
	long n;
	char *s;

	fflush(stderr);
	fseek(capture, 0, SEEK_END);
	n = ftell(capture);
	rewind(capture);
	assert_non_null(s = calloc(1, (size_t)n + 1));
	assert_int_equal(fread(s, 1, (size_t)n, capture), (size_t)n);
	return s;
}

static void foreground_line_has_the_name_and_a_newline(void **state)
{
	char *got;

	(void)state;
	log_err("cannot watch %s: %s", "/etc/primus", "No such file or directory");
	log_notice("--sync: node %s applies the run's changes again", "n1");
	got = captured();
	assert_string_equal(got, "primus-envfs: cannot watch /etc/primus: No such file or directory\n"
				 "primus-envfs: --sync: node n1 applies the run's changes again\n");
	free(got);
}

static void long_message_is_whole(void **state)
{
	char big[3001], *got, *want;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_warn("the inputs did not load: %s; still serving generation %d", big, 7);
	got = captured();
	assert_true(asprintf(&want, "primus-envfs: the inputs did not load: %s; still serving "
			     "generation 7\n", big) > 0);
	assert_string_equal(got, want);
	free(want);
	free(got);
}

static void vline(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void vline(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(level, fmt, ap);
	va_end(ap);
}

static void worded_line_is_written_as_it_is(void **state)
{
	char *got;

	(void)state;
	vline(LOG_ERR, "fuse: %s\n", "bad mount point `/x': No such file or directory");
	got = captured();
	assert_string_equal(got, "fuse: bad mount point `/x': No such file or directory\n");
	free(got);
}

static void journal_stream_gets_the_level(void **state)
{
	struct stat st;
	char v[64], *got;

	(void)state;
	assert_int_equal(fstat(STDERR_FILENO, &st), 0);
	/* Another file's stream: bare bytes. */
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", v, 1);
	log_err("a");
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", v, 1);
	log_err("b");
	log_warn("c");
	log_notice("d");
	got = captured();
	assert_string_equal(got, "primus-envfs: a\n<3>primus-envfs: b\n<4>primus-envfs: c\n"
				 "<5>primus-envfs: d\n");
	free(got);
}

/* Last: the switch cannot be undone. */
static void detached_says_nothing_on_stderr(void **state)
{
	char *got;

	(void)state;
	log_to_syslog();
	log_err("to syslog, not to stderr");
	vline(LOG_ERR, "fuse: %s\n", "neither");
	got = captured();
	assert_string_equal(got, "");
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(foreground_line_has_the_name_and_a_newline,
						capture_setup, capture_teardown),
		cmocka_unit_test_setup_teardown(long_message_is_whole, capture_setup,
						capture_teardown),
		cmocka_unit_test_setup_teardown(worded_line_is_written_as_it_is, capture_setup,
						capture_teardown),
		cmocka_unit_test_setup_teardown(journal_stream_gets_the_level, capture_setup,
						capture_teardown),
		cmocka_unit_test_setup_teardown(detached_says_nothing_on_stderr, capture_setup,
						capture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The INPUTS table (fs/cli/inputs_table.h) against what users read: every
 * row's man-page line is in docs/primus-envfs.1 and every INPUTS line of
 * the man page is a row; every option is in the bash completion's list
 * and in --help; each -o name is the long name with '_' for '-'. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "inputs_table.h"

const char *inputs_help(void);

/* The whole of ENVFS_SOURCE_ROOT/rel, NUL-terminated; the caller frees. */
static char *slurp(const char *rel)
{
	const char *root = getenv("ENVFS_SOURCE_ROOT");
	char path[4096];
	char *buf;
	long n;
	FILE *f;

	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Whether text holds line as a whole line. */
static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return 1;
	return 0;
}

static void man_has_every_row(void **state)
{
	char *man = slurp("docs/primus-envfs.1");
	unsigned i;

	(void)state;
	for (i = 0; i < inputs_nrows; i++)
		if (!has_line(man, inputs_rows[i].man))
			fail_msg("the man page lacks the line of --%s: %s", inputs_rows[i].long_name,
				 inputs_rows[i].man);
	free(man);
}

/* The option lines of the man page's Inputs section (".B.. \-\-X ..."
 * with a [mount option] in brackets) are all rows. */
static void every_man_input_is_a_row(void **state)
{
	char *man = slurp("docs/primus-envfs.1");
	char *sec = strstr(man, ".SS Inputs (every command)");
	char *end, *line;
	unsigned seen = 0, i;

	(void)state;
	assert_non_null(sec);
	end = strstr(sec + 1, "\n.SS ");
	if (!end)
		end = strstr(sec + 1, "\n.SH ");
	assert_non_null(end);
	*end = '\0';
	for (line = sec; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		size_t n = strcspn(line, "\n");
		char one[512];
		int found = 0;

		if (strncmp(line, ".B", 2) || !memmem(line, n, "\\-\\-", 4) ||
		    !memmem(line, n, "[\\fP", 4) || n >= sizeof(one))
			continue;
		memcpy(one, line, n);
		one[n] = '\0';
		for (i = 0; i < inputs_nrows && !found; i++)
			found = !strcmp(one, inputs_rows[i].man);
		if (!found)
			fail_msg("the man page documents an input the table lacks: %s", one);
		seen++;
	}
	assert_int_equal(seen, inputs_nrows);
	free(man);
}

static void completion_offers_every_option(void **state)
{
	char *bash = slurp("system/primus-envfs.bash");
	char *list = strstr(bash, "local inputs=\"");
	char want[128];
	unsigned i;

	(void)state;
	assert_non_null(list);
	*strchr(list + 14, '"') = ' ';
	for (i = 0; i < inputs_nrows; i++) {
		snprintf(want, sizeof(want), " --%s ", inputs_rows[i].long_name);
		if (!strstr(list + 13, want) && strncmp(list + 14, want + 1, strlen(want) - 1))
			fail_msg("the bash completion does not offer --%s", inputs_rows[i].long_name);
	}
	free(bash);
}

static void help_and_mount_names(void **state)
{
	const char *help = inputs_help();
	char want[128];
	unsigned i, j;

	(void)state;
	for (i = 0; i < inputs_nrows; i++) {
		const struct inputs_row *r = &inputs_rows[i];

		snprintf(want, sizeof(want), "      --%s%s%s ", r->long_name, r->arg ? " " : "",
			 r->arg ? r->arg : "");
		if (!strstr(help, want))
			fail_msg("--help lacks %s", want);
		if (!r->mount_name)
			continue;
		assert_int_equal(strlen(r->mount_name), strlen(r->long_name));
		for (j = 0; r->long_name[j]; j++)
			assert_int_equal(r->mount_name[j],
					 r->long_name[j] == '-' ? '_' : r->long_name[j]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(man_has_every_row),
		cmocka_unit_test(every_man_input_is_a_row),
		cmocka_unit_test(completion_offers_every_option),
		cmocka_unit_test(help_and_mount_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

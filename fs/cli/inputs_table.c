/* inputs_table: the rows of inputs_table.h as data, and --help's INPUTS
 * part formatted from them. */
#include <stdio.h>
#include <string.h>

#include "inputs_table.h"

#define ROW_ARG(key, lng, mnt, arg, help, man) { lng, mnt, arg, help, man },
#define ROW_FLAG(key, lng, mnt, help, man) { lng, mnt, NULL, help, man },
#define ROW_ALT(lng, arg, help, man) { lng, NULL, arg, help, man },

const struct inputs_row inputs_rows[] = {
	INPUTS_TABLE(ROW_ARG, ROW_FLAG, ROW_ALT)
};
const unsigned inputs_nrows = sizeof(inputs_rows) / sizeof(inputs_rows[0]);

/* The column the help text starts in, as getopt-style tools align it;
 * an option too long for it gets two spaces instead. */
#define HELP_COLUMN 26

/* Appends "      --long ARG   help" and the help's further lines,
 * indented to HELP_COLUMN, to out (size n, at *len). */
static void format_row(const struct inputs_row *r, char *out, size_t n, size_t *len)
{
	const char *line = r->help;
	int w;

	w = snprintf(out + *len, n - *len, "      --%s%s%s", r->long_name, r->arg ? " " : "",
		     r->arg ? r->arg : "");
	if (w < 0 || (size_t)w >= n - *len)
		return;
	*len += (size_t)w;
	w = w + 2 <= HELP_COLUMN ? HELP_COLUMN - w : 2;
	for (;;) {
		size_t k = strcspn(line, "\n");
		int m = snprintf(out + *len, n - *len, "%*s%.*s\n", w, "", (int)k, line);

		if (m < 0 || (size_t)m >= n - *len)
			return;
		*len += (size_t)m;
		if (!line[k])
			return;
		line += k + 1;
		w = HELP_COLUMN;
	}
}

const char *inputs_help(void)
{
	static char text[4096];
	size_t len = 0;
	unsigned i;

	if (text[0])
		return text;
	len = (size_t)snprintf(text, sizeof(text), "INPUTS (every command):\n");
	for (i = 0; i < inputs_nrows; i++)
		format_row(&inputs_rows[i], text, sizeof(text), &len);
	return text;
}

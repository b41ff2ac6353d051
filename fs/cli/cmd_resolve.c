/* primus-envfs resolve: print one view of one <backend>/<arch> without a mount.
 * The bytes are those of the mount's file of the same name (same function). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "fdio.h"
#include "load.h"
#include "view.h"

/* Filled from the view table before the command line is read. */
static const char *formats[VIEW_COUNT + 1];

static const struct cli_cmd cmd = {
	.name = "resolve",
	.flags = CLI_DIR | CLI_DIR_REQUIRED | CLI_FORMAT | CLI_FORCE,
	.synopsis = "[INPUTS] -b BACKEND -a ARCH [--format FORMAT] [--force]",
	.help =
	"Print one view of BACKEND/ARCH: byte for byte the mount's file of that name.\n"
	"\n"
	CLI_DIR_HELP
	"      --format FORMAT     env_file (default), environ, sh (env.sh), json\n"
	"                          (env.json), compose (compose.env), explain, digest,\n"
	"                          record (the run record, as primus-envfs record)\n"
	"      --force             print even when an error says the environment is wrong\n"
	"                          (explain is always printed: it shows the errors)\n"
	"  -h, --help              print this help\n"
	"\n"
	"Exit status: 0 printed; 2 an input did not load, or an error diagnostic\n"
	"(printed on stderr) says the environment is wrong, and nothing was printed;\n"
	"64 the command line is wrong.\n",
	.formats = formats,
	.format_default = "env_file",
};

int cmd_resolve(int argc, char **argv)
{
	struct cli_args a;
	struct snapshot *s = NULL;
	struct strbuf out = STRBUF_INIT;
	enum view_kind kind;
	int rc;

	view_format_names(formats);
	if (!cli_start(&cmd, argc, argv, &a, &rc))
		goto out;
	if (view_from_name(a.format, &kind) < 0 && (rc = CLI_EX_USAGE))
		goto out;
	a.report_only = kind == VIEW_EXPLAIN || kind == VIEW_RECORD;
	if ((rc = resolve_one(&a, &s)) != 0)
		goto out;
	rc = 2;
	if (view_render(s, kind, &out) < 0) {
		fprintf(stderr, "primus-envfs: out of memory\n");
		goto out;
	}
	if (fd_write_all(STDOUT_FILENO, out.buf ? out.buf : "", out.len) < 0) {
		perror("primus-envfs: stdout");
		goto out;
	}
	rc = 0;
out:
	sb_release(&out);
	snapshot_unref(s);
	inputs_release(&a.ci);
	return rc;
}

/* primus-envfs: shows a training run's resolved environment as files.
 *
 *   primus-envfs --config exp.yaml /mnt/primus
 *   primus-envfs resolve -b maxtext -a gfx950 --format env_file */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "envfs_config.h"
#include "memory.h"

static const char usage[] =
	"usage: primus-envfs [INPUTS] [-f] [-o OPTS] MOUNTPOINT\n"
	"       primus-envfs resolve [INPUTS] -b BACKEND -a ARCH [--format FORMAT]\n"
	"       primus-envfs check [INPUTS] [-b BACKEND] [-a ARCH]\n"
	"       primus-envfs exec [INPUTS] -b BACKEND -a ARCH -- COMMAND [ARG...]\n"
	"       primus-envfs --help | --version\n"
	"\n"
	"INPUTS:\n"
	"  --specs DIR          spec directory (default: the shipped specs)\n"
	"  --config FILE        experiment YAML; its top-level env: block applies\n"
	"  --inherit FILE       image environment: docker env-file or NUL-separated environ (repeatable)\n"
	"  --pass NAME          copy NAME from this process's environment (repeatable)\n"
	"  --env NAME=VALUE     one-run setting, like the Primus CLI's --env (repeatable)\n"
	"  --arch NAME          show an extra arch directory (repeatable)\n"
	"  --state FILE         persist overrides written through the mount\n"
	"  --host-root DIR      read the node's sys/ and proc/ under DIR (default /)\n"
	"\n"
	"FORMAT: env_file environ sh json explain digest (default env_file)\n"
	"check exits 0 when clean, 1 with warnings, 2 with errors.\n"
	"Mount options (-o): ro, allow_other, entry_timeout=S, attr_timeout=S,\n"
	"  spin=US (poll for requests US microseconds after each; default 50, 0 off),\n"
	"  noinval (debug: no cache invalidation), and the usual FUSE options.\n"
	"-s answers every request on one thread (commits included).\n";

int main(int argc, char **argv)
{
	if (argc >= 2) {
		const char *c = argv[1];

		if (!strcmp(c, "--help") || !strcmp(c, "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!strcmp(c, "--version") || !strcmp(c, "-V")) {
			printf("primus-envfs %s\n", ENVFS_VERSION);
			return 0;
		}
		if (!strcmp(c, "resolve") || !strcmp(c, "check") || !strcmp(c, "exec"))
			memory_policy_short_lived();
		if (!strcmp(c, "resolve"))
			return cmd_resolve(argc - 1, argv + 1);
		if (!strcmp(c, "check"))
			return cmd_check(argc - 1, argv + 1);
		if (!strcmp(c, "exec"))
			return cmd_exec(argc - 1, argv + 1);
	}
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	return cmd_mount(argc, argv);
}

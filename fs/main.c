/* primus-envfs: shows a training run's resolved environment as files.
 *
 *   primus-envfs --config exp.yaml /mnt/primus
 *   primus-envfs resolve -b maxtext -a gfx950 --format env_file */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "envfs_config.h"
#include "memory.h"

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int, char **);
	} commands[] = {
		{ "resolve", cmd_resolve },
		{ "check", cmd_check },
		{ "exec", cmd_exec },
		{ "list", cmd_list },
		{ "verify", cmd_verify },
		{ "record", cmd_record },
		{ "diff", cmd_diff },
		{ "history", cmd_history },
		{ "set", cmd_set },
		{ "unset", cmd_unset },
		{ "get", cmd_get },
	};
	size_t k;

	/* mount(8) runs /sbin/mount.fuse.primus-envfs, a link to this
	 * binary, with its own calling convention. */
	if (argc > 0 && !strncmp(base_name(argv[0]), "mount.", 6))
		return cmd_mount(argc, argv, true);
	if (argc >= 2) {
		const char *c = argv[1];

		if (!strcmp(c, "--help") || !strcmp(c, "-h")) {
			envfs_print_usage(stdout);
			return 0;
		}
		if (!strcmp(c, "--version") || !strcmp(c, "-V")) {
			printf("primus-envfs %s\n", ENVFS_VERSION);
			return 0;
		}
		for (k = 0; k < sizeof(commands) / sizeof(commands[0]); k++) {
			if (!strcmp(c, commands[k].name)) {
				memory_policy_short_lived();
				return commands[k].run(argc - 1, argv + 1);
			}
		}
	}
	if (argc < 2) {
		envfs_print_usage(stderr);
		return CLI_EX_USAGE;
	}
	return cmd_mount(argc, argv, false);
}

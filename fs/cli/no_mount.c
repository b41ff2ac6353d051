/* The mount command of a build without FUSE (-Dfuse=disabled). */
#include <stdio.h>

#include "commands.h"

int cmd_mount(int argc, char **argv, bool as_helper)
{
	(void)argc;
	(void)argv;
	(void)as_helper;
	fprintf(stderr, "primus-envfs: this build has no mount (built with -Dfuse=disabled); "
		"resolve, check, exec and list work\n");
	return 2;
}

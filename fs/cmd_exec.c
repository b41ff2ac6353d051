/* placeholder until exec lands */
#include <stdio.h>
#include "commands.h"
int cmd_exec(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "primus-envfs: exec is not built yet\n");
	return 2;
}

/* commands: the subcommands of primus-envfs; each returns the exit status. */
#ifndef ENVFS_COMMANDS_H
#define ENVFS_COMMANDS_H

int cmd_resolve(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_exec(int argc, char **argv);
/* The default command: primus-envfs [INPUTS] [-f] [-o OPTS] MOUNTPOINT */
int cmd_mount(int argc, char **argv);

#endif

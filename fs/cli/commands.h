/* commands: the subcommands of primus-envfs; each takes its own argv
 * (argv[0] the command's name) and returns the exit status. */
#ifndef ENVFS_COMMANDS_H
#define ENVFS_COMMANDS_H

#include <stdbool.h>
#include <stdio.h>

int cmd_resolve(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_list(int argc, char **argv);
/* The run record of one directory (cmd_record.c). */
int cmd_record(int argc, char **argv);
/* Two environments side by side (cmd_diff.c): exit 0 equal, 1 differ,
 * 2 a side cannot be read. */
int cmd_diff(int argc, char **argv);
/* A mount's history of one directory (cmd_history.c). */
int cmd_history(int argc, char **argv);
/* The multi-node gate (cmd_verify.c): exit 0 equal, 1 a node differs, 2
 * nodes missing, 3 etcd cannot be reached. */
int cmd_verify(int argc, char **argv);
/* Overrides with every failure reported (cmd_override.c): exit 0 done, 1
 * refused or failed (nothing changed; get: not set), 2 inputs or mount
 * unusable, 3 outcome unknown (etcd unreachable), 64 usage. */
int cmd_set(int argc, char **argv);
int cmd_unset(int argc, char **argv);
int cmd_get(int argc, char **argv);
/* The default command, primus-envfs [INPUTS] [-f] [-o OPTS] [SOURCE]
 * MOUNTPOINT; as_helper: called as mount.fuse.primus-envfs by mount(8),
 * with its calling convention (SOURCE MOUNTPOINT [-sfnv] [-o OPTS]). */
int cmd_mount(int argc, char **argv, bool as_helper);
/* The top-level --help: the mount's options, the commands, INPUTS. */
void envfs_print_usage(FILE *to);

#endif

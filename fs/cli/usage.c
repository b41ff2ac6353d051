/* The program's usage (commands.h), printed by --help, by a command line
 * that names no command, and by the mount's own --help. */
#include <stdio.h>

#include "args.h"
#include "commands.h"
#include "sync_opts.h"

static const char usage[] =
	"usage: primus-envfs [INPUTS] [-f] [-s] [-d] [-o OPTS] [SOURCE] MOUNTPOINT\n"
	"       primus-envfs resolve [INPUTS] -b BACKEND -a ARCH [--format FORMAT] [--force]\n"
	"       primus-envfs check [INPUTS] [-b BACKEND] [-a ARCH] [--format text|json] [-q]\n"
	"       primus-envfs exec [INPUTS] -b BACKEND -a ARCH [--force] [--] COMMAND [ARG...]\n"
	"       primus-envfs list [INPUTS] [--format text|json]\n"
	"       primus-envfs verify --sync etcd://HOST:PORT --nodes N [--wait S] [SYNC]\n"
	"       primus-envfs record [INPUTS] -b BACKEND -a ARCH [-o FILE]\n"
	"       primus-envfs diff [INPUTS] [-b BACKEND -a ARCH] A [B] [-- INPUTS]\n"
	"       primus-envfs history --mount DIR BACKEND/ARCH [NAME] [--format text|json]\n"
	"       primus-envfs set|unset|get [--mount DIR | INPUTS --state FILE] BACKEND/ARCH NAME [VALUE]\n"
	"       primus-envfs --help | --version\n"
	"\n"
	"Mounts the resolved environment of every backend and arch as files, or,\n"
	"with a command, resolves without a mount. 'primus-envfs COMMAND --help'\n"
	"describes each command; ARCH may be host, the arch of this node's GPUs.\n"
	"\n"
	"Mount options:\n"
	"  -f                      stay in the foreground\n"
	"  -s                      answer every request on one thread\n"
	"  -d, --debug             print every FUSE request (implies -f)\n"
	"  -o OPTS                 comma-separated mount options: every INPUT as\n"
	"                          config=FILE, state=FILE, inherit=FILE, env=NAME=VALUE,\n"
	"                          env_file=FILE, pass=NAME, extra_arch=NAME, specs=DIR,\n"
	"                          host_root=DIR (the repeatable ones repeatable);\n"
	"                          every SYNC option as sync=, run=, sync_prefix=,\n"
	"                          sync_ca=, sync_cert=, sync_key=, sync_user=,\n"
	"                          sync_password_file=, sync_node=, sync_timeout=;\n"
	"                          ro, allow_other, entry_timeout=S, attr_timeout=S,\n"
	"                          spin=US, noinval; auto, noauto, user, users, nouser,\n"
	"                          _netdev, nofail, defaults are ignored (fstab's); the\n"
	"                          rest go to libfuse\n"
	"  SOURCE                  ignored (mount(8) and fstab give one: write none)\n"
	"\n"
	"%s"
	"\n"
	"%s"
	"\n"
	"Exit status of the mount: 0 unmounted cleanly; 1 the daemon failed while\n"
	"mounted; 2 the inputs did not load or the mount failed (nothing mounted);\n"
	"64 the command line is wrong.\n";

void envfs_print_usage(FILE *to)
{
	fprintf(to, usage, inputs_help(), sync_opts_help);
}

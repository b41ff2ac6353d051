/* sync_opts: the options that share a run's overrides through etcd
 * (docs/SYNC.md), for the mount and for `verify`:
 *
 *   --sync etcd://HOST:PORT[,HOST:PORT...]   -o sync=...
 *   --run ID                                 -o run=ID
 *   --sync-prefix P                          -o sync_prefix=P
 *   --sync-ca FILE, --sync-cert FILE, --sync-key FILE   (sync_ca=, ...)
 *   --sync-user NAME                         -o sync_user=NAME
 *   --sync-password-file FILE                -o sync_password_file=FILE
 *   --sync-node NAME                         -o sync_node=NAME
 *   --sync-timeout MS                        -o sync_timeout=MS
 *
 * The password comes from --sync-password-file or the variable
 * PRIMUS_ENVFS_SYNC_PASSWORD, never from the command line: --sync-password,
 * -o sync_password= and etcdctl's --sync-user USER:PASSWORD are refused
 * with a message. struct sync_opts is in fs/sync/sync_api.h (the module
 * takes it as it is). */
#ifndef ENVFS_SYNC_OPTS_H
#define ENVFS_SYNC_OPTS_H

#include <getopt.h>
#include <stdbool.h>

#include "sync_api.h"

/* getopt_long values of the sync options, apart from INPUTS' (0x100...). */
enum sync_key {
	SYNC_KEY_SYNC = 0x200,
	SYNC_KEY_RUN,
	SYNC_KEY_PREFIX,
	SYNC_KEY_CA,
	SYNC_KEY_CERT,
	SYNC_KEY_KEY,
	SYNC_KEY_USER,
	SYNC_KEY_PASSWORD_FILE,
	SYNC_KEY_NODE,
	SYNC_KEY_TIMEOUT,
	SYNC_KEY_PASSWORD,        /* refused: a password in argv */
	SYNC_KEY_END,
};

#define SYNC_IS_KEY(k) ((k) >= SYNC_KEY_SYNC && (k) < SYNC_KEY_END)

/* The entries of a getopt_long table for the sync options. */
#define SYNC_LONG_OPTIONS \
	{ "sync", required_argument, NULL, SYNC_KEY_SYNC }, \
	{ "run", required_argument, NULL, SYNC_KEY_RUN }, \
	{ "sync-prefix", required_argument, NULL, SYNC_KEY_PREFIX }, \
	{ "sync-ca", required_argument, NULL, SYNC_KEY_CA }, \
	{ "sync-cert", required_argument, NULL, SYNC_KEY_CERT }, \
	{ "sync-key", required_argument, NULL, SYNC_KEY_KEY }, \
	{ "sync-user", required_argument, NULL, SYNC_KEY_USER }, \
	{ "sync-password-file", required_argument, NULL, SYNC_KEY_PASSWORD_FILE }, \
	{ "sync-node", required_argument, NULL, SYNC_KEY_NODE }, \
	{ "sync-timeout", required_argument, NULL, SYNC_KEY_TIMEOUT }, \
	{ "sync-password", required_argument, NULL, SYNC_KEY_PASSWORD }

/* The mount-option name (-o NAME=VALUE) of each key, in key order from
 * SYNC_KEY_SYNC: "sync", "run", "sync_prefix", ... */
extern const char *const sync_opt_names[SYNC_KEY_END - SYNC_KEY_SYNC];

/* The --help lines of the sync options. */
extern const char sync_opts_help[];

/* Applies one sync option (key from SYNC_LONG_OPTIONS, its argument);
 * dashed says how it was written (--sync-x, or -o sync_x=), for
 * messages. --sync and -o sync= add endpoints (repeatable); the others
 * take the last one given. Returns 0, or -EINVAL after printing one line
 * naming the problem (the command exits 64). */
int sync_opts_take(struct sync_opts *so, int key, const char *arg, bool dashed);

/* Once every option is taken: without --sync, any other sync option is
 * an error; with it, fills the defaults (--run from $SLURM_JOB_ID, the
 * node from the host name, the prefix, the timeout), reads the password
 * (then removes PRIMUS_ENVFS_SYNC_PASSWORD from the environment, so
 * nothing the daemon starts or resolves sees it) and checks that the
 * named files can be read. Prints one line per problem and returns 0 or
 * a negative errno (-EINVAL: the command line, exit 64; else the file's
 * errno, exit 2). */
int sync_opts_finish(struct sync_opts *so);

/* Frees every string and wipes the password. */
void sync_opts_release(struct sync_opts *so);
/* True when s can be a node's name (what --sync-node takes): printable
 * ASCII without blanks or '/', not "." or "..", at most 253 bytes. */
bool sync_node_name_ok(const char *s);

#endif

/* Mount command-line parsing; see mount_opts.h. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "history.h"
#include "mount_opts.h"

static int bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "primus-envfs: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return -EINVAL;
}

static int parse_timeout(const char *opt, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0)
		return bad("-o %s: expected a number of seconds >= 0", opt);
	*out = v;
	return 0;
}

/* A whole number from 0 to max, digits only; what says what it counts. */
static int parse_unsigned(const char *opt, const char *s, unsigned long max, const char *what,
			  unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s < '0' || *s > '9' || v > max)
		return fprintf(stderr, "primus-envfs: -o %s: expected %s from 0 to %lu\n", opt,
			       what, max), -EINVAL;
	*out = (unsigned)v;
	return 0;
}

enum {
	KEY_RO = INPUTS_KEY_END,
	KEY_RW,
	KEY_ALLOW_OTHER,
	KEY_ENTRY_TIMEOUT,
	KEY_ATTR_TIMEOUT,
	KEY_SPIN,
	KEY_HISTORY,
};

/* The sync options' (sync_opts.h); sync= is repeatable, its endpoints
 * adding up, since a ',' inside one -o item would end it. */
#define SYNC_OPT(name, key) FUSE_OPT_KEY(name "=", key)

static const struct fuse_opt mount_opt_table[] = {
	INPUTS_FUSE_OPTS
	SYNC_OPT("sync", SYNC_KEY_SYNC),
	SYNC_OPT("run", SYNC_KEY_RUN),
	SYNC_OPT("sync_prefix", SYNC_KEY_PREFIX),
	SYNC_OPT("sync_ca", SYNC_KEY_CA),
	SYNC_OPT("sync_cert", SYNC_KEY_CERT),
	SYNC_OPT("sync_key", SYNC_KEY_KEY),
	SYNC_OPT("sync_user", SYNC_KEY_USER),
	SYNC_OPT("sync_password_file", SYNC_KEY_PASSWORD_FILE),
	SYNC_OPT("sync_node", SYNC_KEY_NODE),
	SYNC_OPT("sync_timeout", SYNC_KEY_TIMEOUT),
	SYNC_OPT("sync_password", SYNC_KEY_PASSWORD),
	FUSE_OPT_KEY("entry_timeout=", KEY_ENTRY_TIMEOUT),
	FUSE_OPT_KEY("attr_timeout=", KEY_ATTR_TIMEOUT),
	FUSE_OPT_KEY("spin=", KEY_SPIN),
	FUSE_OPT_KEY("history=", KEY_HISTORY),
	{ "noinval", offsetof(struct mount_opts, noinval), 1 },
	/* Mount flags: ours to know, libfuse's to apply (kept). */
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("rw", KEY_RW),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	/* fstab's and mount(8)'s, meaningless to a FUSE mount: dropped, as
	 * sshfs drops them, so the same line works by hand and at boot. */
	FUSE_OPT_KEY("auto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("noauto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("user", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nouser", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("users", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("_netdev", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nofail", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("defaults", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_END
};

/* fuse_opt_parse's callback: 0 drops arg, 1 keeps it for libfuse. */
static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct mount_opts *mo = data;
	const char *v = strchr(arg, '=');

	(void)outargs;
	v = v ? v + 1 : "";
	if (INPUTS_IS_KEY(key))
		return inputs_take(&mo->ci, key, v) < 0 ? -1 : 0;
	if (SYNC_IS_KEY(key))
		return sync_opts_take(&mo->so, key, v, false) < 0 ? -1 : 0;
	switch (key) {
	case KEY_ENTRY_TIMEOUT:
		return parse_timeout(arg, v, &mo->entry_timeout) < 0 ? -1 : 0;
	case KEY_ATTR_TIMEOUT:
		return parse_timeout(arg, v, &mo->attr_timeout) < 0 ? -1 : 0;
	case KEY_SPIN:
		return parse_unsigned(arg, v, LOOP_MAX_SPIN_US, "microseconds", &mo->spin_us) < 0 ? -1 : 0;
	case KEY_HISTORY:
		return parse_unsigned(arg, v, HISTORY_MAX_KEEP, "a number of generations",
				      &mo->history) < 0 ? -1 : 0;
	case KEY_RO:
		mo->ro = true;
		return 1;
	case KEY_RW:
		mo->ro = false;
		return 1;
	case KEY_ALLOW_OTHER:
		mo->allow_other = true;
		return 1;
	case FUSE_OPT_KEY_OPT:
		/* x-systemd.automount and the like are for other programs. */
		return strncmp(arg, "x-", 2) ? 1 : 0;
	default:
		return 1;
	}
}

static int add_arg(struct fuse_args *a, const char *s)
{
	return fuse_opt_add_arg(a, s) < 0 ? bad("%s", strerror(ENOMEM)) : 0;
}

enum {
	KEY_OLD_ARCH = INPUTS_KEY_END,
};

/* One -o LIST: queued for fuse_opt_parse, then its env= values scrubbed
 * from argv (the queue holds a copy). */
static int take_opt_list(struct fuse_args *lists, char *list)
{
	int err;

	if ((err = add_arg(lists, "-o")) < 0 || (err = add_arg(lists, list)) < 0)
		return err;
	inputs_scrub_opt_list(list);
	return 0;
}

static const struct option long_options[] = {
	INPUTS_LONG_OPTIONS
	SYNC_LONG_OPTIONS,
	{ "arch", required_argument, NULL, KEY_OLD_ARCH },
	{ "debug", no_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The command line of primus-envfs itself: INPUTS and the mount's
 * switches; every -o list is appended to lists. */
static int parse_own(struct mount_opts *mo, int argc, char **argv, struct fuse_args *lists,
		     bool *debug)
{
	int c, err;

	while ((c = getopt_long(argc, argv, ":fsdo:h", long_options, NULL)) != -1) {
		switch (c) {
		case 'f':
			mo->foreground = true;
			break;
		case 's':
			mo->single_thread = true;
			break;
		case 'd':
			mo->foreground = true;
			*debug = true;
			break;
		case 'o':
			if ((err = take_opt_list(lists, optarg)) < 0)
				return err;
			break;
		case 'h':
			mo->help = true;
			return 0;
		case KEY_OLD_ARCH:
			fprintf(stderr, "primus-envfs: note: --arch %s is deprecated for the "
				"mount: write --extra-arch %s (--arch selects the arch in "
				"resolve, check and exec)\n", optarg, optarg);
			if ((err = inputs_take(&mo->ci, INPUTS_EXTRA_ARCH, optarg)) < 0)
				return err;
			break;
		case '?':
		case ':':
			return cli_refused(NULL, c, argv, NULL);
		default:
			if (SYNC_IS_KEY(c)) {
				if ((err = sync_opts_take(&mo->so, c, optarg, true)) < 0)
					return err;
				break;
			}
			if ((err = inputs_take(&mo->ci, c, optarg)) < 0)
				return err;
			if (c == INPUTS_ENV)
				inputs_scrub_env_arg(optarg);
		}
	}
	return 0;
}

/* mount(8)'s helper convention (mount.TYPE SOURCE DIR [-sfnvrw] [-o OPTS]
 * [-t TYPE]): -f is a fake mount, -s sloppy, -n no mtab, -v verbose, and
 * the mount goes to the background once it is ready, which is when
 * mount(8) may return. */
static int parse_helper(struct mount_opts *mo, int argc, char **argv, struct fuse_args *lists)
{
	int c, err;

	while ((c = getopt(argc, argv, ":sfnvrwo:t:")) != -1) {
		switch (c) {
		case 'f':
			mo->fake = true;
			break;
		case 'r':
			if ((err = add_arg(lists, "-oro")) < 0)
				return err;
			break;
		case 'w':
			if ((err = add_arg(lists, "-orw")) < 0)
				return err;
			break;
		case 'o':
			if ((err = take_opt_list(lists, optarg)) < 0)
				return err;
			break;
		case 's':
		case 'n':
		case 'v':
		case 't':
			break;
		default:
			return cli_refused(NULL, c, argv, NULL);
		}
	}
	return 0;
}

int mount_opts_parse(struct mount_opts *mo, int argc, char **argv, bool as_helper)
{
	struct fuse_args lists = FUSE_ARGS_INIT(0, NULL);
	bool debug = false;
	int err, nops;

	memset(mo, 0, sizeof(*mo));
	mo->entry_timeout = ENVFS_DEFAULT_TIMEOUT;
	mo->attr_timeout = ENVFS_DEFAULT_TIMEOUT;
	mo->spin_us = LOOP_DEFAULT_SPIN_US;
	mo->history = HISTORY_DEFAULT_KEEP;
	/* Our fsname goes first so a user's -o fsname= wins. */
	if ((err = add_arg(&lists, argv[0])) < 0 || (err = add_arg(&lists, "-o")) < 0 ||
	    (err = add_arg(&lists, "fsname=primus-envfs,subtype=primus-envfs")) < 0)
		goto out;
	opterr = 0;
	optind = 1;
	err = as_helper ? parse_helper(mo, argc, argv, &lists) :
			  parse_own(mo, argc, argv, &lists, &debug);
	if (err < 0 || mo->help)
		goto out;
	err = -EINVAL;
	if (fuse_opt_parse(&lists, mo, mount_opt_table, opt_proc) < 0)
		goto out;
	/* fuse_opt_parse leaves argv[0] and what libfuse is to see. */
	if ((err = add_arg(&mo->fargs, lists.argv[0])) < 0)
		goto out;
	if (debug && (err = add_arg(&mo->fargs, "-d")) < 0)
		goto out;
	for (int k = 1; k < lists.argc; k++)
		if ((err = add_arg(&mo->fargs, lists.argv[k])) < 0)
			goto out;
	err = -EINVAL;
	nops = argc - optind;
	if (nops < 1) {
		bad("%s", "missing MOUNTPOINT (see primus-envfs --help)");
		goto out;
	}
	if (nops > 2) {
		bad("unexpected argument '%s': [SOURCE] MOUNTPOINT only (see primus-envfs --help)",
		    argv[optind + 2]);
		goto out;
	}
	/* SOURCE is what mount(8) and fstab put first; it means nothing. */
	mo->mountpoint = argv[argc - 1];
	err = 0;
	/* With other users let in, the kernel must check modes (a secret's
	 * 0600) instead of trusting the daemon to. */
	if (mo->allow_other && ((err = add_arg(&mo->fargs, "-o")) < 0 ||
				(err = add_arg(&mo->fargs, "default_permissions")) < 0))
		goto out;
out:
	fuse_opt_free_args(&lists);
	return err;
}

void mount_opts_release(struct mount_opts *mo)
{
	fuse_opt_free_args(&mo->fargs);
	inputs_release(&mo->ci);
	sync_opts_release(&mo->so);
}

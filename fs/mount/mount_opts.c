/* Mount command-line parsing; see mount_opts.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"
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

#define XSTR(x) #x
#define STR(x) XSTR(x)

static int parse_spin(const char *opt, const char *s, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > LOOP_MAX_SPIN_US)
		return bad("-o %s: expected microseconds from 0 to "
			   STR(LOOP_MAX_SPIN_US), opt);
	*out = (unsigned)v;
	return 0;
}

/* Handles one comma-separated -o list. */
static int parse_o(struct mount_opts *mo, const char *list)
{
	char *copy = strdup(list), *save = NULL, *opt;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (opt = strtok_r(copy, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		const char *pass = opt;

		if (!strncmp(opt, "entry_timeout=", 14)) {
			if ((err = parse_timeout(opt, opt + 14, &mo->entry_timeout)) < 0)
				goto out;
			continue;
		}
		if (!strncmp(opt, "attr_timeout=", 13)) {
			if ((err = parse_timeout(opt, opt + 13, &mo->attr_timeout)) < 0)
				goto out;
			continue;
		}
		if (!strncmp(opt, "spin=", 5)) {
			if ((err = parse_spin(opt, opt + 5, &mo->spin_us)) < 0)
				goto out;
			continue;
		}
		if (!strcmp(opt, "noinval")) {
			mo->noinval = true;
			continue;
		}
		if (!strcmp(opt, "ro"))
			mo->ro = true;
		else if (!strcmp(opt, "rw"))
			mo->ro = false;
		else if (!strcmp(opt, "allow_other"))
			mo->allow_other = true;
		/* Everything else (and ro/allow_other themselves, which are
		 * mount flags) is libfuse's to accept or refuse. */
		if (fuse_opt_add_arg(&mo->fargs, "-o") < 0 ||
		    fuse_opt_add_arg(&mo->fargs, pass) < 0) {
			err = -ENOMEM;
			goto out;
		}
	}
out:
	free(copy);
	return err;
}

int mount_opts_parse(struct mount_opts *mo, int argc, char **argv)
{
	int i = 1, r;

	memset(mo, 0, sizeof(*mo));
	mo->entry_timeout = ENVFS_DEFAULT_TIMEOUT;
	mo->attr_timeout = ENVFS_DEFAULT_TIMEOUT;
	mo->spin_us = LOOP_DEFAULT_SPIN_US;
	/* Our fsname goes first so a user's -o fsname= wins. */
	if (fuse_opt_add_arg(&mo->fargs, argv[0]) < 0 ||
	    fuse_opt_add_arg(&mo->fargs, "-o") < 0 ||
	    fuse_opt_add_arg(&mo->fargs, "fsname=primus-envfs,subtype=primus-envfs") < 0)
		return -ENOMEM;
	while (i < argc) {
		const char *a = argv[i];

		if ((r = inputs_parse_option(&mo->ci, &i, argc, argv)) < 0)
			return r;
		if (r > 0)
			continue;
		if (!strcmp(a, "-f")) {
			mo->foreground = true;
		} else if (!strcmp(a, "-s")) {
			mo->single_thread = true;
		} else if (!strcmp(a, "-d") || !strcmp(a, "--debug")) {
			mo->foreground = true;
			if (fuse_opt_add_arg(&mo->fargs, "-d") < 0)
				return -ENOMEM;
		} else if (!strcmp(a, "-o")) {
			if (i + 1 >= argc)
				return bad("%s needs an argument", a);
			if ((r = parse_o(mo, argv[++i])) < 0)
				return r;
		} else if (!strncmp(a, "-o", 2)) {
			if ((r = parse_o(mo, a + 2)) < 0)
				return r;
		} else if (a[0] == '-' && a[1]) {
			return bad("unknown option %s (see primus-envfs --help)", a);
		} else if (mo->mountpoint) {
			return bad("unexpected argument %s: only one MOUNTPOINT", a);
		} else {
			mo->mountpoint = a;
		}
		i++;
	}
	if (!mo->mountpoint)
		return bad("%s", "missing MOUNTPOINT (see primus-envfs --help)");
	/* With other users let in, the kernel must check modes (a secret's
	 * 0600) instead of trusting the daemon to. */
	if (mo->allow_other &&
	    (fuse_opt_add_arg(&mo->fargs, "-o") < 0 ||
	     fuse_opt_add_arg(&mo->fargs, "default_permissions") < 0))
		return -ENOMEM;
	return 0;
}

void mount_opts_release(struct mount_opts *mo)
{
	fuse_opt_free_args(&mo->fargs);
	inputs_release(&mo->ci);
}

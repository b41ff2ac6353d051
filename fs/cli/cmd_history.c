/* primus-envfs history: who changed what, and when, in one directory of a
 * mount: the generations the mount keeps (its history file), each with
 * its time, cause, writer and every change with the value before and
 * after (a secret's values are never kept).
 *
 *   $ primus-envfs history --mount /mnt/primus maxtext/gfx950 NCCL_DEBUG
 *   gen 3  2026-12-01T10:02:11.123Z  write  uid 1000 pid 4242
 *     maxtext/gfx950 NCCL_DEBUG: "" runner -> "INFO" override */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "history.h"
#include "history_decode.h"
#include "infile.h"
#include "text.h"

static const char usage[] =
	"usage: primus-envfs history --mount DIR BACKEND/ARCH [NAME] [--format text|json]\n"
	"\n"
	"Print the generations of a mount that changed BACKEND/ARCH (or only its\n"
	"variable NAME), oldest first: when, why (start, write, rm, mv, reload, sync),\n"
	"who (uid and pid of the writer; with --sync the node), and each variable\n"
	"with its value and layer before and after. A secret's values are never kept.\n"
	"The mount keeps the last history=N generations (64 by default).\n"
	"\n"
	"      --mount DIR         the mount point\n"
	"      --format FORMAT     text (default) or json\n"
	"  -h, --help              print this help\n"
	"\n"
	"Exit status: 0 printed; 2 the mount's history cannot be read; 64 the\n"
	"command line is wrong.\n";

enum { KEY_MOUNT = 0x200, KEY_FORMAT };

static const struct option options[] = {
	{ "mount", required_argument, NULL, KEY_MOUNT },
	{ "format", required_argument, NULL, KEY_FORMAT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int usage_error(const char *what, const char *arg)
{
	struct strbuf sb = STRBUF_INIT;

	if (arg)
		text_escape(&sb, arg, strlen(arg));
	fprintf(stderr, "primus-envfs: history: %s%s%s (see primus-envfs history --help)\n",
		what, arg ? " " : "", sb_str(&sb));
	sb_release(&sb);
	return CLI_EX_USAGE;
}

/* The mount's history file, whole. *buf is caller-owned. */
static int read_history(const char *mnt, char **buf, size_t *len)
{
	struct strbuf path = STRBUF_INIT;
	int err;

	if ((err = sb_addf(&path, "%s/history", mnt)) == 0)
		err = infile_read(sb_str(&path), SIZE_MAX, buf, len);
	sb_release(&path);
	return err;
}

/* Whether f names a directory of the mount at mnt, or one a kept
 * generation names (a directory a reload took away still has its past).
 * A link (MOUNT/env/BACKEND/host) is the directory it leads to: f->arch
 * is then set to its target's name, in *target (caller frees). */
static bool dir_known(const char *mnt, struct hist_filter *f, const struct hist_gen *g,
		      size_t n, char **target)
{
	struct strbuf path = STRBUF_INIT;
	char link[256];
	struct stat st;
	ssize_t l;
	bool known = false;
	size_t k, j;

	*target = NULL;
	if (sb_addf(&path, "%s/env/%s/%s", mnt, f->backend, f->arch) < 0)
		goto out;
	if (lstat(sb_str(&path), &st) == 0 && S_ISLNK(st.st_mode) &&
	    (l = readlink(sb_str(&path), link, sizeof(link) - 1)) > 0 && !memchr(link, '/', (size_t)l)) {
		link[l] = '\0';
		if ((*target = strdup(link)))
			f->arch = *target;
	}
	sb_reset(&path);
	if (sb_addf(&path, "%s/env/%s/%s", mnt, f->backend, f->arch) == 0 &&
	    stat(sb_str(&path), &st) == 0 && S_ISDIR(st.st_mode)) {
		known = true;
		goto out;
	}
	for (k = 0; k < n && !known; k++)
		for (j = 0; j < g[k].nchanges && !known; j++)
			known = g[k].changes[j].backend && g[k].changes[j].arch &&
				!strcmp(g[k].changes[j].backend, f->backend) &&
				!strcmp(g[k].changes[j].arch, f->arch);
out:
	sb_release(&path);
	return known;
}

int cmd_history(int argc, char **argv)
{
	const char *mnt = NULL, *format = "text";
	struct hist_filter f = { NULL, NULL, NULL };
	struct hist_gen *gens = NULL;
	const struct hist_gen **v = NULL;
	struct strbuf out = STRBUF_INIT;
	char *buf = NULL, *dir = NULL, *target = NULL, msg[512] = "", *slash;
	size_t len = 0, n = 0, keep = 0, k;
	int c, err, rc = CLI_EX_USAGE;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (c) {
		case KEY_MOUNT:
			mnt = optarg;
			break;
		case KEY_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
				rc = usage_error("unknown format", optarg);
				goto out;
			}
			format = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			rc = 0;
			goto out;
		case ':':
			rc = usage_error("an option needs an argument:", argv[optind - 1]);
			goto out;
		default:
			rc = usage_error("unrecognized option", argv[optind - 1]);
			goto out;
		}
	}
	if (!mnt) {
		rc = usage_error("--mount DIR is required", NULL);
		goto out;
	}
	if (optind >= argc || argc - optind > 2) {
		rc = usage_error("give BACKEND/ARCH and at most one NAME", NULL);
		goto out;
	}
	if (!(dir = strdup(argv[optind])) || !(slash = strchr(dir, '/')) || slash == dir ||
	    !slash[1] || strchr(slash + 1, '/')) {
		rc = dir ? usage_error("not BACKEND/ARCH:", argv[optind]) : 2;
		goto out;
	}
	*slash = '\0';
	if (!strcmp(dir, ".") || !strcmp(dir, "..") || !strcmp(slash + 1, ".") ||
	    !strcmp(slash + 1, "..")) {
		rc = usage_error("not BACKEND/ARCH:", argv[optind]);
		goto out;
	}
	f.backend = dir;
	f.arch = slash + 1;
	f.name = argc - optind == 2 ? argv[optind + 1] : NULL;
	rc = 2;
	if ((err = read_history(mnt, &buf, &len)) < 0) {
		struct strbuf sb = STRBUF_INIT;

		text_escape(&sb, mnt, strlen(mnt));
		fprintf(stderr, "primus-envfs: history: %s/history: %s\n", sb_str(&sb),
			err == -ENOENT ? "no such file (not a primus-envfs mount?)" : strerror(-err));
		sb_release(&sb);
		goto out;
	}
	if (history_decode(buf, len, &gens, &n, &keep, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "primus-envfs: history: %s/history: %s\n", mnt, msg);
		goto out;
	}
	if (!dir_known(mnt, &f, gens, n, &target)) {
		struct strbuf sb = STRBUF_INIT;

		text_escape_max(&sb, argv[optind], strlen(argv[optind]), 128);
		fprintf(stderr, "primus-envfs: history: %s: no such directory in the mount, and "
			"no generation kept names it (primus-envfs list shows the directories)\n",
			sb_str(&sb));
		sb_release(&sb);
		goto out;
	}
	if (!(v = malloc((n ? n : 1) * sizeof(*v))))
		goto oom;
	for (k = 0; k < n; k++)
		v[k] = &gens[k];
	err = strcmp(format, "json") ? history_text(v, n, &f, &out)
				     : history_json(v, n, keep, &f, &out);
	if (err < 0)
		goto oom;
	fputs(sb_str(&out), stdout);
	rc = fflush(stdout) == 0 ? 0 : 2;
	goto out;
oom:
	fprintf(stderr, "primus-envfs: history: out of memory\n");
out:
	free(v);
	hist_gens_free(gens, n);
	free(buf);
	free(dir);
	free(target);
	sb_release(&out);
	return rc;
}

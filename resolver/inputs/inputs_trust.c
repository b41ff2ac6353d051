/* Inputs another user can change; see inputs_trust.h. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inputs_trust.h"
#include "spec.h"
#include "strbuf.h"
#include "trust.h"

/* The verdict r of trust_path() or trust_stat() on path as a diagnostic:
 * 1 when it got a warning, else 0, or -ENOMEM. */
static int report(const char *path, int r, const struct strbuf *why, struct diag_list *out)
{
	if (r == 0)
		return diag_add(out, DC_INPUT_UNTRUSTED, path, 0, 0,
				"another user can change this file (%s); primus-envfs runs as "
				"root, so that user decides what the run gets", sb_str(why)) < 0 ?
		       -ENOMEM : 1;
	return r == -ENOMEM ? r : 0;
}

/* One input: 1 when it got a warning, else 0 (a missing or unreadable
 * file is the loader's to report), or -ENOMEM. */
static int check_one(const char *path, struct diag_list *out)
{
	struct strbuf why = STRBUF_INIT;
	char *real = realpath(path, NULL);
	int err;

	if (!real)
		return errno == ENOMEM ? -ENOMEM : 0;
	/* A walk that cannot finish (a loop) leaves the verdict to the
	 * realpath's directories. */
	if ((err = trust_links(path, 0, &why)) != 0 && err != -ENOMEM)
		err = trust_path(real, 0, false, &why);
	err = report(path, err, &why, out);
	free(real);
	sb_release(&why);
	return err;
}

/* A file of the spec directory, whose directories check_one() found
 * root's alone: only its own inode is left to judge, unless it is a
 * symlink, which is judged where it leads. */
static int check_in_dir(const char *path, struct diag_list *out)
{
	struct strbuf why = STRBUF_INIT;
	struct stat st;
	int err;

	if (lstat(path, &st) < 0)
		return errno == ENOMEM ? -ENOMEM : 0;
	if (S_ISLNK(st.st_mode))
		return check_one(path, out);
	err = report(path, trust_stat(path, &st, 0, &why), &why, out);
	sb_release(&why);
	return err;
}

int inputs_trust_check(const struct envfs_inputs *in, struct diag_list *out)
{
	struct strbuf path = STRBUF_INIT;
	char **names = NULL;
	size_t n = 0, k;
	int err = 0;

	if (geteuid() != 0)
		return 0;
	if (in->config && (err = check_one(in->config, out)) < 0)
		goto out;
	for (k = 0; k < in->ninherit; k++)
		if ((err = check_one(in->inherit[k], out)) < 0)
			goto out;
	for (k = 0; k < in->nenv_files; k++)
		if ((err = check_one(in->env_files[k], out)) < 0)
			goto out;
	/* A directory others can write makes every spec in it theirs: one
	 * warning says so, not one per file. */
	if (!in->specs_dir || (err = check_one(in->specs_dir, out)) != 0)
		goto out;
	if (spec_dir_list(in->specs_dir, &names, &n, NULL) < 0)
		goto out;
	for (k = 0; k < n; k++) {
		sb_reset(&path);
		if (err >= 0 && (err = sb_addf(&path, "%s/%s", in->specs_dir, names[k])) == 0)
			err = check_in_dir(sb_str(&path), out);
		free(names[k]);
	}
	free(names);
out:
	sb_release(&path);
	return err < 0 ? err : 0;
}

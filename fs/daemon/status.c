/* status and diagnostics text; see status.h. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "envfs_config.h"
#include "report.h"
#include "status.h"

int status_part_add(struct status_parts *p, status_part_fn fn, void *arg)
{
	if (p->n == STATUS_MAX_PARTS)
		return -ENOSPC;
	p->v[p->n].fn = fn;
	p->v[p->n].arg = arg;
	p->n++;
	return 0;
}

int status_add_time(struct strbuf *out, const char *key, const struct timespec *ts)
{
	struct tm tm;
	char buf[32];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	return sb_addf(out, "%s: %s.%03ldZ\n", key, buf, ts->tv_nsec / 1000000);
}

/* "warning: FILE: MESSAGE [CODE]" for each input another user can
 * change, as the last load found them (a daemon running as root;
 * inputs_trust.h). */
static int add_trust_warnings(const struct diag_list *d, struct strbuf *out)
{
	size_t i;
	int err = 0;

	for (i = 0; i < d->n && err == 0; i++)
		err = sb_addf(out, "warning: %s: %s [%s]\n", d->v[i].file, d->v[i].msg,
			      diag_code_info(d->v[i].code)->code);
	return err;
}

/* "ignore: PE104 PE116" (the ignore= codes), or "ignore: none". */
static int add_ignored(const struct diag_silence *si, struct strbuf *out)
{
	size_t k;
	int err = sb_adds(out, "ignore:"), n = 0;

	for (k = 0; k < DIAG_NCODES && !err; k++)
		if (si->code[k] && ++n)
			err = sb_addf(out, " %s", diag_code_info((enum diag_code)k)->code);
	return err ? err : sb_adds(out, n ? "\n" : " none\n");
}

int status_render(struct envfs *fs, const struct epoch *e,
		  const char *last_error, struct strbuf *out)
{
	const struct cli_inputs *ci = &fs->opts->ci;
	size_t i, nov;
	int err = 0;

	pthread_mutex_lock(&fs->ov_lock);
	nov = fs->ov.n;
	pthread_mutex_unlock(&fs->ov_lock);

	if ((err = sb_addf(out, "version: %s\n", ENVFS_VERSION)) < 0 ||
	    (err = sb_addf(out, "specs: %s\n", ci->in.specs_dir)) < 0 ||
	    (err = sb_addf(out, "config: %s\n", ci->in.config ? ci->in.config : "none")) < 0)
		goto out;
	if (!ci->in.ninherit && (err = sb_adds(out, "inherit: none\n")) < 0)
		goto out;
	for (i = 0; i < ci->in.ninherit; i++)
		if ((err = sb_addf(out, "inherit: %s\n", ci->in.inherit[i])) < 0)
			goto out;
	if (!ci->state)
		err = sb_adds(out, "state: none\n");
	else if (fs->state_path && strcmp(fs->state_path, ci->state))
		err = sb_addf(out, "state: %s -> %s\n", ci->state, fs->state_path);
	else
		err = sb_addf(out, "state: %s\n", ci->state);
	if (err < 0 ||
	    (err = sb_addf(out, "mount: %s\n", fs->opts->ro ? "ro" : "rw")) < 0 ||
	    (err = add_ignored(&ci->silence, out)) < 0 ||
	    (err = sb_addf(out, "generation: %llu\n",
			   (unsigned long long)e->generation)) < 0 ||
	    (err = status_add_time(out, "last_load", &e->loaded)) < 0 ||
	    (err = status_add_time(out, "last_change", &e->changed)) < 0)
		goto out;
	/* The reason is one line: the first error diagnostic of the load. */
	if ((err = sb_adds(out, "last_error: ")) < 0)
		goto out;
	if (last_error) {
		size_t n = strcspn(last_error, "\n");

		err = sb_add(out, last_error, n);
	} else {
		err = sb_adds(out, "none");
	}
	if (err < 0 || (err = sb_addc(out, '\n')) < 0 ||
	    (err = add_trust_warnings(&fs->trust, out)) < 0 ||
	    (err = sb_addf(out, "overrides: %zu\n", nov)) < 0)
		goto out;
	/* Where each backend's host entry points, or why it has none. */
	for (i = 0; i < e->nhosts; i++) {
		const struct epoch_host *h = &e->hosts[i];

		err = h->arch ? sb_addf(out, "host %s: %s\n", h->backend, h->arch)
			      : sb_addf(out, "host %s: none (%s)\n", h->backend,
					h->why ? h->why : "nothing detected");
		if (err < 0)
			goto out;
	}
	for (i = 0; i < e->ndirs; i++) {
		const struct epoch_dir *d = &e->dirs[i];
		struct blob *b = atomic_load(&((struct epoch_dir *)d)->views[VIEW_DIGEST]);
		size_t n = b ? strcspn(b->data, "\n") : 0;

		if ((err = sb_addf(out, "digest %s/%s %.*s\n", d->snap->backend,
				   d->snap->arch, (int)n, b ? b->data : "")) < 0)
			goto out;
	}
out:
	return err;
}

int status_live(struct envfs *fs, const struct epoch *e, struct blob **out)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	size_t i;

	if ((err = sb_add(&sb, e->status->data, e->status->len)) < 0)
		goto out;
	for (i = 0; i < fs->status_parts.n; i++)
		if ((err = fs->status_parts.v[i].fn(fs->status_parts.v[i].arg, &sb)) < 0)
			goto out;
	err = blob_from_sb(&sb, out);
out:
	sb_release(&sb);
	return err;
}

int diagnostics_render(const struct diag_list *load, const struct epoch *e,
		       struct strbuf *out)
{
	struct report r = REPORT_INIT;
	size_t i;
	int err = report_add(&r, load, 0, NULL, NULL);

	for (i = 0; e && i < e->ndirs && !err; i++) {
		const struct snapshot *s = e->dirs[i].snap;

		err = report_add(&r, &s->diags, load->n, s->backend, s->arch);
	}
	if (!err)
		err = report_text(&r, DIAG_INFO, true, out, NULL);
	report_release(&r);
	return err;
}

/* history_note: noting published changes; see history_note.h. */
#include "log.h"
#include "history_note.h"

#include "blob.h"
#include "history_store.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void history_stamp(const struct hist_writer *who, struct override_stamp *out)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	out->when_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	out->has_writer = who && !who->no_ids;
	out->uid = who ? who->uid : 0;
	out->pid = who ? who->pid : 0;
}

/* Both epochs' directories are sorted by (backend, arch). */
static int dir_cmp(const struct epoch_dir *a, const struct epoch_dir *b)
{
	int c = strcmp(a->snap->backend, b->snap->backend);

	return c ? c : strcmp(a->snap->arch, b->snap->arch);
}

static int compare(struct hist_gen *g, const struct epoch *prev, const struct epoch *next)
{
	size_t i = 0, j = 0, np = prev ? prev->ndirs : 0, nn = next->ndirs;
	int err = 0;

	while (!err && (i < np || j < nn)) {
		int c = i == np ? 1 : j == nn ? -1 : dir_cmp(&prev->dirs[i], &next->dirs[j]);

		if (c < 0)
			err = hist_gen_compare(g, prev->dirs[i++].snap, NULL);
		else if (c > 0)
			err = hist_gen_compare(g, NULL, next->dirs[j++].snap);
		else
			err = hist_gen_compare(g, prev->dirs[i++].snap, next->dirs[j++].snap);
	}
	return err;
}

struct secret_ctx {
	const struct epoch *epoch;
	const struct world *world;
};

/* A variable the epoch holds is a secret by its own flag (which heeds a
 * spec's secret: false); one it does not, by its name. */
static bool secret_now(void *p, const char *backend, const char *arch, const char *name)
{
	const struct secret_ctx *c = p;
	const struct epoch_dir *d = backend && arch ? epoch_find_dir(c->epoch, backend, arch) : NULL;
	const struct snap_var *v = d ? snapshot_find(d->snap, name, strlen(name)) : NULL;

	if (v)
		return v->secret;
	return c->world && world_name_secret_in(c->world, backend, name);
}

/* One variable, for history_redact. */
struct one_var {
	const char *backend, *arch, *name;
};

static bool is_var(void *p, const char *backend, const char *arch, const char *name)
{
	const struct one_var *o = p;

	return backend && arch && !strcmp(o->name, name) && !strcmp(o->arch, arch) &&
	       !strcmp(o->backend, backend);
}

/* The variables of dir that were no secret in old and are one in new (a
 * chmod 600 of an override, say) lose their values in the generations
 * kept: history_redact at start and reload alone left a value written
 * just before its chmod readable in the 0444 history until then.
 * hist_lock held. */
static void redact_new_secrets(struct envfs *fs, const struct snapshot *old,
			       const struct snapshot *new)
{
	size_t i = 0, j = 0;

	if (!old || !new || old == new)
		return;
	while (i < old->nvars && j < new->nvars) {
		const struct snap_var *a = &old->vars[i], *b = &new->vars[j];
		size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
		int c = memcmp(a->name, b->name, n);

		if (!c)
			c = (a->name_len > b->name_len) - (a->name_len < b->name_len);
		if (c < 0) {
			i++;
		} else if (c > 0) {
			j++;
		} else {
			if (b->secret && !a->secret) {
				struct one_var o = { new->backend, new->arch, b->name };

				history_redact(&fs->hist, is_var, &o);
			}
			i++;
			j++;
		}
	}
}

static void redact_changed_dirs(struct envfs *fs, const struct epoch *prev,
				const struct epoch *next)
{
	size_t i = 0, j = 0, np = prev ? prev->ndirs : 0, nn = next->ndirs;

	while (i < np && j < nn) {
		int c = dir_cmp(&prev->dirs[i], &next->dirs[j]);

		if (c < 0)
			i++;
		else if (c > 0)
			j++;
		else
			redact_new_secrets(fs, prev->dirs[i++].snap, next->dirs[j++].snap);
	}
}

void history_note(struct envfs *fs, const struct epoch *prev, const struct epoch *next,
		  enum hist_cause cause, const char *node, const struct hist_writer *who)
{
	struct hist_gen g = { .generation = next->generation, .cause = cause };

	if (!fs->hist.cap)
		return;
	/* What the inputs call a secret may have grown (--secret at this
	 * start, a spec's new pattern): the generations kept must not go on
	 * showing such a variable's values (docs/STATE.md), even when this
	 * generation cannot be noted. */
	if (cause == HIST_START || cause == HIST_RELOAD) {
		struct secret_ctx c = { next, fs->world };

		pthread_mutex_lock(&fs->hist_lock);
		history_redact(&fs->hist, secret_now, &c);
		pthread_mutex_unlock(&fs->hist_lock);
	} else {
		pthread_mutex_lock(&fs->hist_lock);
		redact_changed_dirs(fs, prev, next);
		pthread_mutex_unlock(&fs->hist_lock);
	}
	if (cause == HIST_SYNC) {
		/* Another node's: what its fence said, or nothing known (a
		 * handler applying what a failed compare read passes NULL). */
		node = who ? who->node : NULL;
		if (who && who->has_cause)
			cause = who->cause;
	} else if (!node && fs->sync && fs->opts) {
		node = fs->opts->so.node;
	}
	g.cause = cause;
	clock_gettime(CLOCK_REALTIME, &g.when);
	g.has_writer = who && !who->no_ids && cause != HIST_SYNC && cause != HIST_RELOAD &&
		       cause != HIST_START;
	g.uid = who ? who->uid : 0;
	g.pid = who ? who->pid : 0;
	/* The start is a mark: its values are the record's, not a change. */
	if ((node && !(g.node = strdup(node))) ||
	    (cause != HIST_START && compare(&g, prev, next) < 0)) {
		log_err("out of memory noting generation %llu in the "
			"history; it is left out", (unsigned long long)next->generation);
		hist_gen_release(&g);
		return;
	}
	pthread_mutex_lock(&fs->hist_lock);
	history_push(&fs->hist, &g);
	pthread_mutex_unlock(&fs->hist_lock);
	/* A reload's generation is saved with the next change that is
	 * not one: a config rewritten every few ms would otherwise render
	 * and fsync the whole history on the reload thread each time, and
	 * the kernel's invalidations it hands out would run late. */
	if (cause != HIST_RELOAD)
		history_store_save(fs);
	else
		history_store_later(fs);
}

int history_blob(struct envfs *fs, struct blob **out)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	pthread_mutex_lock(&fs->hist_lock);
	if (fs->hist.cap)
		err = history_render_json(&fs->hist, &sb);
	else
		err = sb_addf(&sb, "{\"format\":\"primus-envfs-history\",\"version\":%d,"
			      "\"keep\":0,\"generations\":[]}\n", HISTORY_VERSION);
	pthread_mutex_unlock(&fs->hist_lock);
	if (err == 0)
		err = blob_from_sb(&sb, out);
	sb_release(&sb);
	return err;
}

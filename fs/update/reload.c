/* Loading inputs and watching them; see reload.h. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "chain.h"
#include "inputs_trust.h"
#include "memory.h"
#include "history_note.h"
#include "input_writers.h"
#include "publish.h"
#include "reload.h"
#include "status.h"

/* ---- loading ---------------------------------------------------------- */

/* The outcome of one load attempt. */
struct load {
	struct diag_list trust;      /* inputs another user can change */
	struct world *world;         /* set on success */
	struct epoch *epoch;         /* set on success: the new directories */
	struct diag_list diags;      /* what to show in diagnostics */
	char *error;                 /* first error, one line; NULL on success */
};

static void load_release(struct load *ld)
{
	diag_list_release(&ld->trust);
	world_free(ld->world);
	epoch_unref(ld->epoch);
	diag_list_release(&ld->diags);
	free(ld->error);
	memset(ld, 0, sizeof(*ld));
}

/* A fatal errno from world_load returns no world, so no diagnostic; name
 * the first input that cannot be read so the reason is still useful. */
static int missing_input(const struct envfs_inputs *in, int err, struct diag_list *d)
{
	size_t i;

	if (access(in->specs_dir, R_OK) < 0)
		return diag_add(d, DC_INPUT_UNREADABLE, in->specs_dir, 0, 0, "%s", strerror(errno));
	if (in->config && access(in->config, R_OK) < 0)
		return diag_add(d, DC_INPUT_UNREADABLE, in->config, 0, 0, "%s", strerror(errno));
	for (i = 0; i < in->ninherit; i++)
		if (access(in->inherit[i], R_OK) < 0)
			return diag_add(d, DC_INPUT_UNREADABLE, in->inherit[i], 0, 0, "%s",
					strerror(errno));
	return diag_add(d, DC_LOAD_FAILED, NULL, 0, 0, "cannot load the inputs: %s",
			strerror(-err));
}

static int first_error(const struct diag_list *d, char **out)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < d->n && d->v[i].sev != DIAG_ERROR; i++)
		;
	if (i < d->n)
		err = diag_format(&d->v[i], &sb);
	else
		err = sb_adds(&sb, "the inputs did not load");
	if (err == 0 && !(*out = sb_detach(&sb, NULL)))
		err = -ENOMEM;
	sb_release(&sb);
	return err;
}

/* Reads every input into ld->world: the part of a load that may wait on
 * the disk (or on a file server that does not answer), so it never runs
 * under publish_lock, where it would hold up every write. Only the
 * reload thread (and the start) replaces fs->world, so reading it here
 * needs no lock. */
static int read_inputs(struct envfs *fs, struct load *ld)
{
	int err = world_load_from(&fs->opts->ci.in, fs->world, &ld->world);

	return err == -ENOMEM ? err : inputs_trust_check(&fs->opts->ci.in, &ld->trust) ?: err;
}

/* What the load found of the inputs' owners, for status; publish_lock
 * held. */
static void take_trust(struct envfs *fs, struct load *ld)
{
	struct diag_list old = fs->trust;

	fs->trust = ld->trust;
	ld->trust = old;
}

/* Resolves what read_inputs returned (err). Returns 0, or the load's
 * negative errno with ld->diags and ld->error saying why. -ENOMEM is the
 * only failure that leaves ld->error unset. */
static int resolve_inputs(struct envfs *fs, struct load *ld, int err)
{
	struct resolution *res = NULL;
	int e2;

	if (err == 0) {
		pthread_mutex_lock(&fs->ov_lock);
		err = resolve_all(ld->world, &fs->ov, &res);
		pthread_mutex_unlock(&fs->ov_lock);
	}
	if (err == 0) {
		err = diag_extend(&ld->diags, &res->diags);
		if (err == 0)
			err = epoch_from_resolution(res, &ld->epoch);
		if (err == 0)
			err = epoch_set_hosts(ld->epoch, ld->world);
		resolution_free(res);
		return err;
	}
	/* Failed: explain with whatever diagnostics the attempt produced. */
	if (ld->world)
		e2 = diag_extend(&ld->diags, &ld->world->diags);
	else
		e2 = missing_input(&fs->opts->ci.in, err, &ld->diags);
	if (e2 == 0)
		e2 = first_error(&ld->diags, &ld->error);
	world_free(ld->world);
	ld->world = NULL;
	return e2 < 0 ? e2 : err;
}

/* A load that ran out of memory, wherever: says so in the log, and in
 * status and diagnostics as far as memory permits, in place
 * of whatever the attempt produced. ld->error stays NULL only when even
 * that failed. */
static void load_out_of_memory(struct load *ld)
{
	static const char msg[] =
		"out of memory loading the inputs; the last good resolution is still served";

	log_err("%s", msg);
	world_free(ld->world);
	ld->world = NULL;
	epoch_unref(ld->epoch);
	ld->epoch = NULL;
	diag_list_release(&ld->diags);
	free(ld->error);
	ld->error = NULL;
	if (diag_add(&ld->diags, DC_LOAD_FAILED, NULL, 0, 0, "%s", msg) < 0 ||
	    first_error(&ld->diags, &ld->error) < 0)
		ld->error = NULL;
}

/* Fills e's status and diagnostics text. */
static int render_texts(struct envfs *fs, struct epoch *e, const struct load *ld)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	if ((err = status_render(fs, e, ld->error, &sb)) < 0 ||
	    (err = blob_from_sb(&sb, &e->status)) < 0)
		goto out;
	sb_reset(&sb);
	/* A failed load has no epoch of its own: its reasons alone. */
	if ((err = (ld->world ? diagnostics_render(&ld->world->diags, e, &sb) :
			       diagnostics_render(&ld->diags, NULL, &sb))) < 0 ||
	    (err = blob_from_sb(&sb, &e->diagnostics)) < 0)
		goto out;
	if (ld->error && !(e->last_error = strdup(ld->error)))
		err = -ENOMEM;
out:
	sb_release(&sb);
	return err;
}

int envfs_load_initial(struct envfs *fs)
{
	struct load ld = { 0 };
	size_t i;
	int err;

	err = read_inputs(fs, &ld);
	/* etcd's overrides go in once the specs say which names are the
	 * node's own. */
	if (err == 0 && fs->sync &&
	    (err = fs->sync_hooks->take_startup(fs->sync, ld.world)) < 0)
		goto out;
	if ((err = resolve_inputs(fs, &ld, err)) < 0) {
		struct strbuf sb = STRBUF_INIT;

		/* At start there is no last good resolution to keep serving. */
		for (i = 0; i < ld.diags.n; i++) {
			if (ld.diags.v[i].sev != DIAG_ERROR)
				continue;
			sb_reset(&sb);
			if (diag_format(&ld.diags.v[i], &sb) == 0)
				log_err("%s", sb_str(&sb));
		}
		if (!ld.diags.n)
			log_err("cannot load the inputs: %s",
				strerror(-err));
		sb_release(&sb);
		goto out;
	}
	/* On from the generations kept beside --state, so that each number
	 * names one generation across remounts (diff gen:N). */
	pthread_mutex_lock(&fs->hist_lock);
	ld.epoch->generation = 1 + (fs->hist.n ? history_at(&fs->hist, fs->hist.n - 1)->generation
					       : 0);
	pthread_mutex_unlock(&fs->hist_lock);
	take_trust(fs, &ld);
	if ((err = render_texts(fs, ld.epoch, &ld)) < 0)
		goto out;
	/* The world first: noting the start redacts the kept generations
	 * by what it calls a secret. */
	fs->world = ld.world;
	ld.world = NULL;
	history_note(fs, NULL, ld.epoch, HIST_START, NULL, NULL);
	epoch_slot_init(&fs->state, ld.epoch);
	ld.epoch = NULL;
out:
	load_release(&ld);
	memory_release_freed();
	return err;
}

int envfs_reload(struct envfs *fs, bool (*valid)(void *arg), void *arg)
{
	struct inval_list l = INVAL_LIST_INIT;
	struct load ld = { 0 };
	struct envfs_next pub = { .cause = HIST_RELOAD };
	struct epoch *prev, *next = NULL;
	unsigned long long served = 0;
	bool send = false, say = false;
	int err, lerr;

	lerr = read_inputs(fs, &ld);
	if (valid && !valid(arg)) {
		load_release(&ld);
		return -EAGAIN;
	}
	pthread_mutex_lock(&fs->publish_lock);
	prev = epoch_current(&fs->state);
	lerr = resolve_inputs(fs, &ld, lerr);
	if (lerr == -ENOMEM)
		load_out_of_memory(&ld);
	if (lerr == -ENOMEM && !ld.error) {
		err = lerr;
		goto out;
	}
	if (lerr == 0) {
		next = ld.epoch;
		ld.epoch = NULL;
		if ((err = envfs_stage(prev, next, &l)) < 0)
			goto out;
	} else if ((err = epoch_clone_dirs(prev, &next)) < 0) {
		goto out;
	}
	/* Said once per new reason: an editor's save is several events, and
	 * each retry of the same broken file would repeat the line. */
	if (lerr < 0 && lerr != -ENOMEM && ld.error &&
	    (!prev->last_error || strcmp(prev->last_error, ld.error))) {
		say = true;
		served = (unsigned long long)prev->generation;
	}
	/* status and diagnostics change with every attempt (load time, error). */
	take_trust(fs, &ld);
	if ((err = render_texts(fs, next, &ld)) < 0 ||
	    (err = inval_add_inode(&l, INO_STATUS)) < 0 ||
	    (err = inval_add_inode(&l, INO_DIAGNOSTICS)) < 0)
		goto out;
	pub.prev = prev;
	pub.next = next;
	next = NULL;
	if (lerr == 0) {
		pub.dirs = true;
		pub.world = ld.world;
		ld.world = NULL;
	}
	envfs_publish(fs, &pub, &l);
	send = true;
	err = lerr;
out:
	pthread_mutex_unlock(&fs->publish_lock);
	/* Outside the lock: the log may be a socket that makes us wait. */
	if (say && send)
		log_err("the inputs did not load: %s; still serving generation %llu",
			ld.error, served);
	/* Sent outside the lock: an invalidation can wait on a directory the
	 * kernel holds for an unlink or rename whose handler is waiting for
	 * publish_lock to commit. */
	if (send && !fs->opts->noinval && fs->se)
		inval_send(fs->se, &l);
	epoch_unref(prev);
	epoch_unref(next);
	inval_list_release(&l);
	load_release(&ld);
	memory_release_freed();
	return err;
}

/* ---- watching --------------------------------------------------------- */

struct watch {
	int wd;
	char *name;                  /* file name to react to; NULL: any *.yaml */
};

struct reloader {
	struct envfs *fs;
	int ifd;                     /* inotify */
	int efd;                     /* eventfd: stop request */
	int sfd;                     /* eventfd: queued work, or stop, for the
	                                sender thread */
	struct watch *w;
	size_t nw;
	/* Watched names written in place and not closed yet (IN_MODIFY
	 * without IN_CLOSE_WRITE): not to be read before they are. */
	struct watch *open;
	size_t nopen;
	long writer_since;           /* since when every check found a writer
	                                and no change (ms), or 0 */
	long busy_since;             /* since when every check found a writer,
	                                changes or not (ms), or 0 */
	bool busy_said;              /* the log said so, and no check found
	                                the inputs free since */
	pthread_t thread;
	/* The invalidations handlers and the applier queue are sent by a
	 * thread of their own: the reload thread may spend long in a load
	 * (or waiting for publish_lock, which committers hold), and a
	 * writer's close() waits for them (reloader_queue_wait). */
	pthread_t sender;
	bool sender_started;
	bool started;
	atomic_bool stop;
	pthread_mutex_t qlock;       /* guards queue and the counts */
	struct inval_list queue;
	uint64_t queued, sent;       /* batches handed over / sent */
	pthread_cond_t sent_cond;    /* signalled when sent grows */
};

#define WATCH_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | \
		    IN_DELETE | IN_MODIFY)

/* Watches dir for name (NULL: any *.yaml) in the set being built. */
static int watch_name(struct reloader *r, const char *dir, const char *name)
{
	struct watch *v;
	int wd;

	if ((wd = inotify_add_watch(r->ifd, dir, WATCH_MASK)) < 0) {
		/* A directory that went away meanwhile: the change that removed
		 * it is being reloaded, and the next set is computed after. */
		if (r->started && (errno == ENOENT || errno == ENOTDIR))
			return 0;
		log_err("cannot watch %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!(v = realloc(r->w, (r->nw + 1) * sizeof(*v))))
		return -ENOMEM;
	r->w = v;
	v[r->nw].wd = wd;
	v[r->nw].name = NULL;
	if (name && !(v[r->nw].name = strdup(name)))
		return -ENOMEM;
	r->nw++;
	return 0;
}

static int watch_link(const char *dir, const char *name, void *arg)
{
	return watch_name(arg, dir, name);
}

/* Every name a spec file in the specs directory depends on, beyond the
 * directory itself (a ConfigMap of specs: maxtext.yaml -> ..data/...). */
static int watch_spec_links(struct reloader *r, const char *dir)
{
	struct strbuf path = STRBUF_INIT;
	char **names = NULL;
	size_t n = 0, k;
	struct stat st;
	int err = 0;

	if (spec_dir_list(dir, &names, &n, NULL) < 0)
		return 0;       /* the load reports an unreadable directory */
	for (k = 0; k < n; k++) {
		sb_reset(&path);
		if (err == 0 && (err = sb_addf(&path, "%s/%s", dir, names[k])) == 0 &&
		    lstat(sb_str(&path), &st) == 0 && S_ISLNK(st.st_mode))
			err = chain_walk(sb_str(&path), watch_link, r);
		free(names[k]);
	}
	free(names);
	sb_release(&path);
	return err;
}

static bool wd_in(const struct watch *w, size_t n, int wd)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (w[i].wd == wd)
			return true;
	return false;
}

/* Computes the watches again: the specs directory (any *.yaml), and the
 * whole chain of every input path, symlinks included (chain.h), since a
 * reload may follow from a change of the chain itself. Watches of
 * directories no longer in any chain are removed. 1 when a directory is
 * watched that was not before, 0 when none is, or a negative errno. */
static int rebuild_watches(struct reloader *r)
{
	const struct envfs_inputs *in = &r->fs->opts->ci.in;
	struct watch *old = r->w;
	size_t nold = r->nw, i;
	int err;

	r->w = NULL;
	r->nw = 0;
	if ((err = watch_name(r, in->specs_dir, NULL)) < 0 ||
	    (err = chain_walk(in->specs_dir, watch_link, r)) < 0 ||
	    (err = watch_spec_links(r, in->specs_dir)) < 0)
		goto out;
	if (in->config && (err = chain_walk(in->config, watch_link, r)) < 0)
		goto out;
	for (i = 0; i < in->ninherit; i++)
		if ((err = chain_walk(in->inherit[i], watch_link, r)) < 0)
			goto out;
out:
	/* A directory watched now and not before may have changed between
	 * the load that led here and its watch: the caller reads again. */
	for (i = 0; i < r->nw && err == 0; i++)
		if (!wd_in(old, nold, r->w[i].wd))
			err = 1;
	for (i = 0; i < nold; i++) {
		if (!wd_in(r->w, r->nw, old[i].wd) && !wd_in(old, i, old[i].wd))
			inotify_rm_watch(r->ifd, old[i].wd);
		free(old[i].name);
	}
	free(old);
	return err;
}

int reloader_new(struct envfs *fs, struct reloader **out)
{
	struct reloader *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->fs = fs;
	r->efd = -1;
	r->sfd = -1;
	pthread_mutex_init(&r->qlock, NULL);
	pthread_cond_init(&r->sent_cond, NULL);
	atomic_init(&r->stop, false);
	if ((r->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0 ||
	    (r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
	    (r->sfd = eventfd(0, EFD_CLOEXEC)) < 0) {
		err = -errno;
		log_err("cannot watch the inputs: %s", strerror(errno));
		goto out;
	}
	if ((err = rebuild_watches(r)) < 0)
		goto out;
	err = 0;
	*out = r;
	r = NULL;
out:
	reloader_free(r);
	return err;
}

static bool is_yaml(const char *name)
{
	size_t n = strlen(name);

	return (n > 5 && !strcmp(name + n - 5, ".yaml")) ||
	       (n > 4 && !strcmp(name + n - 4, ".yml"));
}

/* Notes that ev's name is being written in place, or no longer is. */
static void track_writer(struct reloader *r, const struct inotify_event *ev)
{
	size_t i;
	struct watch *v;

	for (i = 0; i < r->nopen; i++)
		if (r->open[i].wd == ev->wd && !strcmp(r->open[i].name, ev->name))
			break;
	if (ev->mask & IN_MODIFY) {
		if (i < r->nopen || !(v = realloc(r->open, (r->nopen + 1) * sizeof(*v))))
			return;       /* no memory: the load just will not wait */
		r->open = v;
		if ((v[r->nopen].name = strdup(ev->name))) {
			v[r->nopen].wd = ev->wd;
			r->nopen++;
		}
	} else if (i < r->nopen) {
		/* Closed, or the name now holds another file. */
		free(r->open[i].name);
		r->open[i] = r->open[--r->nopen];
	}
}

static bool event_matters(const struct reloader *r, const struct inotify_event *ev)
{
	size_t i;

	if (ev->mask & IN_Q_OVERFLOW)
		return true;     /* events were lost: reload to be sure */
	if (!ev->len)
		return false;
	for (i = 0; i < r->nw; i++) {
		if (r->w[i].wd != ev->wd)
			continue;
		if (r->w[i].name ? !strcmp(r->w[i].name, ev->name) : is_yaml(ev->name))
			return true;
	}
	return false;
}

/* Reads every pending event; returns how many name a watched input. */
static int drain_events(struct reloader *r)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int hits = 0;

	for (;;) {
		ssize_t n = read(r->ifd, buf, sizeof(buf));
		char *p;

		if (n <= 0) {
			/* A change is a writer that comes and goes: the
			 * patience with one that keeps an input open starts
			 * again. */
			if (hits)
				r->writer_since = 0;
			return hits;   /* EAGAIN: drained */
		}
		for (p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			if (event_matters(r, ev)) {
				hits++;
				if (ev->len)
					track_writer(r, ev);
			}
			p += sizeof(*ev) + ev->len;
		}
	}
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Takes the eventfd's wakeup. False when the thread is to stop. */
static bool take_wakeup(struct reloader *r)
{
	uint64_t v;

	if (read(r->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return false;
	return !atomic_load(&r->stop);
}

/* Waits until the burst is over: RELOAD_QUIET_MS without an event, or
 * RELOAD_MAX_DEBOUNCE_MS after the first one; and until no watched input
 * is open in the middle of an in-place write, or RELOAD_MAX_WRITER_MS. */
static void debounce(struct reloader *r)
{
	long start = now_ms();
	struct pollfd p[2] = {
		{ .fd = r->ifd, .events = POLLIN },
		{ .fd = r->efd, .events = POLLIN },
	};

	for (;;) {
		long elapsed = now_ms() - start, left;

		if (r->nopen && elapsed < RELOAD_MAX_WRITER_MS)
			left = RELOAD_MAX_WRITER_MS - elapsed;
		else
			left = RELOAD_MAX_DEBOUNCE_MS - elapsed;
		if (left <= 0)
			return;
		if (poll(p, 2, left < RELOAD_QUIET_MS ? (int)left : RELOAD_QUIET_MS) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (p[1].revents && !take_wakeup(r))
			return;
		if (p[0].revents)
			drain_events(r);
		else if (!p[1].revents && !r->nopen)
			return;          /* quiet, and nobody is writing */
	}
}

/* envfs_reload's validity check, after the inputs were read: nothing
 * changed them meanwhile (events are taken now and make the loop read
 * again), and no writer has one open, since an in-place rewrite shows
 * readers an empty or half-written file for a moment (a name the config
 * sets before and after would vanish in between). A writer found at
 * every check for RELOAD_MAX_WRITER_MS with no change to any input
 * meanwhile (one that keeps an input open and idle) is waited for no
 * longer; writers that come and go are, for up to RELOAD_MAX_BUSY_MS
 * in all (every change restarts the first wait, drain_events): an input
 * kept open and written to for ever does not stop the reloads. */
static bool inputs_unchanged(void *arg)
{
	struct reloader *r = arg;
	long now;

	if (drain_events(r) > 0)
		return false;
	if (!inputs_being_written(&r->fs->opts->ci.in)) {
		r->writer_since = 0;
		r->busy_since = 0;
		r->busy_said = false;
		return true;
	}
	now = now_ms();
	if (!r->writer_since)
		r->writer_since = now;
	if (!r->busy_since)
		r->busy_since = now;
	if (now - r->writer_since >= RELOAD_MAX_WRITER_MS)
		return true;
	if (now - r->busy_since >= RELOAD_MAX_BUSY_MS) {
		if (!r->busy_said)
			log_warn("an input was kept open and written to for %d s: loaded "
				"as it is now, and again after each change while it stays "
				"open", RELOAD_MAX_BUSY_MS / 1000);
		r->busy_said = true;
		return true;
	}
	usleep(RELOAD_QUIET_MS * 1000);
	return false;
}

static void send_queued(struct reloader *r)
{
	struct inval_list l;
	uint64_t upto;

	pthread_mutex_lock(&r->qlock);
	l = r->queue;
	upto = r->queued;
	memset(&r->queue, 0, sizeof(r->queue));
	pthread_mutex_unlock(&r->qlock);
	if (l.n && !r->fs->opts->noinval)
		inval_send(r->fs->se, &l);
	inval_list_release(&l);
	pthread_mutex_lock(&r->qlock);
	r->sent = upto;
	pthread_cond_broadcast(&r->sent_cond);
	pthread_mutex_unlock(&r->qlock);
}

static void *reloader_main(void *arg)
{
	struct reloader *r = arg;
	struct pollfd p[2] = {
		{ .fd = r->ifd, .events = POLLIN },
		{ .fd = r->efd, .events = POLLIN },
	};

	while (!atomic_load(&r->stop)) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_err("watching the inputs: %s",
				strerror(errno));
			break;
		}
		if (p[1].revents && !take_wakeup(r))
			break;
		if (p[0].revents && drain_events(r) > 0) {
			/* Read again as long as an input changes while it is
			 * read: what is published is one state of the files.
			 * A failed load is reported through status and
			 * diagnostics; the thread goes on watching, what the
			 * inputs' paths lead to now. */
			int watched;

			r->writer_since = 0;
			r->busy_since = 0;
			do {
				do
					debounce(r);
				while (!atomic_load(&r->stop) &&
				       envfs_reload(r->fs, inputs_unchanged, r) == -EAGAIN);
				if ((watched = rebuild_watches(r)) < 0)
					log_warn("the inputs are not all watched "
						"any more");
				/* A new directory watched: what it holds is
				 * read again (an edit made right after the
				 * load had no watch to report it). */
			} while (watched > 0 && !atomic_load(&r->stop));
		}
	}
	return NULL;
}

/* The sender thread: sends what is queued, each time it is woken. The
 * only caller of send_queued, so a batch counted sent has been. */
static void *sender_main(void *arg)
{
	struct reloader *r = arg;
	uint64_t v;

	while (!atomic_load(&r->stop)) {
		if (read(r->sfd, &v, sizeof(v)) < 0 && errno != EINTR)
			break;
		send_queued(r);
	}
	return NULL;
}

int reloader_start(struct reloader *r)
{
	sigset_t all, old;
	int err;

	/* Termination signals belong to the FUSE loop's thread, which exits
	 * the session on them; these threads must not swallow them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&r->sender, NULL, sender_main, r);
	if (err == 0) {
		r->sender_started = true;
		err = -pthread_create(&r->thread, NULL, reloader_main, r);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err < 0) {
		log_err("cannot start the reload thread: %s",
			strerror(-err));
		return err;
	}
	r->started = true;
	return 0;
}

static void poke(int fd)
{
	uint64_t one = 1;

	/* The counter cannot overflow in practice; a full eventfd is still
	 * readable, so the thread wakes either way. */
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0)
		return;
}

/* Wakes the sender: work is queued. */
static void wake(struct reloader *r)
{
	poke(r->sfd);
}

/* Queues l; *ticket is the batch number to wait for. */
static int queue(struct reloader *r, struct inval_list *l, uint64_t *ticket)
{
	size_t i;
	int err = 0;

	pthread_mutex_lock(&r->qlock);
	for (i = 0; i < l->n && err == 0; i++) {
		const struct inval_item *it = &l->v[i];

		err = it->parent ? inval_add_entry(&r->queue, it->parent, it->name,
						   it->name_len)
				 : inval_add_inode(&r->queue, it->ino);
	}
	*ticket = ++r->queued;
	pthread_mutex_unlock(&r->qlock);
	inval_list_release(l);
	wake(r);
	return err;
}

int reloader_queue(struct reloader *r, struct inval_list *l)
{
	uint64_t ticket;

	return queue(r, l, &ticket);
}

struct timespec reload_deadline_in(int ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

int reloader_queue_wait(struct reloader *r, struct inval_list *l, int max_ms)
{
	struct timespec until;
	uint64_t ticket;
	int err, rc = 0;

	if ((err = queue(r, l, &ticket)) < 0)
		return err;
	until = reload_deadline_in(max_ms);
	pthread_mutex_lock(&r->qlock);
	while (r->started && !atomic_load(&r->stop) && r->sent < ticket && rc == 0)
		rc = pthread_cond_timedwait(&r->sent_cond, &r->qlock, &until);
	pthread_mutex_unlock(&r->qlock);
	return rc ? -rc : 0;
}

int reloader_free(struct reloader *r)
{
	struct timespec until;
	size_t i;

	if (!r)
		return 0;
	if (r->started || r->sender_started) {
		atomic_store(&r->stop, true);
		poke(r->efd);
		poke(r->sfd);
		until = reload_deadline_in(RELOAD_STOP_MS);
		/* The sender first: it waits on nothing but the kernel, and a
		 * reload thread stuck on an input (left behind, the daemon
		 * then _exits) must not leave a finished sender unjoined (a
		 * thread leak to ThreadSanitizer, mount_fifo). A sender stuck
		 * on a notification the kernel does not take is left behind
		 * too. */
		if (r->sender_started && pthread_timedjoin_np(r->sender, NULL, &until) != 0)
			return -ETIMEDOUT;
		if (r->started && pthread_timedjoin_np(r->thread, NULL, &until) != 0)
			return -ETIMEDOUT;
	}
	if (r->ifd >= 0)
		close(r->ifd);
	if (r->efd >= 0)
		close(r->efd);
	if (r->sfd >= 0)
		close(r->sfd);
	for (i = 0; i < r->nw; i++)
		free(r->w[i].name);
	free(r->w);
	for (i = 0; i < r->nopen; i++)
		free(r->open[i].name);
	free(r->open);
	inval_list_release(&r->queue);
	pthread_cond_destroy(&r->sent_cond);
	pthread_mutex_destroy(&r->qlock);
	free(r);
	return 0;
}

const struct envfs_reload_hooks reload_hooks = {
	.make = reloader_new,
	.load_initial = envfs_load_initial,
	.start = reloader_start,
	.free = reloader_free,
};

/* diff_inputs: both sides of a diff of two sets of inputs, resolved on two
 * threads (see diff_inputs.h).
 *
 * One after the other, the diff of two 10,000-variable configs costs twice
 * a resolve: the specs are shared, but each config's YAML parse and each
 * launch simulation are not. Here the specs load on one thread while the
 * two configs' YAML is parsed on the other, and then b's directory is
 * resolved on a second thread while a's world is loaded and resolved on
 * this one. The resolver keeps no static state, and two worlds read one
 * spec set without writing to it (its reference count is atomic).
 *
 * What is printed stays that of the serial path: b's load and directory
 * messages, then a's inputs, load and directory messages. One departure:
 * when resolving b's selected directory fails (which only running out of
 * memory does), its message comes after a's, or alone when a's inputs
 * failed, where the serial path stopped at it. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "diff_inputs.h"
#include "load.h"
#include "resolve.h"

/* A world holding only the specs that both sides share. */
struct specs_job {
	struct envfs_inputs in;
	struct world *w;
	int err;
};

static void *specs_job_run(void *p)
{
	struct specs_job *j = p;

	j->err = world_load_sharing(&j->in, NULL, &j->w);
	return NULL;
}

/* One directory resolved and turned into a record, printing nothing. */
struct dir_job {
	const struct world *w;
	const char *backend, *arch;
	unsigned flags;           /* the record's */
	int err;                  /* resolve_dir's */
	int doc_err;              /* rr_doc_from_snapshot's */
	struct rr_doc *doc;
};

static void *dir_job_run(void *p)
{
	struct dir_job *j = p;
	struct snapshot *snap = NULL;

	if ((j->err = resolve_dir(j->w, NULL, j->backend, j->arch, &snap)) == 0)
		j->doc_err = rr_doc_from_snapshot(snap, j->flags, &j->doc);
	snapshot_unref(snap);
	return NULL;
}

/* The config of ci read ahead into *r, when it is a regular file (a FIFO
 * would block, and inputs_finish refuses what is not a file). Returns
 * true when *r is set (caller-owned: config_read_release()). */
static bool read_ahead(const struct cli_inputs *ci, struct config_read *r)
{
	struct stat st;

	if (!ci->config || stat(ci->config, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	if (config_read(ci->config, r) < 0) {
		config_read_release(r);
		return false;
	}
	return true;
}

/* The specs of b loaded on a thread while both configs are read here.
 * Returns the world holding them (caller-owned), or NULL when they did
 * not load: the sides then load them as the serial path does, with its
 * messages. */
static struct world *load_ahead(struct cli_args *a, struct cli_args *b,
				struct config_read *ra, bool *has_a,
				struct config_read *rb, bool *has_b)
{
	struct specs_job j = { .in = { .specs_dir = b->ci.in.specs_dir,
				       .only_backend = b->backend,
				       .values_only = !b->report_only,
				       .host_env = b->ci.in.host_env,
				       .host_root = b->ci.in.host_root } };
	pthread_t t;
	bool threaded = pthread_create(&t, NULL, specs_job_run, &j) == 0;

	*has_b = read_ahead(&b->ci, rb);
	*has_a = read_ahead(&a->ci, ra);
	if (threaded)
		pthread_join(t, NULL);
	else
		specs_job_run(&j);
	if (j.w && (j.err < 0 || !j.w->specs)) {
		world_free(j.w);
		j.w = NULL;
	}
	return j.w;
}

static int side_doc_error(void)
{
	fprintf(stderr, "primus-envfs: diff: out of memory\n");
	return 2;
}

int diff_inputs_resolve(struct cli_args *a, struct cli_args *b, unsigned record_flags,
			struct rr_doc **doc_a, struct rr_doc **doc_b)
{
	struct config_read ra, rb;
	bool has_a = false, has_b = false, threaded = false;
	struct world *specs = NULL, *wa = NULL, *wb = NULL;
	struct dir_job jb = { 0 };
	struct snapshot *snap = NULL;
	const char *arch_a, *arch_b;
	pthread_t t;
	int loaded, err, rc = 2;

	*doc_a = *doc_b = NULL;
	if (inputs_finish(&b->ci) < 0)
		return 2;
	a->report_only = b->report_only = true;
	specs = load_ahead(a, b, &ra, &has_a, &rb, &has_b);
	b->ci.in.config_read = has_b ? &rb : NULL;
	if ((rc = load_one(b, specs, &wb, &arch_b, &loaded)) != 0)
		goto out;
	jb.w = wb;
	jb.backend = b->backend;
	jb.arch = arch_b;
	jb.flags = record_flags;
	if (!(threaded = pthread_create(&t, NULL, dir_job_run, &jb) == 0))
		dir_job_run(&jb);
	rc = 2;
	if (inputs_finish(&a->ci) < 0)
		goto out;
	/* a shares the specs when they are b's directory, as on the serial
	 * path; read ahead, its config is used when it is the one named. */
	a->ci.in.config_read = has_a && a->ci.in.config && !strcmp(a->ci.in.config, ra.path) ?
		&ra : NULL;
	if ((rc = load_one(a, specs && !strcmp(a->ci.specs, b->ci.specs) ? specs : NULL, &wa,
			   &arch_a, &loaded)) != 0)
		goto out;
	rc = 2;
	if ((err = resolve_dir(wa, NULL, a->backend, arch_a, &snap)) < 0) {
		print_resolve_failure(wa, a->backend, arch_a, err);
		goto out;
	}
	if (rr_doc_from_snapshot(snap, record_flags, doc_a) < 0) {
		rc = side_doc_error();
		goto out;
	}
	if (threaded)
		pthread_join(t, NULL);
	threaded = false;
	if (jb.err < 0) {
		print_resolve_failure(wb, b->backend, arch_b, jb.err);
		goto out;
	}
	if (jb.doc_err < 0) {
		rc = side_doc_error();
		goto out;
	}
	*doc_b = jb.doc;
	jb.doc = NULL;
	rc = 0;
out:
	if (threaded)
		pthread_join(t, NULL);
	if (rc != 0) {
		rr_doc_free(*doc_a);
		*doc_a = NULL;
	}
	rr_doc_free(jb.doc);
	snapshot_unref(snap);
	world_free(wa);
	world_free(wb);
	world_free(specs);
	if (has_a)
		config_read_release(&ra);
	if (has_b)
		config_read_release(&rb);
	a->ci.in.config_read = b->ci.in.config_read = NULL;
	return rc;
}

/* primus-envfs verify: the gate a launch script runs before `srun train`.
 * Reads the records the run's nodes publish in etcd (node_record.h) and
 * says whether the N nodes are registered and equal, naming each odd
 * node and the variables that differ, with both values when not secret.
 *
 * Exit 0 equal; 1 some node differs; 2 not N nodes registered after the
 * wait; 3 etcd cannot be reached (or refused a read); 64 the command line.
 *
 * Only the summaries (RUN/nodes/) are read for every node; the details
 * (RUN/node-dirs/<node>/<backend>/<arch>) only for a directory where an
 * odd node and the reference differ, so 256 nodes cost one range of a
 * few hundred kilobytes. The reference is the largest group of equal
 * nodes (on a tie, the one holding the first node by name). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "commands.h"
#include "node_record.h"
#include "strbuf.h"
#include "sync_opts.h"
#include "text.h"

#define VERIFY_EX_DIFFER 1
#define VERIFY_EX_MISSING 2
#define VERIFY_EX_ETCD 3
/* A value shown in a difference is cut after this many bytes. */
#define SHOW_MAX 300
/* A difference further in than this is shown from a little before it. */
#define SHOW_LEAD 40
/* The agreeing nodes named in the verdict (the odd ones always are). */
#define AGREE_SHOWN 8
/* --wait polls the registry this often. */
#define POLL_MS 200

static const char verify_usage[] =
	"usage: primus-envfs verify --sync etcd://HOST:PORT[,...] [--run ID] --nodes N\n"
	"                           [--wait S] [-b BACKEND] [-a ARCH] [-q] [SYNC]\n"
	"\n"
	"Compare the environment every node of the run publishes (each mount with\n"
	"--sync registers its node), before launch. Variables marked scope: node\n"
	"(NODE_RANK, ...) are left out; secrets count by name, never by value.\n"
	"\n"
	"  --nodes N               the run's node count (required)\n"
	"  --wait S                wait up to S seconds (decimals allowed) for N\n"
	"                          nodes to register (default 0: read once)\n"
	"  -b, --backend BACKEND   compare this backend's directories only\n"
	"  -a, --arch ARCH         compare this arch's directories only\n"
	"  -q, --quiet             print nothing: the exit status tells\n"
	"  -h, --help              print this help\n"
	"\n"
	"Exit status: 0 N nodes registered and equal; 1 a node differs (each odd\n"
	"node and variable named, both values shown unless secret); 2 not N nodes\n"
	"registered after the wait (the registered ones named); 3 etcd cannot be\n"
	"reached; 64 the command line is wrong.\n"
	"\n"
	"SYNC:\n";

struct vnode {
	const char *name;             /* borrowed from the summary key */
	struct node_summary *s;       /* NULL: unreadable (why) */
	char why[200];
	int group;
};

struct verify {
	const struct envfs_sync_api *api;
	struct etcd_client *cli;
	struct sync_opts so;
	const char *backend, *arch;   /* -b, -a */
	char *run_key;
	char *nodes_prefix;           /* RUN/nodes/ */
	struct etcd_range range;
	struct vnode *v;
	size_t n;
	bool quiet;
	bool too_many;                /* more than ETCD_RANGE_MAX summaries */
	struct strbuf out;            /* the report, printed at the end */
};

static bool dir_selected(const struct verify *vf, const struct node_dir_sum *d)
{
	return (!vf->backend || !strcmp(vf->backend, d->backend)) &&
	       (!vf->arch || !strcmp(vf->arch, d->arch));
}

static int dir_cmp(const struct node_dir_sum *a, const struct node_dir_sum *b)
{
	int c = strcmp(a->backend, b->backend);

	return c ? c : strcmp(a->arch, b->arch);
}

/* The next selected directory of s from *k on, or NULL. */
static const struct node_dir_sum *next_dir(const struct verify *vf, const struct node_summary *s,
					   size_t *k)
{
	while (*k < s->ndirs && !dir_selected(vf, &s->dirs[*k]))
		(*k)++;
	return *k < s->ndirs ? &s->dirs[*k] : NULL;
}

static bool specs_equal(const struct node_summary *a, const struct node_summary *b)
{
	return a->has_specs_digest == b->has_specs_digest &&
	       (!a->has_specs_digest || !memcmp(a->specs_digest, b->specs_digest, SHA256_LEN));
}

/* Equal for verify: the same specs, the same selected directories with
 * the same node digests. */
static bool summaries_equal(const struct verify *vf, const struct node_summary *a,
			    const struct node_summary *b)
{
	const struct node_dir_sum *x, *y;
	size_t i = 0, j = 0;

	if (!specs_equal(a, b))
		return false;
	for (;; i++, j++) {
		x = next_dir(vf, a, &i);
		y = next_dir(vf, b, &j);
		if (!x || !y)
			return !x && !y;
		if (dir_cmp(x, y) || memcmp(x->digest, y->digest, SHA256_LEN))
			return false;
	}
}

static void free_nodes(struct verify *vf)
{
	size_t k;

	for (k = 0; k < vf->n; k++)
		node_summary_free(vf->v[k].s);
	free(vf->v);
	vf->v = NULL;
	vf->n = 0;
	vf->api->range_free(&vf->range);
}

/* Reads every summary. 0, or -EIO when etcd failed (message printed). */
static int read_nodes(struct verify *vf)
{
	size_t k, plen = strlen(vf->nodes_prefix);
	int err;

	free_nodes(vf);
	if ((err = vf->api->get_prefix(vf->cli, vf->nodes_prefix, 0, &vf->range)) < 0) {
		fprintf(stderr, "primus-envfs: verify: reading %s: %s\n", vf->nodes_prefix,
			vf->api->errmsg(vf->cli));
		return -EIO;
	}
	/* More keys than one range returns: more nodes than --nodes allows. */
	if (vf->range.more)
		vf->too_many = true;
	if (!(vf->v = calloc(vf->range.n ? vf->range.n : 1, sizeof(*vf->v))))
		return -ENOMEM;
	for (k = 0; k < vf->range.n; k++) {
		const struct etcd_kv *kv = &vf->range.kvs[k];
		struct vnode *nd = &vf->v[vf->n];

		/* A summary's key is RUN/nodes/<node>: nothing deeper. */
		if (kv->key_len <= plen || strchr(kv->key + plen, '/'))
			continue;
		nd->name = kv->key + plen;
		vf->n++;
		err = vf->api->decode_summary(kv->value, kv->value_len, &nd->s, nd->why,
					      sizeof(nd->why));
		if (err == -ENOMEM)
			return err;
		if (err == 0 && strcmp(nd->s->node, nd->name)) {
			snprintf(nd->why, sizeof(nd->why), "the record names node '%.64s'",
				 nd->s->node);
			node_summary_free(nd->s);
			nd->s = NULL;
		}
	}
	return 0;
}

/* The names of group's nodes (every node: group -1), the first max of
 * them (0: all) and how many more. */
static int add_names(struct strbuf *sb, const struct verify *vf, int group, size_t max)
{
	size_t k, shown = 0, more = 0;
	int err = 0;

	for (k = 0; k < vf->n && !err; k++) {
		if (group >= 0 && vf->v[k].group != group)
			continue;
		if (max && shown == max) {
			more++;
			continue;
		}
		err = sb_addf(sb, "%s%s", shown ? " " : "", vf->v[k].name);
		shown++;
	}
	if (!err && more)
		err = sb_addf(sb, " and %zu more", more);
	return err;
}

/* The detail of node's directory d, checked against the summary's
 * digest (read twice when a publish raced the read). NULL with why. */
static struct node_detail *read_detail(struct verify *vf, const char *node,
				       const struct node_dir_sum *d, char *why, size_t whylen)
{
	struct etcd_range r = { 0 };
	struct node_detail *det = NULL;
	uint8_t dg[SHA256_LEN];
	char *key = NULL;
	int tries, err;

	if (node_record_keys(vf->run_key, node, NULL, &key) < 0 ||
	    !(key = realloc(key, strlen(key) + strlen(d->backend) + strlen(d->arch) + 2))) {
		free(key);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	strcat(strcat(strcat(key, d->backend), "/"), d->arch);
	for (tries = 0; tries < 2 && !det; tries++) {
		if (tries) {
			struct timespec ts = { 0, 200 * 1000000L };

			nanosleep(&ts, NULL);
		}
		vf->api->range_free(&r);
		if (vf->api->get(vf->cli, key, &r) < 0) {
			snprintf(why, whylen, "reading %s: %s", key, vf->api->errmsg(vf->cli));
			break;
		}
		if (!r.n) {
			snprintf(why, whylen, "no detail record %s", key);
			continue;
		}
		err = vf->api->decode_detail(r.kvs[0].value, r.kvs[0].value_len, &det, why, whylen);
		if (err < 0)
			continue;
		node_detail_digest(det, dg);
		if (memcmp(dg, d->digest, SHA256_LEN)) {
			snprintf(why, whylen, "the detail %s does not match the summary (a publish "
				 "during the read? run verify again)", key);
			node_detail_free(det);
			det = NULL;
		}
	}
	vf->api->range_free(&r);
	free(key);
	return det;
}

/* Where two values' shown part starts: 0, or a little before their first
 * difference when that is far in (two long flag lists that differ in
 * their last flag must not print the same first 300 bytes twice), after
 * a space, ':' or ',' when there is one (a flag, a path, a list item). */
static size_t show_from(const struct node_var *x, const struct node_var *y)
{
	size_t d = 0, n, k;

	if (!x || !y || !x->value || !y->value)
		return 0;
	n = x->value_len < y->value_len ? x->value_len : y->value_len;
	while (d < n && x->value[d] == y->value[d])
		d++;
	if (d <= SHOW_LEAD)
		return 0;
	for (k = d - SHOW_LEAD; k < d; k++)
		if (x->value[k] == ' ' || x->value[k] == ':' || x->value[k] == ',')
			return k + 1;
	return d - SHOW_LEAD;
}

/* One side of a difference: "VALUE" (from byte from on, "..." before),
 * set for a secret, unset, or the hash of a value too long to publish. */
static int add_side(struct strbuf *sb, const char *node, const struct node_var *v, size_t from)
{
	int err;

	if ((err = sb_addf(sb, "%s ", node)) < 0)
		return err;
	if (!v)
		return sb_adds(sb, "unset");
	if (v->secret)
		return sb_adds(sb, "set (secret: value not published)");
	if (!v->value)
		return sb_addf(sb, "(%zu bytes, sha256 %02x%02x%02x%02x...)", v->value_len,
			       v->hash[0], v->hash[1], v->hash[2], v->hash[3]);
	if (from && (err = sb_adds(sb, "...")) < 0)
		return err;
	return text_quote(sb, v->value + from, v->value_len - from, SHOW_MAX);
}

/* A name as it is when it prints plainly (they all do, but for what an
 * input made up), else quoted and escaped. */
static int add_name(struct strbuf *sb, const struct node_var *v)
{
	size_t k;

	for (k = 0; k < v->name_len; k++)
		if (v->name[k] <= ' ' || v->name[k] >= 0x7f || v->name[k] == '"')
			return text_quote(sb, v->name, v->name_len, SHOW_MAX);
	return sb_add(sb, v->name, v->name_len);
}

static int diff_vars(struct strbuf *sb, const char *dir, const char *odd, const struct node_detail *a,
		     const char *ref, const struct node_detail *b)
{
	size_t i = 0, j = 0;
	int err = 0;

	while ((i < a->nvars || j < b->nvars) && !err) {
		const struct node_var *x = i < a->nvars ? &a->vars[i] : NULL;
		const struct node_var *y = j < b->nvars ? &b->vars[j] : NULL;
		int c = !x ? 1 : !y ? -1 : strcmp(x->name, y->name);

		if (c == 0) {
			i++;
			j++;
			if (x->secret == y->secret &&
			    (x->secret || !memcmp(x->hash, y->hash, SHA256_LEN)))
				continue;
		} else if (c < 0) {
			i++;
			y = NULL;
		} else {
			j++;
			x = NULL;
		}
		if ((err = sb_addf(sb, "  %s: ", dir)) < 0 ||
		    (err = add_name(sb, x ? x : y)) < 0 ||
		    (err = sb_adds(sb, ": ")) < 0 ||
		    (err = add_side(sb, odd, x, show_from(x, y))) < 0 ||
		    (err = sb_adds(sb, ", ")) < 0 ||
		    (err = add_side(sb, ref, y, show_from(x, y))) < 0)
			return err;
		err = sb_addc(sb, '\n');
	}
	return err;
}

/* What makes node o differ from the reference r. */
static int explain_odd(struct verify *vf, const struct vnode *o, const struct vnode *r)
{
	struct strbuf *sb = &vf->out;
	const struct node_dir_sum *x, *y;
	size_t i = 0, j = 0;
	char dir[512], why[300];
	int err;

	if ((err = sb_addf(sb, "%s: differs from %s:\n", o->name, r->name)) < 0)
		return err;
	if (!o->s)
		return sb_addf(sb, "  its record cannot be read: %s\n", o->why);
	if (!specs_equal(o->s, r->s) &&
	    (err = sb_addf(sb, "  specs: other spec files than %s's (primus-envfs %s on %s, %s "
			   "on %s)\n", r->name, o->s->version, o->name, r->s->version,
			   r->name)) < 0)
		return err;
	for (;; i++, j++) {
		struct node_detail *a, *b;

		x = next_dir(vf, o->s, &i);
		y = next_dir(vf, r->s, &j);
		if (!x && !y)
			return 0;
		if (!y || (x && dir_cmp(x, y) < 0)) {
			j--;
			err = sb_addf(sb, "  %s/%s: served on %s only\n", x->backend, x->arch, o->name);
		} else if (!x || dir_cmp(x, y) > 0) {
			i--;
			err = sb_addf(sb, "  %s/%s: not served on %s (%s serves it)\n", y->backend,
				      y->arch, o->name, r->name);
		} else if (memcmp(x->digest, y->digest, SHA256_LEN)) {
			snprintf(dir, sizeof(dir), "%s/%s", x->backend, x->arch);
			a = read_detail(vf, o->name, x, why, sizeof(why));
			b = a ? read_detail(vf, r->name, y, why, sizeof(why)) : NULL;
			if (a && b)
				err = diff_vars(sb, dir, o->name, a, r->name, b);
			else
				err = sb_addf(sb, "  %s: differs (%s)\n", dir, why);
			node_detail_free(a);
			node_detail_free(b);
		}
		if (err < 0)
			return err;
	}
}

static int compare(struct verify *vf)
{
	size_t k, j, best = 0, ndirs = 0;
	size_t *size = calloc(vf->n ? vf->n : 1, sizeof(*size));
	int ngroups = 0, ref, err = 0, rc;

	if (!size)
		return -ENOMEM;
	for (k = 0; k < vf->n; k++) {
		struct vnode *a = &vf->v[k];

		a->group = -1;
		for (j = 0; a->s && j < k; j++)
			if (vf->v[j].s && summaries_equal(vf, a->s, vf->v[j].s)) {
				a->group = vf->v[j].group;
				break;
			}
		if (a->group < 0)
			a->group = ngroups++;
		/* An unreadable record is a group of its own, never the
		 * reference while a readable one exists. */
		if (a->s)
			size[a->group]++;
	}
	for (k = 1; k < (size_t)ngroups; k++)
		if (size[k] > size[best])
			best = k;
	ref = (int)best;
	for (k = 0; k < vf->n && !vf->v[k].s; k++)
		;
	if (k == vf->n) {
		err = sb_addf(&vf->out, "verify: run %s: no node's record can be read\n",
			      vf->so.run);
		for (k = 0; k < vf->n && err >= 0; k++)
			err = sb_addf(&vf->out, "%s: %s\n", vf->v[k].name, vf->v[k].why);
		rc = VERIFY_EX_DIFFER;
		goto out;
	}
	for (j = 0; j < vf->v[k].s->ndirs; j++)
		ndirs += dir_selected(vf, &vf->v[k].s->dirs[j]);
	/* A gate that compares nothing must not pass: a misspelt -b. */
	if (!ndirs) {
		fprintf(stderr, "primus-envfs: verify: %s serves no directory %s/%s (see "
			"primus-envfs list)\n", vf->v[k].name, vf->backend ? vf->backend : "*",
			vf->arch ? vf->arch : "*");
		rc = CLI_EX_USAGE;
		goto out;
	}
	if (ngroups == 1) {
		err = sb_addf(&vf->out, "verify: run %s: %zu node%s registered and equal "
			      "(%zu director%s compared)\n", vf->so.run, vf->n, vf->n == 1 ? "" : "s",
			      ndirs, ndirs == 1 ? "y" : "ies");
		rc = 0;
		goto out;
	}
	for (k = 0; k < vf->n && vf->v[k].group != ref; k++)
		;
	if ((err = sb_addf(&vf->out, "verify: run %s: %zu nodes registered, %zu differ%s from "
			   "the %zu that agree (", vf->so.run, vf->n, vf->n - size[ref],
			   vf->n - size[ref] == 1 ? "s" : "", size[ref])) < 0 ||
	    (err = add_names(&vf->out, vf, ref, AGREE_SHOWN)) < 0 ||
	    (err = sb_adds(&vf->out, ")\n")) < 0)
		goto out;
	for (j = 0; j < vf->n && err >= 0; j++)
		if (vf->v[j].group != ref)
			err = explain_odd(vf, &vf->v[j], &vf->v[k]);
	rc = VERIFY_EX_DIFFER;
out:
	free(size);
	return err < 0 ? err : rc;
}

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int run(struct verify *vf, unsigned long nodes, double wait_s)
{
	int64_t deadline = mono_ms() + (int64_t)(wait_s * 1000);
	char msg[1024];
	int err;

	if ((err = sync_load(&vf->api, msg, sizeof(msg))) < 0) {
		fprintf(stderr, "primus-envfs: verify: %s\n", msg);
		return VERIFY_EX_ETCD;
	}
	if (!ENVFS_SYNC_HAS(vf->api, decode_detail)) {
		fprintf(stderr, "primus-envfs: verify: the module %s is older than this "
			"program (no record decoder)\n", sync_module_path());
		return VERIFY_EX_ETCD;
	}
	if ((err = vf->api->open(&vf->cli, &vf->so, msg, sizeof(msg))) < 0) {
		fprintf(stderr, "primus-envfs: verify: --sync: %s\n", msg);
		return err == -EINVAL ? CLI_EX_USAGE : VERIFY_EX_ETCD;
	}
	if (vf->api->connect(vf->cli, NULL) < 0) {
		fprintf(stderr, "primus-envfs: verify: etcd cannot be reached (--sync %s): %s\n",
			vf->so.endpoints, vf->api->errmsg(vf->cli));
		return VERIFY_EX_ETCD;
	}
	for (;;) {
		if ((err = read_nodes(vf)) < 0)
			return err == -EIO ? VERIFY_EX_ETCD : err;
		if (vf->n >= nodes || mono_ms() >= deadline)
			break;
		{
			struct timespec ts = { 0, POLL_MS * 1000000L };

			nanosleep(&ts, NULL);
		}
	}
	if (vf->too_many) {
		err = sb_addf(&vf->out, "verify: run %s: more than %zu nodes registered, --nodes "
			      "says %lu\n", vf->so.run, vf->n, nodes);
		return err < 0 ? err : VERIFY_EX_MISSING;
	}
	if (vf->n != nodes) {
		if ((err = sb_addf(&vf->out, "verify: run %s: %zu node%s registered, --nodes "
				   "says %lu%s%s", vf->so.run, vf->n, vf->n == 1 ? "" : "s",
				   nodes, vf->n < nodes && wait_s > 0 ? " (after the wait)" : "",
				   vf->n ? ": " : "")) < 0 ||
		    (err = add_names(&vf->out, vf, -1, 0)) < 0 ||
		    (err = sb_addc(&vf->out, '\n')) < 0)
			return err;
		return VERIFY_EX_MISSING;
	}
	return compare(vf);
}

int cmd_verify(int argc, char **argv)
{
	enum { OPT_NODES = 0x300, OPT_WAIT };
	static const struct option longopts[] = {
		SYNC_LONG_OPTIONS,
		{ "nodes", required_argument, NULL, OPT_NODES },
		{ "wait", required_argument, NULL, OPT_WAIT },
		{ "backend", required_argument, NULL, 'b' },
		{ "arch", required_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct verify vf = { .out = STRBUF_INIT };
	unsigned long nodes = 0;
	double wait_s = 0;
	char *end;
	int c, rc = CLI_EX_USAGE, err;
	size_t n;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":b:a:qh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_NODES:
			errno = 0;
			nodes = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || !nodes ||
			    nodes > ETCD_RANGE_MAX) {
				fprintf(stderr, "primus-envfs: verify: --nodes '%s' is not a count "
					"from 1 to %d\n", optarg, ETCD_RANGE_MAX);
				goto out;
			}
			break;
		case OPT_WAIT:
			errno = 0;
			wait_s = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(wait_s >= 0) || wait_s > 86400) {
				fprintf(stderr, "primus-envfs: verify: --wait '%s' is not a number "
					"of seconds from 0 to 86400\n", optarg);
				goto out;
			}
			break;
		case 'b':
			vf.backend = optarg;
			break;
		case 'a':
			vf.arch = optarg;
			break;
		case 'q':
			vf.quiet = true;
			break;
		case 'h':
			printf("%s%s", verify_usage, sync_opts_help);
			rc = 0;
			goto out;
		case ':':
			fprintf(stderr, "primus-envfs: verify: %s needs an argument (see "
				"primus-envfs verify --help)\n", argv[optind - 1]);
			goto out;
		case '?':
			fprintf(stderr, "primus-envfs: verify: unknown option '%s' (see "
				"primus-envfs verify --help)\n", argv[optind - 1]);
			goto out;
		default:
			if (SYNC_IS_KEY(c) && sync_opts_take(&vf.so, c, optarg, true) == 0)
				break;
			goto out;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "primus-envfs: verify: unexpected argument '%s' (see "
			"primus-envfs verify --help)\n", argv[optind]);
		goto out;
	}
	if ((err = sync_opts_finish(&vf.so)) < 0) {
		rc = err == -EINVAL ? CLI_EX_USAGE : VERIFY_EX_ETCD;
		goto out;
	}
	if (!vf.so.endpoints || !nodes) {
		fprintf(stderr, "primus-envfs: verify: %s is required (see primus-envfs verify "
			"--help)\n", !vf.so.endpoints ? "--sync" : "--nodes");
		goto out;
	}
	n = strlen(vf.so.prefix) + strlen(vf.so.run) + sizeof("/runs//nodes/");
	if (!(vf.run_key = malloc(n)) || !(vf.nodes_prefix = malloc(n))) {
		fprintf(stderr, "primus-envfs: verify: %s\n", strerror(ENOMEM));
		rc = VERIFY_EX_ETCD;
		goto out;
	}
	snprintf(vf.run_key, n, "%s/runs/%s", vf.so.prefix, vf.so.run);
	snprintf(vf.nodes_prefix, n, "%s/nodes/", vf.run_key);
	rc = run(&vf, nodes, wait_s);
	if (rc < 0) {
		fprintf(stderr, "primus-envfs: verify: %s\n", strerror(-rc));
		rc = VERIFY_EX_ETCD;
	}
	if (!vf.quiet && vf.out.len)
		fwrite(vf.out.buf, 1, vf.out.len, stdout);
out:
	if (vf.api) {
		free_nodes(&vf);
		if (vf.cli)
			vf.api->close(vf.cli);
	}
	sb_release(&vf.out);
	sync_opts_release(&vf.so);
	free(vf.run_key);
	free(vf.nodes_prefix);
	return rc;
}

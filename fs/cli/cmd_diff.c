/* primus-envfs diff: two environments side by side (env_diff.h). A side
 * is a saved run record (record:FILE), a mount's directory (mount:DIR),
 * or a set of inputs: the options of the command line, and for the
 * second side those options followed by what comes after `--`:
 *
 *   $ primus-envfs diff record:good.json --config exp.yaml -b maxtext -a gfx950
 *   $ primus-envfs diff --config a.yaml -b maxtext -a gfx950 -- --config b.yaml
 *   $ primus-envfs diff mount:/mnt/primus record:good.json
 *
 * Every side is turned into a run record and read back through the same
 * decoder, so two sides compare alike whatever they were given as. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "args.h"
#include "commands.h"
#include "diff_inputs.h"
#include "env_diff.h"
#include "flag_token.h"
#include "history.h"
#include "history_decode.h"
#include "infile.h"
#include "node_record.h"
#include "sha256.h"
#include "load.h"
#include "run_record.h"
#include "run_record_decode.h"
#include "sync_api.h"
#include "text.h"
#include "view.h"

/* A record larger than this is not a record: refused before it is read. */
#define DIFF_RECORD_MAX (256u << 20)

static const char *const formats[] = { "text", "json", NULL };

static const struct cli_cmd cmd = {
	.name = "diff",
	.flags = CLI_DIR | CLI_FORMAT | CLI_SIDES | CLI_ALL | CLI_SYNC,
	.synopsis = "[INPUTS] [-b BACKEND -a ARCH] [--all] [--format text|json] A [B] [-- INPUTS]",
	.help =
	"Compare two environments of BACKEND/ARCH: each variable that differs once,\n"
	"with both values and each side's layer and source, XLA_FLAGS flag by flag,\n"
	"and the diagnostics found on one side only. A side is one of:\n"
	"  record:FILE             a run record (primus-envfs record -o FILE)\n"
	"  mount:DIR               the directory BACKEND/ARCH of a mount at DIR\n"
	"  gen:N                   that mount as it was after its generation N (with\n"
	"                          mount:DIR as the other side; primus-envfs history)\n"
	"  node:NAME               what node NAME of a running job publishes (with\n"
	"                          --sync ENDPOINTS --run ID, as verify takes them)\n"
	"  the INPUTS              when one side is named, the other is the INPUTS;\n"
	"                          with none named, a is the INPUTS and b the INPUTS\n"
	"                          followed by the options after --\n"
	"Secrets are never shown, only whether they are the same or differ (a record\n"
	"holds no secret's value, so a secret compared with a record cannot be told).\n"
	"\n"
	"  -b, --backend BACKEND   a backend (default: a record side's)\n"
	"  -a, --arch ARCH         an arch of BACKEND, or host (default: a record side's)\n"
	"      --all               list the variables that are equal too\n"
	"      --format FORMAT     text (default) or json\n"
	"  -h, --help              print this help\n"
	"\n"
	"Exit status: 0 equal; 1 a variable or a diagnostic differs; 2 a side cannot\n"
	"be read; 64 the command line is wrong.\n",
	.formats = formats,
	.format_default = "text",
};

struct side {
	char label[512];
	struct rr_doc *doc;
};

/* A record is decoded here, not through the module: a diff of two records
 * needs no etcd client, and loading the module (libcurl and some ninety
 * libraries behind it) was a tenth of such a diff. */
static int decode(const char *what, const char *p, size_t n, struct rr_doc **out)
{
	char msg[256] = "";
	int err = run_record_decode(p, n, out, msg, sizeof(msg));

	if (err < 0) {
		struct strbuf sb = STRBUF_INIT;

		text_escape(&sb, what, strlen(what));
		fprintf(stderr, "primus-envfs: diff: %s: %s\n", sb_str(&sb), msg);
		sb_release(&sb);
	}
	return err;
}

static int side_from_file(const char *label, const char *path, struct side *s)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	snprintf(s->label, sizeof(s->label), "%s", label);
	if ((err = infile_read(path, DIFF_RECORD_MAX, &buf, &len)) < 0) {
		struct strbuf sb = STRBUF_INIT;

		text_escape(&sb, path, strlen(path));
		fprintf(stderr, "primus-envfs: diff: %s: %s\n", sb_str(&sb),
			err == -EINVAL ? "not a regular file" :
			err == -EFBIG ? "larger than 256 MiB: not a run record" : strerror(-err));
		sb_release(&sb);
		return err;
	}
	err = decode(path, buf, len, &s->doc);
	free(buf);
	return err;
}

/* A mount's record holds no secret's value; the secret's own file does,
 * for those allowed to read it (the mount's owner): compared here, in
 * this process, and never shown. */
static void mount_secrets(const char *dir, struct rr_doc *d)
{
	size_t k;

	for (k = 0; k < d->nvars; k++) {
		struct rr_var *v = &d->vars[k];
		char *path = NULL, *buf = NULL;
		size_t len = 0;

		if (!v->secret || !v->set || v->value || memchr(v->name, '/', v->name_len) ||
		    asprintf(&path, "%s/%s", dir, v->name) < 0)
			continue;
		if (infile_read(path, DIFF_RECORD_MAX, &buf, &len) == 0) {
			/* The file is the value and one '\n'. */
			if (len && buf[len - 1] == '\n')
				buf[--len] = '\0';
			if ((v->value = arena_strndup(d->arena, buf, len)))
				v->value_len = len;
		}
		free(buf);
		free(path);
	}
}

/* Whether mnt is a mount with the directory dir (BACKEND/ARCH): 0, or
 * -ENOENT said on stderr as set says it (the path alone would leave the
 * user to find which part is missing). */
static int mount_has(const char *mnt, const char *dir, const char *backend, const char *arch)
{
	struct strbuf m = STRBUF_INIT, b = STRBUF_INIT, r = STRBUF_INIT, st_path = STRBUF_INIT;
	struct stat st;
	int err = 0;

	text_escape(&m, mnt, strlen(mnt));
	if (sb_addf(&st_path, "%s/status", mnt) == 0 &&
	    (stat(sb_str(&st_path), &st) < 0 || !S_ISREG(st.st_mode))) {
		fprintf(stderr, "primus-envfs: diff: mount:%s: not a primus-envfs mount (no status "
			"file)\n", sb_str(&m));
		err = -ENOENT;
	} else if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		text_escape(&b, backend, strlen(backend));
		text_escape(&r, arch, strlen(arch));
		fprintf(stderr, "primus-envfs: diff: mount:%s: no directory %s/%s\n", sb_str(&m),
			sb_str(&b), sb_str(&r));
		err = -ENOENT;
	}
	sb_release(&m);
	sb_release(&b);
	sb_release(&r);
	sb_release(&st_path);
	return err;
}

static int side_from_mount(const char *mnt, const char *backend, const char *arch,
			   struct side *s)
{
	char *dir = NULL, *path = NULL, label[sizeof(s->label)];
	int err = -ENOMEM;

	if (asprintf(&dir, "%s/env/%s/%s", mnt, backend, arch) < 0) {
		dir = NULL;
		goto out;
	}
	if ((err = mount_has(mnt, dir, backend, arch)) < 0)
		goto out;
	err = -ENOMEM;
	if (asprintf(&path, "%s/record", dir) < 0) {
		path = NULL;
		goto out;
	}
	snprintf(label, sizeof(label), "mount:%s", mnt);
	if ((err = side_from_file(label, path, s)) < 0)
		goto out;
	mount_secrets(dir, s->doc);
out:
	if (err == -ENOMEM)
		fprintf(stderr, "primus-envfs: diff: out of memory\n");
	free(dir);
	free(path);
	return err;
}

/* The inputs of a, resolved here, as the record that keeps the secrets'
 * values (it never leaves this process): what decoding its JSON would
 * give, built directly. For one side of inputs, the other named; two sides
 * of inputs are diff_inputs.h's. Returns an exit status. */
static int side_from_inputs(struct cli_args *a, const char *label, unsigned flags,
			    struct side *s)
{
	struct snapshot *snap = NULL;
	int rc;

	snprintf(s->label, sizeof(s->label), "%s", label);
	if (inputs_finish(&a->ci) < 0)
		return 2;
	a->report_only = true;
	if ((rc = resolve_one(a, &snap)) != 0)
		goto out;
	rc = 0;
	if (rr_doc_from_snapshot(snap, flags, &s->doc) < 0) {
		fprintf(stderr, "primus-envfs: diff: out of memory\n");
		rc = 2;
	}
out:
	snapshot_unref(snap);
	return rc;
}

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static struct rr_var *doc_var(struct rr_doc *d, const char *name)
{
	size_t k;

	for (k = 0; k < d->nvars; k++)
		if (!strcmp(d->vars[k].name, name))
			return &d->vars[k];
	return NULL;
}

/* A flag list's flags from its value alone, as the resolver keys them
 * (the text before '=', the last token winning, in order of first
 * appearance), for a side that keeps only values (a generation): the
 * diff then names the flags that differ, not every flag. The layer of
 * each is not known (NULL). 0 or -ENOMEM. */
static int flags_from_value(struct rr_doc *d, struct rr_var *v)
{
	const char *t = v->value, *end = t ? t + v->value_len : NULL, *at;
	size_t n = 0, cap = 0, k, len, key_len;
	struct rr_flag *f = NULL;

	v->flags = NULL;
	v->nflags = 0;

	while (t && flag_token_next(&t, end, &at, &len, &key_len)) {
		char *flag, *tok;

		if (!(tok = arena_strndup(d->arena, at, len)) ||
		    !(flag = arena_strndup(d->arena, at, key_len)))
			return -ENOMEM;
		for (k = 0; k < n && strcmp(f[k].flag, flag); k++)
			;
		if (k == n) {
			if (n == cap) {
				size_t nc = cap ? 2 * cap : 16;
				struct rr_flag *g = arena_alloc(d->arena, nc * sizeof(*g));

				if (!g)
					return -ENOMEM;
				if (n)
					memcpy(g, f, n * sizeof(*f));
				f = g;
				cap = nc;
			}
			f[n++].flag = flag;
		}
		f[k].token = tok;
		f[k].token_len = len;
		f[k].layer = NULL;
	}
	v->flags = f;
	v->nflags = n;
	return 0;
}

/* Sets v, of d, to what a history value says (the flags are not kept
 * there: a flag list's come from its value, flags_from_value). */
static int take_hist_value(struct rr_doc *d, struct rr_var *v, const struct hist_value *h,
			   bool secret)
{
	char *val = NULL, *layer = NULL, *source = NULL;

	if ((h->value && !(val = arena_strndup(d->arena, h->value, h->len))) ||
	    (h->layer && !(layer = arena_strdup(d->arena, h->layer))) ||
	    (h->source && !(source = arena_strdup(d->arena, h->source))))
		return -ENOMEM;
	v->value = val;
	v->value_len = h->value ? h->len : 0;
	v->layer = layer;
	v->source = source;
	v->set = h->set;
	v->exported = h->set;
	v->secret = secret;
	v->nflags = 0;
	return v->is_flags && !secret ? flags_from_value(d, v) : 0;
}

/* Appends an empty variable name to d; NULL when out of memory. */
static struct rr_var *doc_add(struct rr_doc *d, const char *name)
{
	struct rr_var *v = realloc(d->vars, (d->nvars + 1) * sizeof(*v));

	if (!v)
		return NULL;
	d->vars = v;
	v = &d->vars[d->nvars];
	memset(v, 0, sizeof(*v));
	if (!(v->name = arena_strdup(d->arena, name)))
		return NULL;
	v->name_len = strlen(name);
	d->nvars++;
	return v;
}

/* A node's published detail of backend/arch as a record: its values
 * (a long one by its hash), their layers and sources; no diagnostics
 * (the gate, verify, names those). *out caller-owned. */
static int doc_from_detail(const struct node_detail *nd, struct rr_doc **out)
{
	struct rr_doc *d = rr_doc_new();
	char hex[2 * SHA256_LEN + 1];
	size_t k;

	if (!d)
		return -ENOMEM;
	sha256_hex(nd->digest, hex);
	d->version = RUN_RECORD_VERSION;
	if (!(d->backend = arena_strdup(d->arena, nd->backend)) ||
	    !(d->arch = arena_strdup(d->arena, nd->arch)) ||
	    !(d->digest = arena_strdup(d->arena, hex)) ||
	    (nd->nvars && !(d->vars = calloc(nd->nvars, sizeof(*d->vars)))))
		goto oom;
	for (k = 0; k < nd->nvars; k++) {
		const struct node_var *nv = &nd->vars[k];
		struct rr_var *v = &d->vars[k];

		d->nvars++;
		if (!(v->name = arena_strndup(d->arena, nv->name, nv->name_len)) ||
		    (nv->value && !(v->value = arena_strndup(d->arena, nv->value, nv->value_len))) ||
		    (nv->layer && !(v->layer = arena_strdup(d->arena, nv->layer))) ||
		    (nv->source && !(v->source = arena_strdup(d->arena, nv->source))))
			goto oom;
		v->name_len = nv->name_len;
		v->value_len = nv->value_len;
		v->set = v->exported = true;
		v->secret = nv->secret;
		v->has_hash = !nv->secret;
		memcpy(v->hash, nv->hash, sizeof(v->hash));
	}
	*out = d;
	return 0;
oom:
	rr_doc_free(d);
	return -ENOMEM;
}

/* node:NAME of the run --sync and --run name: its published detail of
 * backend/arch, read from etcd. *c is the client, opened on first use
 * (the caller closes it). Exit status. */
static int side_from_node(const struct envfs_sync_api *api, struct cli_args *a,
			  struct etcd_client **c, const char *node, const char *backend,
			  const char *arch, struct side *s)
{
	struct etcd_range r = { 0 };
	struct node_detail *nd = NULL;
	struct strbuf key = STRBUF_INIT, esc = STRBUF_INIT;
	char msg[512] = "";
	int err, rc = 2;

	snprintf(s->label, sizeof(s->label), "node:%s", node);
	/* A name no node can have is a usage error, as --sync-node's: not a
	 * node etcd was asked about and found nothing of. */
	if (!sync_node_name_ok(node)) {
		text_escape_max(&esc, node, strlen(node), 128);
		rc = cli_usage_error(&cmd, "node:%s is not a node name (printable ASCII, no "
				     "blank or '/', not . or .., at most 253 bytes)", sb_str(&esc));
		goto out;
	}
	if (!*c) {
		if (!a->so.endpoints) {
			rc = cli_usage_error(&cmd, "node:%s needs --sync ENDPOINTS (and --run ID, "
					     "or SLURM_JOB_ID)", node);
			goto out;
		}
		if ((err = sync_opts_finish(&a->so)) < 0) {
			rc = err == -EINVAL ? CLI_EX_USAGE : 2;
			goto out;
		}
		if (api->open(c, &a->so, msg, sizeof(msg)) < 0) {
			fprintf(stderr, "primus-envfs: diff: %s\n", msg);
			goto out;
		}
		if (api->connect(*c, NULL) < 0) {
			fprintf(stderr, "primus-envfs: diff: %s\n", api->errmsg(*c));
			goto out;
		}
	}
	text_escape(&esc, node, strlen(node));
	if (sb_addf(&key, "%s/runs/%s/node-dirs/%s/%s/%s", a->so.prefix, a->so.run, node,
		    backend, arch) < 0)
		goto oom;
	if (api->get(*c, sb_str(&key), &r) < 0) {
		fprintf(stderr, "primus-envfs: diff: %s\n", api->errmsg(*c));
		goto out;
	}
	if (!r.n) {
		fprintf(stderr, "primus-envfs: diff: node %s publishes no %s/%s in run %s (is it "
			"registered? primus-envfs verify lists the nodes)\n", sb_str(&esc), backend,
			arch, a->so.run);
		goto out;
	}
	if (api->decode_detail(r.kvs[0].value, r.kvs[0].value_len, &nd, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "primus-envfs: diff: node %s: its record cannot be read: %s\n",
			sb_str(&esc), msg);
		goto out;
	}
	if (doc_from_detail(nd, &s->doc) < 0)
		goto oom;
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "primus-envfs: diff: out of memory\n");
out:
	node_detail_free(nd);
	api->range_free(&r);
	sb_release(&key);
	sb_release(&esc);
	return rc;
}

/* The mount at mnt as it was after generation gen: its record now, with
 * every later change undone (history, newest first). A variable whose
 * value a change made is shown with the layer and source the history
 * kept; its flags are not kept. Exit status. */
static int side_from_gen(const char *mnt, const char *spec,
			 const char *backend, const char *arch, struct side *s)
{
	struct hist_gen *gens = NULL;
	char *buf = NULL, *path = NULL, msg[256] = "", *end;
	size_t len = 0, n = 0, keep = 0, k, j;
	unsigned long long gen;
	bool found = false;
	int rc = 2;

	errno = 0;
	gen = strtoull(spec, &end, 10);
	if (!*spec || *end || errno || *spec < '0' || *spec > '9')
		return cli_usage_error(&cmd, "'gen:%s' is not a generation number", spec);
	if (!mnt)
		return cli_usage_error(&cmd, "gen:%s needs a mount: name it as the other side, "
				       "mount:DIR", spec);
	if (side_from_mount(mnt, backend, arch, s) < 0)
		return 2;
	if (asprintf(&path, "%s/history", mnt) < 0) {
		path = NULL;
		goto oom;
	}
	if (infile_read(path, DIFF_RECORD_MAX, &buf, &len) < 0 ||
	    history_decode(buf, len, &gens, &n, &keep, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "primus-envfs: diff: %s: %s\n", path, *msg ? msg : "cannot be read");
		goto out;
	}
	for (k = 0; k < n; k++)
		found |= gens[k].generation == gen;
	if (!found) {
		fprintf(stderr, "primus-envfs: diff: %s keeps no generation %llu (it keeps the "
			"last %zu)\n", path, gen, keep);
		goto out;
	}
	for (k = n; k-- > 0 && gens[k].generation > gen;) {
		for (j = gens[k].nchanges; j-- > 0;) {
			const struct hist_change *c = &gens[k].changes[j];
			struct rr_var *v;

			if (strcmp(c->backend, backend) || strcmp(c->arch, arch))
				continue;
			if (!(v = doc_var(s->doc, c->name)) && !(v = doc_add(s->doc, c->name)))
				goto oom;
			if (take_hist_value(s->doc, v, &c->before, c->secret) < 0)
				goto oom;
		}
	}
	snprintf(s->label, sizeof(s->label), "gen:%llu of mount:%s", gen, mnt);
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "primus-envfs: diff: out of memory\n");
out:
	hist_gens_free(gens, n);
	free(buf);
	free(path);
	return rc;
}

/* The side an operand names; exit status. */
static int side_from_operand(const char *op, const char *backend, const char *arch,
			     struct side *s)
{
	if (has_prefix(op, "record:"))
		return side_from_file(op, op + 7, s) < 0 ? 2 : 0;
	if (has_prefix(op, "mount:"))
		return side_from_mount(op + 6, backend, arch, s) < 0 ? 2 : 0;
	return cli_usage_error(&cmd, "'%s' is not a side: write record:FILE, mount:DIR, gen:N "
			       "or node:NAME", op);
}

/* -b and -a, when not given: those of the first record side. */
static void default_dir(struct cli_args *a, const struct side *sides, size_t n)
{
	size_t k;

	for (k = 0; k < n && (!a->backend || !a->arch); k++) {
		if (!sides[k].doc)
			continue;
		if (!a->backend && !a->arch)
			a->dir_from = a->operands[k];
		if (!a->backend)
			a->backend = sides[k].doc->backend;
		if (!a->arch)
			a->arch = sides[k].doc->arch;
	}
}

int cmd_diff(int argc, char **argv)
{
	const struct envfs_sync_api *api = NULL;
	struct etcd_client *etcd = NULL;
	struct cli_args a, b;
	struct side sides[2];
	struct strbuf out = STRBUF_INIT;
	char **left = NULL, **both = NULL, msg[512];
	int split = argc, nleft, nboth, k, rc = CLI_EX_USAGE;
	bool differ = false, b_parsed = false, needs_module = false;

	memset(sides, 0, sizeof(sides));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	for (k = 1; k < argc; k++)
		if (!strcmp(argv[k], "--")) {
			split = k;
			break;
		}
	/* getopt permutes what it parses: copies, so argv stays as given. */
	nleft = split;
	nboth = argc - (split < argc);
	if (!(left = calloc((size_t)argc + 1, sizeof(*left))) ||
	    !(both = calloc((size_t)argc + 1, sizeof(*both)))) {
		fprintf(stderr, "primus-envfs: diff: out of memory\n");
		rc = 2;
		goto out;
	}
	memcpy(left, argv, (size_t)nleft * sizeof(*argv));
	memcpy(both, argv, (size_t)nleft * sizeof(*argv));
	memcpy(both + nleft, argv + split + 1, (size_t)(nboth - nleft) * sizeof(*argv));
	if (cli_parse(&cmd, nleft, left, &a) < 0)
		goto out;
	if (a.help) {
		rc = 0;
		goto out;
	}
	if (a.noperands > 2 || (split < argc && a.noperands > 1)) {
		rc = cli_usage_error(&cmd, "two sides at most: A and B, or A and the inputs");
		goto out;
	}
	if (a.noperands == 0 && split == argc) {
		rc = cli_usage_error(&cmd, "nothing to compare: name a side (record:FILE, "
				     "mount:DIR), or give the second side's inputs after --");
		goto out;
	}
	for (k = 0; k < a.noperands; k++)
		if (!has_prefix(a.operands[k], "record:") && !has_prefix(a.operands[k], "mount:") &&
		    !has_prefix(a.operands[k], "gen:") && !has_prefix(a.operands[k], "node:")) {
			rc = side_from_operand(a.operands[k], NULL, NULL, NULL);
			goto out;
		}
	rc = 2;
	/* Only a node's record (etcd) is read through the module; records,
	 * mounts, their histories and inputs need none of it. */
	for (k = 0; k < a.noperands; k++)
		needs_module |= has_prefix(a.operands[k], "node:");
	if (needs_module && sync_load(&api, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "primus-envfs: diff: %s\n", msg);
		goto out;
	}
	/* Record sides first: they can tell -b and -a. */
	for (k = 0; k < a.noperands; k++)
		if (has_prefix(a.operands[k], "record:") &&
		    (rc = side_from_operand(a.operands[k], NULL, NULL, &sides[k])) != 0)
			goto out;
	default_dir(&a, sides, 2);
	if ((!a.backend || !a.arch)) {
		rc = cli_usage_error(&cmd, "-b BACKEND and -a ARCH are required (no record side "
				     "names them)");
		goto out;
	}
	for (k = 0; k < a.noperands; k++) {
		if (sides[k].doc || has_prefix(a.operands[k], "gen:"))
			continue;
		if (has_prefix(a.operands[k], "node:"))
			rc = side_from_node(api, &a, &etcd, a.operands[k] + 5, a.backend, a.arch,
					    &sides[k]);
		else
			rc = side_from_operand(a.operands[k], a.backend, a.arch, &sides[k]);
		if (rc != 0)
			goto out;
	}
	/* gen:N is a generation of the other side's mount. */
	for (k = 0; k < a.noperands; k++) {
		const char *other = a.noperands == 2 ? a.operands[1 - k] : NULL;

		if (!has_prefix(a.operands[k], "gen:"))
			continue;
		if ((rc = side_from_gen(other && has_prefix(other, "mount:") ? other + 6 : NULL,
					a.operands[k] + 4, a.backend, a.arch, &sides[k])) != 0)
			goto out;
	}
	if (a.noperands < 2) {
		/* The inputs: b's are a's and then those after --. Only the JSON
		 * output shows the directory digest. */
		struct cli_args *in = &a;
		unsigned flags = RUN_RECORD_SECRET_VALUES |
				 (strcmp(a.format, "json") ? RUN_RECORD_NO_DIGEST : 0);

		if (split < argc) {
			if (cli_parse(&cmd, nboth, both, &b) < 0) {
				rc = CLI_EX_USAGE;
				goto out;
			}
			b_parsed = true;
			/* Only options come after --: a word that is none
			 * would be dropped, and the sides compared without it. */
			if (b.noperands > a.noperands) {
				struct strbuf w = STRBUF_INIT;

				if (text_escape_max(&w, b.operands[a.noperands],
						    strlen(b.operands[a.noperands]), 128) < 0)
					sb_reset(&w);
				snprintf(msg, sizeof(msg), "unexpected argument '%s' after --: the "
					 "second side's inputs are options (--config FILE, --env "
					 "NAME=VALUE, ...)", sb_str(&w));
				sb_release(&w);
				rc = cli_usage_error(&cmd, "%s", msg);
				goto out;
			}
			b.backend = a.backend;
			b.arch = a.arch;
			b.dir_from = a.dir_from;
			in = &b;
		}
		if (a.noperands) {
			if ((rc = side_from_inputs(in, "inputs", flags, &sides[1])) != 0)
				goto out;
		} else {
			if ((rc = diff_inputs_resolve(&a, in, flags, &sides[0].doc,
						      &sides[1].doc)) != 0)
				goto out;
			snprintf(sides[0].label, sizeof(sides[0].label), "inputs before --");
			snprintf(sides[1].label, sizeof(sides[1].label), "inputs with those after --");
		}
	}
	rc = 2;
	{
		struct env_diff_side da = { sides[0].doc, sides[0].label };
		struct env_diff_side db = { sides[1].doc, sides[1].label };

		if (env_diff(&da, &db, strcmp(a.format, "json") ? ENV_DIFF_TEXT : ENV_DIFF_JSON,
			     a.all, &out, &differ) < 0) {
			fprintf(stderr, "primus-envfs: diff: out of memory\n");
			goto out;
		}
	}
	fputs(sb_str(&out), stdout);
	rc = fflush(stdout) == 0 ? (differ ? 1 : 0) : 2;
out:
	sb_release(&out);
	for (k = 0; k < 2; k++)
		rr_doc_free(sides[k].doc);
	if (etcd)
		api->close(etcd);
	sync_opts_release(&a.so);
	inputs_release(&a.ci);
	if (b_parsed) {
		sync_opts_release(&b.so);
		inputs_release(&b.ci);
	}
	free(left);
	free(both);
	return rc;
}

/* The layering engine of SPEC section 3: for one <backend>/<arch>, every
 * name's candidates from every layer, the winner, its value (templates and
 * conditions see final values, computed on demand with cycle detection),
 * the XLA_FLAGS-style flag lists of 3.1, and provenance. */
#include "resolve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "resolve_internal.h"
#include "spec_share.h"
#include "template.h"

/* Precedence inside one directory; `mode: set` entries sit between cli and
 * config, the runner above the backend at equal mode. */
enum {
	PRIO_BACKEND = 10, PRIO_RUNNER = 20, PRIO_IMAGE = 30, PRIO_HOST = 40,
	PRIO_CLI = 50, PRIO_BACKEND_SET = 55, PRIO_RUNNER_SET = 56,
	PRIO_CONFIG = 60, PRIO_OVERRIDE = 70,
};

/* One per value a layer offers; a directory's candidates live in one
 * array (rctx.cands), sorted by variable, then precedence. */
struct cand {
	const struct spec_var *sv;      /* spec entries (of the runner's spec
	                                   when layer is LAYER_RUNNER, else the
	                                   backend's) */
	const char *lit;                /* image, host, cli, override */
	size_t lit_len;
	const char *source;
	const char *val;                /* evaluated value (arena or specs) */
	size_t val_len;
	uint32_t var;                   /* index of its rvar */
	uint32_t seq;                   /* order added */
	int32_t cfg;                    /* config entry index, or -1 */
	unsigned char layer;            /* enum layer */
	unsigned char prio;
	signed char applies;            /* -1 not yet known */
	bool unset : 1;                 /* an override that unsets */
	bool have_val : 1;
	bool secret;                    /* the value was built from a secret
	                                   (a taint target: not a bit-field) */
};

enum rstate { ST_NEW, ST_BUSY, ST_DONE };

/* The working entry of one name: 10,000 of them live while a directory
 * is resolved, next to the snapshot being served, so rarely used texts
 * are built in per-depth scratch buffers (rctx.texts) and only their
 * final bytes are kept. */
struct rvar {
	const char *name;
	struct cand *c;                 /* sorted: highest precedence first */
	const struct spec_var *flags_decl; /* kind: flags declaration, if any */
	const char *note;
	/* results */
	const char *val;
	const char *source;
	const char *layers;             /* interned per directory (rctx) */
	const char *shadowed;           /* arena, or NULL */
	const char *explain;            /* arena, or NULL */
	const char *def;
	struct snap_flag *flags;
	const char *effective;
	size_t name_len, val_len;
	uint32_t nc, nflags;
	int32_t win;                    /* index into c, or -1 */
	unsigned layer : 8;             /* enum layer */
	unsigned st : 2;                /* enum rstate */
	bool flags_runner : 1;          /* flags_decl is the runner's */
	bool secret : 1, consumed : 1, cycle_reported : 1;
	/* name, val and source point into the world or the overrides, not
	 * the specs or the arena: the snapshot copies them */
	bool name_ext : 1, val_ext : 1, source_ext : 1;
	bool set : 1, param : 1;        /* param: only an export:false default */
};

/* Deeper reference chains than this are reported, not followed: the
 * evaluation recurses once per link and must stay bounded on hostile specs. */
#define RESOLVE_MAX_DEPTH 64

struct cfgval {
	enum rstate st;
	bool secret;                    /* the value was built from a secret */
	const char *val;
	size_t len;
};

struct rctx {
	const struct world *w;
	const struct spec *backend, *runner;
	const char *arch;
	struct rvar *vars;
	size_t nvars;
	struct cand *cands;             /* every variable's, by variable */
	size_t ncands, capcands;
	struct cfgval *cfg;
	/* build_table only: the variable of each name collect_names() pushed,
	 * by slot (spec_slots()); the add_* functions take them from here
	 * instead of searching, the non-spec ones in push order (next_of) */
	uint32_t *var_of;
	size_t next_of, nslots;
	struct diag_list diags;
	struct arena *arena;
	unsigned depth;                 /* nested resolve_var calls */
	unsigned max_depth;             /* the deepest texts[] used */
	bool depth_reported;
	bool depth_cut;                 /* the last -ELOOP was the depth bound */
	struct rvar *cur;               /* the variable being resolved */
	bool *taint;                    /* the cached value being computed */
	const char *layer_text[1u << (LAYER_OVERRIDE + 1)]; /* by layer mask */
	/* shadowed and explain lines of the variable being built at each
	 * depth (resolve_var nests), kept in the arena when it is done */
	struct strbuf texts[RESOLVE_MAX_DEPTH + 1][2];
};

static struct rvar *find_var(struct rctx *r, const char *name, size_t len)
{
	size_t lo = 0, hi = r->nvars;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct rvar *v = &r->vars[mid];
		size_t n = v->name_len < len ? v->name_len : len;
		int c = memcmp(v->name, name, n);

		if (!c)
			c = v->name_len < len ? -1 : v->name_len > len;
		if (!c)
			return &r->vars[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A value built from a secret is as secret as its source: the variable
 * being resolved and the cached value being computed both become secret,
 * so a later reader of that cache inherits it too. */
static void taint(struct rctx *r)
{
	if (r->cur)
		r->cur->secret = true;
	if (r->taint)
		*r->taint = true;
}

/* ---- building the candidate table ------------------------------------ */

struct name_ref {
	const char *name;
	size_t len;
	uint32_t slot;                  /* where its variable goes in rctx.var_of */
};

static int name_ref_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The names of one directory in three runs, each sorted before they are
 * merged: the runner's and the backend's (pushed in by_name order, so
 * sorted already) and the rest (image, host, cli, config, overrides). */
struct names {
	struct name_ref *v;
	size_t n, cap;
	size_t nrunner, nbackend;       /* lengths of the first two runs */
};

static int names_push(struct names *ns, const char *name, size_t len, size_t slot)
{
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 256;
		struct name_ref *v = realloc(ns->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ns->v = v;
		ns->cap = cap;
	}
	if (slot >= UINT32_MAX)
		return -EFBIG;
	ns->v[ns->n].name = name;
	ns->v[ns->n].len = len;
	ns->v[ns->n].slot = (uint32_t)slot;
	ns->n++;
	return 0;
}

static bool host_allowed(const struct rctx *r, const struct env_pair *p)
{
	return world_host_allowed(r->w, r->backend, p);
}

static bool spec_var_here(const struct rctx *r, const struct spec_var *sv)
{
	return spec_var_applies_to_arch(sv, r->arch);
}

static const struct override *dir_override(const struct rctx *r, const struct override_set *ov,
					   size_t k)
{
	const struct override *o = &ov->v[k];

	if (strcmp(o->backend, r->backend->backend) || strcmp(o->arch, r->arch))
		return NULL;
	return o;
}

/* The var_of slots of the runner's vars come first, then the backend's
 * (both by index in their spec), then the other names in push order. */
static size_t spec_slots(const struct spec *s)
{
	return s ? s->nvars : 0;
}

/* Pushes the names of s in by_name order (a sorted run); the slot of
 * s->vars[k] is base + k. */
static int push_spec(struct rctx *r, struct names *ns, const struct spec *s, size_t base)
{
	size_t k;
	int err = 0;

	for (k = 0; s && k < s->nvars && !err; k++) {
		const struct spec_var *sv = &s->vars[s->by_name[k]];

		if (spec_var_here(r, sv))
			err = names_push(ns, sv->name, strlen(sv->name), base + s->by_name[k]);
	}
	return err;
}

static int collect_names(struct rctx *r, const struct override_set *ov, struct names *ns)
{
	const struct world *w = r->w;
	size_t k, slot = spec_slots(r->runner) + spec_slots(r->backend);
	int err;

	if ((err = push_spec(r, ns, r->runner, 0)) < 0)
		return err;
	ns->nrunner = ns->n;
	if ((err = push_spec(r, ns, r->backend, spec_slots(r->runner))) < 0)
		return err;
	ns->nbackend = ns->n - ns->nrunner;
	for (k = 0; k < w->image.n && !err; k++)
		err = names_push(ns, w->image.v[k].name, strlen(w->image.v[k].name), slot++);
	for (k = 0; k < w->host.n && !err; k++)
		if (host_allowed(r, &w->host.v[k]))
			err = names_push(ns, w->host.v[k].name, strlen(w->host.v[k].name),
					 slot++);
	for (k = 0; k < w->cli.n && !err; k++)
		err = names_push(ns, w->cli.v[k].name, strlen(w->cli.v[k].name), slot++);
	for (k = 0; w->config && k < w->config->nenv && !err; k++)
		err = names_push(ns, w->config->env[k].name, strlen(w->config->env[k].name),
				 slot++);
	for (k = 0; ov && k < ov->n && !err; k++)
		if (dir_override(r, ov, k))
			err = names_push(ns, ov->v[k].name, strlen(ov->v[k].name), slot++);
	return err;
}

/* Merges the sorted runs a and b into out. out may be the slots just
 * before b (b at out + na): each write lands before the next unread
 * element of b, so nothing is overwritten before it is read. */
static void merge_names(const struct name_ref *a, size_t na, const struct name_ref *b,
			size_t nb, struct name_ref *out)
{
	size_t i = 0, j = 0;

	while (i < na && j < nb)
		*out++ = name_ref_cmp(&a[i], &b[j]) <= 0 ? a[i++] : b[j++];
	while (i < na)
		*out++ = a[i++];
	while (j < nb)
		*out++ = b[j++];
}

/* Sorts the collected names: the rest is sorted, then the three runs are
 * merged, which is linear in the spec names every directory has. */
static int sort_names(struct names *ns)
{
	size_t nspec = ns->nrunner + ns->nbackend;
	struct name_ref *tmp;

	if (ns->n - nspec > 1)
		qsort(ns->v + nspec, ns->n - nspec, sizeof(*ns->v), name_ref_cmp);
	if (!ns->nrunner || !ns->nbackend) {
		/* One spec run: merge a copy of it with the rest back into v. */
		if (nspec && nspec < ns->n) {
			if (!(tmp = malloc(nspec * sizeof(*tmp))))
				return -ENOMEM;
			memcpy(tmp, ns->v, nspec * sizeof(*tmp));
			merge_names(tmp, nspec, ns->v + nspec, ns->n - nspec, ns->v);
			free(tmp);
		}
		return 0;
	}
	if (!(tmp = malloc(nspec * sizeof(*tmp))))
		return -ENOMEM;
	merge_names(ns->v, ns->nrunner, ns->v + ns->nrunner, ns->nbackend, tmp);
	merge_names(tmp, nspec, ns->v + nspec, ns->n - nspec, ns->v);
	free(tmp);
	return 0;
}

/* The variable of the next name collect_names() pushed after the specs',
 * which must be name: the add_* calls follow collect_names()' order and
 * filters, and a slip there would give a value to the wrong variable.
 * NULL (an internal error) when it is not. */
static struct rvar *next_var(struct rctx *r, const char *name)
{
	struct rvar *v;

	if (r->next_of >= r->nslots)
		return NULL;
	v = &r->vars[r->var_of[r->next_of++]];
	return strlen(name) == v->name_len && !memcmp(name, v->name, v->name_len) ? v : NULL;
}

static int add_cand(struct rctx *r, struct rvar *v, struct cand c)
{
	if (!v)
		return -EINVAL;
	/* collect_names() sized the array for every candidate already. */
	if (r->ncands == r->capcands) {
		size_t cap = r->capcands ? r->capcands * 2 : 16;
		struct cand *p = realloc(r->cands, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		r->cands = p;
		r->capcands = cap;
	}
	if (r->ncands >= UINT32_MAX)
		return -EFBIG;
	c.var = (uint32_t)(v - r->vars);
	c.seq = (uint32_t)r->ncands;
	c.applies = -1;
	r->cands[r->ncands++] = c;
	v->nc++;
	return 0;
}

/* A secret is secret in every directory: a backend that does without the
 * runner base (torch_fl) must still not show the base's secrets
 * (HF_TOKEN, WANDB_API_KEY, ...) world-readable, in plain views and in
 * explain, when an input sets them (tests/mount/access.sh). */
static int add_runner_secrets(struct rctx *r, const struct spec *base)
{
	struct rvar *v;
	size_t k;

	for (k = 0; base && !r->runner && k < base->nvars; k++)
		if (base->vars[k].secret &&
		    (v = find_var(r, base->vars[k].name, strlen(base->vars[k].name))))
			v->secret = true;
	return 0;
}

static int add_spec(struct rctx *r, const struct spec *s, bool runner)
{
	size_t k, base = runner ? 0 : spec_slots(r->runner);
	int err;

	for (k = 0; s && k < s->nvars; k++) {
		const struct spec_var *sv = &s->vars[k];
		struct rvar *v;
		struct cand c = { .cfg = -1 };

		if (!spec_var_here(r, sv))
			continue;
		v = &r->vars[r->var_of[base + k]];
		/* The snapshot points at the specs' copy of the name. */
		v->name = sv->name;
		v->name_ext = false;
		v->secret |= sv->secret;
		if (sv->note && !v->note)
			v->note = sv->note;
		if (sv->kind == SPEC_KIND_FLAGS) {
			/* The backend's declaration replaces the runner's. */
			if (!v->flags_decl || !runner) {
				v->flags_decl = sv;
				v->flags_runner = runner;
			}
			continue;
		}
		if (!sv->value)
			continue;
		c.layer = runner ? LAYER_RUNNER : LAYER_BACKEND;
		if (sv->mode == SPEC_MODE_SET)
			c.prio = runner ? PRIO_RUNNER_SET : PRIO_BACKEND_SET;
		else
			c.prio = runner ? PRIO_RUNNER : PRIO_BACKEND;
		c.sv = sv;
		if ((err = add_cand(r, v, c)) < 0)
			return err;
	}
	return 0;
}

static int add_list(struct rctx *r, const struct env_list *l, enum layer layer, int prio)
{
	size_t k;
	int err;

	for (k = 0; k < l->n; k++) {
		struct cand c = { .layer = layer, .prio = prio, .cfg = -1 };

		if (layer == LAYER_HOST && !host_allowed(r, &l->v[k]))
			continue;
		c.lit = l->v[k].value;
		c.lit_len = l->v[k].value_len;
		c.source = l->v[k].source;
		if ((err = add_cand(r, next_var(r, l->v[k].name), c)) < 0)
			return err;
	}
	return 0;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->var != y->var)
		return (x->var > y->var) - (x->var < y->var);
	if (x->prio != y->prio)
		return y->prio - x->prio;
	return (y->seq > x->seq) - (y->seq < x->seq);
}

/* Orders the candidates by variable, then precedence (cand_cmp), in
 * linear time: each variable's slice is placed by the counts add_cand()
 * kept in nc, then the few candidates of one name are sorted apart. In
 * place, with one index per candidate: the table of a 10,000-name
 * directory is part of a reload's peak. */
static int group_cands(struct rctx *r)
{
	uint32_t *dest = malloc((r->ncands ? r->ncands : 1) * sizeof(*dest));
	size_t k, off = 0;

	if (!dest)
		return -ENOMEM;
	for (k = 0; k < r->nvars; k++) {
		r->vars[k].c = r->cands + off;
		off += r->vars[k].nc;
		r->vars[k].nc = 0;
	}
	for (k = 0; k < r->ncands; k++) {
		struct rvar *v = &r->vars[r->cands[k].var];

		dest[k] = (uint32_t)(v->c - r->cands) + v->nc++;
	}
	/* Follows each cycle of the permutation, one element into place per
	 * swap. */
	for (k = 0; k < r->ncands; k++) {
		while (dest[k] != k) {
			uint32_t d = dest[k];
			struct cand t = r->cands[d];

			r->cands[d] = r->cands[k];
			dest[k] = dest[d];
			dest[d] = d;
			r->cands[k] = t;
		}
	}
	free(dest);
	for (k = 0; k < r->nvars; k++) {
		struct rvar *v = &r->vars[k];
		size_t i, j;

		if (!v->nc) {
			v->c = NULL;
		} else if (v->nc > 16) {
			/* Only a spec repeating a name many times gets here:
			 * insertion would be quadratic in it. */
			qsort(v->c, v->nc, sizeof(*v->c), cand_cmp);
		} else {
			for (i = 1; i < v->nc; i++) {
				struct cand t = v->c[i];

				for (j = i; j && cand_cmp(&t, &v->c[j - 1]) < 0; j--)
					v->c[j] = v->c[j - 1];
				v->c[j] = t;
			}
		}
	}
	return 0;
}

static int build_table(struct rctx *r, const struct override_set *ov)
{
	struct names ns = { 0 };
	const struct world *w = r->w;
	size_t k, n = 0, nslots;
	int err;

	if ((err = collect_names(r, ov, &ns)) < 0 || (err = sort_names(&ns)) < 0)
		goto out;
	/* Slots of spec entries for another arch stay unused. */
	nslots = spec_slots(r->runner) + spec_slots(r->backend) + ns.n - ns.nrunner -
		 ns.nbackend;
	r->next_of = spec_slots(r->runner) + spec_slots(r->backend);
	r->nslots = nslots;
	err = -ENOMEM;
	if (!(r->vars = calloc(ns.n ? ns.n : 1, sizeof(*r->vars))) ||
	    !(r->cands = malloc((ns.n ? ns.n : 1) * sizeof(*r->cands))) ||
	    !(r->var_of = malloc((nslots ? nslots : 1) * sizeof(*r->var_of))))
		goto out;
	r->capcands = ns.n ? ns.n : 1;
	for (k = 0; k < ns.n; k++) {
		if (!n || name_ref_cmp(&ns.v[k], &ns.v[k - 1])) {
			r->vars[n].name = ns.v[k].name;
			r->vars[n].name_len = ns.v[k].len;
			r->vars[n].win = -1;
			r->vars[n].name_ext = true;
			n++;
		}
		r->var_of[ns.v[k].slot] = (uint32_t)(n - 1);
	}
	r->nvars = n;
	if ((err = add_spec(r, r->runner, true)) < 0 ||
	    (err = add_spec(r, r->backend, false)) < 0 ||
	    (err = add_runner_secrets(r, w->specs->runner)) < 0 ||
	    (err = add_list(r, &w->image, LAYER_IMAGE, PRIO_IMAGE)) < 0 ||
	    (err = add_list(r, &w->host, LAYER_HOST, PRIO_HOST)) < 0 ||
	    (err = add_list(r, &w->cli, LAYER_CLI, PRIO_CLI)) < 0)
		goto out;
	for (k = 0; w->config && k < w->config->nenv; k++) {
		struct cand c = { .layer = LAYER_CONFIG, .prio = PRIO_CONFIG, .cfg = (int)k };

		if ((err = add_cand(r, next_var(r, w->config->env[k].name), c)) < 0)
			goto out;
	}
	for (k = 0; ov && k < ov->n; k++) {
		const struct override *o = dir_override(r, ov, k);
		struct cand c = { .layer = LAYER_OVERRIDE, .prio = PRIO_OVERRIDE, .cfg = -1,
				  .source = "override" };

		if (!o)
			continue;
		c.lit = o->value;
		c.lit_len = o->value_len;
		c.unset = !o->value;
		c.secret = o->private;
		if ((err = add_cand(r, next_var(r, o->name), c)) < 0)
			goto out;
	}
	/* Every name collect_names() pushed was given its candidate. */
	if (r->next_of != r->nslots) {
		err = -EINVAL;
		goto out;
	}
	if ((err = group_cands(r)) < 0)
		goto out;
	for (k = 0; k < r->nvars; k++) {
		struct rvar *v = &r->vars[k];

		if (v->flags_decl && v->flags_decl->append_from) {
			struct rvar *a = find_var(r, v->flags_decl->append_from,
						  strlen(v->flags_decl->append_from));
			if (a)
				a->consumed = true;
		}
	}
	if (w->config && !(r->cfg = calloc(w->config->nenv ? w->config->nenv : 1,
					   sizeof(*r->cfg))))
		err = -ENOMEM;
out:
	free(ns.v);
	free(r->var_of);
	r->var_of = NULL;
	return err;
}

/* ---- evaluation ------------------------------------------------------ */

static int resolve_var(struct rctx *r, struct rvar *v);
static int cand_value(struct rctx *r, struct rvar *v, struct cand *c);

static void report_cycle(struct rctx *r, struct rvar *v, const char *file, unsigned line)
{
	/* A reference left unexpanded by the depth bound is not a cycle; the
	 * bound has its own diagnostic. */
	if (r->depth_cut) {
		r->depth_cut = false;
		return;
	}
	if (v->cycle_reported)
		return;
	v->cycle_reported = true;
	diag_add(&r->diags, DIAG_ERROR, file, line, 0,
		 "%s: reference cycle; the references in the cycle are left unexpanded",
		 v->name);
}

/* Templates and conditions see final values; a parameter (export: false)
 * reads as its default, as the code that owns it does. */
static int final_lookup(void *ctx, const char *name, size_t len, const char **val,
			size_t *vlen)
{
	struct rctx *r = ctx;
	struct rvar *v = find_var(r, name, len);
	int err;

	if (!v)
		return 0;
	if ((err = resolve_var(r, v)) < 0)
		return err;
	if (!v->set && !v->param)
		return 0;
	if (v->secret)
		taint(r);
	*val = v->val;
	*vlen = v->val_len;
	return 1;
}

/* The spec a spec candidate (or flag declaration) comes from. */
static const struct spec *spec_of(const struct rctx *r, bool runner)
{
	return runner ? r->runner : r->backend;
}

static const struct spec *flags_spec(const struct rctx *r, const struct rvar *v)
{
	return spec_of(r, v->flags_runner);
}

static const char *cand_file(const struct rctx *r, const struct cand *c, unsigned *line)
{
	*line = c->sv ? c->sv->line : 0;
	return c->sv ? spec_of(r, c->layer == LAYER_RUNNER)->display : NULL;
}

static int cand_applies(struct rctx *r, struct rvar *v, struct cand *c)
{
	struct expr *e = NULL;
	char msg[160];
	bool ok = true, cycle = false;
	unsigned line;
	int err = 0;

	if (c->applies >= 0)
		return c->applies;
	if (c->sv && c->sv->when) {
		/* Parsed again here: specs are checked at load, and conditions
		 * are few and short. */
		if ((err = expr_parse(c->sv->when, &e, msg, sizeof(msg))) < 0)
			return err == -ENOMEM ? err : 0;
		err = expr_eval(e, final_lookup, r, &ok, &cycle);
		expr_free(e);
		if (err < 0)
			return err;
		if (cycle)
			report_cycle(r, v, cand_file(r, c, &line), c->sv->line);
	}
	c->applies = ok;
	return ok;
}

static int expand(struct rctx *r, struct rvar *v, const char *src, const char *file,
		  unsigned line, const char **out, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	struct tmpl_result res = { 0 };
	int err;

	/* Without a '$' the template is its own value: point at the specs'
	 * bytes (the snapshot holds the specs) instead of copying them. */
	if (!strchr(src, '$')) {
		*out = src;
		*len = strlen(src);
		return 0;
	}
	if ((err = tmpl_expand(src, final_lookup, r, &sb, &res)) < 0)
		goto out;
	if (res.cycle)
		report_cycle(r, v, file, line);
	if (res.problem[0])
		diag_add(&r->diags, DIAG_WARNING, file, line, 0, "%s: %s", v->name, res.problem);
	err = -ENOMEM;
	if (!(*out = arena_strndup(r->arena, sb_str(&sb), sb.len)))
		goto out;
	*len = sb.len;
	err = 0;
out:
	sb_release(&sb);
	return err;
}

/* ---- the config env: block, expanded against what is set before it ---- */

struct cfg_lookup {
	struct rctx *r;
	size_t index;
};

static int cfg_value(struct rctx *r, size_t k, const char **val, size_t *len);

/* "Already set" for the env: block: image, host, cli, runner or override,
 * or an earlier key of the block; never the backend defaults. */
static int pre_config_lookup(void *ctx, const char *name, size_t len, const char **val,
			     size_t *vlen)
{
	struct cfg_lookup *cl = ctx;
	struct rctx *r = cl->r;
	const struct config *cfg = r->w->config;
	struct rvar *v;
	size_t k, i;
	int err;

	for (k = cl->index; k-- > 0;)
		if (strlen(cfg->env[k].name) == len && !memcmp(cfg->env[k].name, name, len)) {
			if ((v = find_var(r, name, len)) && v->secret)
				taint(r);
			return cfg_value(r, k, val, vlen);
		}
	if (!(v = find_var(r, name, len)))
		return 0;
	for (i = 0; i < v->nc; i++) {
		struct cand *c = &v->c[i];

		if (c->layer == LAYER_CONFIG || c->layer == LAYER_BACKEND)
			continue;
		if ((err = cand_applies(r, v, c)) < 0)
			return err;
		if (!err)
			continue;
		if (c->unset)
			return 0;
		if (c->sv && !c->sv->export)
			continue;
		if ((err = cand_value(r, v, c)) < 0)
			return err;
		if (v->secret || c->secret)
			taint(r);
		*val = c->val;
		*vlen = c->val_len;
		return 1;
	}
	return 0;
}

static int cfg_value(struct rctx *r, size_t k, const char **val, size_t *len)
{
	struct cfgval *cv = &r->cfg[k];
	const struct config_entry *e = &r->w->config->env[k];
	struct cfg_lookup cl = { r, k };
	struct strbuf sb = STRBUF_INIT;
	bool *outer = r->taint;
	int err = 0;

	if (cv->st == ST_BUSY)
		return -ELOOP;
	if (cv->st == ST_NEW && !memchr(e->raw, '$', e->raw_len)) {
		/* Nothing to expand: config_expand() would copy it as is. */
		cv->st = ST_DONE;
		if (!(cv->val = arena_strndup(r->arena, e->raw, e->raw_len)))
			return -ENOMEM;
		cv->len = e->raw_len;
	}
	if (cv->st == ST_NEW) {
		cv->st = ST_BUSY;
		r->taint = &cv->secret;
		err = config_expand(r->w->config, e, pre_config_lookup, &cl, &sb, &r->diags);
		r->taint = outer;
		if (!err && !(cv->val = arena_strndup(r->arena, sb_str(&sb), sb.len)))
			err = -ENOMEM;
		cv->len = sb.len;
		sb_release(&sb);
		cv->st = ST_DONE;
		if (err < 0)
			return err;
	}
	if (cv->secret)
		taint(r);
	*val = cv->val;
	*len = cv->len;
	return 1;
}

static int cand_value(struct rctx *r, struct rvar *v, struct cand *c)
{
	bool *outer = r->taint;
	unsigned line;
	int err = 0;

	if (!c->have_val) {
		r->taint = &c->secret;
		if (c->cfg >= 0)
			err = cfg_value(r, (size_t)c->cfg, &c->val, &c->val_len);
		else if (c->sv)
			err = expand(r, v, c->sv->value, cand_file(r, c, &line), c->sv->line,
				     &c->val, &c->val_len);
		else {
			c->val = c->lit ? c->lit : "";
			c->val_len = c->lit_len;
		}
		r->taint = outer;
		if (err < 0)
			return err;
		c->have_val = true;
	}
	if (c->secret) {
		v->secret = true;
		taint(r);
	}
	return 0;
}

/* v's source from c: "file:line" straight into the arena (one per
 * variable, so no printf and no temporary buffer: this ran at 8% of a
 * 10,000-variable load), or the literal's own source. */
static int cand_source(struct rctx *r, const struct cand *c, struct rvar *v)
{
	const char **out = &v->source;
	char digits[12];
	const char *file;
	unsigned line;
	size_t flen, nd = 0;
	char *p;

	if (c->sv) {
		file = spec_of(r, c->layer == LAYER_RUNNER)->display;
		line = c->sv->line;
	} else if (c->cfg >= 0) {
		file = r->w->config->file;
		line = r->w->config->env[c->cfg].line;
	} else {
		*out = c->source;
		v->source_ext = true;
		return 0;
	}
	v->source_ext = false;
	do
		digits[nd++] = (char)('0' + line % 10);
	while ((line /= 10));
	flen = strlen(file);
	if (!(p = arena_alloc_text(r->arena, flen + 1 + nd + 1)))
		return -ENOMEM;
	memcpy(p, file, flen);
	p[flen] = ':';
	while (nd)
		p[++flen] = digits[--nd];
	p[flen + 1] = '\0';
	*out = p;
	return 0;
}

/* The shadowed and explain lines of the variable being built. */
static struct strbuf *shadow_buf(struct rctx *r)
{
	return &r->texts[r->depth][0];
}

static struct strbuf *explain_buf(struct rctx *r)
{
	return &r->texts[r->depth][1];
}

/* "layer=value\n"; without printf, as every value a layer shadows
 * passes here. */
static int add_shadow(struct rctx *r, struct rvar *v, const struct cand *c)
{
	struct strbuf *sb = shadow_buf(r);
	int err;

	if ((err = sb_adds(sb, layer_name(c->layer))) < 0 || (err = sb_addc(sb, '=')) < 0)
		return err;
	if (c->unset)
		err = sb_adds(sb, "(unset)");
	else if (v->secret)
		err = sb_adds(sb, "<redacted>");
	else
		err = sb_add(sb, c->val, c->val_len);
	return err < 0 ? err : sb_addc(sb, '\n');
}

/* "backend runner ..." for mask, low to high: built once per directory
 * and shared by every variable with the same layers. */
static int finish_layers(struct rctx *r, struct rvar *v, unsigned mask)
{
	struct strbuf sb = STRBUF_INIT;
	enum layer l;
	int err = 0;

	mask &= (1u << (LAYER_OVERRIDE + 1)) - 1;
	if (!mask || r->layer_text[mask]) {
		v->layers = r->layer_text[mask];
		return 0;
	}
	for (l = LAYER_BACKEND; l <= LAYER_OVERRIDE && !err; l++)
		if (mask & (1u << l))
			err = (sb.len ? sb_addc(&sb, ' ') : 0) ?: sb_adds(&sb, layer_name(l));
	if (!err && !(r->layer_text[mask] = arena_strndup(r->arena, sb_str(&sb), sb.len)))
		err = -ENOMEM;
	v->layers = r->layer_text[mask];
	sb_release(&sb);
	return err;
}

static int build_value(struct rctx *r, struct rvar *v)
{
	unsigned mask = 0;
	bool have_def = false;
	size_t i;
	int err;

	for (i = 0; i < v->nc; i++) {
		struct cand *c = &v->c[i];

		if ((err = cand_applies(r, v, c)) < 0)
			return err;
		if (!err)
			continue;
		if ((err = cand_value(r, v, c)) < 0)
			return err;
		mask |= 1u << c->layer;
		if (c->sv && !have_def) {
			have_def = true;
			v->def = c->val;
		}
		if (v->win < 0) {
			v->win = (int)i;
			continue;
		}
		if ((err = add_shadow(r, v, c)) < 0)
			return err;
	}
	if (v->win >= 0) {
		struct cand *w = &v->c[v->win];

		v->layer = w->layer;
		if ((err = cand_source(r, w, v)) < 0)
			return err;
		v->val = w->val;
		v->val_len = w->val_len;
		v->val_ext = w->lit != NULL;
		v->set = !w->unset && !(w->sv && !w->sv->export);
		v->param = w->sv && !w->sv->export;
		if (w->unset)
			v->val = NULL;
	}
	return finish_layers(r, v, mask);
}

/* ---- flag lists (SPEC 3.1) ------------------------------------------- */

struct part {
	const char *text;
	size_t len;
	enum layer layer;
};

static int effective_flags(struct rctx *r, struct rvar *v, const struct part *parts,
			   size_t nparts)
{
	struct snap_flag *f = NULL;
	struct strbuf eff = STRBUF_INIT;
	size_t n = 0, cap = 0, p, k;
	int err = -ENOMEM;

	for (p = 0; p < nparts; p++) {
		const char *s = parts[p].text, *end = s + parts[p].len;

		while (s < end) {
			const char *t, *eq;
			char *key, *tok;

			while (s < end && (*s == ' ' || *s == '\t' || *s == '\n'))
				s++;
			if (s == end)
				break;
			for (t = s; t < end && *t != ' ' && *t != '\t' && *t != '\n'; t++)
				;
			eq = memchr(s, '=', (size_t)(t - s));
			if (!(tok = arena_strndup(r->arena, s, (size_t)(t - s))) ||
			    !(key = arena_strndup(r->arena, s, (size_t)((eq ? eq : t) - s))))
				goto out;
			for (k = 0; k < n && strcmp(f[k].key, key); k++)
				;
			if (k < n) {
				diag_add(&r->diags, DIAG_INFO, NULL, 0, 0,
					 "%s: %s is given more than once; the last (%s) wins",
					 v->name, key, tok);
			} else {
				if (n == cap) {
					struct snap_flag *nf = realloc(f, (cap = cap ? 2 * cap : 16) *
								       sizeof(*nf));
					if (!nf)
						goto out;
					f = nf;
				}
				f[n++].key = key;
			}
			f[k].token = tok;
			f[k].layer = parts[p].layer;
			s = t;
		}
	}
	for (k = 0; k < n; k++)
		if (sb_adds(&eff, f[k].token) < 0 || sb_addc(&eff, '\n') < 0)
			goto out;
	if (!(v->flags = arena_alloc(r->arena, (n ? n : 1) * sizeof(*v->flags))))
		goto out;
	if (n)
		memcpy(v->flags, f, n * sizeof(*f));
	v->nflags = n;
	if (!(v->effective = arena_strndup(r->arena, sb_str(&eff), eff.len)))
		goto out;
	err = 0;
out:
	free(f);
	sb_release(&eff);
	return err;
}

static int managed_flags(struct rctx *r, struct rvar *v, struct strbuf *out)
{
	const struct spec_var *d = v->flags_decl;
	size_t k;
	int err;

	for (k = 0; k < d->nflags; k++) {
		const struct spec_flag *f = &d->flags[k];
		const char *val;
		size_t len;

		if (f->when) {
			struct expr *e = NULL;
			char msg[160];
			bool ok = false, cycle = false;

			if ((err = expr_parse(f->when, &e, msg, sizeof(msg))) < 0)
				return err == -ENOMEM ? err : 0;
			err = expr_eval(e, final_lookup, r, &ok, &cycle);
			expr_free(e);
			if (err < 0)
				return err;
			if (cycle)
				report_cycle(r, v, flags_spec(r, v)->display, f->line);
			if (!ok)
				continue;
		}
		if ((err = expand(r, v, f->text, flags_spec(r, v)->display, f->line, &val, &len)) < 0)
			return err;
		if (!len)
			continue;
		if ((out->len && (err = sb_addc(out, ' ')) < 0) || (err = sb_add(out, val, len)) < 0)
			return err;
	}
	return 0;
}

static int build_flags(struct rctx *r, struct rvar *v)
{
	const struct spec_var *d = v->flags_decl;
	struct cand *ovr = NULL, *cfg = NULL, *inh = NULL;
	struct strbuf managed = STRBUF_INIT, val = STRBUF_INIT;
	struct part parts[3];
	struct rvar *app = NULL;
	unsigned mask = 0;
	size_t i, np = 0;
	bool any = false;
	int err;

	for (i = 0; i < v->nc; i++) {
		struct cand *c = &v->c[i];

		if (c->sv)      /* value entries beside a flag list are ignored */
			continue;
		if ((err = cand_value(r, v, c)) < 0)
			goto out;
		if (c->layer == LAYER_OVERRIDE && !ovr)
			ovr = c;
		else if (c->layer == LAYER_CONFIG && !cfg)
			cfg = c;
		else if (c->layer >= LAYER_IMAGE && c->layer <= LAYER_CLI && !inh)
			inh = c;
	}
	if ((err = managed_flags(r, v, &managed)) < 0)
		goto out;
	if (managed.len && !(v->def = arena_strndup(r->arena, managed.buf, managed.len))) {
		err = -ENOMEM;
		goto out;
	}
	if (ovr) {
		v->win = (int)(ovr - v->c);
		for (i = 0; i < v->nc; i++)
			if (&v->c[i] != ovr && !v->c[i].sv) {
				mask |= 1u << v->c[i].layer;
				if ((err = add_shadow(r, v, &v->c[i])) < 0)
					goto out;
			}
		mask |= 1u << LAYER_OVERRIDE;
		v->layer = LAYER_OVERRIDE;
		v->source = "override";
		v->source_ext = false;
		v->set = !ovr->unset;
		v->val_ext = true;
		v->val = ovr->unset ? NULL : ovr->val;
		v->val_len = ovr->unset ? 0 : ovr->val_len;
		if (v->set) {
			parts[0] = (struct part){ v->val, v->val_len, LAYER_OVERRIDE };
			err = effective_flags(r, v, parts, 1);
		}
		if (!err)
			err = finish_layers(r, v, mask);
		goto out;
	}
	/* Base: the config owns the variable, else the inherited value. */
	if (cfg) {
		unsigned line;

		any = true;
		v->win = (int)(cfg - v->c);
		parts[np++] = (struct part){ cfg->val, cfg->val_len, LAYER_CONFIG };
		mask |= 1u << LAYER_CONFIG;
		sb_addf(explain_buf(r), "%s comes from the config env: block; managed defaults skipped\n",
			v->name);
		if (managed.len) {
			/* The flag users lose most often, named so the warning is
			 * actionable (SPEC 9). */
			const char *at = strstr(managed.buf, "--xla_gpu_autotune_level=");

			line = r->w->config->env[cfg->cfg].line;
			diag_add(&r->diags, DIAG_WARNING, r->w->config->file, line,
				 r->w->config->env[cfg->cfg].col,
				 "%s is set in the config env: block, so it owns the variable and "
				 "the %s managed defaults%s%.*s%s are skipped; use %s to change one flag",
				 v->name, flags_spec(r, v)->backend ? flags_spec(r, v)->backend : "runner",
				 at ? " (including " : "", at ? (int)strcspn(at, " ") : 0,
				 at ? at : "", at ? ")" : "",
				 d->append_from ? d->append_from : "an append variable");
		}
		for (i = 0; i < v->nc; i++)
			if (!v->c[i].sv && &v->c[i] != cfg) {
				mask |= 1u << v->c[i].layer;
				if ((err = add_shadow(r, v, &v->c[i])) < 0)
					goto out;
			}
	} else {
		if (inh) {
			any = true;
			v->win = (int)(inh - v->c);
			mask |= 1u << inh->layer;
			if (inh->val_len)
				parts[np++] = (struct part){ inh->val, inh->val_len, inh->layer };
			for (i = 0; i < v->nc; i++)
				if (!v->c[i].sv && &v->c[i] != inh) {
					mask |= 1u << v->c[i].layer;
					if ((err = add_shadow(r, v, &v->c[i])) < 0)
						goto out;
				}
		}
		if (managed.len) {
			enum layer ml = flags_spec(r, v)->is_runner ? LAYER_RUNNER : LAYER_BACKEND;

			parts[np++] = (struct part){ v->def, managed.len, ml };
			mask |= 1u << ml;
			if (inh && inh->val_len)
				sb_addf(explain_buf(r),
					"%s appended (managed defaults override inherited)\n", v->name);
		}
	}
	if (d->append_from &&
	    (app = find_var(r, d->append_from, strlen(d->append_from)))) {
		if ((err = resolve_var(r, app)) == -ELOOP) {
			report_cycle(r, v, flags_spec(r, v)->display, d->line);
			app = NULL;
		} else if (err < 0) {
			goto out;
		}
		if (app && app->set && app->val_len) {
			any = true;
			parts[np++] = (struct part){ app->val, app->val_len, app->layer };
			mask |= 1u << app->layer;
			if (app->secret || v->secret)
				sb_addf(explain_buf(r), "%s appended (wins): <redacted>\n", app->name);
			else
				sb_addf(explain_buf(r), "%s appended (wins): %.*s\n", app->name,
					(int)app->val_len, app->val);
		}
	}
	for (i = 0; i < np; i++) {
		if ((i && (err = sb_addc(&val, ' ')) < 0) ||
		    (err = sb_add(&val, parts[i].text, parts[i].len)) < 0)
			goto out;
	}
	if (np || any) {
		v->set = true;
		err = -ENOMEM;
		if (!(v->val = arena_strndup(r->arena, sb_str(&val), val.len)))
			goto out;
		v->val_len = val.len;
		v->val_ext = false;
		if (cfg) {
			v->layer = LAYER_CONFIG;
			err = cand_source(r, cfg, v);
		} else if (managed.len) {
			struct cand decl = { .sv = d, .cfg = -1,
					     .layer = v->flags_runner ? LAYER_RUNNER :
									LAYER_BACKEND };

			v->layer = flags_spec(r, v)->is_runner ? LAYER_RUNNER : LAYER_BACKEND;
			err = cand_source(r, &decl, v);
		} else if (inh) {
			v->layer = inh->layer;
			err = cand_source(r, inh, v);
		} else {
			v->layer = app->layer;
			v->source = app->source;
			v->source_ext = app->source_ext;
			err = 0;
		}
		if (err < 0)
			goto out;
		if ((err = effective_flags(r, v, parts, np)) < 0)
			goto out;
	}
	err = finish_layers(r, v, mask);
out:
	sb_release(&managed);
	sb_release(&val);
	return err;
}

/* Moves the lines built for v at this depth into the arena. */
static int keep_texts(struct rctx *r, struct rvar *v)
{
	struct strbuf *sh = shadow_buf(r), *ex = explain_buf(r);
	int err = 0;

	if ((sh->len && !(v->shadowed = arena_strndup(r->arena, sh->buf, sh->len))) ||
	    (ex->len && !(v->explain = arena_strndup(r->arena, ex->buf, ex->len))))
		err = -ENOMEM;
	sb_reset(sh);
	sb_reset(ex);
	return err;
}

static int resolve_var(struct rctx *r, struct rvar *v)
{
	struct rvar *prev;
	bool *outer;
	int err, e2;

	if (v->st == ST_DONE)
		return 0;
	if (v->st == ST_BUSY)
		return -ELOOP;
	if (!r->depth)
		r->depth_cut = false;   /* a cut not consumed by a cycle report */
	if (r->depth >= RESOLVE_MAX_DEPTH) {
		if (!r->depth_reported) {
			r->depth_reported = true;
			diag_add(&r->diags, DIAG_ERROR, NULL, 0, 0,
				 "%s: references nest more than %d deep; the deeper ones are "
				 "left unexpanded", v->name, RESOLVE_MAX_DEPTH);
		}
		r->depth_cut = true;
		return -ELOOP;
	}
	v->st = ST_BUSY;
	if (++r->depth > r->max_depth)
		r->max_depth = r->depth;
	prev = r->cur;
	outer = r->taint;
	r->cur = v;
	r->taint = NULL;
	err = v->flags_decl ? build_flags(r, v) : build_value(r, v);
	if (err != -ENOMEM && (e2 = keep_texts(r, v)) < 0)
		err = e2;
	r->cur = prev;
	r->taint = outer;
	r->depth--;
	v->st = ST_DONE;
	return err == -ELOOP ? 0 : err;
}

/* ---- snapshot -------------------------------------------------------- */

static bool is_view_name(const char *name)
{
	static const char *const views[] = { "env_file", "environ", "env.sh", "env.json",
					     "explain", "digest", NULL };
	size_t k;

	/* Every view name starts with 'e' or 'd'; variable names rarely do. */
	if (name[0] != 'e' && name[0] != 'd')
		return false;
	for (k = 0; views[k]; k++)
		if (!strcmp(name, views[k]))
			return true;
	return false;
}

static const char *arena_sb(struct rctx *r, const struct strbuf *sb)
{
	if (!sb->len)
		return NULL;
	return arena_strndup(r->arena, sb->buf, sb->len);
}

/* The snapshot of r's resolved variables, not checked yet; *out holds one
 * reference (caller's) and, on success only, owns r's arena. */
static int build_snapshot(struct rctx *r, struct snapshot **out)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	size_t k, n = 0;
	int err = -ENOMEM;

	if (!s)
		return -ENOMEM;
	atomic_init(&s->refs, 1);
	s->arena = r->arena;     /* handed over only on success */
	/* Names, values and notes the specs hold are pointed at, not copied. */
	s->specs = spec_share_ref(r->w->spec_share);
	s->backend = r->backend->backend;
	if (!(s->arch = arena_strdup(s->arena, r->arch)) ||
	    !(s->vars = calloc(r->nvars ? r->nvars : 1, sizeof(*s->vars))))
		goto out;
	for (k = 0; k < r->nvars; k++) {
		struct rvar *v = &r->vars[k];
		struct snap_var *sv = &s->vars[n];

		if (!v->set && !v->param && !v->def)
			continue;
		err = -EFBIG;
		if (v->name_len > UINT32_MAX || (v->set && v->val_len > UINT32_MAX))
			goto out;
		err = -ENOMEM;
		sv->name = v->name;
		sv->name_len = v->name_len;
		sv->set = v->set;
		sv->value = v->set ? v->val : NULL;
		sv->value_len = v->set ? v->val_len : 0;
		sv->exported = v->set && !v->consumed;
		sv->secret = v->secret;
		sv->is_flags = v->flags_decl != NULL;
		sv->layer = v->set ? v->layer : LAYER_NONE;
		sv->source = v->set ? v->source : NULL;
		sv->def = v->def;
		sv->note = v->note;      /* else the catalog's: validate_snapshot() */
		sv->flags = v->flags;
		sv->nflags = v->nflags;
		sv->effective = v->set ? v->effective : NULL;
		sv->layers = v->set ? v->layers : NULL;
		sv->shadowed = v->shadowed;
		sv->explain = v->explain;
		if ((v->consumed && v->set) || (v->param && !v->set)) {
			/* Depth 0 is no variable's: a free scratch buffer. */
			struct strbuf *ex = explain_buf(r);

			sb_reset(ex);
			if (v->explain)
				sb_adds(ex, v->explain);
			if (v->consumed && v->set)
				sb_addf(ex, "consumed: appended to a flag list, never exported\n");
			if (v->param && !v->set)
				sb_addf(ex, "parameter: not exported; its default is %s\n",
					v->secret ? "<redacted>" : v->val);
			if (!(sv->explain = arena_sb(r, ex)))
				goto out;
		}
		/* What the world and the overrides hold must outlive both. */
		if ((v->name_ext && !(sv->name = arena_strndup(s->arena, v->name, v->name_len))) ||
		    (sv->value && v->val_ext &&
		     !(sv->value = arena_strndup(s->arena, v->val, v->val_len))) ||
		    (sv->source && v->source_ext &&
		     !(sv->source = arena_strdup(s->arena, v->source))))
			goto out;
		if (v->set && is_view_name(v->name)) {
			sv->view_name = true;
			diag_add(&s->diags, DIAG_WARNING, sv->source, 0, 0,
				 "%s is named like a view file; it is only reachable through the views",
				 v->name);
		}
		if (sv->set)
			s->nset++;
		if (sv->exported && sv->secret)
			s->secret_in_views = true;
		n++;
	}
	s->nvars = n;
	/* Variables without a file or a default were left out: give their
	 * slots back. */
	if (n && n < r->nvars) {
		struct snap_var *v = realloc(s->vars, n * sizeof(*v));

		if (v)
			s->vars = v;
	}
	if ((err = diag_extend(&s->diags, &r->w->diags)) < 0 ||
	    (err = diag_extend(&s->diags, &r->diags)) < 0)
		goto out;
	r->arena = NULL;
	*out = s;
	return 0;
out:
	s->arena = NULL;
	snapshot_unref(s);
	return err;
}

static void rctx_release(struct rctx *r)
{
	size_t k;

	for (k = 0; k <= r->max_depth; k++) {
		sb_release(&r->texts[k][0]);
		sb_release(&r->texts[k][1]);
	}
	free(r->cands);
	free(r->vars);
	free(r->cfg);
	diag_list_release(&r->diags);
	arena_free(r->arena);
}

int resolve_dir(const struct world *w, const struct override_set *ov,
		const char *backend, const char *arch, struct snapshot **out)
{
	struct rctx r = { .w = w, .arch = arch };
	struct snapshot *s = NULL;
	size_t k;
	int err = -EINVAL;

	if (!w->specs || !(r.backend = spec_set_backend(w->specs, backend)))
		return -EINVAL;
	if (!world_has_dir(w, backend, arch))
		return -ENOENT;
	r.runner = r.backend->uses_runner ? w->specs->runner : NULL;
	if (!(r.arena = arena_new()))
		return -ENOMEM;
	if ((err = build_table(&r, ov)) < 0)
		goto out;
	for (k = 0; k < r.nvars; k++)
		if ((err = resolve_var(&r, &r.vars[k])) < 0)
			goto out;
	/* Every value is known: the candidates go before the snapshot's
	 * array is allocated, which lowers the peak of a reload. */
	free(r.cands);
	r.cands = NULL;
	if ((err = build_snapshot(&r, &s)) < 0)
		goto out;
	/* The checks read the snapshot only: the working table goes first. */
	free(r.vars);
	r.vars = NULL;
	r.nvars = 0;
	if ((err = validate_snapshot(w->specs, r.backend, r.runner, s)) < 0)
		goto out;
	*out = s;
	s = NULL;
out:
	snapshot_unref(s);
	rctx_release(&r);
	return err;
}

int resolve_all(const struct world *w, const struct override_set *ov,
		struct resolution **out)
{
	struct resolution *res;
	size_t k, j, cap = 0;
	int err = -ENOMEM;

	if (!w->specs)
		return -EINVAL;
	if (!(res = calloc(1, sizeof(*res))))
		return -ENOMEM;
	if ((err = diag_extend(&res->diags, &w->diags)) < 0)
		goto out;
	for (k = 0; k < w->specs->nbackends; k++) {
		const struct spec *s = w->specs->backends[k];
		const char **arches = NULL;
		size_t na = 0;

		if ((err = world_arches(w, s, &arches, &na)) < 0)
			goto out;
		for (j = 0; j < na; j++) {
			struct snapshot *snap = NULL;

			if (res->ndirs == cap) {
				struct snapshot **p = realloc(res->dirs,
							      (cap = cap ? cap * 2 : 16) * sizeof(*p));
				if (!p) {
					err = -ENOMEM;
					break;
				}
				res->dirs = p;
			}
			if ((err = resolve_dir(w, ov, s->backend, arches[j], &snap)) < 0)
				break;
			res->dirs[res->ndirs++] = snap;
			/* Directory diagnostics beyond the load-time ones. */
			if ((err = diag_extend_from(&res->diags, &snap->diags, w->diags.n)) < 0)
				break;
		}
		free(arches);
		if (err < 0)
			goto out;
	}
	*out = res;
	return 0;
out:
	resolution_free(res);
	return err;
}

void resolution_free(struct resolution *r)
{
	size_t k;

	if (!r)
		return;
	for (k = 0; k < r->ndirs; k++)
		snapshot_unref(r->dirs[k]);
	free(r->dirs);
	diag_list_release(&r->diags);
	free(r);
}

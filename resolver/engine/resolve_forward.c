/* Forward references: an entry that reads a name its own file sets only
 * later reads it as unset, since bash runs the runner top to bottom and
 * env_spec.py builds its whole list before applying any of it. */
#include "resolve_sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "template.h"

struct fwd {
	struct sim *s;
	const struct spec *sp;
	size_t at;                    /* the reading entry's index */
	bool whole;                   /* python: every other entry of the file */
};

static bool entry_reads(const struct spec_var *sv, const char *name);

/* One name an entry reads: set by another entry of the same step that the
 * launch applies only later (bash reads top to bottom; env_spec.py builds
 * its list before applying any of it), it reads as unset. */
static int forward_ref(void *ctx, const char *name, size_t len)
{
	struct fwd *f = ctx;
	const struct spec_var *me = &f->sp->vars[f->at], *o;
	uint32_t vi = sim_find(f->s, name, len), last;
	int side = f->sp->is_runner ? 0 : 1;

	if ((strlen(me->name) == len && !memcmp(me->name, name, len)) || vi == NONE)
		return 0;
	last = f->s->v[vi].last_entry[side];
	if (f->s->v[vi].set || sim_param_of(&f->s->v[vi], side) || !last ||
	    (!f->whole && last - 1 <= f->at))
		return 0;
	o = &f->sp->vars[last - 1];
	if (entry_reads(o, me->name))
		return sim_warn_at(f->s, DC_REF_CYCLE, f->sp, me, "%s: reference cycle with %s "
				   "(line %u): %s reads %.*s before it is set, so it reads it "
				   "as unset", me->name, o->name, o->line, me->name, (int)len,
				   name);
	if (++f->s->nforward > FORWARD_SHOWN)
		return 0;
	return sim_warn_at(f->s, DC_REF_FORWARD, f->sp, me, "%s reads %.*s, which %s sets only "
			   "%s (line %u): it reads it as unset", me->name, (int)len, name,
			   f->sp->display, f->whole ? "after building its list" : "later", o->line);
}

struct reads_one {
	const char *name;
	bool hit;
};

static int reads_one(void *ctx, const char *name, size_t len)
{
	struct reads_one *r = ctx;

	r->hit |= strlen(r->name) == len && !memcmp(r->name, name, len);
	return 0;
}

static bool entry_reads(const struct spec_var *sv, const char *name)
{
	struct reads_one r = { name, false };
	size_t k;

	if (sv->value)
		tmpl_names(sv->value, reads_one, &r);
	for (k = 0; k < sv->nflags; k++)
		tmpl_names(sv->flags[k].text, reads_one, &r);
	expr_names(sv->when_expr, reads_one, &r);
	return r.hit;
}

int sim_check_forward(struct sim *s, const struct spec *sp, size_t k)
{
	struct fwd f = { s, sp, k, !sp->is_runner && sp->vars[k].dialect == DIALECT_PYTHON };
	const struct spec_var *sv = &sp->vars[k];
	size_t j;
	int err = 0;

	if (!s->full)
		return 0;
	if (sv->value)
		err = tmpl_names(sv->value, forward_ref, &f);
	for (j = 0; j < sv->nflags && !err; j++)
		err = tmpl_names(sv->flags[j].text, forward_ref, &f);
	if (!err)
		err = expr_names(sv->when_expr, forward_ref, &f);
	return err;
}

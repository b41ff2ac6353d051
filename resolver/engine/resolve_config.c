/* Step 5 of the launch: the experiment config's env: block, applied by
 * Python after the runner has run. */
#include "resolve_sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What the config's env: block finds already set: the environment. */
/* "FILE:LINE" in a, or NULL: once per entry and pass, where a formatted
 * print and a buffer of its own were 6 % of a 10,000-entry resolve. */
static const char *file_line(struct arena *a, const char *file, unsigned line)
{
	char digits[16], *out;
	size_t flen = strlen(file), n = 0;

	do
		digits[n++] = (char)('0' + line % 10);
	while ((line /= 10));
	if (!(out = arena_alloc_text(a, flen + 1 + n + 1)))
		return NULL;
	memcpy(out, file, flen);
	out[flen] = ':';
	for (size_t k = 0; k < n; k++)
		out[flen + 1 + k] = digits[n - 1 - k];
	return out;
}

static int config_lookup(void *ctx, const char *name, size_t len, const char **val,
			 size_t *vlen)
{
	struct sim *s = ctx;
	uint32_t i = sim_find(s, name, len);

	if (i == NONE || !s->v[i].set)
		return 0;
	s->taint |= s->v[i].secret;
	*val = s->v[i].val;
	*vlen = s->v[i].len;
	return 1;
}

/* A runner entry read name before the config set it: the runner never
 * sees the config's env: block, so the value it decided is not the one the
 * config asks for, which is worth a warning. */
static int config_read_by_runner(struct sim *s, const struct config_entry *ce,
				 const struct evar *e)
{
	struct strbuf who = STRBUF_INIT;
	size_t k, shown = 0, more = 0;
	const struct spec_var *first = NULL;
	int err = 0;

	for (k = 0; k < s->nreaders && !err; k++) {
		const struct reader *r = &s->readers[k];
		size_t j;
		bool dup = false;

		if (r->len != e->name_len || memcmp(r->name, e->name, r->len) || !r->by ||
		    !strcmp(r->by->name, e->name))
			continue;
		for (j = 0; j < k && !dup; j++)
			dup = s->readers[j].by == r->by && s->readers[j].len == r->len &&
			      !memcmp(s->readers[j].name, r->name, r->len);
		if (dup)
			continue;
		if (!first)
			first = r->by;
		if (shown == MSG_NAMES_MAX) {
			more++;
			continue;
		}
		err = sb_addf(&who, "%s%s", shown ? ", " : "", r->by->name);
		shown++;
	}
	if (!err && shown)
		err = diag_add(&s->diags, DC_CONFIG_RUNNER_READS, s->w->config->file, ce->line, ce->col,
			       "%s is set in the config's env: block, which Primus applies only "
			       "after the runner has run: the runner's %s%s (%s:%u) %s without it; "
			       "set %s with --env or in the image instead", e->name, sb_str(&who),
			       more ? " and more" : "", s->runner->display, first->line,
			       shown + more > 1 ? "are decided" : "is decided", e->name);
	sb_release(&who);
	return err;
}

/* Step 5: os.environ[k] = os.path.expandvars(v), in dict order. */
int sim_step_config(struct sim *s)
{
	const struct config *cfg = s->w->config;
	struct strbuf sb = STRBUF_INIT;
	struct diag_list scratch = DIAG_LIST_INIT;
	size_t k;
	uint32_t vi;
	int err = 0;

	s->step = STEP_CONFIG;
	for (k = 0; cfg && k < cfg->nenv && !err; k++) {
		const struct config_entry *ce = &cfg->env[k];
		struct evar *e;
		const char *val, *src;
		bool secret;

		if ((err = sim_var(s, ce->name, strlen(ce->name), &vi)) < 0)
			break;
		e = &s->v[vi];
		secret = e->secret;
		e->runner_seen = e->val;
		e->runner_seen_len = e->len;
		e->runner_seen_set = e->set;
		sb_reset(&sb);
		s->taint = false;
		if (s->total_reported)
			break;
		err = config_expand(cfg, ce, secret, RESOLVE_MAX_VALUE, config_lookup, s, &sb,
				    s->full ? &s->diags : &scratch);
		if (err == -E2BIG) {
			err = diag_add(&s->diags, DC_CONFIG_TOO_LONG, cfg->file, ce->line, ce->col,
				       "%s expands to more than %u bytes, the limit of one environment "
				       "string (execve fails with E2BIG); not applied", ce->name,
				       (unsigned)RESOLVE_MAX_VALUE);
			continue;
		}
		if (err < 0 || (err = sim_count_total(s, sb.len)) < 0)
			break;
		secret |= s->taint;
		err = -ENOMEM;
		if (!(val = arena_strndup(s->arena, sb.buf ? sb.buf : "", sb.len)))
			break;
		if (!(src = file_line(s->arena, cfg->file, ce->line)))
			break;
		if ((err = sim_offer(s, vi, LAYER_CONFIG, val, sb.len, src, NULL, RULE_ALWAYS,
				     secret)) < 0)
			break;
		e = &s->v[vi];
		e->config_set = true;
		if (s->full && s->runner &&
		    (!e->runner_seen_set || e->runner_seen_len != sb.len ||
		     memcmp(e->runner_seen, val, sb.len)))
			err = config_read_by_runner(s, ce, e);
	}
	sb_release(&sb);
	diag_list_release(&scratch);
	return err;
}

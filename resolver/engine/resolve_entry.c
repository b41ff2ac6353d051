/* Evaluating one spec entry at its step: its arch and when:, its template
 * or detected value, and the rule and layer it applies under. */
#include "resolve_sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "expr.h"
#include "template.h"

/* ---- reading the environment --------------------------------------------- */

/* What a template or condition at the current step reads: the
 * environment, and a parameter's default where the file that owns the
 * parameter reads it. */
static int sim_lookup(void *ctx, const char *name, size_t len, const char **val, size_t *vlen)
{
	struct sim *s = ctx;
	uint32_t i = sim_find(s, name, len);
	const struct evar *e;
	int k;

	if (i == NONE)
		return 0;
	e = &s->v[i];
	if (e->set) {
		s->taint |= e->secret;
		*val = e->val;
		*vlen = e->len;
		return 1;
	}
	k = s->step == STEP_RUNNER ? 0 : s->step == STEP_BACKEND ? 1 : -1;
	if (k >= 0 && sim_param_of(e, k)) {
		s->taint |= e->secret;
		*val = e->param[k].val;
		*vlen = e->param[k].len;
		return 1;
	}
	return 0;
}

/* ---- evaluating one spec entry ----------------------------------------- */

int sim_count_total(struct sim *s, size_t n)
{
	if (s->total + n <= RESOLVE_MAX_TOTAL) {
		s->total += n;
		return 0;
	}
	if (!s->total_reported) {
		s->total_reported = true;
		return diag_add(&s->diags, DC_DIR_TOO_LARGE, NULL, 0, 0,
				"%s/%s: the values of this directory pass %u MiB in all; the "
				"rest are not computed", s->backend->backend, s->arch,
				RESOLVE_MAX_TOTAL >> 20);
	}
	return 0;
}

/* Whether the when: of sv holds: cond is its source (for the message),
 * ex the tree the spec parsed at load (NULL when it did not parse, an
 * error of the spec already: the entry never applies). */
int sim_entry_when(struct sim *s, const struct spec *sp, const struct spec_var *sv,
		   const char *cond, const struct expr *ex, bool *ok)
{
	struct expr_env env = { sv->dialect, sim_lookup, s, false, "" };
	bool taint = s->taint;
	int err;

	*ok = true;
	if (!cond)
		return 0;
	if (!ex) {
		*ok = false;
		return 0;
	}
	s->taint = false;
	err = expr_eval(ex, &env, ok);
	if (!err && env.problem[0])
		err = sim_warn_at(s, DC_WHEN_UNREADABLE, sp, sv, "%s: when: %s: %s", sv->name, cond,
				  s->taint ? "a variable it compares holds a value built from a "
				  "secret, which is not an integer" : env.problem);
	s->taint |= taint;
	return err;
}

/* The value of template src for entry sv of sp, into *out (arena). */
int sim_entry_template(struct sim *s, const struct spec *sp, const struct spec_var *sv,
		       const char *src, struct eval *out)
{
	struct strbuf *sb = &s->scratch;
	struct tmpl_result res = { 0 };
	int err;

	out->ok = true;
	if (!strchr(src, '$')) {
		/* Its own value: point at the specs' bytes (the snapshot holds
		 * the specs) instead of copying them. */
		out->val = src;
		out->len = strlen(src);
		return 0;
	}
	if (s->total_reported) {
		out->ok = false;
		return 0;
	}
	s->taint = false;
	sb_reset(sb);
	if ((err = tmpl_expand(src, sv->dialect, RESOLVE_MAX_VALUE, sim_lookup, s, sb, &res)) < 0)
		goto out;
	out->secret = s->taint;
	if (res.too_long) {
		out->ok = false;
		err = sim_warn_at(s, DC_VALUE_TOO_LONG, sp, sv, "%s expands to more than %u bytes, "
				  "the limit of one environment string (execve fails with "
				  "E2BIG); not set", sv->name, (unsigned)RESOLVE_MAX_VALUE);
		goto out;
	}
	if (res.problem[0] &&
	    (err = sim_warn_at(s, DC_TEMPLATE_PROBLEM, sp, sv, "%s: %s", sv->name,
			       out->secret ? "a value built from a secret cannot be used here" :
			       res.problem)) < 0)
		goto out;
	if ((err = sim_count_total(s, sb->len)) < 0)
		goto out;
	err = -ENOMEM;
	if (!(out->val = arena_strndup(s->arena, sb->buf ? sb->buf : "", sb->len)))
		goto out;
	out->len = sb->len;
	err = 0;
out:
	return err;
}

/* Where Primus is, as the runner finds it (its own checkout): the
 * --primus-path given, else the PRIMUS_PATH the runner sees (an image's).
 * Its import root is that path, or its parent when the path holds
 * __init__.py (a pip install's package directory), as base_env.sh tests
 * it. Unknown (not ok) when nothing says where Primus is. */
static int entry_primus(struct sim *s, const struct spec *sp, const struct spec_var *sv,
			struct eval *out)
{
	struct stat st;
	char *init;
	int err;

	if (!strcmp(sv->detect, "primus_path") && s->w->primus_path) {
		out->ok = true;
		out->val = s->w->primus_path;
		out->len = strlen(out->val);
		return 0;
	}
	if ((err = sim_entry_template(s, sp, sv, "${PRIMUS_PATH}", out)) < 0 || !out->ok)
		return err;
	if (!out->len || out->secret) {
		out->ok = false;
		return 0;
	}
	if (!strcmp(sv->detect, "primus_path"))
		return 0;
	if (!(init = arena_alloc_text(s->arena, out->len + sizeof("/__init__.py"))))
		return -ENOMEM;
	memcpy(init, out->val, out->len);
	memcpy(init + out->len, "/__init__.py", sizeof("/__init__.py"));
	if (stat(init, &st) == 0 && S_ISREG(st.st_mode)) {
		while (out->len > 1 && out->val[out->len - 1] != '/')
			out->len--;
		if (out->len > 1)
			out->len--;
		if (!(out->val = arena_strndup(s->arena, out->val, out->len)))
			return -ENOMEM;
	}
	return 0;
}

static int entry_detect(struct sim *s, const struct spec *sp, const struct spec_var *sv,
			struct eval *out)
{
	const struct hostprobe *p = s->w->probe;

	if (!strncmp(sv->detect, "primus_", 7))
		return entry_primus(s, sp, sv, out);
	out->ok = p != NULL;
	if (!p)
		return 0;
	out->val = !strcmp(sv->detect, "ib_hca") ? p->ib_hca : p->ip_interface;
	out->len = strlen(out->val);
	return 0;
}

/* Whether sv applies (arch and when:) and, when it does, its value. */
int sim_entry_eval(struct sim *s, const struct spec *sp, const struct spec_var *sv,
		   struct eval *out)
{
	int err;

	*out = (struct eval){ 0 };
	if (!spec_var_applies_to_arch(sv, s->arch))
		return 0;
	if ((err = sim_entry_when(s, sp, sv, sv->when, sv->when_expr, &out->applies)) < 0 ||
	    !out->applies)
		return err;
	if (sv->detect)
		return entry_detect(s, sp, sv, out);
	if (sv->value)
		return sim_entry_template(s, sp, sv, sv->value, out);
	out->ok = false;              /* a declaration */
	return 0;
}

enum rule sim_rule_of(const struct spec_var *sv)
{
	if (sv->mode == SPEC_MODE_SET)
		return RULE_ALWAYS;
	return sv->dialect == DIALECT_SHELL ? RULE_UNSET_OR_EMPTY : RULE_UNSET;
}

enum layer sim_layer_of(const struct spec *sp, const struct spec_var *sv)
{
	if (sv->detected)
		return LAYER_DETECTED;
	return sp->is_runner ? LAYER_RUNNER : LAYER_BACKEND;
}

/* run_record: the run record of one directory; see run_record.h. */
#include "run_record.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "envfs_config.h"
#include "diag_codes.h"
#include "json.h"
#include "layer.h"
#include "view_digest.h"

static int add_str(struct strbuf *out, const char *s)
{
	return s ? json_add_string(out, s, strlen(s)) : sb_adds(out, "null");
}

/* "image host config" as ["image","host","config"]. */
static int add_words(struct strbuf *out, const char *s)
{
	bool first = true;
	int err;

	if ((err = sb_addc(out, '[')) < 0)
		return err;
	while (s && *s) {
		size_t n = strcspn(s, " ");

		if (n && ((!first && (err = sb_addc(out, ',')) < 0) ||
			  (err = json_add_string(out, s, n)) < 0))
			return err;
		first = first && !n;
		s += n + (s[n] == ' ');
	}
	return sb_addc(out, ']');
}

/* The layer a "layer=value" line of shadowed starts with, its length, or
 * 0. Lines are split where a layer name and '=' follow a newline, so a
 * shadowed value with a newline in it stays whole unless the text after
 * its newline reads like the start of another line. */
static size_t layer_prefix(const char *p)
{
	enum layer l;

	for (l = LAYER_IMAGE; l <= LAYER_OVERRIDE; l++) {
		const char *name = layer_name(l);
		size_t n = strlen(name);

		if (!strncmp(p, name, n) && p[n] == '=')
			return n;
	}
	return 0;
}

static int add_shadowed(struct strbuf *out, const char *s)
{
	bool first = true;
	int err;

	if ((err = sb_addc(out, '[')) < 0)
		return err;
	while (s && *s) {
		size_t n = layer_prefix(s);
		const char *val = s + n + 1, *end = val;

		if (!n)
			break;
		for (;;) {
			end = strchr(end, '\n');
			if (!end || !end[1] || layer_prefix(end + 1))
				break;
			end++;
		}
		if (!end)
			end = val + strlen(val);
		if ((!first && (err = sb_addc(out, ',')) < 0) ||
		    (err = sb_adds(out, "{\"layer\":")) < 0 ||
		    (err = json_add_string(out, s, n)) < 0)
			return err;
		/* resolve writes "(unset)" for a layer that unset the name. */
		if ((size_t)(end - val) == 7 && !strncmp(val, "(unset)", 7))
			err = sb_adds(out, ",\"value\":null");
		else
			err = json_add_field(out, false, "value", val, (size_t)(end - val));
		if (err < 0 || (err = sb_addc(out, '}')) < 0)
			return err;
		first = false;
		s = *end ? end + 1 : end;
	}
	return sb_addc(out, ']');
}

/* A secret flag list's token as explain shows it: a flag's value is
 * NAME=<redacted>, a flag without one (a switch) is its name. */
static int add_token(struct strbuf *out, const struct snap_var *v, const char *tok)
{
	const char *eq = strchr(tok, '=');
	struct strbuf t = STRBUF_INIT;
	int err;

	if (!v->secret || !eq)
		return json_add_field(out, false, "token", tok, strlen(tok));
	if ((err = sb_add(&t, tok, (size_t)(eq - tok))) == 0 &&
	    (err = sb_adds(&t, "=<redacted>")) == 0)
		err = json_add_field(out, false, "token", t.buf, t.len);
	sb_release(&t);
	return err;
}

static int add_flags(struct strbuf *out, const struct snap_var *v)
{
	uint32_t i;
	int err;

	if ((err = sb_adds(out, ",\"flags\":[")) < 0)
		return err;
	for (i = 0; i < v->nflags; i++) {
		const struct snap_flag *f = &v->flags[i];

		if ((i && (err = sb_addc(out, ',')) < 0) ||
		    (err = sb_adds(out, "{\"flag\":")) < 0 || (err = add_str(out, f->key)) < 0 ||
		    (err = add_token(out, v, f->token)) < 0 ||
		    (err = sb_adds(out, ",\"layer\":")) < 0 ||
		    (err = add_str(out, layer_name(f->layer))) < 0 ||
		    (err = sb_addc(out, '}')) < 0)
			return err;
	}
	return sb_addc(out, ']');
}

static bool show_value(const struct snap_var *v, unsigned flags)
{
	return v->value && (!v->secret || (flags & RUN_RECORD_SECRET_VALUES));
}

/* "name" (or "name_b64") and "value" (or "value_b64", or null for an
 * unset variable or a secret not shown). */
static int add_name_value(struct strbuf *out, const struct snap_var *v, unsigned flags)
{
	int err;

	if ((err = json_add_field(out, true, "name", v->name, v->name_len)) < 0)
		return err;
	if (show_value(v, flags))
		return json_add_field(out, false, "value", v->value, v->value_len);
	return sb_adds(out, ",\"value\":null");
}

static int add_var(struct strbuf *out, const struct snap_var *v, unsigned flags)
{
	int err;

	if ((err = sb_addc(out, '{')) < 0 || (err = add_name_value(out, v, flags)) < 0 ||
	    (err = sb_addf(out, ",\"set\":%s,\"exported\":%s,\"secret\":%s",
			   v->set ? "true" : "false", v->exported ? "true" : "false",
			   v->secret ? "true" : "false")) < 0 ||
	    (err = sb_adds(out, ",\"layer\":")) < 0 ||
	    (err = add_str(out, v->layer ? layer_name((enum layer)v->layer) : NULL)) < 0 ||
	    (err = sb_adds(out, ",\"source\":")) < 0 || (err = add_str(out, v->source)) < 0 ||
	    (err = sb_adds(out, ",\"layers\":")) < 0 || (err = add_words(out, v->layers)) < 0 ||
	    (err = sb_adds(out, ",\"shadowed\":")) < 0 ||
	    (err = add_shadowed(out, v->shadowed)) < 0 ||
	    (err = sb_adds(out, ",\"default\":")) < 0 ||
	    (err = add_str(out, v->secret || v->def_secret ? NULL : v->def)) < 0)
		return err;
	if (v->is_flags && (err = add_flags(out, v)) < 0)
		return err;
	return sb_addc(out, '}');
}

/* The exported variables, in environ's order: [{"name","value"}...]. */
static int add_environ(struct strbuf *out, const struct snapshot *s, unsigned flags)
{
	bool first = true;
	size_t i;
	int err;

	if ((err = sb_addc(out, '[')) < 0)
		return err;
	for (i = 0; i < s->nvars; i++) {
		const struct snap_var *v = &s->vars[i];

		if (!v->set || !v->exported || !v->value)
			continue;
		if ((!first && (err = sb_addc(out, ',')) < 0) || (err = sb_addc(out, '{')) < 0 ||
		    (err = add_name_value(out, v, flags)) < 0 || (err = sb_addc(out, '}')) < 0)
			return err;
		first = false;
	}
	return sb_addc(out, ']');
}

/* A line or column, null when unknown (0), as check --format json. */
static int add_place(struct strbuf *out, const char *key, unsigned v)
{
	return v ? sb_addf(out, ",\"%s\":%u", key, v) : sb_addf(out, ",\"%s\":null", key);
}

static int add_diags(struct strbuf *out, const struct diag_list *l)
{
	size_t i;
	int err;

	if ((err = sb_addc(out, '[')) < 0)
		return err;
	for (i = 0; i < l->n; i++) {
		const struct diag *d = &l->v[i];

		if ((i && (err = sb_addc(out, ',')) < 0) ||
		    (err = sb_adds(out, "{\"severity\":")) < 0 ||
		    (err = add_str(out, diag_sev_name(d->sev))) < 0 ||
		    (err = sb_adds(out, ",\"code\":")) < 0 ||
		    (err = add_str(out, diag_code_info(d->code) ? diag_code_info(d->code)->code
							      : NULL)) < 0 ||
		    (err = sb_addf(out, ",\"silenced\":%s", d->silenced ? "true" : "false")) < 0 ||
		    (err = sb_adds(out, ",\"file\":")) < 0 || (err = add_str(out, d->file)) < 0 ||
		    (err = add_place(out, "line", d->line)) < 0 ||
		    (err = add_place(out, "column", d->col)) < 0 ||
		    (err = sb_adds(out, ",\"message\":")) < 0 ||
		    (err = add_str(out, d->msg)) < 0 || (err = sb_addc(out, '}')) < 0)
			return err;
	}
	return sb_addc(out, ']');
}

static int add_input(struct strbuf *out, const struct snap_input *in)
{
	int err;

	if ((err = sb_adds(out, "{\"kind\":")) < 0 || (err = add_str(out, in->kind)) < 0 ||
	    (err = sb_adds(out, ",\"path\":")) < 0 || (err = add_str(out, in->path)) < 0 ||
	    (err = sb_adds(out, ",\"sha256\":")) < 0 || (err = add_str(out, in->sha256)) < 0 ||
	    (in->secret && (err = sb_adds(out, ",\"withheld\":\"secret\"")) < 0))
		return err;
	return sb_addc(out, '}');
}

/* "specs": the specs directory's entry; "inputs": every input file. */
static int add_inputs(struct strbuf *out, const struct snapshot *s)
{
	bool first = true;
	size_t i;
	int err;

	if ((err = sb_adds(out, ",\"specs\":")) < 0)
		return err;
	for (i = 0; i < s->ninputs && strcmp(s->inputs[i].kind, "specs"); i++)
		;
	if ((err = i < s->ninputs ? add_input(out, &s->inputs[i]) : sb_adds(out, "null")) < 0 ||
	    (err = sb_adds(out, ",\"inputs\":[")) < 0)
		return err;
	for (i = 0; i < s->ninputs; i++) {
		if (!strcmp(s->inputs[i].kind, "specs"))
			continue;
		if ((!first && (err = sb_addc(out, ',')) < 0) ||
		    (err = add_input(out, &s->inputs[i])) < 0)
			return err;
		first = false;
	}
	return sb_addc(out, ']');
}

int run_record_render(const struct snapshot *s, unsigned flags, struct strbuf *out)
{
	struct strbuf digest = STRBUF_INIT;
	size_t i;
	int err;

	if ((err = view_digest(s, &digest)) < 0)
		goto out;
	if (digest.len && digest.buf[digest.len - 1] == '\n')
		digest.buf[--digest.len] = '\0';
	if ((err = sb_addf(out, "{\"format\":\"primus-envfs-record\",\"version\":%d,",
			   RUN_RECORD_VERSION)) < 0 ||
	    (err = sb_adds(out, "\"program\":{\"name\":\"primus-envfs\",\"version\":")) < 0 ||
	    (err = add_str(out, ENVFS_VERSION)) < 0 ||
	    (err = sb_adds(out, "},\"backend\":")) < 0 || (err = add_str(out, s->backend)) < 0 ||
	    (err = sb_adds(out, ",\"arch\":")) < 0 || (err = add_str(out, s->arch)) < 0 ||
	    (err = sb_adds(out, ",\"digest\":")) < 0 || (err = add_str(out, sb_str(&digest))) < 0 ||
	    (err = sb_adds(out, ",\"models\":")) < 0 || (err = add_str(out, s->models)) < 0 ||
	    (err = add_inputs(out, s)) < 0 ||
	    (err = sb_adds(out, ",\"environ\":")) < 0 || (err = add_environ(out, s, flags)) < 0 ||
	    (err = sb_adds(out, ",\"variables\":[")) < 0)
		goto out;
	for (i = 0; i < s->nvars; i++) {
		if ((i && (err = sb_addc(out, ',')) < 0) ||
		    (err = add_var(out, &s->vars[i], flags)) < 0)
			goto out;
	}
	if ((err = sb_adds(out, "],\"diagnostics\":")) < 0 ||
	    (err = add_diags(out, &s->diags)) < 0 || (err = sb_adds(out, "}\n")) < 0)
		goto out;
out:
	sb_release(&digest);
	return err;
}

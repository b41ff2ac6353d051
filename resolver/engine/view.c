/* view: env_file, environ, env.sh, env.json, explain and digest of one
 * snapshot. Each view carries every exported value exactly or
 * leaves it out with a comment saying why; none alters a value silently.
 *
 *   $ primus-envfs resolve -b maxtext -a gfx950 --format sh > env.sh
 *   $ . ./env.sh    # every value byte for byte, newlines included
 */
#include "view.h"

#include <errno.h>
#include <string.h>

#include "inherit.h"
#include "json.h"
#include "resolve_internal.h"
#include "run_record.h"
#include "sha256.h"
#include "text.h"
#include "view_digest.h"

/* docker's CLI reads env-files with bufio.Scanner, whose default token
 * limit (64 KiB) must hold the line plus its '\n'. */
#define ENV_FILE_MAX_LINE 65535
/* Names in comment lines are cut here: a comment is for people. */
#define COMMENT_NAME_MAX 256


/* Go's unicode.IsSpace: what docker trims from the start of a line. */
static bool unicode_space(unsigned cp)
{
	return (cp >= 0x09 && cp <= 0x0d) || cp == 0x20 || cp == 0x85 ||
	       cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
	       cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f ||
	       cp == 0x3000;
}

/* Where a render goes when it is measured (view_measure): whole into the
 * caller's buffer up to keep bytes, past that hashed and dropped in
 * chunks, so a large view (explain is megabytes at 10,000 variables) is
 * never whole in memory just to learn its size and checksum. A plain
 * render has no sink. */
struct vsink {
	struct sha256_stream h;
	size_t keep;
	size_t flushed;           /* bytes hashed and dropped so far */
};

#define VSINK_CHUNK 16384

/* Called between variables: hands a full chunk of out to the hash. */
static void vsink_step(struct vsink *k, struct strbuf *out)
{
	if (!k || out->len < VSINK_CHUNK || (!k->flushed && out->len <= k->keep))
		return;
	sha256_stream_add(&k->h, out->buf, out->len);
	k->flushed += out->len;
	sb_reset(out);
}

static bool has_byte(const char *s, size_t n, char c)
{
	return n && memchr(s, c, n) != NULL;
}

static bool exported(const struct snap_var *v)
{
	return v->set && v->exported && v->value;
}

/* Appends s with every byte outside printable ASCII as \xNN, cut at max
 * bytes: safe inside a one-line comment whatever the name holds. */
static int add_printable(struct strbuf *out, const char *s, size_t n, size_t max)
{
	size_t i;
	int err = 0;

	for (i = 0; i < n && i < max && !err; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f)
			err = sb_addc(out, (char)c);
		else
			err = sb_addf(out, "\\x%02x", c);
	}
	if (!err && n > max)
		err = sb_adds(out, "...");
	return err;
}

static int add_header(const struct snapshot *s, const char *view, struct strbuf *out)
{
	const char *b = s->backend ? s->backend : "", *a = s->arch ? s->arch : "";
	int err;

	if ((err = sb_adds(out, "# primus-envfs ")) < 0 ||
	    (err = add_printable(out, b, strlen(b), COMMENT_NAME_MAX)) < 0 ||
	    (err = sb_addc(out, '/')) < 0 ||
	    (err = add_printable(out, a, strlen(a), COMMENT_NAME_MAX)) < 0)
		return err;
	if ((err = sb_addf(out, " %s", view)) < 0)
		return err;
	/* explain's head says what the specs were written from. */
	if (s->models && !strcmp(view, "explain") &&
	    ((err = sb_adds(out, " (specs model ")) < 0 ||
	     (err = add_printable(out, s->models, strlen(s->models), 512)) < 0 ||
	     (err = sb_addc(out, ')')) < 0))
		return err;
	return sb_addc(out, '\n');
}

static int add_omitted(struct strbuf *out, const char *comment,
		       const struct snap_var *v, const char *reason)
{
	int err;

	if ((err = sb_adds(out, comment)) < 0 ||
	    (err = add_printable(out, v->name, v->name_len, COMMENT_NAME_MAX)) < 0)
		return err;
	return sb_addf(out, " omitted: %s\n", reason);
}

/* A name docker reads back unchanged: no '=' or whitespace or control
 * bytes (the line would split differently), valid UTF-8 (docker rejects
 * the whole file otherwise), not starting with '#' (a comment) or with
 * anything docker trims as leading whitespace. */
static bool env_file_name_ok(const char *name, size_t n)
{
	unsigned cp;
	size_t i;

	if (!n || name[0] == '#' || !utf8_valid(name, n))
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c <= 0x20 || c == 0x7f || c == '=')
			return false;
	}
	utf8_seq((const unsigned char *)name, n, &cp);
	return !unicode_space(cp);
}

/* Why docker cannot carry v, or NULL. Docker splits lines on '\n', drops
 * a '\r' before it, rejects non-UTF-8 and lines over its scanner limit,
 * and otherwise takes the value literally (no quote removal, trailing
 * whitespace kept), so these are the only cases. */
static const char *env_file_reason(const struct snap_var *v)
{
	if (!env_file_name_ok(v->name, v->name_len))
		return "name cannot be written in an env-file";
	if (has_byte(v->value, v->value_len, '\0'))
		return "value contains a NUL byte";
	if (has_byte(v->value, v->value_len, '\n'))
		return "value contains a newline";
	if (has_byte(v->value, v->value_len, '\r'))
		return "value contains a carriage return";
	if (!utf8_valid(v->value, v->value_len))
		return "value is not valid UTF-8";
	if (v->name_len + 1 + v->value_len > ENV_FILE_MAX_LINE)
		return "line would exceed 65535 bytes";
	return NULL;
}

static int render_env_file(const struct snapshot *s, struct strbuf *out, struct vsink *k)
{
	size_t i;
	int err;

	if ((err = add_header(s, "env_file", out)) < 0)
		return err;
	for (i = 0; i < s->nvars; i++) {
		const struct snap_var *v = &s->vars[i];
		const char *why;

		if (!exported(v))
			continue;
		if ((why = env_file_reason(v)))
			err = add_omitted(out, "# ", v, why);
		else if (!(err = sb_add(out, v->name, v->name_len)) &&
			 !(err = sb_addc(out, '=')) &&
			 !(err = sb_add(out, v->value, v->value_len)))
			err = sb_addc(out, '\n');
		if (err < 0)
			return err;
		vsink_step(k, out);
	}
	return 0;
}

/* A python-dotenv 0.21 ${NAME} or ${NAME:-default} at p: it expands
 * every one, whatever the quoting. */
static bool dotenv_expansion(const char *p, const char *end)
{
	if (end - p < 3 || p[0] != '$' || p[1] != '{')
		return false;
	for (p += 2; p < end && *p != '}' && *p != ':'; p++)
		;
	if (p + 1 < end && p[0] == ':' && p[1] == '-')
		for (p += 2; p < end && *p != '}'; p++)
			;
	return p < end && *p == '}';
}

/* Why docker-compose 1.29 (python-dotenv 0.21, read as UTF-8 text with
 * universal newlines) cannot carry v in a single-quoted value, or NULL. */
static const char *compose_reason(const struct snap_var *v)
{
	const char *p = v->value, *end = v->value + v->value_len;

	if (!env_name_valid(v->name, v->name_len))
		return "name cannot be written in a compose env file";
	if (has_byte(v->value, v->value_len, '\0'))
		return "value contains a NUL byte";
	if (has_byte(v->value, v->value_len, '\r'))
		return "value contains a carriage return (compose reads it as a newline)";
	if (!utf8_valid(v->value, v->value_len))
		return "value is not valid UTF-8";
	for (; p < end; p++)
		if (*p == '$' && dotenv_expansion(p, end))
			return "value contains ${...}, which docker-compose 1.29 expands";
	return NULL;
}

/* Whether dotenv reads v unquoted as it is: its unquoted values lose
 * leading and trailing blanks and a " #" comment, and a leading quote
 * starts a quoted value. Non-ASCII bytes before '#' count as blanks
 * (Python's \s is Unicode's). */
static bool compose_unquoted_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || s[0] == '\'' || s[0] == '"' || s[0] == ' ' || s[0] == '\t' ||
	    (unsigned char)s[0] >= 0x80 || s[n - 1] == ' ' || s[n - 1] == '\t')
		return false;
	for (i = 1; i < n; i++) {
		unsigned char p = (unsigned char)s[i - 1];

		if (s[i] == '#' && (p <= ' ' || p >= 0x80))
			return false;
		if (s[i] == '\n' || (unsigned char)s[i] < 0x20)
			return false;
	}
	return true;
}

/* Why the compose view leaves v out, or NULL: compose_reason(), and a
 * value ending in '\\' that dotenv cannot read back unquoted either. */
static const char *compose_omit_reason(const struct snap_var *v)
{
	const char *why = compose_reason(v);

	if (!why && v->value_len && v->value[v->value_len - 1] == '\\' &&
	    !compose_unquoted_ok(v->value, v->value_len))
		why = "value ends with a backslash, which docker-compose 1.29 cannot read back";
	return why;
}

/* NAME='value' lines: in python-dotenv's single quotes only \\ and \'
 * are escapes, and newlines, '#', '"', '$' and trailing blanks are kept.
 * Its pattern for them cannot end in an escaped backslash (\\' reads as
 * an escaped quote, and the value runs on into the next line), so a
 * value ending in '\' is written unquoted when dotenv reads it back
 * unchanged that way, and left out otherwise. */
static int render_compose(const struct snapshot *s, struct strbuf *out, struct vsink *k)
{
	size_t i, j;
	int err;

	if ((err = add_header(s, "compose.env", out)) < 0)
		return err;
	for (i = 0; i < s->nvars; i++) {
		const struct snap_var *v = &s->vars[i];
		bool bs_end = v->value_len && v->value[v->value_len - 1] == '\\';
		const char *why = compose_omit_reason(v);

		if (!exported(v))
			continue;
		if (why) {
			if ((err = add_omitted(out, "# ", v, why)) < 0)
				return err;
			continue;
		}
		if ((err = sb_add(out, v->name, v->name_len)) < 0 || (err = sb_addc(out, '=')) < 0)
			return err;
		if (bs_end) {
			err = sb_add(out, v->value, v->value_len);
		} else {
			err = sb_addc(out, '\'');
			for (j = 0; j < v->value_len && !err; j++) {
				char c = v->value[j];

				if (c == '\\' || c == '\'')
					err = sb_addc(out, '\\');
				if (!err)
					err = sb_addc(out, c);
			}
			if (!err)
				err = sb_addc(out, '\'');
		}
		if (err < 0 || (err = sb_addc(out, '\n')) < 0)
			return err;
		vsink_step(k, out);
	}
	return 0;
}

/* environ: view_in_environ's variables (view_digest.h). */
static int render_environ(const struct snapshot *s, struct strbuf *out, struct vsink *k)
{
	size_t i;
	int err;

	for (i = 0; i < s->nvars; i++) {
		const struct snap_var *v = &s->vars[i];

		if (!view_in_environ(v))
			continue;
		if ((err = sb_add(out, v->name, v->name_len)) < 0 ||
		    (err = sb_addc(out, '=')) < 0 ||
		    (err = sb_add(out, v->value, v->value_len)) < 0 ||
		    (err = sb_addc(out, '\0')) < 0)
			return err;
		vsink_step(k, out);
	}
	return 0;
}

/* Why env.sh leaves v out, or NULL. `export 'a b'=x` is an error that
 * stops dash mid-file, and no shell value holds a NUL. */
static const char *sh_reason(const struct snap_var *v)
{
	if (!env_name_valid(v->name, v->name_len))
		return "not a shell variable name";
	if (has_byte(v->value, v->value_len, '\0'))
		return "value contains a NUL byte";
	return NULL;
}

/* Single quotes keep every byte literally in sh, bash and zsh; only the
 * quote itself needs the close-escape-reopen dance. */
static int render_sh(const struct snapshot *s, struct strbuf *out, struct vsink *k)
{
	const char *why;
	size_t i, j;
	int err;

	for (i = 0; i < s->nvars; i++) {
		const struct snap_var *v = &s->vars[i];

		if (!exported(v))
			continue;
		if ((why = sh_reason(v))) {
			if ((err = add_omitted(out, "# ", v, why)) < 0)
				return err;
			continue;
		}
		if ((err = sb_adds(out, "export ")) < 0 ||
		    (err = sb_add(out, v->name, v->name_len)) < 0 ||
		    (err = sb_adds(out, "='")) < 0)
			return err;
		for (j = 0; j < v->value_len; j++) {
			if (v->value[j] == '\'')
				err = sb_adds(out, "'\\''");
			else
				err = sb_addc(out, v->value[j]);
			if (err < 0)
				return err;
		}
		if ((err = sb_adds(out, "'\n")) < 0)
			return err;
		vsink_step(k, out);
	}
	return 0;
}

static int render_json(const struct snapshot *s, struct strbuf *out, struct vsink *k)
{
	bool first = true;
	size_t i;
	int err;

	if ((err = sb_addc(out, '{')) < 0)
		return err;
	for (i = 0; i < s->nvars; i++) {
		const struct snap_var *v = &s->vars[i];

		if (!exported(v))
			continue;
		if ((err = sb_adds(out, first ? "\n  " : ",\n  ")) < 0 ||
		    (err = json_add_string(out, v->name, v->name_len)) < 0 ||
		    (err = sb_adds(out, ": ")) < 0 ||
		    (err = json_add_string(out, v->value, v->value_len)) < 0)
			return err;
		first = false;
		vsink_step(k, out);
	}
	return sb_adds(out, first ? "}\n" : "\n}\n");
}

/* Text for people: valid UTF-8 passes, control bytes and invalid bytes are
 * escaped so every value stays on its line. */
static int add_human(struct strbuf *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;
	unsigned cp;
	int err = 0;

	while (i < n && !err) {
		unsigned char c = p[i];

		if (c >= 0x80 && (k = utf8_seq(p + i, n - i, &cp))) {
			err = sb_add(out, p + i, k);
			i += k;
			continue;
		}
		if (c == '\n')
			err = sb_adds(out, "\\n");
		else if (c == '\r')
			err = sb_adds(out, "\\r");
		else if (c == '\t')
			err = sb_adds(out, "\\t");
		else if (c < 0x20 || c >= 0x7f)
			err = sb_addf(out, "\\x%02x", c);
		else
			err = sb_addc(out, (char)c);
		i++;
	}
	return err;
}

static int add_field(struct strbuf *out, const char *label, const char *s, size_t n)
{
	int err;

	if ((err = sb_addf(out, "  %s: ", label)) < 0 ||
	    (err = add_human(out, s, n)) < 0)
		return err;
	return sb_addc(out, '\n');
}

static int add_fields(struct strbuf *out, const char *label, const char *s)
{
	return add_field(out, label, s, strlen(s));
}

/* One "  label: line" per non-empty line of a multi-line string ("  line"
 * with no label); with redact, the part after the first '=' of each line
 * is hidden (shadowed "layer=value" lines). */
static int add_lines(struct strbuf *out, const char *label, const char *s,
		     bool redact)
{
	int err = 0;

	while (*s && !err) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		const char *eq = memchr(s, '=', n);

		if (n) {
			if (label)
				err = sb_addf(out, "  %s: ", label);
			else
				err = sb_adds(out, "  ");
			if (!err && redact && eq) {
				if (!(err = add_human(out, s, (size_t)(eq - s))))
					err = sb_adds(out, "=<redacted>");
			} else if (!err && redact) {
				err = sb_adds(out, "<redacted>");
			} else if (!err) {
				err = add_human(out, s, n);
			}
			if (!err)
				err = sb_addc(out, '\n');
		}
		s += n + (nl != NULL);
	}
	return err;
}

static int explain_var(const struct snap_var *v, struct strbuf *out)
{
	size_t i;
	int err;

	if ((err = add_human(out, v->name, v->name_len)) < 0 ||
	    (err = sb_addc(out, '\n')) < 0)
		return err;
	if (!v->set || !v->value)
		err = sb_adds(out, "  value: (not set)\n");
	else if (v->secret)
		err = sb_adds(out, "  value: <redacted>\n");
	else
		err = add_field(out, "value", v->value, v->value_len);
	if (err < 0)
		return err;
	if (v->layer != LAYER_NONE && (err = add_fields(out, "layer", layer_name(v->layer))) < 0)
		return err;
	if (v->source && (err = add_fields(out, "source", v->source)) < 0)
		return err;
	if (v->layers && (err = add_fields(out, "layers", v->layers)) < 0)
		return err;
	/* The resolver already redacts secret shadowed values; redacting
	 * again here keeps a slip there from reaching a 0444 file. */
	if (v->shadowed && (err = add_lines(out, "shadowed", v->shadowed, v->secret)) < 0)
		return err;
	if (v->def) {
		if (v->secret || v->def_secret)
			err = sb_adds(out, "  default: <redacted>\n");
		else
			err = add_fields(out, "default", v->def);
		if (err < 0)
			return err;
	}
	if (v->note && (err = add_fields(out, "note", v->note)) < 0)
		return err;
	if (!v->exported && (err = sb_adds(out, "  exported: no\n")) < 0)
		return err;
	if (v->view_name &&
	    (err = sb_adds(out, "  file: none (named like a view; only in the views)\n")) < 0)
		return err;
	for (i = 0; i < v->nflags; i++) {
		const struct snap_flag *f = &v->flags[i];
		const char *tok = f->token ? f->token : "";
		const char *eq = strchr(tok, '=');

		if ((err = sb_adds(out, "  flag: ")) < 0)
			return err;
		if (v->secret && eq) {
			if (!(err = add_human(out, tok, (size_t)(eq - tok))))
				err = sb_adds(out, "=<redacted>");
		} else {
			err = add_human(out, tok, strlen(tok));
		}
		if (err < 0 ||
		    (err = sb_addf(out, " (%s)\n", layer_name(f->layer))) < 0)
			return err;
	}
	if (!v->nflags && v->effective && !v->secret &&
	    (err = add_lines(out, "flag", v->effective, false)) < 0)
		return err;
	if (v->explain && (err = add_lines(out, NULL, v->explain, false)) < 0)
		return err;
	return sb_addc(out, '\n');
}

static int render_explain(const struct snapshot *s, struct strbuf *out, struct vsink *k)
{
	size_t i;
	int err;

	if ((err = add_header(s, "explain", out)) < 0 ||
	    (err = sb_addc(out, '\n')) < 0)
		return err;
	if (s->explain && ((err = add_lines(out, NULL, s->explain, false)) < 0 ||
			   (err = sb_addc(out, '\n')) < 0))
		return err;
	for (i = 0; i < s->nvars; i++) {
		if ((err = explain_var(&s->vars[i], out)) < 0)
			return err;
		vsink_step(k, out);
	}
	if ((err = sb_adds(out, "diagnostics:\n")) < 0)
		return err;
	if (!s->diags.n)
		return sb_adds(out, "  (none)\n");
	for (i = 0; i < s->diags.n; i++) {
		struct strbuf line = STRBUF_INIT;

		/* Formatted apart so a message with a newline stays one line. */
		err = diag_format(&s->diags.v[i], &line);
		if (!err && !(err = sb_adds(out, "  ")) &&
		    !(err = add_human(out, sb_str(&line), line.len)))
			err = sb_addc(out, '\n');
		sb_release(&line);
		if (err < 0)
			return err;
		vsink_step(k, out);
	}
	return 0;
}

static int render_digest_k(const struct snapshot *s, struct strbuf *out, struct vsink *k)
{
	(void)k;
	return view_digest(s, out);
}

static int render_record(const struct snapshot *s, struct strbuf *out, struct vsink *k)
{
	(void)k;
	return run_record_render(s, 0, out);
}

/* One row per view: its file in every directory, its --format name (and
 * an alias `resolve` also takes), how it renders, and why it leaves a
 * variable out (NULL: never). no_secret says the view is known to hold
 * no secret's value (explain redacts, digest hashes a marker in its
 * place, record writes null); a row that does not say so is served 0600
 * with a secret in its directory: the table fails closed. */
static const struct view_row {
	const char *file;
	const char *format;
	const char *alias;
	int (*render)(const struct snapshot *s, struct strbuf *out, struct vsink *k);
	const char *(*omits)(const struct snap_var *v);
	bool no_secret;
} views[VIEW_COUNT] = {
	[VIEW_ENV_FILE] = { "env_file", "env_file", NULL, render_env_file, env_file_reason, false },
	[VIEW_ENVIRON] = { "environ", "environ", NULL, render_environ, NULL, false },
	[VIEW_SH] = { "env.sh", "sh", "env.sh", render_sh, sh_reason, false },
	[VIEW_JSON] = { "env.json", "json", "env.json", render_json, NULL, false },
	[VIEW_EXPLAIN] = { "explain", "explain", NULL, render_explain, NULL, true },
	[VIEW_DIGEST] = { "digest", "digest", NULL, render_digest_k, NULL, true },
	[VIEW_COMPOSE] = { "compose.env", "compose", "compose.env", render_compose,
			   compose_omit_reason, false },
	[VIEW_RECORD] = { "record", "record", NULL, render_record, NULL, true },
};

static int render(const struct snapshot *s, enum view_kind kind, struct strbuf *out,
		  struct vsink *k)
{
	if ((unsigned)kind >= VIEW_COUNT)
		return -EINVAL;
	return views[kind].render(s, out, k);
}

int view_render(const struct snapshot *s, enum view_kind kind, struct strbuf *out)
{
	size_t start;
	int err;

	if (!s || !out)
		return -EINVAL;
	start = out->len;
	/* A failed render leaves out as it was, never half a view. */
	if ((err = render(s, kind, out, NULL)) < 0) {
		out->len = start;
		if (out->buf)
			out->buf[start] = '\0';
	}
	return err;
}

int view_measure(const struct snapshot *s, enum view_kind kind, size_t keep,
		 struct strbuf *out, size_t *len, uint8_t sum[SHA256_LEN])
{
	struct vsink k = { .keep = keep };
	int err;

	if (!s || !out || out->len)
		return -EINVAL;
	sha256_stream_init(&k.h);
	if ((err = render(s, kind, out, &k)) < 0) {
		sb_reset(out);
		return err;
	}
	sha256_stream_add(&k.h, sb_str(out), out->len);
	sha256_stream_end(&k.h, sum);
	*len = k.flushed + out->len;
	if (*len > keep)
		sb_reset(out);
	return 0;
}

const char *view_file_name(enum view_kind kind)
{
	if ((unsigned)kind >= VIEW_COUNT)
		return NULL;
	return views[kind].file;
}

const char *view_format_name(enum view_kind kind)
{
	if ((unsigned)kind >= VIEW_COUNT)
		return NULL;
	return views[kind].format;
}

void view_format_names(const char *out[VIEW_COUNT + 1])
{
	int k;

	for (k = 0; k < VIEW_COUNT; k++)
		out[k] = views[k].format;
	out[VIEW_COUNT] = NULL;
}

int view_from_name(const char *name, enum view_kind *out)
{
	int k;

	if (!name)
		return -EINVAL;
	for (k = 0; k < VIEW_COUNT; k++) {
		const struct view_row *r = &views[k];

		if (!strcmp(name, r->format) || !strcmp(name, r->file) ||
		    (r->alias && !strcmp(name, r->alias))) {
			*out = (enum view_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}

bool view_is_name(const char *name)
{
	size_t i;

	/* Only the file names: "sh" and "json" may well be variables. */
	for (i = 0; i < VIEW_COUNT; i++)
		if (!strcmp(name, views[i].file))
			return true;
	return false;
}

bool view_is_secret(const struct snapshot *s, enum view_kind kind)
{
	if ((unsigned)kind < VIEW_COUNT && views[kind].no_secret)
		return false;
	return s && s->secret_in_views;
}

int view_omissions(const struct snapshot *s, struct diag_list *out)
{
	struct strbuf m = STRBUF_INIT;
	size_t i, k;
	int err = 0;

	for (i = 0; i < s->nvars && !err; i++) {
		const struct snap_var *v = &s->vars[i];
		/* The image that gave a value still gives it to a run of that
		 * image, whatever a view leaves out. */
		enum diag_code code = v->layer == LAYER_IMAGE ? DC_VIEW_OMITS_IMAGE : DC_VIEW_OMITS;

		if (!exported(v))
			continue;
		for (k = 0; k < VIEW_COUNT && !err; k++) {
			const char *why = views[k].omits ? views[k].omits(v) : NULL;

			if (!why)
				continue;
			sb_reset(&m);
			if (!(err = add_printable(&m, v->name, v->name_len, COMMENT_NAME_MAX)) &&
			    !(err = sb_addf(&m, " is left out of the %s view: %s", views[k].file,
					    why)))
				err = diag_at_var_source(out, code, v->source, sb_str(&m));
		}
	}
	sb_release(&m);
	return err;
}

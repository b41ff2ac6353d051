/* history_file: the history beside --state; see history_file.h. */
#include "history_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int put_str(struct strbuf *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;
	int err;

	if (!s)
		return sb_adds(out, " -");
	if ((err = sb_adds(out, " =")) < 0)
		return err;
	for (i = 0; i < len && err == 0; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c > 0x20 && c < 0x7f && c != '%')
			err = sb_addc(out, (char)c);
		else if ((err = sb_addc(out, '%')) == 0 && (err = sb_addc(out, hex[c >> 4])) == 0)
			err = sb_addc(out, hex[c & 15]);
	}
	return err;
}

static int put_cstr(struct strbuf *out, const char *s)
{
	return put_str(out, s, s ? strlen(s) : 0);
}

static int put_side(struct strbuf *out, const struct hist_value *v, bool secret)
{
	int err;

	if ((err = sb_addf(out, " %d", v->set ? 1 : 0)) < 0 ||
	    (err = put_str(out, secret ? NULL : v->value, v->len)) < 0 ||
	    (err = put_cstr(out, v->layer)) < 0)
		return err;
	return put_cstr(out, v->source);
}

static int put_gen(struct strbuf *out, const struct hist_gen *g)
{
	size_t k;
	int err;

	if ((err = sb_addf(out, "gen %" PRIu64 " %lld %ld %s", g->generation,
			   (long long)g->when.tv_sec, g->when.tv_nsec,
			   hist_cause_name(g->cause))) < 0)
		return err;
	err = g->has_writer ? sb_addf(out, " %" PRIu32 " %" PRId32, g->uid, g->pid)
			    : sb_adds(out, " - -");
	if (err < 0 || (err = put_cstr(out, g->node)) < 0 || (err = sb_addc(out, '\n')) < 0)
		return err;
	for (k = 0; k < g->nchanges; k++) {
		const struct hist_change *c = &g->changes[k];

		if ((err = sb_adds(out, "var")) < 0 || (err = put_cstr(out, c->backend)) < 0 ||
		    (err = put_cstr(out, c->arch)) < 0 || (err = put_cstr(out, c->name)) < 0 ||
		    (err = sb_addf(out, " %d", c->secret ? 1 : 0)) < 0 ||
		    (err = put_side(out, &c->before, c->secret)) < 0 ||
		    (err = put_side(out, &c->after, c->secret)) < 0 ||
		    (err = sb_addc(out, '\n')) < 0)
			return err;
	}
	return 0;
}

int history_file_render(const struct history *h, struct strbuf *out)
{
	size_t k;
	int err;

	if ((err = sb_addf(out, "primus-envfs-history %d\n", HISTORY_FILE_VERSION)) < 0)
		return err;
	for (k = 0; k < h->n; k++)
		if ((err = put_gen(out, history_at(h, k))) < 0)
			return err;
	return sb_addf(out, "end %zu\n", h->n);
}

/* ---- reading -------------------------------------------------------------- */

#define MAX_FIELDS 14

struct rd {
	char *msg;
	size_t msglen;
};

#define BAD(...) do { snprintf(r->msg, r->msglen, __VA_ARGS__); return -EPROTO; } while (0)

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Field f ("-" or "=..."): *out NULL or a malloc'd copy, *len its bytes. */
static int take_str(struct rd *r, const char *f, const char *what, char **out, size_t *len)
{
	size_t n = strlen(f), i, k = 0;
	char *s;

	*out = NULL;
	*len = 0;
	if (!strcmp(f, "-"))
		return 0;
	if (f[0] != '=')
		BAD("%s: expected - or =BYTES", what);
	if (!(s = malloc(n)))
		return -ENOMEM;
	for (i = 1; i < n; i++) {
		int hi, lo;

		if (f[i] != '%') {
			s[k++] = f[i];
			continue;
		}
		if (i + 2 >= n || (hi = hexval(f[i + 1])) < 0 || (lo = hexval(f[i + 2])) < 0) {
			free(s);
			BAD("%s: a bad %% escape", what);
		}
		s[k++] = (char)(hi << 4 | lo);
		i += 2;
	}
	s[k] = '\0';
	*out = s;
	*len = k;
	return 0;
}

/* A name or directory: present, no NUL in it. */
static int take_name(struct rd *r, const char *f, const char *what, char **out)
{
	size_t len;
	int err;

	if ((err = take_str(r, f, what, out, &len)) < 0)
		return err;
	if (!*out || memchr(*out, '\0', len)) {
		free(*out);
		*out = NULL;
		BAD("%s: expected a name", what);
	}
	return 0;
}

static int take_u64(struct rd *r, const char *f, const char *what, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (*f < '0' || *f > '9' || (v = strtoull(f, &end, 10), errno) || *end || v > max)
		BAD("%s: expected a number up to %llu", what, (unsigned long long)max);
	*out = v;
	return 0;
}

static int take_bool(struct rd *r, const char *f, const char *what, bool *out)
{
	if (strcmp(f, "0") && strcmp(f, "1"))
		BAD("%s: expected 0 or 1", what);
	*out = f[0] == '1';
	return 0;
}

static int take_side(struct rd *r, char **f, const char *what, bool secret, struct hist_value *v)
{
	size_t len;
	int err;

	if ((err = take_bool(r, f[0], what, &v->set)) < 0 ||
	    (err = take_str(r, f[1], what, &v->value, &v->len)) < 0 ||
	    (err = take_str(r, f[2], what, &v->layer, &len)) < 0 ||
	    (err = take_str(r, f[3], what, &v->source, &len)) < 0)
		return err;
	if (secret && v->value)
		BAD("%s: a secret's value (never kept)", what);
	if (!v->set && (v->value || v->layer || v->source))
		BAD("%s: an unset side with a value", what);
	return 0;
}

static int take_gen(struct rd *r, char **f, size_t nf, struct hist_gen *g, uint64_t after)
{
	uint64_t v, nsec;
	size_t len;
	int err;

	if (nf != 8)
		BAD("gen: expected 7 fields, not %zu", nf - 1);
	if ((err = take_u64(r, f[1], "gen: the generation", HISTORY_GEN_MAX, &g->generation)) < 0)
		return err;
	if (g->generation <= after)
		BAD("gen: generation %" PRIu64 " after %" PRIu64 " (they only go up)",
		    g->generation, after);
	if ((err = take_u64(r, f[2], "gen: the time", INT64_MAX / 2, &v)) < 0 ||
	    (err = take_u64(r, f[3], "gen: the time's nanoseconds", 999999999, &nsec)) < 0)
		return err;
	g->when.tv_sec = (time_t)v;
	g->when.tv_nsec = (long)nsec;
	if (hist_cause_from_name(f[4], &g->cause) < 0)
		BAD("gen: unknown cause");
	g->has_writer = strcmp(f[5], "-") || strcmp(f[6], "-");
	if (g->has_writer) {
		if ((err = take_u64(r, f[5], "gen: the uid", UINT32_MAX, &v)) < 0)
			return err;
		g->uid = (uint32_t)v;
		if ((err = take_u64(r, f[6], "gen: the pid", INT32_MAX, &v)) < 0)
			return err;
		g->pid = (int32_t)v;
	}
	if ((err = take_str(r, f[7], "gen: the node", &g->node, &len)) < 0)
		return err;
	if (g->node && (len > 255 || memchr(g->node, '\0', len)))
		BAD("gen: the node: not a node's name");
	return 0;
}

static int take_var(struct rd *r, char **f, size_t nf, struct hist_gen *g)
{
	struct hist_change *c;
	int err;

	if (nf != 13)
		BAD("var: expected 12 fields, not %zu", nf - 1);
	if ((err = hist_gen_add(g, "", "", "", false, &(struct hist_value){ 0 },
				&(struct hist_value){ 0 })) < 0)
		return err;
	c = &g->changes[g->nchanges - 1];
	free(c->backend);
	free(c->arch);
	free(c->name);
	c->backend = c->arch = c->name = NULL;
	if ((err = take_name(r, f[1], "var: the backend", &c->backend)) < 0 ||
	    (err = take_name(r, f[2], "var: the arch", &c->arch)) < 0 ||
	    (err = take_name(r, f[3], "var: the name", &c->name)) < 0 ||
	    (err = take_bool(r, f[4], "var: secret", &c->secret)) < 0 ||
	    (err = take_side(r, f + 5, "var: before", c->secret, &c->before)) < 0 ||
	    (err = take_side(r, f + 9, "var: after", c->secret, &c->after)) < 0)
		return err;
	return 0;
}

/* Splits line (NUL-terminated, no newline) at single spaces. */
static size_t split(char *line, char **f)
{
	size_t n = 0;
	char *p = line;

	while (n < MAX_FIELDS) {
		f[n++] = p;
		if (!(p = strchr(p, ' ')))
			return n;
		*p++ = '\0';
	}
	return n + 1;   /* too many */
}

int history_file_parse(const char *buf, size_t len, struct history *h, size_t *line,
		       char *msg, size_t msglen)
{
	struct rd rd = { msg, msglen }, *r = &rd;
	struct hist_gen g = { 0 };
	bool have = false, ended = false;
	uint64_t last = 0, ngens = 0, want;
	char *copy, *p, *nl, *end, *f[MAX_FIELDS + 1];
	size_t nf;
	int err = 0;

	*line = 0;
	if (len && buf[len - 1] != '\n') {
		size_t k;

		for (k = 0; k < len; k++)
			*line += buf[k] == '\n';
		*line += 1;
		snprintf(msg, msglen, "the file ends inside a line (cut short?)");
		return -EPROTO;
	}
	if (!(copy = malloc(len + 1)))
		return -ENOMEM;
	memcpy(copy, buf, len);
	copy[len] = '\0';
	end = copy + len;
	/* Every line ends in '\n' (checked above): memchr finds one. */
	for (p = copy; err == 0 && p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		*nl = '\0';
		++*line;
		if (memchr(p, '\0', (size_t)(nl - p))) {
			snprintf(msg, msglen, "a NUL byte");
			err = -EPROTO;
			break;
		}
		if (ended) {
			snprintf(msg, msglen, "a line after the end");
			err = -EPROTO;
			break;
		}
		nf = split(p, f);
		if (*line == 1) {
			if (nf != 2 || strcmp(f[0], "primus-envfs-history"))
				snprintf(msg, msglen, "not a primus-envfs history file");
			else if (strcmp(f[1], "1"))
				snprintf(msg, msglen, "unsupported version (this program reads "
					 "version %d)", HISTORY_FILE_VERSION);
			else
				continue;
			err = -EPROTO;
		} else if (nf > MAX_FIELDS) {
			snprintf(msg, msglen, "too many fields");
			err = -EPROTO;
		} else if (!strcmp(f[0], "gen")) {
			if (have)
				history_push(h, &g);
			have = true;
			if ((err = take_gen(r, f, nf, &g, last)) == 0)
				last = g.generation;
			ngens++;
		} else if (!strcmp(f[0], "var")) {
			if (!have) {
				snprintf(msg, msglen, "var: before any gen");
				err = -EPROTO;
			} else {
				err = take_var(r, f, nf, &g);
			}
		} else if (!strcmp(f[0], "end") && nf == 2) {
			if ((err = take_u64(r, f[1], "end: the count", UINT64_MAX, &want)) == 0 &&
			    want != ngens) {
				snprintf(msg, msglen, "end: %" PRIu64 " generations, not %" PRIu64,
					 ngens, want);
				err = -EPROTO;
			}
			ended = true;
		} else {
			snprintf(msg, msglen, "unknown line (expected gen, var or end)");
			err = -EPROTO;
		}
	}
	if (err == 0 && *line == 0) {
		snprintf(msg, msglen, "empty (expected the header line)");
		*line = 1;
		err = -EPROTO;
	} else if (err == 0 && !ended) {
		snprintf(msg, msglen, "no end line (cut short?)");
		++*line;
		err = -EPROTO;
	}
	if (err == 0 && have)
		history_push(h, &g);
	hist_gen_release(&g);
	if (err < 0) {
		size_t cap = h->cap;

		history_release(h);
		if (history_init(h, cap) < 0 && err != -ENOMEM)
			err = -ENOMEM;
	}
	free(copy);
	return err;
}

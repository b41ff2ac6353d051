/* yaml_fast: the YAML subset of our own files, parsed in one pass from the
 * buffer (see yaml_fast.h for the contract with the libyaml path).
 *
 * Supported: block mappings and sequences (compact `- k: v`, `- - x`, and
 * the indentless `k:\n- x`), single-line plain, single- and double-quoted
 * scalars, empty values, single-line flow sequences and flow mappings of
 * `key: value` pairs, comments and blank lines. Everything else -- and any
 * construct whose exact libyaml reading is in doubt -- is YFAST_UNSUPPORTED:
 * libyaml is always right, this only has to be right when it answers.
 *
 * Block collections only ever start after spaces and "- ", so their columns
 * are byte counts; scalar and flow columns count code points, as libyaml's
 * marks do. */
#include "yaml_fast.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "strbuf.h"
#include "text.h"

#define UNSUP YFAST_UNSUPPORTED

/* libyaml forgets a simple key 1024 characters after its start; a key
 * this many bytes long is certainly still a key there. */
#define KEY_MAX_BYTES 1000

struct fp {
	struct ybuilder *b;
	const char *p, *end;
	const char *line;         /* start of p's line */
	unsigned lineno;          /* 1-based */
	const char *cpos;         /* column cache: cpos on this line is ccol */
	unsigned ccol;
	int ind;                  /* indent of the content line at p, -1 at end */
	unsigned depth;
	struct strbuf sc;         /* unescaped double-quoted scalar */
	/* key_line's last answer, for the line at key_at: a mapping's first
	 * key is asked about by the sequence entry, the collection and the
	 * mapping in turn, and block_map wants the plain key's end. */
	const char *key_at, *key_colon, *key_last;
};

/* ---- bytes the reader would refuse or treat specially ------------------ */

/* libyaml's printable set, minus what it reads as a line break (NEL, LS,
 * PS) and the BOM: any of those sends the input to libyaml. */
static bool cp_plain_ok(unsigned cp)
{
	if (cp == 0x2028 || cp == 0x2029 || cp == 0xfeff)
		return false;
	return (cp >= 0xa0 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) ||
	       (cp >= 0x10000 && cp <= 0x10ffff);
}

/* True when the 8 bytes at s are all printable ASCII (0x20-0x7e), so no
 * byte of them needs a look of its own: none has the high bit, none is
 * below 0x20 (the borrow test of "Bit Twiddling Hacks", exact for "any"),
 * and none is DEL (the only byte that +1 takes to the high bit). */
static bool word_printable(const unsigned char *s)
{
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	uint64_t x;

	memcpy(&x, s, sizeof(x));
	return ((x | (x + ones) | ((x - 0x20 * ones) & ~x)) & high) == 0;
}

/* Whole-buffer check first: libyaml's reader decodes ahead in chunks, so a
 * bad byte far after a limit error can still be what it reports. Most
 * bytes are printable ASCII inside a line, taken eight at a time. */
static int check_bytes(const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	bool bol = true;
	size_t i = 0, k;
	unsigned cp;

	while (i < len) {
		unsigned char c;

		/* Only a line's first byte can start a marker. */
		if (!bol)
			while (len - i >= 8 && word_printable(s + i))
				i += 8;
		if (i == len)
			break;
		c = s[i];
		/* Directives and document markers change what "the first
		 * document" is. */
		if (bol && (c == '%' || (len - i >= 3 &&
		    (!memcmp(s + i, "---", 3) || !memcmp(s + i, "...", 3)))))
			return UNSUP;
		bol = c == '\n';
		if (c >= 0x20 && c < 0x7f) {
			i++;
			continue;
		}
		if (c == '\n') {
			i++;
			continue;
		}
		if (c < 0x80)
			return UNSUP;     /* tab, CR, other controls, DEL */
		if (!(k = utf8_seq(s + i, len - i, &cp)) || !cp_plain_ok(cp))
			return UNSUP;
		i += k;
	}
	return 0;
}

/* ---- places --------------------------------------------------------- */

/* 1-based column of q on the current line, in code points. */
static unsigned col_at(struct fp *f, const char *q)
{
	const char *s = f->line;
	unsigned col = 1;

	if (f->cpos <= q) {
		s = f->cpos;
		col = f->ccol;
	}
	for (; s < q; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			col++;
	f->cpos = q;
	f->ccol = col;
	return col;
}

/* ---- lines ---------------------------------------------------------- */

static bool at_eol(const struct fp *f, const char *q)
{
	return q == f->end || *q == '\n';
}

static const char *skip_spaces(const struct fp *f, const char *q)
{
	while (q < f->end && *q == ' ')
		q++;
	return q;
}

/* From a line start, skips blank and comment lines; leaves p on the first
 * content byte of the next content line and ind at its indent (-1 at the
 * end). */
static void next_content_line(struct fp *f)
{
	const char *q;

	for (;;) {
		q = skip_spaces(f, f->p);
		if (q < f->end && *q == '#')
			while (q < f->end && *q != '\n')
				q++;
		if (q == f->end) {
			f->p = q;
			f->ind = -1;
			return;
		}
		if (*q == '\n') {
			f->p = q + 1;
			f->line = f->cpos = f->p;
			f->ccol = 1;
			f->lineno++;
			continue;
		}
		f->p = q;
		f->ind = (int)(q - f->line);
		return;
	}
}

/* After a node that ends its line: spaces, an optional comment (which
 * needs a space before it), the line break; then on to the next content
 * line. */
static int finish_line(struct fp *f)
{
	const char *q = skip_spaces(f, f->p);

	if (q < f->end && *q == '#') {
		if (q[-1] != ' ')
			return UNSUP;
		while (q < f->end && *q != '\n')
			q++;
	}
	if (q < f->end && *q != '\n')
		return UNSUP;
	if (q < f->end) {
		f->p = q + 1;
		f->line = f->cpos = f->p;
		f->ccol = 1;
		f->lineno++;
	} else {
		f->p = q;
	}
	next_content_line(f);
	return 0;
}

/* ---- scalars -------------------------------------------------------- */

static bool blankz(const struct fp *f, const char *q)
{
	return q == f->end || *q == ' ' || *q == '\n';
}

/* A block sequence entry: '-' then a space, a break or the end. */
static bool is_entry(const struct fp *f, const char *q)
{
	return q < f->end && *q == '-' && blankz(f, q + 1);
}

/* Byte classes, looked up once per byte on the hot paths. */
enum {
	C_NOSTART = 1,    /* cannot start a plain scalar (or starts another node) */
	C_NOAFTERDASH = 2, /* after a leading '-', leaves the reading in doubt */
	C_FLOWSTOP = 4,   /* in a flow plain scalar: give up */
	C_KEYSTOP = 8,    /* in a flow plain key: give up */
	C_PLAINSTOP = 16, /* may end a block plain scalar: a look of its own */
	C_QUOTESTOP = 32, /* may end or escape inside a quoted scalar */
};

static const unsigned char cls[256] = {
	['?'] = C_NOSTART | C_NOAFTERDASH | C_FLOWSTOP | C_KEYSTOP,
	[':'] = C_NOSTART | C_NOAFTERDASH | C_FLOWSTOP | C_PLAINSTOP,
	[','] = C_NOSTART | C_NOAFTERDASH | C_KEYSTOP,
	['['] = C_NOSTART | C_NOAFTERDASH | C_FLOWSTOP | C_KEYSTOP,
	[']'] = C_NOSTART | C_NOAFTERDASH | C_KEYSTOP,
	['{'] = C_NOSTART | C_NOAFTERDASH | C_FLOWSTOP | C_KEYSTOP,
	['}'] = C_NOSTART | C_NOAFTERDASH | C_KEYSTOP,
	['#'] = C_NOSTART | C_NOAFTERDASH | C_PLAINSTOP,
	['&'] = C_NOSTART, ['*'] = C_NOSTART, ['!'] = C_NOSTART,
	['|'] = C_NOSTART, ['>'] = C_NOSTART, ['\''] = C_NOSTART | C_QUOTESTOP,
	['"'] = C_NOSTART | C_QUOTESTOP, ['%'] = C_NOSTART, ['@'] = C_NOSTART,
	['`'] = C_NOSTART, ['\\'] = C_QUOTESTOP,
	[' '] = C_NOSTART | C_NOAFTERDASH,
	['\n'] = C_NOSTART | C_NOAFTERDASH | C_FLOWSTOP | C_KEYSTOP | C_PLAINSTOP |
		C_QUOTESTOP,
};

static bool is(char c, unsigned mask)
{
	return (cls[(unsigned char)c] & mask) != 0;
}

/* Bytes that may not start a plain scalar, or start something else. */
static bool plain_start_ok(const struct fp *f, const char *q)
{
	if (q == f->end || is(*q, C_NOSTART))
		return false;
	if (*q == '-')
		return q + 1 < f->end && !is(q[1], C_NOAFTERDASH);
	return true;
}

static int emit(struct fp *f, const char *q, const char *s, size_t len,
		enum yscalar_style style)
{
	return yb_scalar(f->b, f->lineno, col_at(f, q), NULL, NULL, s, len, style);
}

/* The end of a block-context plain scalar starting at q: the last
 * non-space byte before a break, the end, ": " or " #". *colon is set
 * when ": " ended it. */
static const char *plain_block_end(const struct fp *f, const char *q,
				   const char **colon)
{
	const char *start = q;

	*colon = NULL;
	for (;; q++) {
		/* Only a break, ':' or '#' can end it: skip the rest. */
		while (q < f->end && !is(*q, C_PLAINSTOP))
			q++;
		if (q == f->end || *q == '\n')
			break;
		if (*q == ':' && blankz(f, q + 1)) {
			*colon = q;
			break;
		}
		if (*q == '#' && q[-1] == ' ')
			break;
	}
	/* The end is after the last non-space byte before q. */
	while (q > start && q[-1] == ' ')
		q--;
	return q;
}

static int hexval(const char *q, int n, unsigned *out)
{
	unsigned v = 0;
	int i;

	for (i = 0; i < n; i++) {
		char c = q[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return UNSUP;
	}
	*out = v;
	return 0;
}

static int add_utf8(struct strbuf *sb, unsigned cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return sb_add(sb, u, n);
}

/* One escape after the backslash at *q; advances *q past it. The NUL
 * escapes are left to libyaml, whose path reports them. */
static int escape(struct fp *f, const char **q)
{
	static const char simple_in[] = "abtnvfre \"/\\";
	static const char simple_out[] = "\a\b\t\n\v\f\r\x1b \"/\\";
	const char *s = *q + 1, *hit;
	unsigned cp;
	int n, err;

	if (s == f->end)
		return UNSUP;
	if ((hit = strchr(simple_in, *s)) && *s) {
		*q = s + 1;
		return sb_addc(&f->sc, simple_out[hit - simple_in]);
	}
	switch (*s) {
	case 'N': cp = 0x85; n = 0; break;
	case '_': cp = 0xa0; n = 0; break;
	case 'L': cp = 0x2028; n = 0; break;
	case 'P': cp = 0x2029; n = 0; break;
	case 'x': n = 2; break;
	case 'u': n = 4; break;
	case 'U': n = 8; break;
	default: return UNSUP;
	}
	if (n) {
		if (f->end - (s + 1) < n || hexval(s + 1, n, &cp))
			return UNSUP;
		if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return UNSUP;
	}
	if ((err = add_utf8(&f->sc, cp)) < 0)
		return err;
	*q = s + 1 + n;
	return 0;
}

/* A quoted scalar at p, closed on its own line; p ends after the quote.
 * *s points into the buffer when nothing needed unescaping, else into sc. */
static int quoted(struct fp *f, const char **s, size_t *len)
{
	const char quote = *f->p;
	const char *q = f->p + 1, *run = q;
	bool copied = false;
	int err;

	sb_reset(&f->sc);
	for (;;) {
		/* Only quotes, a backslash and a break need a look. */
		while (q < f->end && !is(*q, C_QUOTESTOP))
			q++;
		if (q == f->end || *q == '\n')
			return UNSUP;     /* multi-line: folding rules */
		if (*q == quote && quote == '"')
			break;
		if (*q == quote && !(q + 1 < f->end && q[1] == '\''))
			break;
		if (*q != quote && !(*q == '\\' && quote == '"')) {
			q++;
			continue;
		}
		if ((err = sb_add(&f->sc, run, (size_t)(q - run))) < 0)
			return err;
		copied = true;
		if (quote == '\'') {
			if ((err = sb_addc(&f->sc, '\'')) < 0)
				return err;
			q += 2;
		} else if ((err = escape(f, &q)) != 0) {
			return err;
		}
		run = q;
	}
	if (copied) {
		if ((err = sb_add(&f->sc, run, (size_t)(q - run))) < 0)
			return err;
		*s = f->sc.buf;
		*len = f->sc.len;
	} else {
		*s = run;
		*len = (size_t)(q - run);
	}
	f->p = q + 1;
	return 0;
}

static int quoted_node(struct fp *f)
{
	const char *start = f->p, *s;
	enum yscalar_style style = *start == '"' ? YS_DOUBLE : YS_SINGLE;
	size_t len;
	int err;

	if ((err = quoted(f, &s, &len)) != 0)
		return err;
	return emit(f, start, s, len, style);
}

/* ---- containers ----------------------------------------------------- */

/* Depth past the limit is libyaml's to report: it may come with an error
 * the fast path does not know about. */
static int open_node(struct fp *f, enum ynode_kind kind, unsigned line,
		     unsigned col)
{
	if (f->depth >= YT_MAX_DEPTH)
		return UNSUP;
	f->depth++;
	return yb_start(f->b, kind, line, col, NULL, NULL);
}

static int close_node(struct fp *f)
{
	f->depth--;
	return yb_end(f->b);
}

static int flow_node(struct fp *f);

/* A plain scalar inside a flow collection, ended by ',', ']' or '}'. Any
 * ':' or '?' (keys, errors and version differences), nested openers and
 * comments (which would continue the flow on the next line) give up. */
static int flow_plain(struct fp *f)
{
	const char *start = f->p, *q = f->p, *last = f->p;

	if (!plain_start_ok(f, q))
		return UNSUP;
	for (; q < f->end; q++) {
		if (*q == ',' || *q == ']' || *q == '}')
			break;
		if (is(*q, C_FLOWSTOP) || (*q == '#' && q[-1] == ' '))
			return UNSUP;
		if (*q != ' ')
			last = q + 1;
	}
	f->p = q;
	return emit(f, start, start, (size_t)(last - start), YS_PLAIN);
}

/* A flow mapping key: quoted, or plain up to ':'; then ": ". */
static int flow_key(struct fp *f)
{
	const char *start = f->p, *q = f->p, *last = f->p;
	int err;

	if (*q == '"' || *q == '\'') {
		if ((err = quoted_node(f)) != 0)
			return err;
		q = skip_spaces(f, f->p);
	} else {
		if (!plain_start_ok(f, q))
			return UNSUP;
		for (; q < f->end && *q != ':'; q++) {
			if (is(*q, C_KEYSTOP) || (*q == '#' && q[-1] == ' '))
				return UNSUP;
			if (*q != ' ')
				last = q + 1;
		}
		if ((err = emit(f, start, start, (size_t)(last - start),
				YS_PLAIN)) != 0)
			return err;
	}
	if (q - start >= KEY_MAX_BYTES || q == f->end || *q != ':' ||
	    q + 1 == f->end || q[1] != ' ')
		return UNSUP;
	f->p = skip_spaces(f, q + 1);
	return 0;
}

/* A flow sequence [a, b] or mapping {k: v}: entries up to close, each
 * a node, or for a mapping a key and a node. */
static int flow_coll(struct fp *f, enum ynode_kind kind, char close)
{
	int err;

	if ((err = open_node(f, kind, f->lineno, col_at(f, f->p))) != 0)
		return err;
	f->p = skip_spaces(f, f->p + 1);
	while (f->p < f->end && *f->p != close) {
		if ((kind == YN_MAP && (err = flow_key(f)) != 0) || (err = flow_node(f)) != 0)
			return err;
		f->p = skip_spaces(f, f->p);
		if (f->p < f->end && *f->p == ',')
			f->p = skip_spaces(f, f->p + 1);
		else if (f->p == f->end || *f->p != close)
			return UNSUP;
	}
	if (f->p == f->end)
		return UNSUP;
	f->p++;
	return close_node(f);
}

static int flow_node(struct fp *f)
{
	if (f->p == f->end)
		return UNSUP;
	switch (*f->p) {
	case '[': return flow_coll(f, YN_SEQ, ']');
	case '{': return flow_coll(f, YN_MAP, '}');
	case '"':
	case '\'': return quoted_node(f);
	default: return flow_plain(f);
	}
}

/* ---- block context -------------------------------------------------- */

static int block_coll(struct fp *f, unsigned c);

/* A node that ends its line, as a value after "key: " or "- ", or as the
 * root: a quoted or plain scalar or a flow collection. */
static int inline_node(struct fp *f)
{
	const char *start = f->p, *colon, *last;
	int err;

	switch (*f->p) {
	case '[':
		err = flow_coll(f, YN_SEQ, ']');
		break;
	case '{':
		err = flow_coll(f, YN_MAP, '}');
		break;
	case '"':
	case '\'':
		err = quoted_node(f);
		break;
	default:
		if (!plain_start_ok(f, f->p))
			return UNSUP;
		last = plain_block_end(f, f->p, &colon);
		if (colon)
			return UNSUP;     /* `a: b: c`, or a key where none fits */
		f->p = last;
		err = emit(f, start, start, (size_t)(last - start), YS_PLAIN);
		break;
	}
	return err ? err : finish_line(f);
}

/* Is the line at p a `key:` line? *colon gets the ':' when it is. */
static bool key_line_scan(struct fp *f, const char **colon)
{
	const char *q = f->p;

	*colon = NULL;
	if (*q == '"' || *q == '\'') {
		for (q++; q < f->end && *q != '\n'; q++) {
			if (*q == '\\' && *f->p == '"' && q + 1 < f->end) {
				q++;
				continue;
			}
			if (*q == *f->p) {
				if (*q == '\'' && q + 1 < f->end && q[1] == '\'') {
					q++;
					continue;
				}
				break;
			}
		}
		if (q == f->end || *q == '\n')
			return false;
		q = skip_spaces(f, q + 1);
		if (q < f->end && *q == ':' && blankz(f, q + 1))
			*colon = q;
		return *colon != NULL;
	}
	if (!plain_start_ok(f, q))
		return false;
	f->key_last = plain_block_end(f, q, colon);
	return *colon != NULL;
}

/* key_line_scan, once per line: the answer depends on p alone. */
static bool key_line(struct fp *f, const char **colon)
{
	if (f->key_at != f->p) {
		f->key_last = NULL;
		key_line_scan(f, &f->key_colon);
		f->key_at = f->p;
	}
	*colon = f->key_colon;
	return *colon != NULL;
}

/* The value after "key:" (p just past the colon) of a mapping at c. */
static int map_value(struct fp *f, unsigned c, const char *colon)
{
	unsigned line = f->lineno, col = col_at(f, colon) + 1;
	int err;

	f->p = skip_spaces(f, f->p);
	if (!at_eol(f, f->p) && !(*f->p == '#' && f->p[-1] == ' '))
		return inline_node(f);
	if ((err = finish_line(f)) != 0)
		return err;
	if (f->ind > (int)c)
		return block_coll(f, (unsigned)f->ind);
	if (f->ind == (int)c && is_entry(f, f->p))
		return block_coll(f, c);  /* the indentless `k:\n- x` */
	return yb_scalar(f->b, line, col, NULL, NULL, "", 0, YS_PLAIN);
}

static int block_map(struct fp *f, unsigned c)
{
	const char *colon, *start;
	int err;

	if ((err = open_node(f, YN_MAP, f->lineno, c + 1)) != 0)
		return err;
	for (;;) {
		start = f->p;
		if (!key_line(f, &colon) || colon - start >= KEY_MAX_BYTES)
			return UNSUP;
		if (*start == '"' || *start == '\'') {
			if ((err = quoted_node(f)) != 0)
				return err;
		} else {
			/* key_line found the plain key's end. */
			if ((err = emit(f, start, start, (size_t)(f->key_last - start),
					YS_PLAIN)) != 0)
				return err;
		}
		f->p = colon + 1;
		if ((err = map_value(f, c, colon)) != 0)
			return err;
		if (f->ind < (int)c)
			break;
		if (f->ind > (int)c || is_entry(f, f->p))
			return UNSUP;
	}
	return close_node(f);
}

/* A sequence at c, or the indentless one of a mapping at c: the same
 * events and marks, and the same end (a line at c that is no entry). */
static int block_seq(struct fp *f, unsigned c)
{
	const char *q;
	unsigned line, c2;
	int err;

	if ((err = open_node(f, YN_SEQ, f->lineno, c + 1)) != 0)
		return err;
	for (;;) {
		line = f->lineno;
		q = skip_spaces(f, f->p + 1);
		f->p = q;
		c2 = (unsigned)(q - f->line);
		if (at_eol(f, q) || (*q == '#' && q[-1] == ' ')) {
			if ((err = finish_line(f)) != 0)
				return err;
			if (f->ind > (int)c)
				err = block_coll(f, (unsigned)f->ind);
			else
				err = yb_scalar(f->b, line, c + 2, NULL, NULL, "", 0,
						YS_PLAIN);
		} else if (is_entry(f, q)) {
			err = block_coll(f, c2);
		} else {
			const char *colon;

			err = key_line(f, &colon) ? block_coll(f, c2) : inline_node(f);
		}
		if (err)
			return err;
		if (f->ind < (int)c)
			break;
		if (f->ind > (int)c)
			return UNSUP;
		if (!is_entry(f, f->p))
			break;
	}
	return close_node(f);
}

/* The block collection whose first entry is at p, column c. A scalar on a
 * line of its own (a value below its key) is left to libyaml. */
static int block_coll(struct fp *f, unsigned c)
{
	const char *colon;

	if (is_entry(f, f->p))
		return block_seq(f, c);
	if (key_line(f, &colon))
		return block_map(f, c);
	return UNSUP;
}

int yfast_parse(struct ybuilder *b, const char *buf, size_t len)
{
	struct fp f = { 0 };
	const char *colon;
	int err;

	if ((err = check_bytes(buf, len)) != 0)
		return err;
	f.b = b;
	f.p = f.line = f.cpos = buf;
	f.ccol = 1;
	f.end = buf + len;
	f.lineno = 1;
	next_content_line(&f);
	if (f.ind < 0)
		goto out;
	if (is_entry(&f, f.p) || key_line(&f, &colon))
		err = block_coll(&f, (unsigned)f.ind);
	else
		err = inline_node(&f);
	/* Anything after the root is another node or an error: libyaml's. */
	if (!err && f.ind >= 0)
		err = UNSUP;
out:
	sb_release(&f.sc);
	return err;
}

/* yaml_tree: libyaml events -> a node tree with 1-based places, with every
 * limit of yaml_tree.h enforced while parsing, so no reader of YAML (specs,
 * config, state) can be made to use unbounded time or memory.
 *
 *   $ printf 'a: &x [*x]\n' > loop.yaml    # -> loop.yaml:1:9: error: alias *x ...
 */
#include "yaml_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

/* Explicit tags are stored in their short form ("!!str") because that is
 * how users write them and how diagnostics should quote them. */
#define YAML_TAG_PREFIX "tag:yaml.org,2002:"

struct frame {
	struct ynode *node;
	struct ynode *key;        /* YN_MAP: key waiting for its value */
	char *anchor;             /* registered only when the node ends */
	size_t count_start;       /* expanded count when the node opened */
	size_t height;            /* containers below, aliases expanded */
};

struct anchor {
	char *name;
	struct ynode *node;
	size_t weight;            /* expanded nodes of the subtree */
	size_t height;            /* containers on its longest path */
};

struct builder {
	struct ydoc *doc;
	const char *buf;
	size_t len;
	struct diag_list *diags;
	struct frame *stack;
	size_t depth, capstack;
	struct anchor *anchors;
	size_t nanchors, capanchors;
	size_t naliases;
	size_t count;             /* expanded nodes so far */
};

const char *ynode_kind_name(enum ynode_kind k)
{
	switch (k) {
	case YN_SCALAR: return "scalar";
	case YN_SEQ: return "sequence";
	case YN_MAP: return "mapping";
	}
	return "?";
}

bool yscalar_is(const struct ynode *n, const char *s)
{
	size_t len = strlen(s);

	return n && n->kind == YN_SCALAR && n->len == len &&
	       memcmp(n->str, s, len) == 0;
}

struct ynode *ymap_get(const struct ynode *map, const char *key)
{
	struct ynode *found = NULL;
	size_t i;

	if (!map || map->kind != YN_MAP)
		return NULL;
	/* Last one wins, as in the dict a Python loader builds. */
	for (i = 0; i < map->npairs; i++)
		if (yscalar_is(map->pairs[i].key, key))
			found = map->pairs[i].val;
	return found;
}

static void ynode_free(struct ynode *n)
{
	free(n->tag);
	free(n->str);
	free(n->items);
	free(n->pairs);
	free(n);
}

void ydoc_free(struct ydoc *doc)
{
	size_t i;

	if (!doc)
		return;
	for (i = 0; i < doc->nall; i++)
		ynode_free(doc->all[i]);
	free(doc->all);
	free(doc->file);
	free(doc);
}

static int doc_new(const char *name, struct ydoc **out)
{
	struct ydoc *doc = calloc(1, sizeof(*doc));

	if (!doc)
		return -ENOMEM;
	if (!(doc->file = xstrdup(name ? name : "<buffer>"))) {
		free(doc);
		return -ENOMEM;
	}
	*out = doc;
	return 0;
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	if (ncap > SIZE_MAX / size)
		return -ENOMEM;
	if (!(p = realloc(*v, ncap * size)))
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

/* Line and column of a byte offset, for reader errors, which carry an
 * offset but no mark. */
static void offset_place(const char *buf, size_t len, size_t off,
			 unsigned *line, unsigned *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off && i < len; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)buf[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

static int limit_error(struct builder *b, const yaml_mark_t *m,
		       const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int limit_error(struct builder *b, const yaml_mark_t *m,
		       const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = diag_vadd(b->diags, DIAG_ERROR, b->doc->file, (unsigned)m->line + 1,
			(unsigned)m->column + 1, fmt, ap);
	va_end(ap);
	return err < 0 ? err : -EINVAL;
}

static char *tag_dup(const yaml_char_t *tag)
{
	const char *t = (const char *)tag;
	struct strbuf sb = STRBUF_INIT;

	if (!t)
		return NULL;
	if (strncmp(t, YAML_TAG_PREFIX, strlen(YAML_TAG_PREFIX)) != 0)
		return xstrdup(t);
	if (sb_adds(&sb, "!!") < 0 ||
	    sb_adds(&sb, t + strlen(YAML_TAG_PREFIX)) < 0) {
		sb_release(&sb);
		return NULL;
	}
	return sb_detach(&sb, NULL);
}

/* Creates a node registered in doc->all, so it is freed exactly once
 * whatever happens to the parse. */
static int node_new(struct builder *b, enum ynode_kind kind,
		    const yaml_mark_t *m, const yaml_char_t *tag,
		    struct ynode **out)
{
	struct ydoc *doc = b->doc;
	struct ynode *n;
	int err;

	if ((err = grow((void **)&doc->all, &doc->capall, doc->nall,
			sizeof(*doc->all))) < 0)
		return err;
	if (!(n = calloc(1, sizeof(*n))))
		return -ENOMEM;
	doc->all[doc->nall++] = n;
	n->kind = kind;
	n->line = (unsigned)m->line + 1;
	n->col = (unsigned)m->column + 1;
	if (tag && !(n->tag = tag_dup(tag)))
		return -ENOMEM;
	*out = n;
	return 0;
}

static int count_nodes(struct builder *b, const yaml_mark_t *m, size_t add)
{
	if (add > YT_MAX_NODES || b->count > YT_MAX_NODES - add)
		return limit_error(b, m, "more than %u nodes once aliases are "
				   "expanded (an alias bomb?)", (unsigned)YT_MAX_NODES);
	b->count += add;
	return 0;
}

/* Arrays grow by doubling when their count reaches a power of two, so the
 * count is the only bookkeeping a node needs. */
static int grow_pow2(void **v, size_t n, size_t size)
{
	size_t cap;
	void *p;

	if (n && (n & (n - 1)) != 0)
		return 0;
	cap = n ? n * 2 : 1;
	if (cap > SIZE_MAX / size)
		return -ENOMEM;
	if (!(p = realloc(*v, cap * size)))
		return -ENOMEM;
	*v = p;
	return 0;
}

/* Hangs n under the innermost open container (or makes it the root). */
static int attach(struct builder *b, struct ynode *n)
{
	struct frame *f;
	struct ynode *p;
	int err;

	if (!b->depth) {
		if (!b->doc->root)
			b->doc->root = n;
		return 0;
	}
	f = &b->stack[b->depth - 1];
	p = f->node;
	if (p->kind == YN_SEQ) {
		if ((err = grow_pow2((void **)&p->items, p->nitems,
				     sizeof(*p->items))) < 0)
			return err;
		p->items[p->nitems++] = n;
		return 0;
	}
	if (!f->key) {
		f->key = n;
		return 0;
	}
	if ((err = grow_pow2((void **)&p->pairs, p->npairs,
			     sizeof(*p->pairs))) < 0)
		return err;
	p->pairs[p->npairs].key = f->key;
	p->pairs[p->npairs].val = n;
	p->npairs++;
	f->key = NULL;
	return 0;
}

static int anchor_add(struct builder *b, const char *name, struct ynode *n,
		      size_t weight, size_t height)
{
	struct anchor *a;
	int err;

	if ((err = grow((void **)&b->anchors, &b->capanchors, b->nanchors,
			sizeof(*b->anchors))) < 0)
		return err;
	a = &b->anchors[b->nanchors];
	if (!(a->name = xstrdup(name)))
		return -ENOMEM;
	a->node = n;
	a->weight = weight;
	a->height = height;
	b->nanchors++;
	return 0;
}

static int on_scalar(struct builder *b, yaml_event_t *ev)
{
	const yaml_mark_t *m = &ev->start_mark;
	struct ynode *n;
	int err;

	if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length))
		return limit_error(b, m, "NUL byte in a scalar (from a \\0 "
				   "escape)");
	if ((err = count_nodes(b, m, 1)) < 0)
		return err;
	if ((err = node_new(b, YN_SCALAR, m, ev->data.scalar.tag, &n)) < 0)
		return err;
	if (!(n->str = xstrndup((const char *)ev->data.scalar.value,
				ev->data.scalar.length)))
		return -ENOMEM;
	n->len = ev->data.scalar.length;
	switch (ev->data.scalar.style) {
	case YAML_SINGLE_QUOTED_SCALAR_STYLE: n->style = YS_SINGLE; break;
	case YAML_DOUBLE_QUOTED_SCALAR_STYLE: n->style = YS_DOUBLE; break;
	case YAML_LITERAL_SCALAR_STYLE: n->style = YS_LITERAL; break;
	case YAML_FOLDED_SCALAR_STYLE: n->style = YS_FOLDED; break;
	default: n->style = YS_PLAIN; break;
	}
	if (ev->data.scalar.anchor &&
	    (err = anchor_add(b, (const char *)ev->data.scalar.anchor, n, 1,
				      0)) < 0)
		return err;
	return attach(b, n);
}

static int on_start(struct builder *b, yaml_event_t *ev, enum ynode_kind kind)
{
	const yaml_mark_t *m = &ev->start_mark;
	const yaml_char_t *tag, *anchor;
	struct frame *f;
	struct ynode *n;
	int err;

	if (kind == YN_SEQ) {
		tag = ev->data.sequence_start.tag;
		anchor = ev->data.sequence_start.anchor;
	} else {
		tag = ev->data.mapping_start.tag;
		anchor = ev->data.mapping_start.anchor;
	}
	if (b->depth >= YT_MAX_DEPTH)
		return limit_error(b, m, "nesting deeper than %u levels",
				   (unsigned)YT_MAX_DEPTH);
	if ((err = count_nodes(b, m, 1)) < 0)
		return err;
	if ((err = node_new(b, kind, m, tag, &n)) < 0)
		return err;
	/* Attach first: the container is its parent's child from its start. */
	if ((err = attach(b, n)) < 0)
		return err;
	if ((err = grow((void **)&b->stack, &b->capstack, b->depth,
			sizeof(*b->stack))) < 0)
		return err;
	f = &b->stack[b->depth++];
	f->node = n;
	f->key = NULL;
	f->count_start = b->count - 1;
	f->height = 0;
	f->anchor = NULL;
	if (anchor && !(f->anchor = xstrdup((const char *)anchor)))
		return -ENOMEM;
	return 0;
}

static int on_end(struct builder *b)
{
	struct frame *f;
	size_t height;
	int err = 0;

	if (!b->depth)
		return 0;
	f = &b->stack[--b->depth];
	height = f->height + 1;
	if (b->depth && b->stack[b->depth - 1].height < height)
		b->stack[b->depth - 1].height = height;
	/* The anchor becomes usable only now, so `&a [*a]` finds no anchor. */
	if (f->anchor)
		err = anchor_add(b, f->anchor, f->node, b->count - f->count_start,
				 height);
	free(f->anchor);
	f->anchor = NULL;
	return err;
}

static int on_alias(struct builder *b, yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	const yaml_mark_t *m = &ev->start_mark;
	size_t i;
	int err;

	if (++b->naliases > YT_MAX_ALIASES)
		return limit_error(b, m, "more than %u aliases", (unsigned)YT_MAX_ALIASES);
	/* The most recent definition wins, as YAML allows redefinition. */
	for (i = b->nanchors; i-- > 0;) {
		struct anchor *a = &b->anchors[i];

		if (strcmp(a->name, name) != 0)
			continue;
		if ((err = count_nodes(b, m, a->weight)) < 0)
			return err;
		/* Readers recurse through aliases: bound the expanded depth. */
		if (b->depth + a->height > YT_MAX_DEPTH)
			return limit_error(b, m, "nesting deeper than %u levels "
					   "once alias *%s is expanded",
					   (unsigned)YT_MAX_DEPTH, name);
		if (b->depth && b->stack[b->depth - 1].height < a->height)
			b->stack[b->depth - 1].height = a->height;
		return attach(b, a->node);
	}
	for (i = 0; i < b->depth; i++)
		if (b->stack[i].anchor && strcmp(b->stack[i].anchor, name) == 0)
			return limit_error(b, m, "alias *%s refers to a node that "
					   "contains it (a cycle)", name);
	return limit_error(b, m, "alias *%s has no anchor before it", name);
}

static int syntax_error(struct builder *b, yaml_parser_t *p)
{
	struct strbuf msg = STRBUF_INIT;
	unsigned line, col;
	int err;

	if (p->error == YAML_MEMORY_ERROR)
		return -ENOMEM;
	if (p->error == YAML_READER_ERROR) {
		offset_place(b->buf, b->len, p->problem_offset, &line, &col);
	} else {
		line = (unsigned)p->problem_mark.line + 1;
		col = (unsigned)p->problem_mark.column + 1;
	}
	err = sb_addf(&msg, "YAML syntax error: %s",
		      p->problem ? p->problem : "unknown error");
	/* libyaml reports a bad byte, or a decoded code point (a surrogate,
	 * U+FFFE) that is not a byte at all. */
	if (!err && p->error == YAML_READER_ERROR && p->problem_value > 0xff)
		err = sb_addf(&msg, " (U+%04X)", (unsigned)p->problem_value);
	else if (!err && p->error == YAML_READER_ERROR && p->problem_value != -1)
		err = sb_addf(&msg, " (byte 0x%02x)", (unsigned)p->problem_value);
	else if (!err && p->context)
		err = sb_addf(&msg, " (%s)", p->context);
	if (!err)
		err = diag_add(b->diags, DIAG_ERROR, b->doc->file, line, col,
			       "%s", sb_str(&msg));
	sb_release(&msg);
	return err < 0 ? err : -EINVAL;
}

static int build(struct builder *b)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	bool done = false;
	int err = 0;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)b->buf,
				     b->len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			err = syntax_error(b, &parser);
			goto out;
		}
		switch (ev.type) {
		case YAML_SCALAR_EVENT:
			err = on_scalar(b, &ev);
			break;
		case YAML_SEQUENCE_START_EVENT:
			err = on_start(b, &ev, YN_SEQ);
			break;
		case YAML_MAPPING_START_EVENT:
			err = on_start(b, &ev, YN_MAP);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			err = on_end(b);
			break;
		case YAML_ALIAS_EVENT:
			err = on_alias(b, &ev);
			break;
		case YAML_DOCUMENT_END_EVENT:
		case YAML_STREAM_END_EVENT:
			/* Only the first document is read. */
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		if (err < 0)
			goto out;
	}
out:
	yaml_parser_delete(&parser);
	return err;
}

int ydoc_load_buffer(const char *name, const char *buf, size_t len,
		     struct ydoc **out, struct diag_list *diags)
{
	struct builder b = { 0 };
	struct ydoc *doc = NULL;
	size_t i;
	int err;

	*out = NULL;
	if ((err = doc_new(name, &doc)) < 0)
		goto out;
	if (len > YT_MAX_FILE_SIZE) {
		err = diag_add(diags, DIAG_ERROR, doc->file, 1, 1,
			       "file is larger than 1 MiB");
		err = err < 0 ? err : -EINVAL;
		goto out;
	}
	b.doc = doc;
	b.buf = buf;
	b.len = len;
	b.diags = diags;
	err = build(&b);
out:
	for (i = 0; i < b.depth; i++)
		free(b.stack[i].anchor);
	free(b.stack);
	for (i = 0; i < b.nanchors; i++)
		free(b.anchors[i].name);
	free(b.anchors);
	if (err < 0)
		ydoc_free(doc);
	else
		*out = doc;
	return err;
}

/* Reads at most YT_MAX_FILE_SIZE + 1 bytes, so a file that grows while
 * being read, or a FIFO, is still bounded. *buf is caller-owned. */
static int read_bounded(int fd, char **buf, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *p = malloc(cap), *np;
	ssize_t r;
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			if (cap > YT_MAX_FILE_SIZE)
				break;
			cap *= 2;
			if (!(np = realloc(p, cap))) {
				err = -ENOMEM;
				goto out;
			}
			p = np;
		}
		r = read(fd, p + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
out:
	if (err < 0) {
		free(p);
		return err;
	}
	*buf = p;
	*len = n;
	return 0;
}

int ydoc_load_file(const char *path, struct ydoc **out,
		   struct diag_list *diags)
{
	char *buf = NULL;
	size_t len = 0;
	struct stat st;
	int fd = -1, err = 0;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		err = -errno;
		goto io_error;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto io_error;
	}
	/* Checked before reading anything: a huge file costs nothing. */
	if (S_ISREG(st.st_mode) && st.st_size > (off_t)YT_MAX_FILE_SIZE) {
		err = diag_add(diags, DIAG_ERROR, path, 1, 1,
			       "file is larger than 1 MiB");
		err = err < 0 ? err : -EINVAL;
		goto out;
	}
	if ((err = read_bounded(fd, &buf, &len)) < 0)
		goto io_error;
	err = ydoc_load_buffer(path, buf, len, out, diags);
	goto out;
io_error:
	if (err != -ENOMEM) {
		int e = diag_add(diags, DIAG_ERROR, path, 0, 0,
				 "cannot read: %s", strerror(-err));

		if (e < 0)
			err = e;
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

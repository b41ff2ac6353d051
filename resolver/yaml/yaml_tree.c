/* yaml_tree: libyaml events -> a node tree with 1-based places, with every
 * limit of yaml_tree.h enforced while parsing, so no reader of YAML (specs,
 * config, state) can be made to use unbounded time or memory.
 *
 *   $ printf 'a: &x [*x]\n' > loop.yaml    # -> loop.yaml:1:9: error: alias *x ...
 */
#include "yaml_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "arena.h"
#include "infile.h"
#include "yaml_build.h"

const char *ynode_kind_name(enum ynode_kind k)
{
	switch (k) {
	case YN_SCALAR: return "scalar";
	case YN_SEQ: return "sequence";
	case YN_MAP: return "mapping";
	}
	return "?";
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

void ydoc_free(struct ydoc *doc)
{
	if (!doc)
		return;
	arena_free(doc->arena);
	arena_free(doc->text);
	free(doc);
}

struct arena *ydoc_take_text(struct ydoc *doc)
{
	struct arena *text = doc->text;

	doc->text = NULL;
	return text;
}

/* A doc with an empty tree; caller-owned, ydoc_free(). */
static int doc_new(const char *name, struct ydoc **out)
{
	struct ydoc *doc = calloc(1, sizeof(*doc));
	int err = -ENOMEM;

	if (!doc)
		return -ENOMEM;
	if (!(doc->arena = arena_new()) || !(doc->text = arena_new()))
		goto out;
	if (!(doc->file = arena_strdup(doc->arena, name ? name : "<buffer>")))
		goto out;
	*out = doc;
	return 0;
out:
	ydoc_free(doc);
	return err;
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

static int syntax_error(struct ydoc *doc, const char *buf, size_t len,
			yaml_parser_t *p, struct diag_list *diags)
{
	struct strbuf msg = STRBUF_INIT;
	unsigned line, col;
	int err;

	if (p->error == YAML_MEMORY_ERROR)
		return -ENOMEM;
	if (p->error == YAML_READER_ERROR) {
		offset_place(buf, len, p->problem_offset, &line, &col);
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
		err = diag_add(diags, DC_YAML_SYNTAX, doc->file, line, col,
			       "%s", sb_str(&msg));
	sb_release(&msg);
	return err < 0 ? err : -EINVAL;
}

static enum yscalar_style style_of(yaml_scalar_style_t s)
{
	switch (s) {
	case YAML_SINGLE_QUOTED_SCALAR_STYLE: return YS_SINGLE;
	case YAML_DOUBLE_QUOTED_SCALAR_STYLE: return YS_DOUBLE;
	case YAML_LITERAL_SCALAR_STYLE: return YS_LITERAL;
	case YAML_FOLDED_SCALAR_STYLE: return YS_FOLDED;
	default: return YS_PLAIN;
	}
}

/* One libyaml event into the builder; *done at the end of the document. */
static int on_event(struct ybuilder *b, const yaml_event_t *ev, bool *done)
{
	if (b->doc_done) {
		/* After the first document: only whether another follows. */
		if (ev->type == YAML_DOCUMENT_START_EVENT)
			b->doc->more_documents = true;
		*done = ev->type == YAML_DOCUMENT_START_EVENT || ev->type == YAML_STREAM_END_EVENT;
		return 0;
	}
	unsigned line = (unsigned)ev->start_mark.line + 1;
	unsigned col = (unsigned)ev->start_mark.column + 1;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return yb_scalar(b, line, col, (const char *)ev->data.scalar.tag,
				 (const char *)ev->data.scalar.anchor,
				 (const char *)ev->data.scalar.value,
				 ev->data.scalar.length,
				 style_of(ev->data.scalar.style));
	case YAML_SEQUENCE_START_EVENT:
		return yb_start(b, YN_SEQ, line, col,
				(const char *)ev->data.sequence_start.tag,
				(const char *)ev->data.sequence_start.anchor);
	case YAML_MAPPING_START_EVENT:
		return yb_start(b, YN_MAP, line, col,
				(const char *)ev->data.mapping_start.tag,
				(const char *)ev->data.mapping_start.anchor);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return yb_end(b);
	case YAML_ALIAS_EVENT:
		return yb_alias(b, line, col, (const char *)ev->data.alias.anchor);
	case YAML_DOCUMENT_END_EVENT:
		/* Only the first document is read; the next event tells
		 * whether there is a second (PyYAML's safe_load refuses one). */
		b->doc_done = true;
		return 0;
	case YAML_STREAM_END_EVENT:
		*done = true;
		return 0;
	default:
		return 0;
	}
}

/* The whole YAML language, and every syntax error. */
static int load_libyaml(struct ydoc *doc, const char *buf, size_t len, unsigned flags,
			struct diag_list *diags)
{
	struct ybuilder b;
	yaml_parser_t parser;
	yaml_event_t ev;
	bool done = false;
	int err = 0;

	yb_init(&b, doc, diags);
	b.nul_ok = flags & YDOC_NUL_OK;
	if (flags & YDOC_LARGE)
		b.max_nodes = YT_MAX_LARGE_NODES;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			err = syntax_error(doc, buf, len, &parser, diags);
			goto out;
		}
		err = on_event(&b, &ev, &done);
		yaml_event_delete(&ev);
		if (err < 0)
			goto out;
	}
out:
	yaml_parser_delete(&parser);
	yb_release(&b);
	return err;
}

static unsigned max_size(unsigned flags)
{
	return flags & YDOC_LARGE ? YT_MAX_LARGE_FILE_SIZE : YT_MAX_FILE_SIZE;
}

int ydoc_load_buffer(const char *name, const char *buf, size_t len,
		     struct ydoc **out, struct diag_list *diags)
{
	return ydoc_load_buffer_as(name, buf, len, 0, out, diags);
}

int ydoc_load_buffer_as(const char *name, const char *buf, size_t len, unsigned flags,
			struct ydoc **out, struct diag_list *diags)
{
	struct ydoc *doc = NULL;
	int err;

	*out = NULL;
	if ((err = doc_new(name, &doc)) < 0)
		goto out;
	if (len > max_size(flags)) {
		err = diag_add(diags, DC_YAML_LIMIT, doc->file, 1, 1,
			       "file is larger than %u MiB", max_size(flags) >> 20);
		err = err < 0 ? err : -EINVAL;
		goto out;
	}
	err = load_libyaml(doc, buf, len, flags, diags);
	if (!err && (flags & YDOC_KEEP_SOURCE)) {
		if (!(doc->source = arena_strndup(doc->arena, buf, len)))
			err = -ENOMEM;
		doc->source_len = len;
	}
out:
	if (err != 0)
		ydoc_free(doc);
	else
		*out = doc;
	return err;
}

int yfile_read(const char *path, char **buf, size_t *len)
{
	return infile_read(path, YT_MAX_FILE_SIZE, buf, len);
}

int ydoc_load_file(const char *path, struct ydoc **out,
		   struct diag_list *diags)
{
	return ydoc_load_file_as(path, 0, out, diags);
}

int ydoc_load_file_as(const char *path, unsigned flags, struct ydoc **out,
		      struct diag_list *diags)
{
	return ydoc_load_file_digest(path, flags, out, NULL, diags);
}

int ydoc_load_file_digest(const char *path, unsigned flags, struct ydoc **out,
			  struct file_digest *digest, struct diag_list *diags)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	*out = NULL;
	if (digest)
		digest->has = false;
	err = infile_read(path, max_size(flags), &buf, &len);
	if (err == -EFBIG) {
		err = diag_add(diags, DC_YAML_LIMIT, path, 1, 1,
			       "file is larger than %u MiB", max_size(flags) >> 20);
		err = err < 0 ? err : -EINVAL;
	} else if (err == -EINVAL) {
		err = infile_refused(diags, path);
	} else if (err < 0 && err != -ENOMEM) {
		int e = diag_add(diags, DC_INPUT_UNREADABLE, path, 0, 0,
				 "cannot read: %s", strerror(-err));

		if (e < 0)
			err = e;
	} else if (err == 0) {
		if (digest) {
			sha256(buf, len, digest->sum);
			digest->has = true;
		}
		err = ydoc_load_buffer_as(path, buf, len, flags, out, diags);
	}
	free(buf);
	return err;
}

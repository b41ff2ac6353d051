/* What makes one node unfit beside the reference: the variables that
 * differ, with both values unless secret, and the error diagnostics its
 * environment carries. */
#include "verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text.h"

/* Where two values' shown part starts: 0, or a little before their first
 * difference when that is far in (two long flag lists that differ in
 * their last flag must not print the same first 300 bytes twice), after
 * a space, ':' or ',' when there is one (a flag, a path, a list item). */
static size_t show_from(const struct node_var *x, const struct node_var *y)
{
	size_t d = 0, n, k;

	if (!x || !y || !x->value || !y->value)
		return 0;
	n = x->value_len < y->value_len ? x->value_len : y->value_len;
	while (d < n && x->value[d] == y->value[d])
		d++;
	if (d <= SHOW_LEAD)
		return 0;
	for (k = d - SHOW_LEAD; k < d; k++)
		if (x->value[k] == ' ' || x->value[k] == ':' || x->value[k] == ',')
			return k + 1;
	return d - SHOW_LEAD;
}

/* One side of a difference: "VALUE" (from byte from on, "..." before),
 * set for a secret, unset, or the hash of a value too long to publish. */
static int add_side(struct strbuf *sb, const char *node, const struct node_var *v, size_t from)
{
	int err;

	if ((err = verify_add_esc(sb, node)) < 0 || (err = sb_addc(sb, ' ')) < 0)
		return err;
	if (!v)
		return sb_adds(sb, "unset");
	if (v->secret)
		return sb_adds(sb, "set (secret: value not published)");
	if (!v->value)
		return sb_addf(sb, "(%zu bytes, sha256 %02x%02x%02x%02x...)", v->value_len,
			       v->hash[0], v->hash[1], v->hash[2], v->hash[3]);
	if (from && (err = sb_adds(sb, "...")) < 0)
		return err;
	return text_quote(sb, v->value + from, v->value_len - from, SHOW_MAX);
}

/* A name as it is when it prints plainly (they all do, but for what an
 * input made up), else quoted and escaped. */
static int add_name(struct strbuf *sb, const struct node_var *v)
{
	size_t k;

	for (k = 0; k < v->name_len; k++)
		if (v->name[k] <= ' ' || v->name[k] >= 0x7f || v->name[k] == '"')
			return text_quote(sb, v->name, v->name_len, SHOW_MAX);
	return sb_add(sb, v->name, v->name_len);
}

/* What one side of a difference is, for the key of its line. */
static void key_side(struct sha256_stream *h, const struct node_var *v)
{
	sha256_stream_add(h, !v ? "u" : v->secret ? "s" : "v", 1);
	if (v && !v->secret)
		sha256_stream_add(h, v->hash, SHA256_LEN);
}

/* The variables of directory d where odd's detail a and ref's b differ,
 * into l: one line per name and pair of sides, whatever the directory. */
static int diff_vars(struct lines *l, const struct node_dir_sum *d, const char *odd,
		     const struct node_detail *a, const char *ref, const struct node_detail *b)
{
	struct strbuf text = STRBUF_INIT;
	struct sha256_stream h;
	uint8_t key[SHA256_LEN];
	size_t i = 0, j = 0;
	int err = 0;

	while ((i < a->nvars || j < b->nvars) && !err) {
		const struct node_var *x = i < a->nvars ? &a->vars[i] : NULL;
		const struct node_var *y = j < b->nvars ? &b->vars[j] : NULL;
		int c = !x ? 1 : !y ? -1 : strcmp(x->name, y->name);

		if (c == 0) {
			i++;
			j++;
			if (x->secret == y->secret &&
			    (x->secret || !memcmp(x->hash, y->hash, SHA256_LEN)))
				continue;
		} else if (c < 0) {
			i++;
			y = NULL;
		} else {
			j++;
			x = NULL;
		}
		sha256_stream_init(&h);
		sha256_stream_add(&h, x ? x->name : y->name, (x ? x : y)->name_len + 1);
		key_side(&h, x);
		key_side(&h, y);
		sha256_stream_end(&h, key);
		sb_reset(&text);
		if ((err = add_name(&text, x ? x : y)) < 0 ||
		    (err = sb_adds(&text, ": ")) < 0 ||
		    (err = add_side(&text, odd, x, show_from(x, y))) < 0 ||
		    (err = sb_adds(&text, ", ")) < 0 ||
		    (err = add_side(&text, ref, y, show_from(x, y))) < 0)
			break;
		err = verify_lines_add(l, key, &text, d);
	}
	sb_release(&text);
	return err;
}

/* What makes node o differ from the reference r. */
int verify_explain_odd(struct verify *vf, const struct vnode *o, const struct vnode *r)
{
	struct strbuf *sb = &vf->out;
	struct lines l = { 0 };
	const struct node_dir_sum *x, *y;
	size_t i = 0, j = 0, both = 0;
	char why[300];
	int err;

	if ((err = verify_add_esc(sb, o->name)) < 0 || (err = sb_adds(sb, ": differs from ")) < 0 ||
	    (err = verify_add_esc(sb, r->name)) < 0 || (err = sb_adds(sb, ":\n")) < 0)
		return err;
	if (!o->s) {
		if ((err = sb_adds(sb, o->unpublishable ? "  its record cannot be published: "
				   : "  its record cannot be read: ")) < 0 ||
		    (err = verify_add_esc(sb, o->why)) < 0)
			return err;
		return sb_addc(sb, '\n');
	}
	if (!verify_specs_equal(o->s, r->s)) {
		if ((err = sb_adds(sb, "  specs: other spec files than ")) < 0 ||
		    (err = verify_add_esc(sb, r->name)) < 0 ||
		    (err = sb_adds(sb, "'s (primus-envfs ")) < 0 ||
		    (err = verify_add_esc(sb, o->s->version)) < 0 ||
		    (err = sb_adds(sb, " on ")) < 0 ||
		    (err = verify_add_esc(sb, o->name)) < 0 || (err = sb_adds(sb, ", ")) < 0 ||
		    (err = verify_add_esc(sb, r->s->version)) < 0 ||
		    (err = sb_adds(sb, " on ")) < 0 ||
		    (err = verify_add_esc(sb, r->name)) < 0 || (err = sb_adds(sb, ")\n")) < 0)
			return err;
	}
	for (err = 0; !err; i++, j++) {
		struct node_detail *a, *b;

		x = verify_next_dir(vf, o->s, &i);
		y = verify_next_dir(vf, r->s, &j);
		if (!x && !y)
			break;
		if (!y || (x && verify_dir_cmp(x, y) < 0)) {
			j--;
			if ((err = sb_adds(sb, "  ")) < 0 || (err = verify_add_dir(sb, x)) < 0 ||
			    (err = sb_adds(sb, ": served on ")) < 0 ||
			    (err = verify_add_esc(sb, o->name)) < 0)
				break;
			err = sb_adds(sb, " only\n");
			continue;
		}
		if (!x || verify_dir_cmp(x, y) > 0) {
			i--;
			if ((err = sb_adds(sb, "  ")) < 0 || (err = verify_add_dir(sb, y)) < 0 ||
			    (err = sb_adds(sb, ": not served on ")) < 0 ||
			    (err = verify_add_esc(sb, o->name)) < 0 ||
			    (err = sb_adds(sb, " (")) < 0 ||
			    (err = verify_add_esc(sb, r->name)) < 0)
				break;
			err = sb_adds(sb, " serves it)\n");
			continue;
		}
		both++;
		if (!memcmp(x->digest, y->digest, SHA256_LEN))
			continue;
		a = verify_read_detail(vf, o->name, x, why, sizeof(why));
		b = a ? verify_read_detail(vf, r->name, y, why, sizeof(why)) : NULL;
		if (a && b) {
			err = diff_vars(&l, x, o->name, a, r->name, b);
		} else if ((err = sb_adds(sb, "  ")) == 0 && (err = verify_add_dir(sb, x)) == 0 &&
			   (err = sb_adds(sb, ": differs (")) == 0 &&
			   (err = verify_add_esc(sb, why)) == 0) {
			err = sb_adds(sb, ")\n");
		}
		node_detail_free(a);
		node_detail_free(b);
	}
	if (!err)
		err = verify_lines_print(sb, &l, both);
	verify_lines_release(&l);
	return err;
}

/* The errors of node nd's selected directories, each once, into l
 * (*ndirs: the directories looked at). Whatever else makes a node unfit
 * to launch on, though equal to the others, belongs here too. */
static int node_errors(const struct verify *vf, const struct vnode *nd, struct lines *l,
		       size_t *ndirs)
{
	struct strbuf text = STRBUF_INIT;
	uint8_t key[SHA256_LEN];
	size_t k, e;
	int err = 0;

	*ndirs = 0;
	for (k = 0; nd->s && k < nd->s->ndirs && !err; k++) {
		const struct node_dir_sum *d = &nd->s->dirs[k];

		if (!verify_dir_selected(vf, d))
			continue;
		(*ndirs)++;
		for (e = 0; e < d->nlisted && !err; e++) {
			sha256(d->errors[e], strlen(d->errors[e]), key);
			sb_reset(&text);
			if ((err = verify_add_esc(&text, d->errors[e])) == 0)
				err = verify_lines_add(l, key, &text, d);
		}
		if (!err && d->nerrors > d->nlisted) {
			sb_reset(&text);
			if ((err = sb_addf(&text, "(%zu more errors, not published)",
					   (size_t)(d->nerrors - d->nlisted))) < 0)
				break;
			sha256(text.buf, text.len, key);
			err = verify_lines_add(l, key, &text, d);
		}
	}
	sb_release(&text);
	return err;
}

bool verify_has_errors(const struct verify *vf, const struct vnode *nd)
{
	size_t k;

	if (!nd->s)
		return false;
	if (nd->s->load_error)
		return true;
	for (k = 0; k < nd->s->ndirs; k++)
		if (nd->s->dirs[k].nerrors && verify_dir_selected(vf, &nd->s->dirs[k]))
			return true;
	return false;
}

/* "NODE: errors in its environment:" and each error once. */
int verify_explain_errors(struct verify *vf, const struct vnode *nd)
{
	struct strbuf *sb = &vf->out;
	struct lines l = { 0 };
	size_t ndirs;
	int err;

	if ((err = verify_add_esc(sb, nd->name)) < 0 ||
	    (err = sb_adds(sb, ": errors in its environment:\n")) < 0)
		return err;
	if (nd->s->load_error &&
	    ((err = sb_adds(sb, "  its inputs do not load (it serves the last good "
			    "resolution): ")) < 0 ||
	     (err = verify_add_esc(sb, nd->s->load_error)) < 0 ||
	     (err = sb_addc(sb, '\n')) < 0))
		return err;
	if ((err = node_errors(vf, nd, &l, &ndirs)) == 0)
		err = verify_lines_print(sb, &l, ndirs);
	verify_lines_release(&l);
	return err;
}

/* Extended attributes: provenance; see ll_internal.h. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "counters.h"
#include "layer.h"
#include "ll_internal.h"

enum {
	XA_LAYER, XA_SOURCE, XA_LAYERS, XA_SHADOWED, XA_DEFAULT, XA_NOTE,
	XA_EXPORTED, XA_EFFECTIVE, XA_COUNT
};

static const char *const xattr_names[XA_COUNT] = {
	"user.primus.layer", "user.primus.source", "user.primus.layers",
	"user.primus.shadowed", "user.primus.default", "user.primus.note",
	"user.primus.exported", "user.primus.effective",
};

/* The attribute's value (borrowed from the snapshot or static), or NULL
 * when it does not apply: absent, not empty. */
static const char *xattr_value(const struct snap_var *v, int which)
{
	switch (which) {
	case XA_LAYER:
		return v->layer != LAYER_NONE ? layer_name(v->layer) : NULL;
	case XA_SOURCE:
		return v->source;
	case XA_LAYERS:
		return v->layers;
	case XA_SHADOWED:
		return v->shadowed;
	case XA_DEFAULT:
		/* A secret's default, or one built from a secret, is as
		 * private as its value: no such attribute (ENODATA). */
		return v->secret || v->def_secret ? NULL : v->def;
	case XA_NOTE:
		return v->note;
	case XA_EXPORTED:
		return v->exported ? "1" : "0";
	case XA_EFFECTIVE:
		/* Every token of a secret flag list is part of its value. */
		return v->is_flags && !v->secret ? v->effective : NULL;
	}
	return NULL;
}

/* Replies with a value or a list under the getxattr/listxattr size rules. */
static void reply_xattr_bytes(fuse_req_t req, const char *data, size_t len, size_t size)
{
	if (size == 0)
		fuse_reply_xattr(req, len);
	else if (size < len)
		reply_err(req, -ERANGE);
	else
		fuse_reply_buf(req, data, len);
}

void envfs_ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			      size_t size)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = epoch_enter(&fs->state);
	const char *val = NULL;
	struct target t = { 0 };
	struct node *n;
	int which, err;

	counters_inc(OP_GETXATTR);
	if ((err = ll_resolve_ino(fs, e, ino, &n, &t)) < 0)
		goto out;
	/* An inode whose value the name no longer has (a reload gave it a
	 * new one) has no provenance to show. */
	err = -ENODATA;
	if (n->kind != NODE_VAR || !t.var)
		goto out;
	for (which = 0; which < XA_COUNT; which++)
		if (!strcmp(name, xattr_names[which]))
			val = xattr_value(t.var, which);
	if (!val)
		goto out;
	reply_xattr_bytes(req, val, strlen(val), size);
	goto leave;
out:
	reply_err(req, err);
leave:
	ll_target_release(fs, &t);
	epoch_leave(e);
}

void envfs_ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = epoch_enter(&fs->state);
	struct strbuf sb = STRBUF_INIT;
	struct target t = { 0 };
	struct node *n;
	int which, err;

	counters_inc(OP_LISTXATTR);
	if ((err = ll_resolve_ino(fs, e, ino, &n, &t)) < 0)
		goto out;
	for (which = 0; n->kind == NODE_VAR && t.var && which < XA_COUNT; which++) {
		if (!xattr_value(t.var, which))
			continue;
		/* Names are NUL-separated, the last one NUL-terminated too. */
		if ((err = sb_add(&sb, xattr_names[which],
				  strlen(xattr_names[which]) + 1)) < 0)
			goto out;
	}
	reply_xattr_bytes(req, sb.buf, sb.len, size);
	goto leave;
out:
	reply_err(req, err);
leave:
	ll_target_release(fs, &t);
	sb_release(&sb);
	epoch_leave(e);
}

/* Provenance is computed, never stored: setting it is EPERM (or ENOTSUP).
 * Attributes we do not have at all (ACLs above all) are ENOTSUP, which
 * copying tools (sed -i, cp -a) take quietly as "no ACLs here" and fall
 * back to chmod; EPERM would make them complain. */
static int xattr_change_err(const char *name)
{
	return strncmp(name, "user.primus.", 12) ? -ENOTSUP : -EPERM;
}

void envfs_ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			      const char *value, size_t size, int flags)
{
	(void)ino, (void)value, (void)size, (void)flags;
	counters_inc(OP_SETXATTR);
	reply_err(req, xattr_change_err(name));
}

void envfs_ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino;
	counters_inc(OP_REMOVEXATTR);
	reply_err(req, xattr_change_err(name));
}


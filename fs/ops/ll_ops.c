/* The FUSE low-level handlers: init and the table; see ll_ops.h. The
 * handlers themselves are in the ll_*.c files beside this one
 * (ll_internal.h lists them).
 *
 *   $ cat /mnt/primus/env/maxtext/gfx950/NVTE_FUSED_ATTN
 *   1
 *   $ getfattr -n user.primus.layer /mnt/primus/env/maxtext/gfx950/NVTE_FUSED_ATTN
 *
 * Internally everything returns 0 or a negative errno; reply_err() is the
 * one place that turns that into the kernel's positive errno. */
#include <string.h>

#include "ll_internal.h"

static void envfs_ll_init(void *userdata, struct fuse_conn_info *conn)
{
	struct envfs *fs = userdata;

	/* -o ro: nothing is ever written, so no open needs state or a close
	 * notification. Answering OPEN and OPENDIR with ENOSYS makes the
	 * kernel stop sending them (and RELEASE), keep pages and cache
	 * listings, so a warm `cat` is served without a single request.
	 * Older kernels would take ENOSYS as a failed open. FLUSH likewise:
	 * envfs_ll_flush answers ENOSYS on -o ro, once, or every close
	 * would cost a round trip again (tests/mount/requests.sh checks). */
	fs->zero_open = fs->opts->ro && (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT);
	fs->zero_opendir = fs->opts->ro && (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT);
	/* Names and attributes in one reply per page of a listing: a cold
	 * `ls -l` of 2,000 variables costs a few dozen requests instead of a
	 * LOOKUP per name. Always, not only for the first chunk (AUTO). */
	if (conn->capable & FUSE_CAP_READDIRPLUS) {
		conn->want |= FUSE_CAP_READDIRPLUS;
		conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
	}
	/* The kernel would drop a file's pages whenever a fresh stat shows a
	 * new mtime, and every file's mtime moves with the generation, so
	 * one changed variable would flush them all. The reload thread says
	 * precisely what changed instead (inval.c); -o noinval then really
	 * leaves the kernel with nothing to notice changes by. */
	conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
	/* With atomic O_TRUNC the kernel empties its copy of a file the
	 * moment a writer opens it, and a racing reader reads nothing; a
	 * reader must see the old value until close. Without it the kernel asks with
	 * a SETATTR, which setattr applies to the writer's buffer alone. */
	conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
}

const struct fuse_lowlevel_ops envfs_ll_ops = {
	.init = envfs_ll_init,
	.lookup = envfs_ll_lookup,
	.forget = envfs_ll_forget,
	.forget_multi = envfs_ll_forget_multi,
	.getattr = envfs_ll_getattr,
	.opendir = envfs_ll_opendir,
	.readdir = envfs_ll_readdir,
	.readdirplus = envfs_ll_readdirplus,
	.releasedir = envfs_ll_releasedir,
	.open = envfs_ll_open,
	.read = envfs_ll_read,
	.write = envfs_ll_write,
	.flush = envfs_ll_flush,
	.release = envfs_ll_release,
	.create = envfs_ll_create,
	.setattr = envfs_ll_setattr,
	.unlink = envfs_ll_unlink,
	.rename = envfs_ll_rename,
	.mknod = envfs_ll_mknod,
	.mkdir = envfs_ll_mkdir,
	.rmdir = envfs_ll_rmdir,
	.symlink = envfs_ll_symlink,
	.link = envfs_ll_link,
	.readlink = envfs_ll_readlink,
	.getxattr = envfs_ll_getxattr,
	.listxattr = envfs_ll_listxattr,
	.setxattr = envfs_ll_setxattr,
	.removexattr = envfs_ll_removexattr,
};

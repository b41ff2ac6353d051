/* What keeps libfuse's CUSE code out of a static executable (compiled
 * only with -Dstatic_deps=true).
 *
 * libfuse's request dispatcher names cuse_lowlevel_init() for the
 * CUSE_INIT opcode. Taken from the archive, that object file calls
 * fuse_daemonize() and fuse_parse_cmdline(), whose object file holds
 * fuse_main() and with it the high-level API and its dlopen()ed modules:
 * a third of libfuse we never run, and a linker warning about dlopen in a
 * static executable. Defining the symbol here means the linker never
 * opens those files. CUSE_INIT only ever arrives on /dev/cuse, never on
 * a FUSE mount's /dev/fuse; should one come, it is refused like any
 * operation this daemon does not implement. Checked against libfuse 3.14
 * (Debian 12); a version where other code pulls those objects in makes the
 * werror build fail on the linker's dlopen warning (fs/meson.build). */
#include <errno.h>

#include "envfs_fuse.h"

void cuse_lowlevel_init(fuse_req_t req, fuse_ino_t nodeid, const void *inarg);

void cuse_lowlevel_init(fuse_req_t req, fuse_ino_t nodeid, const void *inarg)
{
	(void)nodeid;
	(void)inarg;
	fuse_reply_err(req, ENOSYS);
}

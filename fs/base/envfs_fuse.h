/* The one place that picks the libfuse API level for the adapter. */
#ifndef ENVFS_FUSE_H
#define ENVFS_FUSE_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#endif

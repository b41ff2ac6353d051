/* The shipped catalog.yaml, compiled by the build (specs/meson.build). */
#ifndef ENVFS_SHIPPED_CATALOG_H
#define ENVFS_SHIPPED_CATALOG_H

#include "catalog_prebuilt.h"

extern const struct catalog_prebuilt envfs_shipped_catalog;

#endif

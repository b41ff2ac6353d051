/* vtype: the value types a spec entry or a catalog entry declares, and
 * their scopes; apart from spec.h so that the schema readers
 * (spec_schema.h) that fill them need nothing of the spec they build. */
#ifndef ENVFS_VTYPE_H
#define ENVFS_VTYPE_H

#include <stdbool.h>
#include <stddef.h>

#include "diag_codes.h"

enum vtype {
	VT_NONE = 0,   /* no validation */
	VT_STRING,
	VT_BOOL,       /* 1 true on yes / 0 false off no, any case; "" = unset */
	VT_INT,        /* optional min/max */
	VT_ENUM,       /* values */
	VT_PATH,
	VT_LIST,       /* comma list; entries checked against values when given */
};

/* SCOPE_NODE: the value differs per node by design (a rank, a detected
 * interface); the node digest (node_digest.h) leaves the name out. */
enum { SCOPE_RUNTIME = 1, SCOPE_BUILD = 2, SCOPE_TEST = 4, SCOPE_NODE = 8 };

struct vtype_def {
	enum vtype type;
	bool has_min, has_max;
	long long min, max;
	char **values;            /* enum alternatives / known list entries */
	size_t nvalues;
	enum diag_sev invalid;    /* severity of a value outside the type */
};

#endif

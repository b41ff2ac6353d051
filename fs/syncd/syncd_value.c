/* The override encoding in etcd; see syncd_value.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "statefile.h"
#include "syncd_value.h"

/* The writer's set (names_override_ok): a key this node's mount would
 * refuse to write is no override of another node's either. */
_Static_assert(NAMES_KEY_MAX < 1024, "the callers split keys in buffers of 1024 bytes");

bool syncd_key_split(const char *rel, char *buf, size_t size, char **b, char **a, char **n)
{
	char *part[3], *p;
	size_t i = 0;

	if (strlen(rel) >= size)
		return false;
	strcpy(buf, rel);
	for (p = buf, part[0] = buf; *p; p++) {
		if (*p != '/')
			continue;
		if (++i == 3)
			return false;
		*p = '\0';
		part[i] = p + 1;
	}
	if (i != 2 || !names_override_ok(part[0], part[1], part[2]))
		return false;
	*b = part[0];
	*a = part[1];
	*n = part[2];
	return true;
}

int syncd_value_encode(const char *value, size_t len, char **out, size_t *outlen)
{
	char *v = malloc(value ? len + 1 : 1);

	if (!v)
		return -ENOMEM;
	v[0] = value ? '=' : '-';
	if (value)
		memcpy(v + 1, value, len);
	*out = v;
	*outlen = value ? len + 1 : 1;
	return 0;
}

int syncd_value_decode(const char *v, size_t len, const char **value, size_t *vlen)
{
	if (len == 1 && v[0] == '-') {
		*value = NULL;
		*vlen = 0;
		return 0;
	}
	if (len < 1 || v[0] != '=' || len - 1 > STATEFILE_VALUE_MAX || memchr(v, '\0', len))
		return -EPROTO;
	*value = v + 1;
	*vlen = len - 1;
	return 0;
}

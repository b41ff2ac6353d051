/* The override encoding in etcd; see syncd_value.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inherit.h"
#include "statefile.h"
#include "syncd_value.h"

static bool dir_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.';
}

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
	if (i != 2 || !env_name_valid(part[2], strlen(part[2])))
		return false;
	for (i = 0; i < 2; i++) {
		/* "." and ".." are no directory of the tree, and the state
		 * file refuses them: a node that took one would not start. */
		if (!*part[i] || !strcmp(part[i], ".") || !strcmp(part[i], ".."))
			return false;
		for (p = part[i]; *p; p++)
			if (!dir_char(*p))
				return false;
	}
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

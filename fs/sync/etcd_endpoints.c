/* The endpoint list: "etcd://h1:2379,h2:2379", as --sync takes it, or
 * etcdctl's "https://h1:2379,https://h2:2379". */
#include "etcd_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ep_free_all(struct etcd_ep *ep, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(ep[i].url);
		free(ep[i].name);
		ep[i].url = ep[i].name = NULL;
	}
}

static bool host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
}

/* Checks "host:port" or "[v6]:port" (s[0..n)); returns a problem or NULL. */
static const char *check_hostport(const char *s, size_t n)
{
	size_t i = 0, colon;
	unsigned long port = 0;

	if (n && s[0] == '[') {
		for (i = 1; i < n && s[i] != ']'; i++)
			if (!(s[i] == ':' || s[i] == '.' ||
			      (s[i] >= '0' && s[i] <= '9') ||
			      (s[i] >= 'a' && s[i] <= 'f') ||
			      (s[i] >= 'A' && s[i] <= 'F')))
				return "bad IPv6 address";
		if (i == n)
			return "no ']' after the IPv6 address";
		if (i == 1)
			return "empty IPv6 address";
		i++;
		if (i == n || s[i] != ':')
			return "no port (host:port)";
		colon = i;
	} else {
		for (; i < n && s[i] != ':'; i++)
			if (!host_char(s[i]))
				return s[i] == '/' ? "a path is not allowed (host:port)"
				                   : "bad character in the host name";
		if (i == 0)
			return "no host (host:port)";
		if (i == n)
			return "no port (host:port)";
		colon = i;
	}
	if (colon + 1 == n)
		return "no port (host:port)";
	for (i = colon + 1; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return s[i] == '/' ? "a path is not allowed (host:port)"
			                   : "the port is not a number";
		port = port * 10 + (unsigned long)(s[i] - '0');
		if (port > 65535)
			break;
	}
	if (port == 0 || port > 65535)
		return "the port is not between 1 and 65535";
	return NULL;
}

static size_t trim(const char **s, size_t n)
{
	while (n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		n--;
	}
	while (n && ((*s)[n - 1] == ' ' || (*s)[n - 1] == '\t'))
		n--;
	return n;
}

int ep_parse(const char *list, bool tls, struct etcd_ep *ep, size_t max,
             size_t *n, struct strbuf *msg)
{
	const char *p = list;
	const char *problem = NULL;
	size_t count = 0;
	int err = -EINVAL;

	*n = 0;
	if (!strncmp(p, "etcd://", 7))
		p += 7;
	for (;;) {
		const char *e = strchr(p, ',');
		const char *item = p, *scheme = tls ? "https" : "http";
		size_t len = e ? (size_t)(e - p) : strlen(p);

		len = trim(&item, len);
		if (len == 0) {
			problem = "empty endpoint";
			goto bad;
		}
		if (len > 7 && !strncmp(item, "http://", 7)) {
			scheme = "http";
			item += 7;
			len -= 7;
		} else if (len > 8 && !strncmp(item, "https://", 8)) {
			scheme = "https";
			item += 8;
			len -= 8;
		} else if (memchr(item, '/', len) && memmem(item, len, "://", 3)) {
			problem = "the scheme is neither http:// nor https://";
			goto bad;
		}
		if ((problem = check_hostport(item, len)))
			goto bad;
		if (count == max) {
			sb_addf(msg, "etcd endpoints '%s': more than %zu", list, max);
			goto out;
		}
		ep[count].name = xstrndup(item, len);
		ep[count].url = NULL;
		if (!ep[count].name) {
			err = -ENOMEM;
			goto out;
		}
		count++;
		struct strbuf url = STRBUF_INIT;
		if (sb_addf(&url, "%s://%.*s", scheme, (int)len, item) < 0 ||
		    !(ep[count - 1].url = sb_detach(&url, NULL))) {
			sb_release(&url);
			err = -ENOMEM;
			goto out;
		}
		if (!e)
			break;
		p = e + 1;
	}
	*n = count;
	return 0;
bad:
	sb_addf(msg, "etcd endpoints '%s': %s", list, problem);
out:
	ep_free_all(ep, count);
	return err;
}

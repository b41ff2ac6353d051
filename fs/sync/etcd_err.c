/* What etcd's failures mean for a caller: an errno, and whether another
 * attempt (on another member, or with a fresh token) can do better. The
 * words come from etcd's rpctypes (api/v3rpc/rpctypes/error.go), stable
 * since 3.0. */
#include "etcd_internal.h"

#include <errno.h>
#include <string.h>

#include "text.h"

/* gRPC status codes (google.golang.org/grpc/codes). */
enum {
	GRPC_CANCELED = 1, GRPC_UNKNOWN = 2, GRPC_INVALID_ARGUMENT = 3,
	GRPC_DEADLINE_EXCEEDED = 4, GRPC_NOT_FOUND = 5, GRPC_ALREADY_EXISTS = 6,
	GRPC_PERMISSION_DENIED = 7, GRPC_RESOURCE_EXHAUSTED = 8,
	GRPC_FAILED_PRECONDITION = 9, GRPC_ABORTED = 10, GRPC_OUT_OF_RANGE = 11,
	GRPC_UNIMPLEMENTED = 12, GRPC_INTERNAL = 13, GRPC_UNAVAILABLE = 14,
	GRPC_DATA_LOSS = 15, GRPC_UNAUTHENTICATED = 16,
};

static bool has(const char *message, const char *words)
{
	return message && strstr(message, words);
}

int err_from_grpc(int code, const char *m, int *action, bool *ambiguous)
{
	*action = ERR_FINAL;
	*ambiguous = false;
	switch (code) {
	case GRPC_UNAVAILABLE:
		*action = ERR_RETRY;
		/* Refused before any proposal: nothing can have been applied.
		 * "request timed out", "leader changed", "server stopped" come
		 * after the proposal went out, which may still commit. */
		*ambiguous = !(has(m, "no leader") || has(m, "not capable") ||
		               has(m, "learner") || has(m, "unhealthy"));
		return -EAGAIN;
	case GRPC_DEADLINE_EXCEEDED:
		*action = ERR_RETRY;
		*ambiguous = true;
		return -ETIMEDOUT;
	case GRPC_CANCELED:
		*action = ERR_RETRY;
		*ambiguous = true;
		return -EAGAIN;
	case GRPC_UNAUTHENTICATED:
		*action = ERR_BAD_TOKEN;
		return -EACCES;
	case GRPC_INVALID_ARGUMENT:
		if (has(m, "revision of auth store is old")) {
			*action = ERR_BAD_TOKEN;
			return -EACCES;
		}
		if (has(m, "user name is empty")) {
			*action = ERR_NEED_AUTH;
			return -EACCES;
		}
		if (has(m, "authentication failed") || has(m, "invalid user"))
			return -EACCES;
		if (has(m, "too large"))
			return -EMSGSIZE;
		return -EINVAL;
	case GRPC_PERMISSION_DENIED:
		return -EACCES;
	case GRPC_NOT_FOUND:
		return -ENOENT;
	case GRPC_ALREADY_EXISTS:
		return -EEXIST;
	case GRPC_RESOURCE_EXHAUSTED:
		if (has(m, "too many requests")) {
			*action = ERR_RETRY;
			return -EAGAIN;
		}
		return -ENOSPC;
	case GRPC_FAILED_PRECONDITION:
		if (has(m, "authentication is not enabled")) {
			*action = ERR_AUTH_OFF;
			return -EPERM;
		}
		if (has(m, "not leader")) {
			*action = ERR_RETRY;
			return -EAGAIN;
		}
		return -EPERM;
	case GRPC_OUT_OF_RANGE:
		return has(m, "compacted") ? -ESTALE : -ERANGE;
	case GRPC_UNIMPLEMENTED:
		return -ENOSYS;
	case GRPC_ABORTED:
	case GRPC_UNKNOWN:
	case GRPC_INTERNAL:
	case GRPC_DATA_LOSS:
	default:
		return -EIO;
	}
}

/* Unary replies (3.4): {"error":"...","code":14,"message":"..."}; 3.5+
 * drops "error". Streams: {"error":{"grpc_code":14,"message":"..."}}, or
 * "code" in 3.5+. */
int err_parse_reply(struct json_object *o, int *code, const char **message)
{
	struct json_object *e = o, *f, *m;

	if (json_object_object_get_ex(o, "error", &f) && json_object_is_type(f, json_type_object))
		e = f;
	if (!(json_object_object_get_ex(e, "grpc_code", &f) ||
	      json_object_object_get_ex(e, "code", &f)) ||
	    !json_object_is_type(f, json_type_int))
		return -EPROTO;
	if (!json_object_object_get_ex(e, "message", &m) || !json_object_is_type(m, json_type_string)) {
		if (!json_object_object_get_ex(o, "error", &m) ||
		    !json_object_is_type(m, json_type_string))
			return -EPROTO;
	}
	*code = json_object_get_int(f);
	*message = json_object_get_string(m);
	return 0;
}

int err_rank(int err)
{
	switch (err) {
	case -ECONNREFUSED:
		return 1;
	case -EHOSTUNREACH:
	case -ENETUNREACH:
		return 2;
	case -ECONNRESET:
		return 3;
	case -ETIMEDOUT:
		return 4;
	case -EAGAIN:
		return 5;
	case -EPROTO:
		return 6;
	case -EACCES:
		return 7;
	default:
		return 8;
	}
}

int err_add_printable(struct strbuf *out, const char *s, size_t n, size_t max)
{
	size_t i = 0, len;
	unsigned cp;
	int err = 0;

	while (i < n && err == 0) {
		unsigned char c = (unsigned char)s[i];

		if (i >= max)
			return sb_adds(out, "...");
		if (c >= 0x20 && c < 0x7f) {
			err = sb_addc(out, (char)c);
			i++;
		} else if (c >= 0x80 && (len = utf8_seq((const unsigned char *)s + i, n - i, &cp))) {
			err = sb_add(out, s + i, len);
			i += len;
		} else {
			err = sb_addf(out, "\\x%02x", c);
			i++;
		}
	}
	return err;
}

void err_scrub(struct strbuf *sb, const char *secret)
{
	struct strbuf out = STRBUF_INIT;
	size_t n = secret ? strlen(secret) : 0, at = 0;
	const char *hit;

	if (!n || !sb->buf || !memmem(sb->buf, sb->len, secret, n))
		return;
	while ((hit = memmem(sb->buf + at, sb->len - at, secret, n))) {
		size_t pos = (size_t)(hit - sb->buf);

		if (sb_add(&out, sb->buf + at, pos - at) < 0 || sb_adds(&out, "***") < 0)
			goto nomem;
		at = pos + n;
	}
	if (sb_add(&out, sb->buf + at, sb->len - at) < 0)
		goto nomem;
	sb_release(sb);
	*sb = out;
	return;
nomem:
	/* Without memory for a copy, blank the secret in place. */
	sb_release(&out);
	for (at = 0; (hit = memmem(sb->buf + at, sb->len - at, secret, n));) {
		at = (size_t)(hit - sb->buf);
		memset(sb->buf + at, '*', n);
		at += n;
	}
}

/* grpc-go's status text: "rpc error: code = Unauthenticated desc = ...". */
int err_parse_cancel(const char *reason, int *code, const char **desc)
{
	static const char *const names[] = {
		"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded",
		"NotFound", "AlreadyExists", "PermissionDenied", "ResourceExhausted",
		"FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
		"Internal", "Unavailable", "DataLoss", "Unauthenticated",
	};
	const char *p = strstr(reason, "code = "), *d;

	*code = GRPC_UNKNOWN;
	*desc = reason;
	if (!p)
		return -EPROTO;
	p += 7;
	for (int i = 1; i < (int)(sizeof names / sizeof *names); i++) {
		size_t n = strlen(names[i]);

		if (!strncmp(p, names[i], n) && (p[n] == ' ' || !p[n])) {
			*code = i;
			break;
		}
	}
	if ((d = strstr(p, "desc = ")))
		*desc = d + 7;
	return 0;
}

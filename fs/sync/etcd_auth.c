/* Password authentication: /v3/auth/authenticate trades the user's
 * password for a simple token (or a JWT), sent in the Authorization
 * header. The password and the token live in the client only; every copy
 * this file makes is wiped before it is freed (best effort: libcurl and
 * json-c may keep transient copies of their own). */
#include "etcd_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Wipes the bytes of a JSON string json-c owns. */
static void wipe_json_string(struct json_object *s)
{
	if (s && json_object_is_type(s, json_type_string))
		explicit_bzero((char *)json_object_get_string(s), (size_t)json_object_get_string_len(s));
}

/* The request body {"name": user, "password": password}, malloc'd. */
static int auth_body(struct etcd_client *c, char **out, size_t *len)
{
	struct json_object *o = json_object_new_object(), *pw = NULL;
	const char *s;
	int err = -ENOMEM;

	*out = NULL;
	if (!o)
		return -ENOMEM;
	if (json_object_object_add(o, "name", json_object_new_string(c->user)) < 0 ||
	    !(pw = json_object_new_string(c->password)))
		goto out;
	if (json_object_object_add(o, "password", pw) < 0) {
		wipe_json_string(pw);
		json_object_put(pw);
		pw = NULL;
		goto out;
	}
	err = ej_dump(o, out, len);
	/* json-c keeps the text it printed in o: wipe that too. */
	if ((s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, len)))
		explicit_bzero((char *)s, *len);
out:
	wipe_json_string(pw);
	json_object_put(o);
	return err;
}

void auth_attempt(struct etcd_client *c, unsigned timeout_ms, struct etcd_attempt *at)
{
	struct etcd_req rq = { .what = "authenticate", .path = "/v3/auth/authenticate",
	                       .noauth = true };
	struct json_object *tok;
	char *body;
	int err;

	if ((err = auth_body(c, &body, &rq.len)) < 0) {
		at->err = err;
		sb_adds(&at->why, "out of memory");
		return;
	}
	rq.body = body;
	c->stats.attempts++;
	conn_unary_attempt(c, &rq, timeout_ms, at);
	explicit_bzero(body, rq.len);
	free(body);
	if (at->err == 0) {
		if (!json_object_object_get_ex(at->reply, "token", &tok) ||
		    !json_object_is_type(tok, json_type_string) ||
		    json_object_get_string_len(tok) == 0) {
			at->err = -EPROTO;
			at->action = ERR_RETRY;
			sb_adds(&at->why, "authenticate: the reply holds no token");
		} else if (!(c->token = xstrdup(json_object_get_string(tok)))) {
			at->err = -ENOMEM;
			sb_adds(&at->why, "out of memory");
		} else {
			c->stats.auths++;
		}
		if (at->reply && json_object_object_get_ex(at->reply, "token", &tok))
			wipe_json_string(tok);
		json_object_put(at->reply);
		at->reply = NULL;
		return;
	}
	if (at->action == ERR_AUTH_OFF) {
		/* etcd has authentication off: go on without a token, as
		 * clientv3 does. */
		c->auth_off = true;
		at->err = 0;
		sb_reset(&at->why);
		return;
	}
	/* etcd's answer (a wrong password is wrong on every member, final);
	 * a TLS or transport failure keeps its own words and rotation. */
	if (at->err == -EACCES && at->action == ERR_FINAL) {
		struct strbuf w = STRBUF_INIT;

		sb_addf(&w, "authenticating as '%s': %s", c->user, sb_str(&at->why));
		sb_release(&at->why);
		at->why = w;
	}
}

/* Leases (/v3/lease/...): a key put with a lease goes when the lease
 * expires, TTL seconds after its last keepalive. */
#include "etcd_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static struct json_object *id_body(int64_t id)
{
	struct json_object *o = json_object_new_object();

	if (o && ej_add_i64(o, "ID", id) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* A unary call about a lease; body is put. */
static int lease_call(struct etcd_client *c, const char *what, const char *path,
                      struct json_object *body, struct json_object **reply)
{
	int err;

	if ((err = conn_begin(c)) < 0) {
		json_object_put(body);
		return err;
	}
	if (!body) {
		conn_fail(c, what, "out of memory");
		return -ENOMEM;
	}
	return conn_unary_json(c, what, path, body, reply, NULL);
}

int etcd_lease_grant(struct etcd_client *c, int64_t ttl, int64_t *id, int64_t *granted_ttl)
{
	struct json_object *body = json_object_new_object(), *reply = NULL, *e;
	char what[64];
	int64_t got_id, got_ttl;
	int err;

	*id = 0;
	if (granted_ttl)
		*granted_ttl = 0;
	if (body && ej_add_i64(body, "TTL", ttl) < 0) {
		json_object_put(body);
		body = NULL;
	}
	snprintf(what, sizeof what, "lease grant (TTL %lld s)", (long long)ttl);
	if ((err = lease_call(c, what, "/v3/lease/grant", body, &reply)) < 0)
		return err;
	err = ej_i64(reply, "ID", &got_id);
	if (err == 0)
		err = ej_i64(reply, "TTL", &got_ttl);
	if (err == 0 && json_object_object_get_ex(reply, "error", &e) &&
	    json_object_is_type(e, json_type_string) && json_object_get_string_len(e) > 0) {
		conn_fail(c, what, "%s", json_object_get_string(e));
		json_object_put(reply);
		return -EIO;
	}
	json_object_put(reply);
	if (err < 0 || got_id == 0) {
		conn_fail(c, what, "the reply holds no lease");
		return -EPROTO;
	}
	*id = got_id;
	if (granted_ttl)
		*granted_ttl = got_ttl;
	return 0;
}

int etcd_lease_keepalive(struct etcd_client *c, int64_t id, int64_t *ttl)
{
	struct json_object *reply = NULL, *result;
	char what[64];
	int64_t got;
	int err;

	if (ttl)
		*ttl = 0;
	/* A stream in gRPC; the gateway answers one request with one
	 * {"result": ...} and closes. */
	snprintf(what, sizeof what, "lease keepalive %lld", (long long)id);
	if ((err = lease_call(c, what, "/v3/lease/keepalive", id_body(id), &reply)) < 0)
		return err;
	if (!json_object_object_get_ex(reply, "result", &result) ||
	    !json_object_is_type(result, json_type_object) || ej_i64(result, "TTL", &got) < 0) {
		json_object_put(reply);
		conn_fail(c, what, "malformed keepalive reply");
		return -EPROTO;
	}
	json_object_put(reply);
	/* etcd answers an unknown lease with TTL 0 (left out). */
	if (got <= 0) {
		conn_fail(c, what, "no such lease (it expired, was revoked or never existed)");
		return -ENOENT;
	}
	if (ttl)
		*ttl = got;
	return 0;
}

int etcd_lease_revoke(struct etcd_client *c, int64_t id)
{
	struct json_object *reply = NULL;
	char what[64];
	int err;

	snprintf(what, sizeof what, "lease revoke %lld", (long long)id);
	if ((err = lease_call(c, what, "/v3/lease/revoke", id_body(id), &reply)) < 0)
		return err;
	json_object_put(reply);
	return 0;
}

int etcd_lease_ttl(struct etcd_client *c, int64_t id, int64_t *remaining, int64_t *granted)
{
	struct json_object *reply = NULL;
	char what[64];
	int64_t left, g;
	int err;

	*remaining = 0;
	if (granted)
		*granted = 0;
	snprintf(what, sizeof what, "lease timetolive %lld", (long long)id);
	if ((err = lease_call(c, what, "/v3/lease/timetolive", id_body(id), &reply)) < 0)
		return err;
	err = ej_i64(reply, "TTL", &left);
	if (err == 0)
		err = ej_i64(reply, "grantedTTL", &g);
	json_object_put(reply);
	if (err < 0) {
		conn_fail(c, what, "malformed timetolive reply");
		return -EPROTO;
	}
	/* -1: expired or unknown. */
	if (left < 0) {
		conn_fail(c, what, "no such lease (it expired, was revoked or never existed)");
		return -ENOENT;
	}
	*remaining = left;
	if (granted)
		*granted = g;
	return 0;
}

/* Checks: a member's status, /health, and etcd_connect for the start of a
 * mount, where a wrong password or certificate must show at once. */
#include "etcd_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int parse_status(struct json_object *r, struct etcd_status *st)
{
	struct json_object *h, *v;
	int err;

	memset(st, 0, sizeof *st);
	if (!json_object_object_get_ex(r, "header", &h) || !json_object_is_type(h, json_type_object))
		return -EPROTO;
	if ((err = ej_u64(h, "member_id", &st->member_id)) < 0 ||
	    (err = ej_i64(h, "revision", &st->revision)) < 0 ||
	    (err = ej_u64(r, "leader", &st->leader_id)) < 0 ||
	    (err = ej_u64(r, "raftTerm", &st->raft_term)) < 0 ||
	    (err = ej_i64(r, "dbSize", &st->db_size)) < 0)
		return err;
	if (json_object_object_get_ex(r, "version", &v) && json_object_is_type(v, json_type_string))
		snprintf(st->version, sizeof st->version, "%s", json_object_get_string(v));
	return 0;
}

static int status(struct etcd_client *c, const char *what, struct etcd_status *out)
{
	struct etcd_req rq = { .what = what, .path = "/v3/maintenance/status", .body = "{}",
	                       .len = 2 };
	struct etcd_status st;
	struct json_object *reply = NULL;
	int err;

	if ((err = conn_begin(c)) < 0)
		return err;
	if ((err = conn_unary(c, &rq, &reply, NULL)) < 0)
		return err;
	err = parse_status(reply, &st);
	json_object_put(reply);
	if (err < 0) {
		conn_fail(c, what, "malformed status reply from %s", etcd_endpoint(c));
		return -EPROTO;
	}
	if (out)
		*out = st;
	return 0;
}

int etcd_status(struct etcd_client *c, struct etcd_status *out)
{
	return status(c, "status", out);
}

int etcd_connect(struct etcd_client *c, struct etcd_status *out)
{
	/* Any request but /health authenticates first when a user is set:
	 * status is the cheapest, and needs a member with a leader. */
	return status(c, "connect", out);
}

/* GET /health: {"health":"true"} with 200, {"health":"false"} with 503. */
static void health_attempt(struct etcd_client *c, const struct etcd_req *rq,
                           unsigned timeout_ms, struct etcd_attempt *at, void *arg)
{
	struct json_object *h;

	(void)arg;
	conn_unary_attempt(c, rq, timeout_ms, at);
	if (!at->reply || !json_object_object_get_ex(at->reply, "health", &h) ||
	    !json_object_is_type(h, json_type_string))
		return;
	sb_reset(&at->why);
	if (!strcmp(json_object_get_string(h), "true")) {
		at->err = 0;
		return;
	}
	json_object_put(at->reply);
	at->reply = NULL;
	at->err = -EAGAIN;
	at->action = ERR_RETRY;
	at->sent = false;
	sb_adds(&at->why, "unhealthy (no leader, or an alarm such as NOSPACE)");
}

int etcd_health(struct etcd_client *c)
{
	struct etcd_req rq = { .what = "health", .path = "/health", .noauth = true,
	                       .one_round = true };
	struct json_object *reply = NULL;
	int err;

	if ((err = conn_begin(c)) < 0)
		return err;
	err = conn_call(c, &rq, health_attempt, NULL, &reply, NULL);
	json_object_put(reply);
	return err;
}

/* Keys: put, range, delete and txn (/v3/kv/...). */
#include "etcd_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int check_key(struct etcd_client *c, const char *what, const char *key)
{
	if (!key || !*key) {
		conn_fail(c, what, "empty key");
		return -EINVAL;
	}
	return 0;
}

/* {"key": ..., "range_end": ...} for key alone, or for every key starting
 * with it (prefix; "" is every key). */
static int add_range(struct json_object *o, const char *key, bool prefix)
{
	size_t n = strlen(key), elen;
	char *end;
	int err;

	if (!prefix)
		return ej_add_b64(o, "key", key, n);
	if (!(end = malloc(n + 1)))
		return -ENOMEM;
	ej_prefix_end(key, n, end, &elen);
	/* etcd refuses an empty key: "\0" is the first key there is. */
	err = n ? ej_add_b64(o, "key", key, n) : ej_add_b64(o, "key", "", 1);
	if (err == 0)
		err = ej_add_b64(o, "range_end", end, elen);
	free(end);
	return err;
}

void kv_clear(struct etcd_kv *kv)
{
	free(kv->key);
	free(kv->value);
	memset(kv, 0, sizeof *kv);
}

int kv_parse(struct json_object *o, struct etcd_kv *kv)
{
	int err;

	memset(kv, 0, sizeof *kv);
	if (!json_object_is_type(o, json_type_object))
		return -EPROTO;
	if ((err = ej_bytes(o, "key", &kv->key, &kv->key_len)) < 0 ||
	    (err = ej_bytes(o, "value", &kv->value, &kv->value_len)) < 0 ||
	    (err = ej_i64(o, "create_revision", &kv->create_revision)) < 0 ||
	    (err = ej_i64(o, "mod_revision", &kv->mod_revision)) < 0 ||
	    (err = ej_i64(o, "version", &kv->version)) < 0 ||
	    (err = ej_i64(o, "lease", &kv->lease)) < 0)
		kv_clear(kv);
	return err;
}

void etcd_range_free(struct etcd_range *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		kv_clear(&r->kvs[i]);
	free(r->kvs);
	memset(r, 0, sizeof *r);
}

/* Fills out from a range reply (at most limit keys). */
static int range_reply(struct json_object *reply, size_t limit, struct etcd_range *out)
{
	struct json_object *kvs;
	size_t n;
	int err;

	if (ej_revision(reply, &out->revision) < 0 || ej_bool(reply, "more", &out->more) < 0 ||
	    ej_i64(reply, "count", &out->count) < 0)
		return -EPROTO;
	if (!json_object_object_get_ex(reply, "kvs", &kvs) || !kvs)
		return 0;
	if (!json_object_is_type(kvs, json_type_array))
		return -EPROTO;
	n = json_object_array_length(kvs);
	if (n > limit)
		return -EPROTO;
	if (n && !(out->kvs = calloc(n, sizeof *out->kvs)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if ((err = kv_parse(json_object_array_get_idx(kvs, i), &out->kvs[i])) < 0)
			return err;
		out->n++;
	}
	return 0;
}

/* The body of rq: key (prefix, or the byte after rq->after: after + NUL),
 * range_end (the prefix's end, or the byte after rq->last), limit,
 * revision, keys_only. */
static int range_body(const struct etcd_range_req *rq, size_t limit, struct json_object **out)
{
	struct json_object *o = json_object_new_object();
	size_t n = strlen(rq->prefix), elen;
	char *end = malloc(n + 1);
	int err = -ENOMEM;

	if (!o || !end)
		goto out;
	if (rq->after)
		err = ej_add_b64(o, "key", rq->after, strlen(rq->after) + 1);
	else
		err = n ? ej_add_b64(o, "key", rq->prefix, n) : ej_add_b64(o, "key", "", 1);
	if (err < 0)
		goto out;
	if (rq->last) {
		err = ej_add_b64(o, "range_end", rq->last, strlen(rq->last) + 1);
	} else {
		ej_prefix_end(rq->prefix, n, end, &elen);
		err = ej_add_b64(o, "range_end", end, elen);
	}
	if (err < 0 || (err = ej_add_i64(o, "limit", (int64_t)limit)) < 0 ||
	    (rq->revision && (err = ej_add_i64(o, "revision", rq->revision)) < 0) ||
	    (rq->min_mod_revision &&
	     (err = ej_add_i64(o, "min_mod_revision", rq->min_mod_revision)) < 0) ||
	    (rq->max_mod_revision &&
	     (err = ej_add_i64(o, "max_mod_revision", rq->max_mod_revision)) < 0))
		goto out;
	if (rq->keys_only &&
	    (err = json_object_object_add(o, "keys_only", json_object_new_boolean(1))) < 0)
		goto out;
	if (rq->serializable &&
	    (err = json_object_object_add(o, "serializable", json_object_new_boolean(1))) < 0)
		goto out;
	*out = o;
	o = NULL;
out:
	free(end);
	json_object_put(o);
	return err < 0 ? -ENOMEM : 0;
}

int etcd_range_read(struct etcd_client *c, const struct etcd_range_req *rq,
                    struct etcd_range *out)
{
	struct json_object *body = NULL, *reply = NULL;
	char what[160];
	size_t limit;
	int err;

	memset(out, 0, sizeof *out);
	conn_what(what, sizeof what, "get --prefix", rq && rq->prefix ? rq->prefix : "");
	if ((err = conn_begin(c)) < 0)
		return err;
	if (!rq || !rq->prefix || rq->revision < 0) {
		conn_fail(c, what, "needs a prefix and a revision >= 0");
		return -EINVAL;
	}
	limit = rq->limit == 0 || rq->limit > ETCD_RANGE_MAX ? ETCD_RANGE_MAX : rq->limit;
	if (range_body(rq, limit, &body) < 0) {
		conn_fail(c, what, "out of memory");
		return -ENOMEM;
	}
	if ((err = conn_unary_json(c, what, "/v3/kv/range", body, &reply, NULL)) < 0)
		return err;
	err = range_reply(reply, limit, out);
	json_object_put(reply);
	if (err < 0) {
		etcd_range_free(out);
		conn_fail(c, what, err == -ENOMEM ? "out of memory" : "malformed range reply");
	}
	return err;
}

int etcd_get(struct etcd_client *c, const char *key, struct etcd_range *out)
{
	struct json_object *body, *reply = NULL;
	char what[160];
	int err;

	memset(out, 0, sizeof *out);
	conn_what(what, sizeof what, "get", key);
	if ((err = conn_begin(c)) < 0 || (err = check_key(c, what, key)) < 0)
		return err;
	if (!(body = json_object_new_object()) || add_range(body, key, false) < 0) {
		json_object_put(body);
		conn_fail(c, what, "out of memory");
		return -ENOMEM;
	}
	if ((err = conn_unary_json(c, what, "/v3/kv/range", body, &reply, NULL)) < 0)
		return err;
	err = range_reply(reply, 1, out);
	json_object_put(reply);
	if (err < 0) {
		etcd_range_free(out);
		conn_fail(c, what, err == -ENOMEM ? "out of memory" : "malformed range reply");
	}
	return err;
}

int etcd_get_prefix(struct etcd_client *c, const char *prefix, size_t limit,
                    struct etcd_range *out)
{
	struct etcd_range_req rq = { .prefix = prefix, .limit = limit };

	return etcd_range_read(c, &rq, out);
}

/* {"key","value","lease"}: the body of a put, alone or in a txn. */
static struct json_object *put_body(const char *key, const void *value, size_t len, int64_t lease)
{
	struct json_object *o = json_object_new_object();

	if (!o || ej_add_b64(o, "key", key, strlen(key)) < 0 ||
	    ej_add_b64(o, "value", value ? value : "", len) < 0 ||
	    (lease && ej_add_i64(o, "lease", lease) < 0)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int etcd_put(struct etcd_client *c, const char *key, const void *value,
             size_t len, int64_t lease, int64_t *revision)
{
	struct json_object *reply = NULL, *body;
	char what[160];
	int64_t rev;
	int err;

	if (revision)
		*revision = 0;
	conn_what(what, sizeof what, "put", key);
	if ((err = conn_begin(c)) < 0 || (err = check_key(c, what, key)) < 0)
		return err;
	if (!(body = put_body(key, value, len, lease))) {
		conn_fail(c, what, "out of memory");
		return -ENOMEM;
	}
	if ((err = conn_unary_json(c, what, "/v3/kv/put", body, &reply, NULL)) < 0)
		return err;
	err = ej_revision(reply, &rev);
	json_object_put(reply);
	if (err < 0 || rev <= 0) {
		conn_fail(c, what, "the reply holds no revision");
		return -EPROTO;
	}
	if (revision)
		*revision = rev;
	return 0;
}

static int delete(struct etcd_client *c, const char *key, bool prefix, int64_t *deleted,
                  int64_t *revision)
{
	struct json_object *reply = NULL, *body;
	char what[160];
	int64_t rev, n;
	int err;

	if (deleted)
		*deleted = 0;
	if (revision)
		*revision = 0;
	conn_what(what, sizeof what, prefix ? "delete --prefix" : "delete", key);
	if ((err = conn_begin(c)) < 0)
		return err;
	if (!key || (!prefix && !*key)) {
		conn_fail(c, what, "empty key");
		return -EINVAL;
	}
	if (!(body = json_object_new_object()) || add_range(body, key, prefix) < 0) {
		json_object_put(body);
		conn_fail(c, what, "out of memory");
		return -ENOMEM;
	}
	if ((err = conn_unary_json(c, what, "/v3/kv/deleterange", body, &reply, NULL)) < 0)
		return err;
	err = ej_revision(reply, &rev);
	if (err == 0)
		err = ej_i64(reply, "deleted", &n);
	json_object_put(reply);
	if (err < 0) {
		conn_fail(c, what, "malformed delete reply");
		return -EPROTO;
	}
	if (deleted)
		*deleted = n;
	if (revision)
		*revision = rev;
	return 0;
}

int etcd_delete(struct etcd_client *c, const char *key, int64_t *deleted, int64_t *revision)
{
	return delete(c, key, false, deleted, revision);
}

int etcd_delete_prefix(struct etcd_client *c, const char *prefix, int64_t *deleted,
                       int64_t *revision)
{
	return delete(c, prefix, true, deleted, revision);
}

/* ---- txn -------------------------------------------------------------- */

static struct json_object *cmp_json(const struct etcd_cmp *cmp)
{
	static const char *const targets[] = { "MOD", "CREATE", "VERSION" };
	static const char *const fields[] = { "mod_revision", "create_revision", "version" };
	static const char *const results[] = { "EQUAL", "NOT_EQUAL", "LESS", "GREATER" };
	struct json_object *o = json_object_new_object();

	if (!o || ej_add_b64(o, "key", cmp->key, strlen(cmp->key)) < 0 ||
	    json_object_object_add(o, "target", json_object_new_string(targets[cmp->target])) < 0 ||
	    json_object_object_add(o, "result", json_object_new_string(results[cmp->op])) < 0 ||
	    ej_add_i64(o, fields[cmp->target], cmp->value) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *op_json(const struct etcd_op *op)
{
	struct json_object *o = json_object_new_object(), *inner;

	if (!o)
		return NULL;
	if (op->type == ETCD_OP_PUT) {
		inner = put_body(op->key, op->value, op->value_len, op->lease);
		if (!inner || json_object_object_add(o, "request_put", inner) < 0)
			goto fail;
	} else {
		inner = json_object_new_object();
		if (!inner || ej_add_b64(inner, "key", op->key, strlen(op->key)) < 0 ||
		    json_object_object_add(o, "request_delete_range", inner) < 0)
			goto fail;
	}
	return o;
fail:
	json_object_put(inner);
	json_object_put(o);
	return NULL;
}

static int add_list(struct json_object *body, const char *name, size_t n,
                    struct json_object *(*item)(const void *, size_t), const void *items)
{
	struct json_object *a;

	if (!n)
		return 0;
	if (!(a = json_object_new_array_ext((int)n)) || json_object_object_add(body, name, a) < 0) {
		json_object_put(a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = item(items, i);

		if (!o || json_object_array_add(a, o) < 0) {
			json_object_put(o);
			return -ENOMEM;
		}
	}
	return 0;
}

static struct json_object *cmp_item(const void *items, size_t i)
{
	return cmp_json((const struct etcd_cmp *)items + i);
}

static struct json_object *op_item(const void *items, size_t i)
{
	return op_json((const struct etcd_op *)items + i);
}

static int check_txn(const struct etcd_cmp *cmp, size_t ncmp, const struct etcd_op *ops, size_t nops)
{
	for (size_t i = 0; i < ncmp; i++)
		if (!cmp[i].key || !*cmp[i].key || (unsigned)cmp[i].target > ETCD_VERSION ||
		    (unsigned)cmp[i].op > ETCD_GT)
			return -EINVAL;
	for (size_t i = 0; i < nops; i++)
		if (!ops[i].key || !*ops[i].key || (unsigned)ops[i].type > ETCD_OP_DELETE)
			return -EINVAL;
	return 0;
}

static int txn(struct etcd_client *c, const char *what, const struct etcd_cmp *cmp, size_t ncmp,
               const struct etcd_op *then_ops, size_t nthen,
               const struct etcd_op *else_ops, size_t nelse, struct etcd_txn_result *res)
{
	struct json_object *body, *reply = NULL;
	bool uncertain = false;
	int err;

	memset(res, 0, sizeof *res);
	if ((err = conn_begin(c)) < 0)
		return err;
	if (check_txn(cmp, ncmp, then_ops, nthen) < 0 || check_txn(NULL, 0, else_ops, nelse) < 0) {
		conn_fail(c, what, "a compare or an operation without a key, or of no known kind");
		return -EINVAL;
	}
	if (!(body = json_object_new_object()) ||
	    add_list(body, "compare", ncmp, cmp_item, cmp) < 0 ||
	    add_list(body, "success", nthen, op_item, then_ops) < 0 ||
	    add_list(body, "failure", nelse, op_item, else_ops) < 0) {
		json_object_put(body);
		conn_fail(c, what, "out of memory");
		return -ENOMEM;
	}
	/* On an error too: whether an attempt was sent and its answer lost. */
	if ((err = conn_unary_json(c, what, "/v3/kv/txn", body, &reply, &uncertain)) < 0) {
		res->uncertain = uncertain;
		return err;
	}
	err = ej_bool(reply, "succeeded", &res->succeeded);
	if (err == 0)
		err = ej_revision(reply, &res->revision);
	json_object_put(reply);
	if (err < 0) {
		memset(res, 0, sizeof *res);
		conn_fail(c, what, "malformed txn reply");
		return -EPROTO;
	}
	res->uncertain = !res->succeeded && uncertain;
	return 0;
}

int etcd_txn(struct etcd_client *c, const struct etcd_cmp *cmp, size_t ncmp,
             const struct etcd_op *then_ops, size_t nthen,
             const struct etcd_op *else_ops, size_t nelse,
             struct etcd_txn_result *res)
{
	char what[160];

	conn_what(what, sizeof what, "txn", ncmp ? cmp[0].key : nthen ? then_ops[0].key : NULL);
	return txn(c, what, cmp, ncmp, then_ops, nthen, else_ops, nelse, res);
}

int etcd_put_if(struct etcd_client *c, const char *key, const void *value,
                size_t len, int64_t lease, int64_t mod_revision,
                struct etcd_txn_result *res)
{
	struct etcd_cmp cmp = { key, mod_revision ? ETCD_MOD : ETCD_CREATE, ETCD_EQ,
	                        mod_revision ? mod_revision : 0 };
	struct etcd_op put = { ETCD_OP_PUT, key, value, len, lease };
	char what[160];

	conn_what(what, sizeof what, mod_revision ? "put-if-unchanged" : "create", key);
	if (mod_revision < 0) {
		memset(res, 0, sizeof *res);
		conn_begin(c);
		conn_fail(c, what, "negative revision");
		return -EINVAL;
	}
	return txn(c, what, &cmp, 1, &put, 1, NULL, 0, res);
}

int etcd_move(struct etcd_client *c, const char *from, int64_t from_mod,
              const char *to, int64_t to_mod, const void *value, size_t len,
              int64_t lease, struct etcd_txn_result *res)
{
	struct etcd_cmp cmp[2] = {
		{ from, ETCD_MOD, ETCD_EQ, from_mod },
		{ to, to_mod > 0 ? ETCD_MOD : ETCD_CREATE, ETCD_EQ, to_mod > 0 ? to_mod : 0 },
	};
	struct etcd_op ops[2] = {
		{ ETCD_OP_PUT, to, value, len, lease },
		{ ETCD_OP_DELETE, from, NULL, 0, 0 },
	};
	char what[160];

	conn_what(what, sizeof what, "move", from);
	if (from_mod <= 0 || to_mod < -1 || !from || !to || !strcmp(from, to)) {
		memset(res, 0, sizeof *res);
		conn_begin(c);
		conn_fail(c, what, from && to && !strcmp(from, to) ? "onto itself"
		                   : "needs both keys and the source's revision");
		return -EINVAL;
	}
	return txn(c, what, cmp, to_mod == -1 ? 1 : 2, ops, 2, NULL, 0, res);
}

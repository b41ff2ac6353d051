/* What the files of the etcd client share; see etcd.h for the API.
 *
 *   etcd_endpoints.c  the endpoint list
 *   etcd_json.c       base64, JSON fields, prefix ranges (pure)
 *   etcd_err.c        what an etcd or curl failure means (pure), messages
 *   etcd_conn.c       the client, curl handles, TLS, one attempt
 *   etcd_auth.c       authenticate, the token
 *   etcd_call.c       a call: attempts rotating over the endpoints
 *   etcd_kv.c, etcd_lease.c, etcd_watch.c, etcd_maint.c  the calls */
#ifndef ENVFS_ETCD_INTERNAL_H
#define ENVFS_ETCD_INTERNAL_H

#include <curl/curl.h>
#include <json-c/json.h>
#include <stdatomic.h>

#include "etcd.h"
#include "strbuf.h"

/* ---- endpoints (etcd_endpoints.c) ---------------------------------------- */

struct etcd_ep {
	char *url;   /* "https://10.0.0.1:2379": what curl is given */
	char *name;  /* "10.0.0.1:2379": what messages say */
};

/* Parses "[etcd://]EP[,EP...]" into ep[0..*n) (at most max); endpoints
 * without a scheme get https when tls, else http. On error -EINVAL with
 * a message in msg. The strings are caller-owned: ep_free_all(). */
int ep_parse(const char *list, bool tls, struct etcd_ep *ep, size_t max,
             size_t *n, struct strbuf *msg);
void ep_free_all(struct etcd_ep *ep, size_t n);

/* ---- JSON and base64 (etcd_json.c) ----------------------------------------- */

/* Parses one JSON object of n bytes. Caller-owned: json_object_put().
 * -EPROTO when it is not exactly one object. */
int ej_parse(const char *s, size_t n, struct json_object **out);

/* Field readers: a missing field is etcd's default (0, false, empty);
 * a field of the wrong shape is -EPROTO. 64-bit numbers come as strings
 * or numbers. */
int ej_i64(struct json_object *o, const char *key, int64_t *out);
int ej_u64(struct json_object *o, const char *key, uint64_t *out);
int ej_bool(struct json_object *o, const char *key, bool *out);
/* A string field or null: *out NULL for null or missing, else a copy
 * (caller frees). */
int ej_string(struct json_object *o, const char *key, char **out);
/* The base64 field key, decoded into *out (malloc'd, NUL-terminated,
 * caller frees; "" when missing). */
int ej_bytes(struct json_object *o, const char *key, char **out, size_t *len);
/* header.revision of a reply. */
int ej_revision(struct json_object *o, int64_t *out);

/* Adds key: base64(p[0..n)) to o. 0 or -ENOMEM. */
int ej_add_b64(struct json_object *o, const char *key, const void *p, size_t n);
int ej_add_i64(struct json_object *o, const char *key, int64_t v);

/* The end of the range of keys starting with prefix (etcd's range_end):
 * prefix with its last byte below 0xff incremented, what follows cut; a
 * single NUL byte ("every key from prefix on") when there is none. out
 * holds n + 1 bytes. */
void ej_prefix_end(const char *prefix, size_t n, char *out, size_t *outlen);

/* Serializes o (JSON_C_TO_STRING_PLAIN) into a malloc'd copy. */
int ej_dump(struct json_object *o, char **out, size_t *len);

/* ---- keys (etcd_kv.c) ------------------------------------------------------ */

/* Fills kv from a reply's {"key","value",...} object; its strings are
 * caller-owned: kv_clear(). -EPROTO when malformed. */
int kv_parse(struct json_object *o, struct etcd_kv *kv);
void kv_clear(struct etcd_kv *kv);

/* ---- failures (etcd_err.c) ---------------------------------------------- */

/* What to do after a failed attempt. */
enum { ERR_FINAL = 0, ERR_RETRY = 1, ERR_BAD_TOKEN = 2, ERR_AUTH_OFF = 3,
       ERR_NEED_AUTH = 4 };

/* The meaning of an etcd error reply: gRPC code and message (either of a
 * unary reply {"error","code","message"} or a stream's {"error":{
 * "grpc_code","message"}}). Returns a negative errno, *action one of
 * ERR_*; *ambiguous when the request may still be applied. */
int err_from_grpc(int code, const char *message, int *action, bool *ambiguous);

/* Reads an error reply body into *code and a borrowed *message.
 * -EPROTO when o is no error reply. */
int err_parse_reply(struct json_object *o, int *code, const char **message);

/* Reads a watch's cancel_reason ("rpc error: code = Unauthenticated desc
 * = etcdserver: invalid auth token") into a gRPC code and a borrowed
 * description (the whole reason when it has none). -EPROTO when it is
 * not in that form (*code is then Unknown). */
int err_parse_cancel(const char *reason, int *code, const char **desc);

/* Rank of an errno among attempts' failures: the call returns the highest
 * seen (a refusal by the server says more than silence). */
int err_rank(int err);

/* Appends s to out with control bytes and non-UTF-8 as \xNN and at most
 * max bytes of s (then "..."). For keys in messages. */
int err_add_printable(struct strbuf *out, const char *s, size_t n, size_t max);

/* Replaces every occurrence of secret (len > 0) in sb with "***". */
void err_scrub(struct strbuf *sb, const char *secret);
/* err_scrub of the client's password and token. */
void conn_scrub(struct etcd_client *c, struct strbuf *sb);

/* ---- the client (etcd_conn.c, etcd_auth.c) ---------------------------------- */

struct etcd_client {
	struct etcd_ep ep[ETCD_MAX_ENDPOINTS];
	size_t nep;
	size_t cur;                /* the endpoint in use */
	size_t call_first;         /* the one the last call tried first */
	char *list;                /* the endpoints as given, for dup */
	unsigned attempt_ms, total_ms, probe_ms;
	char *ca, *cert, *key, *user, *password;
	char *token;               /* NULL until authenticated */
	bool auth_off;             /* the server has authentication disabled */
	bool tls;
	CURL *easy;                /* unary calls and the watch stream */
	CURL *probe;               /* the watch's liveness probe */
	CURLM *multi;
	atomic_bool intr;
	unsigned rnd;
	struct strbuf msg;         /* the last failure */
	struct etcd_stats stats;
	char curl_err[CURL_ERROR_SIZE];
	char probe_err[CURL_ERROR_SIZE];
};

/* One request of a call. */
struct etcd_req {
	const char *what;          /* "put /a/b", for messages */
	const char *path;          /* "/v3/kv/put"; "/health" */
	const char *body;          /* NULL: GET */
	size_t len;
	bool noauth;               /* sent without a token (authenticate) */
	bool one_round;            /* each endpoint once, no pauses (health) */
};

/* The outcome of one attempt on one endpoint. */
struct etcd_attempt {
	int err;                   /* 0 or a negative errno */
	int action;                /* ERR_* */
	bool sent;                 /* it may have reached the server */
	bool rotate;               /* final, but the next call should start
	                            * on the next endpoint (a watch ended) */
	struct strbuf why;         /* what went wrong, without the endpoint */
	struct json_object *reply; /* unary success: the reply (owned) */
};

/* An attempt function: runs rq on c->ep[c->cur] in at most timeout_ms
 * (the watch: until its stream ends, the timeout bounding only its start)
 * and fills at. */
typedef void (*conn_attempt_fn)(struct etcd_client *c, const struct etcd_req *rq,
                                unsigned timeout_ms, struct etcd_attempt *at,
                                void *arg);

/* Runs rq with fn over the endpoints within c->total_ms: authenticates
 * first when needed, rotates and retries as etcd.h says. On success
 * returns 0 with *reply (may be NULL; caller-owned, json_object_put). On
 * failure sets c->msg. *uncertain (may be NULL): an attempt was sent and
 * got no answer. */
int conn_call(struct etcd_client *c, const struct etcd_req *rq,
              conn_attempt_fn fn, void *arg, struct json_object **reply,
              bool *uncertain);

/* conn_call with the unary attempt: a POST (or GET) answered by one
 * JSON object. */
int conn_unary(struct etcd_client *c, const struct etcd_req *rq,
               struct json_object **reply, bool *uncertain);

/* One unary attempt (for authenticate, which conn_call runs itself). */
void conn_unary_attempt(struct etcd_client *c, const struct etcd_req *rq,
                        unsigned timeout_ms, struct etcd_attempt *at);

/* Serializes body (and puts it) and runs conn_unary. */
int conn_unary_json(struct etcd_client *c, const char *what, const char *path,
                    struct json_object *body, struct json_object **reply,
                    bool *uncertain);

/* Prepares h for rq on endpoint ep with an attempt timeout (0: none, for
 * streams; the connection still has timeout_ms to open). *hdr receives
 * the header list, caller-owned: conn_free_headers(). Bodies are
 * collected by the caller's write callback, set after this. */
int conn_prepare(struct etcd_client *c, CURL *h, const struct etcd_ep *ep,
                 const struct etcd_req *rq, long timeout_ms, bool stream_timeout,
                 struct curl_slist **hdr);
void conn_free_headers(struct curl_slist *hdr);

/* A curl write callback collecting a reply up to ETCD_REPLY_MAX bytes
 * (then err is -EMSGSIZE and the transfer fails). */
struct conn_sink {
	struct strbuf sb;
	int err;
};
size_t conn_sink_write(char *p, size_t size, size_t n, void *arg);

/* Fills at from a finished transfer on h: curl's result, the HTTP status
 * and the body (may be NULL for a stream). Sets at->reply on success. */
void conn_classify(struct etcd_client *c, CURL *h, CURLcode rc, const char *body,
                   size_t len, struct etcd_attempt *at);

/* Runs the transfers of c->multi until `main` finishes (its result in
 * *res), *deadline passes (if non-zero; tick may move it) or an
 * interrupt (-EINTR). tick (may be NULL) runs after every wake-up, with
 * done set to another handle that finished (and its result); a non-zero
 * return ends the run with that value. Returns 0 when main finished. */
int conn_run(struct etcd_client *c, CURL *main, int64_t *deadline,
             int (*tick)(void *arg, CURL *done, CURLcode rc), void *arg,
             CURLcode *res);

/* A monotonic clock in milliseconds. */
int64_t conn_now_ms(void);

/* Sets c->msg to "etcd WHAT: " and the formatted text, scrubbed. */
void conn_fail(struct etcd_client *c, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Starts a call: counts it, clears the message; -EINTR once interrupted. */
int conn_begin(struct etcd_client *c);

/* Authenticates on the current endpoint within timeout_ms, as one
 * attempt: on success c->token is set (or c->auth_off). */
void auth_attempt(struct etcd_client *c, unsigned timeout_ms,
                  struct etcd_attempt *at);

/* Wipes and frees a secret string. */
void auth_forget(char **secret);

/* "op KEY" with the key printable, into a fixed buffer, for messages. */
void conn_what(char *buf, size_t size, const char *op, const char *key);

#endif

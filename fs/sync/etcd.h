/* etcd: a bounded client of etcd's v3 JSON gateway (libcurl + json-c), for
 * a FUSE daemon that must never wait on the network longer than it says.
 *
 *   struct etcd_opts o = ETCD_OPTS_INIT;
 *   struct etcd_client *c;
 *   char msg[256];
 *   if (etcd_client_new(&c, "etcd://10.0.0.1:2379,10.0.0.2:2379", &o,
 *                       msg, sizeof msg) < 0)
 *           errx(1, "%s", msg);
 *   if (etcd_put(c, "/primus-envfs/runs/7/x", "5", 1, 0, &rev) < 0)
 *           warnx("%s", etcd_errmsg(c));
 *
 * Server: etcd 3.4 or later, through the gateway that every etcd serves on
 * its client URLs at /v3/... (the path 3.5+ keeps).
 *
 * Bounds. Every call below but etcd_watch() returns within opts.total_ms
 * (default 2000 ms) plus scheduling delays: the time of every attempt,
 * re-authentication and back-off is taken from that one budget. (curl
 * cannot cut short the CPU work of a TLS handshake: milliseconds on a
 * machine, seconds under valgrind.) One
 * attempt on one endpoint lasts at most opts.attempt_ms (default 1000 ms),
 * connection and TLS handshake included; an etcd member that accepts TCP
 * and never answers (a stopped process) costs one attempt, not a hang.
 * After a timeout, the call's next attempts get half the time left (at
 * least 250 ms), so that one more member can be tried: a follower holds
 * a request it forwarded to a leader that just died, while the others
 * elect a new one within about a second.
 * etcd_watch() is a stream and runs until it ends, but establishing it
 * (up to the server's "created" answer) has the same bound.
 *
 * Rotation. The client talks to one endpoint at a time (the first given,
 * at first) and keeps using the one that answered last. A timeout, a
 * refused or broken connection, a TLS failure, HTTP 503 or an etcd
 * "unavailable" answer ("no leader", "leader changed", "request timed
 * out") moves it to the next endpoint. It goes round the endpoints while
 * the budget lasts and some failure of the last round may pass (a
 * timeout, a refused connection, no leader); a round of refused TLS
 * certificates or of servers that are not etcd ends the call. Between
 * rounds it pauses: 25 ms after the first, doubling to 400 ms, each pause
 * drawn between half and all of that so that many nodes do not retry in
 * step. Every request carries `Grpc-Metadata-Hasleader: true`, so a
 * member without a leader refuses at once instead of holding the request
 * for 7 s.
 *
 * Retries and uncertainty. A request that was sent and then timed out may
 * still be applied by the cluster. Put and delete are retried anyway (the
 * end state is the same); a txn is retried too, and if its compare then
 * fails, etcd_txn_result.uncertain says an earlier attempt may have been
 * the one that applied it: read the keys to know. A retried put may thus
 * create two revisions with the same value.
 *
 * Authentication. With opts.user, the client calls /v3/auth/authenticate
 * before its first request and sends the token in the Authorization
 * header. When the server says the token is invalid (it expired after
 * --auth-token-ttl idle, or the member restarted), the client
 * authenticates again and retries once, within the same budget. A server
 * with authentication disabled is used without a token.
 *
 * TLS. opts.ca_file makes endpoints without a scheme https and is the
 * only CA trusted; opts.cert_file + key_file are the client certificate.
 * With --client-cert-auth and RBAC both on, etcd's gateway rejects a
 * client certificate that has a CN: use one without a CN and a password.
 *
 * Errors. Every function returns 0 or a negative errno; etcd_errmsg() then
 * says what failed, on which endpoints and why. Messages never hold the
 * password or the token (nor a value: only keys, endpoints, file names and
 * the server's own words).
 *   -ETIMEDOUT     no endpoint answered within the bound
 *   -ECONNREFUSED  no endpoint accepted a connection (or -EHOSTUNREACH)
 *   -EAGAIN        the members answered but could not serve: no leader,
 *                  leader changed, server stopping, too many requests
 *   -ECONNRESET    the connection broke mid-answer (and nothing better)
 *   -EACCES        authentication failed (wrong user or password, no user
 *                  given while etcd requires one), permission denied by
 *                  RBAC, or TLS refused (the server rejected our
 *                  certificate, or its certificate is not signed by the CA)
 *   -EINVAL        bad argument or option (endpoint syntax, unreadable
 *                  certificate file, request refused as invalid)
 *   -EMSGSIZE      request or reply larger than etcd or this client allow
 *   -ENOENT        no such lease (expired, revoked, never granted)
 *   -ENOSPC        etcd's database is full (NOSPACE alarm)
 *   -ESTALE        a watch asked for a compacted revision (etcd_watch)
 *   -EPROTO        the reply is not what etcd sends (not an etcd v3
 *                  gateway, malformed JSON, missing fields)
 *   -EINTR         etcd_interrupt() was called
 *   -ENOMEM        out of memory
 * When attempts fail differently, the call returns the most telling
 * error: a server's refusal over silence, silence over a refused
 * connection.
 *
 * Threads. A client runs one call at a time and is not locked: use it from
 * one thread, and give each further thread (the watch above all) its own
 * client made with etcd_client_dup(). etcd_interrupt() is the one function
 * another thread may call. libcurl is initialized once per process on the
 * first etcd_client_new() (curl_global_init, never cleaned up).
 *
 * Sizes. A reply is read up to ETCD_REPLY_MAX bytes (then -EMSGSIZE); a
 * range returns at most ETCD_RANGE_MAX keys unless a smaller limit is
 * given, and says when more exist: etcd_range_read() reads one page (keys
 * after a key, values or not, at a given revision), and a reader pages
 * with it until `more` is false. A watch asks etcd to split a batch of
 * events into fragments (at most --max-request-bytes each, or one event)
 * and joins them, so only a single event over ETCD_REPLY_MAX is too large
 * to read. etcd itself refuses requests over 1.5 MiB by default
 * (--max-request-bytes). Keys are C strings here (no NUL byte);
 * values are any bytes. */
#ifndef ENVFS_ETCD_H
#define ENVFS_ETCD_H

/* The types (struct etcd_opts, etcd_kv, etcd_event, ...) are in sync_api.h,
 * which the executable shares; the functions are the module's. */
#include "sync_api.h"

/* Makes a client of the endpoints "[etcd://]EP[,EP...]" where EP is
 * host:port, [v6addr]:port, or http:// or https:// before either. No
 * request is sent yet (see etcd_connect). The files of opts must be
 * readable now. On error, returns -EINVAL or -ENOMEM with a message in
 * msg (msglen bytes, may be 0). *out is caller-owned: etcd_client_free(). */
int etcd_client_new(struct etcd_client **out, const char *endpoints,
                    const struct etcd_opts *opts, char *msg, size_t msglen);

/* A new client with the same endpoints, options, credentials and token,
 * for another thread. Caller-owned: etcd_client_free(). */
int etcd_client_dup(struct etcd_client **out, const struct etcd_client *c);

/* dst's next call starts at the endpoint after the one src's last call
 * tried first. A client kept for the calls that follow a failure of
 * another's (the fence move after a commit lost its answer) must not
 * spend its bound first on the member that held that call up. Not while a
 * call runs on either. */
void etcd_client_follow(struct etcd_client *dst, const struct etcd_client *src);

/* Frees c and wipes the password and token it held. NULL is a no-op. */
void etcd_client_free(struct etcd_client *c);

/* The message of the last failed call ("" when it succeeded). Borrowed,
 * valid until the next call on c. */
const char *etcd_errmsg(const struct etcd_client *c);

/* The endpoint in use, "host:port" as given. Borrowed. */
const char *etcd_endpoint(const struct etcd_client *c);

/* Wakes the call running on c in another thread, which returns -EINTR
 * (a watch: at once; a unary call: within its current poll). Safe from
 * any thread and from a signal handler. It is for shutting down: the flag
 * stays set, and every later call on c returns -EINTR too (clearing it at
 * the next call would lose an interrupt that lands just before that call
 * starts); go on with a new client. */
void etcd_interrupt(struct etcd_client *c);

/* Narrows c's bound: every later call on c ends within total_ms (and one
 * attempt within it). For calls that must not hold up a shutdown (the
 * lease revoke of an unmount, with members that may not answer). Not
 * while another thread runs a call on c. */
void etcd_set_bound(struct etcd_client *c, unsigned total_ms);

/* What the client did so far (for status pages and tests). */
void etcd_stats(const struct etcd_client *c, struct etcd_stats *out);

/* ---- checks ----------------------------------------------------------- */

/* Proves the cluster usable: authenticates when a user is set (so a
 * wrong password is -EACCES here) and reads the status of a member that
 * has a leader. out may be NULL. */
int etcd_connect(struct etcd_client *c, struct etcd_status *out);

/* /v3/maintenance/status of a member that has a leader. */
int etcd_status(struct etcd_client *c, struct etcd_status *out);

/* GET /health on each endpoint once, in turn, without pauses: 0 when one
 * says healthy (and the client stays on it); -EAGAIN when those that
 * answered say unhealthy (no leader, or an alarm). Quick: a member
 * without a leader says so at once; only silent members cost their
 * attempt. Sends no token. */
int etcd_health(struct etcd_client *c);

/* ---- keys --------------------------------------------------------------- */

/* Reads one key into *out (n == 0 when it does not exist). *out is
 * caller-owned: etcd_range_free(), also after an error. */
int etcd_get(struct etcd_client *c, const char *key, struct etcd_range *out);

/* Reads every key starting with prefix ("" is all keys), at most limit
 * of them (0 or more than ETCD_RANGE_MAX: ETCD_RANGE_MAX), sorted by key.
 * Caller-owned: etcd_range_free(). */
int etcd_get_prefix(struct etcd_client *c, const char *prefix, size_t limit,
                    struct etcd_range *out);

/* One page of a range (struct etcd_range_req in sync_api.h). With
 * rq->revision older than etcd keeps: -ESTALE (read again from the
 * first page). Caller-owned: etcd_range_free(), also after an error. */
int etcd_range_read(struct etcd_client *c, const struct etcd_range_req *rq,
                    struct etcd_range *out);

void etcd_range_free(struct etcd_range *r);

/* Sets key to the len bytes at value, attached to lease (0: none).
 * *revision (may be NULL) gets the revision of the write. */
int etcd_put(struct etcd_client *c, const char *key, const void *value,
             size_t len, int64_t lease, int64_t *revision);

/* Deletes key, or every key starting with prefix. *deleted and
 * *revision may be NULL; *deleted counts the last attempt's deletions. */
int etcd_delete(struct etcd_client *c, const char *key, int64_t *deleted,
                int64_t *revision);
int etcd_delete_prefix(struct etcd_client *c, const char *prefix,
                       int64_t *deleted, int64_t *revision);

/* ---- transactions --------------------------------------------------- */

/* If all of cmp hold, applies the then-ops, else the else-ops, in one
 * revision. A compare that fails is not an error: res->succeeded. */
int etcd_txn(struct etcd_client *c, const struct etcd_cmp *cmp, size_t ncmp,
             const struct etcd_op *then_ops, size_t nthen,
             const struct etcd_op *else_ops, size_t nelse,
             struct etcd_txn_result *res);

/* Compare-and-swap: puts key only if its mod_revision is still
 * mod_revision; mod_revision 0 means "only if key does not exist"
 * (create-exclusive, on create_revision). */
int etcd_put_if(struct etcd_client *c, const char *key, const void *value,
                size_t len, int64_t lease, int64_t mod_revision,
                struct etcd_txn_result *res);

/* Moves from to to in one revision: puts to = value (the value read
 * from `from`) and deletes from, only if from's mod_revision is still
 * from_mod (> 0) and to's is to_mod (0: to must not exist; -1: any). */
int etcd_move(struct etcd_client *c, const char *from, int64_t from_mod,
              const char *to, int64_t to_mod, const void *value, size_t len,
              int64_t lease, struct etcd_txn_result *res);

/* ---- leases ------------------------------------------------------------- */

/* Grants a lease of ttl seconds (etcd's minimum is 2 s, smaller is raised
 * to it). *granted_ttl may be NULL. */
int etcd_lease_grant(struct etcd_client *c, int64_t ttl, int64_t *id,
                     int64_t *granted_ttl);

/* One keepalive: renews the lease to its full TTL (*ttl, may be NULL).
 * -ENOENT when the lease expired or never existed. */
int etcd_lease_keepalive(struct etcd_client *c, int64_t id, int64_t *ttl);

/* Revokes the lease and deletes its keys. -ENOENT when unknown. */
int etcd_lease_revoke(struct etcd_client *c, int64_t id);

/* The seconds left (*remaining) and the granted TTL (may be NULL).
 * -ENOENT when the lease expired or never existed. */
int etcd_lease_ttl(struct etcd_client *c, int64_t id, int64_t *remaining,
                   int64_t *granted);

/* ---- watch ------------------------------------------------------------ */

/* etcd_watch_fn (sync_api.h) is called with the n events of one revision, in revision order; with n 0
 * once when the watch is established (revision: the store's revision
 * then) and on progress notices. Return 0 to go on, > 0 to stop the watch
 * (etcd_watch returns 0), < 0 to stop with that error. It runs on the
 * watching thread, inside the client's transfer: it must not call the
 * watching client (another client is fine), and it should hand the events
 * on rather than block, since the stream waits meanwhile. While the
 * callback runs, end->next_revision is the first revision not delivered
 * before it (so with n 0: every change below it was delivered; the
 * established revision itself may still have changes on their way).
 * The watch asks for fragments and progress notices: a revision is
 * delivered whole, however etcd split it. */
/* Watches every key starting with prefix, from start_revision (0: from
 * now), on a member that has a leader (the Hasleader header: etcd closes
 * the stream 3 election timeouts after its member loses the leader).
 * Blocks until the watch ends; end (may be NULL) says where to resume.
 * Returns:
 *   0            the callback asked to stop
 *   -ESTALE      start_revision was compacted (end->compact_revision):
 *                read the prefix again (etcd_get_prefix) and watch from
 *                its revision + 1
 *   -ECONNRESET  the stream ended after it was established: the member
 *                closed it (no leader, member stopping), the connection
 *                broke, or the member stopped answering probes for
 *                opts.probe_ms + opts.attempt_ms. The client has moved to
 *                the next endpoint: wait etcd_backoff_ms() and call again
 *                from end->next_revision; no event is lost or repeated
 *   -EINTR       etcd_interrupt()
 *   the callback's negative value, or, when the watch could not be
 *   established within opts.total_ms, the errors of any other call. */
int etcd_watch(struct etcd_client *c, const char *prefix,
               int64_t start_revision, etcd_watch_fn fn, void *arg,
               struct etcd_watch_end *end);

/* A delay before reconnect number `failures` (1, 2, ...): 100 ms doubling
 * to 3.2 s, each drawn at random between half and all of that, so that
 * the nodes of a job do not all reconnect at once. Thread-safe. */
unsigned etcd_backoff_ms(unsigned failures);

#endif

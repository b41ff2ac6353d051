/* The client: its curl handles and one HTTP attempt on one endpoint
 * (etcd_call.c rotates such attempts over the endpoints within a call's
 * time budget). */
#include "etcd_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int64_t conn_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void conn_scrub(struct etcd_client *c, struct strbuf *sb)
{
	err_scrub(sb, c->password);
	err_scrub(sb, c->token);
}

void auth_forget(char **secret)
{
	if (*secret) {
		explicit_bzero(*secret, strlen(*secret));
		free(*secret);
		*secret = NULL;
	}
}

void conn_fail(struct etcd_client *c, const char *what, const char *fmt, ...)
{
	va_list ap;

	sb_reset(&c->msg);
	sb_addf(&c->msg, "etcd %s: ", what);
	va_start(ap, fmt);
	sb_vaddf(&c->msg, fmt, ap);
	va_end(ap);
	conn_scrub(c, &c->msg);
}

int conn_begin(struct etcd_client *c)
{
	c->stats.calls++;
	sb_reset(&c->msg);
	if (atomic_load(&c->intr)) {
		sb_adds(&c->msg, "etcd: interrupted (the client is shutting down)");
		return -EINTR;
	}
	return 0;
}

void conn_what(char *buf, size_t size, const char *op, const char *key)
{
	struct strbuf sb = STRBUF_INIT;

	sb_adds(&sb, op);
	if (key && !*key) {
		sb_adds(&sb, " ''");
	} else if (key) {
		sb_addc(&sb, ' ');
		err_add_printable(&sb, key, strlen(key), 120);
	}
	snprintf(buf, size, "%s", sb.buf ? sb.buf : op);
	sb_release(&sb);
}

/* ---- the client ------------------------------------------------------- */

static int check_file(const char *what, const char *path, struct strbuf *msg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		sb_addf(msg, "etcd %s '%s': %s", what, path, strerror(errno));
		return -EINVAL;
	}
	close(fd);
	return 0;
}

static int check_opts(const struct etcd_opts *o, struct strbuf *msg)
{
	if (!o->cert_file != !o->key_file) {
		sb_adds(msg, "etcd: a client certificate needs its key, and a key its certificate");
		return -EINVAL;
	}
	if (o->user && !o->password) {
		sb_addf(msg, "etcd: user '%s' has no password", o->user);
		return -EINVAL;
	}
	if (!o->user && o->password) {
		sb_adds(msg, "etcd: a password without a user");
		return -EINVAL;
	}
	if (o->user && !*o->user) {
		sb_adds(msg, "etcd: empty user name");
		return -EINVAL;
	}
	if ((o->ca_file && check_file("CA file", o->ca_file, msg) < 0) ||
	    (o->cert_file && check_file("client certificate", o->cert_file, msg) < 0) ||
	    (o->key_file && check_file("client key", o->key_file, msg) < 0))
		return -EINVAL;
	return 0;
}

static int dup_opt(char **dst, const char *src)
{
	*dst = NULL;
	if (src && !(*dst = xstrdup(src)))
		return -ENOMEM;
	return 0;
}

int etcd_client_new(struct etcd_client **out, const char *endpoints,
                    const struct etcd_opts *opts, char *msg, size_t msglen)
{
	static const struct etcd_opts defaults = ETCD_OPTS_INIT;
	struct strbuf m = STRBUF_INIT;
	struct etcd_client *c = NULL;
	int err;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		sb_addf(&m, "etcd: libcurl does not initialize: %s", curl_easy_strerror(curl_init_rc));
		err = -ENOMEM;
		goto out;
	}
	if (!endpoints) {
		sb_adds(&m, "etcd: no endpoints");
		err = -EINVAL;
		goto out;
	}
	if ((err = check_opts(opts, &m)) < 0)
		goto out;
	if (!(c = calloc(1, sizeof *c))) {
		err = -ENOMEM;
		goto out;
	}
	atomic_init(&c->intr, false);
	c->tls = opts->ca_file != NULL;
	if ((err = ep_parse(endpoints, c->tls, c->ep, ETCD_MAX_ENDPOINTS, &c->nep, &m)) < 0)
		goto out;
	c->total_ms = opts->total_ms ? opts->total_ms : 2000;
	c->attempt_ms = opts->attempt_ms ? opts->attempt_ms : 1000;
	if (c->attempt_ms > c->total_ms)
		c->attempt_ms = c->total_ms;
	c->probe_ms = opts->probe_ms ? opts->probe_ms : 2000;
	err = -ENOMEM;
	if (dup_opt(&c->list, endpoints) < 0 || dup_opt(&c->ca, opts->ca_file) < 0 ||
	    dup_opt(&c->cert, opts->cert_file) < 0 || dup_opt(&c->key, opts->key_file) < 0 ||
	    dup_opt(&c->user, opts->user) < 0 || dup_opt(&c->password, opts->password) < 0)
		goto out;
	for (size_t i = 0; i < c->nep; i++)
		if (!strncmp(c->ep[i].url, "https:", 6))
			c->tls = true;
	if (!(c->easy = curl_easy_init()) || !(c->probe = curl_easy_init()) ||
	    !(c->multi = curl_multi_init()))
		goto out;
	c->rnd = (unsigned)conn_now_ms() ^ (unsigned)getpid() ^ (unsigned)(uintptr_t)c;
	*out = c;
	c = NULL;
	err = 0;
out:
	if (err < 0 && msglen)
		snprintf(msg, msglen, "%s", m.len ? sb_str(&m) : strerror(-err));
	else if (msglen)
		msg[0] = 0;
	sb_release(&m);
	etcd_client_free(c);
	return err;
}

int etcd_client_dup(struct etcd_client **out, const struct etcd_client *c)
{
	struct etcd_opts o = {
		.attempt_ms = c->attempt_ms, .total_ms = c->total_ms,
		.probe_ms = c->probe_ms, .ca_file = c->ca, .cert_file = c->cert,
		.key_file = c->key, .user = c->user, .password = c->password,
	};
	struct etcd_client *d;
	int err;

	if ((err = etcd_client_new(&d, c->list, &o, NULL, 0)) < 0)
		return err;
	d->cur = c->cur;
	d->auth_off = c->auth_off;
	if (c->token && !(d->token = xstrdup(c->token))) {
		etcd_client_free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

void etcd_client_follow(struct etcd_client *dst, const struct etcd_client *src)
{
	/* Not src->cur: after a whole round that failed (a stopped leader,
	 * followers that wait for an election) that is back at the member
	 * the call tried first, the one that held it up. */
	if (dst->nep == src->nep && src->nep)
		dst->cur = (src->call_first + 1) % src->nep;
}

void etcd_client_free(struct etcd_client *c)
{
	if (!c)
		return;
	if (c->multi) {
		curl_multi_remove_handle(c->multi, c->easy);
		curl_multi_remove_handle(c->multi, c->probe);
		curl_multi_cleanup(c->multi);
	}
	curl_easy_cleanup(c->easy);
	curl_easy_cleanup(c->probe);
	ep_free_all(c->ep, c->nep);
	auth_forget(&c->password);
	auth_forget(&c->token);
	free(c->list);
	free(c->ca);
	free(c->cert);
	free(c->key);
	free(c->user);
	sb_release(&c->msg);
	free(c);
}

const char *etcd_errmsg(const struct etcd_client *c)
{
	return sb_str(&c->msg);
}

const char *etcd_endpoint(const struct etcd_client *c)
{
	return c->ep[c->cur].name;
}

void etcd_set_bound(struct etcd_client *c, unsigned total_ms)
{
	c->total_ms = total_ms ? total_ms : 1;
	if (c->attempt_ms > c->total_ms)
		c->attempt_ms = c->total_ms;
}

void etcd_interrupt(struct etcd_client *c)
{
	atomic_store(&c->intr, true);
	curl_multi_wakeup(c->multi);
}

void etcd_stats(const struct etcd_client *c, struct etcd_stats *out)
{
	*out = c->stats;
}

unsigned etcd_backoff_ms(unsigned failures)
{
	static __thread unsigned seed;
	unsigned cap = 100u << (failures > 6 ? 5 : failures ? failures - 1 : 0);

	if (!seed)
		seed = (unsigned)conn_now_ms() ^ (unsigned)(uintptr_t)&seed ^ (unsigned)getpid();
	return cap / 2 + (unsigned)rand_r(&seed) % (cap / 2 + 1);
}

/* ---- one attempt -------------------------------------------------------- */

void conn_free_headers(struct curl_slist *hdr)
{
	for (struct curl_slist *h = hdr; h; h = h->next)
		explicit_bzero(h->data, strlen(h->data));
	curl_slist_free_all(hdr);
}

static int add_header(struct curl_slist **hdr, const char *h)
{
	struct curl_slist *n = curl_slist_append(*hdr, h);

	if (!n)
		return -ENOMEM;
	*hdr = n;
	return 0;
}

int conn_prepare(struct etcd_client *c, CURL *h, const struct etcd_ep *ep,
                 const struct etcd_req *rq, long timeout_ms, bool stream,
                 struct curl_slist **hdr)
{
	struct strbuf url = STRBUF_INIT;
	int err = -ENOMEM;

	*hdr = NULL;
	if (sb_addf(&url, "%s%s", ep->url, rq->path) < 0)
		goto out;
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url.buf);
	/* Threads: no SIGALRM for DNS timeouts. */
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	/* etcd members are reached directly: an http_proxy meant for the
	 * internet must not see (or break) cluster-internal traffic. */
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, h == c->probe ? c->probe_err : c->curl_err);
	(h == c->probe ? c->probe_err : c->curl_err)[0] = 0;
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, stream ? 0L : timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 10L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 5L);
	if (rq->body) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
	} else {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	}
	if (c->ca) {
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca);
		/* The CA given is the only one trusted. */
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	}
	if (c->cert) {
		curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert);
		curl_easy_setopt(h, CURLOPT_SSLKEY, c->key);
	}
	if (add_header(hdr, "Content-Type: application/json") < 0 ||
	    add_header(hdr, "Expect:") < 0 ||
	    /* A member without a leader refuses at once (etcd's gRPC
	     * "hasleader" metadata) rather than after 7 s. */
	    add_header(hdr, "Grpc-Metadata-Hasleader: true") < 0)
		goto out;
	if (c->token && !rq->noauth) {
		struct strbuf a = STRBUF_INIT;

		err = sb_addf(&a, "Authorization: %s", c->token) < 0 ? -ENOMEM : add_header(hdr, a.buf);
		if (a.buf)
			explicit_bzero(a.buf, a.len);
		sb_release(&a);
		if (err < 0)
			goto out;
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdr);
	err = 0;
out:
	sb_release(&url);
	if (err < 0) {
		conn_free_headers(*hdr);
		*hdr = NULL;
	}
	return err;
}

static bool tls_refusal(const char *e)
{
	return strstr(e, "alert") || strstr(e, "certificate required");
}

/* A transfer that failed in curl: what it means and whether to rotate. */
static void transport(struct etcd_client *c, CURL *h, CURLcode rc, struct etcd_attempt *at)
{
	const char *e = h == c->probe ? c->probe_err : c->curl_err;
	long os = 0, hdr_size = 0, connects = 0;
	curl_off_t took = 0;

	if (!*e)
		e = curl_easy_strerror(rc);
	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os);
	curl_easy_getinfo(h, CURLINFO_HEADER_SIZE, &hdr_size);
	curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
	at->action = ERR_RETRY;
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		at->err = os == EHOSTUNREACH ? -EHOSTUNREACH : os == ENETUNREACH ? -ENETUNREACH
		                                                                : -ECONNREFUSED;
		sb_adds(&at->why, os ? strerror((int)os) : "cannot connect");
		at->sent = false;
		return;
	case CURLE_COULDNT_RESOLVE_HOST:
		at->err = -EHOSTUNREACH;
		sb_adds(&at->why, "cannot resolve the host name");
		at->sent = false;
		return;
	case CURLE_OPERATION_TIMEDOUT:
		at->err = -ETIMEDOUT;
		curl_easy_getinfo(h, CURLINFO_TOTAL_TIME_T, &took);
		sb_addf(&at->why, at->sent ? "no answer within %ld ms" : "could not connect within %ld ms",
		        (long)(took / 1000));
		return;
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_ENGINE_INITFAILED:
	case CURLE_SSL_CRL_BADFILE:
		at->err = -EINVAL;
		at->action = ERR_FINAL;
		sb_addf(&at->why, "TLS setup failed (the CA, certificate or key file?): %s", e);
		return;
	case CURLE_PEER_FAILED_VERIFICATION:
		at->err = -EACCES;
		sb_addf(&at->why, "the server's TLS certificate is not trusted%s: %s",
		        c->ca ? " by the CA file" : " (no CA file given)", e);
		return;
	case CURLE_SSL_CONNECT_ERROR:
		at->err = -EACCES;
		if (tls_refusal(e))
			sb_addf(&at->why, "the server refused our client certificate (TLS: %s)", e);
		else if (strstr(e, "wrong version number"))
			sb_addf(&at->why, "TLS handshake failed, is the endpoint plain http? (%s)", e);
		else
			sb_addf(&at->why, "TLS handshake failed: %s", e);
		return;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
		/* TLS 1.3 checks the client's certificate after the client
		 * thinks the handshake done: a refusal shows up as an alert or
		 * a reset on the first read or write of a new connection. */
		if (c->tls && hdr_size == 0 && connects > 0 &&
		    (tls_refusal(e) || rc == CURLE_SEND_ERROR || rc == CURLE_GOT_NOTHING)) {
			at->err = -EACCES;
			at->sent = false;
			sb_addf(&at->why, "the server closed the TLS connection before answering:"
			        " it refused our client certificate? (%s)", e);
			return;
		}
		/* A TLS member closes a plain HTTP request without a word:
		 * on a new connection that is the endpoint's scheme. */
		if (rc == CURLE_GOT_NOTHING && !c->tls && connects > 0) {
			at->err = -EPROTO;
			sb_addf(&at->why, "empty reply, is the endpoint https? (%s)", e);
			return;
		}
		at->err = -ECONNRESET;
		sb_addf(&at->why, "connection broken: %s", e);
		return;
	case CURLE_OUT_OF_MEMORY:
		at->err = -ENOMEM;
		at->action = ERR_FINAL;
		sb_adds(&at->why, "out of memory");
		return;
	default:
		at->err = -ECONNRESET;
		sb_addf(&at->why, "%s", e);
		return;
	}
}

void conn_classify(struct etcd_client *c, CURL *h, CURLcode rc, const char *body,
                   size_t len, struct etcd_attempt *at)
{
	struct json_object *o = NULL;
	const char *message;
	long http = 0, request_size = 0;
	bool ambiguous;
	int code;

	curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &request_size);
	at->sent = request_size > 0;
	if (rc != CURLE_OK) {
		transport(c, h, rc, at);
		return;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
	if (http == 200) {
		struct json_object *e;

		if (ej_parse(body ? body : "", body ? len : 0, &o) < 0) {
			at->err = -EPROTO;
			at->action = ERR_RETRY;
			sb_addf(&at->why, "malformed reply (%zu bytes, not one JSON object)", len);
			return;
		}
		/* A stream (lease keepalive) says its errors after a 200. */
		if (!(json_object_object_get_ex(o, "error", &e) &&
		      json_object_is_type(e, json_type_object))) {
			at->err = 0;
			at->reply = o;
			return;
		}
	}
	if ((o || (body && ej_parse(body, len, &o) == 0)) &&
	    err_parse_reply(o, &code, &message) == 0) {
		at->err = err_from_grpc(code, message, &at->action, &ambiguous);
		at->sent = ambiguous;
		err_add_printable(&at->why, message, strlen(message), 300);
		if (at->action == ERR_NEED_AUTH && !c->user)
			sb_adds(&at->why, " (etcd has authentication on: a user and password are needed)");
		json_object_put(o);
		return;
	}
	at->err = -EPROTO;
	at->action = ERR_RETRY;
	at->sent = http >= 500 && http != 503;
	/* Kept for callers that know other shapes (GET /health's 503). */
	at->reply = o;
	if (http == 404)
		sb_addf(&at->why, "HTTP 404: not an etcd v3 JSON gateway (etcd 3.4 or later?)");
	else
		sb_addf(&at->why, "HTTP %ld without an etcd error in the reply", http);
}

size_t conn_sink_write(char *p, size_t size, size_t n, void *arg)
{
	struct conn_sink *s = arg;
	size_t len = size * n;

	if (s->sb.len + len > ETCD_REPLY_MAX) {
		s->err = -EMSGSIZE;
		return 0;
	}
	if (sb_add(&s->sb, p, len) < 0) {
		s->err = -ENOMEM;
		return 0;
	}
	return len;
}

static void unary_attempt(struct etcd_client *c, const struct etcd_req *rq,
                          unsigned timeout_ms, struct etcd_attempt *at, void *arg)
{
	struct conn_sink s = { STRBUF_INIT, 0 };
	struct curl_slist *hdr;
	int64_t no_deadline = 0;
	CURLcode rc = CURLE_OK;
	int err;

	(void)arg;
	if ((err = conn_prepare(c, c->easy, &c->ep[c->cur], rq, timeout_ms, false, &hdr)) < 0) {
		at->err = err;
		sb_adds(&at->why, "out of memory");
		return;
	}
	curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, conn_sink_write);
	curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, &s);
	err = conn_run(c, c->easy, &no_deadline, NULL, NULL, &rc);
	conn_free_headers(hdr);
	if (err < 0) {
		at->err = err;
		sb_adds(&at->why, err == -EINTR ? "interrupted" : "curl failed");
	} else if (s.err) {
		at->err = s.err;
		sb_addf(&at->why, s.err == -EMSGSIZE ? "reply larger than %u bytes" : "out of memory",
		        ETCD_REPLY_MAX);
	} else {
		conn_classify(c, c->easy, rc, s.sb.buf, s.sb.len, at);
	}
	/* The authenticate reply holds the token. */
	if (rq->noauth && s.sb.buf)
		explicit_bzero(s.sb.buf, s.sb.len);
	sb_release(&s.sb);
}

int conn_run(struct etcd_client *c, CURL *main, int64_t *deadline,
             int (*tick)(void *arg, CURL *done, CURLcode rc), void *arg,
             CURLcode *res)
{
	bool done = false;
	int ret = 0;

	if (atomic_load(&c->intr))
		return -EINTR;
	if (curl_multi_add_handle(c->multi, main) != CURLM_OK)
		return -ENOMEM;
	while (!done) {
		int running, queued;
		long wait = 1000;
		CURLMsg *m;

		if (curl_multi_perform(c->multi, &running) != CURLM_OK) {
			ret = -ENOMEM;
			break;
		}
		while ((m = curl_multi_info_read(c->multi, &queued))) {
			if (m->msg != CURLMSG_DONE)
				continue;
			if (m->easy_handle == main) {
				*res = m->data.result;
				done = true;
			} else if (tick && (ret = tick(arg, m->easy_handle, m->data.result))) {
				goto out;
			}
		}
		if (done)
			break;
		if (atomic_load(&c->intr)) {
			ret = -EINTR;
			break;
		}
		if (tick && (ret = tick(arg, NULL, CURLE_OK)))
			break;
		if (*deadline) {
			int64_t left = *deadline - conn_now_ms();

			if (left <= 0) {
				ret = -ETIMEDOUT;
				break;
			}
			if (left < wait)
				wait = (long)left;
		}
		curl_multi_poll(c->multi, NULL, 0, (int)wait, NULL);
	}
out:
	curl_multi_remove_handle(c->multi, main);
	return ret;
}

void conn_unary_attempt(struct etcd_client *c, const struct etcd_req *rq,
                        unsigned timeout_ms, struct etcd_attempt *at)
{
	unary_attempt(c, rq, timeout_ms, at, NULL);
}

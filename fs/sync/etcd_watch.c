/* The watch: one POST /v3/watch whose reply is a stream of JSON lines,
 * {"result": {...}} each, for as long as the member keeps it open.
 *
 * Establishing it is an attempt like any other (bounded, rotated, with
 * re-authentication): it ends at the server's "created". From then on the
 * stream is the caller's; it ends when the member closes it (with the
 * Hasleader header, 3 election timeouts after the member lost its leader),
 * when the connection breaks, or when a probe finds the member silent:
 * a stopped process keeps its sockets and would hold a quiet stream open
 * forever, so after probe_ms without a byte the watch asks the member for
 * its version and ends if it gets no answer. (Not its status: every node
 * probes every probe_ms, and a status call through the gateway costs the
 * member four times the CPU of /version, which its HTTP server answers
 * itself; a member that lost its leader ends the stream on its own.)
 *
 * A batch of events (a watch that resumes far behind) can be far larger
 * than a reply this client reads: the watch asks etcd for fragments (at
 * most --max-request-bytes each, or one event) and joins them into whole
 * revisions. */
#include "etcd_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* An error body before "created" is read up to this. */
#define ERROR_BODY_MAX 65536

struct watch {
	struct etcd_client *c;
	etcd_watch_fn fn;
	void *arg;
	struct etcd_watch_end *end;
	int64_t start;
	/* One attempt: */
	int64_t *deadline;       /* until "created"; then 0 */
	bool created;
	bool done;               /* a message decided the outcome */
	int result;
	int action;
	struct strbuf why;
	struct strbuf line;      /* an unfinished line, or an error body */
	struct json_object *held;/* a fragment's last revision's events,
	                          * until the next fragment says it is whole */
	long http;
	int64_t last_data;
	/* The probe: */
	bool probing;
	struct curl_slist *probe_hdr;
	struct conn_sink probe_body;
};

static void finish(struct watch *w, int result, int action, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void finish(struct watch *w, int result, int action, const char *fmt, ...)
{
	va_list ap;

	w->done = true;
	w->result = result;
	w->action = action;
	sb_reset(&w->why);
	va_start(ap, fmt);
	sb_vaddf(&w->why, fmt, ap);
	va_end(ap);
}

/* Why the server cancelled a watch: compaction, or a gRPC status. */
static void cancelled(struct watch *w, struct json_object *r)
{
	struct json_object *f;
	const char *reason = "", *desc;
	int64_t compact = 0;
	int code, err, action;
	bool ambiguous;

	if (ej_i64(r, "compact_revision", &compact) == 0 && compact > 0) {
		w->end->compact_revision = compact;
		finish(w, -ESTALE, ERR_FINAL,
		       "revision %lld is compacted (the oldest kept is %lld): read again",
		       (long long)w->end->next_revision, (long long)compact);
		return;
	}
	if (json_object_object_get_ex(r, "cancel_reason", &f) && json_object_is_type(f, json_type_string))
		reason = json_object_get_string(f);
	err_parse_cancel(reason, &code, &desc);
	err = err_from_grpc(code, desc, &action, &ambiguous);
	if (!*desc)
		desc = "no reason given";
	/* Once events flowed, a cancel ends the stream like a close. */
	if (w->created && !*w->deadline && action == ERR_RETRY)
		finish(w, -ECONNRESET, ERR_FINAL, "stream cancelled by the member: %s", desc);
	else
		finish(w, err, action, "watch cancelled: %s", desc);
}

/* Reads event e into kv and ev (ev's strings borrowed from kv). */
static int parse_event(struct json_object *e, struct etcd_kv *kv, struct etcd_event *ev)
{
	struct json_object *t, *o;
	const char *ts = NULL;
	bool del = false;

	if (!json_object_is_type(e, json_type_object) || !json_object_object_get_ex(e, "kv", &o))
		return -EPROTO;
	if (json_object_object_get_ex(e, "type", &t)) {
		ts = json_object_get_string(t);
		del = ts && !strcmp(ts, "DELETE");
		if (!ts || (!del && strcmp(ts, "PUT")))
			return -EPROTO;
	}
	if (kv_parse(o, kv) < 0)
		return -EPROTO;
	if (kv->mod_revision <= 0) {
		kv_clear(kv);
		return -EPROTO;
	}
	*ev = (struct etcd_event){
		.type = del ? ETCD_EV_DELETE : ETCD_EV_PUT,
		.key = kv->key, .key_len = kv->key_len,
		.value = kv->value, .value_len = kv->value_len,
		.create_revision = kv->create_revision, .mod_revision = kv->mod_revision,
		.version = kv->version, .lease = kv->lease,
	};
	return 0;
}

/* Hands events[0..n) to the callback, one revision at a time, each
 * revision once: those before end->next_revision were delivered before a
 * reconnect. */
static void deliver_n(struct watch *w, struct json_object *events, size_t n)
{
	size_t i = 0;
	struct etcd_event *ev = calloc(n, sizeof *ev);
	struct etcd_kv *kv = calloc(n, sizeof *kv);
	int64_t prev = 0;

	if (!ev || !kv) {
		finish(w, -ENOMEM, ERR_FINAL, "out of memory");
		goto out;
	}
	while (i < n && !w->done) {
		int64_t rev = 0;
		size_t k = 0;

		for (; i < n; i++, k++) {
			if (parse_event(json_object_array_get_idx(events, i), &kv[k], &ev[k]) < 0) {
				finish(w, -EPROTO, ERR_FINAL, "malformed watch event");
				break;
			}
			if (k > 0 && kv[k].mod_revision != rev) {
				kv_clear(&kv[k]);
				break;
			}
			rev = kv[k].mod_revision;
		}
		if (!w->done && rev < prev)
			finish(w, -EPROTO, ERR_FINAL, "watch events out of revision order");
		prev = rev;
		if (!w->done && rev >= w->end->next_revision) {
			int ret = w->fn(w->arg, rev, ev, k);

			w->end->next_revision = rev + 1;
			if (ret > 0)
				finish(w, 0, ERR_FINAL, "stopped");
			else if (ret < 0)
				finish(w, ret, ERR_FINAL, "the watch callback failed: %s", strerror(-ret));
		}
		for (size_t j = 0; j < k; j++)
			kv_clear(&kv[j]);
	}
out:
	free(ev);
	free(kv);
}

static int64_t event_revision(struct json_object *e)
{
	struct json_object *o;
	int64_t rev = 0;

	if (json_object_object_get_ex(e, "kv", &o))
		ej_i64(o, "mod_revision", &rev);
	return rev;
}

/* The events of one message. etcd splits a large batch into fragments
 * anywhere, even inside one revision: a fragment's events are delivered
 * but those of its last revision, held until a later fragment or the
 * last one shows the revision whole. */
static void deliver(struct watch *w, struct json_object *events, bool fragment)
{
	size_t nh = w->held ? json_object_array_length(w->held) : 0;
	size_t ne = events ? json_object_array_length(events) : 0, n = nh + ne, cut = n;
	struct json_object *all = json_object_new_array_ext((int)(n ? n : 1)), *rest = NULL;

	if (!all)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = i < nh ? json_object_array_get_idx(w->held, i)
		                               : json_object_array_get_idx(events, i - nh);

		if (json_object_array_add(all, json_object_get(e)) < 0) {
			json_object_put(e);
			goto nomem;
		}
	}
	json_object_put(w->held);
	w->held = NULL;
	if (fragment && n) {
		int64_t last = event_revision(json_object_array_get_idx(all, n - 1));

		while (cut > 0 && event_revision(json_object_array_get_idx(all, cut - 1)) == last)
			cut--;
		if (!(rest = json_object_new_array_ext((int)(n - cut))))
			goto nomem;
		for (size_t i = cut; i < n; i++) {
			struct json_object *e = json_object_array_get_idx(all, i);

			if (json_object_array_add(rest, json_object_get(e)) < 0) {
				json_object_put(e);
				goto nomem;
			}
		}
		w->held = rest;
		rest = NULL;
	}
	if (cut)
		deliver_n(w, all, cut);
	json_object_put(all);
	return;
nomem:
	json_object_put(rest);
	json_object_put(all);
	finish(w, -ENOMEM, ERR_FINAL, "out of memory");
}

static void on_message(struct watch *w, const char *s, size_t len)
{
	struct json_object *o, *r, *events;
	const char *message;
	bool created, canceled, ambiguous, fragment;
	int64_t rev;
	int code, err, action;

	if (ej_parse(s, len, &o) < 0) {
		finish(w, -EPROTO, ERR_FINAL, "malformed watch message (%zu bytes)", len);
		return;
	}
	if (err_parse_reply(o, &code, &message) == 0) {
		err = err_from_grpc(code, message, &action, &ambiguous);
		if (w->created)
			finish(w, -ECONNRESET, ERR_FINAL, "stream closed by the member: %s", message);
		else
			finish(w, err, action, "%s", message);
		goto out;
	}
	if (!json_object_object_get_ex(o, "result", &r) || !json_object_is_type(r, json_type_object) ||
	    ej_bool(r, "created", &created) < 0 || ej_bool(r, "canceled", &canceled) < 0 ||
	    ej_bool(r, "fragment", &fragment) < 0 || ej_revision(r, &rev) < 0) {
		finish(w, -EPROTO, ERR_FINAL, "malformed watch message");
		goto out;
	}
	if (canceled) {
		cancelled(w, r);
		goto out;
	}
	if (created && !w->created) {
		w->created = true;
		*w->deadline = 0;
		if (w->start == 0 && w->end->next_revision <= rev)
			w->end->next_revision = rev + 1;
		if ((err = w->fn(w->arg, rev, NULL, 0)) != 0) {
			finish(w, err > 0 ? 0 : err, ERR_FINAL, "stopped");
			goto out;
		}
	}
	if (json_object_object_get_ex(r, "events", &events) && events) {
		if (!json_object_is_type(events, json_type_array)) {
			finish(w, -EPROTO, ERR_FINAL, "malformed watch events");
			goto out;
		}
		if (json_object_array_length(events) || w->held) {
			deliver(w, events, fragment);
			goto out;
		}
	}
	if (!created && w->created) {
		/* A progress notice: every change up to rev was sent. */
		if (w->end->next_revision <= rev)
			w->end->next_revision = rev + 1;
		if ((err = w->fn(w->arg, rev, NULL, 0)) != 0)
			finish(w, err > 0 ? 0 : err, ERR_FINAL, "stopped");
	}
out:
	json_object_put(o);
}

static size_t watch_write(char *p, size_t size, size_t n, void *arg)
{
	struct watch *w = arg;
	size_t len = size * n, at = 0;

	if (!w->http)
		curl_easy_getinfo(w->c->easy, CURLINFO_RESPONSE_CODE, &w->http);
	if (w->http != 200) {
		/* An error reply: kept whole for conn_classify. */
		if (w->line.len + len > ERROR_BODY_MAX || sb_add(&w->line, p, len) < 0)
			return 0;
		return len;
	}
	w->last_data = conn_now_ms();
	while (at < len && !w->done) {
		const char *nl = memchr(p + at, '\n', len - at);
		size_t chunk = nl ? (size_t)(nl - (p + at)) : len - at;

		if (w->line.len + chunk > ETCD_REPLY_MAX) {
			finish(w, -EMSGSIZE, ERR_FINAL, "watch message larger than %u bytes",
			       ETCD_REPLY_MAX);
			break;
		}
		if (sb_add(&w->line, p + at, chunk) < 0) {
			finish(w, -ENOMEM, ERR_FINAL, "out of memory");
			break;
		}
		at += chunk;
		if (!nl)
			break;
		at++;
		if (w->line.len)
			on_message(w, w->line.buf, w->line.len);
		sb_reset(&w->line);
	}
	/* A decided outcome ends the transfer (curl: write error). */
	return w->done ? 0 : len;
}

/* ---- the probe ---------------------------------------------------------- */

static void probe_stop(struct watch *w)
{
	if (!w->probing)
		return;
	curl_multi_remove_handle(w->c->multi, w->c->probe);
	conn_free_headers(w->probe_hdr);
	w->probe_hdr = NULL;
	sb_release(&w->probe_body.sb);
	w->probe_body.err = 0;
	w->probing = false;
}

static int probe_start(struct watch *w)
{
	static const struct etcd_req rq = { .what = "probe", .path = "/version", .noauth = true };
	struct etcd_client *c = w->c;

	if (conn_prepare(c, c->probe, &c->ep[c->cur], &rq, c->attempt_ms, false, &w->probe_hdr) < 0)
		return 0;
	curl_easy_setopt(c->probe, CURLOPT_WRITEFUNCTION, conn_sink_write);
	curl_easy_setopt(c->probe, CURLOPT_WRITEDATA, &w->probe_body);
	if (curl_multi_add_handle(c->multi, c->probe) != CURLM_OK) {
		conn_free_headers(w->probe_hdr);
		w->probe_hdr = NULL;
		return 0;
	}
	w->probing = true;
	return 0;
}

static int watch_tick(void *arg, CURL *done, CURLcode rc)
{
	struct watch *w = arg;
	struct etcd_attempt pa = { .why = STRBUF_INIT };

	if (done == w->c->probe) {
		conn_classify(w->c, done, rc, w->probe_body.sb.buf, w->probe_body.sb.len, &pa);
		json_object_put(pa.reply);
		probe_stop(w);
		if (pa.err == 0) {
			w->last_data = conn_now_ms();
			sb_release(&pa.why);
			return 0;
		}
		finish(w, -ECONNRESET, ERR_FINAL, "the member %s (probe: %s)",
		       pa.err == -ETIMEDOUT ? "stopped answering" : "cannot serve", sb_str(&pa.why));
		sb_release(&pa.why);
		return -ECONNRESET;
	}
	if (w->done)
		return w->result ? w->result : 1;
	if (w->created && !w->probing && conn_now_ms() - w->last_data >= w->c->probe_ms)
		return probe_start(w);
	return 0;
}

/* ---- the attempt -------------------------------------------------------- */

static void watch_attempt(struct etcd_client *c, const struct etcd_req *rq,
                          unsigned timeout_ms, struct etcd_attempt *at, void *arg)
{
	struct watch *w = arg;
	struct curl_slist *hdr;
	int64_t deadline = conn_now_ms() + timeout_ms;
	CURLcode rc = CURLE_OK;
	int err;

	w->deadline = &deadline;
	w->created = w->done = false;
	w->http = 0;
	w->last_data = conn_now_ms();
	json_object_put(w->held);
	w->held = NULL;
	sb_reset(&w->line);
	sb_reset(&w->why);
	if ((err = conn_prepare(c, c->easy, &c->ep[c->cur], rq, timeout_ms, true, &hdr)) < 0) {
		at->err = err;
		sb_adds(&at->why, "out of memory");
		return;
	}
	curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, watch_write);
	curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, w);
	err = conn_run(c, c->easy, &deadline, watch_tick, w, &rc);
	probe_stop(w);
	/* A revision whose last fragment never came is sent again from
	 * end->next_revision. */
	json_object_put(w->held);
	w->held = NULL;
	conn_free_headers(hdr);
	if (w->done) {
		at->err = w->result;
		at->action = w->action;
		sb_adds(&at->why, sb_str(&w->why));
	} else if (err == -EINTR) {
		at->err = -EINTR;
		sb_adds(&at->why, "interrupted");
	} else if (err == -ETIMEDOUT) {
		at->err = -ETIMEDOUT;
		at->action = ERR_RETRY;
		sb_addf(&at->why, "the watch was not created within %u ms", timeout_ms);
	} else if (!w->created) {
		/* Refused or broken before "created": like any reply. */
		conn_classify(c, c->easy, rc, w->line.buf, w->line.len, at);
		if (at->err == 0) {
			json_object_put(at->reply);
			at->reply = NULL;
			at->err = -ECONNRESET;
			at->action = ERR_RETRY;
			sb_adds(&at->why, "the stream ended before the watch was created");
		}
	} else {
		struct etcd_attempt t = { .why = STRBUF_INIT };

		if (rc != CURLE_OK)
			conn_classify(c, c->easy, rc, NULL, 0, &t);
		json_object_put(t.reply);
		at->err = -ECONNRESET;
		sb_addf(&at->why, "stream ended: %s",
		        rc == CURLE_OK ? "closed by the member" : sb_str(&t.why));
		sb_release(&t.why);
	}
	at->sent = false;
	/* The member that ended a stream may well be the problem: the
	 * caller's next watch starts on the next endpoint. */
	at->rotate = at->err == -ECONNRESET && at->action == ERR_FINAL;
}

int etcd_watch(struct etcd_client *c, const char *prefix, int64_t start_revision,
               etcd_watch_fn fn, void *arg, struct etcd_watch_end *end)
{
	struct etcd_watch_end scratch;
	struct watch w = { .c = c, .fn = fn, .arg = arg, .start = start_revision,
	                   .why = STRBUF_INIT, .line = STRBUF_INIT,
	                   .probe_body = { STRBUF_INIT, 0 } };
	struct json_object *body = NULL, *cr = NULL;
	struct etcd_req rq = { .path = "/v3/watch" };
	char what[160], *s = NULL;
	size_t n, elen;
	char *rend = NULL;
	int err;

	w.end = end ? end : &scratch;
	w.end->next_revision = start_revision;
	w.end->compact_revision = 0;
	conn_what(what, sizeof what, "watch", prefix ? prefix : "");
	rq.what = what;
	if ((err = conn_begin(c)) < 0)
		return err;
	if (!prefix || !fn || start_revision < 0) {
		conn_fail(c, what, "needs a prefix, a callback and a revision >= 0");
		return -EINVAL;
	}
	n = strlen(prefix);
	err = -ENOMEM;
	if (!(rend = malloc(n + 1)) || !(body = json_object_new_object()) ||
	    !(cr = json_object_new_object()))
		goto nomem;
	ej_prefix_end(prefix, n, rend, &elen);
	if ((n ? ej_add_b64(cr, "key", prefix, n) : ej_add_b64(cr, "key", "", 1)) < 0 ||
	    ej_add_b64(cr, "range_end", rend, elen) < 0 ||
	    (start_revision && ej_add_i64(cr, "start_revision", start_revision) < 0) ||
	    json_object_object_add(cr, "fragment", json_object_new_boolean(1)) < 0 ||
	    json_object_object_add(cr, "progress_notify", json_object_new_boolean(1)) < 0)
		goto nomem;
	if (json_object_object_add(body, "create_request", cr) < 0)
		goto nomem;
	cr = NULL;
	if (ej_dump(body, &s, &rq.len) < 0)
		goto nomem;
	rq.body = s;
	err = conn_call(c, &rq, watch_attempt, &w, NULL, NULL);
	goto out;
nomem:
	conn_fail(c, what, "out of memory");
out:
	json_object_put(cr);
	json_object_put(body);
	free(rend);
	free(s);
	sb_release(&w.why);
	sb_release(&w.line);
	return err;
}

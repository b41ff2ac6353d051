/* A call: attempts over the endpoints within the call's time budget, the
 * way etcd's clientv3 bounds each call with a context deadline; a token
 * taken first where the client authenticates (etcd_auth.c), and once
 * more when a member says it expired. */
#include "etcd_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An attempt shorter than this cannot even connect: stop instead. */
#define MIN_ATTEMPT_MS 5
/* After a timeout, later attempts of the call get half of what is left,
 * but not less than this: when a leader dies, a follower holds a request
 * it forwarded to the dead leader until the timeout, while the cluster
 * elects a new one within about 1 s; half the rest leaves time for one
 * more member, which by then knows the new leader. */
#define SPLIT_MIN_MS 250
/* The pause after a round of endpoints that all failed: 25 ms doubling
 * to 400 ms, each between half and all of that, so that a call spends its
 * budget on a few well-spread rounds (etcd re-electing a leader needs
 * about 1 s) and many clients do not retry in step. */
#define PAUSE_FIRST_MS 25
#define PAUSE_MAX_SHIFT 4
/* Distinct failures a message lists. */
#define LOG_ENTRIES 6

/* ---- the call: attempts over the endpoints -------------------------------- */

struct call_log {
	char text[LOG_ENTRIES][240];
	unsigned count[LOG_ENTRIES];
	size_t n;
	unsigned dropped;
};

static void log_add(struct call_log *log, const char *ep, const struct strbuf *why)
{
	char t[240];

	snprintf(t, sizeof t, "%s: %s", ep, sb_str(why));
	for (size_t i = 0; i < log->n; i++)
		if (!strcmp(log->text[i], t)) {
			log->count[i]++;
			return;
		}
	if (log->n == LOG_ENTRIES) {
		log->dropped++;
		return;
	}
	memcpy(log->text[log->n], t, sizeof t);
	log->count[log->n++] = 1;
}

static void log_message(struct etcd_client *c, const char *what, const struct call_log *log,
                        int64_t gave_up_ms)
{
	sb_reset(&c->msg);
	sb_addf(&c->msg, "etcd %s: ", what);
	for (size_t i = 0; i < log->n; i++) {
		sb_addf(&c->msg, "%s%s", i ? "; " : "", log->text[i]);
		if (log->count[i] > 1)
			sb_addf(&c->msg, " (%u times)", log->count[i]);
	}
	if (log->dropped)
		sb_addf(&c->msg, "; %u more failures", log->dropped);
	if (gave_up_ms >= 0)
		sb_addf(&c->msg, "; gave up after %lld ms (the bound is %u ms)",
		        (long long)gave_up_ms, c->total_ms);
	conn_scrub(c, &c->msg);
}

/* Sleeps ms, or less when interrupted. */
static void conn_sleep(struct etcd_client *c, long ms)
{
	if (ms > 0 && !atomic_load(&c->intr))
		curl_multi_poll(c->multi, NULL, 0, (int)ms, NULL);
}

/* Failures that may pass within the budget (an election, a restart);
 * the others (TLS refused, not etcd) would only repeat. */
static bool transient(int err)
{
	return err == -ETIMEDOUT || err == -ECONNREFUSED || err == -EHOSTUNREACH ||
	       err == -ENETUNREACH || err == -ECONNRESET || err == -EAGAIN;
}

static bool need_token(const struct etcd_client *c, const struct etcd_req *rq)
{
	return c->user && !c->token && !c->auth_off && !rq->noauth;
}

int conn_call(struct etcd_client *c, const struct etcd_req *rq,
              conn_attempt_fn fn, void *arg, struct json_object **reply,
              bool *uncertain)
{
	struct call_log log = { .n = 0 };
	int64_t start = conn_now_ms(), deadline = start + c->total_ms;
	bool reauthed = false, maybe = false, timed_out = false, passing = false;
	size_t tries = 0;
	unsigned rounds = 0;
	int best = 0, err;

	if (reply)
		*reply = NULL;
	c->call_first = c->cur;
	for (;;) {
		struct etcd_attempt at = { .err = 0, .action = ERR_FINAL, .why = STRBUF_INIT };
		int64_t left = deadline - conn_now_ms();
		bool authing = need_token(c, rq);

		if (left < MIN_ATTEMPT_MS) {
			err = best ? best : -ETIMEDOUT;
			if (!log.n) {
				struct strbuf w = STRBUF_INIT;

				sb_adds(&w, "no time left for an attempt");
				log_add(&log, c->ep[c->cur].name, &w);
				sb_release(&w);
			}
			log_message(c, rq->what, &log, conn_now_ms() - start);
			break;
		}
		if (atomic_load(&c->intr)) {
			err = -EINTR;
			conn_fail(c, rq->what, "interrupted (the client is shutting down)");
			break;
		}
		unsigned t = left < c->attempt_ms ? (unsigned)left : c->attempt_ms;
		if (timed_out && left >= 2 * SPLIT_MIN_MS && t > left / 2)
			t = (unsigned)(left / 2);
		if (authing) {
			auth_attempt(c, t, &at);
			if (at.err == 0 && reauthed)
				c->stats.reauths++;
		} else {
			c->stats.attempts++;
			fn(c, rq, t, &at, arg);
		}
		if (at.err == 0) {
			sb_release(&at.why);
			if (authing)
				continue;
			if (reply)
				*reply = at.reply;
			else
				json_object_put(at.reply);
			if (uncertain)
				*uncertain = maybe;
			sb_reset(&c->msg);
			return 0;
		}
		if ((at.action == ERR_BAD_TOKEN || at.action == ERR_NEED_AUTH) && c->user &&
		    !reauthed && !rq->noauth) {
			/* Expired or unknown to this member: once more with a
			 * fresh token. */
			reauthed = true;
			json_object_put(at.reply);
			auth_forget(&c->token);
			c->auth_off = false;
			sb_release(&at.why);
			continue;
		}
		json_object_put(at.reply);
		log_add(&log, c->ep[c->cur].name, &at.why);
		sb_release(&at.why);
		maybe |= at.sent;
		timed_out |= at.err == -ETIMEDOUT;
		passing |= transient(at.err);
		if (!best || err_rank(at.err) >= err_rank(best))
			best = at.err;
		if (at.action != ERR_RETRY) {
			err = at.err;
			log_message(c, rq->what, &log, -1);
			if (at.rotate && c->nep > 1) {
				c->cur = (c->cur + 1) % c->nep;
				c->stats.failovers++;
			}
			break;
		}
		if (c->nep > 1) {
			c->cur = (c->cur + 1) % c->nep;
			c->stats.failovers++;
		}
		if (++tries < c->nep)
			continue;
		/* A round is over: another only if it may end differently. */
		if (rq->one_round || !passing) {
			err = best;
			log_message(c, rq->what, &log, -1);
			break;
		}
		long cap = PAUSE_FIRST_MS << (rounds < PAUSE_MAX_SHIFT ? rounds : PAUSE_MAX_SHIFT);
		long pause = cap / 2 + rand_r(&c->rnd) % (cap / 2 + 1);

		tries = 0;
		passing = false;
		rounds++;
		left = deadline - conn_now_ms() - MIN_ATTEMPT_MS;
		conn_sleep(c, pause < left ? pause : (long)left);
	}
	if (uncertain)
		*uncertain = maybe;
	return err;
}

static void unary(struct etcd_client *c, const struct etcd_req *rq, unsigned timeout_ms,
		  struct etcd_attempt *at, void *arg)
{
	(void)arg;
	conn_unary_attempt(c, rq, timeout_ms, at);
}

int conn_unary(struct etcd_client *c, const struct etcd_req *rq,
               struct json_object **reply, bool *uncertain)
{
	return conn_call(c, rq, unary, NULL, reply, uncertain);
}

int conn_unary_json(struct etcd_client *c, const char *what, const char *path,
                    struct json_object *body, struct json_object **reply,
                    bool *uncertain)
{
	struct etcd_req rq = { .what = what, .path = path };
	char *s = NULL;
	int err;

	if (!body || (err = ej_dump(body, &s, &rq.len)) < 0) {
		json_object_put(body);
		conn_fail(c, what, "out of memory");
		return -ENOMEM;
	}
	json_object_put(body);
	rq.body = s;
	err = conn_unary(c, &rq, reply, uncertain);
	free(s);
	return err;
}

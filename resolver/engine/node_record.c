/* The record a node publishes for verify: the encoder, and what readers
 * share; see node_record.h. */
#include "node_record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envfs_config.h"
#include "json.h"
#include "layer.h"
#include "node_digest.h"
#include "strbuf.h"
#include "text.h"

static const char hexd[] = "0123456789abcdef";

static void setmsg(char *msg, size_t msglen, const char *fmt, const char *a)
{
	if (msglen)
		snprintf(msg, msglen, fmt, a);
}

int node_name_check(const char *node, char *msg, size_t msglen)
{
	char why[96];
	size_t k, n = node ? strlen(node) : 0;

	if (!n) {
		setmsg(msg, msglen, "%s", "the node name is empty");
		return -EINVAL;
	}
	if (n > NODE_NAME_MAX) {
		snprintf(why, sizeof(why), "the node name is %zu bytes long (at most %d)", n,
			 NODE_NAME_MAX);
		setmsg(msg, msglen, "%s", why);
		return -EINVAL;
	}
	if (!strcmp(node, ".") || !strcmp(node, "..")) {
		setmsg(msg, msglen, "the node name '%s' is not a name", node);
		return -EINVAL;
	}
	for (k = 0; k < n; k++) {
		unsigned char c = (unsigned char)node[k];

		/* The name is a key segment: no '/', and only bytes that print
		 * the same everywhere (a status line, a launch log). */
		if (c <= 0x20 || c >= 0x7f || c == '/') {
			snprintf(why, sizeof(why), "the node name has %s0x%02x at byte %zu "
				 "(printable ASCII but '/' and space only)",
				 c == '/' ? "'/' " : "", c, k + 1);
			setmsg(msg, msglen, "%s", why);
			return -EINVAL;
		}
	}
	return 0;
}

int node_record_keys(const char *run_key, const char *node, char **summary_key,
		     char **detail_prefix)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

	if (summary_key)
		*summary_key = NULL;
	if (detail_prefix)
		*detail_prefix = NULL;
	if ((summary_key && sb_addf(&a, "%s/nodes/%s", run_key, node) < 0) ||
	    (detail_prefix && sb_addf(&b, "%s/node-dirs/%s/", run_key, node) < 0)) {
		sb_release(&a);
		sb_release(&b);
		return -ENOMEM;
	}
	if (summary_key)
		*summary_key = sb_detach(&a, NULL);
	if (detail_prefix)
		*detail_prefix = sb_detach(&b, NULL);
	return 0;
}

static int add_hex(struct strbuf *sb, const uint8_t *p, size_t n)
{
	size_t k;
	int err = 0;

	for (k = 0; k < n && !err; k++) {
		char two[2] = { hexd[p[k] >> 4], hexd[p[k] & 15] };

		err = sb_add(sb, two, 2);
	}
	return err;
}

static int add_digest(struct strbuf *sb, const char *key, const uint8_t *d)
{
	int err;

	if ((err = sb_addf(sb, ",\"%s\":\"", key)) < 0 || (err = add_hex(sb, d, SHA256_LEN)) < 0)
		return err;
	return sb_addc(sb, '"');
}

/* {"format":1,"node":... : the head both documents share. */
static int add_head(struct strbuf *sb, const char *node)
{
	int err;

	if ((err = sb_addf(sb, "{\"format\":%d", NODE_RECORD_FORMAT)) < 0)
		return err;
	return json_add_field(sb, false, "node", node, strlen(node));
}

/* One directory's detail. values: false leaves every value out (a detail
 * that would be too big with them). Counts what the digest covers. */
static int detail_render(const struct node_record_in *in, const struct snapshot *s,
			 bool values, struct strbuf *sb, uint8_t digest[SHA256_LEN],
			 uint32_t *nvars, uint32_t *nsecrets)
{
	struct sha256_stream h;
	uint8_t vh[SHA256_LEN];
	size_t k;
	bool first = true;
	int err;

	*nvars = *nsecrets = 0;
	if ((err = node_digest(s, digest)) < 0 || (err = add_head(sb, in->node)) < 0 ||
	    (err = json_add_field(sb, false, "backend", s->backend, strlen(s->backend))) < 0 ||
	    (err = json_add_field(sb, false, "arch", s->arch, strlen(s->arch))) < 0 ||
	    (err = add_digest(sb, "digest", digest)) < 0 ||
	    (err = sb_adds(sb, ",\"vars\":[")) < 0)
		return err;
	node_digest_init(&h);
	for (k = 0; k < s->nvars; k++) {
		const struct snap_var *v = &s->vars[k];

		if (!node_digest_counts(v))
			continue;
		(*nvars)++;
		if ((err = sb_adds(sb, first ? "{" : ",{")) < 0 ||
		    (err = json_add_field(sb, true, "name", v->name, v->name_len)) < 0)
			return err;
		first = false;
		if (v->secret) {
			(*nsecrets)++;
			node_digest_add(&h, v->name, v->name_len, NULL);
			if ((err = sb_adds(sb, ",\"secret\":true}")) < 0)
				return err;
			continue;
		}
		sha256(v->value, v->value_len, vh);
		node_digest_add(&h, v->name, v->name_len, vh);
		if ((err = add_digest(sb, "hash", vh)) < 0 ||
		    (err = sb_addf(sb, ",\"len\":%" PRIu32, v->value_len)) < 0)
			return err;
		if (values && v->value_len <= NODE_RECORD_VALUE_MAX &&
		    (err = json_add_field(sb, false, "value", v->value, v->value_len)) < 0)
			return err;
		/* Where it came from, for diff node:NAME. */
		if ((err = sb_addf(sb, ",\"layer\":\"%s\"", layer_name((enum layer)v->layer))) < 0 ||
		    (v->source && (err = json_add_field(sb, false, "source", v->source,
							strlen(v->source))) < 0))
			return err;
		if ((err = sb_addc(sb, '}')) < 0)
			return err;
	}
	node_digest_end(&h, vh);
	/* One walk makes both: they cannot disagree, but say so if they do. */
	if (memcmp(vh, digest, SHA256_LEN))
		return -EPROTO;
	return sb_adds(sb, "]}");
}

/* ,"errors":[...],"nerrors":N of s's error diagnostics, when it has
 * any. A diagnostic holds no secret's value (diag.h's rule). */
static int add_errors(struct strbuf *sb, const struct snapshot *s)
{
	struct strbuf one = STRBUF_INIT;
	size_t k, listed = 0, n = diag_count(&s->diags, DIAG_ERROR);
	int err = 0;

	if (!n)
		return 0;
	if ((err = sb_adds(sb, ",\"errors\":[")) < 0)
		return err;
	for (k = 0; k < s->diags.n && listed < NODE_RECORD_ERRORS_MAX && !err; k++) {
		if (s->diags.v[k].sev != DIAG_ERROR)
			continue;
		sb_reset(&one);
		if ((err = diag_format(&s->diags.v[k], &one)) < 0 ||
		    (listed && (err = sb_addc(sb, ',')) < 0))
			break;
		/* Cut at a UTF-8 boundary: the field stays a JSON string. */
		if (one.len > NODE_RECORD_ERROR_LEN) {
			size_t cut = NODE_RECORD_ERROR_LEN;

			while (cut && ((unsigned char)one.buf[cut] & 0xc0) == 0x80)
				cut--;
			one.len = cut;
		}
		if (utf8_valid(one.buf, one.len))
			err = json_add_string(sb, one.buf, one.len);
		else
			err = json_add_string(sb, "(not UTF-8)", 11);
		listed++;
	}
	sb_release(&one);
	if (err < 0)
		return err;
	return sb_addf(sb, "],\"nerrors\":%zu", n);
}

static int kv_set(struct node_record_kv *kv, char *key, struct strbuf *val)
{
	kv->key = key;
	kv->value = sb_detach(val, &kv->value_len);
	return kv->value ? 0 : -ENOMEM;
}

int node_record_build(const struct node_record_in *in, struct node_record_kvs *out,
		      char *msg, size_t msglen)
{
	struct strbuf sum = STRBUF_INIT, det = STRBUF_INIT;
	char *skey = NULL, *dprefix = NULL, *key = NULL;
	uint8_t digest[SHA256_LEN];
	uint32_t nvars, nsec;
	size_t k;
	int err;

	out->v = NULL;
	out->n = 0;
	if (msglen)
		msg[0] = '\0';
	if (!in->run_key || !in->run_key[0] || in->run_key[strlen(in->run_key) - 1] == '/') {
		setmsg(msg, msglen, "the run key '%s' is empty or ends in '/'",
		       in->run_key ? in->run_key : "");
		return -EINVAL;
	}
	if ((err = node_name_check(in->node, msg, msglen)) < 0)
		return err;
	err = -ENOMEM;
	if (!(out->v = calloc(in->ndirs + 1, sizeof(*out->v))) ||
	    node_record_keys(in->run_key, in->node, &skey, &dprefix) < 0)
		goto out;
	if (add_head(&sum, in->node) < 0 ||
	    sb_addf(&sum, ",\"version\":\"%s\"", ENVFS_VERSION) < 0 ||
	    (in->specs_digest && add_digest(&sum, "specs_digest", in->specs_digest) < 0) ||
	    (in->behind && json_add_field(&sum, false, "behind", in->behind, strlen(in->behind)) < 0) ||
	    sb_addf(&sum, ",\"revision\":%" PRId64 ",\"when_ms\":%" PRId64,
		    in->revision, in->when_ms) < 0 ||
	    (in->load_error && json_add_field(&sum, false, "load_error", in->load_error,
					 strlen(in->load_error)) < 0) ||
	    sb_adds(&sum, ",\"dirs\":[") < 0)
		goto out;
	for (k = 0; k < in->ndirs; k++) {
		const struct snapshot *s = in->dirs[k];

		sb_reset(&det);
		if ((err = detail_render(in, s, true, &det, digest, &nvars, &nsec)) < 0)
			goto out;
		if (det.len > NODE_RECORD_KV_MAX) {
			sb_reset(&det);
			if ((err = detail_render(in, s, false, &det, digest, &nvars, &nsec)) < 0)
				goto out;
		}
		if (det.len > NODE_RECORD_KV_MAX) {
			setmsg(msg, msglen, "%s: too many variables to publish the node record",
			       s->backend);
			err = -EMSGSIZE;
			goto out;
		}
		err = -ENOMEM;
		if (!(key = malloc(strlen(dprefix) + strlen(s->backend) + strlen(s->arch) + 2)))
			goto out;
		sprintf(key, "%s%s/%s", dprefix, s->backend, s->arch);
		if (kv_set(&out->v[out->n], key, &det) < 0)
			goto out;
		key = NULL;
		out->n++;
		if (sb_adds(&sum, k ? ",{" : "{") < 0 ||
		    json_add_field(&sum, true, "backend", s->backend, strlen(s->backend)) < 0 ||
		    json_add_field(&sum, false, "arch", s->arch, strlen(s->arch)) < 0 ||
		    add_digest(&sum, "digest", digest) < 0 ||
		    sb_addf(&sum, ",\"vars\":%" PRIu32 ",\"secrets\":%" PRIu32, nvars, nsec) < 0 ||
		    add_errors(&sum, s) < 0 || sb_addc(&sum, '}') < 0)
			goto out;
	}
	if (sb_adds(&sum, "]}") < 0)
		goto out;
	if (sum.len > NODE_RECORD_KV_MAX) {
		setmsg(msg, msglen, "%s", "too many directories to publish the node record");
		err = -EMSGSIZE;
		goto out;
	}
	if (kv_set(&out->v[out->n], skey, &sum) < 0)
		goto out;
	skey = NULL;
	out->n++;
	err = 0;
out:
	free(key);
	free(skey);
	free(dprefix);
	sb_release(&sum);
	sb_release(&det);
	return err;
}

int node_record_unpublishable(const struct node_record_in *in, const char *reason,
			      struct node_record_kvs *out)
{
	struct strbuf sum = STRBUF_INIT;
	char *skey = NULL;
	int err;

	out->v = NULL;
	out->n = 0;
	if (!in->run_key || !in->run_key[0] || in->run_key[strlen(in->run_key) - 1] == '/' ||
	    node_name_check(in->node, NULL, 0) < 0)
		return -EINVAL;
	err = -ENOMEM;
	if (!(out->v = calloc(1, sizeof(*out->v))) ||
	    node_record_keys(in->run_key, in->node, &skey, NULL) < 0)
		goto out;
	if (add_head(&sum, in->node) < 0 ||
	    sb_addf(&sum, ",\"version\":\"%s\",\"revision\":%" PRId64 ",\"when_ms\":%" PRId64,
		    ENVFS_VERSION, in->revision, in->when_ms) < 0 ||
	    json_add_field(&sum, false, "unpublishable", reason, strlen(reason)) < 0 ||
	    sb_adds(&sum, ",\"dirs\":[]}") < 0 || kv_set(&out->v[0], skey, &sum) < 0)
		goto out;
	skey = NULL;
	out->n = 1;
	err = 0;
out:
	free(skey);
	sb_release(&sum);
	return err;
}

void node_record_kvs_free(struct node_record_kvs *kvs)
{
	size_t k;

	if (!kvs)
		return;
	for (k = 0; k < kvs->n; k++) {
		free(kvs->v[k].key);
		free(kvs->v[k].value);
	}
	free(kvs->v);
	kvs->v = NULL;
	kvs->n = 0;
}

void node_summary_free(struct node_summary *s)
{
	size_t k;

	if (!s)
		return;
	for (k = 0; k < s->ndirs; k++) {
		size_t e;

		free(s->dirs[k].backend);
		free(s->dirs[k].arch);
		for (e = 0; e < s->dirs[k].nlisted; e++)
			free(s->dirs[k].errors[e]);
		free(s->dirs[k].errors);
	}
	free(s->dirs);
	free(s->load_error);
	free(s->unpublishable);
	free(s->node);
	free(s->version);
	free(s->behind);
	free(s);
}

void node_detail_free(struct node_detail *d)
{
	size_t k;

	if (!d)
		return;
	for (k = 0; k < d->nvars; k++) {
		free(d->vars[k].name);
		free(d->vars[k].value);
		free(d->vars[k].layer);
		free(d->vars[k].source);
	}
	free(d->vars);
	free(d->node);
	free(d->backend);
	free(d->arch);
	free(d);
}

void node_detail_digest(const struct node_detail *d, uint8_t out[SHA256_LEN])
{
	struct sha256_stream h;
	size_t k;

	node_digest_init(&h);
	for (k = 0; k < d->nvars; k++)
		node_digest_add(&h, d->vars[k].name, d->vars[k].name_len,
				d->vars[k].secret ? NULL : d->vars[k].hash);
	node_digest_end(&h, out);
}

/* What verify reads from etcd: every node's summary, and the detail of one
 * directory of one node, checked against the summary's digest. */
#include "verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text.h"

void verify_free_nodes(struct verify *vf)
{
	size_t k;

	for (k = 0; k < vf->n; k++)
		node_summary_free(vf->v[k].s);
	free(vf->v);
	vf->v = NULL;
	vf->n = 0;
	vf->api->range_free(&vf->range);
}

/* Reads every summary. 0, or -EIO when etcd failed (message printed). */
int verify_read_nodes(struct verify *vf)
{
	size_t k, plen = strlen(vf->nodes_prefix);
	int err;

	verify_free_nodes(vf);
	sb_reset(&vf->ghosts);
	if ((err = vf->api->get_prefix(vf->cli, vf->nodes_prefix, 0, &vf->range)) < 0) {
		fprintf(stderr, "primus-envfs: verify: reading %s: %s\n", vf->nodes_prefix,
			vf->api->errmsg(vf->cli));
		return -EIO;
	}
	/* More keys than one range returns: more nodes than --nodes allows. */
	if (vf->range.more)
		vf->too_many = true;
	if (!(vf->v = calloc(vf->range.n ? vf->range.n : 1, sizeof(*vf->v))))
		return -ENOMEM;
	for (k = 0; k < vf->range.n; k++) {
		const struct etcd_kv *kv = &vf->range.kvs[k];
		struct vnode *nd = &vf->v[vf->n];

		/* A summary's key is RUN/nodes/<node>: nothing deeper, which
		 * no mount writes (by hand, or another program's): said. */
		if (kv->key_len <= plen || strchr(kv->key + plen, '/')) {
			if (kv->key_len > plen &&
			    ((err = sb_adds(&vf->ghosts, "primus-envfs: verify: ")) < 0 ||
			     (err = verify_add_esc(&vf->ghosts, kv->key)) < 0 ||
			     (err = sb_adds(&vf->ghosts, ": not a node's record (a node's is "
					    "RUN/nodes/NODE, nothing deeper); ignored\n")) < 0))
				return err;
			continue;
		}
		/* A mount puts its record under its lease, which ends with it:
		 * one under none outlives every node (put by hand, or left by a
		 * copy or a restore of etcd), and counted it would stand for a
		 * node that is gone. */
		if (!kv->lease) {
			if ((err = sb_adds(&vf->ghosts, "primus-envfs: verify: ")) < 0 ||
			    (err = verify_add_esc(&vf->ghosts, kv->key + plen)) < 0 ||
			    (err = sb_adds(&vf->ghosts, ": a record under no lease (no mount keeps "
					   "it: put by hand, or left by a copy or a restore of "
					   "etcd); not counted as a node; etcdctl del ")) < 0 ||
			    (err = verify_add_esc(&vf->ghosts, kv->key)) < 0 ||
			    (err = sb_adds(&vf->ghosts, " removes it\n")) < 0)
				return err;
			continue;
		}
		nd->name = kv->key + plen;
		vf->n++;
		err = vf->api->decode_summary(kv->value, kv->value_len, &nd->s, nd->why,
					      sizeof(nd->why));
		if (err == -ENOMEM)
			return err;
		if (err == 0 && node_name_check(nd->name, nd->why, sizeof(nd->why)) < 0) {
			node_summary_free(nd->s);
			nd->s = NULL;
		} else if (err == 0 && strcmp(nd->s->node, nd->name)) {
			snprintf(nd->why, sizeof(nd->why), "the record names node '%.64s'",
				 nd->s->node);
			node_summary_free(nd->s);
			nd->s = NULL;
		} else if (err == 0 && nd->s->unpublishable) {
			/* Its last record is gone: what it serves is not known. */
			snprintf(nd->why, sizeof(nd->why), "%s", nd->s->unpublishable);
			nd->unpublishable = true;
			node_summary_free(nd->s);
			nd->s = NULL;
		}
	}
	return 0;
}

/* The detail of node's directory d, checked against the summary's
 * digest (read twice when a publish raced the read). NULL with why. */
struct node_detail *verify_read_detail(struct verify *vf, const char *node,
				       const struct node_dir_sum *d, char *why, size_t whylen)
{
	struct etcd_range r = { 0 };
	struct node_detail *det = NULL;
	uint8_t dg[SHA256_LEN];
	char *key = NULL;
	int tries, err;

	if (node_record_keys(vf->run_key, node, NULL, &key) < 0 ||
	    !(key = realloc(key, strlen(key) + strlen(d->backend) + strlen(d->arch) + 2))) {
		free(key);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	strcat(strcat(strcat(key, d->backend), "/"), d->arch);
	for (tries = 0; tries < 2 && !det; tries++) {
		if (tries) {
			struct timespec ts = { 0, 200 * 1000000L };

			nanosleep(&ts, NULL);
		}
		vf->api->range_free(&r);
		if (vf->api->get(vf->cli, key, &r) < 0) {
			snprintf(why, whylen, "reading %s: %s", key, vf->api->errmsg(vf->cli));
			break;
		}
		if (!r.n) {
			snprintf(why, whylen, "no detail record %s", key);
			continue;
		}
		err = vf->api->decode_detail(r.kvs[0].value, r.kvs[0].value_len, &det, why, whylen);
		if (err < 0)
			continue;
		node_detail_digest(det, dg);
		if (memcmp(dg, d->digest, SHA256_LEN)) {
			snprintf(why, whylen, "the detail %s does not match the summary (a publish "
				 "during the read? run verify again)", key);
			node_detail_free(det);
			det = NULL;
		}
	}
	vf->api->range_free(&r);
	free(key);
	return det;
}

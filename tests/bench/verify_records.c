/* verify_records: puts N node records of one run in etcd, as N mounts
 * with --sync would (node_record_build over the shipped specs' 17
 * directories), for the verify scenario of tests/bench/verify_bench.sh:
 *
 *   verify_records --endpoints HOST:PORT --run ID --nodes 256 [--odd I]
 *                  [--prefix P] [--specs DIR]
 *
 * Node i is "node<i>" with NODE_RANK=i (left out of the digests); --odd I
 * gives node I another XLA_FLAGS (an image that bakes its own), so verify
 * has one odd node to explain. One txn per node. Prints the summaries'
 * and details' total sizes. Exit 0, or 1 with a message. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd.h"
#include "node_record.h"
#include "resolve.h"

/* Node rank's environment in a run of nodes nodes: NNODES too, or every
 * node but node 0 carries the launcher's NODE_RANK < NNODES error and
 * verify's gate fails. */
static struct resolution *resolve_node(const char *specs, int rank, int nodes, bool odd,
				       struct world **w)
{
	static char env[3][64];
	const char *e[3] = { env[0], env[1], env[2] };
	struct envfs_inputs in = { .specs_dir = specs, .env = e, .nenv = odd ? 3 : 2 };
	struct resolution *r = NULL;

	snprintf(env[0], sizeof(env[0]), "NODE_RANK=%d", rank);
	snprintf(env[1], sizeof(env[1]), "NNODES=%d", nodes);
	snprintf(env[2], sizeof(env[2]), "XLA_FLAGS=--xla_image_baked=%d", rank);
	if (world_load(&in, w) < 0 || resolve_all(*w, NULL, &r) < 0) {
		fprintf(stderr, "verify_records: cannot resolve %s\n", specs);
		exit(1);
	}
	return r;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "endpoints", required_argument, NULL, 'e' }, { "run", required_argument, NULL, 'r' },
		{ "nodes", required_argument, NULL, 'n' }, { "odd", required_argument, NULL, 'o' },
		{ "prefix", required_argument, NULL, 'p' }, { "specs", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ep = NULL, *run = NULL, *prefix = "/primus-envfs", *specs = "specs";
	struct etcd_opts eo = ETCD_OPTS_INIT;
	struct etcd_client *c = NULL;
	size_t sum_bytes = 0, det_bytes = 0;
	int nodes = 0, odd = -1, i, ch;
	int64_t lease = 0;
	char msg[512], run_key[512];

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'e': ep = optarg; break;
		case 'r': run = optarg; break;
		case 'n': nodes = atoi(optarg); break;
		case 'o': odd = atoi(optarg); break;
		case 'p': prefix = optarg; break;
		case 's': specs = optarg; break;
		default: return 2;
		}
	}
	if (!ep || !run || nodes <= 0) {
		fprintf(stderr, "usage: verify_records --endpoints EP --run ID --nodes N [--odd I]\n");
		return 2;
	}
	snprintf(run_key, sizeof(run_key), "%s/runs/%s", prefix, run);
	eo.total_ms = 5000;
	if (etcd_client_new(&c, ep, &eo, msg, sizeof(msg)) < 0 || etcd_connect(c, NULL) < 0) {
		fprintf(stderr, "verify_records: %s\n", c ? etcd_errmsg(c) : msg);
		return 1;
	}
	/* Under a lease, as a mount puts its record: verify counts no record
	 * under none. Long enough for the benchmark's runs. */
	if (etcd_lease_grant(c, 3600, &lease, NULL) < 0) {
		fprintf(stderr, "verify_records: %s\n", etcd_errmsg(c));
		return 1;
	}
	for (i = 0; i < nodes; i++) {
		struct world *w = NULL;
		struct resolution *r = resolve_node(specs, i, nodes, i == odd, &w);
		char name[32];
		struct node_record_in in = { .run_key = run_key, .node = name, .revision = 1,
					     .when_ms = 1, .dirs = (const struct snapshot *const *)r->dirs,
					     .ndirs = r->ndirs };
		struct node_record_kvs kvs;
		struct etcd_op *ops;
		struct etcd_txn_result res;
		size_t k;

		snprintf(name, sizeof(name), "node%d", i);
		if (node_record_build(&in, &kvs, msg, sizeof(msg)) < 0 ||
		    !(ops = calloc(kvs.n, sizeof(*ops)))) {
			fprintf(stderr, "verify_records: %s\n", msg);
			return 1;
		}
		for (k = 0; k < kvs.n; k++) {
			ops[k] = (struct etcd_op){ .type = ETCD_OP_PUT, .key = kvs.v[k].key,
						   .value = kvs.v[k].value,
						   .value_len = kvs.v[k].value_len, .lease = lease };
			if (k + 1 == kvs.n)
				sum_bytes += kvs.v[k].value_len;
			else
				det_bytes += kvs.v[k].value_len;
		}
		if (etcd_txn(c, NULL, 0, ops, kvs.n, NULL, 0, &res) < 0) {
			fprintf(stderr, "verify_records: %s\n", etcd_errmsg(c));
			return 1;
		}
		free(ops);
		node_record_kvs_free(&kvs);
		resolution_free(r);
		world_free(w);
	}
	printf("records: %d nodes, summaries %zu bytes, details %zu bytes\n", nodes, sum_bytes,
	       det_bytes);
	etcd_client_free(c);
	return 0;
}

/* primus-envfs verify: the gate a launch script runs before `srun train`.
 * Reads the records the run's nodes publish in etcd (node_record.h) and
 * says whether the N nodes are registered and equal, naming each odd
 * node and the variables that differ, with both values when not secret,
 * and each node whose environment carries an error diagnostic (the
 * launcher would exit, or the run would be wrong). Each difference and
 * each error is said once, with the directories it applies to. Every
 * byte taken from etcd (keys, names, values, messages) is printed
 * escaped: a key must not forge a line of the verdict.
 *
 * Exit 0 equal and without errors; 1 some node differs, carries an
 * error, or has no current record; 2 not N nodes registered after the
 * wait; 3 etcd cannot be reached (or refused a read); 64 the command line.
 *
 * Only the summaries (RUN/nodes/) are read for every node; the details
 * (RUN/node-dirs/<node>/<backend>/<arch>) only for a directory where an
 * odd node and the reference differ, so 256 nodes cost one range of a
 * few hundred kilobytes. The reference is the largest group of equal
 * nodes (on a tie, the one holding the first node by name). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "sha256.h"
#include "commands.h"
#include "node_record.h"
#include "strbuf.h"
#include "sync_opts.h"
#include "text.h"
#include "verify.h"

static const char verify_usage[] =
	"usage: primus-envfs verify --sync etcd://HOST:PORT[,...] [--run ID] --nodes N\n"
	"                           [--wait S] [-b BACKEND] [-a ARCH] [-q] [SYNC]\n"
	"\n"
	"Compare the environment every node of the run publishes (each mount with\n"
	"--sync registers its node), before launch. Variables marked scope: node\n"
	"(NODE_RANK, ...) are left out; secrets count by name, never by value.\n"
	"\n"
	"  --nodes N               the run's node count (required)\n"
	"  --wait S                wait up to S seconds (decimals allowed) for N\n"
	"                          nodes to register (default 0: read once)\n"
	"  -b, --backend BACKEND   compare this backend's directories only\n"
	"  -a, --arch ARCH         compare this arch's directories only\n"
	"  -q, --quiet             print nothing: the exit status tells\n"
	"  -h, --help              print this help\n"
	"\n"
	"Exit status: 0 N nodes registered and equal; 1 a node differs (each odd\n"
	"node and variable named, both values shown unless secret), carries an\n"
	"error diagnostic (named), cannot publish a current record, or is behind\n"
	"(it stopped applying the run's changes); 2 not N nodes registered after\n"
	"the wait (the registered ones named); 3 etcd cannot be reached; 64 the\n"
	"command line is wrong.\n"
	"\n"
	"SYNC:\n";

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int run(struct verify *vf, unsigned long nodes, double wait_s)
{
	int64_t deadline = mono_ms() + (int64_t)(wait_s * 1000);
	char msg[1024];
	int err;

	if ((err = sync_load(&vf->api, msg, sizeof(msg))) < 0) {
		fprintf(stderr, "primus-envfs: verify: %s\n", msg);
		return VERIFY_EX_ETCD;
	}
	if (!ENVFS_SYNC_HAS(vf->api, decode_detail)) {
		fprintf(stderr, "primus-envfs: verify: the module %s is older than this "
			"program (no record decoder)\n", sync_module_path());
		return VERIFY_EX_ETCD;
	}
	if ((err = vf->api->open(&vf->cli, &vf->so, msg, sizeof(msg))) < 0) {
		fprintf(stderr, "primus-envfs: verify: --sync: %s\n", msg);
		return err == -EINVAL ? CLI_EX_USAGE : VERIFY_EX_ETCD;
	}
	if (vf->api->connect(vf->cli, NULL) < 0) {
		fprintf(stderr, "primus-envfs: verify: etcd cannot be reached (--sync %s): %s\n",
			vf->so.endpoints, vf->api->errmsg(vf->cli));
		return VERIFY_EX_ETCD;
	}
	for (;;) {
		if ((err = verify_read_nodes(vf)) < 0)
			return err == -EIO ? VERIFY_EX_ETCD : err;
		if (vf->n >= nodes || mono_ms() >= deadline)
			break;
		{
			struct timespec ts = { 0, POLL_MS * 1000000L };

			nanosleep(&ts, NULL);
		}
	}
	if (vf->too_many) {
		err = sb_addf(&vf->out, "verify: run %s: more than %zu nodes registered, --nodes "
			      "says %lu\n", vf->so.run, vf->n, nodes);
		return err < 0 ? err : VERIFY_EX_MISSING;
	}
	if (vf->n != nodes) {
		if ((err = sb_addf(&vf->out, "verify: run %s: %zu node%s registered, --nodes "
				   "says %lu%s%s", vf->so.run, vf->n, vf->n == 1 ? "" : "s",
				   nodes, vf->n < nodes && wait_s > 0 ? " (after the wait)" : "",
				   vf->n ? ": " : "")) < 0 ||
		    (err = verify_add_names(&vf->out, vf, -1, 0)) < 0 ||
		    (err = sb_addc(&vf->out, '\n')) < 0)
			return err;
		return VERIFY_EX_MISSING;
	}
	return verify_compare(vf);
}

int cmd_verify(int argc, char **argv)
{
	enum { OPT_NODES = 0x300, OPT_WAIT };
	static const struct option longopts[] = {
		SYNC_LONG_OPTIONS,
		{ "nodes", required_argument, NULL, OPT_NODES },
		{ "wait", required_argument, NULL, OPT_WAIT },
		{ "backend", required_argument, NULL, 'b' },
		{ "arch", required_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct verify vf = { .out = STRBUF_INIT, .ghosts = STRBUF_INIT };
	unsigned long nodes = 0;
	double wait_s = 0;
	char *end;
	int c, rc = CLI_EX_USAGE, err;
	size_t n;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":b:a:qh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_NODES:
			errno = 0;
			nodes = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || !nodes ||
			    nodes > ETCD_RANGE_MAX) {
				fprintf(stderr, "primus-envfs: verify: --nodes '%s' is not a count "
					"from 1 to %d\n", optarg, ETCD_RANGE_MAX);
				goto out;
			}
			break;
		case OPT_WAIT:
			errno = 0;
			wait_s = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(wait_s >= 0) || wait_s > 86400) {
				fprintf(stderr, "primus-envfs: verify: --wait '%s' is not a number "
					"of seconds from 0 to 86400\n", optarg);
				goto out;
			}
			break;
		case 'b':
			vf.backend = optarg;
			break;
		case 'a':
			vf.arch = optarg;
			break;
		case 'q':
			vf.quiet = true;
			break;
		case 'h':
			printf("%s%s", verify_usage, sync_opts_help);
			rc = 0;
			goto out;
		case ':':
			fprintf(stderr, "primus-envfs: verify: %s needs an argument (see "
				"primus-envfs verify --help)\n", argv[optind - 1]);
			goto out;
		case '?':
			fprintf(stderr, "primus-envfs: verify: unknown option '%s' (see "
				"primus-envfs verify --help)\n", argv[optind - 1]);
			goto out;
		default:
			if (SYNC_IS_KEY(c) && sync_opts_take(&vf.so, c, optarg, true) == 0)
				break;
			goto out;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "primus-envfs: verify: unexpected argument '%s' (see "
			"primus-envfs verify --help)\n", argv[optind]);
		goto out;
	}
	if ((err = sync_opts_finish(&vf.so)) < 0) {
		rc = err == -EINVAL ? CLI_EX_USAGE : VERIFY_EX_ETCD;
		goto out;
	}
	if (!vf.so.endpoints || !nodes) {
		fprintf(stderr, "primus-envfs: verify: %s is required (see primus-envfs verify "
			"--help)\n", !vf.so.endpoints ? "--sync" : "--nodes");
		goto out;
	}
	n = strlen(vf.so.prefix) + strlen(vf.so.run) + sizeof("/runs//nodes/");
	if (!(vf.run_key = malloc(n)) || !(vf.nodes_prefix = malloc(n))) {
		fprintf(stderr, "primus-envfs: verify: %s\n", strerror(ENOMEM));
		rc = VERIFY_EX_ETCD;
		goto out;
	}
	snprintf(vf.run_key, n, "%s/runs/%s", vf.so.prefix, vf.so.run);
	snprintf(vf.nodes_prefix, n, "%s/nodes/", vf.run_key);
	rc = run(&vf, nodes, wait_s);
	if (rc < 0) {
		fprintf(stderr, "primus-envfs: verify: %s\n", strerror(-rc));
		rc = VERIFY_EX_ETCD;
	}
	if (!vf.quiet && vf.ghosts.len)
		fwrite(vf.ghosts.buf, 1, vf.ghosts.len, stderr);
	if (!vf.quiet && vf.out.len)
		fwrite(vf.out.buf, 1, vf.out.len, stdout);
out:
	if (vf.api) {
		verify_free_nodes(&vf);
		if (vf.cli)
			vf.api->close(vf.cli);
	}
	sb_release(&vf.out);
	sb_release(&vf.ghosts);
	sync_opts_release(&vf.so);
	free(vf.run_key);
	free(vf.nodes_prefix);
	return rc;
}

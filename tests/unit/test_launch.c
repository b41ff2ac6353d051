/* The launch order of SPEC 3, its fixed point (3.0), the integer readings
 * of 3.2 and the config block of 5, over the shipped specs on a fake node
 * (tests/fixtures/host/gfx950): what a real Primus launch hands the
 * training process, step by step. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "resolve.h"

#define MAXN 16

struct run {
	const char *config_text;        /* written to a temp file, or NULL */
	const char *image_text;         /* docker env-file text, or NULL */
	const char *env[MAXN];          /* --env */
	char *host[MAXN];               /* the daemon's environment */
	const char *backend, *arch;     /* default maxtext/gfx950 */
	struct override_set ov;
	/* results */
	char dir[64];
	char *paths[3];
	struct world *w;
	struct snapshot *s;
};

static char *write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char *path = NULL;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

static const char *specs_dir(void)
{
	const char *d = getenv("ENVFS_SPECS");

	assert_non_null(d);
	return d;
}

static char *host_root(const char *tree)
{
	const char *d = getenv("ENVFS_FIXTURES");
	char *p = NULL;

	assert_non_null(d);
	assert_true(asprintf(&p, "%s/host/%s", d, tree) > 0);
	return p;
}

static size_t count(const char *const *v)
{
	size_t n = 0;

	while (n < MAXN && v[n])
		n++;
	return n;
}

static const struct snapshot *launch(struct run *r)
{
	struct envfs_inputs in = { 0 };
	const char *inherit[1];

	strcpy(r->dir, "/tmp/envfs-launch-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	in.specs_dir = specs_dir();
	r->paths[0] = host_root("gfx950");
	in.host_root = r->paths[0];
	if (r->config_text) {
		r->paths[1] = write_file(r->dir, "exp.yaml", r->config_text, strlen(r->config_text));
		in.config = r->paths[1];
	}
	if (r->image_text) {
		r->paths[2] = write_file(r->dir, "image.env", r->image_text, strlen(r->image_text));
		inherit[0] = r->paths[2];
		in.inherit = inherit;
		in.ninherit = 1;
	}
	in.env = r->env;
	in.nenv = count(r->env);
	in.host_env = r->host;
	assert_int_equal(world_load(&in, &r->w), 0);
	assert_int_equal(resolve_dir(r->w, &r->ov, r->backend ? r->backend : "maxtext",
				     r->arch ? r->arch : "gfx950", &r->s), 0);
	return r->s;
}

static void done(struct run *r)
{
	char *cmd = NULL;
	size_t k;

	snapshot_unref(r->s);
	world_free(r->w);
	override_set_release(&r->ov);
	for (k = 0; k < 3; k++)
		free(r->paths[k]);
	assert_true(asprintf(&cmd, "rm -rf '%s'", r->dir) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	memset(r, 0, sizeof(*r));
}

static void ov(struct run *r, const char *name, const char *value)
{
	assert_int_equal(override_set_put(&r->ov, r->backend ? r->backend : "maxtext",
					  r->arch ? r->arch : "gfx950", name, value,
					  value ? strlen(value) : 0), 0);
}

static const struct snap_var *var(const struct snapshot *s, const char *name)
{
	return snapshot_find(s, name, strlen(name));
}

static void value_is(const struct snapshot *s, const char *name, const char *want)
{
	const struct snap_var *v = var(s, name);

	if (!v || !v->set || !v->exported) {
		fprintf(stderr, "%s: want \"%s\", but it is not exported\n", name, want);
		fail();
	}
	if (strlen(want) != v->value_len || memcmp(v->value, want, v->value_len)) {
		fprintf(stderr, "%s: want \"%s\"\n%*s got \"%.*s\"\n", name, want,
			(int)strlen(name), "", (int)v->value_len, v->value);
		fail();
	}
}

static void not_exported(const struct snapshot *s, const char *name)
{
	const struct snap_var *v = var(s, name);

	if (v && v->exported) {
		fprintf(stderr, "%s: want it not exported, got \"%.*s\"\n", name,
			(int)v->value_len, v->value);
		fail();
	}
}

static void layer_is(const struct snapshot *s, const char *name, enum layer want)
{
	const struct snap_var *v = var(s, name);

	assert_non_null(v);
	if (v->layer != want) {
		fprintf(stderr, "%s: want layer %s, got %s\n", name, layer_name(want),
			layer_name((enum layer)v->layer));
		fail();
	}
}

/* The one diagnostic of sev holding every needle (NULL-ended). */
static const struct diag *diag_with(const struct snapshot *s, enum diag_sev sev, ...)
{
	const struct diag *found = NULL;
	size_t k;

	for (k = 0; k < s->diags.n; k++) {
		const struct diag *d = &s->diags.v[k];
		const char *needle;
		bool all = d->sev == sev;
		va_list ap;

		va_start(ap, sev);
		while (all && (needle = va_arg(ap, const char *)))
			all = strstr(d->msg, needle) != NULL;
		va_end(ap);
		if (all) {
			found = d;
			break;
		}
	}
	if (!found) {
		fprintf(stderr, "no %s with those words among:\n", diag_sev_name(sev));
		for (k = 0; k < s->diags.n; k++)
			fprintf(stderr, "  %s: %s\n", diag_sev_name(s->diags.v[k].sev),
				s->diags.v[k].msg);
		fail();
	}
	return found;
}

static bool any_diag_has(const struct snapshot *s, const char *needle)
{
	size_t k;

	for (k = 0; k < s->diags.n; k++)
		if (strstr(s->diags.v[k].msg, needle))
			return true;
	return false;
}

/* ---- step 4: the runner sees only what is set before it ----------------- */

static void test_launch__config_primus_deterministic_is_never_seen_by_the_runner(void **state)
{
	struct run r = { .config_text = "env:\n  PRIMUS_DETERMINISTIC: \"1\"\n" };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "PRIMUS_DETERMINISTIC", "1");
	not_exported(s, "NCCL_ALGO");
	not_exported(s, "TORCH_COMPILE_DISABLE");
	value_is(s, "NVTE_ALLOW_NONDETERMINISTIC_ALGO", "1");   /* maxtext's default */
	diag_with(s, DIAG_WARNING, "PRIMUS_DETERMINISTIC is set in the config's env: block",
		  "NCCL_ALGO", "with --env", NULL);
	done(&r);
}

static void test_launch__cli_primus_deterministic_and_cli_nccl_algo(void **state)
{
	struct run r = { .env = { "PRIMUS_DETERMINISTIC=1", "NCCL_ALGO=Tree" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	/* The runner exports Ring unconditionally; --env comes again after it. */
	value_is(s, "NCCL_ALGO", "Tree");
	layer_is(s, "NCCL_ALGO", LAYER_CLI);
	value_is(s, "TORCH_COMPILE_DISABLE", "1");
	value_is(s, "NVTE_ALLOW_NONDETERMINISTIC_ALGO", "0");   /* runner set, before maxtext */
	done(&r);
}

static void test_launch__cli_beats_an_unconditional_runner_export(void **state)
{
	struct run r = { .env = { "NVTE_ROCM_ENABLE_MXFP8=0" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "NVTE_ROCM_ENABLE_MXFP8", "0");
	layer_is(s, "NVTE_ROCM_ENABLE_MXFP8", LAYER_CLI);
	assert_non_null(strstr(var(s, "NVTE_ROCM_ENABLE_MXFP8")->shadowed, "runner=1"));
	done(&r);
}

static void test_launch__image_values_the_runner_replaces(void **state)
{
	struct run r = { .image_text = "HIP_VISIBLE_DEVICES=0,1\nNVTE_ROCM_ENABLE_MXFP8=0\n"
				       "NCCL_IB_GID_INDEX=\nNCCL_CROSS_NIC=\nNVTE_DEBUG=1\n" };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "HIP_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7");  /* mode: set */
	value_is(s, "NVTE_ROCM_ENABLE_MXFP8", "1");             /* mode: set */
	value_is(s, "NCCL_IB_GID_INDEX", "3");                  /* ${X:-3}: empty */
	value_is(s, "NCCL_CROSS_NIC", "0");
	layer_is(s, "NCCL_IB_GID_INDEX", LAYER_RUNNER);
	value_is(s, "NVTE_DEBUG", "1");                         /* set: kept */
	layer_is(s, "NVTE_DEBUG", LAYER_IMAGE);
	done(&r);
}

static void test_launch__config_gpus_per_node_does_not_change_the_device_list(void **state)
{
	struct run r = { .config_text = "env:\n  GPUS_PER_NODE: \"4\"\n" };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "GPUS_PER_NODE", "4");
	value_is(s, "HIP_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7");
	diag_with(s, DIAG_WARNING, "GPUS_PER_NODE is set in the config's env: block",
		  "HIP_VISIBLE_DEVICES", NULL);
	done(&r);

	r = (struct run){ .env = { "GPUS_PER_NODE=4" } };
	s = launch(&r);
	value_is(s, "HIP_VISIBLE_DEVICES", "0,1,2,3");
	done(&r);
}

/* bash arithmetic: $((GPUS_PER_NODE - 1)) reads 010 as octal 8. */
static void test_launch__runner_integers_are_bash_arithmetic(void **state)
{
	struct run r = { .env = { "GPUS_PER_NODE=010" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "HIP_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7");
	done(&r);

	r = (struct run){ .env = { "GPUS_PER_NODE= 2 " } };
	s = launch(&r);
	value_is(s, "HIP_VISIBLE_DEVICES", "0,1");
	done(&r);

	r = (struct run){ .env = { "GPUS_PER_NODE=08" } };
	s = launch(&r);
	value_is(s, "HIP_VISIBLE_DEVICES", "");
	diag_with(s, DIAG_WARNING, "HIP_VISIBLE_DEVICES", "GPUS_PER_NODE",
		  "too great for its base", NULL);
	done(&r);
}

/* env_spec.py: int(os.getenv("NNODES", "1")), ValueError -> 1. */
static void test_launch__backend_integers_are_python_int(void **state)
{
	struct run r = { .env = { "NNODES= 2", "MASTER_ADDR=10.0.0.9" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "JAX_COORDINATOR_IP", "10.0.0.9");
	value_is(s, "JAX_COORDINATOR_PORT", "1234");
	done(&r);

	r = (struct run){ .env = { "NNODES=010" } };
	s = launch(&r);
	value_is(s, "JAX_COORDINATOR_IP", "localhost");      /* int("010") is 10 */
	done(&r);

	r = (struct run){ .env = { "NNODES=two" } };
	s = launch(&r);
	not_exported(s, "JAX_COORDINATOR_IP");
	diag_with(s, DIAG_WARNING, "NNODES is not an integer to Python's int()",
		  "the fallback 1 applies", NULL);
	done(&r);
}

/* ---- the launcher's own checks: primus-cli-direct.sh STEP 4.7 and -------
 * ---- runner/lib/validation.sh, which exit before the training starts ---- */

static void test_launch__a_distributed_value_the_launcher_refuses_is_an_error(void **state)
{
	struct run r = { .env = { "NNODES=+3" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	/* STEP 4.7 wants ^[1-9][0-9]*$; the value is still what is shown. */
	diag_with(s, DIAG_ERROR, "NNODES must be a positive integer (got '+3')",
		  "the launcher exits", NULL);
	value_is(s, "NNODES", "+3");
	done(&r);

	/* "010" is octal to bash and 10 to Python, but STEP 4.7 refuses it. */
	r = (struct run){ .env = { "NNODES=010" } };
	s = launch(&r);
	diag_with(s, DIAG_ERROR, "NNODES must be a positive integer (got '010')", NULL);
	done(&r);

	r = (struct run){ .env = { "NODE_RANK=-1" } };
	s = launch(&r);
	diag_with(s, DIAG_ERROR, "NODE_RANK must be a non-negative integer (got '-1')", NULL);
	done(&r);

	r = (struct run){ .env = { "NNODES=2", "NODE_RANK=2" } };
	s = launch(&r);
	diag_with(s, DIAG_ERROR, "NODE_RANK (2) must be < NNODES (2)", NULL);
	done(&r);

	r = (struct run){ .env = { "MASTER_PORT=80" } };
	s = launch(&r);
	diag_with(s, DIAG_ERROR, "Invalid MASTER_PORT: 80 (must be between 1024 and 65535)",
		  NULL);
	done(&r);

	/* A value with a tab and a newline is shown escaped: one line. */
	r = (struct run){ .env = { "GPUS_PER_NODE=\t3", "NNODES=2\n" } };
	s = launch(&r);
	diag_with(s, DIAG_ERROR, "Invalid GPUS_PER_NODE: '\\t3' (must be a positive integer)",
		  NULL);
	assert_false(any_diag_has(s, "\t3"));
	done(&r);

	r = (struct run){ .env = { "GPUS_PER_NODE=128" } };
	s = launch(&r);
	diag_with(s, DIAG_ERROR, "Invalid GPUS_PER_NODE: 128 (must be between 1 and 72)", NULL);
	done(&r);

	/* An IPv6 literal holds ':', which validation.sh does not allow. */
	r = (struct run){ .env = { "MASTER_ADDR=fd00::1" } };
	s = launch(&r);
	diag_with(s, DIAG_ERROR, "Invalid MASTER_ADDR: fd00::1 (contains invalid characters)",
		  NULL);
	done(&r);
}

static void test_launch__skip_validation_skips_only_validation_sh(void **state)
{
	struct run r = { .env = { "PRIMUS_SKIP_VALIDATION=1", "GPUS_PER_NODE=128",
				  "MASTER_ADDR=fd00::1" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	assert_false(any_diag_has(s, "Invalid GPUS_PER_NODE"));
	assert_false(any_diag_has(s, "Invalid MASTER_ADDR"));
	done(&r);

	/* STEP 4.7 has no switch. */
	r = (struct run){ .env = { "PRIMUS_SKIP_VALIDATION=1", "NNODES=0" } };
	s = launch(&r);
	diag_with(s, DIAG_ERROR, "NNODES must be a positive integer (got '0')", NULL);
	done(&r);
}

static void test_launch__the_launcher_checks_what_the_runner_leaves(void **state)
{
	/* The config's env: block runs after the checks: its NNODES is not
	 * checked by the launcher (the catalog's type check still applies). */
	struct run r = { .config_text = "env:\n  NNODES: \"+3\"\n" };
	const struct snapshot *s = launch(&r);

	(void)state;
	assert_false(any_diag_has(s, "must be a positive integer"));
	value_is(s, "NNODES", "+3");
	done(&r);

	/* A plain launch draws none of these. */
	r = (struct run){ 0 };
	s = launch(&r);
	assert_false(any_diag_has(s, "the launcher exits"));
	assert_false(any_diag_has(s, "multi-node will likely fail"));
	done(&r);

	r = (struct run){ .env = { "NNODES=4" } };
	s = launch(&r);
	diag_with(s, DIAG_WARNING, "MASTER_ADDR=localhost with NNODES=4", NULL);
	done(&r);
}

static void test_launch__under_slurm_the_node_count_comes_from_slurm(void **state)
{
	struct run r = { .env = { "SLURM_JOB_ID=77", "SLURM_NNODES=4", "SLURM_NODEID=3",
				  "MASTER_ADDR=node1" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "NNODES", "4");
	value_is(s, "NODE_RANK", "3");
	layer_is(s, "NNODES", LAYER_RUNNER);
	assert_false(any_diag_has(s, "the launcher exits"));
	done(&r);

	r = (struct run){ .env = { "SLURM_JOB_ID=77", "SLURM_JOB_NUM_NODES=2", "SLURM_PROCID=1",
				   "NNODES=8" } };
	s = launch(&r);
	value_is(s, "NNODES", "8");           /* a value set before wins */
	value_is(s, "NODE_RANK", "1");
	done(&r);

	/* localhost is replaced on the node by scontrol's first host. */
	r = (struct run){ .env = { "SLURM_JOB_ID=77", "SLURM_NODELIST=gpu[01-04]" } };
	s = launch(&r);
	diag_with(s, DIAG_WARNING, "MASTER_ADDR: under Slurm the launcher replaces localhost",
		  "SLURM_NODELIST", NULL);
	done(&r);

	/* Without a job, SLURM_NNODES is nobody's business. */
	r = (struct run){ .env = { "SLURM_NNODES=4" } };
	s = launch(&r);
	value_is(s, "NNODES", "1");
	done(&r);
}

static const char *source_of(const struct snapshot *s, const char *name)
{
	const struct snap_var *v = var(s, name);

	assert_non_null(v);
	return v->source ? v->source : "";
}

/* primus-cli-slurm-entry.sh: under a job in the daemon's environment,
 * NNODES and NODE_RANK come from Slurm before anything the daemon's or
 * the image's environment holds, MASTER_ADDR from the first host of the
 * node list; an --env the user gives comes after and wins. */
static void test_launch__a_job_in_the_daemons_environment_sets_the_distributed_values(void **state)
{
	struct run r = { .host = { "SLURM_JOB_ID=77", "SLURM_NNODES=4", "SLURM_NODEID=2",
				   "SLURM_NODELIST=gpu[07-10]", "SLURM_CONF=/nonexistent",
				   "NNODES=8", "NODE_RANK=5" },
			 .image_text = "NNODES=16\nMASTER_ADDR=image-host\n" };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "NNODES", "4");
	value_is(s, "NODE_RANK", "2");
	value_is(s, "MASTER_ADDR", "gpu07");
	layer_is(s, "NNODES", LAYER_DETECTED);
	layer_is(s, "NODE_RANK", LAYER_DETECTED);
	layer_is(s, "MASTER_ADDR", LAYER_DETECTED);
	assert_non_null(strstr(source_of(s, "NNODES"), "SLURM_NNODES"));
	assert_non_null(strstr(source_of(s, "MASTER_ADDR"), "SLURM_NODELIST"));
	assert_false(any_diag_has(s, "the launcher exits"));
	done(&r);

	r = (struct run){ .host = { "SLURM_JOB_ID=77", "SLURM_JOB_NUM_NODES=2", "SLURM_PROCID=1",
				    "SLURM_NODELIST=a1,b[1-2]", "SLURM_CONF=/nonexistent" } };
	s = launch(&r);
	value_is(s, "NNODES", "2");
	value_is(s, "NODE_RANK", "1");
	value_is(s, "MASTER_ADDR", "a1");
	done(&r);

	/* --env goes to the launcher after the entry's own: it wins. */
	r = (struct run){ .host = { "SLURM_JOB_ID=77", "SLURM_NNODES=4", "SLURM_NODEID=2",
				    "SLURM_NODELIST=gpu[07-10]", "SLURM_CONF=/nonexistent" },
			  .env = { "NNODES=8", "NODE_RANK=7", "MASTER_ADDR=elsewhere" } };
	s = launch(&r);
	value_is(s, "NNODES", "8");
	value_is(s, "NODE_RANK", "7");
	value_is(s, "MASTER_ADDR", "elsewhere");
	layer_is(s, "NNODES", LAYER_CLI);
	done(&r);

	/* Without a job the SLURM_ variables are nobody's business. */
	r = (struct run){ .host = { "SLURM_NNODES=4", "SLURM_NODELIST=gpu[07-10]" } };
	s = launch(&r);
	value_is(s, "NNODES", "1");
	value_is(s, "MASTER_ADDR", "localhost");
	done(&r);
}

static void test_launch__a_master_addr_of_another_host_makes_the_slurm_entry_exit(void **state)
{
	struct run r = { .host = { "SLURM_JOB_ID=77", "SLURM_NNODES=2", "SLURM_NODEID=0",
				   "SLURM_NODELIST=gpu[07-08]", "SLURM_CONF=/nonexistent",
				   "MASTER_ADDR=gpu07.cluster.example" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	/* Only the first label is compared: a scheduler's FQDN matches. */
	value_is(s, "MASTER_ADDR", "gpu07.cluster.example");
	assert_false(any_diag_has(s, "first host"));
	done(&r);

	r = (struct run){ .host = { "SLURM_JOB_ID=77", "SLURM_NNODES=2", "SLURM_NODEID=0",
				    "SLURM_NODELIST=gpu[07-08]", "SLURM_CONF=/nonexistent",
				    "MASTER_ADDR=gpu09" } };
	s = launch(&r);
	diag_with(s, DIAG_ERROR, "MASTER_ADDR=gpu09", "gpu07", "primus-cli-slurm-entry.sh", NULL);
	done(&r);

	r = (struct run){ .host = { "SLURM_JOB_ID=77", "SLURM_NNODES=2", "SLURM_NODEID=0",
				    "SLURM_NODELIST=gpu[08-07]", "SLURM_CONF=/nonexistent" } };
	s = launch(&r);
	diag_with(s, DIAG_WARNING, "SLURM_NODELIST", "gpu[08-07]", NULL);
	done(&r);
}

/* Where scontrol can read a configuration it expands the list; its
 * answer is the one taken. */
static void test_launch__scontrol_expands_the_node_list_where_it_runs(void **state)
{
	char dir[] = "/tmp/envfs-slurm.XXXXXX", conf[64], confvar[80];
	FILE *f;
	struct run r;
	const struct snapshot *s;

	(void)state;
	if (system("command -v scontrol >/dev/null 2>&1") != 0)
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(conf, sizeof(conf), "%s/slurm.conf", dir);
	snprintf(confvar, sizeof(confvar), "SLURM_CONF=%s", conf);
	assert_non_null(f = fopen(conf, "w"));
	fputs("ClusterName=t\nSlurmctldHost=localhost\nNodeName=localhost CPUs=1\n"
	      "PartitionName=p Nodes=localhost Default=YES\n", f);
	fclose(f);
	r = (struct run){ .host = { "SLURM_JOB_ID=77", "SLURM_NNODES=2", "SLURM_NODEID=1",
				    "SLURM_NODELIST=r[2-3]n[01-02]", confvar } };
	s = launch(&r);
	value_is(s, "MASTER_ADDR", "r2n01");
	assert_non_null(strstr(source_of(s, "MASTER_ADDR"), "scontrol"));
	done(&r);
	unlink(conf);
	rmdir(dir);
}

/* ---- step 5: the config block as Python applies it ---------------------- */

static void test_launch__config_values_are_python_str_of_pyyaml_values(void **state)
{
	struct run r = { .config_text = "env:\n  A: 010\n  B: 0.960\n  C: on\n  D: ~\n"
					"  E: [a, b]\n  F: \"010\"\n" };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "A", "8");
	value_is(s, "B", "0.96");
	value_is(s, "C", "True");
	value_is(s, "D", "None");
	value_is(s, "E", "['a', 'b']");
	value_is(s, "F", "010");
	diag_with(s, DIAG_WARNING, "unquoted 010 is an int", "\"8\"", NULL);
	diag_with(s, DIAG_ERROR, "E: the value is a list", NULL);
	done(&r);
}

static void test_launch__a_refused_key_stops_the_block(void **state)
{
	struct run r = { .config_text = "env:\n  BEFORE: b\n  \"A=B\": x\n  AFTER: a\n" };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "BEFORE", "b");
	not_exported(s, "AFTER");
	assert_null(var(s, "A=B"));
	diag_with(s, DIAG_ERROR, "\"A=B\"", "AFTER", "not applied", NULL);
	done(&r);
}

static void test_launch__config_expands_what_is_set_before_it(void **state)
{
	struct run r = { .config_text = "env:\n  A: \"$NCCL_IB_GID_INDEX-${FIRST}\"\n"
					"  FIRST: one\n  B: \"${FIRST}-$TF_CPP_MIN_LOG_LEVEL\"\n",
			 .env = { "FIRST=cli" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	/* The runner's default is set; FIRST is the cli's until the block
	 * sets it; maxtext's TF_CPP_MIN_LOG_LEVEL comes after the block. */
	value_is(s, "A", "3-cli");
	value_is(s, "B", "one-$TF_CPP_MIN_LOG_LEVEL");
	done(&r);
}

/* ---- step 6: the backend sees every layer --------------------------------- */

static void test_launch__backend_parameter_reads_set_but_empty_as_empty(void **state)
{
	struct run r = { .env = { "XLA_GPU_AUTOTUNE_LEVEL=" } };
	const struct snapshot *s = launch(&r);
	const struct snap_var *x;

	(void)state;
	x = var(s, "XLA_FLAGS");
	assert_non_null(strstr(x->value, "--xla_gpu_autotune_level= "));
	diag_with(s, DIAG_WARNING, "XLA_GPU_AUTOTUNE_LEVEL is set but empty", NULL);
	done(&r);

	r = (struct run){ .config_text = "env:\n  XLA_GPU_AUTOTUNE_LEVEL: \"5\"\n" };
	s = launch(&r);
	assert_non_null(strstr(var(s, "XLA_FLAGS")->value, "--xla_gpu_autotune_level=5"));
	done(&r);
}

static void test_launch__backend_defaults_are_setdefault_empty_counts_as_set(void **state)
{
	struct run r = { .image_text = "TF_CPP_MIN_LOG_LEVEL=\n" };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "TF_CPP_MIN_LOG_LEVEL", "");
	layer_is(s, "TF_CPP_MIN_LOG_LEVEL", LAYER_IMAGE);
	done(&r);
}

/* ---- the detected layer ---------------------------------------------------- */

static void test_launch__detected_values_fill_in_unset_or_empty(void **state)
{
	struct run r = { .image_text = "NCCL_IB_HCA=\n" };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "NCCL_IB_HCA", "mlx5_0:1,mlx5_1:2");
	layer_is(s, "NCCL_IB_HCA", LAYER_DETECTED);
	value_is(s, "IP_INTERFACE", "eth0");
	value_is(s, "NCCL_SOCKET_IFNAME", "eth0");
	layer_is(s, "GLOO_SOCKET_IFNAME", LAYER_DETECTED);
	done(&r);

	r = (struct run){ .env = { "NCCL_SOCKET_IFNAME=ib0" } };
	s = launch(&r);
	value_is(s, "NCCL_SOCKET_IFNAME", "ib0");
	value_is(s, "GLOO_SOCKET_IFNAME", "eth0");
	done(&r);
}

/* STEP 8 of primus-cli-direct.sh reads the --env values back a line at a
 * time: a value holding a newline comes back split (differential F7). */
static void test_launch__a_newline_in_an_env_value_splits_it_at_the_launch(void **state)
{
	struct run r = { .env = { "A=x\nB=y", "GPUS_PER_NODE=2\n" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	value_is(s, "A", "x");
	value_is(s, "B", "y");
	layer_is(s, "B", LAYER_CLI);
	value_is(s, "GPUS_PER_NODE", "2");
	value_is(s, "HIP_VISIBLE_DEVICES", "0,1");
	done(&r);

	r = (struct run){ .env = { "A=x\ny" } };
	s = launch(&r);
	diag_with(s, DIAG_ERROR, "A: a line of its value holds no '='", "Invalid env format", NULL);
	done(&r);
}

/* ---- SPEC 4: the runner base ---------------------------------------------- */

static void test_launch__runner_base_has_what_base_env_sh_exports(void **state)
{
	static const char *const base[][2] = {
		{ "NCCL_DEBUG", "" }, { "NCCL_CHECKS_DISABLE", "1" },
		{ "RCCL_MSCCLPP_ENABLE", "0" }, { "RCCL_MSCCLPP_FORCE_ENABLE", "0" },
		{ "MSCCLPP_DISABLE_CHANNEL_CACHE", "FALSE" }, { "ENABLE_NUMA_BINDING", "0" },
		{ "NVTE_USE_CAST_TRANSPOSE_TRITON", "1" },
		{ "NVTE_USE_OPTIMIZED_HIPIFIED_CAST_TRANSPOSE", "0" },
		{ "PRIMUS_TURBO_ATTN_V3_ATOMIC_FP32", "0" }, { "NVTE_DEBUG", "0" },
		{ "NVTE_DEBUG_LEVEL", "0" }, { "NVTE_FUSED_ATTN_LOG_CONFIG", "0" },
		{ "PRIMUS_TURBO_DEEPEP_TIMEOUT", "600" }, { "RCCL_WARP_SPEED_AUTO", "0" },
	};
	struct run r = { .backend = "megatron" };
	const struct snapshot *s = launch(&r);
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(base) / sizeof(base[0]); k++)
		value_is(s, base[k][0], base[k][1]);
	assert_null(var(s, "DEBUG_HIP_IGNORE_STREAM_PRIORITY"));
	not_exported(s, "DATA_PATH");      /* PRIMUS_PATH is unknown */
	assert_non_null(s->explain);
	assert_non_null(strstr(s->explain, "DATA_PATH"));
	done(&r);

	r = (struct run){ .backend = "megatron", .env = { "PRIMUS_PATH=/workspace/Primus" } };
	s = launch(&r);
	value_is(s, "DATA_PATH", "/workspace/Primus/data");
	value_is(s, "HF_HOME", "/workspace/Primus/data/huggingface");
	done(&r);
}

static void test_launch__maxtext_has_no_flags_without_a_source(void **state)
{
	struct run r = { 0 };
	const struct snapshot *s = launch(&r);
	const struct snap_var *x;

	(void)state;
	x = var(s, "XLA_FLAGS");
	assert_null(strstr(x->value, "dynamic_slice_fusion"));
	assert_null(strstr(x->value, "cub_radix_sort"));
	assert_null(var(s, "DEBUG_HIP_IGNORE_STREAM_PRIORITY"));
	done(&r);
}

/* ---- SPEC 3.0: the launch fixed point ------------------------------------- */

static void test_launch__override_of_hip_visible_devices_does_not_survive(void **state)
{
	struct run r = { 0 };
	const struct snapshot *s;

	(void)state;
	ov(&r, "HIP_VISIBLE_DEVICES", "0,1");
	s = launch(&r);
	value_is(s, "HIP_VISIBLE_DEVICES", "0,1");
	diag_with(s, DIAG_WARNING, "HIP_VISIBLE_DEVICES", "does not survive",
		  "set GPUS_PER_NODE instead", NULL);
	assert_non_null(strstr(var(s, "HIP_VISIBLE_DEVICES")->explain,
			       "launch: the value shown (layer override) does not survive"));
	assert_non_null(strstr(var(s, "HIP_VISIBLE_DEVICES")->explain, "set GPUS_PER_NODE instead"));
	done(&r);

	/* Overriding what it derives from survives. */
	ov(&r, "GPUS_PER_NODE", "2");
	s = launch(&r);
	value_is(s, "HIP_VISIBLE_DEVICES", "0,1");
	assert_false(any_diag_has(s, "does not survive"));
	done(&r);
}

static void test_launch__cli_values_the_runner_replaces_warn_with_the_delivery(void **state)
{
	struct run r = { .env = { "NVTE_ROCM_ENABLE_MXFP8=0" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	diag_with(s, DIAG_WARNING, "NVTE_ROCM_ENABLE_MXFP8", "unconditional export",
		  "env.sh", NULL);
	done(&r);
}

static void test_launch__cli_append_does_not_survive_the_merge(void **state)
{
	struct run r = { .env = { "XLA_FLAGS_APPEND=--xla_gpu_autotune_level=5" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	assert_non_null(strstr(var(s, "XLA_FLAGS")->effective, "--xla_gpu_autotune_level=5"));
	diag_with(s, DIAG_WARNING, "XLA_FLAGS", "does not survive", "XLA_FLAGS_APPEND", NULL);
	done(&r);

	/* The same append in the config is there at every launch. */
	r = (struct run){ .config_text = "env:\n  XLA_FLAGS_APPEND: \"--xla_gpu_autotune_level=5\"\n" };
	s = launch(&r);
	assert_false(any_diag_has(s, "does not survive"));
	done(&r);
}

static void test_launch__override_the_config_also_sets_does_not_survive(void **state)
{
	struct run r = { .config_text = "env:\n  NCCL_DEBUG: \"WARN\"\n" };
	const struct snapshot *s;

	(void)state;
	ov(&r, "NCCL_DEBUG", "INFO");
	s = launch(&r);
	value_is(s, "NCCL_DEBUG", "INFO");
	diag_with(s, DIAG_WARNING, "NCCL_DEBUG", "config's env: block", "change it in the config",
		  NULL);
	done(&r);
}

static void test_launch__removed_variable_the_runner_sets_again(void **state)
{
	struct run r = { 0 };
	const struct snapshot *s;

	(void)state;
	ov(&r, "NCCL_IB_GID_INDEX", NULL);
	s = launch(&r);
	not_exported(s, "NCCL_IB_GID_INDEX");
	diag_with(s, DIAG_WARNING, "NCCL_IB_GID_INDEX is not in this run's environment", NULL);
	done(&r);
}

static void test_launch__a_clean_run_is_its_own_fixed_point(void **state)
{
	struct run r = { .image_text = "XLA_FLAGS=--xla_gpu_autotune_level=0 --xla_keep=1\n" };
	const struct snapshot *s = launch(&r);

	(void)state;
	assert_false(any_diag_has(s, "does not survive"));
	assert_false(any_diag_has(s, "a launch fed these views"));
	done(&r);
}

/* ---- secrets never reach a diagnostic (issue 14, item 12) ---------------- */

static void no_diag_contains(const struct snapshot *s, const char *secret)
{
	size_t k;

	for (k = 0; k < s->diags.n; k++)
		if (strstr(s->diags.v[k].msg, secret)) {
			fprintf(stderr, "secret text in: %s\n", s->diags.v[k].msg);
			fail();
		}
}

static void test_launch__secrets_stay_out_of_every_diagnostic(void **state)
{
	struct run r = { .config_text = "env:\n  WANDB_API_KEY: 01234567\n"
					"  HF_TOKEN: \"hf_Ab$cdSecretTail\"\n"
					"  GPUS_PER_NODE: \"${DATABRICKS_TOKEN}\"\n",
			 .env = { "DATABRICKS_TOKEN=dapiTOKENVALUE42" } };
	const struct snapshot *s = launch(&r);

	(void)state;
	no_diag_contains(s, "01234567");
	no_diag_contains(s, "1234567");
	no_diag_contains(s, "cdSecretTail");
	no_diag_contains(s, "SecretTail");
	no_diag_contains(s, "dapiTOKENVALUE42");
	no_diag_contains(s, "TOKENVALUE");
	assert_true(var(s, "WANDB_API_KEY")->secret);
	assert_true(var(s, "GPUS_PER_NODE")->secret);   /* built from a secret */
	done(&r);

	/* A variable holding a secret's value is secret too. */
	r = (struct run){ .env = { "HF_TOKEN=hf_abcdefgh", "COPY=hf_abcdefgh" } };
	s = launch(&r);
	assert_true(var(s, "COPY")->secret);
	done(&r);
}

/* ---- expansions stay bounded (issue 14, item 7) --------------------------- */

static void test_launch__expansion_bomb_is_an_error_naming_the_key(void **state)
{
	struct run r = { 0 };
	char *text = NULL, *p;
	size_t k, cap = 64 * 1024;
	const struct snapshot *s;

	(void)state;
	p = text = malloc(cap);
	assert_non_null(text);
	p += sprintf(p, "env:\n  A_0: \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"\n");
	for (k = 1; k < 40; k++)
		p += sprintf(p, "  A_%zu: \"$A_%zu$A_%zu\"\n", k, k - 1, k - 1);
	r.config_text = text;
	s = launch(&r);
	diag_with(s, DIAG_ERROR, "A_12 expands to more than 131072 bytes", NULL);
	for (k = 0; k < s->nvars; k++)
		assert_true(s->vars[k].value_len <= 131072);
	done(&r);
	free(text);
}


/* ---- SPEC 3.0 as a property (issue 13, acceptance 2) --------------------- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33) % n;
}

static const char *const pool_names[] = {
	"GPUS_PER_NODE", "HIP_VISIBLE_DEVICES", "NNODES", "MASTER_ADDR", "NCCL_IB_GID_INDEX",
	"NCCL_DEBUG", "NVTE_ROCM_ENABLE_MXFP8", "PRIMUS_DETERMINISTIC", "NCCL_ALGO",
	"XLA_GPU_AUTOTUNE_LEVEL", "XLA_FLAGS_APPEND", "TF_CPP_MIN_LOG_LEVEL", "GPU_MAX_HW_QUEUES",
	"NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "DATA_PATH", "PRIMUS_PATH", "DUMP_HLO", "MY_VAR",
	"OTHER_VAR", "HSA_NO_SCRATCH_RECLAIM", "RCCL_WARP_SPEED_AUTO", "NVTE_FUSED_ATTN",
};
static const char *const pool_values[] = {
	"", "0", "1", "2", "4", "8", "010", " 2 ", "abc", "x y", "Ring", "Tree", "INFO",
	"--xla_gpu_autotune_level=5", "--xla_gpu_autotune_level=0 --xla_keep=1", "/data",
	"$GPUS_PER_NODE", "${NNODES}-x", "0x4",
};
#define NPOOL(a) (sizeof(a) / sizeof((a)[0]))

/* The names the first pass warns about (SPEC 3.0 warnings). */
static bool warned(const struct snapshot *s, const char *name)
{
	size_t k, n = strlen(name);

	for (k = 0; k < s->diags.n; k++) {
		const char *m = s->diags.v[k].msg;

		if (!strncmp(m, name, n) &&
		    (!strncmp(m + n, ": the value shown", 17) ||
		     !strncmp(m + n, " is not in this run's environment", 33)))
			return true;
	}
	return false;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The effective flags of v, sorted, one string. */
static char *flag_set(const struct snap_var *v)
{
	char *copy = strdup(v->effective ? v->effective : ""), *lines[256], *p, *out;
	size_t n = 0, k, len = 1;

	assert_non_null(copy);
	for (p = strtok(copy, "\n"); p && n < 256; p = strtok(NULL, "\n"))
		lines[n++] = p;
	qsort(lines, n, sizeof(*lines), line_cmp);
	for (k = 0; k < n; k++)
		len += strlen(lines[k]) + 1;
	assert_non_null(out = calloc(1, len));
	for (k = 0; k < n; k++) {
		strcat(out, lines[k]);
		strcat(out, "\n");
	}
	free(copy);
	return out;
}

static bool same_value(const struct snap_var *a, const struct snap_var *b)
{
	bool ea = a && a->exported, eb = b && b->exported, same;
	char *x, *y;

	if (ea != eb)
		return false;
	if (!ea)
		return true;
	if (a->is_flags && b->is_flags) {
		x = flag_set(a);
		y = flag_set(b);
		same = !strcmp(x, y);
		free(x);
		free(y);
		return same;
	}
	return a->value_len == b->value_len && !memcmp(a->value, b->value, a->value_len);
}

static void test_launch__fixed_point_warnings_are_exactly_what_a_relaunch_changes(void **state)
{
	unsigned iter;

	(void)state;
	for (iter = 0; iter < 200; iter++) {
		struct run r = { 0 }, r2 = { 0 };
		char img[4096] = "", cfg[4096] = "env:\n", *environ_text = NULL;
		char cli[MAXN][128];
		size_t k, n, elen = 0;
		const struct snapshot *s1, *s2;

		rng_state = 0x9e3779b97f4a7c15ull * (iter + 1);
		for (n = rnd(6), k = 0; k < n; k++)
			snprintf(img + strlen(img), sizeof(img) - strlen(img), "%s=%s\n",
				 pool_names[rnd(NPOOL(pool_names))],
				 pool_values[rnd(NPOOL(pool_values))]);
		if (rnd(3) == 0)
			strcat(img, "XLA_FLAGS=--xla_gpu_autotune_level=0 --xla_gpu_enable_pgle=true\n");
		for (n = rnd(5), k = 0; k < n; k++)
			snprintf(cfg + strlen(cfg), sizeof(cfg) - strlen(cfg), "  %s: \"%s\"\n",
				 pool_names[rnd(NPOOL(pool_names))],
				 pool_values[rnd(NPOOL(pool_values))]);
		for (n = rnd(4), k = 0; k < n; k++) {
			snprintf(cli[k], sizeof(cli[k]), "%s=%s", pool_names[rnd(NPOOL(pool_names))],
				 pool_values[rnd(NPOOL(pool_values))]);
			r.env[k] = cli[k];
		}
		r.image_text = img;
		r.config_text = strlen(cfg) > 5 ? cfg : NULL;
		for (n = rnd(3), k = 0; k < n; k++)
			ov(&r, pool_names[rnd(NPOOL(pool_names))],
			   rnd(4) ? pool_values[rnd(NPOOL(pool_values))] : NULL);
		s1 = launch(&r);

		/* The environ view as the only image: NAME=value\0 ... */
		for (k = 0; k < s1->nvars; k++) {
			const struct snap_var *v = &s1->vars[k];

			if (!v->exported)
				continue;
			assert_non_null(environ_text = realloc(environ_text, elen + v->name_len +
							       v->value_len + 3));
			memcpy(environ_text + elen, v->name, v->name_len);
			elen += v->name_len;
			environ_text[elen++] = '=';
			memcpy(environ_text + elen, v->value, v->value_len);
			elen += v->value_len;
			environ_text[elen++] = '\0';
		}
		assert_non_null(environ_text = realloc(environ_text, elen + 1));
		environ_text[elen] = '\0';
		{
			struct envfs_inputs in = { 0 };
			const char *inh[1];

			strcpy(r2.dir, "/tmp/envfs-launch-XXXXXX");
			assert_non_null(mkdtemp(r2.dir));
			r2.paths[0] = host_root("gfx950");
			r2.paths[2] = write_file(r2.dir, "environ", environ_text, elen);
			inh[0] = r2.paths[2];
			in.specs_dir = specs_dir();
			in.host_root = r2.paths[0];
			in.config = r.paths[1];
			in.inherit = inh;
			in.ninherit = 1;
			assert_int_equal(world_load(&in, &r2.w), 0);
			assert_int_equal(resolve_dir(r2.w, NULL, "maxtext", "gfx950", &r2.s), 0);
			s2 = r2.s;
		}
		for (k = 0; k < s1->nvars; k++) {
			const struct snap_var *a = &s1->vars[k];
			char name[256];
			const struct snap_var *b;

			snprintf(name, sizeof(name), "%.*s", (int)a->name_len, a->name);
			b = var(s2, name);
			if (!same_value(a, b) == warned(s1, name))
				continue;
			fprintf(stderr, "iteration %u: %s: %s\nimage:\n%s\nconfig:\n%s\n", iter, name,
				same_value(a, b) ? "warned but a relaunch keeps it" :
				"a relaunch changes it without a warning", img, cfg);
			for (n = 0; n < MAXN && r.env[n]; n++)
				fprintf(stderr, "--env %s\n", r.env[n]);
			for (n = 0; n < r.ov.n; n++)
				fprintf(stderr, "override %s=%s\n", r.ov.v[n].name,
					r.ov.v[n].value ? r.ov.v[n].value : "(unset)");
			for (n = 0; n < s1->diags.n; n++)
				fprintf(stderr, "diag: %s\n", s1->diags.v[n].msg);
			fail();
		}
		for (k = 0; k < s2->nvars; k++) {
			char name[256];

			snprintf(name, sizeof(name), "%.*s", (int)s2->vars[k].name_len,
				 s2->vars[k].name);
			if (s2->vars[k].exported && !var(s1, name) && !warned(s1, name))
				fail_msg("iteration %u: %s appears at relaunch without a warning",
					 iter, name);
		}
		free(environ_text);
		done(&r2);
		done(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_launch__config_primus_deterministic_is_never_seen_by_the_runner),
		cmocka_unit_test(test_launch__cli_primus_deterministic_and_cli_nccl_algo),
		cmocka_unit_test(test_launch__cli_beats_an_unconditional_runner_export),
		cmocka_unit_test(test_launch__image_values_the_runner_replaces),
		cmocka_unit_test(test_launch__config_gpus_per_node_does_not_change_the_device_list),
		cmocka_unit_test(test_launch__runner_integers_are_bash_arithmetic),
		cmocka_unit_test(test_launch__backend_integers_are_python_int),
		cmocka_unit_test(test_launch__a_distributed_value_the_launcher_refuses_is_an_error),
		cmocka_unit_test(test_launch__skip_validation_skips_only_validation_sh),
		cmocka_unit_test(test_launch__the_launcher_checks_what_the_runner_leaves),
		cmocka_unit_test(test_launch__under_slurm_the_node_count_comes_from_slurm),
		cmocka_unit_test(test_launch__config_values_are_python_str_of_pyyaml_values),
		cmocka_unit_test(test_launch__a_refused_key_stops_the_block),
		cmocka_unit_test(test_launch__config_expands_what_is_set_before_it),
		cmocka_unit_test(test_launch__backend_parameter_reads_set_but_empty_as_empty),
		cmocka_unit_test(test_launch__backend_defaults_are_setdefault_empty_counts_as_set),
		cmocka_unit_test(test_launch__detected_values_fill_in_unset_or_empty),
		cmocka_unit_test(test_launch__a_newline_in_an_env_value_splits_it_at_the_launch),
		cmocka_unit_test(test_launch__runner_base_has_what_base_env_sh_exports),
		cmocka_unit_test(test_launch__maxtext_has_no_flags_without_a_source),
		cmocka_unit_test(test_launch__override_of_hip_visible_devices_does_not_survive),
		cmocka_unit_test(test_launch__cli_values_the_runner_replaces_warn_with_the_delivery),
		cmocka_unit_test(test_launch__cli_append_does_not_survive_the_merge),
		cmocka_unit_test(test_launch__override_the_config_also_sets_does_not_survive),
		cmocka_unit_test(test_launch__removed_variable_the_runner_sets_again),
		cmocka_unit_test(test_launch__a_clean_run_is_its_own_fixed_point),
		cmocka_unit_test(test_launch__secrets_stay_out_of_every_diagnostic),
		cmocka_unit_test(test_launch__expansion_bomb_is_an_error_naming_the_key),
		cmocka_unit_test(test_launch__fixed_point_warnings_are_exactly_what_a_relaunch_changes),
		cmocka_unit_test(test_launch__a_job_in_the_daemons_environment_sets_the_distributed_values),
		cmocka_unit_test(test_launch__a_master_addr_of_another_host_makes_the_slurm_entry_exit),
		cmocka_unit_test(test_launch__scontrol_expands_the_node_list_where_it_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

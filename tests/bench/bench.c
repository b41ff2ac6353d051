/* envfs-bench: primus-envfs side by side with tmpfs (issue 7).
 *
 *   # build/tests/bench/envfs-bench --bin build/fs/primus-envfs
 *
 * Root and /dev/fuse are needed (it mounts tmpfs and FUSE, and drops the
 * page cache for the cold scenarios). Everything lives in a temporary
 * directory: generated specs with 2,000 and 10,000 variables, primus-envfs
 * mounts of them (-o ro and writable), and a tmpfs holding a copy of the
 * same resolved files. The mount and the copy are measured in alternating
 * blocks (ABAB...; the first block is a warm-up and is discarded), so
 * noise from the rest of the machine lands on both; each block yields one
 * ratio FUSE/tmpfs, and a scenario prints the median ratio with p10 and
 * p90 and the absolute medians. Every mount is undone on every exit path
 * (normal, error, SIGINT, SIGTERM).
 *
 * Options: --bin PATH (primus-envfs; required), --blocks N (measured
 * blocks, at least 15; default 20), --only LIST (run only the scenarios
 * whose digits are in LIST, e.g. --only 15), --keep (leave the temp dir). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "view.h"   /* VIEW_COUNT: the view files of every directory */

extern char **environ;

#define FUSE_SUPER_MAGIC 0x65735546
#define MAX_MOUNTS 8
#define NVARS_SMALL 2000
#define NVARS_LARGE 10000

static const char *bin;
static char tmp[PATH_MAX];
static int nblocks = 20;
static bool keep;
static const char *only;         /* --only LIST: scenario numbers to run */

/* True when scenario n is selected (all of them without --only). */
static bool want(int n)
{
	char d[12];

	snprintf(d, sizeof(d), "%d", n);
	return !only || strstr(only, d);
}

/* ---- cleanup: every mount we made, undone on every exit path ---------- */

struct mnt {
	char path[PATH_MAX];
	pid_t pid;                /* daemon, or 0 for tmpfs */
	bool live;
};

static struct mnt mounts[MAX_MOUNTS];

static void undo_mount(struct mnt *m)
{
	int i, status;

	if (!m->live)
		return;
	/* The daemon ends its session when the kernel says unmounted. */
	if (umount2(m->path, 0) < 0)
		umount2(m->path, MNT_DETACH);
	if (m->pid > 0) {
		for (i = 0; i < 200 && waitpid(m->pid, &status, WNOHANG) == 0; i++)
			usleep(10000);
		if (i == 200) {
			kill(m->pid, SIGKILL);
			waitpid(m->pid, &status, 0);
		}
	}
	m->live = false;
}

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];
	int i;

	for (i = 0; i < MAX_MOUNTS; i++)
		undo_mount(&mounts[i]);
	if (tmp[0] && !keep) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "envfs-bench: could not remove %s\n", tmp);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	/* Not async-signal-safe in general, but the main thread is the only
	 * other user of the table and is stopped here; leaving mounts behind
	 * is the worse outcome. */
	cleanup();
	_exit(130);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "envfs-bench: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* snprintf into a PATH_MAX buffer; a path that does not fit is fatal. */
static void pathf(char *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void pathf(char *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		die("path too long");
}

static struct mnt *mnt_slot(void)
{
	int i;

	for (i = 0; i < MAX_MOUNTS; i++)
		if (!mounts[i].live)
			return &mounts[i];
	die("too many mounts");
	return NULL;
}

/* ---- time and statistics ---------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Percentile q (0..1) of v[0..n), linear between neighbours; sorts v. */
static double pct(double *v, int n, double q)
{
	double pos, frac;
	int i;

	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), dbl_cmp);
	pos = q * (n - 1);
	i = (int)pos;
	frac = pos - i;
	return i + 1 < n ? v[i] * (1 - frac) + v[i + 1] * frac : v[i];
}

static void fmt_time(char *buf, size_t len, double s)
{
	if (s < 1e-3)
		snprintf(buf, len, "%.2f us", s * 1e6);
	else if (s < 1)
		snprintf(buf, len, "%.2f ms", s * 1e3);
	else
		snprintf(buf, len, "%.2f s", s);
}

/* One line of the ratio table. a and b: per-block absolute values (time
 * per operation, or throughput when higher_better), FUSE then tmpfs. */
static void report_ratio(const char *name, double *a, double *b, int n, bool throughput)
{
	double *r = malloc(n * sizeof(*r));
	double ra[3], ma, mb;
	char sa[32], sb[32];
	int i;

	for (i = 0; i < n; i++)
		r[i] = a[i] / b[i];
	ra[0] = pct(r, n, 0.5);
	ra[1] = pct(r, n, 0.1);
	ra[2] = pct(r, n, 0.9);
	ma = pct(a, n, 0.5);
	mb = pct(b, n, 0.5);
	if (throughput) {
		snprintf(sa, sizeof(sa), "%.0f/s", ma);
		snprintf(sb, sizeof(sb), "%.0f/s", mb);
	} else {
		fmt_time(sa, sizeof(sa), ma);
		fmt_time(sb, sizeof(sb), mb);
	}
	printf("%-46s %6.2f %6.2f %6.2f %12s %12s\n", name, ra[0], ra[1], ra[2], sa, sb);
	fflush(stdout);
	free(r);
}

/* One line of absolute figures: median, p90, p99 and the sample count. */
static void report_abs(const char *name, double *v, int n)
{
	char p50[32], p90[32], p99[32];

	fmt_time(p50, sizeof(p50), pct(v, n, 0.5));
	fmt_time(p90, sizeof(p90), pct(v, n, 0.9));
	fmt_time(p99, sizeof(p99), pct(v, n, 0.99));
	printf("%-46s p50 %10s  p90 %10s  p99 %10s  (n=%d)\n", name, p50, p90, p99, n);
	fflush(stdout);
}

/* ---- files and processes ---------------------------------------------- */

static void write_file(const char *path, const char *data, size_t len)
{
	char tmpname[PATH_MAX];
	int fd;

	/* Write and rename, as editors do, so a watcher never sees half. */
	snprintf(tmpname, sizeof(tmpname), "%s.tmp", path);
	fd = open(tmpname, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd) < 0)
		die("write %s: %s", tmpname, strerror(errno));
	if (rename(tmpname, path) < 0)
		die("rename %s: %s", path, strerror(errno));
}

/* Reads a whole file the way cat does (until EOF); returns bytes read or
 * -1. buf may be NULL (a scratch buffer is used). */
static ssize_t cat_file(const char *path, char *buf, size_t cap)
{
	static __thread char scratch[1 << 17];
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	if (!buf) {
		buf = scratch;
		cap = sizeof(scratch);
	}
	for (;;) {
		n = read(fd, buf + (buf == scratch ? 0 : total),
			 buf == scratch ? cap : cap - total);
		if (n <= 0)
			break;
		total += n;
		if (buf != scratch && (size_t)total == cap)
			break;
	}
	close(fd);
	return n < 0 ? -1 : total;
}

static void mkdir_p(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(buf, 0755);
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		die("mkdir %s: %s", buf, strerror(errno));
}

static bool is_fuse_mounted(const char *path)
{
	struct statfs s;

	return statfs(path, &s) == 0 && s.f_type == FUSE_SUPER_MAGIC;
}

/* Starts primus-envfs -f on mnt; returns when it is mounted, or at once
 * when !wait. */
static struct mnt *fuse_start(const char *specs, const char *config, bool ro,
			      const char *mnt, bool wait)
{
	struct mnt *m = mnt_slot();
	char log[PATH_MAX];
	pid_t pid;
	int i, status;

	mkdir_p(mnt);
	pathf(log, "%s.log", mnt);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		const char *argv[12];
		int k = 0, fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (fd >= 0) {
			dup2(fd, 2);
			dup2(fd, 1);
		}
		argv[k++] = bin;
		argv[k++] = "--specs";
		argv[k++] = specs;
		if (config) {
			argv[k++] = "--config";
			argv[k++] = config;
		}
		argv[k++] = "-f";
		if (ro) {
			argv[k++] = "-o";
			argv[k++] = "ro";
		}
		argv[k++] = mnt;
		argv[k] = NULL;
		execv(bin, (char **)argv);
		_exit(127);
	}
	pathf(m->path, "%s", mnt);
	m->pid = pid;
	m->live = true;
	for (i = 0; wait && i < 1000; i++) {
		if (is_fuse_mounted(mnt))
			return m;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			m->live = false;
			die("primus-envfs exited before mounting %s (see %s)", mnt, log);
		}
		usleep(2000);
	}
	if (wait)
		die("no mount at %s after 2 s", mnt);
	return m;
}

static struct mnt *fuse_mount(const char *specs, const char *config, bool ro,
			      const char *mnt)
{
	return fuse_start(specs, config, ro, mnt, true);
}

static struct mnt *tmpfs_mount(const char *mnt)
{
	struct mnt *m = mnt_slot();

	mkdir_p(mnt);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=256m,mode=0755") < 0)
		die("mount tmpfs on %s: %s", mnt, strerror(errno));
	pathf(m->path, "%s", mnt);
	m->pid = 0;
	m->live = true;
	return m;
}

/* Copies every file of directory src into dst (created). */
static void copy_dir(const char *src, const char *dst)
{
	static char buf[1 << 20];
	char sp[PATH_MAX], dp[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(src);
	ssize_t n;
	int fd;

	if (!d)
		die("opendir %s: %s", src, strerror(errno));
	mkdir_p(dst);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		pathf(sp, "%s/%s", src, de->d_name);
		pathf(dp, "%s/%s", dst, de->d_name);
		if ((n = cat_file(sp, buf, sizeof(buf))) < 0)
			die("read %s: %s", sp, strerror(errno));
		fd = open(dp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, n) != n || close(fd) < 0)
			die("write %s: %s", dp, strerror(errno));
	}
	closedir(d);
}

static void drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	sync();
	if (fd < 0 || write(fd, "3\n", 2) != 2)
		die("drop_caches: %s", strerror(errno));
	close(fd);
}

/* Runs argv to completion with output discarded; returns wall seconds.
 * posix_spawn (a vfork underneath), as launchers such as Python's
 * subprocess start programs: a fork of this process would copy its page
 * tables and add the same cost to both sides of scenario 8. */
static double run_cmd(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	double t0, took;
	int status, err;
	pid_t pid;

	if ((err = posix_spawn_file_actions_init(&fa)) != 0 ||
	    (err = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0)) != 0 ||
	    (err = posix_spawn_file_actions_adddup2(&fa, 1, 2)) != 0)
		die("posix_spawn_file_actions: %s", strerror(err));
	t0 = now_s();
	if ((err = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ)) != 0)
		die("%s: %s", argv[0], strerror(err));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	took = now_s() - t0;
	posix_spawn_file_actions_destroy(&fa);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("%s exited with status %d", argv[0], status);
	return took;
}

static long vm_hwm_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	pathf(path, "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* ---- inputs ------------------------------------------------------------ */

/* A value of realistic shape for variable i: mostly short numbers and
 * words, some paths and host lists, a few long flag strings. */
static void var_value(int i, char *buf, size_t len)
{
	switch (i % 10) {
	case 0:
		snprintf(buf, len, "/opt/rocm/lib/bench/component-%d/cache", i);
		break;
	case 1:
		snprintf(buf, len, "--xla_flag_%d=true --xla_other_%d=8589934592 "
			 "--xla_gpu_enable_latency_hiding_scheduler=true", i, i);
		break;
	case 2:
		snprintf(buf, len, "node%d,node%d,node%d", i, i + 1, i + 2);
		break;
	default:
		snprintf(buf, len, "%d", i);
		break;
	}
}

static void write_spec(const char *dir, int nvars)
{
	size_t cap = (size_t)nvars * 200 + 256, len = 0;
	char *y = malloc(cap), path[PATH_MAX], val[256];
	int i;

	mkdir_p(dir);
	len += snprintf(y + len, cap - len,
			"# %d synthetic variables for envfs-bench\n"
			"backend: bench\nuses_runner: false\narches: [x86]\nvariables:\n",
			nvars);
	for (i = 1; i <= nvars; i++) {
		var_value(i, val, sizeof(val));
		len += snprintf(y + len, cap - len, "  - name: BENCH_VAR_%05d\n    value: \"%s\"\n",
				i, val);
		if (i % 5 == 0)
			len += snprintf(y + len, cap - len,
					"    note: \"keeps benchmark case %d from regressing\"\n", i);
	}
	pathf(path, "%s/bench.yaml", dir);
	write_file(path, y, len);
	free(y);
}

static void write_config(const char *path, const char *value)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf),
			 "# envfs-bench reload config\nenv:\n  BENCH_VAR_00003: \"%s\"\n"
			 "modules:\n  pre_trainer:\n    framework: bench\n", value);

	write_file(path, buf, n);
}

/* An experiment YAML the size of a real Primus one: the modules tree with
 * its overrides, and an env: block of a few dozen keys. */
static void write_real_config(const char *path)
{
	static const char *const env[] = {
		"NCCL_IB_GID_INDEX: \"3\"", "NCCL_IB_HCA: \"rdma0,rdma1,rdma2,rdma3,rdma4,rdma5,rdma6,rdma7\"",
		"NCCL_SOCKET_IFNAME: \"ens50f0\"", "GLOO_SOCKET_IFNAME: \"ens50f0\"",
		"NCCL_DEBUG: \"WARN\"", "NCCL_CHECKS_DISABLE: \"1\"", "NCCL_CROSS_NIC: \"0\"",
		"NCCL_PROTO: \"Simple\"", "NCCL_MIN_NCHANNELS: \"112\"", "RCCL_MSCCL_ENABLE: \"0\"",
		"HSA_ENABLE_SDMA: \"1\"", "HSA_NO_SCRATCH_RECLAIM: \"1\"", "GPU_MAX_HW_QUEUES: \"2\"",
		"XLA_PYTHON_CLIENT_MEM_FRACTION: \".95\"", "XLA_FLAGS_APPEND: \"--xla_dump_hlo_as_text\"",
		"DUMP_HLO: \"0\"", "NVTE_FUSED_ATTN: \"1\"", "NVTE_FUSED_ATTN_CK: \"1\"",
		"NVTE_CK_USES_BWD_V3: \"1\"", "NVTE_CK_USES_FWD_V3: \"1\"", "TF_CPP_MIN_LOG_LEVEL: \"2\"",
		"HF_HOME: \"/data/huggingface\"", "DATA_PATH: \"/data\"", "WANDB_MODE: \"offline\"",
		"PRIMUS_TEAM: \"amd\"", "PRIMUS_USER: \"bench\"", "PRIMUS_EXP_NAME: \"llama3_70b_fp8\"",
		"PRIMUS_WORKSPACE: \"/workspace/output\"", "TORCH_NCCL_HIGH_PRIORITY: \"1\"",
		"CUDA_DEVICE_MAX_CONNECTIONS: \"1\"", "NNODES: \"8\"", "GPUS_PER_NODE: \"8\"",
		"MASTER_ADDR: \"10.0.0.1\"", "MASTER_PORT: \"29500\"",
	};
	char buf[8192];
	size_t i, n = 0;

	n += snprintf(buf + n, sizeof(buf) - n,
		      "work_group: ${PRIMUS_TEAM:amd}\nuser_name: ${PRIMUS_USER:root}\n"
		      "exp_name: ${PRIMUS_EXP_NAME:llama3_70b}\nworkspace: ./output\n\nenv:\n");
	for (i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		n += snprintf(buf + n, sizeof(buf) - n, "  %s\n", env[i]);
	n += snprintf(buf + n, sizeof(buf) - n,
		      "\nmodules:\n  pre_trainer:\n    framework: maxtext\n"
		      "    config: pre_trainer.yaml\n    model: llama3_70B.yaml\n"
		      "    overrides:\n      run_name: llama3_70b_fp8\n      steps: 50\n"
		      "      per_device_batch_size: 4\n      max_target_length: 8192\n"
		      "      remat_policy: full\n      quantization: fp8\n      attention: cudnn_flash_te\n"
		      "      dcn_data_parallelism: 8\n      ici_fsdp_parallelism: 8\n"
		      "      enable_checkpointing: false\n      dataset_type: synthetic\n"
		      "      base_output_directory: /workspace/output\n      profiler: \"\"\n"
		      "      use_iota_embed: true\n      scan_layers: true\n      logits_via_embedding: false\n");
	write_file(path, buf, n);
}

/* ---- scenarios --------------------------------------------------------- */

/* The ABAB driver: blocks alternate FUSE, tmpfs; op(arg, which) returns
 * the value of one block (seconds per operation, or a throughput). */
typedef double (*block_fn)(void *arg, int which);

static void abab(const char *name, block_fn op, void *a, void *b, bool throughput)
{
	double *va, *vb;
	int i;

	if (!want(name[0] - '0'))
		return;
	va = calloc(nblocks, sizeof(double));
	vb = calloc(nblocks, sizeof(double));
	op(a, 0);             /* warm-up block, discarded */
	op(b, 1);
	for (i = 0; i < nblocks; i++) {
		/* Swap the order every other block so neither side always
		 * runs right after the other. */
		if (i % 2 == 0) {
			va[i] = op(a, 0);
			vb[i] = op(b, 1);
		} else {
			vb[i] = op(b, 1);
			va[i] = op(a, 0);
		}
	}
	report_ratio(name, va, vb, nblocks, throughput);
	free(va);
	free(vb);
}

struct file_arg {
	char path[PATH_MAX];
	int reps;
};

static double block_cat(void *arg, int which)
{
	struct file_arg *f = arg;
	double t0 = now_s();
	int i;

	(void)which;
	for (i = 0; i < f->reps; i++)
		if (cat_file(f->path, NULL, 0) < 0)
			die("read %s: %s", f->path, strerror(errno));
	return (now_s() - t0) / f->reps;
}

struct dir_arg {
	char path[PATH_MAX];
	int reps;
	int expect;
};

/* opendir + readdir + fstatat of every entry, like ls -l without the
 * ACL probes. Returns the number of entries stat'ed. */
static int list_stat(const char *path)
{
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(path);
	int n = 0;

	if (!d)
		die("opendir %s: %s", path, strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] ||
					     (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			die("stat %s/%s: %s", path, de->d_name, strerror(errno));
		n++;
	}
	closedir(d);
	return n;
}

static double block_list(void *arg, int which)
{
	struct dir_arg *d = arg;
	double t0 = now_s();
	int i;

	(void)which;
	for (i = 0; i < d->reps; i++)
		if (list_stat(d->path) != d->expect)
			die("%s: not %d entries", d->path, d->expect);
	return (now_s() - t0) / d->reps;
}

struct thr_arg {
	char dir[PATH_MAX];
	int nthreads;
	int reps;
};

struct worker {
	const struct thr_arg *t;
	int id;
	pthread_t th;
};

static void *worker_main(void *p)
{
	struct worker *w = p;
	char path[PATH_MAX];
	int i;

	for (i = 0; i < w->t->reps; i++) {
		/* Each thread walks its own set of 16 variables. */
		pathf(path, "%s/BENCH_VAR_%05d", w->t->dir,
			 1 + (w->id * 16 + i % 16) % NVARS_SMALL);
		if (cat_file(path, NULL, 0) < 0)
			die("read %s: %s", path, strerror(errno));
	}
	return NULL;
}

static double block_threads(void *arg, int which)
{
	struct thr_arg *t = arg;
	struct worker w[16];
	double t0 = now_s();
	int i;

	(void)which;
	for (i = 0; i < t->nthreads; i++) {
		w[i].t = t;
		w[i].id = i;
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0)
			die("pthread_create");
	}
	for (i = 0; i < t->nthreads; i++)
		pthread_join(w[i].th, NULL);
	return t->nthreads * t->reps / (now_s() - t0);
}

struct resolve_arg {
	char *argv[16];
	int reps;
};

static double block_run(void *arg, int which)
{
	struct resolve_arg *r = arg;
	double total = 0;
	int i;

	(void)which;
	for (i = 0; i < r->reps; i++)
		total += run_cmd(r->argv);
	return total / r->reps;
}

/* Scenario 5: from starting the daemon to the first good read. */
static void mount_to_first_read(const char *specs, const char *mnt, bool ro, int runs,
				const char *label)
{
	double *v;
	char path[PATH_MAX], buf[64];
	int r;

	if (!want(5))
		return;
	v = calloc(runs, sizeof(double));
	pathf(path, "%s/env/bench/x86/BENCH_VAR_00003", mnt);
	for (r = 0; r < runs + 1; r++) {
		double t0 = now_s();
		struct mnt *m;
		struct timespec nap = { 0, 100000 };
		ssize_t n;

		/* Poll the file itself, finely: before the mount it does
		 * not exist in the empty mount point. */
		m = fuse_start(specs, NULL, ro, mnt, false);
		while ((n = cat_file(path, buf, sizeof(buf))) < 0) {
			if (now_s() - t0 > 5)
				die("%s: no first read after 5 s", label);
			nanosleep(&nap, NULL);
		}
		if (n != 2 || memcmp(buf, "3\n", 2))
			die("%s: unexpected content", path);
		if (r > 0)
			v[r - 1] = now_s() - t0;
		undo_mount(m);
	}
	report_abs(label, v, runs);
	free(v);
}

/* Scenario 6: config edit (write + rename) to the new value read back. */
static void reload_latency(const char *specs, const char *root, bool ro, int runs,
			   const char *label)
{
	char cfg[PATH_MAX], mnt[PATH_MAX], path[PATH_MAX], wantv[64], buf[64];
	struct timespec nap = { 0, 200000 };
	struct mnt *m;
	double *v;
	int r;

	if (!want(6))
		return;
	v = calloc(runs, sizeof(double));
	pathf(cfg, "%s/reload-%s.yaml", root, ro ? "ro" : "rw");
	pathf(mnt, "%s/mnt-reload-%s", root, ro ? "ro" : "rw");
	write_config(cfg, "initial");
	m = fuse_mount(specs, cfg, ro, mnt);
	pathf(path, "%s/env/bench/x86/BENCH_VAR_00003", mnt);
	for (r = 0; r < runs + 1; r++) {
		double t0, deadline;
		ssize_t n;

		/* Cache the old value first: the reload must invalidate it. */
		cat_file(path, NULL, 0);
		cat_file(path, NULL, 0);
		snprintf(wantv, sizeof(wantv), "value-%d", r);
		t0 = now_s();
		deadline = t0 + 2;
		write_config(cfg, wantv);
		for (;;) {
			n = cat_file(path, buf, sizeof(buf));
			if (n == (ssize_t)strlen(wantv) + 1 && !memcmp(buf, wantv, n - 1))
				break;
			if (now_s() > deadline)
				die("%s: %s not visible after 2 s", label, wantv);
			nanosleep(&nap, NULL);
		}
		if (r > 0)
			v[r - 1] = now_s() - t0;
		/* Let the watcher's debounce settle before the next edit. */
		usleep(30000);
	}
	undo_mount(m);
	report_abs(label, v, runs);
	free(v);
}

/* The machine's floor for any request the daemon must answer: a one-byte
 * pipe round trip between two processes, as the scheduler places them
 * (an OPEN is one such round trip; on a VM, waking the other CPU can cost
 * more than everything else). Median of blocks of 2,000. */
static void ipc_floor(void)
{
	double v[64];
	int a[2], b[2], i, k, status;
	char x = 0;
	pid_t pid;

	if (pipe(a) < 0 || pipe(b) < 0)
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		/* Only the parent may hold the write end, or no EOF ends this. */
		close(a[1]);
		close(b[0]);
		while (read(a[0], &x, 1) == 1)
			if (write(b[1], &x, 1) != 1)
				break;
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	for (k = 0; k < nblocks && k < 64; k++) {
		double t0 = now_s();

		for (i = 0; i < 2000; i++)
			if (write(a[1], &x, 1) != 1 || read(b[0], &x, 1) != 1)
				die("pipe: %s", strerror(errno));
		v[k] = (now_s() - t0) / 2000;
	}
	close(a[1]);
	waitpid(pid, &status, 0);
	close(b[0]);
	report_abs("0. reference: pipe round trip, 2 processes", v, k);
}

static void usage(void)
{
	fprintf(stderr, "usage: envfs-bench --bin PATH/primus-envfs [--blocks N] "
		"[--only DIGITS] [--keep]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	char specs2k[PATH_MAX], specs10k[PATH_MAX], m_ro[PATH_MAX], m_rw[PATH_MAX];
	char m_tmp[PATH_MAX], m_big[PATH_MAX], path[PATH_MAX], rconf[PATH_MAX];
	char d_ro[PATH_MAX], d_rw[PATH_MAX], d_tmp[PATH_MAX], python[PATH_MAX];
	static char abs_bin[PATH_MAX];
	struct file_arg fa, fb;
	struct dir_arg da, db;
	struct thr_arg ta, tb;
	struct resolve_arg ra, rb;
	struct mnt *ro, *rw, *big;
	double cold[64];
	int i, k, nthr[] = { 1, 2, 4 };
	long hwm;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bin") && i + 1 < argc)
			bin = argv[++i];
		else if (!strcmp(argv[i], "--blocks") && i + 1 < argc)
			nblocks = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--keep"))
			keep = true;
		else
			usage();
	}
	if (!bin)
		usage();
	if (nblocks < 15)
		die("--blocks must be at least 15");
	if (!realpath(bin, abs_bin))
		die("%s: %s", bin, strerror(errno));
	bin = abs_bin;
	if (geteuid() != 0)
		die("must run as root (mounts tmpfs and FUSE, drops caches)");
	if (access("/dev/fuse", R_OK | W_OK) < 0)
		die("/dev/fuse: %s", strerror(errno));

	pathf(tmp, "/tmp/envfs-bench.XXXXXX");
	if (!mkdtemp(tmp))
		die("mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);

	pathf(specs2k, "%s/specs-2k", tmp);
	pathf(specs10k, "%s/specs-10k", tmp);
	write_spec(specs2k, NVARS_SMALL);
	write_spec(specs10k, NVARS_LARGE);
	pathf(m_ro, "%s/mnt-ro", tmp);
	pathf(m_rw, "%s/mnt-rw", tmp);
	pathf(m_tmp, "%s/tmpfs", tmp);
	pathf(m_big, "%s/mnt-10k", tmp);
	ro = fuse_mount(specs2k, NULL, true, m_ro);
	rw = fuse_mount(specs2k, NULL, false, m_rw);
	tmpfs_mount(m_tmp);
	pathf(d_ro, "%s/env/bench/x86", m_ro);
	pathf(d_rw, "%s/env/bench/x86", m_rw);
	pathf(d_tmp, "%s/env/bench/x86", m_tmp);
	copy_dir(d_ro, d_tmp);

	printf("envfs-bench: %s, %d measured blocks (ABAB, one warm-up block "
	       "discarded), %ld CPUs\n", bin, nblocks, sysconf(_SC_NPROCESSORS_ONLN));
	printf("%-46s %6s %6s %6s %12s %12s\n", "scenario (ratio FUSE/tmpfs)", "p50",
	       "p10", "p90", "FUSE p50", "tmpfs p50");

	/* 1. open + read to EOF + close of one variable, warm. */
	fa.reps = fb.reps = 2000;
	pathf(fb.path, "%s/BENCH_VAR_00003", d_tmp);
	pathf(fa.path, "%s/BENCH_VAR_00003", d_ro);
	abab("1. cat one variable, warm, -o ro", block_cat, &fa, &fb, false);
	pathf(fa.path, "%s/BENCH_VAR_00003", d_rw);
	abab("1. cat one variable, warm, writable", block_cat, &fa, &fb, false);

	/* 2. readdir + stat of 2,000 variables (and the views), warm. */
	da.reps = db.reps = 5;
	da.expect = db.expect = NVARS_SMALL + VIEW_COUNT;
	pathf(db.path, "%s", d_tmp);
	pathf(da.path, "%s", d_ro);
	abab("2. readdir+stat 2,000 vars, warm, -o ro", block_list, &da, &db, false);
	pathf(da.path, "%s", d_rw);
	abab("2. readdir+stat 2,000 vars, warm, writable", block_list, &da, &db, false);

	/* 3. env_file of 2,000 variables. */
	fa.reps = fb.reps = 200;
	pathf(fb.path, "%s/env_file", d_tmp);
	pathf(fa.path, "%s/env_file", d_ro);
	abab("3. read env_file (2,000 vars), -o ro", block_cat, &fa, &fb, false);
	pathf(fa.path, "%s/env_file", d_rw);
	abab("3. read env_file (2,000 vars), writable", block_cat, &fa, &fb, false);

	/* 4. reader threads: throughput ratio (higher is better). */
	for (k = 0; k < 3; k++) {
		char label[64];

		ta.nthreads = tb.nthreads = nthr[k];
		ta.reps = tb.reps = 1000;
		pathf(tb.dir, "%s", d_tmp);
		pathf(ta.dir, "%s", d_ro);
		snprintf(label, sizeof(label), "4. %d reader thread%s, throughput, -o ro",
			 nthr[k], nthr[k] > 1 ? "s" : "");
		abab(label, block_threads, &ta, &tb, true);
		pathf(ta.dir, "%s", d_rw);
		snprintf(label, sizeof(label), "4. %d reader thread%s, throughput, writable",
			 nthr[k], nthr[k] > 1 ? "s" : "");
		abab(label, block_threads, &ta, &tb, true);
	}

	/* 8. resolve vs the Python floor (ratio python/resolve: how many
	 * times faster; printed as resolve/python like the others). */
	pathf(rconf, "%s/exp-real.yaml", tmp);
	write_real_config(rconf);
	pathf(python, "%s",
		 access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3");
	memset(&ra, 0, sizeof(ra));
	memset(&rb, 0, sizeof(rb));
	k = 0;
	ra.argv[k++] = (char *)bin;
	ra.argv[k++] = "resolve";
	ra.argv[k++] = "--config";
	ra.argv[k++] = rconf;
	ra.argv[k++] = "-b";
	ra.argv[k++] = "maxtext";
	ra.argv[k++] = "-a";
	ra.argv[k++] = "gfx950";
	rb.argv[0] = python;
	rb.argv[1] = "-c";
	rb.argv[2] = "import os";
	ra.reps = rb.reps = 10;
	abab("8. resolve (shipped specs) / python3 -c 'import os'", block_run, &ra, &rb,
	     false);

	printf("\n%-46s (absolute)\n", "scenario");
	if (want(0))
		ipc_floor();
	/* 2 cold: after dropping the page, dentry and inode caches. */
	for (k = 0; k < 2 && want(2); k++) {
		const char *d = k ? d_rw : d_ro;

		for (i = 0; i < nblocks; i++) {
			double t0;

			drop_caches();
			t0 = now_s();
			if (list_stat(d) != NVARS_SMALL + VIEW_COUNT)
				die("%s: wrong entry count", d);
			cold[i] = now_s() - t0;
		}
		report_abs(k ? "2. readdir+stat 2,000 vars, cold, writable" :
			       "2. readdir+stat 2,000 vars, cold, -o ro", cold, nblocks);
	}
	for (i = 0; i < nblocks && want(2); i++) {
		double t0;

		drop_caches();
		t0 = now_s();
		list_stat(d_tmp);
		cold[i] = now_s() - t0;
	}
	if (want(2))
		report_abs("2. readdir+stat 2,000 files, cold, tmpfs", cold, nblocks);
	undo_mount(ro);
	undo_mount(rw);

	/* 5. mount to first read. */
	mount_to_first_read(specs2k, m_big, false, nblocks, "5. mount to first read, 2,000 vars");
	mount_to_first_read(specs10k, m_big, false, nblocks,
			    "5. mount to first read, 10,000 vars");
	mount_to_first_read(specs10k, m_big, true, nblocks,
			    "5. mount to first read, 10,000 vars, -o ro");

	/* 6. config change to new value visible (inotify reload). */
	reload_latency(specs2k, tmp, true, 100, "6. config change visible, 2,000 vars, -o ro");
	reload_latency(specs2k, tmp, false, 100, "6. config change visible, 2,000 vars, writable");

	/* 7. peak RSS of the daemon with 10,000 variables, after listing
	 * and stat'ing every file, reading every file once and a reload. */
	if (!want(7))
		return 0;
	big = fuse_mount(specs10k, NULL, false, m_big);
	pathf(path, "%s/env/bench/x86", m_big);
	list_stat(path);
	{
		struct dirent *de;
		DIR *d = opendir(path);
		char p[PATH_MAX];

		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			pathf(p, "%s/%s", path, de->d_name);
			cat_file(p, NULL, 0);
		}
		if (d)
			closedir(d);
	}
	pathf(path, "%s/status", m_big);
	cat_file(path, NULL, 0);
	/* A reload: the spec rewritten as is (a new epoch is built while
	 * the old one is still served). */
	write_spec(specs10k, NVARS_LARGE);
	usleep(300000);
	pathf(path, "%s/env/bench/x86/env_file", m_big);
	cat_file(path, NULL, 0);
	hwm = vm_hwm_kib(big->pid);
	printf("%-46s %.1f MiB (VmHWM)\n", "7. daemon peak RSS, 10,000 vars", hwm / 1024.0);
	undo_mount(big);
	return 0;
}

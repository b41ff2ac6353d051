/* slurm: the distributed values Primus's Slurm entry derives; see slurm.h. */
#include "slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hostlist.h"
#include "strbuf.h"

/* scontrol answers from its configuration; a configless node asks the
 * controller, which may not answer: a load never waits longer. */
#define SCONTROL_WAIT_MS 5000
#define SCONTROL_MAX_LINE 4096

/* env's non-empty value of name, or NULL. */
static const char *get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return (*env)[n + 1] ? *env + n + 1 : NULL;
	return NULL;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The first line `scontrol show hostnames list` prints, into first
 * (empty when it printed none, cannot run or does not answer in time),
 * as the entry reads it: stderr and the exit status are ignored. */
static int scontrol_first(char *const *env, const char *list, struct strbuf *first)
{
	char *argv[] = { "scontrol", "show", "hostnames", (char *)list, NULL };
	char *const none[] = { NULL };
	posix_spawn_file_actions_t fa;
	int fds[2] = { -1, -1 }, err = 0, st;
	long long deadline = now_ms() + SCONTROL_WAIT_MS;
	pid_t pid = -1;

	sb_reset(first);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return 0;
	if (posix_spawn_file_actions_init(&fa) != 0)
		goto out;
	err = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) ||
	      posix_spawn_file_actions_adddup2(&fa, fds[1], 1) ||
	      posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0) ||
	      posix_spawnp(&pid, "scontrol", &fa, NULL, argv, env ? env : none);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	fds[1] = -1;
	if (err) {
		pid = -1;
		goto out;
	}
	for (;;) {
		struct pollfd p = { fds[0], POLLIN, 0 };
		long long left = deadline - now_ms();
		char buf[512];
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
			if (errno == EINTR && left > 0)
				continue;
			kill(pid, SIGKILL);
			sb_reset(first);
			break;
		}
		if ((n = read(fds[0], buf, sizeof(buf))) < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if ((err = sb_add(first, buf, (size_t)n)) < 0)
			goto out;
		if (memchr(buf, '\n', (size_t)n) || first->len > SCONTROL_MAX_LINE)
			break;
	}
	err = 0;
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	/* A long list would fill the closed pipe: SIGPIPE ends it. */
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (first->len) {
		first->len = strcspn(first->buf, "\n");
		first->buf[first->len] = '\0';
		if (first->len > SCONTROL_MAX_LINE)
			sb_reset(first);
	}
	return err == -ENOMEM ? err : 0;
}

/* The first name of a list, the way the entry finds it. */
static int first_host(char *const *env, const char *list, struct strbuf *host,
		      const char **how, const char **why)
{
	struct hostlist hl = { 0 };
	int err;

	if ((err = scontrol_first(env, list, host)) < 0)
		return err;
	*how = "slurm:SLURM_NODELIST (scontrol show hostnames)";
	if (host->len)
		return 0;
	*how = "slurm:SLURM_NODELIST (expanded: scontrol printed nothing)";
	if ((err = hostlist_expand(list, &hl, why)) == -ENOMEM)
		return err;
	if (!err && hl.n)
		err = sb_adds(host, hl.names[0]);
	else if (!err)
		*why = "it names no host";
	hostlist_release(&hl);
	return err == -ENOMEM ? err : 0;
}

static int add(struct env_list *out, const char *name, const char *value, const char *source)
{
	return env_list_add(out, name, strlen(name), value, strlen(value), source);
}

/* The first of two variables that is set, and its source. */
static int add_either(struct env_list *out, char *const *env, const char *name,
		      const char *a, const char *a_src, const char *b, const char *b_src)
{
	const char *v = get(env, a);

	if (v)
		return add(out, name, v, a_src);
	if ((v = get(env, b)))
		return add(out, name, v, b_src);
	return 0;
}

static size_t label_len(const char *h)
{
	return strcspn(h, ".");
}

int slurm_detect(char *const *env, bool addr_secret, struct env_list *out,
		 struct diag_list *diags)
{
	struct strbuf host = STRBUF_INIT;
	const char *list, *how = NULL, *why = NULL, *addr;
	int err;

	if (!get(env, "SLURM_JOB_ID"))
		return 0;
	if ((err = add_either(out, env, "NNODES", "SLURM_NNODES", "slurm:SLURM_NNODES",
			      "SLURM_JOB_NUM_NODES", "slurm:SLURM_JOB_NUM_NODES")) < 0 ||
	    (err = add_either(out, env, "NODE_RANK", "SLURM_NODEID", "slurm:SLURM_NODEID",
			      "SLURM_PROCID", "slurm:SLURM_PROCID")) < 0)
		goto out;
	if (!(list = get(env, "SLURM_NODELIST"))) {
		err = diag_add(diags, DC_SLURM_NO_NODELIST, NULL, 0, 0,
			       "SLURM_JOB_ID is set but SLURM_NODELIST is not: MASTER_ADDR is not "
			       "derived, and primus-cli-slurm-entry.sh exits (SLURM_NODELIST not "
			       "set)");
		goto out;
	}
	if ((err = first_host(env, list, &host, &how, &why)) < 0)
		goto out;
	if (!host.len) {
		err = diag_add(diags, DC_SLURM_BAD_NODELIST, NULL, 0, 0,
			       "SLURM_NODELIST=%s: not a Slurm host list (%s): MASTER_ADDR is not "
			       "derived, and primus-cli-slurm-entry.sh exits (failed to resolve the "
			       "first host)", list, why);
		goto out;
	}
	addr = get(env, "MASTER_ADDR");
	/* The entry keeps a MASTER_ADDR whose first label is the host's
	 * (a scheduler's FQDN) and exits on any other. */
	if (!addr)
		err = add(out, "MASTER_ADDR", sb_str(&host), how);
	else if (label_len(addr) != label_len(sb_str(&host)) ||
		 memcmp(addr, sb_str(&host), label_len(addr)))
		err = diag_add(diags, DC_SLURM_MASTER_ADDR, NULL, 0, 0,
			       "MASTER_ADDR=%s in the environment is not the first host of "
			       "SLURM_NODELIST (%s): primus-cli-slurm-entry.sh exits (MASTER_ADDR "
			       "must match the first host in SLURM_NODELIST); unset it or pass "
			       "--env MASTER_ADDR", addr_secret ? "<redacted>" : addr, sb_str(&host));
	else
		err = add(out, "MASTER_ADDR", addr, "slurm:MASTER_ADDR (the first host's)");
out:
	sb_release(&host);
	return err;
}

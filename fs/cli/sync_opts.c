/* The sync options; see sync_opts.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strbuf.h"
#include "sync_opts.h"
#include "text.h"

/* A password file larger than this is not a password file. */
#define PASSWORD_FILE_MAX 4096
#define NAME_MAX_LEN 128
/* A node name may be a whole host name (RFC 1035's 253); the node record
 * (node_record.h) takes as much. */
#define NODE_NAME_MAX 253

const char *const sync_opt_names[SYNC_KEY_END - SYNC_KEY_SYNC] = {
	"sync", "run", "sync_prefix", "sync_ca", "sync_cert", "sync_key", "sync_user",
	"sync_password_file", "sync_node", "sync_timeout", "sync_password",
};

const char sync_opts_help[] =
	"SYNC (share the run's overrides through etcd; docs/SYNC.md):\n"
	"      --sync etcd://HOST:PORT[,HOST:PORT...]\n"
	"                          the etcd cluster (repeatable: the endpoints add up)\n"
	"      --run ID            the run's name in etcd (default: $SLURM_JOB_ID)\n"
	"      --sync-prefix P     keys under P/runs/ID/ (default " SYNC_DEFAULT_PREFIX ")\n"
	"      --sync-ca FILE      trust only this CA (PEM): https to every endpoint\n"
	"      --sync-cert FILE    client certificate (PEM), with --sync-key FILE\n"
	"      --sync-user NAME    authenticate as NAME; the password from\n"
	"                          --sync-password-file FILE or $" SYNC_PASSWORD_ENV ",\n"
	"                          never the command line\n"
	"      --sync-node NAME    this node's name in the run (default: the host name)\n"
	"      --sync-timeout MS   the longest an etcd call may take (default 2000)\n";

static const char *const dashed_names[SYNC_KEY_END - SYNC_KEY_SYNC] = {
	"--sync", "--run", "--sync-prefix", "--sync-ca", "--sync-cert", "--sync-key",
	"--sync-user", "--sync-password-file", "--sync-node", "--sync-timeout",
	"--sync-password",
};

static const char *spelled(int key, bool dashed)
{
	return dashed ? dashed_names[key - SYNC_KEY_SYNC] : sync_opt_names[key - SYNC_KEY_SYNC];
}

static int bad(int key, bool dashed, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(int key, bool dashed, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "primus-envfs: %s%s: ", dashed ? "" : "-o ",
		spelled(key, dashed));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

static int set_one(char **slot, const char *s)
{
	char *copy = xstrdup(s);

	if (!copy) {
		fprintf(stderr, "primus-envfs: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	free(*slot);
	*slot = copy;
	return 0;
}

/* A name that goes into an etcd key as one component: printable ASCII,
 * no '/', not "." or "..". */
static bool name_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (!n || n > max || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~' || *s == '/')
			return false;
	return true;
}

bool sync_node_name_ok(const char *s)
{
	return name_ok(s, NODE_NAME_MAX);
}

/* Refuses arg as a what ("run", "node") name: the name is shown escaped
 * (text_escape), as a name with an ESC or a newline in it would otherwise
 * reach the user's terminal raw or split the message. */
static int bad_name(int key, bool dashed, const char *what, const char *arg, int max)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	if (text_escape(&sb, arg, strlen(arg)) < 0) {
		sb_release(&sb);
		fprintf(stderr, "primus-envfs: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	err = bad(key, dashed, "'%s' is not a %s name (1 to %d printable characters, "
		  "no '/', no space)", sb_str(&sb), what, max);
	sb_release(&sb);
	return err;
}

static int take_endpoints(struct sync_opts *so, const char *arg, bool dashed)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	if (!*arg)
		return bad(SYNC_KEY_SYNC, dashed, "expected etcd://HOST:PORT[,HOST:PORT...]");
	/* user:password@ in a URL would sit in /proc/PID/cmdline for every
	 * user to read, as --sync-password would: refused, the URL not
	 * repeated. */
	if (strchr(arg, '@'))
		return bad(SYNC_KEY_SYNC, dashed, "refused: a user name or password in the URL; "
			   "give --sync-user NAME with --sync-password-file FILE or "
			   SYNC_PASSWORD_ENV);
	if (so->endpoints && (sb_adds(&sb, so->endpoints) < 0 || sb_addc(&sb, ',') < 0))
		goto nomem;
	/* The client takes the list as given (etcd:// once, at its start). */
	if (so->endpoints && !strncmp(arg, "etcd://", 7))
		arg += 7;
	if (sb_adds(&sb, arg) < 0)
		goto nomem;
	err = set_one(&so->endpoints, sb_str(&sb));
	sb_release(&sb);
	return err;
nomem:
	sb_release(&sb);
	fprintf(stderr, "primus-envfs: %s\n", strerror(ENOMEM));
	return -ENOMEM;
}

static int take_prefix(struct sync_opts *so, const char *arg, bool dashed)
{
	size_t n = strlen(arg);
	char *p;

	if (arg[0] != '/' || strstr(arg, "//"))
		return bad(SYNC_KEY_PREFIX, dashed, "expected an etcd key prefix such as "
			   SYNC_DEFAULT_PREFIX " (starting with '/', no '//')");
	for (const char *s = arg; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f)
			return bad(SYNC_KEY_PREFIX, dashed, "a control character in the prefix");
	while (n > 1 && arg[n - 1] == '/')
		n--;
	if (!(p = xstrndup(arg, n == 1 ? 0 : n))) {
		fprintf(stderr, "primus-envfs: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	free(so->prefix);
	so->prefix = p;
	return 0;
}

static int take_timeout(struct sync_opts *so, const char *arg, bool dashed)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	/* strtoul skips leading blanks and takes a sign: digits only. */
	if (*arg < '0' || *arg > '9' || errno || *end || v < 100 || v > 600000)
		return bad(SYNC_KEY_TIMEOUT, dashed, "expected milliseconds from 100 to 600000");
	so->timeout_ms = (unsigned)v;
	return 0;
}

int sync_opts_take(struct sync_opts *so, int key, const char *arg, bool dashed)
{
	switch (key) {
	case SYNC_KEY_SYNC:
		return take_endpoints(so, arg, dashed);
	case SYNC_KEY_RUN:
		if (!name_ok(arg, NAME_MAX_LEN))
			return bad_name(key, dashed, "run", arg, NAME_MAX_LEN);
		return set_one(&so->run, arg);
	case SYNC_KEY_PREFIX:
		return take_prefix(so, arg, dashed);
	case SYNC_KEY_CA:
		return set_one(&so->ca_file, arg);
	case SYNC_KEY_CERT:
		return set_one(&so->cert_file, arg);
	case SYNC_KEY_KEY:
		return set_one(&so->key_file, arg);
	case SYNC_KEY_USER:
		/* etcdctl's --user USER:PASSWORD: the password would be in ps. */
		if (strchr(arg, ':'))
			return bad(key, dashed, "a user name has no ':' (a password on the "
				   "command line is visible to every user in ps); give the "
				   "password in --sync-password-file FILE or $"
				   SYNC_PASSWORD_ENV);
		if (!*arg)
			return bad(key, dashed, "empty user name");
		return set_one(&so->user, arg);
	case SYNC_KEY_PASSWORD_FILE:
		return set_one(&so->password_file, arg);
	case SYNC_KEY_NODE:
		if (!name_ok(arg, NODE_NAME_MAX))
			return bad_name(key, dashed, "node", arg, NODE_NAME_MAX);
		return set_one(&so->node, arg);
	case SYNC_KEY_TIMEOUT:
		return take_timeout(so, arg, dashed);
	case SYNC_KEY_PASSWORD:
		/* Refused without a word of the value. */
		return bad(key, dashed, "refused: a password on the command line is visible "
			   "to every user (ps); use --sync-password-file FILE or $"
			   SYNC_PASSWORD_ENV);
	default:
		return -EINVAL;
	}
}

/* Reads the password file: one line (a trailing newline, or CR LF, is
 * not part of it). Nothing of the content ever goes into a message. */
static int read_password_file(struct sync_opts *so)
{
	const char *path = so->password_file;
	char buf[PASSWORD_FILE_MAX + 1];
	ssize_t n, got = 0;
	int fd, err = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		err = -errno;
		fprintf(stderr, "primus-envfs: --sync-password-file %s: %s\n", path,
			strerror(errno));
		return err;
	}
	while (got < (ssize_t)sizeof(buf) &&
	       (n = read(fd, buf + got, sizeof(buf) - (size_t)got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			fprintf(stderr, "primus-envfs: --sync-password-file %s: %s\n", path,
				strerror(errno));
			goto out;
		}
		got += n;
	}
	err = -EINVAL;
	if (got > PASSWORD_FILE_MAX) {
		fprintf(stderr, "primus-envfs: --sync-password-file %s: larger than %d bytes: "
			"not a password file\n", path, PASSWORD_FILE_MAX);
		goto out;
	}
	if (got && buf[got - 1] == '\n')
		got--;
	if (got && buf[got - 1] == '\r')
		got--;
	if (!got || memchr(buf, '\n', (size_t)got) || memchr(buf, '\0', (size_t)got)) {
		fprintf(stderr, "primus-envfs: --sync-password-file %s: %s\n", path,
			got ? "more than one line (the password is the file's one line)"
			    : "empty");
		goto out;
	}
	if (!(so->password = xstrndup(buf, (size_t)got))) {
		fprintf(stderr, "primus-envfs: %s\n", strerror(ENOMEM));
		err = -ENOMEM;
		goto out;
	}
	err = 0;
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return err;
}

static int take_password(struct sync_opts *so)
{
	const char *env = getenv(SYNC_PASSWORD_ENV);
	int err = 0;

	if (so->password_file && (err = read_password_file(so)) < 0)
		goto out;
	if (!so->password && env && *env && !(so->password = xstrdup(env))) {
		fprintf(stderr, "primus-envfs: %s\n", strerror(ENOMEM));
		err = -ENOMEM;
		goto out;
	}
	if (so->user && !so->password) {
		fprintf(stderr, "primus-envfs: --sync-user %s needs a password: "
			"--sync-password-file FILE or $" SYNC_PASSWORD_ENV "\n", so->user);
		err = -EINVAL;
	} else if (so->password_file && !so->user) {
		fprintf(stderr, "primus-envfs: --sync-password-file without --sync-user\n");
		err = -EINVAL;
	}
out:
	/* Not passed on to anything the daemon resolves or starts. */
	if (env) {
		explicit_bzero((char *)env, strlen(env));
		unsetenv(SYNC_PASSWORD_ENV);
	}
	return err;
}

static int check_file(const char *opt, const char *path)
{
	if (!path || access(path, R_OK) == 0)
		return 0;
	fprintf(stderr, "primus-envfs: %s %s: %s\n", opt, path, strerror(errno));
	return -errno;
}

/* The first sync option given apart from --sync, or NULL. */
static const char *stray_option(const struct sync_opts *so)
{
	if (so->run)
		return "--run";
	if (so->prefix)
		return "--sync-prefix";
	if (so->ca_file)
		return "--sync-ca";
	if (so->cert_file)
		return "--sync-cert";
	if (so->key_file)
		return "--sync-key";
	if (so->user)
		return "--sync-user";
	if (so->password_file)
		return "--sync-password-file";
	if (so->node)
		return "--sync-node";
	if (so->timeout_ms)
		return "--sync-timeout";
	return NULL;
}

int sync_opts_finish(struct sync_opts *so)
{
	const char *stray = stray_option(so), *job;
	char host[HOST_NAME_MAX + 1];
	int err;

	if (!so->endpoints) {
		if (!stray)
			return 0;
		fprintf(stderr, "primus-envfs: %s without --sync etcd://HOST:PORT\n", stray);
		return -EINVAL;
	}
	if (!so->run) {
		job = getenv("SLURM_JOB_ID");
		if (!job || !*job) {
			fprintf(stderr, "primus-envfs: --sync needs --run ID (the run's name "
				"in etcd; $SLURM_JOB_ID is not set)\n");
			return -EINVAL;
		}
		if (!name_ok(job, NAME_MAX_LEN)) {
			fprintf(stderr, "primus-envfs: $SLURM_JOB_ID is not a run name: give "
				"--run ID\n");
			return -EINVAL;
		}
		if ((err = set_one(&so->run, job)) < 0)
			return err;
	}
	if (!so->node) {
		if (gethostname(host, sizeof(host)) < 0 ||
		    (host[sizeof(host) - 1] = 0, !name_ok(host, NODE_NAME_MAX))) {
			fprintf(stderr, "primus-envfs: the host name is not a node name: give "
				"--sync-node NAME\n");
			return -EINVAL;
		}
		if ((err = set_one(&so->node, host)) < 0)
			return err;
	}
	if (!so->prefix && (err = set_one(&so->prefix, SYNC_DEFAULT_PREFIX)) < 0)
		return err;
	if (!so->timeout_ms)
		so->timeout_ms = SYNC_DEFAULT_TIMEOUT_MS;
	if (!so->cert_file != !so->key_file) {
		fprintf(stderr, "primus-envfs: %s without %s\n",
			so->cert_file ? "--sync-cert" : "--sync-key",
			so->cert_file ? "--sync-key" : "--sync-cert");
		return -EINVAL;
	}
	if ((err = take_password(so)) < 0)
		return err;
	if ((err = check_file("--sync-ca", so->ca_file)) < 0 ||
	    (err = check_file("--sync-cert", so->cert_file)) < 0 ||
	    (err = check_file("--sync-key", so->key_file)) < 0)
		return err;
	return 0;
}

void sync_opts_release(struct sync_opts *so)
{
	if (so->password) {
		explicit_bzero(so->password, strlen(so->password));
		free(so->password);
	}
	free(so->endpoints);
	free(so->run);
	free(so->prefix);
	free(so->ca_file);
	free(so->cert_file);
	free(so->key_file);
	free(so->user);
	free(so->password_file);
	free(so->node);
	memset(so, 0, sizeof(*so));
}

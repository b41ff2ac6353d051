/* primus-envfs set, unset and get: an override changed or read the way a
 * write, rm and cat on the mount do, with every failure reported. A
 * shell's `echo v > FILE` cannot report a commit that failed (bash
 * ignores the error close(2) returns); these commands check every step.
 *
 *   primus-envfs set --mount /mnt/primus maxtext/gfx950 NCCL_DEBUG INFO
 *   primus-envfs get --state run.state.yaml maxtext/gfx950 NCCL_DEBUG
 *
 * With --mount DIR they go through the mount (so --sync commits reach
 * etcd first); with INPUTS --state FILE they edit the state file itself,
 * with the mount's rules and its atomic save. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "fdio.h"
#include "infile.h"
#include "load.h"
#include "names.h"
#include "offline_history.h"
#include "state_lock.h"
#include "statefile.h"
#include "strbuf.h"
#include "text.h"

/* Exit statuses beside 0 and CLI_EX_USAGE. */
enum {
	OV_FAILED = 1,         /* refused or failed: nothing changed (get: not set) */
	OV_UNUSABLE = 2,       /* the inputs do not load, or DIR is no mount */
	OV_UNKNOWN = 3,        /* etcd could not be reached: the write may land */
};

enum op { OP_SET, OP_UNSET, OP_GET };

#define OV_HELP_TAIL \
	"  --mount DIR             a primus-envfs mount (with --sync: the commit\n" \
	"                          reaches etcd before this returns)\n" \
	"  --state FILE            no mount: edit (or read) this state file, with the\n" \
	"                          INPUTS the mount would have; refused while a mount\n" \
	"                          holds it\n" \
	"  -h, --help              print this help\n"

#define OV_EXIT_HELP \
	"Exit status: 0 done; 1 refused or failed and nothing changed (a name or\n" \
	"value the rules refuse, a state file that cannot be saved, a commit etcd\n" \
	"did not take: not applied on any node), or for get the variable is not\n" \
	"set; 2 the inputs do not load or DIR is no primus-envfs mount; 3 the\n" \
	"outcome is unknown (etcd could not be reached: the write may still be\n" \
	"applied; DIR/status names it until etcd answers); 64 the command line is\n" \
	"wrong. Every failure is one line on stderr.\n"

static const struct cli_cmd cmds[] = {
	[OP_SET] = {
		.name = "set",
		.flags = CLI_MOUNT | CLI_OPERANDS,
		.synopsis = "[--mount DIR | INPUTS --state FILE] BACKEND/ARCH NAME [VALUE]",
		.help =
		"Override NAME in BACKEND/ARCH with VALUE (without VALUE: standard\n"
		"input, one trailing newline dropped, so a secret never shows in ps), as\n"
		"a write through the mount does, reporting any failure. The options end\n"
		"at BACKEND/ARCH, so VALUE may start with '-'.\n"
		"\n"
		OV_HELP_TAIL "\n" OV_EXIT_HELP,
	},
	[OP_UNSET] = {
		.name = "unset",
		.flags = CLI_MOUNT | CLI_OPERANDS,
		.synopsis = "[--mount DIR | INPUTS --state FILE] BACKEND/ARCH NAME",
		.help =
		"Remove NAME from BACKEND/ARCH as rm on the mount does: an override is\n"
		"dropped (the resolved value comes back), any other value is unset for\n"
		"the run.\n"
		"\n"
		OV_HELP_TAIL "\n" OV_EXIT_HELP,
	},
	[OP_GET] = {
		.name = "get",
		.flags = CLI_MOUNT | CLI_OPERANDS,
		.synopsis = "[--mount DIR | INPUTS --state FILE] BACKEND/ARCH NAME",
		.help =
		"Print NAME's value in BACKEND/ARCH and a newline, as cat on the mount\n"
		"does.\n"
		"\n"
		OV_HELP_TAIL "\n" OV_EXIT_HELP,
	},
};

struct target {
	const struct cli_cmd *cmd;
	char *backend, *arch;         /* split from BACKEND/ARCH; owned */
	const char *name;             /* borrowed from argv */
	char *value;                  /* set: owned */
	size_t len;
};

static int say(const struct target *t, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The bytes a user gave (a name, a directory, a path) as a message shows
 * them: escaped (text_escape: a newline or a terminal escape cannot
 * break the one line or reach the terminal) and cut after SHOWN_MAX
 * bytes. Appends to sb; returns 0 or -ENOMEM. */
#define SHOWN_MAX 128

static int add_shown(struct strbuf *sb, const char *s)
{
	size_t n = strlen(s);
	int err;

	if ((err = text_escape_max(sb, s, n, SHOWN_MAX)) < 0)
		return err;
	return n > SHOWN_MAX ? sb_addf(sb, "(%zu bytes)", n) : 0;
}

/* add_shown of s alone, in a buffer of the caller's (sb_release()). */
static const char *shown(struct strbuf *sb, const char *s)
{
	sb_reset(sb);
	return add_shown(sb, s) < 0 ? "?" : sb_str(sb);
}

static int say(const struct target *t, int rc, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (add_shown(&sb, t->backend) < 0 || sb_addc(&sb, '/') < 0 ||
	    add_shown(&sb, t->arch) < 0 || sb_addc(&sb, '/') < 0 || add_shown(&sb, t->name) < 0)
		sb_reset(&sb);
	fprintf(stderr, "primus-envfs: %s: %s: ", t->cmd->name, sb_str(&sb));
	sb_release(&sb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return rc;
}

/* Standard input, up to one byte past the largest value and its
 * newline, so "too large" is told without reading a stream to its end. */
static int read_stdin(struct target *t)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[8192];
	ssize_t n;

	while (sb.len <= STATEFILE_VALUE_MAX + 1) {
		if ((n = read(0, buf, sizeof(buf))) < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sb_release(&sb);
			return say(t, OV_FAILED, "cannot read the value from standard input: %s",
				   strerror(errno));
		}
		if (n == 0)
			break;
		if (sb_add(&sb, buf, (size_t)n) < 0) {
			sb_release(&sb);
			return say(t, OV_FAILED, "%s", strerror(ENOMEM));
		}
	}
	if (sb.len && sb.buf[sb.len - 1] == '\n')
		sb.len--;
	t->value = sb_detach(&sb, &t->len);
	return t->value ? 0 : say(t, OV_FAILED, "%s", strerror(ENOMEM));
}

/* The operands, and what the rules refuse before anything is touched. */
static int take_operands(struct target *t, const struct cli_args *a, enum op op)
{
	const char *dir, *slash;
	int want = op == OP_SET ? 3 : 2;

	if (a->noperands < 2 || a->noperands > want)
		return cli_usage_error(t->cmd, "want BACKEND/ARCH NAME%s", op == OP_SET ?
				       " [VALUE]" : "");
	if (!a->mount == !a->ci.state)
		return cli_usage_error(t->cmd, "give --mount DIR or --state FILE (one of them)");
	dir = a->command[0];
	slash = strchr(dir, '/');
	if (!slash || slash == dir || !slash[1] || strchr(slash + 1, '/')) {
		struct strbuf sb = STRBUF_INIT;
		int rc;

		rc = cli_usage_error(t->cmd, "'%s' is not BACKEND/ARCH", shown(&sb, dir));
		sb_release(&sb);
		return rc;
	}
	if (!(t->backend = xstrndup(dir, (size_t)(slash - dir))) ||
	    !(t->arch = xstrdup(slash + 1)))
		return OV_FAILED;
	t->name = a->command[1];
	/* get reads any name a directory shows (a config may set MY-VAR,
	 * read-only in the mount); set and unset change only what the
	 * mount lets a write change. */
	if (op == OP_GET ? !*t->name || strchr(t->name, '/') || !strcmp(t->name, ".") ||
			   !strcmp(t->name, "..")
			 : !env_name_valid(t->name, strlen(t->name)))
		return say(t, OV_FAILED, op == OP_GET ? "not a name a directory can show (empty, "
			   "'.', '..' or holding '/')" : "not a variable name "
			   "([A-Za-z_][A-Za-z0-9_]*); nothing changed");
	/* The mount's limit (a file name): an override no mount can show
	 * is not written to the state file either. */
	if (strlen(t->name) > NAMES_VAR_MAX)
		return say(t, OV_FAILED, "a name longer than %d bytes%s", NAMES_VAR_MAX,
			   op == OP_GET ? "" : "; nothing changed");
	if (op != OP_SET)
		return 0;
	if (a->noperands == 3) {
		t->len = strlen(a->command[2]);
		if (!(t->value = xstrdup(a->command[2])))
			return OV_FAILED;
	} else if (read_stdin(t)) {
		return OV_FAILED;
	}
	if (memchr(t->value, '\0', t->len))
		return say(t, OV_FAILED, "the value holds a NUL byte, which no environment can "
			   "carry; nothing changed");
	if (t->len > STATEFILE_VALUE_MAX)
		return say(t, OV_FAILED, "the value is over %u bytes, the most an override may "
			   "hold; nothing changed", STATEFILE_VALUE_MAX);
	return 0;
}

/* ---- through a mount ---------------------------------------------------- */

/* Why the mount's last commit failed, as its status says
 * (sync_last_error), escaped into why; empty when it says nothing (no
 * --sync, no error, the mount gone). */
static void status_error(const char *mount, struct strbuf *why)
{
	static const char key[] = "sync_last_error: ";
	const size_t klen = sizeof(key) - 1;
	struct strbuf path = STRBUF_INIT;
	char *buf = NULL;
	size_t len = 0, at = 0, end;

	if (sb_addf(&path, "%s/status", mount) < 0 ||
	    infile_read(sb_str(&path), 1 << 20, &buf, &len) < 0)
		goto out;
	for (; at < len; at = end + 1) {
		const char *nl = memchr(buf + at, '\n', len - at);

		end = nl ? (size_t)(nl - buf) : len;
		if (end - at < klen || memcmp(buf + at, key, klen))
			continue;
		at += klen;
		if (end - at != 4 || memcmp(buf + at, "none", 4))
			text_escape(why, buf + at, end - at);
		break;
	}
out:
	free(buf);
	sb_release(&path);
}

/* What an errno of the mount means for t. */
static int mount_failed(const char *mount, const struct target *t, int err)
{
	struct strbuf why = STRBUF_INIT;
	int rc;

	/* The mount keeps EIO for "applied nowhere" (docs/SYNC.md). */
	if (err == ETIMEDOUT) {
		/* A mount that ended (SIGTERM) has no status left: its log
		 * says how the outcome was settled, or that it was not. */
		if (sb_addf(&why, "%s/status", mount) == 0 && access(sb_str(&why), R_OK) == 0)
			rc = say(t, OV_UNKNOWN, "outcome unknown: etcd could not be reached, so "
				 "the write may still be applied; %s/status names it until etcd "
				 "answers", mount);
		else
			rc = say(t, OV_UNKNOWN, "outcome unknown: etcd could not be reached, so "
				 "the write may still be applied; the mount has ended, and its log "
				 "says whether it learned the outcome");
		sb_release(&why);
		return rc;
	}
	if (err == EIO) {
		status_error(mount, &why);
		if (why.len)
			rc = say(t, OV_FAILED, "not applied on any node (the mount's "
				 "sync_last_error: %s)", sb_str(&why));
		else
			rc = say(t, OV_FAILED, "not applied: the mount could not commit it "
				 "(Input/output error; its log says why)");
		sb_release(&why);
		return rc;
	}
	if (err == ENOENT && t->value == NULL)
		return say(t, OV_FAILED, "not set");
	return say(t, OV_FAILED, "%s; nothing changed", strerror(err));
}

/* VALUE and the newline the mount takes off, committed at close(). */
static int mount_set(const char *path, const struct target *t)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), err;

	if (fd < 0)
		return -errno;
	err = fd_write_all(fd, t->value, t->len);
	if (!err)
		err = fd_write_all(fd, "\n", 1);
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

static int mount_get(const char *path)
{
	char buf[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || fwrite(buf, 1, (size_t)n, stdout) != (size_t)n) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
	}
	close(fd);
	return err;
}

static int via_mount(const char *mount, const struct target *t, enum op op)
{
	struct strbuf path = STRBUF_INIT;
	struct stat st;
	int rc, err;

	if (sb_addf(&path, "%s/status", mount) < 0)
		return OV_FAILED;
	if (stat(sb_str(&path), &st) < 0 || !S_ISREG(st.st_mode)) {
		struct strbuf m = STRBUF_INIT;

		fprintf(stderr, "primus-envfs: %s: --mount %s: not a primus-envfs mount (no "
			"status file)\n", t->cmd->name, shown(&m, mount));
		sb_release(&m);
		rc = OV_UNUSABLE;
		goto out;
	}
	sb_reset(&path);
	if (sb_addf(&path, "%s/env/%s/%s", mount, t->backend, t->arch) < 0)
		return OV_FAILED;
	if (stat(sb_str(&path), &st) < 0 || !S_ISDIR(st.st_mode)) {
		struct strbuf b = STRBUF_INIT, r = STRBUF_INIT, m = STRBUF_INIT;

		fprintf(stderr, "primus-envfs: %s: no directory %s/%s in %s\n", t->cmd->name,
			shown(&b, t->backend), shown(&r, t->arch), shown(&m, mount));
		sb_release(&b);
		sb_release(&r);
		sb_release(&m);
		rc = CLI_EX_USAGE;
		goto out;
	}
	if (sb_addf(&path, "/%s", t->name) < 0)
		return OV_FAILED;
	if (op == OP_SET)
		err = mount_set(sb_str(&path), t);
	else if (op == OP_UNSET)
		err = unlink(sb_str(&path)) < 0 ? -errno : 0;
	else
		err = mount_get(sb_str(&path));
	rc = err ? mount_failed(mount, t, -err) : 0;
out:
	sb_release(&path);
	return rc;
}

/* ---- on a state file ---------------------------------------------------- */

static int state_change(const struct cli_args *a, const struct world *w,
			const struct target *t, const char *arch, enum op op)
{
	struct override_set ov = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct state_lock lock = { .path = NULL, .fd = -1 };
	struct snapshot *s = NULL;
	const struct snap_var *v;
	int rc = OV_FAILED, err;

	/* get only reads: a save is an atomic rename, and a running mount
	 * may hold the lock. */
	if (op != OP_GET && state_lock_take(a->ci.state, &lock) < 0)
		goto out;
	if ((err = statefile_load(lock.path ? lock.path : a->ci.state, &ov, &d)) < 0) {
		print_diags(&d, DIAG_ERROR, NULL);
		rc = OV_UNUSABLE;
		goto out;
	}
	/* A --sync node's state: the run's overrides replace it at the
	 * node's next start, so a change made here would be lost. */
	if (op != OP_GET && ov.sync_run) {
		struct strbuf f = STRBUF_INIT, n = STRBUF_INIT, r = STRBUF_INIT;

		rc = say(t, OV_FAILED, "%s is the state of node %s in the --sync run %s: a change "
			 "made here does not reach the run, and the node's next start replaces "
			 "it with the run's overrides; write it through a mount of the run "
			 "(%s --mount DIR ...); nothing changed", shown(&f, a->ci.state),
			 shown(&n, ov.sync_node), shown(&r, ov.sync_run), t->cmd->name);
		sb_release(&f);
		sb_release(&n);
		sb_release(&r);
		goto out;
	}
	if ((err = resolve_dir(w, &ov, t->backend, arch, &s)) < 0) {
		fprintf(stderr, "primus-envfs: %s: %s\n", t->cmd->name, strerror(-err));
		goto out;
	}
	v = snapshot_find(s, t->name, strlen(t->name));
	if (op != OP_SET && (!v || !v->set)) {
		rc = say(t, OV_FAILED, "not set%s", op == OP_UNSET ? "; nothing changed" : "");
		goto out;
	}
	if (op == OP_GET) {
		fwrite(v->value, 1, v->value_len, stdout);
		putchar('\n');
		rc = 0;
		goto out;
	}
	/* rm of an override brings the resolved value back; rm of anything
	 * else unsets it for this run (the mount's rule). */
	if (op == OP_SET)
		err = override_set_put(&ov, t->backend, arch, t->name, t->value, t->len);
	else if (override_set_find(&ov, t->backend, arch, t->name))
		err = override_set_drop(&ov, t->backend, arch, t->name);
	else
		err = override_set_put(&ov, t->backend, arch, t->name, NULL, 0);
	if (!err)
		err = statefile_save(lock.path, &ov);
	rc = err ? say(t, OV_FAILED, "cannot save --state %s: %s; nothing changed",
		       a->ci.state, strerror(-err)) : 0;
	/* A change of the run as a write through the mount is: in the
	 * history the next mount tells (after the state: it is only a
	 * record, and the change stands without it). */
	if (!err) {
		struct snapshot *s2 = NULL;
		char msg[512] = "";

		if ((err = resolve_dir(w, &ov, t->backend, arch, &s2)) < 0 ||
		    offline_history_note(lock.path, s, s2, op == OP_SET ? HIST_WRITE : HIST_RM, msg,
					 sizeof(msg)) < 0)
			fprintf(stderr, "primus-envfs: %s: warning: the change is saved, its "
				"history is not: %s\n", t->cmd->name,
				*msg ? msg : strerror(-err));
		snapshot_unref(s2);
	}
out:
	snapshot_unref(s);
	diag_list_release(&d);
	override_set_release(&ov);
	state_lock_release(&lock);
	return rc;
}

static int via_state(struct cli_args *a, const struct target *t, enum op op)
{
	struct world *w = NULL;
	const char *arch;
	int rc;

	if (inputs_finish(&a->ci) < 0)
		return OV_UNUSABLE;
	if (load_world(&a->ci, true, &w) < 0) {
		rc = OV_UNUSABLE;
		goto out;
	}
	if ((rc = select_backend(w, t->backend)) != 0 ||
	    (rc = select_arch(w, t->backend, t->arch, &arch)) != 0)
		goto out;
	rc = state_change(a, w, t, arch, op);
out:
	world_free(w);
	return rc;
}

static int run(enum op op, int argc, char **argv)
{
	struct cli_args a;
	struct target t = { .cmd = &cmds[op] };
	int rc;

	if (cli_parse(t.cmd, argc, argv, &a) < 0) {
		rc = CLI_EX_USAGE;
		goto out;
	}
	rc = 0;
	if (a.help || (rc = take_operands(&t, &a, op)) != 0)
		goto out;
	rc = a.mount ? via_mount(a.mount, &t, op) : via_state(&a, &t, op);
	if (fflush(stdout) != 0 && !rc)
		rc = say(&t, OV_FAILED, "cannot write the value: %s", strerror(errno));
out:
	free(t.backend);
	free(t.arch);
	free(t.value);
	inputs_release(&a.ci);
	return rc;
}

int cmd_set(int argc, char **argv)
{
	return run(OP_SET, argc, argv);
}

int cmd_unset(int argc, char **argv)
{
	return run(OP_UNSET, argc, argv);
}

int cmd_get(int argc, char **argv)
{
	return run(OP_GET, argc, argv);
}

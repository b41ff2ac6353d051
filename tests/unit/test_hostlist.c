/* hostlist: Slurm's host list syntax, expanded as scontrol does, and
 * compared with `scontrol show hostnames` itself where Slurm is
 * installed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "hostlist.h"
#include "strbuf.h"

/* The names joined by single blanks; caller frees. */
static char *joined(const char *expr, int *err, const char **why)
{
	struct hostlist hl = { 0 };
	struct strbuf sb = STRBUF_INIT;
	size_t k;

	*why = NULL;
	*err = hostlist_expand(expr, &hl, why);
	for (k = 0; k < hl.n; k++) {
		assert_int_equal(sb_adds(&sb, hl.names[k]), 0);
		if (k + 1 < hl.n)
			assert_int_equal(sb_addc(&sb, ' '), 0);
	}
	hostlist_release(&hl);
	return sb_detach(&sb, NULL);
}

static void expands(const char *expr, const char *want)
{
	const char *why;
	int err;
	char *got = joined(expr, &err, &why);

	if (err)
		fail_msg("%s: %d (%s)", expr, err, why ? why : "");
	if (strcmp(got, want))
		fail_msg("%s: got '%s', want '%s'", expr, got, want);
	free(got);
}

static void refused(const char *expr)
{
	const char *why;
	int err;
	char *got = joined(expr, &err, &why);

	if (err != -EINVAL)
		fail_msg("%s: got %d '%s', want -EINVAL", expr, err, got);
	assert_non_null(why);
	assert_true(*why != '\0');
	free(got);
}

static void test_hostlist__ranges_lists_and_zero_padding(void **state)
{
	(void)state;
	expands("node[01-04,07],gpu-a[1-2]", "node01 node02 node03 node04 node07 gpu-a1 gpu-a2");
	expands("foo", "foo");
	expands("n[9-11]", "n9 n10 n11");
	expands("n[08-10]", "n08 n09 n10");
	expands("n[098-101]", "n098 n099 n100 n101");
	expands("n[1-010]", "n1 n2 n3 n4 n5 n6 n7 n8 n9 n10");
	expands("n[010-12]", "n010 n011 n012");
	expands("n[01-3]", "n01 n02 n03");
	expands("n[00-01]", "n00 n01");
	expands("n[3,1,2]", "n3 n1 n2");
	expands("n[1-2,2]", "n1 n2 n2");
	expands("n[1-1]", "n1");
	expands("n[1-]", "n1");
	expands("[1-2]", "1 2");
	expands("x1[1-2]", "x11 x12");
	expands("n1-3", "n1-3");
	expands("n[4294967296]", "n4294967296");
}

static void test_hostlist__commas_and_blanks_separate_items_outside_brackets(void **state)
{
	(void)state;
	expands("a,b,,c", "a b c");
	expands("n1,,", "n1");
	expands(" n1 ", "n1");
	expands("a b\tc", "a b c");
	expands("n[1-2],n[1-2]", "n1 n2 n1 n2");
	expands("n1,n[2-3],m", "n1 n2 n3 m");
	expands("", "");
	expands(",", "");
}

static void test_hostlist__several_groups_multiply_in_slurms_order(void **state)
{
	(void)state;
	expands("a[1-2]b[3-4]", "a1b3 a1b4 a2b3 a2b4");
	expands("n[1-2][3-4]", "n13 n14 n23 n24");
	expands("n[1-2]-[3-4]", "n1-3 n1-4 n2-3 n2-4");
	expands("p[1-2,4]q[7,9]", "p1q7 p1q9 p2q7 p2q9 p4q7 p4q9");
	expands("a[1-2]b[3-4]c[5-6]",
		"a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 a1b4c6 a2b4c5 a2b4c6");
	expands("a[1-3]b[4-5]c[6-7]",
		"a1b4c6 a1b4c7 a2b4c6 a2b4c7 a3b4c6 a3b4c7 a1b5c6 a1b5c7 a2b5c6 a2b5c7 "
		"a3b5c6 a3b5c7");
	expands("a[1-2]b[3-4]c[5-6]d[7-8]",
		"a1b3c5d7 a1b3c5d8 a2b3c5d7 a2b3c5d8 a1b4c5d7 a1b4c5d8 a2b4c5d7 a2b4c5d8 "
		"a1b3c6d7 a1b3c6d8 a2b3c6d7 a2b3c6d8 a1b4c6d7 a1b4c6d8 a2b4c6d7 a2b4c6d8");
	expands("a[1]b[2]c[3]", "a1b2c3");
}

static void test_hostlist__what_slurm_refuses_is_refused(void **state)
{
	(void)state;
	refused("n[5-3]");
	refused("n[]");
	refused("n[1,,2]");
	refused("n[-3]");
	refused("n[a-c]");
	refused("x[1-3:2]");
	refused("n[0x1-2]");
	refused("n[1-3]]");
	refused("n[[1-2]]");
	refused("a[1-2]b");
	refused("n[1-2]x");
	refused("a[1-2,4-5]b");
	refused("rack[1-2]-n[01-02]x");
	refused("n[1-3]x,y[1-2]");
	refused("n[1-65537]");
}

/* Where Slurm's parser prints a name no node has (strtoul's blanks and
 * signs, an unclosed bracket), a list of ours says it is wrong instead. */
static void test_hostlist__slurms_accidents_are_refused(void **state)
{
	(void)state;
	refused("n[1-3");
	refused("n]1[");
	refused("n[ 1-2]");
	refused("n[+1-2]");
	refused("n[1- 2]");
	refused("n[99999999999999999999]");
}

static void test_hostlist__a_range_of_65536_names_is_the_limit(void **state)
{
	struct hostlist hl = { 0 };
	const char *why = NULL;

	(void)state;
	assert_int_equal(hostlist_expand("n[1-65536]", &hl, &why), 0);
	assert_int_equal(hl.n, 65536);
	assert_string_equal(hl.names[65535], "n65536");
	hostlist_release(&hl);
	/* Groups that multiply past the bound are refused, not allocated. */
	assert_int_equal(hostlist_expand("a[1-65536]b[1-65536]", &hl, &why), -E2BIG);
	assert_null(hl.names);
	hostlist_release(&hl);
}

/* ---- against scontrol ------------------------------------------------- */

static const char *const compared[] = {
	"node[01-04,07],gpu-a[1-2]", "a[1-2]b[3-4]", "n[1-010]", "n[010-12]", "n[5-3]",
	"n1-3", "a,b,,c", "n[1-3]]", "n[]", "n[1,,2]", "n[9-11]", "n[098-101]", "foo",
	"a[1-2],b", "x[1-3:2]", "n[1-2]-[3-4]", " n1 ", "n[01-3]", "a b", "[1-2]",
	"n[a-c]", "n[1-2],n[1-2]", "n[3,1,2]", "n[-3]", "n[1-]", "n[00-01]", "n[0001-3]",
	"n[1-2]]x", "n[[1-2]]", "n1,,", ",", "n[1-2]x[3]", "n[01-02],m", "a[1-2,4-5]b",
	"a[1-2]b", "a[1-2]b,c", "a[1-2]-x", "a[1,3]b", "a[1-2]b[1-2]c", "a[1-2]b[1-2]",
	"a[1]b[2]c[3]", "a[1-2]b[3-4]c[5-6]", "a[1-2]b[3-4]c[5-6]d", "a[1-3]b[4-5]c[6-7]",
	"a[1-2]b[3-4]c[5-6]d[7-8]", "a[1-2]b[3-4]c[5-6]d[7-8]e[0-1]", "a[1,2]b[3,4]c[5,6]",
	"p[1-2,4]q[7,9]", "n[1-2,2]", "n[1-3]x,y[1-2]", "x1[1-2]", "n[1-2]1", "n[2]",
	"n[1-1]", "n[08-10]", "n[0-0]", "n1,n[2-3]", "n.a[1-2].b", "n[1-2].c",
	"n[1-2][3-4]", "n[0x1-2]", "n[1-2 ]", "n[1-2],,m", "n[4294967295]",
	"n[4294967296]", "n[1-3]-[5-6]x", "gpu-[001-128]", "r[01-16]n[01-64]",
	"login1,compute[0001-0512],gpu[1-4]x[1-2]", "n[1-65536]", "n[1-65537]",
	"a[7-9,1-3]", "node-7", "[01-03]x[2]", "a.b.c", "n[001-1000]",
};

/* scontrol's stdout for expr, lines joined by blanks; NULL when it
 * cannot run. Caller frees. */
static char *scontrol(const char *conf, const char *expr)
{
	char *argv[] = { "scontrol", "show", "hostnames", (char *)expr, NULL };
	char confvar[96], *envp[] = { confvar, NULL };
	posix_spawn_file_actions_t fa;
	int fds[2];
	pid_t pid;
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	int st;

	snprintf(confvar, sizeof(confvar), "SLURM_CONF=%s", conf);
	assert_int_equal(pipe(fds), 0);
	/* posix_spawn, not fork: a sanitizer build's fork copies page
	 * tables of terabytes of shadow memory, eighty times. */
	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	assert_int_equal(posix_spawn_file_actions_adddup2(&fa, fds[1], 1), 0);
	assert_int_equal(posix_spawn_file_actions_addclose(&fa, fds[0]), 0);
	assert_int_equal(posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0), 0);
	if (posix_spawnp(&pid, "scontrol", &fa, NULL, argv, envp) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return NULL;
	}
	while ((n = read(fds[0], buf, sizeof(buf))) > 0)
		assert_int_equal(sb_add(&sb, buf, (size_t)n), 0);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 127) {
		sb_release(&sb);
		return NULL;
	}
	while (sb.len && sb.buf[sb.len - 1] == '\n')
		sb.buf[--sb.len] = '\0';
	for (size_t k = 0; k < sb.len; k++)
		if (sb.buf[k] == '\n')
			sb.buf[k] = ' ';
	return sb_detach(&sb, NULL);
}

static void test_hostlist__every_expression_expands_as_scontrol_does(void **state)
{
	char dir[] = "/tmp/envfs-hostlist.XXXXXX", conf[64];
	FILE *f;
	size_t k;

	(void)state;
	if (system("command -v scontrol >/dev/null 2>&1") != 0)
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(conf, sizeof(conf), "%s/slurm.conf", dir);
	assert_non_null(f = fopen(conf, "w"));
	/* scontrol reads a configuration before it expands anything; it
	 * needs no controller for hostnames. */
	fputs("ClusterName=hostlist\nSlurmctldHost=localhost\n"
	      "NodeName=localhost CPUs=1 State=UNKNOWN\n"
	      "PartitionName=p Nodes=localhost Default=YES\n", f);
	fclose(f);
	for (k = 0; k < sizeof(compared) / sizeof(compared[0]); k++) {
		const char *why;
		int err;
		char *ours = joined(compared[k], &err, &why);
		char *theirs = scontrol(conf, compared[k]);

		if (!theirs)
			fail_msg("scontrol show hostnames '%s' did not run", compared[k]);
		/* A refused list is one scontrol prints nothing for. */
		if (err && err != -EINVAL && err != -E2BIG)
			fail_msg("%s: %d", compared[k], err);
		if (strcmp(err ? "" : ours, theirs))
			fail_msg("'%s': ours '%.200s' (%d), scontrol's '%.200s'", compared[k],
				 err ? "" : ours, err, theirs);
		free(ours);
		free(theirs);
	}
	unlink(conf);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostlist__ranges_lists_and_zero_padding),
		cmocka_unit_test(test_hostlist__commas_and_blanks_separate_items_outside_brackets),
		cmocka_unit_test(test_hostlist__several_groups_multiply_in_slurms_order),
		cmocka_unit_test(test_hostlist__what_slurm_refuses_is_refused),
		cmocka_unit_test(test_hostlist__slurms_accidents_are_refused),
		cmocka_unit_test(test_hostlist__a_range_of_65536_names_is_the_limit),
		cmocka_unit_test(test_hostlist__every_expression_expands_as_scontrol_does),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

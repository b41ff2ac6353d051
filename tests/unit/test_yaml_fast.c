/* yaml_fast: the fast path against the libyaml path, on every YAML file of
 * the tree and on crafted snippets. Whenever the fast path answers, its tree
 * (or its limit error) must be libyaml's exactly; and it must answer for
 * the shipped specs and the state file, or it speeds nothing up. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "statefile.h"
#include "yaml_fast.h"
#include "yaml_tree.h"
#include "../ytree_diff.h"

/* Fails the test with the first difference between the trees. */
static void same_tree(const struct ynode *a, const struct ynode *b, const char *name)
{
	struct strbuf why = STRBUF_INIT;

	if (ytree_differ(a, b, &why))
		fail_msg("%s: %s", name, sb_str(&why));
	sb_release(&why);
}

/* Fails the test with the first difference between the diagnostics. */
static void same_diags(const struct diag_list *a, const struct diag_list *b,
		       const char *name)
{
	struct strbuf why = STRBUF_INIT;

	if (ydiags_differ(a, b, &why))
		fail_msg("%s: %s", name, sb_str(&why));
	sb_release(&why);
}

/* Runs both paths (and the automatic one) over buf; returns true when the
 * fast path answered by itself. */
static bool differ(const char *name, const char *buf, size_t len)
{
	struct diag_list dl = DIAG_LIST_INIT, df = DIAG_LIST_INIT, da = DIAG_LIST_INIT;
	struct ydoc *l = NULL, *f = NULL, *a = NULL;
	int rl, rf, ra;

	rl = ydoc_load_buffer_mode(name, buf, len, YDOC_LIBYAML, &l, &dl);
	rf = ydoc_load_buffer_mode(name, buf, len, YDOC_FAST, &f, &df);
	ra = ydoc_load_buffer_mode(name, buf, len, YDOC_AUTO, &a, &da);
	if (rl != ra)
		fail_msg("%s: libyaml %d, auto %d", name, rl, ra);
	same_diags(&dl, &da, name);
	if (rl == 0)
		same_tree(l->root, a->root, name);
	if (rf == YFAST_UNSUPPORTED) {
		assert_null(f);
		assert_int_equal(df.n, 0);
	} else {
		if (rf != rl)
			fail_msg("%s: libyaml %d, fast %d", name, rl, rf);
		same_diags(&dl, &df, name);
		if (rl == 0)
			same_tree(l->root, f->root, name);
	}
	ydoc_free(l);
	ydoc_free(f);
	ydoc_free(a);
	diag_list_release(&dl);
	diag_list_release(&df);
	diag_list_release(&da);
	return rf != YFAST_UNSUPPORTED;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(fp);
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	assert_true(n >= 0);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

static bool is_yaml(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && strcmp(name + n - 5, ".yaml") == 0;
}

/* Every .yaml under dir, recursively; counts files and fast answers. */
static void walk(const char *dir, size_t *files, size_t *fast)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	struct stat st;

	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		assert_int_equal(stat(path, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			walk(path, files, fast);
		} else if (is_yaml(e->d_name)) {
			size_t len;
			char *buf = slurp(path, &len);

			(*files)++;
			*fast += differ(path, buf, len);
			free(buf);
		}
	}
	closedir(d);
}

static const char *env_dir(const char *var)
{
	const char *dir = getenv(var);

	assert_non_null(dir);
	return dir;
}

static void test_yaml_fast__every_yaml_file_of_the_tree_agrees(void **state)
{
	char hostile[4096];
	size_t files = 0, fast = 0;

	(void)state;
	walk(env_dir("ENVFS_SPECS"), &files, &fast);
	walk(env_dir("ENVFS_FIXTURES"), &files, &fast);
	snprintf(hostile, sizeof(hostile), "%s/../hostile", env_dir("ENVFS_FIXTURES"));
	walk(hostile, &files, &fast);
	print_message("%zu files, %zu answered by the fast path\n", files, fast);
	assert_true(files > 100);
	assert_true(fast > files / 3);
}

static void test_yaml_fast__every_shipped_spec_takes_the_fast_path(void **state)
{
	const char *dir = env_dir("ENVFS_SPECS");
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	size_t n = 0;

	(void)state;
	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t len;
		char *buf;

		if (!is_yaml(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		buf = slurp(path, &len);
		if (!differ(path, buf, len))
			fail_msg("%s: the fast path gave up", path);
		free(buf);
		n++;
	}
	closedir(d);
	assert_true(n >= 5);
}

static void test_yaml_fast__the_state_file_takes_the_fast_path(void **state)
{
	struct override_set ov = { 0 };
	struct strbuf sb = STRBUF_INIT;
	static const char odd[] = "q\"uote\\back\tslash\nline\r\x01\x7f caf\xc3\xa9 "
				  "\xe2\x80\xa8 \xc2\x85 \xf0\x9f\x98\x80 end";

	(void)state;
	assert_int_equal(statefile_render(&ov, &sb), 0);
	assert_true(differ("empty.state", sb.buf, sb.len));
	sb_reset(&sb);
	assert_int_equal(override_set_put(&ov, "maxtext", "gfx950", "A", "4", 1), 0);
	assert_int_equal(override_set_put(&ov, "maxtext", "gfx950", "UNSET", NULL, 0), 0);
	assert_int_equal(override_set_put(&ov, "torch_fl", "cuda", "ODD", odd,
					  sizeof(odd) - 1), 0);
	assert_int_equal(override_set_put(&ov, "torch_fl", "cuda", "BIN", "\xff\xfe", 2), 0);
	assert_int_equal(override_set_put(&ov, "torch_fl", "cuda", "EMPTY", "", 0), 0);
	assert_int_equal(statefile_render(&ov, &sb), 0);
	if (!differ("full.state", sb.buf, sb.len))
		fail_msg("the fast path gave up on:\n%s", sb.buf);
	override_set_release(&ov);
	sb_release(&sb);
}

/* Snippets: each supported form, each reason to give up, and the edges
 * between them. Only agreement is asserted, except where marked. */
static const char *const snippets[] = {
	"", "\n", "# only\n", "a: 1", "a: 1\n", "a:\n", "a:", "a: # c\n",
	"a:b\n", "a: b: c\n", "a: b:c\n", "a:b: c\n", "a : b\n", "a  b : c d \n",
	"- - x\n", "- - x\n  - y\n- z\n", "-\n", "-\n-\n", "- \n  a: 1\n",
	"-1\n", "- 1\n", "- -1\n", "--x: 1\n", "-: 1\n", "- -\n",
	"key: 'it''s'\n", "key: ''''\n", "key: ''\n", "key: \"\"\n",
	"key: \"\\u00e9\"\n", "key: \"\\x41\\U0001F600\\N\\_\\L\\P\"\n",
	"key: \"\\a\\b\\e\\f\\v\\/\\ \\\"\\\\\"\n", "key: \"\\0\"\n",
	"key: \"\\x00\"\n", "key: \"\\ud800\"\n", "key: \"\\q\"\n", "key: \"\\x4\"\n",
	"key: \"a\" # c\n", "key: \"a\"# c\n", "key: \"a\" b\n", "key: \"a\": b\n",
	"\"key\": v\n", "'key' : v\n", "\"k\\\"ey\": v\n", "\"a\":b\n",
	"l: [a,b,]\n", "l: [a, \"b\", [c]]\n", "l: []\n", "l: [ ]\n", "l: [,]\n",
	"l: [a b]\n", "l: [a:b]\n", "l: [a: b]\n", "l: [a\n]\n", "l: [a,\n b]\n",
	"l: [-a, -]\n", "l: [a] # c\n", "l: [a]#c\n", "l: [a] b\n", "l: [a]]\n",
	"l: [a}\n", "l: [a #c]\n", "l: ['a''b', \"\\t\"]\n", "[1, 2]\n", "[1, 2]\nx\n",
	"m: {}\n", "m: {a: 1, b: \"2\"}\n", "m: {a: 1,}\n", "m: {a}\n", "m: {a: }\n",
	"m: {a:1}\n", "m: {\"a\":1}\n", "m: {a: [1, {b: c}]}\n", "m: {a: 1\n",
	"  - {backend: \"m\", arch: \"g\", name: \"N\", unset: true}\n",
	"key with spaces: v\n", "k: v with  spaces  \n", "k: v #c\n", "k: v#c\n",
	"k: h\xc3\xa9llo w\xc3\xb6rld\n", "\xc3\xa9: \xe2\x9c\x93\n",
	"\xc3\xa9\xc3\xa9: [\xc3\xa9, \"\xc3\xa9\"]\n", "k: \"\xf0\x9f\x98\x80\" # \xc3\xa9\n",
	"a:\n  b: 1\n  c: 2\nd: 3\n", "a:\n  b: 1\n c: 2\n", "a:\n  b: 1\n   c: 2\n",
	"a:\n- x\n- y\nb: 1\n", "a:\n- x\n  - y\n", "a:\n- x\nb:\n- y\n",
	"a:\n  - x\n  - k: v\n    k2: v2\n  - - z\nb: 1\n", "a:\n  - x\n  b: 1\n",
	"- k:\n  - a\n- k2:\n", "- k:\n- a\n", "- a\n  b\n", "a: b\n  c\n",
	"a: b\n\n  c\n", "a: b\n  # c\nd: e\n", "a: b\n    # c\n  d\n",
	"a:\n  value\n", "a:\n\n\n  b: 1\n\n", "  a: 1\n  b: 2\n", "  a: 1\nb: 2\n",
	"a: 1\n- x\n", "- x\na: 1\n", "a: 1\n  b: 2\n", "plain\n", "plain\n# c\n",
	"plain\nmore\n", "\"q\"\n", "'q'\n", "a: |\n  x\n", "a: >\n  x\n",
	"a: &x 1\nb: *x\n", "a: !!str 1\n", "? a\n: b\n", "%YAML 1.1\n---\na: 1\n",
	"---\na: 1\n", "a: 1\n...\n", "a: 1\n---\nb: 2\n", "\xef\xbb\xbf" "a: 1\n",
	"a:\t1\n", "a: 1\r\n", "a: \x01\n", "a: \xff\n", "a: \xc2\x85\n",
	"a: \xed\xa0\x80\n", "a: @x\n", "a: `x\n", "a: %x\n", "a: - x\n", "a: -\n",
	"a: ,x\n", "a: x,y]\n", "a: ]\n", "a: #\n", "a:#\n", "a: 'x\n", "a: \"x\n",
	"a: \"x\n  y\"\n", "a: 'it''s\n", "a: \"\\\n\"\n", "a#b: 1\n", "a #b: 1\n",
	"a: 1\na: 2\n", "a:\n  -\n  - x\n", "- # c\n- x\n", "-  x\n-   k: v\n    j: w\n",
	"-\n  - x\n", "a:\n-\n  x: 1\n", "[[[]]]\n", "{a: {b: {c: d}}}\n",
	"a: ~\nb: null\nc: 0o17\n", "a: 'x' #c\n#d\n", "a: x\n#\n#\n",
};

static const char *const must[] = {
	"a: b\nl:\n- x\n- 'y'\nm: [1, [2]]\n", "a:\n", "a:", "- - x\n",
	"k: \"\\u00e9\"\n", "key: 'it''s'\n", "a:\n- x\nb:\n- y\n", "-\n",
	"k: h\xc3\xa9llo\n", "m: {a: 1, b: \"2\"}\n", "l: [a,b,]\n",
};

static void test_yaml_fast__snippets_agree(void **state)
{
	size_t i;
	char name[32];

	(void)state;
	for (i = 0; i < sizeof(snippets) / sizeof(snippets[0]); i++) {
		snprintf(name, sizeof(name), "s%zu.yaml", i);
		differ(name, snippets[i], strlen(snippets[i]));
	}
	/* Forms the fast path must take itself. */
	for (i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		if (!differ("t.yaml", must[i], strlen(must[i])))
			fail_msg("the fast path gave up on \"%s\"", must[i]);
}

/* A deep or long structure: limits from the fast path must be libyaml's. */
static void test_yaml_fast__limits_agree(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;
	struct timespec t0, t1;
	double ms;
	int i;

	(void)state;
	/* 200001 scalars: one past the node limit. */
	assert_int_equal(sb_adds(&sb, "env: {}\nlist: ["), 0);
	for (i = 0; i < 200001; i++)
		assert_int_equal(sb_adds(&sb, "1,"), 0);
	assert_int_equal(sb_adds(&sb, "]\n"), 0);
	assert_true(differ("n.yaml", sb.buf, sb.len));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ydoc_load_buffer("n.yaml", sb.buf, sb.len, &doc, &d), -EINVAL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	print_message("200001 nodes refused in %.1f ms\n", ms);
	diag_list_release(&d);
	/* The same with a syntax error after the limit: libyaml's answer. */
	sb.len -= 2;
	assert_int_equal(sb_adds(&sb, "@]\n"), 0);
	assert_false(differ("n2.yaml", sb.buf, sb.len));
	/* ... and a bad byte far after it. */
	sb.len -= 3;
	assert_int_equal(sb_adds(&sb, "]\n# \x01\n"), 0);
	assert_false(differ("n3.yaml", sb.buf, sb.len));

	/* Depth: 64 block levels are fine, 65 are libyaml's to refuse. */
	for (i = 63; i <= 66; i++) {
		int j;

		sb_reset(&sb);
		for (j = 0; j < i; j++)
			assert_int_equal(sb_addf(&sb, "%*sk:\n", j, ""), 0);
		assert_int_equal(sb_addf(&sb, "%*sk: v\n", i, ""), 0);
		differ("deep.yaml", sb.buf, sb.len);
		sb_reset(&sb);
		for (j = 0; j < i; j++)
			assert_int_equal(sb_addc(&sb, '['), 0);
		for (j = 0; j < i; j++)
			assert_int_equal(sb_addc(&sb, ']'), 0);
		differ("deepflow.yaml", sb.buf, sb.len);
	}
	/* Keys near libyaml's 1024-character simple key limit. */
	for (i = 990; i <= 1030; i += 10) {
		sb_reset(&sb);
		assert_int_equal(sb_addf(&sb, "%0*d: v\n", i, 0), 0);
		differ("longkey.yaml", sb.buf, sb.len);
		sb_reset(&sb);
		assert_int_equal(sb_addf(&sb, "m: {%0*d: v}\n", i, 0), 0);
		differ("longflowkey.yaml", sb.buf, sb.len);
	}
	sb_release(&sb);
}

/* The comparison itself tells trees apart: a value, a style, a place, a
 * kind, a child count, a diagnostic. */
static void test_yaml_fast__the_comparison_sees_differences(void **state)
{
	static const char *const pairs[][2] = {
		{ "a: 1\n", "a: 2\n" }, { "a: 1\n", "a: '1'\n" }, { "a: 1\n", "\na: 1\n" },
		{ "a: [1]\n", "a: {b: 1}\n" }, { "a: [1, 2]\n", "a: [1]\n" },
		{ "a: 1\n", "a: !!str 1\n" },
	};
	struct diag_list d1 = DIAG_LIST_INIT, d2 = DIAG_LIST_INIT;
	struct strbuf why = STRBUF_INIT;
	struct ydoc *x, *y;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		assert_int_equal(ydoc_load_buffer("x", pairs[i][0], strlen(pairs[i][0]), &x, &d1), 0);
		assert_int_equal(ydoc_load_buffer("y", pairs[i][1], strlen(pairs[i][1]), &y, &d1), 0);
		assert_false(ytree_differ(x->root, x->root, &why));
		assert_true(ytree_differ(x->root, y->root, &why));
		ydoc_free(x);
		ydoc_free(y);
	}
	assert_int_equal(ydoc_load_buffer("x", "a: [\n", 5, &x, &d2), -EINVAL);
	assert_false(ydiags_differ(&d2, &d2, &why));
	assert_true(ydiags_differ(&d1, &d2, &why));
	sb_release(&why);
	diag_list_release(&d1);
	diag_list_release(&d2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml_fast__the_comparison_sees_differences),
		cmocka_unit_test(test_yaml_fast__every_yaml_file_of_the_tree_agrees),
		cmocka_unit_test(test_yaml_fast__every_shipped_spec_takes_the_fast_path),
		cmocka_unit_test(test_yaml_fast__the_state_file_takes_the_fast_path),
		cmocka_unit_test(test_yaml_fast__snippets_agree),
		cmocka_unit_test(test_yaml_fast__limits_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

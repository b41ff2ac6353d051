/* yaml_tree: places, styles, tags, and every limit of yaml_tree.h. */
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

#include "yaml_tree.h"

static char *fixture(const char *name)
{
	const char *dir = getenv("ENVFS_FIXTURES");
	static char path[4096];

	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/yaml/%s", dir, name);
	return path;
}

/* The one diagnostic of l, formatted. */
static const char *only_diag(struct diag_list *l)
{
	static char text[1024];
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(l->n, 1);
	assert_int_equal(diag_format(&l->v[0], &sb), 0);
	snprintf(text, sizeof(text), "%s", sb_str(&sb));
	sb_release(&sb);
	return text;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

static int load_str(const char *text, struct ydoc **doc, struct diag_list *d)
{
	return ydoc_load_buffer("t.yaml", text, strlen(text), doc, d);
}

static void test_yaml_tree__nodes_carry_one_based_places(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;
	struct ynode *top, *list;

	(void)state;
	assert_int_equal(ydoc_load_file(fixture("places.yaml"), &doc, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(doc->root->kind, YN_MAP);
	assert_int_equal(doc->root->pairs[0].key->line, 2);
	assert_int_equal(doc->root->pairs[0].key->col, 1);
	top = ymap_get(doc->root, "top");
	assert_non_null(top);
	assert_int_equal(top->pairs[0].key->line, 3);
	assert_int_equal(top->pairs[0].key->col, 3);
	assert_int_equal(ymap_get(top, "key")->line, 3);
	assert_int_equal(ymap_get(top, "key")->col, 8);
	list = ymap_get(top, "list");
	assert_int_equal(list->kind, YN_SEQ);
	assert_int_equal(list->nitems, 2);
	assert_int_equal(list->items[0]->line, 5);
	assert_int_equal(list->items[0]->col, 7);
	assert_int_equal(list->items[1]->line, 6);
	assert_int_equal(list->items[1]->col, 9);
	/* A quoted key is the same key; its place is the opening quote. */
	assert_true(yscalar_is(ymap_get(top, "quoted"), "single"));
	assert_int_equal(top->pairs[2].key->col, 3);
	assert_string_equal(doc->file, fixture("places.yaml"));
	ydoc_free(doc);
	diag_list_release(&d);
}

static void test_yaml_tree__scalar_styles_are_kept(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;
	struct ynode *n;

	(void)state;
	assert_int_equal(ydoc_load_file(fixture("styles.yaml"), &doc, &d), 0);
	n = ymap_get(doc->root, "plain");
	assert_int_equal(n->style, YS_PLAIN);
	assert_string_equal(n->str, "0.960");
	n = ymap_get(doc->root, "single");
	assert_int_equal(n->style, YS_SINGLE);
	assert_string_equal(n->str, "it's");
	n = ymap_get(doc->root, "double");
	assert_int_equal(n->style, YS_DOUBLE);
	assert_string_equal(n->str, "tab\there");
	n = ymap_get(doc->root, "literal");
	assert_int_equal(n->style, YS_LITERAL);
	assert_string_equal(n->str, "line one\nline two\n");
	assert_int_equal(n->len, 18);
	n = ymap_get(doc->root, "folded");
	assert_int_equal(n->style, YS_FOLDED);
	assert_string_equal(n->str, "--flag_a=1 --flag_b=2");
	n = ymap_get(doc->root, "empty");
	assert_int_equal(n->kind, YN_SCALAR);
	assert_int_equal(n->style, YS_PLAIN);
	assert_int_equal(n->len, 0);
	ydoc_free(doc);
	diag_list_release(&d);
}

static void test_yaml_tree__explicit_tags_are_kept_in_short_form(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;

	(void)state;
	assert_int_equal(ydoc_load_file(fixture("tags.yaml"), &doc, &d), 0);
	assert_string_equal(ymap_get(doc->root, "str")->tag, "!!str");
	assert_string_equal(ymap_get(doc->root, "int")->tag, "!!int");
	assert_int_equal(ymap_get(doc->root, "int")->style, YS_DOUBLE);
	assert_string_equal(ymap_get(doc->root, "custom")->tag, "!custom");
	assert_string_equal(ymap_get(doc->root, "nonspecific")->tag, "!");
	assert_string_equal(ymap_get(doc->root, "map")->tag, "!!map");
	assert_null(ymap_get(doc->root, "untagged")->tag);
	ydoc_free(doc);
	diag_list_release(&d);
}

static void test_yaml_tree__empty_file_has_no_root(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;

	(void)state;
	assert_int_equal(ydoc_load_file(fixture("empty.yaml"), &doc, &d), 0);
	assert_null(doc->root);
	ydoc_free(doc);
	assert_int_equal(ydoc_load_file(fixture("comment_only.yaml"), &doc, &d), 0);
	assert_null(doc->root);
	ydoc_free(doc);
	assert_int_equal(ydoc_load_buffer("e", "", 0, &doc, &d), 0);
	assert_null(doc->root);
	ydoc_free(doc);
	assert_int_equal(d.n, 0);
	diag_list_release(&d);
}

static void test_yaml_tree__only_the_first_document_is_read(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;

	(void)state;
	assert_int_equal(ydoc_load_file(fixture("multi_doc.yaml"), &doc, &d), 0);
	assert_non_null(ymap_get(doc->root, "first"));
	assert_null(ymap_get(doc->root, "second"));
	ydoc_free(doc);
	/* Whatever follows the first document is not even parsed. */
	assert_int_equal(load_str("a: 1\n---\n[unclosed\n", &doc, &d), 0);
	ydoc_free(doc);
	assert_int_equal(d.n, 0);
	diag_list_release(&d);
}

static void test_yaml_tree__duplicate_keys_are_kept_and_get_finds_the_last(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;

	(void)state;
	assert_int_equal(load_str("a: 1\nb: 2\na: 3\n", &doc, &d), 0);
	assert_int_equal(doc->root->npairs, 3);
	assert_true(yscalar_is(ymap_get(doc->root, "a"), "3"));
	assert_null(ymap_get(doc->root, "c"));
	assert_null(ymap_get(ymap_get(doc->root, "a"), "a"));
	assert_false(yscalar_is(ymap_get(doc->root, "a"), "30"));
	assert_false(yscalar_is(NULL, "3"));
	ydoc_free(doc);
	diag_list_release(&d);
}

static void test_yaml_tree__aliases_share_the_anchored_node(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;
	struct ynode *base;

	(void)state;
	assert_int_equal(ydoc_load_file(fixture("aliases.yaml"), &doc, &d), 0);
	base = ymap_get(doc->root, "base");
	assert_ptr_equal(ymap_get(doc->root, "one"), base);
	assert_ptr_equal(ymap_get(doc->root, "two"), base);
	/* A redefined anchor: later aliases get the later node. */
	assert_ptr_equal(ymap_get(doc->root, "three"),
			 ymap_get(doc->root, "base2"));
	assert_int_equal(ymap_get(doc->root, "three")->kind, YN_SEQ);
	/* Shared nodes live once in the doc's arena (ASan checks the rest). */
	ydoc_free(doc);
	diag_list_release(&d);
}

static void test_yaml_tree__nesting_deeper_than_the_limit_is_an_error(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;
	char *text = malloc(20001);
	size_t i;

	(void)state;
	for (i = 0; i < 10000; i++) {
		text[i] = '[';
		text[19999 - i] = ']';
	}
	text[20000] = '\0';
	assert_int_equal(ydoc_load_buffer("deep.yaml", text, 20000, &doc, &d),
			 -EINVAL);
	assert_null(doc);
	assert_string_equal(only_diag(&d), "deep.yaml:1:129: error: nesting "
			    "deeper than 128 levels [PE003]");
	diag_list_release(&d);

	/* Exactly the limit is fine. */
	text[YT_MAX_DEPTH] = '\0';
	memset(text + YT_MAX_DEPTH / 2, ']', YT_MAX_DEPTH / 2);
	memset(text, '[', YT_MAX_DEPTH / 2);
	assert_int_equal(ydoc_load_buffer("ok.yaml", text, YT_MAX_DEPTH / 2 * 2,
					  &doc, &d), 0);
	ydoc_free(doc);
	{
		char at[2 * YT_MAX_DEPTH + 1];

		memset(at, '[', YT_MAX_DEPTH);
		memset(at + YT_MAX_DEPTH, ']', YT_MAX_DEPTH);
		assert_int_equal(ydoc_load_buffer("ok.yaml", at, sizeof(at) - 1,
						  &doc, &d), 0);
		ydoc_free(doc);
	}
	assert_int_equal(d.n, 0);
	free(text);
	diag_list_release(&d);
}

/* "a: &a [[...40 deep...]]" then n brackets around *a. */
static int load_alias_at_depth(int n, struct ydoc **doc, struct diag_list *d)
{
	struct strbuf sb = STRBUF_INIT;
	int i, err;

	assert_int_equal(sb_adds(&sb, "a: &a "), 0);
	for (i = 0; i < 40; i++)
		assert_int_equal(sb_addc(&sb, '['), 0);
	for (i = 0; i < 40; i++)
		assert_int_equal(sb_addc(&sb, ']'), 0);
	assert_int_equal(sb_adds(&sb, "\nb: "), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(sb_addc(&sb, '['), 0);
	assert_int_equal(sb_adds(&sb, "*a"), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(sb_addc(&sb, ']'), 0);
	assert_int_equal(sb_addc(&sb, '\n'), 0);
	err = ydoc_load_buffer("t.yaml", sb.buf, sb.len, doc, d);
	sb_release(&sb);
	return err;
}

static void test_yaml_tree__depth_counts_the_nodes_aliases_bring_in(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;

	(void)state;
	/* The root mapping, 87 brackets and 40 levels of *a: 128. */
	assert_int_equal(load_alias_at_depth(87, &doc, &d), 0);
	ydoc_free(doc);
	assert_int_equal(d.n, 0);
	assert_int_equal(load_alias_at_depth(88, &doc, &d), -EINVAL);
	assert_null(doc);
	assert_string_equal(only_diag(&d), "t.yaml:2:92: error: nesting deeper "
			    "than 128 levels once alias *a is expanded [PE003]");
	diag_list_release(&d);
}

static void test_yaml_tree__billion_laughs_is_stopped_by_the_node_limit(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;

	(void)state;
	assert_int_equal(ydoc_load_file(fixture("billion_laughs.yaml"), &doc, &d),
			 -EINVAL);
	assert_null(doc);
	/* Level f is the first above 200000 expanded nodes (9^5 * 10 / 9 ...). */
	assert_contains(only_diag(&d), "billion_laughs.yaml:7:");
	assert_contains(only_diag(&d), "error: more than 200000 nodes once "
			"aliases are expanded");
	diag_list_release(&d);
}

static void test_yaml_tree__more_aliases_than_the_limit_is_an_error(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct ydoc *doc = NULL;
	int i;

	(void)state;
	assert_int_equal(sb_adds(&sb, "a: &x 1\nl: ["), 0);
	for (i = 0; i < YT_MAX_ALIASES; i++)
		assert_int_equal(sb_adds(&sb, "*x,"), 0);
	assert_int_equal(sb_adds(&sb, "]\n"), 0);
	assert_int_equal(ydoc_load_buffer("a.yaml", sb.buf, sb.len, &doc, &d), 0);
	assert_int_equal(ymap_get(doc->root, "l")->nitems, YT_MAX_ALIASES);
	ydoc_free(doc);
	sb_reset(&sb);
	assert_int_equal(sb_adds(&sb, "a: &x 1\nl: ["), 0);
	for (i = 0; i <= YT_MAX_ALIASES; i++)
		assert_int_equal(sb_adds(&sb, "*x,"), 0);
	assert_int_equal(sb_adds(&sb, "]\n"), 0);
	assert_int_equal(ydoc_load_buffer("a.yaml", sb.buf, sb.len, &doc, &d),
			 -EINVAL);
	/* The 4097th alias, at column 5 + 3 * 4096. */
	assert_string_equal(only_diag(&d), "a.yaml:2:12293: error: more than 4096 "
			    "aliases [PE003]");
	sb_release(&sb);
	diag_list_release(&d);
}

static void test_yaml_tree__alias_to_its_own_unfinished_anchor_is_a_cycle(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;

	(void)state;
	assert_int_equal(ydoc_load_file(fixture("alias_cycle.yaml"), &doc, &d),
			 -EINVAL);
	assert_null(doc);
	assert_contains(only_diag(&d), "alias_cycle.yaml:2:11: error: alias *a "
			"refers to a node that contains it (a cycle)");
	diag_list_release(&d);

	assert_int_equal(load_str("m: &m {k: *m}\n", &doc, &d), -EINVAL);
	assert_contains(only_diag(&d), "t.yaml:1:11: error: alias *m refers");
	diag_list_release(&d);
}

static void test_yaml_tree__alias_to_an_unknown_anchor_is_an_error(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;

	(void)state;
	assert_int_equal(load_str("a: *nope\nb: &nope 1\n", &doc, &d), -EINVAL);
	assert_null(doc);
	assert_string_equal(only_diag(&d), "t.yaml:1:4: error: alias *nope has "
			    "no anchor before it [PE003]");
	diag_list_release(&d);
}

static void test_yaml_tree__nul_escape_in_a_scalar_is_an_error(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;

	(void)state;
	assert_int_equal(ydoc_load_file(fixture("nul_escape.yaml"), &doc, &d),
			 -EINVAL);
	assert_null(doc);
	assert_contains(only_diag(&d), "nul_escape.yaml:2:8: error: NUL byte in "
			"a scalar");
	diag_list_release(&d);
	/* The same in a key. */
	assert_int_equal(load_str("\"a\\x00\": 1\n", &doc, &d), -EINVAL);
	assert_contains(only_diag(&d), "t.yaml:1:1: error: NUL byte");
	diag_list_release(&d);
}

static void test_yaml_tree__file_over_one_mib_is_refused_before_parsing(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;
	char path[] = "/tmp/test_yaml_tree_big_XXXXXX";
	size_t size = YT_MAX_FILE_SIZE + 1;
	char *buf = malloc(size);
	int fd;

	(void)state;
	/* Valid YAML all the way: only the size is wrong. */
	memset(buf, ' ', size);
	memcpy(buf, "a: 1\n", 5);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, size), (ssize_t)size);
	close(fd);
	assert_int_equal(ydoc_load_file(path, &doc, &d), -EINVAL);
	assert_null(doc);
	assert_contains(only_diag(&d), ": error: file is larger than 1 MiB");
	assert_string_equal(d.v[0].file, path);
	diag_list_release(&d);

	assert_int_equal(ydoc_load_buffer("b", buf, size, &doc, &d), -EINVAL);
	assert_string_equal(only_diag(&d), "b:1:1: error: file is larger than 1 MiB [PE003]");
	diag_list_release(&d);

	/* Exactly 1 MiB is allowed. */
	assert_int_equal(ydoc_load_buffer("b", buf, size - 1, &doc, &d), 0);
	assert_true(yscalar_is(ymap_get(doc->root, "a"), "1"));
	ydoc_free(doc);
	unlink(path);
	free(buf);
	diag_list_release(&d);
}

static void test_yaml_tree__syntax_error_names_the_problem_and_its_place(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;

	(void)state;
	assert_int_equal(load_str("env:\n  FOO: \"1\"\n   BAR: \"2\"\n", &doc, &d),
			 -EINVAL);
	assert_null(doc);
	assert_string_equal(only_diag(&d), "t.yaml:3:4: error: YAML syntax error: "
			    "did not find expected key (while parsing a block "
			    "mapping) [PE002]");
	diag_list_release(&d);

	assert_int_equal(load_str("a: [1, 2\n", &doc, &d), -EINVAL);
	assert_contains(only_diag(&d), "t.yaml:2:1: error: YAML syntax error: ");
	diag_list_release(&d);

	assert_int_equal(load_str("a: \"unterminated\n", &doc, &d), -EINVAL);
	assert_contains(only_diag(&d), "error: YAML syntax error: found "
			"unexpected end of stream (while scanning a quoted scalar)");
	diag_list_release(&d);
}

static void test_yaml_tree__invalid_utf8_is_a_syntax_error_at_its_byte(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;

	(void)state;
	assert_int_equal(ydoc_load_file(fixture("invalid_utf8.yaml"), &doc, &d),
			 -EINVAL);
	assert_contains(only_diag(&d), "invalid_utf8.yaml:2:8: error: YAML "
			"syntax error: invalid leading UTF-8 octet (byte 0xff)");
	diag_list_release(&d);

	/* Control characters are refused by libyaml's reader too. */
	assert_int_equal(load_str("a: \x01\n", &doc, &d), -EINVAL);
	assert_contains(only_diag(&d), "t.yaml:1:4: error: YAML syntax error: "
			"control characters are not allowed");
	diag_list_release(&d);
}

static void test_yaml_tree__missing_file_returns_its_errno(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;

	(void)state;
	assert_int_equal(ydoc_load_file(fixture("no-such-file.yaml"), &doc, &d),
			 -ENOENT);
	assert_null(doc);
	assert_contains(only_diag(&d), "no-such-file.yaml: error: cannot read: ");
	diag_list_release(&d);
	ydoc_free(NULL);
}

static void test_yaml_tree__kind_names(void **state)
{
	(void)state;
	assert_string_equal(ynode_kind_name(YN_SCALAR), "scalar");
	assert_string_equal(ynode_kind_name(YN_SEQ), "sequence");
	assert_string_equal(ynode_kind_name(YN_MAP), "mapping");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml_tree__nodes_carry_one_based_places),
		cmocka_unit_test(test_yaml_tree__scalar_styles_are_kept),
		cmocka_unit_test(test_yaml_tree__explicit_tags_are_kept_in_short_form),
		cmocka_unit_test(test_yaml_tree__empty_file_has_no_root),
		cmocka_unit_test(test_yaml_tree__only_the_first_document_is_read),
		cmocka_unit_test(test_yaml_tree__duplicate_keys_are_kept_and_get_finds_the_last),
		cmocka_unit_test(test_yaml_tree__aliases_share_the_anchored_node),
		cmocka_unit_test(test_yaml_tree__nesting_deeper_than_the_limit_is_an_error),
		cmocka_unit_test(test_yaml_tree__depth_counts_the_nodes_aliases_bring_in),
		cmocka_unit_test(test_yaml_tree__billion_laughs_is_stopped_by_the_node_limit),
		cmocka_unit_test(test_yaml_tree__more_aliases_than_the_limit_is_an_error),
		cmocka_unit_test(test_yaml_tree__alias_to_its_own_unfinished_anchor_is_a_cycle),
		cmocka_unit_test(test_yaml_tree__alias_to_an_unknown_anchor_is_an_error),
		cmocka_unit_test(test_yaml_tree__nul_escape_in_a_scalar_is_an_error),
		cmocka_unit_test(test_yaml_tree__file_over_one_mib_is_refused_before_parsing),
		cmocka_unit_test(test_yaml_tree__syntax_error_names_the_problem_and_its_place),
		cmocka_unit_test(test_yaml_tree__invalid_utf8_is_a_syntax_error_at_its_byte),
		cmocka_unit_test(test_yaml_tree__missing_file_returns_its_errno),
		cmocka_unit_test(test_yaml_tree__kind_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

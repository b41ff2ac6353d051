/* spec: one spec file into its in-memory form (schema: specs/README.md).
 * Every schema problem is an error at the offending node (file:line:col)
 * naming what is wrong, and loading goes on so one run reports them all. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spec.h"

#define V(lit) (lit), sizeof(lit) - 1

/* The diagnostic whose message holds needle, or a failure listing them. */
static const struct diag *find(const struct diag_list *d, const char *needle)
{
	size_t k;

	for (k = 0; k < d->n; k++)
		if (strstr(d->v[k].msg, needle))
			return &d->v[k];
	for (k = 0; k < d->n; k++)
		fprintf(stderr, "  %u:%u %s\n", d->v[k].line, d->v[k].col, d->v[k].msg);
	fail_msg("no diagnostic holds '%s'", needle);
	return NULL;
}

static const struct spec_var *only_entry(const struct spec *s, const char *name)
{
	size_t first;

	assert_int_equal(spec_entries(s, name, &first), 1);
	return &s->vars[s->by_name[first]];
}

static void test_spec__backend_entries_take_every_documented_key(void **state)
{
	static const char yaml[] =
		"backend: demo\n"
		"arches: [gfx942, gfx950]\n"
		"passthrough: [MASTER_ADDR]\n"
		"variables:\n"
		"  - name: PLAIN\n"
		"    value: \"1\"\n"
		"    note: \"why it is 1\"\n"
		"  - name: FORCED\n"
		"    value: \"x\"\n"
		"    mode: set\n"
		"    arch: gfx950\n"
		"  - name: PARAM\n"
		"    value: \"4\"\n"
		"    export: false\n"
		"  - name: TOKEN\n"
		"    secret: true\n"
		"  - name: FLAGS\n"
		"    kind: flags\n"
		"    append_from: FLAGS_APPEND\n"
		"    flags:\n"
		"      - \"--a=1\"\n"
		"      - flag: \"--b=${PARAM}\"\n"
		"        when: PLAIN == \"1\"\n";
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;
	const struct spec_var *v;

	(void)state;
	assert_int_equal(spec_load_buffer("demo.yaml", V(yaml), &s, &d), 0);
	assert_int_equal(d.n, 0);
	assert_string_equal(s->backend, "demo");
	assert_false(s->is_runner);
	assert_true(s->uses_runner);
	assert_int_equal(s->narches, 2);
	assert_string_equal(s->arches[1], "gfx950");
	assert_true(spec_has_arch(s, "gfx942"));
	assert_false(spec_has_arch(s, "cuda"));
	assert_int_equal(s->npassthrough, 1);
	v = only_entry(s, "PLAIN");
	assert_string_equal(v->value, "1");
	assert_string_equal(v->note, "why it is 1");
	assert_int_equal(v->line, 5);
	assert_int_equal(v->col, 5);
	assert_int_equal(v->mode, SPEC_MODE_DEFAULT);
	assert_true(v->export);
	v = only_entry(s, "FORCED");
	assert_int_equal(v->mode, SPEC_MODE_SET);
	assert_true(spec_var_applies_to_arch(v, "gfx950"));
	assert_false(spec_var_applies_to_arch(v, "gfx942"));
	assert_false(only_entry(s, "PARAM")->export);
	v = only_entry(s, "TOKEN");
	assert_true(v->secret);
	assert_null(v->value);
	v = only_entry(s, "FLAGS");
	assert_int_equal(v->kind, SPEC_KIND_FLAGS);
	assert_string_equal(v->append_from, "FLAGS_APPEND");
	assert_int_equal(v->nflags, 2);
	assert_string_equal(v->flags[0].text, "--a=1");
	assert_null(v->flags[0].when);
	assert_string_equal(v->flags[1].text, "--b=${PARAM}");
	assert_string_equal(v->flags[1].when, "PLAIN == \"1\"");
	spec_free(s);
	diag_list_release(&d);
}

static void test_spec__entries_of_one_name_stay_in_document_order(void **state)
{
	static const char yaml[] =
		"backend: demo\n"
		"variables:\n"
		"  - name: B\n"
		"    value: \"general\"\n"
		"  - name: A\n"
		"    value: \"a\"\n"
		"  - name: B\n"
		"    value: \"special\"\n"
		"    arch: gfx950\n";
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;
	size_t first;

	(void)state;
	assert_int_equal(spec_load_buffer("demo.yaml", V(yaml), &s, &d), 0);
	assert_int_equal(spec_entries(s, "B", &first), 2);
	assert_string_equal(s->vars[s->by_name[first]].value, "general");
	assert_string_equal(s->vars[s->by_name[first + 1]].value, "special");
	assert_int_equal(spec_entries(s, "NOPE", &first), 0);
	spec_free(s);
	diag_list_release(&d);
}

/* A misspelled key cannot silently do nothing (specs/README.md). */
static void test_spec__unknown_keys_are_errors_at_their_place(void **state)
{
	static const char yaml[] =
		"backend: demo\n"
		"archs: [gfx950]\n"
		"variables:\n"
		"  - name: A\n"
		"    defualt: \"1\"\n"
		"  - name: F\n"
		"    kind: flags\n"
		"    flags:\n"
		"      - flag: \"--x\"\n"
		"        wen: A == 1\n";
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;
	const struct diag *e;

	(void)state;
	/* -EINVAL, and the spec as far as it went (loading goes on) */
	assert_int_equal(spec_load_buffer("demo.yaml", V(yaml), &s, &d), -EINVAL);
	assert_non_null(s);
	spec_free(s);
	e = find(&d, "unknown field 'archs' in a spec");
	assert_int_equal(e->sev, DIAG_ERROR);
	assert_string_equal(e->file, "demo.yaml");
	assert_int_equal(e->line, 2);
	assert_int_equal(e->col, 1);
	e = find(&d, "unknown field 'defualt' in a variable");
	assert_int_equal(e->line, 5);
	assert_int_equal(e->col, 5);
	e = find(&d, "unknown field 'wen' in a flag");
	assert_int_equal(e->line, 10);
	/* all three in one load */
	assert_true(diag_count(&d, DIAG_ERROR) >= 3);
	diag_list_release(&d);
}

static void test_spec__runner_and_backend_at_once_is_an_error(void **state)
{
	static const char yaml[] = "runner: true\nbackend: demo\nvariables: []\n";
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;

	(void)state;
	assert_int_equal(spec_load_buffer("both.yaml", V(yaml), &s, &d), -EINVAL);
	spec_free(s);
	find(&d, "either the runner (runner: true) or a backend, not both");
	diag_list_release(&d);
}

static void test_spec__yaml_syntax_error_has_its_place(void **state)
{
	static const char yaml[] = "backend: demo\nvariables:\n  - name: \"unterminated\n";
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;

	(void)state;
	assert_int_equal(spec_load_buffer("broken.yaml", V(yaml), &s, &d), -EINVAL);
	assert_null(s);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].sev, DIAG_ERROR);
	assert_string_equal(d.v[0].file, "broken.yaml");
	assert_true(d.v[0].line >= 3);
	assert_true(d.v[0].col >= 1);
	diag_list_release(&d);
}

/* scope: node marks a name whose value differs per node by design
 * (verify leaves it out of the node digest); it combines with the other
 * scopes, and a misspelled scope names the four. */
static void test_spec__scope_node_combines_with_the_other_scopes(void **state)
{
	static const char yaml[] =
		"backend: demo\n"
		"variables:\n"
		"  - name: RANKISH\n"
		"    value: \"0\"\n"
		"    scope: node\n"
		"  - name: BOTH\n"
		"    scope: [runtime, node]\n"
		"  - name: PLAIN\n"
		"    value: \"1\"\n"
		"    scope: runtime\n"
		"  - name: BAD\n"
		"    scope: nodes\n";
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;
	const struct diag *e;

	(void)state;
	assert_int_equal(spec_load_buffer("demo.yaml", V(yaml), &s, &d), -EINVAL);
	assert_non_null(s);
	assert_int_equal(only_entry(s, "RANKISH")->scope, SCOPE_NODE);
	assert_int_equal(only_entry(s, "BOTH")->scope, SCOPE_RUNTIME | SCOPE_NODE);
	assert_int_equal(only_entry(s, "PLAIN")->scope, SCOPE_RUNTIME);
	assert_true(spec_name_marked(s, "RANKISH", SPEC_MARK_NODE));
	assert_true(spec_name_marked(s, "BOTH", SPEC_MARK_NODE));
	assert_false(spec_name_marked(s, "PLAIN", SPEC_MARK_NODE));
	assert_false(spec_name_marked(s, "ABSENT", SPEC_MARK_NODE));
	assert_false(spec_name_marked(NULL, "RANKISH", SPEC_MARK_NODE));
	assert_false(spec_name_marked(s, "RANKISH", SPEC_MARK_SECRET));
	e = find(&d, "scope 'nodes' is not runtime, build, test or node");
	assert_int_equal(e->line, 12);
	assert_int_equal(diag_count(&d, DIAG_ERROR), 1);
	spec_free(s);
	diag_list_release(&d);
}

/* One entry of a name marks the name, whatever the entry's arch or
 * condition: the scope says what the name is, not when it applies. */
static void test_spec__scope_node_on_one_entry_marks_the_name(void **state)
{
	static const char yaml[] =
		"backend: demo\n"
		"arches: [gfx942, gfx950]\n"
		"variables:\n"
		"  - name: R\n"
		"    value: \"0\"\n"
		"  - name: R\n"
		"    value: \"1\"\n"
		"    arch: gfx950\n"
		"    when: X == \"1\"\n"
		"    scope: node\n";
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;

	(void)state;
	assert_int_equal(spec_load_buffer("demo.yaml", V(yaml), &s, &d), 0);
	assert_true(spec_name_marked(s, "R", SPEC_MARK_NODE));
	spec_free(s);
	diag_list_release(&d);
}

static void test_spec__free_of_null_is_a_no_op(void **state)
{
	(void)state;
	spec_free(NULL);
	spec_set_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec__backend_entries_take_every_documented_key),
		cmocka_unit_test(test_spec__entries_of_one_name_stay_in_document_order),
		cmocka_unit_test(test_spec__unknown_keys_are_errors_at_their_place),
		cmocka_unit_test(test_spec__runner_and_backend_at_once_is_an_error),
		cmocka_unit_test(test_spec__yaml_syntax_error_has_its_place),
		cmocka_unit_test(test_spec__scope_node_combines_with_the_other_scopes),
		cmocka_unit_test(test_spec__scope_node_on_one_entry_marks_the_name),
		cmocka_unit_test(test_spec__free_of_null_is_a_no_op),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

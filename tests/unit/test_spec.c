/* spec: one spec file into its in-memory form (schema: specs/README.md).
 * Every schema problem is an error at the offending node (file:line:col)
 * naming what is wrong, and loading goes on so one run reports them all. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "expr.h"
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

/* Every name of a large spec is found with all its entries, in document
 * order, and names it does not have are not, whatever their hash: what
 * the name index answers is what a scan of the entries answers. */
static void test_spec__entries_of_many_names_match_a_scan(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;
	char *yaml, name[32];
	size_t len = 0, cap = 1 << 20, first, n, k, i, want;
	int w;

	(void)state;
	assert_non_null(yaml = malloc(cap));
	len += (size_t)snprintf(yaml + len, cap - len, "backend: demo\nvariables:\n");
	/* 3,000 entries over 2,000 names: every even name below 2,000 twice, the second
	 * time later in the document. */
	for (k = 0; k < 3000; k++) {
		w = snprintf(yaml + len, cap - len, "  - name: N_%zu\n    value: \"%zu\"\n",
			     k < 2000 ? k : (k - 2000) * 2, k);
		assert_true(w > 0 && (size_t)w < cap - len);
		len += (size_t)w;
	}
	assert_int_equal(spec_load_buffer("big.yaml", yaml, len, &s, &d), 0);
	for (k = 0; k < 2000; k++) {
		snprintf(name, sizeof(name), "N_%zu", k);
		want = 0;
		for (i = 0; i < s->nvars; i++)
			want += !strcmp(s->vars[i].name, name);
		n = spec_entries(s, name, &first);
		if (n != want)
			fail_msg("%s: %zu entries, want %zu", name, n, want);
		for (i = 0; i < n; i++)
			assert_string_equal(s->vars[s->by_name[first + i]].name, name);
		if (n == 2)
			assert_true(s->by_name[first] < s->by_name[first + 1]);
	}
	for (k = 2000; k < 4000; k++) {
		snprintf(name, sizeof(name), "N_%zu", k);
		assert_int_equal(spec_entries(s, name, &first), 0);
	}
	assert_int_equal(spec_entries(s, "", &first), 0);
	assert_int_equal(spec_entries(s, "N_", &first), 0);
	spec_free(s);
	diag_list_release(&d);
	free(yaml);
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

/* A rule names its code (code: PE507) and takes its severity from it; one
 * without a code gets the generic code of its severity; a code outside
 * the table, or a severity the code does not have, is an error. */
static void test_spec__a_rule_takes_its_code_and_severity_from_the_table(void **state)
{
	static const char yaml[] =
		"backend: demo\n"
		"arches: [gfx950]\n"
		"rules:\n"
		"  - when: A == 1\n"
		"    code: PE507\n"
		"    message: coded\n"
		"  - when: A == 2\n"
		"    severity: error\n"
		"    message: plain\n"
		"  - when: A == 3\n"
		"    code: PE999\n"
		"    message: unknown\n"
		"  - when: A == 4\n"
		"    code: PE507\n"
		"    severity: error\n"
		"    message: disagrees\n";
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;
	const struct diag *e;

	(void)state;
	assert_int_equal(spec_load_buffer("demo.yaml", V(yaml), &s, &d), -EINVAL);
	assert_non_null(s);
	assert_true(s->nrules >= 2);
	assert_int_equal(s->rules[0].code, DC_RULE_LOCALHOST_NODES);
	assert_int_equal(s->rules[0].sev, DIAG_WARNING);
	assert_int_equal(s->rules[1].code, DC_RULE_ERROR);
	assert_int_equal(s->rules[1].sev, DIAG_ERROR);
	e = find(&d, "code PE999 is not a diagnostic code");
	assert_int_equal(e->line, 11);
	assert_int_equal(e->code, DC_SPEC_SCHEMA);
	e = find(&d, "severity error disagrees with code PE507 (a warning)");
	assert_int_equal(e->line, 15);
	spec_free(s);
	diag_list_release(&d);
}

/* models: names the source, version and commit a spec was written from;
 * all three are required and the commit is a full hex id. */
static void test_spec__models_names_source_version_and_commit(void **state)
{
	static const char good[] =
		"backend: demo\narches: [a]\nmodels:\n  source: o/n\n  version: v1\n"
		"  commit: 0123456789abcdef0123456789abcdef01234567\n";
	static const char bad_commit[] =
		"backend: demo\narches: [a]\nmodels:\n  source: o/n\n  version: v1\n"
		"  commit: main\n";
	static const char missing[] = "backend: demo\narches: [a]\nmodels:\n  source: o/n\n";
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;

	(void)state;
	assert_int_equal(spec_load_buffer("demo.yaml", V(good), &s, &d), 0);
	assert_string_equal(s->models_source, "o/n");
	assert_string_equal(s->models_version, "v1");
	assert_string_equal(s->models_commit, "0123456789abcdef0123456789abcdef01234567");
	spec_free(s);
	assert_int_equal(spec_load_buffer("demo.yaml", V(bad_commit), &s, &d), -EINVAL);
	assert_int_equal(find(&d, "commit must be 40 lower-case hex digits")->line, 6);
	spec_free(s);
	assert_int_equal(spec_load_buffer("demo.yaml", V(missing), &s, &d), -EINVAL);
	assert_non_null(find(&d, "models needs source, version and commit"));
	assert_null(s->models_source);
	spec_free(s);
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

/* The lookup of the condition tests: A=1, B=abc, everything else unset. */
static int cond_lookup(void *ctx, const char *name, size_t len, const char **val,
		       size_t *vlen)
{
	(void)ctx;
	if (len == 1 && (name[0] == 'A' || name[0] == 'B')) {
		*val = name[0] == 'A' ? "1" : "abc";
		*vlen = name[0] == 'A' ? 1 : 3;
		return 1;
	}
	return 0;
}

static bool cond_true(const struct expr *e)
{
	struct expr_env env = { DIALECT_SHELL, cond_lookup, NULL, false, "" };
	bool r = false;

	assert_int_equal(expr_eval(e, &env, &r), 0);
	return r;
}

static const char cond_yaml[] =
	"backend: demo\n"
	"rules:\n"
	"  - when: B =~ '^a+b' && int(A, 0) > 0\n"
	"    message: hit\n"
	"  - when: A == ''\n"
	"    message: miss\n"
	"variables:\n"
	"  - name: V\n"
	"    value: \"1\"\n"
	"    when: B =~ 'c$' || C\n"
	"  - name: PLAIN\n"
	"    value: \"1\"\n"
	"  - name: F\n"
	"    kind: flags\n"
	"    flags:\n"
	"      - \"--a\"\n"
	"      - flag: \"--b\"\n"
	"        when: \"!(A == 1)\"\n";

/* A when: is parsed once, at load, and kept beside its source: the
 * resolution evaluates the spec's tree and never parses again. */
static void test_spec__conditions_are_parsed_at_load(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;
	const struct spec_var *v, *f;

	(void)state;
	assert_int_equal(spec_load_buffer("demo.yaml", V(cond_yaml), &s, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(s->nrules, 2);
	assert_string_equal(s->rules[0].when, "B =~ '^a+b' && int(A, 0) > 0");
	assert_non_null(s->rules[0].when_expr);
	assert_true(cond_true(s->rules[0].when_expr));
	assert_false(cond_true(s->rules[1].when_expr));
	v = only_entry(s, "V");
	assert_string_equal(v->when, "B =~ 'c$' || C");
	assert_true(cond_true(v->when_expr));
	assert_null(only_entry(s, "PLAIN")->when_expr);
	f = only_entry(s, "F");
	assert_null(f->when_expr);
	assert_null(f->flags[0].when_expr);
	assert_false(cond_true(f->flags[1].when_expr));
	/* evaluation leaves the tree as it was */
	assert_true(cond_true(s->rules[0].when_expr));
	assert_true(cond_true(v->when_expr));
	spec_free(s);
	diag_list_release(&d);
}

/* A bad condition is the spec's error at its place and leaves no tree;
 * an entry dropped for another reason frees the tree it had already
 * parsed (the sanitizer build's leak check is the witness). */
static void test_spec__bad_or_dropped_conditions_keep_no_tree(void **state)
{
	static const char yaml[] =
		"backend: demo\n"
		"rules:\n"
		"  - when: A == 1\n"
		"  - when: A ==\n"
		"    message: m\n"
		"variables:\n"
		"  - name: V\n"
		"    when: \"B =~ '(' \"\n"
		"  - when: A == 1\n"
		"    value: no name\n"
		"  - name: F\n"
		"    kind: flags\n"
		"    flags:\n"
		"      - when: A == 1\n"
		"        note: no flag\n";
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;
	const struct diag *e;

	(void)state;
	assert_int_equal(spec_load_buffer("demo.yaml", V(yaml), &s, &d), -EINVAL);
	find(&d, "a rule needs when: and message:");
	e = find(&d, "bad condition: expected an operand at column 5");
	assert_int_equal(e->line, 4);
	assert_int_equal(s->nrules, 1);
	assert_string_equal(s->rules[0].when, "A ==");
	assert_null(s->rules[0].when_expr);
	e = find(&d, "bad condition: bad regular expression at column 6");
	assert_int_equal(e->line, 8);
	assert_null(only_entry(s, "V")->when_expr);
	assert_non_null(only_entry(s, "V")->when);
	find(&d, "a flag entry needs flag:");
	assert_int_equal(only_entry(s, "F")->nflags, 0);
	spec_free(s);
	diag_list_release(&d);
}

struct cond_thread {
	const struct expr *rule, *var, *flag;   /* true, true, false */
	int hits;
};

/* No cmocka assertion here: they jump back to the main thread's test. */
static void *cond_worker(void *arg)
{
	struct cond_thread *t = arg;
	int k;

	for (k = 0; k < 2000; k++) {
		struct expr_env env = { DIALECT_SHELL, cond_lookup, NULL, false, "" };
		bool a = false, b = false, c = true;

		if (expr_eval(t->rule, &env, &a) == 0 && expr_eval(t->var, &env, &b) == 0 &&
		    expr_eval(t->flag, &env, &c) == 0 && a && b && !c)
			t->hits++;
	}
	return NULL;
}

/* A spec is shared by every world and thread of the mount: two threads
 * evaluating its trees (a =~ pattern among them) at once both get what
 * one alone gets. */
static void test_spec__a_loaded_condition_evaluates_from_two_threads(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct spec *s = NULL;
	struct cond_thread t[2];
	pthread_t th[2];
	int k;

	(void)state;
	assert_int_equal(spec_load_buffer("demo.yaml", V(cond_yaml), &s, &d), 0);
	for (k = 0; k < 2; k++) {
		t[k] = (struct cond_thread){ s->rules[0].when_expr, only_entry(s, "V")->when_expr,
			only_entry(s, "F")->flags[1].when_expr, 0 };
		assert_non_null(t[k].rule);
		assert_non_null(t[k].var);
		assert_non_null(t[k].flag);
		assert_int_equal(pthread_create(&th[k], NULL, cond_worker, &t[k]), 0);
	}
	for (k = 0; k < 2; k++) {
		assert_int_equal(pthread_join(th[k], NULL), 0);
		assert_int_equal(t[k].hits, 2000);
	}
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
		cmocka_unit_test(test_spec__entries_of_many_names_match_a_scan),
		cmocka_unit_test(test_spec__unknown_keys_are_errors_at_their_place),
		cmocka_unit_test(test_spec__a_rule_takes_its_code_and_severity_from_the_table),
		cmocka_unit_test(test_spec__models_names_source_version_and_commit),
		cmocka_unit_test(test_spec__runner_and_backend_at_once_is_an_error),
		cmocka_unit_test(test_spec__yaml_syntax_error_has_its_place),
		cmocka_unit_test(test_spec__scope_node_combines_with_the_other_scopes),
		cmocka_unit_test(test_spec__scope_node_on_one_entry_marks_the_name),
		cmocka_unit_test(test_spec__conditions_are_parsed_at_load),
		cmocka_unit_test(test_spec__bad_or_dropped_conditions_keep_no_tree),
		cmocka_unit_test(test_spec__a_loaded_condition_evaluates_from_two_threads),
		cmocka_unit_test(test_spec__free_of_null_is_a_no_op),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

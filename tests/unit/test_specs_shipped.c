/* The shipped specs (the specs directory, ENVFS_SPECS): they load without a
 * single diagnostic, name one file per backend after the backend, resolve
 * cleanly in every directory, and declare secrets without a value. */
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

static const char *specs_dir(void)
{
	const char *d = getenv("ENVFS_SPECS");

	assert_non_null(d);
	return d;
}

static void print_diags(const struct diag_list *d)
{
	struct strbuf sb = STRBUF_INIT;
	size_t k;

	for (k = 0; k < d->n; k++) {
		sb_reset(&sb);
		diag_format(&d->v[k], &sb);
		fprintf(stderr, "  %s\n", sb_str(&sb));
	}
	sb_release(&sb);
}

static void test_specs_shipped__load_without_a_diagnostic(void **state)
{
	static const char *const backends[] = { "maxdiffusion", "maxtext", "megatron",
						"torch_fl", "torchtitan" };
	struct diag_list d = DIAG_LIST_INIT;
	struct spec_set *set = NULL;
	struct strbuf path = STRBUF_INIT;
	size_t k;

	(void)state;
	assert_int_equal(spec_set_load_dir(specs_dir(), NULL, &set, &d), 0);
	if (d.n)
		print_diags(&d);
	assert_int_equal(d.n, 0);
	assert_non_null(set->runner);
	assert_true(set->runner->is_runner);
	assert_true(set->ncatalog > 0);
	assert_int_equal(set->nbackends, sizeof(backends) / sizeof(backends[0]));
	for (k = 0; k < set->nbackends; k++) {
		assert_string_equal(set->backends[k]->backend, backends[k]);
		/* resolve -b reads <backend>.yaml only: the name must match */
		sb_reset(&path);
		sb_addf(&path, "%s/%s.yaml", specs_dir(), backends[k]);
		assert_int_equal(access(sb_str(&path), R_OK), 0);
	}
	spec_set_free(set);
	sb_release(&path);
	diag_list_release(&d);
}

static void test_specs_shipped__every_directory_resolves_cleanly(void **state)
{
	struct envfs_inputs in = { .specs_dir = specs_dir() };
	struct world *w = NULL;
	struct resolution *r = NULL;
	size_t k, sev[3] = { 0 };

	(void)state;
	assert_int_equal(world_load(&in, &w), 0);
	assert_int_equal(resolve_all(w, NULL, &r), 0);
	/* 4 runner backends x 2 arches, and torch_fl's 9 */
	assert_int_equal(r->ndirs, 17);
	for (k = 0; k < r->ndirs; k++)
		assert_true(r->dirs[k]->nset > 0);
	for (k = 0; k < r->diags.n; k++)
		sev[r->diags.v[k].sev]++;
	if (sev[DIAG_ERROR] || sev[DIAG_WARNING])
		print_diags(&r->diags);
	assert_int_equal(sev[DIAG_ERROR], 0);
	assert_int_equal(sev[DIAG_WARNING], 0);
	resolution_free(r);
	world_free(w);
}

/* A secret shipped with a value would be everyone's secret. */
static void test_specs_shipped__secrets_are_declarations(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct spec_set *set = NULL;
	size_t k, j, nsecret = 0;

	(void)state;
	assert_int_equal(spec_set_load_dir(specs_dir(), NULL, &set, &d), 0);
	for (k = 0; k <= set->nbackends; k++) {
		const struct spec *s = k < set->nbackends ? set->backends[k] : set->runner;

		for (j = 0; j < s->nvars; j++) {
			if (!s->vars[j].secret)
				continue;
			nsecret++;
			if (s->vars[j].value)
				fail_msg("%s: secret %s ships a value", s->file, s->vars[j].name);
		}
	}
	assert_true(nsecret >= 3);
	spec_set_free(set);
	diag_list_release(&d);
}

/* resolve -b BACKEND reads one backend's file: the same spec as when
 * every file is read. */
static void test_specs_shipped__one_backend_load_is_the_full_load(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct spec_set *all = NULL, *one = NULL;
	const struct spec *a, *o;
	size_t k;

	(void)state;
	assert_int_equal(spec_set_load_dir(specs_dir(), NULL, &all, &d), 0);
	assert_int_equal(spec_set_load_dir(specs_dir(), "maxtext", &one, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(one->nbackends, 1);
	a = spec_set_backend(all, "maxtext");
	o = spec_set_backend(one, "maxtext");
	assert_non_null(a);
	assert_non_null(o);
	assert_int_equal(a->nvars, o->nvars);
	for (k = 0; k < a->nvars; k++) {
		assert_string_equal(a->vars[k].name, o->vars[k].name);
		assert_int_equal(a->vars[k].line, o->vars[k].line);
	}
	assert_int_equal(all->ncatalog, one->ncatalog);
	spec_set_free(all);
	spec_set_free(one);
	diag_list_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_specs_shipped__load_without_a_diagnostic),
		cmocka_unit_test(test_specs_shipped__every_directory_resolves_cleanly),
		cmocka_unit_test(test_specs_shipped__secrets_are_declarations),
		cmocka_unit_test(test_specs_shipped__one_backend_load_is_the_full_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

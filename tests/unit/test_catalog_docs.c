/* catalog.docs.yaml: the catalog's documentation, attached to the entries
 * of catalog.yaml by name. Every problem is an error at its place: an
 * entry that documents no catalog entry, one documented twice, a type key
 * (types belong in catalog.yaml), a wrong shape. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arena.h"
#include "spec.h"

#define V(lit) (lit), sizeof(lit) - 1

static const char catalog[] =
	"catalog:\n"
	"  - name: MASTER_PORT\n"
	"    type: int\n"
	"    min: 1024\n"
	"  - name: NCCL_DEBUG\n"
	"    type: enum\n"
	"    values: [WARN, INFO]\n"
	"  - name: HF_HOME\n"
	"    type: path\n"
	"    description: \"documented in the catalog itself\"\n";

struct fixture {
	struct diag_list d;
	struct catalog_entry *cat;
	size_t ncat;
	struct arena *text;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->d = (struct diag_list)DIAG_LIST_INIT;
	assert_int_equal(catalog_load_buffer("specs/catalog.yaml", V(catalog), &f->cat, &f->ncat,
					     &f->d), 0);
	assert_int_equal(f->d.n, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	catalog_free(f->cat, f->ncat);
	arena_free(f->text);
	diag_list_release(&f->d);
	free(f);
	return 0;
}

static int load(struct fixture *f, const char *buf, size_t len)
{
	return catalog_docs_load_buffer("specs/catalog.docs.yaml", buf, len, f->cat, f->ncat,
					"specs/catalog.yaml", &f->text, &f->d);
}

static const struct catalog_entry *entry(const struct fixture *f, const char *name)
{
	size_t k;

	for (k = 0; k < f->ncat; k++)
		if (!strcmp(f->cat[k].name, name))
			return &f->cat[k];
	fail_msg("no catalog entry %s", name);
	return NULL;
}

/* The one diagnostic, at line:col, holding needle. */
static void expect_error(const struct fixture *f, unsigned line, unsigned col, const char *needle)
{
	size_t k;

	for (k = 0; k < f->d.n; k++)
		fprintf(stderr, "  %s:%u:%u %s\n", f->d.v[k].file, f->d.v[k].line, f->d.v[k].col,
			f->d.v[k].msg);
	assert_int_equal(f->d.n, 1);
	assert_int_equal(f->d.v[0].sev, DIAG_ERROR);
	assert_string_equal(f->d.v[0].file, "specs/catalog.docs.yaml");
	assert_int_equal(f->d.v[0].line, line);
	assert_int_equal(f->d.v[0].col, col);
	if (!strstr(f->d.v[0].msg, needle))
		fail_msg("'%s' does not hold '%s'", f->d.v[0].msg, needle);
}

static void test_catalog_docs__entries_get_their_fields(void **state)
{
	struct fixture *f = *state;
	static const char docs[] =
		"docs:\n"
		"  - name: NCCL_DEBUG\n"
		"    description: \"RCCL log level.\"\n"
		"    where_used: RCCL\n"
		"  - name: MASTER_PORT\n"
		"    where_set: \"Config / CLI / user\"\n";

	assert_int_equal(load(f, V(docs)), 0);
	assert_int_equal(f->d.n, 0);
	assert_string_equal(entry(f, "NCCL_DEBUG")->description, "RCCL log level.");
	assert_string_equal(entry(f, "NCCL_DEBUG")->where_used, "RCCL");
	assert_null(entry(f, "NCCL_DEBUG")->where_set);
	assert_int_equal(entry(f, "NCCL_DEBUG")->docs_line, 2);
	assert_null(entry(f, "MASTER_PORT")->description);
	assert_string_equal(entry(f, "MASTER_PORT")->where_set, "Config / CLI / user");
	/* catalog.yaml's own documentation stays where no docs entry is. */
	assert_string_equal(entry(f, "HF_HOME")->description, "documented in the catalog itself");
	assert_int_equal(entry(f, "HF_HOME")->docs_line, 0);
}

static void test_catalog_docs__a_name_outside_the_catalog_is_an_error(void **state)
{
	struct fixture *f = *state;
	static const char docs[] =
		"docs:\n"
		"  - name: MASTER_PORT\n"
		"    description: ok\n"
		"  - name: MASTER_PROT\n"
		"    description: typo\n";

	assert_int_equal(load(f, V(docs)), -EINVAL);
	expect_error(f, 4, 5, "MASTER_PROT is not in the catalog (specs/catalog.yaml)");
	assert_string_equal(entry(f, "MASTER_PORT")->description, "ok");
}

static void test_catalog_docs__a_name_documented_twice_is_an_error(void **state)
{
	struct fixture *f = *state;
	static const char docs[] =
		"docs:\n"
		"  - name: NCCL_DEBUG\n"
		"    description: first\n"
		"  - name: NCCL_DEBUG\n"
		"    description: second\n";

	assert_int_equal(load(f, V(docs)), -EINVAL);
	expect_error(f, 4, 5, "NCCL_DEBUG is documented twice (first at line 2)");
	assert_string_equal(entry(f, "NCCL_DEBUG")->description, "first");
}

static void test_catalog_docs__documenting_in_both_files_is_an_error(void **state)
{
	struct fixture *f = *state;
	static const char docs[] =
		"docs:\n"
		"  - name: HF_HOME\n"
		"    where_used: HF\n";

	assert_int_equal(load(f, V(docs)), -EINVAL);
	expect_error(f, 2, 5, "HF_HOME is also documented in specs/catalog.yaml");
	assert_null(entry(f, "HF_HOME")->where_used);
}

static void test_catalog_docs__a_type_belongs_in_the_catalog(void **state)
{
	struct fixture *f = *state;
	static const char docs[] =
		"docs:\n"
		"  - name: NCCL_DEBUG\n"
		"    type: string\n";

	assert_int_equal(load(f, V(docs)), -EINVAL);
	expect_error(f, 3, 5, "unknown field 'type' in a docs entry");
}

static void test_catalog_docs__shape_errors_have_their_place(void **state)
{
	struct fixture *f = *state;
	static const char not_a_list[] = "docs:\n  NCCL_DEBUG: level\n";
	static const char no_name[] = "docs:\n  - description: nameless\n";
	static const char scalar[] = "docs:\n  - NCCL_DEBUG\n";

	assert_int_equal(load(f, V(not_a_list)), -EINVAL);
	expect_error(f, 1, 1, "catalog docs are a mapping with one key, docs:, holding a list");
	diag_list_release(&f->d);
	arena_free(f->text);
	f->text = NULL;
	assert_int_equal(load(f, V(no_name)), -EINVAL);
	expect_error(f, 2, 5, "a docs entry needs name:");
	diag_list_release(&f->d);
	arena_free(f->text);
	f->text = NULL;
	assert_int_equal(load(f, V(scalar)), -EINVAL);
	expect_error(f, 2, 5, "a docs entry must be a mapping");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_catalog_docs__entries_get_their_fields, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_catalog_docs__a_name_outside_the_catalog_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_catalog_docs__a_name_documented_twice_is_an_error,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_catalog_docs__documenting_in_both_files_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_catalog_docs__a_type_belongs_in_the_catalog, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_catalog_docs__shape_errors_have_their_place, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

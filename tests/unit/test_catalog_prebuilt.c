/* catalog_prebuilt: a table compiled at build time gives exactly the
 * entries a parse of its source gives, and is taken only for those bytes.
 *
 * Two tables are linked in: the shipped one (specs/catalog.yaml) and one
 * compiled by tests/meson.build from tests/fixtures/catalog_prebuilt,
 * whose text needs every kind of escaping and whose entries use every
 * field. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog_prebuilt.h"
#include "resolve.h"
#include "shipped_catalog.h"
#include "yaml_tree.h"

extern const struct catalog_prebuilt envfs_test_catalog;

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v ? v : dflt;
}

static void path_of(char *out, size_t size, const char *env, const char *dflt,
		    const char *file)
{
	snprintf(out, size, "%s/%s", env_or(env, dflt), file);
}

static void assert_same_str(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

/* Every field of every entry, in order. */
static void assert_same_catalog(const struct catalog_entry *a, size_t na,
				const struct catalog_entry *b, size_t nb)
{
	size_t k, j;

	assert_int_equal(na, nb);
	for (k = 0; k < na; k++) {
		assert_same_str(a[k].name, b[k].name);
		assert_same_str(a[k].def, b[k].def);
		assert_same_str(a[k].description, b[k].description);
		assert_same_str(a[k].where_used, b[k].where_used);
		assert_same_str(a[k].where_set, b[k].where_set);
		assert_int_equal(a[k].type.type, b[k].type.type);
		assert_int_equal(a[k].type.has_min, b[k].type.has_min);
		assert_int_equal(a[k].type.has_max, b[k].type.has_max);
		assert_true(a[k].type.min == b[k].type.min);
		assert_true(a[k].type.max == b[k].type.max);
		assert_int_equal(a[k].type.invalid, b[k].type.invalid);
		assert_int_equal(a[k].type.nvalues, b[k].type.nvalues);
		for (j = 0; j < a[k].type.nvalues; j++)
			assert_string_equal(a[k].type.values[j], b[k].type.values[j]);
	}
}

/* The table equals a parse of the file, and the file is its source. */
static void check_table(const struct catalog_prebuilt *cp, const char *path)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct catalog_entry *parsed = NULL, *built = NULL;
	size_t nparsed = 0, nbuilt = 0;
	char *buf = NULL;
	size_t len = 0;

	assert_int_equal(yfile_read(path, &buf, &len), 0);
	assert_true(catalog_prebuilt_matches(cp, buf, len));
	assert_int_equal(catalog_load_buffer(path, buf, len, &parsed, &nparsed, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(catalog_from_prebuilt(cp, &built, &nbuilt), 0);
	assert_true(nbuilt > 0);
	assert_same_catalog(parsed, nparsed, built, nbuilt);
	catalog_free(parsed, nparsed);
	catalog_free(built, nbuilt);
	free(buf);
}

static void test_catalog_prebuilt__shipped_table_is_a_parse_of_specs_catalog(void **state)
{
	char path[4096];

	(void)state;
	path_of(path, sizeof(path), "ENVFS_SPECS", "specs", "catalog.yaml");
	check_table(&envfs_shipped_catalog, path);
}

static void test_catalog_prebuilt__escaped_text_and_every_field_round_trip(void **state)
{
	char path[4096];
	struct catalog_entry *v = NULL;
	size_t n = 0;

	(void)state;
	path_of(path, sizeof(path), "ENVFS_FIXTURES", "tests/fixtures",
		"catalog_prebuilt/catalog.yaml");
	check_table(&envfs_test_catalog, path);
	/* Spot checks, so that a table and a parse wrong the same way fail. */
	assert_int_equal(catalog_from_prebuilt(&envfs_test_catalog, &v, &n), 0);
	assert_int_equal(n, 7);
	assert_string_equal(v[0].name, "A_ENUM");
	assert_int_equal(v[0].type.nvalues, 3);
	assert_string_equal(v[0].type.values[1], "slow ?" "?( mode");
	assert_string_equal(v[0].type.values[2], "quote \" and \\ backslash");
	assert_string_equal(v[0].description,
			    "Tab\there, newline\nthere, and UTF-8: gr\xc3\xb6\xc3\x9f" "e, "
			    "\xe6\x97\xa5\xe6\x9c\xac.");
	assert_string_equal(v[0].where_used, "");
	assert_int_equal(v[1].type.type, VT_INT);
	assert_true(v[1].type.min == LLONG_MIN && v[1].type.max == LLONG_MAX);
	assert_null(v[6].def);
	assert_string_equal(v[6].name, "ZED_LAST");
	catalog_free(v, n);
}

static void test_catalog_prebuilt__other_bytes_do_not_match(void **state)
{
	const struct catalog_prebuilt *cp = &envfs_test_catalog;
	char *copy = malloc(cp->src_len + 1);

	(void)state;
	assert_non_null(copy);
	memcpy(copy, cp->src, cp->src_len);
	assert_true(catalog_prebuilt_matches(cp, copy, cp->src_len));
	assert_false(catalog_prebuilt_matches(cp, copy, cp->src_len - 1));
	copy[cp->src_len] = '\n';
	assert_false(catalog_prebuilt_matches(cp, copy, cp->src_len + 1));
	copy[cp->src_len / 2] ^= 1;
	assert_false(catalog_prebuilt_matches(cp, copy, cp->src_len));
	assert_false(catalog_prebuilt_matches(NULL, copy, cp->src_len));
	free(copy);
}

static void test_catalog_prebuilt__a_catalog_with_diagnostics_is_not_compiled(void **state)
{
	static const char bad[] = "catalog:\n  - name: X\n    colour: red\n";
	struct diag_list d = DIAG_LIST_INIT;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	assert_non_null(out);
	assert_int_equal(catalog_prebuilt_emit(bad, sizeof(bad) - 1, "bad.yaml", "sym", out, &d),
			 -EINVAL);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].file, "bad.yaml");
	assert_int_equal(d.v[0].line, 3);
	assert_non_null(strstr(d.v[0].msg, "unknown field 'colour'"));
	fclose(out);
	assert_int_equal(len, 0);
	free(text);
	diag_list_release(&d);
}

/* Fills the fresh directory made from template dir (mkdtemp) with the
 * shipped spec files. */
static void copy_specs(char *dir)
{
	char cmd[12288];

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp '%s'/*.yaml '%s'/", env_or("ENVFS_SPECS", "specs"), dir);
	assert_int_equal(system(cmd), 0);
}

static void remove_dir(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -r '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static bool in_table(const char *s)
{
	const char *t = envfs_shipped_catalog.text;

	return s >= t && s < t + envfs_shipped_catalog.text_len;
}

/* Loading a directory: its catalog.yaml is the table's source, then one
 * byte more; the entries are the same and so are the diagnostics (none). */
static void test_catalog_prebuilt__spec_set_takes_the_table_only_for_its_bytes(void **state)
{
	char copy[] = "/tmp/envfs-cp-XXXXXX", path[4200];
	struct spec_set *a = NULL, *b = NULL, *c = NULL;
	struct diag_list d = DIAG_LIST_INIT;
	FILE *f;

	(void)state;
	copy_specs(copy);
	assert_int_equal(spec_set_load_dir(copy, "maxtext", &envfs_shipped_catalog, &a, &d), 0);
	assert_int_equal(spec_set_load_dir(copy, "maxtext", NULL, &b, &d), 0);
	assert_int_equal(d.n, 0);
	/* The table's strings are its own: that is how taking it shows. */
	assert_true(in_table(a->catalog[0].name));
	assert_same_catalog(a->catalog, a->ncatalog, b->catalog, b->ncatalog);
	snprintf(path, sizeof(path), "%s/catalog.yaml", copy);
	assert_non_null(f = fopen(path, "a"));
	fputs("# one more line\n", f);
	fclose(f);
	assert_int_equal(spec_set_load_dir(copy, "maxtext", &envfs_shipped_catalog, &c, &d), 0);
	assert_int_equal(d.n, 0);
	assert_false(in_table(c->catalog[0].name));
	assert_same_catalog(b->catalog, b->ncatalog, c->catalog, c->ncatalog);
	spec_set_free(a);
	spec_set_free(b);
	spec_set_free(c);
	remove_dir(copy);
}

static void assert_same_diags(const struct diag_list *a, const struct diag_list *b)
{
	size_t k;

	assert_int_equal(a->n, b->n);
	for (k = 0; k < a->n; k++) {
		assert_int_equal(a->v[k].sev, b->v[k].sev);
		assert_same_str(a->v[k].file, b->v[k].file);
		assert_int_equal(a->v[k].line, b->v[k].line);
		assert_int_equal(a->v[k].col, b->v[k].col);
		assert_string_equal(a->v[k].msg, b->v[k].msg);
	}
}

/* A broken catalog.yaml reads the same with or without a table: same
 * result, same diagnostics, each naming the file as for any spec file. */
static void test_catalog_prebuilt__a_broken_catalog_has_the_same_diagnostics(void **state)
{
	static const char *const broken[] = {
		"catalog:\n  - name: [unclosed\n",             /* YAML syntax */
		"catalog:\n  - name: X\n    colour: red\n",   /* schema */
	};
	char copy[] = "/tmp/envfs-cp-XXXXXX", path[4200];
	size_t k;

	(void)state;
	copy_specs(copy);
	snprintf(path, sizeof(path), "%s/catalog.yaml", copy);
	for (k = 0; k < sizeof(broken) / sizeof(broken[0]); k++) {
		struct diag_list with = DIAG_LIST_INIT, without = DIAG_LIST_INIT;
		struct spec_set *a = NULL, *b = NULL;
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs(broken[k], f);
		fclose(f);
		assert_int_equal(spec_set_load_dir(copy, "maxtext", &envfs_shipped_catalog, &a,
						   &with), -EINVAL);
		assert_int_equal(spec_set_load_dir(copy, "maxtext", NULL, &b, &without), -EINVAL);
		assert_true(with.n > 0);
		assert_same_diags(&with, &without);
		/* Syntax errors name the file as given, like every spec file. */
		if (k == 0)
			assert_string_equal(with.v[0].file, path);
		spec_set_free(a);
		spec_set_free(b);
		diag_list_release(&with);
		diag_list_release(&without);
	}
	remove_dir(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog_prebuilt__shipped_table_is_a_parse_of_specs_catalog),
		cmocka_unit_test(test_catalog_prebuilt__escaped_text_and_every_field_round_trip),
		cmocka_unit_test(test_catalog_prebuilt__other_bytes_do_not_match),
		cmocka_unit_test(test_catalog_prebuilt__a_catalog_with_diagnostics_is_not_compiled),
		cmocka_unit_test(test_catalog_prebuilt__spec_set_takes_the_table_only_for_its_bytes),
		cmocka_unit_test(test_catalog_prebuilt__a_broken_catalog_has_the_same_diagnostics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

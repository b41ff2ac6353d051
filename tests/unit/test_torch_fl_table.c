/* specs/torch_fl.yaml against tests/fixtures/torch_fl_table.tsv, a hand
 * transcription of the torch_fl seed's owned-variable tables made apart
 * from the spec (issue 3, acceptance 3). For every row: the name is
 * declared, every entry of it has the row's scope, and the row's default
 * is an `export: false` value of an entry that applies on cuda; a row with
 * no default has no value on cuda. Every FLAGOS_* name the spec declares
 * is a row, so the spec cannot grow a switch the seed does not have. */
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

struct row {
	char *name;
	unsigned scope;
	char *def;              /* NULL: the seed gives no value */
};

static struct spec *g_spec;
static struct row *g_rows;
static size_t g_nrows;

static unsigned parse_scope(const char *s)
{
	unsigned bits = 0;
	char *copy = strdup(s), *tok, *save = NULL;

	assert_non_null(copy);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "build"))
			bits |= SCOPE_BUILD;
		else if (!strcmp(tok, "runtime"))
			bits |= SCOPE_RUNTIME;
		else if (!strcmp(tok, "test"))
			bits |= SCOPE_TEST;
		else
			fail_msg("unknown scope '%s' in the table", tok);
	}
	free(copy);
	return bits;
}

static int setup(void **state)
{
	const char *specs = getenv("ENVFS_SPECS"), *fix = getenv("ENVFS_FIXTURES");
	struct diag_list diags = DIAG_LIST_INIT;
	char path[4096], line[1024];
	FILE *f;
	int err;

	(void)state;
	if (!specs || !fix)
		return -1;
	snprintf(path, sizeof(path), "%s/torch_fl.yaml", specs);
	err = spec_load_file(path, "specs/torch_fl.yaml", &g_spec, &diags);
	if (err || diags.n) {
		size_t k;

		for (k = 0; k < diags.n; k++)
			fprintf(stderr, "%s:%u: %s\n", diags.v[k].file ? diags.v[k].file : "-",
				diags.v[k].line, diags.v[k].msg);
		diag_list_release(&diags);
		return -1;
	}
	diag_list_release(&diags);
	snprintf(path, sizeof(path), "%s/torch_fl_table.tsv", fix);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *name, *scope, *def, *save = NULL;
		struct row *r;

		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		name = strtok_r(line, "\t", &save);
		scope = strtok_r(NULL, "\t", &save);
		def = strtok_r(NULL, "\t", &save);
		if (!name || !scope || !def || !(r = realloc(g_rows, (g_nrows + 1) * sizeof(*r))))
			break;
		g_rows = r;
		r = &g_rows[g_nrows++];
		r->name = strdup(name);
		r->scope = parse_scope(scope);
		r->def = strcmp(def, "-") ? strdup(def) : NULL;
	}
	fclose(f);
	return g_nrows ? 0 : -1;
}

static int teardown(void **state)
{
	size_t k;

	(void)state;
	for (k = 0; k < g_nrows; k++) {
		free(g_rows[k].name);
		free(g_rows[k].def);
	}
	free(g_rows);
	spec_free(g_spec);
	return 0;
}

static const char *scope_text(unsigned bits, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", bits & SCOPE_BUILD ? "build " : "",
		 bits & SCOPE_RUNTIME ? "runtime " : "", bits & SCOPE_TEST ? "test " : "");
	return buf;
}

/* Collects every mismatch before failing, so one run lists them all. */
static void test_every_row_declared(void **state)
{
	size_t k, j, bad = 0;
	char a[40], b[40];

	(void)state;
	assert_true(g_nrows >= 50);
	for (k = 0; k < g_nrows; k++) {
		const struct row *r = &g_rows[k];
		size_t entries = 0;
		bool have_def = false;

		for (j = 0; j < g_spec->nvars; j++) {
			const struct spec_var *v = &g_spec->vars[j];

			if (strcmp(v->name, r->name))
				continue;
			entries++;
			if (v->scope != r->scope) {
				fprintf(stderr, "%s (line %u): scope %s, the seed says %s\n", r->name,
					v->line, scope_text(v->scope, a, sizeof(a)),
					scope_text(r->scope, b, sizeof(b)));
				bad++;
			}
			if (!v->value || !spec_var_applies_to_arch(v, "cuda"))
				continue;
			if (!r->def) {
				fprintf(stderr, "%s (line %u): value '%s' on cuda, the seed gives "
					"none\n", r->name, v->line, v->value);
				bad++;
			} else if (!strcmp(v->value, r->def) && !v->export && !v->when) {
				have_def = true;
			}
		}
		if (!entries) {
			fprintf(stderr, "%s: not declared in torch_fl.yaml\n", r->name);
			bad++;
		} else if (r->def && !have_def) {
			fprintf(stderr, "%s: no `export: false` entry with value '%s' on cuda\n",
				r->name, r->def);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

static void test_no_undocumented_flagos_name(void **state)
{
	size_t k, j, bad = 0;

	(void)state;
	for (j = 0; j < g_spec->nvars; j++) {
		const char *name = g_spec->vars[j].name;

		if (strncmp(name, "FLAGOS_", 7))
			continue;
		for (k = 0; k < g_nrows && strcmp(g_rows[k].name, name); k++)
			;
		if (k == g_nrows) {
			fprintf(stderr, "%s (line %u) is not a row of the seed's tables\n", name,
				g_spec->vars[j].line);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* The table's rows are owned names: the spec must claim their prefix, and
 * FLAGOS_OP_<name> is the one dynamic family. */
static void test_owned_prefix_and_family(void **state)
{
	size_t k;
	bool fam = false;

	(void)state;
	assert_non_null(g_spec->owned_prefix);
	assert_string_equal(g_spec->owned_prefix, "FLAGOS_");
	for (k = 0; k < g_spec->nfamilies; k++)
		fam |= !strcmp(g_spec->families[k], "FLAGOS_OP_");
	assert_true(fam);
	for (k = 0; k < g_nrows; k++)
		assert_int_equal(strncmp(g_rows[k].name, "FLAGOS_", 7), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row_declared),
		cmocka_unit_test(test_no_undocumented_flagos_name),
		cmocka_unit_test(test_owned_prefix_and_family),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

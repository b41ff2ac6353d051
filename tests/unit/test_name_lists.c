/* names: the readers' name lists and XLA's flags load once into sorted
 * tables (names.h), and the shipped ones say where they came from and
 * know every flag the shipped specs manage. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "name_lists.h"
#include "spec.h"
#include "strbuf.h"

static const char *fixtures(void)
{
	const char *f = getenv("ENVFS_FIXTURES");

	return f ? f : "tests/fixtures";
}

static struct names *load(const char *sub, int want, struct diag_list *d)
{
	struct strbuf p = STRBUF_INIT;
	struct names *n = NULL;

	assert_int_equal(sb_addf(&p, "%s/names/%s", fixtures(), sub), 0);
	assert_int_equal(names_load_dir(sb_str(&p), &n, d), want);
	sb_release(&p);
	assert_non_null(n);
	return n;
}

static void test_names__lists_load_sorted_and_merged(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct names *n = load("lists", 0, &d);
	const struct names_entry *e;

	(void)state;
	assert_int_equal(d.n, 0);
	assert_int_equal(n->nreaders, 2);
	assert_string_equal(n->readers[0].title, "Alpha");
	assert_int_equal(n->n, 4);
	/* a name two lists give is one entry read by both */
	assert_non_null(e = names_find(n, "SHARED_NAME", 11));
	assert_int_equal(e->readers, 3);
	assert_non_null(e = names_find(n, "BETA_ONE", 8));
	assert_int_equal(e->readers, 2);
	assert_null(names_find(n, "ALPHA_ON", 8));
	assert_null(names_find(n, "ALPHA_ONE_", 10));
	/* the length decides, not a terminator */
	assert_non_null(names_find(n, "ALPHA_ONEXYZ", 9));
	assert_int_equal(n->nflags, 2);
	assert_true(names_xla_flag(n, "xla_b", 5)->boolean);
	assert_false(names_xla_flag(n, "xla_a", 5)->boolean);
	assert_null(names_xla_flag(n, "xla_c", 5));
	diag_list_release(&d);
	names_free(n);
}

static void test_names__backends_and_prefixes(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct names *n = load("lists", 0, &d);

	(void)state;
	assert_true(names_reader_runs(n, 0, "anything"));
	assert_true(names_reader_runs(n, 1, "jaxish"));
	assert_false(names_reader_runs(n, 1, "megatron"));
	assert_string_equal(names_prefix_reader(n, "AL_X")->title, "Alpha");
	assert_string_equal(names_prefix_reader(n, "BETA_X")->title, "Beta");
	assert_null(names_prefix_reader(n, "GAMMA_X"));
	diag_list_release(&d);
	names_free(n);
}

static void test_names__a_bad_line_and_a_missing_source_are_errors(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct names *n = load("bad", -EINVAL, &d);
	size_t k, line3 = 0, source = 0;

	(void)state;
	for (k = 0; k < d.n; k++) {
		assert_int_equal(d.v[k].sev, DIAG_ERROR);
		assert_non_null(strstr(d.v[k].file, "bad.txt"));
		line3 += d.v[k].line == 3 && strstr(d.v[k].msg, "expected one variable name");
		source += strstr(d.v[k].msg, "# source:") != NULL;
	}
	assert_int_equal(line3, 1);
	assert_int_equal(source, 1);
	/* what is good still loads */
	assert_non_null(names_find(n, "GOOD_NAME", 9));
	diag_list_release(&d);
	names_free(n);
}

static void test_names__a_missing_directory_is_empty(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct names *n = load("no-such-dir", 0, &d);

	(void)state;
	assert_int_equal(n->n + n->nflags + n->nreaders, 0);
	diag_list_release(&d);
	names_free(n);
}

static struct spec_set *shipped(void)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct spec_set *set = NULL;
	const char *dir = getenv("ENVFS_SPECS");

	assert_int_equal(spec_set_load_dir(dir ? dir : "specs", NULL, 0, &set, &d), 0);
	diag_list_release(&d);
	assert_non_null(set->names);
	return set;
}

/* Every shipped list names its source, and the readers the issue names
 * are all there. */
static void test_names__shipped_lists_name_their_source(void **state)
{
	static const char *const want[] = { "nccl.txt", "rccl.txt", "hip.txt", "hsa.txt",
					     "miopen.txt", "hipblaslt.txt", "xla_jax.txt",
					     "pytorch.txt", "transformer_engine.txt",
					     "megatron.txt", "torch_fl.txt" };
	struct spec_set *set = shipped();
	const struct names *n = set->names;
	size_t k, j;

	(void)state;
	for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		for (j = 0; j < n->nreaders && strcmp(n->readers[j].file, want[k]); j++)
			;
		assert_true(j < n->nreaders);
	}
	assert_non_null(names_find(n, "NCCL_IB_GID_INDEX", 17));
	assert_non_null(names_find(n, "NCCL_SOCKET_IFNAME", 18));
	assert_non_null(names_find(n, "HIP_VISIBLE_DEVICES", 19));
	assert_non_null(names_find(n, "XLA_PYTHON_CLIENT_MEM_FRACTION", 30));
	assert_true(n->nflags > 200);
	spec_set_free(set);
}

/* Each flag a shipped spec manages is one XLA defines. */
static void test_names__shipped_specs_flags_are_all_known(void **state)
{
	struct spec_set *set = shipped();
	size_t b, k, f, seen = 0;

	(void)state;
	for (b = 0; b <= set->nbackends; b++) {
		const struct spec *sp = b < set->nbackends ? set->backends[b] : set->runner;

		for (k = 0; sp && k < sp->nvars; k++)
			for (f = 0; f < sp->vars[k].nflags; f++) {
				const char *t = sp->vars[k].flags[f].text;
				size_t len = strcspn(t, "= ");

				assert_true(len > 2 && !strncmp(t, "--", 2));
				if (!names_xla_flag(set->names, t + 2, len - 2))
					fail_msg("%s: %s manages %.*s, which XLA does not define",
						 sp->display, sp->vars[k].name, (int)len, t);
				seen++;
			}
	}
	assert_true(seen > 0);
	spec_set_free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names__lists_load_sorted_and_merged),
		cmocka_unit_test(test_names__backends_and_prefixes),
		cmocka_unit_test(test_names__a_bad_line_and_a_missing_source_are_errors),
		cmocka_unit_test(test_names__a_missing_directory_is_empty),
		cmocka_unit_test(test_names__shipped_lists_name_their_source),
		cmocka_unit_test(test_names__shipped_specs_flags_are_all_known),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

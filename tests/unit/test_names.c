/* The names a directory, a variable and an override key may have
 * (resolver/inputs/names.c): one set, checked by the spec loader, the
 * command line, the mount's writes and the --sync key reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fnmatch.h>
#include <string.h>
#include <cmocka.h>

#include "names.h"

static bool backend_ok(const char *s)
{
	return names_dir_problem(s, strlen(s), false) == NULL;
}

static bool arch_ok(const char *s)
{
	return names_dir_problem(s, strlen(s), true) == NULL;
}

static void test_names__backends_are_word_like(void **state)
{
	static const char *const good[] = { "maxtext", "torch_fl", "mt2", "app-1", "v1.2", "X" };
	static const char *const bad[] = { "", ".", "..", ".x", "-x", "a/b", "a b", "a\tb",
		"tt$(touch${IFS}pwn)", "a'b", "a\"b", "a`b", "a\\b", "a\nb", "a\x1b[2J", "a:b",
		"a+b", "caf\xc3\xa9", "a*", "a;b" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(backend_ok(good[i]));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(backend_ok(bad[i]));
}

static void test_names__arches_take_amd_target_ids(void **state)
{
	static const char *const good[] = { "gfx942", "gfx90a:xnack+", "gfx942:sramecc+:xnack-",
		"mi300x.v2-a", "cuda" };
	static const char *const bad[] = { "", "host", ".", "..", ":x", "+x", "-x", ".x",
		"$(touch${IFS}pwn)", "a/b", "a b", "a'b", "a\x7f", "a=b", "a,b" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(arch_ok(good[i]));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(arch_ok(bad[i]));
}

static void test_names__directory_names_are_bounded(void **state)
{
	char s[NAMES_DIR_MAX + 2];

	(void)state;
	memset(s, 'a', sizeof(s));
	s[NAMES_DIR_MAX] = '\0';
	assert_true(backend_ok(s) && arch_ok(s));
	s[NAMES_DIR_MAX] = 'a';
	s[NAMES_DIR_MAX + 1] = '\0';
	assert_false(backend_ok(s) || arch_ok(s));
}

static void test_names__problems_are_named(void **state)
{
	(void)state;
	assert_string_equal(names_dir_problem("a$b", 3, true),
			    "holds a byte other than letters, digits, '_', '.', '-', ':' and '+'");
	assert_string_equal(names_dir_problem("a:b", 3, false),
			    "holds a byte other than letters, digits, '_', '.' and '-'");
	assert_string_equal(names_dir_problem("a\nb", 3, false),
			    "holds a control byte, a blank or a byte that is not ASCII");
	assert_string_equal(names_dir_problem("", 0, false), "is empty");
	assert_string_equal(names_dir_problem("host", 4, true), "is the name of the host symlink");
	assert_string_equal(names_dir_problem(".a", 2, true),
			    "does not start with a letter, a digit or '_'");
}

static void test_names__override_is_what_a_key_can_carry(void **state)
{
	char var[NAMES_VAR_MAX + 2];

	(void)state;
	assert_true(names_override_ok("maxtext", "gfx90a:xnack+", "XLA_FLAGS"));
	assert_false(names_override_ok("maxtext", "gfx942", "MY-VAR"));
	assert_false(names_override_ok("maxtext", "gfx942", "9A"));
	assert_false(names_override_ok("maxtext", "gfx942", ""));
	assert_false(names_override_ok("max text", "gfx942", "A"));
	assert_false(names_override_ok("maxtext", "gfx/942", "A"));
	memset(var, 'A', sizeof(var));
	var[NAMES_VAR_MAX] = '\0';
	assert_true(names_override_ok("maxtext", "gfx942", var));
	var[NAMES_VAR_MAX] = 'A';
	var[NAMES_VAR_MAX + 1] = '\0';
	assert_false(names_override_ok("maxtext", "gfx942", var));
	/* Whatever passes fits the reader's buffer of a key. */
	assert_true(NAMES_KEY_MAX < 1024);
}

/* The shipped secret patterns (specs/base.yaml) as the matcher reads
 * them: fnmatch(3) globs over whole names. */
static void test_names__secret_globs_match_whole_names(void **state)
{
	static char *const pats[] = { "*_TOKEN", "*_TOKEN_*", "*_SECRET", "*_SECRET_*",
		"*_API_KEY", "*_PASSWORD", "*_PASSWD", "*_ACCESS_KEY", "*_PRIVATE_KEY",
		"*_CREDENTIALS" };
	static const char *const yes[] = { "HUGGING_FACE_HUB_TOKEN", "AWS_SECRET_ACCESS_KEY",
		"OPENAI_API_KEY", "GITHUB_TOKEN", "HF_TOKEN", "A_TOKEN_B", "X_SECRET",
		"DB_PASSWORD", "GCP_CREDENTIALS", "S3_ACCESS_KEY", "SSH_PRIVATE_KEY" };
	static const char *const no[] = { "TOKEN", "PRIMUS_TOKENIZED_DATA_PATH", "TOKENIZER",
		"HF_TOKENS", "SECRET", "_TOKENX", "NCCL_DEBUG", "API_KEY", "hf_token" };
	size_t n = sizeof(pats) / sizeof(pats[0]), i;

	(void)state;
	for (i = 0; i < n; i++)
		assert_true(names_glob_ok(pats[i]));
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(names_glob_any(pats, n, yes[i]));
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(names_glob_any(pats, n, no[i]));
	assert_false(names_glob_any(pats, 0, "HF_TOKEN"));
}

/* A glob of literals and '*' only is matched without fnmatch: the same
 * answer as fnmatch(glob, name, 0) for every pair, backtracking cases
 * (a literal piece that first matches too early) above all. */
static char *const globs[] = {
	"*_TOKEN", "*_TOKEN_*", "*", "**", "", "A*", "*A", "A*B*C", "*AB*AB",
	"HF_TOKEN", "*_*_*", "A**B", "*AAB", "?_TOKEN", "[AB]*", "A\\*",
	/* one literal piece: a suffix, an infix, a prefix */
	"*B", "*AB*", "AB*", "*_TOKEN_", "_TOKEN*", "*ABABAB*", "*ABABABA",
};
static const char *const names[] = {
	"", "A", "AB", "HF_TOKEN", "HF_TOKEN_X", "X_TOKEN_TOKEN", "_TOKEN",
	"TOKEN", "A_TOKEN_", "AXBXC", "ABC", "ACB", "ABAB", "ABABAB", "AAAB",
	"AAB", "A_B_C", "A__", "A*", "B_TOKEN", "BB", "XAB",
};

static void test_names__star_globs_match_as_fnmatch(void **state)
{
	size_t g, n;

	(void)state;
	for (g = 0; g < sizeof(globs) / sizeof(*globs); g++)
		for (n = 0; n < sizeof(names) / sizeof(*names); n++) {
			char *const one[] = { (char *)globs[g] };
			bool want = fnmatch(globs[g], names[n], 0) == 0;

			if (names_glob_any(one, 1, names[n]) != want)
				fail_msg("glob '%s', name '%s': want %d", globs[g], names[n], want);
		}
}

/* The set made once (what a spec keeps of its secret patterns) answers
 * as fnmatch does, for one glob and for all of them at once. */
static void test_names__glob_set_matches_as_fnmatch(void **state)
{
	size_t ng = sizeof(globs) / sizeof(*globs), g, n;
	struct names_glob_set all, one;

	(void)state;
	assert_int_equal(names_glob_set_init(&all, globs, ng), 0);
	for (n = 0; n < sizeof(names) / sizeof(*names); n++) {
		bool any = false;

		for (g = 0; g < ng; g++) {
			bool want = fnmatch(globs[g], names[n], 0) == 0;

			assert_int_equal(names_glob_set_init(&one, &globs[g], 1), 0);
			if (names_glob_set_any(&one, names[n], strlen(names[n])) != want)
				fail_msg("glob '%s', name '%s': want %d", globs[g], names[n], want);
			names_glob_set_release(&one);
			any |= want;
		}
		assert_int_equal(names_glob_set_any(&all, names[n], strlen(names[n])), any);
	}
	names_glob_set_release(&all);
	assert_int_equal(names_glob_set_init(&all, globs, 0), 0);
	assert_false(names_glob_set_any(&all, "HF_TOKEN", 8));
	names_glob_set_release(&all);
}

static void test_names__secret_globs_are_of_names(void **state)
{
	(void)state;
	assert_true(names_glob_ok("MYCO_*"));
	assert_true(names_glob_ok("A[0-9]?"));
	assert_true(names_glob_ok("EXACT_NAME"));
	assert_false(names_glob_ok(""));
	assert_false(names_glob_ok("A B"));
	assert_false(names_glob_ok("A=B"));
	assert_false(names_glob_ok("$(x)"));
	assert_false(names_glob_ok("a/b"));
	assert_false(names_glob_ok("A\\*"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names__backends_are_word_like),
		cmocka_unit_test(test_names__arches_take_amd_target_ids),
		cmocka_unit_test(test_names__directory_names_are_bounded),
		cmocka_unit_test(test_names__problems_are_named),
		cmocka_unit_test(test_names__override_is_what_a_key_can_carry),
		cmocka_unit_test(test_names__secret_globs_match_whole_names),
		cmocka_unit_test(test_names__secret_globs_are_of_names),
		cmocka_unit_test(test_names__star_globs_match_as_fnmatch),
		cmocka_unit_test(test_names__glob_set_matches_as_fnmatch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

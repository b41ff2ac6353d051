/* config: SPEC section 5, the experiment config's env: block, and yaml11,
 * the PyYAML typing behind its "quote it" warnings. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "yaml11.h"

struct loaded {
	struct config *cfg;
	struct diag_list d;
	int rc;
};

static const char *fixture(const char *name)
{
	const char *dir = getenv("ENVFS_FIXTURES");
	static char path[4096];

	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/config/%s", dir, name);
	return path;
}

static void load_text(struct loaded *l, const char *text)
{
	memset(l, 0, sizeof(*l));
	l->rc = config_load_buffer("exp.yaml", text, strlen(text), NULL, &l->cfg, &l->d);
}

static void load_fixture(struct loaded *l, const char *name)
{
	memset(l, 0, sizeof(*l));
	l->rc = config_load(fixture(name), NULL, &l->cfg, &l->d);
}

static void release(struct loaded *l)
{
	config_free(l->cfg);
	diag_list_release(&l->d);
}

static const struct config_entry *entry(const struct loaded *l, const char *name)
{
	size_t i;

	for (i = 0; l->cfg && i < l->cfg->nenv; i++)
		if (strcmp(l->cfg->env[i].name, name) == 0)
			return &l->cfg->env[i];
	return NULL;
}

static void assert_entry(const struct loaded *l, const char *name,
			 const char *raw)
{
	const struct config_entry *e = entry(l, name);

	if (!e)
		fail_msg("no entry %s", name);
	assert_string_equal(e->value, raw);
	assert_int_equal(e->value_len, strlen(raw));
}

/* The diagnostic whose message contains needle; fails unless exactly one
 * does. */
static const struct diag *find_diag(const struct diag_list *d,
				    const char *needle)
{
	const struct diag *found = NULL;
	size_t i;

	for (i = 0; i < d->n; i++) {
		if (!strstr(d->v[i].msg, needle))
			continue;
		if (found)
			fail_msg("two diagnostics contain \"%s\"", needle);
		found = &d->v[i];
	}
	if (!found) {
		for (i = 0; i < d->n; i++)
			print_error("  have: %s\n", d->v[i].msg);
		fail_msg("no diagnostic contains \"%s\"", needle);
	}
	return found;
}

static void assert_diag(const struct diag_list *d, enum diag_sev sev,
			unsigned line, unsigned col, const char *needle)
{
	const struct diag *x = find_diag(d, needle);

	assert_int_equal(x->sev, sev);
	assert_int_equal(x->line, line);
	assert_int_equal(x->col, col);
	assert_non_null(x->file);
}

static void assert_no_diags(const struct loaded *l)
{
	size_t i;

	for (i = 0; i < l->d.n; i++)
		print_error("unexpected: %s\n", l->d.v[i].msg);
	assert_int_equal(l->d.n, 0);
}

/* ---- the seed guide's recipes, as the fixture files the e2e tests use */

static void test_config__recipe_append_one_flag(void **state)
{
	struct loaded l;

	(void)state;
	load_fixture(&l, "append_one_flag.yaml");
	assert_int_equal(l.rc, 0);
	assert_no_diags(&l);
	assert_int_equal(l.cfg->nenv, 1);
	assert_entry(&l, "XLA_FLAGS_APPEND", "--xla_gpu_autotune_level=5");
	assert_int_equal(entry(&l, "XLA_FLAGS_APPEND")->line, 6);
	assert_int_equal(entry(&l, "XLA_FLAGS_APPEND")->col, 21);
	assert_string_equal(l.cfg->file, fixture("append_one_flag.yaml"));
	assert_int_equal(l.cfg->nframeworks, 1);
	assert_string_equal(l.cfg->frameworks[0], "maxtext");
	release(&l);
}

static void test_config__recipe_folded_collective_timeouts_join_with_one_space(void **state)
{
	struct loaded l;

	(void)state;
	load_fixture(&l, "collective_timeouts.yaml");
	assert_int_equal(l.rc, 0);
	assert_no_diags(&l);
	assert_entry(&l, "XLA_FLAGS_APPEND",
		     "--xla_gpu_first_collective_call_warn_stuck_timeout_seconds=300 "
		     "--xla_gpu_first_collective_call_terminate_timeout_seconds=2400");
	release(&l);
}

static void test_config__recipe_dump_hlo_sets_the_named_variables(void **state)
{
	struct loaded l;

	(void)state;
	load_fixture(&l, "dump_hlo.yaml");
	assert_int_equal(l.rc, 0);
	assert_no_diags(&l);
	assert_int_equal(l.cfg->nenv, 2);
	assert_string_equal(l.cfg->env[0].name, "DUMP_HLO");
	assert_string_equal(l.cfg->env[1].name, "DUMP_HLO_DIR");
	assert_entry(&l, "DUMP_HLO", "1");
	assert_entry(&l, "DUMP_HLO_DIR", "output/xla_dump_hlo");
	release(&l);
}

static void test_config__recipe_config_owning_xla_flags_is_loaded_as_written(void **state)
{
	struct loaded l;

	(void)state;
	load_fixture(&l, "owns_xla_flags.yaml");
	assert_int_equal(l.rc, 0);
	assert_no_diags(&l);
	assert_entry(&l, "XLA_FLAGS", "--xla_gpu_enable_triton_gemm=false "
		     "--xla_gpu_enable_cublaslt=true");
	release(&l);
}

static void test_config__env_under_module_warns_and_is_not_applied(void **state)
{
	struct loaded l;

	(void)state;
	load_fixture(&l, "env_under_module.yaml");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.cfg->nenv, 0);
	assert_int_equal(l.d.n, 1);
	assert_diag(&l.d, DIAG_WARNING, 10, 5, "env: under module 'pre_trainer' "
		    "(line 10) is not applied (Primus turns it into a training "
		    "parameter); move it to the top level");
	assert_string_equal(l.d.v[0].file, fixture("env_under_module.yaml"));
	release(&l);
}

static void test_config__env_nested_deeper_under_a_module_warns_too(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "env:\n  A: \"1\"\nmodules:\n  post:\n    framework: megatron\n"
		  "    overrides:\n      - x: 1\n        env:\n          B: \"2\"\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.cfg->nenv, 1);
	assert_entry(&l, "A", "1");
	assert_null(entry(&l, "B"));
	assert_diag(&l.d, DIAG_WARNING, 8, 9, "env: under module 'post' (line 8)");
	release(&l);
}

static void test_config__recipe_unquoted_float_warns_with_what_primus_exports(void **state)
{
	struct loaded l;

	(void)state;
	load_fixture(&l, "unquoted_float.yaml");
	assert_int_equal(l.rc, 0);
	assert_entry(&l, "XLA_PYTHON_CLIENT_MEM_FRACTION", "0.96");
	assert_int_equal(l.d.n, 1);
	assert_diag(&l.d, DIAG_WARNING, 6, 35, "XLA_PYTHON_CLIENT_MEM_FRACTION: "
		    "unquoted 0.96 is a float in YAML; Primus exports \"0.96\"; "
		    "quote it (\"0.96\") if you meant the text");
	release(&l);
}

static void test_config__recipe_default_syntax_is_loaded_literally(void **state)
{
	struct loaded l;

	(void)state;
	load_fixture(&l, "default_syntax.yaml");
	assert_int_equal(l.rc, 0);
	assert_no_diags(&l);   /* the warning comes at expansion */
	assert_entry(&l, "DUMP_HLO_DIR", "${OUTPUT_DIR:output}/xla_dump_hlo");
	assert_entry(&l, "HF_HOME", "${DATA_PATH:-/data}/huggingface");
	release(&l);
}

static void test_config__env_as_a_list_is_an_error_and_ignored(void **state)
{
	struct loaded l;

	(void)state;
	load_fixture(&l, "env_is_list.yaml");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.cfg->nenv, 0);
	assert_int_equal(l.d.n, 1);
	assert_diag(&l.d, DIAG_ERROR, 6, 3, "env: must be a mapping of NAME: "
		    "value; Primus ignores this list, so none of it is applied");
	assert_int_equal(diag_max_sev(&l.d), DIAG_ERROR);
	release(&l);
}

static void test_config__env_as_a_scalar_is_an_error_and_ignored(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "env: FOO=1\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.cfg->nenv, 0);
	assert_diag(&l.d, DIAG_ERROR, 1, 6, "env: must be a mapping of NAME: "
		    "value; Primus ignores this scalar, so none of it is applied");
	release(&l);
}

static void test_config__empty_or_null_env_is_nothing(void **state)
{
	static const char *const texts[] = {
		"env:\n", "env: ~\n", "env: null\n", "env: {}\n", "a: 1\n", "",
		"# nothing\n", "~\n",
	};
	struct loaded l;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		load_text(&l, texts[i]);
		assert_int_equal(l.rc, 0);
		assert_non_null(l.cfg);
		assert_int_equal(l.cfg->nenv, 0);
		assert_no_diags(&l);
		release(&l);
	}
}

static void test_config__syntax_error_returns_einval_with_its_place(void **state)
{
	struct loaded l;

	(void)state;
	load_fixture(&l, "syntax_error.yaml");
	assert_int_equal(l.rc, -EINVAL);
	assert_null(l.cfg);
	assert_int_equal(l.d.n, 1);
	assert_diag(&l.d, DIAG_ERROR, 7, 4, "YAML syntax error: ");
	assert_string_equal(l.d.v[0].file, fixture("syntax_error.yaml"));
	release(&l);
}

static void test_config__unreadable_file_returns_its_errno(void **state)
{
	struct loaded l;

	(void)state;
	load_fixture(&l, "does-not-exist.yaml");
	assert_int_equal(l.rc, -ENOENT);
	assert_null(l.cfg);
	release(&l);
}

static void test_config__top_level_that_is_not_a_mapping_is_an_error(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "- env:\n    A: \"1\"\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.cfg->nenv, 0);
	assert_diag(&l.d, DIAG_ERROR, 1, 1, "must be a mapping at the top "
		    "level, not a sequence");
	release(&l);
	load_text(&l, "just text\n");
	assert_diag(&l.d, DIAG_ERROR, 1, 1, "not a scalar");
	release(&l);
}

static void test_config__only_the_top_level_env_is_applied_in_order(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "exp_name: x\nenv:\n  B: \"2\"\n  A: '1'\n  C: plain text\n"
		  "other:\n  env:\n    D: \"4\"\n");
	assert_int_equal(l.rc, 0);
	assert_no_diags(&l);
	assert_int_equal(l.cfg->nenv, 3);
	assert_string_equal(l.cfg->env[0].name, "B");
	assert_string_equal(l.cfg->env[1].name, "A");
	assert_string_equal(l.cfg->env[2].name, "C");
	assert_entry(&l, "C", "plain text");
	release(&l);
}

static void test_config__quoted_and_block_values_are_taken_as_written(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "env:\n  A: \"0.960\"\n  B: '010'\n  C: |\n    1\n    2\n"
		  "  D: >-\n    on\n  E: \"\"\n  F: !!str 0x1F\n  G: \"tab\\there\"\n");
	assert_int_equal(l.rc, 0);
	assert_no_diags(&l);
	assert_entry(&l, "A", "0.960");
	assert_entry(&l, "B", "010");
	assert_entry(&l, "C", "1\n2\n");
	assert_entry(&l, "D", "on");
	assert_entry(&l, "E", "");
	assert_entry(&l, "F", "0x1F");
	assert_entry(&l, "G", "tab\there");
	release(&l);
}

/* Each unquoted value, what PyYAML types it as, and Python's str(). */
static const struct {
	const char *text, *type, *py;
} typed[] = {
	{ "0.960", "float", "0.96" },
	{ "010", "int", "8" },
	{ "017", "int", "15" },
	{ "0x1F", "int", "31" },
	{ "1:30", "int", "90" },
	{ "1_000", "int", "1000" },
	{ "0b101", "int", "5" },
	{ "+12", "int", "12" },
	{ "-0", "int", "0" },
	{ "-0x1f", "int", "-31" },
	{ "190:20:30", "int", "685230" },
	{ "123456789012345678901234567890", "int", "123456789012345678901234567890" },
	{ "on", "bool", "True" },
	{ "On", "bool", "True" },
	{ "ON", "bool", "True" },
	{ "yes", "bool", "True" },
	{ "true", "bool", "True" },
	{ "TRUE", "bool", "True" },
	{ "off", "bool", "False" },
	{ "no", "bool", "False" },
	{ "NO", "bool", "False" },
	{ "False", "bool", "False" },
	{ "~", "null", "None" },
	{ "null", "null", "None" },
	{ "Null", "null", "None" },
	{ "NULL", "null", "None" },
	{ "1.0e+3", "float", "1000.0" },
	{ "1.0", "float", "1.0" },
	{ "1.", "float", "1.0" },
	{ ".5", "float", "0.5" },
	{ "-0.0", "float", "-0.0" },
	{ "1_2.3_4", "float", "12.34" },
	{ "1.0E-5", "float", "1e-05" },
	{ "1.0e+16", "float", "1e+16" },
	{ "1.0e+15", "float", "1000000000000000.0" },
	{ "0.0001", "float", "0.0001" },
	{ "0.1", "float", "0.1" },
	{ "0.30000000000000004", "float", "0.30000000000000004" },
	{ "12345678901234567890.5", "float", "1.2345678901234567e+19" },
	{ "1.0e+400", "float", "inf" },
	{ "1:30.5", "float", "90.5" },
	{ ".inf", "float", "inf" },
	{ "-.Inf", "float", "-inf" },
	{ ".NaN", "float", "nan" },
	{ "2001-12-14", "timestamp", "2001-12-14" },
	{ "2001-12-14t21:59:43.10-05:00", "timestamp",
	  "2001-12-14 21:59:43.100000-05:00" },
	{ "2001-12-14 21:59:43.10 Z", "timestamp",
	  "2001-12-14 21:59:43.100000+00:00" },
	{ "2001-2-3 4:05:06", "timestamp", "2001-02-03 04:05:06" },
};

/* Plain scalars PyYAML 1.1 leaves as strings. */
static const char *const untyped[] = {
	"1e3", "1.0e3", "0o17", "-.5", "y", "n", "Y", "yEs", "0X1F", "08",
	"09", "1:60", "-.nan", ".infinity", "0x", "0b", "1__:x", "2001-1-2",
	"abc", "1.2.3", "+", "-", "- 1", "0.96 # not a comment", "1_000x",
};

static void test_config__yaml11_types_and_python_str_of_unquoted_scalars(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(typed) / sizeof(typed[0]); i++) {
		enum y11_type t = y11_resolve(typed[i].text, strlen(typed[i].text));

		if (strcmp(y11_type_name(t), typed[i].type) != 0)
			fail_msg("%s: %s, not %s", typed[i].text,
				 y11_type_name(t), typed[i].type);
		sb_reset(&sb);
		assert_int_equal(y11_str(typed[i].text, strlen(typed[i].text),
					 t, &sb), 0);
		if (strcmp(sb_str(&sb), typed[i].py) != 0)
			fail_msg("str(%s) is %s, not %s", typed[i].text,
				 sb_str(&sb), typed[i].py);
	}
	for (i = 0; i < sizeof(untyped) / sizeof(untyped[0]); i++)
		if (y11_resolve(untyped[i], strlen(untyped[i])) != Y11_STR)
			fail_msg("%s should be a string", untyped[i]);
	assert_int_equal(y11_resolve("", 0), Y11_NULL);
	sb_release(&sb);
}

static void test_config__yaml11_values_python_cannot_construct_are_einval(void **state)
{
	static const char *const bad[] = {
		"0b_", "0x_", "2001-02-29", "2001-13-01", "0000-01-01",
		"2001-12-14 24:00:00", "2001-12-14 21:59:43 +24", "<<", "=",
	};
	struct strbuf sb = STRBUF_INIT, big = STRBUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum y11_type t = y11_resolve(bad[i], strlen(bad[i]));

		assert_int_not_equal(t, Y11_STR);
		if (y11_str(bad[i], strlen(bad[i]), t, &sb) != -EINVAL)
			fail_msg("%s should not construct", bad[i]);
		sb_reset(&sb);
	}
	assert_int_equal(y11_str("2000-02-29", 10, Y11_TIMESTAMP, &sb), 0);
	/* Python refuses to print ints of more than 4300 digits. */
	for (i = 0; i < 4300; i++)
		assert_int_equal(sb_addc(&big, '9'), 0);
	sb_reset(&sb);
	assert_int_equal(y11_str(big.buf, big.len, Y11_INT, &sb), 0);
	assert_int_equal(sb.len, 4300);
	assert_int_equal(sb_addc(&big, '9'), 0);
	assert_int_equal(y11_str(big.buf, big.len, Y11_INT, &sb), -EINVAL);
	sb_release(&sb);
	sb_release(&big);
}

static void test_config__python_float_repr_is_the_shortest_round_trip(void **state)
{
	static const struct { double d; const char *s; } cases[] = {
		{ 0.96, "0.96" }, { 1.0, "1.0" }, { 100.0, "100.0" },
		{ 1e16, "1e+16" }, { 1e15, "1000000000000000.0" },
		{ 1e-5, "1e-05" }, { 0.0001, "0.0001" }, { -2.5, "-2.5" },
		{ 0.1 + 0.2, "0.30000000000000004" }, { 5e-324, "5e-324" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 123456789.125, "123456789.125" }, { 1.5e300, "1.5e+300" },
	};
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sb_reset(&sb);
		assert_int_equal(y11_float_repr(cases[i].d, &sb), 0);
		assert_string_equal(sb_str(&sb), cases[i].s);
	}
	sb_release(&sb);
}

static void test_config__unquoted_typed_values_warn_with_what_primus_exports(void **state)
{
	struct strbuf text = STRBUF_INIT, want = STRBUF_INIT;
	struct loaded l;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(typed) / sizeof(typed[0]); i++) {
		const char *t = typed[i].type;

		sb_reset(&text);
		sb_reset(&want);
		assert_int_equal(sb_addf(&text, "env:\n  V: %s\n", typed[i].text), 0);
		load_text(&l, sb_str(&text));
		assert_int_equal(l.rc, 0);
		/* What Primus exports: str() of what PyYAML built. */
		assert_entry(&l, "V", typed[i].py);
		assert_int_equal(sb_addf(&want, "V: unquoted %s is a%s %s in YAML; Primus "
					 "exports \"%s\"; quote it (\"%s\") if you meant "
					 "the text", typed[i].text, strcmp(t, "int") ? "" : "n",
					 t, typed[i].py, typed[i].text), 0);
		assert_int_equal(l.d.n, 1);
		assert_string_equal(l.d.v[0].msg, sb_str(&want));
		assert_int_equal(l.d.v[0].sev, DIAG_WARNING);
		assert_int_equal(l.d.v[0].line, 2);
		assert_int_equal(l.d.v[0].col, 6);
		release(&l);
	}
	for (i = 0; i < sizeof(untyped) / sizeof(untyped[0]); i++) {
		if (strchr(untyped[i], '#') || untyped[i][0] == '-')
			continue;   /* not one plain scalar in a mapping */
		sb_reset(&text);
		assert_int_equal(sb_addf(&text, "env:\n  V: %s\n", untyped[i]), 0);
		load_text(&l, sb_str(&text));
		assert_entry(&l, "V", untyped[i]);
		assert_no_diags(&l);
		release(&l);
	}
	sb_release(&text);
	sb_release(&want);
}

static void test_config__empty_unquoted_value_is_null_and_warns(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "env:\n  V:\n  W: \"x\"\n");
	assert_int_equal(l.rc, 0);
	assert_entry(&l, "V", "None");
	assert_entry(&l, "W", "x");
	assert_int_equal(l.d.n, 1);
	assert_string_equal(l.d.v[0].msg, "V: an empty unquoted value is a null "
			    "in YAML; Primus exports \"None\"; quote it (\"\") if you "
			    "meant the text");
	release(&l);
}

/* yaml.safe_load builds the whole file first: one value it cannot build
 * anywhere and Primus applies nothing. */
static void test_config__value_python_cannot_load_fails_the_whole_block(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "env:\n  A: \"1\"\n  V: 2001-02-30\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.cfg->nenv, 0);
	assert_diag(&l.d, DIAG_ERROR, 3, 6, "PyYAML cannot construct this timestamp: Primus's "
		    "yaml.safe_load fails on this file, so no env: is applied");
	release(&l);

	load_text(&l, "env:\n  A: \"1\"\nmodules:\n  m:\n    x: !include other.yaml\n");
	assert_int_equal(l.cfg->nenv, 0);
	assert_diag(&l.d, DIAG_ERROR, 5, 8, "PyYAML's safe_load has no constructor for the "
		    "tag !include");
	release(&l);

	load_text(&l, "env:\n  A: \"1\"\n? [x, y]\n: \"seq\"\n");
	assert_int_equal(l.cfg->nenv, 0);
	assert_diag(&l.d, DIAG_ERROR, 3, 3, "a mapping key is a sequence, which Python cannot "
		    "hash");
	release(&l);

	load_text(&l, "env:\n  A: \"1\"\n---\nenv:\n  B: \"2\"\n");
	assert_int_equal(l.cfg->nenv, 0);
	assert_diag(&l.d, DIAG_ERROR, 1, 1, "more than one YAML document");
	release(&l);
}

static void test_config__explicit_tags(void **state)
{
	struct loaded l;

	(void)state;
	/* !!str means string: no warning; the non-specific "!" is typed like a
	 * plain scalar, as PyYAML does. */
	load_text(&l, "env:\n  A: !!str 0.960\n  B: !!int \"7\"\n  C: ! 010\n");
	assert_int_equal(l.rc, 0);
	assert_entry(&l, "A", "0.960");
	assert_entry(&l, "B", "7");
	assert_entry(&l, "C", "8");
	assert_int_equal(l.d.n, 2);
	assert_diag(&l.d, DIAG_WARNING, 3, 6, "B: the value has the tag !!int; Primus exports "
		    "\"7\"; drop the tag and quote the value");
	assert_diag(&l.d, DIAG_WARNING, 4, 6, "C: unquoted 010 is an int in YAML; Primus "
		    "exports \"8\"; quote it (\"010\") if you meant the text");
	release(&l);
}

/* str() of a list or dict is what the run gets: an error, but exported. */
static void test_config__sequence_or_mapping_value_is_exported_as_python_prints_it(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "env:\n  A: \"1\"\n  L: [a, 010, on, ~]\n  M:\n    x: 1\n    'y': [\"it's\"]\n"
		  "  Z: \"2\"\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.cfg->nenv, 4);
	assert_entry(&l, "A", "1");
	assert_entry(&l, "L", "['a', 8, True, None]");
	assert_entry(&l, "M", "{'x': 1, 'y': [\"it's\"]}");
	assert_entry(&l, "Z", "2");
	assert_diag(&l.d, DIAG_ERROR, 3, 6, "L: the value is a list; Primus exports Python's "
		    "text of it, \"['a', 8, True, None]\", which is almost never what was meant");
	assert_diag(&l.d, DIAG_ERROR, 5, 5, "M: the value is a dict; Primus exports Python's "
		    "text of it");
	release(&l);
}

/* repr() escapes what str.isprintable() rejects, by Python's own table. */
static void test_config__list_values_escape_what_python_cannot_print(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "env:\n  V: [\"\\u200b\", \"\\u00a0x\", \"\\U0001F600\", \"\\U000E0001\", "
		  "\"\\u00e9\", \"\\x85\", \"tab\\tq'\"]\n");
	assert_int_equal(l.rc, 0);
	assert_entry(&l, "V", "['\\u200b', '\\xa0x', '\U0001F600', '\\U000e0001', '\u00e9', "
		     "'\\x85', \"tab\\tq'\"]");
	release(&l);
}

/* os.environ[k] = v raises for "" and for a name holding '=', and
 * _apply_config_env's loop ends there: every later key is lost too. */
static void test_config__a_refused_key_stops_the_block(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "env:\n  BEFORE: b\n  \"A=B\": x\n  AFTER: a\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.cfg->nenv, 1);
	assert_entry(&l, "BEFORE", "b");
	assert_null(entry(&l, "A=B"));
	assert_null(entry(&l, "AFTER"));
	assert_diag(&l.d, DIAG_ERROR, 3, 3, "env: key \"A=B\" is a name holding '=', which "
		    "Python's os.environ refuses (ValueError); Primus then stops applying env:, "
		    "so it and every later key are not applied: \"AFTER\"");
	release(&l);

	load_text(&l, "env:\n  \"\": \"empty\"\n  GOOD: \"ok\"\n");
	assert_int_equal(l.cfg->nenv, 0);
	assert_diag(&l.d, DIAG_ERROR, 2, 3, "env: key \"\" is an empty name");
	release(&l);

	/* A refused last key takes nothing else with it. */
	load_text(&l, "env:\n  OK: \"1\"\n  \"=\": \"eq\"\n");
	assert_int_equal(l.cfg->nenv, 1);
	assert_diag(&l.d, DIAG_ERROR, 3, 3, "so it is not applied");
	release(&l);
}

/* PyYAML takes "\0"; os.environ raises "embedded null byte" for a name
 * or a value holding one, and the block stops there (SPEC 5). */
static void test_config__nul_in_a_key_or_value_stops_the_block(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "env:\n  A: \"1\"\n  \"N\\0UL\": x\n  C: \"3\"\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.cfg->nenv, 1);
	assert_entry(&l, "A", "1");
	assert_diag(&l.d, DIAG_ERROR, 3, 3, "env: key \"N\\x00UL\" is a name holding a NUL byte, "
		    "which Python's os.environ refuses (ValueError); Primus then stops applying "
		    "env:, so it and every later key are not applied: \"C\"");
	release(&l);

	load_text(&l, "env:\n  A: \"1\"\n  V: \"x\\0y\"\n  C: \"3\"\n");
	assert_int_equal(l.cfg->nenv, 1);
	assert_diag(&l.d, DIAG_ERROR, 3, 3, "env: key \"V\" is given a value holding a NUL byte");
	release(&l);
}

static void test_config__typed_plain_key_warns_with_the_name_primus_uses(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "env:\n  ON: \"1\"\n  \"OFF\": \"0\"\n");
	assert_int_equal(l.rc, 0);
	assert_entry(&l, "True", "1");
	assert_entry(&l, "OFF", "0");
	assert_int_equal(l.d.n, 1);
	assert_diag(&l.d, DIAG_WARNING, 2, 3, "unquoted key ON is a bool in YAML: Primus "
		    "names the variable \"True\"; quote it");
	release(&l);
}

static void test_config__repeated_key_last_wins_at_first_position(void **state)
{
	struct loaded l;
	const struct config_entry *e;

	(void)state;
	load_text(&l, "env:\n  A: \"1\"\n  B: \"2\"\n  A: \"3\"\n  A: \"4\"\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.cfg->nenv, 2);
	assert_string_equal(l.cfg->env[0].name, "A");
	assert_string_equal(l.cfg->env[1].name, "B");
	e = entry(&l, "A");
	assert_string_equal(e->value, "4");
	assert_int_equal(e->line, 5);
	assert_int_equal(e->col, 6);
	assert_int_equal(l.d.n, 2);
	assert_diag(&l.d, DIAG_WARNING, 4, 3, "A is set again (earlier at line 2); "
		    "the last value wins");
	assert_diag(&l.d, DIAG_WARNING, 5, 3, "A is set again (earlier at line 4); "
		    "the last value wins");
	release(&l);
}

static void test_config__repeated_key_takes_its_last_value_whatever_it_is(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "env:\n  A: \"1\"\n  A: [2]\n  B: [3]\n  B: \"4\"\n");
	assert_int_equal(l.rc, 0);
	assert_entry(&l, "A", "[2]");
	assert_entry(&l, "B", "4");
	assert_int_equal(l.cfg->nenv, 2);
	assert_int_equal(diag_count(&l.d, DIAG_ERROR), 1);
	release(&l);

	/* 1, 1.0 and true are one dict key to Python (the first object stays):
	 * the variable is "1" with the last value; "1" quoted is another key of
	 * the same name, applied after it. */
	load_text(&l, "env:\n  1: a\n  1.0: b\n  true: c\n  \"1\": d\n");
	assert_int_equal(l.cfg->nenv, 2);
	assert_string_equal(l.cfg->env[0].name, "1");
	assert_string_equal(l.cfg->env[0].value, "c");
	assert_string_equal(l.cfg->env[1].name, "1");
	assert_string_equal(l.cfg->env[1].value, "d");
	release(&l);
}

static void test_config__value_longer_than_the_limit_is_skipped(void **state)
{
	struct strbuf text = STRBUF_INIT;
	struct loaded l;
	size_t i;

	(void)state;
	assert_int_equal(sb_adds(&text, "env:\n  OK: \""), 0);
	for (i = 0; i < CONFIG_MAX_VALUE; i++)
		assert_int_equal(sb_addc(&text, 'x'), 0);
	assert_int_equal(sb_adds(&text, "\"\n  BIG: \"y"), 0);
	for (i = 0; i < CONFIG_MAX_VALUE; i++)
		assert_int_equal(sb_addc(&text, 'y'), 0);
	assert_int_equal(sb_adds(&text, "\"\n  Z: \"1\"\n"), 0);
	load_text(&l, sb_str(&text));
	assert_int_equal(l.rc, 0);
	assert_int_equal(entry(&l, "OK")->value_len, CONFIG_MAX_VALUE);
	assert_null(entry(&l, "BIG"));
	assert_entry(&l, "Z", "1");
	assert_int_equal(l.d.n, 1);
	assert_diag(&l.d, DIAG_ERROR, 3, 8, "BIG: the value is 131073 bytes, more than the "
		    "131072 an environment string may hold (execve fails with E2BIG); not "
		    "applied");
	release(&l);
	sb_release(&text);
}

static void test_config__extends_reports_presets_env_is_not_applied(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "extends:\n  - base.yaml\nenv:\n  A: \"1\"\nmodules:\n"
		  "  pre_trainer:\n    framework: maxtext\n    extends: [m.yaml]\n");
	assert_int_equal(l.rc, 0);
	assert_entry(&l, "A", "1");
	assert_int_equal(l.d.n, 2);
	assert_diag(&l.d, DIAG_INFO, 1, 1, "extends: env: blocks of presets are "
		    "not applied");
	assert_diag(&l.d, DIAG_INFO, 8, 5, "extends: in module 'pre_trainer': "
		    "env: blocks of presets are not applied");
	release(&l);
}

static void test_config__frameworks_are_distinct_in_order(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "modules:\n  a:\n    framework: maxtext\n  b:\n"
		  "    framework: megatron\n  c:\n    framework: maxtext\n"
		  "  d:\n    config: x.yaml\n  e: 3\n  f:\n    framework: [x]\n");
	assert_int_equal(l.rc, 0);
	assert_no_diags(&l);
	assert_int_equal(l.cfg->nframeworks, 2);
	assert_string_equal(l.cfg->frameworks[0], "maxtext");
	assert_string_equal(l.cfg->frameworks[1], "megatron");
	release(&l);
}

static void test_config__repeated_top_level_env_applies_the_last(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "env:\n  A: \"1\"\nenv:\n  B: \"2\"\n");
	assert_int_equal(l.rc, 0);
	assert_null(entry(&l, "A"));
	assert_entry(&l, "B", "2");
	assert_diag(&l.d, DIAG_WARNING, 1, 1, "env: appears again at line 3; "
		    "only the last env: block is applied");
	release(&l);
}

static void test_config__merge_keys_are_flattened_as_pyyaml_does(void **state)
{
	struct loaded l;

	(void)state;
	load_text(&l, "common: &common\n  A: \"1\"\n  B: \"2\"\n"
		  "more: &more\n  B: \"20\"\n  C: \"30\"\n"
		  "env:\n  <<: [*more, *common]\n  A: \"own\"\n  D: \"4\"\n");
	assert_int_equal(l.rc, 0);
	assert_no_diags(&l);
	/* Earlier sources in a merge list win; own keys win over merged. */
	assert_int_equal(l.cfg->nenv, 4);
	assert_string_equal(l.cfg->env[0].name, "A");
	assert_string_equal(l.cfg->env[1].name, "B");
	assert_string_equal(l.cfg->env[2].name, "C");
	assert_string_equal(l.cfg->env[3].name, "D");
	assert_entry(&l, "A", "own");
	assert_entry(&l, "B", "20");
	assert_entry(&l, "C", "30");
	release(&l);

	/* PyYAML refuses the whole file. */
	load_text(&l, "env:\n  <<: 3\n  A: \"1\"\n");
	assert_null(entry(&l, "A"));
	assert_diag(&l.d, DIAG_ERROR, 2, 7, "a merge (<<) needs a mapping");
	release(&l);

	/* A quoted "<<" is an ordinary key. */
	load_text(&l, "env:\n  \"<<\": \"x\"\n");
	assert_entry(&l, "<<", "x");
	release(&l);
}

/* ---- expansion */

static int fake_lookup(void *ctx, const char *name, size_t len,
		       const char **val, size_t *val_len)
{
	static const char *const vars[][2] = {
		{ "HOME_DIR", "/home/u" }, { "EMPTY", "" }, { "N1", "one" },
		/* Names only an image or a host can hold: Python finds them. */
		{ "a-b", "dashed" }, { "SET:-x", "whole" },
	};
	size_t i;

	(void)ctx;
	if (len == 4 && !memcmp(name, "LOOP", 4))
		return -ELOOP;
	if (len == 4 && !memcmp(name, "FAIL", 4))
		return -EIO;
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (strlen(vars[i][0]) == len && !memcmp(vars[i][0], name, len)) {
			*val = vars[i][1];
			*val_len = strlen(vars[i][1]);
			return 1;
		}
	return 0;
}

static int expand(const char *raw, struct strbuf *out, struct diag_list *d)
{
	struct config cfg = { .file = (char *)"exp.yaml" };
	struct config_entry e = { .name = (char *)"V", .value = (char *)raw,
				  .value_len = strlen(raw), .line = 7, .col = 9 };

	sb_reset(out);
	return config_expand(&cfg, &e, false, CONFIG_MAX_VALUE, fake_lookup, NULL, out, d);
}

static void test_config__expand_only_set_dollar_names(void **state)
{
	static const char *const same[] = {
		"plain", "$", "$$", "a$", "${", "${}", "${a b}", "$-x", "${HOME_DIR",
		"100%", "$ HOME_DIR",
	};
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf out = STRBUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(expand("$HOME_DIR/x:${HOME_DIR}/y", &out, &d), 0);
	assert_string_equal(sb_str(&out), "/home/u/x:/home/u/y");
	assert_int_equal(expand("[${EMPTY}]$N1$N1x${N1}", &out, &d), 0);
	assert_string_equal(sb_str(&out), "[]one$N1xone");
	/* $N1x is the name N1x, unset: literal */
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "V: $N1x is not set; left literal");
	diag_list_release(&d);
	assert_int_equal(expand("$$HOME_DIR", &out, &d), 0);
	assert_string_equal(sb_str(&out), "$/home/u");
	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		assert_int_equal(expand(same[i], &out, &d), 0);
		assert_string_equal(sb_str(&out), same[i]);
	}
	assert_int_equal(d.n, 0);
	sb_release(&out);
}

static void test_config__expand_leaves_unset_names_literal_with_a_warning(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	assert_int_equal(expand("${DATA_PATH}/hf:$NOPE", &out, &d), 0);
	assert_string_equal(sb_str(&out), "${DATA_PATH}/hf:$NOPE");
	assert_int_equal(d.n, 2);
	assert_string_equal(d.v[0].msg, "V: ${DATA_PATH} is not set; left literal");
	assert_string_equal(d.v[1].msg, "V: $NOPE is not set; left literal");
	assert_int_equal(d.v[0].sev, DIAG_WARNING);
	assert_string_equal(d.v[0].file, "exp.yaml");
	assert_int_equal(d.v[0].line, 7);
	assert_int_equal(d.v[0].col, 9);
	diag_list_release(&d);

	/* A name in a reference cycle counts as unset. */
	assert_int_equal(expand("${LOOP}", &out, &d), 0);
	assert_string_equal(sb_str(&out), "${LOOP}");
	assert_int_equal(d.n, 1);
	diag_list_release(&d);

	/* Any other failure of the lookup is the caller's. */
	assert_int_equal(expand("a${FAIL}", &out, &d), -EIO);
	diag_list_release(&d);
	sb_release(&out);
}

static void test_config__expand_never_applies_default_syntax(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	/* Set or not, a default form is passed through. */
	assert_int_equal(expand("${HOME_DIR:-/x}/a ${OUTPUT_DIR:output}", &out, &d), 0);
	assert_string_equal(sb_str(&out), "${HOME_DIR:-/x}/a ${OUTPUT_DIR:output}");
	assert_int_equal(d.n, 2);
	assert_string_equal(d.v[0].msg, "V: ${HOME_DIR:-/x} is passed through "
			    "literally: env: has no default syntax");
	assert_string_equal(d.v[1].msg, "V: ${OUTPUT_DIR:output} is passed "
			    "through literally: env: has no default syntax");
	diag_list_release(&d);
	sb_release(&out);
}

/* expandvars looks up whatever stands between the braces, so an inherited
 * variable whose name no shell can read still expands. */
static void test_config__expand_looks_up_any_braced_name(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	assert_int_equal(expand("${a-b}/${SET:-x}/$a-b", &out, &d), 0);
	/* $a-b is the name "a" (unset) and the text "-b". */
	assert_string_equal(sb_str(&out), "dashed/whole/$a-b");
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "V: $a is not set; left literal");
	diag_list_release(&d);
	/* An unset ${NAME-default} is bash's default syntax, which env: lacks. */
	assert_int_equal(expand("${OUT-output}", &out, &d), 0);
	assert_string_equal(sb_str(&out), "${OUT-output}");
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "V: ${OUT-output} is passed through "
			    "literally: env: has no default syntax");
	diag_list_release(&d);
	sb_release(&out);
}

static void test_config__recipe_default_syntax_warns_at_expansion(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf out = STRBUF_INIT;
	struct loaded l;

	(void)state;
	load_fixture(&l, "default_syntax.yaml");
	assert_int_equal(config_expand(l.cfg, entry(&l, "HF_HOME"), false, CONFIG_MAX_VALUE, fake_lookup, NULL, &out, &d), 0);
	assert_string_equal(sb_str(&out), "${DATA_PATH:-/data}/huggingface");
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].file, fixture("default_syntax.yaml"));
	assert_int_equal(d.v[0].line, 7);
	assert_int_equal(d.v[0].col, 12);
	assert_string_equal(d.v[0].msg, "HF_HOME: ${DATA_PATH:-/data} is passed "
			    "through literally: env: has no default syntax");
	diag_list_release(&d);
	release(&l);
	sb_release(&out);
}

static bool secret_s(void *ctx, const char *name)
{
	(void)ctx;
	return name[0] == 'S' || strstr(name, "TOKEN") != NULL;
}

/* config_read then config_load_read (what diff does on two threads) is
 * config_load: the same return, entries, digest and diagnostics, these
 * after whatever the list already held. */
static void same_load_in_two_steps(const char *path)
{
	struct config_secrets sec = { secret_s, NULL };
	struct diag_list d1 = DIAG_LIST_INIT, d2 = DIAG_LIST_INIT;
	struct config *c1 = NULL, *c2 = NULL;
	struct config_read r;
	int rc1, rc2;
	size_t k;

	assert_int_equal(diag_add(&d2, DC_YAML_SYNTAX, "before", 1, 1, "already here"), 0);
	rc1 = config_load(path, &sec, &c1, &d1);
	assert_int_equal(config_read(path, &r), 0);
	rc2 = config_load_read(&r, &sec, &c2, &d2);
	config_read_release(&r);
	assert_int_equal(rc1, rc2);
	assert_int_equal(d1.n + 1, d2.n);
	assert_string_equal(d2.v[0].msg, "already here");
	for (k = 0; k < d1.n; k++) {
		assert_int_equal(d1.v[k].code, d2.v[k + 1].code);
		assert_int_equal(d1.v[k].line, d2.v[k + 1].line);
		assert_int_equal(d1.v[k].col, d2.v[k + 1].col);
		assert_string_equal(d1.v[k].file ? d1.v[k].file : "", d2.v[k + 1].file ? d2.v[k + 1].file : "");
		assert_string_equal(d1.v[k].msg, d2.v[k + 1].msg);
	}
	assert_int_equal(c1 == NULL, c2 == NULL);
	if (c1) {
		assert_string_equal(c1->file, c2->file);
		assert_int_equal(c1->nenv, c2->nenv);
		for (k = 0; k < c1->nenv; k++) {
			assert_string_equal(c1->env[k].name, c2->env[k].name);
			assert_int_equal(c1->env[k].value_len, c2->env[k].value_len);
			assert_memory_equal(c1->env[k].value, c2->env[k].value, c1->env[k].value_len);
			assert_int_equal(c1->env[k].line, c2->env[k].line);
		}
		assert_int_equal(c1->digest.has, c2->digest.has);
		assert_memory_equal(c1->digest.sum, c2->digest.sum, sizeof(c1->digest.sum));
	}
	config_free(c1);
	config_free(c2);
	diag_list_release(&d1);
	diag_list_release(&d2);
}

static void test_config__read_then_load_read_is_config_load(void **state)
{
	static const char *const names[] = {
		"append_one_flag.yaml", "collective_timeouts.yaml", "default_syntax.yaml",
		"dump_hlo.yaml", "env_is_list.yaml", "env_under_module.yaml",
		"owns_xla_flags.yaml", "syntax_error.yaml", "unquoted_float.yaml",
		"secret_typed.yaml", "does-not-exist.yaml",
	};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		same_load_in_two_steps(fixture(names[k]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config__recipe_append_one_flag),
		cmocka_unit_test(test_config__recipe_folded_collective_timeouts_join_with_one_space),
		cmocka_unit_test(test_config__recipe_dump_hlo_sets_the_named_variables),
		cmocka_unit_test(test_config__recipe_config_owning_xla_flags_is_loaded_as_written),
		cmocka_unit_test(test_config__env_under_module_warns_and_is_not_applied),
		cmocka_unit_test(test_config__env_nested_deeper_under_a_module_warns_too),
		cmocka_unit_test(test_config__recipe_unquoted_float_warns_with_what_primus_exports),
		cmocka_unit_test(test_config__recipe_default_syntax_is_loaded_literally),
		cmocka_unit_test(test_config__env_as_a_list_is_an_error_and_ignored),
		cmocka_unit_test(test_config__env_as_a_scalar_is_an_error_and_ignored),
		cmocka_unit_test(test_config__empty_or_null_env_is_nothing),
		cmocka_unit_test(test_config__syntax_error_returns_einval_with_its_place),
		cmocka_unit_test(test_config__unreadable_file_returns_its_errno),
		cmocka_unit_test(test_config__top_level_that_is_not_a_mapping_is_an_error),
		cmocka_unit_test(test_config__only_the_top_level_env_is_applied_in_order),
		cmocka_unit_test(test_config__quoted_and_block_values_are_taken_as_written),
		cmocka_unit_test(test_config__yaml11_types_and_python_str_of_unquoted_scalars),
		cmocka_unit_test(test_config__yaml11_values_python_cannot_construct_are_einval),
		cmocka_unit_test(test_config__python_float_repr_is_the_shortest_round_trip),
		cmocka_unit_test(test_config__unquoted_typed_values_warn_with_what_primus_exports),
		cmocka_unit_test(test_config__empty_unquoted_value_is_null_and_warns),
		cmocka_unit_test(test_config__value_python_cannot_load_fails_the_whole_block),
		cmocka_unit_test(test_config__explicit_tags),
		cmocka_unit_test(test_config__sequence_or_mapping_value_is_exported_as_python_prints_it),
		cmocka_unit_test(test_config__a_refused_key_stops_the_block),
		cmocka_unit_test(test_config__list_values_escape_what_python_cannot_print),
		cmocka_unit_test(test_config__nul_in_a_key_or_value_stops_the_block),
		cmocka_unit_test(test_config__typed_plain_key_warns_with_the_name_primus_uses),
		cmocka_unit_test(test_config__repeated_key_last_wins_at_first_position),
		cmocka_unit_test(test_config__repeated_key_takes_its_last_value_whatever_it_is),
		cmocka_unit_test(test_config__value_longer_than_the_limit_is_skipped),
		cmocka_unit_test(test_config__extends_reports_presets_env_is_not_applied),
		cmocka_unit_test(test_config__frameworks_are_distinct_in_order),
		cmocka_unit_test(test_config__repeated_top_level_env_applies_the_last),
		cmocka_unit_test(test_config__merge_keys_are_flattened_as_pyyaml_does),
		cmocka_unit_test(test_config__expand_only_set_dollar_names),
		cmocka_unit_test(test_config__expand_leaves_unset_names_literal_with_a_warning),
		cmocka_unit_test(test_config__expand_never_applies_default_syntax),
		cmocka_unit_test(test_config__expand_looks_up_any_braced_name),
		cmocka_unit_test(test_config__recipe_default_syntax_warns_at_expansion),
		cmocka_unit_test(test_config__read_then_load_read_is_config_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

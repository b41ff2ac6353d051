/* validate_snapshot through the real resolver: every rule positive and
 * negative, over the small spec directory tests/fixtures/validate/basic
 * (never the shipped specs, so a change there cannot hide a rule bug).
 *
 * Each test resolves one directory with --env-like inputs, then inspects
 * s->diags and the variables' explain lines. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resolve.h"

/* The world outlives the snapshot: values of --env candidates are
 * borrowed from it. Both are freed by the teardown. */
static struct world *g_world;
static struct snapshot *g_snap;

static const char *fixtures(void)
{
	const char *d = getenv("ENVFS_FIXTURES");

	return d ? d : "tests/fixtures";
}

static int teardown(void **state)
{
	(void)state;
	snapshot_unref(g_snap);
	world_free(g_world);
	g_snap = NULL;
	g_world = NULL;
	return 0;
}

/* Resolves backend/arch of the fixture dir with env (NULL-terminated
 * NAME=VALUE list) and, when image is not NULL, that --inherit file. */
static struct snapshot *resolve_with(const char *backend, const char *arch,
				     const char *image, const char *const *env)
{
	char dir[4096], img[4096];
	const char *inherit[1] = { img };
	/* Given as by --env NAME (source "cli", the value from the caller's
	 * environment), so a secret among them is not also the warning of
	 * one written inline. */
	static const char *const sources[] = { "cli", "cli", "cli", "cli", "cli", "cli" };
	struct envfs_inputs in = { 0 };
	size_t n = 0;

	teardown(NULL);
	while (env && env[n])
		n++;
	assert_true(n <= sizeof(sources) / sizeof(sources[0]));
	snprintf(dir, sizeof(dir), "%s/validate/basic", fixtures());
	in.specs_dir = dir;
	in.env = env;
	in.env_sources = sources;
	in.nenv = n;
	if (image) {
		snprintf(img, sizeof(img), "%s/validate/%s", fixtures(), image);
		in.inherit = inherit;
		in.ninherit = 1;
	}
	assert_int_equal(world_load(&in, &g_world), 0);
	assert_int_equal(g_world->diags.n, 0);
	assert_int_equal(resolve_dir(g_world, NULL, backend, arch, &g_snap), 0);
	return g_snap;
}

#define RESOLVE(b, a, ...) \
	resolve_with((b), (a), NULL, (const char *const[]){ __VA_ARGS__, NULL })

static size_t count_sev(const struct snapshot *s, int sev)
{
	size_t k, n = 0;

	for (k = 0; k < s->diags.n; k++)
		n += sev < 0 || (int)s->diags.v[k].sev == sev;
	return n;
}

static const struct diag *find_diag(const struct snapshot *s, const char *needle)
{
	size_t k;

	for (k = 0; k < s->diags.n; k++)
		if (strstr(s->diags.v[k].msg, needle))
			return &s->diags.v[k];
	return NULL;
}

static void dump(const struct snapshot *s)
{
	size_t k;

	for (k = 0; k < s->diags.n; k++)
		fprintf(stderr, "  diag[%zu] %s %s:%u: %s\n", k,
			diag_sev_name(s->diags.v[k].sev),
			s->diags.v[k].file ? s->diags.v[k].file : "-", s->diags.v[k].line,
			s->diags.v[k].msg);
}

/* Exactly one diagnostic, with this severity and message. */
static void expect_only(const struct snapshot *s, enum diag_sev sev, const char *msg)
{
	if (s->diags.n != 1 || strcmp(s->diags.v[0].msg, msg) || s->diags.v[0].sev != sev) {
		fprintf(stderr, "expected only: %s: %s\n", diag_sev_name(sev), msg);
		dump(s);
		fail();
	}
}

static void expect_clean(const struct snapshot *s)
{
	if (s->diags.n) {
		dump(s);
		fail();
	}
}

static const char *explain_of(const struct snapshot *s, const char *name)
{
	const struct snap_var *v = snapshot_find(s, name, strlen(name));

	assert_non_null(v);
	return v->explain ? v->explain : "";
}

static void expect_explain(const struct snapshot *s, const char *name, const char *line)
{
	const char *ex = explain_of(s, name);

	if (!strstr(ex, line)) {
		fprintf(stderr, "explain of %s lacks '%s':\n%s\n", name, line, ex);
		fail();
	}
}

/* ---- clean directories ---------------------------------------------------- */

static void test_clean_dirs(void **state)
{
	static const char *const dirs[][2] = {
		{ "fl", "cuda" }, { "fl", "tsm" }, { "fl", "musa" },
		{ "mt", "a1" }, { "plain", "a2" },
	};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(dirs) / sizeof(dirs[0]); k++)
		expect_clean(resolve_with(dirs[k][0], dirs[k][1], NULL, NULL));
}

/* ---- bool ----------------------------------------------------------------- */

static void test_bool_invalid_default_on(void **state)
{
	const char *msg = "FL_ALIAS=2 is not a boolean (1 true on yes / 0 false off no, "
			  "any case); fl warns once and the default (on) applies";
	struct snapshot *s = RESOLVE("fl", "cuda", "FL_ALIAS=2");

	(void)state;
	expect_only(s, DIAG_WARNING, msg);
	/* A --env value is placed at "cli". */
	assert_string_equal(s->diags.v[0].file, "cli");
	expect_explain(s, "FL_ALIAS", msg);
}

static void test_bool_invalid_default_off_and_none(void **state)
{
	struct snapshot *s = RESOLVE("fl", "cuda", "FL_QUIET=maybe");

	(void)state;
	expect_only(s, DIAG_WARNING, "FL_QUIET=maybe is not a boolean (1 true on yes / 0 false "
		    "off no, any case); fl warns once and the default (off) applies");
	s = RESOLVE("fl", "cuda", "FL_NODEF=enabled");
	expect_only(s, DIAG_WARNING, "FL_NODEF=enabled is not a boolean (1 true on yes / 0 false "
		    "off no, any case); fl warns once and the default applies");
}

static void test_bool_valid_spellings(void **state)
{
	static const char *const on[] = { "1", "true", "on", "yes", "TRUE", "Yes", "ON", "yEs" };
	static const char *const off[] = { "0", "false", "off", "no", "FALSE", "No", "OFF" };
	char env[64], line[80];
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(on) / sizeof(on[0]); k++) {
		snprintf(env, sizeof(env), "FL_QUIET=%s", on[k]);
		snprintf(line, sizeof(line), "FL_QUIET=%s means on\n", on[k]);
		expect_clean(RESOLVE("fl", "cuda", env));
		expect_explain(g_snap, "FL_QUIET", line);
	}
	for (k = 0; k < sizeof(off) / sizeof(off[0]); k++) {
		snprintf(env, sizeof(env), "FL_ALIAS=%s", off[k]);
		snprintf(line, sizeof(line), "FL_ALIAS=%s means off\n", off[k]);
		expect_clean(RESOLVE("fl", "cuda", env));
		expect_explain(g_snap, "FL_ALIAS", line);
	}
}

/* torch_fl: empty means unset, so a switch that defaults on stays on. */
static void test_bool_empty_is_unset(void **state)
{
	struct snapshot *s = RESOLVE("fl", "cuda", "FL_ALIAS=", "FL_QUIET=", "FL_NODEF=");

	(void)state;
	expect_clean(s);
	expect_explain(s, "FL_ALIAS", "FL_ALIAS is empty: treated as unset, so the default on "
		       "applies\n");
	expect_explain(s, "FL_QUIET", "FL_QUIET is empty: treated as unset, so the default off "
		       "applies\n");
	expect_explain(s, "FL_NODEF", "FL_NODEF is empty: treated as unset\n");
}

/* A catalog type is not torch_fl's, so no "warns once"; its documented
 * default is used when it is a valid value. */
static void test_bool_from_catalog(void **state)
{
	struct snapshot *s = RESOLVE("fl", "cuda", "CAT_BOOL=2");

	(void)state;
	expect_only(s, DIAG_WARNING, "CAT_BOOL=2 is not a boolean (1 true on yes / 0 false off "
		    "no, any case); the default (on) applies");
	expect_clean(RESOLVE("plain", "a1", "CAT_BOOL=No"));
}

/* ---- int ------------------------------------------------------------------ */

static void test_int_min_with_note(void **state)
{
	struct snapshot *s = RESOLVE("fl", "cuda", "FL_LEVEL=0");

	(void)state;
	expect_only(s, DIAG_ERROR, "FL_LEVEL=0 is below the minimum 1 (at 0 the kernel "
		    "overflows, giving NaN loss)");
	expect_explain(s, "FL_LEVEL", "FL_LEVEL=0 is below the minimum 1");
	expect_clean(RESOLVE("fl", "cuda", "FL_LEVEL=1"));
	expect_clean(RESOLVE("fl", "cuda", "FL_LEVEL=+4"));
	s = RESOLVE("fl", "cuda", "FL_LEVEL=-3");
	assert_non_null(find_diag(s, "FL_LEVEL=-3 is below the minimum 1"));
}

static void test_int_range_and_max(void **state)
{
	struct snapshot *s = RESOLVE("fl", "cuda", "FL_JOBS=65", "FL_CAP=4");

	(void)state;
	assert_int_equal(s->diags.n, 2);
	assert_non_null(find_diag(s, "FL_JOBS=65 is outside 1-64"));
	assert_non_null(find_diag(s, "FL_CAP=4 is above the maximum 3"));
	assert_int_equal(count_sev(s, DIAG_WARNING), 2);
	expect_clean(RESOLVE("fl", "cuda", "FL_JOBS=1", "FL_CAP=3"));
	expect_clean(RESOLVE("fl", "cuda", "FL_JOBS=64", "FL_CAP=-5"));
	/* Past long long, still past the bound. */
	s = RESOLVE("fl", "cuda", "FL_JOBS=99999999999999999999999");
	assert_non_null(find_diag(s, "is outside 1-64"));
}

static void test_int_not_an_integer(void **state)
{
	static const char *const bad[] = { "FL_JOBS=abc", "FL_JOBS=8 8", "FL_JOBS=8.0",
					   "FL_JOBS=0x10", "FL_JOBS=-", "FL_JOBS=1e3" };
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct snapshot *s = RESOLVE("fl", "cuda", bad[k]);

		assert_int_equal(s->diags.n, 1);
		assert_non_null(strstr(s->diags.v[0].msg,
				       "is not a whole decimal integer (expected 1-64)"));
	}
	expect_only(RESOLVE("fl", "cuda", "FL_LEVEL=x"), DIAG_ERROR,
		    "FL_LEVEL=x is not a whole decimal integer (expected at least 1)");
}

/* MASTER_PORT-style catalog bound: error severity, and the catalog's
 * description is not appended (only a spec note says what a bound prevents). */
static void test_int_catalog_port(void **state)
{
	(void)state;
	expect_only(RESOLVE("plain", "a1", "CAT_PORT=80"), DIAG_ERROR,
		    "CAT_PORT=80 is outside 1024-65535");
	expect_only(RESOLVE("plain", "a1", "CAT_PORT=65536"), DIAG_ERROR,
		    "CAT_PORT=65536 is outside 1024-65535");
	expect_clean(RESOLVE("plain", "a1", "CAT_PORT=1024"));
	expect_clean(RESOLVE("plain", "a1", "CAT_PORT=65535"));
	expect_only(RESOLVE("plain", "a1", "CAT_STAGE=4"), DIAG_ERROR,
		    "CAT_STAGE=4 is outside 0-3");
	expect_clean(RESOLVE("plain", "a1", "CAT_STAGE=0"));
	expect_clean(RESOLVE("plain", "a1", "CAT_STAGE=3"));
	/* Empty is unset; "per-model" is documentation, not a default value. */
	expect_clean(RESOLVE("plain", "a1", "CAT_STAGE="));
	expect_explain(g_snap, "CAT_STAGE", "CAT_STAGE is empty: treated as unset\n");
}

/* ---- enum ----------------------------------------------------------------- */

static void test_enum(void **state)
{
	struct snapshot *s = RESOLVE("fl", "cuda", "FL_MODE=gpu");

	(void)state;
	expect_only(s, DIAG_WARNING, "FL_MODE=gpu is not one of: flaggems vendor tileops; the "
		    "default applies");
	expect_explain(s, "FL_MODE", "FL_MODE=gpu is not one of: flaggems vendor tileops");
	expect_only(RESOLVE("fl", "cuda", "FL_PROFILE=max"), DIAG_WARNING,
		    "FL_PROFILE=max is not one of: full minimal; the default (full) applies");
	expect_clean(RESOLVE("fl", "cuda", "FL_MODE=vendor", "FL_PROFILE=minimal"));
	expect_clean(RESOLVE("fl", "cuda", "FL_MODE="));
}

/* value_reading: relaxed, as torch_fl/_env.py reads its owned names:
 * stripped of surrounding blanks (empty is then unset), enum values and
 * list entries in any case, list entries stripped, blank entries dropped. */
static void test_relaxed_reading_strips_and_ignores_case(void **state)
{
	(void)state;
	expect_clean(RESOLVE("fl", "cuda", "FL_MODE=Vendor"));
	expect_clean(RESOLVE("fl", "cuda", "FL_MODE= TileOps "));
	expect_clean(RESOLVE("fl", "cuda", "FL_ALIAS= nO "));
	expect_clean(RESOLVE("fl", "cuda", "FL_LOG= Dispatch , fallback ,,"));
	expect_clean(RESOLVE("fl", "cuda", "FL_JOBS= 8 "));
	expect_clean(RESOLVE("fl", "cuda", "FL_ALIAS=  "));
	expect_explain(g_snap, "FL_ALIAS", "FL_ALIAS is empty: treated as unset, so the default "
		       "on applies\n");
	/* Still checked, stripped. */
	expect_only(RESOLVE("fl", "cuda", "FL_MODE= gpu "), DIAG_WARNING,
		    "FL_MODE=gpu is not one of: flaggems vendor tileops; the default applies");
}

/* invalid: error (GEMS_VENDOR-style): the reader refuses the value, so no
 * default "applies". */
static void test_enum_error_severity(void **state)
{
	struct snapshot *s = RESOLVE("fl", "cuda", "VENDOR=amd");

	(void)state;
	expect_only(s, DIAG_ERROR, "VENDOR=amd is not one of: nvidia mthreads");
	expect_clean(RESOLVE("fl", "musa", "VENDOR=nvidia"));
	/* No entry applies on tsm, but the name is still typed by the spec. */
	assert_non_null(find_diag(RESOLVE("fl", "tsm", "VENDOR=amd"), "VENDOR=amd"));
}

static void test_enum_catalog_and_precedence(void **state)
{
	(void)state;
	expect_only(RESOLVE("plain", "a1", "CAT_LEVEL=TRACE"), DIAG_WARNING,
		    "CAT_LEVEL=TRACE is not one of: DEBUG INFO WARN ERROR; the default (INFO) "
		    "applies");
	expect_clean(RESOLVE("plain", "a1", "CAT_LEVEL=WARN"));
	/* mt types CAT_LEVEL as string: the backend's type wins. */
	expect_clean(RESOLVE("mt", "a1", "CAT_LEVEL=TRACE"));
}

/* Backend type, then runner type, then catalog. */
static void test_type_precedence(void **state)
{
	(void)state;
	expect_clean(RESOLVE("mt", "a1", "SHADOWED_TYPE=3"));
	assert_non_null(find_diag(RESOLVE("mt", "a1", "SHADOWED_TYPE=101"),
				  "SHADOWED_TYPE=101 is above the maximum 100"));
	expect_only(RESOLVE("plain", "a1", "SHADOWED_TYPE=3"), DIAG_WARNING,
		    "SHADOWED_TYPE=3 is below the minimum 5");
	/* The catalog's bool would accept yes; the runner's int does not. */
	assert_non_null(find_diag(RESOLVE("plain", "a1", "SHADOWED_TYPE=yes"),
				  "is not a whole decimal integer"));
}

/* ---- list ----------------------------------------------------------------- */

static void test_list(void **state)
{
	struct snapshot *s = RESOLVE("fl", "cuda", "FL_LOG=dispach");

	(void)state;
	expect_only(s, DIAG_WARNING, "FL_LOG: unknown entry 'dispach' (known: dispatch fallback "
		    "op_cache); did you mean 'dispatch'?");
	expect_clean(RESOLVE("fl", "cuda", "FL_LOG= dispatch , fallback,,op_cache,"));
	expect_clean(RESOLVE("fl", "cuda", "FL_LOG="));
	s = RESOLVE("fl", "cuda", "FL_LOG=dispatch,zzzzzzzz,fallbak");
	assert_int_equal(s->diags.n, 2);
	assert_non_null(find_diag(s, "FL_LOG: unknown entry 'zzzzzzzz' (known: dispatch "
				  "fallback op_cache)"));
	assert_null(find_diag(s, "'zzzzzzzz' (known: dispatch fallback op_cache); did"));
	assert_non_null(find_diag(s, "unknown entry 'fallbak' (known: dispatch fallback "
				  "op_cache); did you mean 'fallback'?"));
	/* A list with no known entries accepts anything. */
	expect_clean(RESOLVE("fl", "cuda", "FL_ANYLIST=a,b,,c"));
}

/* ---- string, path, secrets, odd bytes -------------------------------------- */

static void test_string_and_path_unchecked(void **state)
{
	(void)state;
	expect_clean(RESOLVE("fl", "cuda", "FL_PATH=relative/../x", "FL_TEXT=anything at all"));
}

static void test_secret_never_shown(void **state)
{
	struct snapshot *s = RESOLVE("fl", "cuda", "FL_TOKEN=42", "FL_SECRET_LIST=alpha,gamma7");
	size_t k;

	(void)state;
	assert_int_equal(s->diags.n, 2);
	assert_non_null(find_diag(s, "FL_TOKEN=<redacted> is below the minimum 100"));
	assert_non_null(find_diag(s, "FL_SECRET_LIST: unknown entry <redacted> (known: alpha "
				  "beta)"));
	for (k = 0; k < s->diags.n; k++) {
		assert_null(strstr(s->diags.v[k].msg, "42"));
		assert_null(strstr(s->diags.v[k].msg, "gamma7"));
	}
	assert_null(strstr(explain_of(s, "FL_TOKEN"), "42"));
	assert_null(strstr(explain_of(s, "FL_SECRET_LIST"), "gamma7"));
}

/* A secret written inline (--env NAME=VALUE) is readable by every user in
 * /proc/PID/cmdline: one warning at load, naming the name and never the
 * value; the same secret from an --env-file (a source), or a plain
 * variable inline, draws none. */
static void test_inline_secret_warns_without_its_value(void **state)
{
	char dir[4096];
	const char *env[] = { "FL_TOKEN=hunter2secret", "FL_LEVEL=3", "FL_SECRET_LIST=alpha" };
	const char *sources[] = { NULL, NULL, "my.env:4" };
	struct envfs_inputs in = { 0 };
	size_t k;

	(void)state;
	teardown(NULL);
	snprintf(dir, sizeof(dir), "%s/validate/basic", fixtures());
	in.specs_dir = dir;
	in.env = env;
	in.env_sources = sources;
	in.nenv = 3;
	assert_int_equal(world_load(&in, &g_world), 0);
	assert_int_equal(g_world->diags.n, 1);
	assert_int_equal(g_world->diags.v[0].sev, DIAG_WARNING);
	assert_non_null(strstr(g_world->diags.v[0].msg,
			       "FL_TOKEN is a secret given as --env FL_TOKEN=... on the command "
			       "line"));
	assert_non_null(strstr(g_world->diags.v[0].msg, "--env-file"));
	for (k = 0; k < g_world->diags.n; k++)
		assert_null(strstr(g_world->diags.v[k].msg, "hunter2"));
	assert_true(world_secret_declared(g_world, "FL_TOKEN"));
	assert_false(world_secret_declared(g_world, "FL_LEVEL"));
	/* An --env-file entry keeps its file and line as its source. */
	assert_int_equal(resolve_dir(g_world, NULL, "fl", "cuda", &g_snap), 0);
	assert_string_equal(snapshot_find(g_snap, "FL_SECRET_LIST", 14)->source, "my.env:4");
	assert_string_equal(snapshot_find(g_snap, "FL_LEVEL", 8)->source, "cli");
}

static void test_control_bytes_escaped(void **state)
{
	struct snapshot *s = RESOLVE("fl", "cuda", "FL_MODE=a\nb");
	size_t k, typed = 0;

	(void)state;
	/* The type's message, and env_file leaving the value out. */
	assert_int_equal(s->diags.n, 2);
	for (k = 0; k < s->diags.n; k++) {
		assert_null(strchr(s->diags.v[k].msg, '\n'));
		typed += strstr(s->diags.v[k].msg, "FL_MODE=a\\x0ab is not one of") != NULL;
	}
	assert_int_equal(typed, 1);
}

/* A value from an image file is placed at its file and line. */
static void test_place_of_image_value(void **state)
{
	const struct snapshot *s = resolve_with("fl", "cuda", "image.env", NULL);
	const char *f;

	(void)state;
	assert_int_equal(s->diags.n, 1);
	assert_non_null(strstr(s->diags.v[0].msg, "FL_MODE=gpu is not one of"));
	f = s->diags.v[0].file;
	assert_non_null(f);
	assert_true(strlen(f) > 9 && !strcmp(f + strlen(f) - 9, "image.env"));
	assert_int_equal(s->diags.v[0].line, 2);
}

/* A spec default that breaks its own type: placed at the spec line, and no
 * "default (…) applies" since the value is the default. */
static void test_bad_spec_default(void **state)
{
	struct snapshot *s = resolve_with("bad", "x", NULL, NULL);
	const struct diag *d;

	(void)state;
	assert_int_equal(s->diags.n, 2);
	d = find_diag(s, "BAD_DEFAULT=maybe is not a boolean (1 true on yes / 0 false off no, "
		      "any case); bad warns once and the default applies");
	assert_non_null(d);
	assert_string_equal(d->file, "basic/bad.yaml");
	assert_int_equal(d->line, 7);
	assert_non_null(find_diag(s, "BAD_LEVEL=0 is below the minimum 1"));
}

/* ---- owned prefixes and retired names --------------------------------------- */

static void test_unknown_owned_suggests_retired(void **state)
{
	struct snapshot *s = RESOLVE("fl", "cuda", "FL_LOG_DISPACH=1");

	(void)state;
	expect_only(s, DIAG_WARNING, "FL_LOG_DISPACH is not a fl variable; nothing reads it. "
		    "Did you mean FL_LOG_DISPATCH? (retired: replaced by FL_LOG=dispatch)");
	assert_string_equal(s->diags.v[0].file, "cli");
}

static void test_unknown_owned_suggests_declared(void **state)
{
	(void)state;
	expect_only(RESOLVE("fl", "cuda", "FL_ALAIS=1"), DIAG_WARNING,
		    "FL_ALAIS is not a fl variable; nothing reads it. Did you mean FL_ALIAS?");
	/* Nothing close: no suggestion. */
	expect_only(RESOLVE("fl", "cuda", "FL_SOMETHING_ELSE_ENTIRELY=1"), DIAG_WARNING,
		    "FL_SOMETHING_ELSE_ENTIRELY is not a fl variable; nothing reads it.");
}

static void test_owned_known_names_silent(void **state)
{
	(void)state;
	/* Family, declared (any arch: FL_BUILD_VENDOR's entries), a name
	 * outside the prefix. */
	expect_clean(RESOLVE("fl", "musa", "FL_OP_add__Tensor=cuda", "FL_OP_=x",
			     "FL_PATH=/x", "FL_BUILD_VENDOR=OFF", "UNRELATED_NAME=1"));
	/* The runner's prefix does not apply to a backend without the runner. */
	expect_clean(RESOLVE("fl", "cuda", "RUNX_TYPO=1"));
}

static void test_runner_owned_prefix(void **state)
{
	(void)state;
	expect_only(RESOLVE("plain", "a1", "RUNX_MODEE=fast"), DIAG_WARNING,
		    "RUNX_MODEE is not a runner variable; nothing reads it. Did you mean "
		    "RUNX_MODE?");
	expect_clean(RESOLVE("mt", "a1", "RUNX_MODE=safe", "RUNX_OLD=1"));
	expect_explain(g_snap, "RUNX_OLD", "retired: inert, nothing reads it; replaced by "
		       "RUNX_MODE\n");
}

static void test_retired_silent_and_explained(void **state)
{
	struct snapshot *s = RESOLVE("fl", "cuda", "FL_LOG_DISPATCH=1", "OLD_SWITCH=1",
				     "FL_GONE=1", "FL_BARE=yes");

	(void)state;
	expect_clean(s);
	expect_explain(s, "FL_LOG_DISPATCH", "retired: inert, nothing reads it; replaced by "
		       "FL_LOG=dispatch\n");
	expect_explain(s, "OLD_SWITCH", "retired: inert, nothing reads it; replaced by FL_MODE "
		       "(one enum replaced three switches)\n");
	expect_explain(s, "FL_GONE", "retired: inert, nothing reads it; replaced by nothing: "
		       "the build record says it\n");
	expect_explain(s, "FL_BARE", "retired: inert, nothing reads it; replaced by nothing\n");
}

/* ---- pins ----------------------------------------------------------------- */

static void test_pin_contradiction(void **state)
{
	struct snapshot *s = RESOLVE("fl", "tsm", "FL_BUILD_VENDOR=OFF");

	(void)state;
	expect_only(s, DIAG_ERROR, "FL_BUILD_VENDOR=OFF contradicts the value ON that fl forces "
		    "on tsm");
	expect_explain(s, "FL_BUILD_VENDOR", "pinned to ON on tsm\n");
	assert_non_null(find_diag(RESOLVE("fl", "tsm", "FL_BUILD_VENDOR=0"), "contradicts"));
	/* Text pin. */
	expect_only(RESOLVE("fl", "tsm", "FL_TARGET=cuda"), DIAG_ERROR,
		    "FL_TARGET=cuda contradicts the value tsm that fl forces on tsm");
}

static void test_pin_agreement(void **state)
{
	static const char *const same[] = { "FL_BUILD_VENDOR=ON", "FL_BUILD_VENDOR=1",
					    "FL_BUILD_VENDOR=true", "FL_BUILD_VENDOR=yes",
					    "FL_BUILD_VENDOR=" };
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(same) / sizeof(same[0]); k++)
		expect_clean(RESOLVE("fl", "tsm", same[k]));
	expect_clean(RESOLVE("fl", "tsm", "FL_TARGET=tsm"));
	/* Unset: no contradiction, but explain still shows the pin. */
	expect_clean(RESOLVE("fl", "tsm", "UNRELATED=1"));
	expect_explain(g_snap, "FL_BUILD_VENDOR", "pinned to ON on tsm\n");
	/* Not pinned on cuda. */
	expect_clean(RESOLVE("fl", "cuda", "FL_BUILD_VENDOR=OFF"));
	assert_null(strstr(explain_of(g_snap, "FL_BUILD_VENDOR"), "pinned"));
}

static void test_pin_non_boolean(void **state)
{
	struct snapshot *s = RESOLVE("fl", "tsm", "FL_BUILD_VENDOR=maybe");

	(void)state;
	assert_int_equal(s->diags.n, 2);
	assert_non_null(find_diag(s, "FL_BUILD_VENDOR=maybe is not a boolean"));
	assert_non_null(find_diag(s, "FL_BUILD_VENDOR=maybe contradicts the value ON"));
}

static void test_runner_pin(void **state)
{
	(void)state;
	expect_only(RESOLVE("plain", "a2", "RUNX_LIMIT=3"), DIAG_ERROR,
		    "RUNX_LIMIT=3 contradicts the value 7 that the runner forces on a2");
	expect_clean(RESOLVE("plain", "a2", "RUNX_LIMIT=7"));
	expect_clean(RESOLVE("plain", "a1", "RUNX_LIMIT=3"));
}

/* ---- rules ---------------------------------------------------------------- */

static void test_rules(void **state)
{
	struct snapshot *s = RESOLVE("plain", "a1", "TUNE=1", "DETERMINISTIC=1");
	const struct diag *d;

	(void)state;
	expect_only(s, DIAG_ERROR, "TUNE=1 is mutually exclusive with DETERMINISTIC=1");
	d = &s->diags.v[0];
	assert_string_equal(d->file, "basic/base.yaml");
	assert_int_equal(d->line, 10);
	assert_true(d->col > 0);
	expect_clean(RESOLVE("plain", "a1", "TUNE=1"));
	expect_clean(RESOLVE("plain", "a1", "DETERMINISTIC=1", "TUNE=0"));
	/* Default severity: warning. */
	expect_only(RESOLVE("mt", "a1", "STAGE=2"), DIAG_WARNING,
		    "STAGE has no effect unless TUNE=1");
	expect_clean(RESOLVE("mt", "a1", "STAGE=2", "TUNE=1"));
	expect_clean(RESOLVE("mt", "a1", "STAGE=0"));
	/* Runner rules do not apply to a backend without the runner. */
	expect_clean(RESOLVE("fl", "cuda", "TUNE=1", "DETERMINISTIC=1"));
	/* Backend rules. */
	expect_only(RESOLVE("fl", "cuda", "FL_MODE=tileops", "FL_BUILD_TILE=OFF"),
		    DIAG_WARNING, "FL_MODE=tileops needs a FL_BUILD_TILE=ON build");
	expect_clean(RESOLVE("fl", "cuda", "FL_MODE=tileops"));
}

/* A rule's message shows values by ${NAME}, a secret as (secret); `at:
 * runner` reads the environment as the runner leaves it. */
static void test_rules_messages_and_steps(void **state)
{
	struct snapshot *s;

	(void)state;
	expect_only(RESOLVE("plain", "a1", "RUNX_PORT=8o8o"), DIAG_ERROR,
		    "RUNX_PORT is not a number: '8o8o'");
	expect_clean(RESOLVE("plain", "a1", "RUNX_PORT=8080"));
	expect_only(RESOLVE("plain", "a1", "RUNX_KEY=hunter2"), DIAG_WARNING,
		    "RUNX_KEY '(secret)' lacks its key- prefix");
	expect_clean(RESOLVE("plain", "a1", "RUNX_KEY=key-hunter2"));
	/* The runner leaves RUNX_PHASE=early; mt's backend step sets late
	 * after it, which the at: runner rule does not see. */
	s = RESOLVE("mt", "a1", "PHASE_CHECK=1");
	expect_only(s, DIAG_WARNING, "the runner left RUNX_PHASE=early");
	assert_string_equal(snapshot_find(s, "RUNX_PHASE", 10)->value, "late");
	/* --env is there before the runner. */
	expect_clean(RESOLVE("mt", "a1", "PHASE_CHECK=1", "RUNX_PHASE=other"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_clean_dirs, teardown),
		cmocka_unit_test_teardown(test_bool_invalid_default_on, teardown),
		cmocka_unit_test_teardown(test_bool_invalid_default_off_and_none, teardown),
		cmocka_unit_test_teardown(test_bool_valid_spellings, teardown),
		cmocka_unit_test_teardown(test_bool_empty_is_unset, teardown),
		cmocka_unit_test_teardown(test_bool_from_catalog, teardown),
		cmocka_unit_test_teardown(test_int_min_with_note, teardown),
		cmocka_unit_test_teardown(test_int_range_and_max, teardown),
		cmocka_unit_test_teardown(test_int_not_an_integer, teardown),
		cmocka_unit_test_teardown(test_int_catalog_port, teardown),
		cmocka_unit_test_teardown(test_enum, teardown),
		cmocka_unit_test_teardown(test_relaxed_reading_strips_and_ignores_case, teardown),
		cmocka_unit_test_teardown(test_enum_error_severity, teardown),
		cmocka_unit_test_teardown(test_enum_catalog_and_precedence, teardown),
		cmocka_unit_test_teardown(test_type_precedence, teardown),
		cmocka_unit_test_teardown(test_list, teardown),
		cmocka_unit_test_teardown(test_string_and_path_unchecked, teardown),
		cmocka_unit_test_teardown(test_secret_never_shown, teardown),
		cmocka_unit_test_teardown(test_inline_secret_warns_without_its_value, teardown),
		cmocka_unit_test_teardown(test_control_bytes_escaped, teardown),
		cmocka_unit_test_teardown(test_place_of_image_value, teardown),
		cmocka_unit_test_teardown(test_bad_spec_default, teardown),
		cmocka_unit_test_teardown(test_unknown_owned_suggests_retired, teardown),
		cmocka_unit_test_teardown(test_unknown_owned_suggests_declared, teardown),
		cmocka_unit_test_teardown(test_owned_known_names_silent, teardown),
		cmocka_unit_test_teardown(test_runner_owned_prefix, teardown),
		cmocka_unit_test_teardown(test_retired_silent_and_explained, teardown),
		cmocka_unit_test_teardown(test_pin_contradiction, teardown),
		cmocka_unit_test_teardown(test_pin_agreement, teardown),
		cmocka_unit_test_teardown(test_pin_non_boolean, teardown),
		cmocka_unit_test_teardown(test_runner_pin, teardown),
		cmocka_unit_test_teardown(test_rules, teardown),
		cmocka_unit_test_teardown(test_rules_messages_and_steps, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

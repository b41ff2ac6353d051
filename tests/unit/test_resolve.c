/* The layering rules of SPEC sections 3, 3.1 and 3.2, through world_load()
 * and resolve_dir() over the small spec directories of
 * tests/fixtures/resolve/ (never the shipped specs):
 *
 *   specs/base.yaml   runner base, arches a1 a2      specs/app.yaml  backend "app"
 *   image1.env image2.env baked_xla.env               --inherit files
 *   config.yaml expand.yaml owns_flags.yaml …         experiment configs
 *   cycle/specs/                                      reference cycles
 *
 * Variables named V_<LAYER> are supplied by every layer up to <LAYER> with
 * the value "<layer>", so the winner's value names the layer that won. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resolve.h"
#include "view.h"

/* ---- fixture plumbing ------------------------------------------------ */

#define MAXN 16

struct fx {
	const char *config;             /* relative to fixtures/resolve, or NULL */
	const char *specs;              /* relative; default "specs" */
	const char *inherit[MAXN];      /* relative paths */
	const char *env[MAXN];          /* --env NAME=VALUE */
	const char *pass[MAXN];         /* --pass NAME */
	char *host[MAXN];               /* fake environ of the daemon */
	struct override_set ov;
	/* results */
	char *paths[MAXN + 2];
	const char *inherit_abs[MAXN];
	struct world *w;
	struct snapshot *s;
};

static char *fixture(const char *rel)
{
	const char *dir = getenv("ENVFS_FIXTURES");
	struct strbuf sb = STRBUF_INIT;

	assert_non_null(dir);
	assert_int_equal(sb_addf(&sb, "%s/resolve/%s", dir, rel), 0);
	return sb_detach(&sb, NULL);
}

static size_t count(const void *const *v)
{
	size_t n = 0;

	while (n < MAXN && v[n])
		n++;
	return n;
}

static int fx_load(struct fx *f)
{
	struct envfs_inputs in = { 0 };
	size_t k, np = 0;

	f->paths[np] = fixture(f->specs ? f->specs : "specs");
	in.specs_dir = f->paths[np++];
	if (f->config) {
		f->paths[np] = fixture(f->config);
		in.config = f->paths[np++];
	}
	for (k = 0; k < count((const void *const *)f->inherit); k++)
		f->inherit_abs[k] = f->paths[np++] = fixture(f->inherit[k]);
	in.inherit = f->inherit_abs;
	in.ninherit = k;
	in.env = f->env;
	in.nenv = count((const void *const *)f->env);
	in.pass = f->pass;
	in.npass = count((const void *const *)f->pass);
	in.host_env = f->host;
	return world_load(&in, &f->w);
}

/* Loads the inputs and resolves app/<arch>; every input must load. */
static const struct snapshot *fx_resolve(struct fx *f, const char *arch)
{
	assert_int_equal(fx_load(f), 0);
	assert_non_null(f->w);
	assert_int_equal(resolve_dir(f->w, &f->ov, "app", arch, &f->s), 0);
	assert_non_null(f->s);
	return f->s;
}

static void fx_release(struct fx *f)
{
	size_t k;

	snapshot_unref(f->s);
	world_free(f->w);
	override_set_release(&f->ov);
	for (k = 0; k < MAXN + 2; k++)
		free(f->paths[k]);
	memset(f, 0, sizeof(*f));
}

static void override(struct fx *f, const char *arch, const char *name, const char *value)
{
	assert_int_equal(override_set_put(&f->ov, "app", arch, name, value,
					  value ? strlen(value) : 0), 0);
}

/* ---- assertions ------------------------------------------------------ */

static const struct snap_var *var(const struct snapshot *s, const char *name)
{
	return snapshot_find(s, name, strlen(name));
}

static void assert_value(const struct snapshot *s, const char *name, const char *want)
{
	const struct snap_var *v = var(s, name);

	if (!v || !v->set) {
		fprintf(stderr, "%s: want \"%s\", but it is not set\n", name, want);
		fail();
	}
	if (v->value_len != strlen(want) || memcmp(v->value, want, v->value_len)) {
		fprintf(stderr, "%s: want \"%s\"\n%*s   got \"%.*s\"\n", name, want,
			(int)strlen(name), "", (int)v->value_len, v->value);
		fail();
	}
}

static void assert_unset(const struct snapshot *s, const char *name)
{
	const struct snap_var *v = var(s, name);

	if (v && v->set) {
		fprintf(stderr, "%s: want unset, got \"%.*s\"\n", name, (int)v->value_len,
			v->value);
		fail();
	}
}

static void assert_layer(const struct snapshot *s, const char *name, enum layer want)
{
	const struct snap_var *v = var(s, name);

	assert_non_null(v);
	if (v->layer != want) {
		fprintf(stderr, "%s: want layer %s, got %s\n", name, layer_name(want),
			layer_name(v->layer));
		fail();
	}
}

static void assert_str(const char *got, const char *want)
{
	if (!got || strcmp(got, want)) {
		fprintf(stderr, "want \"%s\"\n got \"%s\"\n", want, got ? got : "(null)");
		fail();
	}
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle)) {
		fprintf(stderr, "want text containing \"%s\"\n got \"%s\"\n", needle,
			hay ? hay : "(null)");
		fail();
	}
}

static void assert_lacks(const char *hay, const char *needle)
{
	if (hay && strstr(hay, needle)) {
		fprintf(stderr, "want text without \"%s\"\n got \"%s\"\n", needle, hay);
		fail();
	}
}

/* A diagnostic of severity sev whose message holds every needle. */
static const struct diag *find_diag(const struct snapshot *s, enum diag_sev sev,
				    const char *needle1, const char *needle2)
{
	size_t k;

	for (k = 0; k < s->diags.n; k++) {
		const struct diag *d = &s->diags.v[k];

		if (d->sev == sev && strstr(d->msg, needle1) &&
		    (!needle2 || strstr(d->msg, needle2)))
			return d;
	}
	return NULL;
}

static char *render(const struct snapshot *s, enum view_kind kind, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(view_render(s, kind, &sb), 0);
	return sb_detach(&sb, len);
}

/* ---- SPEC 3: layer precedence ---------------------------------------- */

/* Every layer supplies its V_<LAYER> and all the V_ names above it. */
static void every_layer(struct fx *f)
{
	f->config = "config.yaml";              /* V_CONFIG, V_OVERRIDE */
	f->inherit[0] = "image1.env";           /* V_IMAGE .. V_OVERRIDE */
	f->inherit[1] = "image2.env";
	f->host[0] = "V_HOST=host";
	f->host[1] = "V_CLI=host";
	f->host[2] = "V_CONFIG=host";
	f->host[3] = "V_OVERRIDE=host";
	f->env[0] = "V_CLI=cli";
	f->env[1] = "V_CONFIG=cli";
	f->env[2] = "V_OVERRIDE=cli";
	override(f, "a1", "V_OVERRIDE", "override");
}

static void test_layers__each_layer_beats_every_layer_below_it(void **state)
{
	static const struct {
		const char *name;
		enum layer layer;
	} ladder[] = {
		{ "V_BACKEND", LAYER_BACKEND }, { "V_RUNNER", LAYER_RUNNER },
		{ "V_IMAGE", LAYER_IMAGE },     { "V_HOST", LAYER_HOST },
		{ "V_CLI", LAYER_CLI },         { "V_CONFIG", LAYER_CONFIG },
		{ "V_OVERRIDE", LAYER_OVERRIDE },
	};
	struct fx f = { 0 };
	const struct snapshot *s;
	size_t k;

	(void)state;
	every_layer(&f);
	s = fx_resolve(&f, "a1");
	for (k = 0; k < sizeof(ladder) / sizeof(ladder[0]); k++) {
		assert_value(s, ladder[k].name, layer_name(ladder[k].layer));
		assert_layer(s, ladder[k].name, ladder[k].layer);
		assert_true(var(s, ladder[k].name)->exported);
	}
	fx_release(&f);
}

static void test_layers__layers_lists_every_supplier_low_to_high(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	every_layer(&f);
	s = fx_resolve(&f, "a1");
	/* Launch order, the winner last. */
	assert_str(var(s, "V_OVERRIDE")->layers,
		   "image host cli runner config backend override");
	assert_str(var(s, "V_HOST")->layers, "image runner backend host");
	assert_str(var(s, "V_BACKEND")->layers, "backend");
	fx_release(&f);
}

static void test_layers__shadowed_lists_every_losing_value(void **state)
{
	static const char *const losers[] = {
		"backend=backend\n", "runner=runner\n", "image=image\n", "host=host\n",
		"cli=cli\n", "config=config\n",
	};
	struct fx f = { 0 };
	const struct snapshot *s;
	const char *sh;
	size_t k, lines = 0;

	(void)state;
	every_layer(&f);
	s = fx_resolve(&f, "a1");
	sh = var(s, "V_OVERRIDE")->shadowed;
	for (k = 0; k < sizeof(losers) / sizeof(losers[0]); k++)
		assert_contains(sh, losers[k]);
	for (; sh && *sh; sh++)
		lines += *sh == '\n';
	assert_int_equal(lines, 6);
	assert_null(var(s, "V_BACKEND")->shadowed);
	fx_release(&f);
}

static void test_layers__sources_name_file_and_line_or_the_layer(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;
	char want[4096];

	(void)state;
	every_layer(&f);
	f.env[3] = "CLI_ONLY=c";
	f.host[4] = "PASS_ME=p";
	s = fx_resolve(&f, "a1");
	/* specs: "<last dir component>/<file>:LINE" of the entry */
	assert_str(var(s, "V_BACKEND")->source, "specs/app.yaml:20");
	assert_str(var(s, "V_RUNNER")->source, "specs/base.yaml:6");
	/* image: image:FILE:LINE, FILE as given; the winning (later) file */
	snprintf(want, sizeof(want), "image:%s:2", f.inherit_abs[1]);
	assert_str(var(s, "V_IMAGE")->source, want);
	assert_str(var(s, "V_HOST")->source, "host");
	assert_str(var(s, "V_CLI")->source, "cli");
	assert_str(var(s, "CLI_ONLY")->source, "cli");
	assert_str(var(s, "PASS_ME")->source, "host");
	/* config: FILE:LINE with FILE as given */
	snprintf(want, sizeof(want), "%s:3", f.paths[1]);
	assert_str(var(s, "V_CONFIG")->source, want);
	assert_str(var(s, "V_OVERRIDE")->source, "override");
	fx_release(&f);
}

static void test_layers__note_comes_from_the_spec_entry(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	s = fx_resolve(&f, "a1");
	assert_str(var(s, "V_BACKEND")->note, "the failure this default prevents");
	fx_release(&f);
}

static void test_layers__default_is_the_spec_value_even_when_shadowed(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	every_layer(&f);
	s = fx_resolve(&f, "a1");
	assert_str(var(s, "V_BACKEND")->def, "backend");
	/* the runner's value is the default a runner+backend name falls back to */
	assert_str(var(s, "V_RUNNER")->def, "runner");
	assert_str(var(s, "V_CLI")->def, "runner");
	fx_release(&f);
}

static void test_layers__later_inherit_file_wins_and_shadows_the_earlier(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.inherit[0] = "image1.env";
	f.inherit[1] = "image2.env";
	s = fx_resolve(&f, "a1");
	assert_value(s, "V_IMAGE", "image");
	assert_contains(var(s, "V_IMAGE")->shadowed, "image=image-first\n");
	assert_value(s, "IMG_ONLY", "from-image");   /* only in the first file */
	fx_release(&f);

	f.inherit[0] = "image2.env";
	f.inherit[1] = "image1.env";
	s = fx_resolve(&f, "a1");
	assert_value(s, "V_IMAGE", "image-first");
	fx_release(&f);
}

/* ---- host passthrough ------------------------------------------------ */

static void test_host__only_allowlisted_names_are_passed_through(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.host[0] = "PASS_ME=from-host";
	f.host[1] = "NOT_LISTED=leak";
	f.host[2] = "HOME=/root";
	f.host[3] = "EXTRA=by-pass";
	s = fx_resolve(&f, "a1");
	assert_value(s, "PASS_ME", "from-host");
	assert_layer(s, "PASS_ME", LAYER_HOST);
	assert_null(var(s, "NOT_LISTED"));
	assert_null(var(s, "HOME"));
	assert_null(var(s, "EXTRA"));
	fx_release(&f);
}

static void test_host__pass_adds_a_name_to_the_allowlist(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.host[0] = "NOT_LISTED=leak";
	f.host[1] = "EXTRA=by-pass";
	f.pass[0] = "EXTRA";
	f.pass[1] = "ABSENT_FROM_HOST";
	s = fx_resolve(&f, "a1");
	assert_value(s, "EXTRA", "by-pass");
	assert_layer(s, "EXTRA", LAYER_HOST);
	assert_str(var(s, "EXTRA")->source, "host");
	assert_null(var(s, "NOT_LISTED"));
	assert_null(var(s, "ABSENT_FROM_HOST"));
	fx_release(&f);
}

/* The container launcher forwards a listed name only when it is set and
 * non-empty (primus-cli-container.sh); --pass copies it as it is. */
static void test_host__an_empty_listed_value_is_not_forwarded(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.host[0] = "PASS_ME=";
	s = fx_resolve(&f, "a1");
	assert_unset(s, "PASS_ME");
	fx_release(&f);
}

/* ... and every non-empty variable with one of the runner's prefixes
 * (PRIMUS_ NCCL_ RCCL_ GLOO_ IONIC_ HIPBLASLT_ in the shipped base). */
static void test_host__prefixed_names_are_forwarded_when_non_empty(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.host[0] = "PRIMUS_FOO=1";
	f.host[1] = "NCCL_EMPTY=";
	f.host[2] = "TE_OTHER=1";
	f.host[3] = "XPRIMUS_NOT=1";
	s = fx_resolve(&f, "a1");
	assert_value(s, "PRIMUS_FOO", "1");
	assert_unset(s, "NCCL_EMPTY");
	assert_unset(s, "TE_OTHER");
	assert_unset(s, "XPRIMUS_NOT");
	fx_release(&f);
}

/* --pass NAME adds NAME to the launcher's list: an empty value is dropped
 * as primus-cli-container.sh drops it (the runner's default then applies). */
static void test_host__pass_drops_an_empty_value_as_the_launcher_does(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.host[0] = "PASS_ME=";
	f.host[1] = "NNODES=";
	f.pass[0] = "PASS_ME";
	f.pass[1] = "NNODES";
	s = fx_resolve(&f, "a1");
	assert_unset(s, "PASS_ME");
	assert_value(s, "NNODES", "1");
	fx_release(&f);
}

/* ---- mode: set ------------------------------------------------------- */

/* The runner's unconditional export replaces the image's value, but the
 * launcher exports --env (and the host passthrough it forwards as --env)
 * again after the runner (SPEC 3, step 3). */
static void test_mode_set__runner_set_replaces_image_but_loses_to_host_and_cli(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.inherit[0] = "image1.env";             /* RUNNER_SET=image */
	s = fx_resolve(&f, "a1");
	assert_value(s, "RUNNER_SET", "runner-set");
	assert_layer(s, "RUNNER_SET", LAYER_RUNNER);
	assert_contains(var(s, "RUNNER_SET")->shadowed, "image=image\n");
	fx_release(&f);

	f.inherit[0] = "image1.env";
	f.env[0] = "RUNNER_SET=cli";
	s = fx_resolve(&f, "a1");
	assert_value(s, "RUNNER_SET", "cli");
	assert_layer(s, "RUNNER_SET", LAYER_CLI);
	assert_contains(var(s, "RUNNER_SET")->shadowed, "runner=runner-set\n");
	fx_release(&f);

	f.host[0] = "RUNNER_SET=host";
	f.pass[0] = "RUNNER_SET";
	s = fx_resolve(&f, "a1");
	assert_value(s, "RUNNER_SET", "host");
	assert_layer(s, "RUNNER_SET", LAYER_HOST);
	fx_release(&f);
}

/* A backend entry runs at step 6, after the config: its mode: set (an
 * os.environ assignment) beats every layer but the override. */
static void test_mode_set__backend_set_beats_the_config_and_loses_to_override(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.inherit[0] = "image1.env";             /* SET_VS_INHERITED=image */
	f.host[0] = "SET_VS_INHERITED=host";
	f.env[0] = "SET_VS_INHERITED=cli";
	f.config = "config.yaml";                 /* SET_VS_CONFIG: config */
	override(&f, "a1", "SET_VS_OVERRIDE", "override");
	s = fx_resolve(&f, "a1");
	assert_value(s, "SET_VS_INHERITED", "spec-set");
	assert_layer(s, "SET_VS_INHERITED", LAYER_BACKEND);
	assert_str(var(s, "SET_VS_INHERITED")->source, "specs/app.yaml:37");
	assert_contains(var(s, "SET_VS_INHERITED")->shadowed, "cli=cli\n");
	assert_contains(var(s, "SET_VS_INHERITED")->shadowed, "host=host\n");
	assert_contains(var(s, "SET_VS_INHERITED")->shadowed, "image=image\n");
	assert_value(s, "SET_VS_CONFIG", "spec-set");
	assert_layer(s, "SET_VS_CONFIG", LAYER_BACKEND);
	assert_contains(var(s, "SET_VS_CONFIG")->shadowed, "config=config\n");
	assert_value(s, "SET_VS_OVERRIDE", "override");
	assert_layer(s, "SET_VS_OVERRIDE", LAYER_OVERRIDE);
	fx_release(&f);
}

/* ---- export: false ----------------------------------------------------- */

static void test_export_false__parameter_is_not_in_the_environment(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;
	const struct snap_var *v;
	char *ef, *environ_, *explain;
	size_t len, environ_len;

	(void)state;
	s = fx_resolve(&f, "a1");
	v = var(s, "PARAM_ONLY");
	assert_non_null(v);               /* explain still knows it */
	assert_false(v->set);
	assert_false(v->exported);
	assert_str(v->def, "param-default");
	assert_false(var(s, "XLA_GPU_AUTOTUNE_LEVEL")->set);
	assert_str(var(s, "XLA_GPU_AUTOTUNE_LEVEL")->def, "4");

	ef = render(s, VIEW_ENV_FILE, &len);
	environ_ = render(s, VIEW_ENVIRON, &environ_len);
	explain = render(s, VIEW_EXPLAIN, &len);
	assert_lacks(ef, "PARAM_ONLY");
	assert_lacks(ef, "XLA_GPU_AUTOTUNE_LEVEL");
	assert_true(memmem(environ_, environ_len, "PARAM_ONLY", 10) == NULL);
	assert_contains(explain, "PARAM_ONLY");
	assert_contains(explain, "param-default");
	free(ef);
	free(environ_);
	free(explain);
	fx_release(&f);
}

static void test_export_false__a_layer_setting_the_parameter_exports_it(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.env[0] = "PARAM_ONLY=from-cli";
	s = fx_resolve(&f, "a1");
	assert_value(s, "PARAM_ONLY", "from-cli");
	assert_true(var(s, "PARAM_ONLY")->exported);
	assert_layer(s, "PARAM_ONLY", LAYER_CLI);
	fx_release(&f);
}

/* ---- overrides that unset ------------------------------------------------ */

static void test_override__unset_removes_the_variable_from_every_layer(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;
	char *ef;
	size_t len;

	(void)state;
	every_layer(&f);
	override(&f, "a1", "V_CLI", NULL);
	override(&f, "a1", "V_BACKEND", NULL);
	s = fx_resolve(&f, "a1");
	assert_unset(s, "V_CLI");
	assert_unset(s, "V_BACKEND");
	ef = render(s, VIEW_ENV_FILE, &len);
	assert_lacks(ef, "V_CLI=");
	assert_lacks(ef, "V_BACKEND=");
	assert_contains(ef, "V_HOST=host\n");
	free(ef);
	fx_release(&f);
}

static void test_override__dropping_an_override_restores_the_resolved_value(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	override(&f, "a1", "V_BACKEND", "mine");
	assert_int_equal(override_set_drop(&f.ov, "app", "a1", "V_BACKEND"), 0);
	assert_int_equal(override_set_drop(&f.ov, "app", "a1", "V_BACKEND"), -ENOENT);
	s = fx_resolve(&f, "a1");
	assert_value(s, "V_BACKEND", "backend");
	fx_release(&f);
}

static void test_override__value_is_verbatim_bytes(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	override(&f, "a1", "V_BACKEND", " x\n'$y' \\ ");
	override(&f, "a1", "V_RUNNER", "");
	s = fx_resolve(&f, "a1");
	assert_value(s, "V_BACKEND", " x\n'$y' \\ ");
	assert_value(s, "V_RUNNER", "");
	assert_layer(s, "V_RUNNER", LAYER_OVERRIDE);
	fx_release(&f);
}

/* ---- SPEC 3.1: flag lists -------------------------------------------- */

#define MANAGED "--xla_a=1 --xla_gpu_autotune_level=4 --xla_b=2"

static void test_flags__managed_flags_alone_make_the_value(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	s = fx_resolve(&f, "a1");
	assert_value(s, "XLA_FLAGS", MANAGED);
	assert_layer(s, "XLA_FLAGS", LAYER_BACKEND);
	assert_str(var(s, "XLA_FLAGS")->source, "specs/app.yaml:4");
	assert_true(var(s, "XLA_FLAGS")->is_flags);
	assert_true(var(s, "XLA_FLAGS")->exported);
	assert_lacks(var(s, "XLA_FLAGS")->explain, "appended");
	fx_release(&f);
}

static void test_flags__override_is_the_whole_value_verbatim(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.config = "append.yaml";                 /* an append that must not apply */
	f.inherit[0] = "baked_xla.env";
	override(&f, "a1", "XLA_FLAGS", "  --mine=1   --xla_b=9 ");
	s = fx_resolve(&f, "a1");
	assert_value(s, "XLA_FLAGS", "  --mine=1   --xla_b=9 ");
	assert_layer(s, "XLA_FLAGS", LAYER_OVERRIDE);
	assert_str(var(s, "XLA_FLAGS")->source, "override");
	assert_str(var(s, "XLA_FLAGS")->effective, "--mine=1\n--xla_b=9\n");
	fx_release(&f);
}

static void test_flags__config_owned_xla_flags_skips_managed_defaults(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;
	const struct diag *d;
	char want[4096];

	(void)state;
	f.config = "owns_flags.yaml";
	f.inherit[0] = "baked_xla.env";           /* not the base when owned */
	s = fx_resolve(&f, "a1");
	assert_value(s, "XLA_FLAGS", "--owned=1 --xla_gpu_autotune_level=0");
	assert_layer(s, "XLA_FLAGS", LAYER_CONFIG);
	snprintf(want, sizeof(want), "%s:2", f.paths[1]);
	assert_str(var(s, "XLA_FLAGS")->source, want);
	assert_contains(var(s, "XLA_FLAGS")->explain,
			"XLA_FLAGS comes from the config env: block; managed defaults skipped");
	assert_lacks(var(s, "XLA_FLAGS")->explain,
		     "XLA_FLAGS appended (managed defaults override inherited)");
	d = find_diag(s, DIAG_WARNING, "XLA_FLAGS", "--xla_gpu_autotune_level=4");
	assert_non_null(d);
	assert_non_null(d->file);
	assert_string_equal(d->file, f.paths[1]);
	assert_int_equal(d->line, 2);
	fx_release(&f);
}

static void test_flags__config_owned_flags_still_get_the_append(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.config = "owns_and_appends.yaml";
	s = fx_resolve(&f, "a1");
	assert_value(s, "XLA_FLAGS", "--owned=1 --appended=1");
	fx_release(&f);
}

static void test_flags__inherited_base_then_managed_so_managed_wins(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;
	const struct snap_var *v;

	(void)state;
	f.inherit[0] = "baked_xla.env";
	s = fx_resolve(&f, "a1");
	v = var(s, "XLA_FLAGS");
	assert_value(s, "XLA_FLAGS",
		     "--xla_gpu_autotune_level=0 --xla_baked=keep --xla_novalue " MANAGED);
	/* keyed before '=', last wins, in order of first appearance */
	assert_str(v->effective,
		   "--xla_gpu_autotune_level=4\n--xla_baked=keep\n--xla_novalue\n"
		   "--xla_a=1\n--xla_b=2\n");
	assert_int_equal(v->nflags, 5);
	assert_string_equal(v->flags[0].token, "--xla_gpu_autotune_level=4");
	assert_string_equal(v->flags[0].key, "--xla_gpu_autotune_level");
	assert_int_equal(v->flags[0].layer, LAYER_BACKEND);
	assert_string_equal(v->flags[1].token, "--xla_baked=keep");
	assert_int_equal(v->flags[1].layer, LAYER_IMAGE);
	assert_string_equal(v->flags[2].key, "--xla_novalue");
	assert_int_equal(v->flags[2].layer, LAYER_IMAGE);
	assert_int_equal(v->flags[3].layer, LAYER_BACKEND);
	assert_contains(v->explain, "XLA_FLAGS appended (managed defaults override inherited)");
	assert_lacks(v->explain, "comes from the config env: block");
	assert_contains(v->layers, "image");
	assert_contains(v->layers, "backend");
	fx_release(&f);
}

static void test_flags__inherited_base_is_cli_over_host_over_image(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.inherit[0] = "baked_xla.env";
	f.host[0] = "XLA_FLAGS=--from_host=1";
	f.pass[0] = "XLA_FLAGS";
	s = fx_resolve(&f, "a1");
	assert_value(s, "XLA_FLAGS", "--from_host=1 " MANAGED);
	fx_release(&f);

	f.inherit[0] = "baked_xla.env";
	f.host[0] = "XLA_FLAGS=--from_host=1";
	f.pass[0] = "XLA_FLAGS";
	f.env[0] = "XLA_FLAGS=--from_cli=1";
	s = fx_resolve(&f, "a1");
	assert_value(s, "XLA_FLAGS", "--from_cli=1 " MANAGED);
	assert_contains(var(s, "XLA_FLAGS")->shadowed, "image=");
	assert_contains(var(s, "XLA_FLAGS")->shadowed, "host=--from_host=1\n");
	fx_release(&f);
}

static void test_flags__append_from_is_appended_last_and_wins(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;
	const struct snap_var *v;

	(void)state;
	f.config = "append.yaml";
	f.inherit[0] = "baked_xla.env";
	s = fx_resolve(&f, "a1");
	v = var(s, "XLA_FLAGS");
	assert_value(s, "XLA_FLAGS",
		     "--xla_gpu_autotune_level=0 --xla_baked=keep --xla_novalue " MANAGED
		     " --xla_gpu_autotune_level=5 --xla_extra=1");
	assert_string_equal(v->flags[0].token, "--xla_gpu_autotune_level=5");
	assert_int_equal(v->flags[0].layer, LAYER_CONFIG);
	assert_contains(v->effective, "--xla_extra=1\n");
	assert_contains(v->explain,
			"XLA_FLAGS_APPEND appended (wins): --xla_gpu_autotune_level=5 --xla_extra=1");
	fx_release(&f);
}

static void test_flags__append_from_any_layer(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.env[0] = "XLA_FLAGS_APPEND=--xla_b=3";
	s = fx_resolve(&f, "a1");
	assert_value(s, "XLA_FLAGS", MANAGED " --xla_b=3");
	assert_contains(var(s, "XLA_FLAGS")->effective, "--xla_b=3\n");
	assert_lacks(var(s, "XLA_FLAGS")->effective, "--xla_b=2");
	fx_release(&f);
}

static void test_flags__append_variable_is_consumed_not_exported(void **state)
{
	static const enum view_kind views[] = { VIEW_ENV_FILE, VIEW_ENVIRON, VIEW_SH, VIEW_JSON };
	struct fx f = { 0 };
	const struct snapshot *s;
	const struct snap_var *v;
	size_t k;

	(void)state;
	f.config = "append.yaml";
	s = fx_resolve(&f, "a1");
	v = var(s, "XLA_FLAGS_APPEND");
	assert_non_null(v);
	assert_true(v->set);            /* its file exists while it is set */
	assert_false(v->exported);
	assert_value(s, "XLA_FLAGS_APPEND", "--xla_gpu_autotune_level=5 --xla_extra=1");
	for (k = 0; k < sizeof(views) / sizeof(views[0]); k++) {
		size_t len;
		char *out = render(s, views[k], &len);

		assert_true(memmem(out, len, "XLA_FLAGS_APPEND", 16) == NULL);
		assert_true(memmem(out, len, "XLA_FLAGS", 9) != NULL);
		free(out);
	}
	fx_release(&f);
}

static void test_flags__no_parts_and_no_layer_leaves_it_unset(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;
	char *ef;
	size_t len;

	(void)state;
	s = fx_resolve(&f, "a1");
	assert_unset(s, "EMPTY_FLAGS");
	ef = render(s, VIEW_ENV_FILE, &len);
	assert_lacks(ef, "EMPTY_FLAGS");
	free(ef);
	fx_release(&f);
}

static void test_flags__a_layer_setting_it_empty_keeps_it_set_and_empty(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.env[0] = "EMPTY_FLAGS=";
	s = fx_resolve(&f, "a1");
	assert_value(s, "EMPTY_FLAGS", "");
	assert_true(var(s, "EMPTY_FLAGS")->exported);
	fx_release(&f);
}

static void test_flags__flags_with_nothing_managed_are_the_inherited_value(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.env[0] = "EMPTY_FLAGS=--x=1 --y=2 --x=3";
	s = fx_resolve(&f, "a1");
	assert_value(s, "EMPTY_FLAGS", "--x=1 --y=2 --x=3");
	assert_layer(s, "EMPTY_FLAGS", LAYER_CLI);
	assert_str(var(s, "EMPTY_FLAGS")->effective, "--x=3\n--y=2\n");
	/* nothing managed was added: no "appended" message */
	assert_lacks(var(s, "EMPTY_FLAGS")->explain, "managed defaults override");
	fx_release(&f);
}

static void test_flags__flag_when_condition_adds_the_dump_flag(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.env[0] = "DUMP_HLO=1";
	s = fx_resolve(&f, "a1");
	assert_value(s, "XLA_FLAGS", MANAGED " --xla_dump_to=out/dump");
	fx_release(&f);

	f.env[0] = "DUMP_HLO=1";
	f.env[1] = "DUMP_HLO_DIR=/d/hlo";
	s = fx_resolve(&f, "a1");
	assert_value(s, "XLA_FLAGS", MANAGED " --xla_dump_to=/d/hlo");
	fx_release(&f);

	f.env[0] = "DUMP_HLO=0";
	f.env[1] = "DUMP_HLO_DIR=/d/hlo";
	s = fx_resolve(&f, "a1");
	assert_value(s, "XLA_FLAGS", MANAGED);
	fx_release(&f);
}

/* ---- SPEC 3.2: templates, final values --------------------------------- */

static void test_templates__reference_and_default_forms(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	/* env_spec.py builds its whole list before applying any of it: the
	 * backend's own B_ONLY default is not set yet when T_REF is built. */
	s = fx_resolve(&f, "a1");
	assert_value(s, "T_REF", "x--y");
	assert_non_null(find_diag(s, DIAG_WARNING, "T_REF reads B_ONLY", "after building its list"));
	assert_value(s, "T_DEFAULT", "fallback");
	fx_release(&f);

	f.env[0] = "MAYBE=given";
	f.env[1] = "B_ONLY=cli-b";
	s = fx_resolve(&f, "a1");
	assert_value(s, "T_DEFAULT", "given");
	assert_value(s, "T_REF", "x-cli-b-y");
	fx_release(&f);

	f.env[0] = "MAYBE=";      /* set but empty: :- takes the default */
	s = fx_resolve(&f, "a1");
	assert_value(s, "T_DEFAULT", "fallback");
	fx_release(&f);
}

static void test_templates__indices_follow_an_overridden_gpus_per_node(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	s = fx_resolve(&f, "a1");
	assert_value(s, "HIP_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7");
	fx_release(&f);

	override(&f, "a1", "GPUS_PER_NODE", "4");
	s = fx_resolve(&f, "a1");
	assert_value(s, "HIP_VISIBLE_DEVICES", "0,1,2,3");
	fx_release(&f);

	/* an override in another directory does not leak into this one */
	override(&f, "a2", "GPUS_PER_NODE", "2");
	s = fx_resolve(&f, "a1");
	assert_value(s, "HIP_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7");
	fx_release(&f);

	f.host[0] = "GPUS_PER_NODE=2";
	s = fx_resolve(&f, "a1");
	assert_value(s, "HIP_VISIBLE_DEVICES", "0,1");
	fx_release(&f);
}

static void test_templates__see_the_final_value_including_config(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	every_layer(&f);
	s = fx_resolve(&f, "a1");
	assert_value(s, "T_FINAL", "sees-config");
	fx_release(&f);
}

static void test_templates__overriding_the_autotune_parameter_changes_managed_flags(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	override(&f, "a1", "XLA_GPU_AUTOTUNE_LEVEL", "5");
	s = fx_resolve(&f, "a1");
	assert_value(s, "XLA_FLAGS", "--xla_a=1 --xla_gpu_autotune_level=5 --xla_b=2");
	assert_value(s, "XLA_GPU_AUTOTUNE_LEVEL", "5");
	assert_true(var(s, "XLA_GPU_AUTOTUNE_LEVEL")->exported);
	fx_release(&f);

	f.env[0] = "XLA_GPU_AUTOTUNE_LEVEL=3";
	s = fx_resolve(&f, "a1");
	assert_value(s, "XLA_FLAGS", "--xla_a=1 --xla_gpu_autotune_level=3 --xla_b=2");
	fx_release(&f);
}

/* Each entry reads the environment as the launch has it at its line:
 * bash reads top to bottom, so a name set only later reads as unset, a
 * name's own earlier value is what `X=${X}...` extends, and two entries
 * reading each other are a reference cycle (an error). */
static void test_templates__entries_read_the_environment_at_their_line(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.specs = "cycle/specs";
	s = fx_resolve(&f, "a1");
	assert_value(s, "CYC_A", "a[]");
	assert_value(s, "CYC_B", "b[a[]]");
	assert_non_null(find_diag(s, DIAG_ERROR, "CYC_A: reference cycle with CYC_B", "line"));
	assert_value(s, "SELF_REF", "s[]");
	assert_value(s, "INNOCENT", "fine");
	assert_unset(s, "COND_CYC");          /* its condition reads it unset */
	/* The backend's flags read the inherited XLA_FLAGS: none. */
	assert_value(s, "XLA_FLAGS", "--self= --ok=1");
	fx_release(&f);

	f.specs = "cycle/specs";
	f.env[0] = "SELF_REF=in";
	f.env[1] = "XLA_FLAGS=--base";
	s = fx_resolve(&f, "a1");
	assert_value(s, "SELF_REF", "in");    /* a default: cli set it */
	assert_value(s, "XLA_FLAGS", "--base --self=--base --ok=1");
	fx_release(&f);
}

static void test_templates__resolve_all_reports_a_cycle(void **state)
{
	struct fx f = { 0 };
	struct resolution *r = NULL;

	(void)state;
	f.specs = "cycle/specs";
	assert_int_equal(fx_load(&f), 0);
	assert_int_equal(resolve_all(f.w, NULL, &r), 0);
	assert_int_equal(r->ndirs, 1);
	assert_true(diag_count(&r->diags, DIAG_ERROR) >= 1);
	resolution_free(r);
	fx_release(&f);
}

/* ---- SPEC 3.2: conditions ---------------------------------------------- */

static void test_conditions__integer_comparisons(void **state)
{
	static const struct {
		const char *num;
		bool lt, le, gt, ge;
	} rows[] = {
		{ "NUM=2", true, true, false, false },
		{ "NUM=3", false, true, false, true },
		{ "NUM=4", false, false, true, true },
		{ "NUM=10", false, false, true, true },     /* integers, not text */
		{ "NUM=abc", false, false, false, false },  /* not an integer: false */
	};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct fx f = { 0 };
		const struct snapshot *s;

		f.env[0] = rows[k].num;
		s = fx_resolve(&f, "a1");
		fprintf(stderr, "# %s\n", rows[k].num);
		assert_int_equal(var(s, "W_LT") && var(s, "W_LT")->set, rows[k].lt);
		assert_int_equal(var(s, "W_LE") && var(s, "W_LE")->set, rows[k].le);
		assert_int_equal(var(s, "W_GT") && var(s, "W_GT")->set, rows[k].gt);
		assert_int_equal(var(s, "W_GE") && var(s, "W_GE")->set, rows[k].ge);
		fx_release(&f);
	}
}

static void test_conditions__text_equality_and_logic(void **state)
{
	static const struct {
		const char *mode, *num, *force;
		bool eq, ne, and_, or_, not_, paren;
	} rows[] = {
		{ "MODE=fast", "NUM=4", NULL, true, false, true, true, false, false },
		{ "MODE=fast", "NUM=1", NULL, true, false, false, true, false, false },
		{ "MODE=slow", "NUM=4", NULL, false, true, false, true, true, true },
		{ "MODE=slow", "NUM=1", NULL, false, true, false, false, true, false },
		{ "MODE=slow", "NUM=1", "FORCE=1", false, true, false, false, true, true },
		{ "MODE=fast", "NUM=9", "FORCE=1", true, false, true, true, false, false },
	};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct fx f = { 0 };
		const struct snapshot *s;

		f.env[0] = rows[k].mode;
		f.env[1] = rows[k].num;
		f.env[2] = rows[k].force;
		s = fx_resolve(&f, "a1");
		fprintf(stderr, "# row %zu\n", k);
		assert_int_equal(var(s, "W_EQ") && var(s, "W_EQ")->set, rows[k].eq);
		assert_int_equal(var(s, "W_NE") && var(s, "W_NE")->set, rows[k].ne);
		assert_int_equal(var(s, "W_AND") && var(s, "W_AND")->set, rows[k].and_);
		assert_int_equal(var(s, "W_OR") && var(s, "W_OR")->set, rows[k].or_);
		assert_int_equal(var(s, "W_NOT") && var(s, "W_NOT")->set, rows[k].not_);
		assert_int_equal(var(s, "W_PAREN") && var(s, "W_PAREN")->set, rows[k].paren);
		/* MODE is never an integer */
		assert_false(var(s, "W_NONINT") && var(s, "W_NONINT")->set);
		fx_release(&f);
	}
}

static void test_conditions__unset_names_read_as_empty_text(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	s = fx_resolve(&f, "a1");
	assert_unset(s, "W_EQ");
	assert_value(s, "W_NE", "ne");         /* "" != "fast" */
	assert_value(s, "W_NOT", "not");
	assert_unset(s, "W_LT");               /* "" is not an integer */
	fx_release(&f);
}

static void test_conditions__see_final_values_of_any_layer(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	s = fx_resolve(&f, "a1");
	assert_unset(s, "W_MULTI");            /* runner NNODES=1 */
	fx_release(&f);

	f.host[0] = "NNODES=2";
	f.pass[0] = "NNODES";
	s = fx_resolve(&f, "a1");
	assert_value(s, "W_MULTI", "multi");
	fx_release(&f);

	override(&f, "a1", "NNODES", "3");
	s = fx_resolve(&f, "a1");
	assert_value(s, "W_MULTI", "multi");
	fx_release(&f);
}

/* ---- arch gates ---------------------------------------------------------- */

static void test_arch__gated_entries_apply_only_in_their_arches(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	s = fx_resolve(&f, "a1");
	assert_null(var(s, "GATED_ONE"));
	assert_value(s, "GATED_LIST", "a1-listed");
	assert_value(s, "GATED_LATER", "general");
	fx_release(&f);

	s = fx_resolve(&f, "a2");
	assert_value(s, "GATED_ONE", "a2-only");
	assert_null(var(s, "GATED_LIST"));
	/* Entries apply in file order by their rule: a setdefault after one
	 * that already set the name does nothing. */
	assert_value(s, "GATED_LATER", "general");
	assert_str(var(s, "GATED_LATER")->source, "specs/app.yaml:97");
	assert_contains(var(s, "GATED_LATER")->shadowed, "backend=special\n");
	fx_release(&f);
}

static void test_arch__unknown_arch_is_enoent(void **state)
{
	struct fx f = { 0 };
	struct snapshot *s = NULL;

	(void)state;
	assert_int_equal(fx_load(&f), 0);
	assert_int_equal(resolve_dir(f.w, NULL, "app", "a3", &s), -ENOENT);
	assert_null(s);
	assert_int_equal(resolve_dir(f.w, NULL, "nope", "a1", &s), -EINVAL);
	fx_release(&f);
}

/* ---- the config env: block --------------------------------------------- */

static void test_config__expansion_sees_inherited_runner_override_and_earlier_keys(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.config = "expand.yaml";
	f.inherit[0] = "image1.env";
	f.host[0] = "PASS_ME=p";
	f.env[0] = "CLI_ONLY=c";
	override(&f, "a1", "OVR_ONLY", "o");
	s = fx_resolve(&f, "a1");
	assert_value(s, "C_IMAGE", "i:from-image");
	assert_value(s, "C_HOST", "h:p");
	assert_value(s, "C_CLI", "c:c");
	assert_value(s, "C_RUNNER", "r:runner-value");
	assert_value(s, "C_OVERRIDE", "o:o");
	assert_value(s, "C_LATER", "first-second");
	fx_release(&f);
}

static void test_config__expansion_does_not_see_backend_defaults(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.config = "expand.yaml";
	s = fx_resolve(&f, "a1");
	assert_value(s, "B_ONLY", "backend-value");   /* set, but after the block */
	assert_value(s, "C_BACKEND", "b:${B_ONLY}");
	assert_value(s, "C_FORWARD", "f:${C_AFTER}");  /* a later key is not yet set */
	assert_value(s, "C_UNSET", "u:${NOWHERE}");
	assert_value(s, "C_IMAGE", "i:${IMG_ONLY}");   /* no image this time */
	fx_release(&f);
}

static void test_config__backend_name_set_by_cli_is_seen(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.config = "expand.yaml";
	f.env[0] = "B_ONLY=from-cli";
	s = fx_resolve(&f, "a1");
	assert_value(s, "C_BACKEND", "b:from-cli");
	fx_release(&f);
}

static void test_config__a_key_extends_its_own_inherited_value(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.config = "expand.yaml";
	f.inherit[0] = "image1.env";
	s = fx_resolve(&f, "a1");
	assert_value(s, "IMG_ONLY", "from-image:extended");
	assert_layer(s, "IMG_ONLY", LAYER_CONFIG);
	assert_contains(var(s, "IMG_ONLY")->shadowed, "image=from-image\n");
	/* an earlier key saw the inherited value, not the later key's */
	assert_value(s, "C_IMAGE", "i:from-image");
	fx_release(&f);

	f.config = "expand.yaml";
	s = fx_resolve(&f, "a1");
	assert_value(s, "IMG_ONLY", "${IMG_ONLY}:extended");
	fx_release(&f);
}

/* ---- secrets ------------------------------------------------------------ */

static void test_secret__value_redacted_in_shadowed_and_explain(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;
	const struct snap_var *v;
	char *explain;
	size_t len;

	(void)state;
	f.inherit[0] = "image1.env";       /* SECRET_TOKEN=image-secret-xyz */
	f.host[0] = "SECRET_TOKEN=host-secret-abc";
	s = fx_resolve(&f, "a1");
	v = var(s, "SECRET_TOKEN");
	assert_value(s, "SECRET_TOKEN", "host-secret-abc");
	assert_true(v->secret);
	assert_true(v->exported);
	assert_true(s->secret_in_views);
	assert_non_null(v->shadowed);
	assert_contains(v->shadowed, "image=");
	assert_lacks(v->shadowed, "image-secret-xyz");
	explain = render(s, VIEW_EXPLAIN, &len);
	assert_lacks(explain, "host-secret-abc");
	assert_lacks(explain, "image-secret-xyz");
	assert_contains(explain, "SECRET_TOKEN");
	free(explain);
	fx_release(&f);
}

static void test_secret__value_built_from_a_secret_is_secret(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;
	char *explain;
	size_t len;

	(void)state;
	f.config = "secret_ref.yaml";
	f.env[0] = "SECRET_TOKEN=tok-123";
	s = fx_resolve(&f, "a1");
	assert_value(s, "SECRET_URL", "https://user:tok-123@hub.example");
	assert_true(var(s, "SECRET_URL")->secret);
	assert_value(s, "Z_TOK", "tok-123");
	assert_true(var(s, "Z_TOK")->secret);
	assert_value(s, "A_USE", "tok-123");
	assert_true(var(s, "A_USE")->secret);
	assert_false(var(s, "PLAIN")->secret);
	explain = render(s, VIEW_EXPLAIN, &len);
	assert_lacks(explain, "tok-123");
	assert_contains(explain, "no secret here");
	free(explain);
	fx_release(&f);
}

static void test_secret__naming_an_unset_secret_keeps_a_value_plain(void **state)
{
	struct fx f = { 0 };
	const struct snapshot *s;

	(void)state;
	f.config = "secret_ref.yaml";
	s = fx_resolve(&f, "a1");
	/* SECRET_TOKEN is unset: the reference stays literal, nothing secret. */
	assert_value(s, "SECRET_URL", "https://user:${SECRET_TOKEN}@hub.example");
	assert_false(var(s, "SECRET_URL")->secret);
	fx_release(&f);
}

/* ---- snapshot lifetime ---------------------------------------------------- */

/* A FUSE open keeps its snapshot while a reload frees the world it came
 * from and the override that fed it is dropped: every string must survive. */
static void test_snapshot__outlives_its_world_and_overrides(void **state)
{
	struct fx f = { 0 };
	struct snapshot *s;
	void *junk[256];
	size_t k;

	(void)state;
	every_layer(&f);
	f.config = "append.yaml";
	f.env[3] = "CLI_ONLY=cli-value-that-must-survive";
	override(&f, "a1", "OVR_ONLY", "override-value-that-must-survive");
	fx_resolve(&f, "a1");
	s = snapshot_ref(f.s);
	fx_release(&f);
	/* recycle the freed memory so a dangling pointer reads junk */
	for (k = 0; k < 256; k++) {
		junk[k] = malloc(8 + k % 64);
		memset(junk[k], 'Z', 8 + k % 64);
	}
	assert_value(s, "CLI_ONLY", "cli-value-that-must-survive");
	assert_value(s, "OVR_ONLY", "override-value-that-must-survive");
	assert_value(s, "V_IMAGE", "image");
	assert_value(s, "V_HOST", "host");
	assert_value(s, "XLA_FLAGS_APPEND", "--xla_gpu_autotune_level=5 --xla_extra=1");
	assert_str(var(s, "V_IMAGE")->source, var(s, "V_IMAGE")->source); /* readable */
	for (k = 0; k < 256; k++)
		free(junk[k]);
	snapshot_unref(s);
}

/* ---- world loading ------------------------------------------------------- */

static void test_world__bad_env_argument_fails_the_load(void **state)
{
	struct fx f = { 0 };

	(void)state;
	f.env[0] = "NO_EQUALS_SIGN";
	assert_int_equal(fx_load(&f), -EINVAL);
	assert_non_null(f.w);
	assert_true(diag_count(&f.w->diags, DIAG_ERROR) >= 1);
	fx_release(&f);
}

static void test_world__missing_inherit_file_fails_the_load(void **state)
{
	struct fx f = { 0 };

	(void)state;
	f.inherit[0] = "no-such-file.env";
	assert_int_equal(fx_load(&f), -EINVAL);
	fx_release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layers__each_layer_beats_every_layer_below_it),
		cmocka_unit_test(test_layers__layers_lists_every_supplier_low_to_high),
		cmocka_unit_test(test_layers__shadowed_lists_every_losing_value),
		cmocka_unit_test(test_layers__sources_name_file_and_line_or_the_layer),
		cmocka_unit_test(test_layers__note_comes_from_the_spec_entry),
		cmocka_unit_test(test_layers__default_is_the_spec_value_even_when_shadowed),
		cmocka_unit_test(test_layers__later_inherit_file_wins_and_shadows_the_earlier),
		cmocka_unit_test(test_host__only_allowlisted_names_are_passed_through),
		cmocka_unit_test(test_host__pass_adds_a_name_to_the_allowlist),
		cmocka_unit_test(test_host__an_empty_listed_value_is_not_forwarded),
		cmocka_unit_test(test_host__prefixed_names_are_forwarded_when_non_empty),
		cmocka_unit_test(test_host__pass_drops_an_empty_value_as_the_launcher_does),
		cmocka_unit_test(test_mode_set__runner_set_replaces_image_but_loses_to_host_and_cli),
		cmocka_unit_test(test_mode_set__backend_set_beats_the_config_and_loses_to_override),
		cmocka_unit_test(test_export_false__parameter_is_not_in_the_environment),
		cmocka_unit_test(test_export_false__a_layer_setting_the_parameter_exports_it),
		cmocka_unit_test(test_override__unset_removes_the_variable_from_every_layer),
		cmocka_unit_test(test_override__dropping_an_override_restores_the_resolved_value),
		cmocka_unit_test(test_override__value_is_verbatim_bytes),
		cmocka_unit_test(test_flags__managed_flags_alone_make_the_value),
		cmocka_unit_test(test_flags__override_is_the_whole_value_verbatim),
		cmocka_unit_test(test_flags__config_owned_xla_flags_skips_managed_defaults),
		cmocka_unit_test(test_flags__config_owned_flags_still_get_the_append),
		cmocka_unit_test(test_flags__inherited_base_then_managed_so_managed_wins),
		cmocka_unit_test(test_flags__inherited_base_is_cli_over_host_over_image),
		cmocka_unit_test(test_flags__append_from_is_appended_last_and_wins),
		cmocka_unit_test(test_flags__append_from_any_layer),
		cmocka_unit_test(test_flags__append_variable_is_consumed_not_exported),
		cmocka_unit_test(test_flags__no_parts_and_no_layer_leaves_it_unset),
		cmocka_unit_test(test_flags__a_layer_setting_it_empty_keeps_it_set_and_empty),
		cmocka_unit_test(test_flags__flags_with_nothing_managed_are_the_inherited_value),
		cmocka_unit_test(test_flags__flag_when_condition_adds_the_dump_flag),
		cmocka_unit_test(test_templates__reference_and_default_forms),
		cmocka_unit_test(test_templates__indices_follow_an_overridden_gpus_per_node),
		cmocka_unit_test(test_templates__see_the_final_value_including_config),
		cmocka_unit_test(test_templates__overriding_the_autotune_parameter_changes_managed_flags),
		cmocka_unit_test(test_templates__entries_read_the_environment_at_their_line),
		cmocka_unit_test(test_templates__resolve_all_reports_a_cycle),
		cmocka_unit_test(test_conditions__integer_comparisons),
		cmocka_unit_test(test_conditions__text_equality_and_logic),
		cmocka_unit_test(test_conditions__unset_names_read_as_empty_text),
		cmocka_unit_test(test_conditions__see_final_values_of_any_layer),
		cmocka_unit_test(test_arch__gated_entries_apply_only_in_their_arches),
		cmocka_unit_test(test_arch__unknown_arch_is_enoent),
		cmocka_unit_test(test_config__expansion_sees_inherited_runner_override_and_earlier_keys),
		cmocka_unit_test(test_config__expansion_does_not_see_backend_defaults),
		cmocka_unit_test(test_config__backend_name_set_by_cli_is_seen),
		cmocka_unit_test(test_config__a_key_extends_its_own_inherited_value),
		cmocka_unit_test(test_secret__value_redacted_in_shadowed_and_explain),
		cmocka_unit_test(test_secret__value_built_from_a_secret_is_secret),
		cmocka_unit_test(test_secret__naming_an_unset_secret_keeps_a_value_plain),
		cmocka_unit_test(test_world__bad_env_argument_fails_the_load),
		cmocka_unit_test(test_world__missing_inherit_file_fails_the_load),
		/* last: under ASan a failure here aborts the binary */
		cmocka_unit_test(test_snapshot__outlives_its_world_and_overrides),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Views of SPEC 6.3 over hand-built snapshots: exact bytes, omissions,
 * redaction, and env.sh sourced by real shells. */
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
#include <openssl/evp.h>

#include "run_record.h"
#include "snapshot.h"
#include "view.h"

#define V(lit) (lit), sizeof(lit) - 1

static int var_cmp(const void *a, const void *b)
{
	const struct snap_var *x = a, *y = b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->name, y->name, n);

	if (c)
		return c;
	return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

static struct snapshot *snap_new(void)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	atomic_init(&s->refs, 1);
	s->arena = arena_new();
	assert_non_null(s->arena);
	s->backend = arena_strdup(s->arena, "maxtext");
	s->arch = arena_strdup(s->arena, "gfx950");
	return s;
}

/* Appends a set, exported variable; the pointer is valid until the next
 * add. value NULL makes it unset. */
static struct snap_var *add(struct snapshot *s, const char *name,
			    const char *value, size_t len)
{
	struct snap_var *v;

	s->vars = realloc(s->vars, (s->nvars + 1) * sizeof(*s->vars));
	assert_non_null(s->vars);
	v = &s->vars[s->nvars++];
	memset(v, 0, sizeof(*v));
	v->name = arena_strdup(s->arena, name);
	v->name_len = strlen(name);
	if (value) {
		v->value = arena_strndup(s->arena, value, len);
		v->value_len = len;
		v->set = v->exported = true;
		v->layer = LAYER_BACKEND;
	}
	return v;
}

static const char *astr(struct snapshot *s, const char *str)
{
	return arena_strdup(s->arena, str);
}

static void snap_finish(struct snapshot *s)
{
	size_t i;

	if (s->nvars)
		qsort(s->vars, s->nvars, sizeof(*s->vars), var_cmp);
	for (i = 0; i < s->nvars; i++) {
		s->nset += s->vars[i].set;
		if (s->vars[i].set && s->vars[i].exported && s->vars[i].secret)
			s->secret_in_views = true;
	}
}

static void render(const struct snapshot *s, enum view_kind k, struct strbuf *out)
{
	sb_reset(out);
	assert_int_equal(view_render(s, k, out), 0);
}

static void assert_bytes(const struct strbuf *got, const char *want, size_t len)
{
	if (got->len != len || memcmp(sb_str(got), want, len) != 0) {
		fprintf(stderr, "--- want (%zu bytes)\n%.*s\n--- got (%zu bytes)\n%.*s\n",
			len, (int)len, want, got->len, (int)got->len, sb_str(got));
		fail();
	}
}

/* The tricky values every export view must carry (or omit) exactly. */
static struct snapshot *tricky(void)
{
	struct snapshot *s = snap_new();
	struct snap_var *v;

	add(s, "A_SPACE", V("a b"));
	add(s, "B_QUOTES", V("it's \"q\""));
	add(s, "C_DOLLAR", V("$HOME `x` \\ back\\"));
	add(s, "D_NEWLINE", V("line1\nline2"));
	add(s, "E_TRAIL", V("trail  "));
	add(s, "F_EMPTY", V(""));
	add(s, "G_BAD", V("x\xff" "y"));
	add(s, "I_CR", V("a\rb"));
	add(s, "J_UTF8", V("h\xc3\xa9llo \xe2\x9c\x93"));
	add(s, "K_LEAD", V("  lead"));
	add(s, "L_TAB", V("a\tb"));
	add(s, "M_CTRL", V("\x01"));
	add(s, "N_ENDNL", V("x\n"));
	add(s, "O_QUOTED", V("'wrapped'"));
	v = add(s, "P_PARAM", NULL, 0);
	v->def = astr(s, "4");
	v = add(s, "Q_CONSUMED", V("--x=1"));
	v->exported = false;
	v = add(s, "Z_SECRET", V("s3cr3t"));
	v->secret = true;
	snap_finish(s);
	return s;
}

static const char tricky_env_file[] =
	"# primus-envfs maxtext/gfx950 env_file\n"
	"A_SPACE=a b\n"
	"B_QUOTES=it's \"q\"\n"
	"C_DOLLAR=$HOME `x` \\ back\\\n"
	"# D_NEWLINE omitted: value contains a newline\n"
	"E_TRAIL=trail  \n"
	"F_EMPTY=\n"
	"# G_BAD omitted: value is not valid UTF-8\n"
	"# I_CR omitted: value contains a carriage return\n"
	"J_UTF8=h\xc3\xa9llo \xe2\x9c\x93\n"
	"K_LEAD=  lead\n"
	"L_TAB=a\tb\n"
	"M_CTRL=\x01\n"
	"# N_ENDNL omitted: value contains a newline\n"
	"O_QUOTED='wrapped'\n"
	"Z_SECRET=s3cr3t\n";

static const char tricky_environ[] =
	"A_SPACE=a b\0"
	"B_QUOTES=it's \"q\"\0"
	"C_DOLLAR=$HOME `x` \\ back\\\0"
	"D_NEWLINE=line1\nline2\0"
	"E_TRAIL=trail  \0"
	"F_EMPTY=\0"
	"G_BAD=x\xff" "y\0"
	"I_CR=a\rb\0"
	"J_UTF8=h\xc3\xa9llo \xe2\x9c\x93\0"
	"K_LEAD=  lead\0"
	"L_TAB=a\tb\0"
	"M_CTRL=\x01\0"
	"N_ENDNL=x\n\0"
	"O_QUOTED='wrapped'\0"
	"Z_SECRET=s3cr3t\0";

static const char tricky_sh[] =
	"export A_SPACE='a b'\n"
	"export B_QUOTES='it'\\''s \"q\"'\n"
	"export C_DOLLAR='$HOME `x` \\ back\\'\n"
	"export D_NEWLINE='line1\nline2'\n"
	"export E_TRAIL='trail  '\n"
	"export F_EMPTY=''\n"
	"export G_BAD='x\xff" "y'\n"
	"export I_CR='a\rb'\n"
	"export J_UTF8='h\xc3\xa9llo \xe2\x9c\x93'\n"
	"export K_LEAD='  lead'\n"
	"export L_TAB='a\tb'\n"
	"export M_CTRL='\x01'\n"
	"export N_ENDNL='x\n'\n"
	"export O_QUOTED=''\\''wrapped'\\'''\n"
	"export Z_SECRET='s3cr3t'\n";

static const char tricky_json[] =
	"{\n"
	"  \"A_SPACE\": \"a b\",\n"
	"  \"B_QUOTES\": \"it's \\\"q\\\"\",\n"
	"  \"C_DOLLAR\": \"$HOME `x` \\\\ back\\\\\",\n"
	"  \"D_NEWLINE\": \"line1\\nline2\",\n"
	"  \"E_TRAIL\": \"trail  \",\n"
	"  \"F_EMPTY\": \"\",\n"
	"  \"G_BAD\": \"x\\u00ffy\",\n"
	"  \"I_CR\": \"a\\rb\",\n"
	"  \"J_UTF8\": \"h\xc3\xa9llo \xe2\x9c\x93\",\n"
	"  \"K_LEAD\": \"  lead\",\n"
	"  \"L_TAB\": \"a\\tb\",\n"
	"  \"M_CTRL\": \"\\u0001\",\n"
	"  \"N_ENDNL\": \"x\\n\",\n"
	"  \"O_QUOTED\": \"'wrapped'\",\n"
	"  \"Z_SECRET\": \"s3cr3t\"\n"
	"}\n";

/* docker-compose 1.29's dialect (python-dotenv 0.21): single quotes keep
 * everything but \\ and \', which are escaped; a carriage return would
 * read back as a newline and non-UTF-8 would stop compose. */
static const char tricky_compose[] =
	"# primus-envfs maxtext/gfx950 compose.env\n"
	"A_SPACE='a b'\n"
	"B_QUOTES='it\\'s \"q\"'\n"
	"C_DOLLAR=$HOME `x` \\ back\\\n"
	"D_NEWLINE='line1\nline2'\n"
	"E_TRAIL='trail  '\n"
	"F_EMPTY=''\n"
	"# G_BAD omitted: value is not valid UTF-8\n"
	"# I_CR omitted: value contains a carriage return (compose reads it as a newline)\n"
	"J_UTF8='h\xc3\xa9llo \xe2\x9c\x93'\n"
	"K_LEAD='  lead'\n"
	"L_TAB='a\tb'\n"
	"M_CTRL='\x01'\n"
	"N_ENDNL='x\n'\n"
	"O_QUOTED='\\'wrapped\\''\n"
	"Z_SECRET='s3cr3t'\n";

static void test_view__compose_single_quotes_values_and_omits_what_compose_alters(void **state)
{
	struct snapshot *s = tricky();
	struct strbuf out = STRBUF_INIT;

	(void)state;
	render(s, VIEW_COMPOSE, &out);
	assert_bytes(&out, V(tricky_compose));
	sb_release(&out);
	snapshot_unref(s);
}

/* python-dotenv 0.21 expands ${NAME} and ${NAME:-d} in every value, quoted
 * or not; a lone $, $NAME, ${ without its } and ${A:x} stay as written. A
 * value ending in a backslash cannot be single-quoted (dotenv would read
 * the closing quote as escaped). */
static void test_view__compose_omits_values_dotenv_would_expand(void **state)
{
	struct snapshot *s = snap_new();
	struct strbuf out = STRBUF_INIT;
	static const char want[] =
		"# primus-envfs maxtext/gfx950 compose.env\n"
		"A='$HOME $ $$'\n"
		"B='${A'\n"
		"C='${A:x}'\n"
		"# D omitted: value contains ${...}, which docker-compose 1.29 expands\n"
		"# E omitted: value contains ${...}, which docker-compose 1.29 expands\n"
		"# F omitted: value contains ${...}, which docker-compose 1.29 expands\n"
		"# G omitted: value contains ${...}, which docker-compose 1.29 expands\n"
		"# H.X omitted: name cannot be written in a compose env file\n"
		"I=a\\b\\\n"
		"# J omitted: value ends with a backslash, which docker-compose 1.29 cannot read back\n"
		"# K omitted: value ends with a backslash, which docker-compose 1.29 cannot read back\n"
		"L='mid\\\\dle'\n";

	(void)state;
	add(s, "A", V("$HOME $ $$"));
	add(s, "B", V("${A"));
	add(s, "C", V("${A:x}"));
	add(s, "D", V("x${A}y"));
	add(s, "E", V("${A:-d}"));
	add(s, "F", V("${}"));
	add(s, "G", V("${A-x}"));
	add(s, "H", V("1")); /* renamed below: a name a shell cannot hold */
	s->vars[s->nvars - 1].name = astr(s, "H.X");
	s->vars[s->nvars - 1].name_len = 3;
	/* Ending in a backslash: unquoted where dotenv keeps it as it is. */
	add(s, "I", V("a\\b\\"));
	add(s, "J", V(" lead\\"));
	add(s, "K", V("x #y\\"));
	add(s, "L", V("mid\\dle"));
	snap_finish(s);
	render(s, VIEW_COMPOSE, &out);
	assert_bytes(&out, V(want));
	sb_release(&out);
	snapshot_unref(s);
}

static void test_view__env_file_keeps_literal_values_and_omits_what_docker_cannot_carry(void **state)
{
	struct snapshot *s = tricky();
	struct strbuf out = STRBUF_INIT;

	(void)state;
	render(s, VIEW_ENV_FILE, &out);
	assert_bytes(&out, V(tricky_env_file));
	sb_release(&out);
	snapshot_unref(s);
}

static void test_view__environ_holds_every_exported_value_exactly(void **state)
{
	struct snapshot *s = tricky();
	struct strbuf out = STRBUF_INIT;

	(void)state;
	render(s, VIEW_ENVIRON, &out);
	assert_bytes(&out, V(tricky_environ));
	sb_release(&out);
	snapshot_unref(s);
}

static void test_view__sh_single_quotes_every_value(void **state)
{
	struct snapshot *s = tricky();
	struct strbuf out = STRBUF_INIT;

	(void)state;
	render(s, VIEW_SH, &out);
	assert_bytes(&out, V(tricky_sh));
	sb_release(&out);
	snapshot_unref(s);
}

/* A real JSON parser agrees, where python3 is at hand. */
static void json_parses(const struct strbuf *json)
{
	char path[] = "/tmp/envfs-test-json-XXXXXX";
	struct strbuf cmd = STRBUF_INIT;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, json->buf, json->len), (ssize_t)json->len);
	close(fd);
	if (system("command -v python3 >/dev/null 2>&1") == 0) {
		sb_addf(&cmd, "python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); "
			"assert d[\"D_NEWLINE\"] == \"line1\\nline2\" and "
			"d[\"G_BAD\"] == \"x\\u00ffy\" and len(d) == 15, d' %s", path);
		assert_int_equal(system(sb_str(&cmd)), 0);
	}
	unlink(path);
	sb_release(&cmd);
}

static void test_view__json_escapes_controls_and_invalid_utf8(void **state)
{
	struct snapshot *s = tricky();
	struct strbuf out = STRBUF_INIT;

	(void)state;
	render(s, VIEW_JSON, &out);
	assert_bytes(&out, V(tricky_json));
	json_parses(&out);
	sb_release(&out);
	snapshot_unref(s);
}

static void test_view__json_of_nothing_is_an_empty_object(void **state)
{
	struct snapshot *s = snap_new();
	struct strbuf out = STRBUF_INIT;

	(void)state;
	snap_finish(s);
	render(s, VIEW_JSON, &out);
	assert_bytes(&out, V("{}\n"));
	render(s, VIEW_ENVIRON, &out);
	assert_int_equal(out.len, 0);
	render(s, VIEW_SH, &out);
	assert_int_equal(out.len, 0);
	sb_release(&out);
	snapshot_unref(s);
}

/* Reads the whole output of cmd. */
static void run(const char *cmd, struct strbuf *out)
{
	char buf[8192];
	size_t n;
	FILE *p = popen(cmd, "r");

	assert_non_null(p);
	sb_reset(out);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		assert_int_equal(sb_add(out, buf, n), 0);
	assert_int_equal(pclose(p), 0);
}

static void roundtrip_in(const char *shell, const struct snapshot *s)
{
	struct strbuf sh = STRBUF_INIT, cmd = STRBUF_INIT, got = STRBUF_INIT;
	char path[] = "/tmp/envfs-test-view-XXXXXX";
	int fd = mkstemp(path);
	size_t i;

	assert_true(fd >= 0);
	render(s, VIEW_SH, &sh);
	assert_int_equal(write(fd, sh.buf, sh.len), (ssize_t)sh.len);
	close(fd);
	for (i = 0; i < s->nvars; i++) {
		const struct snap_var *v = &s->vars[i];

		if (!v->set || !v->exported)
			continue;
		sb_reset(&cmd);
		assert_int_equal(sb_addf(&cmd, "%s -c '. %s; printf %%s \"$%s\"'",
					 shell, path, v->name), 0);
		run(sb_str(&cmd), &got);
		if (got.len != v->value_len || memcmp(sb_str(&got), v->value, got.len)) {
			fprintf(stderr, "%s: %s: got %zu bytes, want %zu\n", shell,
				v->name, got.len, (size_t)v->value_len);
			fail();
		}
	}
	/* A variable that is not exported must not leak in. */
	sb_reset(&cmd);
	assert_int_equal(sb_addf(&cmd, "%s -c '. %s; printf %%s \"${Q_CONSUMED-unset}\"'",
				 shell, path), 0);
	run(sb_str(&cmd), &got);
	assert_bytes(&got, V("unset"));
	unlink(path);
	sb_release(&sh);
	sb_release(&cmd);
	sb_release(&got);
}

static void test_view__env_sh_sourced_reproduces_every_value(void **state)
{
	struct snapshot *s = tricky();
	struct snap_var *v;
	static const char *const shells[] = { "sh", "bash", "dash", "zsh" };
	char *long_value = malloc(70000);
	size_t i;

	(void)state;
	assert_non_null(long_value);
	/* Long and quote-heavy, so the escaping is exercised at length too. */
	for (i = 0; i < 70000; i++)
		long_value[i] = "ab'\n\"$\\ "[i % 8];
	v = add(s, "H_LONG", long_value, 70000);
	(void)v;
	snap_finish(s);
	for (i = 0; i < sizeof(shells) / sizeof(shells[0]); i++) {
		struct strbuf which = STRBUF_INIT, got = STRBUF_INIT;

		sb_addf(&which, "command -v %s >/dev/null 2>&1 && echo yes || true", shells[i]);
		run(sb_str(&which), &got);
		if (got.len)
			roundtrip_in(shells[i], s);
		else
			fprintf(stderr, "note: %s not installed; env.sh not tried in it\n",
				shells[i]);
		sb_release(&which);
		sb_release(&got);
	}
	free(long_value);
	snapshot_unref(s);
}

/* The line limit is docker's scanner buffer: NAME=value without '\n'. */
static void test_view__env_file_omits_lines_over_65535_bytes(void **state)
{
	struct snapshot *s = snap_new();
	struct strbuf out = STRBUF_INIT, want = STRBUF_INIT;
	char *big = malloc(70000);

	(void)state;
	assert_non_null(big);
	memset(big, 'v', 70000);
	add(s, "FIT", big, 65535 - 4);       /* "FIT=" + value = 65535 */
	add(s, "OVER", big, 65535 - 4);      /* one byte longer name */
	add(s, "LONG", big, 70000);
	snap_finish(s);
	render(s, VIEW_ENV_FILE, &out);
	sb_adds(&want, "# primus-envfs maxtext/gfx950 env_file\nFIT=");
	sb_add(&want, big, 65535 - 4);
	sb_adds(&want, "\n# LONG omitted: line would exceed 65535 bytes\n"
		"# OVER omitted: line would exceed 65535 bytes\n");
	assert_bytes(&out, want.buf, want.len);

	/* environ and json carry it whole. */
	render(s, VIEW_ENVIRON, &out);
	assert_int_equal(out.len, (4 + 65531 + 1) + (5 + 70000 + 1) + (5 + 65531 + 1));
	render(s, VIEW_JSON, &out);
	assert_non_null(strstr(sb_str(&out), "\"LONG\": \"vvvv"));
	free(big);
	sb_release(&out);
	sb_release(&want);
	snapshot_unref(s);
}

static void test_view__env_file_omits_names_docker_would_misread(void **state)
{
	struct snapshot *s = snap_new();
	struct strbuf out = STRBUF_INIT;

	(void)state;
	add(s, "#HASH", V("1"));
	add(s, "a b", V("1"));
	add(s, "dotted.name", V("1"));
	add(s, "new\nline", V("1"));
	snap_finish(s);
	render(s, VIEW_ENV_FILE, &out);
	assert_bytes(&out, V("# primus-envfs maxtext/gfx950 env_file\n"
			     "# #HASH omitted: name cannot be written in an env-file\n"
			     "# a b omitted: name cannot be written in an env-file\n"
			     "dotted.name=1\n"
			     "# new\\x0aline omitted: name cannot be written in an env-file\n"));
	render(s, VIEW_SH, &out);
	assert_bytes(&out, V("# #HASH omitted: not a shell variable name\n"
			     "# a b omitted: not a shell variable name\n"
			     "# dotted.name omitted: not a shell variable name\n"
			     "# new\\x0aline omitted: not a shell variable name\n"));
	sb_release(&out);
	snapshot_unref(s);
}

/* The digest is readable by everyone: it hashes environ with each
 * secret's value replaced by <redacted>, never the value itself. */
static void test_view__digest_is_sha256_of_environ(void **state)
{
	static const char masked_tail[] = "Z_SECRET=<redacted>";
	struct snapshot *s = tricky();
	struct strbuf out = STRBUF_INIT, in = STRBUF_INIT;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;
	char hex[2 * EVP_MAX_MD_SIZE + 2];
	size_t keep = sizeof(tricky_environ) - 1 - sizeof("Z_SECRET=s3cr3t");

	(void)state;
	assert_int_equal(sb_add(&in, tricky_environ, keep), 0);
	assert_int_equal(sb_add(&in, masked_tail, sizeof(masked_tail)), 0);
	assert_int_equal(EVP_Digest(sb_str(&in), in.len, md, &n, EVP_sha256(), NULL), 1);
	sb_release(&in);
	assert_int_equal(n, 32);
	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[2 * n] = '\n';
	hex[2 * n + 1] = '\0';
	render(s, VIEW_DIGEST, &out);
	assert_bytes(&out, hex, 65);
	snapshot_unref(s);

	/* sha256 of nothing, for an empty directory. */
	s = snap_new();
	snap_finish(s);
	render(s, VIEW_DIGEST, &out);
	assert_bytes(&out, V("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"));
	sb_release(&out);
	snapshot_unref(s);
}

static struct snapshot *explain_snapshot(void)
{
	struct snapshot *s = snap_new();
	struct snap_var *v;
	struct snap_flag *f;

	v = add(s, "MASTER_PORT", V("1234"));
	v->layer = LAYER_RUNNER;
	v->source = astr(s, "specs/base.yaml:3");
	v->layers = astr(s, "runner");
	v->def = astr(s, "1234");
	v->note = astr(s, "rendezvous port");

	v = add(s, "HF_TOKEN", V("hf_abc"));
	v->secret = true;
	v->layer = LAYER_CLI;
	v->source = astr(s, "cli");
	v->layers = astr(s, "host cli");
	v->shadowed = astr(s, "host=leak\n");   /* as if the resolver slipped */
	v->def = astr(s, "hf_default");

	v = add(s, "XLA_FLAGS", V("--a=1 --b=2"));
	v->is_flags = true;
	v->source = astr(s, "specs/maxtext.yaml:10");
	v->layers = astr(s, "image backend");
	v->effective = astr(s, "--a=1\n--b=2\n");
	f = arena_alloc(s->arena, 2 * sizeof(*f));
	f[0] = (struct snap_flag){ astr(s, "--a"), astr(s, "--a=1"), LAYER_IMAGE, NULL };
	f[1] = (struct snap_flag){ astr(s, "--b"), astr(s, "--b=2"), LAYER_BACKEND, NULL };
	v->flags = f;
	v->nflags = 2;
	v->explain = astr(s, "XLA_FLAGS appended (managed defaults override inherited)\n");

	v = add(s, "XLA_FLAGS_APPEND", V("--c=3"));
	v->exported = false;
	v->layer = LAYER_CLI;
	v->source = astr(s, "cli");
	v->layers = astr(s, "cli");

	v = add(s, "XLA_GPU_AUTOTUNE_LEVEL", NULL, 0);
	v->def = astr(s, "4");
	v->note = astr(s, "at 0 fp8 MoE runs get NaN loss");

	v = add(s, "MULTI", V("one\ntwo\xff"));
	v->layer = LAYER_OVERRIDE;
	v->source = astr(s, "override");
	v->layers = astr(s, "backend override");
	v->shadowed = astr(s, "backend=old\n");

	snap_finish(s);
	assert_int_equal(diag_add(&s->diags, DC_CONFIG_VALUE_TYPED, "exp.yaml", 3, 5, "quote it"), 0);
	assert_int_equal(diag_add(&s->diags, DC_FLAG_REPEATED, NULL, 0, 0, "two\nlines"), 0);
	return s;
}

static const char explain_want[] =
	"# primus-envfs maxtext/gfx950 explain\n"
	"\n"
	"HF_TOKEN\n"
	"  value: <redacted>\n"
	"  layer: cli\n"
	"  source: cli\n"
	"  layers: host cli\n"
	"  shadowed: host=<redacted>\n"
	"  default: <redacted>\n"
	"\n"
	"MASTER_PORT\n"
	"  value: 1234\n"
	"  layer: runner\n"
	"  source: specs/base.yaml:3\n"
	"  layers: runner\n"
	"  default: 1234\n"
	"  note: rendezvous port\n"
	"\n"
	"MULTI\n"
	"  value: one\\ntwo\\xff\n"
	"  layer: override\n"
	"  source: override\n"
	"  layers: backend override\n"
	"  shadowed: backend=old\n"
	"\n"
	"XLA_FLAGS\n"
	"  value: --a=1 --b=2\n"
	"  layer: backend\n"
	"  source: specs/maxtext.yaml:10\n"
	"  layers: image backend\n"
	"  flag: --a=1 (image)\n"
	"  flag: --b=2 (backend)\n"
	"  XLA_FLAGS appended (managed defaults override inherited)\n"
	"\n"
	"XLA_FLAGS_APPEND\n"
	"  value: --c=3\n"
	"  layer: cli\n"
	"  source: cli\n"
	"  layers: cli\n"
	"  exported: no\n"
	"\n"
	"XLA_GPU_AUTOTUNE_LEVEL\n"
	"  value: (not set)\n"
	"  default: 4\n"
	"  note: at 0 fp8 MoE runs get NaN loss\n"
	"  exported: no\n"
	"\n"
	"diagnostics:\n"
	"  exp.yaml:3:5: warning: quote it [PE104]\n"
	"  info: two\\nlines [PE405]\n";

static void test_view__explain_shows_provenance_of_every_variable(void **state)
{
	struct snapshot *s = explain_snapshot();
	struct strbuf out = STRBUF_INIT;

	(void)state;
	render(s, VIEW_EXPLAIN, &out);
	assert_bytes(&out, V(explain_want));
	sb_release(&out);
	snapshot_unref(s);
}

static void test_view__explain_never_shows_a_secret(void **state)
{
	struct snapshot *s = tricky();
	struct strbuf out = STRBUF_INIT;

	(void)state;
	render(s, VIEW_EXPLAIN, &out);
	assert_null(strstr(sb_str(&out), "s3cr3t"));
	assert_non_null(strstr(sb_str(&out), "Z_SECRET\n  value: <redacted>\n"));
	assert_non_null(strstr(sb_str(&out), "P_PARAM\n  value: (not set)\n  default: 4\n"));
	assert_non_null(strstr(sb_str(&out), "diagnostics:\n  (none)\n"));
	snapshot_unref(s);

	s = explain_snapshot();
	render(s, VIEW_EXPLAIN, &out);
	assert_null(strstr(sb_str(&out), "hf_abc"));
	assert_null(strstr(sb_str(&out), "hf_default"));
	assert_null(strstr(sb_str(&out), "leak"));
	sb_release(&out);
	snapshot_unref(s);
}

static void test_view__secret_views_are_the_ones_carrying_values(void **state)
{
	struct snapshot *s = tricky(), *plain = snap_new();

	(void)state;
	snap_finish(plain);
	assert_true(s->secret_in_views);
	assert_true(view_is_secret(s, VIEW_ENV_FILE));
	assert_true(view_is_secret(s, VIEW_ENVIRON));
	assert_true(view_is_secret(s, VIEW_SH));
	assert_true(view_is_secret(s, VIEW_JSON));
	assert_true(view_is_secret(s, VIEW_COMPOSE));
	assert_false(view_is_secret(s, VIEW_EXPLAIN));
	assert_false(view_is_secret(s, VIEW_DIGEST));
	assert_false(view_is_secret(plain, VIEW_ENV_FILE));
	assert_false(view_is_secret(plain, VIEW_JSON));
	/* A kind the table does not know is secret: it fails closed. */
	assert_true(view_is_secret(s, VIEW_COUNT));
	snapshot_unref(s);
	snapshot_unref(plain);
}

static void test_view__names_map_both_ways(void **state)
{
	static const char *const files[] = { "env_file", "environ", "env.sh",
					     "env.json", "explain", "digest", "compose.env",
					     "record" };
	enum view_kind k;
	int i;

	(void)state;
	for (i = 0; i < VIEW_COUNT; i++) {
		assert_string_equal(view_file_name((enum view_kind)i), files[i]);
		assert_int_equal(view_from_name(files[i], &k), 0);
		assert_int_equal(k, i);
	}
	assert_int_equal(view_from_name("sh", &k), 0);
	assert_int_equal(k, VIEW_SH);
	assert_int_equal(view_from_name("json", &k), 0);
	assert_int_equal(k, VIEW_JSON);
	assert_int_equal(view_from_name("compose", &k), 0);
	assert_int_equal(k, VIEW_COMPOSE);
	assert_int_equal(view_from_name("yaml", &k), -EINVAL);
	assert_int_equal(view_from_name("", &k), -EINVAL);
	assert_null(view_file_name(VIEW_COUNT));
}

/* resolve's --format list comes from the view table: every view, its
 * format name mapping back to it, in view order. */
static void test_view__format_names_from_the_table(void **state)
{
	static const char *const want[] = { "env_file", "environ", "sh", "json", "explain",
					    "digest", "compose", "record" };
	const char *names[VIEW_COUNT + 1];
	enum view_kind k;
	int i;

	(void)state;
	view_format_names(names);
	for (i = 0; i < VIEW_COUNT; i++) {
		assert_string_equal(names[i], want[i]);
		assert_string_equal(view_format_name((enum view_kind)i), want[i]);
		assert_int_equal(view_from_name(names[i], &k), 0);
		assert_int_equal(k, i);
	}
	assert_null(names[VIEW_COUNT]);
	assert_null(view_format_name(VIEW_COUNT));
}

/* The one list of view names (the resolver asks it for variables that
 * can have no file): file names only, not the --format aliases. */
static void test_view__is_name_knows_every_file_name_and_nothing_else(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < VIEW_COUNT; i++)
		assert_true(view_is_name(view_file_name((enum view_kind)i)));
	assert_false(view_is_name("sh"));
	assert_false(view_is_name("json"));
	assert_false(view_is_name("compose"));
	assert_false(view_is_name("HOME"));
	assert_false(view_is_name(""));
	assert_false(view_is_name("env_file2"));
}

static void test_view__render_appends_to_what_out_holds(void **state)
{
	struct snapshot *s = snap_new();
	struct strbuf out = STRBUF_INIT;

	(void)state;
	add(s, "A", V("1"));
	snap_finish(s);
	sb_adds(&out, "prefix:");
	assert_int_equal(view_render(s, VIEW_ENVIRON, &out), 0);
	assert_bytes(&out, V("prefix:A=1\0"));
	assert_int_equal(view_render(s, VIEW_COUNT, &out), -EINVAL);
	assert_int_equal(out.len, 11);
	sb_release(&out);
	snapshot_unref(s);
}

static void test_snapshot__find_uses_byte_order_then_length(void **state)
{
	struct snapshot *s = snap_new();
	const struct snap_var *v;

	(void)state;
	add(s, "AB", V("2"));
	add(s, "A", V("1"));
	add(s, "a", V("lower"));
	add(s, "B", V("3"));
	add(s, "A_", V("4"));
	snap_finish(s);
	assert_string_equal(s->vars[0].name, "A");
	assert_string_equal(s->vars[1].name, "AB");
	assert_string_equal(s->vars[2].name, "A_");
	assert_string_equal(s->vars[4].name, "a");
	v = snapshot_find(s, "A", 1);
	assert_non_null(v);
	assert_string_equal(v->value, "1");
	assert_string_equal(snapshot_find(s, "AB", 2)->value, "2");
	assert_string_equal(snapshot_find(s, "A_", 2)->value, "4");
	assert_string_equal(snapshot_find(s, "a", 1)->value, "lower");
	/* Length counts: a prefix of a name is not that name. */
	assert_string_equal(snapshot_find(s, "ABC", 2)->value, "2");
	assert_null(snapshot_find(s, "ABC", 3));
	assert_null(snapshot_find(s, "", 0));
	assert_null(snapshot_find(s, "Z", 1));
	assert_null(snapshot_find(NULL, "A", 1));
	snapshot_unref(s);
}

static void test_snapshot__last_unref_frees(void **state)
{
	struct snapshot *s = tricky();

	(void)state;
	assert_ptr_equal(snapshot_ref(s), s);
	assert_int_equal(atomic_load(&s->refs), 2);
	assert_int_equal(diag_add(&s->diags, DC_YAML_SYNTAX, "f", 1, 0, "x"), 0);
	snapshot_unref(s);
	assert_int_equal(atomic_load(&s->refs), 1);
	snapshot_unref(s);      /* frees; ASan checks nothing leaks */
	snapshot_unref(NULL);
	assert_null(snapshot_ref(NULL));
}

/* diff's text needs no directory digest: RUN_RECORD_NO_DIGEST leaves it
 * out and changes nothing else of the record. */
static void test_view__record_doc_without_digest_is_the_same_record(void **state)
{
	struct snapshot *s = tricky();
	struct rr_doc *with = NULL, *without = NULL;
	struct strbuf dig = STRBUF_INIT;
	size_t k;

	(void)state;
	assert_int_equal(rr_doc_from_snapshot(s, RUN_RECORD_SECRET_VALUES, &with), 0);
	assert_int_equal(rr_doc_from_snapshot(s, RUN_RECORD_SECRET_VALUES | RUN_RECORD_NO_DIGEST,
					      &without), 0);
	render(s, VIEW_DIGEST, &dig);
	assert_non_null(with->digest);
	assert_int_equal(strlen(with->digest) + 1, dig.len);
	assert_memory_equal(with->digest, sb_str(&dig), dig.len - 1);
	assert_null(without->digest);
	assert_string_equal(with->backend, without->backend);
	assert_string_equal(with->arch, without->arch);
	assert_int_equal(with->nvars, without->nvars);
	assert_int_equal(with->ndiags, without->ndiags);
	for (k = 0; k < with->nvars; k++) {
		assert_string_equal(with->vars[k].name, without->vars[k].name);
		assert_int_equal(with->vars[k].value_len, without->vars[k].value_len);
		assert_int_equal(with->vars[k].value == NULL, without->vars[k].value == NULL);
		if (with->vars[k].value)
			assert_memory_equal(with->vars[k].value, without->vars[k].value,
					    with->vars[k].value_len);
	}
	rr_doc_free(with);
	rr_doc_free(without);
	sb_release(&dig);
	snapshot_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view__record_doc_without_digest_is_the_same_record),
		cmocka_unit_test(test_view__env_file_keeps_literal_values_and_omits_what_docker_cannot_carry),
		cmocka_unit_test(test_view__environ_holds_every_exported_value_exactly),
		cmocka_unit_test(test_view__sh_single_quotes_every_value),
		cmocka_unit_test(test_view__json_escapes_controls_and_invalid_utf8),
		cmocka_unit_test(test_view__json_of_nothing_is_an_empty_object),
		cmocka_unit_test(test_view__env_sh_sourced_reproduces_every_value),
		cmocka_unit_test(test_view__env_file_omits_lines_over_65535_bytes),
		cmocka_unit_test(test_view__env_file_omits_names_docker_would_misread),
		cmocka_unit_test(test_view__digest_is_sha256_of_environ),
		cmocka_unit_test(test_view__explain_shows_provenance_of_every_variable),
		cmocka_unit_test(test_view__explain_never_shows_a_secret),
		cmocka_unit_test(test_view__secret_views_are_the_ones_carrying_values),
		cmocka_unit_test(test_view__names_map_both_ways),
		cmocka_unit_test(test_view__format_names_from_the_table),
		cmocka_unit_test(test_view__is_name_knows_every_file_name_and_nothing_else),
		cmocka_unit_test(test_view__compose_single_quotes_values_and_omits_what_compose_alters),
		cmocka_unit_test(test_view__compose_omits_values_dotenv_would_expand),
		cmocka_unit_test(test_view__render_appends_to_what_out_holds),
		cmocka_unit_test(test_snapshot__find_uses_byte_order_then_length),
		cmocka_unit_test(test_snapshot__last_unref_frees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* statefile: any value round-trips; bad files are refused whole, with a
 * place; saves are atomic and private. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "statefile.h"
#include "yaml_tree.h"

static void put(struct override_set *ov, const char *name, const char *value, size_t len)
{
	assert_int_equal(override_set_put(ov, "maxtext", "gfx950", name, value, len), 0);
}

/* Renders ov and loads it back into *back. */
static void round_trip(const struct override_set *ov, struct override_set *back)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(statefile_render(ov, &sb), 0);
	assert_int_equal(statefile_load_buffer("s.yaml", sb.buf, sb.len, back, &d), 0);
	assert_int_equal(d.n, 0);
	sb_release(&sb);
}

static void assert_value(const struct override_set *ov, const char *name,
			 const char *value, size_t len)
{
	const struct override *o = override_set_find(ov, "maxtext", "gfx950", name);

	assert_non_null(o);
	assert_non_null(o->value);
	assert_int_equal(o->value_len, len);
	assert_memory_equal(o->value, value, len);
}

/* The one diagnostic of a refused document, formatted. */
static const char *refused(const char *text)
{
	static char msg[512];
	struct override_set ov = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf sb = STRBUF_INIT;

	put(&ov, "KEEP", "k", 1);
	assert_int_equal(statefile_load_buffer("s.yaml", text, strlen(text), &ov, &d), -EINVAL);
	assert_int_equal(ov.n, 1);            /* untouched */
	assert_true(d.n >= 1);
	assert_int_equal(diag_format(&d.v[0], &sb), 0);
	snprintf(msg, sizeof(msg), "%s", sb_str(&sb));
	sb_release(&sb);
	diag_list_release(&d);
	override_set_release(&ov);
	return msg;
}

static void assert_prefix(const char *s, const char *prefix)
{
	if (strncmp(s, prefix, strlen(prefix)))
		fail_msg("\"%s\" does not start with \"%s\"", s, prefix);
}

static void test_statefile__every_escaped_value_round_trips(void **state)
{
	static const char *const values[] = {
		"", "5", "  lead and trail  ", "q\"uote\\back", "tab\there\nnew\r\x01\x1f\x7f",
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",        /* é € 😀 */
		"\xc2\x80\xc2\x85\xc2\x9f\xc2\xa0",                  /* C1, NEL, nbsp */
		"\xe2\x80\xa8\xe2\x80\xa9\xef\xbb\xbf\xef\xbf\xbe",  /* LS PS BOM U+FFFE */
		"--xla_gpu_enable_command_buffer='' --a=\"b\"", "#not a comment", "- dash", "~",
		"null", "yes", "0x1F", "{a: b}", "[1, 2]", "&anchor *alias", "%TAG", "'",
	};
	struct override_set ov = { 0 }, back = { 0 };
	char name[16];
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(values) / sizeof(values[0]); k++) {
		snprintf(name, sizeof(name), "V%zu", k);
		put(&ov, name, values[k], strlen(values[k]));
	}
	round_trip(&ov, &back);
	assert_int_equal(back.n, ov.n);
	for (k = 0; k < sizeof(values) / sizeof(values[0]); k++) {
		snprintf(name, sizeof(name), "V%zu", k);
		assert_value(&back, name, values[k], strlen(values[k]));
	}
	override_set_release(&ov);
	override_set_release(&back);
}

static void test_statefile__any_byte_but_nul_round_trips_as_value_hex(void **state)
{
	struct override_set ov = { 0 }, back = { 0 };
	struct strbuf sb = STRBUF_INIT;
	char all[255];
	int k;

	(void)state;
	for (k = 0; k < 255; k++)
		all[k] = (char)(k + 1);
	put(&ov, "ALL", all, sizeof(all));
	put(&ov, "LATIN1", "caf\xe9", 4);
	assert_int_equal(statefile_render(&ov, &sb), 0);
	assert_non_null(strstr(sb_str(&sb), "value_hex: \"636166e9\""));
	round_trip(&ov, &back);
	assert_value(&back, "ALL", all, sizeof(all));
	assert_value(&back, "LATIN1", "caf\xe9", 4);
	sb_release(&sb);
	override_set_release(&ov);
	override_set_release(&back);
}

static void test_statefile__unsets_round_trip_and_output_is_sorted(void **state)
{
	struct override_set ov = { 0 }, back = { 0 };
	struct strbuf sb = STRBUF_INIT;
	const char *text, *a, *b, *c;

	(void)state;
	assert_int_equal(override_set_put(&ov, "torch_fl", "cuda", "B", "1", 1), 0);
	assert_int_equal(override_set_put(&ov, "maxtext", "gfx950", "Z", NULL, 0), 0);
	assert_int_equal(override_set_put(&ov, "maxtext", "gfx942", "A", "2", 1), 0);
	assert_int_equal(statefile_render(&ov, &sb), 0);
	text = sb_str(&sb);
	a = strstr(text, "\"gfx942\"");
	b = strstr(text, "\"gfx950\", name: \"Z\", unset: true}");
	c = strstr(text, "\"torch_fl\"");
	assert_true(a && b && c && a < b && b < c);
	round_trip(&ov, &back);
	assert_int_equal(back.n, 3);
	assert_non_null(override_set_find(&back, "maxtext", "gfx950", "Z"));
	assert_null(override_set_find(&back, "maxtext", "gfx950", "Z")->value);
	sb_release(&sb);
	override_set_release(&ov);
	override_set_release(&back);
}

static void test_statefile__empty_set_and_empty_file_load_as_nothing(void **state)
{
	struct override_set ov = { 0 }, back = { 0 };
	struct diag_list d = DIAG_LIST_INIT;

	(void)state;
	round_trip(&ov, &back);
	assert_int_equal(back.n, 0);
	assert_int_equal(statefile_load_buffer("s.yaml", "", 0, &back, &d), 0);
	assert_int_equal(back.n, 0);
	assert_int_equal(statefile_load("/nonexistent/dir/state.yaml", &back, &d), 0);
	assert_int_equal(back.n, 0);
	assert_int_equal(d.n, 0);
}

/* A --sync node's state says whose it is; it round-trips, and a bad one
 * is refused with its place. */
static void test_statefile__sync_owner_round_trips(void **state)
{
	struct override_set ov = { 0 }, back = { 0 };
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	put(&ov, "A", "1", 1);
	assert_non_null(ov.sync_run = strdup("job \"7\""));
	assert_non_null(ov.sync_node = strdup("node0"));
	assert_int_equal(statefile_render(&ov, &sb), 0);
	assert_non_null(strstr(sb_str(&sb), "\nsync: {run: \"job \\\"7\\\"\", node: \"node0\"}\n"));
	round_trip(&ov, &back);
	assert_string_equal(back.sync_run, "job \"7\"");
	assert_string_equal(back.sync_node, "node0");
	assert_value(&back, "A", "1", 1);
	assert_prefix(refused("version: 1\nsync: {run: r}\noverrides: []\n"), "s.yaml:2:");
	assert_prefix(refused("version: 1\nsync: [r, n]\noverrides: []\n"), "s.yaml:2:");
	assert_prefix(refused("version: 1\nsync: {run: r, node: n, x: 1}\noverrides: []\n"),
		      "s.yaml:2:");
	sb_release(&sb);
	override_set_release(&ov);
	override_set_release(&back);
}

static void test_statefile__bad_documents_are_refused_whole_with_their_place(void **state)
{
	(void)state;
	assert_prefix(refused("version: 1\noverrides:\n  - {backend: \"m\", arch: \"a\", "
			      "name: \"A\", value: \"x\"\n"), "s.yaml:4:");
	assert_prefix(refused("version: 1\noverrides:\n"
			      "  - {backend: m, arch: a, name: A, value: x}\n"
			      "  - {backend: m, arch: a, name: A=B, value: x}\n"), "s.yaml:4:");
	assert_prefix(refused("version: 1\noverrides:\n  - {backend: m, arch: a, name: a/b, "
			      "value: x}\n"), "s.yaml:3:");
	assert_prefix(refused("version: 1\noverrides:\n  - {backend: m, arch: a, name: A}\n"),
		      "s.yaml:3:");
	assert_prefix(refused("version: 1\noverrides:\n  - {backend: m, arch: a, name: A, "
			      "value: x, unset: true}\n"), "s.yaml:3:");
	assert_prefix(refused("version: 1\noverrides:\n  - {backend: m, arch: a, name: A, "
			      "unset: false}\n"), "s.yaml:3:");
	assert_prefix(refused("version: 1\noverrides:\n  - {backend: m, arch: a, name: A, "
			      "value_hex: \"6\"}\n"), "s.yaml:3:");
	assert_prefix(refused("version: 1\noverrides:\n  - {backend: m, arch: a, name: A, "
			      "value_hex: \"6100\"}\n"), "s.yaml:3:");
	assert_prefix(refused("version: 1\noverrides:\n  - {backend: m, arch: a, name: A, "
			      "value: x, colour: red}\n"), "s.yaml:3:");
	assert_prefix(refused("version: 1\noverrides:\n  - {backend: m, arch: a, name: A, value: x}\n"
			      "  - {backend: m, arch: a, name: A, value: y}\n"), "s.yaml:4:");
	assert_prefix(refused("version: 1\noverrides:\n  - {backend: ../x, arch: a, name: A, "
			      "value: x}\n"), "s.yaml:3:");
	assert_prefix(refused("version: 1\noverrides:\n  - [backend, m]\n"), "s.yaml:3:");
	assert_prefix(refused("version: 1\noverrides: {}\n"), "s.yaml:2:");
	assert_prefix(refused("overrides: []\n"), "s.yaml:1:");
	assert_prefix(refused("version: 2\noverrides: []\n"), "s.yaml:1:");
	assert_prefix(refused("version: 1\noverrides: []\nextra: 1\n"), "s.yaml:3:");
	assert_prefix(refused("- just a list\n"), "s.yaml:1:");
	assert_prefix(refused("version: 1\noverrides:\n  - {backend: m, arch: a, name: A, "
			      "value: x, private: maybe}\n"), "s.yaml:3:");
}

static void test_statefile__values_longer_than_the_limit_are_refused(void **state)
{
	static char text[STATEFILE_VALUE_MAX + 100];
	size_t n = STATEFILE_VALUE_MAX + 1;
	int len;

	(void)state;
	len = sprintf(text, "version: 1\noverrides:\n  - {backend: m, arch: a, name: A, value: \"");
	memset(text + len, 'x', n);
	strcpy(text + len + n, "\"}\n");
	assert_prefix(refused(text), "s.yaml:3:");
}

/* Past the bound of a local write (the mount refuses that one), a state
 * still renders and loads back: a node must hold what the run holds. */
static void test_statefile__a_state_past_the_write_bound_renders_and_loads_back(void **state)
{
	struct override_set ov = { 0 }, back = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf sb = STRBUF_INIT;
	static char big[STATEFILE_VALUE_MAX];
	const struct override *o;
	char name[8];
	int k;

	(void)state;
	memset(big, 'x', STATEFILE_VALUE_MAX);
	for (k = 0; k < 9; k++) {
		snprintf(name, sizeof(name), "B%d", k);
		put(&ov, name, big, STATEFILE_VALUE_MAX);
	}
	assert_int_equal(statefile_render(&ov, &sb), 0);
	assert_true(sb.len > STATEFILE_WRITE_MAX);
	assert_int_equal(statefile_load_buffer("s.yaml", sb.buf, sb.len, &back, &d), 0);
	assert_int_equal(back.n, 9);
	assert_non_null(o = override_set_find(&back, "maxtext", "gfx950", "B8"));
	assert_int_equal(o->value_len, STATEFILE_VALUE_MAX);
	sb_release(&sb);
	diag_list_release(&d);
	override_set_release(&back);
	override_set_release(&ov);
}

static void test_statefile__a_state_too_big_to_load_back_is_not_rendered(void **state)
{
	struct override_set ov = { 0 };
	struct strbuf sb = STRBUF_INIT;
	static char big[STATEFILE_VALUE_MAX];
	char name[16];
	size_t k;

	(void)state;
	memset(big, 'x', STATEFILE_VALUE_MAX);
	for (k = 0; k <= STATEFILE_LOAD_MAX / STATEFILE_VALUE_MAX; k++) {
		snprintf(name, sizeof(name), "B%zu", k);
		put(&ov, name, big, STATEFILE_VALUE_MAX);
	}
	assert_int_equal(statefile_render(&ov, &sb), -EFBIG);
	sb_release(&sb);
	override_set_release(&ov);
}

static void test_statefile__save_replaces_the_file_privately_and_leaves_no_temporary(void **state)
{
	char dir[] = "/tmp/envfs-statefile.XXXXXX", path[256];
	struct override_set ov = { 0 }, back = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct dirent *de;
	struct stat st;
	DIR *dh;
	int files = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.yaml", dir);
	put(&ov, "A", "one", 3);
	assert_int_equal(statefile_save(path, &ov), 0);
	put(&ov, "A", "two", 3);
	assert_int_equal(statefile_save(path, &ov), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(statefile_load(path, &back, &d), 0);
	assert_value(&back, "A", "two", 3);
	assert_non_null(dh = opendir(dir));
	while ((de = readdir(dh)))
		files += de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."));
	closedir(dh);
	assert_int_equal(files, 1);
	unlink(path);
	rmdir(dir);
	/* A directory that is gone: the error, and nothing written. */
	assert_int_equal(statefile_save(path, &ov), -ENOENT);
	override_set_release(&ov);
	override_set_release(&back);
}

/* A private override (made by a file created 0600, or moved from a
 * secret, issue 14.14) keeps its flag across a save and a load; a file
 * written before the flag existed loads as not private. */
static void test_statefile__private_round_trips_and_old_files_load(void **state)
{
	static const char old_file[] =
		"version: 1\noverrides:\n"
		"  - {backend: \"maxtext\", arch: \"gfx950\", name: \"A\", value: \"a\"}\n";
	static const char flagged[] =
		"version: 1\noverrides:\n"
		"  - {backend: \"maxtext\", arch: \"gfx950\", name: \"A\", value: \"a\", private: true}\n";
	struct override_set ov = { 0 }, back = { 0 }, old = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	put(&ov, "P", "secret", 6);
	put(&ov, "Q", "plain", 5);
	assert_int_equal(override_set_mark_private(&ov, "maxtext", "gfx950", "P", true), 0);
	/* A later value for the same file keeps it private. */
	put(&ov, "P", "secret2", 7);
	assert_int_equal(statefile_render(&ov, &sb), 0);
	assert_non_null(strstr(sb_str(&sb), "name: \"P\", value: \"secret2\", private: true}"));
	assert_non_null(strstr(sb_str(&sb), "name: \"Q\", value: \"plain\"}"));
	round_trip(&ov, &back);
	assert_true(override_set_find(&back, "maxtext", "gfx950", "P")->private);
	assert_false(override_set_find(&back, "maxtext", "gfx950", "Q")->private);
	assert_int_equal(statefile_load_buffer("s.yaml", old_file, strlen(old_file), &old, &d), 0);
	assert_false(override_set_find(&old, "maxtext", "gfx950", "A")->private);
	override_set_release(&old);
	assert_int_equal(statefile_load_buffer("s.yaml", flagged, strlen(flagged), &old, &d), 0);
	assert_true(override_set_find(&old, "maxtext", "gfx950", "A")->private);
	assert_int_equal(d.n, 0);
	assert_int_equal(override_set_mark_private(&ov, "maxtext", "gfx950", "NONE", true), -ENOENT);
	override_set_release(&old);
	override_set_release(&ov);
	override_set_release(&back);
	sb_release(&sb);
}

/* A pending create (--sync) is not the run's: --state leaves it out; one
 * over the run's unset leaves the unset in, with its own flag. */
static void test_statefile__pending_creates_are_left_out_but_not_the_unset_they_hide(void **state)
{
	struct override_stamp st = { .when_ms = 1000, .has_writer = true, .uid = 7, .pid = 8 };
	struct override_set ov = { 0 }, back = { 0 };
	struct strbuf sb = STRBUF_INIT;
	const char *text;

	(void)state;
	put(&ov, "NEW", "", 0);
	assert_int_equal(override_set_mark_pending(&ov, "maxtext", "gfx950", "NEW", true), 0);
	put(&ov, "GONE", "", 0);
	assert_int_equal(override_set_mark_private(&ov, "maxtext", "gfx950", "GONE", true), 0);
	assert_int_equal(override_set_mark_pending_over_unset(&ov, "maxtext", "gfx950", "GONE",
							      false, &st), 0);
	assert_int_equal(statefile_render(&ov, &sb), 0);
	text = sb_str(&sb);
	assert_null(strstr(text, "\"NEW\""));
	assert_non_null(strstr(text, "name: \"GONE\", unset: true}"));
	round_trip(&ov, &back);
	assert_int_equal(back.n, 1);
	assert_null(override_set_find(&back, "maxtext", "gfx950", "GONE")->value);
	assert_false(override_set_find(&back, "maxtext", "gfx950", "GONE")->private);
	/* A value written over it is the run's again (its first close). */
	put(&ov, "GONE", "v", 1);
	assert_false(override_set_find(&ov, "maxtext", "gfx950", "GONE")->over_unset);
	assert_int_equal(override_set_mark_pending_over_unset(&ov, "maxtext", "gfx950", "NONE",
							      false, &st), -ENOENT);
	override_set_release(&ov);
	override_set_release(&back);
	sb_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statefile__every_escaped_value_round_trips),
		cmocka_unit_test(test_statefile__private_round_trips_and_old_files_load),
		cmocka_unit_test(test_statefile__any_byte_but_nul_round_trips_as_value_hex),
		cmocka_unit_test(test_statefile__unsets_round_trip_and_output_is_sorted),
		cmocka_unit_test(test_statefile__pending_creates_are_left_out_but_not_the_unset_they_hide),
		cmocka_unit_test(test_statefile__empty_set_and_empty_file_load_as_nothing),
		cmocka_unit_test(test_statefile__bad_documents_are_refused_whole_with_their_place),
		cmocka_unit_test(test_statefile__values_longer_than_the_limit_are_refused),
		cmocka_unit_test(test_statefile__a_state_past_the_write_bound_renders_and_loads_back),
		cmocka_unit_test(test_statefile__a_state_too_big_to_load_back_is_not_rendered),
		cmocka_unit_test(test_statefile__sync_owner_round_trips),
		cmocka_unit_test(test_statefile__save_replaces_the_file_privately_and_leaves_no_temporary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

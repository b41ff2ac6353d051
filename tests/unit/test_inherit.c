/* --inherit files: docker env-file rules and NUL-separated environ dumps. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "inherit.h"
#include "strbuf.h"

#define V(lit) (lit), sizeof(lit) - 1

static char *fixture(const char *name)
{
	const char *dir = getenv("ENVFS_FIXTURES");
	struct strbuf sb = STRBUF_INIT;

	assert_non_null(dir);
	assert_int_equal(sb_addf(&sb, "%s/inherit/%s", dir, name), 0);
	return sb_detach(&sb, NULL);
}

static void assert_pair(const struct env_pair *p, const char *name,
			const char *value, size_t len, const char *source)
{
	assert_string_equal(p->name, name);
	assert_int_equal(p->value_len, len);
	assert_memory_equal(p->value, value, len);
	assert_int_equal(p->value[len], '\0');
	assert_string_equal(p->source, source);
}

static void assert_diag(const struct diag *d, enum diag_sev sev, const char *file,
			unsigned line, const char *needle)
{
	assert_int_equal(d->sev, sev);
	assert_string_equal(d->file, file);
	assert_int_equal(d->line, line);
	if (!strstr(d->msg, needle)) {
		fprintf(stderr, "message '%s' lacks '%s'\n", d->msg, needle);
		fail();
	}
}

static void test_inherit__env_file_follows_docker_rules(void **state)
{
	char *path = fixture("image.env");
	char *host[] = { "HOST_SET=from host", "HOST_SETX=no", "OTHER=1", NULL };
	struct env_list l = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf src = STRBUF_INIT;

	(void)state;
	assert_int_equal(inherit_load_file(path, host, &l, &d), 0);
	assert_int_equal(l.n, 9);
#define SRC(line) (sb_reset(&src), sb_addf(&src, "image:%s:%d", path, line), sb_str(&src))
	assert_pair(&l.v[0], "PATH", V("/usr/local/bin:/usr/bin"), SRC(2));
	/* Leading whitespace of the line goes, trailing stays in the value. */
	assert_pair(&l.v[1], "INDENTED", V("kept trailing  "), SRC(3));
	assert_pair(&l.v[2], "EMPTY", V(""), SRC(4));
	/* Docker removes no quotes. */
	assert_pair(&l.v[3], "QUOTED", V("\"not unquoted\""), SRC(5));
	assert_pair(&l.v[4], "EQ", V("a=b=c"), SRC(6));
	/* A bare name takes the host's value; HOST_MISSING is skipped. */
	assert_pair(&l.v[5], "HOST_SET", V("from host"), SRC(8));
	/* Docker takes a name without whitespace, and bash hands a name it
	 * cannot read on to the training process: kept, with a warning. */
	assert_pair(&l.v[6], "1BAD", V("x"), SRC(10));
	/* bufio.ScanLines drops the '\r' of a CRLF line ending. */
	assert_pair(&l.v[7], "CRLF", V("dos"), SRC(13));
	assert_pair(&l.v[8], "LAST", V("no newline at end"), SRC(15));
#undef SRC
	assert_int_equal(d.n, 3);
	assert_diag(&d.v[0], DIAG_WARNING, path, 10, "\"1BAD\" is not a shell variable name");
	assert_diag(&d.v[1], DIAG_ERROR, path, 11,
		    "holds whitespace at column 4 (it starts 'BAD'; the rest is not shown");
	assert_diag(&d.v[2], DIAG_ERROR, path, 12, "the line starts with '=': it names no variable");
	env_list_release(&l);
	diag_list_release(&d);
	sb_release(&src);
	free(path);
}

static void test_inherit__a_nul_byte_makes_it_an_environ_file(void **state)
{
	char *path = fixture("image.environ");
	char *host[] = { "NOEQ=host", NULL };
	struct env_list l = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf src = STRBUF_INIT;

	(void)state;
	assert_int_equal(inherit_load_file(path, host, &l, &d), 0);
	assert_int_equal(l.n, 4);
#define SRC(n) (sb_reset(&src), sb_addf(&src, "image:%s:%d", path, n), sb_str(&src))
	assert_pair(&l.v[0], "A", V("1"), SRC(1));
	assert_pair(&l.v[1], "B", V("two words"), SRC(2));
	/* Newlines are part of the value in an environ file. */
	assert_pair(&l.v[2], "C", V("multi\nline"), SRC(3));
	assert_pair(&l.v[3], "D", V(""), SRC(6));
#undef SRC
	/* No host lookup here: an environ entry without '=' is malformed. */
	assert_int_equal(d.n, 2);
	assert_diag(&d.v[0], DIAG_ERROR, path, 4, "entry 4");
	assert_diag(&d.v[1], DIAG_ERROR, path, 5, "entry 5");
	env_list_release(&l);
	diag_list_release(&d);
	sb_release(&src);
	free(path);
}

static void test_inherit__environ_without_final_nul_keeps_last_entry(void **state)
{
	struct env_list l = { 0 };
	struct diag_list d = DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(inherit_load_buffer("e", V("A=1\0\0B=\xff# x"), NULL, &l, &d), 0);
	assert_int_equal(l.n, 2);
	assert_pair(&l.v[0], "A", V("1"), "image:e:1");
	assert_pair(&l.v[1], "B", V("\xff# x"), "image:e:2");
	assert_int_equal(d.n, 0);
	env_list_release(&l);
	diag_list_release(&d);
}

static void test_inherit__env_file_edge_bytes(void **state)
{
	/* BOM on line 1, a no-break space (Go's unicode.IsSpace) before a name,
	 * a '\r' inside a value, a non-UTF-8 value, a comment after blanks. */
	static const char buf[] =
		"\xef\xbb\xbf" "FIRST=1\n"
		"\xc2\xa0" "NBSP=2\n"
		"CR=x\ry\r\n"
		"LATIN=caf\xe9\n"
		"   \t\n"
		"  # comment=1\n"
		"BARE\n"
		"#\n";
	struct env_list l = { 0 };
	struct diag_list d = DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(inherit_load_buffer("img.env", V(buf), NULL, &l, &d), 0);
	assert_int_equal(l.n, 4);
	assert_pair(&l.v[0], "FIRST", V("1"), "image:img.env:1");
	assert_pair(&l.v[1], "NBSP", V("2"), "image:img.env:2");
	assert_pair(&l.v[2], "CR", V("x\ry"), "image:img.env:3");
	/* Kept, since it is what the image holds, with a warning that docker
	 * itself would refuse such a file. */
	assert_pair(&l.v[3], "LATIN", V("caf\xe9"), "image:img.env:4");
	assert_int_equal(d.n, 1);
	assert_diag(&d.v[0], DIAG_WARNING, "img.env", 4, "not valid UTF-8");
	env_list_release(&l);
	diag_list_release(&d);
}

/* A line with no '=' may be a piece of a value (a secret wrapped onto the
 * next line, 'NAME: value' in YAML's style): its place, never its text. */
static void test_inherit__line_without_equals_is_not_quoted(void **state)
{
	struct env_list l = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	size_t k;

	(void)state;
	assert_int_equal(inherit_load_buffer("x", V("HF_TOKEN: hf_SEKRIT1\nab-SEKRIT2\n"
						    "9SEKRIT3\nOK=1\n"), NULL, &l, &d), 0);
	assert_int_equal(d.n, 3);
	assert_diag(&d.v[0], DIAG_ERROR, "x", 1, "no '=' and is no variable name (a byte no "
		    "name may hold at column 9)");
	assert_int_equal(d.v[0].col, 9);
	assert_diag(&d.v[1], DIAG_WARNING, "x", 2, "(a byte no name may hold at column 3)");
	assert_diag(&d.v[2], DIAG_WARNING, "x", 3, "(a byte no name may start with at column 1)");
	for (k = 0; k < d.n; k++)
		assert_null(strstr(d.v[k].msg, "SEKRIT"));
	diag_list_release(&d);
	env_list_release(&l);
}

static void test_inherit__bad_name_is_reported_with_unprintables_escaped(void **state)
{
	struct env_list l = { 0 };
	struct diag_list d = DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(inherit_load_buffer("x", V("OK=1\nA-B=2\nC\x01=3\nD\x01 E=4\n"), NULL, &l,
					     &d), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(d.n, 3);
	assert_diag(&d.v[0], DIAG_WARNING, "x", 2, "\"A-B\" is not a shell variable name");
	assert_diag(&d.v[1], DIAG_WARNING, "x", 3, "\"C\\x01\" is not a shell variable name");
	assert_diag(&d.v[2], DIAG_ERROR, "x", 4, "(it starts 'D\\x01'; the rest is not shown");
	env_list_release(&l);
	diag_list_release(&d);
}

static void test_inherit__empty_input_is_no_entries(void **state)
{
	struct env_list l = { 0 };
	struct diag_list d = DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(inherit_load_buffer("x", "", 0, NULL, &l, &d), 0);
	assert_int_equal(inherit_load_buffer("x", V("\n\n# only comments\n"), NULL, &l, &d), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(d.n, 0);
}

static void test_inherit__file_over_one_mib_is_an_error(void **state)
{
	char path[] = "/tmp/envfs-test-inherit-XXXXXX";
	int fd = mkstemp(path);
	struct env_list l = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	char *line = malloc(1024);
	int i;

	(void)state;
	assert_true(fd >= 0);
	assert_non_null(line);
	memset(line, 'v', 1023);
	line[1023] = '\n';
	memcpy(line, "A=", 2);
	for (i = 0; i < 1024; i++)
		assert_int_equal(write(fd, line, 1024), 1024);
	close(fd);
	/* Exactly 1 MiB loads. */
	assert_int_equal(inherit_load_file(path, NULL, &l, &d), 0);
	assert_int_equal(l.n, 1024);
	env_list_release(&l);
	assert_int_equal(d.n, 0);

	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "B=1\n", 4), 4);
	close(fd);
	assert_int_equal(inherit_load_file(path, NULL, &l, &d), -EFBIG);
	assert_int_equal(l.n, 0);
	assert_int_equal(d.n, 1);
	assert_diag(&d.v[0], DIAG_ERROR, path, 0, "larger than");
	unlink(path);
	free(line);
	env_list_release(&l);
	diag_list_release(&d);
}

static void test_inherit__missing_file_is_an_errno_with_a_diagnostic(void **state)
{
	struct env_list l = { 0 };
	struct diag_list d = DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(inherit_load_file("/nonexistent/envfs.env", NULL, &l, &d), -ENOENT);
	assert_int_equal(d.n, 1);
	assert_diag(&d.v[0], DIAG_ERROR, "/nonexistent/envfs.env", 0, "cannot read");
	assert_int_equal(inherit_load_file("/", NULL, &l, &d), -EINVAL);
	assert_int_equal(d.n, 2);
	assert_diag(&d.v[1], DIAG_ERROR, "/", 0, "not a regular file (a directory)");
	assert_int_equal(l.n, 0);
	diag_list_release(&d);
}

static void test_inherit__name_valid_is_the_posix_shape(void **state)
{
	(void)state;
	assert_true(env_name_valid("A", 1));
	assert_true(env_name_valid("_", 1));
	assert_true(env_name_valid("a_9", 3));
	assert_true(env_name_valid("XLA_FLAGS", 9));
	assert_true(env_name_valid("AB=1", 2));
	assert_false(env_name_valid("", 0));
	assert_false(env_name_valid("9A", 2));
	assert_false(env_name_valid("A-B", 3));
	assert_false(env_name_valid("A B", 3));
	assert_false(env_name_valid("A=", 2));
	assert_false(env_name_valid("\xc3\xa9", 2));
	assert_false(env_name_valid("A\0B", 3));
}

static void test_inherit__list_add_copies_everything(void **state)
{
	struct env_list l = { 0 };
	char name[] = "NAMEXX", value[] = "v\0w", src[] = "cli";
	int i;

	(void)state;
	assert_int_equal(env_list_add(&l, name, 4, value, 3, src), 0);
	name[0] = value[0] = src[0] = '!';
	assert_pair(&l.v[0], "NAME", V("v\0w"), "cli");
	assert_int_equal(env_list_add(&l, "E", 1, NULL, 0, NULL), 0);
	assert_int_equal(l.v[1].value_len, 0);
	assert_string_equal(l.v[1].value, "");
	assert_null(l.v[1].source);
	for (i = 0; i < 100; i++)
		assert_int_equal(env_list_add(&l, "X", 1, "1", 1, "s"), 0);
	assert_int_equal(l.n, 102);
	env_list_release(&l);
	assert_int_equal(l.n, 0);
	env_list_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inherit__env_file_follows_docker_rules),
		cmocka_unit_test(test_inherit__a_nul_byte_makes_it_an_environ_file),
		cmocka_unit_test(test_inherit__environ_without_final_nul_keeps_last_entry),
		cmocka_unit_test(test_inherit__env_file_edge_bytes),
		cmocka_unit_test(test_inherit__bad_name_is_reported_with_unprintables_escaped),
		cmocka_unit_test(test_inherit__line_without_equals_is_not_quoted),
		cmocka_unit_test(test_inherit__empty_input_is_no_entries),
		cmocka_unit_test(test_inherit__file_over_one_mib_is_an_error),
		cmocka_unit_test(test_inherit__missing_file_is_an_errno_with_a_diagnostic),
		cmocka_unit_test(test_inherit__name_valid_is_the_posix_shape),
		cmocka_unit_test(test_inherit__list_add_copies_everything),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

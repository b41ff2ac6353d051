/* infile: reading a whole input file. The bytes come back whole and
 * NUL-terminated, a file over the bound is -EFBIG (checked by size, and
 * by count when the size says nothing), and what is not a regular file
 * is refused before a byte is read. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "infile.h"

struct dir {
	char path[64];
	char file[96];
};

static int dir_setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	strcpy(d->path, "/tmp/test_infile.XXXXXX");
	if (!mkdtemp(d->path)) {
		free(d);
		return -1;
	}
	snprintf(d->file, sizeof(d->file), "%s/f", d->path);
	*state = d;
	return 0;
}

static int dir_teardown(void **state)
{
	struct dir *d = *state;

	unlink(d->file);
	rmdir(d->path);
	free(d);
	return 0;
}

static void put(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static void test_infile__reads_every_byte_nul_terminated(void **state)
{
	struct dir *d = *state;
	size_t n = 200000, i, len = 0;
	char *data = malloc(n), *buf = NULL;

	assert_non_null(data);
	/* larger than one read's step, with NULs inside */
	for (i = 0; i < n; i++)
		data[i] = (char)(i % 251);
	put(d->file, data, n);
	assert_int_equal(infile_read(d->file, n, &buf, &len), 0);
	assert_int_equal(len, n);
	assert_memory_equal(buf, data, n);
	assert_int_equal(buf[len], '\0');
	free(buf);
	free(data);
}

static void test_infile__empty_file_is_an_empty_string(void **state)
{
	struct dir *d = *state;
	char *buf = NULL;
	size_t len = 7;

	put(d->file, "", 0);
	assert_int_equal(infile_read(d->file, 10, &buf, &len), 0);
	assert_int_equal(len, 0);
	assert_non_null(buf);
	assert_string_equal(buf, "");
	free(buf);
}

static void test_infile__one_byte_over_the_bound_is_efbig(void **state)
{
	struct dir *d = *state;
	char *buf = NULL;
	size_t len = 0;

	put(d->file, "0123456789", 10);
	assert_int_equal(infile_read(d->file, 10, &buf, &len), 0);
	assert_int_equal(len, 10);
	assert_string_equal(buf, "0123456789");
	free(buf);
	buf = NULL;
	assert_int_equal(infile_read(d->file, 9, &buf, &len), -EFBIG);
	assert_null(buf);
}

static void test_infile__fd_without_a_size_is_bounded_by_count(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	int p[2];

	(void)state;
	/* a pipe's size says nothing: the bound holds by what was read */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "abcdef", 6), 6);
	assert_int_equal(close(p[1]), 0);
	assert_int_equal(infile_read_fd(p[0], 5, &buf, &len), -EFBIG);
	assert_null(buf);
	assert_int_equal(close(p[0]), 0);

	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "abcdef", 6), 6);
	assert_int_equal(close(p[1]), 0);
	assert_int_equal(infile_read_fd(p[0], 6, &buf, &len), 0);
	assert_int_equal(len, 6);
	assert_string_equal(buf, "abcdef");
	free(buf);
	assert_int_equal(close(p[0]), 0);
}

static void test_infile__fifo_and_directory_are_refused(void **state)
{
	struct dir *d = *state;
	char *buf = NULL;
	size_t len = 0;

	assert_int_equal(infile_read(d->path, 100, &buf, &len), -EINVAL);
	/* a FIFO with no writer would block an open or a read forever */
	assert_int_equal(mkfifo(d->file, 0600), 0);
	assert_int_equal(infile_read(d->file, 100, &buf, &len), -EINVAL);
	assert_null(buf);
}

static void test_infile__missing_file_is_enoent(void **state)
{
	struct dir *d = *state;
	char *buf = NULL;
	size_t len = 0;

	assert_int_equal(infile_read(d->file, 100, &buf, &len), -ENOENT);
	assert_null(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_infile__reads_every_byte_nul_terminated,
						dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_infile__empty_file_is_an_empty_string,
						dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_infile__one_byte_over_the_bound_is_efbig,
						dir_setup, dir_teardown),
		cmocka_unit_test(test_infile__fd_without_a_size_is_bounded_by_count),
		cmocka_unit_test_setup_teardown(test_infile__fifo_and_directory_are_refused,
						dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_infile__missing_file_is_enoent,
						dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

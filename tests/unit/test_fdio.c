/* fdio: a buffer reaches the descriptor whole, across the short writes
 * a full pipe makes, and a failed write says its errno. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fdio.h"

#define BIG (1u << 20)

struct drain {
	int fd;
	char *buf;
	size_t len;
};

static void *drain(void *arg)
{
	struct drain *d = arg;
	ssize_t r;

	while (d->len < BIG && (r = read(d->fd, d->buf + d->len, BIG - d->len)) > 0)
		d->len += (size_t)r;
	return NULL;
}

static void test_fdio__a_pipe_gets_every_byte_in_order(void **state)
{
	struct drain d = { -1, malloc(BIG), 0 };
	char *data = malloc(BIG);
	pthread_t t;
	size_t i;
	int p[2];

	(void)state;
	assert_non_null(d.buf);
	assert_non_null(data);
	for (i = 0; i < BIG; i++)
		data[i] = (char)(i * 7 % 253);
	/* far more than the pipe holds: the writes come back short */
	assert_int_equal(pipe(p), 0);
	d.fd = p[0];
	assert_int_equal(pthread_create(&t, NULL, drain, &d), 0);
	assert_int_equal(fd_write_all(p[1], data, BIG), 0);
	assert_int_equal(close(p[1]), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(d.len, BIG);
	assert_memory_equal(d.buf, data, BIG);
	close(p[0]);
	free(d.buf);
	free(data);
}

static void test_fdio__a_failed_write_returns_its_errno(void **state)
{
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	/* the read side of a pipe cannot be written */
	assert_int_equal(fd_write_all(p[0], "x", 1), -EBADF);
	assert_int_equal(fd_write_all(p[1], "", 0), 0);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fdio__a_pipe_gets_every_byte_in_order),
		cmocka_unit_test(test_fdio__a_failed_write_returns_its_errno),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

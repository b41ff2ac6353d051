/* hostprobe: the node's GPU arch, InfiniBand devices and network interface,
 * read from the fake sysfs/proc trees of tests/fixtures/host. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "hostprobe.h"
#include "strbuf.h"

static struct hostprobe *probe(const char *tree)
{
	const char *dir = getenv("ENVFS_FIXTURES");
	struct strbuf sb = STRBUF_INIT;
	struct hostprobe *p = NULL;

	assert_non_null(dir);
	assert_int_equal(sb_addf(&sb, "%s/host/%s", dir, tree), 0);
	assert_int_equal(hostprobe_run(sb_str(&sb), &p), 0);
	assert_non_null(p);
	sb_release(&sb);
	return p;
}

static void test_hostprobe__kfd_9_4_is_gfx942_and_9_5_is_gfx950(void **state)
{
	struct hostprobe *a = probe("gfx942"), *b = probe("gfx950");
	const char *why = NULL;

	(void)state;
	assert_string_equal(a->gpu_arch, "gfx942");
	assert_string_equal(b->gpu_arch, "gfx950");
	assert_null(a->gpu_why);
	assert_string_equal(hostprobe_primus_arch(a, NULL, &why), "gfx942");
	assert_string_equal(hostprobe_primus_arch(b, "", &why), "gfx950");
	hostprobe_free(a);
	hostprobe_free(b);
}

static void test_hostprobe__primus_gpu_model_chooses_as_the_runner_does(void **state)
{
	struct hostprobe *a = probe("gfx942"), *none = probe("cpuonly");
	const char *why = NULL;

	(void)state;
	assert_string_equal(hostprobe_primus_arch(a, "MI355X", &why), "gfx950");
	assert_string_equal(hostprobe_primus_arch(none, "MI300X", &why), "gfx942");
	assert_string_equal(hostprobe_primus_arch(none, "MI325X", &why), "gfx942");
	/* An unknown model has no GPU file in the runner: the topology decides. */
	assert_string_equal(hostprobe_primus_arch(a, "MI250X", &why), "gfx942");
	assert_null(hostprobe_primus_arch(none, "MI250X", &why));
	assert_string_equal(why, "the KFD topology lists no GPU");
	hostprobe_free(a);
	hostprobe_free(none);
}

static void test_hostprobe__no_gpu_says_why(void **state)
{
	struct hostprobe *cpu = probe("cpuonly"), *old = probe("gfx90a"), *nv = probe("nvidia");
	const char *why = NULL;

	(void)state;
	assert_null(cpu->gpu_arch);
	assert_string_equal(cpu->gpu_why, "the KFD topology lists no GPU");
	assert_null(old->gpu_arch);
	assert_string_equal(old->gpu_found, "gfx90a");
	assert_string_equal(old->gpu_why,
			    "the GPU is gfx90a (gfx_target_version 90010), neither gfx942 nor gfx950");
	assert_null(nv->gpu_arch);
	assert_non_null(strstr(nv->gpu_why, "no AMD GPU driver"));
	assert_null(hostprobe_primus_arch(nv, NULL, &why));
	assert_ptr_equal(why, nv->gpu_why);
	assert_true(nv->nvidia);
	assert_false(cpu->nvidia);
	hostprobe_free(cpu);
	hostprobe_free(old);
	hostprobe_free(nv);
}

static void test_hostprobe__ib_hca_skips_bond_and_eth0_and_takes_the_lowest_port(void **state)
{
	struct hostprobe *p = probe("gfx950"), *q = probe("ipregex");

	(void)state;
	/* mlx5_1 has ports 2 and 10: sort -n picks 2; mlx5_2 has no ports. */
	assert_string_equal(p->ib_hca, "mlx5_0:1,mlx5_1:2");
	assert_string_equal(q->ib_hca, "");
	hostprobe_free(p);
	hostprobe_free(q);
}

static void test_hostprobe__ip_interface_is_the_one_carrying_the_first_address(void **state)
{
	struct hostprobe *p = probe("gfx950");

	(void)state;
	/* eth0 has the lower index: hostname -I lists 192.0.2.2 first. */
	assert_string_equal(p->first_ip, "192.0.2.2");
	assert_string_equal(p->ip_interface, "eth0");
	hostprobe_free(p);
}

static void test_hostprobe__ip_interface_matches_the_address_as_a_regex(void **state)
{
	struct hostprobe *p = probe("ipregex");

	(void)state;
	/* awk '$4 ~ "10.0.0.1"' also matches 10.0.0.12/29 on eth1. */
	assert_string_equal(p->first_ip, "10.0.0.1");
	assert_string_equal(p->ip_interface, "eth0\neth1");
	hostprobe_free(p);
}

static void test_hostprobe__ipv6_only_node_falls_back_to_the_address(void **state)
{
	struct hostprobe *p = probe("ipv6only");

	(void)state;
	assert_string_equal(p->first_ip, "2001:db8::5");
	assert_string_equal(p->ip_interface, "2001:db8::5");
	hostprobe_free(p);
}

static void test_hostprobe__empty_root_is_a_node_with_nothing(void **state)
{
	char dir[] = "/tmp/envfs-hostprobe-XXXXXX";
	struct hostprobe *p = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(hostprobe_run(dir, &p), 0);
	assert_null(p->gpu_arch);
	assert_string_equal(p->ib_hca, "");
	assert_string_equal(p->first_ip, "");
	assert_string_equal(p->ip_interface, "");
	assert_false(p->nvidia);
	hostprobe_free(p);
	rmdir(dir);
}

static void test_hostprobe__a_fifo_in_the_tree_does_not_block(void **state)
{
	char dir[] = "/tmp/envfs-hostprobe-XXXXXX";
	struct strbuf sb = STRBUF_INIT;
	struct hostprobe *p = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(sb_addf(&sb, "mkdir -p %s/sys/class/kfd/kfd/topology/nodes/1 && "
				 "mkfifo %s/sys/class/kfd/kfd/topology/nodes/1/properties",
				 dir, dir), 0);
	assert_int_equal(system(sb_str(&sb)), 0);
	assert_int_equal(hostprobe_run(dir, &p), 0);
	assert_null(p->gpu_arch);
	hostprobe_free(p);
	sb_reset(&sb);
	assert_int_equal(sb_addf(&sb, "rm -rf %s", dir), 0);
	assert_int_equal(system(sb_str(&sb)), 0);
	sb_release(&sb);
}

struct writer {
	const char *path;
	atomic_bool opened;
};

/* Blocks in open() until some reader opens the FIFO. */
static void *fifo_writer(void *arg)
{
	struct writer *w = arg;
	int fd = open(w->path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		atomic_store(&w->opened, true);
		close(fd);
	}
	return NULL;
}

/* A file that is not regular is never even opened: opening a FIFO lets a
 * writer waiting on it through (and a device's open may act). */
static void test_hostprobe__a_fifo_in_the_tree_is_never_opened(void **state)
{
	char dir[] = "/tmp/envfs-hostprobe-XXXXXX";
	struct strbuf sb = STRBUF_INIT, fifo = STRBUF_INIT;
	struct hostprobe *p = NULL;
	struct writer w = { NULL, false };
	pthread_t t;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(sb_addf(&sb, "mkdir -p %s/sys/class/kfd/kfd/topology/nodes/1 && "
				 "mkfifo %s/sys/class/kfd/kfd/topology/nodes/1/properties",
				 dir, dir), 0);
	assert_int_equal(system(sb_str(&sb)), 0);
	assert_int_equal(sb_addf(&fifo, "%s/sys/class/kfd/kfd/topology/nodes/1/properties", dir),
			 0);
	w.path = sb_str(&fifo);
	assert_int_equal(pthread_create(&t, NULL, fifo_writer, &w), 0);
	usleep(50000);          /* the writer is waiting in open() */
	assert_int_equal(hostprobe_run(dir, &p), 0);
	usleep(50000);
	assert_false(atomic_load(&w.opened));
	/* Let the writer go. */
	fd = open(w.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	close(fd);
	assert_true(atomic_load(&w.opened));
	hostprobe_free(p);
	sb_reset(&sb);
	assert_int_equal(sb_addf(&sb, "rm -rf %s", dir), 0);
	assert_int_equal(system(sb_str(&sb)), 0);
	sb_release(&sb);
	sb_release(&fifo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostprobe__kfd_9_4_is_gfx942_and_9_5_is_gfx950),
		cmocka_unit_test(test_hostprobe__primus_gpu_model_chooses_as_the_runner_does),
		cmocka_unit_test(test_hostprobe__no_gpu_says_why),
		cmocka_unit_test(test_hostprobe__ib_hca_skips_bond_and_eth0_and_takes_the_lowest_port),
		cmocka_unit_test(test_hostprobe__ip_interface_is_the_one_carrying_the_first_address),
		cmocka_unit_test(test_hostprobe__ip_interface_matches_the_address_as_a_regex),
		cmocka_unit_test(test_hostprobe__ipv6_only_node_falls_back_to_the_address),
		cmocka_unit_test(test_hostprobe__empty_root_is_a_node_with_nothing),
		cmocka_unit_test(test_hostprobe__a_fifo_in_the_tree_does_not_block),
		cmocka_unit_test(test_hostprobe__a_fifo_in_the_tree_is_never_opened),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

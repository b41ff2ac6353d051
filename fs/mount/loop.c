/* The FUSE request loop; see loop.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "loop.h"

/* A request handed to a worker: a copy of the bytes read from /dev/fuse,
 * since the reading thread reuses its buffer for the next request. */
struct job {
	struct job *next;
	size_t len;
	alignas(max_align_t) char data[];
};

struct pool {
	struct fuse_session *se;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *head, **tail;
	bool stop;
	pthread_t *threads;
	unsigned n;              /* threads started */
};

/* How often a busy reading thread opens its signal window (two
 * syscalls): it only sleeps, and so only takes a signal in ppoll, when
 * requests stop coming. */
#define SIGNAL_CHECK_EVERY 16

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* True for requests that may wait on a commit: those that commit to the
 * state file (a write and an fsync), and those on a handle whose write
 * buffer a commit holds locked. Which open or release writes is in the
 * request's open flags, which handle buffers writes is the daemon's to
 * say (fh_may_block); a buffer that cannot be looked into (spliced) is
 * answered inline, as every request is with no workers. */
static bool may_block(const struct fuse_buf *fb, const struct loop_opts *o)
{
	const struct fuse_in_header *h = fb->mem;
	const void *in = h + 1;
	size_t body = fb->size - sizeof(*h);
	uint32_t flags;

	if ((fb->flags & FUSE_BUF_IS_FD) || fb->size < sizeof(*h))
		return false;
	switch (h->opcode) {
	case FUSE_OPEN:
		if (body < sizeof(struct fuse_open_in))
			return false;
		flags = ((const struct fuse_open_in *)in)->flags;
		return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
	case FUSE_RELEASE:
		if (body < sizeof(struct fuse_release_in))
			return false;
		flags = ((const struct fuse_release_in *)in)->flags;
		return (flags & O_ACCMODE) != O_RDONLY;
	case FUSE_READ:
		return body >= sizeof(struct fuse_read_in) && o->fh_may_block &&
		       ((const struct fuse_read_in *)in)->fh &&
		       o->fh_may_block(((const struct fuse_read_in *)in)->fh);
	case FUSE_GETATTR:
		return body >= sizeof(struct fuse_getattr_in) && o->fh_may_block &&
		       (((const struct fuse_getattr_in *)in)->getattr_flags & FUSE_GETATTR_FH) &&
		       ((const struct fuse_getattr_in *)in)->fh &&
		       o->fh_may_block(((const struct fuse_getattr_in *)in)->fh);
	case FUSE_WRITE:
	case FUSE_FLUSH:
	case FUSE_FSYNC:
	case FUSE_CREATE:
	case FUSE_SETATTR:
	case FUSE_UNLINK:
	case FUSE_RENAME:
	case FUSE_RENAME2:
	case FUSE_MKNOD:
	case FUSE_MKDIR:
	case FUSE_RMDIR:
	case FUSE_SYMLINK:
	case FUSE_LINK:
	case FUSE_SETXATTR:
	case FUSE_REMOVEXATTR:
		return true;
	default:
		return false;
	}
}

static void *worker_main(void *arg)
{
	struct pool *p = arg;
	struct job *j;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		while (!p->head && !p->stop)
			pthread_cond_wait(&p->cond, &p->lock);
		/* Queued requests are answered even when stopping: a writer
		 * is waiting on each. */
		if (!(j = p->head)) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		if (!(p->head = j->next))
			p->tail = &p->head;
		pthread_mutex_unlock(&p->lock);
		fuse_session_process_buf(p->se, &(struct fuse_buf){
			.size = j->len, .mem = j->data });
		free(j);
	}
	return NULL;
}

/* Copies fb into a job for the workers. -ENOMEM leaves fb to the caller. */
static int pool_push(struct pool *p, const struct fuse_buf *fb)
{
	struct job *j = malloc(sizeof(*j) + fb->size);

	if (!j)
		return -ENOMEM;
	j->next = NULL;
	j->len = fb->size;
	memcpy(j->data, fb->mem, fb->size);
	pthread_mutex_lock(&p->lock);
	*p->tail = j;
	p->tail = &j->next;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* Starts n workers (the caller's blocked signals are inherited, so none
 * of them takes SIGTERM). On failure the started ones are stopped. */
static int pool_start(struct pool *p, struct fuse_session *se, unsigned n)
{
	int err = 0;

	memset(p, 0, sizeof(*p));
	p->se = se;
	p->tail = &p->head;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	if (!n)
		return 0;
	if (!(p->threads = calloc(n, sizeof(*p->threads))))
		return -ENOMEM;
	for (; p->n < n; p->n++)
		if ((err = -pthread_create(&p->threads[p->n], NULL, worker_main, p)) < 0)
			break;
	return err;
}

/* Lets the workers answer what is queued, then joins them. */
static void pool_stop(struct pool *p)
{
	unsigned i;

	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->n; i++)
		pthread_join(p->threads[i], NULL);
	free(p->threads);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}

/* Sleeps until /dev/fuse has a request, the session ends, or a signal
 * comes in (with `open` as the mask, so a pending one is taken now). */
static int wait_request(int fd, const sigset_t *open)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (ppoll(&pfd, 1, NULL, open) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

int loop_run(struct fuse_session *se, const struct loop_opts *o)
{
	uint64_t spin_ns = (uint64_t)o->spin_us * 1000u, spin_until = 0;
	struct fuse_buf fb = { .mem = NULL };
	struct pool pool;
	sigset_t term, old, open;
	int fd = fuse_session_fd(se), fl, res = 0;
	unsigned served = 0;

	sigemptyset(&term);
	sigaddset(&term, SIGINT);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &term, &old);
	open = old;
	sigdelset(&open, SIGINT);
	sigdelset(&open, SIGTERM);
	sigdelset(&open, SIGHUP);
	if ((res = pool_start(&pool, se, o->workers)) < 0) {
		log_err("cannot start the FUSE workers: %s",
			strerror(-res));
		goto out;
	}
	/* Nobody else reads /dev/fuse: a non-blocking read is how the
	 * reading thread polls it while spinning. */
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		res = -errno;
		log_err("/dev/fuse: %s", strerror(-res));
		goto out;
	}
	if (o->on_ready && (res = o->on_ready(o->ready_arg)) < 0)
		goto out;
	while (!fuse_session_exited(se)) {
		res = fuse_session_receive_buf(se, &fb);
		if (res == -EAGAIN) {
			if (spin_until && now_ns() < spin_until) {
				cpu_relax();
				continue;
			}
			spin_until = 0;
			if ((res = wait_request(fd, &open)) < 0)
				break;
			continue;
		}
		if (res == -EINTR)
			continue;
		/* 0: unmounted, or the session was told to exit. */
		if (res <= 0)
			break;
		if (!pool.n || !may_block(&fb, o) || pool_push(&pool, &fb) < 0)
			fuse_session_process_buf(se, &fb);
		if (spin_ns)
			spin_until = now_ns() + spin_ns;
		/* Under a steady stream of requests the thread never sleeps,
		 * so give a pending SIGTERM its turn from time to time. Not
		 * with a zero-timeout ppoll: that delivers nothing when a
		 * request is ready, which is exactly the busy case; a pending
		 * signal is delivered the moment it is unblocked. */
		if (++served % SIGNAL_CHECK_EVERY == 0) {
			pthread_sigmask(SIG_SETMASK, &open, NULL);
			pthread_sigmask(SIG_BLOCK, &term, NULL);
		}
	}
	if (res > 0)
		res = 0;
out:
	if (o->on_stop)
		o->on_stop(o->stop_arg);
	pool_stop(&pool);
	free(fb.mem);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	fuse_session_reset(se);
	return res < 0 ? res : 0;
}

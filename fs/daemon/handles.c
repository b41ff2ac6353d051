/* The registry of open handles; see handles.h. */
#include "handles.h"

void handles_init(struct handles *hs)
{
	pthread_mutex_init(&hs->lock, NULL);
	hs->head.prev = hs->head.next = &hs->head;
	hs->head.release = NULL;
	hs->n = 0;
}

void handles_add(struct handles *hs, struct handle *h, void (*release)(struct handle *))
{
	h->release = release;
	pthread_mutex_lock(&hs->lock);
	h->prev = &hs->head;
	h->next = hs->head.next;
	hs->head.next->prev = h;
	hs->head.next = h;
	hs->n++;
	pthread_mutex_unlock(&hs->lock);
}

void handles_del(struct handles *hs, struct handle *h)
{
	pthread_mutex_lock(&hs->lock);
	if (h->next) {
		h->prev->next = h->next;
		h->next->prev = h->prev;
		h->prev = h->next = NULL;
		hs->n--;
	}
	pthread_mutex_unlock(&hs->lock);
}

size_t handles_count(struct handles *hs)
{
	size_t n;

	pthread_mutex_lock(&hs->lock);
	n = hs->n;
	pthread_mutex_unlock(&hs->lock);
	return n;
}

size_t handles_release_all(struct handles *hs)
{
	size_t n = 0;
	struct handle *h;

	/* Unlinked before release, which may free h; nothing else can run. */
	while ((h = hs->head.next) != &hs->head) {
		handles_del(hs, h);
		if (h->release)
			h->release(h);
		n++;
	}
	pthread_mutex_destroy(&hs->lock);
	return n;
}

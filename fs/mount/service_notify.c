/* sd_notify, from libsystemd when systemd listens; see service_notify.h. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <systemd/sd-daemon.h>

#include "service_notify.h"

/* The soname of Debian's libsystemd0, the library sd-daemon.h declares. */
#define LIBSYSTEMD "libsystemd.so.0"

int service_notify(const char *state)
{
	static __typeof__(sd_notify) *notify;
	static void *lib;
	int r;

	if (!getenv("NOTIFY_SOCKET"))
		return 0;
	/* Kept open for the daemon's life: STOPPING=1 comes later. */
	if (!lib && !(lib = dlopen(LIBSYSTEMD, RTLD_NOW | RTLD_LOCAL)))
		return -ENOENT;
	if (!notify && !(*(void **)&notify = dlsym(lib, "sd_notify")))
		return -ENOENT;
	r = notify(0, state);
	return r < 0 ? r : 0;
}

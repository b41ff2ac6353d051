/* Finding and loading primus-envfs-sync.so; see sync_api.h. Part of the
 * executable, not of the module: it includes nothing of curl or json-c. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envfs_config.h"
#include "sync_api.h"

static char module_path[PATH_MAX];
static const struct envfs_sync_api *loaded;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static bool is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The directory of this executable (no trailing '/'), or "". */
static void exe_dir(char *out, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", out, size - 1);
	char *slash;

	if (n <= 0) {
		out[0] = '\0';
		return;
	}
	out[n] = '\0';
	slash = strrchr(out, '/');
	if (slash)
		*slash = '\0';
	else
		out[0] = '\0';
}

static void pick_path(void)
{
	const char *env = getenv("PRIMUS_ENVFS_SYNC_MODULE");
	char dir[PATH_MAX];

	if (env && *env) {
		snprintf(module_path, sizeof(module_path), "%s", env);
		return;
	}
	exe_dir(dir, sizeof(dir));
	/* The build tree's executable loads the build tree's module, so
	 * meson test runs what it just built. */
	if (*dir && !strcmp(dir, ENVFS_BUILD_EXE_DIR) && is_file(ENVFS_BUILD_SYNC_MODULE)) {
		snprintf(module_path, sizeof(module_path), "%s", ENVFS_BUILD_SYNC_MODULE);
		return;
	}
	if (*dir && (size_t)snprintf(module_path, sizeof(module_path), "%s/%s/%s", dir,
				     ENVFS_SYNC_MODULE_REL_TO_BIN, ENVFS_SYNC_MODULE_NAME) <
		    sizeof(module_path) && is_file(module_path))
		return;
	snprintf(module_path, sizeof(module_path), "%s/%s", ENVFS_INSTALLED_SYNC_MODULE_DIR,
		 ENVFS_SYNC_MODULE_NAME);
}

const char *sync_module_path(void)
{
	pthread_mutex_lock(&load_lock);
	if (!module_path[0])
		pick_path();
	pthread_mutex_unlock(&load_lock);
	return module_path;
}

int sync_load(const struct envfs_sync_api **out, char *msg, size_t msglen)
{
	const struct envfs_sync_api *api;
	envfs_sync_api_fn fn;
	const char *why;
	void *h;
	int err = 0;

	pthread_mutex_lock(&load_lock);
	if (loaded)
		goto out;
	if (!module_path[0])
		pick_path();
	/* RTLD_NOW: a missing libcurl symbol is an error here, not a crash
	 * in the middle of a mount. RTLD_LOCAL: its libraries stay its own. */
	if (!(h = dlopen(module_path, RTLD_NOW | RTLD_LOCAL))) {
		why = dlerror();
		snprintf(msg, msglen, "cannot load the sync module %s: %s%s", module_path,
			 why ? why : "unknown error",
			 getenv("PRIMUS_ENVFS_SYNC_MODULE") ? " (from $PRIMUS_ENVFS_SYNC_MODULE)" : "");
		err = -ENOENT;
		goto out;
	}
	*(void **)&fn = dlsym(h, ENVFS_SYNC_API_SYMBOL);
	if (!fn) {
		snprintf(msg, msglen, "the sync module %s has no %s(): not a primus-envfs "
			 "module", module_path, ENVFS_SYNC_API_SYMBOL);
		err = -ENOEXEC;
		goto close;
	}
	api = fn(ENVFS_SYNC_API_VERSION);
	if (!api || api->version != ENVFS_SYNC_API_VERSION) {
		snprintf(msg, msglen, "the sync module %s speaks another version than this "
			 "primus-envfs " ENVFS_VERSION " (%u): install both from one build",
			 module_path, ENVFS_SYNC_API_VERSION);
		err = -ENOEXEC;
		goto close;
	}
	if (api->size < sizeof(*api)) {
		snprintf(msg, msglen, "the sync module %s is older than this primus-envfs "
			 ENVFS_VERSION " (its table has %zu bytes, not %zu): install both "
			 "from one build", module_path, api->size, sizeof(*api));
		err = -ENOEXEC;
		goto close;
	}
	/* The handle is never closed: the module's libcurl stays initialized. */
	loaded = api;
	goto out;
close:
	dlclose(h);
out:
	if (!err) {
		*out = loaded;
		if (msglen)
			msg[0] = '\0';
	}
	pthread_mutex_unlock(&load_lock);
	return err;
}

/* Where the shipped specs are: next to an installed binary
 * (BINDIR/../share/primus-envfs/specs, which also holds under DESTDIR),
 * else the source tree this build came from. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envfs_config.h"
#include "inputs.h"

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *specs_default_dir(void)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(path, sizeof(path), "%s/%s", exe,
					     ENVFS_SPECS_REL_TO_BIN) < sizeof(path) &&
			    is_dir(path))
				return path;
		}
	}
	if (is_dir(ENVFS_SOURCE_SPECS_DIR))
		return ENVFS_SOURCE_SPECS_DIR;
	if (is_dir(ENVFS_INSTALLED_SPECS_DIR))
		return ENVFS_INSTALLED_SPECS_DIR;
	return NULL;
}

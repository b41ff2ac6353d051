/* service_notify: tell systemd how a Type=notify unit's daemon is doing
 * (sd_notify(3)): "READY=1" once the mount serves, so the unit is started
 * exactly then and Before=docker.service holds; "STOPPING=1" as it goes.
 *
 * libsystemd is loaded (dlopen) only when systemd asked for word
 * ($NOTIFY_SOCKET): linked, its six libraries cost every run of every
 * command about 0.7 ms of CPU (docs/PERFORMANCE.md), for two calls made
 * only by a mount under systemd. Not thread-safe: the main thread's. */
#ifndef ENVFS_SERVICE_NOTIFY_H
#define ENVFS_SERVICE_NOTIFY_H

/* Sends state ("READY=1", ...). Returns 0, also when no one listens (no
 * $NOTIFY_SOCKET), or a negative errno: libsystemd missing (-ENOENT) or
 * the send failing. */
int service_notify(const char *state);

#endif

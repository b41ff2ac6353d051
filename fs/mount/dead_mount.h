/* dead_mount: what a killed daemon leaves at the mount point.
 *
 *   $ kill -KILL $DAEMON; ls /mnt/primus
 *   ls: cannot access '/mnt/primus': Transport endpoint is not connected
 *
 * Slurm ends a step with SIGKILL when SIGTERM did not end it in time, so
 * a job's mount point may hold the dead mount of the job before. Mounting
 * on top would hide it until the new mount ends, and a user without root
 * cannot mount there at all (fusermount3 cannot access the point). */
#ifndef ENVFS_DEAD_MOUNT_H
#define ENVFS_DEAD_MOUNT_H

/* When mp is a dead FUSE mount (ENOTCONN): if it is a primus-envfs one,
 * detaches it (lazily, as fusermount3 -uz: nothing can be using a dead
 * mount) with a note in the log, as often as dead ones are stacked there;
 * if it is another filesystem's, prints one line naming it and saying
 * how to clear it, and returns -ENOTCONN. 0 otherwise. */
int dead_mount_clear(const char *mp);

#endif

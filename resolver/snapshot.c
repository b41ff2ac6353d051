/* snapshot: not written yet */
typedef int envfs_stub_snapshot;

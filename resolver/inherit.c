/* inherit: not written yet */
typedef int envfs_stub_inherit;

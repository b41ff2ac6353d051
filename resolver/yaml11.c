/* yaml11: not written yet */
typedef int envfs_stub_yaml11;

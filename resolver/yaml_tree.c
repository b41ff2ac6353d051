/* yaml_tree: not written yet */
typedef int envfs_stub_yaml_tree;

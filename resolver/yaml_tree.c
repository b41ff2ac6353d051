/* yaml_tree: not written yet */

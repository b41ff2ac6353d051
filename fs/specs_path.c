/* specs_path: not written yet */
typedef int envfs_stub_specs_path;

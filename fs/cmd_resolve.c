/* cmd_resolve: not written yet */
typedef int envfs_stub_cmd_resolve;

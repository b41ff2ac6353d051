/* cmd_check: not written yet */
typedef int envfs_stub_cmd_check;

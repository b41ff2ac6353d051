int envfs_cmd_mount_stub;

/* cmd_mount: not written yet */

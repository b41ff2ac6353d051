/* cmd_check: not written yet */

/* cmd_resolve: not written yet */

/* main: not written yet */

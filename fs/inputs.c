/* inputs: not written yet */

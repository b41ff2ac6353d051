/* snapshot: not written yet */

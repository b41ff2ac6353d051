/* inherit: not written yet */

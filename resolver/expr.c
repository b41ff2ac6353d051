/* expr: not written yet */

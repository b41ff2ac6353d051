/* view: not written yet */

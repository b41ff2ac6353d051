/* validate: not written yet */

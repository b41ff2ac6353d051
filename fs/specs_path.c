/* specs_path: not written yet */

/* yaml11: not written yet */

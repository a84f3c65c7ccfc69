"""``kubectl fieldown watch``'s pure core: field changes of one write and their writers
(:mod:`.attribution`), fights and quiet rewrites (:mod:`.fights`). No I/O; the shell is
``kube/watch.py`` and ``cli/watch.py``."""

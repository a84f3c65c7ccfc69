"""The ``kubectl fieldown`` command line (typer).

One module per command (``cli/<command>.py``, each with a ``register(app)``), registered in
:mod:`.main`; shared flags in :mod:`.options`; error reporting and exit codes in :mod:`.errors`.
Command modules import only typer and the pure core at import time: the cluster layer, rich and
PyYAML are imported inside the command body, when they are needed.
"""

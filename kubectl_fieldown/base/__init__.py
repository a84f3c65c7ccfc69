"""What every part of the tool must answer the same way (pure, no I/O).

* :mod:`.value` — JSON values with the API server's equality, total order and Go text forms (SMD
  ``value``), and the bounds on text and nesting every input is held to;
* :mod:`.objects` — which object (:class:`~.objects.ObjectRef`, named as kubectl names it) and
  whether it is a Secret;
* :mod:`.redact` — a Secret's values as ``<redacted>`` wherever the tool shows them, and the
  credentials in use out of every message;
* :mod:`.yamlmodule` — PyYAML, imported by every module through ``import_yaml`` so that its one
  costly regular expression is compiled in an equivalent, cheap spelling.

``value`` and ``objects`` import nothing else of the package: everything else stands on them.
"""

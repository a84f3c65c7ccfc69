"""Renderers of ``show``: tree, blame, table (rich, imported lazily) and the JSON/YAML contract.

Each takes :class:`~.common.ObjectView` objects, already filtered and redacted, and writes to a
stream; none of them decodes, fetches or filters anything.
"""

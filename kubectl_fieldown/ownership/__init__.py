"""Who owns which field (pure, no I/O).

* :mod:`.managedfields` — ``metadata.managedFields`` entries: decoding, identities (kubectl's
  managers, the last-applied annotation), the server's entry order, encoding;
* :mod:`.tree` — the owner tree of an object: every owned path with all of its owners and its value.
"""

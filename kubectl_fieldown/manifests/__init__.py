"""Kubernetes objects from text, read as kubectl reads them, within explicit limits (pure: the text
comes from :mod:`kubectl_fieldown.cli.files`, which reads files, directories and stdin).

* :mod:`.sources` — the documents of a text (YAML or JSON, several per text, ``List`` kinds), each an
  object or the reason it is not;
* :mod:`.safeyaml` — YAML documents as JSON values, built from parser events;
* :mod:`.goscalar` — go-yaml v2's scalar and key rules, and numbers as kubectl passes them on;
* :mod:`.yamlpos` — the line and column of every key and item of a manifest (for ``-o sarif``).
"""

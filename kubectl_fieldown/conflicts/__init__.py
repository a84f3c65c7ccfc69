"""The conflicts analysis (pure): what a server-side apply of a manifest would do, explained.

* :mod:`.applyplan` — :func:`~.applyplan.plan_apply`: the apply simulated, its conflicts with their
  values, and the fields it shares, deletes and leaves;
* :mod:`.report` — a planned apply as the ``conflicts`` report (the server's order, co-owners,
  redaction, kubectl's follow-up, a checked way out), and the server's dry run compared with it.

The command is :mod:`kubectl_fieldown.cli.conflicts`, its output :mod:`kubectl_fieldown.render.conflicts`.
"""

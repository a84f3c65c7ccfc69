"""Remedies: ownership plans, the requests that write them, and the check that a fix keeps every value.

* :mod:`.plans` — pure plans (:class:`~.plans.Migration`) for migrate, strip-last-applied, handover,
  reset and dropping managers;
* :mod:`.requests` — the guarded requests that write a plan, and their simulation;
* :mod:`.commands` — the write commands as data (shared by the CLI and the fix chooser);
* :mod:`.verify` — the fix and the applier's next apply, played on the engine, judged value by value;
* :mod:`.manifests` — what an applier applies, read off the object;
* :mod:`.choose` — one verified fix per object.
"""

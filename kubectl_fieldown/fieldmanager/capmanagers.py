"""At most 10 Update managers (apimachinery ``capmanagers.go``).

The oldest Update entries beyond the cap are merged, per API version, into one
``ancient-changes`` entry.
"""

from __future__ import annotations

from ..ownership.managedfields import ANCIENT_CHANGES, UPDATE, ManagerIdentity, parse_time
from .managed import Managed, Owned

MAX_UPDATE_MANAGERS = 10


def cap_update_managers(m: Managed) -> None:
    """Merge the oldest Update entries into ``ancient-changes`` until at most 10 remain."""
    updaters = [i for i, o in m.fields.items() if not o.applied]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda i: (parse_time(m.times.get(i)), i.json()))
    first_of_version: dict[str, ManagerIdentity] = {}
    length = len(updaters)
    for ident in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        owned = m.fields[ident]
        version = owned.api_version
        bucket = ManagerIdentity(ANCIENT_CHANGES, UPDATE, version, "")
        first = first_of_version.get(version)
        if first is None:
            first_of_version[version] = ident
            continue
        if bucket not in m.fields:
            m.fields[bucket] = m.fields.pop(first)
        t = m.times.get(ident)
        m.fields[bucket] = Owned(owned.fields.union(m.fields[bucket].fields), version, owned.applied)
        # upstream deletes the merged entry even when it is the bucket itself; keep that behaviour
        del m.fields[ident]
        length -= 1
        m.times[bucket] = t

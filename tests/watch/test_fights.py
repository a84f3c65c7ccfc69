"""Table tests of fight detection, quiet rewrites and the remedies a fight gets."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_fieldown.base.objects import ObjectRef
from kubectl_fieldown.fieldpath import parse_path
from kubectl_fieldown.watch.attribution import MODIFIED, FieldChange, Write, Writer
from kubectl_fieldown.watch.fights import FightDetector, remedy

REF = ObjectRef("example.com/v1", "Widget", "ns", "w")
OTHER = ObjectRef("example.com/v1", "Widget", "ns", "other")
CSA = Writer("kubectl-client-side-apply", "Update")
SCALE = Writer("kubectl", "Update", "scale")
APPLIER = Writer("ci", "Apply")
CTL = Writer("hpa-controller", "Update")
A = Writer("a", "Update")
B = Writer("b", "Update")
REPLICAS = parse_path(".spec.replicas")
COLOR = parse_path(".spec.color")


def write(writer: Writer | None, value: Any, path: Any = REPLICAS, ref: ObjectRef = REF,
          ambiguous: bool = False) -> Write:
    writers = (writer,) if writer else ()
    c = FieldChange(path, MODIFIED, None, value, writers, writers, "why" if ambiguous or not writer else None)
    return Write(ref, "1", (c,), writers, None)


def quiet(writer: Writer, status: bool) -> Write:
    changes = (FieldChange(parse_path(".status.phase"), MODIFIED, "a", "b", (writer,), (writer,)),) if status else ()
    return Write(REF, "1", changes, (writer,), None)


# (name, threshold, writes, expected fights [(path, flips, [(writer, value, writes)])] at the end,
#  index of the write that reports the fight or None)
FIGHTS: list[tuple[str, int, list[Write], list[tuple[str, int, list[tuple[Writer, Any, int]]]], int | None]] = [
    ("scale vs apply loop, 3 flips", 3,
     [write(SCALE, 5), write(CSA, 3), write(SCALE, 5), write(CSA, 3)],
     [(".spec.replicas", 3, [(SCALE, 5, 2), (CSA, 3, 2)])], 3),
    ("2 flips are no fight at 3", 3,
     [write(SCALE, 5), write(CSA, 3), write(SCALE, 5)], [], None),
    ("one writer changing a field often is no fight", 1,
     [write(A, 1), write(A, 2), write(A, 3)], [], None),
    ("reported once, counts go on", 2,
     [write(A, "x"), write(B, "y"), write(A, "x"), write(B, "y"), write(A, "x")],
     [(".spec.replicas", 4, [(A, "x", 3), (B, "y", 2)])], 2),
    ("ambiguous changes neither flip nor break a run", 2,
     [write(A, 1), write(None, 7), write(B, 2), write(A, 1, ambiguous=True), write(A, 1)],
     [(".spec.replicas", 2, [(A, 1, 2), (B, 2, 1)])], 4),
    ("fields are counted apart", 2,
     [write(A, 1), write(B, "r", COLOR), write(B, 2), write(A, "b", COLOR)], [], None),
    ("objects are counted apart", 2,
     [write(A, 1), write(B, 2, ref=OTHER), write(A, 1, ref=OTHER)], [], None),
    ("three writers", 3,
     [write(A, 1), write(B, 2), write(SCALE, 3), write(A, 1)],
     [(".spec.replicas", 3, [(A, 1, 2), (B, 2, 1), (SCALE, 3, 1)])], 3),
]


@pytest.mark.parametrize(("name", "threshold", "writes", "expected", "reported_at"), FIGHTS,
                         ids=[f[0] for f in FIGHTS])
def test_fights_table(name: str, threshold: int, writes: list[Write],
                      expected: list[tuple[str, int, list[tuple[Writer, Any, int]]]], reported_at: int | None) -> None:
    d = FightDetector(threshold)
    found_at = [i for i, w in enumerate(writes) for _ in d.observe(w)]
    assert found_at == ([] if reported_at is None else [reported_at])
    got = [(f.path_text, f.flips, [(fw.writer, fw.value, fw.writes) for fw in f.writers]) for f in d.fights()]
    assert got == expected


def test_forget_starts_afresh() -> None:
    d = FightDetector(2)
    d.observe(write(A, 1))
    d.observe(write(B, 2))
    d.forget(REF)
    assert d.observe(write(A, 1)) == []
    assert d.fights() == []


def test_churn() -> None:
    d = FightDetector(3, churn_threshold=3)
    for _ in range(2):
        d.observe(quiet(CTL, status=True))
    assert d.churn() == []
    d.observe(quiet(APPLIER, status=False))
    d.observe(write(A, 1))  # a real change is not churn
    [c] = d.churn()
    assert (c.writes, c.status_only, c.ownership_only, c.writers) == (3, 2, 1, (APPLIER, CTL))


def test_threshold_at_least_one() -> None:
    with pytest.raises(ValueError):
        FightDetector(0)


def _fight(*writers: Writer, path: Any = REPLICAS) -> Any:
    d = FightDetector(1)
    d.observe(write(writers[0], 1, path))
    for w in writers[1:]:
        d.observe(write(w, 2, path))
    [f] = d.fights()
    return f


REMEDIES = [
    ("apply loop vs /scale", (SCALE, CSA),
     ["kubectl fieldown strip-last-applied widget.example.com/w -n ns --field .spec.replicas"]),
    ("forced applier vs controller", (CTL, APPLIER),
     ["kubectl fieldown handover widget.example.com/w -n ns --field .spec.replicas --to hpa-controller"]),
    ("forced applier vs a /scale writer: drop it from the manifest, no command", (SCALE, APPLIER), []),
    ("forced applier vs an Update writer of its own name: no handover to itself", (Writer("ci", "Update"), APPLIER),
     []),
    ("two Update writers: no command", (A, B), []),
    ("applier vs two controllers: no handover target", (APPLIER, A, B), []),
]


@pytest.mark.parametrize(("name", "writers", "commands"), REMEDIES, ids=[r[0] for r in REMEDIES])
def test_remedies(name: str, writers: tuple[Writer, ...], commands: list[str]) -> None:
    r = remedy(_fight(*writers))
    assert list(r.commands) == commands
    assert r.text


def test_remedy_quotes_paths_for_the_shell() -> None:
    path = parse_path('.spec.containers[name="web"].image')
    r = remedy(_fight(SCALE, CSA, path=path))
    assert r.commands == ("kubectl fieldown strip-last-applied widget.example.com/w -n ns "
                          "--field '.spec.containers[name=\"web\"].image'",)


def test_remedy_texts_name_what_to_drop() -> None:
    assert "drop it from ci's manifest after the other writer's next write" in remedy(_fight(SCALE, APPLIER)).text
    assert "hand the field over to hpa-controller and drop it from ci's manifest" in remedy(_fight(CTL, APPLIER)).text
    assert "one of them has to stop writing it" in remedy(_fight(A, B)).text

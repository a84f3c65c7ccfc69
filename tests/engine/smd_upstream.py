"""structured-merge-diff's own merge tests (merge/*_test.go), played through kubectl_fieldown.

hack/port-upstream-tests.py extracts the tables with go/parser (hack/port-smd-tests/main.go) into
tests/conformance/upstream/smd-merge.json: each case's schema (SMD's schema YAML), its operations
(Apply, ForceApply, Update: manager, version, object, expected conflicts) and the expected object
and managed fields. Here a case is played with the field manager of the library
(``simulate_apply``/``simulate_update``): the test objects are wrapped as objects of a kind ``T``
(apiVersion, kind and metadata are stripped from managed fields, as the server strips them), SMD's
schema YAML becomes the library's schema types, and versions convert as CRDs with conversion None do
(the apiVersion renamed), which is SMD's test fixture's ``dummyConverter``.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
from pathlib import Path as FsPath
from typing import Any

import yaml

from kubectl_fieldown.fieldmanager import (
    ApplyConflict,
    FieldManagerError,
    ResourceRules,
    simulate_apply,
    simulate_update,
)
from kubectl_fieldown.fieldpath import FieldSet, Path, path_string
from kubectl_fieldown.fieldpath.element import field as field_element
from kubectl_fieldown.fieldpath.element import index, key, set_value
from kubectl_fieldown.managedfields import decode_entries
from kubectl_fieldown.schema.types import (
    DEDUCED,
    NO_DEFAULT,
    UNTYPED,
    GroupVersionKind,
    KindSchema,
    ListType,
    MapType,
    StructField,
    Type,
)

UPSTREAM = FsPath(__file__).resolve().parent.parent / "conformance" / "upstream" / "smd-merge.json"
KIND = "T"


def load() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(UPSTREAM.read_text())
    return doc


# --- SMD's schema YAML as the library's types --------------------------------------------------


class SchemaError(ValueError):
    pass


def smd_types(text: str) -> dict[str, Type]:
    """Every named type of an SMD schema (``typed.NewParser``'s YAML)."""
    doc = yaml.safe_load(text)
    named: dict[str, Type] = {"__untyped_atomic_": UNTYPED, "__untyped_deduced_": DEDUCED}
    raw = {t["name"]: t for t in doc.get("types") or []}
    for name in raw:
        named.setdefault(name, Type(name=name))

    def ref(r: dict[str, Any]) -> Type:
        if "namedType" in r:
            if r["namedType"] not in named:
                raise SchemaError(f"unknown type {r['namedType']}")
            return named[r["namedType"]]
        t = Type()
        fill(t, r)
        return t

    def fill(t: Type, d: dict[str, Any]) -> None:
        if "scalar" in d:
            t.scalar = d["scalar"]
        if "list" in d:
            lt = d["list"]
            rel = lt.get("elementRelationship", "atomic")
            t.list = ListType(item=ref(lt["elementType"]), relationship="associative" if rel == "associative"
                              else "atomic", keys=tuple(lt.get("keys") or ()))
        if "map" in d:
            mt = d["map"]
            fields = {f["name"]: StructField(ref(f["type"]), f.get("default", NO_DEFAULT))
                      for f in mt.get("fields") or []}
            t.map = MapType(fields=fields, element=ref(mt["elementType"]) if "elementType" in mt else None,
                            atomic=mt.get("elementRelationship") == "atomic")
        if "untyped" in d:
            raise SchemaError("untyped types")

    for name, d in raw.items():
        fill(named[name], d)
    return named


def wrapped_root(t: Type) -> Type:
    """The test's type as the root of an object: apiVersion, kind and metadata beside its fields."""
    if t is DEDUCED:
        return DEDUCED
    if t.map is None:
        raise SchemaError("the root is not a map")
    meta = DEDUCED
    fields = {"apiVersion": StructField(Type(scalar="string")), "kind": StructField(Type(scalar="string")),
              "metadata": StructField(meta), **t.map.fields}
    return Type(name="root", map=MapType(fields=fields, element=t.map.element, atomic=t.map.atomic))


def rules_at(version: str, roots: dict[str, Type]) -> ResourceRules:
    """The rules of a request at ``version``: the endpoint's schema, every version's for the entries."""
    schema = KindSchema(GroupVersionKind("", version, KIND), roots[version], "structured-merge-diff test schema")
    rules = ResourceRules.for_kind(schema, False, custom_resource=False, versions=roots)
    return dataclasses.replace(rules, defaults_objects=False)


def roots_for(case: dict[str, Any], parsers: dict[str, Any]) -> dict[str, Type]:
    """The root type of each version the case uses (SMD's ``Parser.Type(version)``)."""
    versions = sorted({op.get("apiVersion") or "v1" for op in case["ops"]} | {case.get("apiVersion") or "v1"})
    if case["parser"] == "DeducedParser":
        return {v: wrapped_root(DEDUCED) for v in versions}
    p = parsers[case["parser"]]
    named = smd_types(p["yaml"])
    # a fixture.SameVersionParser names one type; a *typed.Parser is asked for the type named like
    # the version
    return {v: wrapped_root(named[p["type"] or v]) for v in versions}


# --- paths ---------------------------------------------------------------------------------------


def path_of(elements: list[dict[str, Any]]) -> Path:
    out = []
    for e in elements:
        if "f" in e:
            out.append(field_element(e["f"]))
        elif "v" in e:
            out.append(set_value(e["v"]))
        elif "k" in e:
            out.append(key(e["k"]))
        else:
            out.append(index(e["i"]))
    return tuple(out)


def parse_object(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    body = textwrap.dedent(text.expandtabs(8))
    v = yaml.safe_load(body)
    return v if isinstance(v, dict) else {}


# --- playing a case ----------------------------------------------------------------------------


def play(case: dict[str, Any], parsers: dict[str, Any]) -> list[str]:
    """Play one case; the differences from upstream's expectations (empty: it agrees)."""
    roots = roots_for(case, parsers)
    live: dict[str, Any] | None = None
    out: list[str] = []
    for n, op in enumerate(case["ops"]):
        version = op.get("apiVersion") or "v1"
        rules = rules_at(version, roots)
        if live is not None:
            # the converter of SMD's fixture (and of a CRD with conversion None): the version renamed
            live = {**live, "apiVersion": version}
        body = {"apiVersion": version, "kind": KIND, "metadata": {"name": "x"}, **parse_object(op.get("object"))}
        now = f"2026-01-01T00:00:{n:02d}Z"
        want_conflicts = {(c["manager"], path_string(path_of(c["path"]))) for c in op.get("conflicts") or []}
        try:
            if op["op"] == "Update":
                res = simulate_update(live, body, op["manager"], rules, now=now)
            else:
                res = simulate_apply(live, body, op["manager"], rules, now=now, force=op["op"] == "ForceApply")
        except ApplyConflict as e:
            got = {(c.manager, c.path_string) for c in e.conflicts}
            if got != want_conflicts:
                out.append(f"op {n} ({op['op']} by {op['manager']}): conflicts {sorted(got)}, "
                           f"upstream {sorted(want_conflicts)}")
            continue
        except FieldManagerError as e:
            out.append(f"op {n} ({op['op']} by {op['manager']}): refused ({e.status}: {e.message[:200]})")
            return out
        if want_conflicts:
            out.append(f"op {n} ({op['op']} by {op['manager']}): no conflict, upstream {sorted(want_conflicts)}")
        live = res.object
    if live is None:
        return out
    if case.get("object") is not None:
        want = parse_object(case["object"])
        got = {k: v for k, v in live.items() if k not in ("apiVersion", "kind", "metadata")}
        if got != want:
            out.append(f"object {json.dumps(got, sort_keys=True)}, upstream {json.dumps(want, sort_keys=True)}")
    if case.get("managed") is not None:
        entries = decode_entries((live.get("metadata") or {}).get("managedFields"))
        # ManagedFields.Difference compares sets and versions, not whether the entry was applied
        got_m = {e.manager: (e.fields, e.api_version) for e in entries}
        want_m = {m: (FieldSet([path_of(p) for p in v["paths"]]), v["apiVersion"])
                  for m, v in case["managed"].items()}
        # SMD's expected sets are for the test type; an empty entry is not kept by the server
        want_m = {m: v for m, v in want_m.items() if not v[0].is_empty()}
        if set(got_m) != set(want_m):
            out.append(f"managers {sorted(got_m)}, upstream {sorted(want_m)}")
        for m in sorted(set(got_m) & set(want_m)):
            gs, gv = got_m[m]
            ws, wv = want_m[m]
            if gs != ws:
                out.append(f"{m}: only here {sorted(map(path_string, gs.difference(ws).sorted_paths()))}, "
                           f"only upstream {sorted(map(path_string, ws.difference(gs).sorted_paths()))}")
            if gv != wv:
                out.append(f"{m}: version {gv}, upstream {wv}")
    return out

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
    ConversionError,
    Converter,
    FieldManagerError,
    MissingVersion,
    ResourceRules,
    simulate_apply,
    simulate_update,
)
from kubectl_fieldown.fieldpath import FieldSet, Path, path_string
from kubectl_fieldown.fieldpath.element import field as field_element
from kubectl_fieldown.fieldpath.element import index, key, set_value
from kubectl_fieldown.ownership.managedfields import decode_entries
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
from kubectl_fieldown.typed.merge import merge
from kubectl_fieldown.typed.remove import extract_items

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
    # a reference with its own elementRelationship: the referred type with the relationship
    # overridden (schema.Resolve), filled in once every named type is
    overrides: list[tuple[Type, Type, str]] = []

    def ref(r: dict[str, Any]) -> Type:
        if "namedType" in r:
            if r["namedType"] not in named:
                raise SchemaError(f"unknown type {r['namedType']}")
            t = named[r["namedType"]]
        else:
            t = Type()
            fill(t, r)
        if "elementRelationship" in r:
            o = Type()
            overrides.append((o, t, r["elementRelationship"]))
            return o
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
    for o, t, rel in overrides:
        o.scalar = t.scalar
        if t.map is not None:
            o.map = dataclasses.replace(t.map, atomic=rel == "atomic")
        if t.list is not None:
            o.list = dataclasses.replace(t.list, relationship="atomic" if rel == "atomic" else "associative")
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


def rules_at(version: str, roots: dict[str, Type], converter: Converter | None = None,
             ignored: dict[str, FieldSet] | None = None) -> ResourceRules:
    """The rules of a request at ``version``: the endpoint's schema, every version's for the entries,
    the test's converter (None: the fixture's dummyConverter, conversion None) and ignored fields."""
    schema = KindSchema(GroupVersionKind("", version, KIND), roots[version], "structured-merge-diff test schema")
    rules = ResourceRules.for_kind(schema, False, custom_resource=False, versions=roots)
    return dataclasses.replace(rules, defaults_objects=False, converter=converter, ignored_at_versions=ignored)


def roots_for(case: dict[str, Any], parsers: dict[str, Any], parser: str) -> dict[str, Type]:
    """The root type of each version the case uses (SMD's ``Parser.Type(version)``)."""
    versions = sorted({op.get("apiVersion") or "v1" for op in case["ops"]} | {case.get("apiVersion") or "v1"})
    if parser == "DeducedParser":
        return {v: wrapped_root(DEDUCED) for v in versions}
    p = parsers[parser]
    named = smd_types(p["yaml"])
    # a fixture.SameVersionParser names one type; a *typed.Parser is asked for the type named like
    # the version
    return {v: wrapped_root(named[p["type"] or v]) for v in versions}


# --- the converters of SMD's merge tests (Go code, restated: they are code, not tables) -----------

META = ("apiVersion", "kind", "metadata")


def _go_yaml(v: Any) -> str:
    """yaml.Marshal (go-yaml v2) of a value: block style, keys sorted."""
    return str(yaml.safe_dump(v, default_flow_style=False, sort_keys=True))


def _repeating(v: Any, _from: str, version: str) -> Any:
    """repeatingConverter: every key below the first line of the YAML becomes its first letter
    repeated N times (vN), its value dropped; a version not vN is a missing version."""
    if len(version) < 2 or version[0] != "v" or not version[1:].isdigit():
        raise MissingVersion("cannot convert to invalid version")
    n = int(version[1:])
    lines = _go_yaml(v).split("\n")
    out = lines[0]
    for line in lines[1:]:
        spaces = len(line) - len(line.lstrip(" "))
        if spaces == 0:
            break
        out += f"\n{' ' * spaces}{line[spaces] * n}:"
    return yaml.safe_load(out)


def _rename_fields(v: Any, old: str, new: str) -> Any:
    if isinstance(v, dict):
        return {(k[: -len(old)] + new if k.endswith(old) else k): _rename_fields(x, old, new) for k, x in v.items()}
    if isinstance(v, list):
        return [_rename_fields(x, old, new) for x in v]
    return v


def _renaming(v: Any, from_version: str, version: str) -> Any:
    """renamingConverter: fields ending in the version (scalarField_v1) renamed to the other."""
    return _rename_fields(v, from_version, version)


def _reliant(v: Any, from_version: str, version: str) -> Any:
    """reliantFieldsConverter: v1's field_foo_rely_on_bar is v2's required_field_bar; converting to
    v1 an object without it fails."""
    if from_version == version:
        return v
    text = json.dumps(v)
    if version == "v1":
        if "required_field_bar" not in text:
            raise ConversionError("missing requried field bar")
        return json.loads(text.replace("required_field_bar", "field_foo_rely_on_bar"))
    if version == "v2":
        return json.loads(text.replace("field_foo_rely_on_bar", "required_field_bar"))
    raise MissingVersion("cannot convert to invalid version")


def _wrapped(fn: Any) -> Converter:
    """A converter of the test type's values as one of the library's objects (kind T)."""
    def convert(obj: dict[str, Any], version: str) -> dict[str, Any]:
        body = {k: v for k, v in obj.items() if k not in META}
        out = fn(body, str(obj.get("apiVersion") or ""), version)
        return {**{k: obj[k] for k in META if k in obj}, "apiVersion": version, **(out or {})}
    return convert


CONVERTERS: dict[str, Converter | None] = {
    "": None,  # the fixture's dummyConverter: conversion None
    "repeatingConverter": _wrapped(_repeating),
    "renamingConverter": _wrapped(_renaming),
    "reliantFieldsConverter": _wrapped(_reliant),
}


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
    roots = roots_for(case, parsers, case["parser"])
    converter = CONVERTERS[case.get("converter") or ""]
    ignored = {v: FieldSet([path_of(p) for p in paths]) for v, paths in case["ignored"].items()} \
        if case.get("ignored") else None
    live: dict[str, Any] | None = None
    out: list[str] = []
    for n, op in enumerate(case["ops"]):
        if op["op"] == "ChangeParser":
            roots = roots_for(case, parsers, op["parser"])
            continue
        version = op.get("apiVersion") or "v1"
        rules = rules_at(version, roots, converter, ignored)
        body = {"apiVersion": version, "kind": KIND, "metadata": {"name": "x"}, **parse_object(op.get("object"))}
        kind = op["op"]
        try:
            if live is not None:
                # the fixture converts the live object to the operation's version first
                live = rules.convert(live, version)
            if kind == "ExtractApply":
                kind = "ForceApply"
                if live is not None:
                    body = _extract_apply(live, body, op["manager"], version, rules)
        except ConversionError as e:
            out.append(f"op {n} ({op['op']} by {op['manager']}): {e}")
            return out
        now = f"2026-01-01T00:00:{n:02d}Z"
        want_conflicts = {(c["manager"], path_string(path_of(c["path"]))) for c in op.get("conflicts") or []}
        try:
            if kind == "Update":
                res = simulate_update(live, body, op["manager"], rules, now=now)
            else:
                res = simulate_apply(live, body, op["manager"], rules, now=now, force=kind == "ForceApply")
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
        final = rules_at(case.get("apiVersion") or "v1", roots, converter, ignored)
        try:
            at = final.convert(live, case.get("apiVersion") or "v1")
        except ConversionError as e:
            return [*out, f"converting the live object: {e}"]
        got = {k: v for k, v in at.items() if k not in META}
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


def _extract_apply(live: dict[str, Any], body: dict[str, Any], manager: str, version: str,
                   rules: ResourceRules) -> dict[str, Any]:
    """The fixture's ExtractApply: the manager's leaves extracted from the live object (ExtractItems),
    the operation's object merged on top, force-applied."""
    fields = FieldSet()
    for e in decode_entries((live.get("metadata") or {}).get("managedFields")):
        if e.manager == manager:
            if e.api_version != version:
                raise ConversionError(f"existing managed fieldpath set APIVersion ({e.api_version}) differs "
                                      f"from desired ({version}), unable to extract")
            fields = e.fields.leaves()
    t = rules.root
    extracted = extract_items({k: v for k, v in live.items() if k not in META}, fields, t)
    merged = merge(extracted if extracted is not None else {}, {k: v for k, v in body.items() if k not in META}, t)
    return {k: body[k] for k in META} | (merged or {})

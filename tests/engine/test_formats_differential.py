"""String formats: seeded random strings on the lab server vs. the engine (typed/formats.py).

A ``Fmt`` CRD has one string field per format the engine checks (every format the CRD validator
keeps but ``email``, which the engine does not model). Each case creates
one object (a dry run) whose every field holds a string drawn for its format: a valid example,
one mutated a few times (characters of the format's own alphabet inserted, dropped, replaced or
swapped, Unicode look-alikes and ASCII control characters among them), or a concatenation. The
server's 422 causes must be the engine's (``simulate_update`` of a create), and a success both's.
``FIELDOWN_FORMAT_CASES`` (default 60) and ``FIELDOWN_FORMAT_SEED`` (default 3) tune it.
"""

from __future__ import annotations

import os
import random
from typing import Any

import lab
import pytest

from engine.crdlab import CrdLab, assert_same_answer, crd_lab
from kubectl_fieldown.fieldmanager import ResourceRules, simulate_update
from kubectl_fieldown.schema.crd import kinds_from_crd
from kubectl_fieldown.schema.types import GroupVersionKind
from kubectl_fieldown.typed.formats import UNCHECKED, format_valid

GVK = GroupVersionKind("formats.example.com", "v1", "Fmt")
NOW = "2026-11-26T00:00:00Z"
CASES = int(os.environ.get("FIELDOWN_FORMAT_CASES", "60"))
SEED = int(os.environ.get("FIELDOWN_FORMAT_SEED", "3"))

#: format -> (field name, valid examples)
FORMATS: dict[str, tuple[str, list[str]]] = {
    "bsonobjectid": ("bson", ["507f1f77bcf86cd799439011", "AAAAAAAAAAAAAAAAAAAAAAAA"]),
    "uri": ("uri", ["https://example.com/a?b=c", "/path%20x", "mailto:a@b", "http://u:p@[::1%25eth0]:8080/x",
                    "http://a:b:80/", "ftp://h:1:2/", "*", "https://[1.2.3.4]/", "http://h%41/", "x://u@@h/"]),
    "hostname": ("host", ["example.com", "a-", "my-host", "a.b-c.de", "xn--bcher-kva.example", "bücher.de", "a€b.com",
                          "a" * 63 + ".com"]),
    "ipv4": ("ipv4", ["192.168.0.1", "010.001.0.255", "::ffff:1.2.3.4", "1::"]),
    "ipv6": ("ipv6", ["::1", "2001:db8::8a2e:370:7334", "::ffff:192.0.2.1", "1:2:3:4:5:6:7:8", "fe80::1%eth0"]),
    "cidr": ("cidr", ["10.0.0.0/8", "2001:db8::/32", "010.0.0.1/32", "::/0"]),
    "mac": ("mac", ["00:00:5e:00:53:01", "00-00-5E-00-53-01", "0000.5e00.5301", "00005e005301",
                    "02:00:5e:10:00:00:00:01"]),
    "uuid": ("uuid", ["123e4567-e89b-12d3-a456-426614174000", "123E4567E89B12D3A456426614174000"]),
    "uuid3": ("uuid3", ["a3bb189e-8bf9-3888-9912-ace4e6543002"]),
    "uuid4": ("uuid4", ["9f2d3c3e-2f4b-4c1e-9a8b-1234567890ab"]),
    "uuid5": ("uuid5", ["74738ff5-5367-5958-9aee-98fffdcd1876"]),
    "isbn": ("isbn", ["0321751043", "978-0321751041", "0-8044-2957-X"]),
    "isbn10": ("isbn10", ["0321751043", "080442957X", "0 321 75104 3"]),
    "isbn13": ("isbn13", ["978-0321751041", "9780321751041"]),
    "creditcard": ("cc", ["4111111111111111", "4111-1111-1111-1111", "5500 0000 0000 0004", "378282246310005"]),
    "ssn": ("ssn", ["123-45-6789", "123 45 6789", "123456789"]),
    "hexcolor": ("hex", ["#fff", "FFFFFF", "#a1B2c3"]),
    "rgbcolor": ("rgb", ["rgb(255,255,255)", "rgb( 0 , 10 ,200 )", "rgb(\t1,2,3)"]),
    "byte": ("byte", ["aGVsbG8=", "aGVsbG8h", "YQ==", "+/+/"]),
    "password": ("pw", ["anything", ""]),
    "date": ("date", ["2024-02-29", "2023-12-31", "0000-02-29"]),
    "duration": ("dur", ["1h30m", "1.5s", "-2m", "300ms", "2 days", "5 minutes", "1µs", "+0", ".5h", "3 wk"]),
    "date-time": ("dt", ["2024-02-14T15:30:00Z", "2024-02-14t15:30:00.123+01:00", "2024-02-14T23:59:59-00:00",
                         "2024-02-14T15:30:00zT"]),
    "k8s-short-name": ("short", ["a", "my-name-1", "a" * 63]),
    "k8s-long-name": ("long", ["a.b-c.d", "example.com", "a" * 253]),
}

#: characters a mutation inserts: each format's alphabet, separators, look-alikes and controls
_NOISE = [*"0123456789abcdefABCDEFxXzZtT:-./%#+=() ,_@[]?", "%25", "\u20ac", "\u00fc", "\u0301", "\U0001f600", "\t",
          "\n", "\v", "\f", "\r", "\u00b5", "\u03bc", "\u0130",
          "\u0663", "\uff10", "\u00e9", "e\u0301"]


def crd() -> dict[str, Any]:
    props = {name: {"type": "string", "format": fmt} for fmt, (name, _) in FORMATS.items()}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "fmts.formats.example.com"},
        "spec": {"group": "formats.example.com", "scope": "Namespaced",
                 "names": {"kind": "Fmt", "plural": "fmts", "singular": "fmt", "listKind": "FmtList"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "properties": {"spec": {"type": "object", "properties": props}}}}}]},
    }


def rules() -> ResourceRules:
    return ResourceRules.for_kind(kinds_from_crd(crd())[GVK], False)


def mutate(rnd: random.Random, s: str) -> str:
    chars = list(s)
    for _ in range(rnd.randint(1, 3)):
        op = rnd.randrange(4)
        at = rnd.randint(0, len(chars))
        if op == 0 or not chars:
            chars.insert(at, rnd.choice(_NOISE))
        elif op == 1:
            del chars[min(at, len(chars) - 1)]
        elif op == 2:
            chars[min(at, len(chars) - 1)] = rnd.choice(_NOISE)
        elif len(chars) > 1:
            i = min(at, len(chars) - 2)
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
    return "".join(chars)


def drawn(rnd: random.Random, examples: list[str]) -> str:
    pick = rnd.random()
    if pick < 0.25:
        return rnd.choice(examples)
    if pick < 0.85:
        return mutate(rnd, rnd.choice(examples))
    return rnd.choice(examples) + rnd.choice(["", " ", "t", ":", "/"]) + mutate(rnd, rnd.choice(examples))


@pytest.fixture(scope="module")
def formats_lab(cluster: lab.Cluster) -> CrdLab:
    return crd_lab(cluster, crd(), {"uuid": "x"})


@pytest.mark.parametrize("case", range(CASES))
def test_formats_match_the_server(formats_lab: CrdLab, case: int) -> None:
    rnd = random.Random(SEED * 100000 + case)
    spec = {name: drawn(rnd, examples) for name, examples in FORMATS.values()}
    body = formats_lab.body(f"c{case}", spec)
    resp = formats_lab.api.request("POST", formats_lab.path, body, query=[("dryRun", "All")])
    assert_same_answer(f"{spec}", resp, lambda: simulate_update(None, body, "tester", rules(), now=NOW))


def test_the_formats_checked_are_every_kept_one_but_email() -> None:
    from kubectl_fieldown.typed.validate import _KEPT_FORMATS

    checked = {f.replace("-", "") for f in FORMATS}
    assert checked | UNCHECKED == _KEPT_FORMATS["string"]
    assert all(format_valid(f, FORMATS[f][1][0]) for f in FORMATS)
    assert all(format_valid(f, "x") is None for f in UNCHECKED)


def test_the_generator_draws_valid_and_invalid_strings_of_every_format() -> None:
    seen: dict[str, set[bool]] = {f: set() for f in FORMATS}
    for case in range(CASES):
        rnd = random.Random(SEED * 100000 + case)
        for fmt, (_, examples) in FORMATS.items():
            seen[fmt].add(bool(format_valid(fmt, drawn(rnd, examples))))
    assert {f: v for f, v in seen.items() if v != {True, False} and f != "password"} == {}

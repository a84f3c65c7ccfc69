"""allOf/anyOf/oneOf/not (typed/constraints.py ``_composites``): the causes of a custom resource's
``spec.x`` with each schema, less the outer type error typed/validate.py reports, as the lab server
(apiextensions-apiserver v1.36.4) answered a probe of them (the oneOf rows: as it answers the same
values in tests/engine/test_composites_differential.py, which draws many more at random)."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_fieldown.typed.constraints import constraint_errors

INT_OR_STRING = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
ANY_OF = '<nil>', 'Invalid value: "": "spec.x" must validate at least one schema (anyOf)'


@pytest.mark.parametrize(("schema", "value", "causes"), [
    (INT_OR_STRING, 5, set()),
    (INT_OR_STRING, "5%", set()),
    (INT_OR_STRING, 1.5, {ANY_OF,
                          ("spec.x", 'Invalid value: "number": spec.x in body must be of type integer: "number"'),
                          ("<nil>", 'Invalid value: "": Checked value must be of type integer (default format) in '
                                    "spec.x")}),
    (INT_OR_STRING, True, {ANY_OF, ("spec.x", 'Invalid value: "boolean": spec.x in body must be of type integer: '
                                              '"boolean"')}),
    ({"type": "string", "anyOf": [{"maxLength": 2}, {"pattern": "^a"}]}, "bcd",
     {ANY_OF, ("spec.x", "Too long: may not be more than 2 bytes")}),
    ({"type": "string", "anyOf": [{"maxLength": 2}, {"pattern": "^a"}]}, "abcd", set()),
    ({"type": "string", "allOf": [{"minLength": 2}, {"pattern": "^b"}]}, "c",
     {("spec.x", 'Invalid value: "c": spec.x in body should be at least 2 chars long'),
      ("spec.x", "Invalid value: \"c\": spec.x in body should match '^b'"),
      ("<nil>", 'Invalid value: "": "spec.x" must validate all the schemas (allOf). None validated')}),
    ({"type": "string", "not": {"pattern": "^x"}}, "xy",
     {("<nil>", 'Invalid value: "": "spec.x" must not validate the schema (not)')}),
    ({"type": "string", "oneOf": [{"pattern": "^a"}, {"pattern": "b$"}]}, "ab",
     {("<nil>", 'Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found 2 valid '
                'alternatives')}),
])
def test_composite_causes(schema: dict[str, Any], value: Any, causes: set[tuple[str, str]]) -> None:
    root = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"x": schema}}}}
    assert {(e.field, e.message) for e in constraint_errors({"spec": {"x": value}}, root)} == causes

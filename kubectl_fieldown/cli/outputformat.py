"""kubectl's ``-o name``, ``-o jsonpath=TEMPLATE`` and ``-o custom-columns=SPEC`` on the commands
that list objects or findings (show, conflicts, audit; docs/output.md).

click parses ``-o`` against each command's list of formats, so :func:`split_templates` takes the
argument after ``jsonpath=`` / ``custom-columns=`` out of the words before typer sees them (as
``main`` does with kubectl's generic flags) and leaves the bare format name; the command checks the
template before any request (:func:`check`, exit 2) and prints with :func:`print_kube`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

from .errors import UsageError

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any, TextIO

__all__ = ["KUBE_FORMATS", "check", "print_audit", "print_kube", "reset", "split_templates"]

#: the formats that take an argument after ``=`` in kubectl's spelling
_WITH_ARGUMENT = ("jsonpath", "custom-columns")
KUBE_FORMATS = ("name", *_WITH_ARGUMENT)

_state: dict[str, str | None] = {"template": None}


def reset() -> None:
    _state["template"] = None


def _split_value(value: str) -> str:
    for fmt in _WITH_ARGUMENT:
        if value.startswith(fmt + "="):
            _state["template"] = value[len(fmt) + 1:]
            return fmt
    return value


def split_templates(args: list[str]) -> list[str]:
    """``-o jsonpath={.x}`` (and ``-o=…``, ``-ojsonpath=…``, ``--output[=]…``) as ``-o jsonpath``,
    the template kept for :func:`print_kube`; kubectl's ``-o=json`` as ``-o json``."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out += args[i:]
            break
        if a in ("-o", "--output") and i + 1 < len(args):
            out += [a, _split_value(args[i + 1])]
            i += 2
            continue
        if a.startswith("--output="):
            out.append("--output=" + _split_value(a[len("--output="):]))
        elif a.startswith("-o="):
            # pflag's -o=json, which click would read as the value "=json"
            out += ["-o", _split_value(a[len("-o="):])]
        elif a.startswith("-o") and len(a) > 2 and not a.startswith("--"):
            out.append("-o" + _split_value(a[2:]))
        else:
            out.append(a)
        i += 1
    return out


def check(output: str) -> None:
    """A usage error (exit 2, before any request) for a template or column spec that cannot work."""
    if output not in _WITH_ARGUMENT:
        return
    from ..render.kubeprint import TemplateError, parse_columns, parse_template

    template = _state["template"]
    if not template:
        what = "template" if output == "jsonpath" else "custom columns"
        raise UsageError(f"{output} format specified but no {what} given (-o {output}=...)")
    try:
        if output == "jsonpath":
            parse_template(template)
        else:
            parse_columns(template)
    except TemplateError as e:
        raise UsageError(f"-o {output}: {e}") from None


def print_audit(output: str, report: Any, out: TextIO) -> None:
    """audit's report in a kubectl format: ``-o name`` names each object with findings once, in
    report order (a type's own findings name no object); the others read the ``-o json`` items."""
    from ..base.objects import ObjectRef
    from ..render.audit import to_document

    names = dict.fromkeys(ObjectRef(f.api_version, f.kind, f.namespace, f.name).resource_name
                          for f in report.findings if f.name is not None)
    print_kube(output, to_document(report), list(names), out)


def print_kube(output: str, doc: Mapping[str, Any], names: Sequence[str], out: TextIO | None = None) -> None:
    """Print ``doc`` (the command's ``-o json`` document) in a kubectl format; ``names``: the
    ``kind.group/name`` of each object it lists."""
    from ..render.kubeprint import TemplateError, custom_columns, parse_columns, parse_template
    from ..render.prefs import no_headers

    stream = out if out is not None else sys.stdout
    template = _state["template"] or ""
    try:
        if output == "name":
            stream.write("".join(f"{n}\n" for n in names))
        elif output == "jsonpath":
            # kubectl adds no newline: the template says where lines end
            stream.write(parse_template(template).execute(doc))
        else:
            items = doc.get("items") or []
            stream.write(custom_columns(parse_columns(template), items, headers=not no_headers()))
    except TemplateError as e:
        raise UsageError(f"-o {output}: error executing template: {e}") from None
    stream.flush()

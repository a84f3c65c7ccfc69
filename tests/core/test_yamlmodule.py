"""PyYAML imported through base.yamlmodule: the cheaper spelling of its NON_PRINTABLE is the same set."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kubectl_fieldown.base import yamlmodule

ROOT = Path(__file__).resolve().parents[2]


def test_the_two_spellings_match_exactly_the_same_code_points() -> None:
    every = "".join(chr(c) for c in range(sys.maxunicode + 1))
    pyyaml_own = re.compile(yamlmodule._NON_PRINTABLE)
    ours = re.compile(yamlmodule.NON_PRINTABLE_EXCLUDED)
    found = [m.start() for m in ours.finditer(every)]
    assert found == [m.start() for m in pyyaml_own.finditer(every)]
    # the set is what YAML 1.1 calls non-printable: C0 controls but tab, LF and CR; DEL and C1
    # controls but NEL; surrogates; U+FFFE and U+FFFF
    assert len(found) == 29 + 33 - 1 + 2048 + 2


def test_pyyaml_holds_the_cheap_spelling_and_re_compile_is_restored() -> None:
    # a fresh interpreter: in this one PyYAML may have been imported already
    code = (
        "import re; c = re.compile\n"
        "from kubectl_fieldown.base.yamlmodule import import_yaml, NON_PRINTABLE_EXCLUDED\n"
        "y = import_yaml()\n"
        "assert y.reader.Reader.NON_PRINTABLE.pattern == NON_PRINTABLE_EXCLUDED, y.reader.Reader.NON_PRINTABLE\n"
        "assert re.compile is c\n"
        "assert import_yaml() is y\n"
        # the pure reader's check still refuses a non-printable character and takes the rest
        "y.reader.Reader('a\\u00e9\\U0001F600 \\u0085')\n"
        "try:\n"
        "    y.reader.Reader('a\\x07b')\n"
        "except y.reader.ReaderError as e:\n"
        "    assert '#x0007' in str(e), e\n"
        "else:\n"
        "    raise SystemExit('accepted a BEL')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_every_import_of_pyyaml_in_the_package_goes_through_import_yaml() -> None:
    # the first import of PyYAML in a process is the costly one: in each module, the first statement
    # that imports it comes right after import_yaml()
    offenders = []
    for path in sorted((ROOT / "kubectl_fieldown").rglob("*.py")):
        if path.name == "yamlmodule.py":
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        first = next((i for i, line in enumerate(lines) if re.match(r"\s*(import yaml\b|from yaml\b)", line)), None)
        if first is not None and lines[first - 1].strip() != "import_yaml()":
            offenders.append(f"{path.relative_to(ROOT)}:{first + 1}")
    assert offenders == []

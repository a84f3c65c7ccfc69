"""Running the CLI for the fleet tests (a subprocess with the cluster's environment)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]

SCHEMA_FILE = Path(__file__).parent / "sarif-schema-2.1.0.json"


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def cli(env: dict[str, str], *args: str, timeout: float = 300, cwd: Path | None = None) -> Run:
    exe = Path(sys.executable).parent / "kubectl-fieldown"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "kubectl_fieldown"]
    proc = subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, timeout=timeout, check=False,
                          cwd=cwd)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def validate_sarif(doc: Any) -> None:
    """Raises unless ``doc`` is valid against the OASIS SARIF 2.1.0 schema (errata 01, vendored)."""
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(doc)

"""Loading the hack/ scripts the packaging tests exercise (they are scripts, not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def load_script(name: str) -> ModuleType:
    """``hack/<name>.py`` as a module."""
    module_name = "hack_" + name.replace("-", "_")
    found = sys.modules.get(module_name)
    if found is not None:
        return found
    spec = importlib.util.spec_from_file_location(module_name, REPO / "hack" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module

"""PyYAML, imported without paying for its one costly regular expression (issue 24).

``import yaml`` compiles ``yaml.reader.Reader.NON_PRINTABLE``, a negated character class whose
ranges span nearly the whole Basic Multilingual Plane. Python's regex compiler walks such ranges one
code point at a time: about 60,000 steps, 58 M instructions, more than half of PyYAML's import and
an eighth of a whole ``show -i FILE`` run. The same set of code points, written as the characters it
excludes, spans about 2,000 code points and compiles some 30 times faster.

Only PyYAML's pure-Python reader (used when libyaml is missing) ever matches with the pattern; the
two spellings match exactly the same code points (tests/core/test_yamlmodule.py checks each of the
1,114,112), so which one PyYAML holds changes nothing but the time its import takes.
"""

from __future__ import annotations

import re
import sys
from types import ModuleType

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["import_yaml"]

# yaml/reader.py's pattern, character for character (the escapes are Python's, as in its source)
_NON_PRINTABLE = "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]"
# its complement among all code points: what is not printable, as a positive class
NON_PRINTABLE_EXCLUDED = r"[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uD800-\uDFFF\uFFFE\uFFFF]"


def import_yaml() -> ModuleType:
    """The ``yaml`` module; imported here first, it compiles :data:`NON_PRINTABLE_EXCLUDED` in
    place of its own spelling. Every module of ours imports PyYAML through this."""
    module = sys.modules.get("yaml")
    if module is not None:
        return module
    original = re.compile

    def compile_cheaply(pattern: Any, flags: Any = 0) -> re.Pattern[Any]:
        if flags == 0 and pattern == _NON_PRINTABLE:
            pattern = NON_PRINTABLE_EXCLUDED
        return original(pattern, flags)

    # only for the import itself, which runs under the import lock; any other caller meanwhile
    # gets re.compile's own answer
    re.compile = compile_cheaply
    try:
        import yaml
    finally:
        re.compile = original
    return yaml

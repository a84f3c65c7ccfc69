"""Results remembered by the identity of their inputs, within a block whose inputs nobody changes.

An audit with ``-f`` plays every candidate fix of an object and the applier's next apply after it:
the engine reads the same live object, manifest and managedFields lists again and again (their field
sets, their decoded entries). Inside :class:`IdentityMemo` a function may remember what it computed
for an input by ``id(input)`` — keeping the input, so that its id is no other object's meanwhile —
because the block promises that no input is changed in place while it lasts (the engine writes new
dicts: :func:`kubectl_fieldown.base.value.copy_json` before any change). ``audit_object`` opens one
per object. Outside a block nothing is remembered: a caller (a test, a library user) may change a
dict in place between two calls.

Per thread (a context variable); a nested block shares the outermost one's memory.

``FIELDOWN_CHECK_MEMO=1`` (the test suite sets it) computes every remembered result again and
raises :class:`AssertionError` when it differs: an input changed in place inside a block.
"""

from __future__ import annotations

import os
from contextvars import ContextVar

TYPE_CHECKING = False  # typing's flag without importing typing (start-up, see base/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable
    from typing import Any, TypeVar

    _R = TypeVar("_R")

__all__ = ["CHECK", "IdentityMemo", "memo", "remembered"]

#: developers' check: recompute every remembered result and compare (tests/conftest.py sets it)
CHECK = os.environ.get("FIELDOWN_CHECK_MEMO") == "1"

_MEMO: ContextVar[dict[str, dict[Any, Any]] | None] = ContextVar("kubectl_fieldown_identity_memo", default=None)


def memo(name: str) -> dict[Any, Any] | None:
    """The memory of ``name`` in the current block (None: no block, remember nothing)."""
    m = _MEMO.get()
    if m is None:
        return None
    d = m.get(name)
    if d is None:
        d = m[name] = {}
    return d


class IdentityMemo:
    """``with IdentityMemo():`` — the inputs of the block are not changed in place (module docstring)."""

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = _MEMO.set({}) if _MEMO.get() is None else None

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _MEMO.reset(self._token)


def remembered(store: dict[Any, Any] | None, inputs: tuple[Any, ...], compute: Callable[..., _R], *args: Any,
               also: Hashable = None, same: Callable[[_R, _R], bool] | None = None) -> _R:
    """``compute(*args)``, remembered in ``store`` (:func:`memo`'s, or a caller's own for one object)
    by the identity of ``inputs`` and the value ``also``; ``store`` None: computed every time. The
    inputs are kept with the result, so that their ids are no other object's while it is remembered.
    With :data:`CHECK`, a remembered result is computed again and compared (``same``, else ``==``)."""
    if store is None:
        return compute(*args)
    n = len(inputs)  # (one or two inputs nearly always: built without a map)
    key = (id(inputs[0]), also) if n == 1 else (id(inputs[0]), id(inputs[1]), also) if n == 2 else \
        (*map(id, inputs), also)
    hit = store.get(key)
    if hit is not None:
        if CHECK:
            again = compute(*args)
            assert (same(again, hit[1]) if same is not None else again == hit[1]), \
                "an input changed in place while its result was remembered"
        result: _R = hit[1]
        return result
    result = compute(*args)
    store[key] = (inputs, result)
    return result

"""Records: the typed value classes of the command line's start-up paths, without :mod:`dataclasses`.

``show -i FILE`` has a start-up budget of 0.10 s (issue 24). On Python 3.11, importing
:mod:`dataclasses` imports :mod:`inspect` (with ast, dis and tokenize): 42 million instructions, and
creating each dataclass compiles generated source for its methods: another 3 million each. For the
15 value classes on that path that was over a quarter of the whole run. A :class:`Record` costs no
more than a plain class to create.

A record's fields are its ``__init__``'s parameters, which it writes, storing each in the slot of
the same name. From this class it gets what a frozen dataclass would have: equality and hash by the
fields (``uncompared=`` leaves some out, as ``field(compare=False)`` does), a repr, and
:meth:`replace` (which, like ``dataclasses.replace``, builds the new record with its ``__init__``).
A slot that is no parameter is a cache: not compared, not shown, not copied. ``mutable=True`` makes
a record unhashable, as a dataclass that is not frozen is. Immutability is the type checker's: the
fields of frozen records are declared ``Final``.

``audit`` (and ``conflicts``, the write commands) imports :mod:`dataclasses` anyway (typer does),
but created 66 dataclasses on its way: ~36 ms of every run, a sixth of its start-up, 0.08x the LIST
of 10,000 objects it is measured against (bench/bench_audit.py). 55 of them are records now (the
cluster layer, the audit's findings and context, the remedies' commands and checks, the engine's
requests and results). The rest keep dataclasses where a record would not fit: a
``__post_init__``, ``eq=False``, the schema's types (copied with ``__dict__``), and
:class:`~kubectl_fieldown.remedies.choose.Fix` (its module is at the size limit).

``show``'s modules keep two more rules:

- they import nothing from :mod:`typing` at run time (17 million instructions): annotations are
  strings (``from __future__ import annotations``), the names they use are imported under
  ``TYPE_CHECKING = False`` / ``if TYPE_CHECKING:`` (a name mypy knows, typing's own flag), and
  so are the type aliases that need them (with a plain ``tuple`` in their place at run time where
  another alias is built from them);
- a module they need rarely (decimal, struct, base64) is imported where it is used.

tests/cli/test_show_fast.py checks that ``show -i`` imports none of typing, dataclasses, inspect,
decimal, threading and contextlib (or typer).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

__all__ = ["Record"]

# (no TypeVar is made at run time either: one with a bound takes a millisecond)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar, TypeVar

    _R = TypeVar("_R", bound="Record")


class Record:
    __slots__ = ()

    #: the fields: ``__init__``'s parameters, in its order
    _fields: ClassVar[tuple[str, ...]] = ()
    #: the values equality and hash compare, read from a record (an attrgetter: reads in C, as fast
    #: as a dataclass's generated methods, which the engine's dictionary keys notice)
    _key: ClassVar[Callable[[Any], Any]]
    _field_set: ClassVar[frozenset[str]] = frozenset()
    #: every field's value, read from a record in :attr:`_fields` order
    _values: ClassVar[Callable[[Any], tuple[Any, ...]]]

    def __init_subclass__(cls, *, uncompared: tuple[str, ...] = (), mutable: bool = False) -> None:
        super().__init_subclass__()
        code = cls.__init__.__code__
        cls._fields = code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]
        unknown = (set(cls._fields) - set(cls.__dict__.get("__slots__", ()))) | (set(uncompared) - set(cls._fields))
        if unknown:
            raise TypeError(f"{cls.__name__}: no slot or no field for {sorted(unknown)}")
        compared = [name for name in cls._fields if name not in uncompared]
        cls._key = attrgetter(*compared) if compared else _nothing
        cls._field_set = frozenset(cls._fields)
        cls._values = _values_of(cls._fields)
        if mutable:
            cls.__hash__ = None  # type: ignore[assignment]  # as a dataclass that is not frozen

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        key = type(self)._key  # (from the class: a function there would bind to the record)
        return bool(key(self) == key(other))

    def __hash__(self) -> int:
        return hash(type(self)._key(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"

    def replace(self: _R, **changes: Any) -> _R:
        """A copy with ``changes`` (by field name), built by the class's ``__init__``."""
        cls = type(self)
        if not changes.keys() <= cls._field_set:
            unknown = changes.keys() - cls._field_set
            raise TypeError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
        # (the audit gives each object of a fleet its copy of one fix: read in C, not name by name)
        values = dict(zip(cls._fields, cls._values(self), strict=True))
        values.update(changes)
        return cls(**values)


def _nothing(record: Any) -> tuple[()]:
    return ()


def _values_of(fields: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A record's values of ``fields``, as a tuple whatever their number (attrgetter of one name
    gives the bare value)."""
    if len(fields) > 1:
        return attrgetter(*fields)
    if fields:
        one = attrgetter(fields[0])
        return lambda record: (one(record),)
    return _nothing

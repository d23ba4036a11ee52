"""Small read-only records for blockkit's internal tables and results.

A frozen dataclass generates and compiles its methods when its class is created: about
2 ms each here, paid at every start of the CLI for every such class on the path. These
records behave as frozen dataclasses do for what blockkit uses (fields by keyword or
position, read-only, equality and hash over the fields, a readable repr) at the cost of
a plain class. The library's public classes (Finding, FileReport, Report, Fix, Edit,
Context) stay dataclasses: callers may use ``dataclasses.replace`` and ``asdict`` on them.
"""

from __future__ import annotations

from typing import Any


class FrozenRecord:
    """Fields are the subclass's ``__slots__``; its ``__init__`` sets them with ``_set``."""

    __slots__ = ()

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{self.__class__.__qualname__}({fields})"

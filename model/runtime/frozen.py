"""Frozen dataclasses made nearly as cheaply as plain objects."""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any, TypeVar

T = TypeVar("T")


def fills_dict(cls: type[T]) -> type[T]:
    """Give a frozen dataclass an ``__init__`` that sets its fields in the instance dict, instead of one
    ``object.__setattr__`` call per field (the frozen dataclass's own): the same signature, defaults
    and annotations, and still frozen.  For the records made on hot paths: effects (nearly every step
    of every task makes one), stored objects, lock files, a backend's raw answers.

    Put it above ``@dataclass(frozen=True)``.
    """
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    defaults = {f"_default_{f.name}": f.default for f in fields(cls)  # type: ignore[arg-type]
                if f.default is not MISSING}
    params = "".join(f", {n}=_default_{n}" if f"_default_{n}" in defaults else f", {n}" for n in names)
    sets = f"    d = self.__dict__\n    {', '.join(f'd[{n!r}]' for n in names)}, = {', '.join(names)},\n"
    source = f"def __init__(self{params}):\n" + (sets if names else "    pass\n")
    namespace: dict[str, Any] = {}
    exec(source, defaults, namespace)  # as dataclasses itself makes __init__
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {**{f.name: f.type for f in fields(cls)}, "return": None}  # type: ignore[arg-type]
    cls.__init__ = init  # type: ignore[method-assign]
    return cls

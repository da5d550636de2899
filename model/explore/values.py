"""Values typed by what they are, as the explored world hands them to the protocol code.

The explorer's state key makes times relative to now and renames what a run invents, so a
state met again later, or reached through another order of the same steps, is the same state.
It recognises a time by its type: the explored world answers a clock read with a
:class:`WallMs` (a wall-clock reading, epoch ms) or an :class:`InstantMs` (true time or a
monotonic clock, ms since the run started), and a time made from one by adding or subtracting
a duration keeps its type (the difference of two is a plain duration).  A storage answer's body
is a :class:`Body` that knows its key, so the workload can say what in it is state.  To the
protocol code they are ints and bytes like any other: histories are the same, byte for byte.
"""

from __future__ import annotations

from typing import Any


class _Time(int):
    """A time: ``+``/``-`` a plain int gives the same kind of time, ``-`` a time of its kind a plain int."""

    __slots__ = ()

    def __add__(self, other: Any) -> Any:
        got = int.__add__(self, other)
        return type(self)(got) if type(other) is int and got is not NotImplemented else got

    def __radd__(self, other: Any) -> Any:
        got = int.__radd__(self, other)
        return type(self)(got) if type(other) is int and got is not NotImplemented else got

    def __sub__(self, other: Any) -> Any:
        got = int.__sub__(self, other)
        return type(self)(got) if type(other) is int and got is not NotImplemented else got


class InstantMs(_Time):
    """An instant of true time or of a node's monotonic clock (ms since the run started)."""

    __slots__ = ()


class WallMs(_Time):
    """A reading of a node's wall clock (epoch ms)."""

    __slots__ = ()


class Body(bytes):
    """A stored object's body as a storage answer carries it, with the key it was read from (``key``)."""

    key: str


def body_of(raw: bytes, key: str) -> Body:
    """``raw`` as a :class:`Body` of ``key``."""
    body = Body(raw)
    body.key = key
    return body

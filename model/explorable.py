"""What a state of a run consists of, declared by the code that owns it (for the exhaustive explorer).

The explorer (``model/explore``) merges two runs that reach the same state.  What "the same"
means is not guessed from the interpreter: each class whose objects live in a run's state says
what of it decides the run's future, in a method ``__explore_state__(self, k)`` that returns a
hashable value built with the :class:`Keyer` ``k`` it is given:

- ``k.value(x)`` for any value (a nested object is encoded by its own declaration);
- ``k.wall(ms)`` for a wall-clock reading (epoch ms of some node's clock) and ``k.instant(ms)``
  for an instant of true time or of a monotonic clock (ms since the run started): both are made
  relative to now, so a state met again later is the same state;
- ``k.name(s)`` for a name the run invents (an owner id, a version tag): renamed in order of
  first appearance, so runs that drew the same names in another order meet;
- ``k.node(s)`` for a node's name (permuted when the explorer merges states equal up to renaming
  identical writers);
- ``k.body(key, body)`` for an object's body in storage, as the workload declares its content
  (a lock file's validUntil is a wall time, its owner a name).

A frozen dataclass needs no method: its fields are its state, each encoded by its value.  A value
whose type says what it is needs no declaration either: the explorer's clocks answer with
times typed as such, its store with bodies that know their key.  A protocol generator's state is
where it is suspended (its source line) and its local variables (the explorer reads them through
Python's documented frame attributes, and refuses a suspension it cannot pin down: see
``model/explore/statekey.py``).  A class met in a state without a declaration is an error that
names it, never a guess.

Nothing here runs in the simulated or the real world: the methods are read by the explorer only.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Protocol


class Keyer(Protocol):
    """What a declaration encodes its parts with (implemented by ``model.explore.statekey.Keyer``)."""

    def value(self, v: Any) -> Hashable:
        """Any value, by its type or its own declaration."""
        ...

    def wall(self, ms: int) -> Hashable:
        """A wall-clock reading (epoch ms), relative to the least skewed clock's reading now."""
        ...

    def offset(self, ms: int) -> Hashable:
        """A clock's offset from true time, relative to the least offset of the run's clocks (so runs whose
        clocks are all shifted alike meet)."""
        ...

    def instant(self, ms: int) -> Hashable:
        """An instant of true time or of a node's monotonic clock (ms since the start), relative to now."""
        ...

    def name(self, s: str | None) -> Hashable:
        """A name the run invents (owner id, version tag), renamed in order of first appearance."""
        ...

    def node(self, s: str) -> Hashable:
        """A node's name (permuted by symmetry)."""
        ...

    def body(self, key: str, body: bytes | None) -> Hashable:
        """The body of the object ``key``, as the workload declares its content."""
        ...


class Explorable(Protocol):
    """An object that declares its part of a state."""

    def __explore_state__(self, k: Keyer) -> Hashable:
        """What of this object decides the run's future (see the module doc)."""
        ...

"""Sequential specifications for the linearizability search (the model interface of Porcupine).

A model says what one object does when operations run one at a time:

- ``init()``: the initial state;
- ``step(state, input, output) -> (legal, new_state)``: whether the operation with this
  input and output may run in ``state``, and the state after it (states must be hashable and
  compared with ``==``; the search memoises on them);
- ``read_only(input, output)``: True when the operation never changes any state (reads, failed
  conditional writes).  The search places such an operation as soon as it is legal and never
  tries it elsewhere: moving an identity step earlier, to where it is already legal, keeps
  every linearization valid;
- ``partition(ops)``: independent sub-histories (a history is linearizable iff each part is;
  the key-value model partitions by key, so its per-part state is one value);
- ``describe_operation`` / ``describe_state`` / ``why_not``: words for counterexamples.

A :class:`NondeterministicModel` steps to a set of states; :meth:`NondeterministicModel.as_model`
turns it into a :class:`Model` over frozensets of states (the power-set construction).

Inputs and outputs are the pairs ``(f, arg)`` and ``(status, result)`` of an :class:`Operation`.
``status`` ``info`` (unknown outcome) is legal in any state: the search gives such an operation
an open interval (it may take effect any time after its invoke, or never, by being placed last).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

INVOKE, OK, FAIL, INFO = "invoke", "ok", "fail", "info"

S = TypeVar("S", bound=Hashable)
Input = tuple[str, Any]  # (f, arg)
Output = tuple[str, Any]  # (status, result)


@dataclass(frozen=True)
class Operation:
    """A call paired from its invoke and completion events.

    ``arg`` is the invoke's value, ``result`` the completion's; ``status`` is ``ok``, ``fail`` or
    ``info``; ``call`` and ``ret`` are the times of the invoke and the completion (``ret`` is
    ``math.inf`` for ``info``: an unknown outcome may take effect at any later time).
    """

    index: int
    process: Any
    f: str
    arg: Any
    status: str
    result: Any
    call: float
    ret: float

    @property
    def input(self) -> Input:
        """``(f, arg)``."""
        return (self.f, self.arg)

    @property
    def output(self) -> Output:
        """``(status, result)``."""
        return (self.status, self.result)

    def interval(self) -> str:
        """``[call, ret]`` with ``...`` for an open end."""
        end = "..." if math.isinf(self.ret) else f"{self.ret:g}"
        return f"[{self.call:g}, {end}]"


class _Specification(Generic[S]):
    """What deterministic and nondeterministic models share: partitioning and describing operations."""

    name = "model"

    def read_only(self, input: Input, output: Output) -> bool:
        """True when the operation leaves every state unchanged (it is then placed greedily)."""
        return False

    def partition(self, ops: Sequence[Operation]) -> list[list[Operation]]:
        """Independent sub-histories; by default the whole history is one."""
        return [list(ops)] if ops else []

    def partition_name(self, ops: Sequence[Operation]) -> str:
        """A name for a sub-history made by :meth:`partition` (e.g. ``key 'x'``)."""
        return "history"

    def describe_operation(self, input: Input, output: Output) -> str:
        """E.g. ``read()=1`` or ``cas(2->5)``."""
        return f"{input[0]}({input[1]!r}) -> {output[0]} {output[1]!r}"

    def describe_state(self, state: S) -> str:
        """E.g. ``5``."""
        return repr(state)


class Model(ABC, _Specification[S]):
    """A deterministic sequential specification (see the module docstring)."""

    @abstractmethod
    def init(self) -> S:
        """The initial state."""

    @abstractmethod
    def step(self, state: S, input: Input, output: Output) -> tuple[bool, S]:
        """``(legal, new_state)`` of running the operation in ``state``."""

    def why_not(self, state: S, input: Input, output: Output) -> str:
        """Why the operation cannot run in ``state`` (it is illegal there)."""
        return f"the state is {self.describe_state(state)}"


def _value(v: Any) -> str:
    return "none" if v is None else repr(v)


class RegisterModel(Model[Hashable]):
    """One register written with conditional writes; the state is its value (``None``: absent).

    - ``read()``: ``ok`` with the value read; ``fail`` or ``info`` claims nothing.
    - ``write(new)``: sets the value (``fail``: it did not).
    - ``cas([expected, new])``: ``ok`` took effect (the value was ``expected``); ``fail`` is a
      claim that the value was not ``expected`` at some instant of the call (a 412); ``info``
      may take effect (when the value is ``expected``) or not.  ``expected`` ``None`` is a
      create-if-absent.
    """

    name = "cas-register"

    def __init__(self, initial: Hashable = None) -> None:
        self.initial = initial

    def init(self) -> Hashable:
        return self.initial

    def step(self, state: Hashable, input: Input, output: Output) -> tuple[bool, Hashable]:
        f, arg = input
        status, result = output
        if f == "read":
            return (status != OK or result == state), state
        if f == "write":
            return True, (state if status == FAIL else arg)
        if f == "cas":
            expected, new = arg
            if status == FAIL:
                return state != expected, state
            if state == expected:
                return True, new
            return status == INFO, state
        raise ValueError(f"unknown register operation {f!r}")

    def read_only(self, input: Input, output: Output) -> bool:
        return input[0] == "read" or output[0] == FAIL

    def describe_operation(self, input: Input, output: Output) -> str:
        f, arg = input
        status, result = output
        if f == "read":
            what = f"read()={_value(result)}" if status == OK else "read()"
        elif f == "write":
            what = f"write({_value(arg)})"
        else:
            what = f"cas({_value(arg[0])}->{_value(arg[1])})"
        return what if status == OK else f"{what} {status}"

    def describe_state(self, state: Hashable) -> str:
        return "nothing (absent)" if state is None else repr(state)

    def why_not(self, state: Hashable, input: Input, output: Output) -> str:
        holds = f"the register holds {self.describe_state(state)}"
        if input[0] == "cas" and output[0] == FAIL:
            return f"{holds}, so the cas would have succeeded"
        if input[0] == "cas":
            expected = input[1][0]
            return f"{holds}, not absent" if expected is None else f"{holds}, not the expected {expected!r}"
        return holds


class KVModel(Model[str]):
    """A key-value store of strings, partitioned by key (Porcupine's kv model).

    ``arg`` is ``(key, value)`` (``value`` ``None`` for ``get``); a ``get`` returns the value
    (``""`` for a key never written), ``put`` sets it, ``append`` concatenates to it; a ``fail``ed
    put or append did not take effect.
    The per-partition state is the value of that partition's key.
    """

    name = "kv"

    def init(self) -> str:
        return ""

    def step(self, state: str, input: Input, output: Output) -> tuple[bool, str]:
        f, (_key, value) = input
        status, result = output
        if f == "get":
            return (status != OK or result == state), state
        if status == FAIL:
            return True, state  # a put or append that did not take effect
        if f == "put":
            return True, value
        if f == "append":
            return True, state + value
        raise ValueError(f"unknown kv operation {f!r}")

    def read_only(self, input: Input, output: Output) -> bool:
        return input[0] == "get" or output[0] == FAIL

    def partition(self, ops: Sequence[Operation]) -> list[list[Operation]]:
        parts: dict[Any, list[Operation]] = {}
        for op in ops:
            parts.setdefault(op.arg[0], []).append(op)
        return [parts[k] for k in sorted(parts, key=repr)]

    def partition_name(self, ops: Sequence[Operation]) -> str:
        return f"key {ops[0].arg[0]!r}" if ops else "no key"

    def describe_operation(self, input: Input, output: Output) -> str:
        f, (key, value) = input
        status, result = output
        if f == "get":
            what = f"get({key!r})={result!r}" if status == OK else f"get({key!r})"
        else:
            what = f"{f}({key!r}, {value!r})"
        return what if status == OK else f"{what} {status}"

    def why_not(self, state: str, input: Input, output: Output) -> str:
        return f"key {input[1][0]!r} holds {state!r}"


class NondeterministicModel(ABC, _Specification[S]):
    """A specification whose steps may lead to several states (empty: illegal)."""

    name = "nondeterministic"

    @abstractmethod
    def init(self) -> Iterable[S]:
        """The possible initial states."""

    @abstractmethod
    def step(self, state: S, input: Input, output: Output) -> Iterable[S]:
        """Every state the operation may lead to from ``state``."""

    def as_model(self) -> PowersetModel[S]:
        """The deterministic model over sets of states."""
        return PowersetModel(self)


class PowersetModel(Model[frozenset[S]]):
    """A :class:`NondeterministicModel` as a :class:`Model` whose state is the set of possible states."""

    def __init__(self, inner: NondeterministicModel[S]) -> None:
        self.inner = inner
        self.name = inner.name

    def init(self) -> frozenset[S]:
        return frozenset(self.inner.init())

    def step(self, state: frozenset[S], input: Input, output: Output) -> tuple[bool, frozenset[S]]:
        nxt: set[S] = set()
        for s in state:
            nxt.update(self.inner.step(s, input, output))
        return bool(nxt), frozenset(nxt)

    def read_only(self, input: Input, output: Output) -> bool:
        return self.inner.read_only(input, output)

    def partition(self, ops: Sequence[Operation]) -> list[list[Operation]]:
        return self.inner.partition(ops)

    def partition_name(self, ops: Sequence[Operation]) -> str:
        return self.inner.partition_name(ops)

    def describe_operation(self, input: Input, output: Output) -> str:
        return self.inner.describe_operation(input, output)

    def describe_state(self, state: frozenset[S]) -> str:
        return "{" + ", ".join(sorted(self.inner.describe_state(s) for s in state)) + "}"

    def why_not(self, state: frozenset[S], input: Input, output: Output) -> str:
        return f"no possible state allows it (possible: {self.describe_state(state)})"


MODELS: dict[str, type[Model[Any]]] = {"cas-register": RegisterModel, "kv": KVModel}

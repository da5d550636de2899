"""How every interpreter steps a protocol generator: one place for cancellation and interrupts.

An interpreter asks :meth:`TaskLoop.next_effect` for the task's next effect,
performs it, and hands back the answer with :meth:`answer` (or an
:class:`~model.effects.Interrupted` with :meth:`fail`).  The loop ends a task
that was cancelled, and delivers a pending interrupt at the next effect its
*interrupt policy* accepts (a Java interrupt is a flag that a thread sees only
at interruptible points).  :func:`interrupt_policy` builds the policies of
``workload.interrupt`` for writer tasks; other tasks take :func:`any_action`
(every effect but logging, reading the clock and non-interruptible work).
``CheckInterrupt`` effects never reach the interpreter: the loop answers them.
An interpreter asks the same policy whether an interrupt may end a task's
current sleep at once.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, Protocol

from model.effects import (
    CheckInterrupt,
    CreateIfAbsent,
    Delete,
    Effect,
    FencedPut,
    Interrupted,
    ListPrefix,
    Now,
    Put,
    Read,
    Record,
    ReplaceIfMatch,
    Sleep,
)

Policy = Callable[[Effect], bool]
_STORAGE = (Read, CreateIfAbsent, ReplaceIfMatch, Put, FencedPut, ListPrefix, Delete)
_STORAGE_TYPES = frozenset(_STORAGE)
_NOT_INTERRUPTIBLE = frozenset({Record, Now})


def _interruptible_sleep(effect: Effect) -> bool:
    return isinstance(effect, Sleep) and effect.interruptible


def any_action(effect: Effect) -> bool:
    """The default policy: every effect but Record, Now and non-interruptible work (a Sleep that is work)."""
    if type(effect) in _NOT_INTERRUPTIBLE:  # logging and reading the clock, as in Java
        return False
    return not isinstance(effect, Sleep) or effect.interruptible


def _next_storage_call(effect: Effect) -> bool:
    if type(effect) is Sleep:
        return effect.interruptible
    return type(effect) in _STORAGE_TYPES


def _checkpoints(effect: Effect) -> bool:
    return isinstance(effect, CheckInterrupt) or _interruptible_sleep(effect)


def _never(effect: Effect) -> bool:
    return False


def interrupt_policy(name: str) -> Policy:
    """The policy of ``workload.interrupt``: where a writer notices a pending interrupt.

    ``next-storage-call``: at its next storage request (AWS SDK v2 checks the thread's interrupt flag
    before a request; Hudi's writer code checks nothing itself) or an interruptible sleep;
    ``checkpoints``: only at explicit ``CheckInterrupt`` effects or an interruptible sleep;
    ``never``: nowhere (a writer that swallows interrupts).
    """
    policies: dict[str, Policy] = {
        "next-storage-call": _next_storage_call, "checkpoints": _checkpoints, "never": _never}
    return policies[name]


class TaskState(Protocol):
    """The flags an interpreter keeps per task."""

    cancel_requested: bool
    pending_interrupt: bool


class TaskLoop:
    """Steps one generator of effects on behalf of an interpreter, delivering interrupts by ``policy``."""

    def __init__(self, gen: Generator[Effect, Any, Any], policy: Policy = any_action) -> None:
        self.gen = gen
        self.policy = policy
        self._send: Any = None
        self._throw: BaseException | None = None

    def next_effect(self, task: TaskState, answer: Any = None) -> Effect | None:
        """The next effect to perform, or None when the task has finished or was cancelled.

        ``answer``: the result of the effect just performed, as :meth:`answer` gives it.
        """
        if answer is not None:
            self._send = answer
        while True:
            try:
                effect = self.gen.throw(self._throw) if self._throw is not None else self.gen.send(self._send)
            except StopIteration:
                return None
            self._throw, self._send = None, None
            if task.cancel_requested:
                return None
            if task.pending_interrupt and self.policy(effect):
                task.pending_interrupt = False
                self._throw = Interrupted()
                continue
            if type(effect) is CheckInterrupt:
                continue  # no interrupt to deliver here: the check answers None
            return effect

    def answer(self, value: Any) -> None:
        """The result of the effect just performed (an effect not answered gets None)."""
        self._send = value

    def fail(self, error: BaseException) -> None:
        """The effect just performed raised ``error`` in the task (an interrupt)."""
        self._throw = error

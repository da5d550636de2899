"""How every interpreter steps a protocol generator: one place for cancellation and interrupts.

An interpreter asks :meth:`TaskLoop.next_effect` for the task's next effect,
performs it, and hands back the answer with :meth:`answer` (or an
:class:`~model.effects.Interrupted` with :meth:`fail`).  The loop ends a task
that was cancelled, and delivers a pending interrupt at the next effect that
does something (never at a ``Record`` or ``Now``: logging and reading the
clock are not interruption points, as in Java).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Protocol

from model.effects import Effect, Interrupted, Now, Record

_NOT_INTERRUPTIBLE = frozenset({Record, Now})  # logging and reading the clock, as in Java


class TaskState(Protocol):
    """The flags an interpreter keeps per task."""

    cancel_requested: bool
    pending_interrupt: bool


class TaskLoop:
    """Steps one generator of effects on behalf of an interpreter."""

    def __init__(self, gen: Generator[Effect, Any, Any]) -> None:
        self.gen = gen
        self._send: Any = None
        self._throw: BaseException | None = None

    def next_effect(self, task: TaskState) -> Effect | None:
        """The next effect to perform, or None when the task has finished or was cancelled."""
        while True:
            try:
                effect = self.gen.throw(self._throw) if self._throw is not None else self.gen.send(self._send)
            except StopIteration:
                return None
            self._throw, self._send = None, None
            if task.cancel_requested:
                return None
            if task.pending_interrupt and type(effect) not in _NOT_INTERRUPTIBLE:
                task.pending_interrupt = False
                self._throw = Interrupted()
                continue
            return effect

    def answer(self, value: Any) -> None:
        """The result of the effect just performed."""
        self._send = value

    def fail(self, error: BaseException) -> None:
        """The effect just performed raised ``error`` in the task (an interrupt)."""
        self._throw = error

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
from dataclasses import dataclass
from typing import Any, Protocol

from model.config import FaultPlan
from model.effects import Effect, Interrupted, Now, Record
from model.storage_lock import HEARTBEAT_TASK


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
            if task.pending_interrupt and not isinstance(effect, Record | Now):
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


@dataclass
class HeartbeatStartFaults:
    """The fault plan's heartbeat-start failures of one node: which of its heartbeat spawns fail (1-based)."""

    failing: frozenset[int] = frozenset()
    spawned: int = 0

    @staticmethod
    def of(plan: FaultPlan, node: str) -> HeartbeatStartFaults:
        """The failures the plan gives ``node``."""
        failing = frozenset(h.acquisition for h in plan.heartbeat_start_failures if h.node == node)
        return HeartbeatStartFaults(failing)

    def allows(self, task: str) -> bool:
        """Count a spawn of ``task``; False when the plan makes this heartbeat fail to start."""
        if task != HEARTBEAT_TASK:
            return True
        self.spawned += 1
        return self.spawned not in self.failing

"""Where a task notices an interrupt: its *interrupt policy*.

A Java interrupt is a flag that a thread sees only at interruptible points.  The
kernel's task loop (``Kernel._drive`` in ``model/runtime/kernel.py``) ends a cancelled
task at its next effect and throws a pending interrupt into the task at the first
effect the task's policy accepts; ``CheckInterrupt`` effects never reach a world:
the loop answers them.  The kernel asks the same policy whether an interrupt may
end a task's current sleep at once.  :func:`interrupt_policy` builds the policies
of ``workload.interrupt`` for writer tasks; other tasks take :func:`any_action`
(every effect but logging, reading the clock and non-interruptible work).
"""

from __future__ import annotations

from collections.abc import Callable

from model.runtime.effects import STORAGE_EFFECTS, CheckInterrupt, Effect, Now, Record, Sleep

Policy = Callable[[Effect], bool]
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
    return type(effect) in STORAGE_EFFECTS


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

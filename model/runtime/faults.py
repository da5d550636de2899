"""The fault plan as the worlds apply it: timed nemesis actions, and which error rule hits a request.

Written once and used by every world: the simulated network and the real-world
interpreter take :func:`timed_actions`; the simulated network and the fault
proxy in front of a real server take :class:`FaultMatcher`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from model.config import Cutoff, ErrorRule, FaultPlan
from model.explorable import Keyer

KEY_CLASSES = ("lock", "register")
HEARTBEAT_TASK = "heartbeat"  # the task name whose spawns the plan's heartbeat-start failures hit


@dataclass(frozen=True)
class Action:
    """One nemesis action: at true time ``at_ms``, ``kind`` happens to ``node`` (``spec`` is the fault)."""

    at_ms: int
    kind: str  # pause-start, pause-end, crash, restart, writer-death, cutoff-start, cutoff-end, shutdown
    node: str
    index: int  # the fault's position in its list of the plan (ties are broken by it)
    spec: Any


def timed_actions(plan: FaultPlan, nodes: Sequence[str] | None = None) -> list[Action]:
    """The plan's faults that happen at fixed times, in the order the nemesis applies them.

    Pauses with a trigger other than ``time`` are not here (they start when their node records
    the triggering event).  ``nodes`` limits the actions to those nodes (a run of some nodes).
    """
    acts: list[Action] = []
    for i, p in enumerate(plan.pauses):
        if p.trigger == "time":
            acts += [Action(p.at_ms, "pause-start", p.node, i, p),
                     Action(p.at_ms + p.duration_ms, "pause-end", p.node, i, p)]
    for i, c in enumerate(plan.crashes):
        acts.append(Action(c.at_ms, "crash", c.node, i, c))
        if c.restart_after_ms >= 0:
            acts.append(Action(c.at_ms + c.restart_after_ms, "restart", c.node, i, c))
    for i, d in enumerate(plan.writer_deaths):
        acts.append(Action(d.at_ms, "writer-death", d.node, i, d))
    for i, k in enumerate(plan.cutoffs):
        acts += [Action(k.start_ms, "cutoff-start", k.node, i, k),
                 Action(k.end_ms, "cutoff-end", k.node, i, k)]
    for i, sd in enumerate(plan.shutdowns):
        acts.append(Action(sd.at_ms, "shutdown", sd.node, i, sd))
    if nodes is not None:
        acts = [a for a in acts if a.node in nodes]
    acts.sort(key=lambda a: (a.at_ms, a.kind, a.index))
    return acts


def timed_pauses(plan: FaultPlan, node: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` windows of ``node``'s pauses that happen at fixed times."""
    return [(p.at_ms, p.at_ms + p.duration_ms) for p in plan.pauses if p.node == node and p.trigger == "time"]


class FaultMatcher:
    """Which error rule of the plan hits one request (the first that matches), and cut-off windows.

    ``key_class(key)`` names a key's class (``lock``, ``register`` or anything else); a rule whose
    ``key`` is not ``any``/``lock``/``register`` is a key prefix, matched after ``key_prefix`` (the
    table prefix of a real bucket).  ``rng`` draws the rules' probabilities; a rule's ``count``
    limits its hits.  Not thread-safe: a caller with threads holds its own lock.
    """

    def __init__(self, errors: Sequence[ErrorRule], cutoffs: Sequence[Cutoff], rng: random.Random,
                 key_class: Callable[[str], str], key_prefix: str = "") -> None:
        self.errors = list(errors)
        self.cutoffs = list(cutoffs)
        self.rng = rng
        self.key_class = key_class
        self.key_prefix = key_prefix
        self.hits: dict[int, int] = {}
        # the rules whose node, method and key match a request, in order
        self._static: dict[tuple[str, bool, str], list[tuple[int, ErrorRule]]] = {}

    def _matches_key(self, rule: ErrorRule, key: str) -> bool:
        if rule.key == "any":
            return True
        if rule.key in KEY_CLASSES:
            return rule.key == self.key_class(key)
        return key.startswith(self.key_prefix + rule.key)

    def match(self, node: str, write: bool, key: str, now: int) -> ErrorRule | None:
        """The rule that hits a request of ``node`` (a write or a read of ``key``) at true time ``now``."""
        rules = self._static.get((node, write, key))
        if rules is None:  # node, method and key class never change: match them once per request kind
            method = "write" if write else "read"
            rules = [(i, r) for i, r in enumerate(self.errors)
                     if r.node in ("any", node) and self._matches_key(r, key) and r.method in ("any", method)]
            self._static[(node, write, key)] = rules
        for i, rule in rules:
            if not rule.start_ms <= now < rule.end_ms:
                continue
            if rule.count and self.hits.get(i, 0) >= rule.count:
                continue
            if rule.prob < 1.0 and self.rng.random() >= rule.prob:
                continue
            self.hits[i] = self.hits.get(i, 0) + 1
            return rule
        return None

    def cut_off(self, node: str, now: int) -> bool:
        """True while ``node`` cannot reach storage."""
        return any(c.node == node and c.start_ms <= now < c.end_ms for c in self.cutoffs)

    def decide(self, node: str, write: bool, key: str, now: int) -> str | None:
        """What happens to one request: ``cutoff``, a rule's status (``409``, ``timeout``, ...) or None.

        The rules are matched first (a hit counts, and draws its probability, even when the node
        is cut off), then the node's cut-off windows.
        """
        rule = self.match(node, write, key, now)
        if self.cutoffs and self.cut_off(node, now):
            return "cutoff"
        return None if rule is None else rule.status


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

    __explore_shared__ = {"failing": "c", "spawned": "r"}  # every Spawn of the node counts (explore/shared)

    def __explore_state__(self, k: Keyer) -> Hashable:
        """Which spawns fail, and how many there were."""
        return (self.failing, self.spawned)

    def allows(self, task: str) -> bool:
        """Count a spawn of ``task``; False when the plan makes this heartbeat fail to start."""
        if task != HEARTBEAT_TASK:
            return True
        self.spawned += 1
        return self.spawned not in self.failing

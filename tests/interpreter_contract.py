"""The interpreter contract: one scripted schedule, the same client decisions and steps in every world.

A scripted store answers each storage attempt from a list (an outcome per attempt, in
order), the same list in the simulated world (as the model's store) and in the real-world
interpreter (as a backend).  A small writer with a heartbeat-like helper task runs the
same effects in both; the test compares what the writer saw (outcome, attempts,
ambiguity of each call: the client policy's decisions) and the order of the protocol's
steps (the writer's and helper's records).  ``tests/test_interpreter_contract.py`` runs it
without a server; ``tests/test_backends_interpreter_contract.py`` does the same through a
real server behind the fault proxy.
"""

from __future__ import annotations

import threading
from collections.abc import Generator
from typing import Any

from backends.base import Backend
from model.config import Dist, LockConfig, Scenario, StorageConfig, WorkloadConfig
from model.runtime.effects import (
    Cancel,
    CreateIfAbsent,
    Effect,
    Interrupt,
    Interrupted,
    IsAlive,
    ListPrefix,
    Outcome,
    Put,
    Read,
    Record,
    ReplaceIfMatch,
    Sleep,
    Spawn,
    StorageEffect,
    StoreResult,
)
from model.runtime.history import Event
from model.runtime.kernel import WriterContext
from model.runtime.objectstore import StoredObject

# Each storage call of the writer, and the answers its attempts get (retries: 2).
SCRIPT: list[tuple[StorageEffect, list[Outcome]]] = [
    (CreateIfAbsent("t/lock", b"a"), [Outcome.TIMEOUT, Outcome.PRECONDITION_FAILED]),  # lost reply, 412
    (ReplaceIfMatch("t/lock", b"b", "v1"), [Outcome.UNAVAILABLE] * 3),  # retries run out
    (Read("t/lock"), [Outcome.CONFLICT, Outcome.OK]),
    (Put("t/reg", b"c"), [Outcome.THROTTLED, Outcome.TIMEOUT, Outcome.OK]),  # a read-free write
    (Read("t/reg"), [Outcome.TIMEOUT, Outcome.TIMEOUT, Outcome.TIMEOUT]),  # a read is never ambiguous
    (ListPrefix("t/"), [Outcome.OK]),
]


def scenario() -> Scenario:
    """One node, no faults, retries 2 with a short backoff, instantaneous network."""
    return Scenario(name="interpreter-contract", duration_ms=20_000,
                    # no audit enable file: the scripted store answers the writer's requests only
                    lock=LockConfig(validity_secs=10, renew_interval_secs=1, base_path="t", audit=False),
                    storage=StorageConfig(latency_ms=Dist("fixed", 0), timeout_ms=2_000, sdk_retries=2,
                                          retry_backoff_ms=20),
                    workload=WorkloadConfig(writers=1, register_key="t/reg"))


class Answers:
    """The scripted answers, handed out in order to whichever world asks (thread-safe)."""

    def __init__(self) -> None:
        self.queue = [outcome for _, outcomes in SCRIPT for outcome in outcomes]
        self.seen: list[str] = []  # effect type of each attempt, in order
        self._lock = threading.Lock()

    def next(self, effect: StorageEffect) -> StoreResult:
        with self._lock:
            self.seen.append(type(effect).__name__)
            outcome = self.queue.pop(0)
        if outcome is not Outcome.OK:
            return StoreResult(outcome)
        if isinstance(effect, Read):
            return StoreResult(Outcome.OK, body=b"x", version="v1")
        if isinstance(effect, ListPrefix):
            return StoreResult(Outcome.OK, body=b"t/lock")
        return StoreResult(Outcome.OK, version="v2")


class ScriptedStore:
    """The simulated world's store (``model.runtime.objectstore.Store``) answering from the script."""

    flavor = "s3"

    def __init__(self, answers: Answers) -> None:
        self.answers = answers

    def apply(self, effect: StorageEffect, *, node: str = "-", now: int = 0) -> StoreResult:
        return self.answers.next(effect)

    def peek(self, key: str) -> StoredObject | None:
        return None


class ScriptedBackend(Backend):
    """The real world's backend answering from the script (one attempt per ``perform``)."""

    dialect = "s3"
    client = "scripted"

    def __init__(self, answers: Answers) -> None:
        super().__init__("t/")
        self.answers = answers

    def perform(self, effect: StorageEffect) -> StoreResult:
        return self.answers.next(effect)

    def _read(self, key: str) -> StoreResult:
        raise NotImplementedError

    def _create_if_absent(self, key: str, body: bytes) -> StoreResult:
        raise NotImplementedError

    def _replace_if_match(self, key: str, body: bytes, version: str) -> StoreResult:
        raise NotImplementedError

    def _put(self, key: str, body: bytes) -> StoreResult:
        raise NotImplementedError

    def _list_prefix(self, prefix: str) -> StoreResult:
        raise NotImplementedError

    def _delete(self, key: str) -> StoreResult:
        raise NotImplementedError


def helper() -> Generator[Effect, Any, Any]:
    """A heartbeat-like task: interrupts the writer once (in its sleep), then sleeps until cancelled."""
    yield Record("helper", "invoke")
    yield Sleep(800)  # the writer is done with its calls and sleeps by then
    yield Interrupt("writer")
    yield Record("helper", "info", {"interrupted": "writer"})
    while True:
        yield Sleep(10_000)


def writer(ctx: WriterContext) -> Generator[Effect, Any, Any]:
    """The script's calls, a helper task, an interrupt in a sleep, a cancel, and the end."""
    started = yield Spawn("helper", helper())
    yield Record("spawn", "ok", {"started": started})
    for effect, _ in SCRIPT:
        result: StoreResult = yield effect
        yield Record("call", "ok", {"op": type(effect).__name__, "outcome": result.outcome.name,
                                    "attempts": result.attempts, "ambiguous": result.ambiguous})
    try:
        yield Sleep(5_000)
        yield Record("sleep", "ok")
    except Interrupted:
        yield Record("sleep", "fail", {"interrupted": True})
    alive = yield IsAlive("helper")
    yield Cancel("helper")
    after = yield IsAlive("helper")
    yield Record("cancel", "ok", {"alive_before": alive, "alive_after": after})
    while True:
        yield Sleep(10_000)


def steps(events: list[Event]) -> dict[str, list[tuple[str, str, Any]]]:
    """The protocol's steps of a history, per task: (type, f, value) of the writer's and helper's records.

    Concurrent tasks interleave as their world schedules them; each task's own order is the contract.
    """
    per: dict[str, list[tuple[str, str, Any]]] = {"w1": [], "w1/helper": []}
    for e in events:
        if e.process in per:
            per[e.process].append((e.type, e.f, e.value))
    return per

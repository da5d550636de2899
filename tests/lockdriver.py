"""A scripted driver for the sans-I/O lock provider: steps its generators without SimPy.

Each storage request takes the next scripted answer:

- ``"200"``: the request is applied to an in-memory store and its answer returned (must be OK);
- ``"lost"``: applied, but the client sees ``TIMEOUT`` (the reply was lost);
- ``"412"``, ``"404"``, ``"409"``, ``"429"``, ``"503"``, ``"timeout"``: that answer, nothing applied.

The clocks advance only by sleeps and by ``latency_ms`` per request, so a test states exactly
which requests the provider sends next (``requests``), in which order, and what it returns.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from typing import Any

from model.config import LockConfig
from model.lock.lockfile import LockData
from model.lock.provider import StorageLockProvider
from model.runtime.clock import EPOCH_MS
from model.runtime.effects import (
    Cancel,
    CheckInterrupt,
    Interrupt,
    Interrupted,
    IsAlive,
    Now,
    Outcome,
    Record,
    ShutdownHook,
    Sleep,
    Spawn,
    StorageEffect,
    StoreResult,
)
from model.runtime.objectstore import ObjectStore

ANSWERS = {"412": Outcome.PRECONDITION_FAILED, "404": Outcome.NOT_FOUND, "409": Outcome.CONFLICT,
           "429": Outcome.THROTTLED, "503": Outcome.UNAVAILABLE, "timeout": Outcome.TIMEOUT}


class ScriptExhausted(AssertionError):
    """The provider sent a request the test did not script."""


@dataclass
class Driver:
    """Runs provider generators against a scripted store and a clock that moves only when told."""

    flavor: str = "s3"
    now: int = EPOCH_MS  # the wall clock (epoch ms)
    latency_ms: int = 0  # each request advances both clocks by this
    answers: list[str] = field(default_factory=list)
    store: ObjectStore = field(init=False)
    mono: int = 0
    requests: list[StorageEffect] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    sleeps: list[int] = field(default_factory=list)
    spawned: dict[str, Generator[Any, Any, Any]] = field(default_factory=dict)
    interrupts: list[str] = field(default_factory=list)
    cancels: list[Cancel] = field(default_factory=list)
    hooks: dict[str, Any] = field(default_factory=dict)
    spawn_ok: bool = True
    cancel_ok: bool = True
    writer_alive: bool = True
    interrupt_at: Callable[[object], bool] = lambda effect: False  # throw Interrupted at this effect
    on_sleep: Callable[[Sleep], None] = lambda sleep: None

    def __post_init__(self) -> None:
        self.store = ObjectStore(self.flavor)

    def script(self, *answers: str) -> Driver:
        """Append answers for the next storage requests."""
        self.answers.extend(answers)
        return self

    def advance(self, ms: int) -> None:
        self.now += ms
        self.mono += ms

    def _storage(self, effect: StorageEffect) -> StoreResult:
        self.requests.append(effect)
        if not self.answers:
            raise ScriptExhausted(f"unscripted request {effect!r}")
        answer = self.answers.pop(0)
        self.advance(self.latency_ms)
        if answer in ("200", "lost"):
            result = self.store.apply(effect)
            assert result.ok or answer == "lost", f"scripted 200 for {effect!r} but the store said {result}"
            return StoreResult(Outcome.TIMEOUT) if answer == "lost" else result
        return StoreResult(ANSWERS[answer])

    def perform(self, effect: object) -> Any:
        """One effect's answer."""
        if isinstance(effect, Now):
            return self.mono if effect.monotonic else self.now
        if isinstance(effect, Record):
            self.records.append(effect)
            return None
        if isinstance(effect, Sleep):
            self.sleeps.append(effect.ms)
            self.on_sleep(effect)
            self.advance(effect.ms)
            return None
        if isinstance(effect, Spawn):
            if self.spawn_ok:
                self.spawned[effect.name] = effect.body
            else:
                effect.body.close()
            return self.spawn_ok
        if isinstance(effect, Cancel):
            self.cancels.append(effect)
            return self.cancel_ok
        if isinstance(effect, Interrupt):
            self.interrupts.append(effect.name)
            return None
        if isinstance(effect, IsAlive):
            return self.writer_alive
        if isinstance(effect, ShutdownHook):
            if effect.hook is None:
                self.hooks.pop(effect.key, None)
            else:
                self.hooks[effect.key] = effect.hook
            return None
        if isinstance(effect, CheckInterrupt):
            return None
        return self._storage(effect)  # type: ignore[arg-type]

    def run(self, gen: Generator[Any, Any, Any], steps: int | None = None,
            until: Callable[[], bool] | None = None) -> Any:
        """Drive ``gen`` to its end (or for ``steps`` effects, or until ``until()``) and return its value."""
        send: Any = None
        throw: BaseException | None = None
        n = 0
        while (steps is None or n < steps) and not (until is not None and until()):
            try:
                effect = gen.throw(throw) if throw is not None else gen.send(send)
            except StopIteration as stop:
                return stop.value
            n += 1
            send, throw = None, None
            if self.interrupt_at(effect):
                throw = Interrupted()
                continue
            send = self.perform(effect)
        return None

    # ---- views --------------------------------------------------------------------

    def kinds(self) -> list[str]:
        """The requests so far by type name (Read, CreateIfAbsent, ReplaceIfMatch, Put)."""
        return [type(r).__name__ for r in self.requests]

    def lock_data(self, key: str = "table/.hoodie/.locks/table_lock.json") -> LockData | None:
        obj = self.store.peek(key)
        return LockData.decode(obj.body) if obj else None

    def recorded(self, f: str, type_: str | None = None) -> list[Record]:
        return [r for r in self.records if r.f == f and (type_ is None or r.type == type_)]


def provider(driver: Driver, variant: str = "hudi", owners: Iterable[str] | None = None,
             **lock: Any) -> StorageLockProvider:
    """A provider with Hudi's defaults (validity 300 s, renew 30 s) unless ``lock`` says otherwise."""
    ids = iter(owners or [f"owner-{i}" for i in range(1, 100)])
    return StorageLockProvider(LockConfig(variant=variant, **lock), lambda: next(ids), driver.flavor)


def other_lock(driver: Driver, owner: str = "other", valid_for_ms: int = 300_000,
               expired: bool = False) -> str:
    """Put a lock file of another owner into the store (as if written by another writer); its version."""
    from model.runtime.effects import Put

    data = LockData(expired, driver.now + valid_for_ms, owner)
    result = driver.store.apply(Put("table/.hoodie/.locks/table_lock.json", data.encode()))
    assert result.version is not None
    return result.version

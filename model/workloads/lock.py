"""The lock workload: Hudi's storage-based lock provider guarding a register read-modify-write."""

from __future__ import annotations

import functools
import json
from collections.abc import Generator, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from model.config import Scenario
from model.explorable import Keyer
from model.lock.audit import AuditTrail
from model.lock.lockfile import LockData
from model.lock.provider import StorageLockProvider
from model.lock.register_writer import RegisterWriter
from model.runtime.effects import Effect
from model.runtime.kernel import WriterContext, WriterFactory
from model.workloads import object_event

# The lock writer's events that start a triggered pause of its node (``[[faults.pauses]] trigger``):
# "acquired" when it holds the lock, "write" when it starts a write of the register.
PAUSE_TRIGGERS: Mapping[tuple[str, str], str] = {("acquire", "ok"): "acquired", ("write", "invoke"): "write"}


@dataclass(frozen=True)
class LockWorkload:
    """Each node runs a :class:`RegisterWriter` over its own :class:`StorageLockProvider`.

    ``factory`` replaces the writers (keeping the lock's key classes and store events);
    ``bodies_under`` records the bodies of other keys written under that prefix.
    """

    scenario: Scenario
    factory: WriterFactory | None = None
    bodies_under: str | None = None

    def writer(self, ctx: WriterContext) -> Generator[Effect, Any, Any]:
        """The writer of one incarnation of a node."""
        if self.factory is not None:
            return self.factory(ctx)
        sc = self.scenario

        wakes = sc.workload.interrupt != "never"  # the writer's policy ends an interruptible sleep

        def new_provider() -> StorageLockProvider:  # one provider per transaction, as Hudi's LockManager
            return StorageLockProvider(sc.lock, ctx.new_id, sc.storage.flavor,
                                       writer_wakes_on_interrupt=wakes)

        start = sc.workload.node_start_ms.get(ctx.node) if ctx.incarnation == 1 else None
        return RegisterWriter(new_provider, sc.workload, ctx.rng, fenced=sc.lock.variant == "fenced",
                              start_ms=start).run()

    @property
    def shared_state(self) -> tuple[type, ...] | None:
        """The classes whose objects a node's tasks share beside the kernel's (``model/explore/shared.py``):
        the provider and its audit trail; None for a factory's writers, whose sharing is not declared (the
        explorer then keeps every two steps of one node dependent)."""
        return (StorageLockProvider, AuditTrail) if self.factory is None else None

    @property
    def pause_triggers(self) -> Mapping[tuple[str, str], str]:
        """A pause triggered by ``acquired`` starts as the node's writer gets the lock, by ``write`` as it
        starts a write of the register (:data:`PAUSE_TRIGGERS`)."""
        return PAUSE_TRIGGERS

    def key_class(self, key: str) -> str:
        """``lock`` for the lock file, ``register`` for the guarded register, else ``other``."""
        if key == self.scenario.lock.lock_key:
            return "lock"
        return "register" if key == self.scenario.workload.register_key else "other"

    def body_state(self, key: str, body: bytes | None, k: Keyer) -> Hashable:
        """What of an object's body is state (for the explorer): a lock file's data (validUntil a wall time,
        the owner a name), the register's value and writer; another object's bytes as they are."""
        if body is None:
            return None
        kind = self.key_class(key)
        if kind == "lock":
            return k.value(LockData.decode(body))
        if kind == "register":
            value, by = _register_fields(bytes(body))
            return ("register", value, k.name(by))
        return ("b", bytes(body))

    def observe(self, key: str, body: bytes, version: str | None) -> tuple[str, dict[str, Any]] | None:
        """The lock file's owner/expiry/validity, the register's body, or a generic object event."""
        kind = self.key_class(key)
        if kind == "lock":
            data = LockData.decode(body)
            return "lock-file", {"owner": data.owner, "expired": data.expired,
                                 "valid_until": data.valid_until, "version": version}
        if kind == "register":
            return "register", {"body": body.decode()}
        return object_event(key, body, version, self.bodies_under)


@functools.lru_cache(maxsize=1024)
def _register_fields(body: bytes) -> tuple[Any, str]:
    """A register body's value and writer, parsed once per body (a state key reads the register at every
    keyed point; bench_explore_speed.py)."""
    raw = json.loads(body)
    return raw["value"], raw["by"]

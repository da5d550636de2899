"""Workloads: each protocol's plug-in to the runtime kernel (``model/kernel.py``).

A workload builds each node's writer task, names key classes for the fault plan,
and says what a successful store write means for the history (the store-side
events the checkers compare the writers' beliefs with).  ``lock`` is the RFC-91
lock guarding a register; the timeline (OCC) and NBCC workloads record the bodies
of the table's files.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from model.effects import Effect
from model.kernel import WriterContext, WriterFactory


def object_event(key: str, body: bytes, version: str | None,
                 bodies_under: str | None) -> tuple[str, dict[str, Any]]:
    """The generic store event of a write: key, version and size, and the body under ``bodies_under``."""
    about: dict[str, Any] = {"key": key, "version": version, "size": len(body)}
    if bodies_under is not None and key.startswith(bodies_under):
        about["body"] = body.decode()
    return "object", about


@dataclass(frozen=True)
class TableWorkload:
    """Writers from a factory; their store writes are table files, recorded with bodies under a prefix."""

    factory: WriterFactory
    bodies_under: str | None = None

    def writer(self, ctx: WriterContext) -> Generator[Effect, Any, Any]:
        """The factory's writer."""
        return self.factory(ctx)

    def key_class(self, key: str) -> str:
        """Table files have no class of their own; error rules match them by prefix."""
        return "other"

    def observe(self, key: str, body: bytes, version: str | None) -> tuple[str, dict[str, Any]] | None:
        """Every write as an ``object`` event (with its body under ``bodies_under``)."""
        return object_event(key, body, version, self.bodies_under)

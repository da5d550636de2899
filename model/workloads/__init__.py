"""Workloads: each protocol's plug-in to the runtime kernel (``model/runtime/kernel.py``).

A workload builds each node's writer task, names key classes for the fault plan,
and says what a successful store write means for the history (the store-side
events the checkers compare the writers' beliefs with).  ``lock`` is the RFC-91
lock guarding a register; the timeline (OCC) and NBCC workloads are the lock
workload with the table's writers (and, for OCC, the bodies of the table's files
recorded).  Each protocol's registered object (``model/protocols``) builds its
workload for any world (``Plugin.workload``).
"""

from __future__ import annotations

from typing import Any


def object_event(key: str, body: bytes, version: str | None,
                 bodies_under: str | None) -> tuple[str, dict[str, Any]]:
    """The generic store event of a write: key, version and size, and the body under ``bodies_under``."""
    about: dict[str, Any] = {"key": key, "version": version, "size": len(body)}
    if bodies_under is not None and key.startswith(bodies_under):
        about["body"] = body.decode()
    return "object", about

"""Failed writes: the writer's heartbeat and which pending instants a rollback takes, as Hudi 1.2.1 does.

* EAGER (``hoodie.clean.failed.writes.policy``, SINGLE_WRITER's default): a writer's ``startCommit``
  rolls back every pending commit instant first (``BaseHoodieTableServiceClient#getInstantsToRollback``:
  all of the inflight timeline, compaction and clustering excluded).
* LAZY (set by Hudi under OCC): a writer keeps a heartbeat file ``.hoodie/.heartbeat/<instant>`` fresh
  every ``hoodie.client.heartbeat.interval_in_ms`` while its write runs (``HoodieHeartbeatClient``); a
  clean (after every commit) rolls back the pending instants whose heartbeat is older than
  interval x ``hoodie.client.heartbeat.tolerable.misses`` (a missing file counts as time 0), then
  re-lists the timeline and keeps only those still pending
  (``getInstantsToRollbackForLazyCleanPolicy``).  A writer about to commit aborts if its own last
  heartbeat is that old (``HeartbeatUtils#abortIfHeartbeatExpired``).

The heartbeat's time: Hudi reads the file's modification time (the storage's clock) and compares it
with the reader's ``System.currentTimeMillis()``; the model writes the writer's clock reading into
the file's body and compares it with the reader's clock.
"""

from __future__ import annotations

from collections.abc import Generator, Hashable, Iterable
from typing import Any

from model.explorable import Keyer
from model.runtime.effects import Effect, Now, Put, Record, Sleep, StoreResult
from model.timeline.conflicts import COMMITS_TIMELINE
from model.timeline.layout import Instant, format_instant

Gen = Generator[Effect, Any, Any]

HEARTBEAT_TASK = "client-heartbeat"


def heartbeat_key(base: str, instant: int) -> str:
    """``HoodieTableMetaClient#getHeartbeatFolderPath`` + the instant time."""
    return f"{base}/.hoodie/.heartbeat/{format_instant(instant)}"


def is_expired(now_ms: int, last_ms: int | None, interval_ms: int, misses: int) -> bool:
    """``HoodieHeartbeatClient#isHeartbeatExpired``: ``now - last > interval * misses`` (no file: last 0)."""
    return now_ms - (0 if last_ms is None else last_ms) > interval_ms * misses


def heartbeat_time(got: StoreResult) -> int | None:
    """The time a heartbeat file holds, or None when there is none (or it cannot be read)."""
    if not got.ok or got.body is None:
        return None
    try:
        return int(got.body.decode())
    except ValueError:
        return None


def to_rollback(instants: Iterable[Instant]) -> list[Instant]:
    """The pending commit instants a rollback considers, newest first (compaction, clustering excluded)."""
    pending = [i for i in instants if not i.is_completed and i.requested_action in COMMITS_TIMELINE
               and i.requested_action != "clustering"]
    return sorted(pending, key=lambda i: i.requested, reverse=True)


class Heartbeat:
    """One writer's heartbeat client: the instant it beats for and the time of its last beat."""

    def __init__(self, base: str, interval_ms: int) -> None:
        self.base, self.interval_ms = base, interval_ms
        self.instant: int | None = None
        self.last: int | None = None  # lastHeartbeatTime of the in-memory map (the writer's clock)

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The instant it beats for and its last beat (a wall time)."""
        return (self.base, self.interval_ms, k.value(self.instant), k.value(self.last))

    def beat(self) -> Gen:
        """``updateHeartbeat``: write the heartbeat file (now), remember the time.  True when written."""
        assert self.instant is not None
        now: int = yield Now()
        got: StoreResult = yield Put(heartbeat_key(self.base, self.instant), str(now).encode())
        if got.ok:
            self.last = now
        return got.ok

    def task(self) -> Gen:
        """The timer: a beat every interval (``scheduleAtFixedRate(task, interval, interval)``).  A late or
        failed beat does not stop it (1.2.1, #18904; 1.2.0 interrupted the timer after a late beat)."""
        while True:
            yield Sleep(self.interval_ms)
            if not (yield from self.beat()):
                yield Record("heartbeat", "fail", {"instant": format_instant(self.instant or 0)})

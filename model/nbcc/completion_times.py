"""The timeline's completion-time lookup that file slicing needs.

Times are instant numbers (:mod:`model.timeline.layout`, which also defines :class:`Instant`).
An instant has a requested (start) time and, once completed, a completion time.  The lookup
distinguishes three answers:

* completed: the completion time;
* not completed (pending, failed, rolled back, or unknown but newer than the archive): ``None``;
* archived: the instant is older than the active timeline and its completion time was not loaded.
  This raises :class:`ArchivedInstantError` and never returns ``None``: treating an archived,
  committed instant as "not completed" silently drops committed data (a real Hudi bug class).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from model.timeline.layout import Instant, State


class ArchivedInstantError(LookupError):
    """A completion-time lookup reached an archived instant whose completion time is unknown."""

    def __init__(self, instant: int, archive_boundary: int) -> None:
        super().__init__(
            f"instant {instant} is older than the active timeline (archive boundary "
            f"{archive_boundary}); its completion time is archived and was not loaded"
        )
        self.instant = instant
        self.archive_boundary = archive_boundary


@dataclass(frozen=True)
class Timeline:
    """The active timeline plus what is known about the archive.

    ``archive_boundary``: when not None, every instant requested strictly before it may be archived
    and its completion time is unknown unless listed in ``archived_completions``.
    ``has_completion_times`` is False for layout 1 (v6), where completion times are not recorded.
    """

    instants: tuple[Instant, ...] = ()
    archive_boundary: int | None = None
    archived_completions: Mapping[int, int] = field(default_factory=dict, hash=False)
    has_completion_times: bool = True

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "_by_time": "an index of instants by requested time, made from instants in __post_init__",
    }

    def __post_init__(self) -> None:
        seen: set[int] = set()
        for i in self.instants:
            if i.requested in seen:
                raise ValueError(f"duplicate instant time {i.requested} on the timeline")
            if i.completed is not None and i.completed < i.requested:
                raise ValueError(f"instant {i.requested}: completion {i.completed} precedes request")
            seen.add(i.requested)
        object.__setattr__(self, "instants", tuple(sorted(self.instants)))
        object.__setattr__(self, "_by_time", {i.requested: i for i in self.instants})

    @classmethod
    def of(cls, pairs: Iterable[tuple[int, int | None]], action: str = "deltacommit") -> Timeline:
        """Build a timeline from ``(requested, completed-or-None)`` pairs (None means inflight)."""
        return cls(
            tuple(
                Instant(r, action, State.COMPLETED if c is not None else State.INFLIGHT, c) for r, c in pairs
            )
        )

    def get(self, requested: int) -> Instant | None:
        """The active instant requested at ``requested``, if any."""
        by_time: dict[int, Instant] = self.__dict__["_by_time"]
        return by_time.get(requested)

    def completion_time(self, instant: int) -> int | None:
        """Completion time of the instant requested at ``instant``; None when it is not completed.

        Raises :class:`ArchivedInstantError` when the instant lies in the archive and its
        completion time was not loaded, and ValueError when the timeline records no completion
        times (layout 1).
        """
        if not self.has_completion_times:
            raise ValueError("this timeline (layout 1) records no completion times")
        inst = self.get(instant)
        if inst is not None:
            return inst.completed if inst.is_completed else None
        if instant in self.archived_completions:
            return self.archived_completions[instant]
        if self.archive_boundary is not None and instant < self.archive_boundary:
            raise ArchivedInstantError(instant, self.archive_boundary)
        return None

    def is_committed(self, instant: int) -> bool:
        """True when the instant completed (works for layout 1 too, by instant state)."""
        inst = self.get(instant)
        if inst is not None:
            return inst.is_completed
        if instant in self.archived_completions:
            return True
        if self.archive_boundary is not None and instant < self.archive_boundary:
            raise ArchivedInstantError(instant, self.archive_boundary)
        return False

    def completed(self) -> tuple[Instant, ...]:
        """Completed instants, ordered by requested time."""
        return tuple(i for i in self.instants if i.is_completed)

    def pending(self) -> tuple[Instant, ...]:
        """Requested or inflight instants, ordered by requested time."""
        return tuple(i for i in self.instants if not i.is_completed)

    def max_completion_at_or_before(self, t: int) -> int | None:
        """The largest completion time <= t among completed instants (RFC-66 time travel)."""
        best: int | None = None
        for i in self.instants:
            if i.completed is not None and i.completed <= t and (best is None or i.completed > best):
                best = i.completed
        return best

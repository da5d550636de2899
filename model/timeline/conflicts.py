"""Hudi's write-conflict resolution at commit, as pure functions over a listed timeline.

``TransactionUtils#resolveWriteConflictIfAny`` (under the table lock, the timeline refreshed): the
strategy's candidate instants, plus the instants that were pending when the write started and have
completed since (``getCompletedInstantsDuringCurrentWriteOperation``); each candidate whose mutated
``(partition, fileId)`` set intersects this commit's is a conflict (``hasConflict``), which
``resolveConflict`` either forgives (an earlier compaction; this being a log compaction) or turns into
a ``HoodieWriteConflictException``.

* ``simple`` (``SimpleConcurrentFileWritesConflictResolutionStrategy``, Hudi's default): completed
  instants of the commits timeline whose instant (requested) time is after the last instant completed
  when the write started, plus the pending replace and clustering instants (every pending clustering;
  a pending replacecommit only when requested after this commit's instant:
  ``#getCandidateInstantsV8AndAbove`` and ``#isClusteringOrRecentlyRequestedInstant``).  A pending
  clustering's mutated file groups are its plan's input slices; a completed replacecommit's are its
  written file groups and its ``partitionToReplaceFileIds`` (``ConcurrentOperation#init``).
* ``prefer-writer`` (``PreferWriterConflictResolutionStrategy``): for an ingestion commit, completed
  commit / replacecommit / compaction / deltacommit instants whose completion time is after this
  commit's instant time, in completion-time order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from model.timeline.layout import Instant

# HoodieTimeline#getCommitsTimeline (commit, deltacommit, replacecommit, clustering in 1.x)
COMMITS_TIMELINE = frozenset({"commit", "deltacommit", "replacecommit", "clustering"})
# TransactionUtils#getInflightAndRequestedInstants
PENDING_ACTIONS = frozenset({"replacecommit", "clustering", "compaction", "deltacommit", "commit"})
# PreferWriterConflictResolutionStrategy#getCandidateInstantsForNonTableServicesCommits
PREFER_WRITER_ACTIONS = frozenset({"commit", "replacecommit", "compaction", "deltacommit"})


def _completed_commits(instants: Iterable[Instant]) -> list[Instant]:
    return [i for i in instants if i.is_completed and i.requested_action in COMMITS_TIMELINE]


def last_completed(instants: Iterable[Instant]) -> Instant | None:
    """``TransactionUtils#getLastCompletedTxnInstantAndMetadata``: the completed commits-timeline instant
    with the greatest instant time (the timeline's ``lastInstant()``)."""
    return max(_completed_commits(instants), key=lambda i: i.requested, default=None)


def pending_instants(instants: Iterable[Instant], own: int) -> frozenset[int]:
    """``TransactionUtils#getInflightAndRequestedInstants`` minus this write's own instant (``preWrite``)."""
    return frozenset(
        i.requested for i in instants
        if not i.is_completed and i.requested_action in PENDING_ACTIONS and i.requested != own
    )


def simple_candidates(instants: Iterable[Instant], last: int | None) -> list[Instant]:
    """SimpleConcurrentFileWrites: completed commits-timeline instants with instant time after ``last``
    (``findInstantsAfter``: strictly greater; no last completed instant: all of them)."""
    floor = -1 if last is None else last
    return sorted((i for i in _completed_commits(instants) if i.requested > floor), key=lambda i: i.requested)


def prefer_writer_candidates(instants: Iterable[Instant], current: int) -> list[Instant]:
    """PreferWriter, for an ingestion commit: completed instants whose completion time is after ``current``
    (``findInstantsModifiedAfterByCompletionTime``), in completion-time order."""
    done = [
        i for i in instants
        if i.is_completed and i.requested_action in PREFER_WRITER_ACTIONS
        and i.completed is not None and i.completed > current
    ]
    return sorted(done, key=lambda i: (i.completed or 0, i.requested))


def pending_replace_candidates(instants: Iterable[Instant], current: int) -> list[Instant]:
    """SimpleConcurrentFileWrites (table version 8): the pending replace and clustering instants
    (``filterPendingReplaceOrClusteringTimeline``) that are a clustering, or a replacecommit requested
    after ``current`` (``isClusteringOrRecentlyRequestedInstant``), in instant-time order.  In table
    version 8 a pending clustering is a ``clustering`` instant, a pending replacecommit an insert_overwrite
    (``ClusteringUtils#isClusteringInstant``: a replacecommit is a clustering only with a plan)."""
    pending = [
        i for i in instants
        if not i.is_completed and i.requested_action in ("clustering", "replacecommit")
        and (i.requested_action == "clustering" or i.requested > current)
    ]
    return sorted(pending, key=lambda i: i.requested)


def completed_during_write(instants: Iterable[Instant], pending: frozenset[int]) -> list[Instant]:
    """``getCompletedInstantsDuringCurrentWriteOperation``: completed commits-timeline instants that were
    pending when the write started."""
    done = [i for i in _completed_commits(instants) if i.requested in pending]
    return sorted(done, key=lambda i: i.requested)


def candidate_instants(strategy: str, instants: Sequence[Instant], current: int, last: int | None,
                       pending: frozenset[int], pending_replace: bool = True) -> list[Instant]:
    """The instants ``resolveWriteConflictIfAny`` checks, strategy's first (a stream concat: an instant
    in both lists is checked twice, as in Hudi).  ``pending_replace`` False: a hypothetical strategy that
    leaves pending replace / clustering instants out (Hudi 1.2 includes them)."""
    if strategy == "prefer-writer":
        first = prefer_writer_candidates(instants, current)
    else:
        first = simple_candidates(instants, last)
        if pending_replace:
            first += pending_replace_candidates(instants, current)
    return first + completed_during_write(instants, pending)


@dataclass(frozen=True)
class Operation:
    """A ``ConcurrentOperation``: an instant, its action and write operation type, what it mutated."""

    instant: int
    action: str
    operation: str  # WriteOperationType: UPSERT, INSERT, COMPACT, LOG_COMPACT, CLUSTER, ...
    mutated: frozenset[tuple[str, str]]  # (partition, fileId)


def has_conflict(this: Operation, other: Operation) -> bool:
    """``hasConflict``: the (partition, fileId) sets intersect (an insert into a new file id never does)."""
    return not this.mutated.isdisjoint(other.mutated)


def resolve_conflict(this: Operation, other: Operation) -> bool:
    """``resolveConflict``: True when the conflict is forgiven, False where Hudi throws
    ``HoodieWriteConflictException`` (the commit aborts).

    A completed compaction is not a conflict when its instant is before this one; a log compaction
    commits whatever the other operation is, unless that is a compaction; anything else aborts.
    """
    if other.operation == "COMPACT":
        if other.instant < this.instant:
            return True
    elif this.action == "logcompaction":
        return True
    return False


def first_conflict(this: Operation, others: Iterable[Operation]) -> Operation | None:
    """The first candidate this commit conflicts with and that is not forgiven (None: it may commit)."""
    for other in others:
        if has_conflict(this, other) and not resolve_conflict(this, other):
            return other
    return None

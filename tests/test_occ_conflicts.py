"""Hudi's conflict resolution at commit (model/timeline/conflicts.py), ported from Hudi's own tests.

Each test names the Java test whose assertions it follows (apache/hudi, hudi-client/hudi-client-common/
src/test/java/org/apache/hudi/client/transaction/): the timeline each builds (a completed commit, then
writers' inflight and completed instants, compactions, replace commits) is built here as Instants, and
``createCommitMetadata``'s write stat (``file-1`` in the first partition) as the mutated set.
"""

from __future__ import annotations

from model.timeline.conflicts import (
    Operation,
    candidate_instants,
    completed_during_write,
    first_conflict,
    has_conflict,
    last_completed,
    pending_instants,
    prefer_writer_candidates,
    resolve_conflict,
    simple_candidates,
)
from model.timeline.layout import Instant, State

P = "2016/03/15"  # HoodieTestDataGenerator.DEFAULT_FIRST_PARTITION_PATH
FILE_1 = frozenset({(P, "file-1")})


def done(t: int, action: str = "commit", completion: int | None = None) -> Instant:
    return Instant(t, action, State.COMPLETED, completion if completion is not None else t + 1)


def inflight(t: int, action: str = "commit") -> Instant:
    return Instant(t, action, State.INFLIGHT)


def requested(t: int, action: str = "commit") -> Instant:
    return Instant(t, action, State.REQUESTED)


def op(
    t: int, action: str = "commit", operation: str = "INSERT", mutated: frozenset[tuple[str, str]] = FILE_1
) -> Operation:
    return Operation(t, action, operation, mutated)


def test_no_concurrent_writes_no_candidates() -> None:
    # TestSimpleConcurrentFileWritesConflictResolutionStrategy#testNoConcurrentWrites
    timeline = [done(100)]
    last = last_completed(timeline)
    assert last is not None and last.requested == 100
    assert simple_candidates(timeline, last.requested) == []


def test_writers_still_inflight_are_no_candidates() -> None:
    # #testConcurrentWrites: two other writers inflight, nothing completed since the last success
    timeline = [done(100), inflight(110), inflight(120)]
    assert simple_candidates(timeline, 100) == []


def test_a_commit_completed_meanwhile_on_the_same_file_conflicts_and_aborts() -> None:
    # #testConcurrentWritesWithInterleavingSuccesssfulCommit: writer 1 inflight at 110, writer 2 commits 120
    timeline = [done(100), inflight(110), done(120)]
    candidates = simple_candidates(timeline, 100)
    assert [i.requested for i in candidates] == [120]
    this, other = op(110), op(120)
    assert has_conflict(this, other)
    assert not resolve_conflict(this, other)  # HoodieWriteConflictException
    assert first_conflict(this, [other]) == other


def test_a_compaction_completed_after_this_instant_conflicts() -> None:
    # #testConcurrentWritesWithInterleavingSuccessfulCompaction: the compaction (instant 120 > 110) is a
    # candidate, shares file-1, and resolveConflict does not forgive a compaction later than this instant
    timeline = [done(100), inflight(110), done(120)]
    this, compaction = op(110), op(120, operation="COMPACT")
    assert [i.requested for i in simple_candidates(timeline, 100)] == [120]
    assert has_conflict(this, compaction) and not resolve_conflict(this, compaction)


def test_a_compaction_scheduled_earlier_is_no_candidate_and_would_be_forgiven() -> None:
    # #testConcurrentWriteAndCompactionScheduledEarlier: completed before the writer's last success
    timeline = [done(100), done(105), inflight(110)]
    assert simple_candidates(timeline, 105) == []
    # and resolveConflict forgives a compaction whose instant is before this one
    assert resolve_conflict(op(110), op(105, operation="COMPACT"))


def test_a_log_compaction_commits_whatever_it_meets_but_a_compaction() -> None:
    # SimpleConcurrentFileWritesConflictResolutionStrategy#resolveConflict: a log compaction is a rewrite
    log_compaction = op(110, action="logcompaction", operation="LOG_COMPACT")
    assert resolve_conflict(log_compaction, op(120))
    assert not resolve_conflict(log_compaction, op(120, operation="COMPACT"))


def test_a_replace_commit_completed_meanwhile_conflicts() -> None:
    # #testConcurrentWritesWithInterleavingSuccessfulReplace (INSERT_OVERWRITE writes file-1)
    timeline = [done(100), inflight(110), done(120, action="replacecommit")]
    this, replace = op(110), op(120, action="replacecommit", operation="INSERT_OVERWRITE")
    assert [i.requested for i in simple_candidates(timeline, 100)] == [120]
    assert has_conflict(this, replace) and not resolve_conflict(this, replace)


def test_inserts_into_new_file_ids_never_conflict() -> None:
    # hasConflict compares (partition, fileId) only ("TODO: UUID's can clash even for insert/insert"):
    # two inserts of the same key into two new file groups of one partition both commit
    a, b = op(110, mutated=frozenset({(P, "aaaaaaaa-0")})), op(120, mutated=frozenset({(P, "bbbbbbbb-0")}))
    assert not has_conflict(a, b) and first_conflict(a, [b]) is None


def test_prefer_writer_candidates_are_completed_after_this_instant_by_completion_time() -> None:
    # TestPreferWriterConflictResolutionStrategy#testConcurrentWritesWithInterleavingSuccessfulCluster /
    # #testConcurrentWritesWithInterleavingSuccessfulReplace: completed after the writer's instant: candidate
    timeline = [done(100, completion=101), inflight(110), done(120, action="replacecommit", completion=125)]
    assert [i.requested for i in prefer_writer_candidates(timeline, 110)] == [120]
    # #testConcurrentWriteAndCompactionScheduledEarlier: completed before the writer started -> none
    earlier = [done(100, completion=101), done(105, completion=106), inflight(110)]
    assert prefer_writer_candidates(earlier, 110) == []
    # #testConcurrentWritesWithInterleavingScheduledCompaction / ...ScheduledCluster: pending -> none
    assert prefer_writer_candidates([done(100), inflight(110), requested(120, "compaction")], 110) == []


def test_prefer_writer_finds_an_older_instant_that_completed_after_this_one_started() -> None:
    # the difference between the strategies: an instant requested BEFORE the last success, completed after
    # this writer's instant (by completion time) is PreferWriter's candidate, not SimpleConcurrentFileWrites'
    timeline = [done(95, completion=130), done(100, completion=101), inflight(110)]
    assert simple_candidates(timeline, 100) == []
    assert [i.requested for i in prefer_writer_candidates(timeline, 110)] == [95]


def test_instants_pending_when_the_write_started_are_checked_once_completed() -> None:
    # TestTransactionUtils#resolveWriteConflictIfAnyThrowsExceptionIfConflict passes the other writer's
    # instant as a pending one; TransactionUtils#getCompletedInstantsDuringCurrentWriteOperation adds it to
    # the candidates.  Here it matters: instant 95 was pending at this writer's preWrite, the last success was
    # 100, so the strategy alone (requested after 100) misses it.
    at_pre_write = [inflight(95), done(100), requested(110)]
    pending = pending_instants(at_pre_write, own=110)
    last = last_completed(at_pre_write)
    assert pending == frozenset({95}) and last is not None
    at_commit = [done(95), done(100), inflight(110)]
    assert simple_candidates(at_commit, last.requested) == []
    assert [i.requested for i in completed_during_write(at_commit, pending)] == [95]
    checked = candidate_instants("simple", at_commit, 110, last.requested, pending)
    assert [i.requested for i in checked] == [95]
    assert first_conflict(op(110), [op(95)]) is not None


def test_the_last_completed_instant_is_by_instant_time_and_own_instant_is_not_pending() -> None:
    # getLastCompletedTxnInstantAndMetadata: the commits timeline's lastInstant() (instant-time order)
    timeline = [done(120, completion=121), done(100, completion=200), requested(130), inflight(125)]
    last = last_completed(timeline)
    assert last is not None and last.requested == 120
    assert pending_instants(timeline, own=130) == frozenset({125})
    # rollback and clean instants are not on the commits timeline
    assert last_completed([done(90, action="rollback")]) is None

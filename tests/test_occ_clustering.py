"""Replacecommits in the OCC model: clustering and insert_overwrite, as Hudi 1.2.0's Java handles them.

Each of the three behaviours is pinned by a test that the model's previous behaviour fails (its
``timeline.hypothetical_replace`` setting takes one of them out again):

1. pending clustering / replace instants are conflict candidates
   (``SimpleConcurrentFileWritesConflictResolutionStrategy#getCandidateInstantsV8AndAbove``, lines 87-92,
   and ``#isClusteringOrRecentlyRequestedInstant``, 127-130), a pending clustering mutating its plan's file
   groups (``ConcurrentOperation.java:80-84, 167-183``);
2. a completed replacecommit's ``partitionToReplaceFileIds`` are mutated file groups
   (``ConcurrentOperation.java:155-162``);
3. replaced file groups are hidden from the writers' view and from readers
   (``AbstractTableFileSystemView#isFileGroupReplaced``, lines 747, 898, 1682-1684).

The simulated runs use the catalogue's entries; a failure names the seed.
"""

from __future__ import annotations

import pytest

from model.checkers import timeline as tl_checkers
from model.checkers.timeline import check_duplicate_keys
from model.config import ConfigError
from model.runtime.history import Event
from model.timeline.conflicts import candidate_instants, pending_replace_candidates
from model.timeline.layout import Instant, State
from model.timeline.metadata import (
    clustering_plan,
    decode_instant_metadata,
    encode_clustering_plan,
    plan_file_groups,
)
from model.timeline.modeldata import (
    commit_body,
    model_body,
    mutated_file_groups,
    replaced_file_groups,
    table_spec,
    write_stat,
)
from model.timeline.run import check_timeline_run, run_timeline
from scenarios import timeline_loader

CLUSTERING = "tl-hudi-clustering-safe"
OVERWRITE = "tl-hudi-insert-overwrite-safe"


def _run(name: str, seed: int, *sets: str) -> tuple[list[Event], list[str]]:
    """A simulated run of a catalogue entry (with ``--set`` overrides): its history and the kinds of its
    deciding violations (``consistent-read`` ones by their read anomaly)."""
    ts = timeline_loader.load(name, list(sets))
    events = run_timeline(ts, seed)
    verdict = check_timeline_run(ts, events)
    return events, [v.details.get("kind", v.kind) for v in verdict.violations]


def _hypothetical(which: str) -> str:
    return f'timeline.hypothetical_replace="{which}"'


# ---- the conflict check's candidates and mutated sets (pure functions) ---------------------------


def test_pending_clustering_is_a_candidate_whatever_its_instant_time() -> None:
    # #isClusteringOrRecentlyRequestedInstant: a clustering always; a pending replacecommit (an
    # insert_overwrite in table version 8) only when requested after the committing instant
    timeline = [
        Instant(100, "commit", State.COMPLETED, 101),
        Instant(105, "clustering", State.REQUESTED),
        Instant(107, "clustering", State.INFLIGHT),
        Instant(108, "replacecommit", State.INFLIGHT),
        Instant(110, "commit", State.INFLIGHT),  # the committing write
        Instant(120, "replacecommit", State.REQUESTED),
    ]
    assert [i.requested for i in pending_replace_candidates(timeline, 110)] == [105, 107, 120]
    checked = candidate_instants("simple", timeline, 110, 100, frozenset())
    assert [i.requested for i in checked] == [105, 107, 120]
    # the previous model (and the hypothetical writer) checked none of them
    assert candidate_instants("simple", timeline, 110, 100, frozenset(), pending_replace=False) == []


def test_a_clustering_plan_mutates_its_input_file_groups() -> None:
    plan = clustering_plan([("p0", "aaaa0001-0", "p0/aaaa0001-0_0-0-0_1.parquet"),
                            ("p0", "pre00000-0", "p0/pre00000-0_0-0-0_2.parquet")])
    decoded = decode_instant_metadata(encode_clustering_plan(plan), "x.clustering.requested")
    assert decoded["operationType"] == "CLUSTER"
    assert plan_file_groups(decoded) == {("p0", "aaaa0001-0"), ("p0", "pre00000-0")}
    # an insert_overwrite's requested file has no plan: nothing mutated (ConcurrentOperation.java:170-174)
    assert plan_file_groups({}) == set()


def test_a_replacecommit_mutates_its_written_and_its_replaced_file_groups() -> None:
    stats = {"p0": [write_stat("p0", "bbbb0002-0", "p0/bbbb0002-0_0-0-0_3.parquet", None, 2, "insert")]}
    model = {"fg": "p0/bbbb0002-0", "slice": "p0/bbbb0002-0_0-0-0_3.parquet", "merge": None, "aux": None}
    body = commit_body("v8", table_spec("v8", "part"), stats, model, "CLUSTER", {"p0": ["aaaa0001-0"]})
    md = decode_instant_metadata(body, "x.replacecommit")
    assert md["operationType"] == "CLUSTER"
    assert mutated_file_groups(md) == {("p0", "bbbb0002-0")}
    assert replaced_file_groups(md) == {("p0", "aaaa0001-0")}
    assert model_body(md)["replaced"] == ["p0/aaaa0001-0"]


# ---- the three behaviours, each shown by the writer that lacks it ------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_clustering_runs_keep_reads_consistent(seed: int) -> None:
    events, bad = _run(CLUSTERING, seed)
    assert bad == [], f"seed {seed}: {bad}"
    reasons = {e.value.get("reason") for e in events if e.f == "op" and e.type == "fail"}
    assert "occ-conflict" in reasons, f"seed {seed}: no upsert raced a clustering"


def test_ignoring_pending_clustering_loses_an_update() -> None:
    # behaviour 1: the same run with the candidates of the previous model
    _, real = _run(CLUSTERING, 1)
    _, hypo = _run(CLUSTERING, 1, _hypothetical("ignore-pending-clustering"))
    assert real == [], "seed 1"
    assert "wrong value read (lost update or overwritten file)" in hypo, f"seed 1: {hypo}"


@pytest.mark.parametrize("name,seed", [(OVERWRITE, 1), (CLUSTERING, 5)])
def test_ignoring_replaced_file_ids_loses_an_update(name: str, seed: int) -> None:
    # behaviour 2: an upsert commits into a file group a replacecommit completed meanwhile replaced
    _, real = _run(name, seed)
    _, hypo = _run(name, seed, _hypothetical("ignore-replaced-ids"))
    assert real == [], f"{name} seed {seed}"
    lost = {"wrong value read (lost update or overwritten file)", "committed value lost"}
    assert lost & set(hypo), f"{name} seed {seed}: {hypo}"


def test_a_view_showing_replaced_file_groups_breaks_reads() -> None:
    # behaviour 3, writer side: a view that keeps replaced groups updates and re-clusters them
    _, real = _run(CLUSTERING, 1)
    _, hypo = _run(CLUSTERING, 1, _hypothetical("show-replaced"))
    assert real == [], "seed 1"
    assert hypo, "seed 1: the hypothetical writer's run reads consistently"


def test_readers_hide_replaced_file_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    # behaviour 3, reader side: a clustered row is in its old and its new file group; the duplicate-key
    # checker reads as Hudi does and finds no duplicate, a reader that does not hide replaced groups does
    events, bad = _run(CLUSTERING, 1)
    assert bad == []
    ts = timeline_loader.load(CLUSTERING)
    base = ts.base_path
    assert check_duplicate_keys(events, base, "v8", metadata_table=True) == []
    monkeypatch.setattr(tl_checkers._Replay, "replaced", lambda self: {})
    dupes = check_duplicate_keys(events, base, "v8", metadata_table=True)
    assert dupes and all(v.kind == "duplicate-key" for v in dupes), "seed 1"


# ---- the update strategy ---------------------------------------------------------------------


def test_reject_update_strategy_refuses_updates_of_file_groups_being_clustered() -> None:
    # SparkRejectUpdateStrategy#handleUpdate (Hudi's inference without PreferWriter) throws
    # HoodieClusteringUpdateException; SparkAllowUpdateStrategy leaves it to the conflict check at commit
    events, bad = _run(CLUSTERING, 1)
    rejected = [e for e in events if e.f == "op" and e.type == "fail"
                and e.value.get("reason") == "clustering-update-rejected"]
    assert bad == [] and rejected, "seed 1"
    events, bad = _run(CLUSTERING, 1, 'timeline.clustering_updates="allow"')
    reasons = {e.value.get("reason") for e in events if e.f == "op" and e.type == "fail"}
    assert bad == [] and "clustering-update-rejected" not in reasons and "occ-conflict" in reasons, "seed 1"


# ---- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize("sets,field", [
    (['timeline.hypothetical_replace="no-such"'], "timeline.hypothetical_replace"),
    (['timeline.clustering_updates="sometimes"'], "timeline.clustering_updates"),
    (['timeline.clustering_writers=["w9"]'], "timeline.clustering_writers"),
    (['timeline.overwrite_writers=["w3"]'], "timeline.overwrite_writers"),
    (['timeline.layout="v6"'], "timeline.clustering_writers"),
    (['timeline.conflict_strategy="prefer-writer"'], "timeline.clustering_writers"),
])
def test_bad_replace_settings_name_the_field(sets: list[str], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        timeline_loader.load(CLUSTERING, sets)
    assert field in str(err.value)

"""The commit-path variants of the timeline writer: whose behaviour each follows, where they differ, as data.

Two writers, one per variant family:

* ``hudi`` follows Hudi's newest release, 1.2.1: ``BaseHoodieWriteClient#startCommit`` creates the
  ``.requested`` file inside the table lock with the instant time; the index (a stand-in for Hudi's
  SIMPLE/BLOOM index on a COPY_ON_WRITE table) reads the keys of the latest committed base files; the
  commit takes the lock, refreshes the timeline and checks every candidate instant table-wide for an
  intersection of ``(partition, fileId)`` (``TransactionUtils#resolveWriteConflictIfAny`` with
  ``SimpleConcurrentFileWritesConflictResolutionStrategy`` or ``PreferWriterConflictResolutionStrategy``);
  failed writes are rolled back EAGERly at a writer's start (single writer) or LAZYly by a clean once their
  heartbeat expired (multi-writer).  ``model/timeline/hudi_writer.py``.
* ``vanlightly-v5`` is Jack Vanlightly's v5 TLA+ specification of copy-on-write commits, the harness's
  first writer (``model/timeline/v5.py``): the ``.requested`` file after the generator released the lock,
  an index object, a primary-key check and a "merge target must be older" abort under the lock, a
  comparison against the merge target per file group, pessimistic file-group locks, salted instant
  names, put-if-absent on data files, local-clock and store-counter generators, no failed-write
  rollback.  It is a specification, not Hudi: a run of it is a claim about the specification only.

``docs/fidelity.md`` (its OCC section) cites the Java of every ``hudi`` branch.  Hudi 1.2.0 differs from
1.2.1 on this path in one default found (``hoodie.client.heartbeat.tolerable.misses`` 2 instead of 10, PR
#18904, which also stopped the heartbeat timer from killing itself after a late beat); no catalogue
verdict moves with it, so there is no ``hudi-1.2.0`` variant: set ``timeline.heartbeat_tolerable_misses
= 2`` to run 1.2.0's default.
"""

from __future__ import annotations

from dataclasses import dataclass

# The release anchor of ``hudi``: branch-1.2.x's first commit after release 1.2.1 (its 1.2.2-SNAPSHOT bump,
# commits@hudi.apache.org, 2026-09-24).  The Java itself was read at the per-file commits
# docs/fidelity.md lists.
HUDI_RELEASE = "1.2.1"
HUDI_ANCHOR = "5682a07e"


@dataclass(frozen=True)
class CommitVariant:
    """One commit-path variant: what it follows and each branch where the two writers differ."""

    name: str
    follows: str  # the Hudi release (and anchor commit) or the specification this variant follows
    hypothetical: bool  # True: not what any Hudi release does
    writer: str  # "hudi" (model/timeline/hudi_writer.py) or "v5" (model/timeline/v5.py)
    # BaseHoodieWriteClient#startCommit: instant time and .requested in one table-lock hold.
    requested_in_lock: bool
    # Where a key's file group comes from: the latest committed base files ("base-files") or an index object.
    index: str
    # What the commit-time check compares: candidates table-wide by (partition, fileId) ("table"), or the
    # completed instants of the file group newer than the merge target ("merge-target").
    conflict_scope: str
    # Settings only this variant may have (the others are refused, naming field, value and variant).
    time_generators: tuple[str, ...]
    cc_modes: tuple[str, ...]
    allows_pk_check: bool
    allows_salt: bool
    allows_put_if_absent: bool
    # Failed writes rolled back (EAGER at a writer's start, LAZY by a clean after heartbeats expire).
    rolls_back_failed_writes: bool
    # Defaults that differ between the writers.
    default_pk_check: bool
    default_put_if_absent: bool
    default_metadata_table: bool
    default_heartbeat_tolerable_misses: int

    def models(self) -> str:
        """Whose behaviour a run of this variant is, in a few words."""
        if self.hypothetical:
            return f"{self.follows} (hypothetical writer)"
        return f"{self.follows} writers"


HUDI = CommitVariant(
    name="hudi",
    follows=f"Hudi {HUDI_RELEASE} (apache/hudi {HUDI_ANCHOR})",
    hypothetical=False,
    writer="hudi",
    requested_in_lock=True,
    index="base-files",
    conflict_scope="table",
    time_generators=("skew-adjusting",),  # Hudi 1.2's only TimeGenerator: WaitBasedTimeGenerator
    cc_modes=("optimistic", "none"),  # OPTIMISTIC_CONCURRENCY_CONTROL, SINGLE_WRITER (NBCC: model/nbcc)
    allows_pk_check=False,
    allows_salt=False,
    allows_put_if_absent=False,
    rolls_back_failed_writes=True,
    default_pk_check=False,
    default_put_if_absent=False,
    default_metadata_table=True,  # hoodie.metadata.enable: true for writers and readers in 1.x
    default_heartbeat_tolerable_misses=10,  # hoodie.client.heartbeat.tolerable.misses, 1.2.1 (#18904)
)

VANLIGHTLY_V5 = CommitVariant(
    name="vanlightly-v5",
    follows="Vanlightly's v5 specification",
    hypothetical=True,
    writer="v5",
    requested_in_lock=False,
    index="aux-index",
    conflict_scope="merge-target",
    time_generators=("monotonic", "local-clock", "skew-adjusting"),
    cc_modes=("none", "optimistic", "pessimistic"),
    allows_pk_check=True,
    allows_salt=True,
    allows_put_if_absent=True,
    rolls_back_failed_writes=False,
    default_pk_check=True,
    default_put_if_absent=True,
    default_metadata_table=False,  # the specification's reader: the slices the store holds
    default_heartbeat_tolerable_misses=0,
)

_VARIANTS = (HUDI, VANLIGHTLY_V5)
COMMIT_VARIANTS: tuple[str, ...] = tuple(v.name for v in _VARIANTS)
_BY_NAME = {v.name: v for v in _VARIANTS}


def commit_variant(name: str) -> CommitVariant:
    """The commit variant called ``name`` (KeyError for an unknown one; TimelineConfig.validate names it)."""
    return _BY_NAME[name]

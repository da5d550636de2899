"""The NBCC variants: whose behaviour a simulated MERGE_ON_READ table under NBCC runs, as data.

The writers, the compaction service, the cleaner and the readers (``model/nbcc/sim_*.py``) are one
piece of code; a variant switches its branches: how file groups are sliced (by readers and by the
compaction planner, which both build Hudi's ``HoodieFileGroup``), the default of
``hoodie.client.heartbeat.tolerable.misses`` and whether a compaction's execution is heartbeat-guarded
(Hudi 1.2.x under multi-writer; the two hypothetical variants keep the harness's earlier service, which
has no compaction heartbeat, as they were specified).  ``docs/fidelity.md`` (NBCC section) cites the Java of
every branch.

* ``hudi`` follows Hudi's newest release, **1.2.1**: heartbeat tolerable misses 2 -> 10 (PR #18904)
  and PR #19785's ``HoodieFileGroup#addLogFiles``, which ``hcc fidelity --compare 1.2.0 1.2.1`` shows
  in 1.2.1's class files (its release notes list no PRs), so the anchor bug of issue #19774 is 1.2.0's;
* ``hudi-1.2.0``: 1.2.0's ``HoodieFileGroup`` (``50fc937e``, the anchor bug) and its default of 2
  tolerable misses;
* ``pr-19785``: ``hudi-1.2.0`` with PR #19785's ``HoodieFileGroup#addLogFiles`` alone (``1d3a0aff``),
  so each ``*-pr-19785`` entry differs from its ``hudi-1.2.0`` entry by that fix only;
* ``pr-19786`` (**hypothetical**): the harness's earliest-completed-log anchor, the approach of the
  closed PR #19786 as the harness read it (its description reads like #19785's design; this rule is
  not its code): a group's completed logs that precede every slice are anchored on the instant of
  the one that completed first (:func:`model.nbcc.slicing.slice_by_completion_time`);
* ``v6-instant-time`` (**hypothetical**): table version 6's rule (a log joins the newest slice keyed at
  or before its own instant) on an NBCC table, which Hudi never runs on version 6.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.nbcc.slicing import Rule


@dataclass(frozen=True)
class NbccVariant:
    """One NBCC variant: the release, PR or hypothesis it follows and each branch that differs."""

    name: str
    follows: str  # a release with its pinned commit, a PR, or "hypothetical: ..."
    slicing: Rule  # how readers and the compaction planner build file groups
    # hoodie.client.heartbeat.tolerable.misses: 2 up to 1.2.0, 10 from 1.2.1 (PR #18904)
    heartbeat_tolerable_misses: int = 10
    hypothetical: bool = False
    # a compaction's execution checks and starts the instant's heartbeat under the lock, refusing while
    # another executor's lives (BaseHoodieTableServiceClient#compact, multi-writer; 1.2.0 and 1.2.1)
    compaction_heartbeat: bool = True

    @property
    def short(self) -> str:
        """``follows`` without its evidence (the part before the first `` (``)."""
        return self.follows.split(" (", 1)[0]


HUDI = NbccVariant(
    "hudi",
    "Hudi 1.2.1 (heartbeat tolerable misses 10, PR #18904; HoodieFileGroup#addLogFiles of PR #19785, "
    "in 1.2.1's class files)",
    Rule.PR_19785,
)

_VARIANTS = (
    HUDI,
    NbccVariant(
        "hudi-1.2.0",
        "Hudi 1.2.0 (HoodieFileGroup as at apache/hudi 50fc937e; heartbeat tolerable misses 2)",
        Rule.HUDI_1_2_0,
        heartbeat_tolerable_misses=2,
    ),
    NbccVariant(
        "pr-19785",
        "Hudi 1.2.0 with PR #19785 (HoodieFileGroup#addLogFiles, apache/hudi 1d3a0aff; shipped in 1.2.1)",
        Rule.PR_19785,
        heartbeat_tolerable_misses=2,
    ),
    NbccVariant(
        "pr-19786",
        "hypothetical: the harness's earliest-completed-log anchor (closed PR #19786's approach as the "
        "harness read it, not its code)",
        Rule.COMPLETION_TIME,
        hypothetical=True,
        compaction_heartbeat=False,
    ),
    NbccVariant(
        "v6-instant-time",
        "hypothetical: table version 6's instant-time file slicing on an NBCC table (Hudi never runs "
        "NBCC on version 6)",
        Rule.INSTANT_TIME,
        hypothetical=True,
        compaction_heartbeat=False,
    ),
)

VARIANTS: tuple[str, ...] = tuple(v.name for v in _VARIANTS)
_BY_NAME = {v.name: v for v in _VARIANTS}

# what a scenario that still says ``[nbcc] rule = ...`` (before variants) should write instead
RULE_REPLACEMENTS = {
    "completion": "pr-19786",
    "instant": "v6-instant-time",
    "uncommitted-anchor-bug": "hudi-1.2.0",
}


def variant(name: str) -> NbccVariant:
    """The variant called ``name`` (KeyError for an unknown name; NbccConfig.validate names it first)."""
    return _BY_NAME[name]


"""The ``nbcc`` protocol: a MERGE_ON_READ table under Non-Blocking Concurrency Control (RFC-66,
``model/nbcc/``): writers appending logs to shared file groups, compaction, readers slicing as the
variant's ``HoodieFileGroup`` does; its run leaves the plan drawn from the seed (``plan.json``) and a
Hudi table that the second oracle reads back."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, NotRequired

from typing_extensions import TypedDict  # pydantic reads it on Python 3.11 (model/typed.py)

from model.checkers.txn_from_runs import nbcc_views
from model.checkers.verdict import Verdict
from model.config import Scenario
from model.lock.metrics import Percentiles
from model.nbcc.config import NbccScenario
from model.nbcc.sim_checks import check_history
from model.nbcc.sim_layout import load_table
from model.nbcc.sim_table import TablePlan, nbcc_workload, run_table
from model.nbcc.slicing import Rule
from model.nbcc.views import group_view
from model.oracle import nbcc as oracle
from model.oracle.points import ReadPoint
from model.protocols.base import EntryHead, GateMetric, ModelRun, Plugin, Sink, Transactions
from model.runtime.kernel import Workload

PLAN = "plan.json"  # the run's plan, drawn from the seed

GATE_METRICS: Mapping[str, GateMetric] = {
    "completed": GateMetric("lower", 0.10, 0),
    "compactions": GateMetric("lower", 0.0, 0),
    "file_groups": GateMetric("either", 0.0, 0),
    "log_files": GateMetric("either", 0.10, 0),
    "hidden_groups": GateMetric("higher", 0.0, 0),
}


class NbccMetrics(TypedDict):
    """``metrics.json`` of an NBCC run (:func:`nbcc_metrics`): the final table's counts."""

    instants: int
    completed: int
    compactions: int
    file_groups: int
    log_files: int
    hidden_groups: int  # file groups with committed rows a reader of the final table cannot see
    # a Spark contention run (engines/contention_commits.py): real time, per writer
    workload: NotRequired[str]
    writers: NotRequired[list[str]]
    compactor: NotRequired[str]
    duration_ms: NotRequired[int]
    commits: NotRequired[int]
    commits_per_s: NotRequired[float]
    commits_per_writer: NotRequired[dict[str, int]]
    fairness_jain: NotRequired[float | None]
    aborts: NotRequired[int]
    aborts_per_writer: NotRequired[dict[str, int]]
    aborts_per_commit: NotRequired[float | None]
    abort_reasons: NotRequired[dict[str, int]]
    lock_timeouts_per_node: NotRequired[dict[str, int]]
    # Elle's check of the run's transactions (engines/rundir.py): view -> anomaly kind -> cases
    isolation: NotRequired[dict[str, dict[str, int]]]
    commit_latency_ms: NotRequired[Percentiles]
    compaction_outcomes: NotRequired[dict[str, int]]  # committed, failed, planned, nothing_to_compact
    objects: NotRequired[int]  # objects the run left under its prefix


def nbcc_metrics(objects: Mapping[str, bytes], base: str, rule: Rule, metadata_table: bool) -> NbccMetrics:
    """Instants, compactions, file groups, log files; ``hidden_groups``: the file groups with a
    committed log that a reader of the final table does not see at all under ``rule`` and the run's
    listing (Hudi's committed-slice check hiding a group, issue #19774; 0 for a correct reader)."""
    table = load_table(objects, base)
    ct = table.timeline.completion_time
    instants = table.timeline.instants
    listed = table.listed_groups(metadata_table)
    hidden = sum(1 for g in listed if any(ct(lf.instant) is not None for lf in g.log_files)
                 and group_view(g, ct, rule, None, metadata_table) is None)
    return {
        "instants": len(instants),
        "completed": len(table.timeline.completed()),
        "compactions": sum(1 for i in instants if i.requested_action == "compaction"),
        "file_groups": len(table.groups),
        "log_files": sum(len(g.log_files) for g in table.groups),
        "hidden_groups": hidden,
    }


class NbccTable:
    """The read points of an NBCC run's merge-on-read table (``model/oracle/nbcc.py``)."""

    def points(self, config: NbccScenario, run: ModelRun) -> list[ReadPoint]:
        """Snapshot, time travel at every completed instant, incremental reads, under the run's rule."""
        return oracle.nbcc_points(run.events, run.objects, run.base,
                                  config.nbcc.slicing_rule)

    def reading(self, rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
        """hudi-rs's rows as key -> value."""
        return oracle.hudi_reading(rows)


class NbccPlugin:
    """A MERGE_ON_READ table under NBCC (``model/nbcc/sim_table.py``), readers slicing by ``nbcc.variant``."""

    name = "nbcc"
    config_type = NbccScenario
    history = True
    files: Mapping[str, type] = {PLAN: TablePlan}
    metrics_type = NbccMetrics
    gate_metrics = GATE_METRICS
    hudi_table = NbccTable()
    transactions = Transactions(nbcc_views, (
        "Deltacommits write their rows blind and a reader merges them by the ordering field, so Elle "
             "infers no order between two writes of one key (no ww edge; an rw edge only from a read of the "
             "initial state): a reader that shows an older row although a later one committed is invisible "
             "here (the run's own checkers see it).  What Elle can see: a read of a failed attempt's row "
             "(G1a) or of a row its deltacommit overwrote (G1b), a snapshot or a compaction that saw part "
             "of a deltacommit (a key it wrote for the first time read as absent beside another of its "
             "rows: G-single), and with real time a key read as absent after its first deltacommit had "
             "completed.  Transactions are invoked no later than their process's previous one ended."))
    audit_trail = False

    def head(self, config: NbccScenario) -> EntryHead:
        """The entry's name, seed, expectation and description (NBCC runs in simulation only)."""
        return EntryHead(config.name, config.seed, config.expect, config.description)

    def models(self, config: NbccScenario) -> str:
        """The variant's Hudi release, its failed-write handling, and how readers list the table."""
        return config.models()

    def run(self, config: NbccScenario, seed: int, sink: Sink | None) -> ModelRun:
        """Draw the plan from ``seed`` and run it in the simulated world."""
        plan = config.plan(seed)
        run = run_table(plan, seed, sink)
        return ModelRun(list(run.events), run.objects, plan.base + "/", {PLAN: dataclasses.asdict(plan)})

    def check(self, config: NbccScenario, run: ModelRun) -> Verdict:
        """Slices, compaction plans, durability, readers' views and incremental reads under the rule."""
        return check_history(run.events, run.objects, run.base, config.nbcc.slicing_rule)

    def metrics(self, config: NbccScenario, run: ModelRun) -> NbccMetrics:
        """Table size, and how many file groups with committed rows a reader of the final table cannot see."""
        return nbcc_metrics(run.objects, run.base, config.nbcc.slicing_rule,
                            config.nbcc.metadata_table)

    def workload(self, run_config: TablePlan, scenario: Scenario) -> Workload:
        """The NBCC writers and compaction service of a plan (``run_config``) on the nodes of ``scenario``."""
        return nbcc_workload(run_config, scenario)


PLUGIN: Plugin[NbccScenario, TablePlan] = NbccPlugin()

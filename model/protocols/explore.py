"""The ``explore`` protocol: an exhaustive search within bounds, the one its ``[explore]`` table names
(``model = "cow"``: Vanlightly's copy-on-write specification, ``model/cow/``; ``model = "lock"``, ``"occ"``
or ``"nbcc"``: the explorer of the model's own code over the runtime kernel, ``model/explore/``, with the
keys of ``hcc explore --protocol``'s bounds).

The result is the JSON object ``hcc explore --json`` prints (verdict, distinct states, depth,
seconds, the shortest counterexample as steps); the gate reads the counts from the metrics
(``states``, ``depth``, ``counterexample_length``: counts of the search, never its seconds).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict  # pydantic reads it on Python 3.11 (model/typed.py)

from model.checkers.verdict import Verdict, Violation
from model.config import ConfigError, Scenario
from model.cow import explore
from model.cow.config import CowConfig
from model.cow.explorer import CowExploreResult
from model.cow.scenario import CowSettings, ExploreScenario
from model.explore.protocols import BOUNDS
from model.protocols.base import EntryHead, GateMetric, HudiTable, ModelRun, Plugin, Sink, Transactions
from model.runtime.kernel import Workload


@dataclass(frozen=True)
class Explorer:
    """An explorer, by the name ``hcc explore --protocol`` and an ``[explore]`` table's ``model`` give it."""

    name: str
    specification: bool  # Vanlightly's copy-on-write specification (model/cow), not the model's own code

    @property
    def step(self) -> str:
        """What its counterexample's length counts: states of the specification, or decisions."""
        return "states" if self.specification else "decisions"


# The one table of explorers: the specification's, then the model explorers of model/explore (lock, occ, nbcc)
EXPLORERS: Mapping[str, Explorer] = {
    "cow": Explorer("cow", True),
    **{name: Explorer(name, False) for name in BOUNDS},
}
DEFAULT_EXPLORER = "cow"


def explorer(name: str, where: str = "explore.model") -> Explorer:
    """The explorer called ``name``; :class:`ConfigError` naming ``where`` and the value otherwise."""
    if name not in EXPLORERS:
        raise ConfigError(where, name, f"must be one of {', '.join(EXPLORERS)}")
    return EXPLORERS[name]


EXPLORE = "explore.json"  # the search's result: the object ``hcc explore --json`` prints

GATE_METRICS: Mapping[str, GateMetric] = {
    "states": GateMetric("either", 0.0, 0),
    "depth": GateMetric("either", 0.0, 0),
    "counterexample_length": GateMetric("either", 0.0, 0),
}


class ExploreFile(TypedDict):
    """``explore.json``: the search's result, the object ``hcc explore --json`` prints (``model = "cow"``,
    or the model explorer's ``"lock"``, ``"occ"``, ``"nbcc"``); open (a search may say more than this)."""

    model: Literal["cow", "lock", "occ", "nbcc"]
    verdict: str  # holds / ok, violated, or a search stopped before its end
    states: int  # distinct states
    depth: int
    seconds: float
    complete: bool
    config: dict[str, Any]
    generated: NotRequired[int]  # cow: states generated (distinct or not)
    symmetry: NotRequired[bool]  # cow: symmetry reduction
    transitions: NotRequired[int]  # lock: steps explored
    runs: NotRequired[int]  # lock: runs from the start (each backtrack replays its path)
    counterexample_length: NotRequired[int | None]
    violation: NotRequired[dict[str, Any] | None]
    counterexample: NotRequired[list[dict[str, Any]] | None]


class ExploreMetrics(TypedDict):
    """``metrics.json`` of a search: its counts (never gated on its seconds)."""

    states: int
    depth: int
    complete: bool
    counterexample_length: int | None
    seconds: float


def cow_result_json(cfg: CowConfig, res: CowExploreResult, seconds: float) -> dict[str, Any]:
    """The JSON object of one copy-on-write exploration (``hcc explore --json``)."""
    out: dict[str, Any] = {
        "model": "cow",
        "verdict": res.verdict,
        "states": res.states,
        "generated": res.generated,
        "depth": res.depth,
        "seconds": round(seconds, 3),
        "symmetry": res.symmetry,
        "complete": res.complete,
        "config": {"writers": cfg.writers, "keys": cfg.keys, "values": cfg.values,
                   "file_groups": cfg.file_groups, "ops": cfg.ops, "monotonic_ts": cfg.monotonic_ts,
                   "cc": cfg.cc.name.lower(), "put_if_absent": cfg.put_if_absent, "pk_check": cfg.pk_check,
                   "salt": cfg.salt},
    }
    if res.violation is not None:
        v = res.violation
        out["counterexample_length"] = res.counterexample_length
        out["violation"] = {"invariant": "ConsistentRead", "kind": v.kind, "key": f"k{v.key + 1}", "ts": v.ts,
                            "expected": None if v.expected is None else "ABCDEFGHI"[v.expected],
                            "found": [{"file_group": fg, "value": "ABCDEFGHI"[val]} for fg, val in v.found],
                            "text": v.describe()}
        out["counterexample"] = [{"state": st.index, "action": st.action, "writer": st.writer,
                                  "step": st.text, "snapshot": st.state} for st in res.trace]
    return out


def explore_cow(cfg: CowConfig, symmetry: bool, exact: bool = False,
                max_states: int | None = None) -> tuple[CowExploreResult, float]:
    """One copy-on-write exploration and its seconds (the cyclic GC paused: states are acyclic tuples)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        res = explore(cfg, symmetry=symmetry, exact=exact, max_states=max_states)
        return res, time.perf_counter() - start
    finally:
        if was_enabled:
            gc.enable()


def run_explore(settings: Any) -> dict[str, Any]:
    """Run the search ``settings`` describe (``CowSettings`` or a model explorer's bounds) and return its
    JSON."""
    if isinstance(settings, CowSettings):
        cfg = settings.config()
        res, seconds = explore_cow(cfg, settings.symmetry, max_states=settings.max_states or None)
        return cow_result_json(cfg, res, seconds)
    from model.explore import explore as explore_model  # the model explorers (model/explore)

    result: dict[str, Any] = explore_model(settings).to_json()
    return {"model": settings.protocol, **result}


def explore_verdict(result: dict[str, Any]) -> Verdict:
    """The run's verdict: one violation carrying the shortest counterexample's length, or none.

    A search its budget stopped before it was complete and without a violation proves nothing: it
    is a violation of kind ``incomplete-search`` (so it never passes as "holds")."""
    if result["verdict"] in ("holds", "ok"):
        return Verdict((), ())
    if result["verdict"] != "violated":
        return Verdict((Violation("incomplete-search", f"the search stopped at its budget after "
                                  f"{result.get('states')} states without a verdict", ()),), ())
    v = result.get("violation") or {}
    kind = str(v.get("invariant") or v.get("kind") or "invariant")
    text = v.get("text") or v.get("message") or "violated"
    steps = result.get("counterexample_length")
    unit = explorer(result.get("model", DEFAULT_EXPLORER)).step
    return Verdict((Violation(kind, f"{text} (shortest counterexample: {steps} {unit})", (),
                              {"counterexample_length": steps}),), ())


def explore_metrics(result: dict[str, Any]) -> ExploreMetrics:
    """What the gate compares: counts of the search (seconds are reported, never gated)."""
    return {"states": result["states"], "depth": result["depth"], "complete": result.get("complete", True),
            "counterexample_length": result.get("counterexample_length"), "seconds": result["seconds"]}


class ExplorePlugin:
    """An exhaustive search: no history, no store; ``explore.json`` holds its result."""

    name = "explore"
    config_type = ExploreScenario
    history = False
    files: Mapping[str, type] = {EXPLORE: ExploreFile}
    metrics_type = ExploreMetrics
    gate_metrics = GATE_METRICS
    hudi_table: HudiTable[ExploreScenario] | None = None
    transactions: Transactions | None = None
    audit_trail = False

    def head(self, config: ExploreScenario) -> EntryHead:
        """The entry's name, seed (kept, unused: a search has no randomness), expectation, description."""
        return EntryHead(config.name, config.seed, config.expect, config.description, "search")

    def models(self, config: ExploreScenario) -> str:
        """The specification searched, or whose code the model explorer runs (the variant's release)."""
        settings = config.settings
        if isinstance(settings, CowSettings):
            return "Vanlightly's v5 TLA+ specification of copy-on-write commits (not Hudi's code)"
        models: str = settings.models()  # the model explorer's bounds (model/explore) say whose code runs
        return models

    def run(self, config: ExploreScenario, seed: int, sink: Sink | None) -> ModelRun:
        """Run the search (``seed`` and ``sink`` are not used: a search has no randomness, no history)."""
        return ModelRun([], files={EXPLORE: run_explore(config.settings)})

    def check(self, config: ExploreScenario, run: ModelRun) -> Verdict:
        """The search's verdict (:func:`explore_verdict`)."""
        return explore_verdict(run.files[EXPLORE])

    def metrics(self, config: ExploreScenario, run: ModelRun) -> ExploreMetrics:
        """The search's counts (:func:`explore_metrics`)."""
        return explore_metrics(run.files[EXPLORE])

    def workload(self, run_config: None, scenario: Scenario) -> Workload:
        """None: a search runs its writers in its own world only."""
        raise ConfigError("protocol", "explore",
                          "an exhaustive search has no writers to run in another world")


PLUGIN: Plugin[ExploreScenario, None] = ExplorePlugin()

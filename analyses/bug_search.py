"""A targeted Hypothesis search for the lock's known violation classes, from one generic fault space.

The space (:func:`fault_plans`) is every kind of fault a lock-model run takes: pauses (on a time,
an acquisition or a register write), error rules (a node, a key class, read or write, any of the
statuses 409 / 429 / 503 / timeout / lost-reply, a window, a hit count) and clock skew.  What makes it
fast is where the faults go: an error rule's window and a pause start at an *anchor*, an acquisition
or a renewal that a fault-free run of the same seed made (cached per seed), plus a short offset, on
the node that made it and (mostly) on the lock write it is; so most drawn faults hit the protocol
while a writer takes or holds the lock.  A class (:data:`TARGETS`) is a predicate on the run: the
faults the plan may contain and the evidence the history must show; the draw is weighted towards
the class's kind of fault (three in four faults).  Steering with ``hypothesis.target`` on how far a
holder's belief outlasted its lease (:func:`lease_overrun`) is an option: it did not pay
(benchmarks/bench_bug_search.py --ablation).

The base run (:func:`base_scenario`) is short: two writers whose transactions hold the lock for
about 20 s (20 steps of 0.5 to 1.5 s), validity 10 s and renewal 1 s (the smallest Hudi accepts),
15 s of simulated time, enough for a lease to run out once.  Hudi's lock audit is off: its files
change no verdict and cost a quarter of a run's time (a third more store writes).

``search(target, seed)`` returns the shrunk case as a :class:`SearchResult` whose ``scenario``
``hcc run FILE`` replays (:func:`scenario_toml`), or says the budget ran out without a find.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from hypothesis import HealthCheck, Phase, find, settings, target
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from model.checkers.lock_run import check_lock_history
from model.checkers.mutex import holds
from model.checkers.verdict import Verdict, Violation
from model.config import (
    CHECKERS,
    ClockSpec,
    Dist,
    ErrorRule,
    FaultPlan,
    LockConfig,
    Pause,
    Scenario,
    StorageConfig,
    WorkloadConfig,
    describe_faults,
)
from model.lock.variants import VARIANTS
from model.lock.variants import variant as variant_of
from model.runtime.history import Event
from model.runtime.sim import run_scenario
from scenarios import loader

VALIDITY_MS = 10_000
RENEW_MS = 1_000
NODES = ("w1", "w2")
SIM_SEEDS = 8  # the simulated run's seed is drawn from range(SIM_SEEDS)
# The order matters to the shrinker, which moves a choice towards the first entry.
STATUSES = ("503", "429", "409", "timeout", "lost-reply")
KEYS = ("lock", "register", "any")
METHODS = ("write", "read", "any")
TRIGGERS = ("acquired", "write", "time")
ANCHORS = ("acquire", "renew")

# The strategies, built once (a strategy built inside a draw is validated again on every call).
_NODE = st.sampled_from(NODES)
_KEY = st.sampled_from(KEYS)
_METHOD = st.sampled_from(METHODS)
_TRIGGER = st.sampled_from(TRIGGERS)
_ANCHOR = st.sampled_from(ANCHORS)
_KIND = st.sampled_from(("pause", "error"))
_QUARTER = st.integers(0, 3)  # 0 in 4 cases: the less likely branch of a 3-in-4 choice
_INDEX = st.integers(0, 15)
_OFFSET = st.integers(-2, 8)  # x 250 ms
_PAUSE_MS = st.integers(0, 3 * VALIDITY_MS // 100)  # x 100 ms
_WINDOW_MS = st.integers(0, 3 * VALIDITY_MS // 250)  # x 250 ms
_PROB = st.sampled_from((1.0, 1.0, 1.0, 0.5))
_COUNT = st.sampled_from((0, 0, 0, 1, 2))
_SEED = st.integers(0, SIM_SEEDS - 1)
_SKEWED = st.lists(_NODE, max_size=1, unique=True)
_OFFSET_MS = st.integers(-20, 20)  # x 50 ms
_DRIFT = st.integers(-200, 200)

TARGETS = ("long-pause", "throttled-renewal", "failed-renewal", "lost-reply")
SAFETY = ("overlap", "stale-write", "lost-update")


@dataclass(frozen=True)
class TargetClass:
    """A violation class: the faults its plans may hold, the evidence its runs show, what to steer by."""

    name: str
    description: str
    pauses: bool  # the plan may (and must) hold pauses
    statuses: tuple[str, ...]  # the error statuses the plan may hold (and must, when not empty)
    renew_status: str | None  # a renewal must have answered this (renew info status), or None
    evidence: tuple[str, ...]  # violation / finding kinds that count
    steer: bool  # hypothesis.target on the lease overrun


CLASSES: dict[str, TargetClass] = {
    c.name: c
    for c in (
        TargetClass("long-pause", "a pause (only pauses) and a safety violation",
                    True, (), None, SAFETY, True),
        TargetClass("throttled-renewal", "429s (only), a renewal answered THROTTLED, and a safety violation",
                    False, ("429",), "THROTTLED", SAFETY, True),
        TargetClass("failed-renewal", "503s or timeouts (only) on which a renewal failed with UNKNOWN_ERROR, "
                    "and a safety violation", False, ("503", "timeout"), "UNKNOWN_ERROR", SAFETY, True),
        TargetClass("lost-reply", "lost replies (only) and a dangling lock after a failed acquisition (a "
                    "liveness finding with variant hudi) or a safety violation",
                    False, ("lost-reply",), None, ("dangling-lock", *SAFETY), False),
    )
}


@dataclass(frozen=True)
class Case:
    """One point of the fault space: the simulated run's seed, its clocks and its fault plan."""

    seed: int
    clocks: tuple[tuple[str, ClockSpec], ...]
    plan: FaultPlan


@dataclass(frozen=True)
class SearchResult:
    """What one search did: the shrunk case as a runnable scenario (None: not found within the budget)."""

    target: str
    search_seed: int
    scenario: Scenario | None
    evidence: Violation | None
    runs: int  # runs of the model, generating, steering and shrinking
    examples: int  # cases Hypothesis tried (a case outside the target class needs no run)
    seconds: float

    @property
    def found(self) -> bool:
        return self.scenario is not None

    def describe(self) -> str:
        """The find in a few lines: what to replay, the faults and the evidence."""
        head = (f"{self.target}: search seed {self.search_seed}, {self.examples} examples, {self.runs} runs, "
                f"{self.seconds:.2f} s")
        if self.scenario is None or self.evidence is None:
            return head + ": not found"
        sc = self.scenario
        lines = [head, f"  run seed {sc.seed}, variant {sc.lock.variant}"]
        lines += [f"  clock {n}: offset {c.offset_ms} ms, drift {c.drift_ppm} ppm"
                  for n, c in sc.clocks.items()]
        lines += [f"  {line}" for line in describe_faults(sc.faults)]
        lines.append(f"  {self.evidence.kind}: {self.evidence.message}")
        return "\n".join(lines)


def base_scenario(variant: str = "hudi") -> Scenario:
    """The short run every search case starts from (see the module docstring).

    With a fenced variant the verdict rests on the data checkers, as in the catalogue's
    ``rfc91-fenced-long-pause``: fencing refuses a stale write, it does not shorten a lease.
    """
    fenced = variant in VARIANTS and variant_of(variant).fenced
    return Scenario(
        name="bug-search",
        duration_ms=15_000,
        checkers=("stale-write", "lost-update") if fenced else CHECKERS,
        lock=LockConfig(variant=variant, validity_secs=VALIDITY_MS // 1000,
                        renew_interval_secs=RENEW_MS // 1000, wait_time_ms=30_000, audit=False),
        storage=StorageConfig(timeout_ms=500, retry_backoff_ms=50),
        workload=WorkloadConfig(writers=len(NODES), steps_per_hold=20, work_ms=Dist("uniform", 500, 1_500),
                                think_ms=Dist("uniform", 500, 1_500)),
    )


def case_scenario(case: Case, variant: str = "hudi", name: str = "bug-search", expect: str = "ok",
                  description: str = "") -> Scenario:
    """The scenario of one case: the base run with the case's seed, clocks and faults."""
    return replace(base_scenario(variant), name=name, description=description, seed=case.seed,
                   expect=expect, clocks=dict(case.clocks), faults=case.plan)


@lru_cache(maxsize=64)
def anchors(seed: int, variant: str = "hudi") -> dict[tuple[str, str], tuple[int, ...]]:
    """(node, acquire | renew) -> true times at which a fault-free run of ``seed`` sent those lock writes.

    Read off the store's lock-file events (an owner's first write is its acquisition, the later ones
    its renewals) less 50 ms, so that a window starting there catches the write; cached per seed.
    """
    found: dict[tuple[str, str], list[int]] = {}
    seen: set[str] = set()
    for e in run_scenario(base_scenario(variant), seed):
        if e.process == "store" and e.f == "lock-file" and not e.value["expired"]:
            kind = "renew" if e.value["owner"] in seen else "acquire"
            seen.add(e.value["owner"])
            found.setdefault((e.node, kind), []).append(max(0, e.time - 50))
    return {k: tuple(v) for k, v in found.items()}


@lru_cache(maxsize=256)
def _made(seed: int, variant: str, kind: str) -> list[tuple[int, str]]:
    """(time, node) of every anchor of one kind, in time order."""
    return sorted((t, node) for (node, k), ts in anchors(seed, variant).items() if k == kind for t in ts)


def _anchor(draw: st.DrawFn, seed: int, variant: str) -> tuple[str, int]:
    """A node and a time: mostly (3 in 4) an acquisition or renewal of the fault-free run and the node
    that made it, plus [-0.5, 2] s; else any node at that time."""
    made = _made(seed, variant, draw(_ANCHOR))
    at, node = made[draw(_INDEX) % len(made)] if made else (0, NODES[0])
    if draw(_QUARTER) == 0:
        node = draw(_NODE)
    return node, max(0, at + draw(_OFFSET) * 250)


def _pause(draw: st.DrawFn, seed: int, variant: str) -> Pause:
    node, at = _anchor(draw, seed, variant)
    return Pause(node=node, trigger=draw(_TRIGGER), at_ms=at,
                 duration_ms=draw(_PAUSE_MS) * 100)


@lru_cache(maxsize=16)
def _statuses(statuses: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.sampled_from(statuses)


def _error(draw: st.DrawFn, seed: int, variant: str, statuses: Sequence[str]) -> ErrorRule:
    node, start = _anchor(draw, seed, variant)
    # Mostly (3 in 4) the write the anchor is (a lock write); else any key class and method.
    on_anchor = draw(_QUARTER) > 0
    return ErrorRule(
        node=node, key="lock" if on_anchor else draw(_KEY),
        method="write" if on_anchor else draw(_METHOD),
        status=draw(_statuses(tuple(statuses))), prob=draw(_PROB),
        start_ms=start, end_ms=start + draw(_WINDOW_MS) * 250,
        count=draw(_COUNT))


def fault_plans(variant: str = "hudi", focus: str | None = None) -> st.SearchStrategy[Case]:
    """The generic fault space: a run seed, clock skew and one to three faults placed at anchors.

    Every kind of fault can be drawn whatever ``focus`` is; a focus (a target name) only weights the
    draw: three in four faults are of the target's kind (its statuses, or a pause).
    """
    focused = CLASSES[focus] if focus else None

    @st.composite
    def fault(draw: st.DrawFn, seed: int) -> Pause | ErrorRule:
        if focused is not None and draw(_QUARTER) > 0:  # the focus: 3 in 4
            if focused.pauses:
                return _pause(draw, seed, variant)
            return _error(draw, seed, variant, focused.statuses)
        if draw(_KIND) == "pause":
            return _pause(draw, seed, variant)
        return _error(draw, seed, variant, STATUSES)

    # built once per seed: a strategy built inside a draw is validated again on every call
    plans = [st.lists(fault(seed), min_size=1, max_size=3) for seed in range(SIM_SEEDS)]

    @st.composite
    def cases(draw: st.DrawFn) -> Case:
        seed = draw(_SEED)
        faults = draw(plans[seed])
        clocks = tuple(
            (node, ClockSpec(offset_ms=draw(_OFFSET_MS) * 50, drift_ppm=draw(_DRIFT)))
            for node in draw(_SKEWED))
        # A pause of 0 ms and an empty window do nothing: they are left out, not shrunk away.
        plan = FaultPlan(
            pauses=tuple(f for f in faults if isinstance(f, Pause) and f.duration_ms > 0),
            errors=tuple(f for f in faults if isinstance(f, ErrorRule) and f.end_ms > f.start_ms))
        return Case(seed, clocks, plan)

    return cases()


def in_class(cls: TargetClass, plan: FaultPlan) -> bool:
    """The plan holds only faults of the class (clock skew is allowed to any class)."""
    if cls.pauses:
        return bool(plan.pauses) and not plan.errors
    return bool(plan.errors) and not plan.pauses and all(e.status in cls.statuses for e in plan.errors)


def evidence(cls: TargetClass, events: Sequence[Event], verdict: Verdict) -> Violation | None:
    """The violation (of the scenario's deciding checkers) or dangling-lock finding that makes a run of
    the class count, or None."""
    if cls.renew_status is not None and not any(
            e.f == "renew" and e.type == "info" and isinstance(e.value, dict)
            and e.value.get("status") == cls.renew_status for e in events):
        return None
    for v in verdict.violations:
        if v.kind in cls.evidence:
            return v
    for v in verdict.findings:
        if v.kind in cls.evidence and v.kind == "dangling-lock" and v.details.get("cause") == "acquire":
            return v
    return None


def lease_overrun(events: Sequence[Event], validity_ms: int = VALIDITY_MS) -> int:
    """How far (ms of true time) a holder's belief outlasted the lease its last lock write gave it, at most.

    A contender may take the lock once its clock is past validUntil + 500 ms and it polls (every
    second): an overrun beyond that is an overlap.  The search climbs this towards it.
    """
    written: dict[str, list[int]] = {}
    for e in events:
        if e.process == "store" and e.f == "lock-file" and not e.value["expired"]:
            written.setdefault(e.value["owner"], []).append(e.time)
    best = -validity_ms
    for h in holds(events):
        before = [t for t in written.get(h.owner, ()) if t <= h.end]
        if before:
            best = max(best, h.end - (before[-1] + validity_ms))
    return best


def run_case(case: Case, variant: str = "hudi") -> tuple[list[Event], Verdict]:
    """Run one case and check it."""
    scenario = case_scenario(case, variant)
    events = run_scenario(scenario, case.seed)
    return events, check_lock_history(events, scenario.checkers)


def search(target_name: str, seed: int, variant: str = "hudi", max_examples: int = 200,
           focus: bool = True, steer: bool = False) -> SearchResult:
    """Search the generic fault space for a case of ``target_name`` and shrink it.

    ``seed`` seeds Hypothesis (the same seed, the same search).  ``max_examples`` bounds the cases
    generated before giving up.  ``focus=False`` draws every kind of fault alike; ``steer=True`` adds
    ``hypothesis.target`` on :func:`lease_overrun` for the safety classes (off by default: the
    benchmark's ``--ablation`` measured no gain, as the anchored draw finds a case before
    Hypothesis's target phase starts, at half the budget).
    """
    if target_name not in CLASSES:
        raise ValueError(f"target = {target_name!r}: must be one of {', '.join(TARGETS)}")
    if variant not in VARIANTS:
        raise ValueError(f"variant = {variant!r}: must be one of {', '.join(VARIANTS)}")
    cls = CLASSES[target_name]
    runs, calls = [0], [0]
    # Many drawn cases are the same case (an anchor index wraps around, a no-op fault is left out):
    # each distinct case runs once.
    seen: dict[Case, tuple[bool, float]] = {}

    def hit(case: Case) -> bool:
        calls[0] += 1
        if not in_class(cls, case.plan):
            return False
        if case not in seen:
            runs[0] += 1
            events, verdict = run_case(case, variant)
            seen[case] = evidence(cls, events, verdict) is not None, float(lease_overrun(events))
        found, overrun = seen[case]
        if steer and cls.steer:
            target(overrun, label="lease overrun (ms)")
        return found

    started = time.perf_counter()
    phases = [Phase.generate, Phase.target, Phase.shrink] if steer else [Phase.generate, Phase.shrink]
    try:
        case: Case = find(
            fault_plans(variant, target_name if focus else None), hit, random=random.Random(seed),
            settings=settings(max_examples=max_examples, deadline=None, database=None, phases=phases,
                              suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        return SearchResult(target_name, seed, None, None, runs[0], calls[0], time.perf_counter() - started)
    seconds = time.perf_counter() - started
    events, verdict = run_case(case, variant)
    proof = evidence(cls, events, verdict)
    assert proof is not None, "a shrunk case that does not reproduce: the model is not deterministic"
    scenario = case_scenario(case, variant, f"search-{target_name}", verdict.verdict,
                             f"{cls.description}: found by hcc's bug search (analyses/bug_search.py), "
                             f"search seed {seed}")
    return SearchResult(target_name, seed, scenario, proof, runs[0], calls[0], seconds)


def scenario_toml(result: SearchResult) -> str:
    """The found case as a scenario file ``hcc run FILE`` accepts, with the search in a comment."""
    if result.scenario is None:
        raise ValueError(f"target {result.target}: nothing found, no scenario to write")
    comment = "".join(f"# {line}\n" for line in result.describe().splitlines())
    return comment + loader.to_toml(result.scenario)


def replay_kinds(scenario: Scenario) -> set[str]:
    """The violation and finding kinds a run of ``scenario`` (with its own seed) shows."""
    verdict = check_lock_history(run_scenario(scenario, scenario.seed), scenario.checkers)
    return {v.kind for v in (*verdict.violations, *verdict.findings)}

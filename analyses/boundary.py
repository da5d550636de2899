"""Boundary search: bisection over one setting for the smallest value at which a violation appears.

Each probe is a small sweep (the scenario with the setting at that value, run with a few
seeds on an engine); a probe violates when any seed does.  The search assumes the property
is monotone in the setting and says so when the ends do not fit.  ``shrink`` drops every
fault the violation does not need; ``pause_derivation`` derives an RFC-91 pause boundary by
hand from the validity, the renew interval (Hudi renews at a fixed rate) and the 500 ms drift
allowance.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engines.cells import SweepRun
from model.checkers.lock_run import check_lock_history
from model.checkers.verdict import Violation
from model.config import ConfigError, FaultPlan, Scenario, describe_faults
from model.runtime.history import Event
from model.runtime.sim import run_scenario
from scenarios import loader
from scenarios.grid import toml_literal

Number = int | float
_PAUSE = re.compile(r"^faults\.pauses(?:\[(\d+)\]|\.(\d+))\.duration_ms$")
HUDI_DEFAULTS = (300_000, 30_000, 500)  # validity, renew interval, drift allowance (ms)


def parse_number(option: str, text: str) -> Number:
    """An int (``_`` separators allowed) or a float; ConfigError naming the option otherwise."""
    try:
        return int(text.replace("_", ""))
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ConfigError(option, text, "must be a number") from None


def parse_range(text: str) -> tuple[Number, Number]:
    """``LO:HI`` as two numbers (ints when both are), LO < HI."""
    parts = text.split(":")
    if len(parts) != 2:
        raise ConfigError("--range", text, "must look like LO:HI")
    lo, hi = (parse_number("--range", p) for p in parts)
    if isinstance(lo, float) or isinstance(hi, float):
        lo, hi = float(lo), float(hi)
    if not lo < hi:
        raise ConfigError("--range", text, "LO must be below HI")
    return lo, hi


def default_tolerance(lo: Number, hi: Number) -> Number:
    """A thousandth of the range (at least 1 for integers): about ten probes."""
    if isinstance(lo, int) and isinstance(hi, int):
        return max(1, (hi - lo) // 1000)
    return (hi - lo) / 1000


@dataclass(frozen=True)
class Probe:
    """One probe: the value tried and the seeds that violated (empty: safe); errors make the search stop."""

    value: Number
    seeds: tuple[int, ...]
    violating: tuple[int, ...]
    errors: tuple[str, ...] = ()

    @property
    def violates(self) -> bool:
        return bool(self.violating)


@dataclass
class Search:
    """The state and outcome of a bisection."""

    param: str
    lo: Number
    hi: Number
    tolerance: Number
    probes: list[Probe] = field(default_factory=list)
    safe: Number | None = None  # largest value tried that no seed violated
    unsafe: Number | None = None  # smallest value tried that a seed violated
    outcome: str = ""  # found | none-in-range | violates-at-lo | error


class Prober:
    """Builds the scenario for a value and runs its seeds on an engine."""

    def __init__(
        self, scenario: str, overrides: list[str], param: str, seeds: list[int], engine: Any
    ) -> None:
        self.scenario = scenario
        self.overrides = overrides
        self.param = param
        self.seeds = seeds
        self.engine = engine

    def build(self, value: Number) -> Scenario:
        """The scenario with the setting at ``value`` (the loader's errors name a bad key or value)."""
        return loader.load(self.scenario, [*self.overrides, f"{self.param}={toml_literal(value)}"])

    def __call__(self, index: int, value: Number) -> Probe:
        scenario = self.build(value)
        label = f"boundary:{scenario.name}"
        tasks = [SweepRun(label, index, ((self.param, value),), s, scenario) for s in self.seeds]
        rows = self.engine.run(tasks, label=f"probe {index} {self.param}={value}")
        return Probe(
            value,
            tuple(self.seeds),
            tuple(r["seed"] for r in rows if r["verdict"] == "violation"),
            tuple(f"seed {r['seed']}: {r['error']}" for r in rows if r["verdict"] == "error"),
        )


def bisect(
    param: str,
    lo: Number,
    hi: Number,
    tolerance: Number,
    probe: Callable[[int, Number], Probe],
    log: Callable[[str], None] = lambda _s: None,
) -> Search:
    """Bisection for the smallest violating value in [lo, hi], to within ``tolerance``."""
    search = Search(param, lo, hi, tolerance)
    integer = isinstance(lo, int) and isinstance(hi, int)

    def visit(value: Number) -> Probe:
        p = probe(len(search.probes) + 1, value)
        search.probes.append(p)
        verdict = (
            "error"
            if p.errors
            else ("violation (seeds " + " ".join(map(str, p.violating)) + ")" if p.violates else "ok")
        )
        log(f"  probe {len(search.probes):>2}: {param} = {value}  ->  {verdict}")
        return p

    for end in (hi, lo):
        p = visit(end)
        if p.errors:
            search.outcome = "error"
            return search
        if end == hi and not p.violates:
            search.safe, search.outcome = hi, "none-in-range"
            return search
        if end == lo and p.violates:
            search.unsafe, search.outcome = lo, "violates-at-lo"
            return search
    safe, unsafe = lo, hi
    while unsafe - safe > tolerance:
        mid = (safe + unsafe) // 2 if integer else (safe + unsafe) / 2
        if mid in (safe, unsafe):
            break
        p = visit(mid)
        if p.errors:
            search.outcome = "error"
            break
        if p.violates:
            unsafe = mid
        else:
            safe = mid
    search.safe, search.unsafe = safe, unsafe
    search.outcome = search.outcome or "found"
    return search


# ---- evidence ------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    seed: int
    scenario: Scenario  # with the shrunk fault plan
    events: tuple[Event, ...]
    violation: Violation
    dropped: tuple[str, ...]  # faults the shrink removed


def _violations(scenario: Scenario, seed: int) -> tuple[list[Event], list[Violation]]:
    events = run_scenario(scenario, seed)
    return events, list(check_lock_history(events, scenario.checkers).violations)


def _protected(param: str) -> tuple[str, int] | None:
    m = re.match(r"^faults\.(\w+)(?:\[(\d+)\]|\.(\d+))", param)
    return (m.group(1), int(m.group(2) or m.group(3))) if m else None


def shrink(scenario: Scenario, seed: int, param: str) -> tuple[Scenario, list[str]]:
    """Drop each fault the violation does not need (keeping the one ``param`` sets), greedily, same seed."""
    keep = _protected(param)
    plan = scenario.faults
    kept_item = (
        getattr(plan, keep[0])[keep[1]] if keep and keep[1] < len(getattr(plan, keep[0], ())) else None
    )
    dropped: list[str] = []
    for f in dataclasses.fields(FaultPlan):
        i = 0
        while i < len(getattr(plan, f.name)):
            items = getattr(plan, f.name)
            if items[i] is kept_item:
                i += 1
                continue
            trial_plan = dataclasses.replace(plan, **{f.name: items[:i] + items[i + 1 :]})
            trial = dataclasses.replace(scenario, faults=trial_plan)
            if _violations(trial, seed)[1]:
                dropped.extend(describe_faults(dataclasses.replace(FaultPlan(), **{f.name: (items[i],)})))
                plan = trial_plan
            else:
                i += 1
    return dataclasses.replace(scenario, faults=plan), dropped


def evidence(prober: Prober, value: Number, seed: int) -> Evidence:
    """Rerun the violating seed at the boundary here, shrink its schedule, and keep its first violation."""
    scenario, dropped = shrink(prober.build(value), seed, prober.param)
    events, violations = _violations(scenario, seed)
    first = min(violations, key=lambda v: max(events[i].time for i in v.events) if v.events else 0)
    return Evidence(seed, scenario, tuple(events), first, tuple(dropped))


# ---- the hand derivation for a pause of the RFC-91 lock -------------------------------


def pause_derivation(param: str, found: Number, tolerance: Number, ev: Evidence) -> list[str] | None:
    """Compare the pause boundary found with validity, renew interval and the drift allowance, or None."""
    m = _PAUSE.match(param)
    scenario = ev.scenario
    lock = scenario.lock
    if not m or lock.variant == "fenced":
        return None
    index = int(m.group(1) or m.group(2))
    if index >= len(scenario.faults.pauses):
        return None
    pause = scenario.faults.pauses[index]
    v, r, a, poll = (
        lock.validity_secs * 1000,
        lock.renew_interval_secs * 1000,
        lock.drift_allowance_ms,
        lock.poll_ms,
    )
    holder = pause.node
    offsets = {
        n: scenario.clocks[n].offset_ms if n in scenario.clocks else 0 for n in scenario.workload.nodes()
    }
    skew = max((offsets[n] - offsets[holder] for n in offsets if n != holder), default=0)
    defaults = "Hudi's defaults" if (v, r, a) == HUDI_DEFAULTS else "not Hudi's defaults"
    lines = [
        f"hand-derived ({defaults}): validity V = {v} ms, renew interval R = {r} ms,",
        f"  drift allowance A = {a} ms; contender clock ahead of {holder} by s = {skew} ms;",
        f"  contender poll P = {poll} ms.",
        f"  A pause of d ms that starts t ms after {holder}'s lease was last set (acquired or renewed)",
        "  outlives it, as a contender sees it by its own clock, when t + d > V + A - s.",
        "  Hudi renews at a fixed rate (LockProviderHeartbeatManager: scheduleAtFixedRate(R, R) on the",
        "  monotonic clock): the k-th renewal is due k x R after the acquisition and sets validUntil =",
        "  its start + V, whatever the previous one took, and the runs a pause misses fire at once when",
        "  it ends.  While renewals succeed a lease is set every R on that grid, so 0 <= t < R",
        "  (t = (pause start - acquisition) mod R) and the smallest unsafe pause lies between",
        f"    V - R + A - s = {v - r + a - skew} ms  (pause just before a renewal was due; worst case) and",
        f"    V + A - s     = {v + a - skew} ms  (pause right after the lease was set).",
    ]
    start = next(
        (
            e
            for e in ev.events
            if e.process == "nemesis"
            and e.f == "pause-start"
            and e.node == holder
            and any(
                x.f == "pause-end" and x.node == holder and x.time == e.time + pause.duration_ms
                for x in ev.events
            )
        ),
        None,
    )
    lease = None
    if start is not None:
        lease = next(
            (
                e
                for e in reversed(ev.events[: start.index])
                if e.process == "store"
                and e.f == "lock-file"
                and e.node == holder
                and not e.value.get("expired")
            ),
            None,
        )
    if start is None or lease is None or start.clock is None:
        lines.append(
            f"found {found} ms; the evidence run has no lease of {holder} before its pause to compare."
        )
        return lines
    remaining = lease.value["valid_until"] - start.clock
    t = v - remaining
    predicted = remaining + a - skew
    diff = found - predicted
    latency_hi = max(scenario.storage.latency_ms.lo, scenario.storage.latency_ms.hi)
    slack = poll + 2 * latency_hi + tolerance
    acquired = next((e for e in reversed(ev.events[: start.index])
                     if e.node == holder and e.f == "try-lock" and e.type == "ok"), None)
    grid = ""
    if acquired is not None:
        phase = (start.time - acquired.time) % r
        grid = f" (on the fixed-rate grid, (pause start - acquisition) mod R = {phase} ms)"
    lines += [
        f"found {found} ms (bracket {tolerance} ms).  In the evidence run (seed {ev.seed}) {holder}'s pause",
        f"  began t = {t} ms after its lease was last set{grid}, so the lease lapsed for the contender",
        f"  V + A - t - s = {predicted} ms into the pause.",
    ]
    if 0 <= diff <= slack:
        lines += [
            f"  The found value is {diff} ms above that: once the lease lapses the contender still has to",
            f"  poll (every {poll} ms) and its conditional write must land (latency up to {latency_hi} ms)",
            f"  before {holder} wakes and sends its write; plus the bisection's {tolerance} ms.  Consistent.",
        ]
    else:
        lines += [
            f"  The found value differs from that by {diff} ms, more than the poll, the storage latency",
            f"  and the bracket ({slack} ms) explain: drift (ppm), clock jumps or other faults play a part.",
        ]
    gap = found - (v - r + a - skew)
    if t < r // 2:
        why = [f"  this pause began early in a renewal interval (t = {t} of R = {r} ms); the worst case",
               "  needs one that begins just before a renewal is due (a hold longer than R)."]
    else:
        why = [f"  this pause began late in a renewal interval (t = {t} of R = {r} ms), near the worst case;",
               "  the rest is the poll and the round trip above."]
    lines += [f"  Versus the worst case V - R + A - s the found value is {gap:+} ms:", *why,
              "  Other seeds and pause start times move t within [0, R)."]
    return lines


# ---- the command ------------------------------------------------------------

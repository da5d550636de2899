"""The regression gate: compare runs with a stored baseline of verdicts and simulated-time metrics.

A baseline file holds one entry per scenario::

    {"format": 1,
     "scenarios": {"rfc91-safe": {
         "seed": 7, "expect": "ok", "violation_kinds": [],
         "metrics": {"acquire_latency_ms.p99": {"baseline": 1234, "worse": "higher", "rel": 0.1, "abs": 50},
                     ...}}}}

A metric fails when it is worse than ``baseline`` by more than ``rel * |baseline| + abs`` (``worse``
says which direction is worse: ``higher``, ``lower``, or ``either`` for counts that must not move,
such as the distinct states of an exhaustive search). Each protocol has its own metrics
(:data:`DEFAULT_METRICS`, from each protocol's ``gate_metrics``): the lock's acquisitions and
latencies, OCC's commits, aborts per commit and conflicts detected, NBCC's table counts and the file
groups with committed rows a reader of the final table cannot see, the explorer's distinct states,
depth and shortest counterexample. Tolerances live in the file and survive ``--update``. Only
counts, ratios and simulated-time figures are gated, never wall-clock seconds. A run also fails when
its verdict differs from the scenario's expectation, when it shows a violation kind the baseline did
not record, when Elle's check of its transactions (OCC, NBCC; ``metrics.json``'s ``isolation``) finds an
anomaly kind in a view that the baseline's ``isolation_kinds`` did not record, or when its seed differs
from the baseline's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.protocols import PROTOCOLS, GateMetric
from model.run_format import METRICS
from reports.load import RunData, RunDirError
from reports.tables import flatten

FORMAT = 1

WORSE = ("higher", "lower", "either")

# protocol -> metric -> (worse direction, relative tolerance, absolute tolerance): the defaults of --update,
# each protocol's own table (model/protocols: ``Plugin.gate_metrics``)
DEFAULT_METRICS: dict[str, Mapping[str, GateMetric]] = {name: p.gate_metrics for name, p in PROTOCOLS.items()}


class BaselineError(ValueError):
    """A baseline file that cannot be read; the message names the file, the field and the value."""


@dataclass(frozen=True)
class Check:
    """One gate check: a row of the printed table and one JUnit test case."""

    scenario: str
    name: str
    baseline: Any
    now: Any
    change: str
    limit: str
    ok: bool
    message: str = ""


def load_baseline(path: Path) -> dict[str, Any]:
    """Read and validate a baseline file."""
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        raise BaselineError(
            f"baseline {path}: does not exist (write one with hcc gate RUN --update)") from None
    except ValueError as e:
        raise BaselineError(f"baseline {path}: not valid JSON ({e})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or not isinstance(raw.get("scenarios"), dict):
        raise BaselineError(f"baseline {path}: field format must be {FORMAT} and scenarios an object")
    for name, entry in raw["scenarios"].items():
        if not isinstance(entry, dict):
            raise BaselineError(f"baseline {path}: scenarios.{name} = {entry!r} is not an object")
        for key in ("protocol", "seed", "expect", "violation_kinds", "metrics"):
            if key not in entry:
                raise BaselineError(f"baseline {path}: scenarios.{name} has no field {key!r}")
        if entry["protocol"] not in PROTOCOLS:
            raise BaselineError(f"baseline {path}: scenarios.{name}.protocol = {entry['protocol']!r} is not "
                                f"one of {', '.join(PROTOCOLS)}")
        kinds = entry["violation_kinds"]
        if not isinstance(entry["metrics"], dict) or not isinstance(kinds, list) or not all(
                isinstance(k, str) for k in kinds):
            raise BaselineError(f"baseline {path}: scenarios.{name}: metrics must be an object and "
                                "violation_kinds a list of names")
        for metric, spec in entry["metrics"].items():
            where = f"baseline {path}: scenarios.{name}.metrics.{metric}"
            if not isinstance(spec, dict):
                raise BaselineError(f"{where} = {spec!r} is not an object")
            if spec.get("worse") not in WORSE:
                raise BaselineError(f"{where}.worse = {spec.get('worse')!r} is not {', '.join(WORSE)}")
            for t in ("rel", "abs"):
                if not isinstance(spec.get(t, 0), int | float) or spec.get(t, 0) < 0:
                    raise BaselineError(f"{where}.{t} = {spec.get(t)!r} is not a number >= 0")
            base = spec.get("baseline")
            if base is not None and (not isinstance(base, int | float) or isinstance(base, bool)):
                raise BaselineError(f"{where}.baseline = {base!r} is not a number")
    return raw


def _metric_checks(name: str, entry: dict[str, Any], flat: dict[str, Any], path: Path) -> list[Check]:
    checks = []
    for metric, spec in sorted(entry["metrics"].items()):
        base, now = spec.get("baseline"), flat.get(metric)
        rel, abs_ = float(spec.get("rel", 0)), float(spec.get("abs", 0))
        if base is None:
            checks.append(Check(name, metric, None, now, "", "", True, "no baseline value"))
            continue
        slack = rel * abs(base) + abs_
        worse = spec["worse"]
        limit_text = {"higher": f"<= {base + slack:g}", "lower": f">= {base - slack:g}",
                      "either": f"{base:g} ± {slack:g}"}[worse]
        if now is not None and (not isinstance(now, int | float) or isinstance(now, bool)):
            raise RunDirError(path, f"{METRICS}: field {metric} = {now!r} is not a number")
        if now is None:
            checks.append(Check(name, metric, base, None, "missing", limit_text,
                                False, f"{metric} is missing from the run (baseline {base})"))
            continue
        ok = {"higher": now <= base + slack, "lower": now >= base - slack,
              "either": abs(now - base) <= slack}[worse]
        change = f"{now - base:+g}" + (f" ({(now - base) / abs(base):+.1%})" if base else "")
        moved = "moved" if worse == "either" else "got worse"
        checks.append(Check(name, metric, base, now, change, limit_text, ok,
                            "" if ok else f"{metric} {moved}: {base} -> {now} (limit {limit_text})"))
    return checks


def gate_run(run: RunData, baseline: dict[str, Any]) -> list[Check]:
    """Every check of one run against its baseline entry (RunDirError: a gated metric is not a number)."""
    name = run.name
    entry = baseline["scenarios"].get(name)
    if entry is None:
        return [Check(name, "baseline", None, None, "", "", False,
                      f"no baseline entry for scenario {name} (add one on purpose with hcc gate --update)")]
    kinds = sorted({v["kind"] for v in run.verdict["violations"]})
    protocol = run.protocol
    checks = [
        Check(name, "protocol", entry["protocol"], protocol, "", "== baseline", protocol == entry["protocol"],
              "" if protocol == entry["protocol"] else
              f"the run is a {protocol} run, the baseline's entry a {entry['protocol']} one"),
        Check(name, "seed", entry["seed"], run.seed, "", f"== {entry['seed']}", run.seed == entry["seed"],
              "" if run.seed == entry["seed"] else f"run seed {run.seed} differs from the baseline's"),
        Check(name, "verdict", run.expect, run.outcome, "", f"== {run.expect}", run.outcome == run.expect,
              "" if run.outcome == run.expect else
              f"expected {run.expect}, got {run.outcome}: "
              + ("; ".join(v["message"] for v in run.verdict["violations"][:3]) or "no violation found")),
    ]
    checks.append(_kinds_check(name, "violation kinds", entry["violation_kinds"], kinds,
                               "unexpected safety violation(s)"))
    return checks + _isolation_checks(name, entry, run) + _metric_checks(name, entry, flatten(run.metrics),
                                                                          run.path)


def _kinds_check(name: str, check: str, base: list[str], got: list[str], what: str) -> Check:
    """Fails when ``got`` has a kind ``base`` did not record (``what: kinds`` says which)."""
    new = [k for k in got if k not in base]
    return Check(name, check, ",".join(base) or "-", ",".join(got) or "-", "", "no new kind", not new,
                 f"{what}: {', '.join(new)}" if new else "")


def _isolation_kinds(metrics: Mapping[str, Any]) -> dict[str, list[str]]:
    return {view: sorted(kinds) for view, kinds in (metrics.get("isolation") or {}).items()}


def _isolation_checks(name: str, entry: dict[str, Any], run: RunData) -> list[Check]:
    """Elle's anomaly kinds per view: one the baseline did not record fails (a baseline without them,
    from before they were recorded, is no baseline)."""
    if "isolation_kinds" not in entry:
        return []
    base, now = entry["isolation_kinds"], _isolation_kinds(run.metrics)
    return [_kinds_check(name, f"isolation kinds ({view})", base.get(view, []), now.get(view, []),
                         f"a new isolation anomaly in view {view}")
            for view in sorted(set(now) | set(base))]


def gate_missing(baseline: dict[str, Any], seen: set[str]) -> list[Check]:
    """A failing check for each baseline scenario that has no run (gating a folder of runs)."""
    return [Check(name, "run", "present", "missing", "", "", False, f"no run directory for scenario {name}")
            for name in sorted(set(baseline["scenarios"]) - seen)]


def baseline_entry(run: RunData, old: dict[str, Any] | None) -> dict[str, Any]:
    """A baseline entry from a run, keeping the tolerances of ``old`` where it had them."""
    flat = flatten(run.metrics)
    metrics = {}
    for metric, (worse, rel, abs_) in DEFAULT_METRICS[run.protocol].items():
        spec = {"worse": worse, "rel": rel, "abs": abs_}
        if old and metric in old.get("metrics", {}):
            kept = old["metrics"][metric]
            spec = {k: kept[k] for k in ("worse", "rel", "abs") if k in kept}
        metrics[metric] = {**spec, "baseline": flat.get(metric)}
    entry = {"protocol": run.protocol, "seed": run.seed, "expect": run.expect,
             "violation_kinds": sorted({v["kind"] for v in run.verdict["violations"]}), "metrics": metrics}
    if "isolation" in run.metrics:
        entry["isolation_kinds"] = _isolation_kinds(run.metrics)
    return entry


def update_baseline(runs: list[RunData], old: dict[str, Any] | None) -> dict[str, Any]:
    """The baseline after recording ``runs`` (other scenarios' entries are kept)."""
    scenarios = dict((old or {}).get("scenarios", {}))
    for run in runs:
        scenarios[run.name] = baseline_entry(run, scenarios.get(run.name))
    return {"format": FORMAT,
            "note": "written by 'hcc gate --update'; tolerances (rel, abs, worse) may be edited by hand",
            "scenarios": dict(sorted(scenarios.items()))}

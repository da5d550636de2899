"""pandas tables of one run: settings, checker verdicts, latencies, per-acquisition counts, throughput."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import pandas as pd

from model.config import CHECKERS
from model.lock.metrics import percentile
from model.runtime.history import Event
from reports.document import Clock
from reports.load import RunData
from reports.lock_holders import Group
from reports.times import TIME, run_epoch, value_text


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys (lists of tables stay as one cell)."""
    out: dict[str, Any] = {}
    if isinstance(data, dict):
        for k, v in data.items():
            out.update(flatten(v, f"{prefix}{k}."))
        return out
    out[prefix.rstrip(".")] = data
    return out


def settings_table(run: RunData) -> pd.DataFrame:
    """Every resolved scenario setting, as dotted key and value."""
    flat = flatten({k: v for k, v in run.scenario.items() if k != "description"})
    flat = {k: v for k, v in flat.items() if v != {} and v != []}
    # a scalar stays a value (reports.document.cell_text shows it), a list or table is shown as JSON
    rows = [(k, v if isinstance(v, int | float | str | bool) else json.dumps(v, default=str))
            for k, v in sorted(flat.items()) if k]
    return pd.DataFrame(rows, columns=["setting", "value"])


def checker_table(run: RunData) -> pd.DataFrame:
    """One row per checker: whether it decides the verdict, and what it found."""
    deciding = list(run.scenario.get("checkers", CHECKERS))
    found: Counter[str] = Counter(v["kind"] for v in run.verdict["violations"])
    noted: Counter[str] = Counter(v["kind"] for v in run.verdict["findings"])
    rows = []
    for name in [*CHECKERS, "dangling-lock"]:
        decides = name in deciding
        n = found[name] + noted[name]
        verdict = ("violation" if decides else "finding") if n else "ok"
        rows.append((name, "yes" if decides else "no (reported only)", verdict, n))
    return pd.DataFrame(rows, columns=["checker", "decides verdict", "result", "count"])


def latency_table(samples: dict[str, list[int]]) -> pd.DataFrame:
    """Acquisitions and latency percentiles per writer and overall (nearest rank, as model.lock.metrics)."""
    everyone = [x for v in samples.values() for x in v]
    rows = []
    for who, values in [*sorted(samples.items()), ("all", everyone)]:
        rows.append({"writer": who, "acquisitions": len(values),
                     **{f"p{q}_ms": percentile(values, q) for q in (50, 90, 99, 100)}})
    return pd.DataFrame(rows)


def per_acquisition_table(run: RunData) -> pd.DataFrame:
    """Retries, precondition failures (412), unknown outcomes and conflicts per acquisition, per writer."""
    acquired: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    renew_unknown: Counter[str] = Counter()
    for e in run.events:
        if e.process == e.node and e.f == "acquire" and e.type == "ok":
            acquired[e.node] += 1
        elif e.f == "try-lock" and e.type == "fail":
            reasons[e.node][(e.value or {}).get("reason", "?")] += 1
        elif e.f == "renew" and e.type == "info":
            renew_unknown[e.node] += 1
    writers = list(run.metrics.get("writers") or sorted(acquired))
    rows = []
    for w in [*writers, "all"]:
        r = reasons[w] if w != "all" else sum(reasons.values(), Counter())
        acq = acquired[w] if w != "all" else sum(acquired.values())
        unknown = r["read-unknown"] + r["write-unknown"] + (
            renew_unknown[w] if w != "all" else sum(renew_unknown.values()))

        def per(n: int, acq: int = acq) -> float | None:
            return round(n / acq, 4) if acq else None

        rows.append({"writer": w, "acquisitions": acq,
                     "retries": per(sum(r.values())),
                     "acquire_precondition_failure": per(r["precondition-failed"]),
                     "unknown_outcomes": per(unknown),
                     "conflicts (held by other)": per(r["held"])})
    return pd.DataFrame(rows).set_index("writer")


def throughput_frame(events: Sequence[Event], writers: Sequence[str], bins: int = 60) -> pd.DataFrame:
    """Applied register writes per simulated second, per writer, in ``bins`` equal windows."""
    end = max(events[-1].time if events else 1, 1)
    width = max(end / bins, 1.0)
    times = [(e.node, e.time) for e in events if e.process == e.node and e.f == "write" and e.type == "ok"]
    frame = pd.DataFrame(times, columns=["writer", "time_ms"])
    frame["bin"] = (frame["time_ms"] // width).astype(int).clip(upper=bins - 1)
    counts = frame.groupby(["bin", "writer"]).size().unstack(fill_value=0)
    counts = counts.reindex(index=range(bins), columns=list(writers), fill_value=0)
    rates = counts / (width / 1000.0)
    rates.index = [(i + 0.5) * width / 1000.0 for i in range(bins)]
    rates.index.name = "time_s"
    return rates


def group_table(group: Group, limit: int = 200) -> pd.DataFrame:
    """The violations of one group, one row each (at most ``limit``).

    With an audit trail in the run, the ``audit-visible`` column says whether Hudi's audit validator
    (``hcc check-audit`` on the run's own ``table/``) reports an overlap of the violation's owners.
    """
    rows = []
    for v in group.violations[:limit]:
        row = {"kind": v["kind"], "message": v["message"], "events": ", ".join(map(str, v["events"]))}
        if v.get("audit_visible") is not None:
            row["audit-visible"] = "yes" if v["audit_visible"] else "no"
        rows.append(row)
    return pd.DataFrame(rows)


def events_table(events: Sequence[Event], indices: Sequence[int]) -> pd.DataFrame:
    """The cited events, as rows (index, true time, node, process, type, f, the node's clock, value), every
    time in ms since the run's start (``reports/times.py``: a clock reading as ``t<ms>``)."""
    epoch = run_epoch(events)
    rows = [{"index": e.index, TIME: e.time, "node": e.node, "process": e.process, "type": e.type,
             "f": e.f, "clock (ms since start)": None if e.clock is None else Clock(e.clock - epoch),
             "value": value_text(e.value, epoch)}
            for e in (events[i] for i in sorted(set(indices)))]
    return pd.DataFrame(rows)


def metrics_table(metrics: dict[str, Any]) -> pd.DataFrame:
    """metrics.json as metric / value rows (nested percentiles as dotted names)."""
    flat = flatten({k: v for k, v in metrics.items() if k not in ("writers",)})
    return pd.DataFrame(sorted(flat.items()), columns=["metric", "value"])

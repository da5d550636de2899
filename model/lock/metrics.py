"""Metrics of a lock-model history, named after Hudi's lock metrics where one exists.

All times are simulated (true) milliseconds, so the numbers are counts and
ratios that do not depend on how busy the machine was.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from typing_extensions import TypedDict  # pydantic reads it on Python 3.11 (model/typed.py)

from model.runtime.history import Event


class Percentiles(TypedDict):
    """Nearest-rank percentiles of a latency, simulated ms (None: no sample)."""

    p50: int | None
    p90: int | None
    p99: int | None
    p100: int | None


class WriterPercentiles(TypedDict):
    """A writer's own latency percentiles, simulated ms (None: no sample)."""

    p50: int | None
    p90: int | None
    p99: int | None


class LockMetrics(TypedDict):
    """``metrics.json`` of a lock run (:func:`lock_metrics`), in every world."""

    writers: list[str]
    acquisitions: int
    acquisitions_per_writer: dict[str, int]
    acquire_latency_ms: Percentiles
    acquire_latency_ms_per_writer: dict[str, WriterPercentiles]
    acquire_timeouts: int
    try_lock_held_by_other: int
    acquire_precondition_failure: int
    acquire_precondition_failure_per_acquisition: float | None
    acquire_throttled: int
    acquire_exceptions: int
    unknown_outcomes: int
    unknown_outcomes_per_acquisition: float | None
    retries_per_acquisition: float | None
    dangling_lock_seen: int
    renewals_ok: int
    renewals_failed: int
    renewals_unknown: int
    min_expiration_deadline_ms: int | None
    lock_lost: int
    writer_interrupted: int
    release_failures: int
    writes_ok: int
    writes_rejected: int
    writes_unknown: int
    throughput_writes_per_s: float
    fairness_jain: float | None
    simulated_ms: int


def percentile(values: Sequence[int], q: float) -> int | None:
    """Nearest-rank percentile (q in [0, 100]); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def percentiles(values: Sequence[int]) -> Percentiles:
    """p50, p90, p99 and p100 (the largest) of ``values``, nearest rank."""
    return {"p50": percentile(values, 50), "p90": percentile(values, 90), "p99": percentile(values, 99),
            "p100": percentile(values, 100)}


def jain_index(values: Sequence[float]) -> float | None:
    """Jain's fairness index: 1.0 when every writer got the same share, 1/n when one got all."""
    if not values or not any(values):
        return None
    return float(sum(values) ** 2 / (len(values) * sum(v * v for v in values)))


def acquire_latencies(events: Sequence[Event]) -> dict[str, list[int]]:
    """Acquire latency (invoke to ok, true ms) of every successful acquisition, per writer."""
    pending: dict[str, int] = {}
    out: dict[str, list[int]] = defaultdict(list)
    for e in events:
        if e.process == e.node and e.f == "acquire":
            if e.type == "invoke":
                pending[e.node] = e.time
            elif e.node in pending:
                start = pending.pop(e.node)
                if e.type == "ok":
                    out[e.node].append(e.time - start)
    return dict(out)


def lock_metrics(events: Sequence[Event]) -> LockMetrics:
    """Acquisitions, latencies, retries, precondition failures, unknown outcomes, throughput, fairness."""
    writers = sorted({e.node for e in events if e.process == e.node and e.f == "acquire"})
    latencies = acquire_latencies(events)
    acquired = Counter({w: len(v) for w, v in latencies.items()})
    try_fail: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    deadlines: list[int] = []
    last_valid_until: dict[str, int] = {}
    for e in events:
        key = (e.f, e.type)
        if e.process == e.node and key == ("acquire", "fail"):
            counts["acquire_timeouts"] += 1
        elif e.f == "try-lock":
            if e.type == "ok":
                last_valid_until[e.node] = e.value["valid_until"]
            else:
                try_fail[e.value.get("reason", "?")] += 1
        elif key == ("renew", "invoke") and e.clock is not None and e.node in last_valid_until:
            deadlines.append(last_valid_until[e.node] - e.clock)
            last_valid_until[e.node] = e.value["valid_until"]
        elif e.f == "renew":
            counts[f"renew_{e.type}"] += 1
        elif key == ("write", "ok"):
            counts["writes_ok"] += 1
        elif key in (("write", "fail"), ("write", "info")):
            counts[f"writes_{e.type}"] += 1
        elif key == ("dangling-lock", "info"):
            counts["dangling_lock_seen"] += 1
        elif key == ("lock-lost", "info"):
            counts["lock_lost"] += 1
        elif key == ("interrupted", "info"):
            counts["writer_interrupted"] += 1
        elif key == ("release", "fail"):
            counts["release_failures"] += 1
    all_lat = [x for v in latencies.values() for x in v]
    total_acq = sum(acquired.values())
    duration_s = max((events[-1].time if events else 0) / 1000.0, 1e-9)
    unknown = try_fail["read-unknown"] + try_fail["write-unknown"] + counts["renew_info"]

    def ratio(n: int) -> float | None:
        return round(n / total_acq, 4) if total_acq else None

    return {
        "writers": writers,
        "acquisitions": total_acq,
        "acquisitions_per_writer": {w: acquired[w] for w in writers},
        "acquire_latency_ms": percentiles(all_lat),
        "acquire_latency_ms_per_writer": {
            w: {"p50": percentile(latencies.get(w, []), 50), "p90": percentile(latencies.get(w, []), 90),
                "p99": percentile(latencies.get(w, []), 99)} for w in writers
        },
        "acquire_timeouts": counts["acquire_timeouts"],
        "try_lock_held_by_other": try_fail["held"],
        "acquire_precondition_failure": try_fail["precondition-failed"],
        "acquire_precondition_failure_per_acquisition": ratio(try_fail["precondition-failed"]),
        "acquire_throttled": try_fail["throttled"],
        "acquire_exceptions": try_fail["exception"],
        "unknown_outcomes": unknown,
        "unknown_outcomes_per_acquisition": ratio(unknown),
        "retries_per_acquisition": ratio(sum(try_fail.values())),
        "dangling_lock_seen": counts["dangling_lock_seen"],
        "renewals_ok": counts["renew_ok"],
        "renewals_failed": counts["renew_fail"],
        "renewals_unknown": counts["renew_info"],
        "min_expiration_deadline_ms": min(deadlines) if deadlines else None,
        "lock_lost": counts["lock_lost"],
        "writer_interrupted": counts["writer_interrupted"],
        "release_failures": counts["release_failures"],
        "writes_ok": counts["writes_ok"],
        "writes_rejected": counts["writes_fail"],
        "writes_unknown": counts["writes_info"],
        "throughput_writes_per_s": round(counts["writes_ok"] / duration_s, 4),
        "fairness_jain": jain_index([acquired[w] for w in writers]),
        "simulated_ms": events[-1].time if events else 0,
    }

"""Checks of a Hudi Spark writers' run: its history (each writer's invoke/ok/fail lines) against the
timeline Hudi left in ``.hoodie`` and the rows Hudi's reader returned at the end.

Anomalies (each fails the run): ``ack-not-on-timeline`` (a write acknowledged ok whose instant is not a
completed commit), ``duplicate-key`` (the final read returns a record key more than once), ``lost-update``
(a key's final value is not the one of the last acknowledged write of it, by completion time: another
value, a key that write deleted, or no row where it upserted one), ``aborted-write-visible`` (that value
is one a failed write wrote). Notes (do not fail it):
``commit-without-ack`` (a completed commit no writer acknowledged, e.g. a writer killed after its commit).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

CONFLICT = "org.apache.hudi.exception.HoodieWriteConflictException"


def read_history(path: Path) -> list[dict[str, Any]]:
    """The history's lines (a torn last line, from a killed writer, is left out)."""
    events = []
    for line in path.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


def check_run(events: list[dict[str, Any]], timeline: list[dict[str, str]]) -> dict[str, Any]:
    """A run's ``valid``, ``commits``, ``conflicts``, ``failures``, ``anomalies``, ``notes``, ``metrics``."""
    completed = {f"{i['requested']}_{i['completed']}" for i in timeline
                 if i["state"] == "completed" and i["action"] in ("commit", "deltacommit", "replacecommit")}
    writes_ok = [e for e in events if e.get("f") == "write" and e["type"] == "ok"]
    writes_fail = [e for e in events if e.get("f") == "write" and e["type"] == "fail"]
    anomalies: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for e in writes_ok:
        if e.get("instant") not in completed:
            anomalies.append({"kind": "ack-not-on-timeline", "process": e["process"],
                              "batch": e["value"]["batch"], "instant": e.get("instant")})
    acked = {e.get("instant") for e in writes_ok}
    notes += [{"kind": "commit-without-ack", "instant": c} for c in sorted(completed - acked)]
    reads = [e for e in events if e.get("f") == "read" and e["type"] == "ok"]
    final = max(reads, key=lambda e: e["time"]) if reads else None
    if final is not None:
        anomalies += _check_rows(final, writes_ok, writes_fail)
    conflicts = [{"process": e["process"], "batch": e["value"]["batch"], "class": e["error"]["class"],
                  "message": e["error"]["message"][:300]}
                 for e in writes_fail if e["error"]["class"] == CONFLICT]
    failures = [{"process": e["process"], "batch": e["value"]["batch"], "class": e["error"]["class"],
                 "root_class": e["error"].get("root_class")} for e in writes_fail]
    elapsed = [e["elapsed_s"] for e in writes_ok]
    metrics = {"jvm_start_s": {e["process"]: e["jvm_start_s"] for e in events if e["type"] == "ready"},
               "commit_s_mean": round(statistics.mean(elapsed), 3) if elapsed else None,
               "commit_s_median": round(statistics.median(elapsed), 3) if elapsed else None,
               "commit_s_max": max(elapsed) if elapsed else None}
    return {"valid": not anomalies, "commits": len(writes_ok), "aborted": len(writes_fail),
            "conflicts": conflicts, "failures": failures, "anomalies": anomalies, "notes": notes,
            "final_read": final["value"] if final else None, "metrics": metrics}


def _check_rows(final: dict[str, Any], oks: list[dict[str, Any]],
                fails: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = final["value"]
    out: list[dict[str, Any]] = []
    counts = Counter((r[1], r[0]) for r in rows)
    out += [{"kind": "duplicate-key", "partition": p, "key": k, "copies": n}
            for (p, k), n in counts.items() if n > 1]
    # key -> (completion, value) of its last acked write; value None: that write deleted the key
    last: dict[tuple[str, str], tuple[str, int | None]] = {}
    for e in oks:
        done = str(e.get("instant") or "").partition("_")[2]
        deletes = e["value"].get("op") == "delete"
        for key, part, value in e["value"]["rows"]:
            if (part, key) not in last or done > last[(part, key)][0]:
                last[(part, key)] = (done, None if deletes else value)
    failed_values = {(r[1], r[0], r[2]) for e in fails for r in e["value"]["rows"]}
    for key, part, value, commit, _file in rows:
        want = last.get((part, key))
        if want is None or want[1] == value:
            continue
        kind = "aborted-write-visible" if (part, key, value) in failed_values else "lost-update"
        out.append({"kind": kind, "partition": part, "key": key, "value": value, "commit": commit,
                    "expected": want[1]})
    present = {(r[1], r[0]) for r in rows}
    out += [{"kind": "lost-update", "partition": part, "key": key, "value": None, "commit": None,
             "expected": value}
            for (part, key), (_done, value) in sorted(last.items())
            if value is not None and (part, key) not in present]
    return out

"""Checks of a Hudi Spark writers' run: its history (each writer's invoke/ok/fail lines) against the
timeline Hudi left in ``.hoodie`` and the rows Hudi's reader returned at the end.

Anomalies (each fails the run): ``ack-not-on-timeline`` (a write acknowledged ok whose instant is not a
completed commit), ``duplicate-key`` (the final read returns a record key more than once), ``lost-update``
(a key's final value is not the one of the last acknowledged write of it, by completion time: another
value, a key that write deleted, or no row where it upserted one; an ``insert_overwrite`` deletes every
other key of its rows' partitions, a ``delete_partition`` every key of them, Hudi replacing their file
groups: a key whose last write completed before it; a clustering writes no key),
``aborted-write-visible`` (that value is one an aborted write wrote), ``abort-committed`` (a write Hudi
failed with an exception thrown before its commit, yet its instant completed). The final read is judged
against the writes acknowledged before it was invoked (one acknowledged while it ran may or may not be in
it) and the failed ones that committed.
Commits are ``commit``s (copy-on-write), ``replacecommit``s (clustering, insert_overwrite,
delete_partition) or ``deltacommit``s (merge-on-read, NBCC); the final read is Hudi's snapshot read,
which merges a merge-on-read table's logs. Notes (do not fail it): ``commit-without-ack`` (a completed
commit no writer acknowledged, e.g. a writer killed after its commit), ``fault`` (a writer the harness
paused, resumed or killed: the history's ``info`` lines), ``pending-instant`` (an instant left requested
or inflight, e.g. by a killed writer), ``committed-call-failed`` (a write whose call failed after its
instant completed: the writer's job reports failure while its data is visible; it counts as committed),
``indeterminate-write-visible`` (a value of a failed write whose outcome the run does not tell).

A failed write's outcome (:func:`outcome`), as Jepsen treats a failed call: ``committed`` when the run
ties it to a completed instant (the ``instant`` its writer recorded from its commit metadata's marks, or
:func:`with_failed_instants` from the table's), ``aborted`` when the run tells that none completed or
Hudi's exception is one thrown before the attempt's instant completes (:data:`DEFINITE_ABORTS`), else
``indeterminate``. ``python -m engines.hudi_spark.check RUN_DIR`` judges a run folder again.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engines.hudi_spark.writer import MARK, NOTHING_TO_CLUSTER
from model.timeline.metadata import decode_instant_metadata

CONFLICT = "org.apache.hudi.exception.HoodieWriteConflictException"
# SparkRejectUpdateStrategy's refusal of an update of a file group in a pending clustering plan
REJECTED = "org.apache.hudi.exception.HoodieClusteringUpdateException"
REPLACE_OPS = ("cluster", "insert_overwrite", "delete_partition")  # Hudi commits them as replacecommits
# Hudi 1.2.0's exceptions that end a write before its instant completes, so its call's abort is definite:
# HoodieWriteConflictException from the conflict check, BaseHoodieWriteClient#preCommit ->
# resolveWriteConflict (BaseHoodieWriteClient.java:427-431, called in commitStats at 270, inside the
# commit's transaction and before commit() writes the completed instant at 274); the refusal of
# SparkRejectUpdateStrategy#handleUpdate while the write's records are tagged and partitioned, before any
# file is written. Any other exception may come after the instant completed: commitStats runs the
# failed-writes clean and archival after it (mayBeCleanAndArchive, 289; autoCleanOnCommit, 715-728),
# whose exceptions reach the caller (hoodie.write.can.ignore.post.commit.failures, false by default).
DEFINITE_ABORTS = (CONFLICT, REJECTED)
OUTCOMES = ("committed", "aborted", "indeterminate")


ORDERINGS = ("completion", "event-time")


def check_run(events: list[dict[str, Any]], timeline: list[dict[str, str]],
              ordering: str = "completion") -> dict[str, Any]:
    """A run's ``valid``, ``commits`` (``replacecommits`` of them clusterings and insert_overwrites),
    ``conflicts``, ``rejected`` (updates refused while their file group was being clustered), ``failures``,
    ``anomalies``, ``notes``, ``metrics``.

    ``ordering``: which acknowledged write of a key the final read must show: the last by completion time
    (copy-on-write under OCC) or the one with the greatest value, which the writers also use as the
    ordering field ``ts`` (merge-on-read under NBCC, Hudi's ``EVENT_TIME_ORDERING`` merge)."""
    if ordering not in ORDERINGS:
        raise ValueError(f"ordering={ordering!r}: one of {', '.join(ORDERINGS)}")
    completed = {f"{i['requested']}_{i['completed']}" for i in timeline
                 if i["state"] == "completed" and i["action"] in ("commit", "deltacommit", "replacecommit")}
    writes_ok = [e for e in events if e.get("f") == "write" and e["type"] == "ok"]
    writes_fail = [e for e in events if e.get("f") == "write" and e["type"] == "fail"]
    anomalies: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    by_outcome: dict[str, list[dict[str, Any]]] = {o: [] for o in OUTCOMES}
    for e in writes_fail:
        by_outcome[outcome(e, completed)].append(e)
        what = {"process": e["process"], "batch": e["value"]["batch"], "instant": e.get("instant"),
                "class": e["error"]["class"]}
        if e["error"]["class"] in DEFINITE_ABORTS and e.get("instant") in completed:
            anomalies.append({"kind": "abort-committed", **what})
        elif e in by_outcome["committed"]:
            notes.append({"kind": "committed-call-failed", **what,
                          "root_class": e["error"].get("root_class")})
    for e in writes_ok:
        if e.get("result") == NOTHING_TO_CLUSTER:  # a clustering Hudi planned nothing for: no instant
            continue
        if e.get("instant") not in completed:
            anomalies.append({"kind": "ack-not-on-timeline", "process": e["process"],
                              "batch": e["value"]["batch"], "instant": e.get("instant")})
    acked = {e.get("instant") for e in writes_ok + by_outcome["committed"]}
    notes += [{"kind": "commit-without-ack", "instant": c} for c in sorted(completed - acked)]
    notes += [{"kind": "fault", "f": e["f"], "process": e["process"],
               "key": (e.get("value") or {}).get("key")} for e in events if e["type"] == "info"]
    notes += _pending(timeline)
    reads = [e for e in events if e.get("f") == "read" and e["type"] == "ok"]
    final = max(reads, key=lambda e: e["time"]) if reads else None
    if final is not None:
        invoked = max((e["time"] for e in events if e.get("f") == "read" and e["type"] == "invoke"
                       and e["process"] == final["process"] and e["time"] <= final["time"]),
                      default=final["time"])
        done = [e for e in writes_ok + by_outcome["committed"] if e["time"] < invoked]
        rows_out = _check_rows(final, done, by_outcome["aborted"], by_outcome["indeterminate"], ordering)
        anomalies += [r for r in rows_out if r["kind"] != "indeterminate-write-visible"]
        notes += [r for r in rows_out if r["kind"] == "indeterminate-write-visible"]
    conflicts = [{"process": e["process"], "batch": e["value"]["batch"], "class": e["error"]["class"],
                  "message": e["error"]["message"][:300]}
                 for e in writes_fail if e["error"]["class"] == CONFLICT]
    failures = [{"process": e["process"], "batch": e["value"]["batch"], "class": e["error"]["class"],
                 "root_class": e["error"].get("root_class")} for e in writes_fail]
    rejected = [f for f in failures if REJECTED in (f["class"], f["root_class"])]
    replaces = sum(1 for e in writes_ok if e["value"].get("op") in REPLACE_OPS and e.get("instant"))
    elapsed = [e["elapsed_s"] for e in writes_ok]
    metrics = {"jvm_start_s": {e["process"]: e["jvm_start_s"] for e in events if e["type"] == "ready"},
               "commit_s_mean": round(statistics.mean(elapsed), 3) if elapsed else None,
               "commit_s_median": round(statistics.median(elapsed), 3) if elapsed else None,
               "commit_s_max": max(elapsed) if elapsed else None}
    return {"valid": not anomalies, "commits": len(writes_ok),
            "aborted": len(writes_fail) - len(by_outcome["committed"]),
            "replacecommits": replaces, "rejected": rejected, "conflicts": conflicts,
            "failures": failures, "anomalies": anomalies, "notes": notes,
            "final_read": final["value"] if final else None, "metrics": metrics}


def outcome(fail: Mapping[str, Any], completed: set[str]) -> str:
    """A failed write's outcome: ``committed`` when the ``instant`` recorded on its line is one of the
    ``completed`` instants (and its exception is not one of :data:`DEFINITE_ABORTS`, which is an
    ``abort-committed`` anomaly), ``aborted`` when its line records that none completed (``instant`` null)
    or its exception is one of them, else ``indeterminate`` (no record: its write may be visible)."""
    if fail["error"]["class"] in DEFINITE_ABORTS:
        return "aborted"
    if "instant" in fail:
        return "committed" if fail["instant"] in completed else "aborted"
    return "indeterminate"


def commit_marks(timeline_dir: Path) -> dict[str, tuple[str, str]]:
    """Each completed instant (``<requested>_<completion>``) of a table's ``.hoodie/timeline`` folder whose
    commit metadata carries a writer's marks (:data:`engines.hudi_spark.writer.MARK`): (writer, batch); none
    when there is no such folder (no table was written)."""
    out: dict[str, tuple[str, str]] = {}
    for f in sorted(timeline_dir.glob("*_*.*")):  # a completed instant: <requested>_<completion>.<action>
        if f.suffix.lstrip(".") not in ("commit", "deltacommit", "replacecommit"):
            continue
        extra = decode_instant_metadata(f.read_bytes(), str(f)).get("extraMetadata") or {}
        if f"{MARK}writer" in extra:
            out[f.name.split(".")[0]] = (str(extra[f"{MARK}writer"]), str(extra.get(f"{MARK}batch")))
    return out


def with_failed_instants(events: list[dict[str, Any]],
                         marks: Mapping[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """``events`` with the ``instant`` of each failed write (not a clustering or compaction, which carry no
    marks) whose line records none, from the table's ``marks`` (:func:`commit_marks`): the completed
    instant carrying its writer and batch that no ok line acknowledged, or null when none completed (a
    history of a writer that did not record it)."""
    acked = {e.get("instant") for e in events if e.get("f") == "write" and e["type"] == "ok"}
    out = []
    for e in events:
        if (e.get("f") == "write" and e["type"] == "fail" and "instant" not in e
                and e["value"].get("op") not in ("cluster", "compact")):
            mine = sorted(i for i, m in marks.items() if m == (e["process"], str(e["value"]["batch"]))
                          and i not in acked)
            e = {**e, "instant": mine[-1] if mine else None}
        out.append(e)
    return out


def _pending(timeline: list[dict[str, str]]) -> list[dict[str, Any]]:
    """An instant with no completed file: its furthest state (``inflight`` over ``requested``)."""
    done = {i["requested"] for i in timeline if i["state"] == "completed"}
    state: dict[tuple[str, str], str] = {}
    for i in timeline:
        if i["requested"] not in done:
            key = (i["requested"], i["action"].removesuffix(".inflight"))
            state[key] = "inflight" if "inflight" in (i["state"], state.get(key)) else i["state"]
    return [{"kind": "pending-instant", "instant": r, "action": a, "state": s}
            for (r, a), s in sorted(state.items())]


def _check_rows(final: dict[str, Any], oks: list[dict[str, Any]], aborted: list[dict[str, Any]],
                unknown: list[dict[str, Any]], ordering: str) -> list[dict[str, Any]]:
    rows = final["value"]
    out: list[dict[str, Any]] = []
    counts = Counter((r[1], r[0]) for r in rows)
    out += [{"kind": "duplicate-key", "partition": p, "key": k, "copies": n}
            for (p, k), n in counts.items() if n > 1]
    # key -> (completion, value) of its last acked write; value None: that write deleted the key
    last: dict[tuple[str, str], tuple[str, int | None]] = {}

    def wrote(part: str, key: str, done: str, value: int | None) -> None:
        if (part, key) not in last or done > last[(part, key)][0]:
            last[(part, key)] = (done, value)

    completed: dict[tuple[str, str], str] = {}  # key -> the completion time of its last acked write
    for e in oks:
        done = str(e.get("instant") or "").partition("_")[2]
        op = e["value"].get("op")
        if op == "delete_partition":  # its rows name partitions, not writes
            continue
        for key, part, value in e["value"]["rows"]:
            completed[(part, key)] = max(completed.get((part, key), ""), done)
            wrote(part, key, f"{value:020d}" if ordering == "event-time" else done,
                  None if op == "delete" else value)
    # a replacing write deletes the keys of its partitions that it does not write and whose last write
    # completed before it (Hudi hides the file groups it replaced), whatever their ordering values
    for e in oks:
        op, rows_of = e["value"].get("op"), e["value"]["rows"]
        if op in ("insert_overwrite", "delete_partition"):
            done = str(e.get("instant") or "").partition("_")[2]
            own = set() if op == "delete_partition" else {(r[1], r[0]) for r in rows_of}
            parts = {r[1] for r in rows_of}
            for (part, key), at in sorted(completed.items()):
                if part in parts and (part, key) not in own and at < done:
                    last[(part, key)] = (done, None)
    aborted_values = {(r[1], r[0], r[2]) for e in aborted for r in e["value"]["rows"]}
    unknown_values = {(r[1], r[0], r[2]) for e in unknown for r in e["value"]["rows"]}
    for key, part, value, commit, _file in rows:
        want = last.get((part, key))
        if want is None or want[1] == value:
            continue
        kind = ("aborted-write-visible" if (part, key, value) in aborted_values
                else "indeterminate-write-visible" if (part, key, value) in unknown_values else "lost-update")
        out.append({"kind": kind, "partition": part, "key": key, "value": value, "commit": commit,
                    "expected": want[1]})
    present = {(r[1], r[0]) for r in rows}
    out += [{"kind": "lost-update", "partition": part, "key": key, "value": None, "commit": None,
             "expected": value}
            for (part, key), (_done, value) in sorted(last.items())
            if value is not None and (part, key) not in present]
    return out


def check_again(run_dir: Path, ordering: str) -> dict[str, Any]:
    """The checks of a hudi-writers run folder, judged again from its files (its history,
    ``timeline.json`` and, for failed writes whose lines record no instant, the commit metadata in
    ``table/.hoodie/timeline``) by this code: :func:`check_run`'s result."""
    from reports.load import load_writers_history, load_writers_timeline

    marks = commit_marks(run_dir / "table" / ".hoodie" / "timeline")
    events = with_failed_instants(load_writers_history(run_dir), marks)
    return check_run(events, load_writers_timeline(run_dir), ordering)


def main(argv: list[str] | None = None) -> int:
    """``python -m engines.hudi_spark.check RUN_DIR``: judge a hudi-writers run folder again
    (:func:`check_again`); print the checks as JSON; exit 0 (valid) or 1."""
    ap = argparse.ArgumentParser(prog="python -m engines.hudi_spark.check")
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--ordering", choices=ORDERINGS, default="completion")
    args = ap.parse_args(argv)
    checks = check_again(args.run_dir, args.ordering)
    json.dump(checks, sys.stdout, indent=2, sort_keys=True)
    print()
    return 0 if checks["valid"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Read points and the three-way comparison of the rows read there.

A read point is a query a reader can make of the final table: the latest snapshot, time travel as of
an instant time ``T``, or an incremental read of the completion-time range ``(start, end]``.  At each
point three readings of the table are compared, each a map ``record key -> value`` (a value names the
write that put the record there: the copy-on-write model's unique value, or an NBCC row's
``rid@commit``; a key in two file groups reads as its values joined by ``" | "``):

* **expected**: what a correct reader reads, from the history (the committed operations in completion
  order, the checkers' specification);
* **model**: what the model's own reader reads (the model's slicing under the run's variant and
  listing);
* **hudi-rs**: what hudi-rs 0.5.0 reads from the exported table.

``explained`` holds what a reader with a *known* behaviour of hudi-rs 0.5.0 reads there (its time
travel by request time, not completion time; its listing of storage where the run's readers list the
metadata table, which the simulated table does not write), so that a hudi-rs difference matching one of
them is named as that finding.

:func:`classify` names each key's outcome:

* ``agree``: all three read the same;
* ``hudi-rs: <behaviour>``: the model reader reads the expected rows and hudi-rs reads what that known
  behaviour of hudi-rs 0.5.0 reads (a finding about hudi-rs, known);
* ``hudi-rs differs``: the model reader reads the expected rows, hudi-rs something no known behaviour
  explains (a finding about hudi-rs 0.5.0, to investigate);
* ``model differs``: hudi-rs reads the expected rows, the model reader does not: either the Hudi
  (Java) behaviour the model reproduces and the checkers report as a violation, which hudi-rs does not
  share (issue #19774's hidden file group), or a bug in the model;
* ``both differ``: the model reader and hudi-rs read the same, not the expected rows (the checkers'
  violation, read alike by hudi-rs);
* ``all differ``: three different readings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

AGREE = "agree"
HUDI_RS_DIFFERS = "hudi-rs differs"
MODEL_DIFFERS = "model differs"
BOTH_DIFFER = "both differ"
ALL_DIFFER = "all differ"
KNOWN_PREFIX = "hudi-rs: "

REQUEST_TIME = "time travel by request time"
STORAGE_LISTING = "storage listing (the simulated table has no metadata table on disk)"
RANGE_ONLY = "incremental merge of the range's writes only"
LATE_WRITES = ("incremental merge of the range's writes requested after its start (a write requested before "
               "the start and completed in the range is lost)")
PENDING_COMPACTION = ("incremental merge of the range's writes, less those in logs late for a compaction "
                      "still pending at the range's end (their slice is keyed on that compaction)")

REPLACED_LATER = ("incremental reads hide a file group replaced after the range's end (the range's writes "
                  "into it are not read)")

MAX_AS_OF = 80  # time-travel points per run (evenly chosen when there are more)
MAX_WINDOWS = 80  # incremental ranges per run

Reading = Mapping[str, str]  # record key -> value


@dataclass(frozen=True)
class ReadPoint:
    """One query of the final table and the two readings the model gives for it."""

    id: str
    kind: str  # snapshot, as_of, incremental
    expected: Reading
    model: Reading
    as_of: str | None = None  # 17-digit instant (as_of)
    start: str | None = None  # incremental (start, end]
    end: str | None = None
    explained: Mapping[str, Reading] = field(default_factory=dict)


def classify(expected: str | None, model: str | None, hudi: str | None,
             explained: Mapping[str, str | None]) -> str:
    """The outcome of one key (see the module doc); ``explained``: behaviour -> what it reads."""
    if expected == model == hudi:
        return AGREE
    if model == expected:
        for name, value in explained.items():
            if value == hudi:
                return KNOWN_PREFIX + name
        return HUDI_RS_DIFFERS
    if hudi == expected:
        return MODEL_DIFFERS
    why = next((f" ({KNOWN_PREFIX}{name})" for name, value in explained.items() if value == hudi), "")
    if hudi == model:
        return BOTH_DIFFER
    return ALL_DIFFER + why


def compare_point(point: ReadPoint, hudi: Reading) -> dict[str, Any]:
    """The point's comparison: counts by outcome and every key that is not ``agree``."""
    keys = sorted(set(point.expected) | set(point.model) | set(hudi) |
                  {k for r in point.explained.values() for k in r})
    counts: dict[str, int] = {}
    differences = []
    for key in keys:
        e, m, h = point.expected.get(key), point.model.get(key), hudi.get(key)
        outcome = classify(e, m, h, {n: r.get(key) for n, r in point.explained.items()})
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome != AGREE:
            differences.append({"key": key, "outcome": outcome, "expected": e, "model": m, "hudi_rs": h})
    return {"point": point.id, "kind": point.kind, "keys": len(keys), "counts": counts,
            "differences": differences}


def reading(rows: Sequence[Mapping[str, Any]], key_of: Any, value_of: Any) -> dict[str, str]:
    """Rows as a reading: key -> value, values of one key in several rows joined (sorted) by ``" | "``."""
    out: dict[str, list[str]] = {}
    for r in rows:
        out.setdefault(str(key_of(r)), []).append(str(value_of(r)))
    return {k: " | ".join(sorted(v)) for k, v in out.items()}


def evenly(items: Sequence[Any], limit: int) -> list[Any]:
    """At most ``limit`` of ``items``, evenly spread, the first and the last always in."""
    if len(items) <= limit:
        return list(items)
    if limit <= 1:
        return list(items[-1:])
    step = (len(items) - 1) / (limit - 1)
    return [items[round(i * step)] for i in range(limit)]

"""NBCC workloads for Hudi's own Spark writers (merge-on-read, simple bucket index, ``protocol = "nbcc"``).

``overlap`` (:func:`overlap_plan`): every writer upserts the same keys ``rounds`` times at once; Hudi's
NBCC resolves no conflict (``HoodieWriteConfig#needResolveWriteConflict``, 1.2.0 HoodieWriteConfig.java:
2999-3015), so every write commits, and the snapshot read merges the logs by event time (the ordering
field ``ts``, which is the row's value: value ``1000 * round + writer`` orders rounds, then writers).

``overlap-pause``: ``overlap`` with the second writer stopped for 20 s on its first PUT of a log file
(mid-commit: its data written, its instant not completed) and resumed (:func:`pause_faults`).

``uncommitted-anchor`` (:func:`anchor_plan`, the catalogue's ``nbcc-uncommitted-anchor``, Hudi issue
#19774): ``w1`` commits a key of bucket 0 (so the timeline has a completed instant), then upserts a key of
bucket 1, a file group no write has touched yet, and is killed on its PUT of that group's log file
(:data:`ANCHOR_FAULT`: after the log is written, before its completed instant); ``w2`` then upserts the
same bucket-1 key and commits, and reads the table (storage listing, no metadata table). In Hudi 1.2.0
``HoodieFileGroup#getBaseInstantTime`` keys the group's first slice on w1's pending log, and
``isFileSliceCommitted`` hides the slice with w2's committed log in it (model/nbcc/filegroup.py).

``anchor-first`` (:func:`anchor_first_plan`, the control): the same without w1's first commit, so the
pending instant precedes every completed one; ``HoodieTimeline#containsOrBeforeTimelineStarts`` then calls
the slice committed and w2's row is read (the model's condition: an earlier completed instant).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engines.hudi_spark.launch import WriterFault

BUCKETS = 4
PARTITION = "p0"


def bucket_of(key: str, buckets: int) -> int:
    """Hudi's simple bucket of a record key (one key field): ``BucketIdentifier#getBucketId``, 1.2.0
    BucketIdentifier.java:32-42, ``(List.of(key).hashCode() & Integer.MAX_VALUE) % buckets``."""
    h = 0
    for c in key:  # String#hashCode (the keys here are ASCII: one UTF-16 unit per character)
        h = (31 * h + ord(c)) & 0xFFFFFFFF
    return ((31 + h) & 0x7FFFFFFF) % buckets  # List#hashCode of the one element, sign bit cleared


def key_in_bucket(bucket: int, buckets: int, skip: int = 0) -> str:
    """The ``skip``-th key ``k<j>`` Hudi puts in ``bucket``."""
    found = [f"k{j}" for j in range(64 * buckets) if bucket_of(f"k{j}", buckets) == bucket]
    return found[skip]


def file_id_prefix(bucket: int) -> str:
    """The file id NBCC gives every writer of ``bucket`` (``BucketIdentifier#newBucketFileIdForNBCC``,
    BucketIdentifier.java:95-104, without its ``-0`` write-token suffix)."""
    return f"{bucket:08d}-0000-0000-0000-000000000000"


def overlap_plan(writers: list[str], rounds: int, keys: int) -> dict[str, list[dict[str, Any]]]:
    """The first writer seeds keys ``k0..k<keys-1>`` (value 0; the table is created once: two writers
    creating it at once is not the workload), then every writer upserts them ``rounds`` times at once
    (value and ``ts`` ``1000 * round + writer``: the event-time order is round, then writer)."""
    def rows(v: int) -> list[dict[str, Any]]:
        return [{"key": f"k{j}", "partition": PARTITION, "value": v} for j in range(keys)]

    return {w: ([{"op": "upsert", "rows": rows(0)}] if n == 1 else [])
            + [{"op": "upsert", "rows": rows(1000 * r + n), "after_commits": 1} for r in range(1, rounds + 1)]
            for n, w in enumerate(writers, start=1)}


def anchor_plan(writers: list[str], rounds: int, keys: int) -> dict[str, list[dict[str, Any]]]:
    """The ``uncommitted-anchor`` batches (two writers; ``rounds`` and ``keys`` are not used)."""
    if len(writers) != 2:
        raise ValueError(f"writers={len(writers)}: the uncommitted-anchor workload has 2 writers")
    w1, w2 = writers
    seed, target = key_in_bucket(0, BUCKETS), key_in_bucket(1, BUCKETS)
    return {
        w1: [{"op": "upsert", "rows": [{"key": seed, "partition": PARTITION, "value": 1001}]},
             {"op": "upsert", "rows": [{"key": target, "partition": PARTITION, "value": 2001}],
              "after_commits": 1}],
        w2: [{"op": "upsert", "rows": [{"key": target, "partition": PARTITION, "value": 3002}],
              "after_commits": 1, "after_info": {"process": w1, "f": "kill"}}],
    }


def anchor_first_plan(writers: list[str], rounds: int, keys: int) -> dict[str, list[dict[str, Any]]]:
    """The ``uncommitted-anchor`` batches without w1's first commit (the control)."""
    plans = anchor_plan(writers, rounds, keys)
    w1, w2 = writers
    return {w1: [{k: v for k, v in plans[w1][1].items() if k != "after_commits"}],
            w2: [{k: v for k, v in plans[w2][0].items() if k != "after_commits"}]}


def anchor_faults(writers: list[str]) -> list[WriterFault]:
    """w1 killed on its first PUT of a log file of bucket 1's file group (a log file's name starts with a
    dot: ``.<fileId>_<instant>.log.<version>_<token>``, ``HoodieLogFile``; not its marker under
    ``.hoodie/.temp/<instant>/``, which has the log's name and a ``.marker.CREATE`` tail)."""
    log = rf"^(?!.*/\.hoodie/).*/{PARTITION}/\.{file_id_prefix(1)}[^/]*\.log\."
    return [WriterFault(writers[0], "kill", log)]


def pause_faults(writers: list[str]) -> list[WriterFault]:
    """The second writer paused for 20 s on its first PUT of a log file (not a marker under ``.hoodie``)."""
    return [WriterFault(writers[1], "pause", rf"^(?!.*/\.hoodie/).*/{PARTITION}/\.[^/]*\.log\.",
                        resume_after_s=20.0)]


def no_faults(writers: list[str]) -> list[WriterFault]:
    """No writer fault."""
    return []


Plans = Callable[[list[str], int, int], dict[str, list[dict[str, Any]]]]
# workload -> (its plans, its writer faults); the first is the default
WORKLOADS: dict[str, tuple[Plans, Callable[[list[str]], list[WriterFault]]]] = {
    "overlap": (overlap_plan, no_faults), "uncommitted-anchor": (anchor_plan, anchor_faults),
    "anchor-first": (anchor_first_plan, anchor_faults), "overlap-pause": (overlap_plan, pause_faults)}

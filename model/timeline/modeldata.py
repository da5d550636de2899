"""The model data both commit writers leave in their files, and what the checkers and reports read back.

A completed commit carries Hudi's commit metadata (Avro in v8, JSON in v6) with the operation's model
data in ``extraMetadata`` (``hcc.*`` entries): ``hcc.fg`` (the file group it wrote: an integer for the
specification's writer, ``<partition>/<fileId>`` for Hudi's), ``hcc.slice`` (the base file's path in
the table), ``hcc.merge`` (the instant whose base file it merged, or empty) and ``hcc.aux`` (the
operation's key, kind and value: the specification's auxiliary ``aux_kv_log``).  A base file's body is
the slice as JSON: ``{fg, time, salt, entries}``.  The checkers read both from the store's record of
each write, which is why v8 commit metadata is written text-safe
(:func:`model.timeline.metadata.encode_commit_metadata`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from model.timeline.metadata import (
    TableSpec,
    commit_metadata,
    decode_instant_metadata,
    encode_commit_metadata,
)

FgId = int | str  # a file group: the specification's number, or Hudi's "<partition>/<fileId>"


def table_spec(layout: str, partition_field: str = "fg") -> TableSpec:
    """The simulated COPY_ON_WRITE table of a timeline run (version 8 for layout v8, 6 for v6)."""
    return TableSpec(
        "timeline_sim",
        "COPY_ON_WRITE",
        8 if layout == "v8" else 6,
        record_key="key",
        partition_field=partition_field,
        fields=(("key", "string"), ("value", "string"), (partition_field, "string")),
    )


def instant_body(text: str) -> dict[str, Any]:
    """The operation's model data in an instant file recorded as text (see :func:`model_body`)."""
    return model_body(decode_instant_metadata(text.encode(), "instant"))


def _fg(text: str) -> FgId:
    return int(text) if text.isdigit() else text


def model_body(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The operation's model data in decoded commit metadata: ``{fg, slice, merge, aux}`` from its
    ``hcc.*`` extra metadata (a replacecommit's also ``replaced``: the ``<partition>/<fileId>`` of its
    ``partitionToReplaceFileIds``), or ``{}``
    (pending instants, the ``times`` workload, empty commits)."""
    extra = metadata.get("extraMetadata") or {}
    if "hcc.fg" not in extra:
        return {}
    body = {
        "fg": _fg(extra["hcc.fg"]),
        "slice": extra["hcc.slice"],
        "merge": extra["hcc.merge"] or None,
        "aux": json.loads(extra["hcc.aux"]),
    }
    replaced = replaced_file_groups(metadata)
    if replaced:
        body["replaced"] = sorted(f"{p}/{f}" for p, f in replaced)
    return body


def write_stat(partition: str, file_id: str, path: str, prev_commit: str | None, entries: int,
               kind: str) -> dict[str, Any]:
    """One HoodieWriteStat of a base file written by a commit."""
    return {
        "fileId": file_id,
        "path": path,
        "prevCommit": prev_commit or "null",
        "partitionPath": partition,
        "numWrites": entries,
        "numInserts": 1 if kind == "insert" else 0,
        "numUpdateWrites": 1 if kind == "update" else 0,
        "numDeletes": 1 if kind == "delete" else 0,
    }


def commit_body(layout: str, spec: TableSpec, stats: Mapping[str, list[dict[str, Any]]],
                model: Mapping[str, Any] | None, operation: str = "UPSERT",
                replaced: Mapping[str, list[str]] | None = None) -> bytes:
    """A completed commit's metadata: its write stats, the schema, and the model data (``hcc.*``).

    ``model`` is ``{fg, slice, merge, aux}`` (None: a commit without model data, e.g. the ``times``
    workload or an empty commit); a clustering's ``aux`` is None (it changes no value).  ``operation`` is
    the WriteOperationType; ``replaced``: a replacecommit's ``partitionToReplaceFileIds``.
    """
    extra = {"schema": spec.record_schema()}
    if model:
        extra |= {
            "hcc.fg": str(model["fg"]),
            "hcc.slice": model["slice"],
            "hcc.merge": model["merge"] or "",
            "hcc.aux": json.dumps(model["aux"], separators=(",", ":"), sort_keys=True),
        }
    md = commit_metadata(stats, operation, extra, replaced=replaced)
    return encode_commit_metadata(layout, md, text_safe=True)


def mutated_file_groups(metadata: Mapping[str, Any]) -> set[tuple[str, str]]:
    """``ConcurrentOperation#getMutatedPartitionAndFileIds`` of a commit: its (partition, fileId) pairs."""
    out: set[tuple[str, str]] = set()
    for partition, stats in (metadata.get("partitionToWriteStats") or {}).items():
        for stat in stats or ():
            if stat.get("fileId"):
                out.add((str(stat.get("partitionPath") or partition), str(stat["fileId"])))
    return out


def replaced_file_groups(metadata: Mapping[str, Any]) -> set[tuple[str, str]]:
    """A replacecommit's ``partitionToReplaceFileIds`` flattened
    (``CommitUtils#flattenPartitionToReplaceFileIds``): the (partition, fileId) pairs it replaced (empty
    for any other commit)."""
    return {(str(p), str(f)) for p, ids in (metadata.get("partitionToReplaceFileIds") or {}).items()
            for f in ids or ()}

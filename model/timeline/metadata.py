"""What Hudi writes inside a table's small files: properties, partition metadata, instant metadata.

* ``.hoodie/hoodie.properties`` (:func:`properties_text`): a Java properties file;
* ``<partition>/.hoodie_partition_metadata`` (:func:`partition_metadata_text`): the partition's
  first commit and depth, also a properties file;
* instant metadata (:func:`encode_commit_metadata`, :func:`encode_compaction_plan`,
  :func:`decode_instant_metadata`): in timeline layout 1 (table version 6) commit metadata is
  JSON; in layout 2 (table version 8+) every instant's metadata is an Avro object container
  (``org.apache.hudi.avro.model.HoodieCommitMetadata``, ``HoodieCompactionPlan``), which is what
  readers such as hudi-rs insist on.  Requested and inflight commit files may be empty.

The Avro schemas here are the subsets of Hudi 1.x's schemas (same names, namespace, field names
and types, every field optional) that the simulation fills in; Avro readers resolve missing fields
to their defaults.  Readers need the table's record schema from the latest commit
(``extraMetadata["schema"]``, a JSON Avro schema) to open a table, so every commit carries it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from model.timeline.avro import is_avro_container, is_text, read_container, text_safe_length, write_container
from model.timeline.layout import TIMEZONE, format_instant

_NS = "org.apache.hudi.avro.model"


def _opt(name: str, kind: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", kind], "default": None}


_STRING = {"type": "string", "avro.java.string": "String"}

WRITE_STAT_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieWriteStat",
    "fields": [
        _opt("fileId", _STRING),
        _opt("path", _STRING),
        _opt("prevCommit", _STRING),
        _opt("numWrites", "long"),
        _opt("numDeletes", "long"),
        _opt("numUpdateWrites", "long"),
        _opt("totalWriteBytes", "long"),
        _opt("totalWriteErrors", "long"),
        _opt("partitionPath", _STRING),
        _opt("numInserts", "long"),
        _opt("fileSizeInBytes", "long"),
        _opt("logVersion", "int"),
        _opt("baseFile", _STRING),
        _opt("logFiles", {"type": "array", "items": _STRING}),
        _opt("prevBaseFile", _STRING),
        _opt("totalLogFilesCompacted", "long"),
    ],
}

COMMIT_METADATA_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieCommitMetadata",
    "namespace": _NS,
    "fields": [
        _opt(
            "partitionToWriteStats", {"type": "map", "values": {"type": "array", "items": WRITE_STAT_SCHEMA}}
        ),
        _opt("partitionToReplaceFileIds", {"type": "map", "values": {"type": "array", "items": _STRING}}),
        _opt("compacted", "boolean"),
        _opt("extraMetadata", {"type": "map", "values": _STRING}),
        {"name": "version", "type": ["int", "null"], "default": 1},
        _opt("operationType", _STRING),
    ],
}

COMPACTION_PLAN_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieCompactionPlan",
    "namespace": _NS,
    "fields": [
        _opt(
            "operations",
            {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "HoodieCompactionOperation",
                    "fields": [
                        {"name": "baseInstantTime", "type": ["null", _STRING]},
                        _opt("deltaFilePaths", {"type": "array", "items": _STRING}),
                        _opt("dataFilePath", _STRING),
                        {"name": "fileId", "type": ["null", _STRING]},
                        _opt("partitionPath", _STRING),
                        _opt("metrics", {"type": "map", "values": "double"}),
                    ],
                },
            },
        ),
        _opt("extraMetadata", {"type": "map", "values": _STRING}),
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}


ROLLBACK_METADATA_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieRollbackMetadata",
    "namespace": _NS,
    "fields": [
        _opt("startRollbackTime", _STRING),
        _opt("timeTakenInMillis", "long"),
        _opt("totalFilesDeleted", "int"),
        _opt("commitsRollback", {"type": "array", "items": _STRING}),
        _opt(
            "partitionMetadata",
            {
                "type": "map",
                "values": {
                    "type": "record",
                    "name": "HoodieRollbackPartitionMetadata",
                    "fields": [
                        _opt("partitionPath", _STRING),
                        _opt("successDeleteFiles", {"type": "array", "items": _STRING}),
                        _opt("failedDeleteFiles", {"type": "array", "items": _STRING}),
                    ],
                },
            },
        ),
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}


# HoodieRequestedReplaceMetadata (a clustering's ``.clustering.requested`` file): the plan's input groups,
# each the file slices it rewrites (HoodieClusteringPlan / HoodieClusteringGroup / HoodieSliceInfo).
REQUESTED_REPLACE_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieRequestedReplaceMetadata",
    "namespace": _NS,
    "fields": [
        _opt("operationType", _STRING),
        _opt("clusteringPlan", {
            "type": "record",
            "name": "HoodieClusteringPlan",
            "fields": [
                _opt("inputGroups", {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "HoodieClusteringGroup",
                        "fields": [
                            _opt("slices", {
                                "type": "array",
                                "items": {
                                    "type": "record",
                                    "name": "HoodieSliceInfo",
                                    "fields": [
                                        _opt("dataFilePath", _STRING),
                                        _opt("fileId", _STRING),
                                        _opt("partitionPath", _STRING),
                                    ],
                                },
                            }),
                            _opt("numOutputFileGroups", "int"),
                        ],
                    },
                }),
                _opt("extraMetadata", {"type": "map", "values": _STRING}),
                {"name": "version", "type": ["int", "null"], "default": 1},
            ],
        }),
        _opt("extraMetadata", {"type": "map", "values": _STRING}),
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}


@dataclass(frozen=True)
class TableSpec:
    """What ``hoodie.properties`` says about a simulated table.

    ``fields`` are the record's data fields (name, Avro type) without Hudi's meta columns; the
    partition field and the record key must be among them (readers check the partition field).
    """

    name: str
    table_type: str  # COPY_ON_WRITE or MERGE_ON_READ
    table_version: int
    record_key: str
    partition_field: str
    fields: tuple[tuple[str, str], ...]
    ordering_field: str = ""
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def layout(self) -> str:
        """The timeline layout of this table version."""
        return "v8" if self.table_version >= 8 else "v6"

    def record_schema(self) -> str:
        """The record's Avro schema as JSON text (what commits carry in ``extraMetadata["schema"]``)."""
        return record_schema_json(self.name, self.fields)


def record_schema_json(name: str, fields: Sequence[tuple[str, str]]) -> str:
    """The Avro record schema of table ``name`` (every field nullable, no meta columns), compact JSON: what
    commits carry in ``extraMetadata["schema"]``."""
    schema = {
        "type": "record",
        "name": f"{name}_record",
        "namespace": f"hoodie.{name}",
        "fields": [{"name": n, "type": ["null", t], "default": None} for n, t in fields],
    }
    return json.dumps(schema, separators=(",", ":"))


def properties_text(spec: TableSpec) -> str:
    """``hoodie.properties`` of ``spec`` (keys sorted, as Hudi's ``storeProperties`` sorts them)."""
    props = {
        "hoodie.table.name": spec.name,
        "hoodie.table.type": spec.table_type,
        "hoodie.table.version": str(spec.table_version),
        "hoodie.table.initial.version": str(spec.table_version),
        "hoodie.timeline.layout.version": "2" if spec.layout == "v8" else "1",
        "hoodie.table.recordkey.fields": spec.record_key,
        "hoodie.table.partition.fields": spec.partition_field,
        "hoodie.datasource.write.hive_style_partitioning": "false",
        "hoodie.table.timeline.timezone": TIMEZONE,
        "hoodie.table.base.file.format": "PARQUET",
        "hoodie.populate.meta.fields": "true",
        "hoodie.table.create.schema": spec.record_schema(),
        **({"hoodie.table.precombine.field": spec.ordering_field} if spec.ordering_field else {}),
        **(
            {"hoodie.timeline.path": "timeline", "hoodie.timeline.history.path": "history"}
            if spec.layout == "v8"
            else {"hoodie.archivelog.folder": "archived"}
        ),
        **spec.extra,
    }
    return "".join(f"{k}={_escape(v)}\n" for k, v in sorted(props.items()))


def _escape(value: str) -> str:
    """Java properties escaping of a value (``:`` and ``=`` as Hudi's writer escapes them)."""
    return value.replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")


def partition_metadata_text(first_commit: int, depth: int = 1) -> str:
    """A partition's ``.hoodie_partition_metadata`` (``HoodiePartitionMetadata``, text format)."""
    return f"#partition metadata\ncommitTime={format_instant(first_commit)}\npartitionDepth={depth}\n"


# ---- instant metadata -----------------------------------------------------------------------

PAD_KEY = "hcc.pad"  # extraMetadata entry of spaces that makes a text-safe Avro file (see avro.py)


def commit_metadata(
    stats: Mapping[str, Sequence[Mapping[str, Any]]],
    operation: str,
    extra: Mapping[str, str],
    compacted: bool = False,
    replaced: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """A HoodieCommitMetadata value: write stats by partition, the operation, extra metadata; ``replaced``:
    a replacecommit's ``partitionToReplaceFileIds`` (HoodieReplaceCommitMetadata)."""
    return {
        "partitionToWriteStats": {p: [dict(s) for s in ss] for p, ss in stats.items()},
        "partitionToReplaceFileIds": {p: list(ids) for p, ids in (replaced or {}).items()},
        "compacted": compacted,
        "extraMetadata": dict(extra),
        "version": 1,
        "operationType": operation,
    }


def encode_commit_metadata(layout: str, metadata: Mapping[str, Any], text_safe: bool = False) -> bytes:
    """Commit metadata as Hudi stores it in ``layout``: JSON (v6) or an Avro container (v8).

    With ``text_safe`` the v8 container is made valid UTF-8 (padding ``extraMetadata`` with a
    :data:`PAD_KEY` entry); ValueError when the content makes that impossible (a long path).
    """
    md = dict(metadata)
    if layout == "v6":
        return json.dumps(md, indent=2, sort_keys=True).encode()
    if not text_safe:
        return write_container(COMMIT_METADATA_SCHEMA, [md])
    return _text_safe_container(COMMIT_METADATA_SCHEMA, md)


def _text_safe_container(schema: Mapping[str, Any], md: Mapping[str, Any]) -> bytes:
    """An Avro container of ``md`` made valid UTF-8 by padding its ``extraMetadata`` (a :data:`PAD_KEY`
    entry; a ``schema`` entry padded to a text-safe length); ValueError when that is impossible."""
    extra = {k: _pad_json(v) if k == "schema" else v for k, v in (md.get("extraMetadata") or {}).items()}
    for pad in range(64):
        data = write_container(schema, [{**md, "extraMetadata": {**extra, PAD_KEY: " " * pad}}])
        if is_text(data):
            return data
    raise ValueError("commit metadata cannot be written as text-safe Avro (a string of 64+ bytes?)")


def clustering_plan(slices: Sequence[tuple[str, str, str]]) -> dict[str, Any]:
    """A HoodieRequestedReplaceMetadata of a clustering: one input group of ``slices`` (partition, file id,
    base file path), rewritten into one output file group (``operationType`` CLUSTER)."""
    infos = [{"dataFilePath": path, "fileId": fid, "partitionPath": p} for p, fid, path in slices]
    plan = {"inputGroups": [{"slices": infos, "numOutputFileGroups": 1}], "extraMetadata": {}, "version": 1}
    return {"operationType": "CLUSTER", "clusteringPlan": plan, "extraMetadata": {}, "version": 1}


def encode_clustering_plan(plan: Mapping[str, Any]) -> bytes:
    """A clustering's requested metadata as Hudi 1.x stores it: an Avro container (text-safe, so that a
    history can carry it)."""
    return _text_safe_container(REQUESTED_REPLACE_SCHEMA, plan)


def plan_file_groups(metadata: Mapping[str, Any]) -> set[tuple[str, str]]:
    """``ConcurrentOperation#getPartitionAndFileIdsFromRequestedReplaceMetadata``: the (partition, fileId)
    of every slice of a clustering plan's input groups (empty for a requested insert_overwrite, whose
    requested file has no plan)."""
    plan = metadata.get("clusteringPlan") or {}
    return {(str(s["partitionPath"]), str(s["fileId"]))
            for g in plan.get("inputGroups") or () for s in g.get("slices") or ()}


def plan_slices(metadata: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The (partition, file id, base file path) of every slice a clustering plan rewrites, in plan order."""
    plan = metadata.get("clusteringPlan") or {}
    return [(str(s["partitionPath"]), str(s["fileId"]), str(s["dataFilePath"]))
            for g in plan.get("inputGroups") or () for s in g.get("slices") or ()]


def _pad_json(text: str) -> str:
    return text + " " * (text_safe_length(len(text.encode())) - len(text.encode()))


def compaction_plan(operations: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A HoodieCompactionPlan value (``version`` 2, as Hudi 1.x writes it)."""
    return {"operations": [dict(op) for op in operations], "extraMetadata": {}, "version": 2}


def encode_compaction_plan(plan: Mapping[str, Any]) -> bytes:
    """A compaction plan as Hudi stores it (an Avro container, in both layouts)."""
    return write_container(COMPACTION_PLAN_SCHEMA, [dict(plan)])


def encode_rollback_metadata(rollback: int, rolled_back: int, deleted: Mapping[str, Sequence[str]]) -> bytes:
    """A completed rollback's HoodieRollbackMetadata (an Avro container in both layouts): the instant it
    rolled back and the files it deleted, by partition."""
    md = {
        "startRollbackTime": format_instant(rollback),
        "timeTakenInMillis": 0,
        "totalFilesDeleted": sum(len(v) for v in deleted.values()),
        "commitsRollback": [format_instant(rolled_back)],
        "partitionMetadata": {
            p: {"partitionPath": p, "successDeleteFiles": list(files), "failedDeleteFiles": []}
            for p, files in sorted(deleted.items())
        },
        "version": 1,
    }
    return write_container(ROLLBACK_METADATA_SCHEMA, [md])


def decode_instant_metadata(data: bytes, path: str) -> dict[str, Any]:
    """Decode an instant file's content: JSON (v6 commits) or Avro (v8+, and v6 plans/rollbacks).
    Empty files decode to ``{}``; anything else raises ValueError naming ``path``."""
    if not data.strip():
        return {}
    try:
        if is_avro_container(data):
            records = read_container(data)
            if not records or not isinstance(records[0], dict):
                return {}
            return dict(records[0])
        value = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: unreadable instant metadata: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: instant metadata is not an object")
    return value

"""What exporting a table in Hudi's encoding needs whatever its type: the table's properties and schema,
its instants, commit metadata with write stats (:mod:`model.hudi_files.export` drives it,
:mod:`model.hudi_files.export_cow` and :mod:`model.hudi_files.export_mor` encode the data files)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from model.hudi_files.schema import data_fields
from model.hudi_files.table_properties import reader_properties, render_properties
from model.hudi_files.write_stats import commit_metadata, encode_full_commit_metadata
from model.timeline.layout import Instant, parse_instant_name
from model.timeline.metadata import record_schema_json

PROPERTIES = ".hoodie/hoodie.properties"
PAD_KEY = "hcc.pad"  # the model's text-safe padding entry (model/timeline/metadata.py), dropped on export
HUDI_ENCODING = "hudi"

TableFiles = Mapping[str, bytes]  # path relative to the table's base path -> bytes


@dataclass(frozen=True)
class ExportedTable:
    """A table's files after export, and what was encoded.

    ``files`` holds every file of the table (relative path -> bytes); ``counts`` the files re-encoded by
    kind (``base_files``, ``log_files``, ``commits``) and ``sizes`` the size of every encoded data file."""

    files: dict[str, bytes]
    encoding: str
    counts: dict[str, int] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class TableInfo:
    """What ``hoodie.properties`` says that the encoders need."""

    properties: dict[str, str]
    name: str
    table_type: str
    table_version: int
    record_key: str
    partition_field: str
    ordering_field: str
    fields: tuple[tuple[str, Any], ...]  # data fields (name, Avro type), no meta columns

    @property
    def layout(self) -> str:
        """The timeline layout (``v8`` for table versions 8 and 9, ``v6`` below)."""
        return "v8" if self.table_version >= 8 else "v6"

    @property
    def timeline_dir(self) -> str:
        """The folder of instant files, relative to the base path."""
        if self.layout == "v6":
            return ".hoodie"
        return ".hoodie/" + self.properties.get("hoodie.timeline.path", "timeline")

    @property
    def commit_schema_json(self) -> str:
        """The record schema without meta columns, compact JSON (``extraMetadata["schema"]``)."""
        return record_schema_json(self.name, self.fields)


def table_info(files: TableFiles) -> TableInfo:
    """The table's properties and schema; ValueError names ``hoodie.properties`` and what is missing."""
    from model.nbcc.timeline_reader import parse_properties  # the one Java-properties parser

    if PROPERTIES not in files:
        raise ValueError(f"{PROPERTIES}: missing, not a Hudi table")
    props = parse_properties(files[PROPERTIES].decode("utf-8"))
    try:
        schema = json.loads(props["hoodie.table.create.schema"])
        fields = tuple((n, t) for n, t in data_fields(schema))
        version = int(props["hoodie.table.version"])
    except (KeyError, ValueError) as exc:
        raise ValueError(f"{PROPERTIES}: no readable table schema or version ({exc})") from None
    return TableInfo(
        props,
        props.get("hoodie.table.name", "table"),
        props.get("hoodie.table.type", "COPY_ON_WRITE"),
        version,
        props.get("hoodie.table.recordkey.fields", ""),
        props.get("hoodie.table.partition.fields", ""),
        props.get("hoodie.table.precombine.field", props.get("hoodie.table.ordering.fields", "")),
        fields,
    )


def properties_with_readers(info: TableInfo) -> bytes:
    """``hoodie.properties`` with :func:`reader_properties` merged in (existing entries kept unless a
    reader entry replaces them)."""
    extra = reader_properties(info.name, info.table_version, info.record_key, info.partition_field,
                              info.ordering_field)
    return render_properties({**info.properties, **extra}).encode()


def instants(files: TableFiles, info: TableInfo) -> list[tuple[str, Instant]]:
    """Every instant file directly in the timeline folder: (path, instant)."""
    folder = info.timeline_dir + "/"
    out = []
    for path in sorted(files):
        if not path.startswith(folder) or "/" in path[len(folder):]:
            continue
        inst = parse_instant_name(path[len(folder):], info.layout)
        if inst is not None:
            out.append((path, inst))
    return out


def model_extra(metadata: Mapping[str, Any]) -> dict[str, str]:
    """The model's extra metadata to keep (``hcc.*``, the schema unpadded), without its padding."""
    extra = dict(metadata.get("extraMetadata") or {})
    extra.pop(PAD_KEY, None)
    return {k: str(v).rstrip(" ") if k == "schema" else str(v) for k, v in extra.items()}


def encode_commit(info: TableInfo, stats: list[dict[str, Any]], operation: str,
                  extra: Mapping[str, str], compacted: bool = False) -> bytes:
    """A completed commit's metadata with full write stats: Avro (table version 8+) or JSON (6)."""
    schema = extra.get("schema") or info.commit_schema_json
    rest = {k: v for k, v in extra.items() if k != "schema"}
    md = commit_metadata(stats, operation, schema, compacted=compacted, extra=rest)
    if info.layout == "v6":
        return json.dumps(md, indent=2, sort_keys=True).encode()
    return encode_full_commit_metadata(md)

"""The Avro schemas Hudi 1.x writes for a table's records, and Hudi's meta columns.

A table is described by its data fields (name, Avro type) without meta columns.  Hudi writes three
spellings of the same schema, all as compact JSON (``Schema.toString()``):

* the **writer schema** (:func:`writer_schema`) in a log block's ``SCHEMA`` header and a base file's
  ``parquet.avro.schema`` footer: the five meta columns, each ``["null","string"]`` with
  ``"doc":""`` and ``"default":null``, then every data field as ``["null", T]`` with
  ``"default":null``;
* the **commit schema** (:func:`commit_schema`), in ``extraMetadata["schema"]`` of every commit:
  the same without the meta columns;
* the **create schema** (:func:`create_schema`), ``hoodie.table.create.schema``: Spark's nullable
  spelling ``[T, "null"]`` with no default.

Record name and namespace are ``<table>_record`` and ``hoodie.<table>``, as Spark SQL names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"
META_COLUMNS = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)

Fields = Sequence[tuple[str, Any]]


def _record(table: str, fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "record", "name": f"{table}_record", "namespace": f"hoodie.{table}", "fields": fields}


def commit_schema(table: str, fields: Fields) -> dict[str, Any]:
    """The record schema without meta columns (commit metadata ``extraMetadata["schema"]``)."""
    return _record(table, [{"name": n, "type": ["null", t], "default": None} for n, t in fields])


def writer_schema(table: str, fields: Fields) -> dict[str, Any]:
    """The record schema with the five meta columns first (log ``SCHEMA`` header, base files)."""
    meta = [{"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in META_COLUMNS]
    return _record(table, meta + [{"name": n, "type": ["null", t], "default": None} for n, t in fields])


def create_schema(table: str, fields: Fields) -> dict[str, Any]:
    """``hoodie.table.create.schema`` as Spark SQL writes it (``[T, "null"]``, no defaults)."""
    return _record(table, [{"name": n, "type": [t, "null"]} for n, t in fields])


def data_fields(schema: dict[str, Any]) -> list[tuple[str, Any]]:
    """The (name, non-null type) of every field of a record schema, meta columns included; a
    field's type is its union's non-null branch."""
    out: list[tuple[str, Any]] = []
    for f in schema["fields"]:
        kind = f["type"]
        if isinstance(kind, list):
            branches = [b for b in kind if b != "null"]
            if len(branches) != 1:
                raise ValueError(f"field {f['name']!r}: only [null, T] unions are supported, got {kind!r}")
            kind = branches[0]
        out.append((str(f["name"]), kind))
    return out


def meta_values(
    commit_time: str, seqno: str, record_key: str, partition_path: str, file_name: str
) -> dict[str, str]:
    """The meta columns of one record.  Hudi fills ``_hoodie_commit_seqno`` with
    ``<commit>_<task partition>_<record index>`` and ``_hoodie_file_name`` with the base file's
    name in a base file but with the file id in a log block."""
    return {
        COMMIT_TIME: commit_time,
        COMMIT_SEQNO: seqno,
        RECORD_KEY: record_key,
        PARTITION_PATH: partition_path,
        FILE_NAME: file_name,
    }

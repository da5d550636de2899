"""``hoodie.properties`` entries a reader needs beyond those of
:func:`model.timeline.metadata.properties_text`, as a proposal for its owner.

``properties_text`` already writes the table name, type, version, initial version, timeline
layout and paths, record key, partition field, hive-style flag, time zone, base file format
(PARQUET), ``populate.meta.fields``, the create schema and the precombine field.  Compared with
the real v8/v9 tables, a reader (Hudi's Java ``HoodieTableConfig``, or hudi-rs) also uses:

* ``hoodie.table.ordering.fields`` (table version 9 renames the precombine field to it; v8 keeps
  ``hoodie.table.precombine.field``) and ``hoodie.record.merge.mode`` (``EVENT_TIME_ORDERING``
  with an ordering field, else ``COMMIT_TIME_ORDERING``), plus for v8 the merge strategy id that
  goes with the mode;
* ``hoodie.table.keygenerator.type`` (``SIMPLE`` for one record key and one partition field,
  ``COMPLEX`` for several, ``NON_PARTITIONED`` for none);
* ``hoodie.datasource.write.partitionpath.urlencode`` and
  ``hoodie.datasource.write.drop.partition.columns`` (both ``false``);
* ``hoodie.database.name`` and ``hoodie.table.checksum``: Java validates the checksum when it
  loads the file; it is the CRC32 of ``<database>.<table>`` (of the table name alone without a
  database), which matches both real tables' values;
* ``hoodie.table.format = native`` (table version 9).

:func:`reader_properties` returns these; merged into ``TableSpec.extra`` they override nothing
that ``properties_text`` writes except where noted above.
"""

from __future__ import annotations

import zlib

EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
# HoodieRecordMerger.EVENT_TIME_BASED_MERGE_STRATEGY_UUID / COMMIT_TIME_BASED_MERGE_STRATEGY_UUID
MERGE_STRATEGY_IDS = {
    EVENT_TIME_ORDERING: "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
    COMMIT_TIME_ORDERING: "ce9acb64-bde0-424c-9b91-f6ebba25356d",
}


def render_properties(props: dict[str, str]) -> str:
    """``hoodie.properties`` text of ``props``: keys sorted, values escaped as Hudi's writer escapes
    them (``\\``, ``:`` and ``=``), as :func:`model.timeline.metadata.properties_text` writes them."""

    def escape(value: str) -> str:
        return value.replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")

    return "".join(f"{k}={escape(v)}\n" for k, v in sorted(props.items()))


def table_checksum(table_name: str, database: str = "") -> int:
    """``hoodie.table.checksum``: CRC32 of ``<database>.<table>`` (the table name alone when no
    database is set), as ``HoodieTableConfig.generateChecksum`` computes it."""
    text = f"{database}.{table_name}" if database else table_name
    return zlib.crc32(text.encode("utf-8"))


def key_generator_type(record_keys: str, partition_fields: str) -> str:
    """The key generator a Spark SQL table of these fields gets."""
    if not partition_fields:
        return "NON_PARTITIONED"
    if "," in record_keys or "," in partition_fields:
        return "COMPLEX"
    return "SIMPLE"


def reader_properties(
    table_name: str,
    table_version: int,
    record_keys: str,
    partition_fields: str,
    ordering_field: str = "",
    database: str = "default",
) -> dict[str, str]:
    """The ``hoodie.properties`` entries to add to ``properties_text``'s (see the module doc)."""
    mode = EVENT_TIME_ORDERING if ordering_field else COMMIT_TIME_ORDERING
    props = {
        "hoodie.table.keygenerator.type": key_generator_type(record_keys, partition_fields),
        "hoodie.record.merge.mode": mode,
        "hoodie.datasource.write.partitionpath.urlencode": "false",
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.table.checksum": str(table_checksum(table_name, database)),
    }
    if database:
        props["hoodie.database.name"] = database
    if table_version >= 9:
        props["hoodie.table.format"] = "native"
        if ordering_field:
            props["hoodie.table.ordering.fields"] = ordering_field
    else:
        props["hoodie.record.merge.strategy.id"] = MERGE_STRATEGY_IDS[mode]
    return props

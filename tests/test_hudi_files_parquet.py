"""Parquet base files (model/hudi_files/parquet_files.py): written as Hudi's Avro writer writes
them, read back to the same rows; real base files read; bad bytes named."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pyarrow", reason="pyarrow (the oracle extra) is not installed")

from model.hudi_files import HudiFileError  # noqa: E402
from model.hudi_files.parquet_files import read_base_file, write_base_file  # noqa: E402
from model.hudi_files.schema import META_COLUMNS, meta_values, writer_schema  # noqa: E402

DATA = Path(os.environ.get("HCC_HUDI_TABLES", Path(__file__).resolve().parents[2] / "shared" / "hudi-tables"))
if not DATA.is_dir() and "HCC_HUDI_TABLES" not in os.environ:
    DATA = Path("/work/shared/hudi-tables")
TRIPS = DATA / "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"
real = pytest.mark.skipif(not TRIPS.exists(), reason=f"real Hudi tables not found at {DATA}")

TS = {"type": "long", "logicalType": "timestamp-micros"}
DAY = {"type": "int", "logicalType": "date"}
FIELDS = (
    ("key", "string"),
    ("ts", "long"),
    ("n", "int"),
    ("amount", "double"),
    ("ratio", "float"),
    ("flag", "boolean"),
    ("blob", "bytes"),
    ("at", TS),
    ("day", DAY),
    ("part", "string"),
)
SCHEMA = writer_schema("t", FIELDS)
NAME = "fg-0_0-1-1_20250101000000000.parquet"


def _row(i: int) -> dict[str, Any]:
    return {
        **meta_values("20250101000000000", f"20250101000000000_0_{i}", f"k{i}", "p0", NAME),
        "key": f"k{i}",
        "ts": i,
        "n": -i,
        "amount": i / 3,
        "ratio": 0.5,
        "flag": i % 2 == 0,
        "blob": bytes([i]),
        "at": 1_700_000_000_000_000 + i,
        "day": 19_000 + i,
        "part": "p0",
    }


def test_base_file_has_hudis_columns_and_footer() -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = write_base_file(SCHEMA, [_row(2), _row(1)])
    pf = pq.ParquetFile(pa.BufferReader(data))
    names = pf.schema_arrow.names
    assert tuple(names[:5]) == META_COLUMNS and names[5:] == [n for n, _ in FIELDS]
    assert all(f.nullable for f in pf.schema_arrow)
    assert pf.schema_arrow.field("at").type == pa.timestamp("us", tz="UTC")
    assert pf.schema_arrow.field("day").type == pa.date32()
    meta = {k.decode(): v.decode() for k, v in pf.schema_arrow.metadata.items()}
    assert json.loads(meta["parquet.avro.schema"]) == SCHEMA
    assert meta["writer.model.name"] == "avro"
    assert (meta["hoodie_min_record_key"], meta["hoodie_max_record_key"]) == ("k1", "k2")
    assert pf.metadata.row_group(0).column(0).compression == "GZIP"
    assert write_base_file(SCHEMA, [_row(2), _row(1)]) == data  # deterministic


def test_base_file_reads_back_to_the_rows_written() -> None:
    rows = [_row(i) for i in range(5)]
    meta, back = read_base_file(write_base_file(SCHEMA, rows))
    assert back == rows and "parquet.avro.schema" in meta


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "key": st.text(max_size=12),
                "ts": st.none() | st.integers(-(2**63), 2**63 - 1),
                "amount": st.none() | st.floats(allow_nan=False),
                "flag": st.none() | st.booleans(),
            }
        ),
        max_size=12,
    )
)
def test_random_rows_round_trip(rows: list[dict[str, Any]]) -> None:
    schema = writer_schema(
        "r", (("key", "string"), ("ts", "long"), ("amount", "double"), ("flag", "boolean"))
    )
    full = [{**meta_values("1", "1_0_0", r["key"], "", "f"), **r} for r in rows]
    assert read_base_file(write_base_file(schema, full))[1] == full


def test_unsupported_types_and_misfits_are_refused() -> None:
    with pytest.raises(ValueError, match="unsupported Avro type"):
        write_base_file(writer_schema("t", (("d", {"type": "bytes", "logicalType": "decimal"}),)), [])
    with pytest.raises(ValueError, match="does not fit"):
        write_base_file(SCHEMA, [{**_row(1), "ts": "x"}])


def test_bad_parquet_bytes_raise_the_named_error() -> None:
    data = write_base_file(SCHEMA, [_row(1)])
    for bad in (data[:-3], b"PAR1" + bytes(20), b""):
        with pytest.raises(HudiFileError) as info:
            read_base_file(bad, "p0/" + NAME)
        assert info.value.path == "p0/" + NAME


@real
def test_real_base_files_read_avro_written_and_spark_written() -> None:
    with zipfile.ZipFile(TRIPS) as zf:
        names = [n for n in zf.namelist() if n.endswith(".parquet") and "/city=chennai/" in n]
        first = next(n for n in names if n.endswith("_20251220210108078.parquet"))
        compacted = next(n for n in names if n.endswith("_20251220210129235.parquet"))
        meta, rows = read_base_file(zf.read(first), first)
        assert json.loads(meta["parquet.avro.schema"])["name"] == "v8_trips_8i3u1d_record"
        assert {r["rider"] for r in rows} == {"rider-I", "rider-J"}
        assert all(r["_hoodie_file_name"] == first.rsplit("/", 1)[1] for r in rows)
        meta, rows = read_base_file(zf.read(compacted), compacted)
        assert "parquet.avro.schema" not in meta and "org.apache.spark.version" in meta
        assert [r["rider"] for r in rows] == ["rider-I"]  # rider-J was deleted before the compaction

"""A MERGE_ON_READ table built with model/hudi_files, read by hudi-rs (PyPI ``hudi`` 0.5.0) as a
second oracle; write stats and ``hoodie.properties`` entries against the real tables.

The table (one file group in partition ``p0``, table version 8 or 9):

* deltacommit D1 inserts k1..k4 into a Parquet base file;
* deltacommit D2 appends a log file: an Avro data block of a failed attempt F (k3 -> "failed"), a
  rollback command block that undoes F, D2's Avro data block (k1 updated, k5 inserted) and its
  delete block (k2);
* compaction C (requested with a plan, completed as a ``commit``) writes the merged base file;
* deltacommit D3 appends a log after the compaction: k4 updated, k5 deleted.

hudi-rs must read exactly the rows written: snapshot, as of D1 and D2 (request times), and
incremental windows (completion times).  Corrupted log files are read in a subprocess: hudi-rs
0.5.0 aborts the process on some of them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow", reason="pyarrow (the oracle extra) is not installed")
hudi = pytest.importorskip("hudi", reason="hudi-rs (PyPI hudi, the oracle extra) is not installed")

from model.hudi_files.log_blocks import (  # noqa: E402
    DeleteRecord,
    avro_data_block,
    content_offset,
    delete_block,
    rollback_block,
)
from model.hudi_files.log_format import LogBlock, decode_log_file, encode_log_file  # noqa: E402
from model.hudi_files.parquet_files import write_base_file  # noqa: E402
from model.hudi_files.schema import commit_schema, meta_values, writer_schema  # noqa: E402
from model.hudi_files.table_properties import reader_properties, table_checksum  # noqa: E402
from model.hudi_files.write_stats import (  # noqa: E402
    FULL_COMMIT_METADATA_SCHEMA,
    base_file_stat,
    commit_metadata,
    compaction_stat,
    encode_full_commit_metadata,
    log_file_stat,
)
from model.timeline.avro import decode_datum, read_container  # noqa: E402
from model.timeline.layout import BaseFile, Instant, LogFile, State  # noqa: E402
from model.timeline.metadata import (  # noqa: E402
    TableSpec,
    compaction_plan,
    encode_compaction_plan,
    partition_metadata_text,
    properties_text,
)

DATA = Path(os.environ.get("HCC_HUDI_TABLES", Path(__file__).resolve().parents[2] / "shared" / "hudi-tables"))
if not DATA.is_dir() and "HCC_HUDI_TABLES" not in os.environ:
    DATA = Path("/work/shared/hudi-tables")
TRIPS = DATA / "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"
NOMETA = DATA / "sample_table/mor/avro/v9_txns_simple_nometa.zip"
real = pytest.mark.skipif(not TRIPS.exists(), reason=f"real Hudi tables not found at {DATA}")

NAME = "hf_test"
PART = "p0"
FID = "11111111-1111-1111-1111-111111111111-0"
TS = {"type": "long", "logicalType": "timestamp-micros"}
FIELDS = (
    ("key", "string"),
    ("ts", "long"),
    ("val", "string"),
    ("amt", "double"),
    ("flag", "boolean"),
    ("n", "int"),
    ("at", TS),
    ("part", "string"),
)
SCHEMA = writer_schema(NAME, FIELDS)
D1, D1C = 20250101000001000, 20250101000002000
F, R = 20250101000002500, 20250101000002700  # a failed write and the rollback that undoes it
D2, D2C = 20250101000003000, 20250101000004000
C, CC = 20250101000005000, 20250101000006000
D3, D3C = 20250101000007000, 20250101000008000


def row(commit: int, seq: int, key: str, ts: int, val: str, file_name: str) -> dict[str, Any]:
    """A record as written: meta columns, then the data fields."""
    meta = meta_values(str(commit), f"{commit}_0_{seq}", key, PART, file_name)
    return {
        **meta,
        "key": key,
        "ts": ts,
        "val": val,
        "amt": ts / 4,
        "flag": ts > 15,
        "n": ts,
        "at": 1_700_000_000_000_000 + ts,
        "part": PART,
    }


@dataclass
class Built:
    """The table's files and the rows each read must return."""

    files: dict[str, bytes] = field(default_factory=dict)
    expected: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    log2: str = ""
    log3: str = ""


def build(version: int = 8, rollback: bool = True) -> Built:
    """The table described in the module doc, as ``{path: bytes}``."""
    out = Built()
    spec = TableSpec(
        NAME,
        "MERGE_ON_READ",
        version,
        record_key="key",
        partition_field="part",
        fields=FIELDS,
        ordering_field="ts",
    )
    spec = replace(spec, extra=reader_properties(NAME, version, "key", "part", "ts"))
    schema_json = json.dumps(commit_schema(NAME, FIELDS), separators=(",", ":"))
    files = out.files
    files[".hoodie/hoodie.properties"] = properties_text(spec).encode()
    files[f"{PART}/.hoodie_partition_metadata"] = partition_metadata_text(D1).encode()

    def instant(
        req: int, done: int, action: str, body: bytes, requested_as: str = "", plan: bytes = b""
    ) -> None:
        first = requested_as or action
        files[".hoodie/timeline/" + Instant(req, first, State.REQUESTED).file_name("v8")] = plan
        files[".hoodie/timeline/" + Instant(req, first, State.INFLIGHT).file_name("v8")] = b""
        files[".hoodie/timeline/" + Instant(req, action, State.COMPLETED, done, first).file_name("v8")] = body

    base1 = BaseFile(FID, "0-1-1", D1)
    rows1 = [row(D1, i, f"k{i}", 10, f"v{i}", base1.name) for i in range(1, 5)]
    files[f"{PART}/{base1.name}"] = b1 = write_base_file(SCHEMA, rows1)
    stat = base_file_stat(PART, FID, base1.name, 4, len(b1))
    body = encode_full_commit_metadata(commit_metadata([stat], "INSERT", schema_json))
    instant(D1, D1C, "deltacommit", body)

    log2 = LogFile(FID, D2, 1, "0-2-2")
    d2_rows = [row(D2, 0, "k1", 20, "v1-upd", FID), row(D2, 1, "k5", 20, "v5", FID)]
    blocks: list[LogBlock] = []
    if rollback:
        blocks.append(avro_data_block(str(F), SCHEMA, [row(F, 0, "k3", 99, "failed", FID)]))
        blocks.append(rollback_block(str(R), str(F)))
    blocks.append(avro_data_block(str(D2), SCHEMA, d2_rows))
    blocks.append(delete_block(str(D2), [DeleteRecord("k2", PART)], SCHEMA))
    files[f"{PART}/{log2.name}"] = l2 = encode_log_file(blocks)
    stat = log_file_stat(
        PART,
        FID,
        log2.name,
        str(D2),
        num_inserts=1,
        num_updates=1,
        num_deletes=1,
        bytes_written=len(l2),
        file_size=len(l2),
    )
    body = encode_full_commit_metadata(commit_metadata([stat], "UPSERT", schema_json))
    instant(D2, D2C, "deltacommit", body)

    base2 = BaseFile(FID, "0-3-3", C)
    rows2 = [
        row(D2, 0, "k1", 20, "v1-upd", base2.name),
        row(D1, 3, "k3", 10, "v3", base2.name),
        row(D1, 4, "k4", 10, "v4", base2.name),
        row(D2, 1, "k5", 20, "v5", base2.name),
    ]
    files[f"{PART}/{base2.name}"] = b2 = write_base_file(SCHEMA, rows2)
    op = {
        "baseInstantTime": str(D1),
        "deltaFilePaths": [log2.name],
        "dataFilePath": base1.name,
        "fileId": FID,
        "partitionPath": PART,
        "metrics": {},
    }
    stat = compaction_stat(
        PART,
        FID,
        base2.name,
        str(D1),
        base1.name,
        num_kept=2,
        num_updated=2,
        num_deleted=1,
        file_size=len(b2),
        log_files=1,
        log_blocks=len(blocks),
        log_records=3,
        log_bytes=len(l2),
        keys_from_logs=3,
    )
    body = encode_full_commit_metadata(commit_metadata([stat], "COMPACT", schema_json, compacted=True))
    instant(C, CC, "commit", body, "compaction", encode_compaction_plan(compaction_plan([op])))

    log3 = LogFile(FID, D3, 1, "0-4-4")
    d3_row = row(D3, 0, "k4", 30, "v4-upd", FID)
    l3_blocks = [
        avro_data_block(str(D3), SCHEMA, [d3_row]),
        delete_block(str(D3), [DeleteRecord("k5", PART)]),
    ]
    files[f"{PART}/{log3.name}"] = l3 = encode_log_file(l3_blocks)
    stat = log_file_stat(
        PART,
        FID,
        log3.name,
        str(D3),
        num_inserts=0,
        num_updates=1,
        num_deletes=1,
        bytes_written=len(l3),
        file_size=len(l3),
    )
    body = encode_full_commit_metadata(commit_metadata([stat], "UPSERT", schema_json))
    instant(D3, D3C, "deltacommit", body)

    out.log2, out.log3 = f"{PART}/{log2.name}", f"{PART}/{log3.name}"
    out.expected = {
        "as_of_d1": rows1,
        "as_of_d2": [d2_rows[0], rows1[2], rows1[3], d2_rows[1]],
        "snapshot": [rows2[0], rows2[1], d3_row],
        "d2_only": d2_rows,
        "d3_only": [d3_row],
    }
    return out


def write(built: Built, root: Path) -> Path:
    """Write the files under ``root`` (the table base path)."""
    for path, data in built.files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def rows_of(batches: list[Any]) -> list[dict[str, Any]]:
    """hudi-rs's record batches as rows sorted by key, timestamps back to microseconds."""
    import pyarrow as pa

    if not batches:
        return []
    table = pa.Table.from_batches(batches)
    table = table.set_column(table.schema.get_field_index("at"), "at", table.column("at").cast(pa.int64()))
    return sorted(table.to_pylist(), key=lambda r: str(r["key"]))


def read(root: Path, **options: str) -> list[dict[str, Any]]:
    """hudi-rs's ``read()``: snapshot, ``as_of=``, or incremental ``start=``/``end=``."""
    from hudi import HudiQueryType, HudiReadOptions, HudiTable

    opts = HudiReadOptions()
    if "as_of" in options:
        opts = opts.with_as_of_timestamp(options["as_of"])
    if "start" in options:
        opts = (
            opts.with_query_type(HudiQueryType.Incremental)
            .with_start_timestamp(options["start"])
            .with_end_timestamp(options["end"])
        )
    return rows_of(HudiTable(str(root)).read(opts))


@pytest.fixture(scope="module", params=[8, 9], ids=["v8", "v9"])
def table(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Built, Path]:
    built = build(request.param)
    return built, write(built, tmp_path_factory.mktemp(f"v{request.param}"))


# ---- hudi-rs reads what was written -------------------------------------------------------


def test_hudi_rs_lists_the_compacted_slice(table: tuple[Built, Path]) -> None:
    from hudi import HudiTable

    built, root = table
    t = HudiTable(str(root))
    assert t.is_mor and t.table_name == NAME
    [fs] = t.get_file_slices()
    assert fs.base_file_name == f"{FID}_0-3-3_{C}.parquet"
    assert fs.log_file_names == [built.log3.rsplit("/", 1)[1]]
    assert [f.name for f in t.get_schema()] == [n for n, _ in FIELDS]


def test_hudi_rs_snapshot_is_exactly_the_rows_written(table: tuple[Built, Path]) -> None:
    built, root = table
    assert read(root) == built.expected["snapshot"]


def test_hudi_rs_time_travel_is_exactly_the_rows_written(table: tuple[Built, Path]) -> None:
    built, root = table
    assert read(root, as_of=str(D1)) == built.expected["as_of_d1"]
    # base file of D1 merged with D2's log: the failed attempt is rolled back, k2 deleted
    assert read(root, as_of=str(D2)) == built.expected["as_of_d2"]


def test_hudi_rs_incremental_reads_return_each_deltacommits_rows(table: tuple[Built, Path]) -> None:
    built, root = table
    assert read(root, start=str(D1C), end=str(D2C)) == built.expected["d2_only"]
    assert read(root, start=str(CC), end=str(D3C)) == built.expected["d3_only"]


def test_without_the_rollback_block_hudi_rs_reads_the_failed_write(tmp_path: Path) -> None:
    built = build(8, rollback=False)
    data = built.files[built.log2]
    failed = avro_data_block(str(F), SCHEMA, [row(F, 0, "k3", 99, "failed", FID)])
    built.files[built.log2] = encode_log_file([failed, *decode_log_file(data)])
    rows = read(write(built, tmp_path), as_of=str(D2))
    assert [r["val"] for r in rows if r["key"] == "k3"] == ["failed"]


# ---- corruption: what hudi-rs 0.5.0 does ----------------------------------------------------

_READER = """
import sys, pyarrow as pa
from hudi import HudiTable
try:
    batches = HudiTable(sys.argv[1]).read()
except Exception as exc:
    print("ERROR", type(exc).__name__, exc)
else:
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    print("ROWS", sorted((r["key"], r["val"]) for r in rows))
"""


def _hudi_rs_on(root: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-c", _READER, str(root)], capture_output=True, text=True, timeout=300
    )
    return done.returncode, done.stdout.strip()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Built, Path]:
    built = build(8)
    return built, write(built, tmp_path_factory.mktemp("pristine"))


def _corrupted(pristine: tuple[Built, Path], tmp_path: Path, at: int, delta: int) -> tuple[int, str]:
    built, root = pristine
    copy = tmp_path / "t"
    shutil.copytree(root, copy)
    data = bytearray(built.files[built.log3])
    data[at] = (data[at] + delta) % 256
    (copy / built.log3).write_bytes(bytes(data))
    return _hudi_rs_on(copy)


EXPECTED_ROWS = "ROWS [('k1', 'v1-upd'), ('k3', 'v3'), ('k4', 'v4-upd')]"


def test_hudi_rs_reads_the_pristine_table_in_a_subprocess(pristine: tuple[Built, Path]) -> None:
    assert _hudi_rs_on(pristine[1]) == (0, EXPECTED_ROWS)


def test_hudi_rs_refuses_a_changed_magic_byte(pristine: tuple[Built, Path], tmp_path: Path) -> None:
    assert _corrupted(pristine, tmp_path, 0, 1) == (0, "ERROR HudiCoreError Invalid magic")


def test_hudi_rs_drops_a_block_whose_block_length_changed(
    pristine: tuple[Built, Path], tmp_path: Path
) -> None:
    # hudi-rs, like Hudi's Java reader, takes a block whose header length disagrees with its
    # trailing total length for a corrupt block and skips it: D3's update of k4 vanishes silently
    code, out = _corrupted(pristine, tmp_path, 13, 1)
    assert (code, out) == (0, "ROWS [('k1', 'v1-upd'), ('k3', 'v3'), ('k4', 'v4')]")


def test_hudi_rs_aborts_on_a_shorter_content_length(pristine: tuple[Built, Path], tmp_path: Path) -> None:
    built, _ = pristine
    at = content_offset(decode_log_file(built.files[built.log3])[0]) - 1
    code, out = _corrupted(pristine, tmp_path, at, -1)
    # hudi-rs 0.5.0 then reads the header of a "next block" from record bytes and asks for tens of
    # gigabytes: the process aborts (SIGABRT, "memory allocation of ... bytes failed")
    assert code != 0 and out == ""


# ---- write stats and hoodie.properties against the real tables ----------------------------


def _real_commits(path: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            if "__MACOSX" in name or "/metadata/" in name or "/.hoodie/timeline/" not in name:
                continue
            if "_" in name.rsplit("/", 1)[1] and name.endswith((".deltacommit", ".commit")):
                out[name.rsplit("/", 1)[1]] = read_container(zf.read(name))[0]
    return out


def _container_schema(data: bytes) -> Any:
    header, _ = decode_datum({"type": "map", "values": "bytes"}, data, 4)
    return json.loads(header["avro.schema"])


@real
def test_commit_metadata_schema_is_hudis() -> None:
    with zipfile.ZipFile(TRIPS) as zf:
        name = next(n for n in zf.namelist() if n.endswith("20251220210124336.deltacommit"))
        real_bytes = zf.read(name)
    assert _container_schema(real_bytes) == FULL_COMMIT_METADATA_SCHEMA
    value = read_container(real_bytes)[0]
    assert read_container(encode_full_commit_metadata(value)) == [value]


RUNTIME = ("runtimeStats", "totalLogReadTimeMs")  # timings, not counts


def _same(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    assert set(ours) == set(theirs)
    assert {k: v for k, v in ours.items() if k not in RUNTIME} == {
        k: v for k, v in theirs.items() if k not in RUNTIME
    }


@real
def test_write_stats_are_filled_as_hudi_fills_them() -> None:
    commits = _real_commits(TRIPS)
    insert = commits["20251220210108078_20251220210109593.deltacommit"]["partitionToWriteStats"][
        "city=chennai"
    ][0]
    fid = "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0"
    _same(
        base_file_stat("city=chennai", fid, f"{fid}_2-986-2794_20251220210108078.parquet", 2, 436201), insert
    )
    update = commits["20251220210127080_20251220210127601.deltacommit"]["partitionToWriteStats"][
        "city=chennai"
    ][0]
    log = f".{fid}_20251220210127080.log.1_0-1072-3078"
    ours = log_file_stat(
        "city=chennai",
        fid,
        log,
        "20251220210127080",
        num_inserts=0,
        num_updates=1,
        num_deletes=0,
        bytes_written=1141,
        file_size=1141,
    )
    _same(ours, update)
    delete = commits["20251220210128625_20251220210129197.deltacommit"]["partitionToWriteStats"][
        "city=chennai"
    ][0]
    log = f".{fid}_20251220210128625.log.1_0-1097-3150"
    ours = log_file_stat(
        "city=chennai",
        fid,
        log,
        "20251220210128625",
        num_inserts=0,
        num_updates=0,
        num_deletes=1,
        bytes_written=976,
        file_size=976,
    )
    _same(ours, delete)
    compaction = commits["20251220210129235_20251220210129883.commit"]["partitionToWriteStats"][
        "city=chennai"
    ][0]
    ours = compaction_stat(
        "city=chennai",
        fid,
        f"{fid}_0-1112-3190_20251220210129235.parquet",
        "20251220210108078",
        f"{fid}_2-986-2794_20251220210108078.parquet",
        num_kept=1,
        num_updated=0,
        num_deleted=1,
        file_size=436098,
        log_files=2,
        log_blocks=2,
        log_records=2,
        log_bytes=1141 + 976,
        keys_from_logs=1,
    )
    _same(ours, compaction)


@real
def test_table_checksum_matches_the_real_tables() -> None:
    for path in (TRIPS, NOMETA):
        with zipfile.ZipFile(path) as zf:
            name = next(
                n for n in zf.namelist() if n.endswith("/.hoodie/hoodie.properties") and "metadata" not in n
            )
            props = dict(
                x.split("=", 1) for x in zf.read(name).decode().splitlines() if "=" in x and x[0] != "#"
            )
        assert int(props["hoodie.table.checksum"]) == table_checksum(props["hoodie.table.name"], "default")
        ours = reader_properties(
            props["hoodie.table.name"],
            int(props["hoodie.table.version"]),
            props["hoodie.table.recordkey.fields"],
            props["hoodie.table.partition.fields"],
            props.get("hoodie.table.ordering.fields") or props["hoodie.table.precombine.field"],
        )
        assert {k: v for k, v in ours.items() if k in props} == {k: props[k] for k in ours if k in props}
        assert set(ours) <= set(props) | {"hoodie.record.merge.strategy.id"}


def test_hudi_rs_needs_no_options_to_open_the_built_table(table: tuple[Built, Path]) -> None:
    from hudi import HudiTable

    _, root = table
    options = HudiTable(str(root)).hudi_options()
    assert options["hoodie.table.recordkey.fields"] == "key"
    assert options["hoodie.table.checksum"] == str(table_checksum(NAME, "default"))

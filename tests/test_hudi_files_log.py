"""Hudi log files (model/hudi_files/log_format.py, log_blocks.py) against the real tables Apache
Hudi wrote, plus corruption and round-trip properties.

Real tables: ``../shared/hudi-tables`` (or ``HCC_HUDI_TABLES``); those tests skip when it is absent.
Every log file of every table (data tables and their metadata tables, v6, v8 and v9) must decode,
re-encode to the same bytes, and hold as many records as the deltacommit that wrote it says.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.hudi_files import HudiFileError
from model.hudi_files.log_blocks import (
    DecodedBlock,
    DeleteRecord,
    avro_data_block,
    content_offset,
    decode_avro_content,
    decode_delete_content,
    decode_payload,
    delete_block,
    encode_avro_content,
    encode_delete_content,
    encode_payload,
    read_log_file,
    rollback_block,
)
from model.hudi_files.log_format import (
    MAGIC,
    BlockType,
    HeaderKey,
    LogBlock,
    decode_log_file,
    encode_log_file,
)
from model.hudi_files.schema import commit_schema, create_schema, meta_values, writer_schema
from model.timeline.layout import is_log_file_name
from model.timeline.metadata import decode_instant_metadata

DATA = Path(os.environ.get("HCC_HUDI_TABLES", Path(__file__).resolve().parents[2] / "shared" / "hudi-tables"))
if not DATA.is_dir() and "HCC_HUDI_TABLES" not in os.environ:
    DATA = Path("/work/shared/hudi-tables")
ZIPS = sorted(DATA.rglob("*.zip")) if DATA.is_dir() else []
real = pytest.mark.skipif(not ZIPS, reason=f"real Hudi tables not found at {DATA}")

TRIPS = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d"
TRIPS_FIELDS = (
    ("ts", "long"),
    ("uuid", "string"),
    ("rider", "string"),
    ("driver", "string"),
    ("fare", "double"),
    ("city", "string"),
)


def _entries(zf: zipfile.ZipFile) -> Iterator[str]:
    for name in zf.namelist():
        if "__MACOSX" in name or name.endswith("/"):
            continue
        yield name


def real_log_files() -> Iterator[tuple[str, str, bytes]]:
    """(table, path in zip, bytes) of every log file of every staged table."""
    for z in ZIPS:
        table = str(z.relative_to(DATA))[: -len(".zip")]
        with zipfile.ZipFile(z) as zf:
            for name in _entries(zf):
                if is_log_file_name(name.rsplit("/", 1)[-1]):
                    yield table, name, zf.read(name)


def _version(table: str) -> str:
    return Path(table).name.split("_", 1)[0]


@pytest.fixture(scope="module")
def logs() -> list[tuple[str, str, bytes]]:
    return list(real_log_files())


# ---- the real tables -----------------------------------------------------------------------


@real
def test_every_real_log_file_decodes_and_reencodes_to_the_same_bytes(
    logs: list[tuple[str, str, bytes]],
) -> None:
    kinds: Counter[tuple[str, str, str]] = Counter()
    for table, name, data in logs:
        blocks = decode_log_file(data, name)
        assert blocks, name
        assert encode_log_file(blocks) == data, name
        for block in blocks:
            decoded = decode_payload(block, name)
            # content re-encoded from the decoded records / delete records: Hudi's encoding is
            # deterministic (HFile and Parquet content is kept as it is)
            assert encode_payload(decoded) == block, (name, block.offset)
            where = "mdt" if "/.hoodie/metadata/" in name else "data"
            kinds[(_version(table), where, block.block_type.name)] += 1
    v8_up = {k: n for k, n in kinds.items() if k[0] in ("v8", "v9")}
    # the v8/v9 MOR tables hold Avro data and delete blocks, their MDTs HFile and delete blocks
    assert v8_up[("v8", "data", "AVRO_DATA")] and v8_up[("v9", "data", "AVRO_DATA")]
    assert v8_up[("v8", "data", "DELETE")] and v8_up[("v9", "data", "DELETE")]
    assert v8_up[("v9", "mdt", "HFILE_DATA")] and v8_up[("v9", "mdt", "DELETE")]
    # the one command block in the staged tables is v6's rollback
    assert kinds[("v6", "data", "COMMAND")] == 1


def _commit_stats(zf: zipfile.ZipFile) -> dict[str, dict[str, Any]]:
    """Write stats of the completed (data-table) commits, by file path."""
    out: dict[str, dict[str, Any]] = {}
    for name in _entries(zf):
        parent, _, leaf = name.rpartition("/")
        if not parent.endswith(".hoodie/timeline") or "/metadata/" in name or "_" not in leaf:
            continue
        md = decode_instant_metadata(zf.read(name), name)
        for stats in (md.get("partitionToWriteStats") or {}).values():
            for s in stats:
                out[s["path"]] = s
    return out


@real
def test_real_data_logs_hold_the_record_counts_their_deltacommits_wrote() -> None:
    checked = 0
    for z in ZIPS:
        table = str(z.relative_to(DATA))[: -len(".zip")]
        if _version(table) not in ("v8", "v9") or "/mor/" not in table:
            continue
        with zipfile.ZipFile(z) as zf:
            stats = _commit_stats(zf)
            for name in _entries(zf):
                if "/.hoodie/" in name or not is_log_file_name(name.rsplit("/", 1)[-1]):
                    continue
                data = zf.read(name)
                decoded = read_log_file(data, name)
                records = sum(len(d.records or ()) for d in decoded)
                deletes = sum(len(d.deletes or ()) for d in decoded)
                stat = stats[name.split("/", 1)[1]]
                assert (records, deletes) == (stat["numWrites"], stat["numDeletes"]), name
                assert stat["fileSizeInBytes"] == len(data) == stat["totalWriteBytes"], name
                checked += 1
    # every data log of the v8/v9 MOR tables (README: 5 + 5 + 5 + 5 + 1 + 2)
    assert checked == 23


@real
def test_real_header_schemas_are_the_schemas_this_package_writes() -> None:
    with zipfile.ZipFile(DATA / f"{TRIPS}.zip") as zf:
        names = [n for n in _entries(zf) if is_log_file_name(n.rsplit("/", 1)[-1]) and "/.hoodie/" not in n]
        block = decode_log_file(zf.read(names[0]), names[0])[0]
        props = zf.read("v8_trips_8i3u1d/.hoodie/hoodie.properties").decode()
        commit = next(
            n for n in _entries(zf) if n.endswith(".deltacommit") and "/timeline/" in n and "meta" not in n
        )
        extra = decode_instant_metadata(zf.read(commit), commit)["extraMetadata"]
    compact = {"separators": (",", ":")}
    assert block.get(HeaderKey.SCHEMA) == json.dumps(
        writer_schema("v8_trips_8i3u1d", TRIPS_FIELDS), **compact
    )
    assert extra["schema"] == json.dumps(commit_schema("v8_trips_8i3u1d", TRIPS_FIELDS), **compact)
    line = next(x for x in props.splitlines() if x.startswith("hoodie.table.create.schema="))
    created = line.split("=", 1)[1].replace("\\:", ":")
    assert created == json.dumps(create_schema("v8_trips_8i3u1d", TRIPS_FIELDS), **compact)


@real
def test_real_delete_records_carry_spark_sqls_int_wrapper_zero(logs: list[tuple[str, str, bytes]]) -> None:
    deletes = [
        d
        for _, name, data in logs
        if "/.hoodie/" not in name
        for b in decode_log_file(data, name)
        for d in decode_payload(b, name).deletes or ()
    ]
    assert deletes and {(d.ordering_wrapper, d.ordering_value) for d in deletes} == {("IntWrapper", 0)}


# ---- what this package writes ---------------------------------------------------------------

FIELDS = (("key", "string"), ("ts", "long"), ("amount", "double"), ("part", "string"))
SCHEMA = writer_schema("t", FIELDS)


def _row(key: str, ts: int) -> dict[str, Any]:
    return {
        **meta_values("20250101000000000", f"20250101000000000_0_{ts}", key, "p0", "fg-0"),
        "key": key,
        "ts": ts,
        "amount": ts / 4,
        "part": "p0",
    }


def _sample_file() -> bytes:
    return encode_log_file(
        [
            avro_data_block("20250101000000000", SCHEMA, [_row("a", 1), _row("b", 2)]),
            delete_block("20250101000000000", [DeleteRecord("c", "p0")], SCHEMA),
            rollback_block("20250101000000001", "20250101000000000"),
        ]
    )


def test_built_blocks_have_hudis_frame() -> None:
    data = _sample_file()
    blocks = decode_log_file(data, "sample")
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA, BlockType.DELETE, BlockType.COMMAND]
    first = blocks[0]
    length = int.from_bytes(data[6:14], "big")
    end = 14 + length
    assert data[:6] == MAGIC and int.from_bytes(data[end - 8 : end], "big") == length + 6
    assert blocks[1].offset == end
    assert int.from_bytes(data[14:18], "big") == 1 and int.from_bytes(data[18:22], "big") == 3
    assert first.get(HeaderKey.INSTANT_TIME) == "20250101000000000"
    records = decode_payload(first).records
    assert records is not None and [r["key"] for r in records] == ["a", "b"]
    assert decode_payload(blocks[1]).deletes == (DeleteRecord("c", "p0", 0, "IntWrapper"),)
    rollback = decode_payload(blocks[2])
    assert rollback.is_rollback and rollback.block.get(HeaderKey.TARGET_INSTANT_TIME) == "20250101000000000"
    assert rollback.block.content == b""


def test_avro_content_layout_is_version_count_then_length_prefixed_records() -> None:
    content = encode_avro_content(SCHEMA, [_row("a", 1)])
    assert content[:8] == (3).to_bytes(4, "big") + (1).to_bytes(4, "big")
    size = int.from_bytes(content[8:12], "big")
    assert len(content) == 12 + size
    assert decode_avro_content(content, SCHEMA) == [_row("a", 1)]


def test_delete_content_matches_hudis_bytes() -> None:
    # the delete block of v9_txns_nonpart_meta's 20260307162705410 log, byte for byte
    real_bytes = bytes.fromhex("000000030000000f02020e54584e2d3030320200040000")
    assert encode_delete_content([DeleteRecord("TXN-002", "")]) == real_bytes
    assert decode_delete_content(real_bytes) == [DeleteRecord("TXN-002", "", 0, "IntWrapper")]
    assert encode_delete_content([]) == bytes.fromhex("000000030000000100")  # the MDT's empty deletes


def test_header_order_is_kept_for_byte_exact_reencoding() -> None:
    block = avro_data_block("20250101000000000", SCHEMA, [_row("a", 1)])
    swapped = LogBlock(block.block_type, tuple(reversed(block.header)), block.content)
    data = encode_log_file([swapped])
    again = decode_log_file(data)
    assert again[0].header == swapped.header and encode_log_file(again) == data


# ---- corruption ------------------------------------------------------------------------------


def _corrupt(data: bytes, at: int, value: int) -> bytes:
    out = bytearray(data)
    out[at] = value
    return bytes(out)


@pytest.mark.parametrize("at", range(6))
def test_a_changed_magic_byte_is_named_with_file_and_offset(at: int) -> None:
    data = _sample_file()
    second = decode_log_file(data)[1].offset
    for start in (0, second):
        bad = _corrupt(data, start + at, data[start + at] ^ 0x20)
        with pytest.raises(HudiFileError, match="bad magic") as info:
            decode_log_file(bad, "p0/.f_1.log.1_0-1-1")
        assert info.value.path == "p0/.f_1.log.1_0-1-1" and info.value.offset == start
        assert str(info.value).startswith(f"p0/.f_1.log.1_0-1-1: byte {start}: ")


def test_changed_lengths_are_named_with_their_offset() -> None:
    data = _sample_file()
    blocks = decode_log_file(data)
    content_length_at = content_offset(blocks[0]) - 1
    total_at = blocks[1].offset - 1
    # the low bytes of the first block's block length, content length and total block length
    for at in (13, content_length_at, total_at):
        for delta in (1, -1):
            with pytest.raises(HudiFileError, match=r"\(in the block at byte 0, block length \d+\)") as info:
                decode_log_file(_corrupt(data, at, (data[at] + delta) % 256), "f.log")
            assert info.value.path == "f.log" and info.value.offset is not None, (at, delta)
            assert 0 <= info.value.offset < blocks[1].offset, (at, delta)
    # the high byte of the block length: the block would run past the file
    with pytest.raises(HudiFileError, match="runs past the end of the file") as info:
        decode_log_file(_corrupt(data, 6, 1), "f.log")
    assert info.value.offset == 6


def test_every_truncation_raises_the_named_error() -> None:
    data = _sample_file()
    ends = {b.offset for b in decode_log_file(data)} | {len(data)}
    for cut in range(len(data)):
        if cut in ends:
            decode_log_file(data[:cut])  # a file cut between blocks is a shorter valid file
            continue
        with pytest.raises(HudiFileError):
            decode_log_file(data[:cut], "cut")


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_single_byte_change_decodes_or_raises_only_the_named_error(data: st.DataObject) -> None:
    raw = _sample_file()
    at = data.draw(st.integers(0, len(raw) - 1))
    value = data.draw(st.integers(0, 255).filter(lambda v: v != raw[at]))
    bad = _corrupt(raw, at, value)
    try:
        for block in decode_log_file(bad, "fuzz"):
            decode_payload(block, "fuzz")
    except HudiFileError as exc:
        assert exc.path == "fuzz" and exc.offset is not None and 0 <= exc.offset <= len(raw)


@real
def test_real_file_corruption_names_the_file(logs: list[tuple[str, str, bytes]]) -> None:
    table, name, data = next(x for x in logs if x[0] == TRIPS and "/.hoodie/" not in x[1])
    for at, words in ((0, "bad magic"), (13, "block length"), (len(data) - 1, "total block length")):
        with pytest.raises(HudiFileError, match=words) as info:
            decode_log_file(_corrupt(data, at, data[at] ^ 1), name)
        assert name in str(info.value)


# ---- round trips ---------------------------------------------------------------------------

_TYPES: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(max_size=80),
    "long": st.integers(-(2**63), 2**63 - 1),
    "int": st.integers(-(2**31), 2**31 - 1),
    "double": st.floats(allow_nan=False),
    "float": st.floats(width=32, allow_nan=False),
    "boolean": st.booleans(),
    "bytes": st.binary(max_size=80),
}


@st.composite
def schemas_and_rows(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    names = draw(
        st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1, max_size=6, unique=True)
    )
    fields = [(n, draw(st.sampled_from(sorted(_TYPES)))) for n in names if not n.startswith("_hoodie")]
    schema = writer_schema("r", fields)
    rows = []
    for _ in range(draw(st.integers(0, 8))):
        row: dict[str, Any] = {
            m: draw(st.none() | st.text(max_size=20)) for m in meta_values("", "", "", "", "")
        }
        row.update({n: draw(st.none() | _TYPES[t]) for n, t in fields})
        rows.append(row)
    return schema, rows


_deletes = (
    st.builds(
        DeleteRecord,
        st.none() | st.text(max_size=40),
        st.none() | st.text(max_size=40),
        st.integers(-(2**31), 2**31 - 1),
        st.just("IntWrapper"),
    )
    | st.builds(
        DeleteRecord,
        st.text(max_size=10),
        st.text(max_size=10),
        st.integers(-(2**63), 2**63 - 1),
        st.just("LongWrapper"),
    )
    | st.builds(DeleteRecord, st.text(max_size=10), st.none(), st.text(max_size=10), st.just("StringWrapper"))
    | st.builds(DeleteRecord, st.text(max_size=10), st.none(), st.none(), st.just("null"))
)

_instants = st.from_regex(r"2025\d{13}", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["data", "delete", "rollback"]),
            _instants,
            schemas_and_rows(),
            st.lists(_deletes, max_size=5),
        ),
        max_size=5,
    )
)
def test_random_blocks_round_trip(plan: list[tuple[str, str, Any, list[DeleteRecord]]]) -> None:
    blocks: list[LogBlock] = []
    expected: list[DecodedBlock] = []
    for kind, instant, (schema, rows), deletes in plan:
        if kind == "data":
            block = avro_data_block(instant, schema, rows)
            expected.append(DecodedBlock(block, records=tuple(rows)))
        elif kind == "delete":
            block = delete_block(instant, deletes, schema)
            expected.append(DecodedBlock(block, deletes=tuple(deletes)))
        else:
            block = rollback_block(instant, instant[:-1] + "0")
            expected.append(DecodedBlock(block))
        blocks.append(block)
    data = encode_log_file(blocks)
    decoded = decode_log_file(data, "rt")
    assert decoded == blocks
    assert [decode_payload(b, "rt") for b in decoded] == expected
    assert encode_log_file([encode_payload(d) for d in expected]) == data


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(list(BlockType)),
    st.lists(st.tuples(st.sampled_from(list(HeaderKey)), st.text(max_size=30)), max_size=6),
    st.binary(max_size=200),
)
def test_random_frames_round_trip(
    kind: BlockType, entries: list[tuple[HeaderKey, str]], content: bytes
) -> None:
    block = LogBlock(kind, tuple((int(k), v) for k, v in entries), content)
    data = encode_log_file([block, block])
    assert decode_log_file(data) == [block, block]


def test_a_record_that_does_not_fit_its_schema_is_refused() -> None:
    with pytest.raises(ValueError, match="does not fit|no branch"):
        encode_avro_content(SCHEMA, [{**_row("a", 1), "ts": "not a long"}])


def test_record_varints_are_minimal_as_javas_binary_encoder_writes_them() -> None:
    schema = writer_schema("t", (("s", "string"),))
    row = {**meta_values("", "", "", "", ""), "s": "x" * 100}
    record = encode_avro_content(schema, [row])[12:]
    # five empty meta strings (union branch 1, length 0), then branch 1, length 100 as two bytes
    assert record == b"\x02\x00" * 5 + b"\x02\xc8\x01" + b"x" * 100

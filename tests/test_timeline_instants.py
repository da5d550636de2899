"""The layout module (instant times, instants, file names) and the metadata Hudi keeps in instant files."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from model.timeline.avro import is_text, read_container, text_safe_length, write_container
from model.timeline.instants import completed_only
from model.timeline.layout import (
    ACTIONS,
    Instant,
    State,
    format_instant,
    format_time,
    instant_path,
    instant_to_ms,
    ms_to_instant,
    parse_instant,
    parse_instant_name,
    parse_instant_path,
    parse_time,
)
from model.timeline.metadata import (
    COMMIT_METADATA_SCHEMA,
    commit_metadata,
    decode_instant_metadata,
    encode_commit_metadata,
)

T_MS = 1_767_225_600_123  # 2026-01-01T00:00:00.123Z
T = 20260101000000123  # the same time as an instant number


def test_instant_time_is_hudis_17_digit_utc_format() -> None:
    assert format_time(T_MS) == "20260101000000123" == format_instant(T)
    assert ms_to_instant(T_MS) == T and instant_to_ms(T) == T_MS
    assert parse_time("20260101000000123") == T_MS and parse_instant("20260101000000123") == T
    with pytest.raises(ValueError, match="17-digit"):
        parse_time("2026010100000012")
    with pytest.raises(ValueError, match="not a yyyyMMddHHmmssSSS"):
        instant_to_ms(0)  # the metadata table's bootstrap instant 00000000000000000 is no date
    assert format_instant(0) == "00000000000000000"


@given(st.integers(min_value=0, max_value=253_402_300_799_998))
def test_time_round_trips_and_instant_numbers_sort_like_their_strings(ms: int) -> None:
    assert instant_to_ms(ms_to_instant(ms)) == ms
    assert ms_to_instant(ms) < ms_to_instant(ms + 1)
    assert (format_time(ms) < format_time(ms + 1)) and len(format_time(ms)) == 17


@pytest.mark.parametrize("action", ACTIONS)
def test_file_names_of_both_layouts(action: str) -> None:
    req = Instant(T, action, State.REQUESTED)
    inf = Instant(T, action, State.INFLIGHT)
    done6 = Instant(T, action, State.COMPLETED)
    done8 = Instant(T, action, State.COMPLETED, T + 7)
    assert req.file_name("v6") == f"20260101000000123.{action}.requested"
    assert inf.file_name("v8") == f"20260101000000123.{action}.inflight"
    assert done6.file_name("v6") == f"20260101000000123.{action}"
    assert done8.file_name("v8") == f"20260101000000123_20260101000000130.{action}"
    assert instant_path("t", "v6", req) == f"t/.hoodie/20260101000000123.{action}.requested"
    assert instant_path("t", "v8", done8).startswith("t/.hoodie/timeline/")
    for inst, layout in ((req, "v6"), (inf, "v8"), (done6, "v6"), (done8, "v8")):
        assert parse_instant_name(inst.file_name(layout), layout) == inst


def test_salted_ids_foreign_files_and_bad_names() -> None:
    salted = Instant(T, "commit", State.COMPLETED, T + 1, salt="a1b2")
    assert salted.id == "20260101000000123-a1b2"
    assert parse_instant_name(salted.file_name("v8"), "v8") == salted
    assert parse_instant_name("hoodie.properties", "v6") is None
    assert parse_instant_name("20260101000000123.inflight", "v6") == Instant(T, "commit", State.INFLIGHT)
    assert parse_instant_path("t/.hoodie/.locks/table_lock.json", "t", "v6") is None
    assert parse_instant_path("t/.hoodie/timeline/20260101000000123.commit.requested", "t", "v6") is None
    with pytest.raises(ValueError, match="completion time"):
        Instant(T, "commit", State.COMPLETED).file_name("v8")
    with pytest.raises(ValueError, match="action"):
        Instant(T, "merge", State.REQUESTED)
    with pytest.raises(ValueError, match=r"2025\.commit"):
        parse_instant_name("2025.commit", "v6")


def test_readers_see_only_completed_instants() -> None:
    insts = [
        Instant(T + 2, "commit", State.COMPLETED, T + 3),
        Instant(T + 1, "commit", State.INFLIGHT),
        Instant(T, "clean", State.COMPLETED, T + 1),
        Instant(T + 4, "commit", State.REQUESTED),
    ]
    assert [i.requested for i in completed_only(insts)] == [T, T + 2]


# --- instant metadata -------------------------------------------------------------------------


def test_commit_metadata_is_json_in_v6_and_avro_in_v8() -> None:
    stats = {"fg1": [{"fileId": "fg1-0", "path": "fg1/fg1-0_0-0-0_20260101000000123.parquet"}]}
    md = commit_metadata(stats, "UPSERT", {"schema": "{}", "hcc.fg": "1"})
    v6 = encode_commit_metadata("v6", md)
    assert json.loads(v6)["partitionToWriteStats"] == stats
    v8 = encode_commit_metadata("v8", md)
    assert v8[:4] == b"Obj\x01"
    back = decode_instant_metadata(v8, "x")
    assert back["partitionToWriteStats"]["fg1"][0]["path"] == stats["fg1"][0]["path"]
    assert back["extraMetadata"] == {"schema": "{}", "hcc.fg": "1"} and back["operationType"] == "UPSERT"
    assert decode_instant_metadata(b"", "x") == {}
    with pytest.raises(ValueError, match="x: unreadable"):
        decode_instant_metadata(b"Obj\x01junk", "x")


def test_text_safe_avro_is_valid_utf8_and_decodes_to_the_same_value() -> None:
    long_json = json.dumps({"fields": [f"field_{i}" for i in range(40)]})  # a string of 64+ bytes
    md = commit_metadata({}, "UPSERT", {"schema": long_json, "hcc.aux": '{"key":"k1"}'})
    plain = encode_commit_metadata("v8", md)
    safe = encode_commit_metadata("v8", md, text_safe=True)
    assert not is_text(plain) and is_text(safe)
    assert decode_instant_metadata(safe, "x")["extraMetadata"]["schema"].strip() == long_json
    assert decode_instant_metadata(safe.decode().encode(), "x") == decode_instant_metadata(safe, "x")
    # a string of 64+ bytes that cannot be padded makes text safety impossible: said, not hidden
    stats = {"p": [{"path": "p/" + "x" * 62}]}
    with pytest.raises(ValueError, match="text-safe"):
        encode_commit_metadata("v8", commit_metadata(stats, "UPSERT", {}), text_safe=True)


@example(63)  # the longest one-byte length (a slice of three bytes before it took the block's size too)
@given(st.integers(0, 4000))
def test_text_safe_lengths(n: int) -> None:
    m = text_safe_length(n)
    assert m >= n and m - n < 64
    schema = {"type": "record", "name": "R", "fields": [{"name": "s", "type": "string"}]}
    data = write_container(schema, [{"s": "a" * m}])
    assert read_container(data) == [{"s": "a" * m}]
    # the string's length prefix is valid UTF-8 (the block's own size may not be: callers pad it)
    prefix = 1 if m < 64 else 3  # a one-byte varint below 64, else the three-byte text-safe form
    start = data.index(b"a" * m)
    assert is_text(data[start - prefix : start + m])


def test_avro_encoder_names_a_value_that_does_not_fit() -> None:
    with pytest.raises(ValueError, match="does not fit|no branch"):
        write_container(COMMIT_METADATA_SCHEMA, [{"partitionToWriteStats": 5}])

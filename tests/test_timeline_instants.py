"""Instant files in both layouts: names, parsing, and what readers see."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.timeline.instants import (
    ACTIONS,
    Instant,
    completed_only,
    format_time,
    instant_path,
    parse_instant_name,
    parse_instant_path,
    parse_time,
)

T = 1_767_225_600_123  # 2026-01-01T00:00:00.123Z


def test_instant_time_is_hudis_17_digit_utc_format() -> None:
    assert format_time(T) == "20260101000000123"
    assert parse_time("20260101000000123") == T
    with pytest.raises(ValueError, match="17-digit"):
        parse_time("2026010100000012")


@given(st.integers(min_value=0, max_value=253_402_300_799_998))
def test_time_round_trips_and_sorts_like_its_string(ms: int) -> None:
    assert parse_time(format_time(ms)) == ms
    assert (format_time(ms) < format_time(ms + 1)) and len(format_time(ms)) == 17


@pytest.mark.parametrize("action", ACTIONS)
def test_file_names_of_both_layouts(action: str) -> None:
    req = Instant(T, "", action, "requested")
    inf = Instant(T, "", action, "inflight")
    done6 = Instant(T, "", action, "completed")
    done8 = Instant(T, "", action, "completed", T + 7)
    assert req.file_name("v6") == f"20260101000000123.{action}.requested"
    assert inf.file_name("v8") == f"20260101000000123.{action}.inflight"
    assert done6.file_name("v6") == f"20260101000000123.{action}"
    assert done8.file_name("v8") == f"20260101000000123_20260101000000130.{action}"
    assert instant_path("t", "v6", req) == f"t/.hoodie/20260101000000123.{action}.requested"
    assert instant_path("t", "v8", done8).startswith("t/.hoodie/timeline/")
    for inst, layout in ((req, "v6"), (inf, "v8"), (done6, "v6"), (done8, "v8")):
        assert parse_instant_name(inst.file_name(layout), layout) == inst


def test_salted_ids_and_foreign_files() -> None:
    salted = Instant(T, "a1b2", "commit", "completed", T + 1)
    assert salted.id == "20260101000000123-a1b2"
    assert parse_instant_name(salted.file_name("v8"), "v8") == salted
    assert parse_instant_name("hoodie.properties", "v6") is None
    assert parse_instant_path("t/.hoodie/.locks/table_lock.json", "t", "v6") is None
    assert parse_instant_path("t/.hoodie/timeline/20260101000000123.commit.requested", "t", "v6") is None
    with pytest.raises(ValueError, match="completion time"):
        Instant(T, "", "commit", "completed").file_name("v8")
    with pytest.raises(ValueError, match="action"):
        Instant(T, "", "merge", "requested")


def test_readers_see_only_completed_instants() -> None:
    insts = [
        Instant(T + 2, "", "commit", "completed", T + 3),
        Instant(T + 1, "", "commit", "inflight"),
        Instant(T, "", "clean", "completed", T + 1),
        Instant(T + 4, "", "commit", "requested"),
    ]
    assert [i.time for i in completed_only(insts)] == [T, T + 2]

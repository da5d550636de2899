"""Issue 28, the pieces: the three-way classification, the slice merge, the export's records and write
stats, the hudi-rs runner's failure reports."""

from __future__ import annotations

import json
import signal
from typing import Any

import pytest

from backends.hudi_rs import Query, _describe_exit, read_with_hudi_rs
from model.hudi_files.log_blocks import DeleteRecord
from model.hudi_files.records import Block, merge_slice, read_data_file, same_records
from model.oracle.points import (
    AGREE,
    ALL_DIFFER,
    BOTH_DIFFER,
    HUDI_RS_DIFFERS,
    KNOWN_PREFIX,
    MODEL_DIFFERS,
    ReadPoint,
    classify,
    compare_point,
    evenly,
)

# ---- the classification -----------------------------------------------------------------------


def test_classify_names_which_of_the_three_differ() -> None:
    known = {"time travel by request time": "v2"}
    assert classify("v1", "v1", "v1", known) == AGREE
    assert classify("v1", "v1", "v2", known) == KNOWN_PREFIX + "time travel by request time"
    assert classify("v1", "v1", "v3", known) == HUDI_RS_DIFFERS
    assert classify("v1", None, "v1", known) == MODEL_DIFFERS
    assert classify("v1", "v2", "v2", {}) == BOTH_DIFFER
    assert classify("v1", "v3", "v4", {}) == ALL_DIFFER
    assert classify("v1", "v3", "v2", known) == ALL_DIFFER + f" ({KNOWN_PREFIX}time travel by request time)"
    assert classify(None, None, None, {}) == AGREE


def test_compare_point_counts_every_key_and_lists_the_differences() -> None:
    point = ReadPoint("as of T", "as_of", {"k1": "a", "k2": "b"}, {"k1": "a", "k2": "b"},
                      explained={"late": {"k1": "a", "k2": "b", "k3": "c"}})
    got = compare_point(point, {"k1": "a", "k3": "c"})
    assert got["keys"] == 3 and got["counts"] == {AGREE: 1, HUDI_RS_DIFFERS: 1, KNOWN_PREFIX + "late": 1}
    assert [d["key"] for d in got["differences"]] == ["k2", "k3"]


def test_evenly_keeps_the_ends_and_at_most_the_limit() -> None:
    assert evenly(list(range(5)), 10) == [0, 1, 2, 3, 4]
    picked = evenly(list(range(100)), 5)
    assert len(picked) == 5 and picked[0] == 0 and picked[-1] == 99 and picked == sorted(picked)


# ---- merging a slice ------------------------------------------------------------------------------


def rec(key: str, ts: int, commit: str, val: str = "") -> dict[str, Any]:
    return {"_hoodie_record_key": key, "_hoodie_commit_time": commit, "ts": ts, "val": val or commit}


def test_merge_slice_orders_by_the_ordering_field_and_the_later_wins_a_tie() -> None:
    base = [rec("k1", 10, "c1"), rec("k2", 10, "c1")]
    logs = [[Block("data", "c2", (rec("k1", 5, "c2"), rec("k2", 10, "c2")))]]
    got = merge_slice(base, logs, "ts")
    assert got["k1"]["_hoodie_commit_time"] == "c1" and got["k2"]["_hoodie_commit_time"] == "c2"
    # commit-time ordering: the later write always wins
    assert merge_slice(base, logs, "")["k1"]["_hoodie_commit_time"] == "c2"


def test_merge_slice_deletes_as_hudi_rs_does_and_drops_rolled_back_blocks() -> None:
    base = [rec("k1", 10, "c1"), rec("k2", 10, "c1"), rec("k3", 10, "c1"), rec("k4", 10, "c1")]
    logs = [[
        Block("delete", "c2", deletes=(DeleteRecord("k1", "p", 0, "IntWrapper"),
                                       DeleteRecord("k2", "p", 5, "LongWrapper"),
                                       DeleteRecord("k3", "p", 50, "LongWrapper"),
                                       DeleteRecord("k9", "p", None, "null"))),
        Block("data", "f", (rec("k4", 99, "f"),)),
        Block("rollback", "r", target="f"),
    ]]
    got = merge_slice(base, logs, "ts")
    assert sorted(got) == ["k2", "k4"] and got["k4"]["_hoodie_commit_time"] == "c1"


def test_same_records_compares_multisets_of_scalar_columns() -> None:
    a = [rec("k1", 1, "c1"), rec("k1", 1, "c2")]
    assert same_records(a, list(reversed(a)))
    assert not same_records(a, a[:1])
    assert same_records([{**a[0], "blob": b"\x00"}], [{**a[0], "blob": "00"}])  # representations differ
    assert not same_records([a[0]], [{**a[0], "val": "other"}])


def test_the_models_json_is_read_as_records() -> None:
    body = {"fg": "p0/f-0", "time": 1, "salt": "", "entries": {"k1": "w1.1"}}
    cow = read_data_file("p0/f-0_0-0-0_20260101000000001.parquet", json.dumps(body).encode())
    assert cow.encoding == "model"
    assert cow.records == ({"_hoodie_record_key": "k1", "key": "k1", "value": "w1.1"},)
    row = {"_hoodie_record_key": "k1", "_hoodie_commit_time": "20260101000000002", "ts": 3, "rid": "w1/0/0"}
    log = read_data_file("p0/.f-0_20260101000000002.log.1_0-0-0", (json.dumps(row) + "\n").encode())
    assert log.is_log and log.blocks[0].instant == "20260101000000002" and log.blocks[0].records == (row,)


# ---- the export ---------------------------------------------------------------------------------


def test_the_cow_export_names_each_value_by_the_commit_that_wrote_it_with_real_sizes() -> None:
    pytest.importorskip("pyarrow", reason="pyarrow (the oracle extra) is not installed")
    from model.hudi_files.export import export_table
    from model.timeline.avro import read_container
    from model.timeline.run import simulate_timeline
    from scenarios import timeline_loader

    ts = timeline_loader.load("tl-hudi-lazy-rollback-safe", ["duration_ms=15000"])
    run = simulate_timeline(ts)
    prefix = ts.base_path + "/"
    files = {k[len(prefix):]: v for k, v in run.objects.items() if k.startswith(prefix)}
    out = export_table(files)
    commits = {}
    for path, body in out.files.items():
        name = path.rsplit("/", 1)[1]
        if path.startswith(".hoodie/timeline/") and path.endswith(".commit") and "_" in name:
            md = read_container(body)[0]
            aux = json.loads(md["extraMetadata"]["hcc.aux"])
            commits[name.split("_")[0]] = aux
            for stats in md["partitionToWriteStats"].values():
                for st in stats:  # the write stats name the encoded file's size
                    if st["path"] in out.files:
                        assert st["fileSizeInBytes"] == len(out.files[st["path"]]) == st["totalWriteBytes"]
    wrote = {(a["key"], a["value"]): t for t, a in commits.items() if a["kind"] != "delete"}
    checked = 0
    for path, body in out.files.items():
        if path.endswith(".parquet"):
            for r in read_data_file(path, body).records:
                if (r["key"], r["value"]) in wrote:
                    assert r["_hoodie_commit_time"] == wrote[(r["key"], r["value"])], (path, r)
                    checked += 1
    assert checked > 5
    props = out.files[".hoodie/hoodie.properties"].decode()
    assert "hoodie.record.merge.mode=COMMIT_TIME_ORDERING" in props
    assert "hoodie.table.keygenerator.type=SIMPLE" in props


# ---- the hudi-rs runner's failures -------------------------------------------------------------------


def test_an_abort_and_a_timeout_are_reported_not_raised(tmp_path: Any) -> None:
    assert _describe_exit(-int(signal.SIGABRT), "memory allocation of 35433480208 bytes failed\n").startswith(
        "hudi-rs aborted the process (SIGABRT): memory allocation")
    exited = _describe_exit(1, "Traceback\nHudiCoreError: x")
    assert exited == "hudi-rs exited with status 1: Traceback HudiCoreError: x"
    got = read_with_hudi_rs(tmp_path, [Query("s", "snapshot")], timeout=0.001)
    assert got.error and "did not finish" in got.error
    assert "error" in got.answer("s")

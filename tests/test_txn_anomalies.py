"""The transactional checker on one hand-built history per anomaly class and per model boundary
(model/checkers/txn_check.py): each detector fires on its history, with the cycle or case that
explains it, and the models ruled out are Elle's."""

from __future__ import annotations

import pytest
from txn_helpers import check, cycle_txns, events, from_events, steps

from model.checkers.txn_check import check_txns
from model.checkers.txn_history import LIST_APPEND as LA
from model.checkers.txn_history import RW_REGISTER as RR

# ------------------------------------------------------------------ cycles


def test_g0_write_cycle() -> None:
    # x: t0 then t1; y: t1 then t0
    v = check(LA, ["ax1ay1", "ax2ay2", "rx12ry21"], ["read-uncommitted"])
    assert v.valid is False and v.forbidden == ["G0"]
    assert sorted(steps(v, "G0")) == [(0, 1, "ww"), (1, 0, "ww")]
    assert v.not_models == ["read-uncommitted"]
    step = v.cycle_json(v.cycles["G0"], None)["steps"][0]
    assert step["key"] in ("x", "y") and step["type"] == "ww" and "appended" in step["explanation"]


def test_g1c_through_write_read_edges_only() -> None:
    # each transaction reads what the other wrote
    v = check(RR, ["wx1ry1", "wy1rx1"], ["read-committed"])
    assert v.valid is False and v.forbidden == ["G1c"]
    assert {r for _, _, r in steps(v, "G1c")} == {"wr"}
    assert v.not_models == ["read-committed"]
    # read uncommitted allows it
    assert check(RR, ["wx1ry1", "wy1rx1"], ["read-uncommitted"]).valid is True


def test_g_single_that_snapshot_isolation_forbids() -> None:
    # t1 appends x after t0, but t1 read y before t0's append of y
    v = check(LA, ["ax1ay1", "ax2ry", "rx12"], ["snapshot-isolation"])
    assert v.valid is False and v.forbidden == ["G-single-item"]
    assert sorted(r for _, _, r in steps(v, "G-single-item")) == ["rw", "ww"]
    assert v.not_models == ["consistent-view", "repeatable-read"]
    assert "snapshot-isolation" in v.also_not
    assert check(LA, ["ax1ay1", "ax2ry", "rx12"], ["read-committed"]).valid is True


def test_g2_item_that_snapshot_isolation_allows() -> None:
    # write skew: each reads the initial state of what the other appends to
    for model, valid in (("snapshot-isolation", True), ("read-committed", True),
                         ("repeatable-read", False), ("serializable", False)):
        v = check(LA, ["rxay1", "ryax1"], [model])
        assert v.valid is valid, model
        assert v.anomaly_types == ["G2-item"]
        assert [r for _, _, r in steps(v, "G2-item")] == ["rw", "rw"]
        assert v.not_models == ["repeatable-read"]
        assert "snapshot-isolation" not in v.also_not


def test_g_nonadjacent() -> None:
    # rw wr rw wr: two anti-dependencies, never adjacent: snapshot isolation forbids it
    v = check(LA, ["ax1", "rx1ry", "ay1", "ry1rx"], ["snapshot-isolation"])
    assert v.valid is False and v.forbidden == ["G-nonadjacent-item"]
    rels = [r for _, _, r in steps(v, "G-nonadjacent-item")]
    assert sorted(rels) == ["rw", "rw", "wr", "wr"] and rels[0] == "rw" and rels[2] == "rw"
    assert v.not_models == ["repeatable-read", "snapshot-isolation"]
    # rw rw wr rw wr: two rw in a row, so not G-nonadjacent; snapshot isolation allows it (Elle's test)
    v = check(LA, ["rx5ay1", "ryaz2", "rzat3", "rt3au4", "ruax5"], ["snapshot-isolation"])
    assert v.valid is True and "G-nonadjacent-item" not in v.anomaly_types


def test_realtime_variant_strong_snapshot_isolation() -> None:
    # t1 appends 2 after t0 appends 1; t2 reads [1] although t1 completed before t2 began
    h = from_events(LA, [
        {"process": 0, "type": "invoke", "value": [["append", "x", 1]]},
        {"process": 0, "type": "ok", "value": [["append", "x", 1]]},
        {"process": 1, "type": "invoke", "value": [["append", "x", 2]]},
        {"process": 1, "type": "ok", "value": [["append", "x", 2]]},
        {"process": 2, "type": "invoke", "value": [["r", "x", None]]},
        {"process": 2, "type": "ok", "value": [["r", "x", [1]]]},
        {"process": 3, "type": "invoke", "value": [["r", "x", None]]},
        {"process": 3, "type": "ok", "value": [["r", "x", [1, 2]]]}])
    assert check_txns(h, ["serializable"]).valid is True
    v = check_txns(h, ["strict-serializable"])
    assert v.valid is False and v.forbidden == ["G-single-item-realtime"]
    assert sorted(r for _, _, r in steps(v, "G-single-item-realtime")) == ["realtime", "rw"]
    assert v.not_models == ["strong-snapshot-isolation"]


def test_process_variants() -> None:
    # the same, t1 and t2 by one process: strong session snapshot isolation (Elle's test)
    h = from_events(LA, [
        {"process": 0, "type": "invoke", "value": [["append", "x", 1]]},
        {"process": 0, "type": "ok", "value": [["append", "x", 1]]},
        {"process": 1, "type": "invoke", "value": [["append", "x", 2]]},
        {"process": 1, "type": "ok", "value": [["append", "x", 2]]},
        {"process": 1, "type": "invoke", "value": [["r", "x", None]]},
        {"process": 1, "type": "ok", "value": [["r", "x", [1]]]},
        {"process": 2, "type": "invoke", "value": [["r", "x", None]]},
        {"process": 2, "type": "ok", "value": [["r", "x", [1, 2]]]}])
    v = check_txns(h, ["strong-session-snapshot-isolation"])
    assert v.valid is False and v.forbidden == ["G-single-item-process"]
    assert v.not_models == ["strong-session-snapshot-isolation"]
    assert check_txns(h, ["serializable"]).valid is True
    # G1c-process: t0 -wr-> t1 -process-> t2 -wr-> t0 (Elle's wr-process-test)
    h = from_events(LA, [
        {"process": 1, "type": "invoke", "value": [["r", "x", None], ["append", "y", 1]]},
        {"process": 1, "type": "ok", "value": [["r", "x", [1]], ["append", "y", 1]]},
        {"process": 2, "type": "invoke", "value": [["r", "y", None]]},
        {"process": 2, "type": "ok", "value": [["r", "y", [1]]]},
        {"process": 2, "type": "invoke", "value": [["append", "x", 1]]},
        {"process": 2, "type": "ok", "value": [["append", "x", 1]]}])
    v = check_txns(h, ["strong-session-snapshot-isolation"])
    assert v.forbidden == ["G1c-process"] and v.not_models == ["strong-session-read-committed"]
    assert sorted(r for _, _, r in steps(v, "G1c-process")) == ["process", "wr", "wr"]


# ------------------------------------------------------------------ without a cycle


def test_aborted_read() -> None:
    v = check(LA, [(0, "fail", "ax1"), "rx1"], ["read-committed"])
    assert v.valid is False and v.forbidden == ["G1a"]
    assert v.anomalies["G1a"] == [{"txn": 1, "mop": 0, "writer": 0, "element": 1}]
    assert v.not_models == ["read-committed"]
    # read uncommitted allows it; nothing else links the transactions: unknown, as Elle says
    v = check(LA, [(0, "fail", "ax1"), "rx1"], ["read-uncommitted"])
    assert v.valid == "unknown" and "empty-transaction-graph" in v.anomaly_types
    assert check(RR, [(0, "fail", "wx1"), "rx1"], ["read-committed"]).forbidden == ["G1a"]


def test_intermediate_read() -> None:
    v = check(RR, ["wx1wx2", "rx1"], ["read-committed"])
    assert v.valid is False and v.forbidden == ["G1b"]
    assert v.anomalies["G1b"][0]["writer"] == 0
    v = check(LA, ["ax1ax2", "rx1"], ["read-committed"])
    assert "G1b" in v.forbidden and "G-single-item" in v.anomaly_types
    # a transaction reading its own intermediate write is fine
    assert "G1b" not in check(RR, ["wx1rx1wx2"], ["read-committed"]).anomaly_types


def test_lost_update() -> None:
    v = check(LA, ["ax0", "rx0ax1", "rx0ax2"], ["snapshot-isolation"])
    assert v.valid is False and "lost-update" in v.forbidden
    assert v.anomalies["lost-update"] == [{"key": "x", "value": [0], "txns": [1, 2]}]
    assert v.not_models == ["cursor-stability", "update-atomic"]
    assert [r for _, _, r in steps(v, "G2-item")] == ["rw", "rw"]
    # read committed allows a lost update
    assert check(LA, ["ax0", "rx0ax1", "rx0ax2"], ["read-committed"]).valid is True
    v = check(RR, ["wx0", "rx0wx1", "rx0wx2"], ["repeatable-read"], wfr_keys=True)
    assert v.anomalies["lost-update"] == [{"key": "x", "value": 0, "txns": [1, 2]}]
    # one transaction writing twice over its read is not a lost update (Elle's test)
    assert "lost-update" not in check(LA, ["rxax1ax2", "rx12"]).anomaly_types


def test_incomplete_transaction_that_a_read_proves() -> None:
    # t0 never heard back; t1 saw its append of y but not its append of x: a cycle through t0
    v = check(LA, [(0, "info", "ax1ay1"), "rxry1"], ["serializable"])
    assert v.valid is False and v.forbidden == ["G-single-item"]
    assert sorted(cycle_txns(v, "G-single-item")) == [0, 1]
    assert v.txns[0].type == "info"


def test_incomplete_transaction_that_cannot_explain_a_cycle() -> None:
    # committed, t0 and t1 are a write skew; t0 unknown, its read of y is unknown: no cycle
    assert check(LA, ["ryax1", "rxay1"], ["serializable"]).anomaly_types == ["G2-item"]
    v = check(LA, [(0, "info", "ryax1"), "rxay1"], ["serializable"])
    assert v.valid is True and v.anomaly_types == []
    v = check(LA, [(0, "fail", "ryax1"), "rxay1"], ["serializable"])
    assert v.anomaly_types == ["empty-transaction-graph"] and v.valid == "unknown"
    # an unknown transaction's append nobody read has edges in only
    v = check(LA, ["ax1", (1, "info", "ax2ay2"), "rx1ry"], ["serializable"])
    assert v.valid is True and v.anomaly_types == []


def test_incompatible_orders() -> None:
    v = check(LA, ["ax1", "ax2", "rx12", "rx21"], ["read-committed"])
    assert v.valid is False and "incompatible-order" in v.forbidden
    assert v.anomalies["incompatible-order"] == [{"key": "x", "values": [[1, 2], [2, 1]]}]
    assert check(LA, ["ax1", "ax2", "ax3", "rx13", "rx123"]).anomalies["incompatible-order"] == [
        {"key": "x", "values": [[1, 3], [1, 2, 3]]}]
    # prefixes are compatible
    assert "incompatible-order" not in check(LA, ["ax1", "ax2", "rx1", "rx12", "rx"]).anomaly_types


def test_duplicate_elements() -> None:
    v = check(LA, ["ax1", "ax2", "rx121"], ["read-uncommitted"])
    assert v.valid is False and "duplicate-elements" in v.forbidden
    assert v.anomalies["duplicate-elements"][0]["duplicates"] == [(1, 2)]
    assert v.not_models == ["read-uncommitted"]


def test_internal() -> None:
    v = check(RR, ["wx1", "wx2rx1"], ["serializable"])
    assert "internal" in v.forbidden and v.anomalies["internal"][0]["expected"] == 2
    # the list-append form: what the transaction appended must end its later read (Elle's test)
    v = check(LA, ["ax1ax2ax4", "ax3rx1234"])
    assert v.anomalies["internal"] == [{"txn": 1, "mop": 1, "expected": ["...", 3]}]
    # read committed does not forbid internal anomalies (Elle: read atomic does)
    assert "internal" not in check(RR, ["wx1", "wx2rx1"], ["read-committed"]).forbidden


def test_dirty_update_and_future_read() -> None:
    v = check(LA, [(0, "fail", "ax1"), "ax2", "rx12"], ["read-committed"])
    assert v.anomalies["dirty-update"] == [{"key": "x", "values": [1, 2], "txns": [0, 1]}]
    v = check(LA, [(0, "fail", "ax1"), (1, "info", "ax2"), "ax3", "rx123"])
    assert v.anomalies["dirty-update"] == [{"key": "x", "values": [1, 2, 3], "txns": [0, 2]}]
    v = check(LA, ["rx1ax1"], ["read-committed"])
    assert v.anomalies["future-read"] == [{"txn": 0, "mop": 0, "element": 1}] and "future-read" in v.forbidden


def test_cyclic_versions_and_version_sources() -> None:
    # rw-register, one process: wx1, wx2, rx1: sequential keys make 1 < 2 < 1 (Elle's test)
    v = check(RR, [(0, "ok", "wx1"), (0, "ok", "wx2"), (0, "ok", "rx1")], serial=True,
              models=["serializable"], sequential_keys=True)
    assert v.anomalies["cyclic-versions"] == [{"key": "x", "scc": [1, 2],
                                               "sources": ["initial-state", "sequential-keys"]}]
    assert v.not_models == ["read-uncommitted"] and v.sources == ["initial-state"]
    # G0 in registers needs a version order: sequential keys give it (Elle's test)
    specs = [(0, "ok", "wx1wy2"), (1, "ok", "wx2wy1"), (0, "ok", "rx2"), (1, "ok", "ry2")]
    evs = events(RR, specs)
    evs = [evs[0], evs[4], evs[1], evs[5], evs[2], evs[6], evs[3], evs[7]]
    h = from_events(RR, evs)
    assert check_txns(h, ["read-uncommitted"]).anomaly_types == []
    v = check_txns(h, ["read-uncommitted"], sequential_keys=True)
    assert v.forbidden == ["G0"] and sorted(steps(v, "G0")) == [(0, 1, "ww"), (1, 0, "ww")]
    # writes follow reads: y 1 < 2 makes a G-single (Elle's wfr test)
    assert check(RR, ["ry1wx1wy2", "rx1ry1"], ["serializable"]).valid is True
    v = check(RR, ["ry1wx1wy2", "rx1ry1"], ["serializable"], wfr_keys=True)
    assert v.forbidden == ["G-single-item"] and v.sources == ["initial-state", "wfr-keys"]


def test_linearizable_keys_order_register_versions() -> None:
    # t0 reads x=1, y=1 first; then t1 writes y, t2 writes x after reading the initial states
    specs = [(0, "ok", "rx1ry1"), (1, "ok", "rx1wy2"), (2, "ok", "ry1wx2")]
    evs = events(RR, specs)
    h = from_events(RR, [evs[0], evs[3], evs[1], evs[2], evs[5], evs[4]])
    assert check_txns(h, ["serializable"]).anomaly_types == ["empty-transaction-graph"]
    v = check_txns(h, ["serializable"], linearizable_keys=True)
    assert v.forbidden == ["G2-item"] and [r for _, _, r in steps(v, "G2-item")] == ["rw", "rw"]


@pytest.mark.parametrize("model", ["serializable", "strict-serializable", "snapshot-isolation",
                                   "read-committed", "read-uncommitted", "repeatable-read",
                                   "strong-session-snapshot-isolation", "strong-snapshot-isolation"])
def test_serial_history_has_no_anomaly(model: str) -> None:
    v = check(LA, [(0, "ok", "ax1ry"), (1, "ok", "rx1ay1"), (0, "ok", "rx1ry1ax2"), (1, "ok", "rx12ry1")],
              [model], serial=True)
    assert v.valid is True and v.anomaly_types == []
    v = check(RR, [(0, "ok", "wx1ry_"), (1, "ok", "rx1wy1"), (0, "ok", "rx1ry1wx2"), (1, "ok", "rx2ry1")],
              [model], serial=True, wfr_keys=True, linearizable_keys=True)
    assert v.valid is True and v.anomaly_types == []
